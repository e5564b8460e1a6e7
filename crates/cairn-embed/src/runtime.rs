//! The embedding model run by ONNX Runtime, loaded at run time from the shared library
//! fetched with the models (`libonnxruntime.so` from the PyPI `onnxruntime` wheel): no
//! native build, and the runtime picks the CPU's fastest kernels (AVX2, AVX-512, VNNI) as
//! it starts. The graph is the one `onnx.rs` writes from the fetched weights, kept in a
//! cache; it is checked against the reference vectors each time it is loaded, and kept
//! only when it passes.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError, Weak};

use ort::environment::Environment;
use ort::session::builder::{GraphOptimizationLevel, PrepackedWeights};
use ort::session::Session;
use ort::value::Tensor;
use tokenizers::Tokenizer;

use crate::onnx::{self, Precision, WordTable};
use crate::{keep, read, reference_check, source_key};

/// Texts one run takes at most.
const BATCH_TEXTS: usize = 16;
/// Tokens one run takes at most, padding included (one full chunk): the runtime keeps
/// the memory of its largest run, and attention's grows with the run's texts times their
/// length squared. Measured on 256-token chunks in two lanes, runs of one chunk embed
/// 61 chunks/s where runs of two embed 44–60, with less memory.
const BATCH_TOKENS: usize = 256;
/// The graph's form: part of the kept graph's key and of the model's name, so a new form
/// builds a new graph and the index embeds everything again.
pub const ONNX_FORMAT: &str = "cairn-onnx-4";

/// How many threads are inside ONNX Runtime, and whether the process is closing.
static INSIDE: (Mutex<(usize, bool)>, Condvar) = (Mutex::new((0, false)), Condvar::new());

/// A thread inside ONNX Runtime, until it is dropped.
struct Inside;

impl Inside {
    fn enter() -> Result<Self, String> {
        let mut inside = INSIDE.0.lock().unwrap_or_else(PoisonError::into_inner);
        if inside.1 {
            return Err("the process is closing".into());
        }
        inside.0 += 1;
        Ok(Self)
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        let mut inside = INSIDE.0.lock().unwrap_or_else(PoisonError::into_inner);
        inside.0 -= 1;
        INSIDE.1.notify_all();
    }
}

/// Lets no thread into ONNX Runtime any more and waits (`timeout` at most) until none is
/// inside; says whether none is. A process calls it before it exits: the runtime's globals
/// are torn down at exit, and a thread still loading or running a graph would crash the
/// process under them. A run takes milliseconds (512 tokens at most).
pub fn settle(timeout: std::time::Duration) -> bool {
    let mut inside = INSIDE.0.lock().unwrap_or_else(PoisonError::into_inner);
    inside.1 = true;
    let (inside, _) = INSIDE
        .1
        .wait_timeout_while(inside, timeout, |inside| inside.0 > 0)
        .unwrap_or_else(PoisonError::into_inner);
    inside.0 == 0
}

/// The runtime library, loaded once per process: the first path given is the one used.
static RUNTIME: OnceLock<Result<Environment, String>> = OnceLock::new();

/// Loads ONNX Runtime from `library` (once; later calls answer as the first did).
pub fn init_runtime(library: &Path) -> Result<Environment, String> {
    RUNTIME
        .get_or_init(|| {
            if !library.is_file() {
                return Err(format!(
                    "the ONNX Runtime library is not installed ({})",
                    library.display()
                ));
            }
            let _inside = Inside::enter()?;
            let builder = ort::init_from(library)
                .map_err(|e| format!("cannot load {}: {e}", library.display()))?;
            builder
                .with_name("cairn")
                .with_telemetry(false)
                .build()
                .map_err(|e| format!("cannot start ONNX Runtime: {e}"))
        })
        .clone()
}

/// Sessions of one graph that run side by side at most. Each lane is a session computing
/// on one thread (or `threads / lanes` past this many): on 256-token chunks, two sessions
/// of one thread each embed 63–70 chunks/s on two cores where one session of two threads
/// embeds 52–59, the threads of one run waiting on each other at every step. The
/// sessions share their laid-out weights ([`PREPACKED`]).
pub(crate) const MAX_LANES: usize = 4;

/// The bundled model run by ONNX Runtime.
pub struct OrtEmbedder {
    lanes: Vec<Mutex<Session>>,
    words: Arc<WordTable>,
    precision: Precision,
    tokenizer: Tokenizer,
    dimensions: usize,
}

impl OrtEmbedder {
    /// Loads the model of `dir` on the runtime `library`, computing with `threads` threads
    /// in all (in lanes: [`MAX_LANES`]). The graph comes from `cache`, or is written there
    /// once it passes the reference.
    pub fn load(
        dir: &Path,
        library: &Path,
        cache: &Path,
        precision: Precision,
        threads: usize,
    ) -> Result<Self, String> {
        let runtime = init_runtime(library)?;
        let tokenizer = crate::tokenizer(dir)?;
        let config: onnx::Config =
            serde_json::from_slice(&read(dir, "config.json")?).map_err(|e| e.to_string())?;
        let path = graph_path(dir, cache, precision)?;
        let kept = path.is_file();
        // The weights are read once at most: for the graph when it is not kept, and for
        // the word table when no engine of this process holds it.
        let mut weights = None;
        let bytes = if kept {
            std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?
        } else {
            let source = read(dir, "model.safetensors")?;
            let graph = onnx::bert(&config, &source, precision)?;
            weights = Some(source);
            graph
        };
        let words = word_table(&path, precision, || {
            weights.map_or_else(|| read(dir, "model.safetensors"), Ok)
        })?;
        let threads = threads.max(1);
        let lanes = threads.min(MAX_LANES);
        let made = Self {
            lanes: (0..lanes)
                .map(|_| session(&runtime, &bytes, threads / lanes).map(Mutex::new))
                .collect::<Result<_, _>>()?,
            precision,
            words,
            tokenizer,
            dimensions: config.hidden_size,
        };
        // Checked at every load, not only when written: the same graph runs on other
        // kernels on another CPU (a home folder shared between machines), and int8 products
        // without VNNI can lose precision.
        reference_check(|texts| made.embed(texts), minimum(precision))?;
        if !kept {
            keep(cache, &path, &bytes)?;
        }
        Ok(made)
    }

    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// How the graph it runs computes.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// One unit vector per text, in order. Texts of like length share a run, so padding
    /// costs little; the runs are shared out between the lanes, on threads that start
    /// at the caller's priority.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = crate::token_ids(&self.tokenizer, texts)?;
        let lengths: Vec<usize> = encodings.iter().map(Vec::len).collect();
        let runs = runs(&lengths, texts.len().div_ceil(self.lanes.len()));
        let out = Mutex::new(vec![Vec::new(); texts.len()]);
        let next = AtomicUsize::new(0);
        // Each lane takes the next run left until none is.
        let lane = |session: &Mutex<Session>| -> Result<(), String> {
            let mut session = session.lock().unwrap_or_else(PoisonError::into_inner);
            while let Some(run) = runs.get(next.fetch_add(1, Ordering::Relaxed)) {
                let vectors = self.run(&mut session, run, &encodings)?;
                let mut out = out.lock().unwrap_or_else(PoisonError::into_inner);
                for (&i, vector) in run.iter().zip(vectors.chunks_exact(self.dimensions)) {
                    out[i] = vector.to_vec();
                }
            }
            Ok(())
        };
        let busy = self.lanes.len().min(runs.len());
        if busy <= 1 {
            lane(&self.lanes[0])?;
        } else {
            std::thread::scope(|scope| {
                let lanes: Vec<_> = self.lanes[..busy]
                    .iter()
                    .map(|session| scope.spawn(|| lane(session)))
                    .collect();
                lanes.into_iter().try_for_each(|lane| {
                    lane.join()
                        .unwrap_or_else(|_| Err("an embedding lane failed".into()))
                })
            })?;
        }
        Ok(out.into_inner().unwrap_or_else(PoisonError::into_inner))
    }

    /// The vectors of the texts `run` picks out of `encodings`, one after another.
    fn run(
        &self,
        session: &mut Session,
        run: &[usize],
        encodings: &[Vec<u32>],
    ) -> Result<Vec<f32>, String> {
        let width = run
            .iter()
            .map(|&i| encodings[i].len())
            .max()
            .unwrap_or(0)
            .max(1);
        let hidden = self.words.hidden();
        let mut words = Vec::with_capacity(run.len() * width * hidden);
        let mut mask = Vec::with_capacity(run.len() * width);
        for &i in run {
            for col in 0..width {
                // Padding takes the row of token 0, `[PAD]`; attention and pooling skip it.
                let id = encodings[i].get(col).copied();
                self.words.push_row(id.unwrap_or(0), &mut words)?;
                mask.push(i64::from(id.is_some()));
            }
        }
        let _inside = Inside::enter()?;
        let words =
            Tensor::from_array(([run.len(), width, hidden], words)).map_err(|e| e.to_string())?;
        let mask = Tensor::from_array(([run.len(), width], mask)).map_err(|e| e.to_string())?;
        let outputs = session
            .run(ort::inputs!["words" => words, "attention_mask" => mask])
            .map_err(|e| format!("embedding failed: {e}"))?;
        let (_, vectors) = outputs["sentence_embedding"]
            .try_extract_tensor::<f32>()
            .map_err(|e| e.to_string())?;
        Ok(vectors.to_vec())
    }
}

/// The texts (by index) of each run: by length, so texts of like length share a run and
/// padding costs little, at most `most` texts (and [`BATCH_TEXTS`]) and [`BATCH_TOKENS`]
/// tokens padded (a text longer than that runs alone).
fn runs(lengths: &[usize], most: usize) -> Vec<Vec<usize>> {
    let most = most.clamp(1, BATCH_TEXTS);
    let mut order: Vec<usize> = (0..lengths.len()).collect();
    order.sort_by_key(|&i| lengths[i]);
    let mut runs: Vec<Vec<usize>> = Vec::new();
    for i in order {
        match runs.last_mut() {
            // Sorted by length, so this text is the run's longest.
            Some(run) if run.len() < most && (run.len() + 1) * lengths[i] <= BATCH_TOKENS => {
                run.push(i)
            }
            _ => runs.push(vec![i]),
        }
    }
    runs
}

/// The lowest cosine to a reference vector a graph must reach to be kept.
fn minimum(precision: Precision) -> f32 {
    match precision {
        Precision::F32 => 0.9999,
        Precision::Int8 => 0.99,
    }
}

/// The word tables of the graphs loaded, by the graph's path, while an engine holds one:
/// the lanes and the query engine share a table.
static WORD_TABLES: Mutex<Vec<(PathBuf, Weak<WordTable>)>> = Mutex::new(Vec::new());

/// The word table of the graph at `path`, made from the safetensors `weights` give when
/// no engine of this process holds it.
fn word_table(
    path: &Path,
    precision: Precision,
    weights: impl FnOnce() -> Result<Vec<u8>, String>,
) -> Result<Arc<WordTable>, String> {
    let mut tables = WORD_TABLES.lock().unwrap_or_else(PoisonError::into_inner);
    tables.retain(|(_, table)| table.strong_count() > 0);
    if let Some(table) = tables
        .iter()
        .find(|(held, _)| held == path)
        .and_then(|(_, table)| table.upgrade())
    {
        return Ok(table);
    }
    let table = Arc::new(WordTable::new(&weights()?, precision)?);
    tables.push((path.to_path_buf(), Arc::downgrade(&table)));
    Ok(table)
}

/// The weights the runtime lays out for its kernels, shared by every session of the same
/// graph in the process (the chunks' engine and the queries' hold one copy between them).
static PREPACKED: OnceLock<PrepackedWeights> = OnceLock::new();

fn session(runtime: &Environment, bytes: &[u8], threads: usize) -> Result<Session, String> {
    let _inside = Inside::enter()?;
    let build = || -> ort::Result<Session> {
        Session::builder(runtime)?
            .with_prepacked_weights(PREPACKED.get_or_init(PrepackedWeights::new))?
            .with_optimization_level(GraphOptimizationLevel::Level3)?
            .with_intra_threads(threads.max(1))?
            .with_inter_threads(1)?
            .with_intra_op_spinning(false)?
            .commit_from_memory(bytes)
    };
    build().map_err(|e| format!("ONNX Runtime cannot load the embedding model: {e}"))
}

/// Where the graph for the source files of `dir` at `precision` is kept.
pub fn graph_path(dir: &Path, cache: &Path, precision: Precision) -> Result<PathBuf, String> {
    let kind = precision.label();
    let key = source_key(dir, &[ONNX_FORMAT, kind])?;
    Ok(cache.join(format!("all-MiniLM-L6-v2-{kind}-{}.onnx", &key[..16])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{cosine, reference};

    #[test]
    fn runs_group_texts_of_like_length_within_the_token_budget() {
        // Short texts share a run, up to the count limit.
        let short = runs(&[10; 20], 20);
        assert_eq!(short.iter().map(Vec::len).collect::<Vec<_>>(), [16, 4]);
        // Shared out between two lanes: no run takes more than its half.
        let halves = runs(&[10; 20], 10);
        assert_eq!(halves.iter().map(Vec::len).collect::<Vec<_>>(), [10, 10]);
        // Full chunks: one per run; a text past the budget runs alone; every text once.
        let lengths = [256, 12, 128, 700, 128, 11];
        let grouped = runs(&lengths, 16);
        assert_eq!(grouped, vec![vec![5, 1], vec![2, 4], vec![0], vec![3]]);
        for run in &grouped {
            let width = run.iter().map(|&i| lengths[i]).max().unwrap();
            assert!(run.len() == 1 || run.len() * width <= BATCH_TOKENS);
        }
    }

    fn bundled_dir() -> PathBuf {
        crate::candle::default_embedder_dir().unwrap_or_default()
    }

    fn library() -> PathBuf {
        crate::candle::default_embedder_dir()
            .and_then(|dir| {
                dir.parent()
                    .map(|m| m.join(cairn_llm::fetch::EMBED_RUNTIME_FILE))
            })
            .unwrap_or_default()
    }

    /// The written graph gives the reference's vectors: f32 all but exactly, int8 within
    /// quantisation's error (0.996: with every product's input quantised per tensor the
    /// lowest is 0.9917, with the feed-forward products per token 0.9968); alone (attention
    /// unmasked) and batched with texts of other lengths (masked). The graph is
    /// kept, with the same bytes each time, and read back rather than written again.
    #[test]
    fn onnx_runtime_on_the_written_graph_matches_the_reference_vectors() {
        let cases = reference().unwrap();
        let texts: Vec<&str> = cases.iter().map(|(t, _)| t.as_str()).collect();
        let cache = tempfile::tempdir().unwrap();
        for (precision, floor) in [(Precision::F32, 0.9999), (Precision::Int8, 0.996)] {
            let embedder =
                OrtEmbedder::load(&bundled_dir(), &library(), cache.path(), precision, 2)
                    .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(embedder.dimensions(), 384);
            let batch = embedder.embed(&texts).unwrap();
            for (n, (text, want)) in cases.iter().enumerate() {
                let alone = embedder.embed(&[text.as_str()]).unwrap();
                for got in [&batch[n], &alone[0]] {
                    let length: f32 = got.iter().map(|x| x * x).sum::<f32>().sqrt();
                    assert!((length - 1.0).abs() < 1e-4, "length {length}");
                    let similarity = cosine(got, want);
                    assert!(
                        similarity > floor,
                        "{text:?} ({precision:?}): cosine {similarity}"
                    );
                }
            }
            let kept = graph_path(&bundled_dir(), cache.path(), precision).unwrap();
            let bytes = std::fs::read(&kept).unwrap();
            let weights = std::fs::read(bundled_dir().join("model.safetensors")).unwrap();
            let config: onnx::Config =
                serde_json::from_slice(&std::fs::read(bundled_dir().join("config.json")).unwrap())
                    .unwrap();
            assert_eq!(onnx::bert(&config, &weights, precision).unwrap(), bytes);
            let modified = std::fs::metadata(&kept).unwrap().modified().unwrap();
            let one =
                OrtEmbedder::load(&bundled_dir(), &library(), cache.path(), precision, 1).unwrap();
            // One lane: texts of one length share a run with no padding, the attention
            // without a mask, and each comes out as it does alone.
            let text = texts[0];
            let pair = one.embed(&[text, text]).unwrap();
            let alone = one.embed(&[text]).unwrap();
            for got in &pair {
                assert!(cosine(got, &alone[0]) > 0.99999, "{precision:?}");
            }
            assert_eq!(
                std::fs::metadata(&kept).unwrap().modified().unwrap(),
                modified
            );
        }
    }

    /// Weights that do not give the reference's vectors (a damaged or different file
    /// under the model's name) make no engine and leave no graph behind; a kept graph that
    /// does not give them is refused too.
    #[test]
    fn a_graph_that_misses_the_reference_is_refused_and_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["config.json", "tokenizer.json"] {
            std::fs::copy(bundled_dir().join(name), dir.path().join(name)).unwrap();
        }
        let mut weights = std::fs::read(bundled_dir().join("model.safetensors")).unwrap();
        let tensors = safetensors::SafeTensors::deserialize(&weights).unwrap();
        let view = tensors
            .tensor("encoder.layer.3.output.dense.weight")
            .unwrap();
        let start = view.data().as_ptr() as usize - weights.as_ptr() as usize;
        let end = start + view.data().len();
        for b in &mut weights[start..end][..4096] {
            *b ^= 0x40;
        }
        std::fs::write(dir.path().join("model.safetensors"), &weights).unwrap();
        let cache = tempfile::tempdir().unwrap();
        let error = OrtEmbedder::load(dir.path(), &library(), cache.path(), Precision::F32, 1)
            .err()
            .unwrap();
        assert!(error.contains("from the reference"), "{error}");
        assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
        // A kept graph is checked each time it is loaded, not trusted for its name.
        let config: onnx::Config =
            serde_json::from_slice(&std::fs::read(dir.path().join("config.json")).unwrap())
                .unwrap();
        let wrong = onnx::bert(&config, &weights, Precision::F32).unwrap();
        let kept = graph_path(&bundled_dir(), cache.path(), Precision::F32).unwrap();
        std::fs::write(&kept, wrong).unwrap();
        let error = OrtEmbedder::load(&bundled_dir(), &library(), cache.path(), Precision::F32, 1)
            .err()
            .unwrap();
        assert!(error.contains("from the reference"), "{error}");
    }

    /// Without the runtime library, loading says which file is missing.
    #[test]
    fn a_missing_runtime_library_is_an_error_naming_it() {
        let missing = Path::new("/nonexistent/libonnxruntime.so.1.31.1");
        let cache = tempfile::tempdir().unwrap();
        let error = OrtEmbedder::load(&bundled_dir(), missing, cache.path(), Precision::Int8, 1)
            .err()
            .unwrap();
        assert!(
            error.contains("/nonexistent/libonnxruntime.so.1.31.1"),
            "{error}"
        );
    }
}
