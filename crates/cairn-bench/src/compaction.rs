//! `cairn-bench compaction`: what a compaction costs and what it saves, on a generated
//! 200-turn session.
//!
//! The session is made by the real harness with a scripted zero-latency model: each turn
//! is a user message, an answer, and every fourth turn a read_file call on a workspace
//! note first. Then `Agent::compact` runs (flush off) with a scripted summariser that
//! reports the request's size as its input tokens, as a provider would. Figures: the
//! harness's own time for the compaction, the tokens the summary request costs (input +
//! output), the context before and after, and after how many requests the saving pays
//! back the cost.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use cairn_core::session::SessionStore;
use cairn_core::tools::ToolRegistry;
use cairn_core::{Agent, AgentConfig, AgentParts};
use cairn_llm::{ScriptStep, ScriptedProvider, ScriptedTurn};
use cairn_memory::Workspace;
use cairn_protocol::Message;
use serde_json::json;

use crate::report::{build, Report, Row, Section, Verdict};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Turns (user message + answer) in the generated session.
    #[arg(long, default_value_t = 200)]
    turns: u32,
}

const WORDS: &[&str] = &[
    "the",
    "plan",
    "release",
    "deadline",
    "review",
    "budget",
    "client",
    "design",
    "tests",
    "server",
    "meeting",
    "notes",
    "Ana",
    "Bruno",
    "Chen",
    "migration",
    "database",
    "invoice",
    "schedule",
    "garden",
    "report",
    "draft",
    "feedback",
    "launch",
    "timeline",
    "risk",
    "on",
    "before",
    "after",
    "with",
    "for",
    "and",
    "we",
    "should",
    "will",
    "move",
    "check",
    "keep",
];

/// Deterministic filler text of about `words` words.
fn text(seed: &mut u64, words: usize) -> String {
    let mut out = Vec::with_capacity(words);
    for i in 0..words {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        out.push(WORDS[(*seed >> 33) as usize % WORDS.len()]);
        if i % 14 == 13 {
            out.push("and");
        }
    }
    format!("{}.", out.join(" "))
}

pub async fn run(args: Args) -> anyhow::Result<Report> {
    let dir = tempfile::tempdir()?;
    let workspace = Arc::new(Workspace::open_or_create(dir.path())?);
    let mut seed = 7u64;
    for n in 0..10 {
        let note = (0..20)
            .map(|_| text(&mut seed, 25))
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::create_dir_all(workspace.root().join("notes"))?;
        std::fs::write(workspace.root().join(format!("notes/{n}.md")), note)?;
    }
    let calls = Arc::new(AtomicU64::new(0));
    let counter = calls.clone();
    let chat = ScriptedProvider::with_responder(move |request| {
        let n = counter.fetch_add(1, Ordering::Relaxed);
        let mut seed = n + 1;
        match request.messages.last() {
            Some(Message::User { .. }) if n.is_multiple_of(5) => ScriptedTurn::tool_call(
                "read_file",
                json!({"path": format!("notes/{}.md", n % 10)}),
            ),
            _ => ScriptedTurn::text(text(&mut seed, 140)),
        }
    });
    let summariser = ScriptedProvider::with_responder(|request| {
        let prompt: usize = request.messages.iter().map(|m| m.text().len()).sum();
        let prompt = prompt + request.system.as_ref().map_or(0, String::len);
        let mut seed = 99;
        let summary = format!(
            "## Goal\n- {}\n## Progress\n- {}\n## Decisions\n- {}\n## Next steps\n- {}",
            text(&mut seed, 60),
            text(&mut seed, 120),
            text(&mut seed, 80),
            text(&mut seed, 60)
        );
        ScriptedTurn::steps(vec![
            ScriptStep::Usage {
                input_tokens: prompt as u64 / 4,
                output_tokens: summary.len() as u64 / 4,
            },
            ScriptStep::Text(summary),
        ])
    });
    let agent = Agent::new(AgentParts {
        workspace: workspace.clone(),
        provider: Arc::new(chat),
        session: SessionStore::new(workspace.sessions_dir()).create()?,
        config: AgentConfig {
            model: "bench".into(),
            // Room for the whole session: only the compaction measured here runs.
            context: cairn_core::ContextBudget {
                window: Some(10_000_000),
                ..Default::default()
            },
            ..AgentConfig::default()
        },
        tools: ToolRegistry::builtin(),
        hooks: Vec::new(),
        mcp: None,
        models: None,
        memory: None,
        upkeep: cairn_core::agent::Upkeep {
            compaction: Some(cairn_core::upkeep::ModelChoice::new(
                Arc::new(summariser),
                "summariser",
            )),
            ..Default::default()
        },
    });
    eprintln!("generating a session of {} turns", args.turns);
    let mut seed = 3u64;
    for _ in 0..args.turns {
        agent.prompt(text(&mut seed, 60)).await?;
    }
    let entries = agent.session_snapshot().entries().len();
    let started = Instant::now();
    let report = agent.compact(None).await?;
    let wall = started.elapsed();
    let cost = report.usage.input_tokens + report.usage.output_tokens;
    let saved = report.tokens_before.saturating_sub(report.tokens_after);
    let payback = if saved > 0 {
        cost as f64 / saved as f64
    } else {
        f64::INFINITY
    };
    let rows = vec![
        Row::info(
            "session",
            format!("{} turns, {entries} entries", args.turns),
        ),
        Row::info(
            "context before (estimated tokens)",
            report.tokens_before.to_string(),
        ),
        Row::info("context after", report.tokens_after.to_string()),
        Row {
            name: "saved per later request".into(),
            figure: format!(
                "{saved} tokens ({:.0}%)",
                saved as f64 * 100.0 / report.tokens_before.max(1) as f64
            ),
            baseline: "-".into(),
            goal: "> 50%".into(),
            verdict: Verdict::of(saved * 2 > report.tokens_before),
        },
        Row::info(
            "summary request cost",
            format!(
                "{cost} tokens ({} in, {} out)",
                report.usage.input_tokens, report.usage.output_tokens
            ),
        ),
        Row::info("pays back after", format!("{payback:.2} requests")),
        Row::info(
            "harness time of the compaction (model answers at once)",
            format!("{:.2} ms", wall.as_secs_f64() * 1e3),
        ),
    ];
    Ok(Report {
        title: format!("cairn-bench compaction ({} build)", build()),
        sections: vec![Section {
            title: "One compaction of a generated session".into(),
            rows,
        }],
        notes: vec![
            "Tokens are the harness's estimates (4 characters a token), the summariser \
             reports the same for its request; the model's own time is not included."
                .into(),
            format!(
                "Kept as it is: the most recent ~{} tokens, cut at a turn boundary.",
                AgentConfig::default().context.keep_recent_tokens
            ),
        ],
        json: json!({
            "turns": args.turns,
            "entries": entries,
            "tokens_before": report.tokens_before,
            "tokens_after": report.tokens_after,
            "summary_input_tokens": report.usage.input_tokens,
            "summary_output_tokens": report.usage.output_tokens,
            "payback_requests": payback,
            "harness_ms": wall.as_secs_f64() * 1e3,
        }),
    })
}
