//! Skills in the Agent Skills layout: `skills/<name>/SKILL.md` in the workspace and in
//! the user's config folder (`<config dir>/skills/`), with YAML front matter (`name`,
//! `description`, optional `allowed-tools`) and instructions as the body, beside any
//! files the skill uses (scripts, references). A workspace skill hides a user skill of
//! the same name. Files are read beneath each folder, links never followed out of it.

use std::path::{Path, PathBuf};

use cairn_memory::beneath::{self, EntryKind};
use serde::Deserialize;

use crate::frontmatter::{self, NameList};

/// The skills folder, relative to the workspace root (and to the config folder).
pub const FOLDER: &str = "skills";
const MAX_BYTES: u64 = 256 << 10;
/// The most characters of a description (the Agent Skills limit).
const MAX_DESCRIPTION: usize = 1024;

/// Where a skill lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillHome {
    /// `<workspace>/skills/<name>/`.
    Workspace,
    /// `<dir>/<name>/`, the user's own skills outside any workspace.
    User(PathBuf),
}

/// One skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The tools it expects (`allowed-tools`), as the skill says; shown, not enforced.
    pub allowed_tools: Option<Vec<String>>,
    pub instructions: String,
    pub home: SkillHome,
}

impl Skill {
    /// Where its SKILL.md is, as shown to the model and the user.
    pub fn shown_path(&self) -> String {
        match &self.home {
            SkillHome::Workspace => format!("{FOLDER}/{}/SKILL.md", self.name),
            SkillHome::User(dir) => dir.join(&self.name).join("SKILL.md").display().to_string(),
        }
    }

    /// The folder its files are read beneath, and the skill's folder within it.
    pub fn root(&self, workspace: &Path) -> (PathBuf, String) {
        match &self.home {
            SkillHome::Workspace => (workspace.to_path_buf(), format!("{FOLDER}/{}", self.name)),
            SkillHome::User(dir) => {
                let (root, folder) = split_dir(dir);
                (root, format!("{folder}/{}", self.name))
            }
        }
    }
}

/// The skills found and the ones left out.
#[derive(Debug, Default)]
pub struct Skills {
    pub skills: Vec<Skill>,
    /// `path: line N: what is wrong`, one per skill left out.
    pub problems: Vec<String>,
}

impl Skills {
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }
}

#[derive(Deserialize)]
struct FrontMatter {
    name: Option<String>,
    description: Option<String>,
    #[serde(rename = "allowed-tools", alias = "allowed_tools")]
    allowed_tools: Option<NameList>,
}

/// The workspace's skills and the user's (`user_dir`), sorted by name.
pub fn load(workspace: &Path, user_dir: Option<&Path>) -> Skills {
    let mut found = Skills::default();
    collect(workspace, FOLDER, SkillHome::Workspace, &mut found);
    if let Some(dir) = user_dir {
        let (root, folder) = split_dir(dir);
        collect(
            &root,
            &folder,
            SkillHome::User(dir.to_path_buf()),
            &mut found,
        );
    }
    found.skills.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

/// A folder as its parent (what files are read beneath) and its own name.
fn split_dir(dir: &Path) -> (PathBuf, String) {
    let parent = dir.parent().unwrap_or(dir).to_path_buf();
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    (parent, name)
}

/// The skills in `folder` beneath `root`.
fn collect(root: &Path, folder: &str, home: SkillHome, found: &mut Skills) {
    let Ok(entries) = beneath::entries(root, folder) else {
        return;
    };
    let mut names: Vec<String> = entries
        .into_iter()
        .filter(|e| matches!(e.kind, EntryKind::Dir | EntryKind::Symlink))
        .map(|e| e.name.to_string_lossy().to_string())
        .filter(|name| !name.starts_with('.'))
        .collect();
    names.sort();
    for name in names {
        let rel = format!("{folder}/{name}/SKILL.md");
        let shown = match &home {
            SkillHome::Workspace => rel.clone(),
            SkillHome::User(dir) => dir.join(&name).join("SKILL.md").display().to_string(),
        };
        let parsed = match beneath::read_to_string(root, &rel, MAX_BYTES) {
            Ok(text) => parse(&name, &text, home.clone()),
            // A folder without SKILL.md is not a skill.
            Err(e) if e.is_not_found() => continue,
            Err(e) => Err(e.to_string()),
        };
        match parsed {
            // The workspace's skill of a name hides the user's.
            Ok(skill) if found.get(&skill.name).is_some() => {}
            Ok(skill) => found.skills.push(skill),
            Err(problem) => found.problems.push(format!("{shown}: {problem}")),
        }
    }
}

/// Parses a SKILL.md in the folder `folder`.
pub fn parse(folder: &str, text: &str, home: SkillHome) -> Result<Skill, String> {
    let (front, body): (FrontMatter, &str) = frontmatter::parse(text)?;
    let name = front.name.unwrap_or_else(|| folder.to_string());
    if name != folder {
        return Err(format!(
            "the name `{}` differs from its folder `{folder}`",
            name.escape_debug()
        ));
    }
    let name = frontmatter::checked_name(name)?;
    let description = frontmatter::description(front.description, "when to use the skill")?;
    let description = description.chars().take(MAX_DESCRIPTION).collect();
    Ok(Skill {
        name,
        description,
        allowed_tools: front.allowed_tools.map(NameList::names),
        instructions: body.trim().to_string(),
        home,
    })
}

/// A message naming a skill the user invoked: `/name args` gives `(name, args)`.
pub fn invocation(message: &str) -> Option<(&str, &str)> {
    let rest = message.trim_start().strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    frontmatter::valid_name(name).then_some((name, args.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_skill_parses_with_block_scalars_and_its_tools() {
        let text = "---\nname: pdf\ndescription: >-\n  Extract text\n  from PDFs.\nallowed-tools: Read, Bash\n---\n\n# PDF\nRun scripts/extract.py.\n";
        let skill = parse("pdf", text, SkillHome::Workspace).unwrap();
        assert_eq!(skill.description, "Extract text from PDFs.");
        assert_eq!(
            skill.allowed_tools,
            Some(vec!["Read".into(), "Bash".into()])
        );
        assert_eq!(skill.instructions, "# PDF\nRun scripts/extract.py.");
        let err = parse("other", text, SkillHome::Workspace).unwrap_err();
        assert!(err.contains("differs from its folder"), "{err}");
    }

    #[test]
    fn invocations_are_a_slash_and_a_name() {
        assert_eq!(
            invocation("/pdf report.pdf page 2"),
            Some(("pdf", "report.pdf page 2"))
        );
        assert_eq!(
            invocation("/summarize-notes"),
            Some(("summarize-notes", ""))
        );
        assert_eq!(invocation("/etc/passwd please"), None);
        assert_eq!(invocation("no slash"), None);
    }

    #[test]
    fn workspace_skills_hide_user_skills_and_bad_ones_are_reported() {
        let ws = tempfile::tempdir().unwrap();
        let user = tempfile::tempdir().unwrap();
        let write = |root: &Path, rel: &str, text: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            ws.path(),
            "skills/a/SKILL.md",
            "---\ndescription: workspace a\n---\nA",
        );
        write(
            ws.path(),
            "skills/bad/SKILL.md",
            "---\ndescription: [x\n---\n",
        );
        write(
            user.path(),
            "a/SKILL.md",
            "---\ndescription: user a\n---\nA",
        );
        write(
            user.path(),
            "b/SKILL.md",
            "---\ndescription: user b\n---\nB",
        );
        std::fs::create_dir_all(ws.path().join("skills/empty")).unwrap();
        let found = load(ws.path(), Some(user.path()));
        let names: Vec<(&str, &str)> = found
            .skills
            .iter()
            .map(|s| (s.name.as_str(), s.description.as_str()))
            .collect();
        assert_eq!(names, vec![("a", "workspace a"), ("b", "user b")]);
        assert_eq!(found.problems.len(), 1, "{:?}", found.problems);
        assert!(found.problems[0].starts_with("skills/bad/SKILL.md: line "));
    }
}
