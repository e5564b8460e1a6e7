//! `cairn-bench local-model --quality`: how well the local model answers through Cairn, with
//! Cairn's context as a new workspace gives it, beside a bare workspace (AGENTS.md and
//! MEMORY.md empty), and beside the default workspace with the full context a model with
//! tools gets (`[context] compact = false`, as before the compact context). A dozen plain questions with known answers, each asked in a new
//! session as `cairn ask` would; an answer is right when it holds one of the expected
//! words. Goal: the default workspace answers at least as many as the bare one.

use std::path::Path;

use anyhow::Context as _;
use cairn_app::launch::{Config, Launch, LaunchRequest};
use serde_json::json;

use crate::report::{Report, Row, Section, Verdict};

/// The questions and the words a right answer holds (any of them, in lower case).
const QUESTIONS: &[(&str, &[&str])] = &[
    ("What is the capital of France?", &["paris"]),
    ("What is 2 + 2?", &["4", "four"]),
    ("What color is the sky on a clear day?", &["blue"]),
    ("How many days are there in a week?", &["7", "seven"]),
    ("What is the opposite of hot?", &["cold"]),
    (
        "What is the largest planet in our solar system?",
        &["jupiter"],
    ),
    ("What language do people speak in Spain?", &["spanish"]),
    ("How many legs does a spider have?", &["8", "eight"]),
    ("What is the chemical formula of water?", &["h2o", "h₂o"]),
    ("Who wrote Romeo and Juliet?", &["shakespeare"]),
    (
        "At what temperature in Celsius does water freeze?",
        &["0", "zero"],
    ),
    ("What is the capital of Japan?", &["tokyo"]),
];

/// One way of asking, and how it did.
pub struct Scored {
    pub right: usize,
    pub answers: Vec<(String, bool)>,
}

/// Right when a word of the answer is one of `expected` ("100" is not "0"); longer
/// expected words may also appear inside one ("Shakespeare's").
fn is_right(answer: &str, expected: &[&str]) -> bool {
    let answer = answer.to_lowercase();
    let words: Vec<&str> = answer
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    expected
        .iter()
        .any(|e| words.contains(e) || (e.chars().count() > 3 && answer.contains(e)))
}

/// Asks every question in a new session of a workspace at `dir` (made from the template;
/// `bare`: AGENTS.md and MEMORY.md emptied), with the model at `model`.
async fn ask_all(dir: &Path, model: &Path, bare: bool, compact: bool) -> anyhow::Result<Scored> {
    let config_dir = dir.join("config");
    std::fs::create_dir_all(&config_dir)?;
    std::fs::write(
        config_dir.join("config.toml"),
        format!(
            "default_provider = \"bundled\"\n[providers.bundled]\nkind = \"local\"\n\
             model_path = {}\n[memory]\nflush = false\nconsolidation_interval_hours = 0\n\
             [context]\ncompact = {compact}\n",
            json!(model.display().to_string())
        ),
    )?;
    let workspace = dir.join("workspace");
    cairn_memory::Workspace::open_or_create(&workspace)?;
    if bare {
        std::fs::write(workspace.join("AGENTS.md"), "")?;
        std::fs::write(workspace.join("MEMORY.md"), "")?;
    }
    let mut scored = Scored {
        right: 0,
        answers: Vec::new(),
    };
    for (question, expected) in QUESTIONS {
        let mut ignore = |_: String| ();
        let config = Config::load(Some(&config_dir))?;
        let request = LaunchRequest {
            workspace: Some(&workspace),
            yes: true,
            max_steps: Some(4),
        };
        let launch = Launch::prepare(config, request, &mut ignore).await?;
        let session = launch.session(None, false, &mut ignore).await?;
        let (agent, _memory) = launch.agent(session);
        let report = agent.prompt(*question).await?;
        let answer = report.answer.unwrap_or_default();
        let right = is_right(&answer, expected);
        scored.right += usize::from(right);
        scored.answers.push((answer, right));
    }
    Ok(scored)
}

pub async fn run(model: &Path) -> anyhow::Result<Report> {
    let dir = tempfile::tempdir().context("a scratch folder")?;
    eprintln!("{} questions, default workspace", QUESTIONS.len());
    let default = ask_all(&dir.path().join("default"), model, false, true).await?;
    eprintln!("{} questions, bare workspace", QUESTIONS.len());
    let bare = ask_all(&dir.path().join("bare"), model, true, true).await?;
    eprintln!(
        "{} questions, default workspace with the full context",
        QUESTIONS.len()
    );
    let full = ask_all(&dir.path().join("full"), model, false, false).await?;
    let n = QUESTIONS.len();
    let mut rows = vec![
        Row {
            name: "right answers, default workspace".into(),
            figure: format!("{}/{n}", default.right),
            baseline: format!("{}/{n} bare", bare.right),
            goal: ">= bare".into(),
            verdict: Verdict::of(default.right >= bare.right),
        },
        Row::info(
            "  with the full context (compact = false)",
            format!("{}/{n}", full.right),
        ),
    ];
    for (i, (question, _)) in QUESTIONS.iter().enumerate() {
        let mark = |s: &Scored| if s.answers[i].1 { "right" } else { "wrong" };
        rows.push(Row::info(
            format!("  {question}"),
            format!("{} / {} / {}", mark(&default), mark(&bare), mark(&full)),
        ));
    }
    let notes = vec![
        format!("Model: {}. Each question in a new session through Cairn's harness (as `cairn ask`), greedy; right = a word of the answer is one of the expected ones (\"100\" is not \"0\").", model.display()),
        "Default: a new workspace from the template. Bare: the same with AGENTS.md and MEMORY.md empty. Full: the default workspace with `[context] compact = false` (the context a model with tools gets). Per question: default / bare / full.".into(),
    ];
    let json = json!({
        "questions": n,
        "default_right": default.right,
        "bare_right": bare.right,
        "full_context_right": full.right,
        "answers": QUESTIONS.iter().enumerate().map(|(i, (q, _))| json!({
            "question": q,
            "default": default.answers[i].0, "default_right": default.answers[i].1,
            "bare": bare.answers[i].0, "bare_right": bare.answers[i].1,
            "full": full.answers[i].0, "full_right": full.answers[i].1,
        })).collect::<Vec<_>>(),
        "pass": {"default_at_least_bare": default.right >= bare.right},
    });
    Ok(Report {
        title: format!(
            "cairn-bench local-model --quality ({} build)",
            crate::report::build()
        ),
        sections: vec![Section {
            title: "Answer quality of the local model, default workspace beside a bare one".into(),
            rows,
        }],
        notes,
        json,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_right_when_it_holds_an_expected_word() {
        assert!(is_right("The capital of France is Paris.", &["paris"]));
        assert!(is_right("Seven days.", &["7", "seven"]));
        assert!(!is_right("I do not know.", &["paris"]));
        assert!(!is_right("Water freezes at 100 degrees.", &["0", "zero"]));
        assert!(is_right("It freezes at 0°C.", &["0", "zero"]));
        assert!(is_right("Shakespeare's play.", &["shakespeare"]));
    }
}
