//! Embeddings for search by meaning with the bundled all-MiniLM-L6-v2. `bundled.rs` is
//! what the index uses: ONNX Runtime (`runtime.rs`) on the graph `onnx.rs` writes from the
//! fetched safetensors, else candle. `gguf.rs` and `llama.rs` run it on llama.cpp, and
//! `openvino.rs` on OpenVINO, for the benchmark; `engine.rs` is what the two ONNX engines
//! share. Texts are tokenized by the model's own WordPiece tokenizer, cut to its window
//! of 256 tokens, whatever the engine; every engine is held to the reference vectors.

pub mod bundled;
pub mod candle;
pub mod cpu;
mod engine;
pub mod gguf;
pub mod llama;
pub mod onnx;
pub mod openvino;
pub mod runtime;
mod verdict;

pub use engine::settle;

use std::path::{Path, PathBuf};

use tokenizers::{Tokenizer, TruncationParams};

/// The longest input in tokens (`max_seq_length` of the model); longer texts are cut.
pub const MAX_TOKENS: usize = 256;

/// Bumped when the GGUF written for the same source files changes.
const GGUF_FORMAT: &str = "cairn-gguf-1";

/// The bundled model run by llama.cpp.
pub struct LlamaEmbedder {
    engine: llama::LlamaEngine,
    tokenizer: Tokenizer,
}

impl LlamaEmbedder {
    /// Loads the model of `dir` (`config.json`, `tokenizer.json`, `model.safetensors`),
    /// writing its GGUF into `cache` first when it is not there yet.
    pub fn load(dir: &Path, cache: &Path, quantise: bool, threads: i32) -> Result<Self, String> {
        let gguf = ensure_gguf(dir, cache, quantise)?;
        let tokenizer = tokenizer(dir)?;
        let engine = llama::LlamaEngine::load(&gguf, threads)?;
        Ok(Self { engine, tokenizer })
    }

    pub fn dimensions(&self) -> usize {
        self.engine.dimensions()
    }

    /// One unit vector per text, in order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        self.engine.embed(token_ids(&self.tokenizer, texts)?)
    }
}

/// The model's WordPiece tokenizer, cutting texts to the model's window, unpadded.
fn tokenizer(dir: &Path) -> Result<Tokenizer, String> {
    let mut tokenizer =
        Tokenizer::from_bytes(read(dir, "tokenizer.json")?).map_err(|e| e.to_string())?;
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: MAX_TOKENS,
            ..TruncationParams::default()
        }))
        .map_err(|e| e.to_string())?;
    Ok(tokenizer)
}

/// The token ids of each text, special tokens included, cut to the window.
fn token_ids(tokenizer: &Tokenizer, texts: &[&str]) -> Result<Vec<Vec<u32>>, String> {
    let encodings = tokenizer
        .encode_batch(texts.to_vec(), true)
        .map_err(|e| e.to_string())?;
    Ok(encodings.iter().map(|e| e.get_ids().to_vec()).collect())
}

/// Texts and their vectors from the reference implementation (sentence-transformers).
const REFERENCE: &str = include_str!("../data/minilm_reference.json");

/// The reference texts and their vectors.
pub fn reference() -> Result<Vec<(String, Vec<f32>)>, String> {
    #[derive(serde::Deserialize)]
    struct Case {
        text: String,
        vector: Vec<f32>,
    }
    #[derive(serde::Deserialize)]
    struct Reference {
        cases: Vec<Case>,
    }
    let reference: Reference = serde_json::from_str(REFERENCE).map_err(|e| e.to_string())?;
    Ok(reference
        .cases
        .into_iter()
        .map(|c| (c.text, c.vector))
        .collect())
}

/// The cosine of two vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (norm(a) * norm(b)).max(f32::MIN_POSITIVE)
}

/// The vector furthest from the reference's: its cosine and the text it was made of.
pub struct Lowest {
    pub cosine: f32,
    pub text: String,
}

impl Lowest {
    /// Whether it falls below `minimum` (a vector that is not a number always does).
    pub fn misses(&self, minimum: f32) -> bool {
        self.cosine.is_nan() || self.cosine < minimum
    }

    /// Says how it missed `minimum`.
    pub fn missed(&self, minimum: f32) -> String {
        format!(
            "the embedding model gives a vector {:.5} from the reference (below {minimum}) for {:?}",
            self.cosine,
            self.text.chars().take(40).collect::<String>()
        )
    }
}

/// Embeds the reference texts alone and all together; the lowest cosine of any vector to
/// its reference. Errors are the embedder's own.
pub fn lowest_cosine(
    embed: impl Fn(&[&str]) -> Result<Vec<Vec<f32>>, String>,
) -> Result<Lowest, String> {
    let cases = reference()?;
    let texts: Vec<&str> = cases.iter().map(|(t, _)| t.as_str()).collect();
    let together = embed(&texts)?;
    let mut lowest = Lowest {
        cosine: f32::INFINITY,
        text: String::new(),
    };
    for (i, (text, expected)) in cases.iter().enumerate() {
        let alone = embed(&[text.as_str()])?;
        for got in [alone.first(), together.get(i)] {
            let cos = got.map_or(f32::NAN, |got| cosine(got, expected));
            if cos.is_nan() || cos < lowest.cosine {
                lowest = Lowest {
                    cosine: cos,
                    text: text.clone(),
                };
            }
            if cos.is_nan() {
                return Ok(lowest);
            }
        }
    }
    Ok(lowest)
}

/// A hash of the model files of `dir` and of `tags` (format and variant). The weights
/// are 90 MB, and every engine loaded asks (the chunks' and the queries'), as does every
/// start that names the model: a key is remembered for the process, and kept in `cache`
/// for the next ones, while the files keep their size, modification time and inode. The
/// folder is named by its real path: reached through a link (a second profile's models
/// folder linked to the first's), it is the same folder with the same key.
fn source_key(dir: &Path, cache: &Path, tags: &[&str]) -> Result<String, String> {
    type Seen = (PathBuf, Vec<String>, Vec<FileStamp>);
    static KEYS: std::sync::Mutex<Vec<(Seen, String)>> = std::sync::Mutex::new(Vec::new());
    const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];
    let stamps = FILES
        .iter()
        .map(|name| FileStamp::of(&dir.join(name)))
        .collect::<Result<Vec<_>, String>>()?;
    let seen: Seen = (
        dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()),
        tags.iter().map(|t| t.to_string()).collect(),
        stamps,
    );
    let mut keys = KEYS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, key)) = keys.iter().find(|(s, _)| *s == seen) {
        return Ok(key.clone());
    }
    let kept = cache.join(format!(
        "source-{}.key",
        &blake3::hash(format!("{seen:?}").as_bytes()).to_hex()[..16]
    ));
    let key = match read_key(&kept) {
        Some(key) => key,
        None => {
            let mut hasher = blake3::Hasher::new();
            for tag in tags {
                hasher.update(&(tag.len() as u64).to_le_bytes());
                hasher.update(tag.as_bytes());
            }
            for name in FILES {
                let part = read(dir, name)?;
                hasher.update(&(part.len() as u64).to_le_bytes());
                hasher.update(&part);
            }
            let key = hasher.finalize().to_hex().to_string();
            // Not kept, the next start hashes the files again.
            if let Err(error) = keep(cache, &kept, key.as_bytes()) {
                tracing::debug!(%error, "the model's source key is not kept");
            }
            key
        }
    };
    keys.push((seen, key.clone()));
    Ok(key)
}

/// A kept source key: 64 hex digits in a small regular file, else nothing (a key that is
/// not one is made again).
fn read_key(path: &Path) -> Option<String> {
    let key = read_small(path, 64)?;
    (key.len() == 64 && key.bytes().all(|b| b.is_ascii_hexdigit())).then_some(key)
}

/// The text of a small file this crate keeps beside its graphs (a key, a verdict): only a
/// regular file of at most `max` bytes is read (a FIFO or a device there would block, a
/// large file cost memory); anything else is no answer.
pub(crate) fn read_small(path: &Path, max: u64) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > max {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// What tells a file changed without reading it: its length, modification time and inode.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileStamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    inode: u64,
}

impl FileStamp {
    fn of(path: &Path) -> Result<Self, String> {
        let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&meta);
        #[cfg(not(unix))]
        let inode = 0;
        Ok(Self {
            len: meta.len(),
            modified: meta.modified().ok(),
            inode,
        })
    }
}

fn read(dir: &Path, name: &str) -> Result<Vec<u8>, String> {
    let path = dir.join(name);
    std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The GGUF of the model in `dir`, written into `cache` (atomically: two processes may
/// write it at once) unless the one for these exact source files is there.
pub fn ensure_gguf(dir: &Path, cache: &Path, quantise: bool) -> Result<PathBuf, String> {
    let kind = if quantise { "q8_0" } else { "f32" };
    let key = source_key(dir, cache, &[GGUF_FORMAT, kind])?;
    let path = cache.join(format!("all-MiniLM-L6-v2-{kind}-{}.gguf", &key[..16]));
    if path.is_file() {
        return Ok(path);
    }
    let config: gguf::BertConfig =
        serde_json::from_slice(&read(dir, "config.json")?).map_err(|e| e.to_string())?;
    let weights = read(dir, "model.safetensors")?;
    let bytes = gguf::bert(&config, &weights, &read(dir, "tokenizer.json")?, quantise)?;
    keep(cache, &path, &bytes)?;
    Ok(path)
}

/// Writes `bytes` to `path` in `cache` atomically: two processes may write it at once,
/// and a reader sees no file or all of it.
fn keep(cache: &Path, path: &Path, bytes: &[u8]) -> Result<(), String> {
    std::fs::create_dir_all(cache).map_err(|e| format!("{}: {e}", cache.display()))?;
    let mut temp = tempfile::NamedTempFile::new_in(cache).map_err(|e| e.to_string())?;
    std::io::Write::write_all(&mut temp, bytes).map_err(|e| e.to_string())?;
    temp.persist(path).map_err(|e| e.to_string())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundled_dir() -> PathBuf {
        candle::default_embedder_dir().unwrap_or_default()
    }

    /// The GGUF written from the fetched weights gives the reference's vectors through
    /// llama.cpp: f32 all but exactly, Q8_0 within quantisation's error; alone and packed
    /// with other texts in one encode.
    #[test]
    fn llama_cpp_on_the_written_gguf_matches_the_reference_vectors() {
        let reference: serde_json::Value = serde_json::from_str(REFERENCE).unwrap();
        let cases = reference["cases"].as_array().cloned().unwrap_or_default();
        let texts: Vec<&str> = cases.iter().filter_map(|c| c["text"].as_str()).collect();
        let cache = tempfile::tempdir().unwrap();
        for (quantise, floor) in [(false, 0.9999), (true, 0.999)] {
            let embedder = LlamaEmbedder::load(&bundled_dir(), cache.path(), quantise, 2)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(embedder.dimensions(), 384);
            let batch = embedder.embed(&texts).unwrap();
            for (n, case) in cases.iter().enumerate() {
                let want: Vec<f32> = serde_json::from_value(case["vector"].clone()).unwrap();
                let alone = embedder.embed(&texts[n..=n]).unwrap();
                for got in [&batch[n], &alone[0]] {
                    let length: f32 = got.iter().map(|x| x * x).sum::<f32>().sqrt();
                    assert!((length - 1.0).abs() < 1e-4, "length {length}");
                    let similarity = cosine(got, &want);
                    assert!(
                        similarity > floor,
                        "{:?} (q8_0: {quantise}): cosine {similarity}",
                        texts[n]
                    );
                }
            }
        }
    }

    /// The GGUF is written once for the same source files, with the same bytes each time.
    #[test]
    fn the_gguf_is_the_same_bytes_each_time_and_written_once() {
        let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let first = ensure_gguf(&bundled_dir(), one.path(), true).unwrap();
        let second = ensure_gguf(&bundled_dir(), two.path(), true).unwrap();
        assert_eq!(first.file_name(), second.file_name());
        assert_eq!(
            std::fs::read(&first).unwrap(),
            std::fs::read(&second).unwrap()
        );
        let modified = std::fs::metadata(&first).unwrap().modified().unwrap();
        assert_eq!(
            ensure_gguf(&bundled_dir(), one.path(), true).unwrap(),
            first
        );
        assert_eq!(
            std::fs::metadata(&first).unwrap().modified().unwrap(),
            modified
        );
        let graphs = std::fs::read_dir(one.path())
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension() == Some("gguf".as_ref()))
            .count();
        assert_eq!(graphs, 1);
    }

    /// A folder with the three files a source key covers, each holding its own name.
    fn model_files() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for name in ["config.json", "tokenizer.json", "model.safetensors"] {
            std::fs::write(dir.path().join(name), name).unwrap();
        }
        dir
    }

    /// The key is remembered, but a model file changed in place gets a new one: a graph
    /// written for other weights is never taken for this model's.
    #[test]
    fn a_changed_model_file_changes_the_key() {
        let (dir, cache) = (model_files(), tempfile::tempdir().unwrap());
        let key = |tag| source_key(dir.path(), cache.path(), &[tag]).unwrap();
        let first = key("t");
        assert_eq!(key("t"), first);
        assert_ne!(key("u"), first);
        std::fs::write(dir.path().join("model.safetensors"), "other weights").unwrap();
        assert_ne!(key("t"), first);
    }

    /// A key is kept for the next start (which takes it without reading the weights), and
    /// what is not a key is not taken.
    #[test]
    fn a_kept_key_spares_the_next_start_the_hash() {
        let (dir, cache) = (model_files(), tempfile::tempdir().unwrap());
        let first = source_key(dir.path(), cache.path(), &["kept"]).unwrap();
        let kept: Vec<_> = std::fs::read_dir(cache.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert_eq!(read_key(&kept[0]).as_deref(), Some(first.as_str()));
        std::fs::write(&kept[0], "not a key").unwrap();
        assert_eq!(read_key(&kept[0]), None);
        let planted = "a".repeat(64);
        std::fs::write(&kept[0], &planted).unwrap();
        assert_eq!(read_key(&kept[0]).as_deref(), Some(planted.as_str()));
    }

    /// A models folder reached through a link (a second profile linked to the first's) is
    /// the same folder: one key is kept for both, not one per path.
    #[test]
    fn a_folder_reached_through_a_link_keeps_one_key() {
        let (dir, cache) = (model_files(), tempfile::tempdir().unwrap());
        let links = tempfile::tempdir().unwrap();
        let keys: Vec<String> = (0..3)
            .map(|n| {
                let link = links.path().join(format!("profile-{n}"));
                std::os::unix::fs::symlink(dir.path(), &link).unwrap();
                source_key(&link, cache.path(), &["linked"]).unwrap()
            })
            .collect();
        assert!(keys.iter().all(|key| *key == keys[0]), "{keys:?}");
        let kept = std::fs::read_dir(cache.path()).unwrap().count();
        assert_eq!(kept, 1, "one key kept for one folder");
    }

    #[test]
    fn a_model_folder_without_weights_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let error = ensure_gguf(dir.path(), cache.path(), true).unwrap_err();
        assert!(error.contains("config.json"), "{error}");
    }
}
