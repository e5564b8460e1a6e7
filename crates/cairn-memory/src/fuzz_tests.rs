//! Fuzz targets (see `cairn_testkit::fuzz`): the markdown chunker and the path resolver.

#![allow(clippy::unwrap_used)]

use cairn_testkit::fuzz;

use crate::chunk::chunk_markdown;
use crate::chunk::tests::given_back;
use crate::paths::Access;
use crate::workspace::Workspace;

/// Any text: the chunks give the file back exactly. Each chunk's text is the stretch of
/// the file that begins on its first line and ends on its last (a long line may be cut in
/// pieces, a piece never empty), and the chunks, in order, leave out nothing but the line
/// break where one ends and the next begins (a chunk cut for size may repeat the end of
/// the one before).
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
        given_back(&lines, &chunk_markdown(&text))
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
