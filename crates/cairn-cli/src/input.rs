//! Lines typed on stdin, read on a thread of their own so that the terminal can answer
//! approvals and steer a run while it streams.

use std::io::BufRead;

use tokio::sync::mpsc;

/// Starts the reader. The channel yields each line (without its newline) and closes at
/// end of input.
pub fn lines() -> mpsc::UnboundedReceiver<String> {
    let (tx, rx) = mpsc::unbounded_channel();
    let spawned = std::thread::Builder::new()
        .name("cairn-stdin".into())
        .spawn(move || {
            let stdin = std::io::stdin();
            for line in stdin.lock().lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
    if let Err(e) = spawned {
        eprintln!("cairn: cannot read the terminal: {e}");
    }
    rx
}
