//! The baseline: SQLite FTS5 over the same chunks (porter stemmer, bm25 ranking, snippets),
//! built in one transaction and queried through one cached statement.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use rusqlite::{params, Connection};

use super::files;

const CREATE: &str = "CREATE VIRTUAL TABLE chunks USING fts5(\
    path UNINDEXED, start_line UNINDEXED, end_line UNINDEXED, heading, body, \
    tokenize = 'porter unicode61')";

const INSERT: &str = "INSERT INTO chunks (path, start_line, end_line, heading, body) \
    VALUES (?1, ?2, ?3, ?4, ?5)";

/// Top ten by bm25, with a snippet of the body (column 4) around the matches.
const SEARCH: &str = "SELECT path, start_line, end_line, \
    snippet(chunks, 4, '[', ']', '…', 24) \
    FROM chunks WHERE chunks MATCH ?1 ORDER BY bm25(chunks) LIMIT 10";

/// One result row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub path: String,
    pub start_line: i64,
    pub end_line: i64,
    pub snippet: String,
}

pub struct Fts5 {
    conn: Connection,
    pub built: Built,
}

/// What building the table took.
#[derive(Debug, Clone, Copy)]
pub struct Built {
    /// Rows (chunks) in the table.
    pub rows: u64,
    /// Reading and chunking the files, inserting, committing and merging the index.
    pub build: Duration,
    /// The part of `build` spent reading and chunking the files.
    pub chunking: Duration,
    /// The database file (and its journal or WAL, if any) after `VACUUM`.
    pub bytes: u64,
}

impl Fts5 {
    /// Indexes every source of the workspace at `root` into a new database at `db`.
    pub fn build(root: &Path, db: &Path) -> anyhow::Result<Self> {
        let started = Instant::now();
        let mut conn = Connection::open(db)
            .with_context(|| format!("cannot create the database {}", db.display()))?;
        conn.execute_batch(CREATE)?;
        let mut chunking = Duration::ZERO;
        let mut rows = 0u64;
        let tx = conn.transaction()?;
        {
            let mut insert = tx.prepare(INSERT)?;
            for source in files::sources(root) {
                let read = Instant::now();
                let chunks = files::read_chunks(root, &source)?;
                chunking += read.elapsed();
                for chunk in chunks {
                    insert.execute(params![
                        source.path,
                        chunk.start_line as i64,
                        chunk.end_line as i64,
                        chunk.heading,
                        chunk.text
                    ])?;
                    rows += 1;
                }
            }
        }
        tx.commit()?;
        // Merge the b-trees the inserts left into one, as a bulk load should.
        conn.execute_batch("INSERT INTO chunks (chunks) VALUES ('optimize')")?;
        let build = started.elapsed();
        conn.execute_batch("VACUUM")?;
        // Read through the page cache like Tantivy's mmap, not with a read call per page.
        conn.pragma_update(None, "mmap_size", 1i64 << 30)?;
        conn.pragma_update(None, "cache_size", -65_536i64)?;
        let bytes = ["", "-wal", "-journal"]
            .iter()
            .filter_map(|suffix| {
                let mut name = db.as_os_str().to_owned();
                name.push(suffix);
                std::fs::metadata(PathBuf::from(name)).ok()
            })
            .map(|meta| meta.len())
            .sum();
        Ok(Self {
            conn,
            built: Built {
                rows,
                build,
                chunking,
                bytes,
            },
        })
    }

    /// The top ten chunks for the words of `text`, OR-ed.
    pub fn search(&self, text: &str) -> anyhow::Result<Vec<Hit>> {
        let Some(expression) = match_expression(text) else {
            return Ok(Vec::new());
        };
        let mut statement = self.conn.prepare_cached(SEARCH)?;
        let hits = statement.query_map([expression], |row| {
            Ok(Hit {
                path: row.get(0)?,
                start_line: row.get(1)?,
                end_line: row.get(2)?,
                snippet: row.get(3)?,
            })
        })?;
        Ok(hits.collect::<Result<_, _>>()?)
    }
}

/// `"w1" OR "w2" ...` for the whitespace-separated words of `text`, each quoted (a `"`
/// inside doubled) so that no word is read as FTS5 syntax; `None` when there are none.
pub fn match_expression(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect();
    (!words.is_empty()).then(|| words.join(" OR "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_and_or_ed() {
        assert_eq!(
            match_expression("blue  door").as_deref(),
            Some("\"blue\" OR \"door\"")
        );
        assert_eq!(
            match_expression("say \"NEAR(a b)\" AND").as_deref(),
            Some("\"say\" OR \"\"\"NEAR(a\" OR \"b)\"\"\" OR \"AND\"")
        );
        assert_eq!(match_expression("  "), None);
    }
}
