//! The name -> tool map offered to the model.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use cairn_protocol::ToolSpec;

use super::{handlers, Tool};

/// The tools of a run, by name. An active subset may be set: the other tools stay known
/// but are neither offered to the model nor run.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    /// The names offered (`None`: every tool).
    active: Option<BTreeSet<String>>,
    /// The specs of the offered tools, built when they change rather than on every request.
    specs: Arc<Vec<ToolSpec>>,
    /// Estimated tokens of `specs` in a request.
    spec_tokens: u64,
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// The built-in tools: read_file, write_file, edit_file, list_dir, grep, bash.
    pub fn builtin() -> Self {
        let mut registry = Self::new();
        registry.extend(handlers::builtin());
        registry
    }

    /// The built-in tools plus the memory tools over `index`.
    pub fn with_memory(index: Option<cairn_memory::MemoryIndex>) -> Self {
        let mut registry = Self::builtin();
        registry.extend(handlers::memory(index));
        registry
    }

    /// Adds a tool, replacing any tool of the same name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.spec().name, tool);
        self.refresh_specs();
    }

    /// Adds tools, replacing any of the same names; the specs are built once for all.
    pub fn extend(&mut self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) {
        for tool in tools {
            self.tools.insert(tool.spec().name, tool);
        }
        self.refresh_specs();
    }

    /// Removes a tool; returns whether it was there.
    pub fn remove(&mut self, name: &str) -> bool {
        let removed = self.tools.remove(name).is_some();
        self.refresh_specs();
        removed
    }

    /// Puts `tools` in place of the MCP servers' tools (`<server>__<tool>`) it had.
    pub fn replace_mcp(&mut self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) {
        self.tools.retain(|name, _| !name.contains("__"));
        self.extend(tools);
    }

    /// Keeps only the named tools.
    pub fn retain(&mut self, names: &[String]) {
        self.tools.retain(|name, _| names.contains(name));
        self.refresh_specs();
    }

    /// Offers only `names` (`None`: every tool); an unknown name is refused and nothing
    /// changes. A tool added later (an MCP server's) is offered only if named here.
    pub fn set_active(&mut self, names: Option<&[String]>) -> Result<(), Vec<String>> {
        if let Some(names) = names {
            let unknown: Vec<String> = names
                .iter()
                .filter(|n| !self.tools.contains_key(*n))
                .cloned()
                .collect();
            if !unknown.is_empty() {
                return Err(unknown);
            }
        }
        self.active = names.map(|n| n.iter().cloned().collect());
        self.refresh_specs();
        Ok(())
    }

    /// [`Self::set_active`] with the names it does not know left out rather than refused
    /// (a subset checked earlier, applied to tools that have changed since).
    pub fn set_active_known(&mut self, names: Option<&[String]>) {
        let known: Option<Vec<String>> = names.map(|names| {
            names
                .iter()
                .filter(|n| self.tools.contains_key(*n))
                .cloned()
                .collect()
        });
        let _ = self.set_active(known.as_deref());
    }

    /// Every tool's name, offered or not.
    pub fn all_names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    fn offered(&self) -> impl Iterator<Item = (&String, &Arc<dyn Tool>)> {
        self.tools
            .iter()
            .filter(|(name, _)| self.active.as_ref().is_none_or(|a| a.contains(*name)))
    }

    fn refresh_specs(&mut self) {
        self.specs = Arc::new(self.offered().map(|(_, t)| t.spec()).collect());
        self.spec_tokens = self
            .specs
            .iter()
            .map(|t| {
                let text = serde_json::to_string(t).unwrap_or_default();
                crate::output::estimate_text(&text)
            })
            .sum();
    }

    /// About how many tokens the tool specs cost in a request.
    pub fn estimated_tokens(&self) -> u64 {
        self.spec_tokens
    }

    /// An offered tool.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.offered().find(|(n, _)| *n == name).map(|(_, t)| t)
    }

    /// The offered tools' names.
    pub fn names(&self) -> Vec<String> {
        self.offered().map(|(n, _)| n.clone()).collect()
    }

    /// Specs for the model, sorted by name.
    pub fn specs(&self) -> Arc<Vec<ToolSpec>> {
        self.specs.clone()
    }

    /// Whether no tool is offered.
    pub fn is_empty(&self) -> bool {
        self.offered().next().is_none()
    }
}
