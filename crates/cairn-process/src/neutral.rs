//! The working directory of processes that must not start in the workspace (MCP stdio
//! servers, user hooks): a workspace someone else prepared could otherwise plant code that
//! runs at their start (an `.npmrc` with `node-options`, a module shadowed for `python -m`).

use std::path::PathBuf;

/// An empty folder of Cairn's own (created private if missing), or `/` when none can be.
pub fn neutral_dir() -> PathBuf {
    let Some(base) = dirs::state_dir().or_else(dirs::data_local_dir) else {
        return PathBuf::from("/");
    };
    let dir = base.join("cairn").join("cwd");
    match create_private(&dir) {
        Ok(()) => dir,
        Err(_) => PathBuf::from("/"),
    }
}

#[cfg(unix)]
fn create_private(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private(dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}
