//! The dedicated thread that owns a loaded model and its context.
//!
//! llama.cpp work is blocking and CPU-bound, and a context is tied to the model it was
//! made from, so one OS thread owns both and takes generation jobs from a queue, one at a
//! time. The async side only sends jobs and reads events. The thread ends, freeing the
//! model, when the last [`Engine`] handle is dropped and its queue drains.

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::{mpsc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::calls::CallFormat;
use super::file::load_failed;
use super::generate::Session;
use super::template::ChatFormat;
use crate::error::LlmError;
use crate::provider::{ChatRequest, StreamEvent};

/// The context window used when neither the caller nor the model says.
const FALLBACK_CONTEXT: u32 = 4096;
/// The largest context window chosen by default (the caller may ask for more).
pub(crate) const DEFAULT_CONTEXT_CAP: u32 = 8192;

/// One model call, queued for the engine thread.
pub(crate) struct Job {
    pub request: ChatRequest,
    pub max_tokens: u32,
    pub cancel: CancellationToken,
    /// Where the answer goes; the job stops early when the receiver is dropped.
    pub events: UnboundedSender<Result<StreamEvent, LlmError>>,
    /// Only count the prompt's tokens (sent as `Usage`), generate nothing.
    pub count_only: bool,
}

/// How to load the model.
#[derive(Debug, Clone)]
pub(crate) struct EngineConfig {
    pub model_path: PathBuf,
    pub context_window: Option<u32>,
    pub threads: i32,
    /// A Jinja chat template used instead of the model's own.
    pub chat_template: Option<String>,
}

/// What the engine learnt while loading the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Loaded {
    /// The context window in use, in tokens.
    pub n_ctx: u32,
    /// How the model writes tool calls, when its chat template teaches it.
    pub calls: Option<CallFormat>,
}

/// A handle on the engine thread: send jobs to it.
#[derive(Debug)]
pub(crate) struct Engine {
    jobs: mpsc::Sender<Job>,
    loaded: Loaded,
}

impl Engine {
    /// Starts the thread and waits until it has loaded the model (blocking).
    pub(crate) fn start(config: EngineConfig) -> Result<Self, LlmError> {
        let (jobs, queue) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::sync_channel(1);
        thread::Builder::new()
            .name("cairn-llama".into())
            .spawn(move || run(config, ready_tx, queue))
            .map_err(|e| LlmError::Fatal(format!("cannot start the local model thread: {e}")))?;
        let loaded = ready_rx.recv().map_err(|_| {
            LlmError::Fatal("the local model thread stopped while loading the model".into())
        })??;
        Ok(Self { jobs, loaded })
    }

    pub(crate) fn loaded(&self) -> &Loaded {
        &self.loaded
    }

    /// Queues a job; it runs after the jobs before it.
    pub(crate) fn submit(&self, job: Job) -> Result<(), LlmError> {
        self.jobs
            .send(job)
            .map_err(|_| LlmError::Fatal("the local model thread has stopped".into()))
    }
}

/// The thread's body: load, report, then serve jobs until every sender is gone.
fn run(
    config: EngineConfig,
    ready: mpsc::SyncSender<Result<Loaded, LlmError>>,
    queue: mpsc::Receiver<Job>,
) {
    let loading = Busy::enter();
    let model = match load_model(&config) {
        Ok(model) => model,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let session = new_context(&config, &model).and_then(|ctx| {
        let format = ChatFormat::load(&model, config.chat_template.as_deref())?;
        let mut session = Session::new(&model, ctx, format);
        session.warm_up()?;
        Ok(session)
    });
    let mut session = match session {
        Ok(session) => session,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let loaded = Loaded {
        n_ctx: session.n_ctx(),
        calls: session.calls(),
    };
    drop(loading);
    if ready.send(Ok(loaded)).is_err() {
        return;
    }
    while let Ok(job) = queue.recv() {
        let _busy = Busy::enter();
        session.run(job);
    }
}

/// How many engine threads are inside llama.cpp (loading a model or running a job).
static BUSY: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

/// Counts its thread as inside llama.cpp while it lives.
struct Busy;

impl Busy {
    fn enter() -> Self {
        *BUSY.0.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        Self
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut busy = BUSY.0.lock().unwrap_or_else(PoisonError::into_inner);
        *busy = busy.saturating_sub(1);
        if *busy == 0 {
            BUSY.1.notify_all();
        }
    }
}

/// Waits (blocking, `timeout` at most) until no engine thread is inside llama.cpp, and
/// says whether none is. A process calls it before it exits: llama.cpp's globals are torn
/// down at exit, and a thread still decoding a cancelled answer's last token would crash
/// the process under them. A cancelled job lets go at its next token.
pub fn settle(timeout: Duration) -> bool {
    let busy = BUSY.0.lock().unwrap_or_else(PoisonError::into_inner);
    let (busy, _) = BUSY
        .1
        .wait_timeout_while(busy, timeout, |busy| *busy > 0)
        .unwrap_or_else(PoisonError::into_inner);
    *busy == 0
}

/// How far the model being loaded is (0.0 to 1.0); `None` while none loads. One model
/// loads at a time in practice (the chat model); a second load takes the figure over.
static LOADING: std::sync::LazyLock<tokio::sync::watch::Sender<Option<f32>>> =
    std::sync::LazyLock::new(|| tokio::sync::watch::Sender::new(None));

/// Follows the loading of local models, for a front end to show (a large model takes
/// seconds to load, which would otherwise be a silent wait).
pub fn load_progress() -> tokio::sync::watch::Receiver<Option<f32>> {
    LOADING.subscribe()
}

/// The process's llama.cpp backend (shared with anything else in the process that drives
/// llama.cpp).
fn llama_backend() -> Result<&'static llama_cpp_2::llama_backend::LlamaBackend, LlmError> {
    cairn_models::llama_backend().map_err(LlmError::Fatal)
}

fn load_model(config: &EngineConfig) -> Result<LlamaModel, LlmError> {
    let backend = llama_backend()?;
    let started = std::time::Instant::now();
    LOADING.send_replace(Some(0.0));
    let params = LlamaModelParams::default().with_progress_callback(|progress| {
        LOADING.send_replace(Some(progress.clamp(0.0, 1.0)));
        true
    });
    let model = LlamaModel::load_from_file(backend, &config.model_path, &params);
    LOADING.send_replace(None);
    let model = model.map_err(|e| load_failed(&config.model_path, e))?;
    tracing::debug!(path = %config.model_path.display(), elapsed = ?started.elapsed(), "model loaded");
    Ok(model)
}

fn new_context<'m>(
    config: &EngineConfig,
    model: &'m LlamaModel,
) -> Result<llama_cpp_2::context::LlamaContext<'m>, LlmError> {
    let n_ctx = context_window(config.context_window, model.n_ctx_train());
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(n_ctx))
        .with_n_batch(n_ctx.min(2048))
        .with_n_threads(config.threads)
        .with_n_threads_batch(config.threads);
    model
        .new_context(llama_backend()?, params)
        .map_err(|e| load_failed(&config.model_path, format!("cannot create a context: {e}")))
}

/// The context window: the caller's, else the model's training context capped at
/// [`DEFAULT_CONTEXT_CAP`].
pub(crate) fn context_window(requested: Option<u32>, n_ctx_train: u32) -> u32 {
    let trained = if n_ctx_train == 0 {
        FALLBACK_CONTEXT
    } else {
        n_ctx_train
    };
    match requested.filter(|&n| n > 0) {
        Some(n) => n,
        None => trained.min(DEFAULT_CONTEXT_CAP),
    }
}

/// The most threads chosen by default: generation is bound by memory bandwidth and stops
/// gaining from more threads well before this.
const DEFAULT_THREADS_CAP: usize = 8;

/// The default thread count: every core the process may use but one, at least one.
///
/// llama.cpp's threads meet at a spin barrier after every operation (hundreds per token),
/// so one of them losing its core to another process stalls all the others: on a 2-core
/// machine busy with a build, 2 threads generated 0.3 tokens/s where 1 thread generated 40.
/// Leaving a core to the rest of the system (the app itself included) avoids that.
pub(crate) fn default_threads() -> i32 {
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    threads_for(cores)
}

fn threads_for(cores: usize) -> i32 {
    let threads = cores.saturating_sub(1).clamp(1, DEFAULT_THREADS_CAP);
    i32::try_from(threads).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_window_defaults_to_the_trained_one_capped() {
        assert_eq!(context_window(None, 8192), 8192);
        assert_eq!(context_window(None, 131_072), 8192);
        assert_eq!(context_window(None, 2048), 2048);
        assert_eq!(context_window(None, 0), 4096);
        assert_eq!(context_window(Some(1024), 8192), 1024);
        assert_eq!(context_window(Some(0), 2048), 2048);
    }

    #[test]
    fn one_core_is_left_to_the_rest_of_the_system() {
        assert_eq!(threads_for(1), 1);
        assert_eq!(threads_for(2), 1);
        assert_eq!(threads_for(4), 3);
        assert_eq!(threads_for(64), 8);
    }
}
