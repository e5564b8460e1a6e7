//! The open session's context window: how full it is, and compacting it on demand.

use cairn_app::cairn_core::agent::ContextUsage;

use super::DesktopState;
use crate::desktop::busy;
use crate::ipc::error::{AppError, AppResult, ErrorCode};
use crate::ipc::views::SessionView;

/// How full the open session's context is; `None` before its agent exists (no model has
/// been needed yet: asking does not load one).
#[tauri::command(rename_all = "snake_case")]
pub async fn context_usage(desktop: DesktopState<'_>) -> AppResult<Option<ContextUsage>> {
    Ok(desktop
        .built_agent()
        .await
        .map(|agent| agent.context_usage()))
}

/// Summarises the older part of the open session now (memory is flushed first), with an
/// optional focus for the summary; the session as it then reads.
#[tauri::command(rename_all = "snake_case")]
pub async fn compact_now(
    desktop: DesktopState<'_>,
    focus: Option<String>,
) -> AppResult<SessionView> {
    let agent = desktop.agent().await?;
    if agent.phase() != cairn_protocol::Phase::Idle {
        return Err(busy());
    }
    let focus = focus.as_deref().map(str::trim).filter(|f| !f.is_empty());
    agent.compact(focus).await.map_err(|e| match e {
        // Nothing old enough to summarise, or the model's summary failed: said as it is.
        cairn_app::cairn_core::HarnessError::Compaction(reason) => {
            AppError::new(ErrorCode::Invalid, format!("cannot compact: {reason}"))
        }
        e => e.into(),
    })?;
    desktop.view().await
}
