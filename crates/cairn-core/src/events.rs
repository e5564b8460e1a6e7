//! Fan-out of agent events to any number of subscribers.

use std::sync::{Arc, Mutex, PoisonError};

use cairn_protocol::AgentEvent;
use tokio::sync::mpsc;

/// Sends every event to every live subscriber. Each subscriber has its own unbounded
/// queue, so a slow reader never stalls the model stream (it only falls behind).
#[derive(Clone, Default)]
pub struct EventBus {
    subscribers: Arc<Mutex<Vec<mpsc::UnboundedSender<AgentEvent>>>>,
}

impl EventBus {
    pub fn new() -> Self {
        Self::default()
    }

    /// A new subscriber; it receives events emitted from now on. Dropping the receiver
    /// unsubscribes.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<AgentEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.lock().push(tx);
        rx
    }

    pub fn emit(&self, event: AgentEvent) {
        let mut subscribers = self.lock();
        match subscribers.len() {
            0 => {}
            1 => {
                if subscribers[0].send(event).is_err() {
                    subscribers.clear();
                }
            }
            _ => subscribers.retain(|tx| tx.send(event.clone()).is_ok()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<mpsc::UnboundedSender<AgentEvent>>> {
        self.subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_protocol::{NoticeLevel, Phase};

    #[tokio::test]
    async fn every_subscriber_gets_every_event_and_dropped_ones_go_away() {
        let bus = EventBus::new();
        let mut a = bus.subscribe();
        let b = bus.subscribe();
        drop(b);
        let event = AgentEvent::PhaseChanged { phase: Phase::Turn };
        bus.emit(event.clone());
        bus.emit(AgentEvent::Notice {
            level: NoticeLevel::Info,
            message: "x".into(),
        });
        assert_eq!(a.recv().await, Some(event));
        assert!(matches!(a.recv().await, Some(AgentEvent::Notice { .. })));
        assert_eq!(bus.lock().len(), 1);
    }
}
