//! Extraction in a child process, as the app and the CLI do it: this program serves (its
//! `main` calls `serve_if_asked` first), so every file is read by this program started
//! again, with a memory limit and a timeout.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use cairn_extract::guard::{self, Limits};
use cairn_extract::Kind;
use cairn_testkit::documents;

const TESTS: [(&str, fn()); 3] = [
    (
        "a_document_is_read_in_a_child",
        a_document_is_read_in_a_child,
    ),
    (
        "a_child_over_its_memory_limit_is_reported_not_fatal",
        a_child_over_its_memory_limit_is_reported_not_fatal,
    ),
    (
        "a_child_past_its_timeout_is_killed",
        a_child_past_its_timeout_is_killed,
    ),
];

/// Serves first; then speaks enough of the test harness's command line for cargo and
/// nextest: `--list` names the tests, a name (with `--exact`) runs that one, nothing runs
/// all.
fn main() {
    guard::serve_if_asked();
    assert!(guard::serves());
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        if !args.iter().any(|a| a == "--ignored") {
            for (name, _) in TESTS {
                println!("{name}: test");
            }
        }
        return;
    }
    let wanted: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    for (name, test) in TESTS {
        if wanted.is_empty() || wanted.iter().any(|w| name.contains(w.as_str())) {
            test();
            println!("test {name} ... ok");
        }
    }
}

fn a_document_is_read_in_a_child() {
    let pdf = documents::pdf(&["The ferry to Hvar leaves at nine.", "Page two."]);
    let extracted = guard::extract(Kind::Pdf, &pdf, Limits::default()).unwrap();
    assert_eq!(extracted.pages.len(), 2);
    assert!(extracted.pages[0].text.contains("Hvar"));
    let error = guard::extract(Kind::Pdf, b"%PDF-1.4 junk", Limits::default()).unwrap_err();
    assert!(error.contains("cannot be read"), "{error}");
}

fn a_child_over_its_memory_limit_is_reported_not_fatal() {
    // About 40 MB of text to inflate, in a child allowed far less address space.
    let big = vec![b'a'; 40 << 20];
    let docx = documents::zip(&[("word/document.xml", big.as_slice())]);
    let limits = Limits {
        memory_bytes: 24 << 20,
        ..Limits::default()
    };
    let error = guard::extract(Kind::Docx, &docx, limits).unwrap_err();
    // Either the reader sees the allocation fail, or the child dies of it.
    assert!(error.contains("memory"), "{error}");
    // The parent is unharmed and reads the next file.
    let ok = guard::extract(
        Kind::Docx,
        &documents::docx(&[(None, "fine")]),
        Limits::default(),
    );
    assert_eq!(ok.unwrap().pages[0].text, "fine");
}

fn a_child_past_its_timeout_is_killed() {
    let pdf = documents::pdf(&["text"; 50]);
    let started = Instant::now();
    let limits = Limits {
        timeout: Duration::from_millis(1),
        ..Limits::default()
    };
    let error = guard::extract(Kind::Pdf, &pdf, limits).unwrap_err();
    assert!(error.contains("took longer than"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(10));
}
