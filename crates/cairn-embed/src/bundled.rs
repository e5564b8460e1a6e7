//! The bundled embedding model as the index uses it: run by ONNX Runtime when its library
//! is installed (int8, else f32 when int8 misses the reference on this CPU), else by
//! candle. Chunks are embedded with every core at low priority, so the user's own work
//! (and a search) comes first; a search's one-line query has an engine of its own, so it
//! never waits behind a batch of chunks.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::candle::{default_embedder_dir, LocalEmbedder};

use crate::onnx::Precision;
use crate::runtime::OrtEmbedder;

/// How much lower than normal the embedding threads run (`nice` 10: they get the CPU when
/// nothing at normal priority wants it, and a fraction of it when something does).
const BACKGROUND_NICE: i32 = 10;

enum Engine {
    Ort(Box<OrtEmbedder>),
    /// One candle model serves chunks and queries (a second copy would double its memory).
    Candle(Arc<LocalEmbedder>),
}

impl Engine {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        match self {
            Self::Ort(ort) => ort.embed(texts),
            Self::Candle(candle) => candle.embed(texts).map_err(|e| e.to_string()),
        }
    }
}

/// The bundled model, loaded on first use (so opening the index does not wait for it).
pub struct Bundled {
    dir: PathBuf,
    runtime: Option<PathBuf>,
    cache: PathBuf,
    chunks: OnceLock<Result<Engine, String>>,
    queries: OnceLock<Result<Engine, String>>,
    candle: OnceLock<Result<Arc<LocalEmbedder>, String>>,
}

impl Bundled {
    /// The model in `dir`, run by ONNX Runtime from `runtime` when given (graphs kept in
    /// `cache`), else by candle.
    pub fn new(dir: &Path, runtime: Option<&Path>, cache: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
            runtime: runtime.map(Path::to_path_buf),
            cache: cache.to_path_buf(),
            chunks: OnceLock::new(),
            queries: OnceLock::new(),
            candle: OnceLock::new(),
        }
    }

    /// The model where `scripts/fetch-model.sh` and the first start put it, if its weights
    /// are there; ONNX Runtime's library is used when it is there too.
    pub fn installed() -> Option<Self> {
        let dir = default_embedder_dir()?;
        if !dir.join("model.safetensors").is_file() {
            return None;
        }
        let models = dir.parent()?.to_path_buf();
        let runtime = models.join(cairn_llm::fetch::EMBED_RUNTIME_FILE);
        let runtime =
            (!cairn_llm::fetch::EMBED_RUNTIME.is_empty() && runtime.is_file()).then_some(runtime);
        Some(Self::new(&dir, runtime.as_deref(), &models.join("cache")))
    }

    /// The folder of the model's files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Names the model and how it is run: vectors made another way are made again.
    pub fn name(&self) -> String {
        let model = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match self.runtime {
            Some(_) => format!("{model} (int8, {})", crate::runtime::ONNX_FORMAT),
            None => model,
        }
    }

    /// One unit vector per text: the index's chunks, embedded at background priority.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        let engine = self.chunks.get_or_init(|| {
            // Threads inherit their creator's priority: lowered here, before the engine
            // starts its thread pool, it holds for all of them.
            lower_this_threads_priority();
            self.load(cores())
        });
        engine.as_ref().map_err(Clone::clone)?.embed(texts)
    }

    /// The vector of a search's query, on an engine of its own at normal priority, on one
    /// thread: measured while chunks are embedded, one thread answers sooner than two
    /// (p50 2.9 ms against 3.4–5.2 ms), and alone only 0.2–0.4 ms later.
    pub fn embed_query(&self, text: &str) -> Result<Vec<f32>, String> {
        let engine = self.queries.get_or_init(|| self.load(1));
        let mut vectors = engine.as_ref().map_err(Clone::clone)?.embed(&[text])?;
        vectors
            .pop()
            .ok_or_else(|| "the embedding model gave no vector".to_string())
    }

    fn load(&self, threads: usize) -> Result<Engine, String> {
        if let Some(runtime) = &self.runtime {
            let mut problems = Vec::new();
            for precision in [Precision::Int8, Precision::F32] {
                match OrtEmbedder::load(&self.dir, runtime, &self.cache, precision, threads) {
                    Ok(engine) => return Ok(Engine::Ort(Box::new(engine))),
                    Err(problem) => problems.push(problem),
                }
            }
            tracing::warn!(
                problems = %problems.join("; "),
                "ONNX Runtime cannot run the embedding model: candle runs it"
            );
        }
        let candle = self.candle.get_or_init(|| {
            LocalEmbedder::load(&self.dir)
                .map(Arc::new)
                .map_err(|e| e.to_string())
        });
        candle.clone().map(Engine::Candle)
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Lowers the calling thread's scheduling priority to [`BACKGROUND_NICE`]; where that is
/// refused the thread goes on at its priority.
fn lower_this_threads_priority() {
    #[cfg(target_os = "linux")]
    {
        let thread = rustix::thread::gettid();
        let now = rustix::process::getpriority_process(Some(thread)).unwrap_or(0);
        if now < BACKGROUND_NICE {
            if let Err(error) = rustix::process::setpriority_process(Some(thread), BACKGROUND_NICE)
            {
                tracing::debug!(%error, "the embedding thread keeps its priority");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many of this process's threads run at `nice`.
    fn threads_at(nice: i32) -> usize {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .flatten()
            .filter_map(|task| std::fs::read_to_string(task.path().join("stat")).ok())
            .filter(|stat| {
                // Fields after the command's closing parenthesis; nice is the 17th.
                let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
                rest.split_whitespace().nth(16) == Some(nice.to_string().as_str())
            })
            .count()
    }

    /// Without ONNX Runtime, chunks and queries share one candle model.
    #[test]
    fn candle_serves_chunks_and_queries_with_one_model() {
        let dir = default_embedder_dir().unwrap_or_default();
        let bundled = Bundled::new(&dir, None, Path::new("/nonexistent"));
        assert_eq!(bundled.name(), "all-MiniLM-L6-v2");
        let query = bundled
            .embed_query("where are we staying in Lisbon")
            .unwrap();
        let chunk = bundled.embed(&["where are we staying in Lisbon"]).unwrap();
        assert!(crate::cosine(&query, &chunk[0]) > 0.9999);
        let Some(Ok(model)) = bundled.candle.get() else {
            panic!("candle was not loaded")
        };
        // Held by the two engines and the bundled model's own cell: one model.
        assert_eq!(Arc::strong_count(model), 3);
    }

    /// The thread that embeds chunks runs at background priority, and so does every
    /// thread the engine starts from it; a query is embedded at the caller's priority.
    #[cfg(target_os = "linux")]
    #[test]
    fn chunks_are_embedded_at_background_priority_and_queries_are_not() {
        let Some(bundled) = Bundled::installed() else {
            panic!("the bundled embedding model is not installed: run scripts/fetch-model.sh");
        };
        let nice = || rustix::process::getpriority_process(Some(rustix::thread::gettid())).unwrap();
        let before = nice();
        let query = bundled
            .embed_query("where are we staying in Lisbon")
            .unwrap();
        assert_eq!(query.len(), 384);
        assert_eq!(nice(), before);
        let (priority, vectors, background) = std::thread::spawn(move || {
            let vectors = bundled
                .embed(&["a note about the hotel", "another"])
                .unwrap();
            (nice(), vectors, threads_at(BACKGROUND_NICE))
        })
        .join()
        .unwrap();
        assert_eq!(priority, BACKGROUND_NICE.max(before));
        assert_eq!(vectors.len(), 2);
        // The engine's own pool threads, started from that thread, run at its priority.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert!(
            background >= cores,
            "{background} threads at background priority"
        );
    }
}
