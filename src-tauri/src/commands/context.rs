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

/// One entry of the composer's `/` menu: a prompt template (`prompts/<name>.md`, expanded
/// into the message) or a skill (its instructions join the prompt).
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
pub struct SlashCommand {
    pub name: String,
    /// `prompt` or `skill`.
    pub kind: String,
    pub description: String,
    /// How it is called: `/review <file> <focus>`.
    pub usage: String,
}

/// The prompt templates and skills the composer's `/` menu offers, by name; a template
/// hides a skill of the same name (it is what `/name` sends).
#[tauri::command(rename_all = "snake_case")]
pub async fn slash_commands(desktop: DesktopState<'_>) -> AppResult<Vec<SlashCommand>> {
    use cairn_app::cairn_core::{prompts, skills};
    let root = desktop.workspace.root().to_path_buf();
    let user = desktop
        .config()
        .settings_path
        .parent()
        .map(|dir| dir.join(skills::FOLDER));
    let (prompts, skills) = tauri::async_runtime::spawn_blocking(move || {
        (prompts::load(&root), skills::load(&root, user.as_deref()))
    })
    .await
    .map_err(|e| AppError::new(ErrorCode::Internal, e.to_string()))?;
    let mut listed: Vec<SlashCommand> = prompts
        .prompts
        .iter()
        .map(|p| SlashCommand {
            name: p.name.clone(),
            kind: "prompt".into(),
            description: p.description.clone(),
            usage: p.usage(),
        })
        .collect();
    for skill in &skills.skills {
        if prompts.get(&skill.name).is_none() {
            listed.push(SlashCommand {
                name: skill.name.clone(),
                kind: "skill".into(),
                description: skill.description.clone(),
                usage: format!("/{}", skill.name),
            });
        }
    }
    listed.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(listed)
}
