//! Pictures through the page's commands: one pasted is kept and shown back at the size
//! asked, a message goes with it, the transcript and a tool's result carry pictures, and
//! a picture file of the workspace opens with its text; what is not a picture, and what is
//! outside the workspace, is refused.

use base64::Engine as _;
use cairn_e2e::{text_stream, tool_call_stream};
use cairn_testkit::pictures::RECEIPT_PNG;
use cairn_testkit::MockResponse;
use pretty_assertions::assert_eq;
use serde_json::{json, Value};

use super::{serve, App};

fn receipt_base64() -> String {
    base64::engine::general_purpose::STANDARD.encode(RECEIPT_PNG)
}

#[test]
fn a_pasted_picture_goes_with_the_message_and_shows_in_the_transcript() {
    let (_rt, server) = serve(vec![
        MockResponse::sse(text_stream("The total is 42.50 EUR.")),
        MockResponse::sse(tool_call_stream(
            "call_r",
            "read_file",
            &json!({"path": "scan.png"}),
            2,
        )),
        MockResponse::sse(text_stream("Same receipt.")),
        MockResponse::sse(text_stream("Still 42.50 EUR.")),
    ]);
    let mut app = App::new(&format!("{}/v1", server.url()));
    let picture = app.ok(
        "attach_picture",
        json!({"name": "receipt.png", "data": receipt_base64()}),
    );
    assert_eq!(
        (
            &picture["media_type"],
            &picture["width"],
            &picture["height"]
        ),
        (&json!("image/png"), &json!(900), &json!(220))
    );
    let thumbnail = app.ok("picture_thumbnail", json!({"picture": picture, "side": 96}));
    assert!(
        thumbnail
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,"),
        "{thumbnail}"
    );

    // Pictures alone make a message.
    let body = app.with_channel(json!({"text": "", "pictures": [picture]}));
    assert_eq!(app.ok("send_message", body), Value::Null);
    // This model does not see pictures: it was told of it, and given its text.
    let asked = server.requests()[0].body_json().unwrap().to_string();
    assert!(
        asked.contains("picture receipt.png, 900 × 220 px"),
        "{asked}"
    );
    assert!(asked.contains("42.50"), "{asked}");

    // A tool's picture: read_file on a picture of the workspace.
    std::fs::write(app.workspace.join("scan.png"), RECEIPT_PNG).unwrap();
    let body = app.with_channel(json!({"text": "and this one?"}));
    app.ok("send_message", body);
    let id = app.ok("list_sessions", json!({}))[0]["id"].clone();
    let view = app.ok("open_session", json!({"id": id}));
    let items = view["items"].as_array().unwrap();
    assert_eq!(items[0]["kind"], "user");
    assert_eq!(items[0]["text"], "");
    assert_eq!(items[0]["pictures"], json!([picture]));
    assert_eq!(items[2]["pictures"], json!([]));
    let result = &items[3]["tool_calls"][0]["result"];
    assert_eq!(result["pictures"][0]["sha256"], picture["sha256"], "{view}");

    // Sent again, the message keeps its pictures on the new branch.
    let body = app.with_channel(json!({"entry_id": items[0]["entry_id"]}));
    app.ok("retry", body);
    let view = app.ok("open_session", json!({"id": id}));
    assert_eq!(view["items"][0]["pictures"], json!([picture]), "{view}");
    assert_eq!(view["items"][1]["text"], "Still 42.50 EUR.");
    let asked = server.requests()[3].body_json().unwrap().to_string();
    assert!(
        asked.contains("picture receipt.png, 900 × 220 px"),
        "{asked}"
    );
}

#[test]
fn what_is_not_a_kept_picture_is_refused_and_nothing_runs() {
    let (_rt, server) = serve(Vec::new());
    let mut app = App::new(&format!("{}/v1", server.url()));
    let text = base64::engine::general_purpose::STANDARD.encode("a note, not a picture\n");
    let refused = app
        .call("attach_picture", json!({"name": "note.png", "data": text}))
        .unwrap_err();
    assert_eq!(refused["code"], "invalid");
    let message = refused["message"].as_str().unwrap();
    assert!(message.contains("PNG, JPEG, WebP or GIF"), "{message}");
    let made_up = json!({"sha256": "0".repeat(64), "media_type": "image/png",
        "bytes": 10, "width": 1, "height": 1});
    let body = app.with_channel(json!({"text": "look", "pictures": [made_up]}));
    assert_eq!(app.code("send_message", body), "not_found");
    let body = app.with_channel(json!({"text": " ", "pictures": []}));
    assert_eq!(app.code("send_message", body), "invalid");
    assert!(server.requests().is_empty());
}

#[test]
fn a_workspace_picture_opens_with_its_text_and_paths_outside_are_refused() {
    let app = App::new("http://127.0.0.1:9/v1");
    std::fs::create_dir_all(app.workspace.join("knowledge")).unwrap();
    std::fs::write(app.workspace.join("knowledge/receipt.png"), RECEIPT_PNG).unwrap();
    let shown = app.ok("read_picture", json!({"path": "knowledge/receipt.png"}));
    assert_eq!(
        (&shown["width"], &shown["height"], &shown["bytes"]),
        (&json!(900), &json!(220), &json!(RECEIPT_PNG.len()))
    );
    assert!(shown["url"].as_str().unwrap().starts_with("data:image/png"));
    assert!(shown["text"].as_str().unwrap().contains("42.50"), "{shown}");
    std::fs::write(app.workspace.join("notes.png"), "text\n").unwrap();
    assert_eq!(
        app.code("read_picture", json!({"path": "notes.png"})),
        "invalid"
    );
    let outside = app.workspace.parent().unwrap().join("outside.png");
    std::fs::write(&outside, RECEIPT_PNG).unwrap();
    for path in ["../outside.png".to_string(), outside.display().to_string()] {
        assert_eq!(
            app.code("read_picture", json!({"path": path})),
            "invalid_path",
            "{path}"
        );
    }
}
