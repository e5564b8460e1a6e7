//! Listing sessions (the app's sidebar at start and after every run): `SessionStore::list`
//! over a folder of generated sessions. The first listing of a new process with the
//! summaries kept in the catalog (as the app and the CLI list), beside the same without the
//! catalog (every file read, as before it); the listing that fills an empty catalog; and
//! listings of the same store when nothing changed and when one session grew by a message.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::ensure;
use cairn_core::session::SessionStore;
use cairn_protocol::{EntryKind, Message};

use super::session_open;
use crate::stats::Samples;

pub struct ListTimes {
    pub sessions: usize,
    pub entries: usize,
    pub bytes: u64,
    /// A new store without the catalog: every file read.
    pub first: Samples,
    /// A new store with an empty catalog: every file read, every summary stored.
    pub filled: Samples,
    /// A new store with the catalog filled (a start of the app).
    pub opened: Samples,
    pub unchanged: Samples,
    pub one_grew: Samples,
}

/// Generates `sessions` sessions of `entries` entries in `dir`, then times the three
/// listings `runs` times each after one warm-up round.
pub async fn measure(
    dir: &Path,
    sessions: usize,
    entries: usize,
    runs: usize,
) -> anyhow::Result<ListTimes> {
    let mut bytes = 0;
    let mut ids = Vec::with_capacity(sessions);
    for _ in 0..sessions {
        let file = session_open::generate(dir, entries).await?;
        bytes += file.bytes;
        ids.push(file.id);
    }
    let db = dir.with_file_name("state.db");
    let (mut first, mut unchanged, mut one_grew) = (Vec::new(), Vec::new(), Vec::new());
    let (mut filled, mut opened) = (Vec::new(), Vec::new());
    for run in 0..=runs {
        let took_first = timed_list(&SessionStore::new(dir), sessions)?;
        for suffix in ["", "-wal", "-shm"] {
            let mut name = db.clone().into_os_string();
            name.push(suffix);
            let _ = std::fs::remove_file(name);
        }
        let took_filled = timed_list(&SessionStore::with_catalog(dir, &db), sessions)?;
        let store = SessionStore::with_catalog(dir, &db);
        let took_opened = timed_list(&store, sessions)?;
        let took_unchanged = timed_list(&store, sessions)?;
        grow(&store, &ids[run % ids.len()]).await?;
        let took_grew = timed_list(&store, sessions)?;
        if run > 0 {
            first.push(took_first);
            filled.push(took_filled);
            opened.push(took_opened);
            unchanged.push(took_unchanged);
            one_grew.push(took_grew);
        }
    }
    Ok(ListTimes {
        sessions,
        entries,
        bytes,
        first: Samples::new(first),
        filled: Samples::new(filled),
        opened: Samples::new(opened),
        unchanged: Samples::new(unchanged),
        one_grew: Samples::new(one_grew),
    })
}

fn timed_list(store: &SessionStore, sessions: usize) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let list = store.list()?;
    let took = started.elapsed();
    ensure!(
        list.len() == sessions,
        "listed {} of {sessions} sessions",
        list.len()
    );
    Ok(took)
}

/// Appends one user message to session `id`, as a run would.
async fn grow(store: &SessionStore, id: &str) -> anyhow::Result<()> {
    store
        .open(id)
        .await?
        .record(EntryKind::Message {
            message: Message::user("one more question"),
        })
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lists_every_generated_session_and_sees_the_one_that_grew() {
        let (root, reference) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let dir = root.path().join("sessions");
        let one = session_open::generate(reference.path(), 9).await.unwrap();
        let messages = SessionStore::new(reference.path()).list().unwrap()[0].messages;
        assert!(messages > 0 && one.entries == 9);
        let times = measure(&dir, 3, 9, 2).await.unwrap();
        assert!(times.first.p50() > Duration::ZERO);
        assert!(times.opened.p50() > Duration::ZERO && times.filled.p50() > Duration::ZERO);
        // Rounds 0, 1 and 2 each added a message to a different session.
        let list = SessionStore::new(&dir).list().unwrap();
        let counts: Vec<usize> = list.iter().map(|s| s.messages).collect();
        assert_eq!(counts, [messages + 1; 3]);
        // The catalog holds each session's summary as of its file now.
        let kept = SessionStore::with_catalog(&dir, root.path().join("state.db"));
        assert_eq!(kept.list().unwrap(), list);
        assert!(root.path().join("state.db").is_file());
    }
}
