//! Built-in hook: the approval policy (allow | ask | deny per tool), bash's command rules
//! (`[tools.bash] allow` / `deny`, judged per command prefix), plus what the user allowed
//! "always" during this session: a tool, or for bash the prefixes of the commands answered.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use cairn_protocol::ToolCall;
use serde_json::Value;

use super::{Hook, HookCtx, HookDecision, HookError, HookKind, HookPoint};
use crate::config::{ApprovalPolicy, Policy};
use crate::tools::handlers::bash::policy::{self, CommandRules, Parsed};

/// The tool whose calls are judged per command.
const BASH: &str = "bash";

/// The policy in force, shared between the hook and the agent (which records "allow
/// always" answers and policy changes).
#[derive(Debug, Default)]
pub struct ApprovalState {
    policy: Mutex<ApprovalPolicy>,
    always: Mutex<HashSet<String>>,
    rules: CommandRules,
    /// Bash command prefixes allowed "always" in this session.
    prefixes: Mutex<Vec<Vec<String>>>,
}

impl ApprovalState {
    pub fn new(policy: ApprovalPolicy) -> Arc<Self> {
        Self::with_rules(policy, CommandRules::default())
    }

    pub fn with_rules(policy: ApprovalPolicy, rules: CommandRules) -> Arc<Self> {
        Arc::new(Self {
            policy: Mutex::new(policy),
            always: Mutex::default(),
            rules,
            prefixes: Mutex::default(),
        })
    }

    pub fn set_policy(&self, policy: ApprovalPolicy) {
        *self.policy.lock().unwrap_or_else(PoisonError::into_inner) = policy;
    }

    /// What answering "allow always" to `call` would allow from now on, as shown to the
    /// user; `None` when such a call can only be allowed once.
    pub fn always_scope(&self, call: &ToolCall) -> Option<String> {
        let Some(parsed) = bash_line(call) else {
            return Some(format!("the `{}` tool", call.name));
        };
        let prefixes = policy::always_prefixes(&parsed)?;
        let shown: Vec<String> = prefixes
            .iter()
            .map(|p| format!("`{}`", p.join(" ")))
            .collect();
        Some(format!(
            "bash commands starting with {}",
            shown.join(" or ")
        ))
    }

    /// Lets every later call that [`Self::always_scope`] of `call` covers run without
    /// asking, for this session.
    pub fn allow_always(&self, call: &ToolCall) {
        let Some(parsed) = bash_line(call) else {
            lock(&self.always).insert(call.name.clone());
            return;
        };
        if let Some(prefixes) = policy::always_prefixes(&parsed) {
            let mut remembered = lock(&self.prefixes);
            for prefix in prefixes {
                if !remembered.contains(&prefix) {
                    remembered.push(prefix);
                }
            }
        }
    }

    /// The decision for `call`: a bash line by its commands, any other call by its tool.
    pub fn decide(&self, call: &ToolCall) -> HookDecision {
        let policy = self.policy_for(&call.name);
        let Some(parsed) = bash_line(call) else {
            return by_policy(policy, &call.name);
        };
        if let Some(rule) = self.rules.denied(&parsed) {
            return HookDecision::Deny {
                reason: format!("commands starting with `{rule}` are denied ([tools.bash] deny)"),
            };
        }
        match policy {
            Policy::Ask if self.rules.allows(&parsed, &lock(&self.prefixes)) => HookDecision::Allow,
            other => by_policy(other, &call.name),
        }
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
        Ok(self.state.decide(call))
    }
}

fn by_policy(policy: Policy, tool: &str) -> HookDecision {
    match policy {
        Policy::Allow => HookDecision::Allow,
        Policy::Ask => HookDecision::Ask,
        Policy::Deny => HookDecision::Deny {
            reason: format!("the approval policy does not allow the `{tool}` tool"),
        },
    }
}

/// A bash call's command line, parsed; `None` for other tools. A bash call without a
/// string command (which the tool refuses) parses as nothing plain, so that "always"
/// never stretches to the whole tool.
fn bash_line(call: &ToolCall) -> Option<Parsed> {
    if call.name != BASH {
        return None;
    }
    match call.arguments.get("command").and_then(Value::as_str) {
        Some(command) => Some(policy::parse(command)),
        None => Some(Parsed {
            commands: Vec::new(),
            plain: false,
        }),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn bash(command: Value) -> ToolCall {
        ToolCall {
            id: "call-1".into(),
            name: BASH.into(),
            arguments: json!({ "command": command }),
        }
    }

    #[test]
    fn always_on_a_bash_call_without_a_string_command_allows_nothing_more() {
        let state = ApprovalState::new(ApprovalPolicy::default());
        let odd = bash(json!(["rm", "-rf", "/"]));
        assert_eq!(state.always_scope(&odd), None);
        state.allow_always(&odd);
        assert_eq!(state.decide(&bash(json!("rm -rf x"))), HookDecision::Ask);
        assert_eq!(state.decide(&bash(json!(42))), HookDecision::Ask);
    }
}
