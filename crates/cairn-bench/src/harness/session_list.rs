//! Listing sessions (the app's sidebar after every run): `SessionStore::list` over a folder of
//! generated sessions, the first listing of a store (every file read) beside listings of the
//! same store when nothing changed and when one session grew by a message.

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
    pub first: Samples,
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
    let (mut first, mut unchanged, mut one_grew) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..=runs {
        let store = SessionStore::new(dir);
        let took_first = timed_list(&store, sessions)?;
        let took_unchanged = timed_list(&store, sessions)?;
        grow(&store, &ids[run % ids.len()]).await?;
        let took_grew = timed_list(&store, sessions)?;
        if run > 0 {
            first.push(took_first);
            unchanged.push(took_unchanged);
            one_grew.push(took_grew);
        }
    }
    Ok(ListTimes {
        sessions,
        entries,
        bytes,
        first: Samples::new(first),
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
        let (dir, reference) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let one = session_open::generate(reference.path(), 9).await.unwrap();
        let messages = SessionStore::new(reference.path()).list().unwrap()[0].messages;
        assert!(messages > 0 && one.entries == 9);
        let times = measure(dir.path(), 3, 9, 2).await.unwrap();
        assert!(times.first.p50() > Duration::ZERO);
        // Rounds 0, 1 and 2 each added a message to a different session.
        let list = SessionStore::new(dir.path()).list().unwrap();
        let counts: Vec<usize> = list.iter().map(|s| s.messages).collect();
        assert_eq!(counts, [messages + 1; 3]);
    }
}
