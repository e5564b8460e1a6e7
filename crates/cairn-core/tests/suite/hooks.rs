//! Hook ordering, deny, block, failure reporting, and result replacement.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_core::hooks::{Hook, HookCtx, HookDecision, HookError, HookKind, HookPoint};
use cairn_llm::ScriptedTurn;
use cairn_protocol::{AgentEvent, NoticeLevel, Outcome};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{briefs, harness};

struct Recorder {
    name: &'static str,
    priority: i32,
    log: Arc<Mutex<Vec<String>>>,
    on_pre_tool: HookDecision,
    fail: bool,
}

#[async_trait]
impl Hook for Recorder {
    fn name(&self) -> &str {
        self.name
    }

    fn priority(&self) -> i32 {
        self.priority
    }

    fn subscribes(&self, kind: HookKind) -> bool {
        !matches!(kind, HookKind::Entry | HookKind::SavePoint)
    }

    async fn on(
        &self,
        _ctx: &HookCtx,
        point: &mut HookPoint<'_>,
    ) -> Result<HookDecision, HookError> {
        let label = match point {
            HookPoint::PreCall { .. } => "pre_call",
            HookPoint::PreReasoning { .. } => "pre_reasoning",
            HookPoint::PostReasoning { .. } => "post_reasoning",
            HookPoint::PreTool { .. } => "pre_tool",
            HookPoint::PostTool { output, .. } => {
                if self.name == "rewriter" {
                    output.content = "[redacted by hook]".into();
                }
                "post_tool"
            }
            HookPoint::Stop { .. } => "stop",
            HookPoint::PostCall { .. } => "post_call",
            HookPoint::Error { .. } => "error",
            HookPoint::Entry { .. } | HookPoint::SavePoint { .. } => "other",
        };
        self.log
            .lock()
            .unwrap()
            .push(format!("{}:{label}", self.name));
        if self.fail {
            return Err(HookError("disk on fire".into()));
        }
        Ok(match point {
            HookPoint::PreTool { .. } => self.on_pre_tool.clone(),
            _ => HookDecision::Continue,
        })
    }
}

fn recorder(name: &'static str, priority: i32, log: &Arc<Mutex<Vec<String>>>) -> Recorder {
    Recorder {
        name,
        priority,
        log: log.clone(),
        on_pre_tool: HookDecision::Continue,
        fail: false,
    }
}

#[tokio::test]
async fn hooks_run_by_priority_at_every_point() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let h = harness(vec![
        ScriptedTurn::tool_call("list_dir", json!({})),
        ScriptedTurn::text("done"),
    ])
    .hook(Arc::new(recorder("late", 50, &log)))
    .hook(Arc::new(recorder("early", -5, &log)))
    .build()
    .await;
    assert_eq!(
        h.agent.prompt("go").await.unwrap().outcome,
        Outcome::Completed
    );
    assert_eq!(
        *log.lock().unwrap(),
        [
            "early:pre_call",
            "late:pre_call",
            "early:pre_reasoning",
            "late:pre_reasoning",
            "early:post_reasoning",
            "late:post_reasoning",
            "early:pre_tool",
            "late:pre_tool",
            "early:post_tool",
            "late:post_tool",
            "early:pre_reasoning",
            "late:pre_reasoning",
            "early:post_reasoning",
            "late:post_reasoning",
            "early:stop",
            "late:stop",
            "early:post_call",
            "late:post_call",
        ]
    );
}

#[tokio::test]
async fn a_deny_stops_later_hooks_and_tells_the_model() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let denier = Recorder {
        on_pre_tool: HookDecision::Deny {
            reason: "writes are frozen today".into(),
        },
        ..recorder("denier", 0, &log)
    };
    let h = harness(vec![
        ScriptedTurn::tool_call("write_file", json!({"path": "x.md", "content": "x"})),
        ScriptedTurn::text("ok"),
    ])
    .hook(Arc::new(denier))
    .hook(Arc::new(recorder("after", 10, &log)))
    .build()
    .await;
    h.agent.prompt("write").await.unwrap();
    assert!(!h.dir.path().join("x.md").exists());
    assert!(!log.lock().unwrap().contains(&"after:pre_tool".to_string()));
    let messages = briefs(&h.requests()[1].messages);
    assert_eq!(
        messages[2],
        "result!: Denied: writes are frozen today. Do not retry this call."
    );
}

#[tokio::test]
async fn a_block_ends_the_run_with_its_reason() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let blocker = Recorder {
        on_pre_tool: HookDecision::Block {
            reason: "budget exhausted".into(),
        },
        ..recorder("blocker", 0, &log)
    };
    let h = harness(vec![
        ScriptedTurn::tool_call("list_dir", json!({})),
        ScriptedTurn::text("x"),
    ])
    .hook(Arc::new(blocker))
    .build()
    .await;
    let report = h.agent.prompt("go").await.unwrap();
    assert_eq!(
        report.outcome,
        Outcome::Blocked {
            reason: "budget exhausted".into()
        }
    );
    assert_eq!(report.outcome.exit_code(), 3);
    // The session stays valid: the blocked call has an answer.
    assert!(briefs(&h.reloaded_context().await)[2].starts_with("result!: Not run"));
}

#[tokio::test]
async fn a_failing_hook_is_reported_not_ignored() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let broken = Recorder {
        fail: true,
        ..recorder("broken", 0, &log)
    };
    let mut h = harness(vec![ScriptedTurn::text("fine")])
        .hook(Arc::new(broken))
        .build()
        .await;
    assert_eq!(
        h.agent.prompt("go").await.unwrap().outcome,
        Outcome::Completed
    );
    let notices: Vec<_> = h
        .drain()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::Notice {
                level: NoticeLevel::Error,
                message,
            } => Some(message),
            _ => None,
        })
        .collect();
    assert!(
        notices.contains(&"hook `broken` failed at pre_call: disk on fire".to_string()),
        "{notices:?}"
    );
}

#[tokio::test]
async fn post_tool_may_replace_the_result() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let h = harness(vec![
        ScriptedTurn::tool_call("list_dir", json!({})),
        ScriptedTurn::text("x"),
    ])
    .hook(Arc::new(recorder("rewriter", 0, &log)))
    .build()
    .await;
    h.agent.prompt("go").await.unwrap();
    assert_eq!(
        briefs(&h.reloaded_context().await)[2],
        "result: [redacted by hook]"
    );
}

/// A hook that answers every entry and save point with `decision`, running before the
/// session's persistence.
struct Greedy {
    decision: HookDecision,
}

#[async_trait]
impl Hook for Greedy {
    fn name(&self) -> &str {
        "greedy"
    }

    fn priority(&self) -> i32 {
        -2000
    }

    fn subscribes(&self, kind: HookKind) -> bool {
        matches!(kind, HookKind::Entry | HookKind::SavePoint)
    }

    async fn on(
        &self,
        _ctx: &HookCtx,
        _point: &mut HookPoint<'_>,
    ) -> Result<HookDecision, HookError> {
        Ok(self.decision.clone())
    }
}

#[tokio::test]
async fn no_hook_can_keep_an_entry_from_being_written() {
    for decision in [
        HookDecision::Allow,
        HookDecision::Deny {
            reason: "no".into(),
        },
        HookDecision::Block {
            reason: "stop".into(),
        },
    ] {
        let h = harness(vec![ScriptedTurn::text("kept")])
            .hook(Arc::new(Greedy {
                decision: decision.clone(),
            }))
            .build()
            .await;
        let _ = h.agent.prompt("remember me").await;
        let saved = std::fs::read_to_string(h.session_path()).unwrap();
        assert!(saved.contains("remember me"), "{decision:?}: {saved}");
    }
}
