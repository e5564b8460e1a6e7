//! The layering as code: every dependency between the workspace's crates, read from
//! `cargo metadata`, must be one this file allows. A crate cannot import what it does not
//! depend on, so with this list Cargo keeps the arrows pointing one way: adding an edge
//! that is not here fails the tests, and removing one from here is how the shape tightens.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What each workspace crate may depend on (normal and build dependencies), and nothing
/// else. Tests may also use `cairn-testkit` and `cairn-e2e` (the test support crates).
const ALLOWED: &[(&str, &[&str])] = &[
    ("cairn-protocol", &[]),
    ("cairn-process", &[]),
    ("cairn-testkit", &[]),
    ("cairn-e2e", &[]),
    // The model files, their fetching and the llama.cpp backend: a leaf.
    ("cairn-models", &[]),
    ("cairn-llm", &["cairn-protocol", "cairn-models"]),
    // The embedding models never reach the chat providers.
    ("cairn-embed", &["cairn-models"]),
    ("cairn-extract", &["cairn-process"]),
    // The memory index never calls a chat model.
    ("cairn-memory", &["cairn-protocol", "cairn-extract"]),
    // The tools never reach the agent running them, nor a model: what they need of the
    // agent is a trait of theirs.
    (
        "cairn-tools",
        &[
            "cairn-protocol",
            "cairn-memory",
            "cairn-process",
            "cairn-extract",
        ],
    ),
    // MCP both ways: over the tools, never the agent.
    (
        "cairn-mcp",
        &[
            "cairn-protocol",
            "cairn-memory",
            "cairn-process",
            "cairn-tools",
        ],
    ),
    (
        "cairn-core",
        &[
            "cairn-protocol",
            "cairn-llm",
            "cairn-memory",
            "cairn-process",
            "cairn-tools",
            "cairn-mcp",
        ],
    ),
    // Assembling Cairn for a front end: settings, secrets, models and the launch.
    (
        "cairn-app",
        &[
            "cairn-protocol",
            "cairn-llm",
            "cairn-models",
            "cairn-embed",
            "cairn-extract",
            "cairn-memory",
            "cairn-process",
            "cairn-core",
        ],
    ),
    // The front ends reach everything through cairn-app; nothing under them imports them,
    // nor Tauri.
    ("cairn-cli", &["cairn-protocol", "cairn-app"]),
    ("cairn-desktop", &["cairn-protocol", "cairn-app"]),
    ("cairn-bare-window", &["cairn-desktop"]),
    (
        "cairn-bench",
        &[
            "cairn-protocol",
            "cairn-llm",
            "cairn-models",
            "cairn-embed",
            "cairn-extract",
            "cairn-memory",
            "cairn-process",
            "cairn-core",
            "cairn-app",
            "cairn-testkit",
            "cairn-e2e",
        ],
    ),
];

/// The test support crates any crate's tests may use.
const TEST_SUPPORT: &[&str] = &["cairn-testkit", "cairn-e2e"];

/// One dependency between workspace crates: from, to, and its kind ("normal", "build",
/// "dev").
type Edge = (String, String, String);

/// The workspace's packages, as `cargo metadata` describes them.
fn packages() -> Vec<serde_json::Value> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
            "--locked",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    metadata["packages"].as_array().cloned().unwrap_or_default()
}

/// The workspace's crates and the dependencies between them.
fn workspace() -> (BTreeSet<String>, Vec<Edge>) {
    let packages = packages();
    let names: BTreeSet<String> = packages
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_string))
        .collect();
    let mut edges = Vec::new();
    for package in &packages {
        let from = package["name"].as_str().unwrap_or_default();
        for dependency in package["dependencies"].as_array().into_iter().flatten() {
            let to = dependency["name"].as_str().unwrap_or_default();
            if names.contains(to) {
                let kind = dependency["kind"].as_str().unwrap_or("normal");
                edges.push((from.to_string(), to.to_string(), kind.to_string()));
            }
        }
    }
    (names, edges)
}

/// The edges the list does not allow.
fn refused(names: &BTreeSet<String>, edges: &[Edge]) -> Vec<String> {
    let mut out = Vec::new();
    for name in names {
        if !ALLOWED.iter().any(|(crate_, _)| crate_ == name) {
            out.push(format!("{name}: a crate the layering does not name yet"));
        }
    }
    for (from, to, kind) in edges {
        let allowed = ALLOWED
            .iter()
            .find(|(crate_, _)| crate_ == from)
            .is_some_and(|(_, may)| may.contains(&to.as_str()));
        let test_support = kind == "dev" && TEST_SUPPORT.contains(&to.as_str());
        if !allowed && !test_support {
            out.push(format!("{from} -> {to} ({kind})"));
        }
    }
    out
}

#[test]
fn every_dependency_between_the_crates_is_allowed() {
    let (names, edges) = workspace();
    assert!(
        names.contains("cairn-core") && edges.len() > 20,
        "{edges:?}"
    );
    let refused = refused(&names, &edges);
    assert!(
        refused.is_empty(),
        "dependencies the layering does not allow (tests/layering.rs):\n{}",
        refused.join("\n")
    );
}

/// The check itself refuses an edge against the arrows, and a crate nobody placed.
#[test]
fn an_edge_against_the_arrows_is_refused() {
    let (mut names, mut edges) = workspace();
    edges.push(("cairn-memory".into(), "cairn-llm".into(), "normal".into()));
    edges.push(("cairn-core".into(), "cairn-desktop".into(), "normal".into()));
    edges.push(("cairn-llm".into(), "cairn-core".into(), "dev".into()));
    edges.push(("cairn-tools".into(), "cairn-core".into(), "normal".into()));
    edges.push(("cairn-mcp".into(), "cairn-core".into(), "normal".into()));
    edges.push(("cairn-core".into(), "cairn-app".into(), "normal".into()));
    names.insert("cairn-new".into());
    assert_eq!(
        refused(&names, &edges),
        [
            "cairn-new: a crate the layering does not name yet",
            "cairn-memory -> cairn-llm (normal)",
            "cairn-core -> cairn-desktop (normal)",
            "cairn-llm -> cairn-core (dev)",
            "cairn-tools -> cairn-core (normal)",
            "cairn-mcp -> cairn-core (normal)",
            "cairn-core -> cairn-app (normal)",
        ]
    );
}

/// Each workspace crate's name and folder.
fn crate_folders() -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = packages()
        .iter()
        .filter_map(|p| {
            let manifest = Path::new(p["manifest_path"].as_str()?);
            Some((p["name"].as_str()?.to_string(), manifest.parent()?.into()))
        })
        .collect();
    out.sort();
    out
}

/// The most files one import circle may hold: past it, no file of the circle can be read,
/// tested or moved without the others.
const MOST_FILES_IN_A_CIRCLE: usize = 4;

/// The circles of a crate's import graph that hold more than [`MOST_FILES_IN_A_CIRCLE`]
/// files.
fn too_large(name: &str, graph: &cairn_testkit::imports::Graph) -> Vec<String> {
    let mut found = Vec::new();
    for circle in graph.cycles() {
        if circle.len() > MOST_FILES_IN_A_CIRCLE {
            let files: Vec<String> = circle.iter().map(|f| f.display().to_string()).collect();
            found.push(format!(
                "{name}: {} files: {}",
                files.len(),
                files.join(", ")
            ));
        }
    }
    found
}

#[test]
fn no_import_circle_holds_more_than_four_files() {
    let mut found = Vec::new();
    let crates = crate_folders();
    assert!(crates.len() > 10, "{crates:?}");
    for (name, folder) in crates {
        let src = folder.join("src");
        if !src.is_dir() {
            continue;
        }
        let graph = cairn_testkit::imports::Graph::of_crate(&src).unwrap();
        found.extend(too_large(&name, &graph));
    }
    assert!(
        found.is_empty(),
        "import circles of more than {MOST_FILES_IN_A_CIRCLE} files (tests/layering.rs):\n{}",
        found.join("\n")
    );
}

/// The check itself: a circle of five files is refused, one of four is not.
#[test]
fn a_circle_of_five_files_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let names = ["a", "b", "c", "d", "e"];
    let mut lib = String::new();
    for (i, name) in names.iter().enumerate() {
        let next = names[(i + 1) % names.len()];
        lib.push_str(&format!("pub mod {name};\n"));
        std::fs::write(
            src.join(format!("{name}.rs")),
            format!("pub struct T;\npub fn f() -> crate::{next}::T {{ crate::{next}::T }}\n"),
        )
        .unwrap();
    }
    std::fs::write(src.join("lib.rs"), lib).unwrap();
    let graph = cairn_testkit::imports::Graph::of_crate(src).unwrap();
    assert_eq!(
        too_large("cairn-new", &graph),
        ["cairn-new: 5 files: a.rs, b.rs, c.rs, d.rs, e.rs"]
    );
    // d.rs leads back to a.rs: the circle is four files, and allowed.
    std::fs::write(
        src.join("d.rs"),
        "pub struct T;\npub fn f() -> crate::a::T { crate::a::T }\n",
    )
    .unwrap();
    let graph = cairn_testkit::imports::Graph::of_crate(src).unwrap();
    assert!(too_large("cairn-new", &graph).is_empty());
}

/// The Rust files of every workspace crate (sources, tests, build scripts, benchmarks), by
/// crate, with their lines.
fn rust_files() -> Vec<(String, PathBuf, usize)> {
    let mut out = Vec::new();
    for (name, folder) in crate_folders() {
        let mut folders = vec![folder.clone()];
        while let Some(dir) = folders.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let file = path.file_name().unwrap().to_string_lossy().to_string();
                if path.is_dir() {
                    // Build output, npm packages and generated schemas; and a crate inside
                    // another's folder is counted as itself.
                    let own = path.join("Cargo.toml").is_file();
                    if !own && !["target", "node_modules", "gen"].contains(&file.as_str()) {
                        folders.push(path);
                    }
                } else if file.ends_with(".rs") {
                    let lines = std::fs::read_to_string(&path).unwrap().lines().count();
                    out.push((name.clone(), path, lines));
                }
            }
        }
    }
    out.sort();
    out
}

/// The longest a Rust file may be.
const MOST_LINES_IN_A_FILE: usize = 600;
/// The most of the workspace's Rust the harness may hold, in percent.
const MOST_OF_THE_LINES_IN_CORE: usize = 30;

#[test]
fn no_file_is_long_and_the_harness_stays_a_minority() {
    let files = rust_files();
    assert!(files.len() > 300, "{}", files.len());
    let long: Vec<String> = files
        .iter()
        .filter(|(_, _, lines)| *lines > MOST_LINES_IN_A_FILE)
        .map(|(_, path, lines)| format!("{}: {lines} lines", path.display()))
        .collect();
    assert!(
        long.is_empty(),
        "files over {MOST_LINES_IN_A_FILE} lines:\n{}",
        long.join("\n")
    );
    let total: usize = files.iter().map(|(_, _, lines)| lines).sum();
    let core: usize = files
        .iter()
        .filter(|(name, _, _)| name == "cairn-core")
        .map(|(_, _, lines)| lines)
        .sum();
    assert!(
        core * 100 <= total * MOST_OF_THE_LINES_IN_CORE,
        "cairn-core holds {core} of {total} lines of Rust, more than \
         {MOST_OF_THE_LINES_IN_CORE}%"
    );
}
