//! A run's deadline (`[run] deadline_s`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

/// A run's deadline: cancels the run when it passes.
pub(super) struct Deadline {
    passed: Arc<AtomicBool>,
    timer: Option<tokio::task::JoinHandle<()>>,
}

impl Deadline {
    pub(super) fn start(limit: Option<std::time::Duration>, cancel: CancellationToken) -> Self {
        let passed = Arc::new(AtomicBool::new(false));
        let timer = limit.map(|limit| {
            let passed = passed.clone();
            tokio::spawn(async move {
                tokio::time::sleep(limit).await;
                passed.store(true, Ordering::SeqCst);
                cancel.cancel();
            })
        });
        Self { passed, timer }
    }

    pub(super) fn passed(&self) -> bool {
        self.passed.load(Ordering::SeqCst)
    }
}

impl Drop for Deadline {
    fn drop(&mut self) {
        if let Some(timer) = &self.timer {
            timer.abort();
        }
    }
}
