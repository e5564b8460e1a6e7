//! Finding the protected entries by looking at every folder, for when the workspace cannot
//! be watched (see `watch.rs`).
//!
//! A folder's listing is remembered with its modification time, which changes whenever an
//! entry is added, removed or renamed in it, so a later look costs one `stat` per folder
//! and a listing only of the folders that changed. A folder changed in the last two
//! seconds is always listed again (some file systems keep whole seconds). A `chmod`
//! changes no folder's time: when executables are protected, every file is looked at
//! again each time.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::rules::{mode, Kind, Rules};
use super::Entry;

/// A listing younger than this is not trusted to the modification time.
const SETTLE: Duration = Duration::from_secs(2);

/// One folder as last listed.
#[derive(Debug, Clone)]
struct Listing {
    mtime: SystemTime,
    /// Folders to look into (not protected, not symlinks).
    folders: Vec<PathBuf>,
    /// Entries protected by their name.
    protected: Vec<Entry>,
    /// Regular files not protected by their name, looked at again for an execute bit.
    files: Vec<PathBuf>,
}

/// The remembered listings of one workspace's folders.
#[derive(Debug, Default)]
pub(super) struct Walk {
    listings: HashMap<PathBuf, Listing>,
}

impl Walk {
    /// The protected entries beneath `root`, sorted.
    pub(super) fn entries(&mut self, root: &Path, rules: &Rules) -> Vec<Entry> {
        let mut found = Vec::new();
        let mut visited = HashSet::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(folder) = stack.pop() {
            let Some(listing) = self.listing(root, &folder, rules) else {
                continue;
            };
            found.extend(listing.protected.iter().cloned());
            found.extend(executables(&listing.files, root, rules));
            stack.extend(listing.folders.iter().cloned());
            visited.insert(folder);
        }
        self.listings.retain(|path, _| visited.contains(path));
        found.sort();
        found
    }

    /// The folder's listing, from memory when it has not changed since.
    fn listing(&mut self, root: &Path, folder: &Path, rules: &Rules) -> Option<&Listing> {
        let mtime = std::fs::symlink_metadata(folder).ok()?.modified().ok()?;
        let settled = SystemTime::now()
            .duration_since(mtime)
            .is_ok_and(|age| age > SETTLE);
        let known = self.listings.get(folder).is_some_and(|l| l.mtime == mtime);
        if !(settled && known) {
            let fresh = list(root, folder, mtime, rules)?;
            self.listings.insert(folder.to_path_buf(), fresh);
        }
        self.listings.get(folder)
    }
}

fn list(root: &Path, folder: &Path, mtime: SystemTime, rules: &Rules) -> Option<Listing> {
    let mut listing = Listing {
        mtime,
        folders: Vec::new(),
        protected: Vec::new(),
        files: Vec::new(),
    };
    for entry in std::fs::read_dir(folder).ok()?.flatten() {
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        let rel = path.strip_prefix(root).unwrap_or(&path);
        // Execute bits are looked at on every walk (`executables`), not here.
        match rules.kind(rel, file_type, || None) {
            Kind::Protected => listing.protected.push(Entry {
                link: file_type.is_symlink(),
                path,
            }),
            Kind::Folder => listing.folders.push(path),
            Kind::Other if file_type.is_file() => listing.files.push(path),
            Kind::Other => {}
        }
    }
    Some(listing)
}

/// The files among `files` that have an execute bit now, when those are protected.
fn executables<'a>(
    files: &'a [PathBuf],
    root: &'a Path,
    rules: &'a Rules,
) -> impl Iterator<Item = Entry> + 'a {
    files
        .iter()
        .filter(|_| rules.executables())
        .filter_map(move |path| {
            let meta = std::fs::symlink_metadata(path).ok()?;
            let rel = path.strip_prefix(root).ok()?;
            (rules.kind(rel, meta.file_type(), || mode(&meta)) == Kind::Protected).then(|| Entry {
                path: path.clone(),
                link: false,
            })
        })
}
