//! Search by meaning end to end: the real `cairn` with the bundled embedding model linked
//! into its home, and without it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Output;

use cairn_e2e::Sandbox;
use serde_json::Value;

fn notes(embedder: bool) -> Sandbox {
    let sandbox = Sandbox::new();
    if embedder {
        sandbox.install_embedder();
    }
    let write = |path: &str, text: &str| {
        let path = sandbox.workspace().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "memory/2026-03-01.md",
        "# 2026-03-01\n\n## 09:10\n- Booked the dentist for March 14.\n",
    );
    write(
        "knowledge/garden.md",
        "# Garden\n\nTomatoes need sun.\nThe blue watering can is in the shed.\n",
    );
    write(
        "knowledge/transport.md",
        "# Transport\n\nWe agreed to sell the old vehicle before winter and cycle instead.\n",
    );
    sandbox
}

async fn cairn(sandbox: &Sandbox, args: &[&str]) -> Output {
    sandbox.cairn(args).output().await.unwrap()
}

async fn json(sandbox: &Sandbox, args: &[&str]) -> Value {
    let out = cairn(sandbox, args).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn first_path(found: &Value) -> &str {
    found["results"][0]["path"].as_str().unwrap_or("(no hit)")
}

#[tokio::test(flavor = "multi_thread")]
async fn index_makes_the_vectors_and_search_finds_what_was_meant() {
    let sandbox = notes(true);
    let report = json(&sandbox, &["index", "--json"]).await;
    assert_eq!(
        report["embedding_model"], "all-MiniLM-L6-v2 (int8, cairn-onnx-4)",
        "{report}"
    );
    assert_eq!(report["embedded"], report["chunks"], "{report}");
    assert_eq!(report["to_embed"], report["embedded"], "{report}");

    let question = "getting rid of my automobile";
    let found = json(&sandbox, &["search", "--json", question]).await;
    assert_eq!(found["mode"], "hybrid", "{found}");
    assert_eq!(first_path(&found), "knowledge/transport.md", "{found}");
    assert_eq!(found["coverage"]["embedded"], found["coverage"]["chunks"]);
    let found = json(
        &sandbox,
        &["search", "--json", "--mode", "semantic", "tooth doctor"],
    )
    .await;
    assert_eq!(first_path(&found), "memory/2026-03-01.md", "{found}");
    let found = json(
        &sandbox,
        &["search", "--json", "--mode", "keyword", question],
    )
    .await;
    assert_eq!(found["mode"], "keyword");
    assert_ne!(first_path(&found), "knowledge/transport.md", "{found}");
    // The exact words still lead.
    let found = json(&sandbox, &["search", "--json", "blue watering can"]).await;
    assert_eq!(first_path(&found), "knowledge/garden.md", "{found}");
}

/// The first search of notes just written, with no `cairn index` before it, waits the
/// moment their vectors take and finds by meaning.
#[tokio::test(flavor = "multi_thread")]
async fn the_first_search_finds_notes_just_written_by_meaning() {
    let sandbox = notes(true);
    let found = json(
        &sandbox,
        &["search", "--json", "getting rid of my automobile"],
    )
    .await;
    assert_eq!(found["mode"], "hybrid", "{found}");
    assert_eq!(
        found["coverage"]["embedded"], found["coverage"]["chunks"],
        "{found}"
    );
    assert_eq!(first_path(&found), "knowledge/transport.md", "{found}");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_model_search_is_by_keyword_and_meaning_says_how_to_get_it() {
    let sandbox = notes(false);
    let found = json(&sandbox, &["search", "--json", "dentist"]).await;
    assert_eq!(found["mode"], "keyword");
    assert_eq!(first_path(&found), "memory/2026-03-01.md");
    let out = cairn(&sandbox, &["search", "--mode", "semantic", "dentist"]).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("fetch-model.sh"), "{stderr}");
    let out = cairn(&sandbox, &["search", "--mode", "fuzzy", "dentist"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("keyword, semantic or hybrid"));
    let report = json(&sandbox, &["index", "--json"]).await;
    assert_eq!(report["embedding_model"], Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn no_embed_leaves_the_vectors_for_later() {
    let sandbox = notes(true);
    let report = json(&sandbox, &["index", "--json", "--no-embed"]).await;
    assert_eq!(report["embedding_model"], Value::Null);
    assert_eq!(report["embedded"], 0);
    let report = json(&sandbox, &["index", "--json"]).await;
    assert_eq!(report["embedded"], report["chunks"], "{report}");
}

/// Vectors record the engine that made them: a workspace embedded by the engine built in
/// (candle, before ONNX Runtime was installed) is embedded again by the new one, whole,
/// and search by meaning finds the same notes.
#[tokio::test(flavor = "multi_thread")]
async fn a_new_engine_embeds_everything_again() {
    let sandbox = notes(true);
    let runtime = sandbox.home().join(".local/share/cairn/models/onnxruntime");
    let linked = std::fs::read_link(&runtime).unwrap();
    std::fs::remove_file(&runtime).unwrap();
    let report = json(&sandbox, &["index", "--json"]).await;
    assert_eq!(report["embedding_model"], "all-MiniLM-L6-v2", "{report}");
    assert_eq!(report["embedded"], report["chunks"], "{report}");
    let question = "getting rid of my automobile";
    let before = json(
        &sandbox,
        &["search", "--json", "--mode", "semantic", question],
    )
    .await;
    assert_eq!(first_path(&before), "knowledge/transport.md", "{before}");

    std::os::unix::fs::symlink(linked, &runtime).unwrap();
    let report = json(&sandbox, &["index", "--json"]).await;
    assert_eq!(
        report["embedding_model"], "all-MiniLM-L6-v2 (int8, cairn-onnx-4)",
        "{report}"
    );
    assert_eq!(report["embedded"], report["chunks"], "{report}");
    let after = json(
        &sandbox,
        &["search", "--json", "--mode", "semantic", question],
    )
    .await;
    assert_eq!(first_path(&after), "knowledge/transport.md", "{after}");
    assert_eq!(
        after["coverage"]["embedded"], after["coverage"]["chunks"],
        "{after}"
    );
}
