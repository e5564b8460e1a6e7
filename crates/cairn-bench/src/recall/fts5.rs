//! The baseline: SQLite FTS5 BM25 over windows of lines, as a plain keyword memory does
//! it. Each file is cut into non-overlapping windows of as many lines as Cairn's median hit
//! spans (so both return passages of one size); a question's words, stripped of what FTS5
//! cannot take, are each double-quoted and OR-ed, and the windows ranked by `bm25`.

use std::path::Path;

use rusqlite::{params, Connection};
use serde_json::Value;

use super::generate::Form;
use super::measure::Hit;

const CREATE: &str = "CREATE VIRTUAL TABLE windows USING fts5(\
    path UNINDEXED, start_line UNINDEXED, end_line UNINDEXED, body, \
    tokenize = 'porter unicode61')";

const SEARCH: &str = "SELECT path, start_line, end_line FROM windows \
    WHERE windows MATCH ?1 ORDER BY bm25(windows) LIMIT ?2";

pub struct Windows {
    conn: Connection,
}

impl Windows {
    /// Windows of `lines` lines over `files` (workspace-relative paths under `root`),
    /// read as `form` says (a session's lines are its messages' text).
    pub fn build(root: &Path, files: &[String], form: Form, lines: usize) -> anyhow::Result<Self> {
        let lines = lines.max(1);
        let mut conn = Connection::open_in_memory()?;
        conn.execute_batch(CREATE)?;
        let tx = conn.transaction()?;
        {
            let mut insert = tx.prepare(
                "INSERT INTO windows (path, start_line, end_line, body) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for path in files {
                let text = std::fs::read_to_string(root.join(path))?;
                let all: Vec<String> = text.lines().map(|l| searchable(form, l)).collect();
                for (n, window) in all.chunks(lines).enumerate() {
                    let start = n * lines + 1;
                    let end = start + window.len() - 1;
                    insert.execute(params![path, start as i64, end as i64, window.join("\n")])?;
                }
            }
        }
        tx.commit()?;
        Ok(Self { conn })
    }

    /// The best `limit` windows for `text`.
    pub fn search(&self, text: &str, limit: usize) -> anyhow::Result<Vec<Hit>> {
        let Some(expression) = match_expression(text) else {
            return Ok(Vec::new());
        };
        let mut statement = self.conn.prepare_cached(SEARCH)?;
        let hits = statement.query_map(params![expression, limit as i64], |row| {
            Ok(Hit {
                path: row.get(0)?,
                start_line: row.get::<_, i64>(1)? as usize,
                end_line: row.get::<_, i64>(2)? as usize,
            })
        })?;
        Ok(hits.collect::<Result<_, _>>()?)
    }
}

/// What of a file's line is text to search: the line itself, or a session line's message.
fn searchable(form: Form, line: &str) -> String {
    match form {
        Form::Logs => line.to_string(),
        Form::Sessions => serde_json::from_str::<Value>(line)
            .ok()
            .and_then(|v| {
                let blocks = v.get("message")?.get("content")?.as_array()?.clone();
                let texts: Vec<String> = blocks
                    .iter()
                    .filter_map(|b| b.get("text").and_then(Value::as_str).map(str::to_string))
                    .collect();
                Some(texts.join(" "))
            })
            .unwrap_or_default(),
    }
}

/// `"w1" OR "w2" ...`: the runs of letters and digits of `text`, each double-quoted;
/// `None` when there are none.
pub fn match_expression(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{w}\""))
        .collect();
    (!words.is_empty()).then(|| words.join(" OR "))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn words_are_stripped_quoted_and_or_ed() {
        assert_eq!(
            match_expression("What's Maya's \"dog\" (NEAR)?").as_deref(),
            Some("\"What\" OR \"s\" OR \"Maya\" OR \"s\" OR \"dog\" OR \"NEAR\"")
        );
        assert_eq!(match_expression(" ?! "), None);
    }

    #[test]
    fn windows_do_not_overlap_and_cover_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let body: String = (1..=7).map(|n| format!("line {n} word{n}\n")).collect();
        std::fs::write(dir.path().join("a.md"), body).unwrap();
        let windows = Windows::build(dir.path(), &["a.md".into()], Form::Logs, 3).unwrap();
        let hits = windows.search("word7 word1", 10).unwrap();
        let mut spans: Vec<(usize, usize)> =
            hits.iter().map(|h| (h.start_line, h.end_line)).collect();
        spans.sort();
        assert_eq!(spans, vec![(1, 3), (7, 7)]);
    }
}
