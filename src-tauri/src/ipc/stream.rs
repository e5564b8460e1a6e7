//! Forwarding a run's events to the page: text and reasoning deltas go out as they come,
//! at most one per [`GAP`] on average with bursts of up to [`BURST`] (a delta coming when
//! that allowance is spent is joined with the ones after it and goes out when it is back);
//! everything else as it comes, `agent_end` last. A run's events also go to its [`Feed`],
//! so a page loaded again while the run goes on can take it up where it is.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use cairn_protocol::AgentEvent;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

/// The average spacing of deltas sent to the page: at most 250 messages a second, which
/// cost the page little. The page paints what it has at its next frame.
pub const GAP: Duration = Duration::from_millis(4);

/// How many deltas may go at once after a pause (the allowance refills one per [`GAP`]).
/// A stream of 200 words a second comes with uneven spacing (two words 1 ms apart, then
/// 9 ms of nothing); a bare minimum gap would hold every word that came early, and the
/// words after it, for up to a gap each. The allowance lets them through as they come.
pub const BURST: u32 = 4;

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
/// A delta goes out at once while the allowance lasts; deltas of one kind coming when it
/// is spent are joined and go out as one `message_delta` (or `thinking_delta`) when it is
/// back, always before the next other event so order is kept.
pub async fn forward(mut events: UnboundedReceiver<AgentEvent>, mut sink: impl Sink) {
    let mut out = Throttle::new();
    loop {
        let due = out.due();
        tokio::select! {
            event = events.recv() => {
                let Some(event) = event else { break };
                if let Some(joined) = out.pending.as_mut() {
                    if join(joined, &event) {
                        continue;
                    }
                }
                if !out.flush(&mut sink) {
                    return;
                }
                if matches!(event, AgentEvent::MessageDelta { .. } | AgentEvent::ThinkingDelta { .. }) {
                    out.pending = Some(event);
                    if out.quiet() && !out.flush(&mut sink) {
                        return;
                    }
                    continue;
                }
                let last = matches!(event, AgentEvent::AgentEnd { .. });
                if !sink.send(event) || last {
                    return;
                }
            }
            () = tokio::time::sleep_until(due), if out.pending.is_some() => {
                if !out.flush(&mut sink) {
                    return;
                }
            }
        }
    }
    out.flush(&mut sink);
}

/// The delta waiting to go out, and the allowance of deltas that may go at once: a token
/// bucket holding up to [`BURST`], one more each [`GAP`].
struct Throttle {
    pending: Option<AgentEvent>,
    /// Tokens left at `at`.
    tokens: f64,
    at: Instant,
}

impl Throttle {
    fn new() -> Self {
        Self {
            pending: None,
            tokens: f64::from(BURST),
            at: Instant::now(),
        }
    }

    /// The tokens there are now.
    fn refill(&mut self) {
        let now = Instant::now();
        let earned = now.duration_since(self.at).as_secs_f64() / GAP.as_secs_f64();
        self.tokens = (self.tokens + earned).min(f64::from(BURST));
        self.at = now;
    }

    /// Whether a delta may go now.
    fn quiet(&mut self) -> bool {
        self.refill();
        self.tokens >= 1.0
    }

    /// When the pending delta may go: when a whole token is there.
    fn due(&self) -> Instant {
        let missing = (1.0 - self.tokens).max(0.0);
        self.at + GAP.mul_f64(missing)
    }

    /// Sends the pending delta, if any, spending a token (none is owed when order forces a
    /// delta out early, so deltas never wait longer than one gap). False when the page is
    /// gone.
    fn flush(&mut self, sink: &mut impl Sink) -> bool {
        let Some(event) = self.pending.take() else {
            return true;
        };
        self.refill();
        self.tokens = (self.tokens - 1.0).max(0.0);
        sink.send(event)
    }
}

/// Adds `next` to `joined` when both are pieces of one stream: answer text, reasoning, or
/// one call's output. False when `next` is something else.
fn join(joined: &mut AgentEvent, next: &AgentEvent) -> bool {
    match (joined, next) {
        (AgentEvent::MessageDelta { text: joined }, AgentEvent::MessageDelta { text })
        | (AgentEvent::ThinkingDelta { text: joined }, AgentEvent::ThinkingDelta { text }) => {
            joined.push_str(text);
            true
        }
        (
            AgentEvent::ToolUpdate {
                call_id: to,
                text: joined,
            },
            AgentEvent::ToolUpdate { call_id, text },
        ) if to == call_id => {
            joined.push_str(text);
            true
        }
        _ => false,
    }
}

/// One run's events as forwarded so far (consecutive text and tool output joined), and
/// the page that follows it. The run goes on when its page goes away; [`Feed::attach`]
/// gives a new page everything from the start, then the rest as it comes.
#[derive(Clone)]
pub struct Feed(Arc<Mutex<FeedState>>);

struct FeedState {
    log: Vec<AgentEvent>,
    page: Option<Box<dyn Sink>>,
    ended: bool,
}

impl Feed {
    pub fn new(page: impl Sink) -> Self {
        Self(Arc::new(Mutex::new(FeedState {
            log: Vec::new(),
            page: Some(Box::new(page)),
            ended: false,
        })))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, FeedState> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes `page` the follower: it gets the events so far, then the rest. False (and
    /// nothing kept) when the run has ended or `page` is gone already.
    pub fn attach(&self, mut page: impl Sink) -> bool {
        let mut state = self.state();
        if state.ended || !state.log.iter().all(|event| page.send(event.clone())) {
            return false;
        }
        state.page = Some(Box::new(page));
        true
    }
}

impl Sink for Feed {
    /// Never stops forwarding: without a page the run's events are still kept.
    fn send(&mut self, event: AgentEvent) -> bool {
        let mut state = self.state();
        let joined = state.log.last_mut().is_some_and(|last| join(last, &event));
        if !joined {
            state.log.push(event.clone());
        }
        state.ended |= matches!(event, AgentEvent::AgentEnd { .. });
        if let Some(page) = state.page.as_mut() {
            if !page.send(event) {
                state.page = None;
            }
        }
        true
    }
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

    fn thought(text: &str) -> AgentEvent {
        AgentEvent::ThinkingDelta { text: text.into() }
    }

    fn end() -> AgentEvent {
        AgentEvent::AgentEnd {
            outcome: Outcome::Completed,
            summary: RunSummary::default(),
            session_id: "s".into(),
            answer: None,
        }
    }

    type Seen = Arc<Mutex<Vec<AgentEvent>>>;

    /// A page that keeps what it gets and answers `alive`.
    fn recorder(alive: bool) -> (Seen, impl FnMut(AgentEvent) -> bool + Send + 'static) {
        let seen = Seen::default();
        let page = {
            let seen = seen.clone();
            move |event| {
                seen.lock().unwrap().push(event);
                alive
            }
        };
        (seen, page)
    }

    async fn run(events: Vec<AgentEvent>) -> Vec<AgentEvent> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        for event in events {
            let _ = tx.send(event);
        }
        let (seen, sink) = recorder(true);
        let task = tokio::spawn(forward(rx, sink));
        drop(tx);
        task.await.unwrap();
        let out = seen.lock().unwrap().clone();
        out
    }

    /// Lets the forwarder take what was sent, with no time passing.
    async fn settle() {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn deltas_go_at_once_while_the_allowance_lasts_then_joined() {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let (seen, sink) = recorder(true);
        let task = tokio::spawn(forward(rx, sink));
        let seen_now = || seen.lock().unwrap().clone();
        let words: Vec<String> = (1..=BURST).map(|n| n.to_string()).collect();
        for word in &words {
            tx.send(delta(word)).unwrap();
            settle().await;
            assert_eq!(seen_now().last(), Some(&delta(word)), "no wait");
        }
        tx.send(delta("five")).unwrap();
        tx.send(delta("six")).unwrap();
        tokio::time::sleep(GAP / 2).await;
        assert_eq!(seen_now().len(), words.len(), "the allowance is spent");
        tokio::time::sleep(GAP).await;
        assert_eq!(
            seen_now().last(),
            Some(&delta("fivesix")),
            "joined, a gap on"
        );
        // After a pause the allowance is back.
        tokio::time::sleep(GAP * BURST * 2).await;
        for word in ["a", "b", "c"] {
            tx.send(delta(word)).unwrap();
            settle().await;
            assert_eq!(
                seen_now().last(),
                Some(&delta(word)),
                "no wait after a pause"
            );
        }
        tx.send(end()).unwrap();
        task.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_steady_200_words_a_second_is_never_held() {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let (seen, sink) = recorder(true);
        let task = tokio::spawn(forward(rx, sink));
        // Uneven spacing around 5 ms: two words close together, then a longer wait.
        for n in 0..200u32 {
            let word = format!("w{n} ");
            tx.send(delta(&word)).unwrap();
            settle().await;
            assert_eq!(
                seen.lock().unwrap().last(),
                Some(&delta(&word)),
                "word {n} went at once"
            );
            let spacing = if n % 2 == 0 { 1_000 } else { 8_900 };
            tokio::time::sleep(Duration::from_micros(spacing)).await;
        }
        tx.send(end()).unwrap();
        task.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn deltas_past_the_allowance_are_joined_and_kept_before_the_next_event() {
        let mut events: Vec<AgentEvent> = (0..BURST + 2).map(|n| delta(&n.to_string())).collect();
        events.extend([
            AgentEvent::TurnEnd {
                step: 1,
                tool_calls: 0,
            },
            delta("!"),
            thought("Hm, "),
            thought("yes."),
            delta("Yes"),
            end(),
            delta("after the end"),
        ]);
        let out = run(events).await;
        let mut expected: Vec<AgentEvent> = (0..BURST).map(|n| delta(&n.to_string())).collect();
        expected.extend([
            delta(&format!("{}{}", BURST, BURST + 1)),
            AgentEvent::TurnEnd {
                step: 1,
                tool_calls: 0,
            },
            delta("!"),
            thought("Hm, yes."),
            delta("Yes"),
            end(),
        ]);
        assert_eq!(out, expected);
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_stream_sends_each_delta_as_it_comes() {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let (seen, sink) = recorder(true);
        let task = tokio::spawn(forward(rx, sink));
        tx.send(delta("one")).unwrap();
        tokio::time::sleep(GAP * 3).await;
        assert_eq!(seen.lock().unwrap().clone(), vec![delta("one")]);
        tx.send(delta("two")).unwrap();
        tx.send(end()).unwrap();
        task.await.unwrap();
        assert_eq!(
            seen.lock().unwrap().clone(),
            vec![delta("one"), delta("two"), end()]
        );
    }

    #[test]
    fn a_page_attached_later_gets_the_run_so_far_then_the_rest() {
        // The first page is gone after one event.
        let (first, page) = recorder(false);
        let mut feed = Feed::new(page);
        let start = AgentEvent::TurnEnd {
            step: 1,
            tool_calls: 0,
        };
        assert!(feed.send(start.clone()));
        let output = |text: &str| AgentEvent::ToolUpdate {
            call_id: "c1".into(),
            text: text.into(),
        };
        assert!(feed.send(output("one\n")) && feed.send(output("two\n")));
        assert!(feed.send(delta("Hel")) && feed.send(delta("lo")));
        assert_eq!(first.lock().unwrap().clone(), vec![start.clone()]);

        let (again, page) = recorder(true);
        assert!(feed.attach(page));
        feed.send(delta("!"));
        feed.send(end());
        assert_eq!(
            again.lock().unwrap().clone(),
            vec![
                start,
                output("one\ntwo\n"),
                delta("Hello"),
                delta("!"),
                end()
            ]
        );
        assert_eq!(first.lock().unwrap().len(), 1);
        // After the end there is nothing to take up.
        assert!(!feed.attach(|_: AgentEvent| true));
        // A page gone while it catches up is not kept.
        let mut cut = Feed::new(|_: AgentEvent| true);
        cut.send(delta("a"));
        assert!(!cut.attach(|_: AgentEvent| false));
    }
}
