//! `cairn-bench sandbox`'s network rows: `true` through the bash tool in the sandbox with
//! `network = true` (a network of the sandbox's own, slirp4netns attached before the
//! command starts) and with `network = false`, call by call in turns, so that the figure
//! is what asking for the network adds to a call.

use std::sync::Arc;

use cairn_core::tools::handlers::bash::{Bash, EnvScrub, SandboxChoice};
use cairn_memory::Workspace;
use serde_json::{json, Value};

use crate::report::{Row, Section, Verdict};
use crate::stats::{ms, round3};

/// The goal: the network adds less than this to a call's median.
const GOAL_MS: f64 = 10.0;

/// The rows, and their figures for the JSON report.
pub async fn section(workspace: &Arc<Workspace>, calls: usize) -> anyhow::Result<(Section, Value)> {
    let choice = |network| SandboxChoice {
        network,
        ..SandboxChoice::default()
    };
    let open = Bash::new(EnvScrub::default(), choice(true), false);
    let closed = Bash::new(EnvScrub::default(), choice(false), false);
    let (with, without) = super::measure(&open, &closed, workspace, "true", calls).await?;
    let added = ms(with.p50()) - ms(without.p50());
    let note = cairn_process::network_note();
    let through = note.clone().unwrap_or_else(|| "slirp4netns".into());
    let rows = vec![
        Row {
            name: "true, network = true: p50 / p99".into(),
            figure: format!("{:.1} / {:.1} ms", ms(with.p50()), ms(with.p99())),
            baseline: format!("{:.1} / {:.1} ms", ms(without.p50()), ms(without.p99())),
            goal: format!("adds < {GOAL_MS} ms p50"),
            verdict: Verdict::of(added < GOAL_MS),
        },
        Row::info("network = true: added at p50", format!("{added:.1} ms")),
        Row::info("network = true goes through", through),
    ];
    let section = Section {
        title: "`true` in the sandbox with network = true (figure) and network = false \
                (baseline)"
            .into(),
        rows,
    };
    let json = json!({
        "network_p50_ms": round3(ms(with.p50())), "network_p99_ms": round3(ms(with.p99())),
        "closed_p50_ms": round3(ms(without.p50())), "closed_p99_ms": round3(ms(without.p99())),
        "added_p50_ms": round3(added), "helper": if note.is_none() { "slirp4netns" } else { "none" },
        "note": note,
    });
    Ok((section, json))
}
