//! Pictures in the real window: a screenshot pasted into the message box goes with the
//! message, shows as a thumbnail in the transcript and opens whole over the window until
//! Esc; the model that does not see pictures is said to, and gets the text read in it; a
//! picture file of the workspace opens in its view with its size and text. (Included by
//! `desktop_e2e.rs`.)

use cairn_e2e::desktop::DesktopApp;
use cairn_e2e::webdriver::{keys, wait_for, Session, WdError, PATIENCE};
use cairn_e2e::{text_stream, Sandbox};
use cairn_testkit::pictures::RECEIPT_PNG;
use cairn_testkit::{MockResponse, MockServer};
use serde_json::json;

use super::{click, send, text_of};

#[tokio::test(flavor = "multi_thread")]
async fn a_pasted_picture_is_sent_shown_and_opened_whole() {
    let server = MockServer::start(vec![MockResponse::sse(text_stream(
        "The total is 42.50 EUR.",
    ))])
    .await;
    let sandbox = Sandbox::new();
    sandbox.write_settings(&format!(
        "default_provider = \"mock\"\n\
         [providers.mock]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\n\
         [memory]\nflush = false\nconsolidation_interval_hours = 0\nembedder = \"none\"\n",
        server.url()
    ));
    let knowledge = sandbox.workspace().join("knowledge");
    std::fs::create_dir_all(&knowledge).unwrap();
    std::fs::write(knowledge.join("receipt.png"), RECEIPT_PNG).unwrap();
    DesktopApp::drive(&sandbox, "desktop_pictures", async |s| {
        paste_a_picture(s).await;
        send(s, "What is the total?").await;
        the_thumbnail_opens_the_picture_whole(s).await;
        a_workspace_picture_opens_in_its_view(s).await;
    })
    .await;
    // The model (which does not see pictures) got the picture's name, size and text.
    let asked = server.requests()[0].body_json().unwrap().to_string();
    assert!(
        asked.contains("picture receipt.png, 900 × 220 px"),
        "{asked}"
    );
    assert!(asked.contains("42.50"), "{asked}");
}

/// Pastes the receipt into the message box as a screenshot arrives from the clipboard, and
/// waits for its thumbnail there.
async fn paste_a_picture(s: &Session) {
    let composer = "[data-testid=composer][aria-label=Message]:not([disabled])";
    wait_for("an idle message box", PATIENCE, || async move {
        s.find(composer).await
    })
    .await;
    let pasted = s
        .execute(
            "const file = new File([new Uint8Array(arguments[0])], 'receipt.png', {type: 'image/png'});
             const data = new DataTransfer();
             data.items.add(file);
             const box = document.querySelector('[data-testid=composer]');
             box.focus();
             const paste = new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true});
             box.dispatchEvent(paste);
             return paste.defaultPrevented;",
            vec![json!(RECEIPT_PNG)],
        )
        .await
        .unwrap();
    assert_eq!(pasted, true, "the message box did not take the paste");
    let loaded = "const img = document.querySelector(
            '[data-testid=composer-picture][data-ready=true] img');
        return img !== null && img.complete && img.naturalWidth > 0;";
    wait_for(
        "the picture's thumbnail in the message box",
        PATIENCE,
        || async move {
            let seen = s.execute(loaded, vec![]).await?;
            Ok((seen == true).then_some(()))
        },
    )
    .await;
}

/// The sent message shows the picture as a thumbnail; a click opens it whole, Esc closes it.
async fn the_thumbnail_opens_the_picture_whole(s: &Session) {
    let thumb = "[data-testid=message-user] [data-testid=picture-thumb] img";
    let shown = "const img = document.querySelector(arguments[0]);
        return img && img.complete && img.naturalWidth > 0
            ? {width: img.naturalWidth, alt: img.alt} : null;";
    let seen = wait_for("the thumbnail in the transcript", PATIENCE, || async move {
        let seen = s.execute(shown, vec![json!(thumb)]).await?;
        Ok((!seen.is_null()).then_some(seen))
    })
    .await;
    // A copy scaled for thumbnails, not the picture itself.
    assert_eq!(seen, json!({"width": 480, "alt": "receipt.png"}));
    assert!(s
        .find("[data-testid=composer-picture]")
        .await
        .unwrap()
        .is_none());
    wait_for(
        "the notice that the model does not see pictures",
        PATIENCE,
        || async move {
            let notice = text_of(s, ".notice").await?;
            Ok(notice.contains("does not see pictures").then_some(()))
        },
    )
    .await;

    // The message is drawn again when the run's end reloads the session: a click that
    // found the element just before is tried again.
    let button = "[data-testid=message-user] [data-testid=picture-thumb]";
    wait_for("a click on the thumbnail", PATIENCE, || async move {
        let Some(found) = s.find(button).await? else {
            return Ok(None);
        };
        match found.click().await {
            Ok(()) => Ok(Some(())),
            Err(e) if e.0.contains("stale element") => Ok(None),
            Err(e) => Err(e),
        }
    })
    .await;
    let full = "[data-testid=picture-overlay] [data-testid=picture-full]";
    let whole = wait_for(
        "the picture whole over the window",
        PATIENCE,
        || async move {
            let seen = s.execute(shown, vec![json!(full)]).await?;
            Ok((!seen.is_null()).then_some(seen))
        },
    )
    .await;
    assert_eq!(whole, json!({"width": 900, "alt": "receipt.png"}));
    // Read from the page: the driver reads no text from an ellipsised element.
    let caption = s
        .execute(
            "return document.querySelector('[data-testid=picture-overlay] .picture-caption').textContent;",
            vec![],
        )
        .await
        .unwrap();
    let caption = caption.as_str().unwrap_or_default();
    assert!(
        caption.starts_with("receipt.png · 900 × 220 px"),
        "{caption}"
    );
    s.press(&[keys::ESCAPE]).await.unwrap();
    wait_for("the overlay to close", PATIENCE, || async move {
        let open = s.find("[data-testid=picture-overlay]").await?;
        Ok(open.is_none().then_some(()))
    })
    .await;
}

/// A picture file of the workspace opens from the tree in its view: the picture, its size
/// and the text read in it.
async fn a_workspace_picture_opens_in_its_view(s: &Session) {
    let row = "[data-testid=tree-item][data-path='knowledge/receipt.png']";
    if s.find(row).await.unwrap().is_none() {
        click(s, "[data-testid=tree-item][data-path='knowledge']").await;
    }
    click(s, row).await;
    wait_for("the picture's size in its view", PATIENCE, || async move {
        match text_of(s, "[data-testid=picture-view] [data-testid=picture-size]").await? {
            size if size.starts_with("900 × 220 px") => Ok(Some(())),
            size if size.is_empty() => Ok(None),
            size => Err(WdError(format!("it reads {size:?}"))),
        }
    })
    .await;
    let text = text_of(s, "[data-testid=picture-ocr]").await.unwrap();
    assert!(text.contains("42.50"), "{text}");
}
