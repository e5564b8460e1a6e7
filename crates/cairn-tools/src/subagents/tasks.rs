//! The subagents an agent started, by task id: running ones can be waited for or
//! cancelled; a run that ends stops the ones it did not collect.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde::Serialize;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::report::{Report, TaskStatus};

/// One started subagent.
struct Task {
    agent: String,
    cancel: CancellationToken,
    done: watch::Receiver<Option<Report>>,
    /// Its report reached the model (or it was started to be waited for).
    collected: bool,
}

/// A line of `task_list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskLine {
    pub task_id: String,
    pub agent: String,
    pub status: TaskStatus,
}

#[derive(Default)]
pub struct Tasks {
    map: Mutex<BTreeMap<String, Task>>,
}

impl Tasks {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Task>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn insert(
        &self,
        task_id: &str,
        agent: &str,
        cancel: CancellationToken,
        done: watch::Receiver<Option<Report>>,
        collected: bool,
    ) {
        let task = Task {
            agent: agent.to_string(),
            cancel,
            done,
            collected,
        };
        self.lock().insert(task_id.to_string(), task);
    }

    /// The report of `task_id` once it is finished, waiting up to `wait` for it; `None`
    /// when there is no such task. A report handed out counts as collected.
    pub async fn output(&self, task_id: &str, wait: Duration) -> Option<Option<Report>> {
        let mut done = self.lock().get(task_id)?.done.clone();
        let _ = tokio::time::timeout(wait, done.wait_for(Option::is_some)).await;
        let report = done.borrow().clone();
        if report.is_some() {
            if let Some(task) = self.lock().get_mut(task_id) {
                task.collected = true;
            }
        }
        Some(report)
    }

    /// Asks `task_id` to stop; false when there is no such task.
    pub fn cancel(&self, task_id: &str) -> bool {
        match self.lock().get(task_id) {
            Some(task) => {
                task.cancel.cancel();
                true
            }
            None => false,
        }
    }

    pub fn list(&self) -> Vec<TaskLine> {
        self.lock()
            .iter()
            .map(|(id, task)| TaskLine {
                task_id: id.clone(),
                agent: task.agent.clone(),
                status: task
                    .done
                    .borrow()
                    .as_ref()
                    .map_or(TaskStatus::Running, |r| r.status),
            })
            .collect()
    }

    /// Stops every task still running whose report nobody waited for, and waits up to
    /// `grace` for them to end; returns them as `agent (task id)`. Finished reports stay
    /// for `task_output`.
    pub async fn stop_uncollected(&self, grace: Duration) -> Vec<String> {
        let stopped: Vec<(String, watch::Receiver<Option<Report>>)> = {
            let mut map = self.lock();
            map.iter_mut()
                .filter(|(_, task)| !task.collected && task.done.borrow().is_none())
                .map(|(id, task)| {
                    task.collected = true;
                    task.cancel.cancel();
                    (format!("{} ({id})", task.agent), task.done.clone())
                })
                .collect()
        };
        let waits = stopped.iter().map(|(_, done)| {
            let mut done = done.clone();
            async move {
                let _ = tokio::time::timeout(grace, done.wait_for(Option::is_some)).await;
            }
        });
        futures::future::join_all(waits).await;
        stopped.into_iter().map(|(name, _)| name).collect()
    }
}
