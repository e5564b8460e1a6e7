//! The session list: open, rename, delete, switch branch.

use serde::Serialize;
use ts_rs::TS;

use super::DesktopState;
use crate::desktop::{busy, Desktop};
use crate::hub::AppEvent;
use crate::ipc::error::{AppError, AppResult};
use crate::ipc::views::SessionView;

/// A session in the sidebar.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SessionSummary {
    pub id: String,
    pub title: Option<String>,
    /// Milliseconds since the epoch of the last write.
    pub updated_ms: i64,
    pub messages: usize,
}

#[tauri::command(rename_all = "snake_case")]
pub async fn list_sessions(desktop: DesktopState<'_>) -> AppResult<Vec<SessionSummary>> {
    summaries(&desktop)
}

/// The sidebar's sessions, newest first. Subagents' sessions are not listed; their runs
/// show nested in the parent's.
pub fn summaries(desktop: &Desktop) -> AppResult<Vec<SessionSummary>> {
    let list = desktop.store.list()?;
    Ok(list
        .into_iter()
        .filter(|s| s.parent_session.is_none())
        .map(|s| SessionSummary {
            updated_ms: chrono::DateTime::parse_from_rfc3339(&s.updated_at)
                .map(|t| t.timestamp_millis())
                .unwrap_or(0),
            id: s.id,
            title: s.title,
            messages: s.messages,
        })
        .collect())
}

#[tauri::command(rename_all = "snake_case")]
pub async fn open_session(desktop: DesktopState<'_>, id: Option<String>) -> AppResult<SessionView> {
    desktop.open_session(id.as_deref()).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn rename_session(desktop: DesktopState<'_>, id: String, title: String) -> AppResult<()> {
    let title = title.trim();
    if title.is_empty() || title.chars().count() > 200 {
        return Err(AppError::invalid("a title has 1 to 200 characters"));
    }
    desktop.rename(&id, title).await?;
    desktop.emit(AppEvent::SessionsChanged);
    Ok(())
}

/// Moves the session file to `.cairn/deleted-sessions/` (out of the list and the memory
/// index, still on disk for the user to bring back).
#[tauri::command(rename_all = "snake_case")]
pub async fn delete_session(desktop: DesktopState<'_>, id: String) -> AppResult<()> {
    let id = desktop.store.resolve(&id)?;
    desktop.replace_if_current(&id).await?;
    desktop.store.delete(&id).await?;
    if let Some(index) = desktop.index() {
        let _ = index.changed(&[format!("sessions/{id}.jsonl")]);
    }
    desktop.emit(AppEvent::SessionsChanged);
    Ok(())
}

/// Moves the open session to the newest message under `entry_id` (one of the sibling
/// user messages an edit made). With `summarize`, a summary of the branch left (what was
/// tried, learned and decided there) is recorded where the conversation goes on.
#[tauri::command(rename_all = "snake_case")]
pub async fn switch_branch(
    desktop: DesktopState<'_>,
    entry_id: String,
    summarize: Option<bool>,
) -> AppResult<SessionView> {
    let agent = desktop.agent().await?;
    if agent.phase() != cairn_protocol::Phase::Idle {
        return Err(busy());
    }
    let target = agent.with_session(|tree| tree.newest_under(&entry_id));
    let target = target.ok_or_else(|| {
        AppError::new(
            crate::ipc::error::ErrorCode::NotFound,
            format!("no entry {entry_id}"),
        )
    })?;
    if summarize.unwrap_or(false) {
        agent.navigate_summarised(Some(&target)).await?;
    } else {
        agent.navigate(Some(&target)).await?;
    }
    desktop.view().await
}
