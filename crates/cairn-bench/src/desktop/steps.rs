//! Where a start went: the page's start-up steps as each launch printed them (`page`: its
//! navigation began; `script`: its bundle, parsed, began to run; then `evaluated`,
//! `rendered`, `booted`, `frame`), milliseconds after the process started, the median of
//! the runs per subject side by side.

use serde_json::{json, Value};

use super::launch::Launch;
use crate::report::Row;
use crate::stats::round3;

/// Each step's median over the runs that printed it, in the order the steps came.
#[derive(Debug, Clone, Default)]
pub struct Steps(pub Vec<(String, f64)>);

impl Steps {
    pub fn of(runs: &[Launch]) -> Self {
        let mut names: Vec<&str> = Vec::new();
        for run in runs {
            for (name, _) in &run.steps {
                if !names.contains(&name.as_str()) {
                    names.push(name);
                }
            }
        }
        let medians = names
            .into_iter()
            .map(|name| {
                let at: Vec<f64> = runs
                    .iter()
                    .filter_map(|r| r.steps.iter().find(|(n, _)| n == name).map(|s| s.1))
                    .collect();
                (name.to_string(), super::median_f64(at))
            })
            .collect();
        Self(medians)
    }

    fn at(&self, name: &str) -> Option<f64> {
        self.0.iter().find(|(n, _)| n == name).map(|s| s.1)
    }

    pub fn json(&self) -> Value {
        let map: serde_json::Map<String, Value> = self
            .0
            .iter()
            .map(|(n, at)| (n.clone(), json!(round3(*at))))
            .collect();
        Value::Object(map)
    }
}

/// One row a step, each subject's median (`-` where it has no such step), in the order of
/// the subject with the most steps.
pub fn rows(subjects: &[(&str, &Steps)]) -> Vec<Row> {
    let Some((_, longest)) = subjects.iter().max_by_key(|(_, s)| s.0.len()) else {
        return Vec::new();
    };
    longest
        .0
        .iter()
        .map(|(name, _)| {
            let figures: Vec<String> = subjects
                .iter()
                .map(|(label, steps)| match steps.at(name) {
                    Some(at) => format!("{label} {at:.0} ms"),
                    None => format!("{label} -"),
                })
                .collect();
            Row::info(step_label(name), figures.join(", "))
        })
        .collect()
}

fn step_label(name: &str) -> String {
    match name {
        "page" => "page: navigation began".into(),
        "script" => "page: its script, parsed, began to run".into(),
        "evaluated" => "page: every module had run".into(),
        "rendered" => "page: first render committed".into(),
        "booted" => "page: the first screen's data arrived".into(),
        "frame" => "page: the frame that shows it".into(),
        other => format!("page: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desktop::procmem::TreeMemory;
    use std::time::Duration;

    fn run(steps: &[(&str, f64)]) -> Launch {
        Launch {
            ready: Duration::from_millis(400),
            self_ms: Some(390.0),
            build: Some("release".into()),
            steps: steps.iter().map(|(n, at)| (n.to_string(), *at)).collect(),
            memory: TreeMemory::default(),
        }
    }

    #[test]
    fn medians_per_step_in_the_order_they_came_and_a_missing_step_is_a_dash() {
        let app = Steps::of(&[
            run(&[("page", 100.0), ("script", 150.0), ("frame", 300.0)]),
            run(&[("page", 120.0), ("script", 190.0), ("frame", 340.0)]),
            run(&[("page", 110.0), ("script", 170.0), ("frame", 320.0)]),
        ]);
        assert_eq!(
            app.0,
            [
                ("page".to_string(), 110.0),
                ("script".to_string(), 170.0),
                ("frame".to_string(), 320.0)
            ]
        );
        let bare = Steps::of(&[run(&[("page", 90.0), ("frame", 200.0)])]);
        let rows = rows(&[("app", &app), ("bare", &bare)]);
        let figures: Vec<&str> = rows.iter().map(|r| r.figure.as_str()).collect();
        assert_eq!(
            figures,
            [
                "app 110 ms, bare 90 ms",
                "app 170 ms, bare -",
                "app 320 ms, bare 200 ms"
            ]
        );
        assert_eq!(app.json()["script"], json!(170.0));
    }
}
