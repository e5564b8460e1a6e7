//! Test support for Cairn.
//!
//! [`MockServer`] is a loopback HTTP/1.1 server that speaks the model providers' wire formats
//! (SSE streams, JSON answers, error statuses) and can misbehave on purpose: drop a stream
//! half way, stall it, or split events across chunks. Providers are tested against it, never
//! by mocking the HTTP client.
//!
//! [`imports::Graph`] reads a crate's sources and tells which file uses which, for the tests
//! that keep its layering rules.

pub mod documents;
pub mod fuzz;
pub mod imports;
pub mod pdfs;
pub mod pictures;
pub mod planted;
mod request;
mod response;
mod server;

pub use request::RecordedRequest;
pub use response::MockResponse;
pub use server::MockServer;

/// Writes `text` to `path` under `root`, making the folders it needs (a note in a test
/// workspace). Panics on failure: test support fails loudly.
#[allow(clippy::expect_used)]
pub fn write(root: &std::path::Path, path: &str, text: &str) {
    let path = root.join(path);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("make a test file's folders");
    }
    std::fs::write(&path, text).expect("write a test file");
}

/// An unprivileged user for a test to run a command as (`runuser -u NAME --`, or `setpriv`
/// with its ids), made with `useradd` the first time; `None` when this process is not
/// root (it is then an unprivileged user itself, and the other tests run as it).
pub fn unprivileged_user() -> Option<&'static str> {
    const NAME: &str = "cairn-sandbox-test";
    let root = std::process::Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&root.stdout).trim() != "0" {
        return None;
    }
    let exists = std::process::Command::new("id").arg(NAME).output().ok()?;
    if !exists.status.success() {
        let made = std::process::Command::new("useradd")
            .args(["--no-create-home", "--shell", "/bin/sh", NAME])
            .status()
            .ok()?;
        // Another test process may have made it meanwhile.
        let again = std::process::Command::new("id").arg(NAME).output().ok()?;
        assert!(made.success() || again.status.success(), "useradd failed");
    }
    Some(NAME)
}

/// MCP servers the tests run: the ecosystem's `server-everything` (installed from npm by
/// the set-up into `tests/mcp-servers`) and a small Python server that misbehaves on
/// request (`flaky_server.py`).
pub mod mcp {
    use std::path::PathBuf;

    fn dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp-servers")
    }

    /// `node` and the arguments that start `@modelcontextprotocol/server-everything` on
    /// stdio. Panics with what to run when the set-up has not installed it.
    pub fn everything() -> (String, Vec<String>) {
        let script =
            dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
        assert!(
            script.exists(),
            "{} is missing: run `make setup` (npm ci in tests/mcp-servers)",
            script.display()
        );
        (
            "node".into(),
            vec![script.display().to_string(), "stdio".into()],
        )
    }

    /// `python3` and the arguments that start the misbehaving server, plus `extra`.
    pub fn flaky(extra: &[&str]) -> (String, Vec<String>) {
        let script = dir().join("flaky_server.py");
        let mut args = vec![script.display().to_string()];
        args.extend(extra.iter().map(|s| s.to_string()));
        ("python3".into(), args)
    }
}
