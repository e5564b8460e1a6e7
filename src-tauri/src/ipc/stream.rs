//! Forwarding a run's events to the page: text deltas coalesced to about one message per
//! frame, everything else as it comes, `agent_end` last.

use std::time::Duration;

use cairn_protocol::AgentEvent;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::MissedTickBehavior;

/// About one frame at 60 Hz.
pub const FRAME: Duration = Duration::from_millis(16);

/// Where forwarded events go (a `tauri::ipc::Channel` in the app, a Vec in tests).
pub trait Sink: Send + 'static {
    /// False when the page is gone: forwarding stops.
    fn send(&mut self, event: AgentEvent) -> bool;
}

impl<F: FnMut(AgentEvent) -> bool + Send + 'static> Sink for F {
    fn send(&mut self, event: AgentEvent) -> bool {
        self(event)
    }
}

/// Forwards `events` to `sink` until `agent_end` (sent, then stop) or the stream ends.
/// Deltas arriving within one frame go out as one `message_delta`, always before the
/// next other event so order is kept.
pub async fn forward(mut events: UnboundedReceiver<AgentEvent>, mut sink: impl Sink) {
    let mut pending = String::new();
    let mut frame = tokio::time::interval(FRAME);
    frame.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            event = events.recv() => {
                let Some(event) = event else { break };
                if let AgentEvent::MessageDelta { text } = event {
                    pending.push_str(&text);
                    continue;
                }
                if !flush(&mut pending, &mut sink) {
                    return;
                }
                let last = matches!(event, AgentEvent::AgentEnd { .. });
                if !sink.send(event) || last {
                    return;
                }
            }
            _ = frame.tick(), if !pending.is_empty() => {
                if !flush(&mut pending, &mut sink) {
                    return;
                }
            }
        }
    }
    flush(&mut pending, &mut sink);
}

fn flush(pending: &mut String, sink: &mut impl Sink) -> bool {
    if pending.is_empty() {
        return true;
    }
    let text = std::mem::take(pending);
    sink.send(AgentEvent::MessageDelta { text })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_protocol::{Outcome, RunSummary};
    use pretty_assertions::assert_eq;
    use std::sync::{Arc, Mutex};

    fn delta(text: &str) -> AgentEvent {
        AgentEvent::MessageDelta { text: text.into() }
    }

    fn end() -> AgentEvent {
        AgentEvent::AgentEnd {
            outcome: Outcome::Completed,
            summary: RunSummary::default(),
            session_id: "s".into(),
        }
    }

    async fn run(events: Vec<AgentEvent>) -> Vec<AgentEvent> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        for event in events {
            let _ = tx.send(event);
        }
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = {
            let seen = seen.clone();
            move |event| {
                seen.lock().unwrap().push(event);
                true
            }
        };
        let task = tokio::spawn(forward(rx, sink));
        drop(tx);
        task.await.unwrap();
        let out = seen.lock().unwrap().clone();
        out
    }

    #[tokio::test]
    async fn deltas_of_one_frame_are_joined_and_kept_before_the_next_event() {
        let out = run(vec![
            delta("Hel"),
            delta("lo, "),
            delta("world"),
            AgentEvent::TurnEnd {
                step: 1,
                tool_calls: 0,
            },
            delta("!"),
            end(),
            delta("after the end"),
        ])
        .await;
        assert_eq!(
            out,
            vec![
                delta("Hello, world"),
                AgentEvent::TurnEnd {
                    step: 1,
                    tool_calls: 0
                },
                delta("!"),
                end(),
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_stream_sends_each_frame_as_it_comes() {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = {
            let seen = seen.clone();
            move |event| {
                seen.lock().unwrap().push(event);
                true
            }
        };
        let task = tokio::spawn(forward(rx, sink));
        tx.send(delta("one")).unwrap();
        tokio::time::sleep(FRAME * 3).await;
        assert_eq!(seen.lock().unwrap().clone(), vec![delta("one")]);
        tx.send(delta("two")).unwrap();
        tx.send(end()).unwrap();
        task.await.unwrap();
        assert_eq!(
            seen.lock().unwrap().clone(),
            vec![delta("one"), delta("two"), end()]
        );
    }
}
