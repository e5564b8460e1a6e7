//! Running the hooks subscribed to a point, in priority order.

use std::sync::Arc;

use cairn_protocol::{AgentEvent, NoticeLevel};

use super::{Hook, HookCtx, HookDecision, HookKind, HookPoint};
use crate::events::EventBus;

/// The hooks of an agent, sorted by priority (stable for equal priorities).
#[derive(Clone, Default)]
pub struct HookSet {
    hooks: Vec<Arc<dyn Hook>>,
}

impl HookSet {
    pub fn new(hooks: Vec<Arc<dyn Hook>>) -> Self {
        let mut set = Self { hooks };
        set.sort();
        set
    }

    pub fn add(&mut self, hook: Arc<dyn Hook>) {
        self.hooks.push(hook);
        self.sort();
    }

    pub fn names(&self) -> Vec<String> {
        self.hooks.iter().map(|h| h.name().to_string()).collect()
    }

    fn sort(&mut self) {
        self.hooks.sort_by_key(|h| h.priority());
    }

    /// Runs the hooks subscribed to `point` in order until one gives a decision other than
    /// `Continue`, and returns it. At `Entry` and `SavePoint` every hook runs whatever
    /// the others decide, so no hook, whatever its priority, can keep an entry from being
    /// written or a save point from syncing; the first `Block` among them is returned. A
    /// failing hook is reported as an error notice and counts as `Continue`.
    pub async fn run(
        &self,
        ctx: &HookCtx,
        point: &mut HookPoint<'_>,
        events: &EventBus,
    ) -> HookDecision {
        let kind = point.kind();
        let every = matches!(kind, HookKind::Entry | HookKind::SavePoint);
        let mut first_block = None;
        for hook in self.hooks.iter().filter(|h| h.subscribes(kind)) {
            match hook.on(ctx, point).await {
                Ok(HookDecision::Continue) => {}
                Ok(decision @ HookDecision::Block { .. }) if every => {
                    first_block.get_or_insert(decision);
                }
                // Only a block means anything here.
                Ok(_) if every => {}
                Ok(decision) => return decision,
                Err(error) => events.emit(AgentEvent::Notice {
                    level: NoticeLevel::Error,
                    message: format!("hook `{}` failed at {}: {error}", hook.name(), label(kind)),
                }),
            }
        }
        first_block.unwrap_or(HookDecision::Continue)
    }
}

fn label(kind: HookKind) -> &'static str {
    match kind {
        HookKind::PreCall => "pre_call",
        HookKind::PreReasoning => "pre_reasoning",
        HookKind::PostReasoning => "post_reasoning",
        HookKind::PreTool => "pre_tool",
        HookKind::PostTool => "post_tool",
        HookKind::Stop => "stop",
        HookKind::PostCall => "post_call",
        HookKind::Error => "error",
        HookKind::Entry => "entry",
        HookKind::SavePoint => "save_point",
    }
}
