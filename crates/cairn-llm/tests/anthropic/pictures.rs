//! Pictures on the Messages wire: image blocks with their text beside for a model that
//! sees, the text alone for one that does not.

use std::sync::Arc;

use cairn_protocol::{Picture, SentPicture};

use super::wire::{assistant, tool_call};
use super::*;

pub(crate) fn picture(sent: bool) -> Picture {
    Picture {
        sha256: "ab".repeat(32),
        media_type: "image/png".into(),
        bytes: 1234,
        width: 800,
        height: 600,
        name: Some("receipt.png".into()),
        text: Some("TOTAL 42.00".into()),
        sent: sent.then(|| {
            Arc::new(SentPicture {
                media_type: "image/png".into(),
                base64: "iVBORw0K".into(),
                width: 800,
                height: 600,
            })
        }),
    }
}

fn asked_about(picture: Picture) -> Vec<Message> {
    vec![Message::User {
        content: vec![
            ContentBlock::Text {
                text: "What is the total?".into(),
            },
            ContentBlock::Image(picture),
        ],
    }]
}

async fn sent_by(config: AnthropicConfig, server: &MockServer, messages: Vec<Message>) -> Value {
    let request = ChatRequest {
        messages: messages.into(),
        ..Default::default()
    };
    let stream = AnthropicProvider::new(config)
        .unwrap()
        .stream(request, CancellationToken::new())
        .await
        .unwrap();
    let _: Vec<_> = stream.collect().await;
    server.requests()[0].body_json().unwrap()["messages"].take()
}

#[tokio::test]
async fn a_model_that_sees_gets_the_picture_and_its_text() {
    let server = MockServer::start(vec![stream(hello())]).await;
    let sent = sent_by(config(&server), &server, asked_about(picture(true))).await;
    assert_eq!(
        sent[0]["content"][1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}})
    );
    let beside = sent[0]["content"][2]["text"].as_str().unwrap();
    assert!(beside.contains("TOTAL 42.00"), "{beside}");
}

#[tokio::test]
async fn a_model_marked_blind_gets_the_text_read_from_the_picture() {
    let server = MockServer::start(vec![stream(hello())]).await;
    let config = AnthropicConfig {
        vision: Some(false),
        ..config(&server)
    };
    let sent = sent_by(config, &server, asked_about(picture(true))).await;
    let content = sent[0]["content"].as_array().unwrap();
    assert!(content.iter().all(|b| b["type"] == "text"), "{content:?}");
    let told = content[1]["text"].as_str().unwrap();
    assert!(told.contains("receipt.png, 800 × 600 px"), "{told}");
    assert!(told.contains("TOTAL 42.00"), "{told}");
    assert!(told.contains("not sent"), "{told}");
}

#[tokio::test]
async fn a_picture_a_tool_read_goes_inside_its_result() {
    let server = MockServer::start(vec![stream(hello())]).await;
    let messages = vec![
        Message::user("Look at receipt.png"),
        assistant(vec![tool_call(
            "toolu_1",
            "read_file",
            json!({"path": "receipt.png"}),
        )]),
        Message::ToolResult(ToolResultMessage {
            call_id: "toolu_1".into(),
            tool_name: "read_file".into(),
            content: "receipt.png: a PNG picture, 800 × 600 px".into(),
            is_error: false,
            pictures: vec![picture(true)],
        }),
    ];
    let sent = sent_by(config(&server), &server, messages).await;
    let result = &sent[2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["content"][0]["type"], "text");
    assert_eq!(result["content"][1]["type"], "image");
    assert_eq!(result["content"][1]["source"]["data"], "iVBORw0K");
}

#[tokio::test]
async fn claude_models_see_and_old_ones_do_not() {
    let server = MockServer::start(vec![]).await;
    let sees = |model: &str| {
        AnthropicProvider::new(AnthropicConfig::new(model).clone())
            .map(|p| p.info().vision)
            .unwrap()
    };
    assert!(sees("claude-sonnet-4-5"));
    assert!(sees("claude-3-haiku-20240307"));
    assert!(!sees("claude-2.1"));
    assert!(!sees("claude-instant-1.2"));
    let info = provider(&server).info();
    assert_eq!(info.image_max_side, 1568);
}
