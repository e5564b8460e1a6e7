//! Which bash commands may run without asking: command prefixes (`git status`, `ls`) from
//! `[tools.bash] allow` / `deny` and from "always allow" answers, judged on the command's
//! syntax tree (tree-sitter-bash), never on split strings.
//!
//! A command line runs without asking only when it is *plain*: simple commands of literal
//! words joined by `;`, `&&`, `||`, `|`, `&` or newlines, with no substitution, expansion,
//! subshell, assignment, control structure or redirection to a file, and every one of them
//! allowed. Anything the walker does not understand makes it ask.

use tree_sitter::{Node, Parser};

/// Programs that run code or other programs they are given, in their arguments, options
/// or a script they read (`tar --checkpoint-action=exec=…`, `rsync -e`, `sort
/// --compress-program`, `zip -TT`, sqlite3's `.shell`, `ssh host cmd`, a pager's or an
/// editor's `!`), so allowing "every `tar` command" would allow everything: "always" is
/// never offered for them. Versioned names (`python3.12`, `node20`) count as their program.
const RUNS_ANYTHING: [&str; 78] = [
    "bash",
    "sh",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "csh",
    "tcsh",
    "sudo",
    "su",
    "doas",
    "pkexec",
    "runuser",
    "env",
    "eval",
    "exec",
    "xargs",
    "parallel",
    "nohup",
    "timeout",
    "nice",
    "ionice",
    "setsid",
    "stdbuf",
    "unbuffer",
    "time",
    "chroot",
    "flock",
    "watch",
    "script",
    "expect",
    "strace",
    "ltrace",
    "gdb",
    "systemd-run",
    "python",
    "pypy",
    "node",
    "nodejs",
    "npx",
    "pnpx",
    "bunx",
    "deno",
    "bun",
    "perl",
    "ruby",
    "php",
    "lua",
    "tclsh",
    "command",
    "builtin",
    "source",
    ".",
    "find",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "sed",
    "tar",
    "sort",
    "rsync",
    "zip",
    "sqlite3",
    "ssh",
    "scp",
    "sftp",
    "less",
    "more",
    "man",
    "vi",
    "vim",
    "nvim",
    "emacs",
    "nano",
    "ed",
    "busybox",
    "tmux",
];

/// Subcommands of git that run a program an option names (`git grep -O`, `git
/// difftool`), or any command (`git submodule foreach`): "always" is never offered for them.
const GIT_RUNS_ANYTHING: [&str; 6] = [
    "grep",
    "difftool",
    "mergetool",
    "submodule",
    "bisect",
    "rebase",
];

/// Programs that run the command in their arguments; the deny rules look through them
/// (`env git push`, `command git push`, `nice -n 5 git push`).
const WRAPPERS: [&str; 14] = [
    "env", "command", "builtin", "exec", "nice", "ionice", "nohup", "setsid", "stdbuf", "time",
    "timeout", "sudo", "doas", "xargs",
];

/// Options of those wrappers that take a value as the next word.
const WRAPPER_VALUE_OPTIONS: [&str; 12] = [
    "-u", "-n", "-a", "-c", "-s", "-k", "-o", "-e", "-i", "-g", "-p", "--signal",
];

/// How deep the syntax walk goes; a line nested deeper is not plain (it asks).
const MAX_DEPTH: usize = 128;

/// Programs whose first argument names what they do, so their prefix keeps it
/// (`git status`, not `git`).
const HAS_SUBCOMMANDS: [&str; 16] = [
    "git",
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "docker",
    "kubectl",
    "go",
    "pip",
    "pip3",
    "apt",
    "apt-get",
    "systemctl",
    "make",
    "gh",
    "brew",
];

/// `[tools.bash] allow` and `deny`, as words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandRules {
    pub allow: Vec<Vec<String>>,
    pub deny: Vec<Vec<String>>,
}

impl CommandRules {
    pub fn new(allow: &[String], deny: &[String]) -> Self {
        let words = |list: &[String]| -> Vec<Vec<String>> {
            list.iter()
                .map(|p| words_of(p))
                .filter(|w| !w.is_empty())
                .collect()
        };
        Self {
            allow: words(allow),
            deny: words(deny),
        }
    }

    /// The deny rule one of the commands matches, as written. Commands are compared as
    /// bash would run them: unquoted (`g''it push`, `\git push`), by program name
    /// (`/usr/bin/git push`) and through wrappers (`env git push`, `command git push`).
    pub fn denied(&self, parsed: &Parsed) -> Option<String> {
        let rule = self.deny.iter().find(|rule| {
            parsed
                .commands
                .iter()
                .any(|words| ran(words).iter().any(|run| starts_with(run, rule)))
        })?;
        Some(rule.join(" "))
    }

    /// Whether the line may run without asking: plain, and every command allowed by a
    /// rule or by one of the `remembered` prefixes.
    pub fn allows(&self, parsed: &Parsed, remembered: &[Vec<String>]) -> bool {
        parsed.plain
            && parsed.commands.iter().all(|words| {
                self.allow
                    .iter()
                    .chain(remembered)
                    .any(|prefix| starts_with(words, prefix))
            })
    }
}

/// The prefixes "always allow" would remember for a line: one per command, and `None`
/// when the line is not plain or one of its programs runs arbitrary code.
pub fn always_prefixes(parsed: &Parsed) -> Option<Vec<Vec<String>>> {
    if !parsed.plain {
        return None;
    }
    let mut prefixes: Vec<Vec<String>> = Vec::new();
    for words in &parsed.commands {
        let prefix = prefix_of(words)?;
        if !prefixes.contains(&prefix) {
            prefixes.push(prefix);
        }
    }
    Some(prefixes)
}

/// A command line as the policy sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The literal words of every simple command found (also inside parts that are not
    /// plain, so that a deny rule sees them).
    pub commands: Vec<Vec<String>>,
    /// Nothing but plain simple commands (see the module docs).
    pub plain: bool,
}

/// Parses `line` with the bash grammar.
pub fn parse(line: &str) -> Parsed {
    let mut parser = Parser::new();
    let tree = match parser.set_language(&tree_sitter_bash::LANGUAGE.into()) {
        Ok(()) => parser.parse(line, None),
        Err(_) => None,
    };
    let mut parsed = Parsed {
        commands: Vec::new(),
        plain: true,
    };
    match tree {
        Some(tree) => {
            let root = tree.root_node();
            parsed.plain = !root.has_error();
            walk(root, line.as_bytes(), &mut parsed);
        }
        None => parsed.plain = false,
    }
    if parsed.commands.is_empty() {
        parsed.plain = false;
    }
    parsed
}

/// Walks the tree without recursion (a deeply nested line cannot exhaust the stack);
/// past [`MAX_DEPTH`] the line is not plain and its deeper parts are left unread.
fn walk(root: Node<'_>, src: &[u8], parsed: &mut Parsed) {
    let mut stack = vec![(root, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            parsed.plain = false;
            continue;
        }
        if !visit(node, src, parsed) {
            continue;
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev().map(|c| (c, depth + 1)));
    }
}

/// Judges one node; whether its children are to be walked.
fn visit(node: Node<'_>, src: &[u8], parsed: &mut Parsed) -> bool {
    match node.kind() {
        "command" => {
            let (words, plain) = command_words(node, src);
            parsed.plain &= plain;
            if !words.is_empty() {
                parsed.commands.push(words);
            }
        }
        // Its target is text, not commands to look into.
        "file_redirect" => {
            parsed.plain &= harmless_redirect(text(node, src));
            return false;
        }
        "program"
        | "list"
        | "pipeline"
        | "redirected_statement"
        | "command_name"
        | "word"
        | "number"
        | "string"
        | "string_content"
        | "raw_string"
        | "concatenation"
        | "comment"
        | "\""
        | "&&"
        | "||"
        | ";"
        | "|"
        | "|&"
        | "&"
        | "\n" => {}
        _ => parsed.plain = false,
    }
    true
}

/// The literal words of a simple command, and whether all of it is literal.
fn command_words(node: Node<'_>, src: &[u8]) -> (Vec<String>, bool) {
    let mut words = Vec::new();
    let mut plain = true;
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let word = match child.kind() {
            "command_name" => child.named_child(0).and_then(|w| literal(w, src)),
            kind if is_word(kind) => literal(child, src),
            // Judged by the walk (`2>&1` is fine, `> file` is not).
            "file_redirect" => continue,
            // Arguments that are not words (substitutions, redirects ...) are walked on
            // their own; assignments before the program make it ask.
            _ => {
                plain = false;
                continue;
            }
        };
        // A glob or a brace at a word's start can expand to an option (`*` over a file
        // named `--checkpoint-action=exec=…`): such a line asks, unless `--` came first.
        let leads = text(child, src).starts_with(['*', '?', '[', '{']);
        if leads && child.kind() != "command_name" && !words.iter().any(|w| w == "--") {
            plain = false;
        }
        match word {
            Some(word) => words.push(word),
            None => {
                plain = false;
                if words.is_empty() {
                    // The program itself is not literal (`$X args`): nothing to match.
                    return (Vec::new(), false);
                }
            }
        }
    }
    (words, plain)
}

fn is_word(kind: &str) -> bool {
    matches!(
        kind,
        "word" | "number" | "string" | "raw_string" | "concatenation"
    )
}

/// The value of a literal word as bash would pass it (quotes and backslashes removed);
/// `None` for anything that expands.
fn literal(node: Node<'_>, src: &[u8]) -> Option<String> {
    let raw = text(node, src);
    match node.kind() {
        "word" | "number" if !raw.contains(['$', '`']) && !is_glob_escape(raw) => {
            Some(unescape(raw))
        }
        "raw_string" => Some(raw.trim_matches('\'').to_string()),
        "string" => {
            let mut cursor = node.walk();
            let only_text = node
                .named_children(&mut cursor)
                .all(|c| c.kind() == "string_content");
            (only_text && !raw.contains('\\')).then(|| raw.trim_matches('"').to_string())
        }
        "concatenation" => {
            let mut cursor = node.walk();
            let parts: Option<Vec<String>> = node
                .named_children(&mut cursor)
                .map(|part| literal(part, src))
                .collect();
            parts.map(|p| p.concat())
        }
        _ => None,
    }
}

/// A backslash before a glob character keeps the character literal where bash would
/// otherwise expand it; such words are left to ask rather than be read two ways.
fn is_glob_escape(raw: &str) -> bool {
    ["\\*", "\\?", "\\["].iter().any(|e| raw.contains(e))
}

/// A bare word with its backslashes taken away, as bash reads it (`\git` is `git`).
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next().filter(|c| *c != '\n')),
            c => out.push(c),
        }
    }
    out
}

/// `2>&1`, `>&2`, `>/dev/null`, `2>/dev/null`: redirections that write no file.
fn harmless_redirect(raw: &str) -> bool {
    let compact: String = raw.chars().filter(|c| !c.is_whitespace()).collect();
    let target = compact.trim_start_matches(|c: char| c.is_ascii_digit());
    let target = ["&>>", "&>", ">>", ">&", ">"]
        .iter()
        .find_map(|op| target.strip_prefix(op));
    match target {
        Some("/dev/null") => true,
        Some(fd) => {
            !fd.is_empty() && fd.chars().all(|c| c.is_ascii_digit()) && compact.contains(">&")
        }
        None => false,
    }
}

fn text<'a>(node: Node<'_>, src: &'a [u8]) -> &'a str {
    std::str::from_utf8(&src[node.byte_range()]).unwrap_or("")
}

/// The prefix "always allow" would remember for one simple command; `None` for programs
/// that run arbitrary code, and for a program with subcommands given an option before its
/// subcommand (`git -C x`, `git -c core.pager=…`, `git --exec-path=…`), which would
/// otherwise be remembered as the bare program.
pub fn prefix_of(words: &[String]) -> Option<Vec<String>> {
    let program = words.first()?;
    let name = program_name(program);
    if runs_anything(name) || program.contains('=') {
        return None;
    }
    if !HAS_SUBCOMMANDS.contains(&name) {
        return Some(vec![program.clone()]);
    }
    match words.get(1) {
        Some(sub) if sub.starts_with('-') => None,
        Some(sub) if name == "git" && GIT_RUNS_ANYTHING.contains(&sub.as_str()) => None,
        Some(sub) => Some(vec![program.clone(), sub.clone()]),
        None => Some(vec![program.clone()]),
    }
}

/// The program's name without its folder (`/usr/bin/git` is `git`).
fn program_name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Whether `name` (maybe versioned: `python3.12`, `node20`, `perl5.36`) runs anything.
fn runs_anything(name: &str) -> bool {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    RUNS_ANYTHING.contains(&name) || (!base.is_empty() && RUNS_ANYTHING.contains(&base))
}

/// The commands a simple command runs as deny rules see them: itself with its program
/// named without folder, then whatever each wrapper in front runs.
fn ran(words: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = words;
    while let Some(program) = rest.first() {
        let mut named = rest.to_vec();
        named[0] = program_name(program).to_string();
        let wrapper = WRAPPERS.contains(&named[0].as_str());
        out.push(named);
        if !wrapper {
            break;
        }
        rest = after_wrapper(rest);
    }
    out
}

/// The words after a wrapper and its options, assignments and (for `timeout`) duration.
fn after_wrapper(words: &[String]) -> &[String] {
    let timeout = program_name(&words[0]) == "timeout";
    let mut i = 1;
    while let Some(word) = words.get(i) {
        if word == "--" {
            return &words[i + 1..];
        }
        if WRAPPER_VALUE_OPTIONS.contains(&word.as_str()) {
            i += 2;
        } else if word.starts_with('-') || (word.contains('=') && !word.starts_with('=')) {
            i += 1;
        } else {
            break;
        }
    }
    let skip = if timeout { 1 } else { 0 };
    words.get(i + skip..).unwrap_or(&[])
}

/// Whether `words` start with `prefix`, word by word.
pub fn starts_with(words: &[String], prefix: &[String]) -> bool {
    !prefix.is_empty() && words.len() >= prefix.len() && words[..prefix.len()] == *prefix
}

/// A prefix as written in config.toml (`"git status"`), split into words.
pub fn words_of(prefix: &str) -> Vec<String> {
    prefix.split_whitespace().map(str::to_string).collect()
}

#[cfg(test)]
mod tests;
