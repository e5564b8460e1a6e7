//! Gather: the workspace context and recalled memory in front of the model.

use cairn_llm::ScriptedTurn;
use cairn_protocol::AgentEvent;
use chrono::{Duration, Local};
use serde_json::json;

use super::support::harness;

fn today() -> String {
    Local::now().format("%Y-%m-%d").to_string()
}

#[tokio::test]
async fn the_model_sees_memory_logs_skills_knowledge_and_recall() {
    let yesterday = (Local::now() - Duration::days(1))
        .format("%Y-%m-%d")
        .to_string();
    let mut h = harness(vec![ScriptedTurn::text("Noted.")])
        .file("MEMORY.md", "# Memory\n- Ana is the project lead.\n")
        .file(
            &format!("memory/{}.md", today()),
            "# Today\n- 09:00 — Standup moved to 10.\n",
        )
        .file(
            &format!("memory/{yesterday}.md"),
            "# Yesterday\n- Shipped 0.3.\n",
        )
        .file(
            "memory/2025-01-01.md",
            "# Old\n- The bicycle is parked at the library.\n",
        )
        .file(
            "knowledge/bikes.md",
            "# Bikes\n\nThe bicycle lock code is kept in the blue notebook.\n",
        )
        .memory()
        .build()
        .await;
    h.agent.prompt("Where is my bicycle?").await.unwrap();
    let system = h.requests()[0].system.clone().unwrap();
    assert!(
        system.contains("# Long-term memory (MEMORY.md)"),
        "{system}"
    );
    assert!(system.contains("Ana is the project lead."));
    assert!(system.contains("Standup moved to 10."));
    assert!(system.contains("Shipped 0.3."));
    assert!(
        system.contains("summarize-notes"),
        "the template's skill is listed"
    );
    assert!(system.contains("- knowledge/bikes.md"));
    let recall_at = system
        .find("# Reference: notes recalled from memory")
        .unwrap();
    let recall = &system[recall_at..];
    assert!(recall.contains("not instructions"));
    assert!(recall.contains("knowledge/bikes.md#L1-L3"), "{recall}");
    assert!(recall.contains("memory/2025-01-01.md#L1-L2"), "{recall}");
    assert!(
        !recall.contains("MEMORY.md#"),
        "MEMORY.md is already in the context"
    );

    let gathered = h
        .drain()
        .into_iter()
        .find_map(|e| match e {
            AgentEvent::ContextGathered { parts, recall } => Some((parts, recall)),
            _ => None,
        })
        .unwrap();
    let names: Vec<&str> = gathered.0.iter().map(|p| p.name.as_str()).collect();
    assert!(names.contains(&"MEMORY.md"));
    assert!(names.contains(&"skills"));
    assert!(gathered.1.contains(&"knowledge/bikes.md#L1-L3".to_string()));
}

#[tokio::test]
async fn a_long_memory_is_cut_and_the_model_is_told_where_the_rest_is() {
    let long: String = (0..2000).map(|i| format!("- fact {i}\n")).collect();
    let h = harness(vec![ScriptedTurn::text("ok")])
        .file("MEMORY.md", &long)
        .build()
        .await;
    h.agent.prompt("hi").await.unwrap();
    let system = h.requests()[0].system.clone().unwrap();
    assert!(system.contains("- fact 0\n"));
    assert!(!system.contains("- fact 1999"));
    assert!(
        system.contains("[MEMORY.md is longer than fits here"),
        "{system}"
    );
    assert!(system.contains("memory_search"));
}

#[tokio::test]
async fn memory_save_then_memory_search_in_one_run() {
    let h = harness(vec![
        ScriptedTurn::tool_call(
            "memory_save",
            json!({"text": "The zeppelin leaves at dawn."}),
        ),
        ScriptedTurn::tool_call("memory_search", json!({"query": "zeppelin"})),
        ScriptedTurn::text("Done."),
    ])
    .memory()
    .build()
    .await;
    h.agent.prompt("Remember the zeppelin.").await.unwrap();
    let log =
        std::fs::read_to_string(h.workspace.root().join(format!("memory/{}.md", today()))).unwrap();
    assert!(log.contains(" — The zeppelin leaves at dawn."), "{log}");
    let last = h
        .requests()
        .last()
        .unwrap()
        .messages
        .last()
        .unwrap()
        .clone();
    let text = serde_json::to_string(&last).unwrap();
    assert!(
        text.contains(&format!("1. memory/{}.md#L1-L3", today())),
        "{text}"
    );
    assert!(text.contains("The **zeppelin** leaves at dawn"), "{text}");
}
