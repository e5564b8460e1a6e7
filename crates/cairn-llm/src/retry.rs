//! Retrying model calls: exponential backoff with jitter, `Retry-After` honoured, and the
//! rule that a call is only retried while nothing has reached the caller yet.
//!
//! Once an event has been emitted, sending the request again would repeat output the
//! harness already showed, so a retryable failure at that point becomes
//! [`LlmError::Interrupted`] instead.

use std::future::Future;
use std::time::Duration;

use futures::StreamExt;
use rand::Rng;
use tokio_util::sync::CancellationToken;

use crate::error::LlmError;
use crate::provider::{EventStream, StreamEvent};

/// How often and how patiently to retry a failed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0: never retry).
    pub max_retries: u32,
    /// Delay before the first retry; doubled for each further one.
    pub base_delay: Duration,
    /// Longest delay between attempts. A `Retry-After` longer than this is not waited for:
    /// the rate-limit error goes to the caller instead.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn never() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// How long to wait before retry number `retry` (1-based) after `error`, or `None`
    /// when the call should not be retried.
    pub fn delay_for(&self, retry: u32, error: &LlmError) -> Option<Duration> {
        if retry == 0 || retry > self.max_retries || !error.is_retryable() {
            return None;
        }
        match error {
            LlmError::RateLimited {
                retry_after: Some(wait),
                ..
            } => (*wait <= self.max_delay).then_some(*wait),
            _ => Some(self.backoff(retry)),
        }
    }

    /// Exponential backoff with "equal jitter": a random delay in `[d/2, d]` where
    /// `d = min(base * 2^(retry-1), max)`, so concurrent clients spread out.
    fn backoff(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.saturating_sub(1));
        let ceiling = self.base_delay.saturating_mul(factor).min(self.max_delay);
        let ceiling_ms = u64::try_from(ceiling.as_millis()).unwrap_or(u64::MAX);
        let jittered = rand::rng().random_range(ceiling_ms / 2..=ceiling_ms);
        Duration::from_millis(jittered)
    }
}

/// Sleeps for `delay`, or returns [`LlmError::Aborted`] as soon as `cancel` fires.
pub async fn sleep(delay: Duration, cancel: &CancellationToken) -> Result<(), LlmError> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(LlmError::Aborted),
        () = tokio::time::sleep(delay) => Ok(()),
    }
}

/// Runs a streaming call with retries. `connect` starts one attempt (send the request,
/// check the status) and returns its events; it is called again, after a backoff, when the
/// attempt fails with a retryable error before any event was passed on.
///
/// The returned stream ends after its inner stream ends or after its first error. When
/// `cancel` fires it yields [`LlmError::Aborted`] at once (dropping the attempt in flight,
/// which closes the connection) and ends.
pub fn retry_stream<F, Fut>(
    policy: RetryPolicy,
    cancel: CancellationToken,
    connect: F,
) -> EventStream
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: Future<Output = Result<EventStream, LlmError>> + Send + 'static,
{
    let state = RetryState {
        policy,
        cancel,
        connect,
        current: None,
        retries: 0,
        emitted: false,
        finished: false,
        wait: None,
    };
    futures::stream::unfold(state, |mut st| async move {
        let item = st.next_item().await?;
        Some((item, st))
    })
    .boxed()
}

struct RetryState<F> {
    policy: RetryPolicy,
    cancel: CancellationToken,
    connect: F,
    current: Option<EventStream>,
    retries: u32,
    emitted: bool,
    finished: bool,
    /// The backoff announced with `Retrying`, slept before the next attempt.
    wait: Option<Duration>,
}

impl<F, Fut> RetryState<F>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<EventStream, LlmError>>,
{
    async fn next_item(&mut self) -> Option<Result<StreamEvent, LlmError>> {
        while !self.finished {
            if let Some(delay) = self.wait.take() {
                if let Err(error) = sleep(delay, &self.cancel).await {
                    self.finished = true;
                    return Some(Err(error));
                }
            }
            match self.step().await {
                Ok(Some(event)) => {
                    self.emitted = true;
                    return Some(Ok(event));
                }
                Ok(None) => self.finished = true,
                Err(error) => match self.recover(error) {
                    Ok(retrying) => return Some(Ok(retrying)),
                    Err(error) => {
                        self.finished = true;
                        return Some(Err(error));
                    }
                },
            }
        }
        None
    }

    /// The next event of the current attempt (starting one if needed), or cancellation.
    async fn step(&mut self) -> Result<Option<StreamEvent>, LlmError> {
        let cancel = self.cancel.clone();
        tokio::select! {
            biased;
            () = cancel.cancelled() => {
                self.current = None;
                Err(LlmError::Aborted)
            }
            next = self.advance() => next,
        }
    }

    async fn advance(&mut self) -> Result<Option<StreamEvent>, LlmError> {
        let stream = match &mut self.current {
            Some(stream) => stream,
            None => self.current.insert((self.connect)().await?),
        };
        stream.next().await.transpose()
    }

    /// Decides what a failed attempt turns into: `Retrying` to try again after the wait it
    /// announces, or the error to hand to the caller.
    fn recover(&mut self, error: LlmError) -> Result<StreamEvent, LlmError> {
        self.current = None;
        if self.emitted {
            return Err(interrupted(error));
        }
        let Some(delay) = self.policy.delay_for(self.retries + 1, &error) else {
            return Err(error);
        };
        self.retries += 1;
        tracing::warn!(retry = self.retries, ?delay, %error, "model call failed, retrying");
        self.wait = Some(delay);
        Ok(StreamEvent::Retrying {
            attempt: self.retries,
            delay,
            reason: error.to_string(),
        })
    }
}

/// A retryable failure after output started cannot be retried: say so.
fn interrupted(error: LlmError) -> LlmError {
    match error {
        LlmError::Transient(message) | LlmError::RateLimited { message, .. } => {
            LlmError::Interrupted(message)
        }
        LlmError::ContextOverflow(_)
        | LlmError::Auth(_)
        | LlmError::BadRequest(_)
        | LlmError::Interrupted(_)
        | LlmError::Fatal(_)
        | LlmError::Aborted => error,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    use futures::stream;
    use pretty_assertions::assert_eq;

    use super::*;

    fn fast() -> RetryPolicy {
        RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(1),
            ..Default::default()
        }
    }

    fn transient() -> LlmError {
        LlmError::Transient("boom".into())
    }

    fn events(items: Vec<Result<StreamEvent, LlmError>>) -> EventStream {
        stream::iter(items).boxed()
    }

    /// A connect function that plays back one scripted attempt per call.
    fn attempts(
        script: Vec<Result<Vec<Result<StreamEvent, LlmError>>, LlmError>>,
    ) -> (
        Arc<AtomicU32>,
        impl FnMut() -> futures::future::Ready<Result<EventStream, LlmError>>,
    ) {
        let calls = Arc::new(AtomicU32::new(0));
        let counter = calls.clone();
        let connect = move || {
            let n = counter.fetch_add(1, Ordering::SeqCst) as usize;
            let attempt = script.get(n).cloned().unwrap_or_else(|| Err(transient()));
            futures::future::ready(attempt.map(events))
        };
        (calls, connect)
    }

    fn text(t: &str) -> StreamEvent {
        StreamEvent::TextDelta(t.into())
    }

    /// The items with each retry announcement shown as `retry N: reason` (its delay is
    /// random).
    fn shown(items: Vec<Result<StreamEvent, LlmError>>) -> Vec<String> {
        items
            .into_iter()
            .map(|item| match item {
                Ok(StreamEvent::Retrying {
                    attempt, reason, ..
                }) => format!("retry {attempt}: {reason}"),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let policy = RetryPolicy {
            max_retries: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(300),
        };
        for _ in 0..20 {
            let first = policy.delay_for(1, &transient()).unwrap();
            assert!((50..=100).contains(&first.as_millis()), "{first:?}");
            let third = policy.delay_for(3, &transient()).unwrap();
            assert!((150..=300).contains(&third.as_millis()), "{third:?}");
        }
        assert_eq!(policy.delay_for(11, &transient()), None);
        assert_eq!(policy.delay_for(1, &LlmError::Auth("no".into())), None);
    }

    #[test]
    fn retry_after_is_honoured_unless_too_long() {
        let policy = RetryPolicy::default();
        let limited = |secs| LlmError::RateLimited {
            retry_after: Some(Duration::from_secs(secs)),
            message: "slow down".into(),
        };
        assert_eq!(
            policy.delay_for(1, &limited(2)),
            Some(Duration::from_secs(2))
        );
        assert_eq!(policy.delay_for(1, &limited(3600)), None);
    }

    #[tokio::test]
    async fn retries_until_an_attempt_succeeds() {
        let ok = vec![Ok(text("hi"))];
        let (calls, connect) = attempts(vec![Err(transient()), Ok(vec![Err(transient())]), Ok(ok)]);
        let got: Vec<_> = retry_stream(fast(), CancellationToken::new(), connect)
            .collect()
            .await;
        assert_eq!(
            shown(got),
            vec![
                "retry 1: temporary provider failure: boom".to_string(),
                "retry 2: temporary provider failure: boom".to_string(),
                format!("{:?}", Ok::<_, LlmError>(text("hi")))
            ]
        );
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn gives_up_after_max_retries() {
        let (calls, connect) = attempts(vec![]);
        let got: Vec<_> = retry_stream(fast(), CancellationToken::new(), connect)
            .collect()
            .await;
        assert_eq!(
            shown(got),
            vec![
                "retry 1: temporary provider failure: boom".to_string(),
                "retry 2: temporary provider failure: boom".to_string(),
                format!("{:?}", Err::<StreamEvent, _>(transient()))
            ]
        );
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn a_failure_after_output_is_interrupted_not_retried() {
        let (calls, connect) = attempts(vec![Ok(vec![Ok(text("a")), Err(transient())])]);
        let got: Vec<_> = retry_stream(fast(), CancellationToken::new(), connect)
            .collect()
            .await;
        assert_eq!(
            got,
            vec![Ok(text("a")), Err(LlmError::Interrupted("boom".into()))]
        );
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn cancellation_during_backoff_aborts() {
        let policy = RetryPolicy {
            base_delay: Duration::from_secs(60),
            ..fast()
        };
        let cancel = CancellationToken::new();
        let (_, connect) = attempts(vec![]);
        let mut stream = retry_stream(policy, cancel.clone(), connect);
        let canceller = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            cancel.cancel();
        });
        assert!(matches!(
            stream.next().await,
            Some(Ok(StreamEvent::Retrying { attempt: 1, .. }))
        ));
        assert_eq!(stream.next().await, Some(Err(LlmError::Aborted)));
        assert_eq!(stream.next().await, None);
        canceller.await.unwrap();
    }
}
