//! Fuzz targets (see `cairn_testkit::fuzz`): the session loader and front matter.

use cairn_core::session::SessionStore;
use cairn_protocol::Message;
use cairn_testkit::fuzz;

const ID: &str = "01a21275-7382-74bf-9563-8968d0019dfe";

/// Tool calls in the context without a result after them.
fn unanswered(messages: &[Message]) -> Vec<String> {
    let mut open: Vec<String> = Vec::new();
    for message in messages {
        match message {
            Message::Assistant(a) => open.extend(a.tool_calls().map(|c| c.id.clone())),
            Message::ToolResult(r) => open.retain(|id| *id != r.call_id),
            Message::User { .. } => {}
        }
    }
    open
}

/// Any bytes as a session file: opening never panics; a session that opens gives the
/// model no call without a result, and opens again after its repair.
#[test]
fn fuzz_session_load() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let words: &[&[u8]] = &[
        b"\n",
        b"{\"type\":\"message\",",
        b"\"parent_id\":null,",
        b"\"role\":\"assistant\"",
        b"{\"type\":\"tool_call\",\"id\":\"c1\",\"name\":\"bash\",\"arguments\":{}}",
        b"{\"type\":\"session\",\"version\":1,",
        b"\"type\":\"compaction\"",
        b"\"type\":\"title\"",
        b"\xff",
        b"}",
    ];
    fuzz::run("session_load", words, |bytes| {
        let path = store.path_of(ID);
        std::fs::write(&path, bytes).map_err(|e| e.to_string())?;
        let Ok(mut opened) = runtime.block_on(store.open(ID)) else {
            return Ok(());
        };
        let open = unanswered(&opened.tree.context_messages());
        if !open.is_empty() {
            return Err(format!("calls without results: {open:?}"));
        }
        let entries = opened.tree.context_messages().len();
        drop(opened);
        let mut again = runtime
            .block_on(store.open(ID))
            .map_err(|e| format!("opened once, then not: {e}"))?;
        let now = again.tree.context_messages().len();
        if now != entries {
            return Err(format!("{entries} messages, then {now} on the next open"));
        }
        Ok(())
    });
}

/// Any text as a skill's front matter: parsed or refused with the line, never a panic.
#[test]
fn fuzz_front_matter() {
    let words: &[&[u8]] = &[
        b"---\n",
        b"...\n",
        b": ",
        b"- ",
        b"|\n",
        b">-\n",
        b"&a ",
        b"*a",
        b"!!binary ",
        b"\"",
        b"'",
        b"{",
        b"[",
        b"\t",
        b"\r\n",
        b"<<: *a\n",
    ];
    fuzz::run("frontmatter", words, |bytes| {
        let text = String::from_utf8_lossy(bytes);
        if let Err(message) = cairn_core::frontmatter::parse::<serde_json::Value>(&text) {
            if message.trim().is_empty() {
                return Err("an empty error".into());
            }
        }
        Ok(())
    });
}
