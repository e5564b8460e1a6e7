//! Executing the tool calls of one model answer: stall check, pre_tool hooks and approvals
//! in call order, then the calls themselves (see `tools::dispatch`), post_tool hooks, and
//! the results recorded in call order. Every call gets exactly one result.

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;

use cairn_protocol::{
    AgentEvent, ApprovalDecision, EntryKind, FileChange, Message, NoticeLevel, Outcome, ToolCall,
    ToolResultMessage,
};
use futures::FutureExt;
use tokio::sync::{mpsc, oneshot};

use super::flow::{Flow, Run};
use super::AgentLink;
use crate::hooks::{HookDecision, HookPoint};
use crate::tools::dispatch::run_in_batches;
use crate::tools::{Tool, ToolCtx, ToolError, ToolOutput};

/// How long a cancelled tool may take to stop by itself.
const ABORT_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// What executing a step's calls means for the run.
pub(super) struct Executed {
    stop: Option<Outcome>,
}

impl Executed {
    /// The outcome that must end the run, if any (checked after the save point).
    pub fn into_flow(self) -> Flow {
        match self.stop {
            Some(outcome) => Err(outcome),
            None => Ok(()),
        }
    }
}

/// A call cleared to run.
struct Cleared {
    index: usize,
    call: ToolCall,
    tool: Arc<dyn Tool>,
    /// It writes a protected path, and was cleared knowing that (asked, or under `--yes`).
    protected: bool,
    /// Where it writes, as judged when it was cleared (see [`ToolCtx::judged`]).
    judged: Option<PathBuf>,
}

pub(super) async fn execute_tool_calls(run: &mut Run, calls: Vec<ToolCall>) -> Flow<Executed> {
    let mut outputs: Vec<Option<ToolOutput>> = vec![None; calls.len()];
    let mut cleared = Vec::new();
    let mut stop = None;
    for (index, call) in calls.iter().enumerate() {
        let change = preview(run, call).await;
        run.inner.events.emit(AgentEvent::ToolStart {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            change: change.clone(),
        });
        if let Some(outcome) = &stop {
            outputs[index] = Some(ToolOutput::error(not_run(outcome)));
            continue;
        }
        if let Some(outcome) = run.stall.observe_call(call) {
            outputs[index] = Some(ToolOutput::error(not_run(&outcome)));
            stop = Some(outcome);
            continue;
        }
        let mut call = call.clone();
        match clear(run, &mut call, change).await {
            Clearance::Run(tool) => {
                let (why, judged) = judge_write(run, &tool, &call);
                cleared.push(Cleared {
                    index,
                    call,
                    tool,
                    protected: why.is_some(),
                    judged,
                });
            }
            Clearance::Answer(output) => outputs[index] = Some(output),
            Clearance::Stop(outcome, output) => {
                outputs[index] = Some(output);
                stop = Some(outcome);
            }
        }
    }
    for item in &cleared {
        let kind = EntryKind::ToolStarted {
            call_id: item.call.id.clone(),
            tool_name: item.call.name.clone(),
        };
        run.record(kind).await?;
    }
    // A tool that may write may have changed a file of the context.
    run.context_touched |= cleared.iter().any(|c| c.tool.may_write());
    if cleared.iter().any(|c| !c.tool.parallel_safe()) {
        // On disk before a tool that changes things runs: after a crash, such a call
        // without its marker surely never started, and its repair can say so. (A tool
        // that only reads leaves nothing to check; its marker is not waited for.)
        run.save_point(true).await?;
    }
    let (fatal, ran) = run_cleared(run, cleared).await;
    let mut reported = vec![false; calls.len()];
    for (index, output) in ran {
        outputs[index] = Some(output);
        reported[index] = true;
    }
    stop = stop.or(fatal);
    let mut entries = Vec::new();
    let mut completed = None;
    for ((call, output), reported) in calls.iter().zip(outputs).zip(reported) {
        let mut output = output.unwrap_or_else(|| ToolOutput::error("Not run."));
        if reported {
            if let Some(stalled) =
                run.stall
                    .observe_result(&call.name, &output.content, output.is_error)
            {
                stop.get_or_insert(stalled);
            }
            let told = run
                .stall
                .failure_told(&call.name, &output.content, output.is_error);
            if let Some(told) = told {
                run.notice(
                    NoticeLevel::Warning,
                    format!(
                        "`{}` failed {} times in this run; the model was told so",
                        call.name,
                        super::stall::FAILURES_TOLD_AFTER
                    ),
                );
                output.content.push_str("\n\n");
                output.content.push_str(&told);
            }
        }
        entries.extend(output.entry.take());
        if let Some(answer) = output.completes.take() {
            completed.get_or_insert(answer);
        }
        if !reported {
            run.inner.events.emit(AgentEvent::ToolEnd {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content: output.content.clone(),
                is_error: output.is_error,
                pictures: output.pictures.clone(),
            });
        }
        run.summary.tool_calls += 1;
        let result = ToolResultMessage {
            call_id: call.id.clone(),
            tool_name: call.name.clone(),
            content: output.content,
            is_error: output.is_error,
            pictures: output.pictures,
        };
        run.record(EntryKind::Message {
            message: Message::ToolResult(result),
        })
        .await?;
    }
    for entry in entries {
        if let EntryKind::WorkItems { items } = &entry {
            run.inner.events.emit(AgentEvent::WorkItems {
                items: items.clone(),
            });
        }
        run.record(entry).await?;
    }
    // `work_complete` ends the run as completed, its summary the answer (unless the step
    // also stopped it otherwise).
    if let Some(answer) = completed {
        if stop.is_none() {
            run.answer = Some(answer);
            stop = Some(Outcome::Completed);
        }
    }
    Ok(Executed { stop })
}

/// The file `call` would change, before and after, when its tool can tell.
async fn preview(run: &Run, call: &ToolCall) -> Option<FileChange> {
    let tool = run.settings.tools.get(&call.name)?;
    tool.preview(&call.arguments, &run.inner.workspace).await
}

fn not_run(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Stalled {
            detail: Some(detail),
            ..
        } => format!("Not run: the run was stopped because {detail}."),
        Outcome::Stalled { repeats, .. } => format!(
            "Not run: this exact call was made {repeats} times in a row, so the run was stopped."
        ),
        Outcome::Blocked { reason } => format!("Not run: the run was stopped ({reason})."),
        Outcome::Aborted => "Not run: the user stopped the run.".to_string(),
        _ => "Not run: the run was stopped.".to_string(),
    }
}

enum Clearance {
    Run(Arc<dyn Tool>),
    Answer(ToolOutput),
    Stop(Outcome, ToolOutput),
}

/// Decides whether a call may run: known tool, pre_tool hooks (which may rewrite its
/// arguments), protected paths, approval by the user. A write to a protected path asks
/// even when the policy or a hook allows it; paths are judged after any rewrite.
async fn clear(run: &mut Run, call: &mut ToolCall, change: Option<FileChange>) -> Clearance {
    if run.cancel.is_cancelled() {
        return Clearance::Stop(
            Outcome::Aborted,
            ToolOutput::error(not_run(&Outcome::Aborted)),
        );
    }
    let Some(tool) = run.settings.tools.get(&call.name).cloned() else {
        let known = run.settings.tools.names().join(", ");
        return Clearance::Answer(ToolOutput::error(format!(
            "There is no tool named `{}`. Available tools: {known}.",
            call.name
        )));
    };
    let asked = call.arguments.clone();
    let decision = run.hooks(&mut HookPoint::PreTool { call }).await;
    let change = if call.arguments == asked {
        change
    } else {
        run.notice(
            cairn_protocol::NoticeLevel::Info,
            format!(
                "a hook changed the arguments of `{}` to {}",
                call.name, call.arguments
            ),
        );
        tool.preview(&call.arguments, &run.inner.workspace).await
    };
    let (protected, _) = judge_write(run, &tool, call);
    let ask = Asking {
        change,
        reason: protected.or_else(|| tool.must_ask()),
    };
    match decision {
        Err(outcome) => {
            let output = ToolOutput::error(not_run(&outcome));
            Clearance::Stop(outcome, output)
        }
        Ok(HookDecision::Allow | HookDecision::Continue) if ask.reason.is_none() => {
            Clearance::Run(tool)
        }
        Ok(HookDecision::Allow | HookDecision::Continue | HookDecision::Ask) => {
            ask_user(run, call, tool, ask).await
        }
        Ok(HookDecision::Deny { reason }) => Clearance::Answer(ToolOutput::error(format!(
            "Denied: {reason}. Do not retry this call."
        ))),
        Ok(HookDecision::Block { reason }) => {
            let outcome = Outcome::Blocked { reason };
            let output = ToolOutput::error(not_run(&outcome));
            Clearance::Stop(outcome, output)
        }
    }
}

/// Why the path `call` writes asks first whatever the policy says, if it does, and where
/// that path leads (links followed) as judged.
fn judge_write(
    run: &Run,
    tool: &Arc<dyn Tool>,
    call: &ToolCall,
) -> (Option<String>, Option<PathBuf>) {
    match tool.writes(&call.arguments) {
        Some(path) => run
            .settings
            .config
            .protect
            .judge(&run.inner.workspace, &path),
        None => (None, None),
    }
}

/// What an approval request shows besides the call.
struct Asking {
    change: Option<FileChange>,
    /// Why it asks although the policy might allow it: a protected path. Such a call can
    /// only be allowed once.
    reason: Option<String>,
}

/// Emits `approval_requested` and waits for the answer (or for an abort).
async fn ask_user(run: &mut Run, call: &ToolCall, tool: Arc<dyn Tool>, ask: Asking) -> Clearance {
    let request_id = uuid::Uuid::now_v7().to_string();
    let (tx, rx) = oneshot::channel();
    run.inner.desk.insert(request_id.clone(), tx);
    let always = match ask.reason {
        Some(_) => None,
        None => run.inner.approvals.always_scope(call),
    };
    let can_always = always.is_some();
    run.inner.events.emit(AgentEvent::ApprovalRequested {
        request_id: request_id.clone(),
        call_id: call.id.clone(),
        name: call.name.clone(),
        arguments: call.arguments.clone(),
        change: ask.change,
        reason: ask.reason,
        always,
    });
    let answer = tokio::select! {
        biased;
        () = run.cancel.cancelled() => None,
        answer = rx => answer.ok(),
    };
    run.inner.desk.remove(&request_id);
    let Some((decision, reason)) = answer else {
        // Withdrawn (the run was aborted, or a subagent's timed out): front ends drop the
        // prompt, and a late answer finds nothing waiting.
        run.inner.events.emit(AgentEvent::ApprovalResolved {
            request_id,
            call_id: call.id.clone(),
            decision: ApprovalDecision::Deny,
        });
        return Clearance::Stop(
            Outcome::Aborted,
            ToolOutput::error(not_run(&Outcome::Aborted)),
        );
    };
    run.inner.events.emit(AgentEvent::ApprovalResolved {
        request_id,
        call_id: call.id.clone(),
        decision,
    });
    match decision {
        ApprovalDecision::AllowOnce => Clearance::Run(tool),
        ApprovalDecision::AllowAlways => {
            // "Always" for a call that may only be allowed once allows this one alone.
            if can_always {
                run.inner.approvals.allow_always(call);
            }
            Clearance::Run(tool)
        }
        ApprovalDecision::Deny => {
            let why = reason.map(|r| format!(" ({r})")).unwrap_or_default();
            Clearance::Answer(ToolOutput::error(format!(
                "The user did not approve this call{why}. Do not retry it; explain what you \
                 wanted to do instead."
            )))
        }
    }
}

/// Runs the cleared calls (read-only ones side by side) with post_tool hooks; returns a
/// fatal outcome if a tool failed beyond the call, and the outputs by call index.
async fn run_cleared(
    run: &Run,
    cleared: Vec<Cleared>,
) -> (Option<Outcome>, Vec<(usize, ToolOutput)>) {
    if cleared.is_empty() {
        return (None, Vec::new());
    }
    let (updates_tx, mut updates_rx) = mpsc::unbounded_channel::<(String, String)>();
    let events = run.inner.events.clone();
    let forward = tokio::spawn(async move {
        while let Some((call_id, text)) = updates_rx.recv().await {
            events.emit(AgentEvent::ToolUpdate { call_id, text });
        }
    });
    let results = run_in_batches(
        cleared,
        |item| item.tool.parallel_safe(),
        |item| run_one(run, item, updates_tx.clone()),
    )
    .await;
    drop(updates_tx);
    let _ = forward.await;
    let mut fatal = None;
    let mut outputs = Vec::with_capacity(results.len());
    for (index, output, error) in results {
        match error {
            Some(ToolError::Fatal(message)) => {
                fatal.get_or_insert(Outcome::Failed {
                    error: cairn_protocol::ErrorInfo::new(
                        cairn_protocol::ErrorKind::Fatal,
                        message,
                    ),
                });
            }
            Some(ToolError::Block(reason)) => {
                fatal.get_or_insert(Outcome::Blocked { reason });
            }
            _ => {}
        }
        outputs.push((index, output));
    }
    (fatal, outputs)
}

async fn run_one(
    run: &Run,
    item: Cleared,
    updates: mpsc::UnboundedSender<(String, String)>,
) -> (usize, ToolOutput, Option<ToolError>) {
    // Judged again as it starts: an earlier call of the step may have made a link or an
    // entry that leads this write to a protected path since it was cleared. A protected
    // write goes where it led when the user cleared it.
    let mut judged = item.judged.clone();
    if !item.protected {
        let (why, now) = judge_write(run, &item.tool, &item.call);
        judged = now;
        if let Some(why) = why {
            let output = ToolOutput::error(format!(
                "Not run: {why}. It was not protected when the call was cleared: something \
                 made since (an earlier call of this step) leads it there now. Call it again \
                 on its own to be asked."
            ));
            run.inner.events.emit(AgentEvent::ToolEnd {
                call_id: item.call.id.clone(),
                name: item.call.name.clone(),
                content: output.content.clone(),
                is_error: true,
                pictures: Vec::new(),
            });
            return (item.index, output, None);
        }
    }
    let ctx = ToolCtx {
        workspace: run.inner.workspace.clone(),
        call_id: item.call.id.clone(),
        cancel: run.cancel.child_token(),
        updates,
        agent: Some(Arc::new(AgentLink {
            inner: run.inner.clone(),
            entry_id: run.inner.session().leaf().map(str::to_string),
        })),
        // A subagent's changes are kept with the run that started it, where the user
        // reviews them.
        judged,
        changes: Some(run.inner.changes.get().cloned().unwrap_or_else(|| {
            cairn_memory::changes::ChangeScope {
                session_id: run.session_id.clone(),
                run_id: run.run_id.clone(),
            }
        })),
    };
    // Tools stop by themselves when cancelled (killing what they started); one that does
    // not within the grace period is dropped.
    let cancel = run.cancel.clone();
    // A tool that panics fails its call and ends the run; the call still gets its result.
    let call = AssertUnwindSafe(item.tool.call(item.call.arguments.clone(), ctx))
        .catch_unwind()
        .map(|caught| {
            caught.unwrap_or_else(|panic| {
                Err(ToolError::Fatal(format!(
                    "the `{}` tool failed with an internal error: {}",
                    item.call.name,
                    super::flow::panic_message(&*panic)
                )))
            })
        });
    let result = tokio::select! {
        result = call => result,
        () = async move {
            cancel.cancelled().await;
            tokio::time::sleep(ABORT_GRACE).await;
        } => Err(ToolError::Aborted),
    };
    let (mut output, error) = match result {
        Ok(output) => (output, None),
        Err(ToolError::Aborted) => (ToolOutput::error("Aborted by the user."), None),
        Err(ToolError::Block(reason)) => (
            ToolOutput::ok(format!("The run ends as blocked: {reason}")),
            Some(ToolError::Block(reason)),
        ),
        Err(error) => (ToolOutput::error(format!("Error: {error}")), Some(error)),
    };
    let hook_ctx = run.hook_ctx();
    let mut point = HookPoint::PostTool {
        call: &item.call,
        output: &mut output,
    };
    let _ = run
        .inner
        .hooks
        .run(&hook_ctx, &mut point, &run.inner.events)
        .await;
    run.inner.events.emit(AgentEvent::ToolEnd {
        call_id: item.call.id.clone(),
        name: item.call.name.clone(),
        content: output.content.clone(),
        is_error: output.is_error,
        pictures: output.pictures.clone(),
    });
    (item.index, output, error)
}
