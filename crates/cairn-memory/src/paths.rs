//! Resolving user- or model-supplied paths to files inside the workspace.
//!
//! Every tool that touches a file goes through [`resolve`]: `..` that climbs out, absolute
//! paths elsewhere and symlinks whose target lies outside are refused with a message that
//! can be shown to the model as is. What a path may be written is decided by what it
//! resolves to after symlinks, compared without regard to case: `alias -> .cairn/state.db`,
//! `d -> .cairn` and `.CAIRN/x` are all private state.

use std::io;
use std::path::{Component, Path, PathBuf};

/// What the caller wants to do with the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("the path is empty")]
    Empty,
    #[error("`{0}` contains a NUL byte")]
    Nul(String),
    #[error("`{0}` is outside the workspace; use a path relative to the workspace root")]
    Outside(String),
    #[error("`{0}` is a symbolic link that leads outside the workspace")]
    SymlinkEscape(String),
    #[error("`{0}` is inside .cairn/, which holds Cairn's private state and cannot be written")]
    Private(String),
    #[error(
        "`{0}` is inside sessions/, which only Cairn's session store writes (a tool that \
         replaced a session file would lose every later message); it cannot be written"
    )]
    Session(String),
    #[error(
        "`{0}` is in a folder searched in place (outside the workspace): Cairn reads it but \
         never writes it"
    )]
    ReadOnlyFolder(String),
}

/// Name of the folder that holds derived and private state.
pub const PRIVATE_DIR: &str = ".cairn";
/// Name of the folder of session transcripts.
pub const SESSIONS_DIR: &str = "sessions";

/// Resolves `input` against the workspace `root` (which must be canonical).
///
/// Returns an absolute path inside `root`. The file itself need not exist.
pub fn resolve(root: &Path, input: &str, access: Access) -> Result<PathBuf, PathError> {
    if input.trim().is_empty() {
        return Err(PathError::Empty);
    }
    if input.contains('\0') {
        return Err(PathError::Nul(input.to_string()));
    }
    let relative = lexical_relative(root, input)?;
    let joined = root.join(&relative);
    let real = real_path(root, &joined, input)?;
    if access == Access::Write {
        // Both spellings: the one given and the one it resolves to.
        for path in [&relative, &real] {
            refuse_protected(path, input)?;
        }
    }
    Ok(joined)
}

/// The folder a protected write would land in, by the first component of a path relative
/// to the root, compared without regard to case.
pub(crate) fn refuse_protected(relative: &Path, input: &str) -> Result<(), PathError> {
    let Some(Component::Normal(first)) = relative.components().next() else {
        return Ok(());
    };
    let first = first.to_string_lossy().to_lowercase();
    if first == PRIVATE_DIR {
        return Err(PathError::Private(input.to_string()));
    }
    if first == SESSIONS_DIR {
        return Err(PathError::Session(input.to_string()));
    }
    Ok(())
}

/// Where `joined` leads after following every symlink of its existing part, relative to
/// `root`. Refuses a path whose existing part leads outside `root`.
pub fn real_relative(root: &Path, joined: &Path) -> Option<PathBuf> {
    real_path(root, joined, "").ok()
}

/// The path relative to `root`, with `.` and `..` folded; refuses anything that climbs out.
fn lexical_relative(root: &Path, input: &str) -> Result<PathBuf, PathError> {
    let path = Path::new(input);
    let rest = if path.is_absolute() {
        match path.strip_prefix(root) {
            Ok(rest) => rest.to_path_buf(),
            Err(_) => return Err(PathError::Outside(input.to_string())),
        }
    } else {
        path.to_path_buf()
    };
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for component in rest.components() {
        match component {
            Component::Normal(part) => parts.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.pop().is_none() {
                    return Err(PathError::Outside(input.to_string()));
                }
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(PathError::Outside(input.to_string()))
            }
        }
    }
    Ok(parts.iter().collect())
}

/// Follows the existing part of `joined` through the file system, makes sure every symlink
/// on the way stays inside `root`, and returns where the path leads, relative to `root`
/// (the part that does not exist yet appended as given).
fn real_path(root: &Path, joined: &Path, input: &str) -> Result<PathBuf, PathError> {
    let mut existing = joined;
    loop {
        match existing.symlink_metadata() {
            Ok(_) => break,
            Err(_) => match existing.parent() {
                Some(parent) => existing = parent,
                None => return Ok(PathBuf::new()),
            },
        }
    }
    let missing = joined.strip_prefix(existing).unwrap_or(Path::new(""));
    match existing.canonicalize() {
        Ok(real) => match real.strip_prefix(root) {
            // (`join("")` would add a trailing separator.)
            Ok(inside) if missing.as_os_str().is_empty() => Ok(inside.to_path_buf()),
            Ok(inside) => Ok(inside.join(missing)),
            Err(_) => Err(PathError::SymlinkEscape(input.to_string())),
        },
        // A dangling symlink: we cannot tell where it leads, so refuse it.
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            Err(PathError::SymlinkEscape(input.to_string()))
        }
        Err(_) => Err(PathError::Outside(input.to_string())),
    }
}

/// Shows `path` relative to `root` with forward slashes (for messages and citations).
pub fn display_relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let text = rel.to_string_lossy().replace('\\', "/");
    if text.is_empty() {
        ".".to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn root() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("notes/sub")).unwrap();
        std::fs::write(root.join("notes/a.md"), "a").unwrap();
        (dir, root)
    }

    #[test]
    fn plain_and_dotted_paths_resolve_inside() {
        let (_d, root) = root();
        assert_eq!(
            resolve(&root, "notes/a.md", Access::Read),
            Ok(root.join("notes/a.md"))
        );
        assert_eq!(
            resolve(&root, "./notes/sub/../a.md", Access::Read),
            Ok(root.join("notes/a.md"))
        );
        assert_eq!(
            resolve(&root, "new/file.md", Access::Write),
            Ok(root.join("new/file.md"))
        );
        let abs = root.join("notes/a.md");
        assert_eq!(
            resolve(&root, abs.to_str().unwrap(), Access::Read),
            Ok(abs.clone())
        );
        assert_eq!(resolve(&root, ".", Access::Read), Ok(root.clone()));
    }

    #[test]
    fn climbing_out_is_refused() {
        let (_d, root) = root();
        for bad in [
            "..",
            "../x",
            "notes/../../x",
            "/etc/passwd",
            "notes/sub/../../../etc",
        ] {
            assert_eq!(
                resolve(&root, bad, Access::Read),
                Err(PathError::Outside(bad.to_string())),
                "{bad}"
            );
        }
        assert_eq!(resolve(&root, "", Access::Read), Err(PathError::Empty));
        assert_eq!(
            resolve(&root, "a\0b", Access::Read),
            Err(PathError::Nul("a\0b".into()))
        );
    }

    #[test]
    fn private_state_is_read_only() {
        let (_d, root) = root();
        assert!(resolve(&root, ".cairn/tool-results/x.txt", Access::Read).is_ok());
        assert_eq!(
            resolve(&root, "./.cairn/state.db", Access::Write),
            Err(PathError::Private("./.cairn/state.db".into()))
        );
    }

    #[test]
    fn sessions_are_read_only_and_case_does_not_matter() {
        let (_d, root) = root();
        std::fs::create_dir_all(root.join("sessions")).unwrap();
        assert!(resolve(&root, "sessions/a.jsonl", Access::Read).is_ok());
        assert_eq!(
            resolve(&root, "sessions/a.jsonl", Access::Write),
            Err(PathError::Session("sessions/a.jsonl".into()))
        );
        assert_eq!(
            resolve(&root, "notes/../Sessions/new.jsonl", Access::Write),
            Err(PathError::Session("notes/../Sessions/new.jsonl".into()))
        );
        assert_eq!(
            resolve(&root, ".CAIRN/state.db", Access::Write),
            Err(PathError::Private(".CAIRN/state.db".into()))
        );
        // Names that only start the same are ordinary files.
        assert!(resolve(&root, "sessions-notes.md", Access::Write).is_ok());
        assert!(resolve(&root, "notes/.cairn/x.md", Access::Write).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn links_into_private_state_cannot_be_written() {
        let (_d, root) = root();
        std::fs::create_dir_all(root.join(".cairn")).unwrap();
        std::fs::write(root.join(".cairn/state.db"), "db").unwrap();
        std::fs::create_dir_all(root.join("sessions")).unwrap();
        std::os::unix::fs::symlink(root.join(".cairn/state.db"), root.join("alias")).unwrap();
        std::os::unix::fs::symlink(".cairn", root.join("d")).unwrap();
        std::os::unix::fs::symlink("../sessions", root.join("notes/s")).unwrap();
        for (input, error) in [
            ("alias", PathError::Private("alias".into())),
            ("d/state.db", PathError::Private("d/state.db".into())),
            ("d/new.txt", PathError::Private("d/new.txt".into())),
            (
                "notes/s/x.jsonl",
                PathError::Session("notes/s/x.jsonl".into()),
            ),
        ] {
            assert_eq!(resolve(&root, input, Access::Write), Err(error), "{input}");
            assert!(resolve(&root, input, Access::Read).is_ok(), "{input}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_that_escape_are_refused() {
        let (_d, root) = root();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("link")).unwrap();
        std::os::unix::fs::symlink(root.join("notes"), root.join("inner")).unwrap();
        std::os::unix::fs::symlink("/nonexistent/target", root.join("dangling")).unwrap();
        assert_eq!(
            resolve(&root, "link/secret", Access::Read),
            Err(PathError::SymlinkEscape("link/secret".into()))
        );
        assert_eq!(
            resolve(&root, "link/new.md", Access::Write),
            Err(PathError::SymlinkEscape("link/new.md".into()))
        );
        assert_eq!(
            resolve(&root, "dangling", Access::Write),
            Err(PathError::SymlinkEscape("dangling".into()))
        );
        assert_eq!(
            resolve(&root, "inner/a.md", Access::Read),
            Ok(root.join("inner/a.md"))
        );
    }
}
