//! Pictures in a run: a model that sees is sent each picture (scaled), one that does not
//! gets the text read in it and the user is told; the session keeps hashes, never bytes.

use cairn_llm::ScriptedTurn;
use cairn_protocol::{AgentEvent, ContentBlock, Message, Picture};
use cairn_testkit::pictures::{RECEIPT_PNG, RECEIPT_TEXT};
use serde_json::json;

use super::support::{harness, Harness};

fn pictures_in(message: &Message) -> Vec<Picture> {
    match message {
        Message::User { content } => content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Image(p) => Some(p.clone()),
                _ => None,
            })
            .collect(),
        Message::ToolResult(r) => r.pictures.clone(),
        Message::Assistant(_) => Vec::new(),
    }
}

fn tesseract_here() -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|dir| dir.join("tesseract").is_file())
}

fn session_text(h: &Harness) -> String {
    std::fs::read_to_string(h.session_path()).unwrap()
}

#[tokio::test]
async fn a_model_that_does_not_see_gets_the_text_and_the_user_is_told() {
    let mut h = harness(vec![ScriptedTurn::text("42.50 EUR")]).build().await;
    let workspace = h.workspace.clone();
    let picture = tokio::task::spawn_blocking(move || {
        workspace
            .attachments()
            .add(RECEIPT_PNG, Some("receipt.png"))
    })
    .await
    .unwrap()
    .unwrap();
    h.agent
        .prompt_with_pictures("What is the total?", vec![picture.clone()])
        .await
        .unwrap();
    let request = &h.requests()[0];
    let sent = pictures_in(&request.messages[0]);
    assert_eq!(sent.len(), 1);
    assert!(
        sent[0].sent.is_none(),
        "no copy is made for a model that does not see"
    );
    let told = request.messages[0].text_for_model();
    assert!(told.contains("receipt.png, 900 × 220 px"), "{told}");
    if tesseract_here() {
        assert!(told.contains(RECEIPT_TEXT[0]), "{told}");
    }
    let notices: Vec<String> = h
        .drain()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::Notice { message, .. } => Some(message),
            _ => None,
        })
        .collect();
    assert!(
        notices.iter().any(|n| n.contains("does not see pictures")),
        "{notices:?}"
    );
    let saved = session_text(&h);
    assert!(saved.contains(&picture.sha256));
    assert!(
        !saved.contains("iVBOR"),
        "the session file holds no picture bytes"
    );
}

#[tokio::test]
async fn a_model_that_sees_gets_the_picture_from_the_message_and_from_read_file() {
    let mut h = harness(vec![
        ScriptedTurn::tool_call("read_file", json!({"path": "knowledge/scan.png"})),
        ScriptedTurn::text("done"),
    ])
    .seeing()
    .build()
    .await;
    std::fs::write(h.workspace.root().join("knowledge/scan.png"), RECEIPT_PNG).unwrap();
    let workspace = h.workspace.clone();
    let picture =
        tokio::task::spawn_blocking(move || workspace.attachments().add(RECEIPT_PNG, None))
            .await
            .unwrap()
            .unwrap();
    h.agent
        .prompt_with_pictures("", vec![picture])
        .await
        .unwrap();
    let requests = h.requests();
    let first = pictures_in(&requests[0].messages[0]);
    let copy = first[0]
        .sent
        .as_ref()
        .expect("the picture is sent to a model that sees");
    assert_eq!((copy.width, copy.height), (900, 220));
    assert!(copy.base64.starts_with("iVBOR"));
    let second = &requests[1].messages;
    let from_tool = second.iter().flat_map(pictures_in).last().unwrap();
    assert!(from_tool.sent.is_some(), "read_file's picture is sent too");
    // The front end gets the tool's picture with the tool's end, to show on its card.
    let shown: Vec<Picture> = h
        .drain()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::ToolEnd { pictures, .. } => Some(pictures),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(shown.len(), 1);
    assert!(shown[0].sent.is_none() && shown[0].width == 900);
    assert!(!session_text(&h).contains("iVBOR"));
    // The message held the picture only: no empty text block went with it.
    let Message::User { content } = &requests[0].messages[0] else {
        panic!("a user message first");
    };
    assert_eq!(content.len(), 1);
}
