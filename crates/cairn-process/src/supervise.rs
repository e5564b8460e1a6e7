//! Watching a running child to its end: its output handed on as it comes, a tick for
//! progress reports, and everything it started killed when it exits, when its timeout
//! passes or when the caller cancels.

use std::process::ExitStatus;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Child;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{interval_at, sleep, Instant, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

use crate::reap::Group;

/// How long output is still collected after the child ends or is killed (background
/// processes may keep the pipes open).
const DRAIN_GRACE: Duration = Duration::from_millis(300);

/// Where a watched child's output goes.
pub trait Sink {
    /// Bytes from stdout or stderr, interleaved as they arrived.
    fn output(&mut self, bytes: &[u8]);
    /// Called every tick while the child runs (for progress reports).
    fn tick(&mut self) {}
}

/// How the child ended.
#[derive(Debug)]
pub enum End {
    /// How its program ended; inside the sandbox too, a death by a signal reads as one
    /// (see [`Group::status`]).
    Exited(ExitStatus),
    TimedOut,
    Cancelled,
    /// Waiting for the child failed (should not happen).
    Lost(String),
}

/// Feeds `child`'s output to `sink` until it exits, `timeout` passes or `cancel` fires;
/// then the whole group is killed (background jobs too) and what is left in the pipes is
/// collected for a short grace.
pub async fn supervise(
    child: &mut Child,
    group: &Group,
    timeout: Duration,
    tick: Duration,
    cancel: &CancellationToken,
    sink: &mut impl Sink,
) -> End {
    let (tx, mut rx) = mpsc::channel(64);
    let pumps = [
        pump(child.stdout.take(), tx.clone()),
        pump(child.stderr.take(), tx),
    ];
    let deadline = sleep(timeout);
    tokio::pin!(deadline);
    let mut ticker = interval_at(Instant::now() + tick, tick);
    ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let end = loop {
        tokio::select! {
            _ = cancel.cancelled() => break End::Cancelled,
            _ = &mut deadline => break End::TimedOut,
            status = child.wait() => match status {
                Ok(status) => break End::Exited(group.status(status)),
                Err(e) => break End::Lost(e.to_string()),
            },
            Some(chunk) = rx.recv() => sink.output(&chunk),
            _ = ticker.tick() => sink.tick(),
        }
    };
    group.kill();
    if !matches!(end, End::Exited(_)) {
        let _ = child.wait().await;
    }
    drain(&mut rx, sink).await;
    pumps.iter().for_each(JoinHandle::abort);
    end
}

/// Forwards chunks read from a pipe until it closes.
fn pump<R>(reader: Option<R>, tx: mpsc::Sender<Vec<u8>>) -> JoinHandle<()>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let Some(mut reader) = reader else { return };
        let mut buf = vec![0; 8 * 1024];
        while let Ok(n @ 1..) = reader.read(&mut buf).await {
            if tx.send(buf[..n].to_vec()).await.is_err() {
                return;
            }
        }
    })
}

/// Takes what is still in the pipes, waiting at most [`DRAIN_GRACE`].
async fn drain(rx: &mut mpsc::Receiver<Vec<u8>>, sink: &mut impl Sink) {
    let grace = sleep(DRAIN_GRACE);
    tokio::pin!(grace);
    loop {
        tokio::select! {
            chunk = rx.recv() => match chunk {
                Some(chunk) => sink.output(&chunk),
                None => return,
            },
            _ = &mut grace => return,
        }
    }
}
