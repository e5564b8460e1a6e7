//! Which files are indexed, and as what: every note and document of a known type in the
//! workspace (hidden paths and `.cairn/` aside), sessions as transcripts.

use std::fmt;
use std::str::FromStr;

use chrono::NaiveDate;

/// The kind of an indexed file. Decides the search corpus it belongs to and whether its
/// hits age (dated daily logs do; MEMORY.md and knowledge do not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceKind {
    /// MEMORY.md: curated long-term memory.
    Memory,
    /// memory/YYYY-MM-DD.md and other notes under memory/ (archived logs included).
    Daily,
    /// AGENTS.md: who the agent is and the house rules.
    Agents,
    /// knowledge/**: the user's reference notes.
    Knowledge,
    /// sessions/<id>.jsonl: what the user and the agent said.
    Session,
    /// Any other note or document, in the workspace or a folder searched in place.
    Note,
}

impl SourceKind {
    /// Every kind, in the order of their bits in the index (new kinds go last).
    pub const ALL: [SourceKind; 6] = [
        SourceKind::Memory,
        SourceKind::Daily,
        SourceKind::Agents,
        SourceKind::Knowledge,
        SourceKind::Session,
        SourceKind::Note,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Memory => "memory",
            SourceKind::Daily => "daily",
            SourceKind::Agents => "agents",
            SourceKind::Knowledge => "knowledge",
            SourceKind::Session => "session",
            SourceKind::Note => "note",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    pub fn corpus(self) -> Corpus {
        match self {
            SourceKind::Memory | SourceKind::Daily | SourceKind::Agents => Corpus::Memory,
            SourceKind::Knowledge | SourceKind::Note => Corpus::Knowledge,
            SourceKind::Session => Corpus::Sessions,
        }
    }
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a search looks through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Corpus {
    /// MEMORY.md, the daily logs and AGENTS.md.
    Memory,
    /// knowledge/ and every other note and document.
    Knowledge,
    Sessions,
    #[default]
    All,
}

impl Corpus {
    pub fn as_str(self) -> &'static str {
        match self {
            Corpus::Memory => "memory",
            Corpus::Knowledge => "knowledge",
            Corpus::Sessions => "sessions",
            Corpus::All => "all",
        }
    }

    pub fn includes(self, kind: SourceKind) -> bool {
        self == Corpus::All || kind.corpus() == self
    }
}

impl FromStr for Corpus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "memory" => Ok(Corpus::Memory),
            "knowledge" => Ok(Corpus::Knowledge),
            "sessions" => Ok(Corpus::Sessions),
            "all" => Ok(Corpus::All),
            other => Err(format!(
                "unknown corpus `{other}` (expected memory, knowledge, sessions or all)"
            )),
        }
    }
}

impl fmt::Display for Corpus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How an indexed file's text is had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Markdown,
    Text,
    /// A session transcript (JSON lines).
    Session,
    Pdf,
    Docx,
    Odt,
    Epub,
    Html,
    /// A picture (PNG, JPEG, WebP, TIFF), indexed by the text OCR reads in it.
    Image,
}

impl Format {
    /// The format of a file named `name`, by its extension; `None` for a type that is not
    /// indexed.
    pub fn of(name: &str) -> Option<Self> {
        let (_, ext) = name.rsplit_once('.')?;
        Some(match ext.to_ascii_lowercase().as_str() {
            "md" | "markdown" | "mdown" | "mkd" => Format::Markdown,
            "txt" | "text" => Format::Text,
            "pdf" => Format::Pdf,
            "docx" => Format::Docx,
            "odt" => Format::Odt,
            "epub" => Format::Epub,
            "html" | "htm" | "xhtml" => Format::Html,
            "png" | "jpg" | "jpeg" | "webp" | "tif" | "tiff" => Format::Image,
            _ => return None,
        })
    }

    /// A document whose text is extracted (PDF, DOCX, ODT, EPUB, HTML), not read as it is.
    pub fn is_document(self) -> bool {
        !matches!(
            self,
            Format::Markdown | Format::Text | Format::Session | Format::Image
        )
    }

    /// A picture, whose text is read by OCR.
    pub fn is_picture(self) -> bool {
        self == Format::Image
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Markdown => "markdown",
            Format::Text => "text",
            Format::Session => "session",
            Format::Pdf => "pdf",
            Format::Docx => "docx",
            Format::Odt => "odt",
            Format::Epub => "epub",
            Format::Html => "html",
            Format::Image => "image",
        }
    }
}

/// An indexed file: its path relative to the workspace root (forward slashes; a folder
/// searched in place prefixes its name), its kind, its format and, for daily logs, the day
/// it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub path: String,
    pub kind: SourceKind,
    pub format: Format,
    pub date: Option<NaiveDate>,
}

/// Why a file that is not hidden is still not indexed, when its path alone says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotIndexed {
    /// Hidden (a part starts with a dot), `.cairn/` included: never looked at.
    Hidden,
    /// A file of Cairn's own that is not a note (a damaged session set aside, a MEMORY.md
    /// backup).
    Internal,
    /// A type the index does not read, by its extension.
    Unsupported,
}

/// Classifies a workspace-relative path: the source it is, or why it is not one.
pub fn classify_path(relative: &str) -> Result<Source, NotIndexed> {
    let parts: Vec<&str> = relative.split('/').collect();
    if parts.iter().any(|p| p.is_empty() || p.starts_with('.')) {
        return Err(NotIndexed::Hidden);
    }
    let name = parts.last().copied().unwrap_or_default();
    let (kind, format) = match parts.as_slice() {
        ["sessions", file] if file.ends_with(".jsonl") => (SourceKind::Session, Format::Session),
        ["sessions", ..] => return Err(NotIndexed::Internal),
        ["memory", .., "archive", file] if file.starts_with("MEMORY-") => {
            return Err(NotIndexed::Internal)
        }
        _ => {
            let format = Format::of(name).ok_or(NotIndexed::Unsupported)?;
            let kind = match parts.as_slice() {
                ["MEMORY.md"] => SourceKind::Memory,
                ["AGENTS.md"] => SourceKind::Agents,
                ["memory", _, ..] if format == Format::Markdown => SourceKind::Daily,
                ["knowledge", _, ..] => SourceKind::Knowledge,
                _ => SourceKind::Note,
            };
            (kind, format)
        }
    };
    let date = match kind {
        SourceKind::Daily => date_of(name),
        _ => None,
    };
    Ok(Source {
        path: relative.to_string(),
        kind,
        format,
        date,
    })
}

/// Classifies a workspace-relative path; `None` when it is not indexed.
pub fn classify(relative: &str) -> Option<Source> {
    classify_path(relative).ok()
}

/// Whether `relative` is part of the workspace's own layout (MEMORY.md, AGENTS.md,
/// memory/, sessions/), which is indexed whatever `.gitignore` says: a workspace kept in
/// git often leaves its sessions out of the repository, not out of search.
pub fn is_layout(relative: &str) -> bool {
    matches!(relative, "MEMORY.md" | "AGENTS.md")
        || ["memory", "sessions"]
            .iter()
            .any(|dir| relative == *dir || relative.starts_with(&format!("{dir}/")))
}

/// The date of a daily log named `YYYY-MM-DD.md` (or `YYYY-MM-DD-anything.md`).
fn date_of(name: &str) -> Option<NaiveDate> {
    let stem = name.get(..10)?;
    NaiveDate::parse_from_str(stem, "%Y-%m-%d").ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(path: &str) -> Option<SourceKind> {
        classify(path).map(|s| s.kind)
    }

    #[test]
    fn classifies_the_workspace_layout() {
        assert_eq!(kind("MEMORY.md"), Some(SourceKind::Memory));
        assert_eq!(kind("AGENTS.md"), Some(SourceKind::Agents));
        assert_eq!(kind("memory/2026-03-01.md"), Some(SourceKind::Daily));
        assert_eq!(
            kind("memory/archive/2025-01-01.md"),
            Some(SourceKind::Daily)
        );
        assert_eq!(kind("memory/archive/MEMORY-20260101T000000Z.md"), None);
        assert_eq!(kind("knowledge/a/b.md"), Some(SourceKind::Knowledge));
        assert_eq!(kind("knowledge/notes.txt"), Some(SourceKind::Knowledge));
        assert_eq!(kind("knowledge/photo.png"), Some(SourceKind::Knowledge));
        assert_eq!(kind("knowledge/photo.gif"), None);
        assert_eq!(kind("knowledge/paper.PDF"), Some(SourceKind::Knowledge));
        assert_eq!(kind("sessions/0192.jsonl"), Some(SourceKind::Session));
        assert_eq!(kind("sessions/0192.jsonl.corrupt-1"), None);
        assert_eq!(kind("sessions/notes.md"), None);
        assert_eq!(kind("skills/x/SKILL.md"), Some(SourceKind::Note));
        assert_eq!(kind("README.md"), Some(SourceKind::Note));
        assert_eq!(kind("projects/garden.md"), Some(SourceKind::Note));
        assert_eq!(kind("projects/site/index.html"), Some(SourceKind::Note));
        assert_eq!(kind("projects/build.rs"), None);
        assert_eq!(kind("Makefile"), None);
        assert_eq!(kind(".cairn/index/meta.json"), None);
        assert_eq!(kind("knowledge/.hidden.md"), None);
        assert_eq!(kind("notes/.obsidian/workspace.md"), None);
        assert_eq!(kind("memory/notes.txt"), Some(SourceKind::Note));
    }

    #[test]
    fn why_a_path_is_not_indexed() {
        assert_eq!(classify_path(".git/config"), Err(NotIndexed::Hidden));
        assert_eq!(classify_path("photos/a.gif"), Err(NotIndexed::Unsupported));
        assert_eq!(classify("scans/a.TIFF").unwrap().format, Format::Image);
        assert_eq!(classify_path("noextension"), Err(NotIndexed::Unsupported));
        assert_eq!(
            classify_path("sessions/x.jsonl.corrupt-1"),
            Err(NotIndexed::Internal)
        );
        assert_eq!(classify("a/b.docx").unwrap().format, Format::Docx);
        assert!(Format::Pdf.is_document());
        assert!(!Format::Markdown.is_document());
    }

    #[test]
    fn the_layout_is_known() {
        assert!(is_layout("MEMORY.md"));
        assert!(is_layout("sessions/a.jsonl"));
        assert!(is_layout("memory"));
        assert!(!is_layout("memoryx/a.md"));
        assert!(!is_layout("knowledge/a.md"));
        assert!(!is_layout("notes/MEMORY.md"));
    }

    #[test]
    fn daily_logs_carry_their_date() {
        let source = classify("memory/2026-03-01.md").unwrap();
        assert_eq!(source.date, NaiveDate::from_ymd_opt(2026, 3, 1));
        assert_eq!(classify("memory/ideas.md").unwrap().date, None);
        assert_eq!(classify("MEMORY.md").unwrap().date, None);
    }

    #[test]
    fn corpora() {
        assert!(Corpus::Memory.includes(SourceKind::Daily));
        assert!(Corpus::Memory.includes(SourceKind::Agents));
        assert!(!Corpus::Memory.includes(SourceKind::Knowledge));
        assert!(Corpus::All.includes(SourceKind::Session));
        assert_eq!("sessions".parse::<Corpus>(), Ok(Corpus::Sessions));
        assert!("everything".parse::<Corpus>().is_err());
    }
}
