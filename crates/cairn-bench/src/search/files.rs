//! The workspace's indexed files and their chunks, found and cut by the memory index's own
//! functions, so that the baseline indexes the very same units.

use std::fs;
use std::path::Path;

use anyhow::Context as _;
use cairn_memory::chunk::{chunk_source, Chunk};
pub use cairn_memory::index::sources;
use cairn_memory::Source;

/// The chunks of `text`, the contents of `source`.
pub fn chunks(source: &Source, text: &str) -> Vec<Chunk> {
    chunk_source(source.kind, text)
}

/// Reads `source` under `root` and cuts it into chunks.
pub fn read_chunks(root: &Path, source: &Source) -> anyhow::Result<Vec<Chunk>> {
    let path = root.join(&source.path);
    let text =
        fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(chunks(source, &text))
}
