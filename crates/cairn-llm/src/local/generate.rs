//! One generation on the engine thread: size the prompt, decode it, then sample, decode and
//! stream one token at a time until an end-of-generation token, the token limit or a cancel.
//!
//! The KV cache outlives a call: the next prompt usually repeats the previous conversation,
//! so only the tokens after the longest common prefix are decoded again (reported as
//! `cache_read_tokens`).

use cairn_protocol::{StopReason, Usage};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;

use super::calls::{CallFormat, CallStream, Piece};
use super::engine::Job;
use super::prompt::{answer_reserve, fit, Conversation};
use super::template::ChatFormat;
use super::utf8::Utf8Stream;
use crate::error::LlmError;
use crate::provider::StreamEvent;
use crate::think::ThinkSplitter;

/// Why decoding stopped early.
enum Halt {
    /// Cancelled, or nobody reads the answer any more.
    Stopped,
    Failed(LlmError),
}

/// The model, its context and what the context's KV cache holds.
pub(crate) struct Session<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    format: ChatFormat,
    batch: LlamaBatch<'static>,
    /// The tokens whose keys and values are in the cache, from position 0.
    cached: Vec<LlamaToken>,
}

impl<'m> Session<'m> {
    pub(crate) fn new(model: &'m LlamaModel, ctx: LlamaContext<'m>, format: ChatFormat) -> Self {
        let batch_size = usize::try_from(ctx.n_batch()).unwrap_or(512).max(1);
        Self {
            model,
            ctx,
            format,
            batch: LlamaBatch::new(batch_size, 1),
            cached: Vec::new(),
        }
    }

    /// Decodes one token and forgets it, so that llama.cpp's first-use costs (paging the
    /// weights in, building compute graphs) are paid while loading, not by the first answer.
    pub(crate) fn warm_up(&mut self) -> Result<(), LlmError> {
        let bos = self.model.vocab().bos();
        let token = if bos.0 >= 0 { bos } else { LlamaToken(0) };
        let result = match self.decode(&[token], false) {
            Ok(()) => Ok(()),
            Err(Halt::Failed(e)) => Err(e),
            Err(Halt::Stopped) => Ok(()),
        };
        self.ctx.clear_kv_cache();
        self.cached.clear();
        result
    }

    pub(crate) fn n_ctx(&self) -> u32 {
        self.ctx.n_ctx()
    }

    /// How the model writes tool calls, when its chat template teaches it.
    pub(crate) fn calls(&self) -> Option<CallFormat> {
        self.format.calls()
    }

    /// Runs one job to its end; every outcome goes to the job's event channel.
    pub(crate) fn run(&mut self, job: Job) {
        if job.cancel.is_cancelled() || job.events.is_closed() {
            return;
        }
        if job.count_only {
            let counted = self.count(&job.request).map(|tokens| {
                StreamEvent::Usage(cairn_protocol::Usage {
                    input_tokens: tokens,
                    output_tokens: 0,
                    cache_read_tokens: 0,
                })
            });
            let _ = job.events.send(counted);
            return;
        }
        // A stopped job has nobody to tell: its stream already ended or was dropped.
        if let Err(Halt::Failed(e)) = self.generate(&job) {
            tracing::warn!("local generation failed: {e}");
            let _ = job.events.send(Err(e));
        }
    }

    /// The tokens of the whole prompt `request` makes, as the model's vocabulary cuts it.
    fn count(&self, request: &crate::provider::ChatRequest) -> Result<u64, LlmError> {
        let tools: &[cairn_protocol::ToolSpec] = match self.format.calls() {
            Some(_) => &request.tools,
            None => &[],
        };
        let thinking = request
            .thinking
            .map(|level| level != cairn_protocol::ThinkingLevel::Off);
        let text = self.format.render(
            self.model,
            request.system.as_deref(),
            &request.messages,
            tools,
            thinking,
        )?;
        Ok(self.format.tokenize(self.model, &text).len() as u64)
    }

    fn generate(&mut self, job: &Job) -> Result<(), Halt> {
        let n_ctx = self.n_ctx() as usize;
        let reserve = answer_reserve(n_ctx, job.max_tokens as usize).max(1);
        let budget = n_ctx.saturating_sub(reserve);
        let request = &job.request;
        let conversation = Conversation {
            system: request.system.as_deref(),
            messages: &request.messages,
            tools: if self.format.calls().is_some() {
                &request.tools
            } else {
                &[]
            },
            thinking: request
                .thinking
                .map(|level| level != cairn_protocol::ThinkingLevel::Off),
        };
        if let Some(level) = request
            .thinking
            .filter(|l| *l != cairn_protocol::ThinkingLevel::Off && !self.format.thinking_switch())
        {
            let _ = job.events.send(Ok(StreamEvent::Notice(format!(
                "the local model has no switch for its reasoning (thinking level `{level}`); it \
                 answers as it always does"
            ))));
        }
        let tokens = fit(self.model, &self.format, conversation, budget).map_err(Halt::Failed)?;
        if tokens.is_empty() {
            let empty = LlmError::BadRequest("the prompt is empty".into());
            return Err(Halt::Failed(empty));
        }
        let reused = self.decode_prompt(&tokens, job)?;
        let (generated, stop) = self.answer(job)?;
        let usage = Usage {
            input_tokens: tokens.len() as u64,
            output_tokens: generated as u64,
            cache_read_tokens: reused as u64,
        };
        send(job, StreamEvent::Usage(usage))?;
        send(job, StreamEvent::Finish(stop))
    }

    /// Samples, streams and decodes one token at a time after the prompt; returns the
    /// number of tokens generated and why it stopped. With tools offered and a call format,
    /// the text goes through a [`CallStream`] that passes calls on as they complete.
    fn answer(&mut self, job: &Job) -> Result<(usize, StopReason), Halt> {
        let n_ctx = self.n_ctx() as usize;
        let mut sampler = sampler(job.request.temperature);
        let mut text = Utf8Stream::default();
        let mut out = Output {
            think: ThinkSplitter::default(),
            calls: self
                .format
                .calls()
                .filter(|_| !job.request.tools.is_empty())
                .map(CallStream::new),
            emitted: false,
        };
        let mut generated = 0;
        let mut logits_at = self.batch.n_tokens() - 1;
        let stop = loop {
            let token = sampler.sample(&self.ctx, logits_at);
            if self.model.vocab().is_eog(token) {
                break StopReason::EndTurn;
            }
            generated += 1;
            let special = out.calls.is_some() && self.format.preserves(token);
            let piece = self.model.vocab().token_to_piece(token, special, None);
            out.text(job, text.push(&piece))?;
            if generated >= job.max_tokens as usize || self.cached.len() >= n_ctx {
                break StopReason::MaxTokens;
            }
            self.check(job)?;
            self.decode(&[token], out.emitted)?;
            logits_at = 0;
        };
        out.text(job, text.finish())?;
        Ok((generated, out.finish(job, stop)?))
    }

    /// Brings the cache to hold `tokens`, decoding only what differs from what it holds,
    /// and leaves the logits of the last token ready. Returns how many tokens were reused.
    fn decode_prompt(&mut self, tokens: &[LlamaToken], job: &Job) -> Result<usize, Halt> {
        // At least the last token is decoded again, so that its logits exist.
        let mut reused = common_prefix(&self.cached, tokens).min(tokens.len().saturating_sub(1));
        if reused < self.cached.len() {
            let trimmed = u32::try_from(reused)
                .ok()
                .and_then(|p0| self.ctx.clear_kv_cache_seq(Some(0), Some(p0), None).ok())
                .unwrap_or(false);
            if !trimmed {
                self.ctx.clear_kv_cache();
                reused = 0;
            }
            self.cached.truncate(reused);
        }
        let chunk = usize::try_from(self.ctx.n_batch()).unwrap_or(512).max(1);
        for part in tokens[reused..].chunks(chunk) {
            self.check(job)?;
            self.decode(part, false)?;
        }
        Ok(reused)
    }

    /// Decodes `tokens` at the next positions; logits only for the last one.
    fn decode(&mut self, tokens: &[LlamaToken], output_started: bool) -> Result<(), Halt> {
        self.batch.clear();
        let last = tokens.len().saturating_sub(1);
        for (i, &token) in tokens.iter().enumerate() {
            let pos = i32::try_from(self.cached.len() + i).unwrap_or(i32::MAX);
            self.batch
                .add(token, pos, &[0], i == last)
                .map_err(|e| self.failed(format!("cannot fill a batch: {e}"), output_started))?;
        }
        if let Err(e) = self.ctx.decode(&mut self.batch) {
            return Err(self.failed(format!("llama.cpp could not decode: {e}"), output_started));
        }
        self.cached.extend_from_slice(tokens);
        Ok(())
    }

    /// A failure inside llama.cpp: the cache may be in any state, so it is forgotten.
    fn failed(&mut self, message: String, output_started: bool) -> Halt {
        self.ctx.clear_kv_cache();
        self.cached.clear();
        Halt::Failed(if output_started {
            LlmError::Interrupted(message)
        } else {
            LlmError::Fatal(message)
        })
    }

    fn check(&self, job: &Job) -> Result<(), Halt> {
        if job.cancel.is_cancelled() || job.events.is_closed() {
            Err(Halt::Stopped)
        } else {
            Ok(())
        }
    }
}

/// Where the answer's text goes: reasoning (`<think>…</think>`) split off, then the text
/// out as it comes, or through the call parser.
struct Output {
    think: ThinkSplitter,
    calls: Option<CallStream>,
    /// Something was passed on (a failure now would repeat it if retried).
    emitted: bool,
}

impl Output {
    fn text(&mut self, job: &Job, delta: String) -> Result<(), Halt> {
        if delta.is_empty() {
            return Ok(());
        }
        let events = self.think.push(delta);
        self.split(job, events)
    }

    /// Passes reasoning on, and answer text to where it goes.
    fn split(&mut self, job: &Job, events: Vec<StreamEvent>) -> Result<(), Halt> {
        for event in events {
            match event {
                StreamEvent::TextDelta(text) => self.answer(job, text)?,
                other => self.send(job, other)?,
            }
        }
        Ok(())
    }

    fn answer(&mut self, job: &Job, delta: String) -> Result<(), Halt> {
        match &mut self.calls {
            None => self.send(job, StreamEvent::TextDelta(delta)),
            Some(calls) => {
                let pieces = calls.push(&delta).map_err(Halt::Failed)?;
                self.pieces(job, pieces)
            }
        }
    }

    /// Decides what the parser held back; calls make the stop reason `ToolUse`.
    fn finish(&mut self, job: &Job, stop: StopReason) -> Result<StopReason, Halt> {
        let held = self.think.finish();
        self.split(job, held)?;
        let Some(calls) = &mut self.calls else {
            return Ok(stop);
        };
        let pieces = calls.finish().map_err(|e| match (e, stop) {
            (LlmError::Fatal(why), StopReason::MaxTokens) => Halt::Failed(LlmError::Fatal(
                format!("{why} (the answer reached its token limit inside the call)"),
            )),
            (e, _) => Halt::Failed(e),
        })?;
        let made_calls = calls.calls() > 0;
        self.pieces(job, pieces)?;
        Ok(if made_calls {
            StopReason::ToolUse
        } else {
            stop
        })
    }

    fn pieces(&mut self, job: &Job, pieces: Vec<Piece>) -> Result<(), Halt> {
        for piece in pieces {
            let event = match piece {
                Piece::Text(text) => StreamEvent::TextDelta(text),
                Piece::Call(call) => StreamEvent::ToolCall(call),
            };
            self.send(job, event)?;
        }
        Ok(())
    }

    fn send(&mut self, job: &Job, event: StreamEvent) -> Result<(), Halt> {
        self.emitted = true;
        send(job, event)
    }
}

/// Passes an event on; fails when nobody reads the answer any more.
fn send(job: &Job, event: StreamEvent) -> Result<(), Halt> {
    job.events.send(Ok(event)).map_err(|_| Halt::Stopped)
}

/// Greedy for temperature 0 (the default); otherwise llama.cpp's usual chain.
fn sampler(temperature: Option<f32>) -> LlamaSampler {
    match temperature.filter(|t| *t > 0.0) {
        None => LlamaSampler::greedy(),
        Some(t) => LlamaSampler::chain_simple([
            LlamaSampler::top_k(40),
            LlamaSampler::top_p(0.95, 1),
            LlamaSampler::min_p(0.05, 1),
            LlamaSampler::temp(t),
            LlamaSampler::dist(rand::random()),
        ]),
    }
}

fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
