//! `read_file`: a window of a text file with line numbers, or a picture (PNG, JPEG, WebP,
//! GIF), given to the model as a picture when it sees and as the text read in it when it
//! does not.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use async_trait::async_trait;
use cairn_memory::Access;
use cairn_protocol::ToolSpec;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::files::{blocking, check_regular_file, io_failure, not_utf8, resolve, text_reader};
use crate::output::{digits, numbered, take_chars, thousands};
use crate::{parse_args, Tool, ToolCtx, ToolError, ToolOutput};

/// Lines shown when the call gives no `limit`, and the most one call shows.
const DEFAULT_LIMIT: usize = 2000;
/// Longer lines are cut to this many characters.
const MAX_LINE_CHARS: usize = 2000;
/// The whole answer stops growing past this many characters.
const MAX_OUTPUT_CHARS: usize = 100_000;

/// Arguments of `read_file`.
#[derive(Debug, Clone, Deserialize)]
pub struct ReadFileArgs {
    pub path: String,
    /// 1-based number of the first line to show.
    #[serde(default)]
    pub offset: Option<usize>,
    /// How many lines to show at most.
    #[serde(default)]
    pub limit: Option<usize>,
}

/// Reads a text file inside the workspace.
pub struct ReadFile;

#[async_trait]
impl Tool for ReadFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "read_file".into(),
            description: "Read a UTF-8 text file in the workspace. Each line is prefixed with its \
                line number and a tab (the prefix is not part of the file). Shows up to 2000 lines \
                per call; a footer says how to continue when more remain. Lines over 2000 \
                characters are cut. A picture (PNG, JPEG, WebP, GIF) is returned as the picture \
                itself, with any text read from it. Other binary files are refused."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "File path relative to the workspace root, e.g. `notes/plan.md`."
                    },
                    "offset": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "1-based number of the first line to show (default 1)."
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": DEFAULT_LIMIT,
                        "description": "Maximum number of lines to show (default and maximum 2000)."
                    }
                },
                "required": ["path"]
            }),
        }
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    async fn call(&self, args: Value, ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let args: ReadFileArgs = parse_args(args)?;
        let path = resolve(&ctx, &args.path, Access::Read)?;
        let shown = ctx.workspace.relative(&path);
        if is_picture(&path) {
            let attachments = ctx.workspace.attachments().clone();
            let name = shown.clone();
            return blocking(move || read_picture(&attachments, &path, &name)).await;
        }
        let first = args.offset.unwrap_or(1).max(1);
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, DEFAULT_LIMIT);
        let cancel = ctx.cancel.clone();
        let name = shown.clone();
        let excerpt = blocking(move || read_window(&path, &name, first, limit, &cancel)).await?;
        render(&shown, first, &excerpt).map(ToolOutput::ok)
    }
}

/// Whether the file is a regular file that starts like a picture the conversation takes
/// (whatever its name). Anything else (a FIFO, which would block an open) is not looked at.
fn is_picture(path: &Path) -> bool {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = [0u8; 32];
    let Ok(mut file) = File::open(path) else {
        return false;
    };
    let read = std::io::Read::read(&mut file, &mut head).unwrap_or(0);
    cairn_extract::picture::media_type_of(&head[..read]).is_some()
}

/// A picture in the workspace, kept with the conversation's pictures and attached to the
/// result.
fn read_picture(
    attachments: &cairn_memory::Attachments,
    path: &Path,
    shown: &str,
) -> Result<ToolOutput, ToolError> {
    let meta = std::fs::metadata(path).map_err(|e| io_failure(shown, &e))?;
    check_regular_file(&meta, shown)?;
    let picture = attachments.add_file(path).map_err(|why| {
        ToolError::Failed(format!("`{shown}` cannot be read as a picture: {why}"))
    })?;
    let kind = match picture.media_type.as_str() {
        "image/png" => "PNG",
        "image/jpeg" => "JPEG",
        "image/webp" => "WebP",
        _ => "GIF",
    };
    let content = format!(
        "`{shown}`: a {kind} picture, {} × {} px, {} bytes.",
        picture.width,
        picture.height,
        thousands(usize::try_from(picture.bytes).unwrap_or(usize::MAX))
    );
    Ok(ToolOutput {
        pictures: vec![picture],
        ..ToolOutput::ok(content)
    })
}

/// The lines of a file that fall in the asked window, and how many lines it has in all.
#[derive(Debug, Default)]
struct Excerpt {
    /// (line number, text without its line break).
    lines: Vec<(usize, String)>,
    total: usize,
}

/// Reads the file line by line (so huge files stay cheap), keeping the lines of the window.
fn read_window(
    path: &Path,
    shown: &str,
    first: usize,
    limit: usize,
    cancel: &CancellationToken,
) -> Result<Excerpt, ToolError> {
    let mut reader = open_text(path, shown)?;
    let mut excerpt = Excerpt::default();
    let mut budget = MAX_OUTPUT_CHARS;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| io_failure(shown, &e))?
            == 0
        {
            return Ok(excerpt);
        }
        excerpt.total += 1;
        let text = std::str::from_utf8(&buf).map_err(|_| not_utf8(shown))?;
        let number = excerpt.total;
        if number >= first && excerpt.lines.len() < limit && budget > 0 {
            let line = shorten(text.trim_end_matches(['\n', '\r']));
            budget = budget.saturating_sub(line.len() + 8);
            excerpt.lines.push((number, line));
        }
        if number % 10_000 == 0 && cancel.is_cancelled() {
            return Err(ToolError::Aborted);
        }
    }
}

/// Opens a file after making sure it is a regular file whose start is not binary.
fn open_text(path: &Path, shown: &str) -> Result<BufReader<File>, ToolError> {
    let meta = std::fs::metadata(path).map_err(|e| io_failure(shown, &e))?;
    check_regular_file(&meta, shown)?;
    let file = File::open(path).map_err(|e| io_failure(shown, &e))?;
    text_reader(file, shown)
}

/// Cuts an overlong line, saying so.
fn shorten(line: &str) -> String {
    let kept = take_chars(line, MAX_LINE_CHARS);
    if kept.len() == line.len() {
        return line.to_string();
    }
    let total = thousands(line.chars().count());
    format!("{kept} [... line cut: {total} characters in all]")
}

/// The numbered lines and, when the window is not the whole file, a footer.
fn render(shown: &str, first: usize, excerpt: &Excerpt) -> Result<String, ToolError> {
    let total = excerpt.total;
    let (Some((from, _)), Some((to, _))) = (excerpt.lines.first(), excerpt.lines.last()) else {
        if total == 0 {
            return Ok(format!("[`{shown}` is empty]"));
        }
        return Err(ToolError::Failed(format!(
            "offset {first} is past the end of `{shown}`, which has {total} line{}",
            crate::output::plural(total)
        )));
    };
    let width = digits(*to);
    let mut out: Vec<String> = excerpt
        .lines
        .iter()
        .map(|(n, l)| numbered(*n, width, l))
        .collect();
    if *to < total {
        let next = to + 1;
        out.push(format!(
            "[lines {from}-{to} of {total}; call read_file with offset={next} to continue]"
        ));
    } else if *from > 1 {
        out.push(format!("[lines {from}-{to} of {total}; end of file]"));
    }
    Ok(out.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{failed, ok, TestWs};
    use pretty_assertions::assert_eq;

    async fn read(ws: &TestWs, args: Value) -> Result<ToolOutput, ToolError> {
        ws.call(&ReadFile, args).await
    }

    #[tokio::test]
    async fn a_picture_is_attached_with_its_size_and_text() {
        use cairn_testkit::pictures::{RECEIPT_PNG, RECEIPT_TEXT};
        let ws = TestWs::new();
        // Named as a note: the bytes say what it is.
        ws.write("knowledge/receipt.md", RECEIPT_PNG);
        let out = read(&ws, json!({"path": "knowledge/receipt.md"}))
            .await
            .unwrap();
        assert_eq!(
            out.content,
            "`knowledge/receipt.md`: a PNG picture, 900 × 220 px, 5,513 bytes."
        );
        let picture = &out.pictures[0];
        assert_eq!((picture.width, picture.height), (900, 220));
        assert!(ws
            .root()
            .join(".cairn/attachments")
            .join(picture.file_name())
            .is_file());
        if cairn_extract::ocr::tesseract().is_some() {
            let text = picture.text.as_deref().unwrap_or_default();
            assert!(text.contains(RECEIPT_TEXT[0]), "{text:?}");
        }
    }

    #[tokio::test]
    async fn a_broken_picture_is_a_clear_error() {
        let ws = TestWs::new();
        let mut cut = cairn_testkit::pictures::RECEIPT_PNG.to_vec();
        cut.truncate(200);
        ws.write("shot.png", cut);
        let why = failed(read(&ws, json!({"path": "shot.png"})).await);
        assert!(
            why.starts_with("`shot.png` cannot be read as a picture"),
            "{why}"
        );
    }

    #[tokio::test]
    async fn numbers_lines_like_cat_n() {
        let ws = TestWs::new();
        ws.write("notes/a.md", "alpha\r\nbeta\n\ngamma");
        let out = ok(read(&ws, json!({"path": "notes/a.md"})).await);
        assert_eq!(out, "1\talpha\n2\tbeta\n3\t\n4\tgamma");
    }

    #[tokio::test]
    async fn windows_have_a_footer_that_says_how_to_go_on() {
        let ws = TestWs::new();
        let text: String = (1..=5400).map(|i| format!("line {i}\n")).collect();
        ws.write("big.txt", &text);
        let out = ok(read(&ws, json!({"path": "big.txt"})).await);
        assert!(out.starts_with("   1\tline 1\n"), "{}", &out[..40]);
        assert!(out.ends_with(
            "2000\tline 2000\n[lines 1-2000 of 5400; call read_file with offset=2001 to continue]"
        ));
        let out = ok(read(
            &ws,
            json!({"path": "big.txt", "offset": 5399, "extra": true}),
        )
        .await);
        assert_eq!(
            out,
            "5399\tline 5399\n5400\tline 5400\n[lines 5399-5400 of 5400; end of file]"
        );
        let out = ok(read(&ws, json!({"path": "big.txt", "offset": 10, "limit": 2})).await);
        assert_eq!(
            out,
            "10\tline 10\n11\tline 11\n[lines 10-11 of 5400; call read_file with offset=12 to continue]"
        );
        let err = failed(read(&ws, json!({"path": "big.txt", "offset": 6000})).await);
        assert_eq!(
            err,
            "offset 6000 is past the end of `big.txt`, which has 5400 lines"
        );
    }

    #[tokio::test]
    async fn long_lines_are_cut_with_a_note() {
        let ws = TestWs::new();
        ws.write("long.txt", "é".repeat(2500));
        let out = ok(read(&ws, json!({"path": "long.txt"})).await);
        assert_eq!(
            out,
            format!(
                "1\t{} [... line cut: 2,500 characters in all]",
                "é".repeat(2000)
            )
        );
    }

    #[tokio::test]
    async fn refuses_what_is_not_a_text_file() {
        let ws = TestWs::new();
        ws.write("prog.bin", b"\x7fELF\x02\x01\x01\0\0\0\0\0");
        ws.write("latin1.txt", b"caf\xe9\n");
        ws.write("empty.txt", "");
        let err = failed(read(&ws, json!({"path": "prog.bin"})).await);
        assert!(err.contains("`prog.bin` looks like a binary file"), "{err}");
        let err = failed(read(&ws, json!({"path": "latin1.txt"})).await);
        assert!(err.contains("`latin1.txt` is not UTF-8 text"), "{err}");
        let err = failed(read(&ws, json!({"path": "nope.md"})).await);
        assert_eq!(err, "`nope.md` does not exist");
        let err = failed(read(&ws, json!({"path": "memory"})).await);
        assert!(err.starts_with("`memory` is a folder"), "{err}");
        assert_eq!(
            ok(read(&ws, json!({"path": "empty.txt"})).await),
            "[`empty.txt` is empty]"
        );
        #[cfg(unix)]
        {
            let fifo = std::process::Command::new("mkfifo")
                .arg(ws.root().join("pipe"))
                .status();
            if fifo.is_ok_and(|s| s.success()) {
                let err = failed(read(&ws, json!({"path": "pipe"})).await);
                assert!(err.contains("not a regular file"), "{err}");
            }
        }
        let bad = read(&ws, json!({"offset": 2})).await;
        assert!(matches!(bad, Err(ToolError::InvalidArguments(m)) if m.contains("path")));
    }

    #[tokio::test]
    async fn paths_outside_the_workspace_are_refused() {
        let ws = TestWs::new();
        for bad in ["../x", "/etc/passwd", "notes/../../etc/passwd"] {
            let err = failed(read(&ws, json!({"path": bad})).await);
            assert!(err.contains("outside the workspace"), "{bad}: {err}");
        }
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn symlinks_that_escape_are_refused() {
        let ws = TestWs::new();
        let _outside = ws.escaping_link();
        for bad in ["link/secret.txt", "secret-link.txt"] {
            let err = failed(read(&ws, json!({"path": bad})).await);
            assert!(
                err.contains("symbolic link that leads outside"),
                "{bad}: {err}"
            );
        }
    }
}
