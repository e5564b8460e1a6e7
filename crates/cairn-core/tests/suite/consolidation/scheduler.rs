//! The background scheduler on a manual clock: hours pass in microseconds.

use std::sync::Arc;
use std::time::Duration;

use cairn_core::upkeep::consolidate::{RunResult, LOCK_NAME};
use cairn_core::upkeep::lock::JobLock;
use cairn_core::upkeep::{
    ConsolidationOptions, ConsolidationScheduler, ConsolidationStatus, RunMode, SchedulerHandle,
    SchedulerStatus,
};
use chrono::{DateTime, Utc};
use pretty_assertions::assert_eq;
use tokio::sync::Notify;

use super::{fixture, run, start, LOG, MERGED};

const MINUTE: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(3600);

fn at(after: Duration) -> DateTime<Utc> {
    start() + chrono::Duration::from_std(after).unwrap()
}

/// Waits (without sleeping) until the status satisfies `ready`.
async fn status_until(
    handle: &SchedulerHandle,
    ready: impl FnMut(&SchedulerStatus) -> bool,
) -> SchedulerStatus {
    let mut status = handle.subscribe();
    let reached = tokio::time::timeout(Duration::from_secs(30), status.wait_for(ready));
    let status = reached.await.unwrap().unwrap().clone();
    status
}

fn status_of(status: &SchedulerStatus) -> Option<ConsolidationStatus> {
    match &status.last_result {
        Some(RunResult::Finished { report }) => Some(report.status),
        _ => None,
    }
}

#[tokio::test]
async fn the_timer_counts_from_the_last_run_on_disk_and_fires_after_six_hours_not_before() {
    let f = fixture(&[MERGED, MERGED]);
    let consolidator = Arc::new(f.consolidator());
    // A run before this scheduler started (an earlier app session, or the CLI).
    run(&consolidator, RunMode::Write).await;
    f.append(LOG, "- 20:00 — Ana is away in April.\n");
    let handle = ConsolidationScheduler::spawn(consolidator, Arc::new(Notify::new()));
    let due = at(6 * HOUR);
    let status = status_until(&handle, |s| s.next_run == Some(due)).await;
    assert_eq!(status.last_run, Some(start()));
    f.clock.wait_for_sleeper(due).await;

    f.clock.advance(6 * HOUR - MINUTE);
    assert_eq!(f.clock.sleepers(), [due]);
    assert_eq!(handle.status().runs, 0);
    assert_eq!(f.asked().len(), 1);

    f.clock.advance(MINUTE);
    let status = status_until(&handle, |s| s.runs == 1).await;
    assert_eq!(status_of(&status), Some(ConsolidationStatus::Unchanged));
    assert_eq!(f.asked().len(), 2);
    // The next run is six hours after this one.
    let status = status_until(&handle, |s| s.next_run == Some(at(12 * HOUR))).await;
    assert_eq!(status.last_run, Some(due));
    handle.shutdown().await;
}

#[tokio::test]
async fn a_flush_runs_consolidation_once_30_minutes_have_passed_since_the_last_run() {
    let f = fixture(&[MERGED, MERGED, MERGED]);
    let consolidator = Arc::new(f.consolidator());
    run(&consolidator, RunMode::Write).await;
    let flushed = Arc::new(Notify::new());
    let handle = ConsolidationScheduler::spawn(consolidator, flushed.clone());
    status_until(&handle, |s| s.next_run == Some(at(6 * HOUR))).await;

    // A flush 10 minutes after the last run waits until 30 minutes have passed.
    f.clock.advance(10 * MINUTE);
    f.append(LOG, "- 12:10 — Ben's shop closes on Mondays.\n");
    flushed.notify_one();
    status_until(&handle, |s| s.next_run == Some(at(30 * MINUTE))).await;
    f.clock.wait_for_sleeper(at(30 * MINUTE)).await;
    assert_eq!(handle.status().runs, 0);
    assert_eq!(f.asked().len(), 1);
    f.clock.advance(20 * MINUTE);
    let status = status_until(&handle, |s| s.runs == 1).await;
    assert_eq!(status_of(&status), Some(ConsolidationStatus::Unchanged));
    assert!(f.asked()[1].contains("closes on Mondays"));

    // A flush 30 minutes after that run consolidates at once.
    status_until(&handle, |s| s.next_run == Some(at(6 * HOUR + 30 * MINUTE))).await;
    f.clock.advance(30 * MINUTE);
    f.append(LOG, "- 13:00 — Ana is away in April.\n");
    flushed.notify_one();
    let status = status_until(&handle, |s| s.runs == 2).await;
    assert_eq!(status_of(&status), Some(ConsolidationStatus::Unchanged));
    assert!(f.asked()[2].contains("away in April"));
    handle.shutdown().await;
}

#[tokio::test]
async fn a_run_that_found_the_lock_taken_is_retried_15_minutes_later() {
    let f = fixture(&[MERGED]);
    let held = JobLock::try_acquire(&f.workspace, LOCK_NAME)
        .unwrap()
        .unwrap();
    // Never consolidated: the first run is due at once.
    let handle = ConsolidationScheduler::spawn(Arc::new(f.consolidator()), Arc::new(Notify::new()));
    let status = status_until(&handle, |s| s.runs == 1).await;
    assert_eq!(status_of(&status), Some(ConsolidationStatus::Busy));
    let retry = at(15 * MINUTE);
    status_until(&handle, |s| s.next_run == Some(retry)).await;

    drop(held);
    f.clock.wait_for_sleeper(retry).await;
    f.clock.advance(15 * MINUTE);
    let status = status_until(&handle, |s| s.runs == 2).await;
    assert_eq!(status_of(&status), Some(ConsolidationStatus::Written));
    assert_eq!(f.read("MEMORY.md"), MERGED);
    handle.shutdown().await;
}

#[tokio::test]
async fn run_now_works_with_background_runs_off() {
    let f = fixture(&[MERGED]);
    let options = ConsolidationOptions {
        interval: None,
        ..ConsolidationOptions::default()
    };
    let consolidator = Arc::new(f.consolidator_with(options));
    let handle = ConsolidationScheduler::spawn(consolidator, Arc::new(Notify::new()));
    let report = handle.run_now().await.unwrap();
    assert_eq!(report.status, ConsolidationStatus::Written);
    assert_eq!(f.read("MEMORY.md"), MERGED);
    let status = status_until(&handle, |s| s.last_run == Some(start())).await;
    assert_eq!(
        (status.runs, status.running, status.next_run),
        (1, false, None)
    );
    handle.shutdown().await;
}
