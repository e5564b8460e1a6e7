//! Pruning old tool output: before a conversation has to be compacted, long results of
//! tool calls older than the protected recent part are shown to the model as head and
//! tail only. The whole results go to `.cairn/tool-results/`, and a `tool_output_pruned`
//! entry records which calls are pruned; the results in the session stay as they were.

use cairn_memory::{beneath, MemoryError};
use cairn_protocol::{EntryKind, Message, NoticeLevel};

use super::flow::{Flow, Run};
use crate::tools::results::{is_exempt, result_file};
use crate::upkeep::transcript::estimate_entry;

/// Results at least this long are pruned once they are out of the protected part.
const PRUNE_MIN_CHARS: usize = 4_000;

impl Run {
    /// Prunes long results of tool calls (file and memory tools excepted) that come
    /// before the most recent `protect_tokens` of the context. Returns how many.
    pub(super) async fn prune_tool_output(&mut self, protect_tokens: u64) -> Flow<usize> {
        let candidates: Vec<(String, String)> = {
            let tree = self.inner.session();
            let visible = tree.visible_path();
            let mut recent = 0u64;
            let mut out = Vec::new();
            for entry in visible.iter().rev() {
                if recent < protect_tokens {
                    recent += estimate_entry(entry);
                    continue;
                }
                if let EntryKind::Message {
                    message: Message::ToolResult(result),
                } = &entry.kind
                {
                    if !tree.is_pruned(&result.call_id)
                        && !is_exempt(&result.tool_name)
                        && result.content.chars().count() >= PRUNE_MIN_CHARS
                    {
                        out.push((result.call_id.clone(), result.content.clone()));
                    }
                }
            }
            out
        };
        if candidates.is_empty() {
            return Ok(0);
        }
        let root = self.inner.workspace.root().to_path_buf();
        let files = candidates
            .iter()
            .map(|(id, content)| (result_file(id), content.clone()))
            .collect::<Vec<_>>();
        // Beneath the workspace, as eviction writes them.
        let saved = tokio::task::spawn_blocking(move || -> Result<(), MemoryError> {
            for (file, content) in files {
                if !beneath::exists(&root, &file)? {
                    beneath::write_private_atomic(&root, &file, content.as_bytes())?;
                }
            }
            Ok(())
        })
        .await;
        if let Err(error) = saved
            .map_err(|e| e.to_string())
            .and_then(|r| r.map_err(|e| e.to_string()))
        {
            self.notice(
                NoticeLevel::Warning,
                format!("old tool results were not pruned: cannot save them: {error}"),
            );
            return Ok(0);
        }
        let call_ids: Vec<String> = candidates.into_iter().map(|(id, _)| id).collect();
        let count = call_ids.len();
        self.record(EntryKind::ToolOutputPruned { call_ids })
            .await?;
        self.notice(
            NoticeLevel::Info,
            format!(
                "{count} long old tool result(s) are now shown as head and tail; the whole \
                 output is in .cairn/tool-results/"
            ),
        );
        Ok(count)
    }
}
