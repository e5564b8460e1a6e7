//! Subagent definitions: `subagents/<name>.md`, YAML front matter (name, description,
//! model, tools, max_steps, timeout_s) and a body that is the subagent's instructions.

use std::path::Path;

use cairn_memory::beneath::{self, EntryKind};
use serde::Deserialize;

use crate::frontmatter::{self, NameList};

/// The folder of definitions, relative to the workspace root.
pub const FOLDER: &str = "subagents";
/// A definition larger than this is refused.
const MAX_BYTES: u64 = 256 << 10;

/// One subagent a model can start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentDef {
    pub name: String,
    pub description: String,
    /// `provider/model`, `provider` or `model`; `None`: the parent's model.
    pub model: Option<String>,
    /// The tools it may use (within the parent's); `None`: all of the parent's.
    pub tools: Option<Vec<String>>,
    pub max_steps: Option<u32>,
    pub timeout_s: Option<u64>,
    pub instructions: String,
    /// Workspace-relative path of the file.
    pub path: String,
}

/// The definitions of a workspace and the files that could not be used.
#[derive(Debug, Default)]
pub struct Definitions {
    pub agents: Vec<SubagentDef>,
    /// `path: line N: what is wrong`, one per file left out.
    pub problems: Vec<String>,
}

impl Definitions {
    pub fn get(&self, name: &str) -> Option<&SubagentDef> {
        self.agents.iter().find(|a| a.name == name)
    }

    pub fn names(&self) -> Vec<&str> {
        self.agents.iter().map(|a| a.name.as_str()).collect()
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
struct FrontMatter {
    name: Option<String>,
    description: Option<String>,
    model: Option<String>,
    tools: Option<NameList>,
    max_steps: Option<u32>,
    timeout_s: Option<u64>,
}

/// Reads every `subagents/*.md` beneath `root`, sorted by name.
pub fn load(root: &Path) -> Definitions {
    let mut found = Definitions::default();
    let Ok(entries) = beneath::entries(root, FOLDER) else {
        return found;
    };
    let mut files: Vec<String> = entries
        .into_iter()
        .filter(|e| e.kind == EntryKind::File)
        .map(|e| e.name.to_string_lossy().to_string())
        .filter(|name| name.ends_with(".md") && !name.starts_with('.'))
        .collect();
    files.sort();
    for file in files {
        let path = format!("{FOLDER}/{file}");
        let parsed = beneath::read_to_string(root, &path, MAX_BYTES)
            .map_err(|e| e.to_string())
            .and_then(|text| parse(&path, &text));
        match parsed {
            Ok(def) if found.get(&def.name).is_some() => found.problems.push(format!(
                "{path}: the name `{}` is taken by another definition",
                def.name
            )),
            Ok(def) => found.agents.push(def),
            Err(problem) => found.problems.push(format!("{path}: {problem}")),
        }
    }
    found.agents.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

/// Parses one definition; the error says the line when it can.
pub fn parse(path: &str, text: &str) -> Result<SubagentDef, String> {
    let (front, body): (FrontMatter, &str) = frontmatter::parse(text)?;
    let stem = Path::new(path)
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let name = frontmatter::checked_name(front.name.unwrap_or(stem))?;
    let description = frontmatter::description(front.description, "what the subagent is for")?;
    Ok(SubagentDef {
        name,
        description,
        model: front.model.filter(|m| !m.trim().is_empty()),
        tools: front.tools.map(NameList::names),
        max_steps: front.max_steps,
        timeout_s: front.timeout_s,
        instructions: body.trim().to_string(),
        path: path.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_definition_parses_with_its_instructions() {
        let text = "---\nname: researcher\ndescription: >\n  Finds things\n  in notes\nmodel: openai/gpt-4o-mini\ntools: [read_file, grep]\nmax_steps: 8\ntimeout_s: 60\n---\n\nRead, never write.\n";
        let def = parse("subagents/researcher.md", text).unwrap();
        assert_eq!(
            def,
            SubagentDef {
                name: "researcher".into(),
                description: "Finds things in notes".into(),
                model: Some("openai/gpt-4o-mini".into()),
                tools: Some(vec!["read_file".into(), "grep".into()]),
                max_steps: Some(8),
                timeout_s: Some(60),
                instructions: "Read, never write.".into(),
                path: "subagents/researcher.md".into(),
            }
        );
        let listed = parse(
            "subagents/x.md",
            "---\ndescription: d\ntools: read_file, grep\n---\n",
        )
        .unwrap();
        assert_eq!(listed.name, "x");
        assert_eq!(listed.tools.unwrap(), vec!["read_file", "grep"]);
    }

    #[test]
    fn bad_files_say_what_and_where() {
        let err = parse(
            "subagents/a.md",
            "---\ndescription: d\nmax_steps: lots\n---\n",
        )
        .unwrap_err();
        assert!(err.starts_with("line 3: "), "{err}");
        let err = parse("subagents/a.md", "no front matter").unwrap_err();
        assert!(err.starts_with("line 1: "), "{err}");
        let err = parse("subagents/a.md", "---\nname: a\n---\n").unwrap_err();
        assert!(err.contains("description"), "{err}");
        let err = parse(
            "subagents/a.md",
            "---\nname: \"../x\"\ndescription: d\n---\n",
        )
        .unwrap_err();
        assert!(err.contains("lowercase"), "{err}");
        assert!(parse("subagents/a.md", "---\ndescription: [unclosed\n---\n").is_err());
    }

    #[test]
    fn the_folder_lists_good_files_and_reports_bad_ones() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join(FOLDER);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("b.md"), "---\ndescription: B\n---\nbody").unwrap();
        std::fs::write(folder.join("a.md"), "---\ndescription: A\n---\nbody").unwrap();
        std::fs::write(folder.join("c.md"), "---\nname: a\ndescription: C\n---\n").unwrap();
        std::fs::write(folder.join("d.md"), "---\ndescription: \"\n---\n").unwrap();
        std::fs::write(folder.join("notes.txt"), "ignored").unwrap();
        let found = load(dir.path());
        assert_eq!(found.names(), vec!["a", "b"]);
        assert_eq!(found.problems.len(), 2, "{:?}", found.problems);
        assert!(found.problems[0].starts_with("subagents/c.md: "));
        assert!(found.problems[1].starts_with("subagents/d.md: line "));
    }
}
