//! Whether a local OpenAI-compatible server's model sees pictures, as the server says it:
//! llama.cpp's `/props` (`modalities.vision`, set when a multimodal projector is loaded),
//! LM Studio's `/api/v0/models/{id}` (`type: "vlm"`), Ollama's `/api/show` (`vision`
//! among the model's `capabilities`). Servers that say nothing leave it to the settings.

use serde_json::json;

use super::window::{get, post, root, ServerKind};

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

    #[tokio::test]
    async fn a_server_that_says_nothing_leaves_it_to_the_settings() {
        let nothing = || MockResponse::status(404, "no");
        assert_eq!(asked(vec![nothing(), nothing(), nothing()]).await.0, None);
    }
}
