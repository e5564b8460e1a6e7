//! `memory_search`: the memory index, searched from the model.

use std::time::{Duration, Instant};

use async_trait::async_trait;
use cairn_memory::{Corpus, MemoryIndex, SearchMode, SearchQuery, SearchResults};
use cairn_protocol::ToolSpec;
use serde::Deserialize;
use serde_json::{json, Value};

use super::files::blocking;
use crate::{parse_args, Tool, ToolCtx, ToolError, ToolOutput};

const DEFAULT_LIMIT: usize = 8;
const MAX_LIMIT: usize = 30;
/// A search by meaning waits while this many vectors or fewer are missing (a note saved a
/// moment ago, by `memory_save` in the same run or by the user), for
/// [`WAIT_FOR_VECTORS`] at most, so it finds that note by meaning too; with more missing
/// (a new workspace) it answers at once and says how much it saw.
const FEW_VECTORS: u64 = 64;
const WAIT_FOR_VECTORS: Duration = Duration::from_secs(2);

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
            if query.mode != Some(SearchMode::Keyword) {
                // Returns at once with no embedder, or when all vectors are made.
                index.wait_few_embedded(FEW_VECTORS, Instant::now() + WAIT_FOR_VECTORS);
            }
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
        let day = hit.day.as_ref().map_or(String::new(), |d| format!(", {d}"));
        out.push_str(&format!(
            "{}. {} (score {:.2}, {}{day}){}\n",
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
    use crate::handlers::memory_save::MemorySave;
    use crate::handlers::test_support::{ok, TestWs};

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

    /// Knows two places by meaning: Portugal, and anything else; and takes its time, as a
    /// real model embedding in the background does.
    struct SlowConcepts;

    impl cairn_memory::index::Embedder for SlowConcepts {
        fn model(&self) -> String {
            "slow-concepts".into()
        }

        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
            std::thread::sleep(Duration::from_millis(400));
            Ok(texts.iter().map(|t| self.vector(t)).collect())
        }

        fn embed_query(&self, text: &str) -> Result<Vec<f32>, String> {
            Ok(self.vector(text))
        }
    }

    impl SlowConcepts {
        fn vector(&self, text: &str) -> Vec<f32> {
            let portugal = ["Lisbon", "Portugal", "Porto"]
                .iter()
                .any(|place| text.contains(place));
            if portugal {
                vec![1.0, 0.0]
            } else {
                vec![0.0, 1.0]
            }
        }
    }

    /// A note saved a moment ago is found by meaning in the same run: the search waits
    /// for the few vectors being made. Without the wait the note has no vector yet and
    /// the search finds nothing.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_note_saved_a_moment_ago_is_found_by_meaning() {
        let ws = TestWs::new();
        let options = IndexOptions {
            embedder: Some(std::sync::Arc::new(SlowConcepts)),
            ..IndexOptions::default()
        };
        let index = MemoryIndex::open(&ws.ctx.workspace, options).unwrap();
        index.sync().unwrap();
        index.wait_embedded(|_, _| {});
        let save = MemorySave {
            index: Some(index.clone()),
        };
        ok(ws
            .call(
                &save,
                json!({"text": "We stay at the Alfama hotel in Lisbon in May."}),
            )
            .await);
        let search = MemorySearch { index };
        let query = json!({"query": "where are we staying in Portugal", "mode": "semantic"});
        let out = ok(ws.call(&search, query).await);
        assert!(out.starts_with("1. memory/"), "{out}");
        assert!(out.contains("Alfama"), "{out}");
    }
}
