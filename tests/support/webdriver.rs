//! A small W3C WebDriver client: the commands the desktop tests use, over plain HTTP/JSON.

use std::future::Future;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The key codes WebDriver reserves for special keys.
pub mod keys {
    pub const CONTROL: &str = "\u{E009}";
    pub const END: &str = "\u{E010}";
    pub const ENTER: &str = "\u{E007}";
    pub const ESCAPE: &str = "\u{E00C}";
}

/// How long a test waits for something a user would see.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// The W3C name under which an element reference travels in JSON.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// What went wrong talking to the driver.
#[derive(Debug, Clone)]
pub struct WdError(pub String);

impl std::fmt::Display for WdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub type WdResult<T> = Result<T, WdError>;

/// One WebDriver session on a driver at `base` (e.g. `http://127.0.0.1:4444`).
#[derive(Debug, Clone)]
pub struct Session {
    http: reqwest::Client,
    url: String,
}

/// An element of the page.
#[derive(Debug, Clone)]
pub struct Element<'a> {
    session: &'a Session,
    pub id: String,
}

/// Whether the driver at `base` answers and is ready for a new session.
pub async fn driver_ready(base: &str) -> bool {
    let Ok(reply) = reqwest::get(format!("{base}/status")).await else {
        return false;
    };
    let value: Value = reply.json().await.unwrap_or_default();
    value["value"]["ready"].as_bool().unwrap_or(false)
}

impl Session {
    /// `POST /session` with `capabilities` (the W3C `{"capabilities": ...}` body).
    pub async fn start(base: &str, capabilities: Value) -> WdResult<Self> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(90))
            .build()
            .map_err(|e| WdError(format!("http client: {e}")))?;
        let value = call(
            &http,
            reqwest::Method::POST,
            &format!("{base}/session"),
            Some(capabilities),
        )
        .await?;
        let id = value["sessionId"]
            .as_str()
            .ok_or_else(|| WdError(format!("no session id in {value}")))?;
        Ok(Self {
            http,
            url: format!("{base}/session/{id}"),
        })
    }

    async fn post(&self, path: &str, body: Value) -> WdResult<Value> {
        let url = format!("{}{path}", self.url);
        call(&self.http, reqwest::Method::POST, &url, Some(body)).await
    }

    async fn get(&self, path: &str) -> WdResult<Value> {
        let url = format!("{}{path}", self.url);
        call(&self.http, reqwest::Method::GET, &url, None).await
    }

    /// Ends the session (the driver closes the app's window).
    pub async fn delete(&self) -> WdResult<()> {
        call(&self.http, reqwest::Method::DELETE, &self.url, None)
            .await
            .map(drop)
    }

    /// Loads the page again, as a reload of the web view does.
    pub async fn refresh(&self) -> WdResult<()> {
        self.post("/refresh", json!({})).await.map(drop)
    }

    /// Every element matching `css`, in document order.
    pub async fn find_all(&self, css: &str) -> WdResult<Vec<Element<'_>>> {
        let value = self
            .post("/elements", json!({"using": "css selector", "value": css}))
            .await?;
        let list = value.as_array().cloned().unwrap_or_default();
        list.iter().map(|v| self.element(v)).collect()
    }

    /// The first element matching `css`, if any.
    pub async fn find(&self, css: &str) -> WdResult<Option<Element<'_>>> {
        Ok(self.find_all(css).await?.into_iter().next())
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the page and returns
    /// what it returns.
    pub async fn execute(&self, script: &str, args: Vec<Value>) -> WdResult<Value> {
        self.post("/execute/sync", json!({"script": script, "args": args}))
            .await
    }

    /// The element a script returned.
    pub fn element(&self, value: &Value) -> WdResult<Element<'_>> {
        let id = value[ELEMENT]
            .as_str()
            .ok_or_else(|| WdError(format!("not an element: {value}")))?;
        Ok(Element {
            session: self,
            id: id.to_string(),
        })
    }

    /// Presses `chord` together (e.g. Control and "k"), then releases them in reverse.
    pub async fn press(&self, chord: &[&str]) -> WdResult<()> {
        let mut actions: Vec<Value> = chord
            .iter()
            .map(|k| json!({"type": "keyDown", "value": k}))
            .collect();
        actions.extend(
            chord
                .iter()
                .rev()
                .map(|k| json!({"type": "keyUp", "value": k})),
        );
        let body = json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]});
        self.post("/actions", body).await.map(drop)
    }

    /// Types `text` key by key into whatever has the focus (unlike
    /// [`Element::send_keys`], which focuses its element first).
    pub async fn type_keys(&self, text: &str) -> WdResult<()> {
        let actions: Vec<Value> = text
            .chars()
            .flat_map(|c| {
                let key = c.to_string();
                [
                    json!({"type": "keyDown", "value": key}),
                    json!({"type": "keyUp", "value": key}),
                ]
            })
            .collect();
        let body = json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]});
        self.post("/actions", body).await.map(drop)
    }

    pub async fn current_url(&self) -> WdResult<String> {
        let value = self.get("/url").await?;
        Ok(value.as_str().unwrap_or_default().to_string())
    }

    pub async fn source(&self) -> WdResult<String> {
        let value = self.get("/source").await?;
        Ok(value.as_str().unwrap_or_default().to_string())
    }

    /// A PNG of the window.
    pub async fn screenshot(&self) -> WdResult<Vec<u8>> {
        let value = self.get("/screenshot").await?;
        decode_base64(value.as_str().unwrap_or_default())
            .ok_or_else(|| WdError("the screenshot is not base64".into()))
    }
}

impl Element<'_> {
    fn path(&self, what: &str) -> String {
        format!("/element/{}/{what}", self.id)
    }

    pub async fn click(&self) -> WdResult<()> {
        self.session
            .post(&self.path("click"), json!({}))
            .await
            .map(drop)
    }

    /// Types `text` into the element (WebDriver key codes allowed; modifiers stay down
    /// until pressed again or the text ends).
    pub async fn send_keys(&self, text: &str) -> WdResult<()> {
        self.session
            .post(&self.path("value"), json!({"text": text}))
            .await
            .map(drop)
    }

    /// The rendered text, as a user reads it.
    pub async fn text(&self) -> WdResult<String> {
        let value = self.session.get(&self.path("text")).await?;
        Ok(value.as_str().unwrap_or_default().to_string())
    }

    pub async fn attribute(&self, name: &str) -> WdResult<Option<String>> {
        let value = self
            .session
            .get(&self.path(&format!("attribute/{name}")))
            .await?;
        Ok(value.as_str().map(str::to_string))
    }

    /// Runs `script` with this element as `arguments[0]`.
    pub async fn execute(&self, script: &str) -> WdResult<Value> {
        self.session
            .execute(script, vec![json!({ELEMENT: self.id})])
            .await
    }
}

async fn call(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    body: Option<Value>,
) -> WdResult<Value> {
    let mut request = http.request(method.clone(), url);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let fail = |e: reqwest::Error| WdError(format!("{method} {url}: {e}"));
    let reply = request.send().await.map_err(fail)?;
    let status = reply.status();
    let value: Value = reply.json().await.map_err(fail)?;
    if !status.is_success() || value["value"]["error"].is_string() {
        let error = &value["value"];
        return Err(WdError(format!(
            "{method} {url}: {} ({})",
            error["error"].as_str().unwrap_or("error"),
            error["message"].as_str().unwrap_or_default()
        )));
    }
    Ok(value["value"].clone())
}

/// Polls `check` until it gives a value or `timeout` passes, then panics naming `what` and
/// the last error seen. Errors count as "not yet" (the element may not be there yet).
pub async fn wait_for<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = WdResult<Option<T>>>,
{
    let started = Instant::now();
    let mut last = String::from("none");
    loop {
        match check().await {
            Ok(Some(value)) => return value,
            Ok(None) => {}
            Err(e) => last = e.0,
        }
        if started.elapsed() > timeout {
            panic!("timed out after {timeout:?} waiting for {what} (last error: {last})");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
    {
        acc = (acc << 6) | u32::from(value(c)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_with_and_without_padding() {
        assert_eq!(decode_base64("aGVsbG8="), Some(b"hello".to_vec()));
        assert_eq!(decode_base64("aGk"), Some(b"hi".to_vec()));
        assert_eq!(
            decode_base64("iVBORw0KGgo="),
            Some(b"\x89PNG\r\n\x1a\n".to_vec())
        );
        assert_eq!(decode_base64("a$"), None);
    }
}
