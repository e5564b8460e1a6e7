//! The protected entries of a workspace kept current by watching each of its folders with
//! inotify, so that a call costs only the changes made since the last one.
//!
//! Why reading the queue at the start of a call is enough: the kernel queues an inotify
//! event inside the system call that makes the change (create, rename, unlink, chmod),
//! before that call returns. So when a call starts, every change made before it is in
//! the queue, and [`Index::current`] reads the queue up to the length it had then;
//! changes made while it reads are for the next call.
//!
//! A folder is watched before it is listed, so an entry made in it meanwhile is either in
//! the listing or in the queue. An event is never trusted for what it says: the entry it
//! names is looked at again (`lstat`), which makes events in any order, or repeated, give
//! the same result.
//!
//! The index gives up, and is rebuilt, when the queue overflowed, the root was replaced,
//! or a file with other names (hard links) became executable, since no event names those.
//! It gives up for good (the caller walks instead) when a watch cannot be added (the
//! user's `fs.inotify.max_user_watches` is reached), when a folder is on a file system
//! where changes can come from elsewhere without an event (network or FUSE file systems),
//! or when one folder is reached by two paths.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::ops::Bound;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::io::Errno;

use super::rules::{mode, Kind, Rules};
use super::Entry;

/// Bytes read from the queue at a time (an event is 16 bytes and a name of up to 256).
const BUFFER: usize = 64 * 1024;

/// The size of an event before its name.
const HEADER: usize = 16;

/// File systems on which every change passes through this machine's kernel, by
/// `statfs` type: ext2/3/4, XFS, Btrfs, tmpfs, ramfs, F2FS, ZFS, bcachefs, overlayfs,
/// FAT, exFAT, NTFS.
const LOCAL: [u32; 12] = [
    0xEF53,
    0x5846_5342,
    0x9123_683E,
    0x0102_1994,
    0x8584_58F6,
    0xF2F5_2010,
    0x2FC1_2FC1,
    0xCA45_1A4E,
    0x794C_7630,
    0x4D44,
    0x2011_BAB0,
    0x5346_544E,
];

/// Why the index no longer answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Failure {
    /// There is no folder at the root.
    RootGone,
    /// Events were lost: build a new index.
    Rebuild,
    /// Watching cannot be relied on here: look at every folder instead.
    Unwatchable(String),
}

/// One event as read from the queue.
struct Event {
    wd: i32,
    mask: ReadFlags,
    name: Option<OsString>,
}

/// The watched folders of one workspace and its protected entries.
pub(super) struct Index {
    root: PathBuf,
    /// The root's device and inode: another folder put at its path is not watched.
    id: (u64, u64),
    fd: OwnedFd,
    rules: Rules,
    /// Watched folders, by path and by watch.
    folders: BTreeMap<PathBuf, i32>,
    paths: HashMap<i32, PathBuf>,
    /// Protected entries, each with whether it is a symlink.
    protected: BTreeMap<PathBuf, bool>,
    /// Devices known to hold a local file system.
    local: HashSet<u64>,
    buffer: Vec<u8>,
}

impl Index {
    /// Watches every folder beneath `root` that is looked into and notes the protected
    /// entries.
    pub(super) fn build(root: &Path, rules: &Rules) -> Result<Self, Failure> {
        let meta = std::fs::symlink_metadata(root).map_err(|_| Failure::RootGone)?;
        if !meta.is_dir() {
            return Err(Failure::RootGone);
        }
        let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)
            .map_err(|e| Failure::Unwatchable(format!("inotify cannot start: {e}")))?;
        let mut index = Self {
            root: root.to_path_buf(),
            id: (meta.dev(), meta.ino()),
            fd,
            rules: rules.clone(),
            folders: BTreeMap::new(),
            paths: HashMap::new(),
            protected: BTreeMap::new(),
            local: HashSet::new(),
            buffer: vec![0; BUFFER],
        };
        index.add_tree(root)?;
        Ok(index)
    }

    /// The protected entries, sorted.
    pub(super) fn entries(&self) -> Vec<Entry> {
        self.protected
            .iter()
            .map(|(path, link)| Entry {
                path: path.clone(),
                link: *link,
            })
            .collect()
    }

    /// Takes in every change made before this call (see the module's comment).
    pub(super) fn current(&mut self) -> Result<(), Failure> {
        let meta = std::fs::symlink_metadata(&self.root).map_err(|_| Failure::RootGone)?;
        if (meta.dev(), meta.ino()) != self.id {
            return Err(Failure::Rebuild);
        }
        let queued = rustix::io::ioctl_fionread(&self.fd)
            .map_err(|e| Failure::Unwatchable(format!("inotify: {e}")))?;
        let mut left = usize::try_from(queued).unwrap_or(usize::MAX);
        while left > 0 {
            let read = match rustix::io::read(&self.fd, &mut self.buffer[..]) {
                Ok(read) => read,
                Err(Errno::AGAIN) => break,
                Err(Errno::INTR) => continue,
                Err(e) => return Err(Failure::Unwatchable(format!("inotify: {e}"))),
            };
            left = left.saturating_sub(read);
            for event in parse(&self.buffer[..read]) {
                self.apply(event)?;
            }
        }
        Ok(())
    }

    fn apply(&mut self, event: Event) -> Result<(), Failure> {
        if event
            .mask
            .intersects(ReadFlags::QUEUE_OVERFLOW | ReadFlags::UNMOUNT)
        {
            return Err(Failure::Rebuild);
        }
        let Some(folder) = self.paths.get(&event.wd).cloned() else {
            // A watch given up since: what it saw was looked at then.
            return Ok(());
        };
        let itself = ReadFlags::IGNORED | ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF;
        let Some(name) = event.name else {
            if event.mask.contains(ReadFlags::IGNORED) {
                self.unmap(event.wd);
            }
            // A folder's own removal or move is also an event of its parent's, except
            // the root's.
            return match folder == self.root && event.mask.intersects(itself) {
                true => Err(Failure::Rebuild),
                false => Ok(()),
            };
        };
        let path = folder.join(name);
        let moved = ReadFlags::CREATE | ReadFlags::DELETE | ReadFlags::MOVED_FROM;
        match event.mask.intersects(moved | ReadFlags::MOVED_TO) {
            true => self.refresh(&path),
            false => self.attributes_changed(&path),
        }
    }

    /// Looks at `path` again, and everything beneath it when it is a folder.
    fn refresh(&mut self, path: &Path) -> Result<(), Failure> {
        self.forget(path);
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return Ok(());
        };
        match self.kind(path, &meta) {
            Kind::Protected => {
                self.protected
                    .insert(path.to_path_buf(), meta.file_type().is_symlink());
            }
            Kind::Folder => self.add_tree(path)?,
            Kind::Other => {}
        }
        Ok(())
    }

    /// A `chmod` (or a `touch`): only a file's execute bit can change what is protected.
    fn attributes_changed(&mut self, path: &Path) -> Result<(), Failure> {
        if self.folders.contains_key(path) {
            return Ok(());
        }
        let was = self.protected.contains_key(path);
        self.refresh(path)?;
        let links = std::fs::symlink_metadata(path).map_or(1, |m| m.nlink());
        match !was && self.protected.contains_key(path) && links > 1 {
            // Its other names became executable too, and no event names them.
            true => Err(Failure::Rebuild),
            false => Ok(()),
        }
    }

    fn kind(&self, path: &Path, meta: &std::fs::Metadata) -> Kind {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        self.rules.kind(rel, meta.file_type(), || mode(meta))
    }

    /// Watches `start` and every folder beneath it that is looked into, noting the
    /// protected entries. Each folder is watched before it is listed.
    fn add_tree(&mut self, start: &Path) -> Result<(), Failure> {
        let mut stack = vec![start.to_path_buf()];
        while let Some(folder) = stack.pop() {
            if !self.watch(&folder)? {
                continue;
            }
            let Ok(listing) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in listing.flatten() {
                let Ok(file_type) = entry.file_type() else {
                    continue;
                };
                let path = entry.path();
                let rel = path.strip_prefix(&self.root).unwrap_or(&path);
                let mode = || entry.metadata().ok().and_then(|m| mode(&m));
                match self.rules.kind(rel, file_type, mode) {
                    Kind::Protected => {
                        self.protected.insert(path, file_type.is_symlink());
                    }
                    Kind::Folder => stack.push(path),
                    Kind::Other => {}
                }
            }
        }
        Ok(())
    }

    /// Watches `folder`; false when it is no longer a folder there (its parent's event
    /// will tell what it became).
    fn watch(&mut self, folder: &Path) -> Result<bool, Failure> {
        let mut mask = WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVE_SELF
            | WatchFlags::ONLYDIR
            | WatchFlags::DONT_FOLLOW;
        if self.rules.executables() {
            mask |= WatchFlags::ATTRIB;
        }
        let wd = match inotify::add_watch(&self.fd, folder, mask) {
            Ok(wd) => wd,
            Err(Errno::NOSPC) => return Err(Failure::Unwatchable(limit())),
            Err(Errno::NOMEM) => return Err(Failure::Unwatchable("out of memory".into())),
            Err(_) => return Ok(false),
        };
        let Ok(meta) = std::fs::symlink_metadata(folder) else {
            return Ok(false);
        };
        self.check_device(folder, meta.dev())?;
        if self.paths.get(&wd).is_some_and(|known| known != folder) {
            return Err(Failure::Unwatchable(format!(
                "{} is reached by two paths",
                folder.display()
            )));
        }
        self.paths.insert(wd, folder.to_path_buf());
        self.folders.insert(folder.to_path_buf(), wd);
        Ok(true)
    }

    /// Fails for a folder on a file system not known to be local.
    fn check_device(&mut self, folder: &Path, dev: u64) -> Result<(), Failure> {
        if self.local.contains(&dev) {
            return Ok(());
        }
        // Magic numbers fit in 32 bits; the field is wider on some targets.
        let kind = rustix::fs::statfs(folder).map(|s| s.f_type as u32);
        match kind {
            Ok(kind) if LOCAL.contains(&kind) => {
                self.local.insert(dev);
                Ok(())
            }
            Ok(kind) => Err(Failure::Unwatchable(format!(
                "{} is on a file system (type {kind:#x}) whose changes may come without events",
                folder.display()
            ))),
            Err(e) => Err(Failure::Unwatchable(format!("{}: {e}", folder.display()))),
        }
    }

    /// Drops what is known at or beneath `path`, and its watches.
    fn forget(&mut self, path: &Path) {
        let range = (Bound::Included(path), Bound::Unbounded);
        let gone: Vec<PathBuf> = self
            .protected
            .range::<Path, _>(range)
            .map(|(p, _)| p)
            .take_while(|p| p.starts_with(path))
            .cloned()
            .collect();
        for p in gone {
            self.protected.remove(&p);
        }
        let watched: Vec<(PathBuf, i32)> = self
            .folders
            .range::<Path, _>(range)
            .take_while(|(p, _)| p.starts_with(path))
            .map(|(p, wd)| (p.clone(), *wd))
            .collect();
        for (p, wd) in watched {
            self.folders.remove(&p);
            self.paths.remove(&wd);
            // Fails when the folder is gone, which removed the watch already.
            let _ = inotify::remove_watch(&self.fd, wd);
        }
    }

    /// The kernel dropped a watch (its folder is gone).
    fn unmap(&mut self, wd: i32) {
        if let Some(path) = self.paths.remove(&wd) {
            if self.folders.get(&path) == Some(&wd) {
                self.folders.remove(&path);
            }
        }
    }
}

/// The events in `bytes` as read from an inotify queue: each a watch, a mask, a cookie,
/// a length, then a name of that length padded with zero bytes.
fn parse(mut bytes: &[u8]) -> Vec<Event> {
    let mut events = Vec::new();
    while let Some(header) = bytes.get(..HEADER) {
        let word = |at: usize| {
            let mut four = [0; 4];
            four.copy_from_slice(&header[at..at + 4]);
            four
        };
        let len = u32::from_ne_bytes(word(12)) as usize;
        let end = (HEADER + len).min(bytes.len());
        let name = bytes[HEADER..end].split(|b| *b == 0).next().unwrap_or(&[]);
        events.push(Event {
            wd: i32::from_ne_bytes(word(0)),
            mask: ReadFlags::from_bits_retain(u32::from_ne_bytes(word(4))),
            name: (!name.is_empty()).then(|| OsStr::from_bytes(name).to_os_string()),
        });
        bytes = &bytes[end..];
    }
    events
}

/// Why a watch could not be added.
fn limit() -> String {
    let max = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into());
    format!("the user's inotify watches are all taken (fs.inotify.max_user_watches = {max})")
}
