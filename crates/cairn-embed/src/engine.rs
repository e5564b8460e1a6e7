//! What the engines that run the written graph share: runs of texts of like length, the
//! lanes that compute them side by side, the inputs a run takes (each token's row of the
//! word table, and the mask), and the guard that keeps a closing process from tearing a
//! library down under a thread still inside it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};

use tokenizers::Tokenizer;

use crate::onnx::{self, Precision, Runtime, WordTable};

/// Texts one run takes at most.
pub(crate) const BATCH_TEXTS: usize = 16;
/// Tokens one run takes at most, padding included (one full chunk): the runtime keeps
/// the memory of its largest run, and attention's grows with the run's texts times their
/// length squared. Measured on 256-token chunks in two lanes, runs of one chunk embed
/// 61 chunks/s where runs of two embed 44–60, with less memory.
pub(crate) const BATCH_TOKENS: usize = 256;

/// Runs of one engine computed side by side at most. Each lane runs on one thread (or
/// `threads / lanes` past this many): on 256-token chunks, two ONNX Runtime sessions of
/// one thread each embed 63–70 chunks/s on two cores where one session of two threads
/// embeds 52–59, the threads of one run waiting on each other at every step.
pub(crate) const MAX_LANES: usize = 4;

/// How many threads are inside an engine's library, and whether the process is closing.
static INSIDE: (Mutex<(usize, bool)>, Condvar) = (Mutex::new((0, false)), Condvar::new());

/// A thread inside an engine's library (ONNX Runtime, OpenVINO), until it is dropped.
pub(crate) struct Inside;

impl Inside {
    pub(crate) fn enter() -> Result<Self, String> {
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

/// Lets no thread into an engine's library any more and waits (`timeout` at most) until
/// none is inside; says whether none is. A process calls it before it exits: the
/// libraries' globals are torn down at exit, and a thread still loading or running a
/// graph would crash the process under them. A run takes milliseconds (512 tokens at
/// most).
pub fn settle(timeout: std::time::Duration) -> bool {
    let mut inside = INSIDE.0.lock().unwrap_or_else(PoisonError::into_inner);
    inside.1 = true;
    let (inside, _) = INSIDE
        .1
        .wait_timeout_while(inside, timeout, |inside| inside.0 > 0)
        .unwrap_or_else(PoisonError::into_inner);
    inside.0 == 0
}

/// The texts (by index) of each run: by length, so texts of like length share a run and
/// padding costs little, at most `most` texts (and [`BATCH_TEXTS`]) and [`BATCH_TOKENS`]
/// tokens padded (a text longer than that runs alone).
pub(crate) fn runs(lengths: &[usize], most: usize) -> Vec<Vec<usize>> {
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

/// The lowest cosine to a reference vector a graph must reach to be kept: int8 reaches
/// 0.993 on CPUs without int8 dot products and 0.996 with them.
fn minimum(precision: Precision) -> f32 {
    #[cfg(test)]
    if let Some(floor) = testing::INT8_MINIMUM
        .get()
        .filter(|_| precision == Precision::Int8)
    {
        return floor;
    }
    match precision {
        Precision::F32 => 0.9999,
        Precision::Int8 => 0.99,
    }
}

/// The word tables of the graphs loaded, by the graph's path, while an engine holds one:
/// the lanes and the query engine share a table.
static WORD_TABLES: Mutex<Vec<(PathBuf, Weak<WordTable>)>> = Mutex::new(Vec::new());

/// The word table of the graph at `path`: the one an engine of this process holds, else
/// the one kept beside the graph, else one made from the safetensors `weights` give (and
/// kept for the next process).
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
    let kept = words_path(path);
    let table = match WordTable::open(&kept, precision) {
        Ok(table) => table,
        Err(_) => {
            let table = WordTable::new(&weights()?, precision)?;
            if let (Some(cache), Some(bytes)) = (kept.parent(), table.to_bytes()) {
                if let Err(error) = crate::keep(cache, &kept, &bytes) {
                    tracing::debug!(%error, "the word table is not kept");
                }
            }
            table
        }
    };
    let table = Arc::new(table);
    tables.push((path.to_path_buf(), Arc::downgrade(&table)));
    Ok(table)
}

/// Where the word table of the graph at `graph` is kept.
fn words_path(graph: &Path) -> PathBuf {
    let mut kept = graph.as_os_str().to_os_string();
    kept.push(".words");
    PathBuf::from(kept)
}

/// One run's inputs: each token's row of the word table (texts × width × hidden, padding
/// taking the row of token 0, `[PAD]`) and the mask (texts × width, 0 for padding, which
/// attention and pooling skip).
pub(crate) struct Feed {
    pub(crate) texts: usize,
    pub(crate) width: usize,
    pub(crate) hidden: usize,
    pub(crate) words: Vec<f32>,
    pub(crate) mask: Vec<i64>,
}

/// A model's lanes (an engine's state for one run at a time each) and what every run
/// needs: the word table, the tokenizer, the vectors' size, and whether runs are padded
/// to a few shapes.
pub(crate) struct Lanes<S> {
    pub(crate) lanes: Vec<Mutex<S>>,
    pub(crate) words: Arc<WordTable>,
    pub(crate) tokenizer: Tokenizer,
    pub(crate) dimensions: usize,
    pub(crate) shapes: Shapes,
}

/// The shapes of the runs an engine is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shapes {
    /// As the texts are: the longest text's width, as many rows as texts.
    Exact,
    /// Widths up to a multiple of [`WIDTH_STEP`] and rows up to a power of two, padding
    /// filling the rest: an engine that keeps kernels and buffers for each shape it has
    /// run (OpenVINO) holds a few dozen of them, not hundreds. Measured with the runs of
    /// real notes, 805 MiB of memory added unpadded against 316 padded.
    Bucketed,
}

/// Widths of bucketed runs are multiples of this many tokens.
const WIDTH_STEP: usize = 16;

impl<S: Send> Lanes<S> {
    /// One unit vector per text, in order. Texts of like length share a run, so padding
    /// costs little; the runs are shared out between the lanes, on threads that start at
    /// the caller's priority. `compute` gives the vectors of one run's texts, one after
    /// another.
    pub(crate) fn embed(
        &self,
        texts: &[&str],
        compute: impl Fn(&mut S, Feed) -> Result<Vec<f32>, String> + Sync,
    ) -> Result<Vec<Vec<f32>>, String> {
        if texts.is_empty() || self.lanes.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = crate::token_ids(&self.tokenizer, texts)?;
        let lengths: Vec<usize> = encodings.iter().map(Vec::len).collect();
        let runs = runs(&lengths, texts.len().div_ceil(self.lanes.len()));
        let out = Mutex::new(vec![Vec::new(); texts.len()]);
        let next = AtomicUsize::new(0);
        // Each lane takes the next run left until none is.
        let lane = |state: &Mutex<S>| -> Result<(), String> {
            let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
            while let Some(run) = runs.get(next.fetch_add(1, Ordering::Relaxed)) {
                let feed = self.feed(run, &encodings)?;
                let _inside = Inside::enter()?;
                let vectors = compute(&mut state, feed)?;
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
                let started: Vec<_> = self.lanes[..busy]
                    .iter()
                    .map(|state| scope.spawn(|| lane(state)))
                    .collect();
                started.into_iter().try_for_each(|lane| {
                    lane.join()
                        .unwrap_or_else(|_| Err("an embedding lane failed".into()))
                })
            })?;
        }
        let out = out.into_inner().unwrap_or_else(PoisonError::into_inner);
        if out.iter().any(|v| v.len() != self.dimensions) {
            return Err("the embedding model gave too few vectors".into());
        }
        Ok(out)
    }

    /// The inputs of the texts `run` picks out of `encodings`, in the run's shape.
    fn feed(&self, run: &[usize], encodings: &[Vec<u32>]) -> Result<Feed, String> {
        let longest = run
            .iter()
            .map(|&i| encodings[i].len())
            .max()
            .unwrap_or(0)
            .max(1);
        let (rows, width) = match self.shapes {
            Shapes::Exact => (run.len(), longest),
            Shapes::Bucketed => (
                run.len().next_power_of_two(),
                longest.next_multiple_of(WIDTH_STEP),
            ),
        };
        let hidden = self.words.hidden();
        let mut words = Vec::with_capacity(rows * width * hidden);
        let mut mask = Vec::with_capacity(rows * width);
        let empty = Vec::new();
        let texts = run.iter().map(|&i| &encodings[i]);
        for text in texts.chain(std::iter::repeat(&empty)).take(rows) {
            for col in 0..width {
                let id = text.get(col).copied();
                self.words.push_row(id.unwrap_or(0), &mut words)?;
                mask.push(i64::from(id.is_some()));
            }
        }
        Ok(Feed {
            texts: rows,
            width,
            hidden,
            words,
            mask,
        })
    }
}

/// What an engine loads: the model's shape and the graph written for its runtime, kept
/// at `path` or new.
pub(crate) struct Written {
    pub(crate) config: onnx::Config,
    /// The graph's bytes when it was written in this process; a kept graph is read by the
    /// engine from its file (no copy held here while the engine makes its own).
    bytes: Option<Vec<u8>>,
    path: PathBuf,
    kept: bool,
    precision: Precision,
}

/// Where an engine reads a graph from.
pub(crate) enum GraphSource<'a> {
    Bytes(&'a [u8]),
    File(&'a Path),
}

impl Written {
    /// Where the engine reads the graph from: the bytes written, or the kept file.
    pub(crate) fn source(&self) -> GraphSource<'_> {
        match &self.bytes {
            Some(bytes) => GraphSource::Bytes(bytes),
            None => GraphSource::File(&self.path),
        }
    }

    /// The graph's bytes (a kept one read from its file).
    pub(crate) fn bytes(&self) -> Result<std::borrow::Cow<'_, [u8]>, String> {
        match &self.bytes {
            Some(bytes) => Ok(std::borrow::Cow::Borrowed(bytes)),
            None => std::fs::read(&self.path)
                .map(std::borrow::Cow::Owned)
                .map_err(|e| format!("{}: {e}", self.path.display())),
        }
    }

    /// The hash of the graph's bytes (a kept file's read a piece at a time).
    fn hash(&self) -> Result<blake3::Hash, String> {
        match &self.bytes {
            Some(bytes) => Ok(blake3::hash(bytes)),
            None => {
                let mut hasher = blake3::Hasher::new();
                std::fs::File::open(&self.path)
                    .and_then(|file| hasher.update_reader(file).map(drop))
                    .map_err(|e| format!("{}: {e}", self.path.display()))?;
                Ok(hasher.finalize())
            }
        }
    }

    /// The graph for `runtime` at `precision` of the model in `dir`: the one kept at `path`,
    /// else one written from the weights; with the lanes' parts besides the states (the
    /// word table, shared with any engine of this process that holds it, and the
    /// tokenizer). The weights are read once at most.
    pub(crate) fn load(
        dir: &Path,
        path: PathBuf,
        precision: Precision,
        runtime: Runtime,
    ) -> Result<(Self, Lanes<()>), String> {
        let shapes = match runtime {
            Runtime::OnnxRuntime => Shapes::Exact,
            Runtime::OpenVino => Shapes::Bucketed,
        };
        let tokenizer = crate::tokenizer(dir)?;
        let config: onnx::Config =
            serde_json::from_slice(&crate::read(dir, "config.json")?).map_err(|e| e.to_string())?;
        let kept = path.is_file();
        let mut weights = None;
        let bytes = if kept {
            None
        } else {
            let source = crate::read(dir, "model.safetensors")?;
            let graph = onnx::bert(&config, &source, precision, runtime)?;
            weights = Some(source);
            Some(graph)
        };
        let words = word_table(&path, precision, || {
            weights.map_or_else(|| crate::read(dir, "model.safetensors"), Ok)
        })?;
        let parts = Lanes {
            lanes: Vec::new(),
            words,
            tokenizer,
            dimensions: config.hidden_size,
            shapes,
        };
        let written = Self {
            config,
            bytes,
            path,
            kept,
            precision,
        };
        Ok((written, parts))
    }

    /// Checks the engine that loaded the graph (`embed`) on the runtime `library` against
    /// the reference vectors, keeps what the check said on this CPU, then keeps a new
    /// graph in `cache`. Checked whenever this graph was not checked with this runtime on
    /// this CPU, not only when written: the same graph runs on other kernels on another
    /// CPU (a home folder shared between machines), and int8 products without int8 dot
    /// products lose precision. A verdict kept for these very bytes stands.
    pub(crate) fn accept(
        self,
        cache: &Path,
        library: &Path,
        embed: impl Fn(&[&str]) -> Result<Vec<Vec<f32>>, String>,
    ) -> Result<(), String> {
        let minimum = minimum(self.precision);
        let verdict = crate::verdict::Verdict::of(&self.path, library);
        // What was checked: these bytes and this word table against this bar (a graph
        // or table damaged or replaced under the same name is checked again).
        let table = std::fs::metadata(words_path(&self.path)).ok().map(|meta| {
            let modified = meta.modified().ok();
            let since = modified.and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok());
            format!("{}.{}", meta.len(), since.map_or(0, |s| s.as_nanos()))
        });
        let checked = format!(
            "{} {} {minimum}",
            self.hash()?.to_hex(),
            table.unwrap_or_default()
        );
        if self.kept && verdict.passed_for(&checked) {
            return Ok(());
        }
        let lowest = crate::lowest_cosine(embed)?;
        let passed = !lowest.misses(minimum);
        verdict.record(passed, &checked);
        if !passed {
            return Err(lowest.missed(minimum));
        }
        if let (false, Some(bytes)) = (self.kept, &self.bytes) {
            crate::keep(cache, &self.path, bytes)?;
        }
        Ok(())
    }
}

impl Lanes<()> {
    /// These parts with the lanes' `states`.
    pub(crate) fn with<S>(self, states: Vec<S>) -> Lanes<S> {
        Lanes {
            lanes: states.into_iter().map(Mutex::new).collect(),
            words: self.words,
            tokenizer: self.tokenizer,
            dimensions: self.dimensions,
            shapes: self.shapes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Bucketed runs are padded to a width of a multiple of 16 and a power of two of rows,
    /// the padding masked out; exact runs are as the texts are.
    #[test]
    fn bucketed_runs_are_padded_to_a_few_shapes() {
        let Some(dir) = crate::candle::default_embedder_dir() else {
            panic!("the bundled embedding model is not installed");
        };
        let words = word_table(&dir.join("table"), Precision::Int8, || {
            crate::read(&dir, "model.safetensors")
        })
        .unwrap();
        let lanes = |shapes| Lanes {
            lanes: vec![Mutex::new(())],
            words: words.clone(),
            tokenizer: crate::tokenizer(&dir).unwrap(),
            dimensions: 384,
            shapes,
        };
        let encodings = vec![vec![101, 7, 102], vec![101, 8, 9, 10, 102], vec![101, 102]];
        let exact = lanes(Shapes::Exact).feed(&[0, 1, 2], &encodings).unwrap();
        assert_eq!((exact.texts, exact.width), (3, 5));
        let bucketed = lanes(Shapes::Bucketed)
            .feed(&[0, 1, 2], &encodings)
            .unwrap();
        assert_eq!((bucketed.texts, bucketed.width), (4, 16));
        assert_eq!(bucketed.words.len(), 4 * 16 * 384);
        let row = |r: usize| &bucketed.mask[r * 16..(r + 1) * 16];
        assert_eq!(row(0).iter().sum::<i64>(), 3);
        assert_eq!(row(1).iter().sum::<i64>(), 5);
        assert_eq!(row(2).iter().sum::<i64>(), 2);
        assert_eq!(row(3).iter().sum::<i64>(), 0);
    }
}

/// What the engines' tests share: the installed model, damaged weights, and the check
/// against the reference vectors.
#[cfg(test)]
pub(crate) mod testing {
    use std::cell::Cell;
    use std::path::PathBuf;

    use crate::onnx::{self, Precision};

    thread_local! {
        /// The int8 graph's minimum for engines this thread loads, where a test plays a
        /// CPU on which int8 misses the reference.
        pub(crate) static INT8_MINIMUM: Cell<Option<f32>> = const { Cell::new(None) };
    }

    pub(crate) fn bundled_dir() -> PathBuf {
        crate::candle::default_embedder_dir().unwrap_or_default()
    }

    /// The int8 graph's floor on this CPU, and why: what the engines promise on every
    /// supported CPU (the product's minimum), and the figure measured with int8 dot
    /// products where the CPU has them.
    pub(crate) fn int8_floor() -> (f32, String) {
        let cpu = crate::cpu::Cpu::this();
        if cpu.int8_dot_products() {
            (0.996, format!("0.996 with int8 dot products on {cpu}"))
        } else {
            let floor = super::minimum(Precision::Int8);
            (
                floor,
                format!("{floor}, the minimum without int8 dot products, on {cpu}"),
            )
        }
    }

    /// `file` under the installed models folder.
    pub(crate) fn models_file(file: &str) -> PathBuf {
        bundled_dir()
            .parent()
            .map(|models| models.join(file))
            .unwrap_or_default()
    }

    pub(crate) fn config() -> onnx::Config {
        serde_json::from_slice(&std::fs::read(bundled_dir().join("config.json")).unwrap()).unwrap()
    }

    /// The model's weights with 4 KiB of one layer's flipped: a damaged or different file
    /// under the model's name.
    pub(crate) fn damaged_weights() -> Vec<u8> {
        let mut weights = std::fs::read(bundled_dir().join("model.safetensors")).unwrap();
        let tensors = safetensors::SafeTensors::deserialize(&weights).unwrap();
        let view = tensors
            .tensor("encoder.layer.3.output.dense.weight")
            .unwrap();
        let start = view.data().as_ptr() as usize - weights.as_ptr() as usize;
        for b in &mut weights[start..start + 4096] {
            *b ^= 0x40;
        }
        weights
    }

    /// Every reference text, alone and batched with the others (other lengths: padding),
    /// comes out a unit vector above `floor` cosine to the reference's; and a text run
    /// twice in one run comes out as it does alone.
    pub(crate) fn assert_matches_reference(
        embed: impl Fn(&[&str]) -> Result<Vec<Vec<f32>>, String>,
        floor: f32,
        what: &str,
    ) {
        let cases = crate::reference().unwrap();
        let texts: Vec<&str> = cases.iter().map(|(t, _)| t.as_str()).collect();
        let batch = embed(&texts).unwrap();
        for (n, (text, want)) in cases.iter().enumerate() {
            let alone = embed(&[text.as_str()]).unwrap();
            for got in [&batch[n], &alone[0]] {
                let length: f32 = got.iter().map(|x| x * x).sum::<f32>().sqrt();
                assert!((length - 1.0).abs() < 1e-4, "length {length}");
                let similarity = crate::cosine(got, want);
                assert!(similarity > floor, "{text:?} ({what}): cosine {similarity}");
            }
        }
        let pair = embed(&[texts[0], texts[0]]).unwrap();
        let alone = embed(&[texts[0]]).unwrap();
        for got in &pair {
            assert!(crate::cosine(got, &alone[0]) > 0.99999, "{what}");
        }
    }
}
