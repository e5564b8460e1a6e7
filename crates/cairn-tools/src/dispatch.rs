//! Running a step's tool calls: read-only calls side by side, calls that change things one
//! at a time, results always in call order.

use std::future::Future;

use futures::future::join_all;

/// Runs `run(i)` for every item, grouping consecutive items whose `parallel_safe(i)` is true
/// into concurrent batches; any other item runs alone, after everything before it and
/// before everything after it. Results come back in input order.
pub async fn run_in_batches<T, R, Fut>(
    items: Vec<T>,
    parallel_safe: impl Fn(&T) -> bool,
    run: impl Fn(T) -> Fut,
) -> Vec<R>
where
    Fut: Future<Output = R>,
{
    let mut results = Vec::with_capacity(items.len());
    let mut batch = Vec::new();
    for item in items {
        if parallel_safe(&item) {
            batch.push(run(item));
            continue;
        }
        results.extend(join_all(std::mem::take(&mut batch)).await);
        results.push(run(item).await);
    }
    results.extend(join_all(batch).await);
    results
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn reads_overlap_writes_are_serial_and_order_is_kept() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let items = vec![
            ("r1", true, 30),
            ("r2", true, 10),
            ("w", false, 5),
            ("r3", true, 1),
        ];
        let out = run_in_batches(
            items,
            |(_, safe, _)| *safe,
            |(name, _, ms)| {
                let log = log.clone();
                async move {
                    log.lock().unwrap().push(format!("start {name}"));
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    log.lock().unwrap().push(format!("end {name}"));
                    name
                }
            },
        )
        .await;
        assert_eq!(out, vec!["r1", "r2", "w", "r3"]);
        assert_eq!(
            *log.lock().unwrap(),
            vec![
                "start r1", "start r2", "end r2", "end r1", "start w", "end w", "start r3",
                "end r3"
            ]
        );
    }
}
