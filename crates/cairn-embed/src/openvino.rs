//! The embedding model run by OpenVINO, for `cairn-bench embed` to compare with ONNX
//! Runtime (the app's engine). Loaded at run time from the shared libraries `make test`
//! fetches from the PyPI `openvino` wheel: no native build. The graph is the one
//! `onnx.rs` writes for it from the fetched weights: int8 weights, one scale per output
//! column, in standard operators. OpenVINO keeps those weights int8 and quantises each
//! product's input as it runs, one scale per group of `hidden` inputs (every token's row,
//! or a quarter of it in the wide feed-forward product), so products run on the CPU's
//! int8 dot products; it fuses attention into one kernel, and computes the rest in bf16
//! where the CPU has it. On 256-token chunks it embeds 8–20% more a second than ONNX
//! Runtime on two cores and comes closer to the f32 vectors, but holds about 95 MiB more
//! memory as the index uses it (ARCHITECTURE.md). The graph is checked against the
//! reference vectors each time it is loaded, and kept only when it passes.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use openvino::{
    CompiledModel, Core, DeviceType, ElementType, InferRequest, PropertyKey, RwPropertyKey, Shape,
    Tensor,
};

use crate::engine::{Feed, Inside, Lanes, Written, MAX_LANES};
use crate::onnx::{Precision, Runtime};
use crate::source_key;

/// Where OpenVINO's C library is, under the models folder, when `scripts/fetch-model.sh
/// --compared` (run by `make test`) put it there, with the libraries it loads beside it.
pub const LIBRARY: &str = "openvino/libopenvino_c.so.2641";

/// The graph's form: part of the kept graph's key, so a new form builds a new graph.
pub const OPENVINO_FORMAT: &str = "cairn-openvino-1";

/// OpenVINO, loaded once per process: the first path given is the one used. One core
/// serves every engine (each core loads the CPU plugin again); compiling is done under
/// its lock, as the properties it sets apply to the next model compiled.
static OPENVINO: OnceLock<Result<Mutex<Core>, String>> = OnceLock::new();

fn init(library: &Path) -> Result<&'static Mutex<Core>, String> {
    if !library.is_file() {
        return Err(format!(
            "the OpenVINO library is not installed ({})",
            library.display()
        ));
    }
    OPENVINO
        .get_or_init(|| {
            let _inside = Inside::enter()?;
            openvino_sys::library::load_from(library)
                .map_err(|e| format!("cannot load {}: {e}", library.display()))?;
            Core::new()
                .map(Mutex::new)
                .map_err(|e| format!("cannot start OpenVINO: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The bundled model run by OpenVINO.
pub struct OvEmbedder {
    lanes: Lanes<InferRequest>,
    /// Held while its requests run (a compiled model is not shared between threads).
    _model: Mutex<CompiledModel>,
}

impl OvEmbedder {
    /// Loads the model of `dir` on OpenVINO's C library `library`, computing with
    /// `threads` threads in all, one stream (a run at a time) per lane ([`MAX_LANES`]).
    /// The streams' threads are started here and keep the priority of the thread that
    /// loads. The graph comes from `cache`, or is written there once it passes the
    /// reference.
    pub fn load(dir: &Path, library: &Path, cache: &Path, threads: usize) -> Result<Self, String> {
        let core = init(library)?;
        let path = graph_path(dir, cache)?;
        let (graph, parts) = Written::load(dir, path, Precision::Int8, Runtime::OpenVino)?;
        let threads = threads.max(1);
        let lanes = threads.min(MAX_LANES);
        let mut model = {
            let _inside = Inside::enter()?;
            let mut core = core.lock().unwrap_or_else(PoisonError::into_inner);
            compile(&mut core, &graph, (lanes, threads))
                .map_err(|e| format!("OpenVINO cannot load the embedding model: {e}"))?
        };
        let requests = (0..lanes)
            .map(|_| model.create_infer_request())
            .collect::<Result<_, _>>()
            .map_err(|e| format!("OpenVINO cannot run the embedding model: {e}"))?;
        let made = Self {
            lanes: parts.with(requests),
            _model: Mutex::new(model),
        };
        graph.accept(cache, library, |texts| made.embed(texts))?;
        Ok(made)
    }

    pub fn dimensions(&self) -> usize {
        self.lanes.dimensions
    }

    /// One unit vector per text, in order (see [`Lanes::embed`]).
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        self.lanes.embed(texts, run)
    }
}

/// The vectors of one run's texts, one after another.
fn run(request: &mut InferRequest, feed: Feed) -> Result<Vec<f32>, String> {
    let failed = |e: openvino::InferenceError| format!("embedding failed: {e}");
    let (texts, width, hidden) = (feed.texts as i64, feed.width as i64, feed.hidden as i64);
    let words = tensor(
        ElementType::F32,
        &[texts, width, hidden],
        &feed.words,
        f32::to_le_bytes,
    )
    .map_err(failed)?;
    let mask = tensor(
        ElementType::I64,
        &[texts, width],
        &feed.mask,
        i64::to_le_bytes,
    )
    .map_err(failed)?;
    request.set_tensor("words", &words).map_err(failed)?;
    request
        .set_tensor("attention_mask", &mask)
        .map_err(failed)?;
    request.infer().map_err(failed)?;
    let out = request.get_tensor("sentence_embedding").map_err(failed)?;
    let raw = out.get_raw_data().map_err(failed)?;
    Ok(raw
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// Compiles the graph for the CPU with `streams` runs at a time on `threads` threads in
/// all; products quantise their inputs in groups of the hidden size, which divides every
/// product's inputs.
fn compile(
    core: &mut Core,
    graph: &Written,
    (streams, threads): (usize, usize),
) -> Result<CompiledModel, openvino::InferenceError> {
    let cpu = DeviceType::CPU;
    let capabilities = core
        .get_property(
            &cpu,
            &PropertyKey::Other("OPTIMIZATION_CAPABILITIES".into()),
        )
        .unwrap_or_default();
    let precision = if capabilities.split_whitespace().any(|c| c == "BF16") {
        "bf16"
    } else {
        "f32"
    };
    let (streams, threads, group) = (
        streams.to_string(),
        threads.to_string(),
        graph.config.hidden_size.to_string(),
    );
    let properties = [
        ("INFERENCE_PRECISION_HINT", precision),
        ("DYNAMIC_QUANTIZATION_GROUP_SIZE", group.as_str()),
        ("NUM_STREAMS", streams.as_str()),
        ("INFERENCE_NUM_THREADS", threads.as_str()),
        // Unpinned: the queries' engine shares the cores with the chunks' lanes.
        ("ENABLE_CPU_PINNING", "NO"),
    ];
    for (key, value) in properties {
        core.set_property(&cpu, &RwPropertyKey::Other(key.into()), value)?;
    }
    let bytes = graph.bytes().map_err(|message| openvino::InferenceError {
        kind: openvino::InferenceErrorKind::GeneralError,
        message: Some(message),
    })?;
    let model = core.read_model_from_buffer(&bytes, None)?;
    core.compile_model(&model, cpu)
}

/// A tensor of `element` and `shape` holding `values`.
fn tensor<T: Copy, const N: usize>(
    element: ElementType,
    shape: &[i64],
    values: &[T],
    bytes: fn(T) -> [u8; N],
) -> Result<Tensor, openvino::InferenceError> {
    let mut tensor = Tensor::new(element, &Shape::new(shape)?)?;
    let raw = tensor.get_raw_data_mut()?;
    for (out, value) in raw.chunks_exact_mut(N).zip(values) {
        out.copy_from_slice(&bytes(*value));
    }
    Ok(tensor)
}

/// Where the graph for the source files of `dir` is kept.
pub fn graph_path(dir: &Path, cache: &Path) -> Result<PathBuf, String> {
    let key = source_key(dir, cache, &[OPENVINO_FORMAT, "int8"])?;
    Ok(cache.join(format!("all-MiniLM-L6-v2-openvino-{}.onnx", &key[..16])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::testing::*;

    /// The written graph gives the reference's vectors within quantisation's error (0.996
    /// with int8 dot products, 0.99 without: see `int8_floor`), alone and batched with
    /// texts of other lengths (padding masked), in two lanes and in one.
    /// The graph is kept, with the same bytes each time, and read back rather than written
    /// again.
    #[test]
    fn openvino_on_the_written_graph_matches_the_reference_vectors() {
        let cache = tempfile::tempdir().unwrap();
        let library = models_file(LIBRARY);
        let two = OvEmbedder::load(&bundled_dir(), &library, cache.path(), 2)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(two.dimensions(), 384);
        let kept = graph_path(&bundled_dir(), cache.path()).unwrap();
        let modified = std::fs::metadata(&kept).unwrap().modified().unwrap();
        let one = OvEmbedder::load(&bundled_dir(), &library, cache.path(), 1).unwrap();
        let (floor, why) = int8_floor();
        assert_matches_reference(
            |texts| two.embed(texts),
            floor,
            &format!("two lanes, {why}"),
        );
        assert_matches_reference(|texts| one.embed(texts), floor, &format!("one lane, {why}"));
        assert_eq!(
            std::fs::metadata(&kept).unwrap().modified().unwrap(),
            modified
        );
        let weights = std::fs::read(bundled_dir().join("model.safetensors")).unwrap();
        let written = crate::onnx::bert(&config(), &weights, Precision::Int8, Runtime::OpenVino);
        assert_eq!(written.unwrap(), std::fs::read(&kept).unwrap());
    }

    /// A kept graph that does not give the reference's vectors (damaged, or written for
    /// other weights) is refused, not trusted for its name.
    #[test]
    fn a_kept_graph_that_misses_the_reference_is_refused() {
        let cache = tempfile::tempdir().unwrap();
        let kept = graph_path(&bundled_dir(), cache.path()).unwrap();
        let wrong = crate::onnx::bert(
            &config(),
            &damaged_weights(),
            Precision::Int8,
            Runtime::OpenVino,
        );
        std::fs::write(&kept, wrong.unwrap()).unwrap();
        let error = OvEmbedder::load(&bundled_dir(), &models_file(LIBRARY), cache.path(), 1)
            .err()
            .unwrap();
        assert!(error.contains("from the reference"), "{error}");
    }

    /// Without the library, loading says which file is missing.
    #[test]
    fn a_missing_library_is_an_error_naming_it() {
        let missing = Path::new("/nonexistent/libopenvino_c.so.2641");
        let cache = tempfile::tempdir().unwrap();
        let error = OvEmbedder::load(&bundled_dir(), missing, cache.path(), 1)
            .err()
            .unwrap();
        assert!(
            error.contains("/nonexistent/libopenvino_c.so.2641"),
            "{error}"
        );
    }
}
