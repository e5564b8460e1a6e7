//! Compaction that does not stop the run: the summary is asked for once the conversation
//! passes a share of the window, written while the run goes on, swapped in at a save
//! point; a failed one gives way to the compaction inline at the limit.

use std::sync::Arc;

use cairn_core::agent::Upkeep;
use cairn_core::tools::ToolRegistry;
use cairn_core::upkeep::ModelChoice;
use cairn_core::ContextBudget;
use cairn_llm::{ScriptStep, ScriptedProvider, ScriptedTurn};
use cairn_protocol::{AgentEvent, EntryKind, ErrorKind};

use super::support::{harness, Harness};

/// A chat model that answers "ok" over a small window, and `summaries` as the
/// compaction model.
async fn chatting(summaries: Arc<ScriptedProvider>) -> Harness {
    harness(Vec::new())
        .tools(ToolRegistry::new())
        .config(|c| {
            c.context = ContextBudget {
                window: Some(6_000),
                reserve_tokens: 1_000,
                keep_recent_tokens: 800,
                compact: true,
                ..ContextBudget::default()
            };
        })
        .upkeep(Upkeep {
            compaction: Some(ModelChoice::new(summaries, "summary")),
            ..Upkeep::default()
        })
        .responder(|_| ScriptedTurn::text("ok"))
        .build()
        .await
}

fn filler(n: usize) -> String {
    format!("Note {n}. {}", "lorem ipsum dolor sit amet ".repeat(40))
}

fn compactions(h: &Harness) -> usize {
    h.agent
        .session_snapshot()
        .entries()
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::Compaction { .. }))
        .count()
}

#[tokio::test]
async fn the_summary_is_written_while_the_conversation_goes_on_and_swapped_in() {
    let summaries = Arc::new(
        ScriptedProvider::with_responder(|_| {
            ScriptedTurn::steps(vec![
                ScriptStep::DelayMs(400),
                ScriptStep::Text("## Goal\n- notes, summarised".into()),
            ])
        })
        .recording(),
    );
    let mut h = chatting(summaries.clone()).await;
    let mut compacting_seen = false;
    for n in 0..30 {
        h.agent.prompt(filler(n)).await.unwrap();
        compacting_seen |= h.agent.context_usage().compacting;
        if compactions(&h) > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(60)).await;
    }
    assert!(compacting_seen, "the meter never said compacting");

    assert_eq!(compactions(&h), 1, "the summary was never swapped in");
    let events = h.drain();
    let started = events
        .iter()
        .position(|e| {
            matches!(
                e,
                AgentEvent::CompactionStart {
                    background: true,
                    ..
                }
            )
        })
        .expect("no summary was started in the background");
    let ended = events
        .iter()
        .position(
            |e| matches!(e, AgentEvent::CompactionEnd { tokens_after, .. } if *tokens_after > 0),
        )
        .expect("no summary was swapped in");
    // The conversation went on while the summary was written: answers came between.
    let answered = events[started..ended]
        .iter()
        .filter(|e| matches!(e, AgentEvent::TurnEnd { .. }))
        .count();
    assert!(answered >= 1, "the run waited for the summary");
    assert!(
        !events.iter().any(|e| matches!(
            e,
            AgentEvent::CompactionStart {
                background: false,
                ..
            }
        )),
        "a compaction ran inline"
    );
    assert_eq!(summaries.requests().len(), 1);
    // The next request starts with the summary.
    h.agent.prompt("and now?").await.unwrap();
    let last = h.requests().last().cloned().unwrap();
    assert!(last.messages[0].text().contains("notes, summarised"));
}

#[tokio::test]
async fn a_failed_summary_in_the_background_falls_back_to_inline_at_the_limit() {
    // The summary asked for in the background fails; the one asked for at the limit is
    // written.
    let failing = Arc::new(
        ScriptedProvider::new(vec![
            ScriptedTurn::steps(vec![ScriptStep::Error {
                kind: ErrorKind::BadRequest,
                message: "summary refused".into(),
            }]),
            ScriptedTurn::text("## Goal\n- summarised inline"),
        ])
        .recording(),
    );
    let mut h = chatting(failing.clone()).await;
    let mut notices = Vec::new();
    let mut inline = false;
    for n in 0..20 {
        h.agent.prompt(filler(n)).await.unwrap();
        for event in h.drain() {
            match event {
                AgentEvent::Notice { message, .. } => notices.push(message),
                AgentEvent::CompactionStart {
                    background: false, ..
                } => inline = true,
                _ => {}
            }
        }
        if inline {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(
        notices
            .iter()
            .any(|n| n.contains("the summary in the background failed")),
        "{notices:?}"
    );
    assert!(inline, "the limit never compacted inline");
    assert!(
        failing.requests().len() >= 2,
        "the inline compaction asked again"
    );
}

/// The model's tokenizer counts the request once it nears the limit, and the count, not
/// the estimate, decides: a conversation the estimate puts at half the room but the
/// tokenizer at more than all of it is compacted, and the meter says what it rests on.
#[tokio::test]
async fn the_models_own_count_decides_where_the_limit_is() {
    let summaries = Arc::new(ScriptedProvider::with_responder(|_| {
        ScriptedTurn::text("## Goal\n- counted, summarised")
    }));
    let budget = |c: &mut cairn_core::AgentConfig| {
        c.context = ContextBudget {
            window: Some(12_000),
            reserve_tokens: 1_000,
            keep_recent_tokens: 800,
            compact: true,
            background: false,
            ..ContextBudget::default()
        };
    };
    let build = |factor: Option<u64>| {
        let builder = harness(Vec::new())
            .tools(ToolRegistry::new())
            .config(budget)
            .upkeep(Upkeep {
                compaction: Some(ModelChoice::new(summaries.clone(), "summary")),
                ..Upkeep::default()
            })
            .responder(|_| ScriptedTurn::text("ok"));
        match factor {
            Some(f) => builder.counting(f),
            None => builder,
        }
    };
    // The same conversation: by the estimate alone it fits; counted, it does not.
    let plain = build(None).build().await;
    let mut counted = build(Some(3)).build().await;
    for n in 0..22 {
        plain.agent.prompt(filler(n)).await.unwrap();
        counted.agent.prompt(filler(n)).await.unwrap();
    }
    assert_eq!(compactions(&plain), 0);
    assert!(compactions(&counted) >= 1, "the count never decided");
    assert!(counted.drain().iter().any(|e| matches!(
        e,
        AgentEvent::CompactionStart {
            background: false,
            ..
        }
    )));
    assert_eq!(
        plain.agent.context_usage().counted_by,
        "an estimate (about four characters a token)"
    );
    // A tokenizer that agrees with the estimate compacts nothing early; once it has
    // counted, the meter says by whom.
    let agreeing = build(Some(1)).build().await;
    for n in 0..40 {
        agreeing.agent.prompt(filler(n)).await.unwrap();
        if agreeing.agent.context_usage().counted_by == "the scripted tokenizer" {
            assert_eq!(compactions(&agreeing), 0);
            return;
        }
    }
    panic!("the meter never said the tokenizer counted");
}
