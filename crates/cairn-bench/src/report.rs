//! What every benchmark prints: a readable table on stdout, or with `--json` one JSON
//! object holding the same figures.

use std::fmt::Write as _;

use serde_json::Value;

/// The build the figures come from (a debug build's are not worth comparing).
pub fn build() -> &'static str {
    if cfg!(debug_assertions) {
        "DEBUG (not representative)"
    } else {
        "release"
    }
}

/// Whether a figure meets its goal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    /// No goal: the figure is for information (a breakdown, a baseline).
    Info,
}

impl Verdict {
    pub fn of(pass: bool) -> Self {
        if pass {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }

    fn label(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
            Verdict::Info => "-",
        }
    }
}

/// One line of a table.
#[derive(Debug, Clone)]
pub struct Row {
    pub name: String,
    pub figure: String,
    pub baseline: String,
    pub goal: String,
    pub verdict: Verdict,
}

impl Row {
    pub fn info(name: impl Into<String>, figure: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            figure: figure.into(),
            baseline: "-".into(),
            goal: "-".into(),
            verdict: Verdict::Info,
        }
    }
}

/// A titled table.
#[derive(Debug, Clone)]
pub struct Section {
    pub title: String,
    pub rows: Vec<Row>,
}

/// The outcome of one benchmark: tables for people, `json` for machines. Both are built
/// from the same measured values.
#[derive(Debug, Clone)]
pub struct Report {
    pub title: String,
    pub sections: Vec<Section>,
    /// What the figures mean (what the baseline is, where files were written ...).
    pub notes: Vec<String>,
    pub json: Value,
}

impl Report {
    pub fn print(&self, json: bool) -> anyhow::Result<()> {
        if json {
            println!("{}", serde_json::to_string_pretty(&self.json)?);
        } else {
            print!("{}", self.render());
        }
        Ok(())
    }

    pub fn render(&self) -> String {
        let mut out = format!("{}\n", self.title);
        for section in &self.sections {
            out.push('\n');
            out.push_str(&render_table(section));
        }
        if !self.notes.is_empty() {
            out.push('\n');
            for note in &self.notes {
                let _ = writeln!(out, "- {note}");
            }
        }
        out
    }
}

const HEADER: [&str; 5] = ["name", "figure", "baseline", "goal", "result"];

fn render_table(section: &Section) -> String {
    let cells: Vec<[&str; 5]> = section
        .rows
        .iter()
        .map(|r| {
            [
                r.name.as_str(),
                r.figure.as_str(),
                r.baseline.as_str(),
                r.goal.as_str(),
                r.verdict.label(),
            ]
        })
        .collect();
    let mut widths = HEADER.map(|h| h.chars().count());
    for row in &cells {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = format!("{}\n", section.title);
    let line = |out: &mut String, row: &[&str; 5]| {
        let padded: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        let _ = writeln!(out, "  {}", padded.join("  ").trim_end());
    };
    line(&mut out, &HEADER);
    let rule = widths.map(|w| "-".repeat(w));
    line(&mut out, &rule.each_ref().map(String::as_str));
    for row in &cells {
        line(&mut out, row);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up() {
        let report = Report {
            title: "t".into(),
            sections: vec![Section {
                title: "s".into(),
                rows: vec![
                    Row {
                        name: "overhead".into(),
                        figure: "12.5 µs".into(),
                        baseline: "1.0 µs".into(),
                        goal: "< 100 µs".into(),
                        verdict: Verdict::of(true),
                    },
                    Row::info("x", "1"),
                ],
            }],
            notes: vec!["n".into()],
            json: Value::Null,
        };
        let text = report.render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[3], "  name      figure   baseline  goal      result");
        assert_eq!(lines[5], "  overhead  12.5 µs  1.0 µs    < 100 µs  pass");
        assert_eq!(lines[6], "  x         1        -         -         -");
        assert_eq!(lines[8], "- n");
    }
}
