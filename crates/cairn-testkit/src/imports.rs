//! The import graph of a crate: which of its source files names items of which other file.
//!
//! A layering rule ("the tools never use the agent") kept by searching the text for a name
//! misses `use crate::Agent` through a re-export, grouped `use crate::{agent::X}` trees,
//! `super::super::agent` and paths written inline without a `use`. [`Graph`] reads the files
//! with `syn` instead and resolves every path to the module it lands in:
//!
//! - the module tree comes from `mod x;` (`x.rs`, `x/mod.rs`, `#[path]`) and inline `mod x {}`
//!   blocks, which belong to their file; `#[cfg(test)]` items are left out unless
//!   [`Options::tests`] asks for them;
//! - a path counts when it starts with `crate`, `self`, `super` or a name in scope (a child
//!   module, an item, a `use` import with its groups, globs and renames); paths in `use`
//!   trees, expressions, types, patterns, trait bounds and macro paths all count, and so do
//!   those in a macro's body when it reads as expressions or statements (`format!`,
//!   `assert_eq!`, `vec!`);
//! - re-exports are followed (`pub use agent::Agent;` in `lib.rs` makes `crate::Agent` land in
//!   the agent's file), and a name a module does not define is taken from its glob import;
//!   the `pub use` line itself is a reference too, so a `mod.rs` that re-exports its
//!   children has an edge to each of them.
//!
//! What it cannot see: calls of methods (`x.run()` names no path), items made by macros,
//! paths inside `macro_rules!` bodies and macro bodies that are not Rust expressions
//! (`json!`, `select!`), `include!`d files, the crate's own name used from `main.rs`, and
//! `cfg`s other than `test` (both sides of `#[cfg(unix)]` / `#[cfg(not(unix))]` count). A
//! `use` inside a function counts for its whole module, and a lone name in code (`work`)
//! never lands on a module of that name, since it is a variable or a type.

mod load;
mod resolve;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

/// What to read.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Read `#[cfg(test)]` modules and items too (tests may reach anything, so by default
    /// they are left out).
    pub tests: bool,
}

/// One arrow of the graph: `from` names something that lives in `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge<'a> {
    pub to: &'a Path,
    /// The first path written in `from` that lands in `to`, as written (`crate::Agent`).
    pub via: &'a str,
}

/// The files of a crate (relative to its `src`) and which names which.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    edges: BTreeMap<PathBuf, BTreeMap<PathBuf, String>>,
}

impl Graph {
    /// The graph of the crate whose sources are in `src` (its `lib.rs`, `main.rs` and
    /// `bin/*.rs`), tests left out.
    pub fn of_crate(src: &Path) -> Result<Graph, String> {
        Graph::of_crate_with(src, Options::default())
    }

    pub fn of_crate_with(src: &Path, options: Options) -> Result<Graph, String> {
        let tree = load::load(src, options.tests)?;
        let mut edges: BTreeMap<PathBuf, BTreeMap<PathBuf, String>> = tree
            .files
            .iter()
            .map(|f| (f.clone(), BTreeMap::new()))
            .collect();
        for reference in &tree.references {
            let Some(to) = tree.land(reference) else {
                continue;
            };
            let from = &tree.modules[reference.module].file;
            let to = &tree.modules[to].file;
            if from != to {
                let out = edges.entry(from.clone()).or_default();
                out.entry(to.clone())
                    .or_insert_with(|| reference.path.join("::"));
            }
        }
        Ok(Graph { edges })
    }

    /// Every file of the crate, relative to its `src`, in order.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.edges.keys().map(PathBuf::as_path)
    }

    /// The files `file` names something of.
    pub fn edges_from(&self, file: &Path) -> impl Iterator<Item = Edge<'_>> {
        self.edges
            .get(file)
            .into_iter()
            .flatten()
            .map(|(to, via)| Edge { to, via })
    }

    /// The shortest chain of files from one matching `from` to one matching `to`, both
    /// ends included (a file matching both is a chain of one).
    pub fn path(
        &self,
        from: impl Fn(&Path) -> bool,
        to: impl Fn(&Path) -> bool,
    ) -> Option<Vec<PathBuf>> {
        let mut came_from: BTreeMap<&Path, Option<&Path>> = BTreeMap::new();
        let mut queue: VecDeque<&Path> = self.files().filter(|f| from(f)).collect();
        queue.iter().for_each(|f| {
            came_from.insert(f, None);
        });
        while let Some(file) = queue.pop_front() {
            if to(file) {
                let mut chain = vec![file.to_path_buf()];
                let mut at = file;
                while let Some(Some(back)) = came_from.get(at) {
                    chain.push(back.to_path_buf());
                    at = back;
                }
                chain.reverse();
                return Some(chain);
            }
            for edge in self.edges_from(file) {
                if !came_from.contains_key(edge.to) {
                    came_from.insert(edge.to, Some(file));
                    queue.push_back(edge.to);
                }
            }
        }
        None
    }

    /// A chain of files with the path that links each to the next:
    /// `a.rs -> b.rs (crate::b::X) -> c.rs (super::c::f)`.
    pub fn explain(&self, chain: &[PathBuf]) -> String {
        let mut out = chain
            .first()
            .map(|f| f.display().to_string())
            .unwrap_or_default();
        for pair in chain.windows(2) {
            let via = self.edges_from(&pair[0]).find(|e| e.to == pair[1]);
            let via = via.map(|e| e.via).unwrap_or("?");
            out.push_str(&format!(" -> {} ({via})", pair[1].display()));
        }
        out
    }

    /// The import circles: sets of more than one file where each reaches every other
    /// (strongly connected components), largest first, each sorted.
    pub fn cycles(&self) -> Vec<Vec<PathBuf>> {
        let files: Vec<&Path> = self.files().collect();
        let index: BTreeMap<&Path, usize> =
            files.iter().enumerate().map(|(i, f)| (*f, i)).collect();
        let next: Vec<Vec<usize>> = files
            .iter()
            .map(|f| {
                self.edges_from(f)
                    .filter_map(|e| index.get(e.to).copied())
                    .collect()
            })
            .collect();
        let mut cycles: Vec<Vec<PathBuf>> = strong_components(&next)
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| {
                let mut c: Vec<PathBuf> = c.into_iter().map(|i| files[i].to_path_buf()).collect();
                c.sort();
                c
            })
            .collect();
        cycles.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        cycles
    }
}

/// Tarjan's strongly connected components of the graph `next` (node -> its successors),
/// walked without recursion.
fn strong_components(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = next.len();
    let mut order = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut components = Vec::new();
    let mut counter = 0;
    for start in 0..n {
        if order[start] != usize::MAX {
            continue;
        }
        // (node, index of the next successor to look at)
        let mut work = vec![(start, 0)];
        while let Some(top) = work.last_mut() {
            let (v, i) = *top;
            if order[v] == usize::MAX {
                order[v] = counter;
                low[v] = counter;
                counter += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = next[v].get(i) {
                top.1 += 1;
                if order[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(order[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == order[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                components.push(component);
            }
        }
    }
    components
}
