//! The queries both engines answer: one to four words, mixed the way people search their
//! notes (mostly mid-frequency and rare words, some common ones, names and projects, and
//! a few words lifted from the text, never only function words like "of the").

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};

use super::vocab::{proper_noun, Band, Vocabulary};

/// The share of each kind of query, in percent.
const MIX: [(Kind, u32); 6] = [
    (Kind::Mid, 30),
    (Kind::Rare, 15),
    (Kind::Common, 8),
    (Kind::Name, 10),
    (Kind::Words, 22),
    (Kind::Phrase, 15),
];

#[derive(Debug, Clone, Copy)]
enum Kind {
    /// One mid-frequency word.
    Mid,
    /// One rare word.
    Rare,
    /// One common word.
    Common,
    /// A name or project, with a mid-frequency word half the time.
    Name,
    /// Two to four words of any band, mostly mid and rare.
    Words,
    /// Two or three words in a row from a sentence of the corpus, at least one of them
    /// outside the most frequent words.
    Phrase,
}

/// `count` queries, the same for the same seed.
pub fn generate(
    vocab: &Vocabulary,
    phrases: &[Vec<String>],
    count: usize,
    seed: u64,
) -> Vec<String> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..count).map(|_| one(vocab, phrases, &mut rng)).collect()
}

fn one(vocab: &Vocabulary, phrases: &[Vec<String>], rng: &mut StdRng) -> String {
    let total: u32 = MIX.iter().map(|(_, share)| share).sum();
    let mut roll = rng.random_range(0..total);
    let mut kind = Kind::Mid;
    for (k, share) in MIX {
        if roll < share {
            kind = k;
            break;
        }
        roll -= share;
    }
    let text = match kind {
        Kind::Mid => vocab.in_band(Band::Mid, rng).to_string(),
        Kind::Rare => vocab.in_band(Band::Rare, rng).to_string(),
        Kind::Common => vocab.in_band(Band::Common, rng).to_string(),
        Kind::Name if rng.random_bool(0.5) => proper_noun(rng).to_string(),
        Kind::Name => format!("{} {}", proper_noun(rng), vocab.in_band(Band::Mid, rng)),
        Kind::Words => {
            let words: Vec<&str> = (0..rng.random_range(2..=4))
                .map(|_| {
                    let band = match rng.random_range(0..10) {
                        0..5 => Band::Mid,
                        5..8 => Band::Rare,
                        _ => Band::Common,
                    };
                    vocab.in_band(band, rng)
                })
                .collect();
            words.join(" ")
        }
        Kind::Phrase => phrase(vocab, phrases, rng),
    };
    if text.is_empty() {
        vocab.in_band(Band::Mid, rng).to_string()
    } else {
        text
    }
}

/// Two or three consecutive words of a sampled sentence with at least one word that is not
/// among the most frequent (empty when none is found).
fn phrase(vocab: &Vocabulary, phrases: &[Vec<String>], rng: &mut StdRng) -> String {
    for _ in 0..100 {
        let Some(words) = phrases.choose(rng).filter(|p| p.len() >= 3) else {
            continue;
        };
        let len = rng.random_range(2..=3);
        let start = rng.random_range(0..=words.len() - len);
        let run = &words[start..start + len];
        if run.iter().any(|w| !vocab.is_frequent(w)) {
            return run.join(" ").to_lowercase();
        }
    }
    String::new()
}
