//! Prompt templates end to end: `cairn prompts` lists `prompts/<name>.md`, and `/name args`
//! in `cairn ask` sends the template with the arguments put in.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use cairn_e2e::{at_server, text_stream, Sandbox};
use cairn_testkit::{MockResponse, MockServer};
use pretty_assertions::assert_eq;
use serde_json::Value;

fn plant(sandbox: &Sandbox) {
    let dir = sandbox.workspace().join("prompts");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("review.md"),
        "---\ndescription: Review a file for one thing\narguments: [file, focus]\n---\n\
         Review $1 and report only on $2.\n",
    )
    .unwrap();
    // A description that would move the terminal's cursor is shown escaped.
    std::fs::write(
        dir.join("plan.md"),
        "---\ndescription: \"Plan \\e[2Jthe day\"\n---\nPlan: $ARGUMENTS\n",
    )
    .unwrap();
    std::fs::write(dir.join("broken.md"), "no front matter\n").unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn prompts_are_listed_and_a_slash_call_sends_the_template() {
    let sandbox = Sandbox::new();
    plant(&sandbox);
    let out = sandbox.cairn(&["prompts"]).output().await.unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("/review <file> <focus>  Review a file for one thing"),
        "{stdout}"
    );
    assert!(stdout.contains("/plan  Plan "), "{stdout}");
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("left out: prompts/broken.md: line 1"),
        "{stderr}"
    );

    let out = sandbox
        .cairn(&["prompts", "--json"])
        .output()
        .await
        .unwrap();
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["prompts"][1]["name"], "review");
    assert_eq!(listed["prompts"][1]["arguments"][1], "focus");
    assert_eq!(listed["problems"].as_array().unwrap().len(), 1);

    let server = MockServer::start(vec![MockResponse::sse(text_stream("Looks fine."))]).await;
    let url = server.url();
    let mut args = at_server(&url, "ask");
    args.extend(["/review", "src/main.rs", "\"error handling\""]);
    let out = sandbox.cairn(&args).output().await.unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let body = server.requests()[0].body_json().unwrap();
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages.last().unwrap()["content"],
        "Review src/main.rs and report only on error handling."
    );
}
