//! Built-in hook: the approval policy (allow | ask | deny per tool), plus the tools the user
//! allowed "always" during this session.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use cairn_protocol::ToolCall;

use super::{Hook, HookCtx, HookDecision, HookError, HookKind, HookPoint};
use crate::config::{ApprovalPolicy, Policy};

/// The policy in force, shared between the hook and the agent (which records "allow
/// always" answers and policy changes).
#[derive(Debug, Default)]
pub struct ApprovalState {
    policy: Mutex<ApprovalPolicy>,
    always: Mutex<HashSet<String>>,
}

impl ApprovalState {
    pub fn new(policy: ApprovalPolicy) -> Arc<Self> {
        Arc::new(Self {
            policy: Mutex::new(policy),
            always: Mutex::default(),
        })
    }

    pub fn set_policy(&self, policy: ApprovalPolicy) {
        *self.policy.lock().unwrap_or_else(PoisonError::into_inner) = policy;
    }

    /// What answering "allow always" to `call` would allow from now on, as shown to the
    /// user; `None` when such a call can only be allowed once.
    pub fn always_scope(&self, call: &ToolCall) -> Option<String> {
        Some(format!("the `{}` tool", call.name))
    }

    /// Lets every later call that [`Self::always_scope`] of `call` covers run without
    /// asking, for this session.
    pub fn allow_always(&self, call: &ToolCall) {
        self.always
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(call.name.clone());
    }

    pub fn policy_for(&self, tool: &str) -> Policy {
        let policy = self
            .policy
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .for_tool(tool);
        let always = self
            .always
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(tool);
        match policy {
            Policy::Ask if always => Policy::Allow,
            other => other,
        }
    }
}

pub struct ApprovalHook {
    state: Arc<ApprovalState>,
}

impl ApprovalHook {
    pub fn new(state: Arc<ApprovalState>) -> Self {
        Self { state }
    }
}

#[async_trait]
impl Hook for ApprovalHook {
    fn name(&self) -> &str {
        "approvals"
    }

    fn priority(&self) -> i32 {
        100
    }

    fn subscribes(&self, kind: HookKind) -> bool {
        kind == HookKind::PreTool
    }

    async fn on(
        &self,
        _ctx: &HookCtx,
        point: &mut HookPoint<'_>,
    ) -> Result<HookDecision, HookError> {
        let HookPoint::PreTool { call } = point else {
            return Ok(HookDecision::Continue);
        };
        Ok(match self.state.policy_for(&call.name) {
            Policy::Allow => HookDecision::Allow,
            Policy::Ask => HookDecision::Ask,
            Policy::Deny => HookDecision::Deny {
                reason: format!(
                    "the approval policy does not allow the `{}` tool",
                    call.name
                ),
            },
        })
    }
}
