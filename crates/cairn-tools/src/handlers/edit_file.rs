//! `edit_file`: replace one exact, unique piece of text in a file.

use async_trait::async_trait;
use cairn_memory::Access;
use cairn_protocol::{FileChange, ToolSpec};
use serde::Deserialize;
use serde_json::{json, Value};

use super::files::{forget_change, keep_change, path_arg, preview_before, read_text, resolve};
use super::write_file::{write_target, written_failure};
use crate::output::{line_count, plural};
use crate::{parse_args, Tool, ToolCtx, ToolError, ToolOutput};

/// At most this many match positions are listed when `old` is ambiguous.
const MAX_LISTED: usize = 10;

/// Arguments of `edit_file`.
#[derive(Debug, Clone, Deserialize)]
pub struct EditFileArgs {
    pub path: String,
    pub old: String,
    pub new: String,
}

/// Replaces one exact occurrence of a text in a file inside the workspace.
pub struct EditFile;

#[async_trait]
impl Tool for EditFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "edit_file".into(),
            description: "Replace one piece of text in an existing file. `old` must appear in the \
                file exactly once, character for character (spaces, indentation and line breaks \
                included; leave out the line-number prefixes read_file shows). If it appears \
                several times, include more surrounding lines to make it unique. Read the file \
                first."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "File path relative to the workspace root."
                    },
                    "old": {
                        "type": "string",
                        "description": "The exact text to replace; must occur exactly once in the file."
                    },
                    "new": {
                        "type": "string",
                        "description": "The text to put in its place (empty to delete `old`)."
                    }
                },
                "required": ["path", "old", "new"]
            }),
        }
    }

    fn writes(&self, args: &Value) -> Option<String> {
        path_arg(args)
    }

    async fn preview(
        &self,
        args: &Value,
        workspace: &cairn_memory::Workspace,
    ) -> Option<FileChange> {
        let args: EditFileArgs = serde_json::from_value(args.clone()).ok()?;
        check_args(&args).ok()?;
        let (path, before) = preview_before(workspace, &args.path).await?;
        let before = before?;
        let edit = locate(&before, &args.old, &args.new, &path).ok()?;
        let after = apply(&before, &edit);
        Some(FileChange {
            path,
            before: Some(before),
            after,
        })
    }

    async fn call(&self, args: Value, ctx: ToolCtx) -> Result<ToolOutput, ToolError> {
        let args: EditFileArgs = parse_args(args)?;
        check_args(&args)?;
        let path = resolve(&ctx, &args.path, Access::Write)?;
        let shown = ctx.workspace.relative(&path);
        let (target, real) = write_target(&ctx, &path, &shown).await?;
        let content = read_text(&target, &shown).await?;
        let edit = locate(&content, &args.old, &args.new, &shown)?;
        let updated = apply(&content, &edit);
        let kept = keep_change(
            &ctx,
            "edit_file",
            &shown,
            Some(content.clone().into_bytes()),
            &updated,
        )
        .await?;
        // Replaced only if the file still holds what was read, at that very moment: a save
        // from the user's editor meanwhile is never overwritten by an edit of older text.
        let root = ctx.workspace.root().to_path_buf();
        let (rel, read, bytes) = (shown.clone(), content.clone(), updated.clone());
        let swapped = tokio::task::spawn_blocking(move || {
            cairn_memory::beneath::replace_if_exact(&root, &real, &rel, bytes.as_bytes(), |now| {
                now == Some(read.as_bytes())
            })
        })
        .await
        .map_err(|e| ToolError::Failed(format!("`{shown}` could not be written: {e}")))
        .and_then(|swapped| swapped.map_err(|e| written_failure(&shown, e)));
        let swapped = match swapped {
            Ok(swapped) => swapped,
            Err(e) => {
                forget_change(&ctx, kept).await;
                return Err(e);
            }
        };
        if swapped == cairn_memory::beneath::Swap::Kept {
            forget_change(&ctx, kept).await;
            return Err(ToolError::Failed(format!(
                "`{shown}` changed while it was being edited (saved from an editor?); \
                 nothing was written: read it again and redo the edit"
            )));
        }
        Ok(ToolOutput::ok(report(
            &shown,
            &content,
            &edit,
            line_count(&updated),
        )))
    }
}

fn check_args(args: &EditFileArgs) -> Result<(), ToolError> {
    if args.old.is_empty() {
        return Err(ToolError::InvalidArguments(
            "`old` is empty: give the exact text to replace (to write a whole file, use write_file)"
                .into(),
        ));
    }
    if args.old == args.new {
        return Err(ToolError::InvalidArguments(
            "`old` and `new` are the same, so nothing would change".into(),
        ));
    }
    Ok(())
}

/// `content` with the edit made.
fn apply(content: &str, edit: &Edit) -> String {
    let mut updated = String::with_capacity(content.len() + edit.new.len());
    updated.push_str(&content[..edit.at]);
    updated.push_str(&edit.new);
    updated.push_str(&content[edit.at + edit.old.len()..]);
    updated
}

/// The one place to change, with `old` and `new` adapted to the file's line breaks.
#[derive(Debug)]
struct Edit {
    at: usize,
    old: String,
    new: String,
}

/// Finds the single occurrence of `old`; explains to the model why there is none or several.
fn locate(content: &str, old: &str, new: &str, shown: &str) -> Result<Edit, ToolError> {
    let mut edit = Edit {
        at: 0,
        old: old.to_string(),
        new: new.to_string(),
    };
    let mut found = find_all(content, old);
    if found.is_empty() && content.contains("\r\n") && !old.contains('\r') {
        // The model writes `\n`; this file uses Windows line breaks.
        edit.old = old.replace('\n', "\r\n");
        edit.new = new.replace('\n', "\r\n");
        found = find_all(content, &edit.old);
    }
    match found.as_slice() {
        [] => Err(ToolError::Failed(not_found(content, old, shown))),
        [at] => {
            edit.at = *at;
            Ok(edit)
        }
        many => Err(ToolError::Failed(ambiguous(content, many, shown))),
    }
}

/// Every byte offset where `needle` starts, overlapping matches included.
fn find_all(haystack: &str, needle: &str) -> Vec<usize> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(i) = haystack[from..].find(needle) {
        let at = from + i;
        found.push(at);
        from = at + haystack[at..].chars().next().map_or(1, char::len_utf8);
    }
    found
}

/// 1-based line number of byte offset `at`.
fn line_at(content: &str, at: usize) -> usize {
    content[..at].matches('\n').count() + 1
}

/// The last line `text` reaches when it starts on line `first` (a final line break ends the
/// last line rather than starting another).
fn last_line(first: usize, text: &str) -> usize {
    first
        + text
            .strip_suffix('\n')
            .unwrap_or(text)
            .matches('\n')
            .count()
}

fn lines(first: usize, last: usize) -> String {
    if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    }
}

fn not_found(content: &str, old: &str, shown: &str) -> String {
    let mut message = format!("`old` was not found in `{shown}`.");
    if let Some(at) = find_ignoring_whitespace(content, old) {
        message.push_str(&format!(
            " It matches at line {} if whitespace is ignored, so spaces, tabs or line breaks \
             differ: read the file again and copy the text exactly.",
            line_at(content, at)
        ));
    } else if has_line_number_prefixes(old) {
        message.push_str(
            " `old` seems to include the line-number prefixes that read_file shows; leave them out.",
        );
    } else {
        message.push_str(
            " The file may differ from what you remember: read it again and copy the text exactly.",
        );
    }
    message
}

fn ambiguous(content: &str, found: &[usize], shown: &str) -> String {
    let listed: Vec<String> = found
        .iter()
        .take(MAX_LISTED)
        .map(|at| line_at(content, *at).to_string())
        .collect();
    let more = if found.len() > MAX_LISTED {
        ", ..."
    } else {
        ""
    };
    format!(
        "`old` matches {} times in `{shown}` (at lines {}{more}); include more of the \
         surrounding lines in `old` so that it matches exactly once",
        found.len(),
        listed.join(", ")
    )
}

/// Byte offset in `content` where `old` starts when all whitespace is left out of both.
fn find_ignoring_whitespace(content: &str, old: &str) -> Option<usize> {
    let needle: String = old.chars().filter(|c| !c.is_whitespace()).collect();
    if needle.is_empty() {
        return None;
    }
    let mut squashed = String::with_capacity(content.len());
    let mut origin = Vec::with_capacity(content.len());
    for (i, c) in content.char_indices().filter(|(_, c)| !c.is_whitespace()) {
        squashed.push(c);
        origin.extend(std::iter::repeat_n(i, c.len_utf8()));
    }
    squashed
        .find(&needle)
        .and_then(|at| origin.get(at).copied())
}

/// Whether every non-empty line of `old` starts like `  12\t`.
fn has_line_number_prefixes(old: &str) -> bool {
    let prefixed = |line: &str| {
        let rest = line
            .trim_start()
            .trim_start_matches(|c: char| c.is_ascii_digit());
        rest.len() < line.trim_start().len() && rest.starts_with('\t')
    };
    let mut lines = old.lines().filter(|l| !l.trim().is_empty()).peekable();
    lines.peek().is_some() && lines.all(prefixed)
}

fn report(shown: &str, before: &str, edit: &Edit, total: usize) -> String {
    let first = line_at(before, edit.at);
    let old = lines(first, last_line(first, &edit.old));
    let tail = format!("the file now has {total} line{}", plural(total));
    if edit.new.is_empty() {
        return format!("edited {shown}: removed the text on {old}; {tail}");
    }
    let new = lines(first, last_line(first, &edit.new));
    format!("edited {shown}: replaced {old}; the new text is on {new}; {tail}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::test_support::{failed, ok, TestWs};
    use pretty_assertions::assert_eq;

    async fn edit(ws: &TestWs, old: &str, new: &str) -> Result<ToolOutput, ToolError> {
        ws.call(
            &EditFile,
            json!({"path": "notes/a.md", "old": old, "new": new}),
        )
        .await
    }

    const TEXT: &str = "# Plan\n\n- buy milk\n- call Ann\n- buy milk\n";

    #[tokio::test]
    async fn replaces_a_unique_match_and_says_where() {
        let ws = TestWs::new();
        ws.write("notes/a.md", TEXT);
        let out = ok(edit(&ws, "- call Ann\n", "- call Ann\n- call Bob\n").await);
        assert_eq!(
            out,
            "edited notes/a.md: replaced line 4; the new text is on lines 4-5; the file now has 6 lines"
        );
        assert_eq!(
            ws.read("notes/a.md"),
            "# Plan\n\n- buy milk\n- call Ann\n- call Bob\n- buy milk\n"
        );
        let out = ok(edit(&ws, "\n- call Bob", "").await);
        assert_eq!(
            out,
            "edited notes/a.md: removed the text on lines 4-5; the file now has 5 lines"
        );
    }

    #[tokio::test]
    async fn an_ambiguous_match_names_the_lines() {
        let ws = TestWs::new();
        ws.write("notes/a.md", TEXT);
        let err = failed(edit(&ws, "- buy milk", "- buy oat milk").await);
        assert_eq!(
            err,
            "`old` matches 2 times in `notes/a.md` (at lines 3, 5); include more of the \
             surrounding lines in `old` so that it matches exactly once"
        );
        assert_eq!(ws.read("notes/a.md"), TEXT, "nothing was written");
        ws.write("notes/b.md", "aaa");
        let result = ws.call(
            &EditFile,
            json!({"path": "notes/b.md", "old": "aa", "new": "b"}),
        );
        let err = failed(result.await);
        assert!(
            err.starts_with("`old` matches 2 times"),
            "overlapping matches count: {err}"
        );
    }

    #[tokio::test]
    async fn a_missing_match_gets_a_useful_hint() {
        let ws = TestWs::new();
        ws.write("notes/a.md", TEXT);
        let err = failed(edit(&ws, "- call Bob", "x").await);
        assert_eq!(
            err,
            "`old` was not found in `notes/a.md`. The file may differ from what you remember: \
             read it again and copy the text exactly."
        );
        let err = failed(edit(&ws, "-  call\tAnn", "x").await);
        assert!(
            err.contains("It matches at line 4 if whitespace is ignored"),
            "{err}"
        );
        let err = failed(edit(&ws, "3\t- buy milks", "x").await);
        assert!(err.contains("line-number prefixes"), "{err}");
    }

    #[tokio::test]
    async fn bad_arguments_are_refused() {
        let ws = TestWs::new();
        ws.write("notes/a.md", TEXT);
        assert!(matches!(
            edit(&ws, "", "x").await,
            Err(ToolError::InvalidArguments(_))
        ));
        assert!(matches!(
            edit(&ws, "# Plan", "# Plan").await,
            Err(ToolError::InvalidArguments(_))
        ));
        let missing = ws
            .call(
                &EditFile,
                json!({"path": "nope.md", "old": "a", "new": "b"}),
            )
            .await;
        assert_eq!(failed(missing), "`nope.md` does not exist");
        ws.write("bin.dat", b"a\0b");
        let binary = ws
            .call(
                &EditFile,
                json!({"path": "bin.dat", "old": "a", "new": "b"}),
            )
            .await;
        assert!(failed(binary).contains("binary"));
    }

    #[tokio::test]
    async fn windows_line_breaks_are_kept() {
        let ws = TestWs::new();
        ws.write("notes/a.md", "one\r\ntwo\r\n");
        ok(edit(&ws, "one\ntwo", "one\n1.5\ntwo").await);
        assert_eq!(ws.read("notes/a.md"), "one\r\n1.5\r\ntwo\r\n");
    }

    #[tokio::test]
    async fn paths_that_escape_are_refused() {
        let ws = TestWs::new();
        #[cfg(unix)]
        let outside = ws.escaping_link();
        let mut bad = vec!["../a.md", "/etc/hostname", ".cairn/x"];
        if cfg!(unix) {
            bad.extend(["link/secret.txt", "secret-link.txt"]);
        }
        for path in bad {
            let result = ws
                .call(&EditFile, json!({"path": path, "old": "top", "new": "x"}))
                .await;
            let err = failed(result);
            assert!(
                err.contains("outside") || err.contains(".cairn/"),
                "{path}: {err}"
            );
        }
        #[cfg(unix)]
        assert_eq!(
            std::fs::read_to_string(outside.path().join("secret.txt")).unwrap(),
            "top secret\n"
        );
    }

    #[tokio::test]
    async fn an_edit_is_kept_for_revert() {
        let ws = TestWs::new();
        ws.write("notes/a.md", TEXT);
        ok(edit(&ws, "- call Ann\n", "- call Bob\n").await);
        let changes = cairn_memory::changes::list(&ws.ctx.workspace, "session-1").unwrap();
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].note.tool, "edit_file");
        assert_eq!(changes[0].before.as_deref(), Some(TEXT));
        assert_eq!(changes[0].after, ws.read("notes/a.md"));
    }
}
