//! `memory_search`: the memory index, searched from the model.

use async_trait::async_trait;
use cairn_memory::{Corpus, MemoryIndex, SearchQuery, SearchResults};
use cairn_protocol::ToolSpec;
use serde::Deserialize;
use serde_json::{json, Value};

use super::blocking;
use crate::tools::{parse_args, Tool, ToolCtx, ToolError, ToolOutput};

const DEFAULT_LIMIT: usize = 8;
const MAX_LIMIT: usize = 30;

#[derive(Debug, Clone, Deserialize)]
pub struct MemorySearchArgs {
    pub query: String,
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub corpus: Option<String>,
    #[serde(default)]
    pub mode: Option<String>,
}

pub struct MemorySearch {
    pub index: MemoryIndex,
}

#[async_trait]
impl Tool for MemorySearch {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "memory_search".into(),
            description: "Search long-term memory: MEMORY.md, the daily logs in memory/, \
                AGENTS.md, the notes in knowledge/ and past conversations. Words are matched \
                loosely (any of them, stemmed; whole phrases rank higher; recent daily logs \
                rank above old ones). Each hit gives a citation `path#Lstart-Lend` and a snippet \
                with matches in **bold**; read more with memory_get. With the embedding model \
                set up, search also finds notes that say the same thing in other words."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for, in words."},
                    "limit": {
                        "type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                        "description": "How many hits at most (default 8)."
                    },
                    "corpus": {
                        "type": "string",
                        "enum": ["memory", "knowledge", "sessions", "all"],
                        "description": "memory: MEMORY.md, daily logs, AGENTS.md; knowledge: \
                            knowledge/; sessions: past conversations; all (default)."
                    },
                    "mode": {
                        "type": "string",
                        "enum": ["keyword", "semantic", "hybrid"],
                        "description": "keyword: the words; semantic: the meaning; hybrid: \
                            both (the default when search by meaning is set up)."
                    }
                },
                "required": ["query"]
            }),
        }
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    async fn call(&self, args: Value, _ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let args: MemorySearchArgs = parse_args(args)?;
        if args.query.trim().is_empty() {
            return Err(ToolError::InvalidArguments("`query` is empty".into()));
        }
        let corpus = match args.corpus.as_deref() {
            None => Corpus::All,
            Some(name) => name.parse().map_err(ToolError::InvalidArguments)?,
        };
        let mode = match args.mode.as_deref() {
            None => None,
            Some(name) => Some(name.parse().map_err(ToolError::InvalidArguments)?),
        };
        let query = SearchQuery {
            limit: args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT),
            corpus,
            mode,
            ..SearchQuery::new(args.query.clone())
        };
        let index = self.index.clone();
        let results = blocking(move || {
            index
                .search(&query)
                .map_err(|e| ToolError::Failed(format!("the memory index failed: {e}")))
        })
        .await?;
        Ok(ToolOutput::ok(render(&args.query, corpus, &results)))
    }
}

/// The hits as the model reads them.
pub fn render(query: &str, corpus: Corpus, results: &SearchResults) -> String {
    let mut out = String::new();
    if results.results.is_empty() {
        out.push_str(&format!("No results for `{query}` in {corpus}."));
    }
    for (i, hit) in results.results.iter().enumerate() {
        out.push_str(&format!(
            "{}. {} (score {:.2}, {}){}\n",
            i + 1,
            hit.citation,
            hit.score,
            hit.source,
            if hit.heading.is_empty() {
                String::new()
            } else {
                format!(" — {}", hit.heading)
            }
        ));
        for line in hit.marked("**", "**").lines() {
            out.push_str("   ");
            out.push_str(line);
            out.push('\n');
        }
    }
    if let Some(c) = results.coverage.filter(|c| c.embedded < c.chunks) {
        out.push_str(&format!(
            "\n(Search by meaning covered {} of {} chunks so far; the rest matched by words only.)",
            c.embedded, c.chunks
        ));
    }
    if results.stale {
        out.push_str("\n(The index is still catching up with recent edits; the newest changes may be missing.)");
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use cairn_memory::IndexOptions;
    use serde_json::json;

    use super::*;
    use crate::tools::handlers::memory_save::MemorySave;
    use crate::tools::handlers::test_support::{ok, TestWs};

    #[tokio::test]
    async fn finds_notes_and_what_memory_save_just_wrote() {
        let ws = TestWs::new();
        ws.write(
            "knowledge/garden.md",
            "# Garden\n\n## Watering\nThe blue watering can is in the shed.\n",
        );
        let index = MemoryIndex::open(&ws.ctx.workspace, IndexOptions::default()).unwrap();
        index.sync().unwrap();
        let search = MemorySearch {
            index: index.clone(),
        };
        let out = ok(ws.call(&search, json!({"query": "watering can"})).await);
        assert!(
            out.starts_with("1. knowledge/garden.md#L3-L4 (score "),
            "{out}"
        );
        assert!(out.contains("— Garden > Watering"), "{out}");
        assert!(out.contains("**watering** **can**"), "{out}");

        let save = MemorySave {
            index: Some(index.clone()),
        };
        ok(ws
            .call(&save, json!({"text": "The zeppelin leaves at dawn."}))
            .await);
        let out = ok(ws
            .call(&search, json!({"query": "zeppelin", "corpus": "memory"}))
            .await);
        assert!(out.starts_with("1. memory/"), "{out}");
        assert!(out.contains("**zeppelin**"), "{out}");

        let none = ok(ws
            .call(&search, json!({"query": "zeppelin", "corpus": "knowledge"}))
            .await);
        assert_eq!(none, "No results for `zeppelin` in knowledge.");
        let bad = ws
            .call(&search, json!({"query": "x", "corpus": "everything"}))
            .await;
        assert!(
            matches!(bad, Err(ToolError::InvalidArguments(_))),
            "{bad:?}"
        );
    }
}
