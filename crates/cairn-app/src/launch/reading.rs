//! How documents are read, as the settings have them: OCR on or off (`[memory] ocr`) and
//! its languages (`[memory] ocr_languages`, those not installed left out with a warning
//! naming their package), and PDFium's library from the bundled models folder (without
//! it PDFs are read by pdf-extract, their text layer only).

use cairn_extract::{ocr, ReadOptions};

use super::{Config, Warn};

/// How a document opened by hand is read (the window's document view, `cairn ask
/// --attach`): as the index reads it, by PDFium when its library is installed, scanned pages
/// by OCR in the workspace's languages (none: not read).
pub fn document_options(workspace: &cairn_memory::Workspace) -> ReadOptions {
    let languages = workspace.attachments().ocr_languages();
    ReadOptions {
        ocr: (!languages.is_empty()).then(|| languages.to_vec()),
        pdfium: cairn_models::pdf_reader_path(),
    }
}

/// OCR's languages when the settings name none.
pub const DEFAULT_OCR_LANGUAGES: [&str; 1] = ["eng"];

/// Where OCR stands here, as the settings and this machine have it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OcrState {
    /// `[memory] ocr = false`.
    Off,
    /// Tesseract is not installed.
    Missing,
    /// Tesseract reads `usable`; the languages of `missing` are not installed.
    Ready {
        usable: Vec<String>,
        missing: Vec<String>,
    },
    /// Tesseract is there but cannot say which languages it has.
    Unknown(String),
}

impl OcrState {
    /// Where OCR stands for `config` (runs `tesseract --list-langs`).
    pub fn of(config: &Config) -> Self {
        let memory = &config.settings.memory;
        if memory.ocr == Some(false) {
            return Self::Off;
        }
        if ocr::tesseract().is_none() {
            return Self::Missing;
        }
        match ocr::installed_languages() {
            Ok(installed) => {
                let (usable, missing) = ocr::split_languages(&wanted(config), &installed);
                Self::Ready { usable, missing }
            }
            Err(why) => Self::Unknown(why),
        }
    }

    /// A warning per language asked for and not installed, naming its package.
    pub fn warnings(&self) -> Vec<String> {
        let Self::Ready { usable, missing } = self else {
            return Vec::new();
        };
        missing
            .iter()
            .map(|language| {
                let reading = if usable.is_empty() {
                    "no language asked for is installed".to_string()
                } else {
                    format!("OCR reads {}", usable.join(", "))
                };
                format!(
                    "the OCR language `{language}` is not installed (install {}); {reading}",
                    ocr::language_package(language)
                )
            })
            .collect()
    }
}

/// The languages the settings ask OCR for.
pub(super) fn wanted(config: &Config) -> Vec<String> {
    config
        .settings
        .memory
        .ocr_languages
        .clone()
        .filter(|languages| !languages.is_empty())
        .unwrap_or_else(|| DEFAULT_OCR_LANGUAGES.map(String::from).to_vec())
}

/// The readers' options for `config`; a language not installed is left out and told to
/// `warn`. The sandboxed readers are told what of Cairn's own they never see.
pub fn read_options(config: &Config, warn: Warn<'_>) -> ReadOptions {
    cairn_extract::guard::hide_from_readers(config.own_paths());
    let state = OcrState::of(config);
    for warning in state.warnings() {
        warn(warning);
    }
    let ocr = match state {
        OcrState::Off => None,
        OcrState::Ready { usable, .. } if !usable.is_empty() => Some(usable),
        // Missing (its files say what to install) or nothing usable: as asked.
        _ => Some(wanted(config)),
    };
    ReadOptions {
        ocr,
        pdfium: cairn_models::pdf_reader_path(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(ocr: Option<bool>, languages: Option<&[&str]>) -> (tempfile::TempDir, Config) {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::load(Some(dir.path())).unwrap();
        config.settings.memory.ocr = ocr;
        config.settings.memory.ocr_languages =
            languages.map(|l| l.iter().map(ToString::to_string).collect());
        (dir, config)
    }

    fn read(config: &Config) -> (ReadOptions, Vec<String>) {
        let mut warnings = Vec::new();
        let options = read_options(config, &mut |w| warnings.push(w));
        (options, warnings)
    }

    #[test]
    fn ocr_reads_english_unless_turned_off() {
        let (_dir, on) = config(None, None);
        let (options, warnings) = read(&on);
        assert_eq!(options.ocr, Some(vec!["eng".to_string()]));
        assert!(warnings.is_empty(), "{warnings:?}");
        let (_dir, off) = config(Some(false), Some(&["deu"]));
        let (options, warnings) = read(&off);
        assert_eq!(options.ocr, None);
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn a_language_not_installed_is_left_out_with_its_package_named() {
        let (_dir, config) = config(None, Some(&["eng", "zzz_x"]));
        let (options, warnings) = read(&config);
        assert_eq!(options.ocr, Some(vec!["eng".to_string()]));
        assert_eq!(
            warnings,
            [
                "the OCR language `zzz_x` is not installed (install tesseract-ocr-zzz-x); \
              OCR reads eng"
            ]
        );
    }

    #[test]
    fn the_settings_take_ocr_and_its_languages() {
        let settings: crate::settings::Settings =
            toml::from_str("[memory]\nocr = false\nocr_languages = [\"eng\", \"deu\"]\n").unwrap();
        assert_eq!(settings.memory.ocr, Some(false));
        assert_eq!(
            settings.memory.ocr_languages,
            Some(vec!["eng".to_string(), "deu".to_string()])
        );
    }
}
