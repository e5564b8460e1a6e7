//! The embedding model run by ONNX Runtime, loaded at run time from the shared library
//! fetched with the models (`libonnxruntime.so` from the PyPI `onnxruntime` wheel): no
//! native build, and the runtime picks the CPU's fastest kernels (AVX2, AVX-512, VNNI) as
//! it starts. The graph is the one `onnx.rs` writes from the fetched weights, kept in a
//! cache; it is checked against the reference vectors each time it is loaded, and kept
//! only when it passes.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use ort::environment::Environment;
use ort::session::builder::{GraphOptimizationLevel, PrepackedWeights};
use ort::session::Session;
use ort::value::Tensor;

use crate::engine::{Feed, GraphSource, Inside, Lanes, Written, MAX_LANES};
use crate::onnx::{Precision, Runtime};
use crate::source_key;

/// The graph's form: part of the kept graph's key and of the model's name, so a new form
/// builds a new graph and the index embeds everything again.
pub const ONNX_FORMAT: &str = "cairn-onnx-4";

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

/// The bundled model run by ONNX Runtime.
pub struct OrtEmbedder {
    lanes: Lanes<Session>,
    precision: Precision,
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
        Self::load_packed(dir, library, cache, precision, threads, Packing::AtLoad)
    }

    /// As [`OrtEmbedder::load`], with the weights laid out as `packing` says.
    pub fn load_packed(
        dir: &Path,
        library: &Path,
        cache: &Path,
        precision: Precision,
        threads: usize,
        packing: Packing,
    ) -> Result<Self, String> {
        let runtime = init_runtime(library)?;
        let path = graph_path(dir, cache, precision)?;
        let (graph, parts) = Written::load(dir, path, precision, Runtime::OnnxRuntime)?;
        let threads = threads.max(1);
        let lanes = threads.min(MAX_LANES);
        let sessions = (0..lanes)
            .map(|_| session(&runtime, graph.source(), threads / lanes, packing))
            .collect::<Result<_, _>>()?;
        let made = Self {
            lanes: parts.with(sessions),
            precision,
        };
        graph.accept(cache, library, |texts| made.embed(texts))?;
        Ok(made)
    }

    pub fn dimensions(&self) -> usize {
        self.lanes.dimensions
    }

    /// How the graph it runs computes.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// One unit vector per text, in order (see [`Lanes::embed`]).
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        self.lanes.embed(texts, run)
    }
}

/// The vectors of one run's texts, one after another.
fn run(session: &mut Session, feed: Feed) -> Result<Vec<f32>, String> {
    let words = Tensor::from_array(([feed.texts, feed.width, feed.hidden], feed.words))
        .map_err(|e| e.to_string())?;
    let mask =
        Tensor::from_array(([feed.texts, feed.width], feed.mask)).map_err(|e| e.to_string())?;
    let outputs = session
        .run(ort::inputs!["words" => words, "attention_mask" => mask])
        .map_err(|e| format!("embedding failed: {e}"))?;
    let (_, vectors) = outputs["sentence_embedding"]
        .try_extract_tensor::<f32>()
        .map_err(|e| e.to_string())?;
    Ok(vectors.to_vec())
}

/// The weights the runtime lays out for its kernels, shared by every session of the same
/// graph in the process (the chunks' engine and the queries' hold one copy between them).
static PREPACKED: Mutex<Option<PrepackedWeights>> = Mutex::new(None);

fn shared_weights() -> PrepackedWeights {
    PREPACKED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(PrepackedWeights::new)
        .clone()
}

/// Lets go of the shared weights once no engine holds them (the next session lays them
/// out again).
pub(crate) fn release_shared_weights() {
    PREPACKED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
}

/// When a session lays the weights out the way the runtime's kernels read them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packing {
    /// Once, as it loads (prepacking), shared by every session of the graph in the
    /// process: each run is quicker (a one-line query 0.8 ms against 1.2 here), and the
    /// laid-out copy, about 7 MB, is held beside the weights.
    AtLoad,
    /// At each run: for a process that embeds a query or two and exits.
    PerRun,
}

fn session(
    runtime: &Environment,
    graph: GraphSource<'_>,
    threads: usize,
    packing: Packing,
) -> Result<Session, String> {
    let _inside = Inside::enter()?;
    let build = || -> ort::Result<Session> {
        let builder = Session::builder(runtime)?
            .with_optimization_level(GraphOptimizationLevel::Level3)?
            .with_intra_threads(threads.max(1))?
            .with_inter_threads(1)?
            .with_intra_op_spinning(false)?;
        let mut builder = match packing {
            Packing::AtLoad => builder.with_prepacked_weights(&shared_weights())?,
            Packing::PerRun => builder.with_prepacking(false)?,
        };
        match graph {
            GraphSource::Bytes(bytes) => builder.commit_from_memory(bytes),
            GraphSource::File(path) => builder.commit_from_file(path),
        }
    };
    build().map_err(|e| format!("ONNX Runtime cannot load the embedding model: {e}"))
}

/// Where the graph for the source files of `dir` at `precision` is kept.
pub fn graph_path(dir: &Path, cache: &Path, precision: Precision) -> Result<PathBuf, String> {
    let kind = precision.label();
    let key = source_key(dir, cache, &[ONNX_FORMAT, kind])?;
    Ok(cache.join(format!("all-MiniLM-L6-v2-{kind}-{}.onnx", &key[..16])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::testing::*;
    use crate::onnx;

    fn library() -> PathBuf {
        models_file(cairn_models::fetch::EMBED_RUNTIME_FILE)
    }

    /// The written graph gives the reference's vectors: f32 all but exactly, int8 within
    /// quantisation's error (with int8 dot products 0.996: with every product's input
    /// quantised per tensor the lowest is 0.9917, with the feed-forward products per token
    /// 0.9968; without them the product's minimum, 0.99, as measured 0.993); alone (attention
    /// unmasked) and batched with texts of other lengths (masked); in two lanes and in one
    /// (with the weights laid out at each run),
    /// where texts of one length share a run with no padding. The graph is kept, with the
    /// same bytes each time, and read back rather than written again.
    #[test]
    fn onnx_runtime_on_the_written_graph_matches_the_reference_vectors() {
        let cache = tempfile::tempdir().unwrap();
        let (int8, why) = int8_floor();
        let floors = [
            (Precision::F32, 0.9999, "f32".to_string()),
            (Precision::Int8, int8, why),
        ];
        for (precision, floor, why) in floors {
            let embedder =
                OrtEmbedder::load(&bundled_dir(), &library(), cache.path(), precision, 2)
                    .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(embedder.dimensions(), 384);
            let what = format!("{precision:?}, {why}");
            assert_matches_reference(|texts| embedder.embed(texts), floor, &what);
            let kept = graph_path(&bundled_dir(), cache.path(), precision).unwrap();
            let bytes = std::fs::read(&kept).unwrap();
            let weights = std::fs::read(bundled_dir().join("model.safetensors")).unwrap();
            let written = onnx::bert(&config(), &weights, precision, Runtime::OnnxRuntime);
            assert_eq!(written.unwrap(), bytes);
            let modified = std::fs::metadata(&kept).unwrap().modified().unwrap();
            // One thread, the weights laid out at each run (as `cairn search` runs it):
            // the same vectors.
            let one = OrtEmbedder::load_packed(
                &bundled_dir(),
                &library(),
                cache.path(),
                precision,
                1,
                Packing::PerRun,
            )
            .unwrap();
            assert_matches_reference(|texts| one.embed(texts), floor, &what);
            let text = ["the blue watering can is in the shed"];
            let (a, b) = (
                &embedder.embed(&text).unwrap()[0],
                &one.embed(&text).unwrap()[0],
            );
            let cosine: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
            assert!(cosine > 0.9999, "{what}: packed and not {cosine}");
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
        let weights = damaged_weights();
        std::fs::write(dir.path().join("model.safetensors"), &weights).unwrap();
        let cache = tempfile::tempdir().unwrap();
        let error = OrtEmbedder::load(dir.path(), &library(), cache.path(), Precision::F32, 1)
            .err()
            .unwrap();
        assert!(error.contains("from the reference"), "{error}");
        let graphs = std::fs::read_dir(cache.path())
            .unwrap()
            .flatten()
            .filter(|entry| entry.path().extension().is_some_and(|e| e == "onnx"))
            .count();
        assert_eq!(graphs, 0);
        // A kept graph is checked each time it is loaded, not trusted for its name.
        let wrong = onnx::bert(&config(), &weights, Precision::F32, Runtime::OnnxRuntime);
        let kept = graph_path(&bundled_dir(), cache.path(), Precision::F32).unwrap();
        std::fs::write(&kept, wrong.unwrap()).unwrap();
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
