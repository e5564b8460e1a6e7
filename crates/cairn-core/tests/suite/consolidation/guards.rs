//! One run of consolidation and each of its guards.

use cairn_core::upkeep::consolidate::LOCK_NAME;
use cairn_core::upkeep::lock::JobLock;
use cairn_core::upkeep::{
    ConsolidateError, ConsolidationOptions, ConsolidationReport, ConsolidationStatus, RunMode,
};
use pretty_assertions::assert_eq;

use super::{fixture, run, LOG, LOG_TEXT, MEMORY_MD, MERGED};

const BACKUP: &str = "memory/archive/MEMORY-20260310T120000Z.md";

#[tokio::test]
async fn a_run_backs_up_the_old_file_writes_the_new_one_and_says_what_changed() {
    let f = fixture(&[&format!("```markdown\n{MERGED}```\n")]);
    let consolidator = f.consolidator();
    let report = run(&consolidator, RunMode::Write).await;
    assert_eq!(
        report,
        ConsolidationReport {
            added: 1,
            removed: 0,
            kept: 4,
            backup: Some(BACKUP.into()),
            merged_logs: vec![LOG.into()],
            chars: Some(MERGED.chars().count()),
            added_bullets: vec!["Dentist on March 14.".into()],
            ..ConsolidationReport::new(ConsolidationStatus::Written)
        }
    );
    // The fence the model put around the file is gone; the old file is in the archive.
    assert_eq!(f.read("MEMORY.md"), MERGED);
    assert_eq!(f.read(BACKUP), MEMORY_MD);
    // The model saw the old file and the new log.
    let asked = &f.asked()[0];
    assert!(asked.contains(MEMORY_MD.trim_end()), "{asked}");
    assert!(asked.contains(LOG_TEXT.trim_end()), "{asked}");
    assert!(consolidator.last_run().await.unwrap().is_some());
}

#[tokio::test]
async fn nothing_new_since_the_watermark_asks_no_model_and_a_grown_log_only_its_new_lines() {
    let f = fixture(&[MERGED, MERGED]);
    let consolidator = f.consolidator();
    run(&consolidator, RunMode::Write).await;
    let again = run(&consolidator, RunMode::Write).await;
    assert_eq!(
        again,
        ConsolidationReport::new(ConsolidationStatus::NothingNew)
    );
    assert_eq!(f.asked().len(), 1);

    f.append(LOG, "- 18:00 — Ben's bike shop closes on Mondays.\n");
    let grown = run(&consolidator, RunMode::Write).await;
    assert_eq!(grown.status, ConsolidationStatus::Unchanged);
    let asked = &f.asked()[1];
    assert!(asked.contains("closes on Mondays"), "{asked}");
    assert!(!asked.contains("garden meeting"), "{asked}");
}

#[tokio::test]
async fn a_model_built_on_demand_is_built_only_by_runs_with_logs_to_offer() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use cairn_core::upkeep::{Consolidator, ModelChoice, ModelSource};

    let f = fixture(&[MERGED]);
    let built = Arc::new(AtomicUsize::new(0));
    let (counter, provider) = (built.clone(), f.provider.clone());
    let source = ModelSource::OnDemand(Box::new(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        let provider = provider.clone();
        Box::pin(async move { Ok(ModelChoice::new(provider, "consolidation-model")) })
    }));
    let options = ConsolidationOptions::default();
    let consolidator = Consolidator::new(
        f.workspace.clone(),
        source,
        options,
        Arc::new(f.clock.clone()),
    );

    assert_eq!(
        run(&consolidator, RunMode::Write).await.status,
        ConsolidationStatus::Written
    );
    assert_eq!(built.load(Ordering::SeqCst), 1);
    let again = run(&consolidator, RunMode::Write).await;
    assert_eq!(again.status, ConsolidationStatus::NothingNew);
    assert_eq!(
        built.load(Ordering::SeqCst),
        1,
        "nothing new built the model"
    );

    // A model that cannot be built fails the run that needs it and changes nothing.
    let failing = ModelSource::OnDemand(Box::new(|| {
        Box::pin(async { Err(ConsolidateError::NoModel("the model file is gone".into())) })
    }));
    let options = ConsolidationOptions::default();
    let consolidator = Consolidator::new(
        f.workspace.clone(),
        failing,
        options,
        Arc::new(f.clock.clone()),
    );
    assert_eq!(
        run(&consolidator, RunMode::Write).await.status,
        ConsolidationStatus::NothingNew
    );
    f.append(LOG, "- 18:00 — Ben's bike shop closes on Mondays.\n");
    let err = consolidator
        .run(RunMode::Write, Default::default())
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "the model file is gone");
    assert_eq!(f.read("MEMORY.md"), MERGED);
}

#[tokio::test]
async fn a_backup_that_cannot_be_written_stops_the_rewrite() {
    let f = fixture(&[MERGED, MERGED]);
    // A file where the archive folder should be.
    f.write("memory/archive", "not a folder");
    let consolidator = f.consolidator();
    let err = consolidator
        .run(RunMode::Write, Default::default())
        .await
        .unwrap_err();
    assert!(matches!(err, ConsolidateError::Io { .. }), "{err}");
    assert_eq!(f.read("MEMORY.md"), MEMORY_MD);

    // The log was not counted as merged: the next run offers it again.
    std::fs::remove_file(f.workspace.root().join("memory/archive")).unwrap();
    let report = run(&consolidator, RunMode::Write).await;
    assert_eq!(report.status, ConsolidationStatus::Written);
    assert_eq!(f.asked().len(), 2);
}

#[tokio::test]
async fn a_rewrite_dropping_too_many_bullets_is_rejected_and_the_logs_offered_again() {
    let dropped = "# Memory\n\n## People\n- Ana leads the garden project.\n\n\
                   ## Dates\n- Dentist on March 14.\n";
    let f = fixture(&[dropped, MERGED]);
    let consolidator = f.consolidator();
    let report = run(&consolidator, RunMode::Write).await;
    assert_eq!(
        report,
        ConsolidationReport {
            added: 1,
            removed: 3,
            kept: 1,
            merged_logs: vec![LOG.into()],
            reason: Some(
                "the new MEMORY.md would drop 3 of 4 bullets (75%), more than the allowed 25%"
                    .into()
            ),
            chars: Some(dropped.chars().count()),
            added_bullets: vec!["Dentist on March 14.".into()],
            removed_bullets: vec![
                "Ben fixes the bikes.".into(),
                "Prefers tea over coffee.".into(),
                "Works from home on Fridays.".into()
            ],
            ..ConsolidationReport::new(ConsolidationStatus::Rejected)
        }
    );
    assert_eq!(f.read("MEMORY.md"), MEMORY_MD);
    assert_eq!(f.archive(), Vec::<String>::new());

    // The watermark did not move: the next run sends the same log.
    let next = run(&consolidator, RunMode::Write).await;
    assert_eq!(next.status, ConsolidationStatus::Written);
    assert_eq!(f.asked()[1], f.asked()[0]);
}

#[tokio::test]
async fn a_rewrite_over_the_budget_is_rejected() {
    let f = fixture(&[MERGED]);
    let options = ConsolidationOptions {
        budget_chars: 100,
        ..ConsolidationOptions::default()
    };
    let report = run(&f.consolidator_with(options), RunMode::Write).await;
    assert_eq!(report.status, ConsolidationStatus::Rejected);
    assert_eq!(
        report.reason.unwrap(),
        format!(
            "the new MEMORY.md would have {} characters, over the budget of 100",
            MERGED.chars().count()
        )
    );
    assert_eq!(f.read("MEMORY.md"), MEMORY_MD);
}

#[tokio::test]
async fn an_empty_or_fence_only_answer_is_rejected() {
    let f = fixture(&["```markdown\n```", "  \n"]);
    let consolidator = f.consolidator();
    for _ in 0..2 {
        let report = run(&consolidator, RunMode::Write).await;
        assert_eq!(report.status, ConsolidationStatus::Rejected);
        assert_eq!(
            report.reason.as_deref(),
            Some("the model's answer was empty")
        );
        assert_eq!(f.read("MEMORY.md"), MEMORY_MD);
    }
}

#[tokio::test]
async fn an_edit_made_while_the_model_works_is_kept_and_the_run_deferred() {
    let edited = format!("{MEMORY_MD}- Call mum on Sundays.\n");
    let with_edit = format!("{MERGED}- Call mum on Sundays.\n");
    let f = fixture(&[MERGED, &with_edit]).gated();
    let gate = f.gate.clone().unwrap();
    let consolidator = std::sync::Arc::new(f.consolidator());
    let running = tokio::spawn({
        let consolidator = consolidator.clone();
        async move { run(&consolidator, RunMode::Write).await }
    });
    gate.started.notified().await;
    f.write("MEMORY.md", &edited);
    gate.release.notify_one();
    let report = running.await.unwrap();
    assert_eq!(report.status, ConsolidationStatus::Deferred);
    assert_eq!(report.backup, None);
    assert!(report
        .reason
        .unwrap()
        .contains("changed while the model was working"));
    // The user's edit is kept, no backup is left behind, the log is still new.
    assert_eq!(f.read("MEMORY.md"), edited);
    assert_eq!(f.archive(), Vec::<String>::new());

    // A later run starts from the edited file and succeeds.
    gate.release.notify_one();
    let later = run(&consolidator, RunMode::Write).await;
    assert_eq!(later.status, ConsolidationStatus::Written);
    assert!(f.asked()[1].contains("Call mum on Sundays"));
    assert!(f.asked()[1].contains(LOG_TEXT.trim_end()));
    assert_eq!(f.read("MEMORY.md"), with_edit);
    assert_eq!(f.read(&later.backup.unwrap()), edited);
}

#[tokio::test]
async fn merged_logs_older_than_90_days_move_to_the_archive_once_merged() {
    let old = "memory/2025-12-09.md"; // 91 days before 2026-03-10
    let recent = "memory/2025-12-11.md"; // 89 days before
    let f = fixture(&["", MERGED]);
    f.write(old, "# 2025-12-09\n\n- 08:00 — Ben joined the bike club.\n");
    f.write(recent, "# 2025-12-11\n\n- 08:00 — Ana planted garlic.\n");
    let consolidator = f.consolidator();

    // A rejected run merged nothing, so nothing moves.
    let rejected = run(&consolidator, RunMode::Write).await;
    assert_eq!(rejected.status, ConsolidationStatus::Rejected);
    assert!(f.exists(old));

    let report = run(&consolidator, RunMode::Write).await;
    assert_eq!(report.merged_logs, [old, recent, LOG]);
    assert_eq!(report.archived_logs, [old]);
    assert!(!f.exists(old));
    assert!(f.exists(recent));
    assert_eq!(f.archive(), ["2025-12-09.md", "MEMORY-20260310T120000Z.md"]);
    // An archived log is not offered again.
    assert_eq!(
        run(&consolidator, RunMode::Write).await.status,
        ConsolidationStatus::NothingNew
    );
}

#[tokio::test]
async fn a_lock_held_by_another_handle_makes_the_run_busy() {
    let f = fixture(&[MERGED]);
    let consolidator = f.consolidator();
    let held = JobLock::try_acquire(&f.workspace, LOCK_NAME)
        .unwrap()
        .unwrap();
    let report = run(&consolidator, RunMode::Write).await;
    assert_eq!(
        report,
        ConsolidationReport {
            reason: Some("another consolidation of this workspace is running".into()),
            ..ConsolidationReport::new(ConsolidationStatus::Busy)
        }
    );
    assert_eq!(f.asked().len(), 0);
    drop(held);
    let report = run(&consolidator, RunMode::Write).await;
    assert_eq!(report.status, ConsolidationStatus::Written);
}

#[tokio::test]
async fn a_dry_run_reports_the_changes_and_writes_nothing() {
    let f = fixture(&[MERGED, MERGED]);
    let consolidator = f.consolidator();
    let report = run(&consolidator, RunMode::DryRun).await;
    assert_eq!(
        (report.status, report.added, report.removed, report.kept),
        (ConsolidationStatus::DryRun, 1, 0, 4)
    );
    assert_eq!(report.backup, None);
    assert_eq!(f.read("MEMORY.md"), MEMORY_MD);
    assert_eq!(f.archive(), Vec::<String>::new());
    assert_eq!(consolidator.last_run().await.unwrap(), None);
    // The log is still new for a real run.
    let real = run(&consolidator, RunMode::Write).await;
    assert_eq!(real.status, ConsolidationStatus::Written);
    assert_eq!(f.asked()[1], f.asked()[0]);
}
