//! Embeddings for search by meaning: the bundled all-MiniLM-L6-v2 run in-process (BERT in
//! pure Rust with candle, its WordPiece tokenizer with `tokenizers`), pooled as
//! sentence-transformers does: the mean of the last hidden states over the real tokens,
//! then L2-normalised, so the dot product of two vectors is their cosine.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use cairn_models::models_dir;

/// The folder of the bundled embedding model in the models folder.
pub const DEFAULT_EMBEDDER_DIR: &str = "all-MiniLM-L6-v2";

/// The longest input in tokens, as sentence-transformers has it for this model
/// (`max_seq_length`); longer texts are cut.
const MAX_TOKENS: usize = 256;

/// What a user can do about a missing or bad embedding model.
const REMEDY: &str =
    "run `cairn models --fetch` (or scripts/fetch-model.sh in Cairn's sources) to fetch it";

/// Where `scripts/fetch-model.sh` puts the bundled embedding model.
pub fn default_embedder_dir() -> Option<PathBuf> {
    Some(models_dir()?.join(DEFAULT_EMBEDDER_DIR))
}

/// Fixes the number of threads candle's matrix products use, once, at the start of `main`
/// while the process has one thread (changing the environment later races readers in C
/// code). Unless `RAYON_NUM_THREADS` is set, candle works the count out again for every
/// product, reading `/proc/cpuinfo` each time: with it set, a query's embedding takes about
/// a quarter less time (12 ms to 9 ms at the median on two cores). An explicit setting is
/// left alone.
pub fn settle_threads() {
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        let threads = candle_core::utils::get_num_threads();
        std::env::set_var("RAYON_NUM_THREADS", threads.to_string());
    }
}

/// Counts tokens as the model in a folder reads them (its WordPiece tokenizer, nothing
/// cut), for sizing what is embedded to its window.
pub struct TokenCounter {
    tokenizer: Tokenizer,
}

impl TokenCounter {
    /// The tokenizer of the model in `dir` (`tokenizer.json`), without loading the model.
    pub fn load(dir: &Path) -> Result<Self, String> {
        let mut tokenizer =
            Tokenizer::from_bytes(read(dir, "tokenizer.json")?).map_err(|e| bad(dir, e))?;
        tokenizer.with_padding(None);
        tokenizer.with_truncation(None).map_err(|e| bad(dir, e))?;
        Ok(Self { tokenizer })
    }

    /// Tokens in `text`, without the model's special tokens.
    pub fn count(&self, text: &str) -> usize {
        self.tokenizer
            .encode_fast(text, false)
            .map_or_else(|_| text.chars().count(), |e| e.len())
    }

    /// The most tokens the model reads of one text, special tokens included.
    pub fn window(&self) -> usize {
        MAX_TOKENS
    }
}

/// A BERT sentence-embedding model loaded from a folder holding `config.json`,
/// `tokenizer.json` and `model.safetensors`.
pub struct LocalEmbedder {
    model: BertModel,
    tokenizer: Tokenizer,
    dimensions: usize,
    name: String,
}

impl std::fmt::Debug for LocalEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalEmbedder")
            .field("name", &self.name)
            .field("dimensions", &self.dimensions)
            .finish_non_exhaustive()
    }
}

fn read(dir: &Path, name: &str) -> Result<Vec<u8>, String> {
    let path = dir.join(name);
    std::fs::read(&path).map_err(|e| {
        format!(
            "the embedding model is incomplete: cannot read {} ({e}); {REMEDY}",
            path.display()
        )
    })
}

fn bad(dir: &Path, what: impl std::fmt::Display) -> String {
    format!(
        "the embedding model in {} cannot be used: {what}; {REMEDY}",
        dir.display()
    )
}

impl LocalEmbedder {
    /// Loads the model in `dir` (on the CPU).
    pub fn load(dir: &Path) -> Result<Self, String> {
        let config: Config =
            serde_json::from_slice(&read(dir, "config.json")?).map_err(|e| bad(dir, e))?;
        let mut tokenizer =
            Tokenizer::from_bytes(read(dir, "tokenizer.json")?).map_err(|e| bad(dir, e))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| bad(dir, e))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            pad_id: u32::try_from(config.pad_token_id).unwrap_or(0),
            ..PaddingParams::default()
        }));
        let weights = read(dir, "model.safetensors")?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|e| bad(dir, e))?;
        let model = BertModel::load(vb, &config).map_err(|e| bad(dir, e))?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Self {
            model,
            tokenizer,
            dimensions: config.hidden_size,
            name,
        })
    }

    /// The model's name (its folder's), stored with the vectors it makes.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The length of every vector.
    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// One unit-length vector per text, in order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        // A forward pass is a hundred or so operations, each split across threads. For one
        // short text (a query) they are small, and called from outside candle's thread pool
        // each is handed to the pool and waited for, a wake-up each: run inside the pool, a
        // query's embedding takes about a fifth less time on two cores. Batches of chunks
        // have large operations and went about a sixth slower inside it, so they are not.
        if texts.len() == 1 {
            Device::Cpu.with_context(|| self.embed_here(texts))
        } else {
            self.embed_here(texts)
        }
    }

    /// [`Self::embed`] on the calling thread.
    fn embed_here(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        let failed = |e: &dyn std::fmt::Display| format!("embedding failed: {e}");
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| failed(&e))?;
        let rows = |field: fn(&tokenizers::Encoding) -> &[u32]| -> Result<Tensor, String> {
            let rows = encodings
                .iter()
                .map(|e| Tensor::new(field(e), &Device::Cpu))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| failed(&e))?;
            Tensor::stack(&rows, 0).map_err(|e| failed(&e))
        };
        let ids = rows(tokenizers::Encoding::get_ids)?;
        let mask = rows(tokenizers::Encoding::get_attention_mask)?;
        let types = ids.zeros_like().map_err(|e| failed(&e))?;
        let pooled = (|| {
            let hidden = self.model.forward(&ids, &types, Some(&mask))?;
            // The mean over the real tokens: padding is masked out.
            let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
            let counts = mask.sum(1)?;
            let mean = summed.broadcast_div(&counts)?;
            let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?;
            mean.broadcast_div(&norms)?.to_vec2::<f32>()
        })();
        pooled.map_err(|e: candle_core::Error| failed(&e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundled() -> LocalEmbedder {
        let dir = default_embedder_dir().unwrap_or_default();
        LocalEmbedder::load(&dir).unwrap_or_else(|e| panic!("the bundled embedding model: {e}"))
    }

    #[test]
    fn vectors_match_the_reference_implementation() {
        let cases = crate::reference().unwrap_or_else(|e| panic!("{e}"));
        let texts: Vec<&str> = cases.iter().map(|(t, _)| t.as_str()).collect();
        let embedder = bundled();
        assert_eq!(embedder.dimensions(), 384);
        // In one batch (padded to the longest) and one by one: the same vectors.
        let batch = embedder.embed(&texts).unwrap_or_else(|e| panic!("{e}"));
        for (n, (_, want)) in cases.iter().enumerate() {
            let alone = embedder
                .embed(&texts[n..=n])
                .unwrap_or_else(|e| panic!("{e}"));
            for (how, got) in [("in a batch", &batch[n]), ("alone", &alone[0])] {
                let length: f32 = got.iter().map(|x| x * x).sum::<f32>().sqrt();
                assert!((length - 1.0).abs() < 1e-4, "{how}: length {length}");
                let similarity = crate::cosine(got, want);
                assert!(
                    similarity > 0.999,
                    "{:?} {how}: cosine {similarity}",
                    texts[n]
                );
            }
        }
        // Meaning, not words: the car question is nearer the vehicle note than the garden.
        assert!(crate::cosine(&batch[0], &batch[1]) > crate::cosine(&batch[0], &batch[2]) + 0.3);
    }

    /// The counter sees the whole text (the model's own tokenizer cuts at 256), and counts
    /// as the model reads: what fits is embedded whole.
    #[test]
    fn the_token_counter_counts_past_the_window_as_the_model_reads() {
        let dir = default_embedder_dir().unwrap_or_default();
        let counter = TokenCounter::load(&dir).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(counter.window(), 256);
        assert_eq!(counter.count("The harbour wakes."), 4);
        let long = "The quiet harbour wakes before the fishing boats return. ".repeat(40);
        assert!(counter.count(&long) >= 400, "{}", counter.count(&long));
        // A word the vocabulary lacks is several pieces.
        assert!(counter.count("zanzibarite") > 1);
    }

    #[test]
    fn a_missing_model_says_how_to_get_it() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let message = LocalEmbedder::load(dir.path()).unwrap_err();
        assert!(message.contains("config.json"), "{message}");
        assert!(message.contains("scripts/fetch-model.sh"), "{message}");
    }
}
