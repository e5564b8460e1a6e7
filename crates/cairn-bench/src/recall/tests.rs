//! The recall benchmark's own checks: the generator is a function of its seed, every
//! question's evidence is where it says and holds the fact, paraphrases keep to their rule,
//! and a small run finds answers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;

use cairn_protocol::session::{SessionEntry, SessionHeader};

use super::facts::{shared_words, Category};
use super::generate::{generate, Form, Generated, END};
use super::measure::{self, ranks, Engine, Hit};

/// Every file under `dir`, by relative path.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            for (name, bytes) in files(&path) {
                out.insert(
                    format!("{}/{name}", path.file_name().unwrap().to_string_lossy()),
                    bytes,
                );
            }
        } else {
            out.insert(
                path.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&path).unwrap(),
            );
        }
    }
    out
}

fn written(generated: &Generated, dir: &Path) -> BTreeMap<String, Vec<u8>> {
    for (n, person) in generated.people.iter().enumerate() {
        for (form, name) in [(Form::Logs, "logs"), (Form::Sessions, "sessions")] {
            person
                .conversation
                .write(form, &dir.join(format!("{name}/{n}")))
                .unwrap();
        }
    }
    files(dir)
}

#[test]
fn the_same_seed_writes_the_same_files_and_questions_and_another_does_not() {
    let (a, b, c) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let first = generate(7, 2, 3, 100);
    let again = generate(7, 2, 3, 100);
    let other = generate(8, 2, 3, 100);
    assert_eq!(first, again);
    assert_ne!(first, other);
    let (files_a, files_b) = (written(&first, a.path()), written(&again, b.path()));
    assert!(files_a.len() > 40, "{}", files_a.len());
    assert_eq!(files_a, files_b);
    assert_ne!(files_a, written(&other, c.path()));
}

#[test]
fn every_evidence_line_is_in_its_file_and_holds_the_fact() {
    let dir = tempfile::tempdir().unwrap();
    let generated = generate(7, 3, 13, 300);
    let asked: usize = generated.people.iter().map(|p| p.questions.len()).sum();
    assert!(asked >= 300, "{asked} questions");
    let mut categories = BTreeMap::new();
    let mut old_singles = 0;
    for (n, person) in generated.people.iter().enumerate() {
        let conversation = &person.conversation;
        for form in [Form::Logs, Form::Sessions] {
            let root = dir.path().join(format!("{n}-{form:?}"));
            conversation.write(form, &root).unwrap();
            for question in &person.questions {
                for &at in question.evidence.iter().chain(&question.older) {
                    let (path, line) = conversation.locate(form, at);
                    let text = std::fs::read_to_string(root.join(&path)).unwrap();
                    let found = text.lines().nth(line - 1).unwrap();
                    let said = conversation.line(at);
                    match form {
                        Form::Logs => assert_eq!(found, said),
                        Form::Sessions => assert!(found.contains(&said), "{found}"),
                    }
                }
            }
        }
        for question in &person.questions {
            let holds = |at| conversation.line(at).contains(&question.answer);
            assert!(
                question.evidence.iter().any(|&at| holds(at)),
                "{question:?}"
            );
            *categories.entry(question.category).or_insert(0) += 1;
            let day = conversation.days[question.evidence[0].day].date;
            if question.category == Category::Single && (END - day).num_days() > 270 {
                old_singles += 1;
            }
            if let Some(older) = question.older {
                assert!(older.day < question.evidence[0].day, "{question:?}");
            }
            if question.category == Category::Multi {
                assert_eq!(question.evidence.len(), 2);
                assert_ne!(question.evidence[0].day, question.evidence[1].day);
            }
        }
    }
    assert_eq!(categories.len(), 5, "{categories:?}");
    assert!(
        old_singles > 5,
        "{old_singles} single facts older than nine months"
    );
}

#[test]
fn paraphrases_share_at_most_one_content_word_with_their_evidence() {
    let generated = generate(7, 3, 13, 300);
    let mut paraphrases = 0;
    for person in &generated.people {
        for question in person
            .questions
            .iter()
            .filter(|q| q.category == Category::Paraphrase)
        {
            let line = person.conversation.line(question.evidence[0]);
            assert!(
                shared_words(&question.text, &line) <= 1,
                "{} / {line}",
                question.text
            );
            paraphrases += 1;
        }
    }
    assert!(paraphrases > 30, "{paraphrases}");
    assert_eq!(
        shared_words("Where does Maya work?", "Maya: I work at Lumen."),
        2
    );
}

#[test]
fn sessions_are_written_as_the_app_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    let generated = generate(3, 1, 1, 10);
    let conversation = &generated.people[0].conversation;
    conversation.write(Form::Sessions, dir.path()).unwrap();
    let (path, _) = conversation.locate(Form::Sessions, super::generate::At { day: 0, turn: 0 });
    let text = std::fs::read_to_string(dir.path().join(path)).unwrap();
    let mut lines = text.lines();
    let header: SessionHeader = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(header.kind, "session");
    for line in lines {
        serde_json::from_str::<SessionEntry>(line).unwrap();
    }
}

#[test]
fn a_hit_counts_where_its_lines_cover_the_evidence() {
    let hit = |path: &str, start, end| Hit {
        path: path.into(),
        start_line: start,
        end_line: end,
    };
    let hits = [hit("a.md", 1, 4), hit("b.md", 3, 9), hit("a.md", 10, 12)];
    let r = ranks(
        &hits,
        &[("b.md".into(), 5), ("a.md".into(), 12)],
        Some(&("a.md".into(), 2)),
    );
    assert_eq!(r.evidence, vec![Some(1), Some(2)]);
    assert!(r.recalled(2) && !r.all(2) && r.all(3));
    assert!(r.older_above_newer());
}

/// Two people over two months, keyword and FTS5 only: both find answers.
#[test]
fn a_small_run_without_a_model_recalls_by_keyword_and_fts5() {
    let dir = tempfile::tempdir().unwrap();
    let generated = generate(7, 2, 2, 60);
    let exact = vec![Vec::new(); 2];
    for form in [Form::Logs, Form::Sessions] {
        let run = measure::run(
            &dir.path().join(format!("{form:?}")),
            &generated,
            &exact,
            form,
            None,
        )
        .unwrap();
        assert_eq!(
            run.answered.len(),
            generated
                .people
                .iter()
                .map(|p| p.questions.len())
                .sum::<usize>()
        );
        for (slot, engine) in Engine::ALL.iter().enumerate() {
            let found = run
                .answered
                .iter()
                .filter(|a| a.ranks[slot].as_ref().is_some_and(|r| r.recalled(10)))
                .count();
            match engine {
                Engine::Keyword | Engine::Fts5 => assert!(found > 0, "{form:?} {engine:?}"),
                _ => assert!(run.answered.iter().all(|a| a.ranks[slot].is_none())),
            }
        }
        assert!(run.window >= 1 && !run.latency.is_empty());
    }
}
