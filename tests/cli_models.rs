//! Providers from the terminal: the bundled local model with nothing configured, settings,
//! keys, `cairn models` and `cairn doctor`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use cairn_e2e::{interrupt, text_stream, Sandbox};
use cairn_testkit::{MockResponse, MockServer};
use pretty_assertions::assert_eq;
use serde_json::{json, Value};

async fn run(cmd: &mut tokio::process::Command) -> (Option<i32>, String, String) {
    let out = cmd.output().await.unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn with_nothing_configured_the_bundled_local_model_answers_offline() {
    let sandbox = Sandbox::new();
    sandbox.install_model();
    let (code, stdout, stderr) =
        run(&mut sandbox.cairn(&["ask", "What is the capital of France?"])).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("Paris"), "{stdout}");
    assert!(
        stderr.contains("cannot use tools"),
        "the user is told the model runs tool-less: {stderr}"
    );
}

/// Ctrl+C while the bundled model writes: the answer stops and the CLI exits with 130,
/// never a crash. The model's thread is inside llama.cpp when the run ends, and the
/// process must not tear llama.cpp down under it. Three times, as the timing varies.
#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_during_a_local_answer_exits_130_without_a_crash() {
    use std::os::unix::process::ExitStatusExt;
    let sandbox = Sandbox::new();
    sandbox.install_model();
    for round in 0..3 {
        let mut child = sandbox
            .cairn(&[
                "ask",
                "Write a long story about a dragon who learns to cook.",
            ])
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut seen = Vec::new();
        while seen.len() < 8 {
            let mut buf = [0u8; 64];
            let n = tokio::io::AsyncReadExt::read(&mut stdout, &mut buf)
                .await
                .unwrap();
            assert!(
                n > 0,
                "round {round}: the answer ended before the interrupt"
            );
            seen.extend_from_slice(&buf[..n]);
        }
        let status = interrupt(&mut child, std::time::Duration::from_secs(30)).await;
        assert_eq!(
            (status.code(), status.signal()),
            (Some(130), None),
            "round {round}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_local_model_is_fetched_and_a_fetch_that_fails_says_what_else_to_do() {
    let sandbox = Sandbox::new();
    // The sandbox's package index is a port where nothing listens.
    let (code, _, stderr) = run(&mut sandbox.cairn(&["ask", "hi"])).await;
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("fetching the bundled chat model") && stderr.contains("127.0.0.1:9"),
        "{stderr}"
    );
    assert!(
        stderr.contains("cannot fetch the bundled chat model"),
        "{stderr}"
    );
    assert!(stderr.contains("CAIRN_MODEL_PATH"), "{stderr}");
    // Nothing half-fetched is left where the model would be.
    let models = sandbox.home().join(".local/share/cairn/models");
    let left: Vec<_> = std::fs::read_dir(&models)
        .map(|dir| dir.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
    // With a provider configured, the chat model is not fetched. The embedding model
    // still is, and failing to fetch it does not stop the conversation: search is by
    // keyword meanwhile (here the provider then cannot be reached).
    let (_, _, stderr) = run(sandbox
        .cairn(&["ask", "hi"])
        .env("CAIRN_PROVIDER", "openai")
        .env("CAIRN_BASE_URL", "http://127.0.0.1:9/v1"))
    .await;
    assert!(!stderr.contains("bundled chat model"), "{stderr}");
    assert!(
        stderr.contains("fetching the bundled embedding model")
            && stderr.contains("search by meaning is off until the embedding model is installed"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("cannot fetch the bundled chat model"),
        "{stderr}"
    );
    // `[memory] embedder = "none"` fetches nothing.
    sandbox.write_settings("[memory]\nembedder = \"none\"\n");
    let (_, _, stderr) = run(sandbox
        .cairn(&["ask", "hi"])
        .env("CAIRN_PROVIDER", "openai")
        .env("CAIRN_BASE_URL", "http://127.0.0.1:9/v1"))
    .await;
    assert!(!stderr.contains("fetching"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_settings_file_picks_the_provider_model_and_headers() {
    let sandbox = Sandbox::new();
    let server = MockServer::start(vec![MockResponse::sse(text_stream("From settings."))]).await;
    sandbox.write_settings(&format!(
        "default_provider = \"box\"\n[providers.box]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"box-model\"\nheaders = {{ \"X-Title\" = \"Cairn\" }}\n",
        server.url()
    ));
    let (code, stdout, stderr) = run(&mut sandbox.cairn(&["ask", "hello"])).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "From settings.\n");
    let request = &server.requests()[0];
    assert_eq!(request.body_json().unwrap()["model"], "box-model");
    assert_eq!(request.header("x-title"), Some("Cairn"));
    assert_eq!(request.header("authorization"), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stored_key_is_sent_and_kept_out_of_the_workspace() {
    let sandbox = Sandbox::new();
    let server = MockServer::start(vec![MockResponse::sse(text_stream("Authorised."))]).await;
    sandbox.write_settings(&format!(
        "default_provider = \"box\"\n[providers.box]\nkind = \"openai\"\nbase_url = \"{}\"\n",
        server.url()
    ));
    let mut set = sandbox.cairn(&["key", "set", "box"]);
    set.stdin(std::process::Stdio::piped());
    let mut child = set.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stdin, b"sk-test-123\n")
        .await
        .unwrap();
    drop(stdin);
    assert_eq!(child.wait().await.unwrap().code(), Some(0));
    // No keyring service in the sandbox: the key lives in a private file.
    let secrets = sandbox.home().join(".config/cairn/secrets.toml");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&secrets).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);

    let (code, _, stderr) = run(&mut sandbox.cairn(&["ask", "hello"])).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some("Bearer sk-test-123")
    );
    let session = std::fs::read_dir(sandbox.workspace().join("sessions"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert!(!std::fs::read_to_string(session.path())
        .unwrap()
        .contains("sk-test-123"));

    let (code, _, _) = run(&mut sandbox.cairn(&["key", "delete", "box"])).await;
    assert_eq!(code, Some(0));
    assert!(!std::fs::read_to_string(&secrets)
        .unwrap()
        .contains("sk-test-123"));
}

#[tokio::test(flavor = "multi_thread")]
async fn models_lists_the_servers_models() {
    let sandbox = Sandbox::new();
    let server = MockServer::start(vec![MockResponse::json(
        200,
        json!({"object": "list", "data": [{"id": "alpha"}, {"id": "beta"}]}),
    )])
    .await;
    sandbox.write_settings(&format!(
        "default_provider = \"box\"\n[providers.box]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"alpha\"\n",
        server.url()
    ));
    let (code, stdout, stderr) = run(&mut sandbox.cairn(&["models", "--json"])).await;
    assert_eq!(code, Some(0), "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).unwrap();
    let boxed = listed["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "box")
        .unwrap();
    assert_eq!(boxed["models"], json!(["alpha", "beta"]));
    assert_eq!(boxed["active"], true);
    assert_eq!(server.requests()[0].path, "/models");
}

#[tokio::test(flavor = "multi_thread")]
async fn doctor_says_what_is_wrong_and_how_to_fix_it() {
    let sandbox = Sandbox::new();
    let server = MockServer::start(vec![MockResponse::status(
        401,
        r#"{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}"#,
    )])
    .await;
    sandbox.write_settings(&format!(
        "default_provider = \"box\"\n[providers.box]\nkind = \"openai\"\nbase_url = \"{}\"\n",
        server.url()
    ));
    let (code, stdout, _) = run(&mut sandbox.cairn(&["doctor"])).await;
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("key rejected"), "{stdout}");
    assert!(stdout.contains("cairn key set box"), "{stdout}");
    assert!(
        stdout.contains("model file") && stdout.contains("is missing"),
        "{stdout}"
    );
    assert!(stdout.contains("cairn models --fetch"), "{stdout}");
    assert!(
        stdout.contains("memory upkeep\n  · off (`[memory] flush = false`)"),
        "switched off on purpose: {stdout}"
    );
    assert!(
        stdout.contains("search by meaning")
            && stdout.contains("embedding model (all-MiniLM-L6-v2) is not installed"),
        "{stdout}"
    );

    let healthy = Sandbox::new();
    healthy.install_model();
    healthy.install_embedder();
    // Nothing said about memory upkeep: the bundled model alone decides.
    healthy.write_settings("[memory]\n");
    let (code, stdout, _) = run(&mut healthy.cairn(&["doctor"])).await;
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("loads in"), "{stdout}");
    // The bundled model alone: upkeep paused, said with how to turn it on, not a problem.
    assert!(
        stdout.contains("memory consolidation and the memory flush are paused")
            && stdout.contains("`[memory] flush = true`"),
        "{stdout}"
    );
    assert!(
        stdout.contains("all-MiniLM-L6-v2 (int8, cairn-onnx-4) embeds in")
            && stdout.contains("(384 dimensions): ONNX Runtime, int8"),
        "{stdout}"
    );
    // The CPU's features that decide the int8 kernels, as this machine has them.
    let line = stdout
        .lines()
        .find(|line| line.contains("embeds in"))
        .unwrap_or_default();
    let vnni = ["avx512vnni", "avxvnni"]
        .iter()
        .any(|flag| cpu_flags().contains(*flag));
    let (products, feature) = if vnni {
        ("with int8 dot products", "VNNI")
    } else {
        ("without int8 dot products", "no VNNI")
    };
    assert!(
        line.contains(products) && line.contains(feature) && line.contains("AVX2"),
        "{line}"
    );
}

/// The CPU's feature flags as the system lists them (`/proc/cpuinfo`), with their
/// underscores dropped.
fn cpu_flags() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    info.lines()
        .find(|line| line.starts_with("flags"))
        .unwrap_or_default()
        .replace('_', "")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_settings_file_is_named_with_its_line() {
    let sandbox = Sandbox::new();
    sandbox.write_settings("[providers.x]\nkind = \"gpt\"\n");
    let (code, _, stderr) = run(&mut sandbox.cairn(&["ask", "hi"])).await;
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("config.toml") && stderr.contains("line 2"),
        "{stderr}"
    );
}
