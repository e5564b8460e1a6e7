//! Replacing a file only if what it holds at that very moment passes a check, so that an
//! edit saved by someone else (the user's editor, another process) is never overwritten
//! by a replacement made from an older text.

use std::io;
use std::path::Path;

use cap_std::fs::Dir;

use super::{replace_with, sync_folder, target};
use crate::{Access, MemoryError};

/// How [`replace_if`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swap {
    /// The new bytes are in place.
    Replaced,
    /// The file failed the check: it was left as it is and nothing was written.
    Kept,
}

/// Replaces `rel` with `bytes` like [`super::write_atomic`], only if the file there passes
/// `check` (`None`: there is no file), judged at the moment of the replacement.
///
/// On Linux the file is judged first as it is (so a file that fails never shows the new
/// text), then the new file and the old one exchange names in one step (`renameat2` with
/// `RENAME_EXCHANGE`) and the old file, now under the temp name, is judged again: a no
/// exchanges them back. So no save landing between the check and the replacement is lost.
/// Once the folder is synced the old file is read once more, for a save written in place
/// by a program that opened it before the exchange; it too gets its file back. A save made
/// while the names were exchanged is the newest text, and stays. Where names cannot be
/// exchanged, the file is checked, then replaced.
pub fn replace_if(
    root: &Path,
    rel: &str,
    bytes: &[u8],
    check: impl Fn(Option<&[u8]>) -> bool,
) -> Result<Swap, MemoryError> {
    let real = target(root, rel, Access::Write)?;
    replace_with(root, rel, &real, bytes, |folder, temp, name| {
        exchange_checked(folder, temp, name, bytes, check)
    })
}

/// [`replace_if`] at exactly `real` (relative to the root, links followed), reached as
/// [`crate::exact::write_exact`] reaches it: a link swapped in on the way fails the write.
pub fn replace_if_exact(
    root: &Path,
    real: &Path,
    shown: &str,
    bytes: &[u8],
    check: impl Fn(Option<&[u8]>) -> bool,
) -> Result<Swap, MemoryError> {
    let (folder, name) = crate::exact::place(root, real, shown)?;
    super::replace_in(&folder, shown, name, bytes, |folder, temp, name| {
        exchange_checked(folder, temp, name, bytes, check)
    })
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn exchange_checked(
    folder: &Dir,
    temp: &Path,
    name: &Path,
    ours: &[u8],
    check: impl Fn(Option<&[u8]>) -> bool,
) -> io::Result<Swap> {
    use rustix::fs::{renameat_with, RenameFlags};
    use rustix::io::Errno;
    if !check(read_if_there(folder, name)?.as_deref()) {
        return Ok(Swap::Kept);
    }
    match renameat_with(folder, temp, folder, name, RenameFlags::EXCHANGE) {
        Ok(()) => {}
        Err(Errno::NOENT) => {
            // Nothing there: ours goes in unless a file appears meanwhile.
            if !check(None) {
                return Ok(Swap::Kept);
            }
            return match renameat_with(folder, temp, folder, name, RenameFlags::NOREPLACE) {
                Ok(()) => sync_folder(folder).map(|()| Swap::Replaced),
                Err(Errno::EXIST) => Ok(Swap::Kept),
                Err(e) => Err(e.into()),
            };
        }
        // A file system that cannot exchange names.
        Err(Errno::INVAL | Errno::NOSYS | Errno::NOTSUP) => {
            return check_then_rename(folder, temp, name, check)
        }
        Err(e) => return Err(e.into()),
    }
    let displaced = folder.read(temp)?;
    if !check(Some(&displaced)) {
        return give_back(folder, temp, name, ours);
    }
    sync_folder(folder)?;
    if folder.read(temp)? != displaced {
        return give_back(folder, temp, name, ours);
    }
    Ok(Swap::Replaced)
}

/// Puts the file that was displaced by the exchange back under its name. If what comes
/// back under the temp name is not `ours`, a save landed on the name meanwhile: it is the
/// newest text, so it goes back in place instead.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn give_back(folder: &Dir, temp: &Path, name: &Path, ours: &[u8]) -> io::Result<Swap> {
    use rustix::fs::{renameat_with, RenameFlags};
    renameat_with(folder, temp, folder, name, RenameFlags::EXCHANGE)?;
    if folder.read(temp)? != ours {
        renameat_with(folder, temp, folder, name, RenameFlags::EXCHANGE)?;
    }
    sync_folder(folder)?;
    Ok(Swap::Kept)
}

fn read_if_there(folder: &Dir, name: &Path) -> io::Result<Option<Vec<u8>>> {
    match folder.read(name) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn exchange_checked(
    folder: &Dir,
    temp: &Path,
    name: &Path,
    _ours: &[u8],
    check: impl Fn(Option<&[u8]>) -> bool,
) -> io::Result<Swap> {
    check_then_rename(folder, temp, name, check)
}

fn check_then_rename(
    folder: &Dir,
    temp: &Path,
    name: &Path,
    check: impl Fn(Option<&[u8]>) -> bool,
) -> io::Result<Swap> {
    if !check(read_if_there(folder, name)?.as_deref()) {
        return Ok(Swap::Kept);
    }
    folder.rename(temp, folder, name)?;
    sync_folder(folder).map(|()| Swap::Replaced)
}

#[cfg(all(test, unix))]
#[path = "swap_tests.rs"]
mod tests;
