//! The chunker's tests: properties over generated files, and the cases users meet.

use proptest::prelude::*;

use super::*;

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

/// Markdown-ish lines: headings, bullets, code fences, blanks, long prose.
fn markdown_line() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z ]{0,80}",
        1 => (1..7usize, "[A-Za-z ]{0,20}").prop_map(|(l, t)| format!("{} {t}", "#".repeat(l))),
        2 => "- [a-z ]{1,40}",
        1 => Just("```".to_string()),
        1 => Just(String::new()),
        1 => "[a-z]{200,2000}",
    ]
}

proptest! {
    #[test]
    fn every_line_is_in_a_chunk_and_ranges_are_exact(
        file in proptest::collection::vec(markdown_line(), 0..300)
    ) {
        let text = file.join("\n");
        let all = lines(&text);
        let chunks = chunk_markdown(&text);
        let mut covered = vec![false; all.len()];
        let mut previous_start = 0;
        for chunk in &chunks {
            prop_assert!(chunk.start_line >= 1 && chunk.start_line <= chunk.end_line);
            prop_assert!(chunk.end_line <= all.len());
            prop_assert!(chunk.start_line >= previous_start, "chunks move forward");
            previous_start = chunk.start_line;
            let lines = all[chunk.start_line - 1..chunk.end_line].join("\n");
            prop_assert!(lines.contains(&chunk.text), "a chunk's text is its lines'");
            if chunk.start_line < chunk.end_line {
                // Whole lines in between.
                let inner = &all[chunk.start_line..chunk.end_line - 1];
                prop_assert!(chunk.text.contains(&inner.join("\n")));
            }
            for line in chunk.start_line..=chunk.end_line {
                covered[line - 1] = true;
            }
        }
        prop_assert!(covered.iter().all(|&c| c), "some line is in no chunk");
        let given = given_back(&all, &chunks);
        prop_assert!(given.is_ok(), "{:?}", given);
    }

    #[test]
    fn chunks_stay_within_the_target(
        file in proptest::collection::vec(markdown_line(), 1..400)
    ) {
        let text = file.join("\n");
        for chunk in chunk_markdown(&text) {
            prop_assert!(
                estimate_tokens(&chunk.text) <= TARGET_TOKENS + 2,
                "a chunk of {} tokens", estimate_tokens(&chunk.text)
            );
        }
    }

    #[test]
    fn with_a_tokenizer_every_chunk_and_its_heading_fit_the_window(
        file in proptest::collection::vec(prose_line(), 1..300)
    ) {
        let text = file.join("\n");
        let words = Arc::new(Words);
        let sizing = Sizing::model(words.clone());
        for chunk in chunk_markdown_sized(&text, &sizing) {
            let embedded = crate::index::embedding_text(&chunk.heading, &chunk.text);
            prop_assert!(
                words.count(&embedded) + 2 <= words.window(),
                "{} tokens in a window of {}", words.count(&embedded), words.window()
            );
        }
    }
}

/// Lines of prose, some one long paragraph, some headings.
fn prose_line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z]{1,8}( [a-z]{1,8}){0,15}",
        1 => (1..4usize, "[A-Za-z]{1,8}( [A-Za-z]{1,8}){0,5}").prop_map(|(l, t)| format!("{} {t}", "#".repeat(l))),
        1 => "[a-z]{1,12}( [a-z]{1,12}){100,400}",
        1 => Just(String::new()),
    ]
}

/// A tokenizer of words: every run of letters is a token, and every other character
/// but a space.
struct Words;

impl Tokens for Words {
    fn count(&self, text: &str) -> usize {
        let mut count = 0;
        let mut in_word = false;
        for c in text.chars() {
            if c.is_alphanumeric() {
                count += usize::from(!in_word);
                in_word = true;
            } else {
                in_word = false;
                count += usize::from(!c.is_whitespace());
            }
        }
        count
    }

    fn window(&self) -> usize {
        64
    }

    fn name(&self) -> String {
        "words".into()
    }
}

#[test]
fn a_paragraph_on_one_line_is_cut_at_spaces_into_fitting_chunks() {
    let sentence = "the quiet harbour wakes before the fishing boats return ";
    let paragraph = sentence.repeat(60);
    let text = format!("# Harbour\n{paragraph}\nlast line");
    let sizing = Sizing::model(Arc::new(Words));
    let chunks = chunk_markdown_sized(&text, &sizing);
    assert!(chunks.len() > 5, "{}", chunks.len());
    for chunk in &chunks {
        assert_eq!(chunk.heading, "Harbour");
        assert!(Words.count(&chunk.text) + Words.count("Harbour") + 3 <= 64);
        // Cut between words, never inside one.
        assert!(!chunk.text.starts_with("arbour") && !chunk.text.contains("harbourwakes"));
    }
    assert_eq!(chunks.last().unwrap().end_line, 3);
    assert!(chunks.last().unwrap().text.ends_with("\nlast line"));
    // Estimated, the same paragraph is also cut (it is over 400 estimated tokens).
    assert!(chunk_markdown(&text).len() > 1);
}

#[test]
fn a_long_line_is_cut_between_sentences_when_it_can_be() {
    let sentence = "The ferry to the island leaves at nine and returns at six. ";
    let text = sentence.repeat(40);
    let sizing = Sizing::model(Arc::new(Words));
    for chunk in chunk_markdown_sized(&text, &sizing) {
        let trimmed = chunk.text.trim();
        assert!(trimmed.starts_with("The ferry"), "{trimmed:?}");
        assert!(trimmed.ends_with("six."), "{trimmed:?}");
    }
}

#[test]
fn a_chunk_never_spans_pages() {
    let pages = [
        (Some(1), "one\ntwo"),
        (Some(2), "three"),
        (Some(3), "four\nfive"),
    ];
    let chunks = chunk_pages(&pages, &Sizing::estimate());
    let got: Vec<_> = chunks
        .iter()
        .map(|c| (c.page, c.start_line, c.end_line, c.text.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (Some(1), 1, 2, "one\ntwo"),
            (Some(2), 3, 3, "three"),
            (Some(3), 4, 5, "four\nfive")
        ]
    );
}

#[test]
fn headings_start_chunks_and_give_their_path() {
    let text = "# Project\nintro\n## Decisions\n- use Rust\n### Later\n- maybe\n## People\n- Ana";
    let chunks = chunk_markdown(text);
    let got: Vec<(usize, usize, &str)> = chunks
        .iter()
        .map(|c| (c.start_line, c.end_line, c.heading.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, 2, "Project"),
            (3, 4, "Project > Decisions"),
            (5, 6, "Project > Decisions > Later"),
            (7, 8, "Project > People"),
        ]
    );
}

#[test]
fn a_hash_inside_a_code_fence_is_not_a_heading() {
    let text = "# Notes\n```sh\n# a comment\necho hi\n```\nafter";
    let chunks = chunk_markdown(text);
    assert_eq!(chunks.len(), 1);
    assert_eq!((chunks[0].start_line, chunks[0].end_line), (1, 6));
}

#[test]
fn a_long_section_is_cut_with_overlap() {
    let text: String = (1..=200)
        .map(|i| format!("- fact number {i} about the project and its many details\n"))
        .collect();
    let chunks = chunk_markdown(&text);
    assert!(chunks.len() > 2);
    for pair in chunks.windows(2) {
        assert!(
            pair[1].start_line <= pair[0].end_line,
            "consecutive chunks overlap"
        );
        assert!(pair[1].start_line > pair[0].start_line);
    }
    assert_eq!(chunks.last().unwrap().end_line, 200);
}

#[test]
fn sessions_index_what_was_said_with_file_line_numbers() {
    let text = [
        r#"{"type":"session","version":1,"id":"s","created_at":"2026-01-01T00:00:00Z"}"#,
        r#"{"type":"message","id":"a","parent_id":null,"ts":"t","message":{"role":"user","content":[{"type":"text","text":"Where is the invoice?"}]}}"#,
        r#"{"type":"message","id":"b","parent_id":"a","ts":"t","message":{"role":"assistant","content":[{"type":"tool_call","id":"c","name":"grep","arguments":{}}],"stop_reason":"tool_use"}}"#,
        r#"{"type":"message","id":"c","parent_id":"b","ts":"t","message":{"role":"tool_result","call_id":"c","tool_name":"grep","content":"secret tool output","is_error":false}}"#,
        r#"{"type":"message","id":"d","parent_id":"c","ts":"t","message":{"role":"assistant","content":[{"type":"text","text":"In knowledge/invoices.md."}],"stop_reason":"end_turn"}}"#,
        r#"{"type":"session_info","id":"e","parent_id":null,"ts":"t","title":"Invoices"}"#,
        "{torn",
    ]
    .join("\n");
    let chunks = chunk_session(&text, &Sizing::estimate());
    assert_eq!(chunks.len(), 1);
    let chunk = &chunks[0];
    assert_eq!((chunk.start_line, chunk.end_line), (2, 5));
    assert_eq!(chunk.heading, "Invoices");
    assert_eq!(
        chunk.text,
        "user: Where is the invoice?\nassistant: In knowledge/invoices.md."
    );
}

/// Whether `chunks` give `lines` back exactly, else what is wrong: each chunk's text is
/// the stretch of the file that begins on its first line and ends on its last (a long line
/// may be cut in pieces, a piece never empty), and the chunks, in order, leave out nothing
/// but the line break where one ends and the next begins (a chunk cut for size may repeat
/// the end of the one before).
pub(crate) fn given_back(lines: &[&str], chunks: &[Chunk]) -> Result<(), String> {
    if chunks.is_empty() != lines.is_empty() {
        return Err(format!("{} chunks for {} lines", chunks.len(), lines.len()));
    }
    let file = lines.join("\n");
    // Where each line begins in `file`.
    let starts: Vec<usize> = lines
        .iter()
        .scan(0, |at, line| {
            let start = *at;
            *at += line.len() + 1;
            Some(start)
        })
        .collect();
    let span = |line: usize| (starts[line - 1], starts[line - 1] + lines[line - 1].len());
    // How much of `file` the chunks so far gave back.
    let mut given = 0;
    let mut previous_start = 1;
    for (n, chunk) in chunks.iter().enumerate() {
        let (first, last) = (chunk.start_line, chunk.end_line);
        if first < previous_start || last < first || last > lines.len() {
            return Err(format!(
                "chunk {n} names lines {first}..={last} of {} after one at line {previous_start}",
                lines.len()
            ));
        }
        previous_start = first;
        if chunk.text.is_empty() && (first != last || !lines[first - 1].is_empty()) {
            return Err(format!("chunk {n} (lines {first}..={last}) is empty"));
        }
        // It begins on its first line, at most one line break past what was given back
        // (at the file's start, at its start), and ends on its last line. Text that
        // repeats may fit in several places: the latest one is taken.
        let after_break = n > 0 && file.as_bytes().get(given) == Some(&b'\n');
        let latest = given + usize::from(after_break);
        let ((first_from, first_to), (last_from, last_to)) = (span(first), span(last));
        let begin = (first_from..=latest.min(first_to)).rev().find(|&begin| {
            let end = begin + chunk.text.len();
            (last_from..=last_to).contains(&end)
                && file.get(begin..end) == Some(chunk.text.as_str())
        });
        let Some(begin) = begin else {
            return Err(format!(
                "chunk {n} (lines {first}..={last}) is not the file's text there, \
                 or skips some of it after byte {given}: {:?}",
                chunk.text
            ));
        };
        given = given.max(begin + chunk.text.len());
    }
    if given != file.len() {
        return Err(format!(
            "the chunks give back {given} bytes of {}",
            file.len()
        ));
    }
    Ok(())
}
