//! `cairn consolidate`: merge the new daily logs into MEMORY.md now, or (`--dry-run`) show
//! what a run would change.

use std::fmt::Write as _;
use std::time::Duration;

use cairn_app::cairn_core::upkeep::{
    ConsolidateError, ConsolidationReport, ConsolidationStatus as Status, RunMode,
};
use cairn_app::cairn_llm::LlmError;
use cairn_app::launch;
use tokio_util::sync::CancellationToken;

use crate::args::{Cli, ConsolidateArgs};
use crate::index::{duration, plural};
use crate::setup;
use crate::terminal::{self, Style};

pub async fn run(cli: &Cli, args: &ConsolidateArgs) -> anyhow::Result<u8> {
    let config = setup::config(cli)?;
    let workspace = setup::workspace(cli, &config)?;
    // Its model is built only when there are logs to merge: "nothing new" loads none.
    let consolidator = launch::consolidator_now(&config, &workspace, None, None)?;
    let mode = if args.dry_run {
        RunMode::DryRun
    } else {
        RunMode::Write
    };
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let interrupt = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stop.cancel();
        }
    });
    let result = consolidator.run(mode, cancel).await;
    interrupt.abort();
    if let Err(ConsolidateError::Model(LlmError::Aborted)) = result {
        eprintln!("cairn: stopped; MEMORY.md is unchanged");
        return Ok(130);
    }
    let report = result?;
    let text = if args.json {
        format!("{}\n", serde_json::to_string_pretty(&report)?)
    } else {
        describe(&report, Style::detect())
    };
    terminal::print(&text)?;
    if let Some(problem) = problem(&report) {
        eprintln!("cairn: {problem}");
    }
    Ok(if report.status.is_success() { 0 } else { 1 })
}

/// What went wrong, for stderr, when the run did not do its job.
fn problem(report: &ConsolidationReport) -> Option<String> {
    let reason = terminal::clean_line(report.reason.as_deref().unwrap_or_default());
    match report.status {
        Status::Written | Status::Unchanged | Status::NothingNew | Status::DryRun => None,
        Status::Rejected => Some(format!(
            "the rewrite was rejected: {reason}; MEMORY.md is unchanged and the daily logs \
             will be offered again"
        )),
        Status::Deferred => Some(format!("consolidation deferred: {reason}")),
        Status::Busy => Some(format!(
            "{reason} (the desktop app or another `cairn consolidate`); try again when it \
             has finished"
        )),
    }
}

/// The report as text: what happened, the backup, the bullets added and removed, the logs
/// merged and archived.
pub fn describe(report: &ConsolidationReport, style: Style) -> String {
    let mut out = String::new();
    let counts = format!(
        "{} added, {} removed, {} kept",
        report.added, report.removed, report.kept
    );
    let logs = plural(report.merged_logs.len() as u64, "daily log");
    let took = duration(Duration::from_millis(report.took_ms));
    let headline = match report.status {
        Status::Written => format!(
            "{} {counts} ({logs} merged) in {took}",
            style.bold("MEMORY.md rewritten:")
        ),
        Status::Unchanged => format!(
            "{} the model kept it as it was ({logs} merged) in {took}",
            style.bold("MEMORY.md unchanged:")
        ),
        Status::NothingNew => format!(
            "{} no daily log changed since the last consolidation",
            style.bold("nothing new:")
        ),
        Status::DryRun => format!(
            "{} MEMORY.md would get {counts} ({logs}); nothing was written",
            style.bold("dry run:")
        ),
        Status::Rejected => format!("{} {counts} ({logs})", style.bold("rejected:")),
        Status::Deferred => style.bold("deferred: MEMORY.md was edited meanwhile"),
        Status::Busy => style.bold("busy: another consolidation is running"),
    };
    let _ = writeln!(out, "{headline}");
    if let Some(backup) = &report.backup {
        let _ = writeln!(out, "backup: {}", terminal::clean_line(backup));
    }
    list(&mut out, "added", &report.added_bullets, style);
    list(&mut out, "removed", &report.removed_bullets, style);
    list(&mut out, "archived", &report.archived_logs, style);
    out
}

fn list(out: &mut String, title: &str, items: &[String], style: Style) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", style.dim(&format!("{title}:")));
    for item in items {
        let _ = writeln!(out, "  - {}", terminal::clean_line(item));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_report_lists_the_backup_and_the_bullets() {
        let report = ConsolidationReport {
            added: 1,
            kept: 4,
            backup: Some("memory/archive/MEMORY-20260310T120000Z.md".into()),
            merged_logs: vec!["memory/2026-03-09.md".into()],
            archived_logs: vec!["memory/2025-12-01.md".into()],
            added_bullets: vec!["Dentist on March 14.\x1b[31m".into()],
            took_ms: 850,
            ..ConsolidationReport::new(Status::Written)
        };
        assert_eq!(
            describe(&report, Style::plain()),
            "MEMORY.md rewritten: 1 added, 0 removed, 4 kept (1 daily log merged) in 850 ms\n\
             backup: memory/archive/MEMORY-20260310T120000Z.md\n\
             added:\n  - Dentist on March 14.\u{fffd}[31m\n\
             archived:\n  - memory/2025-12-01.md\n"
        );
        assert_eq!(problem(&report), None);
    }

    #[test]
    fn a_rejected_report_says_why_on_stderr() {
        let report = ConsolidationReport {
            removed: 3,
            kept: 1,
            reason: Some("the new MEMORY.md would drop 3 of 4 bullets (75%)".into()),
            removed_bullets: vec!["Ben fixes the bikes.".into()],
            ..ConsolidationReport::new(Status::Rejected)
        };
        assert_eq!(
            describe(&report, Style::plain()),
            "rejected: 0 added, 3 removed, 1 kept (0 daily logs)\n\
             removed:\n  - Ben fixes the bikes.\n"
        );
        assert_eq!(
            problem(&report).unwrap(),
            "the rewrite was rejected: the new MEMORY.md would drop 3 of 4 bullets (75%); \
             MEMORY.md is unchanged and the daily logs will be offered again"
        );
    }
}
