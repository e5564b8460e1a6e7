//! The English stemmer of the index's analyzer, remembering the stems it made.
//!
//! Tantivy's own stemmer filter runs the Snowball algorithm on every word, every time:
//! a third of the indexing thread's time went there. Words repeat a great deal (a few
//! thousand make up most of any text), so each thread keeps the stems it has made and
//! looks them up first; indexing, query parsing and snippets all go through here.

use std::cell::RefCell;

use frostem::{Algorithm, Stemmer};
use rustc_hash::FxHashMap;
use tantivy::tokenizer::{Token, TokenFilter, TokenStream, Tokenizer};

/// Words remembered per thread before the memory starts over (a few MiB at most).
const REMEMBERED: usize = 50_000;

thread_local! {
    static STEMS: RefCell<FxHashMap<Box<str>, Box<str>>> = RefCell::default();
}

/// Replaces `word` with its English stem, from this thread's memory when it was seen
/// before (no allocation then: a query's snippets stem every word of ten chunks).
fn stem(stemmer: &Stemmer, word: &mut String) {
    STEMS.with_borrow_mut(|stems| {
        if let Some(stem) = stems.get(word.as_str()) {
            word.clear();
            word.push_str(stem);
            return;
        }
        let stem = stemmer.stem(word).into_owned();
        if stems.len() >= REMEMBERED {
            stems.clear();
        }
        stems.insert(word.as_str().into(), stem.as_str().into());
        *word = stem;
    })
}

/// The filter: [`tantivy::tokenizer::Stemmer`] for English, with [`stem`].
#[derive(Debug, Clone, Copy, Default)]
pub struct EnglishStems;

impl TokenFilter for EnglishStems {
    type Tokenizer<T: Tokenizer> = EnglishStemsFilter<T>;

    fn transform<T: Tokenizer>(self, inner: T) -> EnglishStemsFilter<T> {
        EnglishStemsFilter { inner }
    }
}

#[derive(Clone)]
pub struct EnglishStemsFilter<T> {
    inner: T,
}

impl<T: Tokenizer> Tokenizer for EnglishStemsFilter<T> {
    type TokenStream<'a> = EnglishStemsStream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        EnglishStemsStream {
            tail: self.inner.token_stream(text),
            stemmer: Stemmer::new(Algorithm::English),
        }
    }
}

pub struct EnglishStemsStream<T> {
    tail: T,
    stemmer: Stemmer,
}

impl<T: TokenStream> TokenStream for EnglishStemsStream<T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        stem(&self.stemmer, &mut self.tail.token_mut().text);
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

#[cfg(test)]
mod tests {
    use tantivy::tokenizer::{
        Language, LowerCaser, SimpleTokenizer, Stemmer as TantivyStemmer, TextAnalyzer,
    };

    use super::*;

    fn words(mut analyzer: TextAnalyzer, text: &str) -> Vec<String> {
        let mut stream = analyzer.token_stream(text);
        let mut words = Vec::new();
        while let Some(token) = stream.next() {
            words.push(format!("{}@{}", token.text, token.position));
        }
        words
    }

    #[test]
    fn stems_are_tantivys_seen_or_not() {
        let text = "Running runners ran; the happiness of happy generalizations, running again \
                    and again through 12 studies studied studying";
        let ours = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(EnglishStems)
            .build();
        let theirs = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(TantivyStemmer::new(Language::English))
            .build();
        let want = words(theirs, text);
        assert!(want.contains(&"happi@6".to_string()), "{want:?}");
        // Twice: the second pass is served from memory.
        assert_eq!(words(ours.clone(), text), want);
        assert_eq!(words(ours, text), want);
    }

    #[test]
    fn a_full_memory_starts_over() {
        let stemmer = Stemmer::new(Algorithm::English);
        for n in 0..REMEMBERED + 10 {
            let word = format!("walking{n}");
            let mut stemmed = word.clone();
            stem(&stemmer, &mut stemmed);
            assert_eq!(stemmed, stemmer.stem(&word));
        }
        STEMS.with_borrow(|stems| assert!(stems.len() <= REMEMBERED));
        let mut word = "walking".to_string();
        stem(&stemmer, &mut word);
        assert_eq!(word, "walk");
    }
}
