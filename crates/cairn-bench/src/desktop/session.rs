//! A long conversation written as a session file, the way `cairn` writes one: a header
//! line, then user and assistant messages chained by `parent_id`, then the title.

use std::path::{Path, PathBuf};

use cairn_protocol::{
    AssistantMessage, ContentBlock, EntryKind, Message, SessionEntry, SessionHeader, StopReason,
    Usage,
};
use chrono::{DateTime, Duration, Utc};

const TOPICS: &[(&str, &str)] = &[
    ("parse the config file", "rust"),
    ("retry a failed upload", "python"),
    ("rotate the server logs", "bash"),
    ("cache the search results", "rust"),
    ("debounce the file watcher", "typescript"),
    ("migrate the invoices table", "sql"),
    ("stream the model's answer", "rust"),
    ("back up the garden notes", "bash"),
];

const SNIPPETS: &[(&str, &str)] = &[
    (
        "rust",
        "fn load(path: &Path) -> Result<Config, Error> {\n    let text = std::fs::read_to_string(path)?;\n    let config: Config = toml::from_str(&text)?;\n    Ok(config.with_defaults())\n}",
    ),
    (
        "python",
        "def upload(path, attempts=N):\n    for attempt in range(attempts):\n        try:\n            return client.put(path)\n        except TransientError:\n            time.sleep(2 ** attempt)\n    raise UploadFailed(path)",
    ),
    (
        "bash",
        "#!/usr/bin/env bash\nset -euo pipefail\nfind /var/log/app -name '*.log' -mtime +N -print0 |\n  xargs -0 gzip --best\necho \"rotated $(date -I)\"",
    ),
    (
        "typescript",
        "export function debounce<T extends unknown[]>(f: (...a: T) => void, ms = N) {\n  let timer: number | undefined;\n  return (...a: T) => {\n    window.clearTimeout(timer);\n    timer = window.setTimeout(() => f(...a), ms);\n  };\n}",
    ),
    (
        "sql",
        "BEGIN;\nALTER TABLE invoices ADD COLUMN due_on DATE;\nUPDATE invoices SET due_on = issued_on + INTERVAL 'N days';\nCOMMIT;",
    ),
];

const PROSE: &[&str] = &[
    "The simplest fix is to keep the state in one place and pass it down explicitly.",
    "This keeps the error messages readable: each one names the file and the line.",
    "You can test it against a local server, so nothing leaves the machine.",
    "It costs one extra allocation per call, which does not show in the profile.",
    "When the input is empty we return early instead of writing an empty file.",
    "Run it twice in a row to check that the second run changes nothing.",
    "The old behaviour stays available behind a flag until the next release.",
    "Most of the time goes into waiting for the disk, not into the parsing itself.",
];

/// A small deterministic generator (the same session on every run).
struct Lcg(u64);

impl Lcg {
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        &items[(self.0 >> 33) as usize % items.len()]
    }

    fn prose(&mut self, sentences: usize) -> String {
        (0..sentences)
            .map(|_| *self.pick(PROSE))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn user_text(rng: &mut Lcg, turn: usize) -> String {
    let (task, lang) = *rng.pick(TOPICS);
    match turn % 3 {
        0 => format!("How do I {task} in {lang}? {}", rng.prose(1)),
        1 => format!(
            "That works. Can you make it handle the case where the file is missing (turn {turn})?"
        ),
        _ => format!(
            "Why does `{task}` take so long on the big workspace?\n\n{}",
            rng.prose(2)
        ),
    }
}

fn assistant_text(rng: &mut Lcg, turn: usize) -> String {
    let (task, _) = *rng.pick(TOPICS);
    let (lang, code) = *rng.pick(SNIPPETS);
    let code = code.replace('N', &(turn % 9 + 2).to_string());
    format!(
        "## How to {task}\n\n{}\n\n```{lang}\n{code}\n```\n\n\
         A few things to check:\n\n- the path is **inside the workspace**\n- `{lang}` errors are \
         reported, not swallowed\n- the second run is a no-op\n\n{}\n\n> Note: {}",
        rng.prose(3),
        rng.prose(2),
        rng.prose(1)
    )
}

/// A UUID v7 string for `at` (48-bit milliseconds, version 7, variant 10, the rest from
/// `salt`), as the app names sessions.
fn uuid_v7(at: DateTime<Utc>, salt: u64) -> String {
    let ms = at.timestamp_millis().max(0) as u64 & 0xffff_ffff_ffff;
    let rand_a = (salt >> 52) & 0x0fff;
    let rand_b = salt & 0x3fff_ffff_ffff_ffff;
    let hex = format!(
        "{ms:012x}7{rand_a:03x}{:016x}",
        rand_b | 0x8000_0000_0000_0000
    );
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

fn stamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Writes `<workspace>/sessions/<id>.jsonl` holding `messages` messages (user and
/// assistant alternating) and returns its path.
pub fn write(workspace: &Path, messages: usize) -> anyhow::Result<PathBuf> {
    let start = Utc::now() - Duration::hours(3);
    let id = uuid_v7(start, 0x5eed_cafe_f00d_beef);
    let mut lines = vec![serde_json::to_string(&SessionHeader::new(
        &id,
        stamp(start),
    ))?];
    let mut rng = Lcg(42);
    let mut parent: Option<String> = None;
    for n in 0..messages {
        let message = if n % 2 == 0 {
            Message::user(user_text(&mut rng, n / 2))
        } else {
            let text = assistant_text(&mut rng, n / 2);
            Message::Assistant(AssistantMessage {
                usage: Some(Usage {
                    input_tokens: 900 + 40 * n as u64,
                    output_tokens: text.len() as u64 / 4,
                    cache_read_tokens: 0,
                }),
                content: vec![ContentBlock::Text { text }],
                stop_reason: StopReason::EndTurn,
                model: Some("bench-model".into()),
            })
        };
        let entry_id = format!("{:08x}", 0x1000_0000u32 + n as u32 * 7919);
        let entry = SessionEntry {
            id: entry_id.clone(),
            parent_id: parent.replace(entry_id),
            ts: stamp(start + Duration::seconds(20 * n as i64)),
            kind: EntryKind::Message { message },
        };
        lines.push(serde_json::to_string(&entry)?);
    }
    let title = SessionEntry {
        id: "0fffffff".into(),
        parent_id: parent,
        ts: stamp(start + Duration::seconds(20 * messages as i64)),
        kind: EntryKind::SessionInfo {
            title: "Config, uploads and log rotation".into(),
        },
    };
    lines.push(serde_json::to_string(&title)?);
    let dir = workspace.join("sessions");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("{id}.jsonl"));
    std::fs::write(&path, lines.join("\n") + "\n")?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_core::session::SessionStore;

    #[test]
    fn the_store_reads_the_session_as_the_latest_with_every_message() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), 200).unwrap();
        let store = SessionStore::new(dir.path().join("sessions"));
        let id = store.latest().unwrap().unwrap();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "7");
        let loaded = store.load(&id).unwrap();
        assert!(loaded.repairs.is_empty(), "{:?}", loaded.repairs);
        let path = loaded.tree.active_path();
        let messages = path
            .iter()
            .filter(|e| matches!(e.kind, EntryKind::Message { .. }))
            .count();
        assert_eq!(messages, 200);
        assert_eq!(
            loaded.tree.title(),
            Some("Config, uploads and log rotation")
        );
    }
}
