//! Memory that keeps itself: the flush after each run, compaction near the window and on
//! overflow, and the eviction of long tool results.

use std::sync::Arc;

use cairn_core::agent::Upkeep;
use cairn_core::session::SessionStore;
use cairn_core::tools::ToolRegistry;
use cairn_core::upkeep::ModelChoice;
use cairn_core::{Agent, AgentConfig, AgentParts, ApprovalPolicy, ContextBudget};
use cairn_llm::{ChatRequest, ScriptStep, ScriptedProvider, ScriptedTurn};
use cairn_protocol::{AgentEvent, EntryKind, ErrorKind, Message, NoticeLevel, Outcome, Phase};
use chrono::Local;
use serde_json::json;

use super::support::{harness, Harness};

fn today_log(h: &Harness) -> String {
    let name = format!("memory/{}.md", Local::now().format("%Y-%m-%d"));
    std::fs::read_to_string(h.workspace.root().join(name)).unwrap_or_default()
}

/// The user text of a model request (flush and compaction requests have one message).
fn prompt_of(request: &ChatRequest) -> String {
    request
        .messages
        .iter()
        .map(Message::text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A flush model that writes every `FACT-…` word of the conversation part of its prompt
/// as a bullet, or NOTHING.
fn fact_finder() -> Arc<ScriptedProvider> {
    Arc::new(
        ScriptedProvider::with_responder(|request| {
            let prompt = prompt_of(request);
            let conversation = prompt.split("<conversation>").nth(1).unwrap_or("");
            let mut facts: Vec<String> = conversation
                .split(|c: char| !(c.is_alphanumeric() || c == '-'))
                .filter(|w| w.starts_with("FACT-"))
                .map(|w| format!("- The user said {w}."))
                .collect();
            facts.dedup();
            if facts.is_empty() {
                ScriptedTurn::text("NOTHING")
            } else {
                ScriptedTurn::text(facts.join("\n"))
            }
        })
        .recording(),
    )
}

fn flush_with(provider: Arc<ScriptedProvider>) -> Upkeep {
    Upkeep {
        flush: Some(ModelChoice::new(provider, "flush-model")),
        ..Upkeep::default()
    }
}

fn markers(h: &Harness) -> Vec<String> {
    h.agent
        .session_snapshot()
        .entries()
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::MemoryFlush { up_to_id } => Some(up_to_id.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_fact_stated_in_a_session_is_in_todays_log_with_a_link_after_the_run() {
    let flush = fact_finder();
    let mut h = harness(vec![
        ScriptedTurn::text("Noted."),
        ScriptedTurn::text("Fine."),
    ])
    .file("MEMORY.md", "# Memory\n- The user said FACT-old.\n")
    .upkeep(flush_with(flush.clone()))
    .build()
    .await;
    h.agent
        .prompt("Remember FACT-tea and FACT-old please.")
        .await
        .unwrap();
    let log = today_log(&h);
    let session = h.agent.session_id();
    let leaf = h.agent.session_snapshot().leaf().unwrap().to_string();
    assert!(
        log.starts_with(&format!("# {}\n", Local::now().format("%Y-%m-%d"))),
        "{log}"
    );
    assert!(
        log.contains(&format!(
            "](../sessions/{session}.jsonl#{leaf})\n\n- The user said FACT-tea.\n"
        )),
        "{log}"
    );
    // Already in MEMORY.md: not repeated.
    assert!(!log.contains("said FACT-old"), "{log}");
    let events = h.drain();
    assert!(events.contains(&AgentEvent::MemoryFlushed {
        path: format!("memory/{}.md", Local::now().format("%Y-%m-%d")),
        bullets: 1
    }));
    assert_eq!(markers(&h), [leaf]);
    // The flush model saw MEMORY.md and the conversation, read-only.
    let asked = prompt_of(&flush.requests()[0]);
    assert!(asked.contains("FACT-old") && asked.contains("User: Remember FACT-tea"));

    // The next run flushes only what is new: nothing twice.
    h.agent.prompt("And FACT-milk.").await.unwrap();
    let second = prompt_of(&flush.requests()[1]);
    let conversation = second.split("<conversation>").nth(1).unwrap();
    assert!(conversation.contains("FACT-milk") && !conversation.contains("FACT-tea"));
    let log = today_log(&h);
    assert_eq!(log.matches("said FACT-tea").count(), 1, "{log}");
    assert_eq!(log.matches("said FACT-milk").count(), 1, "{log}");
    // Both flushes are on disk: the session file has both markers.
    let text = std::fs::read_to_string(h.session_path()).unwrap();
    assert_eq!(text.matches("\"type\":\"memory_flush\"").count(), 2);
}

#[tokio::test]
async fn nothing_new_writes_nothing() {
    let flush = fact_finder();
    let mut h = harness(vec![ScriptedTurn::text("Hello!")])
        .upkeep(flush_with(flush.clone()))
        .build()
        .await;
    h.agent.prompt("Hi there").await.unwrap();
    assert_eq!(flush.requests().len(), 1);
    assert_eq!(today_log(&h), "");
    assert!(!h
        .drain()
        .iter()
        .any(|e| matches!(e, AgentEvent::MemoryFlushed { .. })));
    assert_eq!(markers(&h).len(), 1);
}

#[tokio::test]
async fn a_failed_or_garbled_flush_is_told_and_retried_after_the_next_run() {
    let flush = Arc::new(ScriptedProvider::new(vec![
        ScriptedTurn::steps(vec![ScriptStep::Error {
            kind: ErrorKind::Transient,
            message: "connection refused".into(),
        }]),
        ScriptedTurn::text("Sure, I will remember that!"),
        ScriptedTurn::text("- The user's sister is called Ines."),
    ]));
    let mut h = harness(vec![
        ScriptedTurn::text("Noted."),
        ScriptedTurn::text("Ok."),
        ScriptedTurn::text("Bye."),
    ])
    .upkeep(flush_with(flush.clone()))
    .build()
    .await;
    h.agent.prompt("My sister is called Ines.").await.unwrap();
    let told: Vec<String> = h
        .drain()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::Notice {
                level: NoticeLevel::Warning,
                message,
            } => Some(message),
            _ => None,
        })
        .collect();
    assert!(
        told.iter()
            .any(|m| m.contains("memory flush failed") && m.contains("connection refused")),
        "{told:?}"
    );
    assert!(markers(&h).is_empty());

    h.agent.prompt("What time is it?").await.unwrap();
    let told = format!("{:?}", h.drain());
    assert!(told.contains("neither facts nor NOTHING"), "{told}");
    assert!(markers(&h).is_empty());

    h.agent.prompt("Thanks.").await.unwrap();
    // The third flush still covers the first message.
    let third = prompt_of(&flush.requests()[2]);
    assert!(third.contains("My sister is called Ines."), "{third}");
    assert!(today_log(&h).contains("- The user's sister is called Ines.\n"));
    assert_eq!(markers(&h).len(), 1);
}

#[tokio::test]
async fn a_crash_between_the_log_write_and_the_marker_neither_repeats_nor_drops() {
    let flush = fact_finder();
    let h = harness(vec![ScriptedTurn::text("Noted.")])
        .upkeep(flush_with(flush.clone()))
        .build()
        .await;
    h.agent.prompt("Remember FACT-one.").await.unwrap();
    let session_id = h.agent.session_id();
    // Cairn stopped after writing the bullets, before the marker reached the file.
    let path = h.session_path();
    let text = std::fs::read_to_string(&path).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("\"type\":\"memory_flush\""))
        .collect();
    std::fs::write(&path, kept.join("\n") + "\n").unwrap();

    let store = SessionStore::new(h.workspace.sessions_dir());
    let session = store.open(&session_id).await.unwrap();
    let agent = Agent::new(AgentParts {
        workspace: h.workspace.clone(),
        provider: Arc::new(ScriptedProvider::new(vec![ScriptedTurn::text("Ok.")])),
        session,
        config: AgentConfig {
            model: "m".into(),
            ..AgentConfig::default()
        },
        tools: ToolRegistry::new(),
        hooks: Vec::new(),
        memory: None,
        upkeep: flush_with(flush.clone()),
        mcp: None,
        models: None,
    });
    agent.prompt("And FACT-two.").await.unwrap();
    let log = today_log(&h);
    assert_eq!(log.matches("said FACT-one").count(), 1, "{log}");
    assert_eq!(log.matches("said FACT-two").count(), 1, "{log}");
    let second = prompt_of(&flush.requests()[1]);
    assert!(!second
        .split("<conversation>")
        .nth(1)
        .unwrap()
        .contains("FACT-one"));
}

/// A chat model that answers "ok", a compaction model that numbers its summaries and
/// keeps the previous one's lines, and the fact-finding flush model.
fn long_conversation(
    window: u64,
) -> (
    super::support::Builder,
    Arc<ScriptedProvider>,
    Arc<ScriptedProvider>,
) {
    let flush = fact_finder();
    let compaction = Arc::new(
        ScriptedProvider::with_responder(|request| {
            let prompt = prompt_of(request);
            let previous = prompt
                .split("<previous-summary>")
                .nth(1)
                .and_then(|p| p.split("</previous-summary>").next())
                .unwrap_or("## Goal\n- talk")
                .trim()
                .to_string();
            ScriptedTurn::text(format!("{previous}\n- summarised {} chars", prompt.len()))
        })
        .recording(),
    );
    let builder = harness(Vec::new())
        .tools(ToolRegistry::new())
        .config(|c| {
            c.context = ContextBudget {
                window: Some(window),
                reserve_tokens: 16_000,
                keep_recent_tokens: 20_000,
                // The whole workspace context, as for a large window: these tests are about
                // the conversation filling a small one.
                compact: false,
                compaction: true,
                // Compaction inline, at the limit (the background mode has its own tests).
                background: false,
                start_percent: 75,
            };
        })
        .file("AGENTS.md", "# Rules\nAlways answer in French.\n")
        .upkeep(Upkeep {
            flush: Some(ModelChoice::new(flush.clone(), "flush")),
            compaction: Some(ModelChoice::new(compaction.clone(), "summary")),
            intent: None,
            flushed: None,
        });
    (builder, compaction, flush)
}

#[tokio::test]
async fn three_compactions_in_a_row_lose_none_of_the_flushed_facts() {
    let (builder, compaction, flush) = long_conversation(4_000);
    let mut h = builder
        .responder(|_| ScriptedTurn::text("ok"))
        .build()
        .await;
    let filler = "lorem ipsum dolor sit amet ".repeat(60);
    for n in 0..12 {
        h.agent
            .prompt(format!("Note FACT-{n}. {filler}"))
            .await
            .unwrap();
    }
    let events = h.drain();
    let compactions = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::CompactionEnd { .. }))
        .count();
    assert!(compactions >= 3, "only {compactions} compactions");
    for e in &events {
        if let AgentEvent::CompactionEnd {
            tokens_before,
            tokens_after,
        } = e
        {
            assert!(
                tokens_after < tokens_before,
                "{tokens_after} >= {tokens_before}"
            );
        }
    }
    let log = today_log(&h);
    for n in 0..12 {
        let bullet = format!("- The user said FACT-{n}.\n");
        assert_eq!(log.matches(&bullet).count(), 1, "FACT-{n}: {log}");
    }
    // Flushes read messages only, never the summaries made of what they flushed before.
    for request in flush.requests() {
        assert!(!prompt_of(&request).contains("[Summary of"));
    }
    // Later summaries update the earlier one instead of summarising it blindly.
    let requests = compaction.requests();
    assert!(prompt_of(&requests[1]).contains("<previous-summary>"));
    // AGENTS.md is in the system prompt after every compaction, never summarised away.
    let last = h.requests().last().cloned().unwrap();
    assert!(last.system.unwrap().contains("Always answer in French."));
    // The request after a compaction starts with the summary and fits the window.
    assert!(last.messages[0].text().contains("summarised"));
}

#[tokio::test]
async fn an_overflow_from_the_provider_compacts_once_and_retries() {
    let (builder, _, _) = long_conversation(128_000);
    let mut h = builder
        .turns(vec![
            ScriptedTurn::text("first"),
            ScriptedTurn::text("second"),
            ScriptedTurn::steps(vec![ScriptStep::Error {
                kind: ErrorKind::ContextOverflow,
                message: "prompt is too long".into(),
            }]),
            ScriptedTurn::text("after compaction"),
        ])
        .config(|c| c.context.keep_recent_tokens = 10)
        .build()
        .await;
    h.agent.prompt("one").await.unwrap();
    h.agent.prompt("two").await.unwrap();
    let report = h.agent.prompt("three").await.unwrap();
    assert_eq!(report.outcome, Outcome::Completed);
    let events = h.drain();
    assert!(events.iter().any(|e| matches!(e,
        AgentEvent::CompactionStart { reason, .. } if reason.contains("prompt is too long"))));
    let retried = h.requests().last().cloned().unwrap();
    assert!(retried.messages[0].text().contains("summarised"));
    assert_eq!(retried.messages.last().unwrap().text(), "three");
}

#[tokio::test]
async fn a_second_overflow_fails_the_run_with_a_clear_error() {
    let overflow = || {
        ScriptedTurn::steps(vec![ScriptStep::Error {
            kind: ErrorKind::ContextOverflow,
            message: "too long".into(),
        }])
    };
    let (builder, _, _) = long_conversation(128_000);
    let h = builder
        .turns(vec![ScriptedTurn::text("first"), overflow(), overflow()])
        .config(|c| c.context.keep_recent_tokens = 10)
        .build()
        .await;
    h.agent.prompt("one").await.unwrap();
    let report = h.agent.prompt("two").await.unwrap();
    let Outcome::Failed { error } = report.outcome else {
        panic!("{:?}", report.outcome)
    };
    assert_eq!(error.code, ErrorKind::ContextOverflow);
}

#[tokio::test]
async fn a_summary_too_long_for_its_model_drops_the_oldest_turns_and_says_so() {
    let compaction = Arc::new(ScriptedProvider::with_responder(|request| {
        if prompt_of(request).contains("OLDEST") {
            ScriptedTurn::steps(vec![ScriptStep::Error {
                kind: ErrorKind::ContextOverflow,
                message: "too long".into(),
            }])
        } else {
            ScriptedTurn::text("## Goal\n- the rest")
        }
    }));
    let mut h = harness(Vec::new())
        .responder(|_| ScriptedTurn::text("ok"))
        .config(|c| c.context.keep_recent_tokens = 10)
        .upkeep(Upkeep {
            compaction: Some(ModelChoice::new(compaction, "summary")),
            ..Upkeep::default()
        })
        .build()
        .await;
    for text in ["OLDEST words", "b", "c", "d", "e", "f", "g", "h"] {
        h.agent.prompt(text).await.unwrap();
    }
    let report = h.agent.compact(None).await.unwrap();
    assert!(report.dropped_messages >= 1);
    let told = format!("{:?}", h.drain());
    assert!(told.contains("oldest messages did not fit"), "{told}");
}

#[tokio::test]
async fn long_tool_output_is_saved_to_a_file_and_shown_as_head_and_tail() {
    let mut h = harness(vec![
        ScriptedTurn::tool_call("bash", json!({"command": "seq 1 3000"})),
        ScriptedTurn::tool_call("read_file", json!({"path": "big.md"})),
        ScriptedTurn::text("done"),
    ])
    .config(|c: &mut AgentConfig| {
        c.evict_tool_output_chars = 2_000;
        c.approval = ApprovalPolicy::allow_all();
    })
    .file("big.md", &"a line of the big file\n".repeat(200))
    .build()
    .await;
    h.agent.prompt("count").await.unwrap();
    let context = h.reloaded_context().await;
    let Message::ToolResult(bash) = &context[2] else {
        panic!("{context:?}")
    };
    assert!(bash.content.starts_with("1\n2\n3\n"), "{}", bash.content);
    assert!(
        bash.content.ends_with("2999\n3000\n[exit code 0]"),
        "{}",
        bash.content
    );
    assert!(bash.content.contains("not shown"), "{}", bash.content);
    let saved = format!(".cairn/tool-results/{}.txt", bash.call_id);
    assert!(bash.content.contains(&saved));
    let whole = std::fs::read_to_string(h.workspace.root().join(&saved)).unwrap();
    assert!(whole.contains("\n1500\n") && whole.len() > 10_000);
    // File tools are exempt: read_file's own paging applies.
    let Message::ToolResult(read) = &context[4] else {
        panic!("{context:?}")
    };
    assert!(!read.content.contains("not shown"));
    drop(h.drain());
}

#[tokio::test]
async fn leaving_a_branch_records_its_summary_where_the_conversation_goes_on() {
    let summariser = Arc::new(
        ScriptedProvider::new(vec![ScriptedTurn::text(
            "- Approach A failed: the API timed out.",
        )])
        .recording(),
    );
    let mut h = harness(vec![
        ScriptedTurn::text("Trying A... it timed out."),
        ScriptedTurn::text("Trying B."),
    ])
    .upkeep(Upkeep {
        compaction: Some(ModelChoice::new(summariser.clone(), "summary")),
        ..Upkeep::default()
    })
    .build()
    .await;
    h.agent.prompt("Try approach A").await.unwrap();
    // Nothing is left when staying on the same leaf: no summary, no model call.
    let leaf = h.agent.session_snapshot().leaf().map(str::to_string);
    assert_eq!(
        h.agent.navigate_summarised(leaf.as_deref()).await.unwrap(),
        None
    );
    assert!(summariser.requests().is_empty());

    // Back to before the first message: the whole branch is left and summarised.
    let summary = h.agent.navigate_summarised(None).await.unwrap();
    assert_eq!(
        summary.as_deref(),
        Some("- Approach A failed: the API timed out.")
    );
    // Subscribers saw the summary phase and the agent idle again after it.
    let phases: Vec<Phase> = h
        .drain()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::PhaseChanged { phase } => Some(phase),
            _ => None,
        })
        .collect();
    assert!(
        phases.ends_with(&[Phase::BranchSummary, Phase::Turn, Phase::Idle]),
        "{phases:?}"
    );
    let asked = prompt_of(&summariser.requests()[0]);
    assert!(asked.contains("User: Try approach A") && asked.contains("timed out"));
    h.agent.prompt("Try approach B").await.unwrap();
    let request = h.requests().last().cloned().unwrap();
    let texts: Vec<String> = request.messages.iter().map(Message::text).collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts[0].contains("Approach A failed"), "{texts:?}");
    assert_eq!(texts[1], "Try approach B");
    // The same context comes back from disk.
    let reloaded = h.reloaded_context().await;
    assert!(reloaded[0].text().contains("Approach A failed"));
}

#[tokio::test]
async fn old_long_tool_output_is_pruned_before_a_compaction_is_needed() {
    let mut tools = ToolRegistry::builtin();
    tools.retain(&["bash".to_string()]);
    let bash = |from: u32| {
        ScriptedTurn::tool_call(
            "bash",
            json!({"command": format!("seq {from} {}", from + 1_199)}),
        )
    };
    let mut h = harness(vec![
        bash(10_000),
        ScriptedTurn::text("one"),
        bash(20_000),
        ScriptedTurn::text("two"),
        bash(30_000),
        ScriptedTurn::text("three"),
    ])
    .tools(tools)
    .config(|c| {
        c.approval = ApprovalPolicy::allow_all();
        c.context = ContextBudget {
            window: Some(8_000),
            reserve_tokens: 3_000,
            keep_recent_tokens: 2_500,
            // At the limit only: this is about what happens there.
            background: false,
            ..ContextBudget::default()
        };
    })
    .build()
    .await;
    for prompt in ["first", "second", "third"] {
        let report = h.agent.prompt(prompt).await.unwrap();
        assert_eq!(report.outcome, Outcome::Completed);
    }
    let events = h.drain();
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::CompactionStart { .. })),
        "pruning should have been enough"
    );
    let last = h.requests().last().cloned().unwrap();
    let results: Vec<&cairn_protocol::ToolResultMessage> = last
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 3);
    // The oldest is pruned: head, tail and where the whole of it is.
    let oldest = results[0];
    assert!(
        oldest.content.starts_with("10000\n10001\n"),
        "{}",
        oldest.content
    );
    assert!(oldest.content.contains("not shown"), "{}", oldest.content);
    let file = format!(".cairn/tool-results/{}.txt", oldest.call_id);
    assert!(oldest.content.contains(&file));
    let whole = std::fs::read_to_string(h.workspace.root().join(&file)).unwrap();
    assert!(whole.contains("\n10600\n") && whole.ends_with("11199\n[exit code 0]"));
    // The newest is whole.
    assert!(!results[2].content.contains("not shown"));
    assert!(results[2].content.contains("\n30600\n"));
    // The session keeps every result as it was, and the pruning survives a reload.
    let text = std::fs::read_to_string(h.session_path()).unwrap();
    assert!(text.contains("\"type\":\"tool_output_pruned\""));
    assert!(text.contains("10600"));
    let reloaded = h.reloaded_context().await;
    let Message::ToolResult(first) = &reloaded[2] else {
        panic!("{reloaded:?}")
    };
    assert!(first.content.contains("not shown"));
}
