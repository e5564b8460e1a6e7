//! Pictures on the chat-completions wire: `image_url` parts with `data:` URLs for a model
//! that sees (a tool's pictures in a user message after its result), text otherwise.

use std::sync::Arc;

use cairn_protocol::{Picture, SentPicture};

use super::*;

fn picture() -> Picture {
    Picture {
        sha256: "cd".repeat(32),
        media_type: "image/jpeg".into(),
        bytes: 99,
        width: 3000,
        height: 2000,
        name: None,
        text: Some("Hello from the scan".into()),
        sent: Some(Arc::new(SentPicture {
            media_type: "image/jpeg".into(),
            base64: "/9j/4AAQ".into(),
            width: 1568,
            height: 1045,
        })),
    }
}

fn conversation() -> Vec<Message> {
    vec![
        Message::User {
            content: vec![
                ContentBlock::Text {
                    text: "Read this".into(),
                },
                ContentBlock::Image(picture()),
            ],
        },
        Message::Assistant(AssistantMessage {
            content: vec![ContentBlock::ToolCall(ToolCall {
                id: "c1".into(),
                name: "read_file".into(),
                arguments: json!({"path": "scan.jpg"}),
            })],
            stop_reason: StopReason::ToolUse,
            usage: None,
            model: None,
        }),
        Message::ToolResult(ToolResultMessage {
            call_id: "c1".into(),
            tool_name: "read_file".into(),
            content: "scan.jpg: a JPEG picture".into(),
            is_error: false,
            pictures: vec![picture()],
        }),
    ]
}

async fn sent_with(vision: Option<bool>) -> Value {
    let server = MockServer::start(vec![hello_stream()]).await;
    let config = OpenAiConfig {
        vision,
        ..config(&server)
    };
    let request = ChatRequest {
        messages: conversation().into(),
        ..Default::default()
    };
    let stream = OpenAiProvider::new(config)
        .unwrap()
        .stream(request, CancellationToken::new())
        .await
        .unwrap();
    let _: Vec<_> = stream.collect().await;
    server.requests()[0].body_json().unwrap()["messages"].take()
}

#[tokio::test]
async fn a_model_that_sees_gets_image_url_parts() {
    let sent = sent_with(Some(true)).await;
    assert_eq!(
        sent[0]["content"][0],
        json!({"type": "text", "text": "Read this"})
    );
    assert_eq!(
        sent[0]["content"][1],
        json!({"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ"}})
    );
    assert_eq!(sent[2]["role"], "tool");
    assert_eq!(sent[2]["content"], "scan.jpg: a JPEG picture");
    assert_eq!(
        sent[3]["role"], "user",
        "the tool's picture follows its result"
    );
    assert_eq!(sent[3]["content"][1]["type"], "image_url");
}

#[tokio::test]
async fn an_unknown_model_gets_text_only() {
    let sent = sent_with(None).await;
    let asked = sent[0]["content"].as_str().unwrap();
    assert!(asked.starts_with("Read this"), "{asked}");
    assert!(asked.contains("Hello from the scan"), "{asked}");
    let result = sent[2]["content"].as_str().unwrap();
    assert!(result.contains("Hello from the scan"), "{result}");
    assert_eq!(sent.as_array().unwrap().len(), 3, "no picture message");
}
