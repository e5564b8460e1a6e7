//! `grep`: search file contents with a regular expression.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use cairn_memory::paths::display_relative;
use cairn_memory::Access;
use cairn_protocol::ToolSpec;
use ignore::WalkBuilder;
use regex::Regex;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::files::{blocking, io_failure, resolve};
use crate::output::{looks_binary, plural, take_chars, thousands};
use crate::{parse_args, Tool, ToolCtx, ToolError, ToolOutput};

/// At most this many matching lines are shown.
const MAX_MATCHES: usize = 200;
/// A matching line is shown up to this many characters.
const MAX_LINE_CHARS: usize = 300;
/// Larger files are skipped (logs, dumps).
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Folders never searched (unless asked for by name).
const HIDDEN: &[&str] = &[".cairn", ".git"];

/// Arguments of `grep`.
#[derive(Debug, Clone, Deserialize)]
pub struct GrepArgs {
    pub pattern: String,
    /// File or folder to search; the workspace root when absent.
    #[serde(default)]
    pub path: Option<String>,
}

/// Searches file contents inside the workspace.
pub struct Grep;

#[async_trait]
impl Tool for Grep {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "grep".into(),
            description: "Search the lines of text files for a regular expression (Rust regex \
                syntax; `(?i)` at the start ignores case). Searches one file, or a folder and all \
                its subfolders, skipping binary files and what .gitignore excludes. Prints \
                `path:line: text` for each matching line, at most 200."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": {
                        "type": "string",
                        "description": "Regular expression matched against each line, e.g. `fn \\w+_test` or `(?i)todo`."
                    },
                    "path": {
                        "type": "string",
                        "description": "File or folder to search, relative to the workspace root (default `.`, everything)."
                    }
                },
                "required": ["pattern"]
            }),
        }
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    async fn call(&self, args: Value, ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let args: GrepArgs = parse_args(args)?;
        let regex = Regex::new(&args.pattern).map_err(|e| {
            ToolError::InvalidArguments(format!("`pattern` is not a valid regex: {e}"))
        })?;
        let input = args.path.unwrap_or_else(|| ".".into());
        let start = resolve(&ctx, &input, Access::Read)?;
        let shown = ctx.workspace.relative(&start);
        // The walk starts at the root `start` is under: the workspace, or a folder
        // searched in place (whose own ignore files apply, and whose files are shown
        // under its name).
        let (root, _) = ctx.workspace.locate(&input);
        let folder = ctx.workspace.folder_of(&input).map(|(f, _)| f.name.clone());
        let search = Search {
            root: root.to_path_buf(),
            folder,
            regex,
            cancel: ctx.cancel,
        };
        let name = shown.clone();
        let found = blocking(move || search.run(&start, &name)).await?;
        Ok(ToolOutput::ok(render(&args.pattern, &shown, &found)))
    }
}

/// A search in progress.
struct Search {
    root: PathBuf,
    /// The name of the folder searched in place `root` is, if it is one.
    folder: Option<String>,
    regex: Regex,
    cancel: CancellationToken,
}

/// What a search found.
#[derive(Debug, Default)]
struct Found {
    /// Formatted `path:line: text`, at most [`MAX_MATCHES`].
    lines: Vec<String>,
    matches: usize,
    files_matched: usize,
    files_searched: usize,
}

impl Search {
    /// Searches `start`: the file itself, or every eligible file below the folder.
    fn run(&self, start: &Path, shown: &str) -> Result<Found, ToolError> {
        let start = std::fs::canonicalize(start).map_err(|e| io_failure(shown, &e))?;
        let mut found = Found::default();
        if start.is_file() {
            self.search_file(&start, &mut found);
            return Ok(found);
        }
        // From the root, so that the .gitignore files between the root and `start` apply
        // (and none above the workspace).
        if !self.walk(&self.root, &start, &mut found)? {
            // `start` itself is ignored; it was asked for by name, so search it anyway.
            self.walk(&start, &start, &mut found)?;
        }
        Ok(found)
    }

    /// Walks `from`, searching the files under `start`; returns whether `start` was reached.
    fn walk(&self, from: &Path, start: &Path, found: &mut Found) -> Result<bool, ToolError> {
        let target = start.to_path_buf();
        let walker = WalkBuilder::new(from)
            .hidden(false)
            .parents(false)
            .require_git(false)
            .git_global(false)
            .follow_links(false)
            .sort_by_file_name(|a, b| a.cmp(b))
            .filter_entry(move |e| on_the_way(e.path(), &target))
            .build();
        let mut reached = false;
        for entry in walker {
            if self.cancel.is_cancelled() {
                return Err(ToolError::Aborted);
            }
            let Ok(entry) = entry else { continue };
            reached |= entry.path() == start;
            if entry.file_type().is_some_and(|t| t.is_file()) {
                self.search_file(entry.path(), found);
            }
        }
        Ok(reached)
    }

    /// Adds the matching lines of one file; unreadable, huge and binary files are skipped.
    fn search_file(&self, path: &Path, found: &mut Found) {
        if std::fs::metadata(path).map_or(true, |m| m.len() > MAX_FILE_BYTES) {
            return;
        }
        let Ok(bytes) = std::fs::read(path) else {
            return;
        };
        if looks_binary(&bytes) {
            return;
        }
        found.files_searched += 1;
        let text = String::from_utf8_lossy(&bytes);
        if !self.regex.is_match(&text) {
            return;
        }
        let rel = match &self.folder {
            Some(name) => format!("{name}/{}", display_relative(&self.root, path)),
            None => display_relative(&self.root, path),
        };
        let before = found.matches;
        for (number, line) in text.lines().enumerate() {
            if let Some(hit) = self.regex.find(line) {
                found.matches += 1;
                if found.lines.len() < MAX_MATCHES {
                    let shown = excerpt(line.trim_end_matches('\r'), hit.start());
                    found.lines.push(format!("{rel}:{}: {shown}", number + 1));
                }
            }
        }
        found.files_matched += usize::from(found.matches > before);
    }
}

/// Whether a walk towards `start` visits `path`: a folder on the way down to `start`, or
/// anything below it except private folders.
fn on_the_way(path: &Path, start: &Path) -> bool {
    match path.strip_prefix(start) {
        Ok(rest) => !rest.iter().any(|part| HIDDEN.iter().any(|h| part == *h)),
        Err(_) => start.starts_with(path),
    }
}

/// The line, or a part of it around the match (at byte `at`) when it is too long.
fn excerpt(line: &str, at: usize) -> String {
    let chars = line.chars().count();
    if chars <= MAX_LINE_CHARS {
        return line.to_string();
    }
    let before = line[..at.min(line.len())].chars().count();
    let skip = before
        .saturating_sub(MAX_LINE_CHARS / 3)
        .min(chars - MAX_LINE_CHARS);
    let start = line.char_indices().nth(skip).map_or(0, |(i, _)| i);
    let kept = take_chars(&line[start..], MAX_LINE_CHARS);
    let lead = if skip > 0 { "[...] " } else { "" };
    let trail = if skip + MAX_LINE_CHARS < chars {
        " [...]"
    } else {
        ""
    };
    format!("{lead}{kept}{trail}")
}

fn render(pattern: &str, shown: &str, found: &Found) -> String {
    let searched = format!(
        "{} file{}",
        thousands(found.files_searched),
        plural(found.files_searched)
    );
    if found.matches == 0 {
        return format!("no matches for `{pattern}` in {shown} ({searched} searched)");
    }
    let files = format!(
        "{} file{}",
        thousands(found.files_matched),
        plural(found.files_matched)
    );
    let mut out = found.lines.join("\n");
    let cut = found.matches - found.lines.len();
    if cut > 0 {
        out.push_str(&format!(
            "\n[{} of {} matching lines shown (in {files}); {} more were cut: narrow the pattern \
             or the path]",
            found.lines.len(),
            thousands(found.matches),
            thousands(cut)
        ));
    } else {
        let n = found.matches;
        out.push_str(&format!("\n[{n} matching line{} in {files}]", plural(n)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{failed, ok, TestWs};
    use pretty_assertions::assert_eq;

    async fn grep(ws: &TestWs, args: Value) -> Result<ToolOutput, ToolError> {
        ws.call(&Grep, args).await
    }

    fn setup() -> TestWs {
        let ws = TestWs::new();
        ws.write("notes/a.md", "apple pie\nbanana\nApple tart\n");
        ws.write("notes/sub/b.md", "crab apple\n");
        ws.write(".gitignore", "*.log\nbuild/\n");
        ws.write("notes/.gitignore", "ignored.md\n");
        ws.write("notes/x.log", "apple log\n");
        ws.write("build/out.txt", "apple built\n");
        ws.write("notes/ignored.md", "apple ignored\n");
        ws.write("notes/bin.dat", b"apple\0binary");
        ws.write("notes/.git/config", "apple in git\n");
        ws.write(".cairn/tool-results/r.txt", "apple result\n");
        ws
    }

    #[tokio::test]
    async fn finds_lines_with_workspace_relative_paths() {
        let ws = setup();
        let out = ok(grep(&ws, json!({"pattern": "apple", "path": "notes"})).await);
        assert_eq!(
            out,
            "notes/a.md:1: apple pie\nnotes/sub/b.md:1: crab apple\n[2 matching lines in 2 files]"
        );
        let out = ok(grep(&ws, json!({"pattern": "(?i)^apple"})).await);
        assert_eq!(
            out,
            "notes/a.md:1: apple pie\nnotes/a.md:3: Apple tart\n[2 matching lines in 1 file]"
        );
        let out = ok(grep(&ws, json!({"pattern": "apple", "path": "notes/ignored.md"})).await);
        assert_eq!(
            out,
            "notes/ignored.md:1: apple ignored\n[1 matching line in 1 file]"
        );
        let out = ok(grep(
            &ws,
            json!({"pattern": "apple", "path": ".cairn/tool-results"}),
        )
        .await);
        assert!(
            out.starts_with(".cairn/tool-results/r.txt:1: apple result"),
            "{out}"
        );
    }

    #[tokio::test]
    async fn a_folder_searched_in_place_is_searched_under_its_name_with_its_own_ignores() {
        let outside = tempfile::tempdir().unwrap();
        let notes = outside.path().join("Notes");
        std::fs::create_dir_all(notes.join("trips")).unwrap();
        std::fs::write(notes.join("trips/croatia.md"), "ferry to Hvar\n").unwrap();
        std::fs::write(notes.join("draft.md"), "ferry draft\n").unwrap();
        std::fs::write(notes.join(".gitignore"), "draft.md\n").unwrap();
        let ws = TestWs::with_folders(&[notes]);
        let out = ok(grep(&ws, json!({"pattern": "ferry", "path": "Notes"})).await);
        assert_eq!(
            out,
            "Notes/trips/croatia.md:1: ferry to Hvar\n[1 matching line in 1 file]"
        );
        let out = ok(grep(
            &ws,
            json!({"pattern": "Hvar", "path": "Notes/trips/croatia.md"}),
        )
        .await);
        assert!(out.starts_with("Notes/trips/croatia.md:1:"), "{out}");
    }

    #[tokio::test]
    async fn says_clearly_when_nothing_matches() {
        let ws = setup();
        let out = ok(grep(&ws, json!({"pattern": "cherry", "path": "notes"})).await);
        assert_eq!(out, "no matches for `cherry` in notes (3 files searched)");
    }

    #[tokio::test]
    async fn caps_matches_and_long_lines() {
        let ws = TestWs::new();
        let text: String = (0..250).map(|i| format!("hit {i}\n")).collect();
        ws.write("many.txt", text);
        ws.write(
            "wide.txt",
            format!("{}needle{}", "a".repeat(1000), "b".repeat(1000)),
        );
        let out = ok(grep(&ws, json!({"pattern": "hit", "path": "many.txt"})).await);
        assert_eq!(out.lines().count(), 201);
        assert!(out.ends_with("many.txt:200: hit 199\n[200 of 250 matching lines shown (in 1 file); 50 more were cut: narrow the pattern or the path]"), "{out}");
        let out = ok(grep(&ws, json!({"pattern": "needle", "path": "wide.txt"})).await);
        let line = out.lines().next().unwrap();
        assert!(
            line.starts_with("wide.txt:1: [...] aaa") && line.ends_with("bbb [...]"),
            "{line}"
        );
        assert!(
            line.contains("needle") && line.chars().count() < 340,
            "{line}"
        );
    }

    #[tokio::test]
    async fn bad_patterns_and_paths_are_refused() {
        let ws = setup();
        let bad = grep(&ws, json!({"pattern": "(unclosed"})).await;
        assert!(
            matches!(&bad, Err(ToolError::InvalidArguments(m)) if m.contains("regex")),
            "{bad:?}"
        );
        for path in ["..", "/etc", "notes/../../"] {
            let err = failed(grep(&ws, json!({"pattern": "root", "path": path})).await);
            assert!(err.contains("outside the workspace"), "{path}: {err}");
        }
        assert_eq!(
            failed(grep(&ws, json!({"pattern": "x", "path": "nope"})).await),
            "`nope` does not exist"
        );
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn symlinks_that_escape_are_neither_searched_nor_followed() {
        let ws = TestWs::new();
        let _outside = ws.escaping_link();
        for path in ["link", "link/secret.txt", "secret-link.txt"] {
            let err = failed(grep(&ws, json!({"pattern": "secret", "path": path})).await);
            assert!(
                err.contains("symbolic link that leads outside"),
                "{path}: {err}"
            );
        }
        let out = ok(grep(&ws, json!({"pattern": "top secret"})).await);
        assert!(out.starts_with("no matches"), "{out}");
    }

    #[tokio::test]
    async fn a_cancelled_search_stops() {
        let ws = setup();
        ws.ctx.cancel.cancel();
        assert_eq!(
            grep(&ws, json!({"pattern": "apple"})).await,
            Err(ToolError::Aborted)
        );
    }
}
