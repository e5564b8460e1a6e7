//! Whether a run whose model stops may end: strict completion (a model that stops while
//! work items are open is not "completed" silently), the stop hooks' veto, and the
//! queued messages that carry it on.

use cairn_protocol::{NoticeLevel, Outcome, QueueMode, WorkItem, WorkStatus};

use super::flow::{Flow, Run};
use crate::config::Completion;
use crate::hooks::{HookDecision, HookPoint};

impl Run {
    /// Strict completion: a model that stops while work items are open is told which and
    /// asked to go on (true), a bounded number of times; then, or when items are blocked,
    /// the run ends blocked with the items as the reason.
    pub(super) async fn nudge_open_work(&mut self) -> Flow<bool> {
        let Completion::Strict { nudges } = self.settings.config.completion else {
            return Ok(false);
        };
        let items = self.inner.session().work_items();
        let open: Vec<_> = items.iter().filter(|i| i.status.is_open()).collect();
        let blocked: Vec<_> = items
            .iter()
            .filter(|i| i.status == WorkStatus::Blocked)
            .collect();
        let list = |items: &[&WorkItem]| {
            items
                .iter()
                .map(|i| format!("{}. {}", i.id, i.text))
                .collect::<Vec<_>>()
                .join("; ")
        };
        if open.is_empty() && blocked.is_empty() {
            return self.ask_for_work_complete(nudges).await;
        }
        if open.is_empty() || self.nudges >= nudges {
            let mut reasons = Vec::new();
            if !open.is_empty() {
                reasons.push(format!("work items still open: {}", list(&open)));
            }
            for item in &blocked {
                let note = item
                    .note
                    .as_deref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default();
                reasons.push(format!("item {}. {} is blocked{note}", item.id, item.text));
            }
            return Err(Outcome::Blocked {
                reason: reasons.join("; "),
            });
        }
        self.nudges += 1;
        self.notice(
            NoticeLevel::Info,
            format!(
                "the model stopped with open work items; asking it to go on ({} of {nudges})",
                self.nudges
            ),
        );
        let text = format!(
            "[Cairn] You stopped, but these work items are still open: {}. Go on with them \
             and mark each done with todo_write when it is. If one cannot be done, mark it \
             blocked with a note, or call `block` with the reason.",
            list(&open)
        );
        self.add_user_message(text).await?;
        Ok(true)
    }

    /// A strict run ends through `work_complete` when the model can call it: a plain
    /// answer gets the continuation prompt (a bounded number of times), then the run ends
    /// blocked, saying the work was never confirmed.
    async fn ask_for_work_complete(&mut self, nudges: u32) -> Flow<bool> {
        let offered = self.settings.provider.info().supports_tools
            && self
                .settings
                .tools
                .specs()
                .iter()
                .any(|t| t.name == "work_complete");
        if !offered {
            return Ok(false);
        }
        if self.nudges >= nudges {
            return Err(Outcome::Blocked {
                reason: "the model stopped without calling work_complete, so the work was \
                         never confirmed done"
                    .into(),
            });
        }
        self.nudges += 1;
        self.notice(
            NoticeLevel::Info,
            format!(
                "the model stopped without calling work_complete; asking it to finish ({} of \
                 {nudges})",
                self.nudges
            ),
        );
        self.add_user_message(
            "[Cairn] You stopped without calling work_complete. If the task is done, call \
             work_complete with a summary and the paths of what you produced; if it is not, \
             go on with it, or call block with the reason."
                .to_string(),
        )
        .await?;
        Ok(true)
    }

    /// The stop hooks' say: one may keep the run going once, its reason told to the model,
    /// and only while the run has nudges left (a veto counts as one). A second block, or
    /// one past the nudges, is reported and the run ends.
    pub(super) async fn stop_hooks_veto(&mut self) -> Flow<bool> {
        let answer = self.answer.clone().unwrap_or_default();
        let mut point = HookPoint::Stop {
            answer: &answer,
            active: self.stop_blocked,
        };
        let decision = self
            .inner
            .hooks
            .run(&self.hook_ctx(), &mut point, &self.inner.events)
            .await;
        let HookDecision::Block { reason } = decision else {
            return Ok(false);
        };
        let allowed = match self.settings.config.completion {
            Completion::Strict { nudges } => nudges,
            Completion::Lenient => 1,
        };
        if self.stop_blocked || self.nudges >= allowed {
            self.notice(
                NoticeLevel::Warning,
                format!(
                    "a stop hook asked the model to go on again ({reason}); a stop is blocked \
                     once per run, so the run ends"
                ),
            );
            return Ok(false);
        }
        self.stop_blocked = true;
        self.nudges += 1;
        self.notice(
            NoticeLevel::Info,
            format!("a stop hook asks the model to go on: {reason}"),
        );
        self.add_user_message(format!(
            "[Cairn] A stop hook kept you from stopping: {reason}"
        ))
        .await?;
        Ok(true)
    }

    /// Delivers queued steering (`steer`) or follow-up messages, all of them or the
    /// oldest one as the queue's mode says; true when any were.
    pub(super) async fn deliver_queued(&mut self, steering: bool) -> Flow<bool> {
        let messages: Vec<String> = {
            let mut state = self.inner.state();
            let config = &state.settings.config;
            let mode = match steering {
                true => config.steering_mode,
                false => config.follow_up_mode,
            };
            let queue = match steering {
                true => &mut state.steer,
                false => &mut state.follow_up,
            };
            let take = match mode {
                QueueMode::All => queue.len(),
                QueueMode::OneAtATime => queue.len().min(1),
            };
            let delivered: Vec<String> = queue.drain(..take).collect();
            if !steering && !delivered.is_empty() {
                self.inner.follow_ups_changed(&state, Vec::new());
            }
            delivered
        };
        let any = !messages.is_empty();
        for message in messages {
            self.add_user_message(message).await?;
        }
        Ok(any)
    }
}
