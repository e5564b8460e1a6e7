//! Running a launch to its end: its input written, its output read up to a cap per stream,
//! and everything it started killed when the timeout passes.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use crate::launch::Prepared;

/// What a finished command did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// `None`: killed by a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Why a command gave no result.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CaptureError {
    #[error("could not start: {0}")]
    Start(String),
    #[error("ran past its {} s timeout and was stopped", .0.as_secs())]
    TimedOut(Duration),
    #[error("{0}")]
    Wait(String),
}

/// Starts `prepared`, writes `input` (a command that does not read it is fine), and
/// collects at most `cap` bytes of each stream until it exits or `timeout` passes.
pub async fn capture(
    prepared: Prepared,
    input: &[u8],
    cap: usize,
    timeout: Duration,
) -> Result<Captured, CaptureError> {
    let (mut child, group) = prepared
        .spawn()
        .map_err(|e| CaptureError::Start(e.to_string()))?;
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let work = async {
        if let Some(pipe) = stdin.as_mut() {
            let _ = pipe.write_all(input).await;
        }
        drop(stdin.take());
        let (out, err) = tokio::join!(
            read_capped(stdout.as_mut(), cap),
            read_capped(stderr.as_mut(), cap)
        );
        let status = child.wait().await;
        (out, err, status)
    };
    let outcome = tokio::time::timeout(timeout, work).await;
    group.kill();
    match outcome {
        Ok((stdout, stderr, Ok(status))) => Ok(Captured {
            code: group.status(status).code(),
            stdout,
            stderr,
        }),
        Ok((_, _, Err(e))) => Err(CaptureError::Wait(e.to_string())),
        Err(_) => {
            let _ = child.wait().await;
            Err(CaptureError::TimedOut(timeout))
        }
    }
}

/// Reads a stream to its end, keeping the first `cap` bytes.
async fn read_capped<R: AsyncRead + Unpin>(reader: Option<&mut R>, cap: usize) -> String {
    let Some(reader) = reader else {
        return String::new();
    };
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    while let Ok(n @ 1..) = reader.read(&mut buf).await {
        let room = cap.saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..n.min(room)]);
    }
    String::from_utf8_lossy(&kept).into_owned()
}
