//! The user's own hooks: shell commands given the event as JSON on stdin.

use std::sync::Arc;
use std::time::Duration;

use cairn_core::hooks::ShellHooks;
use cairn_core::hooks::{HookCommand, HookSettings};
use cairn_core::tools::handlers::bash::EnvScrub;
use cairn_llm::ScriptedTurn;
use cairn_protocol::{AgentEvent, ApprovalDecision, NoticeLevel, Outcome};
use serde_json::{json, Value};

use super::support::{briefs, harness, Builder};

fn command(matcher: Option<&str>, command: &str) -> HookCommand {
    HookCommand {
        matcher: matcher.map(str::to_string),
        command: command.to_string(),
        timeout_s: None,
    }
}

fn with_hooks(builder: Builder, settings: HookSettings) -> Builder {
    builder.hook(Arc::new(
        ShellHooks::new(&settings, EnvScrub::default()).unwrap(),
    ))
}

fn write(path: &str, content: &str) -> ScriptedTurn {
    ScriptedTurn::tool_call("write_file", json!({"path": path, "content": content}))
}

#[tokio::test]
async fn exit_2_denies_the_matching_call_with_the_hooks_words() {
    let settings = HookSettings {
        pre_tool: vec![command(
            Some("write_file|edit_file"),
            "cat > /dev/null; echo 'writes are frozen today' >&2; exit 2",
        )],
        ..HookSettings::default()
    };
    let h = with_hooks(
        harness(vec![
            write("a.txt", "x"),
            ScriptedTurn::tool_call("list_dir", json!({})),
            ScriptedTurn::text("ok"),
        ]),
        settings,
    )
    .build()
    .await;
    let run = h.agent.prompt("write").await.unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    assert!(!h.workspace.root().join("a.txt").exists());
    let context = briefs(&h.reloaded_context().await);
    assert!(
        context.contains(
            &"result!: Denied: writes are frozen today. Do not retry this call.".to_string()
        ),
        "{context:?}"
    );
    assert!(
        context.iter().any(|m| m.starts_with("result: ./ holds")),
        "list_dir is not matched and runs: {context:?}"
    );
}

#[tokio::test]
async fn a_hook_may_rewrite_the_arguments_and_the_event_is_json_on_stdin() {
    let settings = HookSettings {
        pre_tool: vec![command(
            Some("write_file"),
            r#"cat > "$CAIRN_WORKSPACE/event.json"; echo '{"updatedInput": {"path": "b.txt", "content": "from the hook"}}'"#,
        )],
        ..HookSettings::default()
    };
    let mut h = with_hooks(
        harness(vec![
            write("a.txt", "from the model"),
            ScriptedTurn::text("ok"),
        ]),
        settings,
    )
    .build()
    .await;
    h.agent.prompt("write").await.unwrap();
    let root = h.workspace.root();
    assert!(!root.join("a.txt").exists());
    assert_eq!(
        std::fs::read_to_string(root.join("b.txt")).unwrap(),
        "from the hook"
    );
    let event: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("event.json")).unwrap()).unwrap();
    assert_eq!(event["hook_event_name"], "PreToolUse");
    assert_eq!(event["tool_name"], "write_file");
    assert_eq!(event["tool_input"]["path"], "a.txt");
    assert_eq!(event["session_id"], h.agent.session_id());
    let said = h.drain().into_iter().any(|e| {
        matches!(e, AgentEvent::Notice { message, .. } if message.contains("a hook changed the arguments of `write_file`"))
    });
    assert!(said);
}

#[tokio::test]
async fn a_rewrite_onto_a_protected_file_still_asks_first() {
    let settings = HookSettings {
        pre_tool: vec![command(
            None,
            r#"cat > /dev/null; echo '{"updatedInput": {"path": "AGENTS.md", "content": "obey the hook"}}'"#,
        )],
        ..HookSettings::default()
    };
    let mut h = with_hooks(
        harness(vec![
            write("notes.md", "harmless"),
            ScriptedTurn::text("ok"),
        ]),
        settings,
    )
    .config(|c| c.approval = cairn_core::ApprovalPolicy::allow_all())
    .build()
    .await;
    let agent = h.agent.clone();
    let run = tokio::spawn(async move { agent.prompt("write").await });
    let request_id = loop {
        match h.events.recv().await.unwrap() {
            AgentEvent::ApprovalRequested {
                request_id,
                arguments,
                reason,
                ..
            } => {
                assert_eq!(arguments["path"], "AGENTS.md");
                assert!(reason.is_some());
                break request_id;
            }
            AgentEvent::AgentEnd { .. } => panic!("the rewritten write never asked"),
            _ => {}
        }
    };
    h.agent
        .resolve_approval(&request_id, ApprovalDecision::Deny, None)
        .unwrap();
    run.await.unwrap().unwrap();
    let agents = std::fs::read_to_string(h.workspace.root().join("AGENTS.md")).unwrap();
    assert!(!agents.contains("obey the hook"));
}

#[tokio::test]
async fn a_hook_past_its_timeout_is_reported_and_the_run_goes_on() {
    let settings = HookSettings {
        pre_tool: vec![HookCommand {
            matcher: None,
            command: "sleep 30".into(),
            timeout_s: Some(1),
        }],
        ..HookSettings::default()
    };
    let mut h = with_hooks(
        harness(vec![write("a.txt", "x"), ScriptedTurn::text("ok")]),
        settings,
    )
    .build()
    .await;
    let run = tokio::time::timeout(Duration::from_secs(20), h.agent.prompt("write"))
        .await
        .expect("a hanging hook must not hang the run")
        .unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    assert!(h.workspace.root().join("a.txt").exists());
    let reported = h.drain().into_iter().any(|e| {
        matches!(e, AgentEvent::Notice { level: NoticeLevel::Error, message } if message.contains("ran past its 1 s timeout"))
    });
    assert!(reported);
}

#[tokio::test]
async fn prompt_and_result_hooks_add_to_what_the_model_sees() {
    let settings = HookSettings {
        user_prompt: vec![command(
            None,
            "cat > \"$CAIRN_WORKSPACE/prompt.json\"; echo 'The build server is b1.'",
        )],
        post_tool: vec![command(
            Some("list_dir"),
            r#"cat > /dev/null; echo '{"additionalContext": "lint: ok"}'"#,
        )],
        session_start: vec![command(None, "cat > /dev/null; echo 'Started by a hook.'")],
        ..HookSettings::default()
    };
    let h = with_hooks(
        harness(vec![
            ScriptedTurn::tool_call("list_dir", json!({})),
            ScriptedTurn::text("ok"),
        ]),
        settings,
    )
    .build()
    .await;
    h.agent.prompt("where do builds run?").await.unwrap();
    let requests = h.requests();
    let system = requests[0].system.clone().unwrap();
    assert!(system.contains("# Added by the user's hooks"), "{system}");
    assert!(system.contains("The build server is b1."));
    assert!(system.contains("Started by a hook."));
    let result = requests[1].messages.last().unwrap().text();
    assert!(
        result.ends_with("[Added by the user's hook]\nlint: ok"),
        "{result}"
    );
    let event: Value = serde_json::from_str(
        &std::fs::read_to_string(h.workspace.root().join("prompt.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(event["hook_event_name"], "UserPromptSubmit");
    assert_eq!(event["prompt"], "where do builds run?");
}

#[tokio::test]
async fn a_prompt_hook_exiting_2_blocks_the_run() {
    let settings = HookSettings {
        user_prompt: vec![command(
            None,
            "cat > /dev/null; echo 'not during the freeze' >&2; exit 2",
        )],
        ..HookSettings::default()
    };
    let h = with_hooks(harness(vec![ScriptedTurn::text("never")]), settings)
        .build()
        .await;
    let run = h.agent.prompt("deploy").await.unwrap();
    assert_eq!(
        run.outcome,
        Outcome::Blocked {
            reason: "not during the freeze".into()
        }
    );
    assert_eq!(h.requests().len(), 0);
}

#[tokio::test]
async fn hooks_start_outside_the_workspace_and_are_told_where_it_is() {
    let settings = HookSettings {
        user_prompt: vec![command(
            None,
            "{ pwd; echo \"$CAIRN_WORKSPACE\"; ls; } > \"$CAIRN_WORKSPACE/where.txt\"",
        )],
        ..HookSettings::default()
    };
    let h = with_hooks(harness(vec![ScriptedTurn::text("ok")]), settings)
        .build()
        .await;
    // What a workspace someone else prepared could plant for a command started in it.
    std::fs::write(
        h.workspace.root().join(".npmrc"),
        "node-options=--require ./x.js",
    )
    .unwrap();
    h.agent.prompt("hi").await.unwrap();
    let seen = std::fs::read_to_string(h.workspace.root().join("where.txt")).unwrap();
    let lines: Vec<&str> = seen.lines().collect();
    let root = h.workspace.root().to_string_lossy().to_string();
    assert_ne!(lines[0], root, "{seen}");
    assert_eq!(lines[1], root, "{seen}");
    assert!(!seen.contains("AGENTS.md"), "{seen}");
}

/// A stop hook exiting 2 keeps the run going once, its words told to the model; asked
/// again (it sees `stop_hook_active`), the run ends anyway, so a hook cannot hold a run
/// forever.
#[tokio::test]
async fn a_stop_hook_blocks_the_stop_once_with_its_reason() {
    let settings = HookSettings {
        stop: vec![command(
            None,
            r#"{ cat; echo; } >> "$CAIRN_WORKSPACE/stops.jsonl"; echo 'run the tests first' >&2; exit 2"#,
        )],
        ..HookSettings::default()
    };
    let mut h = with_hooks(
        harness(vec![
            ScriptedTurn::text("all done"),
            ScriptedTurn::text("tests ran, all done"),
            ScriptedTurn::text("never asked"),
        ]),
        settings,
    )
    .build()
    .await;
    let run = h.agent.prompt("fix it").await.unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    assert_eq!(run.answer.as_deref(), Some("tests ran, all done"));
    let context = briefs(&h.reloaded_context().await);
    assert!(
        context.contains(
            &"user: [Cairn] A stop hook kept you from stopping: run the tests first".to_string()
        ),
        "{context:?}"
    );
    let stops = std::fs::read_to_string(h.workspace.root().join("stops.jsonl")).unwrap();
    let events: Vec<Value> = stops
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.len(), 2, "{stops}");
    assert_eq!(events[0]["hook_event_name"], "Stop");
    assert_eq!(events[0]["stop_hook_active"], false);
    assert_eq!(events[0]["last_assistant_message"], "all done");
    assert_eq!(events[1]["stop_hook_active"], true);
    let said = h.drain().into_iter().any(|e| {
        matches!(e, AgentEvent::Notice { message, .. } if message.contains("a stop is blocked once per run"))
    });
    assert!(said);
}

/// JSON on stdout blocks the same way; a hook that lets the run stop changes nothing.
#[tokio::test]
async fn a_stop_hook_may_block_with_json_and_otherwise_lets_the_run_end() {
    let settings = HookSettings {
        stop: vec![command(
            None,
            r#"if grep -q '"stop_hook_active":false' ; then echo '{"decision": "block", "reason": "update the changelog"}'; fi"#,
        )],
        ..HookSettings::default()
    };
    let mut h = with_hooks(
        harness(vec![
            ScriptedTurn::text("done"),
            ScriptedTurn::text("changelog updated"),
        ]),
        settings,
    )
    .build()
    .await;
    let run = h.agent.prompt("ship it").await.unwrap();
    assert_eq!(run.outcome, Outcome::Completed);
    assert_eq!(run.answer.as_deref(), Some("changelog updated"));
    let context = briefs(&h.reloaded_context().await);
    assert!(
        context.contains(
            &"user: [Cairn] A stop hook kept you from stopping: update the changelog".to_string()
        ),
        "{context:?}"
    );
    let warned = h.drain().into_iter().any(|e| {
        matches!(
            e,
            AgentEvent::Notice {
                level: NoticeLevel::Warning,
                ..
            }
        )
    });
    assert!(!warned);
}
