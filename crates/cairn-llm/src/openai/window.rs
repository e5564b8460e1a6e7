//! What a local OpenAI-compatible server says about its models: each one's real context
//! window, and which servers run on this machine at all.
//!
//! The OpenAI format has no field for the window, and assuming one is worse than useless:
//! Ollama cuts a prompt longer than its window from the front without a word, so a
//! conversation compacted against a guessed 128k loses its start. Each server says it its
//! own way: vLLM's model list (`max_model_len`), llama.cpp's `/props` (`n_ctx`), LM
//! Studio's `/api/v0/models/{id}` (`loaded_context_length`, else `max_context_length`),
//! Ollama's `/api/show` (`num_ctx` among the model's parameters, else Ollama's default).

use std::time::Duration;

use futures::future::join_all;
use serde::Serialize;
use serde_json::{json, Value};
use ts_rs::TS;

/// How long one question to a server may take: they are on this machine.
const ASK_TIMEOUT: Duration = Duration::from_millis(1500);

/// The window Ollama gives a model whose parameters set none (its default `num_ctx`).
pub const OLLAMA_DEFAULT_WINDOW: u64 = 4096;

/// The servers looked for, on their default ports.
pub const DEFAULT_PORTS: [(ServerKind, u16); 4] = [
    (ServerKind::Ollama, 11434),
    (ServerKind::LmStudio, 1234),
    (ServerKind::LlamaCpp, 8080),
    (ServerKind::Vllm, 8000),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ServerKind {
    Ollama,
    LmStudio,
    LlamaCpp,
    Vllm,
}

impl ServerKind {
    pub fn label(self) -> &'static str {
        match self {
            Self::Ollama => "Ollama",
            Self::LmStudio => "LM Studio",
            Self::LlamaCpp => "llama.cpp server",
            Self::Vllm => "vLLM",
        }
    }
}

/// A model a server offers, with the window it runs it with when the server says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct FoundModel {
    pub id: String,
    pub context_window: Option<u64>,
}

/// A server found running on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct LocalServer {
    pub kind: ServerKind,
    /// The OpenAI-compatible root, e.g. `http://127.0.0.1:11434/v1`.
    pub base_url: String,
    pub models: Vec<FoundModel>,
}

/// The longest a provider being built waits for a server's window.
pub const READ_BUDGET: Duration = Duration::from_secs(3);

/// Whether `base_url` is on this machine, on the default port of one of the known servers:
/// only those are asked about windows when a provider is built.
pub fn is_default_local_server(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return false;
    };
    let loopback = match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    loopback
        && url
            .port_or_known_default()
            .is_some_and(|port| DEFAULT_PORTS.iter().any(|(_, p)| *p == port))
}

/// The server's root: `base_url` without its `/v1`.
pub(super) fn root(base_url: &str) -> &str {
    let trimmed = base_url.trim_end_matches('/');
    trimmed.strip_suffix("/v1").unwrap_or(trimmed)
}

pub(super) async fn get(client: &reqwest::Client, url: &str) -> Option<Value> {
    let answer = client.get(url).timeout(ASK_TIMEOUT).send().await.ok()?;
    if !answer.status().is_success() {
        return None;
    }
    answer.json().await.ok()
}

pub(super) async fn post(client: &reqwest::Client, url: &str, body: &Value) -> Option<Value> {
    let answer = client
        .post(url)
        .json(body)
        .timeout(ASK_TIMEOUT)
        .send()
        .await
        .ok()?;
    if !answer.status().is_success() {
        return None;
    }
    answer.json().await.ok()
}

fn positive(value: &Value) -> Option<u64> {
    value.as_u64().filter(|n| *n > 0)
}

/// vLLM: the model's entry in `GET /v1/models` carries `max_model_len`.
fn vllm_window(models: &Value, model: &str) -> Option<u64> {
    models["data"]
        .as_array()?
        .iter()
        .find(|m| m["id"] == model)
        .and_then(|m| positive(&m["max_model_len"]))
}

/// llama.cpp's server: `GET /props` has the slots' `n_ctx`.
async fn llama_cpp_window(client: &reqwest::Client, root: &str) -> Option<u64> {
    let props = get(client, &format!("{root}/props")).await?;
    positive(&props["default_generation_settings"]["n_ctx"]).or_else(|| positive(&props["n_ctx"]))
}

/// LM Studio: `GET /api/v0/models/{id}`, the loaded window, else the model's maximum.
async fn lm_studio_window(client: &reqwest::Client, root: &str, model: &str) -> Option<u64> {
    let id = url::form_urlencoded::byte_serialize(model.as_bytes()).collect::<String>();
    let info = get(client, &format!("{root}/api/v0/models/{id}")).await?;
    positive(&info["loaded_context_length"]).or_else(|| positive(&info["max_context_length"]))
}

/// Ollama: `POST /api/show`; `num_ctx` among the parameters, else Ollama's default (never
/// more than the model was trained for).
async fn ollama_window(client: &reqwest::Client, root: &str, model: &str) -> Option<u64> {
    let shown = post(
        client,
        &format!("{root}/api/show"),
        &json!({"model": model}),
    )
    .await?;
    let set = shown["parameters"].as_str().and_then(|parameters| {
        parameters.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("num_ctx"))
                .then(|| words.next()?.parse::<u64>().ok())
                .flatten()
        })
    });
    let trained = shown["model_info"].as_object().and_then(|info| {
        info.iter()
            .find(|(key, _)| key.ends_with(".context_length"))
            .and_then(|(_, v)| positive(v))
    });
    match (set, trained) {
        (Some(set), _) if set > 0 => Some(set),
        (_, Some(trained)) => Some(trained.min(OLLAMA_DEFAULT_WINDOW)),
        // Not an Ollama answer (no model information at all).
        _ if shown.get("modelfile").is_none() => None,
        _ => Some(OLLAMA_DEFAULT_WINDOW),
    }
}

/// The window the server at `base_url` runs `model` with, and which server said it; `None`
/// when none of the known ways answers. `models` is its `GET /v1/models` answer when
/// already fetched.
pub async fn read_context_window(
    client: &reqwest::Client,
    base_url: &str,
    model: &str,
    models: Option<&Value>,
) -> Option<(ServerKind, u64)> {
    let fetched;
    let models = match models {
        Some(models) => Some(models),
        None => {
            fetched = get(
                client,
                &format!("{}/models", base_url.trim_end_matches('/')),
            )
            .await;
            fetched.as_ref()
        }
    };
    if let Some(window) = models.and_then(|m| vllm_window(m, model)) {
        return Some((ServerKind::Vllm, window));
    }
    let root = root(base_url);
    if let Some(window) = llama_cpp_window(client, root).await {
        return Some((ServerKind::LlamaCpp, window));
    }
    if let Some(window) = lm_studio_window(client, root, model).await {
        return Some((ServerKind::LmStudio, window));
    }
    ollama_window(client, root, model)
        .await
        .map(|window| (ServerKind::Ollama, window))
}

/// The servers running at `candidates` (kind expected, OpenAI-compatible root), each with
/// its models and their windows. A candidate that does not answer a model list is left out.
pub async fn discover_at(candidates: &[(ServerKind, String)]) -> Vec<LocalServer> {
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_millis(300))
        .no_proxy()
        .build()
        .unwrap_or_default();
    let client = &client;
    let found = join_all(candidates.iter().map(|(kind, base_url)| async move {
        let models = get(
            client,
            &format!("{}/models", base_url.trim_end_matches('/')),
        )
        .await?;
        let ids: Vec<String> = models["data"]
            .as_array()?
            .iter()
            .filter_map(|m| m["id"].as_str().map(str::to_string))
            .collect();
        let mut kind = *kind;
        let mut found = Vec::with_capacity(ids.len());
        for id in ids {
            let window = read_context_window(client, base_url, &id, Some(&models)).await;
            if let Some((said, _)) = window {
                kind = said;
            }
            found.push(FoundModel {
                id,
                context_window: window.map(|(_, w)| w),
            });
        }
        Some(LocalServer {
            kind,
            base_url: base_url.clone(),
            models: found,
        })
    }))
    .await;
    found.into_iter().flatten().collect()
}

/// The servers running on this machine's default ports (Ollama, LM Studio, llama.cpp's
/// server, vLLM).
pub async fn discover_local_servers() -> Vec<LocalServer> {
    let candidates: Vec<(ServerKind, String)> = DEFAULT_PORTS
        .iter()
        .map(|(kind, port)| (*kind, format!("http://127.0.0.1:{port}/v1")))
        .collect();
    discover_at(&candidates).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_testkit::{MockResponse, MockServer, RecordedRequest};
    use pretty_assertions::assert_eq;

    /// A server answering `routes` (method and path, answer) and 404 for anything else.
    async fn server(routes: Vec<(&'static str, &'static str, Value)>) -> MockServer {
        MockServer::respond_with(move |request: &RecordedRequest| {
            routes
                .iter()
                .find(|(method, path, _)| *method == request.method && *path == request.path)
                .map_or_else(
                    || MockResponse::status(404, "not found"),
                    |(_, _, answer)| MockResponse::json(200, answer.clone()),
                )
        })
        .await
    }

    fn list(ids: &[&str]) -> Value {
        json!({"object": "list", "data": ids.iter().map(|id| json!({"id": id})).collect::<Vec<_>>()})
    }

    async fn discover_one(server: &MockServer, guess: ServerKind) -> LocalServer {
        let url = format!("{}/v1", server.url());
        let mut servers = discover_at(&[(guess, url)]).await;
        assert_eq!(servers.len(), 1, "{servers:?}");
        servers.remove(0)
    }

    fn windows(server: &LocalServer) -> Vec<(&str, Option<u64>)> {
        server
            .models
            .iter()
            .map(|m| (m.id.as_str(), m.context_window))
            .collect()
    }

    #[tokio::test]
    async fn each_server_says_its_window_its_own_way() {
        let vllm = server(vec![(
            "GET",
            "/v1/models",
            json!({"data": [{"id": "Qwen/Qwen3-8B", "max_model_len": 32768}]}),
        )])
        .await;
        let found = discover_one(&vllm, ServerKind::Ollama).await;
        assert_eq!(found.kind, ServerKind::Vllm);
        assert_eq!(windows(&found), [("Qwen/Qwen3-8B", Some(32768))]);

        let llama = server(vec![
            ("GET", "/v1/models", list(&["model.gguf"])),
            (
                "GET",
                "/props",
                json!({"default_generation_settings": {"n_ctx": 8192}}),
            ),
        ])
        .await;
        let found = discover_one(&llama, ServerKind::Vllm).await;
        assert_eq!(found.kind, ServerKind::LlamaCpp);
        assert_eq!(windows(&found), [("model.gguf", Some(8192))]);

        let lm_studio = server(vec![
            ("GET", "/v1/models", list(&["qwen2.5-7b-instruct"])),
            (
                "GET",
                "/api/v0/models/qwen2.5-7b-instruct",
                json!({"id": "qwen2.5-7b-instruct", "loaded_context_length": 16384, "max_context_length": 32768}),
            ),
        ])
        .await;
        let found = discover_one(&lm_studio, ServerKind::LmStudio).await;
        assert_eq!(found.kind, ServerKind::LmStudio);
        assert_eq!(windows(&found), [("qwen2.5-7b-instruct", Some(16384))]);
    }

    #[tokio::test]
    async fn ollama_counts_the_num_ctx_it_runs_with_not_the_trained_window() {
        let ollama = server(vec![
            ("GET", "/v1/models", list(&["llama3.2:latest"])),
            (
                "POST",
                "/api/show",
                json!({"modelfile": "FROM llama3.2", "parameters": "stop \"<|eot_id|>\"\nnum_ctx 8192",
                       "model_info": {"llama.context_length": 131072}}),
            ),
        ])
        .await;
        assert_eq!(
            windows(&discover_one(&ollama, ServerKind::Ollama).await),
            [("llama3.2:latest", Some(8192))]
        );

        // No num_ctx: Ollama runs it with its default, not the 128k it was trained for.
        let default = server(vec![
            ("GET", "/v1/models", list(&["qwen3:4b"])),
            (
                "POST",
                "/api/show",
                json!({"modelfile": "FROM qwen3", "model_info": {"qwen3.context_length": 40960}}),
            ),
        ])
        .await;
        assert_eq!(
            windows(&discover_one(&default, ServerKind::Ollama).await),
            [("qwen3:4b", Some(OLLAMA_DEFAULT_WINDOW))]
        );
    }

    #[tokio::test]
    async fn a_server_that_says_nothing_or_nonsense_has_no_window() {
        let quiet = server(vec![
            ("GET", "/v1/models", list(&["a"])),
            (
                "GET",
                "/props",
                json!({"default_generation_settings": {"n_ctx": -5}}),
            ),
            ("POST", "/api/show", json!({"error": "no such model"})),
        ])
        .await;
        assert_eq!(
            windows(&discover_one(&quiet, ServerKind::LlamaCpp).await),
            [("a", None)]
        );
        // Something that is not an OpenAI-compatible server is not listed.
        let other = server(vec![("GET", "/v1/models", json!({"hello": "world"}))]).await;
        let url = format!("{}/v1", other.url());
        assert!(discover_at(&[(ServerKind::Vllm, url)]).await.is_empty());
        // Nothing listening: nothing found, promptly.
        let closed = [(ServerKind::Ollama, "http://127.0.0.1:9/v1".to_string())];
        assert!(discover_at(&closed).await.is_empty());
    }

    #[test]
    fn only_known_local_servers_are_asked_when_a_provider_is_built() {
        for url in [
            "http://127.0.0.1:11434/v1",
            "http://localhost:1234/v1",
            "http://[::1]:8080/v1",
        ] {
            assert!(is_default_local_server(url), "{url}");
        }
        for url in [
            "https://api.openai.com/v1",
            "http://127.0.0.1:5555/v1",
            "http://192.168.1.2:11434/v1",
            "http://localhost.evil.example:11434/v1",
            "not a url",
        ] {
            assert!(!is_default_local_server(url), "{url}");
        }
    }
}
