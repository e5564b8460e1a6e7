//! Runs: prompts (with pictures), steering, stopping, approvals, edits and retries. Each run
//! streams its events to the page through the Channel it was given and resolves after
//! `agent_end`.

use cairn_app::cairn_core::agent::Agent;
use cairn_protocol::{AgentEvent, ApprovalDecision, EntryKind, Message, Picture};
use tauri::ipc::Channel;

use super::DesktopState;
use crate::desktop::Desktop;
use crate::ipc::error::{AppError, AppResult, ErrorCode};
use crate::ipc::views::SessionView;

fn sink(channel: Channel<AgentEvent>) -> impl FnMut(AgentEvent) -> bool + Send + 'static {
    move |event| channel.send(event).is_ok()
}

fn non_empty(text: &str) -> AppResult<()> {
    if text.trim().is_empty() {
        return Err(AppError::invalid("the message is empty"));
    }
    Ok(())
}

/// A message needs text or a picture.
fn something(text: &str, pictures: &[Picture]) -> AppResult<()> {
    if pictures.is_empty() {
        non_empty(text)?;
    }
    Ok(())
}

/// Runs `text` with `pictures` (the text alone as a plain prompt).
async fn prompt(agent: &Agent, text: String, pictures: Vec<Picture>) -> AppResult<()> {
    if pictures.is_empty() {
        agent.prompt(text).await?;
    } else {
        agent.prompt_with_pictures(text, pictures).await?;
    }
    Ok(())
}

/// Sends a message, with the pictures kept for it (`attach_picture`, `pick_pictures`, a
/// drop), which go after its text.
#[tauri::command(rename_all = "snake_case")]
pub async fn send_message(
    desktop: DesktopState<'_>,
    text: String,
    pictures: Option<Vec<Picture>>,
    on_event: Channel<AgentEvent>,
) -> AppResult<()> {
    let pictures = pictures.unwrap_or_default();
    something(&text, &pictures)?;
    crate::ipc::pictures::kept(desktop.workspace.attachments(), &pictures)?;
    let desktop = desktop.inner().clone();
    desktop
        .drive(sink(on_event), |agent| async move {
            prompt(&agent, text, pictures).await
        })
        .await
}

/// Goes on with the open session's interrupted run (cut short by a crash, a kill or a
/// closed window) from its last checkpoint; refused when it has none.
#[tauri::command(rename_all = "snake_case")]
pub async fn resume_run(desktop: DesktopState<'_>, on_event: Channel<AgentEvent>) -> AppResult<()> {
    let desktop = desktop.inner().clone();
    desktop
        .drive(sink(on_event), |agent| async move {
            agent.resume().await?;
            Ok(())
        })
        .await
}

/// A message for the running run: it sees it at its next step.
#[tauri::command(rename_all = "snake_case")]
pub async fn steer(desktop: DesktopState<'_>, text: String) -> AppResult<()> {
    non_empty(&text)?;
    running_agent(&desktop, "steer").await?.steer(text);
    Ok(())
}

/// A follow-up for the running run: the core delivers it when the run would have ended
/// and the run goes on (a `follow_ups` event tells the queue), so it survives a reload of
/// the page; a run that is stopped gives it back.
#[tauri::command(rename_all = "snake_case")]
pub async fn follow_up(desktop: DesktopState<'_>, text: String) -> AppResult<()> {
    non_empty(&text)?;
    running_agent(&desktop, "follow up").await?.follow_up(text);
    Ok(())
}

/// The open session's thinking level (`off`, `low`, `medium`, `high`): from its next
/// model call, recorded in the session there.
#[tauri::command(rename_all = "snake_case")]
pub async fn set_thinking(
    desktop: DesktopState<'_>,
    level: cairn_protocol::ThinkingLevel,
) -> AppResult<()> {
    desktop.agent().await?.set_thinking(level);
    Ok(())
}

/// How queued follow-ups are delivered (`all` or `one-at-a-time`): saved as `[run]
/// follow_up_mode` and applied at once, to a run going on too (from its next save point).
#[tauri::command(rename_all = "snake_case")]
pub async fn set_follow_up_mode(
    desktop: DesktopState<'_>,
    mode: cairn_protocol::QueueMode,
) -> AppResult<()> {
    desktop.set_follow_up_mode(mode).await
}

/// The agent of the run going on; else an error saying to send the message instead.
async fn running_agent(desktop: &Desktop, what: &str) -> AppResult<Agent> {
    match desktop.current_agent().await {
        Some(agent) if agent.phase() != cairn_protocol::Phase::Idle => Ok(agent),
        _ => Err(AppError::invalid(format!(
            "nothing is running to {what}; send it instead"
        ))),
    }
}

/// Takes back the waiting follow-up at `index`; its text, or null when it was delivered
/// meanwhile.
#[tauri::command(rename_all = "snake_case")]
pub async fn take_follow_up(desktop: DesktopState<'_>, index: usize) -> AppResult<Option<String>> {
    Ok(match desktop.current_agent().await {
        Some(agent) => agent.take_follow_up(index),
        None => None,
    })
}

/// For a page loaded again while a run goes on: the run's events from its start go to
/// `on_event`, then the rest. The session as it was before the run, or null when no run
/// goes on.
#[tauri::command(rename_all = "snake_case")]
pub async fn attach_run(
    desktop: DesktopState<'_>,
    on_event: Channel<AgentEvent>,
) -> AppResult<Option<SessionView>> {
    Ok(desktop.attach(sink(on_event)).await)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn abort(desktop: DesktopState<'_>) -> AppResult<()> {
    if let Some(agent) = desktop.current_agent().await {
        agent.abort().await;
    }
    Ok(())
}

#[tauri::command(rename_all = "snake_case")]
pub async fn resolve_approval(
    desktop: DesktopState<'_>,
    request_id: String,
    decision: ApprovalDecision,
) -> AppResult<()> {
    let agent = desktop
        .current_agent()
        .await
        .ok_or_else(|| AppError::new(ErrorCode::NotFound, "no run is waiting for approval"))?;
    let reason = (decision == ApprovalDecision::Deny).then(|| "denied by the user".to_string());
    agent.resolve_approval(&request_id, decision, reason)?;
    Ok(())
}

/// User message `entry_id` as it was sent.
struct Sent {
    /// Where it hangs in the tree.
    parent: Option<String>,
    text: String,
    pictures: Vec<Picture>,
}

/// User message `entry_id`, its text and pictures, and where it hangs in the tree.
fn user_message(
    tree: &cairn_app::cairn_core::session::SessionTree,
    entry_id: &str,
) -> AppResult<Sent> {
    let entry = tree
        .get(entry_id)
        .ok_or_else(|| AppError::new(ErrorCode::NotFound, format!("no message {entry_id}")))?;
    match &entry.kind {
        EntryKind::Message {
            message: message @ Message::User { .. },
        } => Ok(Sent {
            parent: entry.parent_id.clone(),
            text: message.text(),
            pictures: crate::ipc::pictures::of_message(message),
        }),
        _ => Err(AppError::invalid(
            "only your own messages can be edited or sent again",
        )),
    }
}

/// Runs `text` on a new branch beside user message `entry_id`, with the pictures that
/// message had.
async fn branch(
    desktop: DesktopState<'_>,
    entry_id: String,
    text: Option<String>,
    on_event: Channel<AgentEvent>,
) -> AppResult<()> {
    let desktop = desktop.inner().clone();
    desktop
        .drive(sink(on_event), |agent| async move {
            let sent = agent.with_session(|tree| user_message(tree, &entry_id))?;
            let text = text.unwrap_or(sent.text);
            something(&text, &sent.pictures)?;
            agent.navigate(sent.parent.as_deref()).await?;
            prompt(&agent, text, sent.pictures).await
        })
        .await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn edit_message(
    desktop: DesktopState<'_>,
    entry_id: String,
    text: String,
    on_event: Channel<AgentEvent>,
) -> AppResult<()> {
    branch(desktop, entry_id, Some(text), on_event).await
}

#[tauri::command(rename_all = "snake_case")]
pub async fn retry(
    desktop: DesktopState<'_>,
    entry_id: String,
    on_event: Channel<AgentEvent>,
) -> AppResult<()> {
    branch(desktop, entry_id, None, on_event).await
}

/// The model of the open session from its next message on: `provider` (one configured in
/// the settings), with `model` or the provider's own. Recorded in the session as a model
/// change when it applies. Returns the model's name.
#[tauri::command(rename_all = "snake_case")]
pub async fn choose_model(
    desktop: DesktopState<'_>,
    provider: String,
    model: Option<String>,
) -> AppResult<String> {
    use cairn_app::cairn_core::subagents::ModelResolver as _;
    let spec = match model.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
        Some(model) => format!("{}/{model}", provider.trim()),
        None => provider.trim().to_string(),
    };
    let models = cairn_app::launch::SettingsModels::of(&desktop.config());
    let resolved = models.resolve(&spec).await.map_err(AppError::invalid)?;
    let agent = desktop.agent().await?;
    agent.set_model(resolved.model.clone(), Some(resolved.provider));
    Ok(resolved.model)
}
