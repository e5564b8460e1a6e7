//! Bullets of a memory file and what a rewrite did to them.
//!
//! A consolidation merges and rewords bullets, so "kept" cannot mean "the same line": an
//! old bullet counts as kept when one new bullet holds most (at least 60%) of its
//! significant words. The share of old bullets not kept is what the drop guard checks.

use std::collections::HashSet;

/// Share of an old bullet's significant words a new bullet must hold to keep it.
const KEPT_SHARE: f64 = 0.6;

/// Words too common to say whether two bullets state the same fact.
const STOPWORDS: &[&str] = &[
    "about", "also", "and", "any", "are", "been", "but", "can", "could", "did", "does", "each",
    "for", "from", "had", "has", "have", "her", "his", "into", "its", "not", "our", "she",
    "should", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "those", "very", "was", "were", "what", "when", "where", "which", "who", "will", "with",
    "would", "you", "your",
];

/// What a rewrite did to the bullets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BulletDiff {
    /// New bullets that hold no old bullet (new facts).
    pub added: Vec<String>,
    /// Old bullets no new bullet holds (dropped facts).
    pub removed: Vec<String>,
    /// Old bullets some new bullet holds.
    pub kept: usize,
}

impl BulletDiff {
    /// Old bullets removed, as a share of all old bullets (0 when there were none).
    pub fn dropped_share(&self) -> f64 {
        let old = self.kept + self.removed.len();
        if old == 0 {
            0.0
        } else {
            self.removed.len() as f64 / old as f64
        }
    }
}

/// The text of every list item (`- `, `* `, `+ `, nested too) outside code fences.
pub fn bullets(text: &str) -> Vec<String> {
    let mut in_fence = false;
    let mut found = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with("```") || line.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let item = ["- ", "* ", "+ "]
            .iter()
            .find_map(|marker| line.strip_prefix(marker))
            .map(str::trim)
            .filter(|item| !item.is_empty());
        if let Some(item) = item {
            found.push(item.to_string());
        }
    }
    found
}

/// Compares the bullets of `old` and `new`.
pub fn diff(old: &str, new: &str) -> BulletDiff {
    let old: Vec<Fact> = bullets(old).into_iter().map(Fact::new).collect();
    let new: Vec<Fact> = bullets(new).into_iter().map(Fact::new).collect();
    let mut result = BulletDiff::default();
    for fact in &old {
        if new.iter().any(|n| n.holds(fact)) {
            result.kept += 1;
        } else {
            result.removed.push(fact.text.clone());
        }
    }
    result.added = new
        .iter()
        .filter(|n| !old.iter().any(|o| n.holds(o)))
        .map(|n| n.text.clone())
        .collect();
    result
}

/// A bullet with the words that carry its meaning.
struct Fact {
    text: String,
    /// Lowercased, whitespace collapsed: compared when the bullet has no significant word.
    normalized: String,
    words: HashSet<String>,
}

impl Fact {
    fn new(text: String) -> Self {
        let normalized = text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase();
        let words = normalized
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| is_significant(w))
            .map(str::to_string)
            .collect();
        Self {
            text,
            normalized,
            words,
        }
    }

    /// Whether this bullet holds most of `other`'s significant words.
    fn holds(&self, other: &Fact) -> bool {
        if other.words.is_empty() {
            return self.normalized.contains(&other.normalized);
        }
        let shared = other.words.intersection(&self.words).count();
        shared as f64 >= KEPT_SHARE * other.words.len() as f64
    }
}

fn is_significant(word: &str) -> bool {
    let long = word.chars().count() >= 3;
    let numeric = word.chars().any(|c| c.is_ascii_digit());
    (long || numeric) && !STOPWORDS.contains(&word)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn bullets_are_list_items_outside_code() {
        let text = "# Memory\n\n## People\n- Ana leads the garden.\n  * nested item\n\
                    + plus item\n-not a bullet\n---\n```\n- code, not a fact\n```\n- \n";
        assert_eq!(
            bullets(text),
            ["Ana leads the garden.", "nested item", "plus item"]
        );
    }

    #[test]
    fn a_merged_or_reworded_bullet_keeps_the_old_ones() {
        let old = "- Ana leads the garden project.\n- Ana also runs the compost project.\n\
                   - Dentist on March 14.\n- Prefers tea over coffee.\n";
        let new = "## People\n- Ana leads the garden project and runs the compost project.\n\
                   ## Dates\n- Dentist appointment: March 14, 9:00.\n\
                   - Flight to Oslo on May 2.\n";
        assert_eq!(
            diff(old, new),
            BulletDiff {
                added: vec!["Flight to Oslo on May 2.".into()],
                removed: vec!["Prefers tea over coffee.".into()],
                kept: 3,
            }
        );
        assert_eq!(diff(old, new).dropped_share(), 0.25);
    }

    #[test]
    fn a_bullet_keeping_too_few_words_counts_as_removed() {
        let diff = diff(
            "- The blue watering can is in the shed.\n",
            "- Something is in the shed.\n",
        );
        assert_eq!(diff.kept, 0);
        assert_eq!(diff.removed.len(), 1);
        assert_eq!(diff.dropped_share(), 1.0);
    }

    #[test]
    fn nothing_old_drops_nothing() {
        assert_eq!(diff("# Memory\n", "- new\n").dropped_share(), 0.0);
        // A bullet without significant words is compared as text.
        assert_eq!(diff("- ok\n", "- OK\n").kept, 1);
    }
}
