//! Fuzz targets (see `cairn_testkit::fuzz`): the markdown chunker and the path resolver.

#![allow(clippy::unwrap_used)]

use cairn_testkit::fuzz;

use crate::chunk::chunk_markdown;
use crate::paths::Access;
use crate::workspace::Workspace;

/// Any text: every chunk's text is taken unchanged from the lines it names (a long line
/// may be cut in pieces), in order.
#[test]
fn fuzz_chunker() {
    let words: &[&[u8]] = &[
        b"# ",
        b"## ",
        b"\n",
        b"```",
        b"~~~",
        b"- ",
        b"> ",
        b"|",
        b"\r\n",
        b"    ",
        b"\xc3\xa9",
        b"\xe2\x80\xa8",
        b"<!--",
        b"-->",
    ];
    fuzz::run("chunker", words, |bytes| {
        let text = String::from_utf8_lossy(bytes);
        let lines: Vec<&str> = text.lines().collect();
        let mut previous_start = 0;
        for chunk in chunk_markdown(&text) {
            if chunk.start_line < previous_start {
                return Err(format!("a chunk starts at line {}", chunk.start_line));
            }
            previous_start = chunk.start_line;
            if chunk.end_line < chunk.start_line || chunk.end_line > lines.len() {
                return Err(format!(
                    "lines {}..{} of {}",
                    chunk.start_line,
                    chunk.end_line,
                    lines.len()
                ));
            }
            let expected = lines[chunk.start_line - 1..chunk.end_line].join("\n");
            if !expected.contains(&chunk.text) {
                return Err(format!(
                    "chunk at line {} changed its text",
                    chunk.start_line
                ));
            }
        }
        Ok(())
    });
}

/// Any path a model may send: what the resolver lets through is inside the workspace, also
/// through links planted in it, and a write never lands in a protected folder.
#[test]
fn fuzz_path_resolver() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let workspace = Workspace::open_or_create(&dir.path().join("ws")).unwrap();
    let root = workspace.root().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("knowledge/deep")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("knowledge/out")).unwrap();
    std::os::unix::fs::symlink("../..", root.join("knowledge/deep/up")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", root.join("notes.md")).unwrap();
    let words: &[&[u8]] = &[
        b"../",
        b"./",
        b"/",
        b"//",
        b"knowledge/out/",
        b"knowledge/deep/up/",
        b"notes.md",
        b"~",
        b"\\",
        b"..",
        b"\0",
        b".cairn/",
        b"sessions/",
        b"MEMORY.md",
        b"%2e%2e/",
        b"C:\\",
        b"file:///etc/passwd",
    ];
    fuzz::run("path_resolver", words, |bytes| {
        let input = String::from_utf8_lossy(bytes);
        for access in [Access::Read, Access::Write] {
            let Ok(path) = workspace.resolve(&input, access) else {
                continue;
            };
            // What the path leads to, as far as it exists, links followed.
            let mut existing = path.as_path();
            while !existing.exists() {
                match existing.parent() {
                    Some(parent) => existing = parent,
                    None => break,
                }
            }
            let real = existing.canonicalize().map_err(|e| e.to_string())?;
            if !real.starts_with(&root) {
                return Err(format!(
                    "{input:?} ({access:?}) leads to {}",
                    real.display()
                ));
            }
            if access == Access::Write {
                let relative = real.strip_prefix(&root).unwrap_or(&real);
                if relative.starts_with(".cairn") || relative.starts_with("sessions") {
                    return Err(format!("{input:?} may be written: {}", real.display()));
                }
            }
        }
        Ok(())
    });
}
