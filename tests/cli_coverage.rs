//! What the index reaches, through the real binary: notes anywhere in the workspace, the
//! ignore files and `[memory] exclude`, documents read in child processes (a broken one
//! failing alone), and `cairn index --report` telling every file's status.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use cairn_e2e::{text_stream, tool_calls_stream, Sandbox};
use cairn_testkit::{documents, MockResponse, MockServer};
use pretty_assertions::assert_eq;
use serde_json::json;
use serde_json::Value;

fn put(sandbox: &Sandbox, path: &str, bytes: impl AsRef<[u8]>) {
    let path = sandbox.workspace().join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

async fn cairn_json(sandbox: &Sandbox, args: &[&str]) -> Value {
    let out = sandbox.cairn(args).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_report_tells_every_file_and_documents_are_searched_by_page() {
    let sandbox = Sandbox::new();
    sandbox.write_settings("[memory]\nembedder = \"none\"\nexclude = [\"drafts/\"]\n");
    put(&sandbox, "MEMORY.md", "# Memory\n- Ana keeps bees.\n");
    put(
        &sandbox,
        "projects/garden.md",
        "# Garden\nThe quince needs a frost.\n",
    );
    put(&sandbox, "drafts/idea.md", "An idea about quinces.\n");
    put(&sandbox, "build/.keep.md", "hidden\n");
    put(&sandbox, "build/out.md", "generated quince page\n");
    put(&sandbox, ".gitignore", "build/\n");
    put(&sandbox, "photo.gif", *b"GIF89a\0");
    put(
        &sandbox,
        "papers/orchard.pdf",
        documents::pdf(&["Orchard survey", "Medlars ripen after the first frost."]),
    );
    put(&sandbox, "papers/broken.pdf", "%PDF-1.7\nthis is not a pdf");
    put(
        &sandbox,
        "notes/plan.docx",
        documents::docx(&[(Some(1), "Plan"), (None, "Plant the medlar.")]),
    );

    let report = cairn_json(&sandbox, &["index", "--report", "--json"]).await;
    let files: HashMap<&str, &Value> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f))
        .collect();
    let status = |path: &str| files[path]["status"].as_str().unwrap();
    let reason = |path: &str| files[path]["reason"].as_str().unwrap_or_default();
    assert_eq!(status("projects/garden.md"), "indexed");
    assert_eq!(files["projects/garden.md"]["chunks"], 1);
    assert_eq!(status("papers/orchard.pdf"), "indexed");
    assert_eq!(files["papers/orchard.pdf"]["chunks"], 2);
    assert_eq!(status("notes/plan.docx"), "indexed");
    assert_eq!(status("papers/broken.pdf"), "failed");
    assert!(
        reason("papers/broken.pdf").contains("cannot be read"),
        "{report}"
    );
    assert_eq!(status("drafts"), "skipped");
    assert_eq!(files["drafts"]["folder"], true);
    assert!(reason("drafts").contains("[memory] exclude"), "{report}");
    assert_eq!(status("build"), "skipped");
    assert!(reason("build").contains(".gitignore"), "{report}");
    assert_eq!(status("photo.gif"), "skipped");
    assert!(reason("photo.gif").contains("unsupported"), "{report}");
    assert!(!files.contains_key("build/.keep.md"));
    assert_eq!(report["failed"], 1);
    assert_eq!(report["pending"], 0);

    let found = cairn_json(&sandbox, &["search", "--json", "medlars frost"]).await;
    let hit = &found["results"][0];
    assert_eq!(hit["path"], "papers/orchard.pdf", "{found}");
    assert_eq!(hit["page"], 2, "{found}");
    assert_eq!(hit["citation"], "papers/orchard.pdf#page=2");
    assert_eq!(hit["source"], "note");
    let found = cairn_json(&sandbox, &["search", "--json", "quince"]).await;
    let paths: Vec<&str> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["projects/garden.md"], "{found}");

    // The text report: one line a file, then the totals.
    let out = sandbox
        .cairn(&["index", "--report"])
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("failed   papers/broken.pdf  the PDF cannot be read"),
        "{text}"
    );
    assert!(
        text.contains("skipped  drafts/  excluded by `[memory] exclude`"),
        "{text}"
    );
    assert!(
        text.contains("indexed  papers/orchard.pdf  2 chunks"),
        "{text}"
    );
    assert!(
        text.lines().last().unwrap().starts_with("coverage: "),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_folder_outside_is_searched_and_read_in_place_never_written() {
    let sandbox = Sandbox::new();
    let notes = sandbox.home().join("Notes");
    std::fs::create_dir_all(notes.join("trips")).unwrap();
    std::fs::write(
        notes.join("trips/croatia.md"),
        "# Croatia\nThe ferry to Hvar leaves at nine.\n",
    )
    .unwrap();
    sandbox.write_settings(
        "[memory]\nflush = false\nembedder = \"none\"\nfolders = [\"~/Notes\", \"~/Missing\"]\n",
    );
    let found = cairn_json(&sandbox, &["search", "--json", "ferry"]).await;
    let hit = &found["results"][0];
    assert_eq!(hit["path"], "Notes/trips/croatia.md", "{found}");
    let root = notes.canonicalize().unwrap();
    assert_eq!(hit["folder"], root.to_string_lossy().as_ref(), "{found}");

    // The model reads it by that path, and cannot write there.
    let calls = [
        ("r", "read_file", json!({"path": "Notes/trips/croatia.md"})),
        ("g", "memory_get", json!({"path": "Notes/trips/croatia.md"})),
        (
            "w",
            "write_file",
            json!({"path": "Notes/trips/new.md", "content": "x"}),
        ),
        (
            "e",
            "edit_file",
            json!({"path": "Notes/trips/croatia.md", "old": "nine", "new": "ten"}),
        ),
    ];
    let server = MockServer::start(vec![
        MockResponse::sse(tool_calls_stream(&calls)),
        MockResponse::sse(text_stream("Done.")),
    ])
    .await;
    let url = server.url();
    let out = sandbox
        .cairn(&[
            "--provider",
            "openai",
            "--base-url",
            &url,
            "--model",
            "m",
            "ask",
            "--yes",
            "go",
        ])
        .output()
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = server.requests();
    let body = requests.last().unwrap().body_json().unwrap();
    let results: Vec<String> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(results[0].contains("ferry to Hvar"), "{results:?}");
    assert!(results[1].contains("ferry to Hvar"), "{results:?}");
    assert!(results[2].contains("never writes it"), "{results:?}");
    assert!(results[3].contains("never writes it"), "{results:?}");
    assert!(!notes.join("trips/new.md").exists());
    assert_eq!(
        std::fs::read_to_string(notes.join("trips/croatia.md")).unwrap(),
        "# Croatia\nThe ferry to Hvar leaves at nine.\n"
    );
}
