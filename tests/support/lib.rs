//! Helpers for the end-to-end tests: find the `cairn` binary, run it in a throwaway home
//! and workspace, and build OpenAI-style stream chunks. The desktop app is driven through
//! WebDriver: [`desktop`] starts it, [`webdriver`] speaks the protocol.

pub mod desktop;
pub mod webdriver;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{json, Value};

/// The `cairn` binary next to the test executable (`make test` builds it first).
pub fn cairn_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    // target/<profile>/deps/<test> -> target/<profile>/cairn
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let bin = profile_dir.join(format!("cairn{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} is missing: build it first (`cargo build -p cairn-cli`; `make test` does)",
        bin.display()
    );
    bin
}

/// A throwaway home and workspace for one test.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    /// A sandbox whose settings turn the memory flush off, so a test's model server sees
    /// only the requests of the run (tests of the flush turn it on).
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let sandbox = Self { dir };
        sandbox.write_settings("");
        sandbox
    }

    /// The same, in a folder outside `/tmp`: the shell sandbox replaces `/tmp` whole, so a
    /// home there would be out of a command's sight whether or not the sandbox hides it.
    pub fn outside_tmp() -> Self {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap_or_else(|e| panic!("tempdir: {e}"));
        let sandbox = Self { dir };
        sandbox.write_settings("");
        sandbox
    }

    pub fn workspace(&self) -> PathBuf {
        self.dir.path().join("workspace")
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// `cairn --workspace <ws> ARGS` with a clean environment (no keys, no CAIRN_*).
    pub fn cairn(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(cairn_bin());
        cmd.arg("--workspace").arg(self.workspace()).args(args);
        for (key, _) in std::env::vars() {
            if key.starts_with("CAIRN_") || key.ends_with("_API_KEY") {
                cmd.env_remove(key);
            }
        }
        cmd.env("HOME", self.home())
            .env("XDG_CONFIG_HOME", self.home().join(".config"))
            .env("XDG_DATA_HOME", self.home().join(".local/share"))
            // Nothing is fetched from PyPI by a test: a port where nothing listens.
            .env("CAIRN_PACKAGE_INDEX", "http://127.0.0.1:9")
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        cmd
    }

    /// `cairn ask EXTRA...` against an OpenAI-compatible server at `url` (model `test-model`).
    pub fn ask(&self, url: &str, extra: &[&str]) -> tokio::process::Command {
        let mut args = at_server(url, "ask");
        args.extend_from_slice(extra);
        self.cairn(&args)
    }

    /// The one session file in the workspace, parsed line by line.
    pub fn session_lines(&self) -> Vec<Value> {
        let dir = self.workspace().join("sessions");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        let text = std::fs::read_to_string(files.remove(0)).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap_or(Value::Null))
            .collect()
    }
}

/// `cairn` arguments for the OpenAI-compatible model served at `url` (`test-model`), then
/// `command`.
pub fn at_server<'a>(url: &'a str, command: &'a str) -> Vec<&'a str> {
    vec![
        "--provider",
        "openai",
        "--base-url",
        url,
        "--model",
        "test-model",
        command,
    ]
}

/// One OpenAI chat-completion chunk holding `delta`.
pub fn chunk(delta: Value, finish_reason: Option<&str>) -> String {
    json!({"id": "c", "object": "chat.completion.chunk", "model": "m",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]})
    .to_string()
}

/// A streamed text answer, one chunk per word, then usage and `[DONE]`.
pub fn text_stream(text: &str) -> Vec<String> {
    let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    for word in text.split_inclusive(' ') {
        events.push(chunk(json!({"content": word}), None));
    }
    events.push(chunk(json!({}), Some("stop")));
    events.push(usage(20, 5));
    events.push("[DONE]".into());
    events
}

/// A streamed tool call whose arguments arrive split into `pieces` fragments.
pub fn tool_call_stream(id: &str, name: &str, arguments: &Value, pieces: usize) -> Vec<String> {
    let args = arguments.to_string();
    let chars: Vec<char> = args.chars().collect();
    let size = chars.len().div_ceil(pieces.max(1)).max(1);
    let mut events = vec![chunk(
        json!({"role": "assistant", "tool_calls": [{"index": 0, "id": id, "type": "function",
               "function": {"name": name, "arguments": ""}}]}),
        None,
    )];
    for part in chars.chunks(size) {
        let part: String = part.iter().collect();
        events.push(chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": part}}]}),
            None,
        ));
    }
    events.push(chunk(json!({}), Some("tool_calls")));
    events.push(usage(30, 8));
    events.push("[DONE]".into());
    events
}

/// One streamed answer holding several tool calls `(id, name, arguments)`.
pub fn tool_calls_stream(calls: &[(&str, &str, Value)]) -> Vec<String> {
    let mut events = vec![chunk(json!({"role": "assistant"}), None)];
    for (index, (id, name, arguments)) in calls.iter().enumerate() {
        events.push(chunk(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                   "function": {"name": name, "arguments": arguments.to_string()}}]}),
            None,
        ));
    }
    events.push(chunk(json!({}), Some("tool_calls")));
    events.push(usage(30, 8));
    events.push("[DONE]".into());
    events
}

fn usage(prompt: u64, completion: u64) -> String {
    json!({"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [],
           "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                     "total_tokens": prompt + completion}})
    .to_string()
}

/// Where `scripts/fetch-model.sh` installs the bundled models on this machine.
fn models_dir() -> PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_default()
        .join("cairn/models")
}

/// The bundled model on this machine (installed by `scripts/fetch-model.sh`):
/// `CAIRN_MODEL_PATH`, else the user data folder.
pub fn installed_model() -> PathBuf {
    if let Some(path) = std::env::var_os("CAIRN_MODEL_PATH") {
        return PathBuf::from(path);
    }
    let path = models_dir().join("SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(
        path.is_file(),
        "{} is missing: run scripts/fetch-model.sh (`make test` does)",
        path.display()
    );
    path
}

impl Sandbox {
    /// Writes the sandbox's `~/.config/cairn/config.toml`; without a `[memory]` section,
    /// one that turns the flush off is added.
    pub fn write_settings(&self, text: &str) {
        let dir = self.home().join(".config/cairn");
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let mut text = text.to_string();
        if !text.contains("[memory]") {
            text.push_str("\n[memory]\nflush = false\n");
        }
        std::fs::write(dir.join("config.toml"), text).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Puts the installed model where a fresh install keeps it, inside the sandbox home.
    pub fn install_model(&self) {
        let dir = self.home().join(".local/share/cairn/models");
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let target = dir.join("SmolLM2-135M-Instruct.Q4_1.gguf");
        std::os::unix::fs::symlink(installed_model(), target).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Links the installed PDFium library into this home's models folder, where a fresh
    /// install keeps it after its first start.
    pub fn install_pdf_reader(&self) {
        let dir = self.home().join(".local/share/cairn/models/pdfium");
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let library = models_dir().join("pdfium/libpdfium.so");
        assert!(
            library.is_file(),
            "{} is missing: run scripts/fetch-model.sh (`make test` does)",
            library.display()
        );
        std::os::unix::fs::symlink(library, dir.join("libpdfium.so"))
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// Links the installed embedding model (all-MiniLM-L6-v2) into this home's models
    /// folder, which turns search by meaning on.
    pub fn install_embedder(&self) {
        self.embedder_files(true);
    }

    /// The embedding model's files and its runtime copied into the home, no graph kept
    /// (the first load writes it): for a user who cannot read the installing user's home.
    pub fn install_embedder_copy(&self) {
        self.embedder_files(false);
    }

    fn embedder_files(&self, link: bool) {
        let dir = self.home().join(".local/share/cairn/models");
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let installed = installed_model()
            .parent()
            .map(|p| p.join("all-MiniLM-L6-v2"))
            .unwrap_or_default();
        assert!(
            installed.join("model.safetensors").is_file(),
            "the embedding model is not installed at {} (scripts/fetch-model.sh)",
            installed.display()
        );
        let models = installed.parent().unwrap_or(&installed).to_path_buf();
        if !link {
            for folder in ["all-MiniLM-L6-v2", "onnxruntime"] {
                std::fs::create_dir_all(dir.join(folder)).unwrap_or_else(|e| panic!("{e}"));
                for file in std::fs::read_dir(models.join(folder)).unwrap_or_else(|e| panic!("{e}"))
                {
                    let file = file.unwrap_or_else(|e| panic!("{e}")).path();
                    let to = dir.join(folder).join(file.file_name().unwrap_or_default());
                    std::fs::copy(&file, to).unwrap_or_else(|e| panic!("{e}"));
                }
            }
            return;
        }
        std::os::unix::fs::symlink(&installed, dir.join("all-MiniLM-L6-v2"))
            .unwrap_or_else(|e| panic!("{e}"));
        // What runs it, and the graph it is given, written once for every test.
        for shared in ["onnxruntime", "cache"] {
            let from = models.join(shared);
            std::fs::create_dir_all(&from).unwrap_or_else(|e| panic!("{e}"));
            std::os::unix::fs::symlink(&from, dir.join(shared)).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// `[mcp.servers.<name>]` for a command line (as `cairn_testkit::mcp` gives it), plus
/// `extra` lines, as TOML.
pub fn mcp_server_toml(name: &str, (command, args): (String, Vec<String>), extra: &str) -> String {
    let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
    format!(
        "[mcp.servers.{name}]\ncommand = {command:?}\nargs = [{}]\n{extra}\n",
        args.join(", ")
    )
}

/// The content of the first tool result in an OpenAI request body, as JSON text.
pub fn first_tool_result(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|messages| messages.iter().find(|m| m["role"] == "tool"))
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

/// Sends SIGINT (what Ctrl+C sends) to a running child and waits (`within` at most) for it
/// to end.
pub async fn interrupt(
    child: &mut tokio::process::Child,
    within: std::time::Duration,
) -> std::process::ExitStatus {
    let pid = child.id().unwrap_or_else(|| panic!("the child has ended"));
    let sent = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap_or_else(|e| panic!("kill: {e}"));
    assert!(sent.success(), "SIGINT could not be sent");
    match tokio::time::timeout(within, child.wait()).await {
        Ok(status) => status.unwrap_or_else(|e| panic!("wait: {e}")),
        Err(_) => panic!("the child still runs {within:?} after SIGINT"),
    }
}
