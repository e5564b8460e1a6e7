//! The name -> tool map offered to the model.

use std::collections::BTreeMap;
use std::sync::Arc;

use cairn_protocol::ToolSpec;

use super::{handlers, Tool};

/// The tools of a run, by name.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    /// The specs of `tools`, built when the set changes rather than on every request.
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

    fn refresh_specs(&mut self) {
        self.specs = Arc::new(self.tools.values().map(|t| t.spec()).collect());
        self.spec_tokens = self
            .specs
            .iter()
            .map(|t| {
                let text = serde_json::to_string(t).unwrap_or_default();
                crate::upkeep::transcript::estimate_text(&text)
            })
            .sum();
    }

    /// About how many tokens the tool specs cost in a request.
    pub fn estimated_tokens(&self) -> u64 {
        self.spec_tokens
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    pub fn names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    /// Specs for the model, sorted by name.
    pub fn specs(&self) -> Arc<Vec<ToolSpec>> {
        self.specs.clone()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}
