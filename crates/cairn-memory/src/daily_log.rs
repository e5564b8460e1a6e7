//! The daily log, `memory/YYYY-MM-DD.md`: its path, its heading, reading it and appending
//! to it. Every writer (the memory flush, `memory_save`) and reader (context gathering,
//! the app's memory panel, consolidation) goes through here.
//!
//! An append holds an exclusive lock on the log while it reads what is there and writes
//! its block, so two writers (two processes, or the flush and a tool call) never both
//! start a new log with its heading or interleave their blocks; the block is synced to
//! disk before the append returns. The log is opened beneath the workspace: a log that is
//! a link out of it, or not a regular file, is refused.

use chrono::NaiveDate;

use crate::{beneath, MemoryError, Workspace};

/// The most of a log that is read (a larger log is an error).
pub const MAX_READ_BYTES: u64 = 8 << 20;

/// `memory/YYYY-MM-DD.md`.
pub fn path(date: NaiveDate) -> String {
    format!("memory/{}.md", date.format("%Y-%m-%d"))
}

/// The first line of a new log: `# YYYY-MM-DD`.
pub fn heading(date: NaiveDate) -> String {
    format!("# {}\n", date.format("%Y-%m-%d"))
}

/// The date of a daily log's file name, exactly `YYYY-MM-DD.md`.
pub fn date_of(name: &str) -> Option<NaiveDate> {
    let stem = name.strip_suffix(".md")?;
    NaiveDate::parse_from_str(stem, "%Y-%m-%d")
        .ok()
        .filter(|_| stem.len() == 10)
}

/// The log of `date` as text, or empty when there is none (not UTF-8: read lossily).
pub fn read(workspace: &Workspace, date: NaiveDate) -> Result<String, MemoryError> {
    match beneath::read(workspace.root(), &path(date), MAX_READ_BYTES) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.is_not_found() => Ok(String::new()),
        Err(e) => Err(e),
    }
}

/// Where an append landed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended<T> {
    /// The log's workspace-relative path.
    pub path: String,
    /// The 1-based line on which the block's first line is.
    pub line: usize,
    /// What the block function gave beside the text.
    pub value: T,
}

/// Appends to the log of `date` what `block` makes of its current text (empty when the
/// log is new), creating the log (with its heading) and memory/ when missing. A block
/// lands on a line of its own.
pub fn append<T>(
    workspace: &Workspace,
    date: NaiveDate,
    block: impl FnOnce(&str) -> (String, T),
) -> Result<Appended<T>, MemoryError> {
    let relative = path(date);
    let mut log = beneath::open_append(workspace.root(), &relative)?;
    log.lock()?;
    let existing = log.existing(MAX_READ_BYTES)?;
    let existing = String::from_utf8_lossy(&existing);
    let mut text = if existing.trim().is_empty() {
        heading(date)
    } else if existing.ends_with('\n') {
        String::new()
    } else {
        "\n".to_string()
    };
    let line = format!("{existing}{text}").lines().count() + 1;
    let (body, value) = block(&existing);
    text.push_str(&body);
    log.append(text.as_bytes())?;
    Ok(Appended {
        path: relative,
        line,
        value,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn day() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 3, 9).unwrap()
    }

    #[test]
    fn a_new_log_gets_its_heading_and_blocks_land_on_their_own_lines() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open_or_create(dir.path()).unwrap();
        let first = append(&ws, day(), |old| (format!("\n- one ({})\n", old.len()), 1)).unwrap();
        assert_eq!(
            first,
            Appended {
                path: "memory/2026-03-09.md".into(),
                line: 2,
                value: 1
            }
        );
        // A log an editor left without a final newline.
        let file = ws.root().join(&first.path);
        std::fs::write(&file, "# 2026-03-09\n\n- one (0)").unwrap();
        let second = append(&ws, day(), |_| ("- two\n".to_string(), ())).unwrap();
        assert_eq!(second.line, 4);
        assert_eq!(
            read(&ws, day()).unwrap(),
            "# 2026-03-09\n\n- one (0)\n- two\n"
        );
    }

    #[test]
    fn appenders_on_many_threads_never_interleave_or_repeat_the_heading() {
        let dir = tempfile::tempdir().unwrap();
        let ws = std::sync::Arc::new(Workspace::open_or_create(dir.path()).unwrap());
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let ws = ws.clone();
                std::thread::spawn(move || {
                    for n in 0..25 {
                        append(&ws, day(), |_| (format!("- {t}.{n} a\n- {t}.{n} b\n"), ()))
                            .unwrap();
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let text = read(&ws, day()).unwrap();
        assert_eq!(text.matches("# 2026-03-09").count(), 1);
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(lines.len(), 8 * 25 * 2);
        for pair in lines.chunks(2) {
            assert_eq!(pair[0].replace(" a", " b"), pair[1], "{pair:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_log_planted_as_a_link_out_is_neither_read_nor_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret.txt");
        std::fs::write(&secret, "top secret\n").unwrap();
        let ws = Workspace::open_or_create(&dir.path().join("ws")).unwrap();
        std::fs::create_dir_all(ws.root().join("memory")).unwrap();
        std::os::unix::fs::symlink(&secret, ws.root().join(path(day()))).unwrap();
        assert!(read(&ws, day()).is_err());
        assert!(append(&ws, day(), |_| ("- x\n".to_string(), ())).is_err());
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "top secret\n");
    }

    #[test]
    fn only_exact_dated_names_are_daily_logs() {
        assert_eq!(date_of("2026-03-09.md"), Some(day()));
        assert_eq!(date_of("2026-03-09-notes.md"), None);
        assert_eq!(date_of("2026-13-09.md"), None);
        assert_eq!(date_of("2026-03-09.txt"), None);
    }
}
