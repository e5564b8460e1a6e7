//! `list_dir`: what a folder holds, with file sizes.

use std::cmp::Ordering;
use std::fs;
use std::path::Path;

use async_trait::async_trait;
use cairn_memory::Access;
use cairn_protocol::ToolSpec;
use serde::Deserialize;
use serde_json::{json, Value};

use super::files::{blocking, io_failure, resolve};
use crate::output::{human_size, plural, thousands};
use crate::{parse_args, Tool, ToolCtx, ToolError, ToolOutput};

/// At most this many entries are listed.
const MAX_ENTRIES: usize = 500;
/// Folders never shown: Cairn's private state and git's.
const HIDDEN: &[&str] = &[".cairn", ".git"];

/// Arguments of `list_dir`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ListDirArgs {
    /// Folder to list; the workspace root when absent.
    #[serde(default)]
    pub path: Option<String>,
}

/// Lists a folder inside the workspace.
pub struct ListDir;

#[async_trait]
impl Tool for ListDir {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "list_dir".into(),
            description: "List the files and folders directly inside a workspace folder (not \
                recursive). Folders end with `/`; files show their size. Use grep to search file \
                contents."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Folder path relative to the workspace root (default `.`, the root)."
                    }
                }
            }),
        }
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    async fn call(&self, args: Value, ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let args: ListDirArgs = parse_args(args)?;
        let input = args.path.unwrap_or_else(|| ".".into());
        let path = resolve(&ctx, &input, Access::Read)?;
        let shown = ctx.workspace.relative(&path);
        let name = shown.clone();
        let entries = blocking(move || read_entries(&path, &name)).await?;
        let mut out = render(&shown, &entries);
        // The root's listing names the folders searched in place, which live elsewhere.
        let folders = ctx.workspace.folders();
        if shown == "." && !folders.is_empty() {
            let names: Vec<String> = folders.iter().map(|f| format!("{}/", f.name)).collect();
            out.push_str(&format!(
                "\nAlso searched in place, read-only (list or grep them by name): {}",
                names.join(", ")
            ));
        }
        Ok(ToolOutput::ok(out))
    }
}

/// One thing in the folder.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    Folder(String),
    File(String, u64),
    /// A symbolic link (not followed) and where it points.
    Link(String, String),
    /// A socket, pipe or device.
    Other(String),
}

impl Entry {
    fn name(&self) -> &str {
        match self {
            Entry::Folder(n) | Entry::File(n, _) | Entry::Link(n, _) | Entry::Other(n) => n,
        }
    }

    /// Folders first, then everything else; by name within each group.
    fn order(&self, other: &Self) -> Ordering {
        let folder = |e: &Self| !matches!(e, Entry::Folder(_));
        folder(self)
            .cmp(&folder(other))
            .then_with(|| self.name().cmp(other.name()))
    }

    fn line(&self) -> String {
        match self {
            Entry::Folder(name) => format!("{name}/"),
            Entry::File(name, size) => format!("{name} ({})", human_size(*size)),
            Entry::Link(name, target) => format!("{name} -> {target} (symbolic link)"),
            Entry::Other(name) => format!("{name} (special file)"),
        }
    }
}

/// The folder's entries, sorted, without the hidden ones.
fn read_entries(path: &Path, shown: &str) -> Result<Vec<Entry>, ToolError> {
    let meta = fs::metadata(path).map_err(|e| io_failure(shown, &e))?;
    if !meta.is_dir() {
        return Err(ToolError::Failed(format!(
            "`{shown}` is a file, not a folder; use read_file to read it"
        )));
    }
    let mut entries = Vec::new();
    for item in fs::read_dir(path)
        .map_err(|e| io_failure(shown, &e))?
        .flatten()
    {
        let name = item.file_name().to_string_lossy().into_owned();
        if HIDDEN.contains(&name.as_str()) {
            continue;
        }
        let Ok(kind) = item.file_type() else { continue };
        let entry = if kind.is_dir() {
            Entry::Folder(name)
        } else if kind.is_file() {
            Entry::File(name, item.metadata().map(|m| m.len()).unwrap_or(0))
        } else if kind.is_symlink() {
            let target = fs::read_link(item.path()).unwrap_or_default();
            Entry::Link(name, target.to_string_lossy().into_owned())
        } else {
            Entry::Other(name)
        };
        entries.push(entry);
    }
    entries.sort_by(Entry::order);
    Ok(entries)
}

/// A header with counts, one line per entry, and a note when the list was cut.
fn render(shown: &str, entries: &[Entry]) -> String {
    let folder = if shown.ends_with('/') {
        shown.to_string()
    } else {
        format!("{shown}/")
    };
    if entries.is_empty() {
        return format!("{folder} is empty");
    }
    let folders = entries
        .iter()
        .filter(|e| matches!(e, Entry::Folder(_)))
        .count();
    let others = entries.len() - folders;
    let mut lines = vec![format!(
        "{folder} holds {folders} folder{} and {others} file{}:",
        plural(folders),
        plural(others)
    )];
    lines.extend(entries.iter().take(MAX_ENTRIES).map(Entry::line));
    if entries.len() > MAX_ENTRIES {
        let more = thousands(entries.len() - MAX_ENTRIES);
        lines.push(format!(
            "[... {more} more entries not shown; list a subfolder or use grep]"
        ));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{failed, ok, TestWs};
    use pretty_assertions::assert_eq;

    async fn list(ws: &TestWs, args: Value) -> Result<ToolOutput, ToolError> {
        ws.call(&ListDir, args).await
    }

    #[tokio::test]
    async fn folders_searched_in_place_are_named_at_the_root_and_listed_by_name() {
        let outside = tempfile::tempdir().unwrap();
        let notes = outside.path().join("Notes");
        std::fs::create_dir_all(notes.join("trips")).unwrap();
        std::fs::write(notes.join("reading.md"), "x").unwrap();
        let ws = TestWs::with_folders(&[notes]);
        let root = ok(list(&ws, json!({})).await);
        assert!(
            root.ends_with(
                "\nAlso searched in place, read-only (list or grep them by name): Notes/"
            ),
            "{root}"
        );
        let out = ok(list(&ws, json!({"path": "Notes"})).await);
        assert_eq!(
            out,
            "Notes/ holds 1 folder and 1 file:\ntrips/\nreading.md (1 B)"
        );
        assert!(!ok(list(&TestWs::new(), json!({})).await).contains("searched in place"));
    }

    #[tokio::test]
    async fn lists_folders_first_with_sizes_and_hides_private_state() {
        let ws = TestWs::new();
        ws.write("proj/b.md", "12345");
        ws.write("proj/a.txt", "x".repeat(3000));
        ws.write("proj/sub/deep.md", "");
        ws.write("proj/.git/HEAD", "ref");
        ws.write("proj/.cairn/x", "");
        ws.write("proj/.hidden", "");
        let out = ok(list(&ws, json!({"path": "proj"})).await);
        assert_eq!(
            out,
            "proj/ holds 1 folder and 3 files:\nsub/\n.hidden (0 B)\na.txt (2.9 KiB)\nb.md (5 B)"
        );
        let root = ok(list(&ws, json!({})).await);
        assert!(root.starts_with("./ holds "), "{root}");
        assert!(
            root.contains("\nmemory/\n") && !root.contains(".cairn"),
            "{root}"
        );
        std::fs::create_dir(ws.root().join("proj/empty")).unwrap();
        assert_eq!(
            ok(list(&ws, json!({"path": "proj/empty/"})).await),
            "proj/empty/ is empty"
        );
    }

    #[tokio::test]
    async fn caps_long_listings() {
        let ws = TestWs::new();
        for i in 0..520 {
            ws.write(&format!("many/f{i:03}.txt"), "");
        }
        let out = ok(list(&ws, json!({"path": "many"})).await);
        assert_eq!(out.lines().count(), 1 + 500 + 1);
        assert!(out.ends_with(
            "f499.txt (0 B)\n[... 20 more entries not shown; list a subfolder or use grep]"
        ));
    }

    #[tokio::test]
    async fn refuses_files_missing_folders_and_escapes() {
        let ws = TestWs::new();
        ws.write("a.md", "");
        assert!(failed(list(&ws, json!({"path": "a.md"})).await).contains("is a file"));
        assert_eq!(
            failed(list(&ws, json!({"path": "nope"})).await),
            "`nope` does not exist"
        );
        for bad in ["..", "/", "/etc", "memory/../.."] {
            let err = failed(list(&ws, json!({"path": bad})).await);
            assert!(err.contains("outside the workspace"), "{bad}: {err}");
        }
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn symlinks_are_shown_not_followed_and_escapes_refused() {
        let ws = TestWs::new();
        let outside = ws.escaping_link();
        let err = failed(list(&ws, json!({"path": "link"})).await);
        assert!(err.contains("symbolic link that leads outside"), "{err}");
        let out = ok(list(&ws, json!({"path": "."})).await);
        let shown = format!("link -> {} (symbolic link)", outside.path().display());
        assert!(out.contains(&shown), "{out}");
        assert!(!out.contains("top secret"));
    }
}
