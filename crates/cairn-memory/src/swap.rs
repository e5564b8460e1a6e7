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
/// On Linux the new file and the old one exchange names in one step (`renameat2` with
/// `RENAME_EXCHANGE`); the old file, now under the temp name, is what `check` reads, and
/// a no exchanges them back. So there is no moment between the check and the
/// replacement in which a save could land and be lost. Where names cannot be exchanged,
/// the file is checked, then replaced.
pub fn replace_if(
    root: &Path,
    rel: &str,
    bytes: &[u8],
    check: impl FnOnce(Option<&[u8]>) -> bool,
) -> Result<Swap, MemoryError> {
    let real = target(root, rel, Access::Write)?;
    replace_with(root, rel, &real, bytes, |folder, temp, name| {
        exchange_checked(folder, temp, name, check)
    })
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn exchange_checked(
    folder: &Dir,
    temp: &Path,
    name: &Path,
    check: impl FnOnce(Option<&[u8]>) -> bool,
) -> io::Result<Swap> {
    use rustix::fs::{renameat_with, RenameFlags};
    use rustix::io::Errno;
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
    if check(Some(&displaced)) {
        sync_folder(folder)?;
        return Ok(Swap::Replaced);
    }
    renameat_with(folder, temp, folder, name, RenameFlags::EXCHANGE)?;
    Ok(Swap::Kept)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn exchange_checked(
    folder: &Dir,
    temp: &Path,
    name: &Path,
    check: impl FnOnce(Option<&[u8]>) -> bool,
) -> io::Result<Swap> {
    check_then_rename(folder, temp, name, check)
}

fn check_then_rename(
    folder: &Dir,
    temp: &Path,
    name: &Path,
    check: impl FnOnce(Option<&[u8]>) -> bool,
) -> io::Result<Swap> {
    let current = match folder.read(name) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    if !check(current.as_deref()) {
        return Ok(Swap::Kept);
    }
    folder.rename(temp, folder, name)?;
    sync_folder(folder).map(|()| Swap::Replaced)
}

#[cfg(all(test, unix))]
#[path = "swap_tests.rs"]
mod tests;
