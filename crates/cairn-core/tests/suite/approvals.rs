//! Approval requests: allow once, allow always, deny.

use cairn_llm::ScriptedTurn;
use cairn_protocol::{AgentEvent, ApprovalDecision, Outcome};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{briefs, harness, Harness};

fn bash(command: &str) -> ScriptedTurn {
    ScriptedTurn::tool_call("bash", json!({"command": command}))
}

/// Answers every approval request with `decision` and returns how many were asked.
fn answer_approvals(h: &mut Harness, decision: ApprovalDecision) -> tokio::task::JoinHandle<usize> {
    let agent = h.agent.clone();
    let mut events = agent.subscribe();
    tokio::spawn(async move {
        let mut asked = 0;
        while let Some(event) = events.recv().await {
            match event {
                AgentEvent::ApprovalRequested {
                    request_id, name, ..
                } => {
                    assert_eq!(name, "bash");
                    asked += 1;
                    agent
                        .resolve_approval(&request_id, decision, Some("not now".into()))
                        .unwrap();
                }
                AgentEvent::AgentEnd { .. } => break,
                _ => {}
            }
        }
        asked
    })
}

#[tokio::test]
async fn bash_asks_and_runs_when_allowed_once() {
    let mut h = harness(vec![
        bash("echo approved > out.txt"),
        bash("echo again >> out.txt"),
        ScriptedTurn::text("done"),
    ])
    .build()
    .await;
    let answers = answer_approvals(&mut h, ApprovalDecision::AllowOnce);
    assert_eq!(
        h.agent.prompt("go").await.unwrap().outcome,
        Outcome::Completed
    );
    assert_eq!(answers.await.unwrap(), 2);
    assert_eq!(
        std::fs::read_to_string(h.dir.path().join("out.txt")).unwrap(),
        "approved\nagain\n"
    );
}

#[tokio::test]
async fn allow_always_stops_asking_for_that_command() {
    let mut h = harness(vec![
        bash("touch a.txt"),
        bash("touch b.txt"),
        ScriptedTurn::text("done"),
    ])
    .build()
    .await;
    let answers = answer_approvals(&mut h, ApprovalDecision::AllowAlways);
    h.agent.prompt("go").await.unwrap();
    assert_eq!(answers.await.unwrap(), 1);
    assert!(h.dir.path().join("b.txt").exists());
}

#[tokio::test]
async fn a_denied_call_does_not_run_and_the_model_is_told() {
    let mut h = harness(vec![
        bash("touch nope.txt"),
        ScriptedTurn::text("understood"),
    ])
    .build()
    .await;
    let answers = answer_approvals(&mut h, ApprovalDecision::Deny);
    assert_eq!(
        h.agent.prompt("go").await.unwrap().outcome,
        Outcome::Completed
    );
    assert_eq!(answers.await.unwrap(), 1);
    assert!(!h.dir.path().join("nope.txt").exists());
    let result = &briefs(&h.requests()[1].messages)[2];
    assert!(
        result.starts_with("result!: The user did not approve this call (not now)"),
        "{result}"
    );
}

#[tokio::test]
async fn a_deny_policy_refuses_without_asking() {
    let h = harness(vec![bash("touch nope.txt"), ScriptedTurn::text("ok")])
        .config(|c| {
            c.approval = cairn_core::ApprovalPolicy {
                default: cairn_core::Policy::Deny,
                tools: Default::default(),
                mcp: Default::default(),
            }
        })
        .build()
        .await;
    h.agent.prompt("go").await.unwrap();
    assert!(!h.dir.path().join("nope.txt").exists());
    assert!(briefs(&h.requests()[1].messages)[2].contains("approval policy does not allow"));
}

#[tokio::test]
async fn abort_while_waiting_for_approval_answers_the_call() {
    let mut h = harness(vec![bash("touch nope.txt"), ScriptedTurn::text("x")])
        .build()
        .await;
    let agent = h.agent.clone();
    let run = tokio::spawn(async move { agent.prompt("go").await });
    while let Some(event) = h.events.recv().await {
        if matches!(event, AgentEvent::ApprovalRequested { .. }) {
            break;
        }
    }
    assert_eq!(
        h.abort_promptly(run).await.unwrap().outcome,
        Outcome::Aborted
    );
    assert!(!h.dir.path().join("nope.txt").exists());
    assert!(
        briefs(&h.reloaded_context().await)[2].starts_with("result!: Not run: the user stopped")
    );
}

/// Runs `lines` as bash calls, answering the first request "always" and every later one
/// "deny"; returns the commands that asked, with the scope offered, and the run's results.
async fn always_then_deny(
    lines: &[&str],
    rules: cairn_core::tools::handlers::bash::CommandRules,
) -> (Vec<(String, Option<String>)>, Vec<String>) {
    let mut turns: Vec<ScriptedTurn> = lines.iter().map(|l| bash(l)).collect();
    turns.push(ScriptedTurn::text("done"));
    let h = harness(turns)
        .config(|c| c.bash_rules = rules)
        .build()
        .await;
    std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(h.workspace.root())
        .status()
        .unwrap();
    let agent = h.agent.clone();
    let mut events = agent.subscribe();
    let asked = tokio::spawn(async move {
        let mut asked = Vec::new();
        while let Some(event) = events.recv().await {
            match event {
                AgentEvent::ApprovalRequested {
                    request_id,
                    arguments,
                    always,
                    ..
                } => {
                    let decision = if asked.is_empty() {
                        ApprovalDecision::AllowAlways
                    } else {
                        ApprovalDecision::Deny
                    };
                    asked.push((arguments["command"].as_str().unwrap().to_string(), always));
                    agent.resolve_approval(&request_id, decision, None).unwrap();
                }
                AgentEvent::AgentEnd { .. } => break,
                _ => {}
            }
        }
        asked
    });
    h.agent.prompt("go").await.unwrap();
    let results = briefs(&h.reloaded_context().await)
        .into_iter()
        .filter(|b| b.starts_with("result"))
        .collect();
    (asked.await.unwrap(), results)
}

#[tokio::test]
async fn always_allows_the_command_prefix_not_every_command() {
    let (asked, _) = always_then_deny(
        &[
            "git status",
            "git status -s",
            "git status; rm -f x",
            "git push origin main",
            "git status > out.txt",
        ],
        Default::default(),
    )
    .await;
    assert_eq!(
        asked,
        vec![
            (
                "git status".to_string(),
                Some("bash commands starting with `git status`".to_string())
            ),
            (
                "git status; rm -f x".to_string(),
                Some("bash commands starting with `git status` or `rm`".to_string())
            ),
            (
                "git push origin main".to_string(),
                Some("bash commands starting with `git push`".to_string())
            ),
            ("git status > out.txt".to_string(), None),
        ]
    );
}

#[tokio::test]
async fn config_rules_allow_and_deny_by_prefix() {
    let rules = cairn_core::tools::handlers::bash::CommandRules::new(
        &["ls".into(), "git status".into()],
        &["git push".into()],
    );
    let (asked, results) = always_then_deny(
        &[
            "ls -la && git status",
            "ls && git push --force",
            "ls | wc -l",
        ],
        rules,
    )
    .await;
    // Only the line with a part no rule allows asked.
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].0, "ls | wc -l");
    assert!(
        results[1].contains("`git push` are denied ([tools.bash] deny)"),
        "{results:?}"
    );
}
