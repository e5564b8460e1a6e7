//! Where in a chunk the answer sits. Each known answer is put in a note of its own inside
//! a full-size section of unrelated prose, either at the section's start or in its last
//! third, and asked by meaning (the paraphrased question, hit@5). Chunks cut by the
//! embedding model's own tokenizer to fit its window are measured beside chunks cut by the
//! old estimate (about 400 tokens by characters / 4), which the model then cut at its 256
//! tokens: there, an answer late in a chunk never reached its vector.

use std::path::Path;
use std::sync::Arc;

use cairn_embed::candle::{default_embedder_dir, TokenCounter};
use cairn_memory::chunk::Tokens;
use cairn_memory::index::{Embedder, SearchMode};
use cairn_memory::{IndexOptions, MemoryIndex, SearchQuery, Workspace};

use super::meaning::{pairs, HitRate};

/// Prose about nothing the questions ask, a sentence a line.
const FILLER: [&str; 12] = [
    "The committee reviewed the quarterly figures and found them broadly in line with the plan.",
    "Several volunteers repainted the fence along the northern edge of the community garden.",
    "A new printer arrived on the third floor, though nobody has installed its driver yet.",
    "The library extended its weekend opening hours for the duration of the exam season.",
    "Traffic on the ring road was slower than usual because of resurfacing near the bridge.",
    "The museum's winter exhibition features maps of trade routes from the eighteenth century.",
    "Our team switched the weekly status meeting from Monday mornings to Tuesday afternoons.",
    "The bakery on the corner now sells rye loaves only before noon on weekdays.",
    "Local elections are expected to bring a modest change in the council's composition.",
    "The recycling schedule alternates between paper and glass every other Wednesday.",
    "A documentary about coral reefs will be screened in the town hall next month.",
    "The footpath through the park is closed while the drainage pipes are replaced.",
];

/// Hit@5 with the answer at the start and in the last third, for one way of cutting.
#[derive(Debug, Clone, Copy, Default)]
pub struct Placement {
    pub start: HitRate,
    pub last_third: HitRate,
}

/// The bundled model with its tokenizer: chunks fit its window.
struct Windowed {
    model: Arc<dyn Embedder>,
    tokens: Arc<dyn Tokens>,
}

impl Embedder for Windowed {
    fn model(&self) -> String {
        self.model.model()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        self.model.embed(texts)
    }

    fn tokens(&self) -> Option<Arc<dyn Tokens>> {
        Some(self.tokens.clone())
    }
}

struct Counted(TokenCounter);

impl Tokens for Counted {
    fn count(&self, text: &str) -> usize {
        self.0.count(text)
    }

    fn window(&self) -> usize {
        self.0.window()
    }

    fn name(&self) -> String {
        "all-MiniLM-L6-v2".into()
    }
}

/// A section of about 1,550 characters, a sentence a line (one full chunk by the old
/// estimate, about 330 of the model's tokens), with `fact` as its first sentence or as its
/// sixteenth of seventeen (past the model's 256 tokens).
fn section(n: usize, fact: &str, late: bool) -> String {
    let mut lines: Vec<String> = (0..16)
        .map(|i| FILLER[(n + i) % FILLER.len()].to_string())
        .collect();
    let at = if late { 15 } else { 0 };
    lines.insert(at, fact.to_string());
    format!("# Notes {n}\n{}\n", lines.join("\n"))
}

/// Measures both ways of cutting on both placements; `model` is the bundled model
/// without a tokenizer (the old sizing).
pub fn measure(dir: &Path, model: &Arc<dyn Embedder>) -> anyhow::Result<(Placement, Placement)> {
    let counter = TokenCounter::load(&default_embedder_dir().unwrap_or_default())
        .map_err(anyhow::Error::msg)?;
    let windowed: Arc<dyn Embedder> = Arc::new(Windowed {
        model: model.clone(),
        tokens: Arc::new(Counted(counter)),
    });
    let mut by_estimate = Placement::default();
    let mut by_window = Placement::default();
    for (embedder, rates, name) in [
        (model, &mut by_estimate, "estimate"),
        (&windowed, &mut by_window, "window"),
    ] {
        for late in [false, true] {
            let rate = run(&dir.join(format!("{name}-{late}")), embedder, late)?;
            if late {
                rates.last_third = rate;
            } else {
                rates.start = rate;
            }
        }
    }
    Ok((by_estimate, by_window))
}

fn run(dir: &Path, embedder: &Arc<dyn Embedder>, late: bool) -> anyhow::Result<HitRate> {
    let workspace = Workspace::open_or_create(dir)?;
    let pairs = pairs();
    for (n, pair) in pairs.iter().enumerate() {
        let path = workspace.root().join(format!("knowledge/placed/{n:02}.md"));
        std::fs::create_dir_all(path.parent().unwrap_or(dir))?;
        std::fs::write(path, section(n, &pair.note, late))?;
    }
    let index = MemoryIndex::open(
        &workspace,
        IndexOptions {
            embedder: Some(embedder.clone()),
            ..IndexOptions::default()
        },
    )?;
    index.sync()?;
    let status = index.wait_embedded(|_, _| {});
    anyhow::ensure!(
        status.embedding_current(),
        "embedding stopped: {:?}",
        status.embed_error
    );
    let mut rate = HitRate::default();
    for (n, pair) in pairs.iter().enumerate() {
        let target = format!("knowledge/placed/{n:02}.md");
        let found = index.search(&SearchQuery {
            mode: Some(SearchMode::Semantic),
            limit: 5,
            ..SearchQuery::new(&pair.asked)
        })?;
        rate.count(found.results.iter().any(|h| h.path == target));
    }
    Ok(rate)
}
