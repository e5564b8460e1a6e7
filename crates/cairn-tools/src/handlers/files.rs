//! What the file tools share: resolving a path the model gives, reading text, keeping a
//! change for review, and running blocking work off the async threads.

use std::io::{self, BufReader, Read, Seek};
use std::path::{Path, PathBuf};

use cairn_memory::Access;

use crate::output::looks_binary;
use crate::{ToolCtx, ToolError};

/// Resolves a model-supplied path inside the workspace; a refusal becomes a message for the
/// model.
pub(super) fn resolve(ctx: &ToolCtx, input: &str, access: Access) -> Result<PathBuf, ToolError> {
    ctx.workspace
        .resolve(input, access)
        .map_err(|e| ToolError::Failed(e.to_string()))
}

/// Keeps the change a call is about to make to `shown` (see [`cairn_memory::changes`]),
/// when the call is part of a run. Fails when the text before cannot be kept, so that no
/// change is made that could not be undone.
pub(super) async fn keep_change(
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
pub(super) async fn forget_change(ctx: &ToolCtx, note: Option<cairn_memory::changes::ChangeNote>) {
    if let Some(note) = note {
        let workspace = ctx.workspace.clone();
        let _ =
            tokio::task::spawn_blocking(move || cairn_memory::changes::discard(&workspace, &note))
                .await;
    }
}

/// Turns an I/O error on `shown` (the path as the model wrote it) into a message for it.
pub(super) fn io_failure(shown: &str, error: &io::Error) -> ToolError {
    let what = match error.kind() {
        io::ErrorKind::NotFound => "does not exist".to_string(),
        io::ErrorKind::PermissionDenied => "cannot be accessed: permission denied".to_string(),
        _ => format!("could not be read or written: {error}"),
    };
    ToolError::Failed(format!("`{shown}` {what}"))
}

/// Reads a whole text file for editing: refuses folders, binary files and non-UTF-8 text.
pub(super) async fn read_text(path: &Path, shown: &str) -> Result<String, ToolError> {
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
pub(super) fn check_regular_file(meta: &std::fs::Metadata, shown: &str) -> Result<(), ToolError> {
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
pub(super) const PREVIEW_MAX_BYTES: u64 = 1 << 20;

/// The file a write to `input` would change, as shown and as it is on disk (`None` when it
/// does not exist yet), for a preview. `None` when the write would be refused, or the file
/// is too big, not a regular file or not text.
pub(super) async fn preview_before(
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
pub(super) fn path_arg(args: &serde_json::Value) -> Option<String> {
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
pub(super) async fn blocking<T, F>(work: F) -> Result<T, ToolError>
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

pub(super) fn binary_file(shown: &str) -> ToolError {
    ToolError::Failed(format!(
        "`{shown}` looks like a binary file (it contains NUL bytes); only text files can be read"
    ))
}

pub(super) fn not_utf8(shown: &str) -> ToolError {
    ToolError::Failed(format!(
        "`{shown}` is not UTF-8 text; only UTF-8 text files can be read"
    ))
}
