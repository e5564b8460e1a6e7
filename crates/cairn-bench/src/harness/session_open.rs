//! Opening a long session: `SessionStore::open` on a generated session file, beside reading
//! the same file and parsing every line as untyped JSON.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use cairn_core::session::SessionStore;
use cairn_protocol::{
    AssistantMessage, ContentBlock, EntryKind, Message, StopReason, ToolCall, ToolResultMessage,
    Usage,
};
use serde_json::json;

use crate::stats::Samples;

/// A generated session file.
pub struct SessionFile {
    pub id: String,
    pub path: PathBuf,
    pub entries: usize,
    pub bytes: u64,
}

/// The figures of the session-open benchmark.
pub struct OpenTimes {
    pub open: Samples,
    pub raw_parse: Samples,
}

/// Writes a session of exactly `entries` entries through the real writer: a title, then
/// exchanges of a user message, an assistant message with text and one or two tool calls,
/// `tool_started` markers, tool results and a final assistant answer. Text is a few hundred
/// characters per message. The session ends answered, so opening it repairs nothing.
pub async fn generate(sessions_dir: &Path, entries: usize) -> anyhow::Result<SessionFile> {
    let store = SessionStore::new(sessions_dir);
    let mut session = store.create()?;
    let mut words = Words(0x2545_f491_4f6c_dd1d);
    let mut written = 0;
    let mut exchange = 0;
    while written < entries {
        let calls = if exchange % 4 == 3 { 2 } else { 1 };
        let kinds = if exchange == 1 {
            vec![EntryKind::SessionInfo {
                title: words.text(40),
            }]
        } else if entries - written >= 3 + 2 * calls {
            exchange_entries(&mut words, exchange, calls)
        } else {
            vec![EntryKind::Message {
                message: Message::user(words.text(250)),
            }]
        };
        exchange += 1;
        for kind in kinds {
            let entry = session.tree.draft(kind);
            session.writer.append(&entry)?;
            session.tree.apply(entry);
            written += 1;
        }
    }
    session.writer.sync().await?;
    let id = session.tree.id().to_string();
    let path = store.path_of(&id);
    let bytes = std::fs::metadata(&path)
        .with_context(|| format!("cannot stat {}", path.display()))?
        .len();
    Ok(SessionFile {
        id,
        path,
        entries,
        bytes,
    })
}

fn exchange_entries(words: &mut Words, exchange: usize, calls: usize) -> Vec<EntryKind> {
    const TOOLS: [&str; 4] = ["read_file", "grep", "list_dir", "bash"];
    let message = |message| EntryKind::Message { message };
    let calls: Vec<ToolCall> = (0..calls)
        .map(|c| ToolCall {
            id: format!("call_{exchange}_{c}"),
            name: TOOLS[(exchange + c) % TOOLS.len()].into(),
            arguments: json!({"path": format!("knowledge/notes-{exchange}.md"),
                              "pattern": words.text(30)}),
        })
        .collect();
    let mut content = vec![ContentBlock::Text {
        text: words.text(200),
    }];
    content.extend(calls.iter().cloned().map(ContentBlock::ToolCall));
    let mut kinds = vec![
        message(Message::user(words.text(300))),
        message(assistant(content, StopReason::ToolUse)),
    ];
    for call in &calls {
        kinds.push(EntryKind::ToolStarted {
            call_id: call.id.clone(),
            tool_name: call.name.clone(),
        });
    }
    for call in calls {
        kinds.push(message(Message::ToolResult(ToolResultMessage {
            call_id: call.id,
            tool_name: call.name,
            content: words.text(500),
            is_error: false,
            pictures: Vec::new(),
        })));
    }
    let answer = vec![ContentBlock::Text {
        text: words.text(400),
    }];
    kinds.push(message(assistant(answer, StopReason::EndTurn)));
    kinds
}

fn assistant(content: Vec<ContentBlock>, stop_reason: StopReason) -> Message {
    Message::Assistant(AssistantMessage {
        content,
        stop_reason,
        usage: Some(Usage {
            input_tokens: 1200,
            output_tokens: 80,
            cache_read_tokens: 0,
        }),
        model: Some("bench".into()),
    })
}

/// Deterministic filler prose (a xorshift generator picking words).
struct Words(u64);

impl Words {
    const VOCABULARY: [&'static str; 24] = [
        "the",
        "session",
        "memory",
        "index",
        "file",
        "notes",
        "agent",
        "tool",
        "result",
        "line",
        "search",
        "workspace",
        "daily",
        "log",
        "summary",
        "model",
        "call",
        "with",
        "and",
        "for",
        "reads",
        "writes",
        "returns",
        "about",
    ];

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// About `chars` characters of words, with a line break now and then.
    fn text(&mut self, chars: usize) -> String {
        let mut out = String::with_capacity(chars + 16);
        while out.len() < chars {
            let n = self.next();
            out.push_str(Self::VOCABULARY[(n % 24) as usize]);
            // A line break about every hundred words.
            out.push(match n % 97 {
                0 => '\n',
                _ => ' ',
            });
        }
        out.trim_end().to_string()
    }
}

/// Times `SessionStore::open` and the raw parse of the same file, alternating, `runs` times
/// each after one warm-up of each.
pub async fn measure(
    sessions_dir: &Path,
    file: &SessionFile,
    runs: usize,
) -> anyhow::Result<OpenTimes> {
    let store = SessionStore::new(sessions_dir);
    let (mut open, mut raw) = (Vec::new(), Vec::new());
    for run in 0..=runs {
        let started = Instant::now();
        let opened = store.open(&file.id).await?;
        let took = started.elapsed();
        ensure!(
            opened.tree.entries().len() == file.entries && opened.repairs.is_empty(),
            "opening the generated session gave {} entries and {} repairs",
            opened.tree.entries().len(),
            opened.repairs.len()
        );
        drop(opened);
        let parsed = raw_parse(&file.path)?;
        ensure!(
            parsed.lines == file.entries + 1,
            "the raw parse saw {}",
            parsed.lines
        );
        if run > 0 {
            open.push(took);
            raw.push(parsed.took);
        }
    }
    Ok(OpenTimes {
        open: Samples::new(open),
        raw_parse: Samples::new(raw),
    })
}

struct RawParse {
    lines: usize,
    took: Duration,
}

/// The baseline: read the file and parse every line with `serde_json::Value`.
fn raw_parse(path: &Path) -> anyhow::Result<RawParse> {
    let started = Instant::now();
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut lines = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let value: serde_json::Value = serde_json::from_str(line)?;
        std::hint::black_box(value);
        lines += 1;
    }
    Ok(RawParse {
        lines,
        took: started.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn generates_exactly_the_entries_asked_for_and_opens_clean() {
        let dir = tempfile::tempdir().unwrap();
        let file = generate(dir.path(), 23).await.unwrap();
        let times = measure(dir.path(), &file, 1).await.unwrap();
        assert!(times.open.p50() > Duration::ZERO);
        let tree = SessionStore::new(dir.path()).load(&file.id).unwrap().tree;
        let types: Vec<&str> = tree
            .entries()
            .iter()
            .map(|e| match &e.kind {
                EntryKind::Message { message } => match message {
                    Message::User { .. } => "user",
                    Message::Assistant(_) => "assistant",
                    Message::ToolResult(_) => "result",
                },
                EntryKind::SessionInfo { .. } => "title",
                EntryKind::ToolStarted { .. } => "started",
                _ => "other",
            })
            .collect();
        let exchange = ["user", "assistant", "started", "result", "assistant"];
        assert_eq!(types.len(), 23);
        assert_eq!(types[..5], exchange);
        assert_eq!(types[5], "title");
        assert_eq!(types[6..11], exchange);
        assert!(tree.title().is_some());
    }
}
