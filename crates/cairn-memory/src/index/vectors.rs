//! Vectors for search by meaning, one per distinct chunk text, kept beside the Tantivy
//! index.
//!
//! A chunk is named by the hash of its heading and text ([`chunk_id`]), which the index
//! stores as a fast field; its vector lives in the catalog's `vectors` table (with the
//! model that made it) and, for searching, in memory here. Liveness never comes from
//! this store: a search walks the index's live chunks and looks each one's vector up, so
//! a chunk deleted or re-chunked in the index stops being found at the same commit, and
//! a vector whose chunk has gone is only dead weight until the writer sweeps it.
//!
//! Vectors are unit length (cosine = dot product) and kept quantised to `i8` with one
//! scale each: 384 bytes a chunk for all-MiniLM-L6-v2 instead of 1,536, which keeps a
//! hundred thousand chunks in 40 MB and the dot products integer.

use std::collections::HashMap;
use std::fmt;

/// Turns texts into unit-length vectors; implemented by the front ends over a local
/// model or an embeddings endpoint (this crate never calls a model itself).
pub trait Embedder: Send + Sync {
    /// Names the model: vectors of another model are never compared with this one's.
    fn model(&self) -> String;
    /// One vector per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String>;
    /// The vector of a search's query. A model that embeds chunks in the background gives
    /// queries a path of their own, so a search does not wait behind a batch.
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, String> {
        self.embed(&[text])?
            .pop()
            .ok_or_else(|| "the embedder gave no vector".to_string())
    }
    /// The model's tokenizer and window, when known: chunks are then cut to fit the
    /// window whole (a model cuts what is longer, and the cut part never reaches the
    /// vector). Without it, chunks are sized by an estimate.
    fn tokens(&self) -> Option<std::sync::Arc<dyn crate::chunk::Tokens>> {
        None
    }
    /// How the model runs here (its engine, precision and the hardware it was chosen
    /// for), when that is the embedder's to tell: the doctor shows it.
    fn engine(&self) -> Option<String> {
        None
    }
    /// The length of the model's vectors, when it can tell without embedding anything:
    /// opening an index then checks its stored vectors without loading the model.
    /// Unknown, a text is embedded to learn it.
    fn dimensions(&self) -> Option<usize> {
        None
    }
}

impl fmt::Debug for dyn Embedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Embedder({})", self.model())
    }
}

/// The id of a chunk with this heading and text: the first 8 bytes of their blake3.
pub fn chunk_id(heading: &str, text: &str) -> u64 {
    let mut hasher = blake3::Hasher::new();
    hasher.update(heading.as_bytes());
    hasher.update(&[0]);
    hasher.update(text.as_bytes());
    let bytes = hasher.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&bytes.as_bytes()[..8]);
    u64::from_le_bytes(first)
}

/// What an embedder is given for a chunk: its headings, then its text.
pub fn embedding_text(heading: &str, text: &str) -> String {
    if heading.is_empty() {
        text.to_string()
    } else {
        format!("{heading}\n{text}")
    }
}

/// A vector quantised to `i8`: `values[i] * scale` is the original component.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantized {
    pub scale: f32,
    pub values: Vec<i8>,
}

impl Quantized {
    /// Quantises `vector` (scaled so its largest component is ±127).
    pub fn new(vector: &[f32]) -> Self {
        // A vector with a NaN or an infinite component (a misbehaving server) is no
        // direction at all: it is kept as zero, which matches nothing.
        let largest = vector.iter().fold(0f32, |m, x| m.max(x.abs()));
        if largest == 0.0 || vector.iter().any(|x| !x.is_finite()) {
            return Self {
                scale: 0.0,
                values: vec![0; vector.len()],
            };
        }
        let scale = largest / 127.0;
        let values = vector
            .iter()
            .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8)
            .collect();
        Self { scale, values }
    }

    /// The catalog's form: the scale (f32, little endian), then the values.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(4 + self.values.len());
        out.extend_from_slice(&self.scale.to_le_bytes());
        out.extend(self.values.iter().map(|v| *v as u8));
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let (scale, values) = bytes.split_first_chunk::<4>()?;
        let scale = f32::from_le_bytes(*scale);
        scale.is_finite().then(|| Self {
            scale,
            values: values.iter().map(|v| *v as i8).collect(),
        })
    }
}

/// A vector's signs, one bit per component (set: negative).
pub fn signs(values: &[i8]) -> Vec<u64> {
    let mut words = vec![0u64; values.len().div_ceil(64)];
    for (i, v) in values.iter().enumerate() {
        if *v < 0 {
            words[i / 64] |= 1 << (i % 64);
        }
    }
    words
}

/// The dot product of two quantised vectors of one length.
pub fn dot(a: &[i8], b: &[i8]) -> i32 {
    // Written so the compiler vectorises it: fixed-size blocks, i32 accumulators.
    let mut sums = [0i32; 16];
    let blocks = a.len() / 16;
    for block in 0..blocks {
        let x = &a[block * 16..block * 16 + 16];
        let y = &b[block * 16..block * 16 + 16];
        for i in 0..16 {
            sums[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    let mut total: i32 = sums.iter().sum();
    for i in blocks * 16..a.len().min(b.len()) {
        total += i32::from(a[i]) * i32::from(b[i]);
    }
    total
}

/// The vectors of one model, in memory: chunk id → slot in one flat array.
#[derive(Debug, Default)]
pub struct VectorStore {
    model: String,
    dimensions: usize,
    slots: HashMap<u64, u32>,
    scales: Vec<f32>,
    values: Vec<i8>,
    /// Each vector's signs, one bit per component (see [`VectorStore::hamming`]).
    signs: Vec<u64>,
    free: Vec<u32>,
    /// The highest catalog row loaded (a read-only process loads newer rows as the
    /// writing process adds them).
    pub last_row: i64,
    /// Bumped on every change, so cached lookups know to refresh.
    pub generation: u64,
}

impl VectorStore {
    pub fn new(model: String) -> Self {
        Self {
            model,
            ..Self::default()
        }
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// How many vectors are held.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The length of the vectors held (0 when none are).
    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    pub fn contains(&self, chunk: u64) -> bool {
        self.slots.contains_key(&chunk)
    }

    pub fn slot(&self, chunk: u64) -> Option<u32> {
        self.slots.get(&chunk).copied()
    }

    /// Adds (or replaces) a chunk's vector; a vector of another length than the first
    /// one stored is refused.
    pub fn insert(&mut self, chunk: u64, vector: &Quantized) -> bool {
        if self.dimensions == 0 {
            self.dimensions = vector.values.len();
        }
        if vector.values.len() != self.dimensions || self.dimensions == 0 {
            return false;
        }
        let slot = match self.slots.get(&chunk) {
            Some(slot) => *slot,
            None => match self.free.pop() {
                Some(slot) => slot,
                None => {
                    let slot = self.scales.len() as u32;
                    self.scales.push(0.0);
                    self.values.resize(self.values.len() + self.dimensions, 0);
                    self.signs.resize(self.signs.len() + self.words(), 0);
                    slot
                }
            },
        };
        let at = slot as usize * self.dimensions;
        self.values[at..at + self.dimensions].copy_from_slice(&vector.values);
        let words = self.words();
        let signs = signs(&vector.values);
        self.signs[slot as usize * words..(slot as usize + 1) * words].copy_from_slice(&signs);
        self.scales[slot as usize] = vector.scale;
        self.slots.insert(chunk, slot);
        self.generation += 1;
        true
    }

    /// Adds a vector the embedder has just made. Held vectors of another length cannot be
    /// this model's (a damaged or foreign catalog): they are all dropped first, and their
    /// chunks returned, so they are made again rather than refusing every new vector.
    pub fn insert_made(&mut self, chunk: u64, vector: &Quantized) -> (bool, Vec<u64>) {
        let mut dropped = Vec::new();
        if self.dimensions != 0 && vector.values.len() != self.dimensions {
            dropped = self.clear();
        }
        (self.insert(chunk, vector), dropped)
    }

    /// Drops every vector (the next one added sets the length); returns their chunks.
    pub fn clear(&mut self) -> Vec<u64> {
        let dropped = self.slots.keys().copied().collect();
        *self = Self {
            model: std::mem::take(&mut self.model),
            last_row: self.last_row,
            generation: self.generation + 1,
            ..Self::default()
        };
        dropped
    }

    /// Holds the vectors of `model` from now on: drops every vector held, and loads from
    /// the catalog's first row again.
    pub fn reset(&mut self, model: String) {
        self.clear();
        self.model = model;
        self.last_row = 0;
    }

    pub fn remove(&mut self, chunk: u64) {
        if let Some(slot) = self.slots.remove(&chunk) {
            self.free.push(slot);
            self.generation += 1;
        }
    }

    /// Every chunk id held.
    pub fn chunks(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots.keys().copied()
    }

    /// The cosine of the query with the vector in `slot`.
    pub fn similarity(&self, query: &Quantized, slot: u32) -> f32 {
        let at = slot as usize * self.dimensions;
        let Some(values) = self.values.get(at..at + self.dimensions) else {
            return 0.0;
        };
        if query.values.len() != self.dimensions {
            return 0.0;
        }
        dot(&query.values, values) as f32 * query.scale * self.scales[slot as usize]
    }

    /// 64-bit words of signs per vector.
    fn words(&self) -> usize {
        self.dimensions.div_ceil(64)
    }

    /// How many components of the vector in `slot` differ in sign from `query`'s
    /// ([`signs`]): a coarse distance, a few instructions per vector, that ranks
    /// candidates for the exact cosine.
    pub fn hamming(&self, query: &[u64], slot: u32) -> u32 {
        let words = self.words();
        let at = slot as usize * words;
        match self.signs.get(at..at + words) {
            Some(held) if query.len() == words => held
                .iter()
                .zip(query)
                .map(|(a, b)| (a ^ b).count_ones())
                .sum(),
            _ => u32::MAX,
        }
    }

    /// The cosine of the vectors in two slots.
    pub fn similarity_between(&self, a: u32, b: u32) -> f32 {
        let d = self.dimensions;
        let (Some(x), Some(y)) = (
            self.values.get(a as usize * d..a as usize * d + d),
            self.values.get(b as usize * d..b as usize * d + d),
        ) else {
            return 0.0;
        };
        dot(x, y) as f32 * self.scales[a as usize] * self.scales[b as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    #[test]
    fn quantised_cosine_stays_close_to_the_exact_one() {
        let a = unit(
            &(0..384)
                .map(|i| ((i * 7) % 13) as f32 - 6.0)
                .collect::<Vec<_>>(),
        );
        let b = unit(
            &(0..384)
                .map(|i| ((i * 5) % 11) as f32 - 4.5)
                .collect::<Vec<_>>(),
        );
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let mut store = VectorStore::new("m".into());
        assert!(store.insert(1, &Quantized::new(&b)));
        let got = store.similarity(&Quantized::new(&a), store.slot(1).unwrap_or(0));
        assert!((got - exact).abs() < 0.01, "{got} vs {exact}");
        let round = Quantized::from_bytes(&Quantized::new(&a).to_bytes());
        assert_eq!(round, Some(Quantized::new(&a)));
    }

    #[test]
    fn slots_are_reused_and_other_lengths_refused() {
        let mut store = VectorStore::new("m".into());
        assert!(store.insert(1, &Quantized::new(&[1.0, 0.0])));
        assert!(store.insert(2, &Quantized::new(&[0.0, 1.0])));
        assert!(!store.insert(3, &Quantized::new(&[1.0, 0.0, 0.0])));
        store.remove(1);
        assert!(store.insert(4, &Quantized::new(&[0.6, 0.8])));
        assert_eq!(store.chunks().count(), 2);
        assert_eq!(store.slot(4), Some(0));
        let s = store.similarity(&Quantized::new(&[0.0, 1.0]), 0);
        assert!((s - 0.8).abs() < 0.01, "{s}");
        assert!(Quantized::from_bytes(&[1, 2]).is_none());
        // A server's NaN or infinite components never poison a score.
        for odd in [
            [f32::NAN, 1.0, 0.5],
            [f32::INFINITY, 1.0, 0.5],
            [f32::NAN; 3],
        ] {
            let q = Quantized::new(&odd);
            assert!(q.scale.is_finite(), "{odd:?}");
            assert!(
                dot(&q.values, &q.values) as f32 * q.scale * q.scale <= 1.01,
                "{odd:?}"
            );
        }
        // The embedder's length wins over what was stored.
        let (added, dropped) = store.insert_made(9, &Quantized::new(&[0.6, 0.0, 0.8]));
        assert!(added);
        dropped.iter().for_each(|c| assert!([2, 4].contains(c)));
        assert_eq!(dropped.len(), 2);
        assert_eq!(store.chunks().collect::<Vec<_>>(), vec![9]);
    }

    /// Ranking by sign agreement keeps the true nearest vectors among its first few
    /// percent: what the exact cosine then sorts.
    #[test]
    fn sign_distance_keeps_the_nearest_among_its_first_candidates() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        // Vectors around 50 topics, as notes cluster by subject.
        let topics: Vec<Vec<f32>> = (0..50)
            .map(|_| (0..384).map(|_| next()).collect())
            .collect();
        let mut store = VectorStore::new("m".into());
        for n in 0..5000u64 {
            let topic = &topics[n as usize % 50];
            let v: Vec<f32> = topic.iter().map(|t| t + 0.6 * next()).collect();
            store.insert(n, &Quantized::new(&unit(&v)));
        }
        let mut recalled = 0;
        for topic in &topics[..20] {
            let query: Vec<f32> = topic.iter().map(|t| t + 0.6 * next()).collect();
            let query = Quantized::new(&unit(&query));
            let bits = signs(&query.values);
            let mut exact: Vec<u32> = (0..5000).collect();
            exact.sort_by(|a, b| {
                store
                    .similarity(&query, *b)
                    .total_cmp(&store.similarity(&query, *a))
            });
            let mut coarse: Vec<u32> = (0..5000).collect();
            coarse.sort_by_key(|s| store.hamming(&bits, *s));
            let first: std::collections::HashSet<u32> = coarse[..400].iter().copied().collect();
            recalled += exact[..10].iter().filter(|s| first.contains(s)).count();
        }
        assert!(
            recalled >= 190,
            "{recalled} of 200 nearest among the first candidates"
        );
    }

    #[test]
    fn chunk_ids_tell_heading_from_text() {
        assert_ne!(chunk_id("a", "bc"), chunk_id("ab", "c"));
        assert_eq!(chunk_id("a", "b"), chunk_id("a", "b"));
    }
}
