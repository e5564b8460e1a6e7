//! Building a provider from resolved settings.

use std::path::Path;
use std::sync::Arc;

use cairn_llm::anthropic::{AnthropicConfig, AnthropicProvider, WebSearchTool};
use cairn_llm::local::{LocalConfig, LocalProvider};
use cairn_llm::openai::{OpenAiConfig, OpenAiProvider};
use cairn_llm::{LlmError, Provider, ScriptedProvider};

use super::file::ProviderKind;
use super::resolve::ResolvedProvider;

pub(super) async fn build(resolved: &ResolvedProvider) -> Result<Arc<dyn Provider>, LlmError> {
    match resolved.settings.kind {
        ProviderKind::Openai => {
            let mut provider = openai(resolved, None)?;
            // A server on this machine says how large its window is; a guess would let
            // Ollama cut the start of a long conversation without a word.
            if resolved.settings.context_window.is_none() {
                if let Some((server, window)) = provider.read_context_window().await {
                    tracing::info!(
                        server = server.label(),
                        window,
                        "context window read from the server"
                    );
                }
            }
            // And whether its model sees pictures.
            if resolved.settings.vision.is_none() {
                if let Some((server, sees)) = provider.read_vision().await {
                    tracing::info!(server = server.label(), sees, "vision read from the server");
                }
            }
            Ok(Arc::new(provider))
        }
        ProviderKind::Anthropic => Ok(Arc::new(anthropic(resolved, None)?)),
        ProviderKind::Local => {
            let path = resolved.model_path().ok_or_else(|| {
                LlmError::Fatal("no local model file: set CAIRN_MODEL_PATH or model_path".into())
            })?;
            let mut config = LocalConfig::new(path);
            config.context_window = resolved
                .settings
                .context_window
                .map(|w| w.min(u64::from(u32::MAX)) as u32);
            if let Some(file) = &resolved.settings.chat_template_file {
                config.chat_template = Some(read_chat_template(file)?);
            }
            let provider = tokio::task::spawn_blocking(move || LocalProvider::load(config))
                .await
                .map_err(|e| LlmError::Fatal(format!("loading the local model failed: {e}")))??;
            Ok(Arc::new(provider))
        }
        ProviderKind::Scripted => {
            let path = resolved.script.as_ref().ok_or_else(|| {
                LlmError::Fatal("the scripted provider reads its answers from CAIRN_SCRIPT".into())
            })?;
            let text = std::fs::read_to_string(path)
                .map_err(|e| LlmError::Fatal(format!("cannot read {}: {e}", path.display())))?;
            Ok(Arc::new(ScriptedProvider::from_json(&text)?))
        }
    }
}

/// The text of a chat template file, checked before the model loads: it must compile and
/// render a short conversation. Errors name the file.
fn read_chat_template(path: &Path) -> Result<String, LlmError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        LlmError::Fatal(format!(
            "cannot read the chat template file {}: {e}",
            path.display()
        ))
    })?;
    cairn_llm::local::check_chat_template(&text)
        .map_err(|e| LlmError::Fatal(format!("{}: {e}", path.display())))?;
    Ok(text)
}

/// The models a provider offers: the server's list for remote providers, the GGUF files
/// beside the configured one for the local provider.
pub(super) async fn list_models(resolved: &ResolvedProvider) -> Result<Vec<String>, LlmError> {
    match resolved.settings.kind {
        ProviderKind::Openai => openai(resolved, Some(0))?.list_models().await,
        ProviderKind::Anthropic => anthropic(resolved, Some(0))?.list_models().await,
        ProviderKind::Local => Ok(local_models(resolved)),
        ProviderKind::Scripted => Ok(vec![resolved.model.clone()]),
    }
}

/// An OpenAI-compatible provider as configured, for what is not a chat (embeddings).
pub fn openai_provider(resolved: &ResolvedProvider) -> Result<OpenAiProvider, LlmError> {
    openai(resolved, None)
}

/// The parts every remote provider takes from the settings.
struct Remote {
    key: Option<String>,
    headers: Vec<(String, String)>,
}

fn remote(resolved: &ResolvedProvider) -> Remote {
    Remote {
        key: resolved.api_key.as_ref().map(|k| k.expose().to_string()),
        headers: resolved
            .settings
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    }
}

fn openai(resolved: &ResolvedProvider, retries: Option<u32>) -> Result<OpenAiProvider, LlmError> {
    let Remote { key, headers } = remote(resolved);
    let mut config = OpenAiConfig::new(&resolved.model);
    if let Some(url) = &resolved.settings.base_url {
        config.base_url = url.clone();
    }
    config.api_key = key;
    config.extra_headers = headers;
    config.context_window = resolved.settings.context_window;
    config.vision = resolved.settings.vision;
    config.image_max_side = image_max_side(resolved);
    config.max_retries = retries.unwrap_or(config.max_retries);
    config.call_timeout = call_timeout(resolved).unwrap_or(config.call_timeout);
    OpenAiProvider::new(config)
}

fn anthropic(
    resolved: &ResolvedProvider,
    retries: Option<u32>,
) -> Result<AnthropicProvider, LlmError> {
    let Remote { key, headers } = remote(resolved);
    let mut config = AnthropicConfig::new(&resolved.model);
    if let Some(url) = &resolved.settings.base_url {
        config.base_url = url.clone();
    }
    config.api_key = key;
    config.extra_headers = headers;
    config.context_window = resolved.settings.context_window;
    config.wire.thinking_budget = resolved.settings.thinking_budget;
    config.wire.web_search = resolved.provider_search.then(WebSearchTool::default);
    config.vision = resolved.settings.vision;
    config.image_max_side = image_max_side(resolved);
    config.max_retries = retries.unwrap_or(config.max_retries);
    config.call_timeout = call_timeout(resolved).unwrap_or(config.call_timeout);
    AnthropicProvider::new(config)
}

/// `image_max_side` of the provider's settings, kept to sizes a picture can be sent at.
fn image_max_side(resolved: &ResolvedProvider) -> Option<u32> {
    resolved
        .settings
        .image_max_side
        .map(|side| side.clamp(64, 8_192))
}

/// `call_timeout_s` of the provider's settings, when it is a usable number of seconds.
fn call_timeout(resolved: &ResolvedProvider) -> Option<std::time::Duration> {
    let secs = resolved.settings.call_timeout_s?;
    (secs > 0).then(|| std::time::Duration::from_secs(secs.min(86_400)))
}

fn local_models(resolved: &ResolvedProvider) -> Vec<String> {
    let Some(path) = resolved.model_path() else {
        return Vec::new();
    };
    let mut models: Vec<String> = path
        .parent()
        .and_then(|dir| std::fs::read_dir(dir).ok())
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("gguf"))
        })
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    models.sort();
    models
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::ProviderSettings;

    fn local_with_template(template: &Path) -> ResolvedProvider {
        let mut settings = ProviderSettings::of_kind(ProviderKind::Local);
        settings.model_path = Some(template.with_extension("gguf"));
        settings.chat_template_file = Some(template.to_path_buf());
        ResolvedProvider {
            name: "local".into(),
            model: "m".into(),
            settings,
            api_key: None,
            key_source: None,
            script: None,
            provider_search: false,
        }
    }

    async fn build_error(resolved: &ResolvedProvider) -> String {
        match build(resolved).await {
            Ok(_) => panic!("the provider was built"),
            Err(e) => e.to_string(),
        }
    }

    #[tokio::test]
    async fn a_chat_template_file_that_cannot_be_used_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.jinja");
        let err = build_error(&local_with_template(&missing)).await;
        assert!(
            err.starts_with("cannot read the chat template file") && err.contains("missing.jinja"),
            "{err}"
        );

        let broken = dir.path().join("broken.jinja");
        std::fs::write(&broken, "{% for m in messages %}{{ m.content }}").unwrap();
        let err = build_error(&local_with_template(&broken)).await;
        assert!(
            err.contains("broken.jinja: the chat template does not compile"),
            "{err}"
        );

        // A good template gets as far as loading the model (which is missing here).
        let good = dir.path().join("good.jinja");
        std::fs::write(&good, "{% for m in messages %}{{ m.content }}{% endfor %}").unwrap();
        let err = build_error(&local_with_template(&good)).await;
        assert!(err.contains("no local model at"), "{err}");
    }
}
