//! Built-in hook: writes every session entry through the session's writer and syncs it to
//! disk at save points (mid-run ones overlap the sync with the next step, see
//! [`SessionWriter::checkpoint`]).

use async_trait::async_trait;

use super::{Hook, HookCtx, HookDecision, HookError, HookKind, HookPoint};
use crate::session::SessionWriter;

pub struct PersistenceHook {
    writer: SessionWriter,
}

impl PersistenceHook {
    pub fn new(writer: SessionWriter) -> Self {
        Self { writer }
    }
}

#[async_trait]
impl Hook for PersistenceHook {
    fn name(&self) -> &str {
        "session-persistence"
    }

    fn priority(&self) -> i32 {
        1000
    }

    fn subscribes(&self, kind: HookKind) -> bool {
        matches!(kind, HookKind::Entry | HookKind::SavePoint)
    }

    async fn on(
        &self,
        _ctx: &HookCtx,
        point: &mut HookPoint<'_>,
    ) -> Result<HookDecision, HookError> {
        let result = match point {
            HookPoint::Entry { entry } => self.writer.append(entry),
            HookPoint::SavePoint { wait: true } => self.writer.sync().await,
            HookPoint::SavePoint { wait: false } => self.writer.checkpoint(),
            _ => Ok(()),
        };
        // Going on without saving would lose the user's work silently: stop instead.
        Ok(match result {
            Ok(()) => HookDecision::Continue,
            Err(e) => HookDecision::Block {
                reason: format!("cannot save the session: {e}"),
            },
        })
    }
}
