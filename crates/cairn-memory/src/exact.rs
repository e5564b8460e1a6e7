//! Writing a file at exactly the path it was judged at: the file tools find where a path
//! leads (links followed) and the harness judges that place (may it be written? must the
//! user be asked?); the write then goes there and nowhere else. Every folder on the way is
//! opened from the root without following a link (`O_NOFOLLOW` at each step, which
//! `openat2`'s `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` does in one call), so a link that a
//! concurrent command swaps in after the judgment makes the write fail rather than land
//! in `.git/` or outside the workspace; the file itself is replaced by a rename, never
//! written through.

use std::io;
use std::path::{Component, Path};

use cap_std::fs::Dir;

use crate::error::MemoryError;
use crate::paths::{refuse_protected, PathError};

/// Replaces the file at `real` (relative to `root`, every link already followed, as
/// [`crate::paths::real_relative`] gives it) with `bytes`, making missing folders; the old
/// file's permissions are kept. `shown` names it in errors. Refuses `.cairn/` and
/// `sessions/`, and any path on which a link now stands.
pub fn write_exact(root: &Path, real: &Path, shown: &str, bytes: &[u8]) -> Result<(), MemoryError> {
    let (folder, name) = place(root, real, shown)?;
    crate::beneath::replace_in(&folder, shown, name, bytes, |folder, temp, name| {
        folder.rename(temp, folder, name)?;
        crate::beneath::sync_folder(folder)?;
        Ok(crate::beneath::Swap::Replaced)
    })
    .map(|_| ())
}

/// The folder `real` is in, opened as [`write_exact`] says, and its name there; refuses
/// a link or a folder standing at the name.
pub(crate) fn place<'a>(
    root: &Path,
    real: &'a Path,
    shown: &str,
) -> Result<(Dir, &'a std::ffi::OsStr), MemoryError> {
    refuse_protected(real, shown)?;
    let (Some(parent), Some(name)) = (real.parent(), real.file_name()) else {
        return Err(MemoryError::Path(PathError::Empty));
    };
    let folder = folder(root, parent, shown)?;
    match folder.symlink_metadata(name) {
        Ok(meta) if meta.file_type().is_symlink() || meta.is_dir() => Err(changed(shown)),
        _ => Ok((folder, name)),
    }
}

/// The folder `rel` beneath `root`, each part opened without following a link and made
/// when missing.
fn folder(root: &Path, rel: &Path, shown: &str) -> Result<Dir, MemoryError> {
    let fail = |e| MemoryError::io(shown, e);
    let mut dir = Dir::open_ambient_dir(root, cap_std::ambient_authority())
        .map_err(|e| MemoryError::io(root, e))?;
    for part in rel.components() {
        let Component::Normal(name) = part else {
            return Err(changed(shown));
        };
        let next = match open_folder(&dir, name) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                match dir.create_dir(name) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(fail(e)),
                }
                open_folder(&dir, name)
            }
            opened => opened,
        };
        dir = next.map_err(|e| match is_link_or_file(&e) {
            true => changed(shown),
            false => fail(e),
        })?;
    }
    Ok(dir)
}

/// Opens the folder `name` of `dir`, refusing a link (and anything not a folder).
#[cfg(unix)]
fn open_folder(dir: &Dir, name: &std::ffi::OsStr) -> io::Result<Dir> {
    use rustix::fs::{openat, Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = openat(dir, name, flags, Mode::empty())?;
    Ok(Dir::from_std_file(std::fs::File::from(fd)))
}

#[cfg(not(unix))]
fn open_folder(dir: &Dir, name: &std::ffi::OsStr) -> io::Result<Dir> {
    if dir.symlink_metadata(name)?.file_type().is_symlink() {
        return Err(io::Error::other("a link stands on the way"));
    }
    dir.open_dir(name)
}

/// Whether an open failed because a link (`ELOOP` under `O_NOFOLLOW`) or a file
/// (`ENOTDIR`) stands where a folder was.
fn is_link_or_file(error: &io::Error) -> bool {
    #[cfg(unix)]
    if matches!(error.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) {
        return true;
    }
    error.kind() == io::ErrorKind::NotADirectory
}

fn changed(shown: &str) -> MemoryError {
    MemoryError::Changed(shown.to_string())
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::os::unix::fs::symlink;

    fn root() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        (dir, root)
    }

    #[test]
    fn it_writes_makes_folders_and_keeps_the_old_files_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let (_dir, root) = root();
        write_exact(&root, Path::new("a/b/c.md"), "a/b/c.md", b"one").unwrap();
        assert_eq!(std::fs::read(root.join("a/b/c.md")).unwrap(), b"one");
        std::fs::set_permissions(
            root.join("a/b/c.md"),
            std::fs::Permissions::from_mode(0o640),
        )
        .unwrap();
        write_exact(&root, Path::new("a/b/c.md"), "a/b/c.md", b"two").unwrap();
        assert_eq!(std::fs::read(root.join("a/b/c.md")).unwrap(), b"two");
        let mode = std::fs::metadata(root.join("a/b/c.md"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o640);
        let left: Vec<_> = std::fs::read_dir(root.join("a/b")).unwrap().collect();
        assert_eq!(left.len(), 1, "no temp file is left");
    }

    #[test]
    fn a_link_on_the_way_or_at_the_file_is_never_followed() {
        let (_dir, root) = root();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/config"), "kept").unwrap();
        symlink(root.join(".git"), root.join("notes")).unwrap();
        let error =
            write_exact(&root, Path::new("notes/config"), "notes/config", b"x").unwrap_err();
        assert!(matches!(error, MemoryError::Changed(_)), "{error}");
        symlink(root.join(".git/config"), root.join("page.md")).unwrap();
        let error = write_exact(&root, Path::new("page.md"), "page.md", b"x").unwrap_err();
        assert!(matches!(error, MemoryError::Changed(_)), "{error}");
        let outside = tempfile::tempdir().unwrap();
        symlink(outside.path(), root.join("out")).unwrap();
        assert!(write_exact(&root, Path::new("out/x"), "out/x", b"x").is_err());
        assert_eq!(
            std::fs::read_to_string(root.join(".git/config")).unwrap(),
            "kept"
        );
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }

    #[test]
    fn private_state_and_plain_paths_only() {
        let (_dir, root) = root();
        assert!(write_exact(&root, Path::new(".cairn/x"), ".cairn/x", b"x").is_err());
        assert!(write_exact(&root, Path::new("sessions/x"), "sessions/x", b"x").is_err());
        assert!(write_exact(&root, Path::new("a/../../x"), "x", b"x").is_err());
    }
}
