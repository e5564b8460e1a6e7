//! The memory index on real workspaces in temp folders: relevance, recency, filters,
//! incremental updates, the watcher, and recovery from damaged state.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod files;
#[path = "../support/pause.rs"]
mod pause;
mod recovery;
mod search;
mod time;

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use cairn_memory::{
    Corpus, IndexOptions, MemoryIndex, OpenNotice, SearchHit, SearchMode, SearchQuery, Workspace,
};
use cairn_testkit::write;
use chrono::NaiveDate;
use pause::Pause;

/// The files of [`fixture`] the index holds: the seven it writes, and the new
/// workspace's own notes (AGENTS.md, and the example skill and subagent among them).
const FIXTURE_FILES: u64 = 12;

/// A workspace with memory, daily logs, knowledge and a session.
fn fixture() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open_or_create(&dir.path().join("ws")).unwrap();
    let root = ws.root();
    write(
        root,
        "MEMORY.md",
        "# Memory\n\n## People\n- Ana is the project lead.\n- Bruno prefers email over calls.\n\n## Preferences\n- Answers in British English.\n",
    );
    write(
        root,
        "memory/2026-03-01.md",
        "# 2026-03-01\n\n## 09:10\n- Booked the dentist appointment for March 14.\n",
    );
    write(
        root,
        "memory/2026-01-02.md",
        "# 2026-01-02\n\n## 10:00\n- Quarterly report draft sent to Ana.\n",
    );
    write(
        root,
        "memory/2025-06-02.md",
        "# 2025-06-02\n\n## 10:00\n- Quarterly report draft sent to Ana.\n",
    );
    write(
        root,
        "knowledge/garden.md",
        "# Garden\n\nTomatoes need sun.\n\n## Watering\nWater the tomatoes every morning in July.\nThe blue watering can is in the shed.\n",
    );
    write(
        root,
        "knowledge/rust/async.md",
        "# Async Rust\n\nTokio runs futures on a thread pool.\nA blocking call stalls the executor; use spawn_blocking.\n",
    );
    write(
        root,
        "sessions/0001.jsonl",
        concat!(
            r#"{"type":"session","version":1,"id":"0001","created_at":"2026-03-02T10:00:00.000Z"}"#,
            "\n",
            r#"{"type":"message","id":"a","parent_id":null,"ts":"t","message":{"role":"user","content":[{"type":"text","text":"Where did I park the bicycle?"}]}}"#,
            "\n",
            r#"{"type":"message","id":"b","parent_id":"a","ts":"t","message":{"role":"assistant","content":[{"type":"text","text":"By the library, level two."}],"stop_reason":"end_turn"}}"#,
            "\n"
        ),
    );
    (dir, ws)
}

fn options() -> IndexOptions {
    IndexOptions {
        debounce: Duration::from_millis(100),
        ..IndexOptions::default()
    }
}

fn query(text: &str) -> SearchQuery {
    SearchQuery {
        today: NaiveDate::from_ymd_opt(2026, 3, 20),
        ..SearchQuery::new(text)
    }
}

fn paths(hits: &[SearchHit]) -> Vec<&str> {
    hits.iter().map(|h| h.path.as_str()).collect()
}
