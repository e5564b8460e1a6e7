//! Where the bundled models are installed.

use std::path::PathBuf;

/// The file name of the default chat model, as `scripts/fetch-model.sh` stores it.
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// Where `scripts/fetch-model.sh` puts the bundled models: `cairn/models` in the
/// platform's data folder (`$XDG_DATA_HOME`, else `~/.local/share`, on Linux). `None`
/// when the platform has none (no home folder).
pub fn models_dir() -> Option<PathBuf> {
    Some(dirs::data_dir()?.join("cairn").join("models"))
}

/// The default chat model, in [`models_dir`].
pub fn default_model_path() -> Option<PathBuf> {
    Some(models_dir()?.join(DEFAULT_MODEL_FILE))
}

/// PDFium's library in [`models_dir`], when it is installed there.
pub fn pdf_reader_path() -> Option<PathBuf> {
    Some(models_dir()?.join(crate::fetch::PDF_READER_FILE)).filter(|path| path.is_file())
}
