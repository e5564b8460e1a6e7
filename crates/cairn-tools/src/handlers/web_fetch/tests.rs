//! web_fetch against pages served on 127.0.0.1.

use cairn_testkit::{MockResponse, MockServer};
use serde_json::json;

use super::guard::Reach;
use super::WebFetch;
use crate::handlers::test_support::{failed, ok, TestWs};

/// A tool that may reach 127.0.0.1 (where the test server is) and nothing else special.
fn local_only() -> WebFetch {
    WebFetch::new(Reach {
        allow_private: false,
        also: vec!["127.0.0.1".parse().unwrap()],
    })
    .unwrap()
}

fn html(body: &str) -> MockResponse {
    MockResponse::status(200, body).with_header("content-type", "text/html; charset=utf-8")
}

#[tokio::test]
async fn a_real_html_document_becomes_markdown_marked_as_untrusted() {
    // A page nobody here wrote (base-passwd is on every Debian machine); a small stand-in
    // elsewhere.
    let page = std::fs::read_to_string("/usr/share/doc/base-passwd/users-and-groups.html")
        .unwrap_or_else(|_| {
            "<html><head><title>Users and groups</title></head><body><h1>Users and groups</h1>\
             <p>The <a href='#root'>root</a> user owns the system and the daemon user runs \
             services that need no files of their own, which keeps them apart.</p></body></html>"
                .to_string()
        });
    let server = MockServer::start(vec![html(&page)]).await;
    let ws = TestWs::new();
    let url = format!("{}/doc.html", server.url());
    let shown = ok(ws.call(&local_only(), json!({"url": url})).await);
    assert!(
        shown.starts_with(&format!("[Untrusted content fetched from {url}")),
        "{shown}"
    );
    assert!(!shown.contains("<p>"), "no HTML left: {shown}");
    assert!(shown.contains("root"), "{shown}");
    assert!(
        shown.contains("]("),
        "links are kept as markdown links: {shown}"
    );
}

#[tokio::test]
async fn private_addresses_are_refused_by_address_by_name_and_on_redirect() {
    let ws = TestWs::new();
    let strict = WebFetch::new(Reach::default()).unwrap();
    let server = MockServer::start(vec![html("<p>never</p>")]).await;
    let err = failed(ws.call(&strict, json!({"url": server.url()})).await);
    assert!(err.contains("127.0.0.1 is a loopback address"), "{err}");
    let by_name = server.url().replace("127.0.0.1", "localhost");
    let err = failed(ws.call(&strict, json!({"url": by_name})).await);
    assert!(err.contains("a loopback address"), "{err}");
    assert!(server.requests().is_empty(), "nothing reached the server");

    let redirecting = MockServer::start(vec![MockResponse::status(302, "")
        .with_header("location", "http://169.254.169.254/latest/meta-data/")])
    .await;
    let err = failed(
        ws.call(&local_only(), json!({"url": redirecting.url()}))
            .await,
    );
    assert!(err.contains("redirect to http://169.254.169.254/"), "{err}");
    assert!(err.contains("link-local"), "{err}");
}

#[tokio::test]
async fn other_types_schemes_and_huge_pages_are_handled() {
    let ws = TestWs::new();
    let server = MockServer::start(vec![
        MockResponse::status(200, "PNG").with_header("content-type", "image/png"),
        MockResponse::status(200, "x".repeat(6 << 20)),
        MockResponse::json(200, json!({"answer": 42})),
        MockResponse::status(404, "gone"),
    ])
    .await;
    let tool = local_only();
    let err = failed(ws.call(&tool, json!({"url": server.url()})).await);
    assert!(err.contains("`image/png`"), "{err}");
    let big = ok(ws
        .call(&tool, json!({"url": server.url(), "max_chars": 1000}))
        .await);
    assert!(big.contains("[… cut at 1000 of"), "{big}");
    assert!(big.contains("longer than 5 MiB"), "{big}");
    let data = ok(ws.call(&tool, json!({"url": server.url()})).await);
    assert!(data.ends_with("{\n  \"answer\": 42\n}"), "{data}");
    let err = failed(ws.call(&tool, json!({"url": server.url()})).await);
    assert!(err.contains("HTTP 404"), "{err}");
    let err = failed(ws.call(&tool, json!({"url": "file:///etc/passwd"})).await);
    assert!(err.contains("only http and https"), "{err}");
}

#[tokio::test]
async fn a_page_given_up_on_or_aborted_returns_at_once() {
    let paragraph =
        "<p>Tomatoes need sun and water every morning, and basil grows beside them.</p>";
    let body = format!(
        "<html><body><article>{}</article></body></html>",
        paragraph.repeat(40_000)
    );
    let fetched = || super::Fetched {
        url: url::Url::parse("http://example.test/big.html").unwrap(),
        content_type: "text/html".into(),
        body: body.clone().into_bytes(),
        cut: false,
    };
    let cancel = tokio_util::sync::CancellationToken::new();
    let limit = std::time::Duration::from_millis(1);
    let err = super::read_bounded(fetched(), &cancel, limit)
        .await
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .contains("gave up on http://example.test/big.html"),
        "{err}"
    );
    cancel.cancel();
    let err = super::read_bounded(fetched(), &cancel, std::time::Duration::from_secs(60))
        .await
        .err()
        .unwrap();
    assert_eq!(err, crate::ToolError::Aborted);
}
