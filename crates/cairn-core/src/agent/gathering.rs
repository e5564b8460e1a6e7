//! Gather, the run's side: the system prompt built from the configured prompt and the
//! workspace context (see `context`), the intent step's reading recorded, front ends told
//! what went in.

use cairn_protocol::{AgentEvent, EntryKind, NoticeLevel};

use super::context;
use super::flow::Run;

impl Run {
    /// Builds the system prompt from the configured prompt and the workspace context; the
    /// first time in a run, with the intent step when it is on (its reading is recorded).
    pub(super) async fn gather(&mut self) {
        // Taken before the files are read: a change while they are is seen next time.
        self.context_stamp = Some(context::ContextStamp::take(self.inner.workspace.root()));
        let model = self
            .inner
            .upkeep
            .intent
            .clone()
            .map(|m| m.with_timeout(self.settings.config.timeouts.intent));
        let step = match (&self.intent, &model) {
            (Some(known), _) => context::IntentStep::Known(known),
            (None, Some(model)) => context::IntentStep::Ask(model, self.cancel.child_token()),
            (None, None) => context::IntentStep::Off,
        };
        let fresh = matches!(step, context::IntentStep::Ask(..));
        let conversation = match fresh {
            true => self.inner.session().recent(super::intent::RECENT_TURNS + 1),
            false => Vec::new(),
        };
        let info = self.settings.provider.info();
        let (compact, share) = super::compact::shares(&info, &self.settings.config.context);
        let gathered = context::gather(context::GatherInput {
            workspace: &self.inner.workspace,
            base: self.settings.config.system_prompt.as_deref(),
            memory: self.inner.memory.as_ref(),
            message: &self.message,
            conversation: &conversation,
            session_id: &self.session_id,
            intent: step,
            user_skills: self.settings.config.user_skills.as_deref(),
            invoked: self.invoked.as_ref(),
            hook_context: &self.hook_context,
            compact,
            share,
        })
        .await;
        for warning in gathered.warnings {
            self.notice(NoticeLevel::Warning, warning);
        }
        tracing::debug!(
            parts = ?gathered.parts,
            recall = ?gathered.recall,
            intent = ?gathered.intent,
            "gathered the context"
        );
        if let (true, Some(intent)) = (fresh, &gathered.intent) {
            let _ = self
                .record(EntryKind::Intent {
                    intent: intent.clone(),
                })
                .await;
        }
        self.intent = gathered.intent.clone();
        self.inner.events.emit(AgentEvent::ContextGathered {
            parts: gathered.parts,
            recall: gathered.recall,
            intent: gathered.intent,
        });
        self.system_prompt = gathered.system_prompt;
    }
}
