//! Which workspace files are indexed, and as what.

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
}

impl SourceKind {
    pub const ALL: [SourceKind; 5] = [
        SourceKind::Memory,
        SourceKind::Daily,
        SourceKind::Agents,
        SourceKind::Knowledge,
        SourceKind::Session,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Memory => "memory",
            SourceKind::Daily => "daily",
            SourceKind::Agents => "agents",
            SourceKind::Knowledge => "knowledge",
            SourceKind::Session => "session",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    pub fn corpus(self) -> Corpus {
        match self {
            SourceKind::Memory | SourceKind::Daily | SourceKind::Agents => Corpus::Memory,
            SourceKind::Knowledge => Corpus::Knowledge,
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

/// An indexed file: its path relative to the workspace root (forward slashes), its kind
/// and, for daily logs, the day it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub path: String,
    pub kind: SourceKind,
    pub date: Option<NaiveDate>,
}

/// Classifies a workspace-relative path; `None` when it is not indexed. Hidden files and
/// folders, `.cairn/`, and the MEMORY.md backups in memory/archive/ are never indexed.
pub fn classify(relative: &str) -> Option<Source> {
    let parts: Vec<&str> = relative.split('/').collect();
    if parts.iter().any(|p| p.is_empty() || p.starts_with('.')) {
        return None;
    }
    let name = parts.last()?;
    let is_md = name.ends_with(".md") || name.ends_with(".markdown");
    let kind = match parts.as_slice() {
        ["MEMORY.md"] => SourceKind::Memory,
        ["AGENTS.md"] => SourceKind::Agents,
        ["memory", .., "archive", file] if file.starts_with("MEMORY-") => return None,
        ["memory", _, ..] if is_md => SourceKind::Daily,
        ["knowledge", _, ..] if is_md || name.ends_with(".txt") => SourceKind::Knowledge,
        ["sessions", _] if name.ends_with(".jsonl") => SourceKind::Session,
        _ => return None,
    };
    let date = match kind {
        SourceKind::Daily => date_of(name),
        _ => None,
    };
    Some(Source {
        path: relative.to_string(),
        kind,
        date,
    })
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
        assert_eq!(kind("knowledge/photo.png"), None);
        assert_eq!(kind("sessions/0192.jsonl"), Some(SourceKind::Session));
        assert_eq!(kind("sessions/0192.jsonl.corrupt-1"), None);
        assert_eq!(kind("skills/x/SKILL.md"), None);
        assert_eq!(kind("README.md"), None);
        assert_eq!(kind(".cairn/index/meta.json"), None);
        assert_eq!(kind("knowledge/.hidden.md"), None);
        assert_eq!(kind("memory/notes.txt"), None);
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
