//! Opening workspace files without ever leaving the workspace: Cairn's own readers and
//! writers (daily logs, MEMORY.md, the context, evicted tool results) go through here.
//!
//! A workspace may have been prepared by someone else: `memory/<today>.md -> ~/.bashrc` or
//! `MEMORY.md -> ~/.aws/credentials` must not make Cairn append to or show the target.
//! Each call first asks [`paths::resolve`] (so the tools' rules apply: no `..` out, no link
//! that escapes, `.cairn/` and `sessions/` not written), then opens the file through a
//! capability on the root ([`cap_std::fs::Dir`]: `openat2` with `RESOLVE_BENEATH` on Linux,
//! a checked walk elsewhere), so a link swapped in between the check and the open is
//! refused too. A link that stays inside the workspace is followed, as the tools do.
//! Reads take regular files only (a pipe would block) and at most a given size.

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

use crate::error::MemoryError;
use crate::paths::{self, Access, PathError, PRIVATE_DIR};

/// A file opened for appending, with what it held when opened readable from the start.
#[derive(Debug)]
pub struct Appending {
    file: std::fs::File,
    shown: String,
}

impl Appending {
    /// What the file holds, at most `max_bytes` (a larger file is an error).
    pub fn existing(&mut self, max_bytes: u64) -> Result<Vec<u8>, MemoryError> {
        read_capped(&mut self.file, &self.shown, max_bytes)
    }

    /// Waits for an exclusive lock on the file (`flock`), held until this is dropped: other
    /// appenders that lock wait meanwhile, in this process or another.
    pub fn lock(&self) -> Result<(), MemoryError> {
        self.file
            .lock()
            .map_err(|e| MemoryError::io(self.shown.as_str(), e))
    }

    /// Appends `bytes` at the end, left to the system to write out (see [`Self::sync`]).
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), MemoryError> {
        let shown = self.shown.as_str();
        self.file
            .write_all(bytes)
            .map_err(|e| MemoryError::io(shown, e))
    }

    /// Waits until what was written is on disk.
    pub fn sync(&mut self) -> Result<(), MemoryError> {
        let shown = self.shown.as_str();
        self.file.sync_all().map_err(|e| MemoryError::io(shown, e))
    }

    /// Appends `bytes` at the end and syncs them to disk.
    pub fn append(&mut self, bytes: &[u8]) -> Result<(), MemoryError> {
        let shown = self.shown.as_str();
        self.file
            .write_all(bytes)
            .and_then(|()| self.file.sync_all())
            .map_err(|e| MemoryError::io(shown, e))
    }
}

/// What a folder holds: one entry, its type read without following a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: OsString,
    pub kind: EntryKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    /// A pipe, socket or device.
    Other,
}

/// Opens the regular file `rel` for reading.
pub fn open(root: &Path, rel: &str) -> Result<std::fs::File, MemoryError> {
    let real = target(root, rel, Access::Read)?;
    let mut options = OpenOptions::new();
    options.read(true);
    open_regular(root, rel, &real, &options)
}

/// The bytes of the regular file `rel`, at most `max_bytes` (a larger file is an error).
pub fn read(root: &Path, rel: &str, max_bytes: u64) -> Result<Vec<u8>, MemoryError> {
    read_capped(&mut open(root, rel)?, rel, max_bytes)
}

/// The bytes of the file at `path`, a path Cairn chose itself (an indexed file, a session),
/// at most `max_bytes`: a larger one, sparse or growing, is refused unread with
/// [`MemoryError::TooLarge`].
pub fn read_path(path: &Path, max_bytes: u64) -> Result<Vec<u8>, MemoryError> {
    let shown = path.to_string_lossy();
    let mut file = std::fs::File::open(path).map_err(|e| MemoryError::io(&*shown, e))?;
    read_capped(&mut file, &shown, max_bytes)
}

/// The UTF-8 text of the regular file `rel`, at most `max_bytes`; text that is not UTF-8
/// is an error of kind [`io::ErrorKind::InvalidData`].
pub fn read_to_string(root: &Path, rel: &str, max_bytes: u64) -> Result<String, MemoryError> {
    String::from_utf8(read(root, rel, max_bytes)?).map_err(|_| {
        MemoryError::io(
            rel,
            io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"),
        )
    })
}

/// Opens `rel` for appending, creating it and its folders when missing; the same rules as
/// a tool's write.
pub fn open_append(root: &Path, rel: &str) -> Result<Appending, MemoryError> {
    let real = target(root, rel, Access::Write)?;
    create_parent(&open_root(root)?, rel, &real)?;
    let mut options = OpenOptions::new();
    options.read(true).append(true).create(true);
    let file = open_regular(root, rel, &real, &options)?;
    Ok(Appending {
        file,
        shown: rel.to_string(),
    })
}

/// Appends `bytes` to `rel` (see [`open_append`]).
pub fn append(root: &Path, rel: &str, bytes: &[u8]) -> Result<(), MemoryError> {
    open_append(root, rel)?.append(bytes)
}

/// Replaces `rel` with `bytes` through a temp file in the same folder, synced, renamed
/// over the file where the path leads, and the folder synced; the same rules as a tool's
/// write. The new file keeps the old one's permissions.
pub fn write_atomic(root: &Path, rel: &str, bytes: &[u8]) -> Result<(), MemoryError> {
    let real = target(root, rel, Access::Write)?;
    replace(root, rel, &real, bytes)
}

/// [`write_atomic`] for Cairn's own state: `rel` must lie in `.cairn/` (as written and
/// where it leads), which tools may not write. Everything else holds: it stays beneath
/// the root and never follows a link out.
pub fn write_private_atomic(root: &Path, rel: &str, bytes: &[u8]) -> Result<(), MemoryError> {
    let real = private_target(root, rel)?;
    replace(root, rel, &real, bytes)
}

/// [`open_append`] for Cairn's own state: `rel` must lie in `.cairn/`, as for
/// [`write_private_atomic`]. The file is created private to the user (0600) when new.
pub fn open_private_append(root: &Path, rel: &str) -> Result<Appending, MemoryError> {
    let real = private_target(root, rel)?;
    create_parent(&open_root(root)?, rel, &real)?;
    let mut options = OpenOptions::new();
    options.read(true).append(true).create(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = open_regular(root, rel, &real, &options)?;
    Ok(Appending {
        file,
        shown: rel.to_string(),
    })
}

/// Where `rel` leads, when it lies in `.cairn/` both as written and where it leads.
fn private_target(root: &Path, rel: &str) -> Result<PathBuf, MemoryError> {
    let real = target(root, rel, Access::Read)?;
    let lexical = paths::resolve(root, rel, Access::Read)?;
    let lexical = lexical.strip_prefix(root).unwrap_or(&lexical);
    if !in_private_dir(lexical) || !in_private_dir(&real) {
        return Err(MemoryError::NotPrivate(rel.to_string()));
    }
    Ok(real)
}

/// Moves `from` to `to` (its folders made when missing), never over anything: when
/// something is at `to`, nothing moves and the error's kind is `AlreadyExists`. Links are
/// moved, not followed: only the folders on the way are resolved.
pub fn rename(root: &Path, from: &str, to: &str) -> Result<(), MemoryError> {
    let source = entry_target(root, from, Access::Write)?;
    let dest = entry_target(root, to, Access::Write)?;
    let dir = open_root(root)?;
    create_parent(&dir, to, &dest)?;
    rename_new(&dir, &source, &dest).map_err(|e| MemoryError::io(from, e))?;
    sync_parents(&dir, &source, &dest, to)
}

/// Renames `source` to `dest` (beneath `dir`) unless something is at `dest`. On Linux the
/// kernel judges that at the moment of the rename (`RENAME_NOREPLACE`), so a file saved
/// there just before is never replaced; elsewhere, or on a file system without it, it is
/// checked just before.
fn rename_new(dir: &Dir, source: &Path, dest: &Path) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::{renameat_with, RenameFlags};
        use rustix::io::Errno;
        let entry = |path: &Path| -> io::Result<(Dir, std::ffi::OsString)> {
            let name = path
                .file_name()
                .ok_or_else(|| io::Error::other("the path names no entry"))?;
            let folder = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
                Some(parent) => dir.open_dir(parent)?,
                None => dir.try_clone()?,
            };
            Ok((folder, name.to_os_string()))
        };
        let ((from, from_name), (to, to_name)) = (entry(source)?, entry(dest)?);
        match renameat_with(&from, &from_name, &to, &to_name, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(()),
            Err(Errno::INVAL | Errno::NOSYS | Errno::NOTSUP) => {}
            Err(e) => return Err(e.into()),
        }
    }
    if dir.symlink_metadata(dest).is_ok() {
        return Err(io::ErrorKind::AlreadyExists.into());
    }
    dir.rename(source, dir, dest)
}

/// Moves `from` to `to` where one of them is in `.cairn/` (the trash), the other a path a
/// tool could write: the same checks as [`rename`] on the workspace side (and never over
/// anything), and the private side must lie in `.cairn/` as written and where it leads.
pub fn rename_private(root: &Path, from: &str, to: &str) -> Result<(), MemoryError> {
    let side = |rel: &str| -> Result<PathBuf, MemoryError> {
        let lexical = paths::resolve(root, rel, Access::Read)?;
        let lexical = lexical.strip_prefix(root).unwrap_or(&lexical).to_path_buf();
        if in_private_dir(&lexical) {
            let real = entry_target(root, rel, Access::Read)?;
            if !in_private_dir(&real) {
                return Err(MemoryError::NotPrivate(rel.to_string()));
            }
            Ok(real)
        } else {
            entry_target(root, rel, Access::Write)
        }
    };
    let (source, dest) = (side(from)?, side(to)?);
    if in_private_dir(&source) == in_private_dir(&dest) {
        return Err(MemoryError::NotPrivate(format!("{from} -> {to}")));
    }
    let dir = open_root(root)?;
    create_parent(&dir, to, &dest)?;
    rename_new(&dir, &source, &dest).map_err(|e| MemoryError::io(from, e))?;
    sync_parents(&dir, &source, &dest, to)
}

/// Syncs the folders of both ends of a move, so it survives a power cut whole.
fn sync_parents(dir: &Dir, source: &Path, dest: &Path, rel: &str) -> Result<(), MemoryError> {
    for path in [source, dest] {
        let folder = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(parent) => dir.open_dir(parent),
            None => dir.try_clone(),
        };
        folder
            .and_then(|folder| sync_folder(&folder))
            .map_err(|e| MemoryError::io(rel, e))?;
    }
    Ok(())
}

/// Removes the file, link or empty folder `rel`, which must lie in `.cairn/`.
pub fn remove_private(root: &Path, rel: &str) -> Result<(), MemoryError> {
    let real = entry_target(root, rel, Access::Read)?;
    if !in_private_dir(&real) {
        return Err(MemoryError::NotPrivate(rel.to_string()));
    }
    let dir = open_root(root)?;
    dir.remove_file(&real)
        .or_else(|_| dir.remove_dir(&real))
        .map_err(|e| opening_error(rel, e))
}

/// Removes the file (or link) `rel`; a link is removed, not what it leads to.
pub fn remove_file(root: &Path, rel: &str) -> Result<(), MemoryError> {
    let real = entry_target(root, rel, Access::Write)?;
    open_root(root)?
        .remove_file(&real)
        .map_err(|e| opening_error(rel, e))
}

/// Makes the folder `rel` and its parents (the same rules as a tool's write).
pub fn create_dir_all(root: &Path, rel: &str) -> Result<(), MemoryError> {
    let real = target(root, rel, Access::Write)?;
    open_root(root)?
        .create_dir_all(here(&real))
        .map_err(|e| MemoryError::io(rel, e))
}

/// Whether something (a file, a folder, a link) is at `rel`.
pub fn exists(root: &Path, rel: &str) -> Result<bool, MemoryError> {
    let real = entry_target(root, rel, Access::Read)?;
    match open_root(root)?.symlink_metadata(here(&real)) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(MemoryError::io(rel, e)),
    }
}

/// The entries of the folder `rel`, in no particular order.
pub fn entries(root: &Path, rel: &str) -> Result<Vec<Entry>, MemoryError> {
    let real = target(root, rel, Access::Read)?;
    let fail = |e| MemoryError::io(rel, e);
    let dir = open_root(root)?.open_dir(here(&real)).map_err(fail)?;
    let mut out = Vec::new();
    for entry in dir.entries().map_err(fail)? {
        let entry = entry.map_err(fail)?;
        let kind = match entry.file_type() {
            Ok(t) if t.is_file() => EntryKind::File,
            Ok(t) if t.is_dir() => EntryKind::Dir,
            Ok(t) if t.is_symlink() => EntryKind::Symlink,
            _ => EntryKind::Other,
        };
        out.push(Entry {
            name: entry.file_name(),
            kind,
        });
    }
    Ok(out)
}

fn open_root(root: &Path) -> Result<Dir, MemoryError> {
    Dir::open_ambient_dir(root, ambient_authority()).map_err(|e| MemoryError::io(root, e))
}

/// `""` (the root itself) as `.`, which a `Dir` understands.
fn here(real: &Path) -> &Path {
    if real.as_os_str().is_empty() {
        Path::new(".")
    } else {
        real
    }
}

/// Where `rel` leads after the resolver's checks, relative to the root, every link of
/// its existing part followed (the part that does not exist yet appended as given).
fn target(root: &Path, rel: &str, access: Access) -> Result<PathBuf, MemoryError> {
    let joined = paths::resolve(root, rel, access)?;
    real_relative(root, &joined, rel)
}

/// Where `rel` is as an entry of its folder: the folder resolved as [`target`] does, the
/// last name kept (a link there is the link itself, wherever it leads).
fn entry_target(root: &Path, rel: &str, access: Access) -> Result<PathBuf, MemoryError> {
    let path = Path::new(rel);
    let (parent, Some(std::path::Component::Normal(name))) =
        (path.parent(), path.components().next_back())
    else {
        return Err(MemoryError::io(
            rel,
            io::Error::other("the path names no file"),
        ));
    };
    let parent = match parent.and_then(Path::to_str) {
        Some("") | None => ".",
        Some(parent) => parent,
    };
    let folder = paths::resolve(root, parent, access).map_err(|e| renamed(e, rel))?;
    let entry = real_relative(root, &folder, rel)?.join(name);
    if access == Access::Write {
        paths::refuse_protected(&entry, rel)?;
    }
    Ok(entry)
}

/// A refusal of `rel`'s folder, told as a refusal of `rel`.
fn renamed(error: PathError, rel: &str) -> PathError {
    let rel = rel.to_string();
    match error {
        PathError::Empty => PathError::Empty,
        PathError::Nul(_) => PathError::Nul(rel),
        PathError::Outside(_) => PathError::Outside(rel),
        PathError::SymlinkEscape(_) => PathError::SymlinkEscape(rel),
        PathError::Private(_) => PathError::Private(rel),
        PathError::Session(_) => PathError::Session(rel),
        PathError::ReadOnlyFolder(_) => PathError::ReadOnlyFolder(rel),
    }
}

fn real_relative(root: &Path, joined: &Path, rel: &str) -> Result<PathBuf, MemoryError> {
    let mut existing = joined;
    let mut missing = Vec::new();
    while existing.symlink_metadata().is_err() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name);
                existing = parent;
            }
            _ => break,
        }
    }
    let real = existing
        .canonicalize()
        .map_err(|e| MemoryError::io(rel, e))?;
    let inside = real
        .strip_prefix(root)
        .map_err(|_| PathError::SymlinkEscape(rel.to_string()))?;
    let mut out = inside.to_path_buf();
    out.extend(missing.iter().rev());
    Ok(out)
}

/// Opens `real` with `options` (never blocking on a pipe) and keeps it only when it is a
/// regular file.
fn open_regular(
    root: &Path,
    rel: &str,
    real: &Path,
    options: &OpenOptions,
) -> Result<std::fs::File, MemoryError> {
    let mut options = options.clone();
    #[cfg(unix)]
    cap_std::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = open_root(root)?
        .open_with(real, &options)
        .map_err(|e| opening_error(rel, e))?
        .into_std();
    let meta = file.metadata().map_err(|e| MemoryError::io(rel, e))?;
    if !meta.is_file() {
        return Err(MemoryError::NotAFile(rel.to_string()));
    }
    Ok(file)
}

/// An open refused because it would leave the root (a link swapped in since the check)
/// says so; other errors stay as they are.
fn opening_error(rel: &str, error: io::Error) -> MemoryError {
    #[cfg(unix)]
    if error.raw_os_error() == Some(libc::ENXIO) {
        // A pipe opened for writing with no reader.
        return MemoryError::NotAFile(rel.to_string());
    }
    if error.kind() == io::ErrorKind::PermissionDenied && error.raw_os_error().is_none() {
        return MemoryError::Path(PathError::SymlinkEscape(rel.to_string()));
    }
    MemoryError::io(rel, error)
}

fn read_capped(
    file: &mut std::fs::File,
    shown: &str,
    max_bytes: u64,
) -> Result<Vec<u8>, MemoryError> {
    let fail = |e| MemoryError::io(shown, e);
    let len = file.metadata().map_err(fail)?.len();
    let too_large = |bytes| MemoryError::TooLarge {
        path: shown.to_string(),
        bytes,
        max: max_bytes,
    };
    if len > max_bytes {
        return Err(too_large(len));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(fail)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Makes the folder `real` is in when it is missing; one that is there must be reached
/// beneath the root.
fn create_parent(dir: &Dir, rel: &str, real: &Path) -> Result<(), MemoryError> {
    let Some(parent) = real.parent().filter(|p| !p.as_os_str().is_empty()) else {
        return Ok(());
    };
    match dir.open_dir(parent) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => dir
            .create_dir_all(parent)
            .map_err(|e| opening_error(rel, e)),
        Err(e) => Err(opening_error(rel, e)),
    }
}

fn in_private_dir(relative: &Path) -> bool {
    matches!(
        relative.components().next(),
        Some(Component::Normal(first)) if first.eq_ignore_ascii_case(PRIVATE_DIR)
    ) && relative.components().count() > 1
}

/// Writes `bytes` beside `real` and renames the temp file over it, within one folder
/// handle opened beneath the root.
fn replace(root: &Path, rel: &str, real: &Path, bytes: &[u8]) -> Result<(), MemoryError> {
    replace_with(root, rel, real, bytes, |folder, temp, name| {
        folder.rename(temp, folder, name)?;
        sync_folder(folder)?;
        Ok(swap::Swap::Replaced)
    })
    .map(|_| ())
}

/// Writes `bytes` to a synced temp file beside `real` (with the old file's permissions),
/// then lets `commit` put it in place; whatever is left under the temp name goes.
fn replace_with(
    root: &Path,
    rel: &str,
    real: &Path,
    bytes: &[u8],
    commit: impl FnOnce(&Dir, &Path, &Path) -> io::Result<swap::Swap>,
) -> Result<swap::Swap, MemoryError> {
    let fail = |e| opening_error(rel, e);
    let Some(name) = real.file_name() else {
        return Err(MemoryError::io(
            rel,
            io::Error::other("the path names no file"),
        ));
    };
    let dir = open_root(root)?;
    create_parent(&dir, rel, real)?;
    let folder = match real.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => dir.open_dir(parent).map_err(fail)?,
        None => dir,
    };
    replace_in(&folder, rel, name, bytes, commit)
}

/// [`replace_with`] in a folder already open.
pub(crate) fn replace_in(
    folder: &Dir,
    rel: &str,
    name: &std::ffi::OsStr,
    bytes: &[u8],
    commit: impl FnOnce(&Dir, &Path, &Path) -> io::Result<swap::Swap>,
) -> Result<swap::Swap, MemoryError> {
    let temp = temp_name(name);
    let done = write_temp(folder, &temp, Path::new(name), bytes)
        .and_then(|()| commit(folder, &temp, Path::new(name)));
    let _ = folder.remove_file(&temp);
    done.map_err(|e| opening_error(rel, e))
}

fn write_temp(folder: &Dir, temp: &Path, name: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    let mut file = folder.open_with(temp, &options)?;
    file.write_all(bytes)?;
    if let Ok(meta) = folder.symlink_metadata(name) {
        if meta.is_file() {
            file.set_permissions(meta.permissions())?;
        }
    }
    file.sync_all()
}

#[cfg(unix)]
pub(crate) fn sync_folder(folder: &Dir) -> io::Result<()> {
    // The folder handle may be a path-only descriptor: open the folder itself to sync it.
    folder.open(".")?.sync_all()
}

/// Folders cannot be synced through a handle on every platform; the rename is durable
/// once the file system commits it.
#[cfg(not(unix))]
pub(crate) fn sync_folder(_folder: &Dir) -> io::Result<()> {
    Ok(())
}

/// `.name.<pid>-<nanos>.tmp`.
fn temp_name(name: &std::ffi::OsStr) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    PathBuf::from(format!(
        ".{}.{}-{nanos}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ))
}

#[path = "swap.rs"]
mod swap;
pub use swap::{replace_if, replace_if_exact, Swap};

#[cfg(all(test, unix))]
#[path = "beneath_tests.rs"]
mod tests;
