//! The words of the generated corpus: English words in rough order of frequency, then
//! made-up words for the long tail, drawn with a Zipf-like law (a few words are everywhere,
//! most are rare); plus the people and projects notes talk about.

use std::collections::HashSet;
use std::ops::Range;

use rand::seq::IndexedRandom;
use rand::Rng;

/// English words, most frequent first (function words, then everyday, domain and rarer
/// words).
const WORDS: &str = include_str!("words.txt");

/// Distinct words in the vocabulary (the English list, then made-up words).
pub const SIZE: usize = 4000;
/// The most frequent words (function words mostly): no one searches for these alone.
pub const FREQUENT: usize = 100;

/// The Zipf–Mandelbrot law: the word of rank `r` (0-based) has weight
/// `1 / (r + SHIFT)^EXPONENT`.
const EXPONENT: f64 = 1.0;
const SHIFT: f64 = 2.7;

pub const NAMES: &[&str] = &[
    "Ana", "Bruno", "Chen", "Dmitri", "Elif", "Farah", "Gustavo", "Hiroshi", "Ingrid", "Jamal",
    "Kenji", "Leila", "Mateo", "Nadia", "Olu", "Priya", "Quentin", "Rosa", "Sven", "Tomas", "Uma",
    "Viktor", "Wen", "Ximena", "Yusuf", "Zofia", "Aiko", "Bilal", "Carmen", "Dario", "Esra",
    "Femi", "Greta", "Hamid", "Isla", "Joaquin", "Kavya", "Lars", "Mira", "Nikolai", "Oona",
    "Pablo", "Ravi", "Sofia", "Tariq", "Ulla", "Valeria", "Wim", "Yara", "Zane",
];

pub const PROJECTS: &[&str] = &[
    "Nimbus",
    "Halcyon",
    "Kestrel",
    "Meridian",
    "Basalt",
    "Quartzline",
    "Emberly",
    "Sextant",
    "Cobalt",
    "Aurora",
    "Pinnacle",
    "Vesper",
    "Sable",
    "Solstice",
    "Marlin",
    "Cinderhall",
    "Driftwood",
    "Northwind",
    "Lodestar",
    "Brightwater",
    "Foxhollow",
    "Ironbark",
    "Stillwater",
    "Redfern",
    "Moonrise",
];

/// How often a query word is drawn from each band of ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Band {
    /// Everyday content words (the function words above them are left out).
    Common,
    Mid,
    Rare,
}

impl Band {
    fn ranks(self) -> Range<usize> {
        match self {
            Band::Common => 40..250,
            Band::Mid => 250..1500,
            Band::Rare => 1500..SIZE,
        }
    }
}

pub struct Vocabulary {
    words: Vec<String>,
    /// The [`FREQUENT`] most frequent words.
    frequent: HashSet<String>,
    /// Running totals of the Zipf weights, one per word.
    cumulative: Vec<f64>,
}

impl Vocabulary {
    /// The English words, then made-up words from `rng` up to [`SIZE`].
    pub fn new(rng: &mut impl Rng) -> Self {
        let mut seen = HashSet::new();
        let mut words: Vec<String> = WORDS
            .split_whitespace()
            .filter(|w| seen.insert(w.to_string()))
            .map(str::to_string)
            .take(SIZE)
            .collect();
        while words.len() < SIZE {
            let word = made_up(rng);
            if seen.insert(word.clone()) {
                words.push(word);
            }
        }
        let mut total = 0.0;
        let cumulative = (0..words.len())
            .map(|rank| {
                total += 1.0 / (rank as f64 + SHIFT).powf(EXPONENT);
                total
            })
            .collect();
        let frequent = words.iter().take(FREQUENT).cloned().collect();
        Self {
            words,
            frequent,
            cumulative,
        }
    }

    /// One of the [`FREQUENT`] most frequent words (case-insensitive).
    pub fn is_frequent(&self, word: &str) -> bool {
        self.frequent.contains(&word.to_lowercase())
    }

    /// A word drawn by frequency.
    pub fn word(&self, rng: &mut impl Rng) -> &str {
        let total = self.cumulative.last().copied().unwrap_or(0.0);
        let x = rng.random::<f64>() * total;
        let rank = self.cumulative.partition_point(|&c| c <= x);
        &self.words[rank.min(self.words.len() - 1)]
    }

    /// A word of `band`, each as likely as the others.
    pub fn in_band(&self, band: Band, rng: &mut impl Rng) -> &str {
        let ranks = band.ranks();
        let end = ranks.end.min(self.words.len());
        &self.words[rng.random_range(ranks.start.min(end - 1)..end)]
    }
}

/// A name or a project.
pub fn proper_noun(rng: &mut impl Rng) -> &'static str {
    let list = if rng.random_bool(0.65) {
        NAMES
    } else {
        PROJECTS
    };
    list.choose(rng).copied().unwrap_or("Ana")
}

/// A pronounceable made-up word of two or three syllables ("bralonth", "quesmairo").
fn made_up(rng: &mut impl Rng) -> String {
    const ONSETS: &[&str] = &[
        "b", "br", "c", "ch", "d", "dr", "f", "fl", "g", "gr", "h", "j", "k", "l", "m", "n", "p",
        "pl", "qu", "r", "s", "sh", "sk", "st", "t", "th", "tr", "v", "w", "z",
    ];
    const VOWELS: &[&str] = &["a", "e", "i", "o", "u", "ai", "ea", "ou", "io"];
    const CODAS: &[&str] = &["", "", "n", "r", "l", "s", "th", "m", "nd", "st", "x", "ck"];
    let syllables = if rng.random_bool(0.6) { 2 } else { 3 };
    let mut word = String::new();
    for i in 0..syllables {
        for part in [ONSETS, VOWELS] {
            word.push_str(part.choose(rng).copied().unwrap_or("a"));
        }
        if i + 1 == syllables || rng.random_bool(0.3) {
            word.push_str(CODAS.choose(rng).copied().unwrap_or(""));
        }
    }
    word
}

#[cfg(test)]
mod tests {
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn frequent_words_come_first_and_the_tail_is_long() {
        let mut rng = StdRng::seed_from_u64(1);
        let vocab = Vocabulary::new(&mut rng);
        assert_eq!(vocab.words.len(), SIZE);
        assert!(WORDS.split_whitespace().count() > 1800);
        assert_eq!(vocab.words[0], "the");
        let ranks: std::collections::HashMap<&str, usize> = vocab
            .words
            .iter()
            .enumerate()
            .map(|(rank, w)| (w.as_str(), rank))
            .collect();
        let mut counts = vec![0u32; SIZE];
        for _ in 0..200_000 {
            counts[ranks[vocab.word(&mut rng)]] += 1;
        }
        // Zipf-Mandelbrot: rank 0 about 4 times rank 9 and 38 times rank 99, and the tail
        // still drawn.
        assert!(counts[0] > 3 * counts[9], "{} vs {}", counts[0], counts[9]);
        assert!(
            counts[0] > 20 * counts[99],
            "{} vs {}",
            counts[0],
            counts[99]
        );
        assert!(
            counts[Band::Rare.ranks()]
                .iter()
                .filter(|&&c| c > 0)
                .count()
                > 1000
        );
    }
}
