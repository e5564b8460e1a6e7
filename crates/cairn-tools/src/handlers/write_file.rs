//! `write_file`: create or replace a whole file, atomically.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use cairn_memory::Access;
use cairn_protocol::{FileChange, ToolSpec};
use serde::Deserialize;
use serde_json::{json, Value};

use super::files::{forget_change, io_failure, keep_change, path_arg, preview_before, resolve};
use crate::output::{line_count, plural, thousands};
use crate::{parse_args, Tool, ToolCtx, ToolError, ToolOutput};

/// Arguments of `write_file`.
#[derive(Debug, Clone, Deserialize)]
pub struct WriteFileArgs {
    pub path: String,
    pub content: String,
}

/// Creates or replaces a file inside the workspace.
pub struct WriteFile;

#[async_trait]
impl Tool for WriteFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "write_file".into(),
            description:
                "Create a file, or replace everything in an existing one, with `content`. \
                Missing parent folders are created. To change part of an existing file, prefer \
                edit_file. Files under .cairn/ and sessions/ cannot be written; writes to \
                AGENTS.md, skills/, subagents/, .git/, dotfiles and executables ask the user first."
                    .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "File path relative to the workspace root, e.g. `knowledge/recipes.md`."
                    },
                    "content": {
                        "type": "string",
                        "description": "The complete new content of the file."
                    }
                },
                "required": ["path", "content"]
            }),
        }
    }

    fn writes(&self, args: &Value) -> Option<String> {
        path_arg(args)
    }

    async fn preview(
        &self,
        args: &Value,
        workspace: &cairn_memory::Workspace,
    ) -> Option<FileChange> {
        let args: WriteFileArgs = serde_json::from_value(args.clone()).ok()?;
        let (path, before) = preview_before(workspace, &args.path).await?;
        Some(FileChange {
            path,
            before,
            after: args.content,
        })
    }

    async fn call(&self, args: Value, ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let args: WriteFileArgs = parse_args(args)?;
        let path = resolve(&ctx, &args.path, Access::Write)?;
        let shown = ctx.workspace.relative(&path);
        let (target, real) = write_target(&ctx, &path, &shown).await?;
        let previous = tokio::fs::metadata(&target).await.ok().map(|m| m.len());
        let before = match previous {
            Some(_) => Some(
                tokio::fs::read(&target)
                    .await
                    .map_err(|e| io_failure(&shown, &e))?,
            ),
            None => None,
        };
        let kept = keep_change(&ctx, "write_file", &shown, before, &args.content).await?;
        let root = ctx.workspace.root().to_path_buf();
        let (rel, bytes) = (shown.clone(), args.content.clone().into_bytes());
        let written = tokio::task::spawn_blocking(move || {
            cairn_memory::write_exact(&root, &real, &rel, &bytes)
        })
        .await
        .map_err(|e| ToolError::Failed(format!("`{shown}` could not be written: {e}")))
        .and_then(|written| written.map_err(|e| written_failure(&shown, e)));
        if let Err(e) = written {
            forget_change(&ctx, kept).await;
            return Err(e);
        }
        let bytes = args.content.len();
        let lines = line_count(&args.content);
        let what = match previous {
            None => "new file".to_string(),
            Some(old) => format!("replaced the previous {} bytes", thousands(old as usize)),
        };
        Ok(ToolOutput::ok(format!(
            "wrote {} byte{} ({lines} line{}) to {shown} ({what})",
            thousands(bytes),
            plural(bytes),
            plural(lines)
        )))
    }
}

/// The file a write to `path` (as [`resolve`] gives it) changes, and where that is
/// relative to the workspace, every link followed: the place the harness judged for the
/// call, or the call fails (a link changed since). Folders are refused.
pub(super) async fn write_target(
    ctx: &ToolCtx,
    path: &Path,
    shown: &str,
) -> Result<(PathBuf, PathBuf), ToolError> {
    let root = ctx.workspace.root();
    let real = cairn_memory::real_relative(root, path).ok_or_else(|| {
        ToolError::Failed(format!(
            "`{shown}` leads outside the workspace; nothing was written"
        ))
    })?;
    if let Some(judged) = ctx.judged.as_ref().filter(|judged| **judged != real) {
        return Err(ToolError::Failed(format!(
            "`{shown}` was not written: it led to `{}` when the call was judged and leads to \
             `{}` now (a link changed meanwhile); call it again to have it judged anew",
            judged.display(),
            real.display()
        )));
    }
    let target = root.join(&real);
    if tokio::fs::metadata(&target).await.is_ok_and(|m| m.is_dir()) {
        return Err(ToolError::Failed(format!(
            "`{shown}` is a folder; give a file path"
        )));
    }
    Ok((target, real))
}

/// A write at the judged place that failed: a path that changed on the way, said as it
/// is; an I/O error as [`io_failure`] says it.
pub(super) fn written_failure(shown: &str, error: cairn_memory::MemoryError) -> ToolError {
    match error {
        cairn_memory::MemoryError::Io { source, .. } => io_failure(shown, &source),
        other => ToolError::Failed(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{failed, ok, TestWs};
    use pretty_assertions::assert_eq;

    async fn write(ws: &TestWs, path: &str, content: &str) -> Result<ToolOutput, ToolError> {
        ws.call(&WriteFile, json!({"path": path, "content": content}))
            .await
    }

    #[tokio::test]
    async fn creates_folders_and_reports_what_it_did() {
        let ws = TestWs::new();
        let out = ok(write(&ws, "knowledge/new/deep.md", "# Title\nbody\n").await);
        assert_eq!(
            out,
            "wrote 13 bytes (2 lines) to knowledge/new/deep.md (new file)"
        );
        assert_eq!(ws.read("knowledge/new/deep.md"), "# Title\nbody\n");
        let out = ok(write(&ws, "knowledge/new/deep.md", "x").await);
        assert_eq!(
            out,
            "wrote 1 byte (1 line) to knowledge/new/deep.md (replaced the previous 13 bytes)"
        );
        assert_eq!(ws.read("knowledge/new/deep.md"), "x");
        let leftovers: Vec<_> = std::fs::read_dir(ws.root().join("knowledge/new"))
            .unwrap()
            .collect();
        assert_eq!(leftovers.len(), 1, "no temp files are left behind");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn keeps_permissions_of_a_replaced_file() {
        use std::os::unix::fs::PermissionsExt;
        let ws = TestWs::new();
        ws.write("run.sh", "echo hi\n");
        let path = ws.root().join("run.sh");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        ok(write(&ws, "run.sh", "echo bye\n").await);
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o755
        );
    }

    #[tokio::test]
    async fn refuses_private_state_folders_and_escapes() {
        let ws = TestWs::new();
        let err = failed(write(&ws, ".cairn/state.db", "x").await);
        assert!(err.contains("inside .cairn/"), "{err}");
        assert!(failed(write(&ws, "memory", "x").await).contains("is a folder"));
        for bad in ["../escape.md", "/tmp/escape.md", "a/../../escape.md"] {
            let err = failed(write(&ws, bad, "x").await);
            assert!(err.contains("outside the workspace"), "{bad}: {err}");
        }
        assert!(!ws.root().parent().unwrap().join("escape.md").exists());
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn symlinks_that_escape_are_refused() {
        let ws = TestWs::new();
        let outside = ws.escaping_link();
        for bad in ["link/secret.txt", "link/new.txt", "secret-link.txt"] {
            let err = failed(write(&ws, bad, "pwned").await);
            assert!(
                err.contains("symbolic link that leads outside"),
                "{bad}: {err}"
            );
        }
        let secret = std::fs::read_to_string(outside.path().join("secret.txt")).unwrap();
        assert_eq!(secret, "top secret\n");
        assert!(!outside.path().join("new.txt").exists());
    }

    /// A folder swapped for a link into `.git/` after the harness judged the call: the
    /// write goes nowhere, and says why.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_link_swapped_in_after_the_judgment_gets_nothing_written() {
        let mut ws = TestWs::new();
        ws.write(".git/config", "[core]\n");
        ws.write("notes/config", "old\n");
        ws.ctx.judged = Some(PathBuf::from("notes/config"));
        std::fs::remove_dir_all(ws.root().join("notes")).unwrap();
        std::os::unix::fs::symlink(".git", ws.root().join("notes")).unwrap();
        let err = failed(write(&ws, "notes/config", "[core]\nfsmonitor = evil\n").await);
        assert!(
            err.contains(
                "led to `notes/config` when the call was judged and leads to `.git/config` now"
            ),
            "{err}"
        );
        let err = failed(
            ws.call(
                &crate::handlers::edit_file::EditFile,
                json!({"path": "notes/config", "old": "[core]", "new": "[core]\nfsmonitor = evil"}),
            )
            .await,
        );
        assert!(err.contains("when the call was judged"), "{err}");
        assert_eq!(ws.read(".git/config"), "[core]\n");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_symlink_inside_the_workspace_writes_through() {
        let ws = TestWs::new();
        ws.write("notes/real.md", "old");
        std::os::unix::fs::symlink(ws.root().join("notes/real.md"), ws.root().join("alias.md"))
            .unwrap();
        ok(write(&ws, "alias.md", "new").await);
        assert_eq!(ws.read("notes/real.md"), "new");
        assert!(ws.root().join("alias.md").is_symlink());
    }

    #[tokio::test]
    async fn each_write_is_kept_for_revert_and_a_failed_one_is_not() {
        use cairn_memory::changes::{list, revert};
        let ws = TestWs::new();
        ws.write("notes/a.md", "first\n");
        ok(write(&ws, "notes/a.md", "second\n").await);
        ok(write(&ws, "notes/new.md", "fresh\n").await);
        // A folder where the file would go: the write fails, and nothing is kept.
        std::fs::create_dir_all(ws.root().join("notes/dir.md")).unwrap();
        failed(write(&ws, "notes/dir.md", "x").await);

        let changes = list(&ws.ctx.workspace, "session-1").unwrap();
        let shown: Vec<_> = changes
            .iter()
            .map(|c| (c.note.path.as_str(), c.before.as_deref(), c.after.as_str()))
            .collect();
        assert_eq!(
            shown,
            [
                ("notes/a.md", Some("first\n"), "second\n"),
                ("notes/new.md", None, "fresh\n")
            ]
        );
        assert_eq!(changes[0].note.call_id, "call-1");
        assert_eq!(changes[0].note.run_id, "run-1");
        revert(
            &ws.ctx.workspace,
            "session-1",
            std::slice::from_ref(&changes[0].note.id),
            chrono::Utc::now(),
        )
        .unwrap();
        assert_eq!(ws.read("notes/a.md"), "first\n");
    }
}
