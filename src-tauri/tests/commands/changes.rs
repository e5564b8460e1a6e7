//! Reviewing and reverting what the agent changed in files.

use super::*;
use pretty_assertions::assert_eq;

#[test]
fn the_agents_change_is_listed_and_reverted_unless_the_file_changed_since() {
    let write = |id: &str, content: &str| {
        MockResponse::sse(tool_call_stream(
            id,
            "write_file",
            &json!({"path": "knowledge/plan.md", "content": content}),
            3,
        ))
    };
    let (_rt, server) = serve(vec![
        write("call-a", "# Plan\nby car\n"),
        MockResponse::sse(text_stream("Done.")),
        write("call-b", "# Plan\nby train\n"),
        MockResponse::sse(text_stream("Done again.")),
    ]);
    let mut app = App::new(&format!("{}/v1", server.url()));
    let plan = app.workspace.join("knowledge/plan.md");
    std::fs::write(&plan, "# Plan\non foot\n").unwrap();
    let body = app.with_channel(json!({"text": "plan by car"}));
    app.ok("send_message", body);
    let session = app.ok("list_sessions", json!({}))[0]["id"]
        .as_str()
        .unwrap()
        .to_string();

    let changes = app.ok("list_changes", json!({"session_id": session}));
    let change = &changes[0];
    assert_eq!(changes.as_array().unwrap().len(), 1, "{changes}");
    assert_eq!(change["path"], "knowledge/plan.md");
    assert_eq!(change["call_id"], "call-a");
    assert_eq!(change["tool"], "write_file");
    assert_eq!(change["before"], "# Plan\non foot\n");
    assert_eq!(change["after"], "# Plan\nby car\n");
    assert_eq!(change["state"], "applied");
    let first = change["id"].as_str().unwrap().to_string();

    // Reverted: the text before is back, and the change says so.
    let path = app.ok(
        "revert_changes",
        json!({"session_id": session, "ids": [first]}),
    );
    assert_eq!(path, "knowledge/plan.md");
    assert_eq!(std::fs::read_to_string(&plan).unwrap(), "# Plan\non foot\n");
    let changes = app.ok("list_changes", json!({"session_id": session}));
    assert_eq!(changes[0]["state"], "reverted");
    assert_eq!(
        app.code(
            "revert_changes",
            json!({"session_id": session, "ids": [first]})
        ),
        "conflict"
    );

    // The next change, then the user edits the file: reverting is refused, with why.
    let body = app.with_channel(json!({"text": "by train then"}));
    app.ok("send_message", body);
    let changes = app.ok("list_changes", json!({"session_id": session}));
    let second = changes[1]["id"].as_str().unwrap().to_string();
    std::fs::write(&plan, "# Plan\nby train, first class\n").unwrap();
    let changes = app.ok("list_changes", json!({"session_id": session}));
    assert_eq!(changes[1]["state"], "changed_since");
    let err = app
        .call(
            "revert_changes",
            json!({"session_id": session, "ids": [second]}),
        )
        .unwrap_err();
    assert_eq!(err["code"], "conflict");
    assert!(
        err["message"].as_str().unwrap().contains("changed since"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&plan).unwrap(),
        "# Plan\nby train, first class\n"
    );
    // Ids that name nothing kept, or lead elsewhere, are refused.
    for (session, id) in [
        (session.as_str(), "nope"),
        ("../x", "y"),
        (session.as_str(), "../../x"),
    ] {
        assert_eq!(
            app.code(
                "revert_changes",
                json!({"session_id": session, "ids": [id]})
            ),
            "not_found"
        );
    }
}
