//! The bundled embedding model as the index uses it: run by ONNX Runtime when its library
//! is installed (int8, else f32 when int8 misses the reference on this CPU), else by
//! candle. Chunks are embedded with every core at low priority, so the user's own work
//! (and a search) comes first; a search's one-line query has an engine of its own, so it
//! never waits behind a batch of chunks.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::candle::{default_embedder_dir, LocalEmbedder};

use crate::onnx::Precision;
use crate::runtime::{OrtEmbedder, Packing};
use crate::verdict::Verdict;

mod held;
use held::{lock, Held, Slot};

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
            Self::Candle(candle) => candle.embed(texts),
        }
    }
}

/// The bundled model, loaded on first use (so opening the index does not wait for it),
/// and let go after [`Bundled::with_idle`] of nothing to embed (its memory returns; the next
/// text loads it again).
pub struct Bundled {
    dir: PathBuf,
    runtime: Option<PathBuf>,
    cache: PathBuf,
    held: Arc<Held>,
    idle: Option<Duration>,
    /// How the queries' engine lays out its weights ([`Bundled::for_few_queries`]).
    query_packing: Packing,
}

impl Bundled {
    /// The model in `dir`, run by ONNX Runtime from `runtime` when given (graphs kept in
    /// `cache`), else by candle.
    pub fn new(dir: &Path, runtime: Option<&Path>, cache: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
            runtime: runtime.map(Path::to_path_buf),
            cache: cache.to_path_buf(),
            held: Arc::default(),
            idle: None,
            query_packing: Packing::AtLoad,
        }
    }

    /// Lets the engines go after `idle` without a text to embed (never, by default: a
    /// short-lived process has no use for it).
    pub fn with_idle(mut self, idle: Duration) -> Self {
        self.idle = Some(idle);
        self
    }

    /// For a process that embeds a query or two and exits (`cairn search`): the queries'
    /// engine lays its weights out at each run rather than holding a laid-out copy, 7 MB
    /// less for 0.4 ms more a query.
    pub fn for_few_queries(mut self) -> Self {
        self.query_packing = Packing::PerRun;
        self
    }

    /// The model where `scripts/fetch-model.sh` and the first start put it, if its weights
    /// are there; ONNX Runtime's library is used when it is there too.
    pub fn installed() -> Option<Self> {
        let dir = default_embedder_dir()?;
        if !dir.join("model.safetensors").is_file() {
            return None;
        }
        let models = dir.parent()?.to_path_buf();
        let runtime = models.join(cairn_models::fetch::EMBED_RUNTIME_FILE);
        let runtime = (!cairn_models::fetch::EMBED_RUNTIME.is_empty() && runtime.is_file())
            .then_some(runtime);
        Some(Self::new(&dir, runtime.as_deref(), &models.join("cache")))
    }

    /// The folder of the model's files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The length of its vectors, from the model's configuration (nothing is loaded).
    pub fn dimensions(&self) -> Option<usize> {
        let config = crate::read(&self.dir, "config.json").ok()?;
        serde_json::from_slice::<crate::onnx::Config>(&config)
            .ok()
            .map(|config| config.hidden_size)
    }

    /// Whether an engine is loaded now.
    pub fn is_loaded(&self) -> bool {
        self.held.loaded().is_some()
    }

    /// Names the model and how it is run: vectors made another way are made again. Once
    /// an engine has loaded, the one that ran (int8 may miss the reference on this CPU,
    /// and f32 run instead, or candle when ONNX Runtime cannot run at all), also while it
    /// is let go; before, the one the kept graphs say will run.
    pub fn name(&self) -> String {
        let model = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let ran = *lock(&self.held.ran);
        let precision = match ran {
            Some(ran) => ran,
            None => self
                .runtime
                .as_deref()
                .map(|runtime| self.expected_precision(runtime)),
        };
        match precision {
            Some(p) => format!("{model} ({}, {})", p.label(), crate::runtime::ONNX_FORMAT),
            None => model,
        }
    }

    /// How the model runs here, once an engine is loaded: the runtime, the precision (and
    /// why f32 where int8 was tried), and the CPU the kernels were chosen for.
    pub fn engine(&self) -> String {
        let cpu = crate::cpu::Cpu::this();
        match self.held.loaded().as_deref() {
            Some(Engine::Ort(ort)) if ort.precision() == Precision::Int8 => {
                let products = if cpu.int8_dot_products() {
                    "with int8 dot products"
                } else {
                    "without int8 dot products (VNNI): slower, and a little further from f32"
                };
                format!("ONNX Runtime, int8 {products}; CPU: {cpu}")
            }
            Some(Engine::Ort(_)) => format!(
                "ONNX Runtime, f32 (int8 missed the reference vectors on this CPU); CPU: {cpu}"
            ),
            Some(Engine::Candle(_)) if self.runtime.is_some() => {
                format!("candle, f32 (ONNX Runtime cannot run it here); CPU: {cpu}")
            }
            Some(Engine::Candle(_)) => {
                format!("candle, f32 (ONNX Runtime is not installed); CPU: {cpu}")
            }
            None if lock(&self.held.ran).is_some() => {
                format!(
                    "let go while there was nothing to embed (loads again when needed); CPU: {cpu}"
                )
            }
            None => format!("not loaded yet; CPU: {cpu}"),
        }
    }

    /// The precision the engine will load at: int8, unless int8 missed the reference
    /// vectors on this CPU with this runtime (its verdict is kept), or only the f32 graph
    /// is kept (an int8 graph is kept only once it gave the reference's vectors, so where
    /// the f32 one alone is, int8 missed them on this machine).
    fn expected_precision(&self, runtime: &Path) -> Precision {
        let graph = |precision| crate::runtime::graph_path(&self.dir, &self.cache, precision);
        let kept = |precision| graph(precision).is_ok_and(|path| path.is_file());
        let missed_here = graph(Precision::Int8)
            .is_ok_and(|path| Verdict::of(&path, runtime).passed() == Some(false));
        if missed_here || (kept(Precision::F32) && !kept(Precision::Int8)) {
            Precision::F32
        } else {
            Precision::Int8
        }
    }

    /// One unit vector per text: the index's chunks, embedded at background priority
    /// (the calling thread's is lowered, for good: it is a background thread).
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        // Threads inherit their creator's priority: lowered here, before the engine starts
        // its threads (a pool, or a run's lanes), it holds for all of them, whichever
        // thread calls.
        lower_this_threads_priority();
        let engine = self.engine_of(&self.held.chunks, cores(), Packing::AtLoad)?;
        let vectors = engine.embed(texts);
        self.held.touch();
        vectors
    }

    /// The vector of a search's query, on an engine of its own at normal priority, on one
    /// thread: measured while chunks are embedded, one thread answers sooner than two
    /// (p50 2.9 ms against 3.4–5.2 ms), and alone only 0.2–0.4 ms later.
    pub fn embed_query(&self, text: &str) -> Result<Vec<f32>, String> {
        let engine = self.engine_of(&self.held.queries, 1, self.query_packing)?;
        let mut vectors = engine.embed(&[text])?;
        self.held.touch();
        vectors
            .pop()
            .ok_or_else(|| "the embedding model gave no vector".to_string())
    }

    /// The engine of `slot`, loaded on `threads` (its weights laid out as `packing` says)
    /// when it is not.
    fn engine_of(
        &self,
        slot: &Mutex<Slot>,
        threads: usize,
        packing: Packing,
    ) -> Result<Arc<Engine>, String> {
        let mut slot = lock(slot);
        self.held.touch();
        if let Some(engine) = &slot.engine {
            return Ok(engine.clone());
        }
        if let Some(failed) = &slot.failed {
            return Err(failed.clone());
        }
        match self.load(threads, packing) {
            Ok(engine) => {
                let engine = Arc::new(engine);
                *lock(&self.held.ran) = Some(match &*engine {
                    Engine::Ort(ort) => Some(ort.precision()),
                    Engine::Candle(_) => None,
                });
                slot.engine = Some(engine.clone());
                drop(slot);
                self.watch_idleness();
                Ok(engine)
            }
            Err(failed) => {
                slot.failed = Some(failed.clone());
                Err(failed)
            }
        }
    }

    /// Starts the thread that lets the engines go once they have been idle long enough,
    /// unless one runs. It holds them weakly: the model dropped, it ends.
    fn watch_idleness(&self) {
        let Some(idle) = self.idle else {
            return;
        };
        if std::mem::replace(&mut *lock(&self.held.watched), true) {
            return;
        }
        let held = Arc::downgrade(&self.held);
        let watch = move || loop {
            let Some(strong) = held.upgrade() else {
                return;
            };
            let since = lock(&strong.last_used).map_or(idle, |at| at.elapsed());
            if since >= idle && strong.unload() {
                *lock(&strong.watched) = false;
                return;
            }
            drop(strong);
            std::thread::sleep(idle.saturating_sub(since).max(idle / 20));
        };
        if let Err(error) = std::thread::Builder::new()
            .name("cairn-embed-idle".into())
            .spawn(watch)
        {
            tracing::debug!(%error, "the embedding model stays loaded");
            *lock(&self.held.watched) = false;
        }
    }

    fn load(&self, threads: usize, packing: Packing) -> Result<Engine, String> {
        if let Some(runtime) = &self.runtime {
            let mut problems = Vec::new();
            for precision in [Precision::Int8, Precision::F32] {
                let loaded = OrtEmbedder::load_packed(
                    &self.dir,
                    runtime,
                    &self.cache,
                    precision,
                    threads,
                    packing,
                );
                match loaded {
                    Ok(engine) => return Ok(Engine::Ort(Box::new(engine))),
                    Err(problem) => problems.push(problem),
                }
            }
            tracing::warn!(
                problems = %problems.join("; "),
                "ONNX Runtime cannot run the embedding model: candle runs it"
            );
        }
        let mut candle = lock(&self.held.candle);
        candle
            .get_or_insert_with(|| LocalEmbedder::load(&self.dir).map(Arc::new))
            .clone()
            .map(Engine::Candle)
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

    /// This process's threads: id, nice, and CPU time used (clock ticks).
    fn threads() -> Vec<(String, i32, u64)> {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .flatten()
            .filter_map(|task| {
                let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
                // Fields after the command's closing parenthesis: user and system time
                // are the 12th and 13th, nice the 17th.
                let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
                let fields: Vec<&str> = rest.split_whitespace().collect();
                let number = |i: usize| fields.get(i).and_then(|f| f.parse::<i64>().ok());
                let time = number(11)? + number(12)?;
                let id = task.file_name().to_string_lossy().into_owned();
                Some((id, number(16)? as i32, time as u64))
            })
            .collect()
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
        let candle = lock(&bundled.held.candle);
        let Some(Ok(model)) = candle.as_ref() else {
            panic!("candle was not loaded")
        };
        // Held by the two engines and the bundled model's own cell: one model.
        assert_eq!(Arc::strong_count(model), 3);
    }

    /// The installed model and ONNX Runtime's library.
    fn installed_with_runtime() -> (Bundled, PathBuf) {
        let Some(installed) = Bundled::installed() else {
            panic!("the bundled embedding model is not installed: run scripts/fetch-model.sh");
        };
        let runtime = installed.runtime.clone();
        (installed, runtime.expect("ONNX Runtime is installed"))
    }

    /// The name says which engine made the vectors: before loading, the one the kept
    /// graphs foretell (f32 where only the f32 graph is kept); once loaded, the one
    /// that runs.
    #[test]
    fn the_name_is_the_engine_that_runs() {
        let (installed, runtime) = installed_with_runtime();
        let cache = tempfile::tempdir().unwrap();
        let format = crate::runtime::ONNX_FORMAT;
        let fresh = Bundled::new(installed.dir(), Some(&runtime), cache.path());
        assert_eq!(fresh.name(), format!("all-MiniLM-L6-v2 (int8, {format})"));
        // Only the f32 graph kept, as where int8 missed the reference.
        let config: crate::onnx::Config =
            serde_json::from_slice(&std::fs::read(installed.dir().join("config.json")).unwrap())
                .unwrap();
        let weights = std::fs::read(installed.dir().join("model.safetensors")).unwrap();
        let f32_graph = crate::runtime::graph_path(installed.dir(), cache.path(), Precision::F32);
        std::fs::write(
            f32_graph.unwrap(),
            crate::onnx::bert(
                &config,
                &weights,
                Precision::F32,
                crate::onnx::Runtime::OnnxRuntime,
            )
            .unwrap(),
        )
        .unwrap();
        let foretold = Bundled::new(installed.dir(), Some(&runtime), cache.path());
        assert_eq!(foretold.name(), format!("all-MiniLM-L6-v2 (f32, {format})"));
        // On this CPU int8 gives the reference's vectors: it runs, and the name says so.
        foretold.embed(&["a note about the hotel"]).unwrap();
        assert_eq!(
            foretold.name(),
            format!("all-MiniLM-L6-v2 (int8, {format})")
        );
        let without = Bundled::new(installed.dir(), None, cache.path());
        assert_eq!(without.name(), "all-MiniLM-L6-v2");
    }

    /// Idle long enough, the engines are let go (their memory returns) under the same
    /// name, and the next text loads them again; an engine in use is never let go.
    #[test]
    fn an_idle_model_is_let_go_and_loads_again() {
        let (installed, runtime) = installed_with_runtime();
        let cache = tempfile::tempdir().unwrap();
        let idle = std::time::Duration::from_millis(300);
        let model = Bundled::new(installed.dir(), Some(&runtime), cache.path()).with_idle(idle);
        let before = model.embed_query("where are we staying").unwrap();
        model.embed(&["a note about the hotel"]).unwrap();
        let name = model.name();
        assert!(model.is_loaded());
        let held = model.held.loaded().unwrap();
        std::thread::sleep(idle * 3);
        assert!(model.is_loaded(), "let go while in use");
        drop(held);
        let waited = std::time::Instant::now();
        while model.is_loaded() && waited.elapsed() < idle * 20 {
            std::thread::sleep(idle / 10);
        }
        assert!(
            !model.is_loaded(),
            "still loaded after {:?}",
            waited.elapsed()
        );
        assert_eq!(model.name(), name);
        assert!(model.engine().starts_with("let go"), "{}", model.engine());
        let after = model.embed_query("where are we staying").unwrap();
        assert!(model.is_loaded());
        assert!(crate::cosine(&before, &after) > 0.9999);
    }

    /// On a CPU where the int8 graph misses the reference vectors, f32 embeds and the name
    /// says so, and it is remembered: the next start names f32 before loading, though an
    /// int8 graph kept where it passed is there, so the index asks for the vectors of
    /// what will run. Back on a CPU where int8 passes, int8 runs and is named again.
    #[test]
    fn where_int8_misses_the_reference_f32_embeds_under_its_own_name() {
        let (installed, runtime) = installed_with_runtime();
        let cache = tempfile::tempdir().unwrap();
        let named = |precision: &str| {
            let format = crate::runtime::ONNX_FORMAT;
            format!("all-MiniLM-L6-v2 ({precision}, {format})")
        };
        let start = || Bundled::new(installed.dir(), Some(&runtime), cache.path());
        let passing = start();
        passing.embed(&["a note about the hotel"]).unwrap();
        assert_eq!(passing.name(), named("int8"));
        // This thread plays a CPU on which int8 misses.
        crate::engine::testing::INT8_MINIMUM.set(Some(1.5));
        let missing = start();
        missing.embed(&["a note about the hotel"]).unwrap();
        assert_eq!(missing.name(), named("f32"));
        assert!(
            missing.engine().starts_with("ONNX Runtime, f32"),
            "{}",
            missing.engine()
        );
        let next = start();
        assert_eq!(next.name(), named("f32"));
        next.embed_query("where are we staying").unwrap();
        assert_eq!(next.name(), named("f32"));
        crate::engine::testing::INT8_MINIMUM.set(None);
        let back = start();
        back.embed(&["a note about the hotel"]).unwrap();
        assert_eq!(back.name(), named("int8"));
        assert_eq!(start().name(), named("int8"));
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
        // Watched while a batch of chunks is embedded: the engine's threads (the lanes a
        // run is shared out to, or its pool) run at the caller's lowered priority.
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let finished = done.clone();
        let embedding = std::thread::spawn(move || {
            let text = "a note about the hotel in Lisbon, where we stay in May. ".repeat(20);
            let texts = vec![text.as_str(); 32];
            let vectors = bundled.embed(&texts).unwrap();
            finished.store(true, std::sync::atomic::Ordering::SeqCst);
            (nice(), vectors)
        });
        // Each thread's nice and CPU time, first and last seen: the lanes come and go.
        let mut seen: std::collections::HashMap<String, (i32, u64, u64)> = threads()
            .into_iter()
            .map(|(id, nice, time)| (id, (nice, time, time)))
            .collect();
        let background_nice = BACKGROUND_NICE.max(before);
        let mut background = 0;
        while !done.load(std::sync::atomic::Ordering::SeqCst) {
            let now = threads();
            background = background.max(now.iter().filter(|t| t.1 == background_nice).count());
            for (id, nice, time) in now {
                let entry = seen.entry(id).or_insert((nice, 0, 0));
                (entry.0, entry.2) = (nice, time);
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        // The work was done at background priority, whichever threads did it (an engine's
        // own pool included); this thread only watched.
        seen.remove(&rustix::thread::gettid().as_raw_nonzero().to_string());
        let used = |wanted: &dyn Fn(i32) -> bool| -> u64 {
            seen.values()
                .filter(|(nice, ..)| wanted(*nice))
                .map(|(_, first, last)| last - first)
                .sum()
        };
        let (low, normal) = (
            used(&|n| n == background_nice),
            used(&|n| n != background_nice),
        );
        assert!(
            low > 0 && normal * 5 <= low,
            "CPU time at background priority {low} ticks, at other priorities {normal}"
        );
        let (priority, vectors) = embedding.join().unwrap();
        assert_eq!(priority, BACKGROUND_NICE.max(before));
        assert_eq!(vectors.len(), 32);
        // The caller and, beside it on more than one core, a lane per core.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let lanes = if cores > 1 {
            cores.min(crate::engine::MAX_LANES)
        } else {
            0
        };
        assert!(
            background > lanes,
            "{background} threads at background priority"
        );
    }
}
