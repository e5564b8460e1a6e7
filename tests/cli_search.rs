//! `cairn index` and `cairn search` end to end: the real binary on a workspace of notes in a
//! temp folder.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Output, Stdio};

use cairn_e2e::Sandbox;
use pretty_assertions::assert_eq;
use serde_json::{json, Value};
use tokio::io::AsyncBufReadExt;

const GARDEN: &str = "# Garden\n\nTomatoes need sun.\n\n## Watering\n\
                      Water the tomatoes every morning in July.\n\
                      The blue watering can is in the shed.\n";

/// A workspace with long-term memory, a daily log and two knowledge notes (4 files, 7
/// chunks: each heading starts one).
fn notes() -> Sandbox {
    let sandbox = Sandbox::new();
    write(
        &sandbox,
        "MEMORY.md",
        "# Memory\n\n## People\n- Ana leads the garden project.\n",
    );
    write(
        &sandbox,
        "memory/2026-03-01.md",
        "# 2026-03-01\n\n## 09:10\n- Booked the dentist for March 14.\n\
         - Ana asked whether the tomatoes are ripe.\n",
    );
    write(&sandbox, "knowledge/garden.md", GARDEN);
    write(
        &sandbox,
        "knowledge/rust.md",
        "# Async Rust\n\nTokio runs futures on a thread pool.\n",
    );
    sandbox
}

fn write(sandbox: &Sandbox, path: &str, text: impl AsRef<[u8]>) {
    let path = sandbox.workspace().join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

async fn cairn(sandbox: &Sandbox, args: &[&str]) -> Output {
    sandbox.cairn(args).output().await.unwrap()
}

/// Runs a command that must succeed and print one JSON object.
async fn cairn_json(sandbox: &Sandbox, args: &[&str]) -> Value {
    let out = cairn(sandbox, args).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn paths(found: &Value) -> Vec<&str> {
    found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["path"].as_str().unwrap())
        .collect()
}

/// `files`, `chunks`, `changed`, `removed` and `skipped` of an index report.
fn counts(report: &Value) -> Value {
    json!({
        "files": report["files"],
        "chunks": report["chunks"],
        "changed": report["changed"],
        "removed": report["removed"],
        "skipped": report["skipped"],
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn index_counts_the_notes_and_search_cites_the_lines_that_match() {
    let sandbox = notes();
    let report = cairn_json(&sandbox, &["index", "--json"]).await;
    assert_eq!(
        counts(&report),
        json!({"files": 4, "chunks": 7, "changed": 4, "removed": 0, "skipped": []})
    );
    assert!(report["took_ms"].is_u64(), "{report}");

    let found = cairn_json(&sandbox, &["search", "--json", "shed"]).await;
    assert_eq!(found["stale"], false);
    assert!(found["took_ms"].is_u64(), "{found}");
    let hits = found["results"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{found}");
    let hit = &hits[0];
    assert_eq!(
        json!({
            "path": hit["path"],
            "start_line": hit["start_line"],
            "end_line": hit["end_line"],
            "citation": hit["citation"],
            "source": hit["source"],
            "heading": hit["heading"],
        }),
        json!({
            "path": "knowledge/garden.md",
            "start_line": 5,
            "end_line": 7,
            "citation": "knowledge/garden.md#L5-L7",
            "source": "knowledge",
            "heading": "Garden > Watering",
        })
    );
    assert!(hit["snippet"].as_str().unwrap().contains("shed"), "{hit}");
    assert!(hit["score"].as_f64().unwrap() > 0.0, "{hit}");
    // The cited lines hold the word.
    let lines: Vec<&str> = GARDEN.lines().collect();
    assert!(lines[4..7].iter().any(|l| l.contains("shed")));

    // Several words are one query; `--limit` caps the hits.
    let found = cairn_json(&sandbox, &["search", "--json", "watering", "can"]).await;
    assert_eq!(paths(&found)[0], "knowledge/garden.md");
    let found = cairn_json(&sandbox, &["search", "--json", "--limit", "1", "tomatoes"]).await;
    assert_eq!(paths(&found).len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn search_without_index_first_builds_it_and_prints_readable_text() {
    let sandbox = notes();
    let out = cairn(&sandbox, &["search", "shed"]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = stdout.lines().next().unwrap();
    assert!(
        first.starts_with("knowledge/garden.md#L5-L7  score ")
            && first.ends_with("Garden > Watering"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\n    The blue watering can is in the shed"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with(" ms\n") && stdout.contains("1 result in "),
        "{stdout}"
    );
    // Not a terminal: no escape sequences.
    assert!(!stdout.contains('\x1b'), "{stdout:?}");

    let out = cairn(&sandbox, &["search", "zeppelin", "airship"]).await;
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "no results for \"zeppelin airship\"\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_corpus_filter_keeps_to_one_part_of_the_workspace() {
    let sandbox = notes();
    let search = |corpus: &'static str| {
        let sandbox = &sandbox;
        async move {
            let found = cairn_json(
                sandbox,
                &["search", "--json", "--corpus", corpus, "tomatoes"],
            )
            .await;
            let mut paths: Vec<String> = paths(&found).iter().map(|p| p.to_string()).collect();
            paths.dedup();
            paths
        }
    };
    assert_eq!(search("memory").await, ["memory/2026-03-01.md"]);
    assert_eq!(search("knowledge").await, ["knowledge/garden.md"]);
    assert_eq!(search("sessions").await, Vec::<String>::new());
    let mut all = search("all").await;
    all.sort();
    all.dedup();
    assert_eq!(all, ["knowledge/garden.md", "memory/2026-03-01.md"]);

    let out = cairn(&sandbox, &["search", "--corpus", "everything", "tomatoes"]).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown corpus `everything`"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_is_found_by_the_next_search() {
    let sandbox = notes();
    let found = cairn_json(&sandbox, &["search", "--json", "cucumbers"]).await;
    assert_eq!(found["results"], json!([]));
    write(
        &sandbox,
        "knowledge/garden.md",
        "# Garden\nCucumbers climb the fence by the greenhouse.\n",
    );
    let found = cairn_json(&sandbox, &["search", "--json", "cucumbers"]).await;
    assert_eq!(paths(&found), ["knowledge/garden.md"]);
    assert_eq!(found["results"][0]["citation"], "knowledge/garden.md#L1-L2");
    // What the edit removed is gone.
    let found = cairn_json(&sandbox, &["search", "--json", "shed"]).await;
    assert_eq!(found["results"], json!([]));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_that_is_not_utf8_is_skipped_with_its_reason_and_search_still_works() {
    let sandbox = notes();
    write(&sandbox, "knowledge/latin1.md", b"caf\xe9 au lait\n");
    let report = cairn_json(&sandbox, &["index", "--json"]).await;
    assert_eq!(report["files"], 4);
    let skipped = report["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{report}");
    assert_eq!(skipped[0]["path"], "knowledge/latin1.md");
    assert!(
        skipped[0]["reason"].as_str().unwrap().contains("UTF-8"),
        "{report}"
    );

    // The text report lists every file left out, with its reason, also those skipped by
    // an earlier run.
    write(&sandbox, "knowledge/blob.md", b"PK\x03\x04\x00\x00binary");
    let out = cairn(&sandbox, &["index"]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.starts_with("index up to date: 4 files, 7 chunks (1 updated) in "),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "skipped 2 files (not indexed):\n  knowledge/blob.md: binary file (contains NUL \
             bytes)\n  knowledge/latin1.md: not UTF-8 text\n"
        ),
        "{stdout}"
    );
    let report = cairn_json(&sandbox, &["index", "--json"]).await;
    assert_eq!(report["skipped"].as_array().unwrap().len(), 2, "{report}");

    // A search whose own sync meets one warns on stderr and still answers.
    write(&sandbox, "memory/2026-03-02.md", b"\xff\xfe notes\n");
    let out = cairn(&sandbox, &["search", "--json", "tomatoes"]).await;
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("memory/2026-03-02.md is not indexed: not UTF-8"),
        "{stderr}"
    );
    let found: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut found = paths(&found);
    found.sort();
    found.dedup();
    assert_eq!(found, ["knowledge/garden.md", "memory/2026-03-01.md"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_query_or_a_bad_limit_is_a_usage_error() {
    let sandbox = notes();
    for args in [
        &["search"][..],
        &["search", "  ", ""],
        &["search", "--json"],
    ] {
        let out = cairn(&sandbox, args).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("no query given"), "{stderr}");
        assert!(out.stdout.is_empty());
    }
    for limit in ["0", "101", "ten"] {
        let out = cairn(&sandbox, &["search", "--limit", limit, "tomatoes"]).await;
        assert_eq!(out.status.code(), Some(2), "--limit {limit}");
    }
    let found = cairn_json(
        &sandbox,
        &["search", "--json", "--limit", "100", "tomatoes"],
    )
    .await;
    assert_eq!(found["stale"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn rebuild_indexes_every_file_again() {
    let sandbox = notes();
    let first = cairn_json(&sandbox, &["index", "--json"]).await;
    assert_eq!(first["changed"], 4);
    let again = cairn_json(&sandbox, &["index", "--json"]).await;
    assert_eq!(
        counts(&again),
        json!({"files": 4, "chunks": 7, "changed": 0, "removed": 0, "skipped": []})
    );
    std::fs::remove_file(sandbox.workspace().join("knowledge/rust.md")).unwrap();
    let rebuilt = cairn_json(&sandbox, &["index", "--rebuild", "--json"]).await;
    assert_eq!(
        counts(&rebuilt),
        json!({"files": 3, "chunks": 6, "changed": 3, "removed": 0, "skipped": []})
    );

    let out = cairn(&sandbox, &["index", "--rebuild"]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.starts_with("index rebuilt: 3 files, 6 chunks in "),
        "{stdout}"
    );
    let found = cairn_json(&sandbox, &["search", "--json", "shed"]).await;
    assert_eq!(paths(&found), ["knowledge/garden.md"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_damaged_index_is_rebuilt_with_a_warning() {
    let sandbox = notes();
    cairn_json(&sandbox, &["index", "--json"]).await;
    let meta = sandbox.workspace().join(".cairn/index/meta.json");
    std::fs::write(meta, "{ not json").unwrap();
    let out = cairn(&sandbox, &["index", "--json"]).await;
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cairn: warning: ") && stderr.contains("rebuilt from the files"),
        "{stderr}"
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        counts(&report),
        json!({"files": 4, "chunks": 7, "changed": 4, "removed": 0, "skipped": []})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn while_another_process_writes_the_index_search_reads_it_and_index_says_so() {
    let sandbox = notes();
    cairn_json(&sandbox, &["index", "--json"]).await;
    write(
        &sandbox,
        "knowledge/new.md",
        "# New\nThe zeppelin leaves at dawn.\n",
    );
    // Hold the index's writer lock the way another Cairn process would.
    let lock = sandbox
        .workspace()
        .join(".cairn/index/.tantivy-writer.lock");
    // flock(1) holds it until its command, which waits for stdin to close, ends.
    let mut holder = tokio::process::Command::new("flock")
        .arg("--close")
        .arg(&lock)
        .args(["sh", "-c", "echo locked; cat >/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(holder.stdout.take().unwrap()).lines();
    assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("locked"));

    let out = cairn(&sandbox, &["index"]).await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("is being written by another Cairn process"),
        "{stderr}"
    );
    assert!(stderr.contains("cairn index"), "{stderr}");
    let out = cairn(&sandbox, &["index", "--rebuild"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("close the app"));

    // Search answers from what the index holds: the old notes, not the new one.
    let found = cairn_json(&sandbox, &["search", "--json", "shed"]).await;
    assert_eq!(found["read_only"], true);
    assert_eq!(paths(&found), ["knowledge/garden.md"]);
    let found = cairn_json(&sandbox, &["search", "--json", "zeppelin"]).await;
    assert_eq!(found["results"], json!([]));
    let out = cairn(&sandbox, &["search", "shed"]).await;
    assert!(String::from_utf8_lossy(&out.stderr).contains("another Cairn process"));

    drop(holder.stdin.take());
    assert!(holder.wait().await.unwrap().success());
    let found = cairn_json(&sandbox, &["search", "--json", "zeppelin"]).await;
    assert_eq!(found["read_only"], false);
    assert_eq!(paths(&found), ["knowledge/new.md"]);
}

/// A conversation exported from Claude, as its `conversations.json` has it.
const CLAUDE_EXPORT: &str = r#"[{
  "uuid": "0b1c", "name": "Garden watering", "created_at": "2026-05-01T08:00:00.000000+00:00",
  "updated_at": "2026-05-01T08:05:00.000000+00:00",
  "chat_messages": [
    {"uuid": "m1", "sender": "human", "text": "How often should I water the zucchini?",
     "content": [{"type": "text", "text": "How often should I water the zucchini?"}],
     "created_at": "2026-05-01T08:00:10.000000+00:00", "attachments": [], "files": []},
    {"uuid": "m2", "sender": "assistant", "text": "Water zucchini deeply twice a week.",
     "content": [{"type": "text", "text": "Water zucchini deeply twice a week."}],
     "created_at": "2026-05-01T08:00:20.000000+00:00", "attachments": [], "files": []}
  ]
}]"#;

#[tokio::test(flavor = "multi_thread")]
async fn an_imported_conversation_is_searchable_and_exports_as_markdown() {
    let sandbox = notes();
    let export = sandbox.home().join("conversations.json");
    std::fs::write(&export, CLAUDE_EXPORT).unwrap();
    let imported = cairn_json(
        &sandbox,
        &["sessions", "import", "--json", export.to_str().unwrap()],
    )
    .await;
    assert_eq!(imported["source"], "Claude");
    let id = imported["sessions"][0].as_str().unwrap().to_string();

    let found = cairn_json(
        &sandbox,
        &["search", "--json", "--corpus", "sessions", "zucchini"],
    )
    .await;
    assert_eq!(paths(&found)[0], format!("sessions/{id}.jsonl"));

    let out = cairn(&sandbox, &["sessions", "export", &id]).await;
    assert_eq!(out.status.code(), Some(0));
    let markdown = String::from_utf8(out.stdout).unwrap();
    assert!(markdown.starts_with("# Garden watering\n"), "{markdown}");
    assert!(markdown.contains("## You"), "{markdown}");
    assert!(
        markdown.contains("Water zucchini deeply twice a week."),
        "{markdown}"
    );

    // An export never writes over a file; a file that is not an export is refused.
    let taken = sandbox.home().join("taken.md");
    std::fs::write(&taken, "mine").unwrap();
    let out = cairn(
        &sandbox,
        &["sessions", "export", &id, "-o", taken.to_str().unwrap()],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&taken).unwrap(), "mine");
    let out = cairn(&sandbox, &["sessions", "import", taken.to_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not a ChatGPT or Claude export"),
        "{stderr}"
    );

    // Deleted: out of the list and the search, kept in .cairn/deleted-sessions/.
    let out = cairn(&sandbox, &["sessions", "rm", &id[..8]]).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let kept = sandbox
        .workspace()
        .join(format!(".cairn/deleted-sessions/{id}.jsonl"));
    assert!(std::fs::read_to_string(kept).unwrap().contains("zucchini"));
    let list = cairn_json(&sandbox, &["sessions", "list", "--json"]).await;
    assert_eq!(list, serde_json::json!([]));
    let found = cairn_json(
        &sandbox,
        &["search", "--json", "--corpus", "sessions", "zucchini"],
    )
    .await;
    assert_eq!(paths(&found), Vec::<&str>::new());
    let out = cairn(&sandbox, &["sessions", "rm", &id]).await;
    assert_eq!(out.status.code(), Some(1), "a deleted session is gone");
}

/// The allocator gives back what a command freed: its first arena is committed as it is
/// used and freed memory is purged at once, set before the allocator's first use (the
/// standard library allocates before `main`, too late for `main` to set them). A
/// `MIMALLOC_*` variable the user sets still wins.
#[tokio::test]
async fn the_allocator_is_tuned_before_its_first_use_and_the_environment_wins() {
    let sandbox = Sandbox::new();
    let options = |extra: &[(&str, &str)]| {
        let mut command = sandbox.cairn(&["--version"]);
        command.env("MIMALLOC_VERBOSE", "1");
        for (name, value) in extra {
            command.env(name, value);
        }
        async move {
            let out = command.output().await.unwrap();
            assert_eq!(out.status.code(), Some(0), "{out:?}");
            String::from_utf8_lossy(&out.stderr).into_owned()
        }
    };
    let tuned = options(&[]).await;
    assert!(tuned.contains("option 'arena_eager_commit': 0"), "{tuned}");
    assert!(tuned.contains("option 'purge_delay': 0"), "{tuned}");
    let chosen = options(&[("MIMALLOC_PURGE_DELAY", "250")]).await;
    assert!(chosen.contains("option 'purge_delay': 250"), "{chosen}");
    assert!(
        chosen.contains("option 'arena_eager_commit': 0"),
        "{chosen}"
    );
}
