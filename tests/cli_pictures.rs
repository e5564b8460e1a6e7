//! `cairn ask --attach`: pictures kept in the workspace and sent to a model that sees (a
//! `data:` URL), their text to one that does not; documents read into the message; a file
//! that is neither refused before anything is sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use cairn_e2e::{text_stream, Sandbox};
use cairn_testkit::pictures::{RECEIPT_PNG, RECEIPT_TEXT};
use cairn_testkit::{MockResponse, MockServer};
use serde_json::Value;

fn tesseract_here() -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|dir| dir.join("tesseract").is_file())
}

/// The sandbox with `receipt.png` and `plan.txt` beside its workspace.
fn with_files() -> (Sandbox, String, String) {
    let sandbox = Sandbox::new();
    let picture = sandbox.home().join("receipt.png");
    std::fs::write(&picture, RECEIPT_PNG).unwrap();
    let text = sandbox.home().join("plan.txt");
    std::fs::write(&text, "Step one: pay the invoice.\n").unwrap();
    let picture = picture.to_string_lossy().into_owned();
    let text = text.to_string_lossy().into_owned();
    (sandbox, picture, text)
}

fn user_message(server: &MockServer) -> Value {
    let body = server.requests()[0].body_json().unwrap();
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap()
        .clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_that_does_not_see_gets_the_text_of_the_picture_and_the_document() {
    let (sandbox, picture, text) = with_files();
    let server = MockServer::start(vec![MockResponse::sse(text_stream("42.50 EUR"))]).await;
    let out = sandbox
        .ask(
            &server.url(),
            &[
                "--attach", &picture, "--attach", &text, "What", "do", "I", "owe?",
            ],
        )
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("does not see pictures"), "{stderr}");
    let content = user_message(&server)["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(content.starts_with("What do I owe?"), "{content}");
    assert!(content.contains("<document name=\"plan.txt\">\nStep one: pay the invoice."));
    assert!(content.contains("receipt.png, 900 × 220 px"), "{content}");
    if tesseract_here() {
        assert!(content.contains(RECEIPT_TEXT[0]), "{content}");
    }
    let kept = std::fs::read_dir(sandbox.workspace().join(".cairn/attachments"))
        .unwrap()
        .count();
    assert_eq!(kept, 1);
    let session = std::fs::read_dir(sandbox.workspace().join("sessions"))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect::<String>();
    assert!(
        !session.contains("iVBOR"),
        "no picture bytes in the session"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_marked_as_seeing_gets_the_picture_itself() {
    let (sandbox, picture, _) = with_files();
    let server = MockServer::start(vec![MockResponse::sse(text_stream("A receipt."))]).await;
    sandbox.write_settings(&format!(
        "default_provider = \"eyes\"\n\n[providers.eyes]\nkind = \"openai\"\nbase_url = \"{}\"\n\
         model = \"test-model\"\nvision = true\n",
        server.url()
    ));
    let out = sandbox
        .cairn(&["ask", "--attach", &picture, "What is this?"])
        .output()
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let parts = user_message(&server)["content"].clone();
    assert_eq!(parts[0]["text"], "What is this?");
    assert_eq!(parts[1]["type"], "image_url");
    let url = parts[1]["image_url"]["url"].as_str().unwrap();
    assert!(
        url.starts_with("data:image/png;base64,iVBOR"),
        "{}",
        &url[..40]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_that_is_no_picture_document_or_text_is_refused_before_sending() {
    let sandbox = Sandbox::new();
    let blob = sandbox.home().join("data.bin");
    std::fs::write(&blob, [0u8, 159, 146, 150, 0, 1, 2]).unwrap();
    let server = MockServer::start(vec![]).await;
    let out = sandbox
        .ask(&server.url(), &["--attach", &blob.to_string_lossy(), "hi"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr.contains("cannot attach"), "{stderr}");
    assert!(stderr.contains("data.bin"), "{stderr}");
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_exported_session_links_its_pictures_copied_beside_it() {
    let (sandbox, picture, _) = with_files();
    let server = MockServer::start(vec![MockResponse::sse(text_stream("Noted."))]).await;
    let out = sandbox
        .ask(&server.url(), &["--attach", &picture, "Keep this"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let id = sandbox.session_lines()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let exported = sandbox.home().join("out/chat.md");
    std::fs::create_dir_all(exported.parent().unwrap()).unwrap();
    let out = sandbox
        .cairn(&[
            "sessions",
            "export",
            &id,
            "--output",
            &exported.to_string_lossy(),
        ])
        .output()
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let markdown = std::fs::read_to_string(&exported).unwrap();
    let link = markdown
        .lines()
        .find(|l| l.starts_with("![receipt.png](attachments/"))
        .unwrap_or_else(|| panic!("{markdown}"));
    let file = link.split(['(', ')']).nth(1).unwrap();
    let copied = std::fs::read(sandbox.home().join("out").join(file)).unwrap();
    assert_eq!(copied, RECEIPT_PNG);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_attached_pdf_is_read_as_the_index_reads_it_damaged_or_not() {
    let sandbox = Sandbox::new();
    sandbox.install_pdf_reader();
    // A real file whose cross-reference table is damaged: only PDFium reads it.
    let pdf = sandbox.home().join("toy.pdf");
    let toy = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/cairn-extract/tests/fixtures/pypdf/toy.pdf");
    std::fs::copy(toy, &pdf).unwrap();
    let server = MockServer::start(vec![MockResponse::sse(text_stream("Read."))]).await;
    let out = sandbox
        .ask(
            &server.url(),
            &["--attach", &pdf.to_string_lossy(), "Summarise"],
        )
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let content = user_message(&server)["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        content.contains("<document name=\"toy.pdf\">\n[page 1]"),
        "{content}"
    );
    assert!(content.contains("AWAY again1"), "{content}");
}
