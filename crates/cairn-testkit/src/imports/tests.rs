//! The import graph of a small made-up crate, one way of reaching a module per file.

use std::path::{Path, PathBuf};

use super::{Graph, Options};

/// A crate with an agent, tools that reach it in every way a text search misses, and a
/// circle of three files.
fn made_up_crate() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "lib.rs",
            "//! A crate.\npub mod agent;\npub mod tools;\nmod facade;\nmod hub;\nmod ring;\n\
             pub use agent::Agent;\n",
        ),
        (
            "agent.rs",
            "pub mod run;\n#[derive(Debug)]\npub struct Agent;\n\
             impl Agent { pub fn new() -> Self { Agent } }\n\
             pub fn busy() -> bool { let run = true; run }\n",
        ),
        ("agent/run.rs", "pub fn go() {}\n"),
        (
            "tools/mod.rs",
            "pub mod grouped;\npub mod reexport;\npub mod upward;\npub mod inline;\n\
             pub mod globbed;\npub mod tested;\npub mod plain;\npub struct Tool;\n",
        ),
        (
            "tools/grouped.rs",
            "use crate::{agent::{self, run::go}, tools::Tool};\n",
        ),
        (
            "tools/reexport.rs",
            "use crate::Agent as Boss;\npub fn make() -> Boss { Boss::new() }\n",
        ),
        (
            "tools/upward.rs",
            "pub fn f() { super::super::agent::run::go(); }\n",
        ),
        (
            "tools/inline.rs",
            "pub fn f() -> usize {\n    let agent = 1;\n    assert_eq!(agent, 1);\n\
             \x20   let v: Vec<crate::agent::Agent> = Vec::new();\n    std::mem::drop(v);\n\
             \x20   format!(\"{:?}\", crate::hub::Hub).len()\n}\n",
        ),
        (
            "tools/globbed.rs",
            "pub fn f() { let _ = crate::facade::Deep; crate::facade::made_by_a_macro(); }\n",
        ),
        (
            "tools/tested.rs",
            "pub fn f() {}\n#[cfg(test)]\nmod tests { use crate::agent::Agent; }\n\
             #[cfg(all(test, unix))]\nmod more;\n",
        ),
        ("tools/tested/more.rs", "use crate::hub::Hub;\n"),
        (
            "tools/plain.rs",
            "use std::collections::HashMap;\n\
             pub(crate) fn f(map: HashMap<String, String>) -> usize { map.len() }\n",
        ),
        ("facade/mod.rs", "mod inner;\npub use inner::*;\n"),
        ("facade/inner.rs", "pub struct Deep;\n"),
        (
            "hub.rs",
            "#[derive(Debug)]\npub struct Hub;\n#[path = \"spoke_file.rs\"]\nmod spoke;\n\
             pub fn hub() { spoke::spoke() }\n",
        ),
        ("spoke_file.rs", "pub fn spoke() { crate::ring::ring() }\n"),
        ("ring.rs", "pub fn ring() { crate::hub::hub() }\n"),
    ];
    for (path, text) in files {
        crate::write(dir.path(), path, text);
    }
    dir
}

fn graph(options: Options) -> Graph {
    let dir = made_up_crate();
    Graph::of_crate_with(dir.path(), options).unwrap()
}

/// The files `file` has an edge to, as strings.
fn reached(graph: &Graph, file: &str) -> Vec<String> {
    graph
        .edges_from(Path::new(file))
        .map(|e| e.to.display().to_string())
        .collect()
}

#[test]
fn a_grouped_use_reaches_every_module_it_names() {
    let graph = graph(Options::default());
    assert_eq!(
        reached(&graph, "tools/grouped.rs"),
        ["agent/run.rs", "agent.rs", "tools/mod.rs"]
    );
}

#[test]
fn a_name_re_exported_by_lib_rs_lands_in_the_file_defining_it() {
    let graph = graph(Options::default());
    assert_eq!(reached(&graph, "tools/reexport.rs"), ["agent.rs"]);
    let edge = graph.edges_from(Path::new("tools/reexport.rs")).next();
    assert_eq!(edge.map(|e| e.via), Some("crate::Agent"));
}

#[test]
fn super_paths_climb_the_module_tree() {
    let graph = graph(Options::default());
    assert_eq!(reached(&graph, "tools/upward.rs"), ["agent/run.rs"]);
}

#[test]
fn paths_written_inline_count_without_a_use_and_local_names_do_not() {
    let graph = graph(Options::default());
    // `agent` is a local variable there; `crate::hub::Hub` is inside `format!`.
    assert_eq!(reached(&graph, "tools/inline.rs"), ["agent.rs", "hub.rs"]);
    // `run` there is a variable, not the module `agent::run`.
    assert_eq!(reached(&graph, "agent.rs"), Vec::<String>::new());
}

#[test]
fn a_glob_re_export_sends_names_on_to_the_globbed_module() {
    let graph = graph(Options::default());
    assert_eq!(reached(&graph, "tools/globbed.rs"), ["facade/inner.rs"]);
}

#[test]
fn test_modules_are_left_out_unless_asked_for() {
    let without = graph(Options::default());
    assert_eq!(reached(&without, "tools/tested.rs"), Vec::<String>::new());
    assert!(!without
        .files()
        .any(|f| f == Path::new("tools/tested/more.rs")));

    let with = graph(Options { tests: true });
    assert_eq!(reached(&with, "tools/tested.rs"), ["agent.rs"]);
    assert_eq!(reached(&with, "tools/tested/more.rs"), ["hub.rs"]);
}

#[test]
fn other_crates_and_visibility_make_no_edge() {
    let graph = graph(Options::default());
    assert_eq!(reached(&graph, "tools/plain.rs"), Vec::<String>::new());
}

#[test]
fn a_circle_of_files_is_found_through_a_path_attribute() {
    let graph = graph(Options::default());
    let circle: Vec<PathBuf> = ["hub.rs", "ring.rs", "spoke_file.rs"]
        .iter()
        .map(PathBuf::from)
        .collect();
    assert_eq!(graph.cycles(), vec![circle]);
}

#[test]
fn the_shortest_chain_names_each_step() {
    let graph = graph(Options::default());
    let chain = graph
        .path(
            |f| f == Path::new("tools/inline.rs"),
            |f| f == Path::new("ring.rs"),
        )
        .unwrap();
    assert_eq!(
        graph.explain(&chain),
        "tools/inline.rs -> hub.rs (crate::hub::Hub) -> spoke_file.rs (spoke::spoke) \
         -> ring.rs (crate::ring::ring)"
    );
    let none = graph.path(
        |f| f == Path::new("agent/run.rs"),
        |f| f == Path::new("hub.rs"),
    );
    assert_eq!(none, None);
}

#[test]
fn a_module_whose_file_is_missing_is_an_error_naming_it() {
    let dir = made_up_crate();
    crate::write(dir.path(), "lib.rs", "mod gone;\n");
    let error = Graph::of_crate(dir.path()).unwrap_err();
    assert!(error.contains("lib.rs declares `mod gone;`"), "{error}");
}
