//! Prompt templates: `prompts/<name>.md` in the workspace, with YAML front matter
//! (`description`, optional `arguments`: the names of what it takes, in order) and the
//! prompt as the body. `/name args` in a message is replaced by the body with `$1` … `$9`
//! set to the arguments (split as a shell splits words, so `"two words"` is one) and
//! `$ARGUMENTS` (or `$@`) to all of them as typed; `$$` is a `$`. Files are read beneath
//! the workspace, links never followed out of it.

use std::path::Path;

use cairn_memory::beneath::{self, EntryKind};
use serde::Deserialize;

use crate::frontmatter::{self, NameList};

/// The prompts folder, relative to the workspace root.
pub const FOLDER: &str = "prompts";
const MAX_BYTES: u64 = 64 << 10;

/// One prompt template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptTemplate {
    pub name: String,
    pub description: String,
    /// The names of its arguments, in order (`$1` is the first), as shown in menus.
    pub arguments: Vec<String>,
    pub body: String,
}

impl PromptTemplate {
    /// Where it is, relative to the workspace.
    pub fn path(&self) -> String {
        format!("{FOLDER}/{}.md", self.name)
    }

    /// How it is called: `/name <first> <second>`.
    pub fn usage(&self) -> String {
        let mut usage = format!("/{}", self.name);
        for argument in &self.arguments {
            usage.push_str(&format!(" <{argument}>"));
        }
        usage
    }

    /// The body with the arguments put in: `$1` … `$9`, `$ARGUMENTS` / `$@` (all of them
    /// as typed), `$$` (a `$`). A `$` before anything else stays as it is; an argument
    /// not given is empty.
    pub fn expand(&self, args: &str) -> String {
        let args = args.trim();
        let words = shlex::split(args)
            .unwrap_or_else(|| args.split_whitespace().map(str::to_string).collect());
        let mut out = String::with_capacity(self.body.len() + args.len());
        let mut rest = self.body.as_str();
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let (put, used) = if after.starts_with("ARGUMENTS") {
                (args.to_string(), "ARGUMENTS".len())
            } else if after.starts_with('@') {
                (args.to_string(), 1)
            } else if after.starts_with('$') {
                ("$".to_string(), 1)
            } else if let Some(d) = after.chars().next().and_then(|c| c.to_digit(10)) {
                let word = (d as usize)
                    .checked_sub(1)
                    .and_then(|i| words.get(i).cloned());
                match d {
                    0 => ("$0".to_string(), 1),
                    _ => (word.unwrap_or_default(), 1),
                }
            } else {
                ("$".to_string(), 0)
            };
            out.push_str(&put);
            rest = &after[used..];
        }
        out.push_str(rest);
        out
    }
}

/// The templates found, and the ones left out with why.
#[derive(Debug, Default)]
pub struct Prompts {
    pub prompts: Vec<PromptTemplate>,
    /// `prompts/<name>.md: what is wrong`, one per template left out.
    pub problems: Vec<String>,
}

impl Prompts {
    pub fn get(&self, name: &str) -> Option<&PromptTemplate> {
        self.prompts.iter().find(|p| p.name == name)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FrontMatter {
    description: Option<String>,
    #[serde(alias = "argument-names", alias = "args")]
    arguments: Option<NameList>,
}

/// The workspace's prompt templates, sorted by name.
pub fn load(workspace: &Path) -> Prompts {
    let mut found = Prompts::default();
    let Ok(entries) = beneath::entries(workspace, FOLDER) else {
        return found;
    };
    let mut names: Vec<String> = entries
        .into_iter()
        .filter(|e| matches!(e.kind, EntryKind::File | EntryKind::Symlink))
        .filter_map(|e| {
            let name = e.name.to_string_lossy().to_string();
            name.strip_suffix(".md").map(str::to_string)
        })
        .filter(|name| !name.starts_with('.'))
        .collect();
    names.sort();
    for name in names {
        let rel = format!("{FOLDER}/{name}.md");
        let parsed = beneath::read_to_string(workspace, &rel, MAX_BYTES)
            .map_err(|e| e.to_string())
            .and_then(|text| parse(&name, &text));
        match parsed {
            Ok(prompt) => found.prompts.push(prompt),
            Err(problem) => found.problems.push(format!("{rel}: {problem}")),
        }
    }
    found
}

/// Parses `prompts/<name>.md`.
pub fn parse(name: &str, text: &str) -> Result<PromptTemplate, String> {
    let name = frontmatter::checked_name(name.to_string())?;
    let (front, body): (FrontMatter, &str) = frontmatter::parse(text)?;
    let description = frontmatter::description(front.description, "what the prompt asks")?;
    let body = body.trim().to_string();
    if body.is_empty() {
        return Err("the prompt is empty (it goes after the front matter)".into());
    }
    Ok(PromptTemplate {
        name,
        description,
        arguments: front.arguments.map(NameList::names).unwrap_or_default(),
        body,
    })
}

/// The message a template makes of `message` when it is `/name args` and `name` is one of
/// `prompts`: the template and the expanded text.
pub fn expand<'a>(prompts: &'a Prompts, message: &str) -> Option<(&'a PromptTemplate, String)> {
    let (name, args) = crate::skills::invocation(message)?;
    let template = prompts.get(name)?;
    Some((template, template.expand(args)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn template(body: &str) -> PromptTemplate {
        PromptTemplate {
            name: "t".into(),
            description: "d".into(),
            arguments: vec!["file".into(), "focus".into()],
            body: body.into(),
        }
    }

    #[test]
    fn arguments_are_put_in_by_position_and_whole() {
        let t = template("Review $1 for $2.\nAll: $ARGUMENTS | $@ | costs $$5 | $x | $0 | $3.");
        assert_eq!(
            t.expand(r#"src/main.rs "error handling" extra"#),
            "Review src/main.rs for error handling.\nAll: src/main.rs \"error handling\" extra \
             | src/main.rs \"error handling\" extra | costs $5 | $x | $0 | extra."
        );
        // Missing arguments are empty; an unbalanced quote splits on spaces instead.
        assert_eq!(
            t.expand(""),
            "Review  for .\nAll:  |  | costs $5 | $x | $0 | ."
        );
        assert_eq!(
            template("[$1] [$2]").expand("\"open ended"),
            "[\"open] [ended]"
        );
        // What an argument holds is never expanded again.
        assert_eq!(template("$1 / $2").expand("$2 x"), "$2 / x");
        assert_eq!(t.usage(), "/t <file> <focus>");
    }

    #[test]
    fn templates_load_sorted_and_bad_ones_are_reported() {
        let ws = tempfile::tempdir().unwrap();
        let dir = ws.path().join(FOLDER);
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
        write(
            "review.md",
            "---\ndescription: Review a file\narguments: [file, focus]\n---\nReview $1 for $2.\n",
        );
        write(
            "plan.md",
            "---\ndescription: >-\n  Plan the\n  day\n---\nPlan my day: $ARGUMENTS\n",
        );
        write("empty.md", "---\ndescription: nothing\n---\n\n");
        write("Bad Name.md", "---\ndescription: x\n---\nx\n");
        write("notes.txt", "not a template");
        let found = load(ws.path());
        let names: Vec<&str> = found.prompts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["plan", "review"]);
        assert_eq!(found.get("plan").unwrap().description, "Plan the day");
        assert_eq!(found.get("review").unwrap().arguments, ["file", "focus"]);
        assert_eq!(found.problems.len(), 2, "{:?}", found.problems);
        let (t, text) = expand(&found, "/review lib.rs naming").unwrap();
        assert_eq!(
            (t.name.as_str(), text.as_str()),
            ("review", "Review lib.rs for naming.")
        );
        assert!(expand(&found, "/missing x").is_none());
        assert!(expand(&found, "review x").is_none());
    }

    #[test]
    fn a_link_out_of_the_workspace_is_not_read() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(
            outside.path().join("secret.md"),
            "---\ndescription: leak\n---\nsecret\n",
        )
        .unwrap();
        std::fs::create_dir_all(ws.path().join(FOLDER)).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.md"),
            ws.path().join(FOLDER).join("leak.md"),
        )
        .unwrap();
        let found = load(ws.path());
        assert!(found.prompts.is_empty());
        assert_eq!(found.problems.len(), 1, "{:?}", found.problems);
    }
}
