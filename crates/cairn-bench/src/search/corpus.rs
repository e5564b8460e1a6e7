//! The generated workspace: a MEMORY.md, dated daily logs and knowledge notes, written from a
//! seeded random source (every run indexes the same text) until their chunks reach the
//! requested count.
//!
//! Daily logs (`memory/YYYY-MM-DD.md`, over the two years before [`TODAY`]) hold timed
//! entries (`## 14:05`) of a few bullets each; knowledge notes (`knowledge/<topic>/*.md`)
//! hold sections of paragraphs, lists, code blocks and subsections. Sentences mix the
//! vocabulary by frequency with names, projects and numbers.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use anyhow::Context as _;
use chrono::{Days, NaiveDate};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};

use super::files;
use super::vocab::{proper_noun, Band, Vocabulary};

/// The day searches are made on (recency is measured from it).
pub const TODAY: NaiveDate = match NaiveDate::from_ymd_opt(2026, 3, 20) {
    Some(date) => date,
    None => NaiveDate::MIN,
};
/// Days covered by daily logs, ending the day before [`TODAY`].
const DAYS: usize = 730;
/// The share of the chunks that daily logs aim for.
const DAILY_SHARE: f64 = 0.35;
/// Sentences kept (a uniform sample of all of them) for phrase queries.
const PHRASES: usize = 4096;
/// Knowledge notes written even when the target is already reached.
const MIN_NOTES: usize = 3;

const TOPICS: &[&str] = &[
    "projects",
    "people",
    "recipes",
    "travel",
    "home",
    "health",
    "finance",
    "reading",
    "garden",
    "music",
    "learning",
    "engineering/rust",
    "engineering/databases",
    "engineering/infra",
    "work/meetings",
    "work/hiring",
    "work/clients",
];

/// What was written.
#[derive(Debug, Default)]
pub struct Corpus {
    /// Files the index will see (template files included).
    pub files: usize,
    /// Bytes of the generated files.
    pub bytes: u64,
    /// Chunks of every indexed file, as `chunk_markdown` cuts them.
    pub chunks: usize,
    /// Days with a daily log.
    pub days: usize,
    /// A sample of the sentences written, as words.
    pub phrases: Vec<Vec<String>>,
    /// The generated knowledge notes (workspace-relative paths).
    pub notes: Vec<String>,
}

/// Writes the corpus into the workspace at `root`, aiming for `target` chunks.
pub fn generate(
    root: &Path,
    vocab: &Vocabulary,
    target: usize,
    seed: u64,
) -> anyhow::Result<Corpus> {
    let mut writer = Writer {
        rng: StdRng::seed_from_u64(seed),
        vocab,
        root,
        corpus: Corpus::default(),
        sentences: 0,
        used_paths: HashSet::new(),
    };
    // The template's files stay (MEMORY.md is replaced).
    for source in files::sources(root) {
        if source.path != "MEMORY.md" {
            writer.corpus.files += 1;
            writer.corpus.chunks += files::read_chunks(root, &source)?.len();
        }
    }
    let memory = writer.memory_md(target);
    writer.write("MEMORY.md", &memory)?;
    writer.daily_logs(target)?;
    while writer.corpus.chunks < target || writer.corpus.notes.len() < MIN_NOTES {
        let path = writer.note_path();
        let note = writer.note();
        writer.write(&path, &note)?;
        writer.corpus.notes.push(path);
    }
    Ok(writer.corpus)
}

struct Writer<'a> {
    rng: StdRng,
    vocab: &'a Vocabulary,
    root: &'a Path,
    corpus: Corpus,
    /// Sentences written so far (for the phrase sample).
    sentences: u64,
    used_paths: HashSet<String>,
}

impl Writer<'_> {
    fn write(&mut self, relative: &str, text: &str) -> anyhow::Result<()> {
        let path = self.root.join(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        let source = cairn_memory::source::classify(relative)
            .with_context(|| format!("{relative} would not be indexed"))?;
        self.corpus.files += 1;
        self.corpus.bytes += text.len() as u64;
        self.corpus.chunks += files::chunks(&source, text).len();
        Ok(())
    }

    /// `# Memory` with people, preferences, projects and decisions: one bullet in each per
    /// 2,000 target chunks, at least three.
    fn memory_md(&mut self, target: usize) -> String {
        let bullets = (target / 2000).max(3);
        let mut text = String::from("# Memory\n");
        for section in ["People", "Preferences", "Projects", "Decisions"] {
            let _ = write!(text, "\n## {section}\n");
            for _ in 0..bullets {
                let sentence = self.sentence();
                let _ = match section {
                    "People" | "Projects" => {
                        writeln!(text, "- {}: {sentence}", proper_noun(&mut self.rng))
                    }
                    _ => writeln!(text, "- {sentence}"),
                };
            }
        }
        text
    }

    /// One log per day over the last [`DAYS`] days (fewer for a small target), with as many
    /// entries as the daily share of `target` needs.
    fn daily_logs(&mut self, target: usize) -> anyhow::Result<()> {
        let budget = (target as f64 * DAILY_SHARE) as usize;
        let days = (budget / 12).clamp(1, DAYS);
        // A log has one chunk for its title and one per entry.
        let mean = (budget / days).saturating_sub(1).max(1);
        self.corpus.days = days;
        for back in (1..=days as u64).rev() {
            let date = TODAY.checked_sub_days(Days::new(back)).unwrap_or(TODAY);
            let entries = self.rng.random_range(mean.div_ceil(2)..=mean + mean / 2);
            let log = self.daily_log(date, entries);
            self.write(&format!("memory/{date}.md"), &log)?;
        }
        Ok(())
    }

    fn daily_log(&mut self, date: NaiveDate, entries: usize) -> String {
        let mut text = format!("# {date}\n");
        let mut times: Vec<u32> = (0..entries)
            .map(|_| self.rng.random_range(6 * 60..24 * 60))
            .collect();
        times.sort_unstable();
        for minute in times {
            let _ = write!(text, "\n## {:02}:{:02}\n", minute / 60, minute % 60);
            for _ in 0..self.rng.random_range(1..=4) {
                let prefix = match self.rng.random_range(0..20) {
                    0 | 1 => "Decided: ".to_string(),
                    2 | 3 => "[ ] ".to_string(),
                    4 => format!("Met {}: ", proper_noun(&mut self.rng)),
                    _ => String::new(),
                };
                let sentence = self.sentence();
                let _ = writeln!(text, "- {prefix}{sentence}");
            }
        }
        text
    }

    /// A new `knowledge/<topic>/<words>.md`.
    fn note_path(&mut self) -> String {
        let topic = TOPICS.choose(&mut self.rng).copied().unwrap_or("notes");
        let (vocab, words) = (self.vocab, self.rng.random_range(1..=3));
        let slug: Vec<&str> = (0..words)
            .map(|_| vocab.in_band(Band::Mid, &mut self.rng))
            .collect();
        let stem = format!("knowledge/{topic}/{}", slug.join("-"));
        let mut path = format!("{stem}.md");
        let mut n = 2;
        while !self.used_paths.insert(path.clone()) {
            path = format!("{stem}-{n}.md");
            n += 1;
        }
        path
    }

    fn note(&mut self) -> String {
        let mut text = format!("# {}\n\n", self.title());
        self.paragraph(&mut text, 2..=5);
        for _ in 0..self.rng.random_range(2..=9) {
            let _ = write!(text, "\n## {}\n\n", self.title());
            for block in 0..self.rng.random_range(1..=3) {
                if block > 0 {
                    text.push('\n');
                }
                match self.rng.random_range(0..100) {
                    0..50 => self.paragraph(&mut text, 3..=8),
                    50..78 => self.list(&mut text),
                    78..90 => self.code(&mut text),
                    _ => {
                        let _ = write!(text, "### {}\n\n", self.title());
                        self.paragraph(&mut text, 2..=6);
                    }
                }
            }
        }
        text
    }

    fn paragraph(&mut self, text: &mut String, sentences: std::ops::RangeInclusive<usize>) {
        let count = self.rng.random_range(sentences);
        let sentences: Vec<String> = (0..count).map(|_| self.sentence()).collect();
        text.push_str(&sentences.join(" "));
        text.push('\n');
    }

    fn list(&mut self, text: &mut String) {
        let numbered = self.rng.random_bool(0.2);
        for i in 1..=self.rng.random_range(3..=8) {
            let sentence = self.sentence();
            let _ = if numbered {
                writeln!(text, "{i}. {sentence}")
            } else {
                writeln!(text, "- {sentence}")
            };
        }
    }

    /// A fenced block of code-like lines whose identifiers are vocabulary words.
    fn code(&mut self, text: &mut String) {
        let lang = ["rust", "sh", "sql", "toml", "python"]
            .choose(&mut self.rng)
            .copied()
            .unwrap_or("text");
        let _ = writeln!(text, "```{lang}");
        let vocab = self.vocab;
        for _ in 0..self.rng.random_range(3..=12) {
            let w: Vec<&str> = (0..4)
                .map(|_| vocab.in_band(Band::Mid, &mut self.rng))
                .collect();
            let n = self.rng.random_range(1..10_000);
            let _ = match self.rng.random_range(0..6) {
                0 => writeln!(text, "let {}_{} = {}.{}({n});", w[0], w[1], w[2], w[3]),
                1 => writeln!(
                    text,
                    "fn {}_{}({}: &str) -> Result<()> {{",
                    w[0], w[1], w[2]
                ),
                2 => writeln!(text, "    {}.{}()?;", w[0], w[1]),
                3 => writeln!(text, "cairn {} --{} {}-{n}", w[0], w[1], w[2]),
                4 => writeln!(
                    text,
                    "SELECT {}, {} FROM {} WHERE {} = {n};",
                    w[0], w[1], w[2], w[3]
                ),
                _ => writeln!(text, "{}_{} = \"{}\"", w[0], w[1], w[2]),
            };
        }
        text.push_str("```\n");
    }

    /// Two to five content words, the first capitalized.
    fn title(&mut self) -> String {
        let (vocab, count) = (self.vocab, self.rng.random_range(2..=5));
        let words: Vec<&str> = (0..count)
            .map(|i| match i {
                0 if self.rng.random_bool(0.15) => proper_noun(&mut self.rng),
                _ => vocab.in_band(Band::Mid, &mut self.rng),
            })
            .collect();
        capitalize(&words.join(" "))
    }

    /// Five to sixteen words by frequency, with names, projects and numbers here and there.
    fn sentence(&mut self) -> String {
        let count = self.rng.random_range(5..=16);
        let mut words: Vec<String> = Vec::with_capacity(count);
        let mut text = String::new();
        for i in 0..count {
            let roll = self.rng.random_range(0..1000);
            let word = match roll {
                0..50 => proper_noun(&mut self.rng).to_string(),
                50..65 => self.number(),
                _ => self.vocab.word(&mut self.rng).to_string(),
            };
            if i > 0 {
                text.push_str(if self.rng.random_bool(0.06) {
                    ", "
                } else {
                    " "
                });
            }
            if word.chars().all(char::is_alphabetic) {
                words.push(word.clone());
            }
            text.push_str(&word);
        }
        self.keep_phrase(words);
        let mut text = capitalize(&text);
        text.push('.');
        text
    }

    /// A figure as notes write them: an amount, a time, a ticket, a version, a year.
    fn number(&mut self) -> String {
        let n = self.rng.random_range(1..100_000u32);
        match self.rng.random_range(0..5) {
            0 => format!("€{}", n % 2000),
            1 => format!("{:02}:{:02}", n % 24, n % 60),
            2 => format!("#{n}"),
            3 => format!("v{}.{}.{}", n % 4, n % 17, n % 9),
            _ => format!("{}", 1990 + n % 40),
        }
    }

    /// Reservoir sampling: every sentence is equally likely to be kept.
    fn keep_phrase(&mut self, words: Vec<String>) {
        self.sentences += 1;
        let phrases = &mut self.corpus.phrases;
        if phrases.len() < PHRASES {
            phrases.push(words);
        } else {
            let slot = self.rng.random_range(0..self.sentences) as usize;
            if let Some(kept) = phrases.get_mut(slot) {
                *kept = words;
            }
        }
    }
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
