//! Memory search, index status, today's log and consolidation.

use cairn_app::cairn_core::upkeep::RunMode;
use cairn_app::cairn_memory::SearchQuery;
use cairn_app::launch;
use tokio_util::sync::CancellationToken;
use ts_rs::TS;

use super::DesktopState;
use crate::hub::AppEvent;
use crate::ipc::error::{AppError, AppResult, ErrorCode};
use crate::ipc::memory::{ConsolidationResult, CoverageReport, MemoryOverview, SearchResultsView};

fn unavailable() -> AppError {
    AppError::new(ErrorCode::Internal, "the memory index is unavailable")
}

#[tauri::command(rename_all = "snake_case")]
pub async fn memory_search(
    desktop: DesktopState<'_>,
    query: String,
    limit: Option<usize>,
) -> AppResult<SearchResultsView> {
    let index = desktop.index().cloned().ok_or_else(unavailable)?;
    let mut query = SearchQuery::new(query);
    query.limit = limit.unwrap_or(20).clamp(1, 100);
    let results = tauri::async_runtime::spawn_blocking(move || index.search(&query))
        .await
        .map_err(|e| AppError::new(ErrorCode::Internal, e.to_string()))??;
    Ok(SearchResultsView::of(&results))
}

/// A session whose text matches a search, with the best matching part.
#[derive(Debug, Clone, PartialEq, serde::Serialize, TS)]
pub struct SessionHit {
    pub id: String,
    pub snippet: String,
}

/// Searches the sessions' text (the index's sessions corpus), best first, one hit per
/// session: the sidebar's filter finds conversations by what was said, not only by title.
#[tauri::command(rename_all = "snake_case")]
pub async fn search_sessions(
    desktop: DesktopState<'_>,
    query: String,
) -> AppResult<Vec<SessionHit>> {
    let index = desktop.index().cloned().ok_or_else(unavailable)?;
    let mut search = SearchQuery::new(query);
    search.corpus = cairn_app::cairn_memory::Corpus::Sessions;
    search.limit = 50;
    let results = tauri::async_runtime::spawn_blocking(move || index.search(&search))
        .await
        .map_err(|e| AppError::new(ErrorCode::Internal, e.to_string()))??;
    Ok(session_hits(&results))
}

/// One hit per session, in rank order; hits outside `sessions/*.jsonl` are left out.
pub fn session_hits(results: &cairn_app::cairn_memory::SearchResults) -> Vec<SessionHit> {
    let mut seen = std::collections::HashSet::new();
    results
        .results
        .iter()
        .filter_map(|hit| {
            let id = hit.path.strip_prefix("sessions/")?.strip_suffix(".jsonl")?;
            (!id.contains('/') && seen.insert(id.to_string())).then(|| SessionHit {
                id: id.to_string(),
                snippet: hit.snippet.clone(),
            })
        })
        .collect()
}

#[tauri::command(rename_all = "snake_case")]
pub async fn index_status(
    desktop: DesktopState<'_>,
) -> AppResult<cairn_app::cairn_memory::IndexStatus> {
    let index = desktop.index().ok_or_else(unavailable)?;
    Ok(index.status())
}

/// Every file the index looks at, counted, and those it leaves out with why.
#[tauri::command(rename_all = "snake_case")]
pub async fn index_coverage(desktop: DesktopState<'_>) -> AppResult<CoverageReport> {
    let index = desktop.index().cloned().ok_or_else(unavailable)?;
    let report = tauri::async_runtime::spawn_blocking(move || index.files_report())
        .await
        .map_err(|e| AppError::new(ErrorCode::Internal, e.to_string()))??;
    Ok(CoverageReport::of(&report))
}

#[tauri::command(rename_all = "snake_case")]
pub async fn memory_overview(desktop: DesktopState<'_>) -> AppResult<MemoryOverview> {
    let today = chrono::Local::now().date_naive();
    let today_path = cairn_app::cairn_memory::daily_log::path(today);
    // Read beneath the workspace: a log planted as a link out of it shows nothing.
    let today_text =
        cairn_app::cairn_memory::daily_log::read(&desktop.workspace, today).unwrap_or_default();
    let scheduler = desktop.scheduler.lock().await;
    let status = scheduler.as_ref().map(|s| s.status());
    Ok(MemoryOverview {
        today_path,
        today_text,
        last_consolidation_ms: status
            .as_ref()
            .and_then(|s| s.last_run)
            .map(|t| t.timestamp_millis()),
        next_consolidation_ms: status
            .as_ref()
            .and_then(|s| s.next_run)
            .map(|t| t.timestamp_millis()),
        consolidation_enabled: status.is_some(),
    })
}

/// Consolidates now: through the background scheduler when it runs, else once with the
/// consolidation model (as `cairn consolidate` does).
#[tauri::command(rename_all = "snake_case")]
pub async fn consolidate_now(desktop: DesktopState<'_>) -> AppResult<ConsolidationResult> {
    let scheduled = {
        let scheduler = desktop.scheduler.lock().await;
        match scheduler.as_ref() {
            Some(s) => Some(s.run_now().await),
            None => None,
        }
    };
    let report = match scheduled {
        Some(report) => report?,
        None => {
            let config = desktop.config();
            let chat = match launch::consolidates_with_chat(&config) {
                true => Some(desktop.chat_model().await?),
                false => None,
            };
            let consolidator = launch::consolidator_now(
                &config,
                &desktop.workspace,
                chat.as_ref(),
                desktop.index(),
            )?;
            consolidator
                .run(RunMode::Write, CancellationToken::new())
                .await?
        }
    };
    let result = ConsolidationResult::of(&report);
    desktop.emit(AppEvent::Consolidated {
        result: result.clone(),
    });
    Ok(result)
}
