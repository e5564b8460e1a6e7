//! Time for background work, behind a trait so tests can drive hours in microseconds.
//!
//! [`SystemClock`] is the wall clock; [`ManualClock`] only moves when a test advances it,
//! and advancing it wakes every sleeper whose deadline has come.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use tokio::sync::{oneshot, watch};

/// The time now, and waiting for a moment.
#[async_trait]
pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;

    /// Returns once [`Clock::now`] has reached `deadline`. Dropping the future stops the wait.
    async fn sleep_until(&self, deadline: DateTime<Utc>);
}

/// The wall clock. A sleep re-reads the wall time at least once a minute, so a machine
/// that was suspended wakes up close to the deadline, not a suspension later.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

/// Longest single timer of a [`SystemClock`] sleep.
const RECHECK: Duration = Duration::from_secs(60);

#[async_trait]
impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }

    async fn sleep_until(&self, deadline: DateTime<Utc>) {
        loop {
            let left = match (deadline - Utc::now()).to_std() {
                Ok(left) if !left.is_zero() => left,
                // Negative or zero: the deadline has passed.
                _ => return,
            };
            tokio::time::sleep(left.min(RECHECK)).await;
        }
    }
}

/// A clock that only moves when told to (tests).
#[derive(Clone)]
pub struct ManualClock {
    inner: Arc<Mutex<Manual>>,
    /// Counts sleepers as they start waiting, so a test can wait for one.
    registered: Arc<watch::Sender<u64>>,
}

struct Manual {
    now: DateTime<Utc>,
    sleepers: Vec<(DateTime<Utc>, oneshot::Sender<()>)>,
}

impl ManualClock {
    pub fn new(start: DateTime<Utc>) -> Self {
        Self {
            inner: Arc::new(Mutex::new(Manual {
                now: start,
                sleepers: Vec::new(),
            })),
            registered: Arc::new(watch::Sender::new(0)),
        }
    }

    /// Moves the clock forward by `by` and wakes the sleepers whose deadline has come.
    pub fn advance(&self, by: Duration) {
        let by = chrono::Duration::from_std(by).unwrap_or(chrono::Duration::MAX);
        let mut inner = self.lock();
        inner.now += by;
        let now = inner.now;
        let (due, waiting) = std::mem::take(&mut inner.sleepers)
            .into_iter()
            .partition(|(deadline, _)| *deadline <= now);
        inner.sleepers = waiting;
        drop(inner);
        for (_, wake) in due {
            let _: Result<(), ()> = wake.send(());
        }
    }

    /// The deadlines of everyone waiting now, earliest first.
    pub fn sleepers(&self) -> Vec<DateTime<Utc>> {
        let mut inner = self.lock();
        inner.sleepers.retain(|(_, wake)| !wake.is_closed());
        let mut deadlines: Vec<_> = inner.sleepers.iter().map(|(d, _)| *d).collect();
        deadlines.sort();
        deadlines
    }

    /// Waits until someone sleeps until `deadline`.
    pub async fn wait_for_sleeper(&self, deadline: DateTime<Utc>) {
        let mut registered = self.registered.subscribe();
        while !self.sleepers().contains(&deadline) {
            if registered.changed().await.is_err() {
                return;
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Manual> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        self.lock().now
    }

    async fn sleep_until(&self, deadline: DateTime<Utc>) {
        let woken = {
            let mut inner = self.lock();
            if inner.now >= deadline {
                return;
            }
            let (wake, woken) = oneshot::channel();
            inner.sleepers.push((deadline, wake));
            woken
        };
        self.registered.send_modify(|n| *n += 1);
        // The sender only goes away when it fires.
        let _: Result<(), _> = woken.await;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[tokio::test]
    async fn a_manual_sleep_ends_when_the_clock_reaches_its_deadline() {
        let start = DateTime::parse_from_rfc3339("2026-03-01T00:00:00Z")
            .unwrap()
            .to_utc();
        let clock = ManualClock::new(start);
        let deadline = start + chrono::Duration::hours(6);
        let sleeper = tokio::spawn({
            let clock = clock.clone();
            async move { clock.sleep_until(deadline).await }
        });
        clock.wait_for_sleeper(deadline).await;
        clock.advance(Duration::from_secs(6 * 3600 - 1));
        assert_eq!(clock.sleepers(), [deadline]);
        assert!(!sleeper.is_finished());
        clock.advance(Duration::from_secs(1));
        sleeper.await.unwrap();
        assert!(clock.sleepers().is_empty());
        // A deadline already passed does not wait.
        clock.sleep_until(start).await;
    }

    #[tokio::test]
    async fn a_system_sleep_in_the_past_returns_at_once() {
        SystemClock
            .sleep_until(Utc::now() - chrono::Duration::seconds(1))
            .await;
    }
}
