//! A workspace someone else prepared: links planted in it that lead out (`MEMORY.md ->
//! ~/.aws/credentials`, `memory/<today>.md -> ~/.bashrc`) never make Cairn's own readers
//! and writers show, append to or replace what they lead to.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_core::agent::Upkeep;
use cairn_core::upkeep::ModelChoice;
use cairn_core::{AgentConfig, ApprovalPolicy};
use cairn_llm::{ScriptedProvider, ScriptedTurn};
use cairn_protocol::{AgentEvent, Message, NoticeLevel};
use chrono::Local;
use serde_json::json;

use super::support::harness;

/// A folder outside the workspace with `credentials` and `bashrc`.
struct Outside {
    dir: tempfile::TempDir,
}

const CREDENTIALS: &str = "aws_secret_access_key = OUTSIDE-SECRET-42\n";
const BASHRC: &str = "# OUTSIDE-BASHRC-7\nalias ll='ls -l'\n";

impl Outside {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("credentials"), CREDENTIALS).unwrap();
        std::fs::write(dir.path().join("bashrc"), BASHRC).unwrap();
        Self { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Asserts nothing outside changed or was added.
    fn untouched(&self) {
        assert_eq!(
            std::fs::read_to_string(self.path("credentials")).unwrap(),
            CREDENTIALS
        );
        assert_eq!(
            std::fs::read_to_string(self.path("bashrc")).unwrap(),
            BASHRC
        );
        let names = std::fs::read_dir(self.dir.path()).unwrap().count();
        assert_eq!(names, 2, "nothing was added outside");
    }
}

fn plant(root: &Path, at: &str, target: &Path) {
    let at = root.join(at);
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&at);
    std::os::unix::fs::symlink(target, at).unwrap();
}

fn today_log() -> String {
    format!("memory/{}.md", Local::now().format("%Y-%m-%d"))
}

fn warnings(events: &[AgentEvent], level: NoticeLevel) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Notice { level: l, message } if *l == level => Some(message.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_context_leaves_out_files_and_folders_that_lead_out() {
    let outside = Outside::new();
    std::fs::create_dir_all(outside.path("notes")).unwrap();
    std::fs::write(outside.path("notes/OUTSIDE-NOTE.md"), "x").unwrap();
    let skill = "---\ndescription: OUTSIDE-SKILL\n---\n";
    std::fs::write(outside.path("notes/SKILL.md"), skill).unwrap();
    let mut h = harness(vec![ScriptedTurn::text("ok")]).build().await;
    let root = h.workspace.root().to_path_buf();
    plant(&root, "MEMORY.md", &outside.path("credentials"));
    plant(&root, "AGENTS.md", &outside.path("credentials"));
    plant(&root, &today_log(), &outside.path("bashrc"));
    plant(&root, "skills/stolen", &outside.path("notes"));
    std::fs::remove_dir_all(root.join("knowledge")).unwrap();
    plant(&root, "knowledge", &outside.path("notes"));
    h.agent.prompt("hi").await.unwrap();
    let system = h.requests()[0].system.clone().unwrap();
    for text in [
        "OUTSIDE-SECRET-42",
        "OUTSIDE-BASHRC-7",
        "OUTSIDE-NOTE",
        "OUTSIDE-SKILL",
        "stolen",
    ] {
        assert!(!system.contains(text), "{text} in {system}");
    }
    assert!(
        system.contains("summarize-notes"),
        "skills inside are still listed"
    );
    let told = warnings(&h.drain(), NoticeLevel::Warning);
    for file in ["MEMORY.md", "AGENTS.md", today_log().as_str()] {
        assert!(
            told.iter()
                .any(|m| m.contains(file) && m.contains("leads outside the workspace")),
            "{file}: {told:?}"
        );
    }
    std::fs::remove_dir_all(outside.path("notes")).unwrap();
    outside.untouched();
}

/// A flush model that keeps every `FACT-…` word of the prompt as a bullet.
fn fact_finder() -> Arc<ScriptedProvider> {
    Arc::new(
        ScriptedProvider::with_responder(|request| {
            let prompt: String = request.messages.iter().map(Message::text).collect();
            let facts: Vec<String> = prompt
                .split(|c: char| !(c.is_alphanumeric() || c == '-'))
                .filter(|w| w.starts_with("FACT-"))
                .map(|w| format!("- The user said {w}."))
                .collect();
            ScriptedTurn::text(facts.join("\n"))
        })
        .recording(),
    )
}

#[tokio::test]
async fn a_flush_into_a_log_that_leads_out_is_skipped_with_a_notice() {
    let outside = Outside::new();
    let flush = fact_finder();
    let mut h = harness(vec![ScriptedTurn::text("Noted.")])
        .upkeep(Upkeep {
            flush: Some(ModelChoice::new(flush.clone(), "flush-model")),
            ..Upkeep::default()
        })
        .build()
        .await;
    plant(h.workspace.root(), &today_log(), &outside.path("bashrc"));
    h.agent.prompt("Remember FACT-tea.").await.unwrap();
    let events = h.drain();
    assert!(!events
        .iter()
        .any(|e| matches!(e, AgentEvent::MemoryFlushed { .. })));
    let told = warnings(&events, NoticeLevel::Warning);
    assert!(
        told.iter()
            .any(|m| m.contains("memory flush failed") && m.contains("outside the workspace")),
        "{told:?}"
    );
    outside.untouched();
}

#[tokio::test]
async fn the_flush_model_never_sees_a_memory_file_that_leads_out() {
    let outside = Outside::new();
    let flush = fact_finder();
    let mut h = harness(vec![ScriptedTurn::text("Noted.")])
        .upkeep(Upkeep {
            flush: Some(ModelChoice::new(flush.clone(), "flush-model")),
            ..Upkeep::default()
        })
        .build()
        .await;
    plant(
        h.workspace.root(),
        "MEMORY.md",
        &outside.path("credentials"),
    );
    h.agent.prompt("Remember FACT-tea.").await.unwrap();
    for request in flush.requests() {
        let sent = serde_json::to_string(&request.messages).unwrap();
        assert!(!sent.contains("OUTSIDE-SECRET-42"), "{sent}");
    }
    let told = warnings(&h.drain(), NoticeLevel::Warning);
    assert!(
        told.iter().any(|m| m.contains("cannot read MEMORY.md")),
        "{told:?}"
    );
    outside.untouched();
}

#[tokio::test]
async fn eviction_refuses_a_results_folder_that_leads_out() {
    let outside = Outside::new();
    let mut h = harness(vec![
        ScriptedTurn::tool_call("bash", json!({"command": "seq 1 3000"})),
        ScriptedTurn::text("done"),
    ])
    .config(|c: &mut AgentConfig| {
        c.evict_tool_output_chars = 2_000;
        c.approval = ApprovalPolicy::allow_all();
    })
    .build()
    .await;
    std::fs::create_dir_all(h.workspace.root().join(".cairn")).unwrap();
    plant(
        h.workspace.root(),
        ".cairn/tool-results",
        outside.dir.path(),
    );
    h.agent.prompt("count").await.unwrap();
    outside.untouched();
    let told = warnings(&h.drain(), NoticeLevel::Error);
    assert!(
        told.iter()
            .any(|m| m.contains("cannot save the long result")
                && m.contains("outside the workspace")),
        "{told:?}"
    );
    // Nothing is lost: the model got the whole result.
    let context = h.reloaded_context().await;
    let Message::ToolResult(result) = &context[2] else {
        panic!("{context:?}")
    };
    assert!(result.content.contains("\n1500\n"), "{}", result.content);
}
