//! A run that goes on after an interruption: its state is checkpointed at each save point
//! (step count, continue prompts used, stall detection's memory, queued follow-ups and
//! next-turn messages), and a session whose last checkpoint has no `run_end` after it
//! offers to go on from there, with the interrupted calls answered by the repair at load.

use cairn_protocol::{AgentEvent, EntryKind, Message, NoticeLevel, RunCheckpoint};

use super::flow::{Flow, Run};

impl Run {
    /// Records the run's own state (written with the save point that follows).
    pub(super) async fn checkpoint(&mut self) -> Flow {
        let (follow_ups, next_turn) = {
            let state = self.inner.state();
            (
                state.follow_up.iter().cloned().collect(),
                state.next_turn.clone(),
            )
        };
        let mut summary = self.summary;
        summary.duration_ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(0);
        let run = RunCheckpoint {
            run_id: self.run_id.clone(),
            message: self.message.clone(),
            step: self.step,
            nudges: self.nudges,
            stop_blocked: self.stop_blocked,
            stall: self.stall.snapshot(),
            follow_ups,
            next_turn,
            summary,
        };
        self.record(EntryKind::Checkpoint { run }).await.map(drop)
    }

    /// Goes on with the run `checkpoint` was written by: its step count, continue prompts,
    /// stall memory and queues taken up, the context gathered again, then the loop. A run
    /// whose last word was already its answer only ends.
    pub(super) async fn resume(&mut self, checkpoint: RunCheckpoint) -> Flow {
        self.step = checkpoint.step;
        self.nudges = checkpoint.nudges;
        self.stop_blocked = checkpoint.stop_blocked;
        self.stall.restore(&checkpoint.stall);
        self.summary = checkpoint.summary;
        self.summary.steps = checkpoint.step;
        self.message = checkpoint.message.clone();
        {
            let mut state = self.inner.state();
            state.next_turn.extend(checkpoint.next_turn.iter().cloned());
            if !checkpoint.follow_ups.is_empty() {
                state
                    .follow_up
                    .extend(checkpoint.follow_ups.iter().cloned());
                self.inner.follow_ups_changed(&state, Vec::new());
            }
        }
        let answered = {
            let mut tree = self.inner.session();
            let messages = tree.context_messages();
            match messages.last() {
                Some(Message::Assistant(a)) if a.tool_calls().next().is_none() => {
                    Some(a.text()).filter(|t| !t.trim().is_empty())
                }
                _ => None,
            }
        };
        let said = match checkpoint.step {
            0 => "going on with the run cut short before its first answer".to_string(),
            1 => "going on with the run interrupted after 1 model call".to_string(),
            n => format!("going on with the run interrupted after {n} model calls"),
        };
        self.notice(NoticeLevel::Info, said);
        if let Some(answer) = answered {
            // It had answered; only its end was not written.
            self.answer = Some(answer);
            return self.save_point(false).await;
        }
        let message = self.message.clone();
        self.invoked = self.invoked_skill(&message).await;
        self.attach_mcp_tools().await?;
        self.gather().await;
        self.inner.events.emit(AgentEvent::PhaseChanged {
            phase: cairn_protocol::Phase::Turn,
        });
        self.respond().await
    }
}
