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
            AgentEvent::ContextGathered { parts, recall, .. } => Some((parts, recall)),
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

#[tokio::test]
async fn the_intent_steps_lookups_recall_what_the_message_alone_would_not() {
    use cairn_llm::ScriptedProvider;
    use cairn_protocol::{EntryKind, Intent};
    use std::sync::Arc;

    let reader = Arc::new(ScriptedProvider::new(vec![ScriptedTurn::text(
        "{\"goal\": \"book the trip\", \"constraints\": [\"cheap\"], \"lookups\": [\"Lisbon flights\"]}",
    )]));
    let mut h = reader_harness(&reader, vec![ScriptedTurn::text("Booked.")])
        .build()
        .await;
    h.agent.prompt("Sort out next week for me").await.unwrap();
    let expected = Intent {
        goal: "book the trip".into(),
        constraints: vec!["cheap".into()],
        lookups: vec!["Lisbon flights".into()],
    };
    let system = h.requests()[0].system.clone().unwrap();
    let recall_at = system.find("# Reference: notes recalled").unwrap();
    assert!(
        system[recall_at..].contains("knowledge/travel.md#L1-L3"),
        "{system}"
    );
    let gathered = h.drain().into_iter().find_map(|e| match e {
        AgentEvent::ContextGathered { intent, .. } => intent,
        _ => None,
    });
    assert_eq!(gathered, Some(expected.clone()));
    let recorded = h
        .agent
        .session_snapshot()
        .entries()
        .iter()
        .find_map(|e| match &e.kind {
            EntryKind::Intent { intent } => Some(intent.clone()),
            _ => None,
        });
    assert_eq!(recorded, Some(expected));
    assert_eq!(reader.remaining(), 0);
}

#[tokio::test]
async fn a_failing_intent_step_is_said_and_recall_uses_the_message() {
    use cairn_core::agent::Upkeep;
    use cairn_core::upkeep::ModelChoice;
    use cairn_llm::ScriptedProvider;
    use std::sync::Arc;

    let reader = Arc::new(ScriptedProvider::new(vec![ScriptedTurn::text("no idea")]));
    let mut h = harness(vec![ScriptedTurn::text("ok")])
        .upkeep(Upkeep {
            intent: Some(ModelChoice::new(reader, "intent-model")),
            ..Upkeep::default()
        })
        .build()
        .await;
    let run = h.agent.prompt("hello").await.unwrap();
    assert_eq!(run.outcome, cairn_protocol::Outcome::Completed);
    let warned = h.drain().into_iter().any(|e| {
        matches!(e, AgentEvent::Notice { message, .. } if message.contains("the intent step failed"))
    });
    assert!(warned);
}

#[tokio::test]
async fn a_slash_and_a_skill_name_puts_the_skill_before_the_model() {
    let skill = "---\nname: pdf\ndescription: >-\n  Extract text\n  from PDF files.\n---\n\n# PDF\n\nRun scripts/extract.py on the file.\n";
    let h = harness(vec![ScriptedTurn::text("ok"), ScriptedTurn::text("ok")])
        .file("skills/pdf/SKILL.md", skill)
        .file("skills/pdf/scripts/extract.py", "print('x')\n")
        .file(
            "skills/broken/SKILL.md",
            "---\nname: other\ndescription: d\n---\n",
        )
        .build()
        .await;
    h.agent.prompt("/pdf report.pdf").await.unwrap();
    h.agent.prompt("/nope report.pdf").await.unwrap();
    let requests = h.requests();
    let first = requests[0].system.clone().unwrap();
    assert!(
        first.contains("- pdf: Extract text from PDF files. (skills/pdf/SKILL.md)"),
        "{first}"
    );
    assert!(first.contains("# The user invoked the skill `pdf` (skills/pdf/SKILL.md)"));
    assert!(first.contains("Run scripts/extract.py on the file."));
    assert!(!first.contains("broken"), "a bad skill is left out");
    assert_eq!(
        requests[0].messages.last().unwrap().text(),
        "/pdf report.pdf"
    );
    let second = requests[1].system.clone().unwrap();
    assert!(!second.contains("invoked the skill"), "{second}");
}

/// `/name args` with `prompts/name.md` sends the template with the arguments put in, and
/// the session keeps what was sent; a template that cannot be read is told and the message
/// goes as typed; a template hides a skill of the same name.
#[tokio::test]
async fn a_prompt_template_is_expanded_into_the_message() {
    let mut h = harness(vec![
        ScriptedTurn::text("ok"),
        ScriptedTurn::text("ok"),
        ScriptedTurn::text("ok"),
    ])
    .file(
        "prompts/review.md",
        "---\ndescription: Review a file\narguments: [file, focus]\n---\nReview $1, looking at $2 only.\n",
    )
    .file("prompts/broken.md", "no front matter\n")
    .file("skills/review/SKILL.md", "---\ndescription: the skill\n---\nSkill body.\n")
    .build()
    .await;
    h.agent
        .prompt("/review src/lib.rs \"error handling\"")
        .await
        .unwrap();
    h.agent.prompt("/broken now").await.unwrap();
    let requests = h.requests();
    assert_eq!(
        requests[0].messages.last().unwrap().text(),
        "Review src/lib.rs, looking at error handling only."
    );
    assert!(!requests[0]
        .system
        .clone()
        .unwrap()
        .contains("invoked the skill"));
    assert_eq!(requests[1].messages.last().unwrap().text(), "/broken now");
    let told = h.notices_about("prompt template");
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(told[0].contains("prompts/broken.md"), "{told:?}");
    let kept = h.reloaded_context().await;
    assert_eq!(
        kept[0].text(),
        "Review src/lib.rs, looking at error handling only."
    );
}

#[tokio::test]
async fn a_model_without_tools_gets_the_users_own_rules_and_no_tool_guidance() {
    let template = cairn_memory::Workspace::template_files()
        .iter()
        .find(|(path, _)| *path == "AGENTS.md")
        .map(|(_, text)| *text)
        .unwrap();
    let agents = format!("{template}- Always answer in French.\n");
    let system_of = |compact: bool| {
        let agents = agents.clone();
        async move {
            let h = harness(vec![ScriptedTurn::text("Bonjour.")])
                .tool_less()
                .config(|c| c.context.compact = compact)
                .file("AGENTS.md", &agents)
                .file("MEMORY.md", "# Memory\n- Ana is the project lead.\n")
                .build()
                .await;
            h.agent.prompt("Who leads the project?").await.unwrap();
            h.requests()[0].system.clone().unwrap()
        }
    };
    let compact = system_of(true).await;
    for kept in [
        "Always answer in French.",
        "Ana is the project lead.",
        "Answer the user's question directly",
    ] {
        assert!(compact.contains(kept), "{kept}: {compact}");
    }
    for gone in [
        "How to work",
        "Look before you change",
        "memory_search",
        "with your tools",
        "The workspace is",
    ] {
        assert!(!compact.contains(gone), "{gone}: {compact}");
    }
    // Turned off: the context a model with tools gets.
    let full = system_of(false).await;
    assert!(full.contains("Look before you change"), "{full}");
}

#[tokio::test]
async fn a_small_window_with_tools_keeps_the_tool_guidance_and_a_share_of_the_workspace() {
    let rules: String = (0..400)
        .map(|n| format!("- House rule {n}: keep the notes tidy.\n"))
        .collect();
    let memory: String = (0..300)
        .map(|n| format!("- Fact {n} about the garden.\n"))
        .collect();
    let system_of = |window: Option<u64>| {
        let (rules, memory) = (rules.clone(), memory.clone());
        async move {
            let h = harness(vec![ScriptedTurn::text("Done.")])
                .config(|c| c.context.window = window)
                .file("AGENTS.md", &format!("# Rules\n{rules}"))
                .file("MEMORY.md", &format!("# Memory\n{memory}"))
                .build()
                .await;
            h.agent.prompt("Tidy the notes.").await.unwrap();
            h.requests()[0].system.clone().unwrap()
        }
    };
    let small = system_of(Some(4096)).await;
    // The model can use tools: it keeps their guidance and the prompt for them.
    assert!(small.contains("with your tools"), "{small}");
    assert!(
        small.contains("House rule 0:") && small.contains("Fact 0 "),
        "{small}"
    );
    assert!(!small.contains("House rule 399:"), "cut to fit");
    // The workspace's part stays within a share of 4,096 tokens (about 4 characters each).
    assert!(small.len() < 4096, "{} characters", small.len());
    let large = system_of(None).await;
    assert!(large.contains("House rule 399:") && large.contains("Fact 299 "));
}

/// A file of the context that changes while the run works is seen at the next model call,
/// and nothing is rebuilt while nothing changes.
#[tokio::test]
async fn the_context_is_rebuilt_when_its_files_change_during_the_run() {
    let mut h = harness(vec![
        ScriptedTurn::tool_call("memory_save", json!({"text": "The boat is red."})),
        ScriptedTurn::tool_call("list_dir", json!({})),
        ScriptedTurn::text("done"),
    ])
    .file("MEMORY.md", "# Memory\n- Ana leads.\n")
    .memory()
    .build()
    .await;
    h.agent.prompt("remember the boat").await.unwrap();
    let systems = systems(&h);
    assert_eq!(systems.len(), 3);
    assert!(!systems[0].contains("The boat is red."));
    assert!(systems[1].contains("The boat is red."), "{}", systems[1]);
    assert_eq!(systems[1], systems[2]);
    let gathered = h
        .drain()
        .into_iter()
        .filter(|e| matches!(e, AgentEvent::ContextGathered { .. }))
        .count();
    assert_eq!(gathered, 2, "built at the start and once after the save");
}

/// The system prompt of each request the model got.
fn systems(h: &super::support::Harness) -> Vec<String> {
    h.requests()
        .iter()
        .map(|r| r.system.clone().unwrap())
        .collect()
}

/// A file of the context edited by hand while the run calls only tools that read (which
/// cannot have changed it) is seen once the context's stamp is old enough to be looked at
/// again, a fraction of a second later.
#[tokio::test]
async fn an_edit_by_hand_while_tools_only_read_is_seen_at_a_later_call() {
    use cairn_llm::ScriptStep;
    let (tool, mut gate) = super::support::gate_tool("gate", true);
    let call = || ScriptStep::ToolCall {
        id: None,
        name: "gate".into(),
        arguments: json!({"tag": "g"}),
    };
    let h = harness(vec![
        ScriptedTurn::steps(vec![call()]),
        // A model call that takes longer than the stamp is trusted.
        ScriptedTurn::steps(vec![ScriptStep::DelayMs(400), call()]),
        ScriptedTurn::text("done"),
    ])
    .file("AGENTS.md", "# Rules\n- Be brief.\n")
    .tools(super::support::with_tool(tool))
    .build()
    .await;
    let agent = h.agent.clone();
    let run = tokio::spawn(async move { agent.prompt("go").await });
    gate.wait_started().await;
    std::fs::write(
        h.workspace.root().join("AGENTS.md"),
        "# Rules\n- Answer in Portuguese.\n",
    )
    .unwrap();
    gate.release(2);
    run.await.unwrap().unwrap();
    let systems = systems(&h);
    assert_eq!(systems.len(), 3);
    assert!(!systems[0].contains("Portuguese"));
    assert!(
        systems[2].contains("Answer in Portuguese."),
        "{}",
        systems[2]
    );
}

fn reader_harness(
    reader: &std::sync::Arc<cairn_llm::ScriptedProvider>,
    answers: Vec<ScriptedTurn>,
) -> super::support::Builder {
    use cairn_core::agent::Upkeep;
    use cairn_core::upkeep::ModelChoice;
    harness(answers)
        .file(
            "knowledge/travel.md",
            "# Travel\n\nLisbon flights leave from gate 7 on Tuesdays.\n",
        )
        .memory()
        .upkeep(Upkeep {
            intent: Some(ModelChoice::new(reader.clone(), "intent-model")),
            ..Upkeep::default()
        })
}

/// The intent model reads the message after the conversation's last turns, at
/// temperature 0; shown what its lookups found, it may refine the reading, and stops when
/// it says done. The reading reaches the answering model.
#[tokio::test]
async fn the_intent_step_reads_the_conversation_iterates_and_informs_the_answer() {
    use cairn_llm::ScriptedProvider;
    use std::sync::Arc;

    let reading = |goal: &str, done: bool| {
        ScriptedTurn::text(format!(
            "{{\"goal\": \"{goal}\", \"constraints\": [\"under 300 EUR\"], \"lookups\": [\"Lisbon flights\"], \"done\": {done}}}"
        ))
    };
    let reader = Arc::new(
        ScriptedProvider::new(vec![
            reading("plan a weekend", true),
            reading("book a Lisbon flight", false),
            reading("book the Tuesday Lisbon flight from gate 7", false),
            ScriptedTurn::text("{\"done\": true}"),
        ])
        .recording(),
    );
    let h = reader_harness(
        &reader,
        vec![
            ScriptedTurn::text("Lisbon it is."),
            ScriptedTurn::text("Booked."),
        ],
    )
    .build()
    .await;
    h.agent
        .prompt("Where should we go this weekend?")
        .await
        .unwrap();
    h.agent.prompt("Book it, cheaply").await.unwrap();
    let asked = reader.requests();
    assert_eq!(
        asked.len(),
        4,
        "one reading for the first message, three for the second"
    );
    assert!(asked.iter().all(|r| r.temperature == Some(0.0)));
    let second = asked[1].messages[0].text();
    assert!(
        second.contains("User: Where should we go this weekend?\n\nAssistant: Lisbon it is."),
        "{second}"
    );
    assert!(
        second.ends_with("# The user's latest message\n\nBook it, cheaply"),
        "{second}"
    );
    let third = asked[2].messages[0].text();
    assert!(third.contains("# Your reading so far"), "{third}");
    assert!(
        third.contains("knowledge/travel.md#L1-L3: # Travel Lisbon flights leave from gate 7"),
        "{third}"
    );
    let system = h.requests()[1].system.clone().unwrap();
    assert!(
        system.contains("# How the user's message was read"),
        "{system}"
    );
    assert!(
        system.contains(
            "Goal: book the Tuesday Lisbon flight from gate 7\nConstraints:\n- under 300 EUR"
        ),
        "{system}"
    );
}

/// A reader that never says done is asked at most four times.
#[tokio::test]
async fn the_intent_step_stops_after_four_readings() {
    use cairn_llm::ScriptedProvider;
    use std::sync::Arc;

    let turns = (0..6)
        .map(|n| {
            ScriptedTurn::text(format!(
                "{{\"goal\": \"reading {n}\", \"lookups\": [\"Lisbon\"], \"done\": false}}"
            ))
        })
        .collect();
    let reader = Arc::new(ScriptedProvider::new(turns));
    let h = reader_harness(&reader, vec![ScriptedTurn::text("ok")])
        .build()
        .await;
    h.agent.prompt("Lisbon?").await.unwrap();
    assert_eq!(reader.remaining(), 2);
    let system = h.requests()[0].system.clone().unwrap();
    assert!(system.contains("Goal: reading 3"), "{system}");
}
