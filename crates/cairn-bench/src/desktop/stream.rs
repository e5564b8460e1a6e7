//! Streaming in the window: how long a provider's bytes take to be painted, and the frame
//! times while an answer streams.
//!
//! A loopback OpenAI-compatible server streams each answer as numbered words (`x00001`,
//! `x00002` …) at a steady rate and notes the wall-clock time each word's bytes were handed
//! to the socket. The app runs under WebDriver (its own X display and D-Bus session); a
//! recorder in the page notes, on every animation frame, the frame's time and how many of
//! the words the answer shows. A word's latency is the time from its bytes to the first
//! frame that shows it; frame times are the gaps between the frames from the first word
//! painted to the last. Both clocks are the machine's wall clock.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
use cairn_e2e::desktop::DesktopApp;
use cairn_e2e::webdriver::{wait_for, Session, PATIENCE};
use cairn_e2e::Sandbox;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The page's recorder: one `[wall ms, frame ms, words shown]` per animation frame, the
/// words counted in the first answer after the ones already shown.
const RECORDER: &str = "
    window.__frames = [];
    window.__recording = true;
    const answers = () => document.querySelectorAll('[data-testid=message-assistant]');
    const before = answers().length;
    window.__before = before;
    const words = () => {
      const next = answers()[before];
      const found = next ? next.textContent.match(/x\\d{5}/g) : null;
      return found ? found.length : 0;
    };
    const tick = (ts) => {
      window.__frames.push([performance.timeOrigin + performance.now(), ts, words()]);
      if (window.__recording) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    return true;";

/// What one streamed answer gave.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// Each word's latency from its bytes to the frame showing it, in order.
    pub latencies: Vec<Duration>,
    /// Gaps between consecutive frames while the answer streamed.
    pub frames: Vec<Duration>,
}

/// Milliseconds as a duration (a latency a hair below zero, from the page clock's coarser
/// steps, counts as none).
fn duration_ms(ms: f64) -> Duration {
    Duration::try_from_secs_f64(ms / 1000.0).unwrap_or_default()
}

/// The times each chat answer's words were sent (wall clock, ms), one list per answer.
type Sent = Arc<Mutex<Vec<Vec<f64>>>>;

fn wall_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
        * 1000.0
}

/// Streams `runs` answers of `words` words at `rate` words a second into the app at `app`.
pub async fn measure(
    app: &std::path::Path,
    words: usize,
    runs: usize,
    rate: f64,
) -> anyhow::Result<Vec<Answer>> {
    let sent = Sent::default();
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/v1", listener.local_addr()?);
    let server = tokio::spawn(serve(listener, sent.clone(), words, rate));
    let sandbox = Sandbox::new();
    sandbox.write_settings(&format!(
        "default_provider = \"bench\"\n[providers.bench]\nkind = \"openai\"\n\
         base_url = \"{url}\"\nmodel = \"bench-model\"\n\
         [memory]\nflush = false\nconsolidation_interval_hours = 0\n"
    ));
    let desktop = DesktopApp::launch_binary(&sandbox, "bench-stream", app).await;
    let mut answers = Vec::new();
    let result = async {
        for run in 0..runs {
            answers.push(one_answer(&desktop.session, &sent, run, words).await?);
            eprintln!("streamed answer {}/{runs}", run + 1);
        }
        anyhow::Ok(())
    }
    .await;
    desktop.quit().await;
    server.abort();
    result.map(|()| answers)
}

async fn one_answer(s: &Session, sent: &Sent, run: usize, words: usize) -> anyhow::Result<Answer> {
    let composer = wait_for("an idle message box", PATIENCE, || {
        s.find("[data-testid=composer][aria-label=Message]:not([disabled])")
    })
    .await;
    s.execute(RECORDER, vec![]).await.map_err(wd)?;
    composer
        .send_keys(&format!("bench-stream-{run}\u{E007}"))
        .await
        .map_err(wd)?;
    let done = "const all = document.querySelectorAll('[data-testid=message-assistant]');
        const next = all[window.__before];
        const shown = next ? (next.textContent.match(/x\\d{5}/g) || []).length : 0;
        return shown >= arguments[0] && next.getAttribute('aria-busy') === 'false';";
    wait_for("the whole answer", Duration::from_secs(60), || async {
        let value = s.execute(done, vec![json!(words)]).await?;
        Ok((value == true).then_some(()))
    })
    .await;
    let frames = s
        .execute(
            "window.__recording = false; return window.__frames;",
            vec![],
        )
        .await
        .map_err(wd)?;
    let times = sent
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(run)
        .cloned()
        .context("the server saw no chat request for this answer")?;
    answer_of(&frames, &times)
}

/// Latencies and frame gaps from the page's frames and the server's send times.
fn answer_of(frames: &Value, sent: &[f64]) -> anyhow::Result<Answer> {
    let frames: Vec<(f64, f64, usize)> = frames
        .as_array()
        .context("the page kept no frames")?
        .iter()
        .filter_map(|f| Some((f[0].as_f64()?, f[1].as_f64()?, f[2].as_u64()? as usize)))
        .collect();
    let mut latencies = Vec::with_capacity(sent.len());
    let mut frame = 0;
    for (i, at) in sent.iter().enumerate() {
        while frame < frames.len() && frames[frame].2 <= i {
            frame += 1;
        }
        let Some(&(painted, _, _)) = frames.get(frame) else {
            bail!("word {} was never shown", i + 1);
        };
        latencies.push(duration_ms(painted - at));
    }
    let first = frames.iter().position(|f| f.2 >= 1).unwrap_or(0);
    let last = frames
        .iter()
        .position(|f| f.2 >= sent.len())
        .unwrap_or(frames.len().saturating_sub(1));
    let gaps = frames[first..=last]
        .windows(2)
        .map(|w| duration_ms(w[1].1 - w[0].1))
        .collect();
    Ok(Answer {
        latencies,
        frames: gaps,
    })
}

fn wd(e: cairn_e2e::webdriver::WdError) -> anyhow::Error {
    anyhow::anyhow!("WebDriver: {}", e.0)
}

/// Answers every request: a chat request (it offers tools) streams the words and notes
/// when each was sent; anything else (a title) gets one short answer.
async fn serve(listener: TcpListener, sent: Sent, words: usize, rate: f64) {
    while let Ok((socket, _)) = listener.accept().await {
        let sent = sent.clone();
        tokio::spawn(async move {
            let _ = answer(socket, sent, words, rate).await;
        });
    }
}

async fn answer(mut socket: TcpStream, sent: Sent, words: usize, rate: f64) -> anyhow::Result<()> {
    let body = read_request(&mut socket).await?;
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let chat = request["tools"].as_array().is_some_and(|t| !t.is_empty());
    socket
        .write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
              cache-control: no-cache\r\nconnection: close\r\n\r\n",
        )
        .await?;
    let chunk = |text: &str, finish: Option<&str>| {
        let delta = json!({"choices": [{"index": 0, "delta": {"content": text},
                                        "finish_reason": finish}]});
        format!("data: {delta}\n\n")
    };
    if !chat {
        socket
            .write_all(chunk("Bench", Some("stop")).as_bytes())
            .await?;
        socket.write_all(b"data: [DONE]\n\n").await?;
        return Ok(());
    }
    let slot = {
        let mut all = sent.lock().unwrap_or_else(PoisonError::into_inner);
        all.push(Vec::with_capacity(words));
        all.len() - 1
    };
    let step = Duration::from_secs_f64(1.0 / rate);
    let start = tokio::time::Instant::now();
    for i in 0..words {
        tokio::time::sleep_until(start + step * i as u32).await;
        socket
            .write_all(chunk(&format!("x{:05} ", i + 1), None).as_bytes())
            .await?;
        let at = wall_ms();
        sent.lock().unwrap_or_else(PoisonError::into_inner)[slot].push(at);
    }
    socket.write_all(chunk("", Some("stop")).as_bytes()).await?;
    socket.write_all(b"data: [DONE]\n\n").await?;
    socket.flush().await?;
    Ok(())
}

/// Reads one HTTP request and returns its body.
async fn read_request(socket: &mut TcpStream) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    let mut piece = [0u8; 8192];
    loop {
        let n = socket.read(&mut piece).await?;
        if n == 0 {
            bail!("the request ended early");
        }
        buf.extend_from_slice(&piece[..n]);
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        let body_start = end + 4;
        while buf.len() < body_start + length {
            let n = socket.read(&mut piece).await?;
            if n == 0 {
                bail!("the request body ended early");
            }
            buf.extend_from_slice(&piece[..n]);
        }
        return Ok(buf[body_start..body_start + length].to_vec());
    }
}
