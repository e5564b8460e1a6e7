//! Ctrl+C as one listener for a whole command, so no interrupt is missed.
//!
//! `tokio::signal::ctrl_c()` sees only the interrupts that come after its future is first
//! polled. Called afresh in each turn of a `select!` loop, it missed an interrupt that came
//! while the loop handled something else (a streamed word, often, for a fast model), and
//! the answer went on to its end. A signal listener made once keeps every delivery.

use std::io;

#[cfg(unix)]
type Listener = tokio::signal::unix::Signal;
#[cfg(windows)]
type Listener = tokio::signal::windows::CtrlC;

pub struct Interrupts(Listener);

impl Interrupts {
    /// Starts listening (from then on, Ctrl+C no longer ends the process by itself).
    pub fn listen() -> io::Result<Self> {
        #[cfg(unix)]
        let listener = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
        #[cfg(windows)]
        let listener = tokio::signal::windows::ctrl_c()?;
        Ok(Self(listener))
    }

    /// The next Ctrl+C (never, if the listener is gone).
    pub async fn next(&mut self) {
        if self.0.recv().await.is_none() {
            std::future::pending::<()>().await;
        }
    }
}
