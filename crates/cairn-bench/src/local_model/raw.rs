//! The baseline: the same model driven directly through llama-cpp-2, in a tight loop with
//! no Cairn layer (no queue, no channel, no detokenizing): llama.cpp's own throughput.

use std::num::NonZeroU32;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{anyhow, ensure, Context as _};
use cairn_models::llama_backend;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;

/// One timed generation.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// From the start to the first sampled token: prompt decode plus one sample.
    pub prompt: Duration,
    /// From the first sampled token to the end: one decode and one sample per step.
    pub generation: Duration,
}

/// The model loaded a second time, outside Cairn, with the provider's settings.
pub struct Raw {
    model: LlamaModel,
    threads: i32,
    n_ctx: u32,
}

impl Raw {
    pub fn load(path: &Path, threads: i32, n_ctx: u32) -> anyhow::Result<Self> {
        let backend = llama_backend().map_err(anyhow::Error::msg)?;
        let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
            .with_context(|| format!("llama.cpp cannot load {}", path.display()))?;
        Ok(Self {
            model,
            threads,
            n_ctx,
        })
    }

    /// The prompt tokens for a system prompt and one user message, made the way the local
    /// provider makes them (the model's template, then the tokenizer).
    pub fn prompt(&self, system: &str, user: &str) -> anyhow::Result<Vec<LlamaToken>> {
        let template = self.model.chat_template(None)?;
        let chat = [
            LlamaChatMessage::new("system".into(), system.into())?,
            LlamaChatMessage::new("user".into(), user.into())?,
        ];
        let text = self.model.apply_chat_template(&template, &chat, true)?;
        Ok(self.model.vocab().tokenize(text.as_bytes(), true, true))
    }

    /// Decodes `prompt` into an empty cache, samples greedily, then runs `steps` more
    /// decode + sample steps, whatever the tokens are.
    pub fn run(&self, prompt: &[LlamaToken], steps: usize) -> anyhow::Result<Timing> {
        let n_batch = self.n_ctx.min(2048);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(self.n_ctx))
            .with_n_batch(n_batch)
            .with_n_threads(self.threads)
            .with_n_threads_batch(self.threads);
        let mut ctx = self
            .model
            .new_context(llama_backend().map_err(anyhow::Error::msg)?, params)?;
        ensure!(!prompt.is_empty(), "empty prompt");
        ensure!(
            prompt.len() + steps < self.n_ctx as usize,
            "the run does not fit the context"
        );
        let mut sampler = LlamaSampler::greedy();
        let mut batch = LlamaBatch::new(n_batch as usize, 1);

        let start = Instant::now();
        let mut pos = 0i32;
        for chunk in prompt.chunks(n_batch as usize) {
            batch.clear();
            let last = chunk.len() - 1;
            for (i, &token) in chunk.iter().enumerate() {
                batch.add(token, pos, &[0], i == last)?;
                pos += 1;
            }
            ctx.decode(&mut batch)
                .map_err(|e| anyhow!("prompt decode: {e}"))?;
        }
        let mut token = sampler.sample(&ctx, batch.n_tokens() - 1);
        let prompt_done = Instant::now();
        for _ in 0..steps {
            batch.clear();
            batch.add(token, pos, &[0], true)?;
            pos += 1;
            ctx.decode(&mut batch)
                .map_err(|e| anyhow!("token decode: {e}"))?;
            token = sampler.sample(&ctx, 0);
        }
        let end = Instant::now();
        Ok(Timing {
            prompt: prompt_done - start,
            generation: end - prompt_done,
        })
    }
}
