//! Search by meaning's figures: hit@5 by mode and by fusion, the model's throughput and
//! memory, and hybrid query times at the benchmark's size.

use serde_json::{json, Value};

use super::meaning::{HitRate, Quality, Speed};
use crate::report::{Row, Section, Verdict};
use crate::stats::{ms, round3};

/// Hybrid must beat keyword on paraphrases by this many points of hit@5.
pub const GOAL_GAIN_POINTS: f64 = 20.0;
/// Hybrid query p50 and p99 with the query's embedding, at 100k chunks.
pub const GOAL_HYBRID_P50_MS: f64 = 10.0;
pub const GOAL_HYBRID_P99_MS: f64 = 25.0;
/// Resident memory the embedder may add.
pub const GOAL_EXTRA_MIB: f64 = 250.0;

pub type Meaning = Result<(Quality, Speed), String>;

fn rate(r: HitRate) -> String {
    format!("{}/{} ({:.0}%)", r.hits, r.of, r.percent())
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

pub fn sections(meaning: &Meaning) -> Vec<Section> {
    let Ok((q, s)) = meaning else {
        return Vec::new();
    };
    vec![quality_section(q), speed_section(s)]
}

/// Hit@5 by mode and fusion, the model's throughput and memory.
pub fn quality_section(q: &Quality) -> Section {
    let [kw, sem, hyb] = q.paraphrase;
    let [kw_exact, sem_exact, hyb_exact] = q.exact;
    let gain = hyb.percent() - kw.percent();
    let extra = mib(q.rss_after.saturating_sub(q.rss_before));
    let mut quality = vec![
        Row {
            name: "paraphrases: hybrid hit@5".into(),
            figure: format!("{} (+{gain:.0} points)", rate(hyb)),
            baseline: format!("keyword {}", rate(kw)),
            goal: format!(">= +{GOAL_GAIN_POINTS} points"),
            verdict: Verdict::of(gain >= GOAL_GAIN_POINTS),
        },
        Row::info("paraphrases: semantic hit@5", rate(sem)),
        Row::info(
            "paraphrases: hybrid hit@5, candidates shortlisted by signs",
            rate(q.shortlisted),
        ),
        Row {
            name: "the note's own words: hybrid hit@5".into(),
            figure: rate(hyb_exact),
            baseline: format!("keyword {}", rate(kw_exact)),
            goal: "no loss".into(),
            verdict: Verdict::of(hyb_exact.hits >= kw_exact.hits),
        },
        Row::info("the note's own words: semantic hit@5", rate(sem_exact)),
    ];
    let (window, estimate) = (q.by_window, q.by_estimate);
    quality.push(Row {
        name: "answer in the last third of a full chunk: semantic hit@5".into(),
        figure: rate(window.last_third),
        baseline: format!(
            "at the chunk's start {}; chunks cut by the old estimate: {} at the start, {} in \
             the last third",
            rate(window.start),
            rate(estimate.start),
            rate(estimate.last_third)
        ),
        goal: "as often as at the start (within 2)".into(),
        verdict: Verdict::of(window.last_third.hits + 2 >= window.start.hits),
    });
    for (name, paraphrase, exact) in &q.fusions {
        quality.push(Row::info(
            format!("  fusion {name} (no MMR): paraphrases, own words"),
            format!("{}, {}", rate(*paraphrase), rate(*exact)),
        ));
    }
    quality.push(Row::info(
        format!("embedding throughput ({}, as the index runs it)", q.model),
        format!(
            "{:.0} chunks/s ({} chunks in {:.1} s)",
            q.chunks_per_second(),
            q.chunks,
            q.embedding.as_secs_f64()
        ),
    ));
    quality.push(Row {
        name: "resident memory added by the model and its use".into(),
        figure: format!("{extra:.0} MiB"),
        baseline: format!("{:.0} MiB before", mib(q.rss_before)),
        goal: format!("< {GOAL_EXTRA_MIB} MiB"),
        verdict: Verdict::of(extra < GOAL_EXTRA_MIB),
    });
    Section {
        title: format!(
            "Search by meaning: quality ({} known answers among {} chunks, hit@5)",
            kw.of, q.chunks
        ),
        rows: quality,
    }
}

/// Hybrid, semantic and embedding times on the benchmark's index.
fn speed_section(s: &Speed) -> Section {
    let speed = vec![
        Row {
            name: "hybrid query p50 (with the query's embedding)".into(),
            figure: format!("{:.2} ms", ms(s.hybrid.p50())),
            baseline: format!("keyword {:.2} ms", ms(s.keyword.p50())),
            goal: format!("< {GOAL_HYBRID_P50_MS} ms"),
            verdict: Verdict::of(ms(s.hybrid.p50()) < GOAL_HYBRID_P50_MS),
        },
        Row {
            name: "hybrid query p99".into(),
            figure: format!("{:.2} ms", ms(s.hybrid.p99())),
            baseline: format!("keyword {:.2} ms", ms(s.keyword.p99())),
            goal: format!("< {GOAL_HYBRID_P99_MS} ms"),
            verdict: Verdict::of(ms(s.hybrid.p99()) < GOAL_HYBRID_P99_MS),
        },
        Row::info(
            "semantic query p50 / p99",
            format!(
                "{:.2} / {:.2} ms",
                ms(s.semantic.p50()),
                ms(s.semantic.p99())
            ),
        ),
        Row::info(
            "  of which the query's embedding p50 / p99",
            format!(
                "{:.2} / {:.2} ms",
                ms(s.query_embedding.p50()),
                ms(s.query_embedding.p99())
            ),
        ),
        Row::info(
            "storing a vector for every chunk (writer thread)",
            format!("{:.1} s for {} chunks", s.vectors.as_secs_f64(), s.chunks),
        ),
    ];
    Section {
        title: format!(
            "Search by meaning: speed ({} chunks, every one with a vector; signs shortlist past \
             20,000, then i8 cosine)",
            s.chunks
        ),
        rows: speed,
    }
}

pub fn notes(meaning: &Meaning) -> Vec<String> {
    match meaning {
        Err(why) => vec![format!("Search by meaning: not measured: {why}.")],
        Ok(_) => vec![
            "Search by meaning: quality on the 40 known answers of paraphrases.txt (a note, a \
             question in other words, words of the note), hidden among generated chunks and \
             embedded with the bundled all-MiniLM-L6-v2; speed on the main index with hash \
             vectors of the same length for the chunks (the scan does the same work) and the \
             real model for every query. Fusions are computed from the same keyword and \
             semantic top-40 lists; the shipped hybrid is reciprocal rank fusion with the keyword \
             list's share scaled by its confidence, plus MMR."
                .into(),
        ],
    }
}

pub fn json(meaning: &Meaning) -> Value {
    let Ok((q, s)) = meaning else {
        return json!({"skipped": meaning.as_ref().err()});
    };
    let speed = json!({
        "speed_chunks": s.chunks,
        "hybrid_p50_ms": round3(ms(s.hybrid.p50())),
        "hybrid_p99_ms": round3(ms(s.hybrid.p99())),
        "semantic_p50_ms": round3(ms(s.semantic.p50())),
        "semantic_p99_ms": round3(ms(s.semantic.p99())),
        "keyword_p50_ms": round3(ms(s.keyword.p50())),
        "keyword_p99_ms": round3(ms(s.keyword.p99())),
        "query_embedding_p50_ms": round3(ms(s.query_embedding.p50())),
        "vectors_s": round3(s.vectors.as_secs_f64()),
    });
    let mut value = quality_json(q);
    if let (Value::Object(all), Value::Object(speed)) = (&mut value, speed) {
        all.extend(speed);
    }
    value
}

/// The quality figures as JSON.
pub fn quality_json(q: &Quality) -> Value {
    let hits = |r: &HitRate| json!({"hits": r.hits, "of": r.of});
    let modes = |r: &[HitRate; 3]| json!({"keyword": hits(&r[0]), "semantic": hits(&r[1]), "hybrid": hits(&r[2])});
    json!({
        "paraphrase_hit5": modes(&q.paraphrase),
        "exact_hit5": modes(&q.exact),
        "shortlisted_hybrid_paraphrase_hit5": hits(&q.shortlisted),
        "placement_semantic_hit5": {
            "window": {"start": hits(&q.by_window.start), "last_third": hits(&q.by_window.last_third)},
            "estimate": {"start": hits(&q.by_estimate.start), "last_third": hits(&q.by_estimate.last_third)},
        },
        "fusions": q.fusions.iter().map(|(name, p, e)| json!({
            "name": name, "paraphrase": hits(p), "exact": hits(e)
        })).collect::<Vec<_>>(),
        "embed_chunks_per_s": round3(q.chunks_per_second()),
        "rss_before_bytes": q.rss_before,
        "rss_after_bytes": q.rss_after,
    })
}
