//! The embedding model run by llama.cpp (the engine the chat model already uses): the
//! BERT GGUF written by `gguf.rs`, mean-pooled by llama.cpp, L2-normalised here. Token ids
//! come from the model's own WordPiece tokenizer (as with every engine), so what is
//! embedded is exactly what the chunker sized.
//!
//! llama.cpp's model and context live on one thread of their own, which takes requests
//! in turn: a context borrows its model, and it is used by one caller at a time.

use std::num::NonZeroU32;
use std::path::Path;
use std::sync::{mpsc, Mutex, PoisonError};

use llama_cpp_2::context::params::{LlamaContextParams, LlamaPoolingType};
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

/// Tokens one encode takes at most (two full chunks; short texts are packed together).
const BATCH_TOKENS: usize = 512;
/// Texts one encode takes at most.
const BATCH_TEXTS: usize = 16;

type Reply = mpsc::Sender<Result<Vec<Vec<f32>>, String>>;

/// A loaded model, ready to embed.
pub struct LlamaEngine {
    jobs: Mutex<mpsc::Sender<(Vec<Vec<u32>>, Reply)>>,
    dimensions: usize,
}

impl LlamaEngine {
    /// Loads `gguf` on a thread of its own, computing with `threads` threads.
    pub fn load(gguf: &Path, threads: i32) -> Result<Self, String> {
        let (jobs, inbox) = mpsc::channel::<(Vec<Vec<u32>>, Reply)>();
        let (ready, loaded) = mpsc::channel::<Result<usize, String>>();
        let path = gguf.to_path_buf();
        std::thread::Builder::new()
            .name("cairn-embed".into())
            .spawn(move || serve(&path, threads, &ready, &inbox))
            .map_err(|e| e.to_string())?;
        let dimensions = loaded
            .recv()
            .map_err(|_| "the embedding thread ended while loading".to_string())??;
        Ok(Self {
            jobs: Mutex::new(jobs),
            dimensions,
        })
    }

    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// One unit vector per text (given as token ids, special tokens included).
    pub fn embed(&self, texts: Vec<Vec<u32>>) -> Result<Vec<Vec<f32>>, String> {
        let (reply, answer) = mpsc::channel();
        self.jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .send((texts, reply))
            .map_err(|_| "the embedding thread has ended".to_string())?;
        answer
            .recv()
            .map_err(|_| "the embedding thread ended mid-way".to_string())?
    }
}

fn serve(
    path: &Path,
    threads: i32,
    ready: &mpsc::Sender<Result<usize, String>>,
    inbox: &mpsc::Receiver<(Vec<Vec<u32>>, Reply)>,
) {
    let backend = match cairn_models::llama_backend() {
        Ok(backend) => backend,
        Err(e) => {
            let _ = ready.send(Err(e.to_string()));
            return;
        }
    };
    let model = match LlamaModel::load_from_file(backend, path, &LlamaModelParams::default()) {
        Ok(model) => model,
        Err(e) => {
            let _ = ready.send(Err(format!(
                "llama.cpp cannot load {}: {e}",
                path.display()
            )));
            return;
        }
    };
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(BATCH_TOKENS as u32))
        .with_n_batch(BATCH_TOKENS as u32)
        .with_n_ubatch(BATCH_TOKENS as u32)
        .with_n_seq_max(BATCH_TEXTS as u32)
        .with_embeddings(true)
        .with_pooling_type(LlamaPoolingType::Mean)
        .with_n_threads(threads)
        .with_n_threads_batch(threads);
    let mut context = match model.new_context(backend, params) {
        Ok(context) => context,
        Err(e) => {
            let _ = ready.send(Err(format!("llama.cpp cannot make a context: {e}")));
            return;
        }
    };
    let dimensions = usize::try_from(model.n_embd()).unwrap_or(0);
    let _ = ready.send(Ok(dimensions));
    let mut batch = LlamaBatch::new(BATCH_TOKENS, 1);
    while let Ok((texts, reply)) = inbox.recv() {
        let mut vectors = Vec::with_capacity(texts.len());
        let mut failed = None;
        for group in groups(&texts) {
            batch.clear();
            let added = group.iter().enumerate().try_for_each(|(seq, ids)| {
                ids.iter().enumerate().try_for_each(|(pos, &id)| {
                    batch.add(LlamaToken(id as i32), pos as i32, &[seq as i32], true)
                })
            });
            if let Err(e) = added {
                failed = Some(e.to_string());
                break;
            }
            if let Err(e) = context.encode(&mut batch) {
                failed = Some(format!("llama.cpp could not embed: {e}"));
                break;
            }
            for seq in 0..group.len() {
                match context.embeddings_seq_ith(seq as i32) {
                    Ok(v) => vectors.push(normalised(v)),
                    Err(e) => {
                        failed = Some(format!("no vector came back: {e}"));
                        break;
                    }
                }
            }
        }
        let _ = reply.send(match failed {
            Some(e) => Err(e),
            None => Ok(vectors),
        });
    }
}

/// The texts in order, packed into encodes of at most [`BATCH_TOKENS`] tokens and
/// [`BATCH_TEXTS`] texts (a text longer than an encode is cut: the tokenizer already
/// keeps texts within the model's window, smaller than an encode).
fn groups(texts: &[Vec<u32>]) -> Vec<Vec<&[u32]>> {
    let mut out: Vec<Vec<&[u32]>> = Vec::new();
    let mut tokens = 0;
    for ids in texts {
        let ids = &ids[..ids.len().min(BATCH_TOKENS)];
        let full = out
            .last()
            .is_none_or(|g| g.len() >= BATCH_TEXTS || tokens + ids.len() > BATCH_TOKENS);
        if full {
            out.push(Vec::new());
            tokens = 0;
        }
        tokens += ids.len();
        if let Some(group) = out.last_mut() {
            group.push(ids);
        }
    }
    out
}

fn normalised(v: &[f32]) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter().map(|x| x / norm).collect()
    } else {
        v.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_packed_into_encodes_in_order() {
        let texts: Vec<Vec<u32>> = [300, 200, 100, 600, 5]
            .iter()
            .map(|&n| vec![1; n])
            .collect();
        let sizes: Vec<Vec<usize>> = groups(&texts)
            .iter()
            .map(|g| g.iter().map(|t| t.len()).collect())
            .collect();
        assert_eq!(sizes, vec![vec![300, 200], vec![100], vec![512], vec![5]]);
        let many: Vec<Vec<u32>> = (0..20).map(|_| vec![1; 3]).collect();
        assert_eq!(groups(&many).len(), 2);
    }
}
