//! Whether a local OpenAI-compatible server's model sees pictures, as the server says it:
//! llama.cpp's `/props` (`modalities.vision`, set when a multimodal projector is loaded),
//! LM Studio's `/api/v0/models/{id}` (`type: "vlm"`), Ollama's `/api/show` (`vision`
//! among the model's `capabilities`). Servers that say nothing leave it to the settings.

use serde_json::json;

use super::window::{get, post, root, ServerKind};

/// Whether `model` on OpenAI's own API (`api.openai.com`) takes pictures, as OpenAI's model
/// pages say: GPT-4o, GPT-4.1, GPT-4 Turbo, GPT-5 and the o1, o3 and o4 reasoning models
/// (not o1-mini or o3-mini). Other servers' models are not guessed from their names.
pub fn openai_model_sees(base_url: &str, model: &str) -> bool {
    let host = reqwest::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase));
    if host.as_deref() != Some("api.openai.com") {
        return false;
    }
    let model = model.to_ascii_lowercase();
    let family = |prefix: &str| model == prefix || model.starts_with(&format!("{prefix}-"));
    let blind = [
        "o1-mini",
        "o3-mini",
        "gpt-4o-audio",
        "gpt-4o-realtime",
        "gpt-4o-mini-audio",
    ];
    if blind.iter().any(|b| model.starts_with(b)) {
        return false;
    }
    [
        "gpt-4o",
        "gpt-4.1",
        "gpt-4-turbo",
        "gpt-5",
        "o1",
        "o3",
        "o4-mini",
        "chatgpt-4o",
    ]
    .iter()
    .any(|f| family(f))
}

/// What the server at `base_url` says of `model` seeing pictures, and which server said
/// it; `None` when none of the known ways answers.
pub async fn read_vision(
    client: &reqwest::Client,
    base_url: &str,
    model: &str,
) -> Option<(ServerKind, bool)> {
    let root = root(base_url);
    if let Some(props) = get(client, &format!("{root}/props")).await {
        if let Some(sees) = props["modalities"]["vision"].as_bool() {
            return Some((ServerKind::LlamaCpp, sees));
        }
    }
    let id = url::form_urlencoded::byte_serialize(model.as_bytes()).collect::<String>();
    if let Some(info) = get(client, &format!("{root}/api/v0/models/{id}")).await {
        if let Some(kind) = info["type"].as_str() {
            return Some((ServerKind::LmStudio, kind == "vlm"));
        }
    }
    let shown = post(
        client,
        &format!("{root}/api/show"),
        &json!({"model": model}),
    )
    .await?;
    let capabilities = shown["capabilities"].as_array()?;
    Some((
        ServerKind::Ollama,
        capabilities.iter().any(|c| c.as_str() == Some("vision")),
    ))
}

#[cfg(test)]
mod tests {
    use cairn_testkit::{MockResponse, MockServer};
    use serde_json::json;

    use super::*;

    async fn asked(responses: Vec<MockResponse>) -> (Option<(ServerKind, bool)>, Vec<String>) {
        let server = MockServer::start(responses).await;
        let read = read_vision(
            &reqwest::Client::new(),
            &format!("{}/v1", server.url()),
            "qwen2.5vl:7b",
        )
        .await;
        let paths = server.requests().into_iter().map(|r| r.path).collect();
        (read, paths)
    }

    #[tokio::test]
    async fn each_local_server_is_asked_its_own_way() {
        let llama = MockResponse::json(200, json!({"modalities": {"vision": true}}));
        assert_eq!(
            asked(vec![llama]).await.0,
            Some((ServerKind::LlamaCpp, true))
        );
        let (read, paths) = asked(vec![
            MockResponse::status(404, "no"),
            MockResponse::json(200, json!({"id": "qwen2.5vl:7b", "type": "llm"})),
        ])
        .await;
        assert_eq!(read, Some((ServerKind::LmStudio, false)));
        assert_eq!(paths, ["/props", "/api/v0/models/qwen2.5vl%3A7b"]);
        let ollama = MockResponse::json(200, json!({"capabilities": ["completion", "vision"]}));
        let (read, paths) = asked(vec![
            MockResponse::status(404, "no"),
            MockResponse::status(404, "no"),
            ollama,
        ])
        .await;
        assert_eq!(read, Some((ServerKind::Ollama, true)));
        assert_eq!(paths[2], "/api/show");
    }

    #[test]
    fn openai_s_own_models_that_take_pictures_are_known_and_no_other_server_is_guessed() {
        let openai = "https://api.openai.com/v1";
        for model in [
            "gpt-4o",
            "gpt-4o-mini",
            "gpt-4.1-nano",
            "gpt-5",
            "o3",
            "o4-mini",
        ] {
            assert!(openai_model_sees(openai, model), "{model}");
        }
        for model in [
            "gpt-3.5-turbo",
            "o1-mini",
            "o3-mini",
            "gpt-4o-audio-preview",
        ] {
            assert!(!openai_model_sees(openai, model), "{model}");
        }
        assert!(!openai_model_sees("http://localhost:11434/v1", "gpt-4o"));
    }

    #[tokio::test]
    async fn a_server_that_says_nothing_leaves_it_to_the_settings() {
        let nothing = || MockResponse::status(404, "no");
        assert_eq!(asked(vec![nothing(), nothing(), nothing()]).await.0, None);
    }
}
