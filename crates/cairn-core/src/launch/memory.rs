//! The workspace's memory index for a front end that lives a while.

use cairn_memory::index::Watch;
use cairn_memory::{MemoryIndex, Workspace};

use super::Warn;

/// The workspace's memory index, brought up to date in the background and following
/// edits while this lives.
pub struct Memory {
    pub index: Option<MemoryIndex>,
    _watch: Option<Watch>,
}

impl Memory {
    /// Opens the memory index; without one the agent still runs (memory_search is left
    /// out and recall is skipped), with a warning.
    pub fn open(workspace: &Workspace, warn: Warn<'_>) -> Self {
        let index = match MemoryIndex::open(workspace, Default::default()) {
            Ok(index) => index,
            Err(e) => {
                warn(format!("the memory index is unavailable: {e}"));
                return Self {
                    index: None,
                    _watch: None,
                };
            }
        };
        for notice in index.notices() {
            warn(format!("memory index: {notice}"));
        }
        let watch = if index.is_read_only() {
            // Another Cairn process writes the index and follows the edits.
            None
        } else {
            if let Err(e) = index.sync_in_background() {
                warn(format!("the memory index cannot update: {e}"));
            }
            index
                .watch()
                .map_err(|e| warn(format!("edits are not followed: {e}")))
                .ok()
        };
        Self {
            index: Some(index),
            _watch: watch,
        }
    }
}
