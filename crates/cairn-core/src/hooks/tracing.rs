//! Built-in hook: logs every point of a run through `tracing`.

use async_trait::async_trait;

use super::{Hook, HookCtx, HookDecision, HookError, HookKind, HookPoint};

pub struct TracingHook;

#[async_trait]
impl Hook for TracingHook {
    fn name(&self) -> &str {
        "tracing"
    }

    fn priority(&self) -> i32 {
        -1000
    }

    fn subscribes(&self, _kind: HookKind) -> bool {
        tracing::enabled!(tracing::Level::DEBUG)
    }

    async fn on(
        &self,
        ctx: &HookCtx,
        point: &mut HookPoint<'_>,
    ) -> Result<HookDecision, HookError> {
        let (run, step) = (&ctx.run_id, ctx.step);
        match point {
            HookPoint::PreCall { prompt, .. } => {
                tracing::debug!(run, "run starts: {} chars of prompt", prompt.len())
            }
            HookPoint::PreReasoning { request } => tracing::debug!(
                run,
                step,
                "model call: {} messages, {} tools",
                request.messages.len(),
                request.tools.len()
            ),
            HookPoint::PostReasoning { message } => {
                tracing::debug!(run, step, "model answered: {:?}", message.stop_reason)
            }
            HookPoint::PreTool { call } => tracing::debug!(run, step, "tool {}", call.name),
            HookPoint::PostTool { call, output } => {
                tracing::debug!(run, step, "tool {} error={}", call.name, output.is_error)
            }
            HookPoint::Stop { active, .. } => {
                tracing::debug!(run, step, active, "the model would stop")
            }
            HookPoint::PostCall { outcome, summary } => {
                tracing::debug!(run, "run ended: {outcome:?} {summary:?}")
            }
            HookPoint::Error { error } => tracing::warn!(run, "run failed: {error}"),
            HookPoint::Entry { entry } => tracing::trace!(run, "entry {}", entry.id),
            HookPoint::SavePoint { wait } => tracing::trace!(run, step, wait, "save point"),
        }
        Ok(HookDecision::Continue)
    }
}
