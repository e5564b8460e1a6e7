//! The built-in tools, one file each, and the few helpers they share.

pub mod bash;
pub mod edit_file;
mod files;
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
pub mod web_search;
pub mod work;
pub mod write_file;

use std::sync::{Arc, LazyLock};

use super::{Tool, ToolError};

type MakeClient = Box<dyn FnOnce() -> Result<reqwest::Client, String> + Send>;

/// A web tool's HTTP client, made at the tool's first call: making one loads the system's
/// certificate authorities (tens of milliseconds and a few MB), which every start that
/// builds the tools and fetches nothing would pay.
pub(crate) struct LazyClient(LazyLock<Result<reqwest::Client, String>, MakeClient>);

impl LazyClient {
    pub(crate) fn new(
        make: impl FnOnce() -> reqwest::Result<reqwest::Client> + Send + 'static,
    ) -> Self {
        let make = move || make().map_err(|e| format!("the web client could not start: {e}"));
        Self(LazyLock::new(Box::new(make)))
    }

    pub(crate) fn get(&self) -> Result<&reqwest::Client, ToolError> {
        LazyLock::force(&self.0)
            .as_ref()
            .map_err(|e| ToolError::Failed(e.clone()))
    }
}

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
                judged: None,
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
