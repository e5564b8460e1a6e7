//! The SQLite catalog, `.cairn/state.db`: what the index holds (file path, hash, size,
//! mtime, when it was indexed), the session list, and small key-value state (the index's
//! schema version, watermarks of background jobs). Migrations are numbered and applied in
//! order inside a transaction; `PRAGMA user_version` records the last one applied.
//!
//! WAL mode with a busy timeout, so the desktop app and the CLI can use it at once.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};

/// The schema, one migration per entry; never edit one that shipped, add another.
const MIGRATIONS: &[&str] = &[
    // 1: files, sessions, key-value state.
    "CREATE TABLE files (
        path TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        hash TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        chunks INTEGER NOT NULL,
        skipped TEXT,
        indexed_at TEXT NOT NULL
    );
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        title TEXT,
        created_at TEXT,
        updated_at TEXT NOT NULL,
        messages INTEGER NOT NULL
    );
    CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );",
    // 2: chunk vectors for search by meaning, by model; ids only grow, so a reading
    // process loads what the writer added since it last looked.
    "CREATE TABLE vectors (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        model TEXT NOT NULL,
        chunk INTEGER NOT NULL,
        vector BLOB NOT NULL,
        UNIQUE (model, chunk)
    );",
    // 3: each session file's summary as the session list shows it, with the file's length
    // and mtime when it was made (a summary whose file changed since is made again).
    "CREATE TABLE session_summaries (
        id TEXT PRIMARY KEY,
        len INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        summary TEXT NOT NULL
    );",
    // 4: a file its reader failed on (a broken document), apart from one skipped by rule.
    "ALTER TABLE files ADD COLUMN failed INTEGER NOT NULL DEFAULT 0;",
    // 5: what OCR did for a file (JSON: the state of OCR it was read under, pages read by
    // OCR, scanned pages left unread and why); none when OCR did not bear on it.
    "ALTER TABLE files ADD COLUMN ocr TEXT;",
];

/// A session's summary as the session list shows it (JSON, the session store's), with the
/// length and mtime its file had when it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSummary {
    pub id: String,
    pub len: u64,
    pub mtime_ns: i64,
    pub summary: String,
}

#[derive(Debug, thiserror::Error)]
#[error("catalog {path}: {message}")]
pub struct CatalogError {
    pub path: PathBuf,
    pub message: String,
}

/// A file as the catalog last saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRecord {
    pub path: String,
    pub source: String,
    /// blake3 of the contents, hex.
    pub hash: String,
    pub size: u64,
    pub mtime_ns: i64,
    pub chunks: u64,
    /// Why the file is not in the index (not UTF-8, binary), when it is not.
    pub skipped: Option<String>,
    pub indexed_at: String,
    /// `skipped` is the reason its reader failed (a broken document), not a rule.
    pub failed: bool,
    /// What OCR did for it, as JSON (see `index/ocr.rs`), when OCR bore on it.
    pub ocr: Option<String>,
}

/// A session as listed to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRecord {
    pub id: String,
    pub title: Option<String>,
    pub created_at: Option<String>,
    pub updated_at: String,
    pub messages: u64,
}

pub struct Catalog {
    conn: Connection,
    path: PathBuf,
}

impl Catalog {
    /// Opens (creating and migrating as needed) the catalog at `path`.
    pub fn open(path: &Path) -> Result<Self, CatalogError> {
        let fail = |e: rusqlite::Error| CatalogError {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let conn = Connection::open(path).map_err(fail)?;
        conn.busy_timeout(Duration::from_secs(5)).map_err(fail)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(fail)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(fail)?;
        let mut catalog = Self {
            conn,
            path: path.to_path_buf(),
        };
        catalog.migrate()?;
        Ok(catalog)
    }

    fn fail(&self, e: rusqlite::Error) -> CatalogError {
        CatalogError {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    /// The schema version (number of migrations applied).
    pub fn version(&self) -> Result<u32, CatalogError> {
        self.conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(|e| self.fail(e))
    }

    fn migrate(&mut self) -> Result<(), CatalogError> {
        if self.version()? as usize == MIGRATIONS.len() {
            return Ok(());
        }
        // Another process may be migrating the same file: take it for writing first,
        // then see what is left to do.
        let path = self.path.clone();
        let fail = |e: rusqlite::Error| CatalogError {
            path: path.clone(),
            message: e.to_string(),
        };
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(fail)?;
        let current: u32 = tx
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(fail)?;
        let current = current as usize;
        if current > MIGRATIONS.len() {
            return Err(CatalogError {
                path: self.path.clone(),
                message: format!(
                    "schema version {current} is newer than this Cairn knows ({}); \
                     update Cairn",
                    MIGRATIONS.len()
                ),
            });
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(current) {
            tx.execute_batch(sql)
                .and_then(|()| tx.pragma_update(None, "user_version", (i + 1) as u32))
                .map_err(|e| CatalogError {
                    path: self.path.clone(),
                    message: format!("migration {}: {e}", i + 1),
                })?;
        }
        tx.commit().map_err(fail)
    }

    pub fn files(&self) -> Result<Vec<FileRecord>, CatalogError> {
        let mut statement = self
            .conn
            .prepare_cached(
                "SELECT path, source, hash, size, mtime_ns, chunks, skipped, indexed_at, failed,
                   ocr
                 FROM files ORDER BY path",
            )
            .map_err(|e| self.fail(e))?;
        let rows = statement
            .query_map([], |row| {
                Ok(FileRecord {
                    path: row.get(0)?,
                    source: row.get(1)?,
                    hash: row.get(2)?,
                    size: row.get::<_, i64>(3)? as u64,
                    mtime_ns: row.get(4)?,
                    chunks: row.get::<_, i64>(5)? as u64,
                    skipped: row.get(6)?,
                    indexed_at: row.get(7)?,
                    failed: row.get::<_, i64>(8)? != 0,
                    ocr: row.get(9)?,
                })
            })
            .map_err(|e| self.fail(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.fail(e))
    }

    /// Records what the index now holds: `upserts` were (re)indexed, `removed` left it.
    /// One transaction.
    pub fn apply(
        &mut self,
        upserts: &[FileRecord],
        removed: &[String],
    ) -> Result<(), CatalogError> {
        self.upsert_and_delete(
            "INSERT INTO files
               (path, source, hash, size, mtime_ns, chunks, skipped, indexed_at, failed, ocr)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             ON CONFLICT(path) DO UPDATE SET source = ?2, hash = ?3, size = ?4,
               mtime_ns = ?5, chunks = ?6, skipped = ?7, indexed_at = ?8, failed = ?9,
               ocr = ?10",
            upserts,
            |statement, f| {
                statement.execute(params![
                    f.path,
                    f.source,
                    f.hash,
                    f.size as i64,
                    f.mtime_ns,
                    f.chunks as i64,
                    f.skipped,
                    f.indexed_at,
                    i64::from(f.failed),
                    f.ocr
                ])
            },
            "DELETE FROM files WHERE path = ?1",
            removed,
        )
    }

    /// In one transaction: `upsert` for each of `rows` (bound by `bind`), then `delete`
    /// for each key of `gone`.
    fn upsert_and_delete<T>(
        &mut self,
        upsert: &str,
        rows: &[T],
        bind: impl Fn(&mut rusqlite::CachedStatement<'_>, &T) -> rusqlite::Result<usize>,
        delete: &str,
        gone: &[String],
    ) -> Result<(), CatalogError> {
        let path = self.path.clone();
        let fail = |e: rusqlite::Error| CatalogError {
            path: path.clone(),
            message: e.to_string(),
        };
        let tx = self.conn.transaction().map_err(fail)?;
        {
            let mut statement = tx.prepare_cached(upsert).map_err(fail)?;
            for row in rows {
                bind(&mut statement, row).map_err(fail)?;
            }
            let mut statement = tx.prepare_cached(delete).map_err(fail)?;
            for key in gone {
                statement.execute(params![key]).map_err(fail)?;
            }
        }
        tx.commit().map_err(fail)
    }

    /// Every stored session summary.
    pub fn session_summaries(&self) -> Result<Vec<StoredSummary>, CatalogError> {
        let mut statement = self
            .conn
            .prepare_cached("SELECT id, len, mtime_ns, summary FROM session_summaries")
            .map_err(|e| self.fail(e))?;
        let rows = statement
            .query_map([], |row| {
                Ok(StoredSummary {
                    id: row.get(0)?,
                    len: row.get::<_, i64>(1)? as u64,
                    mtime_ns: row.get(2)?,
                    summary: row.get(3)?,
                })
            })
            .map_err(|e| self.fail(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.fail(e))
    }

    /// Stores `put` and forgets the summaries of `gone`, in one transaction.
    pub fn update_session_summaries(
        &mut self,
        put: &[StoredSummary],
        gone: &[String],
    ) -> Result<(), CatalogError> {
        self.upsert_and_delete(
            "INSERT INTO session_summaries (id, len, mtime_ns, summary)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(id) DO UPDATE SET len = ?2, mtime_ns = ?3, summary = ?4",
            put,
            |statement, s| statement.execute(params![s.id, s.len as i64, s.mtime_ns, s.summary]),
            "DELETE FROM session_summaries WHERE id = ?1",
            gone,
        )
    }

    /// Forgets every file (the index was created anew).
    pub fn clear_files(&self) -> Result<(), CatalogError> {
        self.conn
            .execute("DELETE FROM files", [])
            .map(drop)
            .map_err(|e| self.fail(e))
    }

    pub fn upsert_session(&self, session: &SessionRecord) -> Result<(), CatalogError> {
        self.conn
            .execute(
                "INSERT INTO sessions (id, title, created_at, updated_at, messages)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT(id) DO UPDATE SET title = ?2, created_at = ?3, updated_at = ?4,
                   messages = ?5",
                params![
                    session.id,
                    session.title,
                    session.created_at,
                    session.updated_at,
                    session.messages as i64
                ],
            )
            .map(drop)
            .map_err(|e| self.fail(e))
    }

    pub fn remove_session(&self, id: &str) -> Result<(), CatalogError> {
        self.conn
            .execute("DELETE FROM sessions WHERE id = ?1", params![id])
            .map(drop)
            .map_err(|e| self.fail(e))
    }

    /// Sessions, most recently updated first.
    pub fn sessions(&self) -> Result<Vec<SessionRecord>, CatalogError> {
        let mut statement = self
            .conn
            .prepare_cached(
                "SELECT id, title, created_at, updated_at, messages FROM sessions
                 ORDER BY updated_at DESC, id",
            )
            .map_err(|e| self.fail(e))?;
        let rows = statement
            .query_map([], |row| {
                Ok(SessionRecord {
                    id: row.get(0)?,
                    title: row.get(1)?,
                    created_at: row.get(2)?,
                    updated_at: row.get(3)?,
                    messages: row.get::<_, i64>(4)? as u64,
                })
            })
            .map_err(|e| self.fail(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.fail(e))
    }

    /// The vectors of `model` stored after row `after`: (row, chunk id, vector bytes).
    pub fn vectors_since(
        &self,
        model: &str,
        after: i64,
    ) -> Result<Vec<(i64, u64, Vec<u8>)>, CatalogError> {
        let mut statement = self
            .conn
            .prepare_cached(
                "SELECT id, chunk, vector FROM vectors WHERE model = ?1 AND id > ?2 ORDER BY id",
            )
            .map_err(|e| self.fail(e))?;
        let rows = statement
            .query_map(params![model, after], |row| {
                Ok((row.get(0)?, row.get::<_, i64>(1)? as u64, row.get(2)?))
            })
            .map_err(|e| self.fail(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.fail(e))
    }

    /// Stores vectors of `model` (one transaction); the highest row id after.
    pub fn add_vectors(
        &mut self,
        model: &str,
        vectors: &[(u64, Vec<u8>)],
    ) -> Result<i64, CatalogError> {
        let path = self.path.clone();
        let fail = |e: rusqlite::Error| CatalogError {
            path: path.clone(),
            message: e.to_string(),
        };
        let tx = self.conn.transaction().map_err(fail)?;
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO vectors (model, chunk, vector) VALUES (?1, ?2, ?3)
                     ON CONFLICT(model, chunk) DO UPDATE SET vector = ?3",
                )
                .map_err(fail)?;
            for (chunk, bytes) in vectors {
                insert
                    .execute(params![model, *chunk as i64, bytes])
                    .map_err(fail)?;
            }
        }
        let last: i64 = tx
            .query_row("SELECT COALESCE(MAX(id), 0) FROM vectors", [], |row| {
                row.get(0)
            })
            .map_err(fail)?;
        tx.commit().map_err(fail)?;
        Ok(last)
    }

    /// Forgets these chunks' vectors of `model`, and every vector of any other model.
    pub fn remove_vectors(&mut self, model: &str, chunks: &[u64]) -> Result<(), CatalogError> {
        let path = self.path.clone();
        let fail = |e: rusqlite::Error| CatalogError {
            path: path.clone(),
            message: e.to_string(),
        };
        let tx = self.conn.transaction().map_err(fail)?;
        tx.execute("DELETE FROM vectors WHERE model <> ?1", params![model])
            .map_err(fail)?;
        {
            let mut delete = tx
                .prepare_cached("DELETE FROM vectors WHERE model = ?1 AND chunk = ?2")
                .map_err(fail)?;
            for chunk in chunks {
                delete
                    .execute(params![model, *chunk as i64])
                    .map_err(fail)?;
            }
        }
        tx.commit().map_err(fail)
    }

    pub fn get_meta(&self, key: &str) -> Result<Option<String>, CatalogError> {
        self.conn
            .query_row(
                "SELECT value FROM meta WHERE key = ?1",
                params![key],
                |row| row.get(0),
            )
            .optional()
            .map_err(|e| self.fail(e))
    }

    pub fn set_meta(&self, key: &str, value: &str) -> Result<(), CatalogError> {
        self.conn
            .execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)
                 ON CONFLICT(key) DO UPDATE SET value = ?2",
                params![key, value],
            )
            .map(drop)
            .map_err(|e| self.fail(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(path: &str, hash: &str) -> FileRecord {
        FileRecord {
            path: path.into(),
            source: "knowledge".into(),
            hash: hash.into(),
            size: 3,
            mtime_ns: 7,
            chunks: 1,
            skipped: None,
            indexed_at: "2026-01-01T00:00:00Z".into(),
            failed: false,
            ocr: None,
        }
    }

    #[test]
    fn migrates_once_and_keeps_data_across_opens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        {
            let mut catalog = Catalog::open(&path).unwrap();
            assert_eq!(catalog.version().unwrap(), MIGRATIONS.len() as u32);
            catalog.apply(&[record("a.md", "h1")], &[]).unwrap();
            catalog.set_meta("watermark", "42").unwrap();
        }
        let mut catalog = Catalog::open(&path).unwrap();
        assert_eq!(catalog.files().unwrap(), vec![record("a.md", "h1")]);
        catalog
            .apply(&[record("a.md", "h2"), record("b.md", "h3")], &[])
            .unwrap();
        catalog.apply(&[], &["b.md".to_string()]).unwrap();
        assert_eq!(catalog.files().unwrap(), vec![record("a.md", "h2")]);
        assert_eq!(
            catalog.get_meta("watermark").unwrap().as_deref(),
            Some("42")
        );
        assert_eq!(catalog.get_meta("missing").unwrap(), None);
    }

    #[test]
    fn a_catalog_from_a_newer_version_is_refused_not_damaged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        drop(Catalog::open(&path).unwrap());
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
        drop(conn);
        let error = Catalog::open(&path).err().unwrap().to_string();
        assert!(error.contains("newer"), "{error}");
    }

    #[test]
    fn sessions_are_listed_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(&dir.path().join("state.db")).unwrap();
        for (id, updated) in [("a", "2026-01-01"), ("b", "2026-02-01")] {
            catalog
                .upsert_session(&SessionRecord {
                    id: id.into(),
                    title: Some(format!("title {id}")),
                    created_at: None,
                    updated_at: updated.into(),
                    messages: 2,
                })
                .unwrap();
        }
        let ids: Vec<String> = catalog
            .sessions()
            .unwrap()
            .into_iter()
            .map(|s| s.id)
            .collect();
        assert_eq!(ids, ["b", "a"]);
        catalog.remove_session("b").unwrap();
        assert_eq!(catalog.sessions().unwrap().len(), 1);
    }
}
