//! The workspace's indexed files and their chunks, found and cut the way the memory index
//! does it, so that the baseline indexes the very same units.

use std::fs;
use std::path::Path;

use anyhow::Context as _;
use cairn_memory::chunk::{chunk_markdown, chunk_session, Chunk};
use cairn_memory::source::classify;
use cairn_memory::{Source, SourceKind};

/// The folders that hold sources, besides MEMORY.md and AGENTS.md at the root.
const SOURCE_DIRS: &[&str] = &["memory", "knowledge", "sessions"];

/// Every indexed file of the workspace at `root`, sorted by path. Hidden folders and
/// symbolic links are skipped, as the index skips them.
pub fn sources(root: &Path) -> Vec<Source> {
    let mut found: Vec<Source> = ["MEMORY.md", "AGENTS.md"]
        .into_iter()
        .filter(|name| root.join(name).is_file())
        .filter_map(classify)
        .collect();
    for dir in SOURCE_DIRS {
        walk(dir, &root.join(dir), &mut found);
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

fn walk(relative: &str, dir: &Path, found: &mut Vec<Source>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let (Ok(kind), Some(name)) = (
            entry.file_type(),
            entry.file_name().to_str().map(str::to_string),
        ) else {
            continue;
        };
        let path = format!("{relative}/{name}");
        if kind.is_dir() && !name.starts_with('.') {
            walk(&path, &entry.path(), found);
        } else if kind.is_file() {
            found.extend(classify(&path));
        }
    }
}

/// The chunks of `text`, the contents of `source`.
pub fn chunks(source: &Source, text: &str) -> Vec<Chunk> {
    match source.kind {
        SourceKind::Session => chunk_session(text),
        _ => chunk_markdown(text),
    }
}

/// Reads `source` under `root` and cuts it into chunks.
pub fn read_chunks(root: &Path, source: &Source) -> anyhow::Result<Vec<Chunk>> {
    let path = root.join(&source.path);
    let text =
        fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(chunks(source, &text))
}
