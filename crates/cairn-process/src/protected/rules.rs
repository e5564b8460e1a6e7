//! What is protected, entry by entry: the dot entries at any depth and the named ones at
//! the root always, and, as the sandbox asks, files with an execute bit and entries that
//! match the user's globs.

use std::fs::FileType;
use std::path::Path;
use std::sync::Arc;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// Entries at the workspace root that are protected besides the dot entries (compared
/// without regard to case); folders among them are bound whole and not looked into.
const AT_ROOT: [&str; 4] = ["sessions", "agents.md", "skills", "subagents"];

/// The file that, with `objects/` and `refs/` beside it, makes git take a folder for a
/// repository.
pub(crate) const GIT_HEAD: &str = "HEAD";

/// What the sandbox protects besides the dot entries and the named entries at the root
/// (by default nothing): shared, since every sandbox carries it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rules(Option<Arc<Compiled>>);

#[derive(Debug)]
struct Compiled {
    patterns: Vec<String>,
    /// The globs as given, matched against every entry's path relative to the root.
    globs: GlobSet,
    /// What comes before a trailing `/**`: a folder it matches is bound whole, so that a
    /// file made in it later is read-only too.
    folders: GlobSet,
    executables: bool,
}

impl PartialEq for Rules {
    /// Rules compare by what they were made from (a `GlobSet` has no equality).
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => a.patterns == b.patterns && a.executables == b.executables,
            _ => false,
        }
    }
}

impl Eq for Rules {}

/// How the walk treats one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Bound read-only (a folder whole, not looked into).
    Protected,
    /// A folder to look into.
    Folder,
    /// Neither.
    Other,
}

impl Rules {
    /// Also `globs` (relative to the workspace root, matched like the file tools match
    /// `[approvals] ask_paths`: without regard to case, `*` not crossing `/`) and, when
    /// `executables`, every file with an execute bit. A glob that does not parse is an
    /// error naming it.
    pub(crate) fn new(globs: &[String], executables: bool) -> Result<Self, String> {
        let mut all = GlobSetBuilder::new();
        let mut folders = GlobSetBuilder::new();
        for pattern in globs {
            all.add(glob(pattern)?);
            if let Some(folder) = pattern.strip_suffix("/**").filter(|f| !f.is_empty()) {
                folders.add(glob(folder)?);
            }
        }
        let set = |builder: GlobSetBuilder| {
            builder
                .build()
                .map_err(|e| format!("protected globs {globs:?}: {e}"))
        };
        if globs.is_empty() && !executables {
            return Ok(Self::default());
        }
        Ok(Self(Some(Arc::new(Compiled {
            patterns: globs.to_vec(),
            globs: set(all)?,
            folders: set(folders)?,
            executables,
        }))))
    }

    pub(crate) fn executables(&self) -> bool {
        self.0.as_ref().is_some_and(|c| c.executables)
    }

    /// How the entry at `rel` (relative to the root, never empty) of type `file_type`
    /// is treated; `mode` gives its permission bits, asked only for a regular file when
    /// executables are protected.
    pub(crate) fn kind(
        &self,
        rel: &Path,
        file_type: FileType,
        mode: impl FnOnce() -> Option<u32>,
    ) -> Kind {
        let name = rel
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        let at_root = rel.parent().is_some_and(|p| p.as_os_str().is_empty());
        if name.starts_with('.') || (at_root && AT_ROOT.contains(&name.as_str())) {
            return Kind::Protected;
        }
        // What makes a folder a git directory (with `objects/` and `refs/`): read-only, and
        // found, so that a call that makes one can be undone (`quarantine.rs`).
        if rel.file_name().is_some_and(|n| n == GIT_HEAD) && file_type.is_file() {
            return Kind::Protected;
        }
        let is_dir = file_type.is_dir();
        let Some(more) = &self.0 else {
            return if is_dir { Kind::Folder } else { Kind::Other };
        };
        if more.globs.is_match(rel) || (is_dir && more.folders.is_match(rel)) {
            return Kind::Protected;
        }
        if is_dir {
            return Kind::Folder;
        }
        let executable = || mode().is_some_and(|m| m & 0o111 != 0);
        if more.executables && file_type.is_file() && executable() {
            return Kind::Protected;
        }
        Kind::Other
    }
}

fn glob(pattern: &str) -> Result<globset::Glob, String> {
    GlobBuilder::new(pattern)
        .case_insensitive(true)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("`{pattern}` is not a glob: {e}"))
}

/// The permission bits of `meta` (none where there are none).
#[cfg(unix)]
pub(crate) fn mode(meta: &std::fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    Some(meta.permissions().mode())
}

#[cfg(not(unix))]
pub(crate) fn mode(_meta: &std::fs::Metadata) -> Option<u32> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// The kinds of `paths` (folders end with `/`), made in a temporary folder.
    fn kinds(rules: &Rules, paths: &[&str]) -> Vec<Kind> {
        let dir = tempfile::tempdir().unwrap();
        paths
            .iter()
            .map(|p| {
                let path = dir.path().join(p.trim_end_matches('/'));
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                match p.ends_with('/') {
                    true => std::fs::create_dir(&path).unwrap(),
                    false => std::fs::write(&path, "x").unwrap(),
                }
                let meta = std::fs::symlink_metadata(&path).unwrap();
                let rel = Path::new(p.trim_end_matches('/'));
                rules.kind(rel, meta.file_type(), || mode(&meta))
            })
            .collect()
    }

    #[test]
    fn globs_match_like_the_file_tools_and_bind_a_folder_for_its_contents() {
        let globs = ["knowledge/private/**".to_string(), "*.key".to_string()];
        let rules = Rules::new(&globs, false).unwrap();
        use Kind::*;
        assert_eq!(
            kinds(
                &rules,
                &[
                    "Knowledge/Private/",
                    "knowledge/private2/",
                    "knowledge/x.md",
                    "a.KEY",
                    "notes/a.key",
                    "notes/.hidden",
                    "Skills/",
                    "notes/skills/",
                    "notes/HEAD",
                    "notes/head",
                ]
            ),
            [
                Protected, Folder, Other, Protected, Other, Protected, Protected, Folder,
                Protected, Other
            ]
        );
        let bad = Rules::new(&["a/[".to_string()], true).unwrap_err();
        assert!(bad.contains("`a/[` is not a glob"), "{bad}");
    }

    #[cfg(unix)]
    #[test]
    fn executables_only_when_asked() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("run.sh");
        std::fs::write(&script, "echo\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o744)).unwrap();
        let meta = std::fs::symlink_metadata(&script).unwrap();
        let kind =
            |rules: &Rules| rules.kind(Path::new("run.sh"), meta.file_type(), || mode(&meta));
        assert_eq!(kind(&Rules::new(&[], true).unwrap()), Kind::Protected);
        assert_eq!(kind(&Rules::default()), Kind::Other);
    }
}
