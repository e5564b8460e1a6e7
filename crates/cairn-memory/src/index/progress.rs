//! Waiting on the writer thread's progress, and reading it: changes indexed, vectors made.

use std::sync::{MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::{IndexStatus, MemoryIndex, Progress, Shared};

impl Shared {
    /// The progress again once the writer thread has moved it, or `at_most` has passed.
    fn moved<'a>(
        &'a self,
        progress: MutexGuard<'a, Progress>,
        at_most: Duration,
    ) -> MutexGuard<'a, Progress> {
        self.progressed
            .wait_timeout(progress, at_most)
            .unwrap_or_else(PoisonError::into_inner)
            .0
    }
}

impl MemoryIndex {
    /// Waits up to `timeout` for every change queued so far to be indexed; true when it
    /// was.
    pub fn wait_current(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut progress = self.shared.progress();
        let target = progress.queued;
        while progress.done < target {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            progress = self.shared.moved(progress, left);
        }
        true
    }

    /// Waits until every chunk indexed so far has its vector, or embedding has stopped on
    /// an error, telling `report` (embedded, of) whenever it moved. Returns at once without
    /// an embedding model or when another process writes the index.
    pub fn wait_embedded(&self, report: impl FnMut(u64, u64)) -> IndexStatus {
        self.wait_for_vectors(None, report)
    }

    /// As [`Self::wait_embedded`], for vectors a moment away: waits only while `most` or
    /// fewer are missing (a note saved just now, its change indexed or still queued), and
    /// until `deadline` at most. A search of a new workspace, with thousands to make,
    /// answers at once and says how much it saw.
    pub fn wait_few_embedded(&self, most: u64, deadline: Instant) -> IndexStatus {
        self.wait_for_vectors(Some((most, deadline)), |_, _| {})
    }

    fn wait_for_vectors(
        &self,
        limit: Option<(u64, Instant)>,
        mut report: impl FnMut(u64, u64),
    ) -> IndexStatus {
        if self.shared.embedder().is_some() && !self.is_read_only() {
            let mut progress = self.shared.progress();
            let mut told = None;
            loop {
                let now = (progress.embedded, progress.to_embed);
                if told != Some(now) {
                    report(now.0, now.1);
                    told = Some(now);
                }
                // With a limit, a change queued and not yet indexed has vectors to come.
                let queued = limit.is_some() && progress.done < progress.queued;
                let made = now.0 >= now.1 && progress.checked && !queued;
                if made || progress.embed_error.is_some() {
                    break;
                }
                let mut wait = Duration::from_millis(500);
                if let Some((most, deadline)) = limit {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if now.1.saturating_sub(now.0) > most || left.is_zero() {
                        break;
                    }
                    wait = wait.min(left);
                }
                progress = self.shared.moved(progress, wait);
            }
        }
        self.status()
    }

    pub fn status(&self) -> IndexStatus {
        let progress = self.shared.progress();
        let chunks = if self.is_read_only() {
            self.shared.reader.searcher().num_docs()
        } else {
            progress.chunks
        };
        IndexStatus {
            files: progress.files,
            chunks,
            catching_up: progress.done < progress.queued,
            read_only: self.is_read_only(),
            last_error: progress.last_error.clone(),
            embedding_model: self.shared.embedder().map(|e| e.model()),
            embedded: progress.embedded,
            to_embed: progress.to_embed,
            embed_error: progress.embed_error.clone(),
            folders_unavailable: self.folders_unavailable(),
        }
    }
}
