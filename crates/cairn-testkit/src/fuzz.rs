//! A small fuzzing driver on proptest: a target is a function of bytes that must neither
//! panic nor break a property it asserts. Inputs are the target's corpus (kept in the
//! repository under `fuzz/corpus/<target>/`), mutations of it (bit flips, cuts, inserted
//! tokens from the target's dictionary, splices of two corpus files) and random bytes.
//!
//! `make test` runs a short pass (`CAIRN_FUZZ_CASES`, default 2000 inputs per target).
//! `CAIRN_FUZZ_SECS=600` runs each target for that long instead. A failing input is
//! shrunk, saved into the corpus as `crash-<hash>` (so it is tried first from then on) and
//! reported.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};

/// One edit of a corpus input.
#[derive(Debug, Clone)]
enum Mutation {
    Flip {
        at: usize,
        bit: u8,
    },
    Cut {
        at: usize,
        len: usize,
    },
    Token {
        at: usize,
        token: usize,
    },
    Splice {
        at: usize,
        other: usize,
        from: usize,
        len: usize,
    },
    Repeat {
        at: usize,
        len: usize,
        times: usize,
    },
    Truncate {
        at: usize,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = any::<usize>();
    prop_oneof![
        (at, 0u8..8).prop_map(|(at, bit)| Mutation::Flip { at, bit }),
        (at, 1usize..64).prop_map(|(at, len)| Mutation::Cut { at, len }),
        (at, any::<usize>()).prop_map(|(at, token)| Mutation::Token { at, token }),
        (at, any::<usize>(), any::<usize>(), 1usize..256).prop_map(|(at, other, from, len)| {
            Mutation::Splice {
                at,
                other,
                from,
                len,
            }
        }),
        (at, 1usize..32, 2usize..64).prop_map(|(at, len, times)| Mutation::Repeat {
            at,
            len,
            times
        }),
        at.prop_map(|at| Mutation::Truncate { at }),
    ]
}

/// The inputs tried: a corpus file edited a few times, or random bytes.
#[derive(Debug, Clone)]
enum Input {
    Mutated { seed: usize, edits: Vec<Mutation> },
    Random(Vec<u8>),
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        4 => (any::<usize>(), proptest::collection::vec(mutation(), 0..8))
            .prop_map(|(seed, edits)| Input::Mutated { seed, edits }),
        1 => proptest::collection::vec(any::<u8>(), 0..2048).prop_map(Input::Random),
    ]
}

fn apply(corpus: &[Vec<u8>], dictionary: &[&[u8]], input: &Input) -> Vec<u8> {
    let (seed, edits) = match input {
        Input::Random(bytes) => return bytes.clone(),
        Input::Mutated { seed, edits } => (*seed, edits),
    };
    let mut bytes = match corpus.len() {
        0 => Vec::new(),
        n => corpus[seed % n].clone(),
    };
    for edit in edits {
        let pos = |at: usize, len: usize| if len == 0 { 0 } else { at % (len + 1) };
        match *edit {
            Mutation::Flip { at, bit } if !bytes.is_empty() => {
                let i = at % bytes.len();
                bytes[i] ^= 1 << bit;
            }
            Mutation::Flip { .. } => {}
            Mutation::Cut { at, len } => {
                let start = pos(at, bytes.len());
                let end = (start + len).min(bytes.len());
                bytes.drain(start..end);
            }
            Mutation::Token { at, token } if !dictionary.is_empty() => {
                let start = pos(at, bytes.len());
                let token = dictionary[token % dictionary.len()];
                bytes.splice(start..start, token.iter().copied());
            }
            Mutation::Token { .. } => {}
            Mutation::Splice {
                at,
                other,
                from,
                len,
            } if !corpus.is_empty() => {
                let other = &corpus[other % corpus.len()];
                let from = pos(from, other.len());
                let end = (from + len).min(other.len());
                let start = pos(at, bytes.len());
                bytes.splice(start..start, other[from..end].iter().copied());
            }
            Mutation::Splice { .. } => {}
            Mutation::Repeat { at, len, times } => {
                let start = pos(at, bytes.len());
                let end = (start + len).min(bytes.len());
                let piece = bytes[start..end].repeat(times);
                bytes.splice(end..end, piece);
            }
            Mutation::Truncate { at } => {
                let end = pos(at, bytes.len());
                bytes.truncate(end);
            }
        }
    }
    bytes
}

fn corpus_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

fn load_corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = corpus_dir(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the corpus {} cannot be read: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .collect()
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// Fuzzes `check` (which panics, or returns an error, on a bug) with inputs made from
/// `target`'s corpus and `dictionary`. Panics with the failing input, after saving it.
pub fn run(
    target: &str,
    dictionary: &[&[u8]],
    check: impl Fn(&[u8]) -> Result<(), String>,
) -> Report {
    let corpus = load_corpus(target);
    for (n, seed) in corpus.iter().enumerate() {
        if let Err(problem) = check(seed) {
            panic!("{target}: corpus file {n} fails: {problem}");
        }
    }
    let budget = env_number("CAIRN_FUZZ_SECS").map(Duration::from_secs);
    let cases = env_number("CAIRN_FUZZ_CASES").unwrap_or(2000);
    let started = Instant::now();
    let mut tried = corpus.len() as u64;
    loop {
        let round = if budget.is_some() { 4096 } else { cases };
        let mut runner = TestRunner::new(Config {
            cases: u32::try_from(round).unwrap_or(u32::MAX),
            failure_persistence: None,
            ..Config::default()
        });
        let outcome = runner.run(&input(), |input| {
            let bytes = apply(&corpus, dictionary, &input);
            check(&bytes).map_err(TestCaseError::fail)
        });
        tried += round;
        match outcome {
            Ok(()) => {}
            Err(TestError::Fail(reason, input)) => {
                let bytes = apply(&corpus, dictionary, &input);
                let saved = save_crash(target, &bytes);
                panic!(
                    "{target}: {reason}\ninput saved as {} ({} bytes): {:?}",
                    saved.display(),
                    bytes.len(),
                    String::from_utf8_lossy(&bytes)
                );
            }
            Err(TestError::Abort(reason)) => panic!("{target}: fuzzing stopped: {reason}"),
        }
        match budget {
            Some(budget) if started.elapsed() < budget => {}
            _ => break,
        }
    }
    let report = Report {
        target: target.to_string(),
        inputs: tried,
        took: started.elapsed(),
    };
    println!(
        "fuzz {}: {} inputs in {:.1} s, no failure",
        report.target,
        report.inputs,
        report.took.as_secs_f64()
    );
    report
}

/// What a fuzzing run did.
#[derive(Debug, Clone)]
pub struct Report {
    pub target: String,
    pub inputs: u64,
    pub took: Duration,
}

fn save_crash(target: &str, bytes: &[u8]) -> PathBuf {
    let mut hasher = DefaultHasher::new();
    bytes.hash(&mut hasher);
    let path = corpus_dir(target).join(format!("crash-{:016x}", hasher.finish()));
    if let Err(e) = std::fs::write(&path, bytes) {
        eprintln!("could not save {}: {e}", path.display());
    }
    path
}
