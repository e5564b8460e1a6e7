//! The built-in tools, one file each, and the few helpers they share.

pub mod bash;
pub mod edit_file;
pub mod grep;
pub mod list_dir;
pub mod memory_get;
pub mod memory_save;
pub mod memory_search;
pub mod read_file;
pub mod report;
pub mod skill;
pub mod subagents;
pub mod web_fetch;
pub mod work;
pub mod write_file;

use std::io::{self, BufReader, Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_memory::Access;

use super::output::looks_binary;
use super::{Tool, ToolCtx, ToolError};

/// The built-in tools: read_file, write_file, edit_file, list_dir, grep, bash.
pub fn builtin() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(read_file::ReadFile),
        Arc::new(write_file::WriteFile),
        Arc::new(edit_file::EditFile),
        Arc::new(list_dir::ListDir),
        Arc::new(grep::Grep),
        Arc::new(bash::Bash::default()),
    ]
}

/// The memory tools: memory_search, memory_get, memory_save. Without an index (it could
/// not be opened) memory_search is left out and memory_save still writes the log.
pub fn memory(index: Option<cairn_memory::MemoryIndex>) -> Vec<Arc<dyn Tool>> {
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    if let Some(index) = &index {
        tools.push(Arc::new(memory_search::MemorySearch {
            index: index.clone(),
        }));
    }
    tools.push(Arc::new(memory_get::MemoryGet));
    tools.push(Arc::new(memory_save::MemorySave { index }));
    tools
}

/// Resolves a model-supplied path inside the workspace; a refusal becomes a message for the
/// model.
fn resolve(ctx: &ToolCtx, input: &str, access: Access) -> Result<PathBuf, ToolError> {
    ctx.workspace
        .resolve(input, access)
        .map_err(|e| ToolError::Failed(e.to_string()))
}

/// Keeps the change a call is about to make to `shown` (see [`cairn_memory::changes`]),
/// when the call is part of a run. Fails when the text before cannot be kept, so that no
/// change is made that could not be undone.
async fn keep_change(
    ctx: &ToolCtx,
    tool: &str,
    shown: &str,
    before: Option<Vec<u8>>,
    after: &str,
) -> Result<Option<cairn_memory::changes::ChangeNote>, ToolError> {
    let Some(scope) = ctx.changes.clone() else {
        return Ok(None);
    };
    let (workspace, call_id) = (ctx.workspace.clone(), ctx.call_id.clone());
    let (tool, path, after) = (tool.to_string(), shown.to_string(), after.to_string());
    tokio::task::spawn_blocking(move || {
        let made = cairn_memory::changes::Made {
            call_id: &call_id,
            tool: &tool,
            path: &path,
            before: before.as_deref(),
            after: after.as_bytes(),
        };
        cairn_memory::changes::record(&workspace, &scope, &made, chrono::Utc::now())
    })
    .await
    .map_err(|e| ToolError::Failed(e.to_string()))?
    .map_err(|e| {
        ToolError::Failed(format!(
            "`{shown}` was not written: the text before could not be kept for undo ({e})"
        ))
    })
}

/// Forgets a kept change whose write failed.
async fn forget_change(ctx: &ToolCtx, note: Option<cairn_memory::changes::ChangeNote>) {
    if let Some(note) = note {
        let workspace = ctx.workspace.clone();
        let _ =
            tokio::task::spawn_blocking(move || cairn_memory::changes::discard(&workspace, &note))
                .await;
    }
}

/// Turns an I/O error on `shown` (the path as the model wrote it) into a message for it.
fn io_failure(shown: &str, error: &io::Error) -> ToolError {
    let what = match error.kind() {
        io::ErrorKind::NotFound => "does not exist".to_string(),
        io::ErrorKind::PermissionDenied => "cannot be accessed: permission denied".to_string(),
        _ => format!("could not be read or written: {error}"),
    };
    ToolError::Failed(format!("`{shown}` {what}"))
}

/// Reads a whole text file for editing: refuses folders, binary files and non-UTF-8 text.
async fn read_text(path: &Path, shown: &str) -> Result<String, ToolError> {
    let meta = tokio::fs::metadata(path)
        .await
        .map_err(|e| io_failure(shown, &e))?;
    check_regular_file(&meta, shown)?;
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|e| io_failure(shown, &e))?;
    if looks_binary(&bytes) {
        return Err(binary_file(shown));
    }
    String::from_utf8(bytes).map_err(|_| not_utf8(shown))
}

/// Refuses folders, pipes, sockets and devices (reading a pipe could block forever).
fn check_regular_file(meta: &std::fs::Metadata, shown: &str) -> Result<(), ToolError> {
    if meta.is_dir() {
        return Err(ToolError::Failed(format!(
            "`{shown}` is a folder, not a file; use list_dir to see what it holds"
        )));
    }
    if !meta.is_file() {
        return Err(ToolError::Failed(format!(
            "`{shown}` is not a regular file (a pipe, socket or device) and cannot be read"
        )));
    }
    Ok(())
}

/// Largest file shown as a diff before a change; bigger ones show the arguments alone.
const PREVIEW_MAX_BYTES: u64 = 1 << 20;

/// The file a write to `input` would change, as shown and as it is on disk (`None` when it
/// does not exist yet), for a preview. `None` when the write would be refused, or the file
/// is too big, not a regular file or not text.
async fn preview_before(
    workspace: &cairn_memory::Workspace,
    input: &str,
) -> Option<(String, Option<String>)> {
    let path = workspace.resolve(input, Access::Write).ok()?;
    let shown = workspace.relative(&path);
    match tokio::fs::metadata(&path).await {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Some((shown, None)),
        Ok(meta) if meta.is_file() && meta.len() <= PREVIEW_MAX_BYTES => {
            let text = tokio::fs::read_to_string(&path).await.ok()?;
            Some((shown, Some(text)))
        }
        _ => None,
    }
}

/// The `path` argument of a file tool's call.
fn path_arg(args: &serde_json::Value) -> Option<String> {
    args.get("path")?.as_str().map(str::to_string)
}

/// A reader of `file` once its start shows it is not binary (read_file, memory_get).
pub(super) fn text_reader(
    mut file: std::fs::File,
    shown: &str,
) -> Result<BufReader<std::fs::File>, ToolError> {
    let mut start = Vec::with_capacity(8 * 1024);
    (&mut file)
        .take(8 * 1024)
        .read_to_end(&mut start)
        .map_err(|e| io_failure(shown, &e))?;
    if looks_binary(&start) {
        return Err(binary_file(shown));
    }
    file.rewind().map_err(|e| io_failure(shown, &e))?;
    Ok(BufReader::with_capacity(64 * 1024, file))
}

/// Runs blocking file-system work off the async threads.
async fn blocking<T, F>(work: F) -> Result<T, ToolError>
where
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
    T: Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(e) => Err(ToolError::Failed(format!(
            "the tool stopped unexpectedly: {e}"
        ))),
    }
}

fn binary_file(shown: &str) -> ToolError {
    ToolError::Failed(format!(
        "`{shown}` looks like a binary file (it contains NUL bytes); only text files can be read"
    ))
}

fn not_utf8(shown: &str) -> ToolError {
    ToolError::Failed(format!(
        "`{shown}` is not UTF-8 text; only UTF-8 text files can be read"
    ))
}

#[cfg(test)]
pub(crate) mod test_support {
    //! A temporary workspace and a call context for handler tests.

    use std::sync::Arc;

    use cairn_memory::Workspace;
    use serde_json::Value;
    use tokio::sync::mpsc;
    use tokio_util::sync::CancellationToken;

    use crate::{Tool, ToolCtx, ToolError, ToolOutput};

    /// A fresh workspace in a temp folder (kept alive by the returned guard).
    pub struct TestWs {
        _dir: tempfile::TempDir,
        pub ctx: ToolCtx,
        pub updates: mpsc::UnboundedReceiver<(String, String)>,
    }

    impl TestWs {
        pub fn new() -> Self {
            Self::with_folders(&[])
        }

        /// A workspace with folders searched in place (known by their last part).
        pub fn with_folders(folders: &[std::path::PathBuf]) -> Self {
            let dir = tempfile::tempdir().unwrap();
            let workspace = Arc::new(
                Workspace::open_or_create(dir.path())
                    .unwrap()
                    .with_folders(folders),
            );
            let (tx, updates) = mpsc::unbounded_channel();
            let ctx = ToolCtx {
                workspace,
                call_id: "call-1".into(),
                cancel: CancellationToken::new(),
                updates: tx,
                agent: None,
                changes: Some(cairn_memory::changes::ChangeScope {
                    session_id: "session-1".into(),
                    run_id: "run-1".into(),
                }),
            };
            Self {
                _dir: dir,
                ctx,
                updates,
            }
        }

        pub fn root(&self) -> &std::path::Path {
            self.ctx.workspace.root()
        }

        /// Writes a file (creating folders) relative to the root.
        pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) {
            let path = self.root().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, contents).unwrap();
        }

        pub fn read(&self, rel: &str) -> String {
            std::fs::read_to_string(self.root().join(rel)).unwrap()
        }

        /// Calls `tool` with `args`.
        pub async fn call(&self, tool: &dyn Tool, args: Value) -> Result<ToolOutput, ToolError> {
            tool.call(args, self.ctx.clone()).await
        }

        /// A folder outside the workspace holding `secret.txt`, linked as `link` inside it.
        #[cfg(unix)]
        pub fn escaping_link(&self) -> tempfile::TempDir {
            let outside = tempfile::tempdir().unwrap();
            std::fs::write(outside.path().join("secret.txt"), "top secret\n").unwrap();
            std::os::unix::fs::symlink(outside.path(), self.root().join("link")).unwrap();
            std::os::unix::fs::symlink(
                outside.path().join("secret.txt"),
                self.root().join("secret-link.txt"),
            )
            .unwrap();
            outside
        }
    }

    /// The message of a `Failed` error (panics on anything else).
    pub fn failed(result: Result<ToolOutput, ToolError>) -> String {
        match result {
            Err(ToolError::Failed(message)) => message,
            other => panic!("expected Failed, got {other:?}"),
        }
    }

    /// The content of a successful, non-error output (panics on anything else).
    pub fn ok(result: Result<ToolOutput, ToolError>) -> String {
        match result {
            Ok(ToolOutput {
                content,
                is_error: false,
                ..
            }) => content,
            other => panic!("expected a successful output, got {other:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_has_the_six_tools_with_object_schemas() {
        let names: Vec<String> = builtin().iter().map(|t| t.spec().name).collect();
        assert_eq!(
            names,
            [
                "read_file",
                "write_file",
                "edit_file",
                "list_dir",
                "grep",
                "bash"
            ]
        );
        for tool in builtin() {
            let spec = tool.spec();
            assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
            assert!(spec.description.len() > 40, "{}", spec.name);
        }
    }
}
