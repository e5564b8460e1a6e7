//! Asking the questions: each person's workspace gets a memory index (with the bundled
//! embedding model when there is one), synced and fully embedded, then every question is
//! asked in each mode, top ten. Then the FTS5 baseline over windows as long as Cairn's
//! median hit, on the same files. A question is recalled at k when one of the first k hits
//! of the right file covers an evidence line.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::ensure;
use cairn_memory::index::Embedder;
use cairn_memory::{Corpus, IndexOptions, MemoryIndex, SearchMode, SearchQuery, Workspace};
use chrono::NaiveDate;

use super::facts::Category;
use super::fts5::Windows;
use super::generate::{Conversation, Form, Generated, Question};

/// How many hits are asked for.
pub const LIMIT: usize = 10;

/// A hit: a file's lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub path: String,
    pub start_line: usize,
    pub end_line: usize,
}

/// What answers the questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Keyword,
    Semantic,
    Hybrid,
    Fts5,
}

impl Engine {
    pub const ALL: [Engine; 4] = [
        Engine::Keyword,
        Engine::Semantic,
        Engine::Hybrid,
        Engine::Fts5,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Keyword => "keyword",
            Engine::Semantic => "semantic",
            Engine::Hybrid => "hybrid",
            Engine::Fts5 => "FTS5",
        }
    }

    fn mode(self) -> Option<SearchMode> {
        match self {
            Engine::Keyword => Some(SearchMode::Keyword),
            Engine::Semantic => Some(SearchMode::Semantic),
            Engine::Hybrid => Some(SearchMode::Hybrid),
            Engine::Fts5 => None,
        }
    }
}

/// For one question on one engine: the first rank (from 0) of a hit covering each
/// evidence line, and for a changed fact the older line's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ranks {
    pub evidence: Vec<Option<usize>>,
    pub older: Option<Option<usize>>,
}

impl Ranks {
    /// Some evidence line covered among the first `k` hits.
    pub fn recalled(&self, k: usize) -> bool {
        self.evidence.iter().any(|r| r.is_some_and(|r| r < k))
    }

    /// Every evidence line covered among the first `k` hits.
    pub fn all(&self, k: usize) -> bool {
        self.evidence.iter().all(|r| r.is_some_and(|r| r < k))
    }

    /// The older value ranked above the newer one (or found where the newer was not).
    pub fn older_above_newer(&self) -> bool {
        let newer = self.evidence.iter().flatten().min().copied();
        match (self.older.flatten(), newer) {
            (Some(older), Some(newer)) => older < newer,
            (Some(_), None) => true,
            _ => false,
        }
    }
}

/// The first rank of a hit covering each line.
pub fn ranks(hits: &[Hit], evidence: &[(String, usize)], older: Option<&(String, usize)>) -> Ranks {
    let rank = |(path, line): &(String, usize)| {
        hits.iter()
            .position(|h| h.path == *path && (h.start_line..=h.end_line).contains(line))
    };
    Ranks {
        evidence: evidence.iter().map(rank).collect(),
        older: older.map(rank),
    }
}

/// One question's outcome on each engine (`None`: the engine did not run).
#[derive(Debug, Clone)]
pub struct Answered {
    pub category: Category,
    /// One of the exact-line questions (a fact line's own words).
    pub exact: bool,
    pub ranks: [Option<Ranks>; 4],
}

/// Every question asked of one form of the conversations.
#[derive(Debug, Clone)]
pub struct CorpusRun {
    pub answered: Vec<Answered>,
    /// The FTS5 windows' length: the median line span of Cairn's hybrid hits (keyword's
    /// without a model).
    pub window: usize,
    /// `MemoryIndex::search` per query, hybrid (keyword without a model).
    pub latency: Vec<Duration>,
    pub chunks: u64,
    /// Syncing and embedding every workspace.
    pub indexing: Duration,
    /// The first person's workspace (where the CLI is timed).
    pub first_workspace: PathBuf,
}

/// The workspaces of `form` under `dir`, one per person, written from `generated`; each
/// person's `questions` and `exact` asked there.
pub fn run(
    dir: &Path,
    generated: &Generated,
    exact: &[Vec<Question>],
    form: Form,
    model: Option<&Arc<dyn Embedder>>,
) -> anyhow::Result<CorpusRun> {
    let corpus = match form {
        Form::Logs => Corpus::Memory,
        Form::Sessions => Corpus::Sessions,
    };
    let mut out = CorpusRun {
        answered: Vec::new(),
        window: 1,
        latency: Vec::new(),
        chunks: 0,
        indexing: Duration::ZERO,
        first_workspace: PathBuf::new(),
    };
    let mut spans = Vec::new();
    let mut roots = Vec::new();
    for (n, person) in generated.people.iter().enumerate() {
        let conversation = &person.conversation;
        let workspace =
            Workspace::open_or_create(&dir.join(format!("{n:02}-{}", conversation.other)))?;
        conversation.write(form, workspace.root())?;
        eprintln!(
            "  {} of {}: {} days with {}",
            n + 1,
            generated.people.len(),
            conversation.days.len(),
            conversation.other
        );
        let started = Instant::now();
        let options = IndexOptions {
            embedder: model.cloned(),
            ..IndexOptions::default()
        };
        let index = MemoryIndex::open(&workspace, options)?;
        let report = index.sync()?;
        ensure!(
            report.skipped.is_empty(),
            "the index skipped files: {:?}",
            report.skipped
        );
        if model.is_some() {
            let status = index.wait_embedded(|done, of| {
                if done % 256 < 8 {
                    eprint!("\r    embedding {done} / {of}   ");
                }
            });
            eprintln!();
            ensure!(
                status.embedding_current(),
                "embedding stopped: {:?}",
                status.embed_error
            );
        }
        out.indexing += started.elapsed();
        out.chunks += report.chunks;
        let asked = person
            .questions
            .iter()
            .map(|q| (q, false))
            .chain(exact[n].iter().map(|q| (q, true)));
        for (question, is_exact) in asked {
            let (evidence, older) = located(conversation, form, question);
            let mut answered = Answered {
                category: question.category,
                exact: is_exact,
                ranks: Default::default(),
            };
            for (slot, engine) in Engine::ALL.iter().enumerate() {
                let Some(mode) = engine.mode() else { continue };
                if mode != SearchMode::Keyword && model.is_none() {
                    continue;
                }
                let query = SearchQuery {
                    text: question.text.clone(),
                    limit: LIMIT,
                    corpus,
                    today: Some(generated.today),
                    mode: Some(mode),
                };
                let started = Instant::now();
                let results = index.search(&query)?;
                let took = started.elapsed();
                let timed = if model.is_some() {
                    SearchMode::Hybrid
                } else {
                    SearchMode::Keyword
                };
                let hits = hits_of(results);
                if mode == timed && !is_exact {
                    out.latency.push(took);
                    spans.extend(hits.iter().map(|h| h.end_line + 1 - h.start_line));
                }
                answered.ranks[slot] = Some(ranks(&hits, &evidence, older.as_ref()));
            }
            out.answered.push(answered);
        }
        if n == 0 {
            out.first_workspace = workspace.root().to_path_buf();
        }
        roots.push((workspace.root().to_path_buf(), files_of(conversation, form)));
    }
    spans.sort_unstable();
    out.window = spans.get(spans.len() / 2).copied().unwrap_or(1);
    eprintln!("  FTS5 over windows of {} lines", out.window);
    let mut at = 0;
    for (n, (root, files)) in roots.iter().enumerate() {
        let person = &generated.people[n];
        let windows = Windows::build(root, files, form, out.window)?;
        for question in person.questions.iter().chain(&exact[n]) {
            let (evidence, older) = located(&person.conversation, form, question);
            let hits = windows.search(&question.text, LIMIT)?;
            out.answered[at].ranks[3] = Some(ranks(&hits, &evidence, older.as_ref()));
            at += 1;
        }
    }
    Ok(out)
}

fn hits_of(results: cairn_memory::SearchResults) -> Vec<Hit> {
    results
        .results
        .into_iter()
        .map(|h| Hit {
            path: h.path,
            start_line: h.start_line,
            end_line: h.end_line,
        })
        .collect()
}

type Located = (Vec<(String, usize)>, Option<(String, usize)>);

fn located(conversation: &Conversation, form: Form, question: &Question) -> Located {
    (
        question
            .evidence
            .iter()
            .map(|&at| conversation.locate(form, at))
            .collect(),
        question.older.map(|at| conversation.locate(form, at)),
    )
}

fn files_of(conversation: &Conversation, form: Form) -> Vec<String> {
    let mut files: Vec<String> = (0..conversation.days.len())
        .map(|day| {
            conversation
                .locate(form, super::generate::At { day, turn: 0 })
                .0
        })
        .collect();
    files.dedup();
    files
}

/// The known answers of the search benchmark (`paraphrases.txt`), each a note among
/// `distractors` generated chunks, asked in other words: hit@5 and @10 by engine.
pub fn paraphrase_set(
    dir: &Path,
    model: Option<&Arc<dyn Embedder>>,
    distractors: usize,
    window: usize,
) -> anyhow::Result<Vec<Answered>> {
    let pairs = crate::search::meaning::pairs();
    let bench = crate::search::bench::Bench::generate(dir, distractors)?;
    let root = bench.workspace.root().to_path_buf();
    std::fs::create_dir_all(root.join("knowledge/facts"))?;
    for (n, pair) in pairs.iter().enumerate() {
        std::fs::write(
            root.join(format!("knowledge/facts/{n:02}.md")),
            format!("{}\n", pair.note),
        )?;
    }
    let options = IndexOptions {
        embedder: model.cloned(),
        ..IndexOptions::default()
    };
    let index = MemoryIndex::open(&bench.workspace, options)?;
    index.sync()?;
    if model.is_some() {
        let status = index.wait_embedded(|_, _| {});
        ensure!(
            status.embedding_current(),
            "embedding stopped: {:?}",
            status.embed_error
        );
    }
    let files = markdown_files(&root, &root)?;
    let windows = Windows::build(&root, &files, Form::Logs, window)?;
    let today: NaiveDate = crate::search::corpus::TODAY;
    let mut out = Vec::new();
    for (n, pair) in pairs.iter().enumerate() {
        let evidence = vec![(format!("knowledge/facts/{n:02}.md"), 1)];
        let mut answered = Answered {
            category: Category::Paraphrase,
            exact: false,
            ranks: Default::default(),
        };
        for (slot, engine) in Engine::ALL.iter().enumerate() {
            let hits = match engine.mode() {
                None => windows.search(&pair.asked, LIMIT)?,
                Some(mode) if mode != SearchMode::Keyword && model.is_none() => continue,
                Some(mode) => {
                    let query = SearchQuery {
                        text: pair.asked.clone(),
                        limit: LIMIT,
                        corpus: Corpus::All,
                        today: Some(today),
                        mode: Some(mode),
                    };
                    hits_of(index.search_now(&query)?)
                }
            };
            answered.ranks[slot] = Some(ranks(&hits, &evidence, None));
        }
        out.push(answered);
    }
    Ok(out)
}

/// The `.md` files under `dir` (not the index's own folder), relative to `root`.
fn markdown_files(root: &Path, dir: &Path) -> anyhow::Result<Vec<String>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.file_name().is_some_and(|n| n == ".cairn") {
            continue;
        }
        if path.is_dir() {
            files.extend(markdown_files(root, &path)?);
        } else if path.extension().is_some_and(|e| e == "md") {
            if let Ok(relative) = path.strip_prefix(root) {
                files.push(relative.to_string_lossy().into_owned());
            }
        }
    }
    files.sort();
    Ok(files)
}
