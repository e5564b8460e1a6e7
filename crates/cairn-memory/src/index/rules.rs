//! Which files of a folder the index looks at. Every note and document of a known type
//! is, except hidden paths (`.cairn/`, `.git/`, `.obsidian/` …), what the folder's
//! `.gitignore`, `.ignore` and `.cairnignore` files leave out (parsed and matched by the
//! `ignore` crate, ripgrep's), and what `[memory] exclude` leaves out. The workspace's own
//! layout (MEMORY.md, AGENTS.md, memory/, sessions/) is indexed whatever the ignore files
//! say; `exclude` applies to it too.
//!
//! The same rules answer both questions the index asks: "which files are there" (a walk
//! that prunes ignored folders, for a reconcile) and "is this one file in" (for a change
//! the watcher saw), so the two never disagree.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;

use super::folders::Folder;
use crate::source::{classify_path, is_layout, Format, NotIndexed, Source, SourceKind};

/// The files in a folder that hold ignore rules, weakest first.
pub const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", ".cairnignore"];

/// What a walk finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    Source(Source),
    /// A file or folder left out, with why (for the coverage report). Hidden entries and
    /// Cairn's own internal files are not told.
    Left {
        path: String,
        folder: bool,
        reason: String,
    },
}

pub struct Rules {
    root: PathBuf,
    /// For a folder searched in place, its name: the first part of its sources' paths,
    /// and every file in it is a note (the workspace's layout means nothing there).
    folder: Option<String>,
    /// `[memory] exclude`, as lines of one `.gitignore` at the root.
    exclude: Gitignore,
    /// Each folder's ignore files, parsed (by workspace-relative folder, "" for the root;
    /// `None` when it has none).
    folders: HashMap<String, Option<Gitignore>>,
}

impl Rules {
    /// The rules of the folder at `root`, with the `exclude` globs of the settings (each
    /// as in `.gitignore`: `drafts/`, `*.log`, `archive/**/old-*.md`).
    pub fn new(root: &Path, exclude: &[String]) -> Result<Self, String> {
        let mut builder = GitignoreBuilder::new(root);
        for glob in exclude {
            let glob = glob.trim().trim_start_matches('!');
            if glob.is_empty() {
                continue;
            }
            builder
                .add_line(None, glob)
                .map_err(|e| format!("`[memory] exclude` has a bad pattern `{glob}`: {e}"))?;
        }
        let exclude = builder
            .build()
            .map_err(|e| format!("`[memory] exclude`: {e}"))?;
        Ok(Self {
            root: root.to_path_buf(),
            folder: None,
            exclude,
            folders: HashMap::new(),
        })
    }

    /// The rules of a folder searched in place (its own ignore files, and `exclude`).
    pub fn outside(folder: &Folder, exclude: &[String]) -> Result<Self, String> {
        Ok(Self {
            folder: Some(folder.name.clone()),
            ..Self::new(&folder.root, exclude)?
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The path within this root of the index path `path`, when it is this root's.
    pub fn relative_of<'a>(&self, path: &'a str) -> Option<&'a str> {
        match &self.folder {
            Some(name) => path.strip_prefix(name.as_str())?.strip_prefix('/'),
            None => Some(path),
        }
    }

    /// The index path of `relative` in this root.
    fn indexed(&self, relative: &str) -> String {
        match &self.folder {
            Some(name) => format!("{name}/{relative}"),
            None => relative.to_string(),
        }
    }

    /// What `relative` is, by its path alone.
    fn classify(&self, relative: &str) -> Result<Source, NotIndexed> {
        if self.folder.is_none() {
            return classify_path(relative);
        }
        if relative
            .split('/')
            .any(|p| p.is_empty() || p.starts_with('.'))
        {
            return Err(NotIndexed::Hidden);
        }
        let name = relative.rsplit('/').next().unwrap_or(relative);
        let format = Format::of(name).ok_or(NotIndexed::Unsupported)?;
        Ok(Source {
            path: self.indexed(relative),
            kind: SourceKind::Note,
            format,
            date: None,
        })
    }

    /// Forgets the ignore files read so far (they are read again when next needed).
    pub fn forget(&mut self) {
        self.folders.clear();
    }

    /// Whether `relative` (within this root) is a source of the index: the source, or why
    /// it is not.
    pub fn admit(&mut self, relative: &str) -> Result<Source, String> {
        let source = self.classify(relative).map_err(|why| match why {
            NotIndexed::Hidden => "hidden".to_string(),
            NotIndexed::Internal => "Cairn's own file".to_string(),
            NotIndexed::Unsupported => unsupported(relative),
        })?;
        let parts: Vec<&str> = relative.split('/').collect();
        for end in 1..=parts.len() {
            let prefix = parts[..end].join("/");
            if let Some(reason) = self.ignored_here(&prefix, end < parts.len()) {
                return Err(reason);
            }
        }
        Ok(source)
    }

    /// Why the entry `relative` is left out by the exclude setting or an ignore file,
    /// looking at it alone (its folders are taken as admitted).
    fn ignored_here(&mut self, relative: &str, is_dir: bool) -> Option<String> {
        if let Match::Ignore(glob) = self.exclude.matched(self.root.join(relative), is_dir) {
            return Some(format!(
                "excluded by `[memory] exclude` (`{}`)",
                glob.original()
            ));
        }
        if self.folder.is_none() && is_layout(relative) {
            return None;
        }
        let absolute = self.root.join(relative);
        let root = self.root.clone();
        // The nearest folder's rules first: the first that says anything decides.
        let mut folder = relative.rsplit_once('/').map_or("", |(dir, _)| dir);
        loop {
            if let Some(rules) = self.folder_rules(folder) {
                match rules.matched(&absolute, is_dir) {
                    Match::Ignore(glob) => {
                        let file = glob
                            .from()
                            .and_then(|f| f.strip_prefix(&root).ok())
                            .map_or_else(|| ".gitignore".into(), |f| f.display().to_string());
                        return Some(format!("ignored by {file} (`{}`)", glob.original()));
                    }
                    Match::Whitelist(_) => return None,
                    Match::None => {}
                }
            }
            if folder.is_empty() {
                return None;
            }
            folder = folder.rsplit_once('/').map_or("", |(dir, _)| dir);
        }
    }

    fn folder_rules(&mut self, folder: &str) -> Option<&Gitignore> {
        if !self.folders.contains_key(folder) {
            let dir = self.root.join(folder);
            let mut builder = GitignoreBuilder::new(&dir);
            let mut any = false;
            for name in IGNORE_FILES {
                let path = dir.join(name);
                // Only a regular file (a link could lead anywhere).
                if fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
                    any = true;
                    if let Some(error) = builder.add(&path) {
                        tracing::warn!(path = %path.display(), %error, "ignore file");
                    }
                }
            }
            let rules = any.then(|| builder.build().ok()).flatten();
            self.folders.insert(folder.to_string(), rules);
        }
        self.folders.get(folder).and_then(Option::as_ref)
    }

    /// Walks the folder, telling `visit` every source and everything left out (an ignored
    /// folder once, not each file in it). Symbolic links are not followed.
    pub fn walk(&mut self, visit: &mut dyn FnMut(Found)) {
        self.walk_dir("", visit);
    }

    fn walk_dir(&mut self, relative: &str, visit: &mut dyn FnMut(Found)) {
        let dir = self.root.join(relative);
        let Ok(entries) = fs::read_dir(&dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if name.starts_with('.') {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = if relative.is_empty() {
                name
            } else {
                format!("{relative}/{name}")
            };
            if kind.is_dir() {
                if self.folder.is_none() && (path == "sessions" || path.starts_with("sessions/")) {
                    // Transcripts only at the top of sessions/.
                    if path == "sessions" {
                        self.walk_sessions(visit);
                    }
                    continue;
                }
                match self.ignored_here(&path, true) {
                    Some(reason) => visit(Found::Left {
                        path: self.indexed(&path),
                        folder: true,
                        reason,
                    }),
                    None => self.walk_dir(&path, visit),
                }
            } else if kind.is_file() {
                self.visit_file(path, visit);
            } else if kind.is_symlink() {
                visit(Found::Left {
                    path: self.indexed(&path),
                    folder: false,
                    reason: "symbolic link (not followed)".into(),
                });
            }
        }
    }

    fn walk_sessions(&mut self, visit: &mut dyn FnMut(Found)) {
        let Ok(entries) = fs::read_dir(self.root.join("sessions")) else {
            return;
        };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_file()) {
                if let Some(name) = entry.file_name().to_str() {
                    self.visit_file(format!("sessions/{name}"), visit);
                }
            }
        }
    }

    fn visit_file(&mut self, path: String, visit: &mut dyn FnMut(Found)) {
        match self.classify(&path) {
            Err(NotIndexed::Hidden | NotIndexed::Internal) => {}
            Err(NotIndexed::Unsupported) => visit(Found::Left {
                reason: unsupported(&path),
                path: self.indexed(&path),
                folder: false,
            }),
            Ok(source) => match self.ignored_here(&path, false) {
                Some(reason) => visit(Found::Left {
                    path: self.indexed(&path),
                    folder: false,
                    reason,
                }),
                None => visit(Found::Source(source)),
            },
        }
    }
}

fn unsupported(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((_, ext)) if !ext.is_empty() => format!("unsupported type (.{ext})"),
        _ => "unsupported type (no extension)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        dir
    }

    fn walked(rules: &mut Rules) -> (Vec<String>, Vec<(String, String)>) {
        let mut sources = Vec::new();
        let mut left = Vec::new();
        rules.walk(&mut |found| match found {
            Found::Source(s) => sources.push(s.path),
            Found::Left { path, reason, .. } => left.push((path, reason)),
        });
        (sources, left)
    }

    #[test]
    fn every_note_is_found_and_ignore_files_are_honoured() {
        let dir = tree(&[
            ("MEMORY.md", "m"),
            ("projects/garden.md", "g"),
            ("projects/build/out.md", "o"),
            ("projects/keep.txt", "k"),
            ("projects/.gitignore", "build/\n*.txt\n!keep.txt\n"),
            ("notes/draft.md", "d"),
            ("notes/.cairnignore", "draft.md\n"),
            ("notes/photo.gif", "p"),
            (".obsidian/x.md", "h"),
            ("sessions/a.jsonl", "{}"),
            ("sessions/a.jsonl.corrupt-1", "{}"),
            (".gitignore", "sessions/\nMEMORY.md\n"),
            ("node/x.md", "n"),
            ("node/.ignore", "*\n"),
        ]);
        let mut rules = Rules::new(dir.path(), &[]).unwrap();
        let (sources, left) = walked(&mut rules);
        assert_eq!(
            sources,
            [
                "MEMORY.md",
                "projects/garden.md",
                "projects/keep.txt",
                "sessions/a.jsonl"
            ]
        );
        let reasons: HashMap<_, _> = left.into_iter().collect();
        assert!(
            reasons["projects/build"].contains("projects/.gitignore"),
            "{reasons:?}"
        );
        assert!(reasons["notes/draft.md"].contains("notes/.cairnignore"));
        assert_eq!(reasons["notes/photo.gif"], "unsupported type (.gif)");
        assert!(reasons["node/x.md"].contains("node/.ignore"));
        // One file at a time, the same answers.
        assert!(rules.admit("projects/garden.md").is_ok());
        assert!(rules.admit("projects/build/out.md").is_err());
        assert!(rules.admit("projects/keep.txt").is_ok());
        assert!(rules.admit("notes/draft.md").is_err());
        assert!(rules.admit("sessions/a.jsonl").is_ok());
        assert!(rules.admit(".obsidian/x.md").is_err());
    }

    #[test]
    fn exclude_globs_apply_everywhere() {
        let dir = tree(&[
            ("drafts/a.md", "a"),
            ("notes/b.md", "b"),
            ("notes/old-c.md", "c"),
            ("memory/2026-01-01.md", "d"),
        ]);
        let exclude = ["drafts/".to_string(), "old-*.md".to_string()];
        let mut rules = Rules::new(dir.path(), &exclude).unwrap();
        let (sources, left) = walked(&mut rules);
        assert_eq!(sources, ["memory/2026-01-01.md", "notes/b.md"]);
        assert_eq!(left.len(), 2, "{left:?}");
        assert!(left[0].1.contains("`drafts/`"), "{left:?}");
        assert!(rules.admit("drafts/a.md").unwrap_err().contains("exclude"));
        let memory = Rules::new(dir.path(), &["memory/".to_string()])
            .unwrap()
            .admit("memory/2026-01-01.md");
        assert!(memory.is_err());
    }

    #[test]
    fn a_bad_exclude_pattern_is_a_clear_error() {
        let dir = tree(&[]);
        let error = Rules::new(dir.path(), &["notes/{a,b".to_string()])
            .err()
            .unwrap();
        assert!(error.contains("notes/{a,b"), "{error}");
    }

    #[test]
    fn a_folder_searched_in_place_is_all_notes_under_its_name() {
        let dir = tree(&[
            ("MEMORY.md", "m"),
            ("sessions/a.jsonl", "{}"),
            ("trips/croatia.md", "c"),
            ("trips/.gitignore", "draft.md\n"),
            ("trips/draft.md", "d"),
            (".obsidian/x.md", "h"),
        ]);
        let folder = Folder {
            name: "Notes".into(),
            root: dir.path().to_path_buf(),
        };
        let mut rules = Rules::outside(&folder, &[]).unwrap();
        let (sources, left) = walked(&mut rules);
        assert_eq!(sources, ["Notes/MEMORY.md", "Notes/trips/croatia.md"]);
        assert_eq!(left[0].0, "Notes/sessions/a.jsonl");
        assert_eq!(left[1].0, "Notes/trips/draft.md");
        let memory = rules.admit("MEMORY.md").unwrap();
        assert_eq!(
            (memory.kind, memory.path.as_str()),
            (SourceKind::Note, "Notes/MEMORY.md")
        );
        assert_eq!(
            rules.relative_of("Notes/trips/croatia.md"),
            Some("trips/croatia.md")
        );
        assert_eq!(rules.relative_of("Other/x.md"), None);
    }

    #[test]
    fn changed_ignore_files_count_once_forgotten() {
        let dir = tree(&[("notes/a.md", "a")]);
        let mut rules = Rules::new(dir.path(), &[]).unwrap();
        assert!(rules.admit("notes/a.md").is_ok());
        fs::write(dir.path().join("notes/.ignore"), "a.md\n").unwrap();
        rules.forget();
        assert!(rules.admit("notes/a.md").is_err());
    }
}
