//! Where a harness step's time goes, measured piece by piece outside the agent with the
//! same public calls the harness makes (no profiler needed):
//!
//! - context: `SessionTree::context_messages` (plus dropping the result), once per model
//!   call, on the session as it was at that call (replayed from the finished run, best of
//!   three), beside a full rebuild of the last call's context from the entries;
//! - tool specs: `ToolRegistry::specs`, once per model call (best of three);
//! - entry serialization: `serde_json::to_vec` of every entry the run wrote (the writer
//!   serializes on the caller's thread);
//! - save point: an append plus a `SessionWriter::checkpoint` (what a step waits for), and
//!   beside it the full `sync` round trip (what the end of a run waits for), per directory.

use std::path::Path;
use std::time::{Duration, Instant};

use cairn_core::session::{SessionStore, SessionTree};
use cairn_core::tools::ToolRegistry;
use cairn_protocol::{EntryKind, Message};

/// Each timing is the best of this many tries: the breakdown estimates CPU cost, and on a
/// busy machine single tries pick up preemptions.
const REPEATS: u32 = 3;

/// Summed costs over one run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Replay {
    pub model_calls: u32,
    pub context: Duration,
    /// The context for the last model call alone (the longest session).
    pub context_last: Duration,
    /// The same context rebuilt from the entries by a tree that never kept one.
    pub rebuild_last: Duration,
    pub specs: Duration,
    pub serialize: Duration,
    pub entries: usize,
}

/// Replays the finished session entry by entry, rebuilding the context wherever the harness
/// did (just before each assistant message).
pub fn replay(finished: &SessionTree, tools: &ToolRegistry) -> anyhow::Result<Replay> {
    let mut tree = SessionTree::new(finished.header().clone());
    let mut out = Replay::default();
    for entry in finished.entries() {
        if let EntryKind::Message {
            message: Message::Assistant(_),
        } = &entry.kind
        {
            out.context_last = best_of(REPEATS, || {
                drop(std::hint::black_box(tree.context_messages()));
            });
            out.context += out.context_last;
            out.specs += best_of(REPEATS, || {
                drop(std::hint::black_box(tools.specs()));
            });
            out.model_calls += 1;
        }
        let started = Instant::now();
        std::hint::black_box(serde_json::to_vec(entry)?);
        out.serialize += started.elapsed();
        out.entries += 1;
        tree.apply(entry.clone());
    }
    let mut fresh = SessionTree::new(finished.header().clone());
    for entry in finished.entries() {
        fresh.apply(entry.clone());
    }
    let started = Instant::now();
    drop(std::hint::black_box(fresh.context_messages()));
    out.rebuild_last = started.elapsed();
    Ok(out)
}

fn best_of(tries: u32, mut f: impl FnMut()) -> Duration {
    (0..tries)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// What a save point costs in `dir`, as means over `rounds` (after a warm-up round that
/// creates the file).
#[derive(Debug, Clone, Copy, Default)]
pub struct SavePointCost {
    /// Append one small entry plus a mid-run checkpoint: what a step waits for.
    pub checkpoint: Duration,
    /// Append plus a full sync round trip (the writer thread writes, fsyncs and answers):
    /// what the end of a run waits for, and what the checkpoint's sync costs off the step.
    pub sync: Duration,
}

pub async fn save_point_cost(dir: &Path, rounds: u32) -> anyhow::Result<SavePointCost> {
    let mut session = SessionStore::new(dir.join("sync-probe")).create()?;
    let mut cost = SavePointCost::default();
    for round in 0..=rounds {
        for last in [false, true] {
            let entry = session.tree.draft(EntryKind::Message {
                message: Message::user(format!("probe {round}")),
            });
            let started = Instant::now();
            session.writer.append(&entry)?;
            if last {
                session.writer.sync().await?;
            } else {
                session.writer.checkpoint()?;
            }
            let took = started.elapsed();
            if round > 0 {
                *(if last {
                    &mut cost.sync
                } else {
                    &mut cost.checkpoint
                }) += took;
            }
            session.tree.apply(entry);
        }
    }
    let rounds = rounds.max(1);
    Ok(SavePointCost {
        checkpoint: cost.checkpoint / rounds,
        sync: cost.sync / rounds,
    })
}

/// What a step's plumbing costs, per step: `events` events sent to one listener draining
/// them on another task (as a front end does), and one task spawned and joined (as each
/// tool call runs on one).
#[derive(Debug, Clone, Copy, Default)]
pub struct Plumbing {
    pub events: Duration,
    pub task: Duration,
}

pub async fn plumbing(steps: u32, events_per_step: u64) -> Plumbing {
    let bus = cairn_core::EventBus::new();
    let mut rx = bus.subscribe();
    let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let started = Instant::now();
    for step in 0..steps {
        for _ in 0..events_per_step {
            bus.emit(cairn_protocol::AgentEvent::TurnStart { step });
        }
        tokio::task::yield_now().await;
    }
    let events = started.elapsed();
    drop(bus);
    let _ = drain.await;
    let started = Instant::now();
    for _ in 0..steps {
        let _ = tokio::spawn(async { std::hint::black_box(1) }).await;
    }
    let task = started.elapsed();
    let steps = steps.max(1);
    Plumbing {
        events: events / steps,
        task: task / steps,
    }
}
