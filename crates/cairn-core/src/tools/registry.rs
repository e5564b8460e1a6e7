//! The name -> tool map offered to the model.

use std::collections::BTreeMap;
use std::sync::Arc;

use cairn_protocol::ToolSpec;

use super::{handlers, Tool};

/// The tools of a run, by name.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// The built-in tools: read_file, write_file, edit_file, list_dir, grep, bash.
    pub fn builtin() -> Self {
        let mut registry = Self::new();
        for tool in handlers::builtin() {
            registry.register(tool);
        }
        registry
    }

    /// Adds a tool, replacing any tool of the same name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.spec().name, tool);
    }

    /// Removes a tool; returns whether it was there.
    pub fn remove(&mut self, name: &str) -> bool {
        self.tools.remove(name).is_some()
    }

    /// Keeps only the named tools.
    pub fn retain(&mut self, names: &[String]) {
        self.tools.retain(|name, _| names.contains(name));
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    pub fn names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    /// Specs for the model, sorted by name.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.values().map(|t| t.spec()).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}
