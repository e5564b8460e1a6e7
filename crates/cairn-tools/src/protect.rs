//! Writes that ask first whatever the tool policy says: files that run code or steer every
//! later session (`.git/`, AGENTS.md, skills/, subagents/, prompts/, dotfiles, executables,
//! and the parts of a git repository outside any `.git/`: a `HEAD` anywhere, and `config`,
//! `objects/` or `refs/` beside one, which git takes for a bare repository).
//!
//! The check looks at where a path leads after symlinks, compared without regard to case,
//! so `notes/link -> ../AGENTS.md` and `Skills/x` ask like `AGENTS.md` and `skills/x`.
//! (`.cairn/` and `sessions/` are never written at all: the resolver refuses them.)

use std::path::{Component, Path, PathBuf};

use cairn_memory::Workspace;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

/// The paths asked about by default, as globs relative to the workspace root.
pub const DEFAULT_ASK_PATHS: [&str; 5] = [
    "**/.git/**",
    "AGENTS.md",
    "skills/**",
    "subagents/**",
    "prompts/**",
];

/// `[approvals]` in config.toml: which writes ask first. Unset fields take the defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct ProtectSettings {
    /// Globs relative to the workspace root whose writes ask first (default: `**/.git/**`,
    /// `AGENTS.md`, `skills/**`, `subagents/**`, `prompts/**`). Replaces the default list
    /// when set.
    pub ask_paths: Option<Vec<String>>,
    /// Writes to a dotfile or into a dot-folder at any depth ask first (default true).
    pub ask_dotfiles: Option<bool>,
    /// Writes to a file with an execute bit ask first (default true).
    pub ask_executables: Option<bool>,
}

/// The rules in force.
#[derive(Debug, Clone)]
pub struct ProtectRules {
    globs: GlobSet,
    dotfiles: bool,
    executables: bool,
    /// The parts of a git repository outside `.git/` ask (always, but under `--yes`).
    repositories: bool,
}

impl Default for ProtectRules {
    fn default() -> Self {
        Self::from_settings(&ProtectSettings::default()).unwrap_or_else(|_| Self::off())
    }
}

impl PartialEq for ProtectRules {
    /// Rules compare by what they ask about (a `GlobSet` has no equality of its own).
    fn eq(&self, other: &Self) -> bool {
        self.globs.len() == other.globs.len()
            && self.dotfiles == other.dotfiles
            && self.executables == other.executables
            && self.repositories == other.repositories
    }
}

impl ProtectRules {
    /// Nothing asks first (`--yes`).
    pub fn off() -> Self {
        Self {
            globs: GlobSet::empty(),
            dotfiles: false,
            executables: false,
            repositories: false,
        }
    }

    /// The rules of `[approvals]`; a glob that does not parse is an error naming it.
    pub fn from_settings(settings: &ProtectSettings) -> Result<Self, String> {
        let defaults: Vec<String> = DEFAULT_ASK_PATHS.iter().map(|s| s.to_string()).collect();
        let mut builder = GlobSetBuilder::new();
        for pattern in settings.ask_paths.as_ref().unwrap_or(&defaults) {
            let glob = GlobBuilder::new(pattern)
                .case_insensitive(true)
                .literal_separator(true)
                .build()
                .map_err(|e| format!("[approvals] ask_paths: `{pattern}` is not a glob: {e}"))?;
            builder.add(glob);
        }
        let globs = builder
            .build()
            .map_err(|e| format!("[approvals] ask_paths: {e}"))?;
        Ok(Self {
            globs,
            dotfiles: settings.ask_dotfiles.unwrap_or(true),
            executables: settings.ask_executables.unwrap_or(true),
            repositories: true,
        })
    }

    /// Why writing `input` (as a tool was given it) must ask first, if it must. A path the
    /// resolver refuses is left to the tool, which refuses it with the resolver's message.
    pub fn why_ask(&self, workspace: &Workspace, input: &str) -> Option<String> {
        self.judge(workspace, input).0
    }

    /// [`Self::why_ask`], and the place it judged: where `input` leads, relative to the
    /// workspace with every link followed (`None` when the write would be refused), which
    /// is where the file tools then write and nowhere else.
    pub fn judge(&self, workspace: &Workspace, input: &str) -> (Option<String>, Option<PathBuf>) {
        let Ok(joined) = workspace.resolve(input, cairn_memory::Access::Write) else {
            return (None, None);
        };
        let Some(real) = cairn_memory::real_relative(workspace.root(), &joined) else {
            return (None, None);
        };
        let Ok(lexical) = joined.strip_prefix(workspace.root()) else {
            return (None, None);
        };
        let named = [lexical, real.as_path()]
            .into_iter()
            .find_map(|rel| self.why_ask_relative(rel));
        let why = named
            .or_else(|| self.why_ask_repository(workspace.root(), &real))
            .or_else(|| self.why_ask_executable(&joined, input));
        (why, Some(real))
    }

    /// Why writing `rel` would make or change a git repository outside any `.git/`: a
    /// file named `HEAD`, or `config`, `objects/…` or `refs/…` in a folder holding one.
    fn why_ask_repository(&self, root: &Path, rel: &Path) -> Option<String> {
        if !self.repositories {
            return None;
        }
        let shown = rel.to_string_lossy().replace('\\', "/");
        if rel.file_name().is_some_and(|n| n == "HEAD") {
            return Some(format!(
                "`{shown}` is named HEAD: with `objects/` and `refs/` beside it, git takes \
                 its folder for a repository and runs what its config says"
            ));
        }
        let parts: Vec<Component<'_>> = rel.components().collect();
        (0..parts.len()).find_map(|at| {
            let folder: std::path::PathBuf = parts[..at].iter().collect();
            let next = parts[at].as_os_str();
            let is_part =
                next == "objects" || next == "refs" || (next == "config" && at + 1 == parts.len());
            (is_part && root.join(&folder).join("HEAD").is_file()).then(|| {
                let folder = match folder.as_os_str().is_empty() {
                    true => "the workspace root".to_string(),
                    false => format!("`{}`", folder.display()),
                };
                format!(
                    "`{shown}` would be part of a git repository ({folder} holds a HEAD): git \
                     run there later would run what its config says"
                )
            })
        })
    }

    fn why_ask_relative(&self, rel: &Path) -> Option<String> {
        let shown = rel.to_string_lossy().replace('\\', "/");
        if self.globs.is_match(rel) {
            return Some(format!("`{shown}` {}", what_it_steers(rel)));
        }
        if self.dotfiles && rel.components().any(is_dot_name) {
            return Some(format!(
                "`{shown}` is a dotfile or inside a dot-folder: such files configure tools \
                 and can run code"
            ));
        }
        None
    }

    #[cfg(unix)]
    fn why_ask_executable(&self, joined: &Path, input: &str) -> Option<String> {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(joined).ok()?;
        (self.executables && meta.is_file() && meta.permissions().mode() & 0o111 != 0)
            .then(|| format!("`{input}` is an executable file: changing it changes what runs"))
    }

    #[cfg(not(unix))]
    fn why_ask_executable(&self, _joined: &Path, _input: &str) -> Option<String> {
        None
    }
}

fn is_dot_name(component: Component<'_>) -> bool {
    matches!(component, Component::Normal(name) if name.to_string_lossy().starts_with('.'))
}

/// What kind of protected file `rel` is, for the approval's reason.
fn what_it_steers(rel: &Path) -> &'static str {
    let first = rel
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().to_lowercase())
        .unwrap_or_default();
    match first.as_str() {
        "agents.md" => "is read into every later session's instructions",
        "skills" => "is a skill: later sessions follow its instructions",
        "subagents" => "defines a subagent: later sessions run it",
        _ if rel
            .components()
            .any(|c| c.as_os_str().eq_ignore_ascii_case(".git")) =>
        {
            "is inside .git/: hooks and config there run code"
        }
        _ => "is a protected path ([approvals] ask_paths)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open_or_create(dir.path()).unwrap();
        (dir, ws)
    }

    fn asks(rules: &ProtectRules, ws: &Workspace, input: &str) -> bool {
        rules.why_ask(ws, input).is_some()
    }

    #[test]
    fn code_and_instructions_ask_and_notes_do_not() {
        let (_d, ws) = workspace();
        let rules = ProtectRules::default();
        for input in [
            "AGENTS.md",
            "agents.MD",
            "./notes/../AGENTS.md",
            ".git/hooks/pre-commit",
            ".GIT/config",
            "knowledge/repo/.git/config",
            "skills/new/SKILL.md",
            "Skills/x.md",
            "subagents/researcher.md",
            ".env",
            "knowledge/.hidden/notes.md",
            "knowledge/.bashrc",
        ] {
            assert!(asks(&rules, &ws, input), "{input}");
        }
        for input in [
            "MEMORY.md",
            "knowledge/a.md",
            "memory/2026-01-01.md",
            "notes/AGENTS.md",
        ] {
            assert_eq!(rules.why_ask(&ws, input), None, "{input}");
        }
        assert!(!asks(&ProtectRules::off(), &ws, "AGENTS.md"));
    }

    #[cfg(unix)]
    #[test]
    fn links_and_executables_ask_by_what_they_are() {
        use std::os::unix::fs::PermissionsExt;
        let (_d, ws) = workspace();
        let root = ws.root();
        std::fs::create_dir_all(root.join("notes")).unwrap();
        std::os::unix::fs::symlink("../AGENTS.md", root.join("notes/rules.md")).unwrap();
        std::os::unix::fs::symlink("skills", root.join("tricks")).unwrap();
        std::fs::write(root.join("run.sh"), "echo hi\n").unwrap();
        std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let rules = ProtectRules::default();
        for input in ["notes/rules.md", "tricks/new/SKILL.md", "run.sh"] {
            assert!(asks(&rules, &ws, input), "{input}");
        }
        let reason = rules.why_ask(&ws, "notes/rules.md").unwrap();
        assert_eq!(
            reason,
            "`AGENTS.md` is read into every later session's instructions"
        );
    }

    #[test]
    fn the_parts_of_a_repository_outside_git_ask() {
        let (_d, ws) = workspace();
        let rules = ProtectRules::default();
        // No HEAD yet: a folder named objects is just a folder.
        assert!(!asks(&rules, &ws, "objects/x"));
        assert!(!asks(&rules, &ws, "config"));
        assert!(asks(&rules, &ws, "HEAD"));
        assert!(asks(&rules, &ws, "notes/deep/HEAD"));
        std::fs::write(ws.root().join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir_all(ws.root().join("notes/bare")).unwrap();
        std::fs::write(ws.root().join("notes/bare/HEAD"), "x").unwrap();
        for input in [
            "config",
            "objects/x",
            "refs/heads/x",
            "notes/bare/config",
            "notes/bare/refs/x",
        ] {
            let why = rules.why_ask(&ws, input).unwrap_or_default();
            assert!(why.contains("part of a git repository"), "{input}: {why}");
        }
        for input in [
            "notes/config",
            "knowledge/objects.md",
            "notes/bare/notes.md",
        ] {
            assert_eq!(rules.why_ask(&ws, input), None, "{input}");
        }
        assert!(asks(&rules, &ws, "prompts/review.md"));
        assert!(!asks(&ProtectRules::off(), &ws, "HEAD"));
    }

    #[test]
    fn settings_replace_the_list_and_turn_classes_off() {
        let (_d, ws) = workspace();
        let rules = ProtectRules::from_settings(&ProtectSettings {
            ask_paths: Some(vec!["knowledge/private/**".into()]),
            ask_dotfiles: Some(false),
            ask_executables: None,
        })
        .unwrap();
        assert!(asks(&rules, &ws, "knowledge/private/x.md"));
        assert!(!asks(&rules, &ws, "AGENTS.md"));
        assert!(!asks(&rules, &ws, ".env"));
        let bad = ProtectRules::from_settings(&ProtectSettings {
            ask_paths: Some(vec!["a/[".into()]),
            ..ProtectSettings::default()
        });
        assert!(bad.unwrap_err().contains("`a/[` is not a glob"));
    }
}
