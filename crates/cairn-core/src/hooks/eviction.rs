//! Built-in hook: a tool result too long for the context is saved whole to
//! `.cairn/tool-results/<call id>.txt` and the model gets its head and tail, the path and
//! how to read the rest. File and memory tools are exempt: their output is already
//! paged, and evicting what read_file returns would send the model in circles.

use async_trait::async_trait;
use cairn_memory::beneath;

use super::{Hook, HookCtx, HookDecision, HookError, HookKind, HookPoint};
use crate::tools::output::{last_chars, take_chars, thousands};
use crate::tools::results::{is_exempt, result_file};

pub struct EvictionHook {
    /// Results longer than this many characters are evicted.
    threshold: usize,
}

impl EvictionHook {
    pub fn new(threshold: usize) -> Self {
        Self { threshold }
    }
}

#[async_trait]
impl Hook for EvictionHook {
    fn name(&self) -> &str {
        "tool-result eviction"
    }

    /// After user hooks (which see the whole result), before persistence.
    fn priority(&self) -> i32 {
        900
    }

    fn subscribes(&self, kind: HookKind) -> bool {
        kind == HookKind::PostTool
    }

    async fn on(
        &self,
        ctx: &HookCtx,
        point: &mut HookPoint<'_>,
    ) -> Result<HookDecision, HookError> {
        let HookPoint::PostTool { call, output } = point else {
            return Ok(HookDecision::Continue);
        };
        if is_exempt(&call.name) || output.content.chars().count() <= self.threshold {
            return Ok(HookDecision::Continue);
        }
        let relative = result_file(&call.id);
        let root = ctx.workspace.root().to_path_buf();
        let (file, content) = (relative.clone(), output.content.clone());
        // Beneath the workspace: a `.cairn/tool-results` that is a link out is refused.
        let written = tokio::task::spawn_blocking(move || {
            beneath::write_private_atomic(&root, &file, content.as_bytes())
        })
        .await;
        match written {
            Ok(Ok(())) => {
                output.content = evicted_view(&output.content, self.threshold, &relative);
                Ok(HookDecision::Continue)
            }
            // Nothing is lost: the model gets the whole result, as without eviction.
            Ok(Err(error)) => Err(HookError(format!(
                "cannot save the long result of {} to {relative}: {error}",
                call.name
            ))),
            Err(error) => Err(HookError(format!("cannot save {relative}: {error}"))),
        }
    }
}

/// What the model sees of an evicted result: about a fifth of the threshold from each
/// end, and where the whole of it is.
pub fn evicted_view(content: &str, threshold: usize, relative_path: &str) -> String {
    let keep = (threshold / 5).max(200);
    let head = take_chars(content, keep);
    let tail = last_chars(content, keep);
    let total = content.chars().count();
    let cut = total.saturating_sub(head.chars().count() + tail.chars().count());
    format!(
        "{head}\n[... {} of {} characters not shown. The whole output is saved in \
         {relative_path}: read it with read_file (offset and limit to page through it) or search \
         it with grep ...]\n{tail}",
        thousands(cut),
        thousands(total),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_keeps_head_and_tail_and_names_the_file() {
        let content = format!("{}{}", "a".repeat(5_000), "z".repeat(5_000));
        let view = evicted_view(&content, 1_000, ".cairn/tool-results/x.txt");
        assert!(view.starts_with(&"a".repeat(200)));
        assert!(view.ends_with(&"z".repeat(200)));
        assert!(view.contains("9,600 of 10,000 characters not shown"));
        assert!(view.contains(".cairn/tool-results/x.txt"));
        assert!(view.len() < 1_000);
    }
}
