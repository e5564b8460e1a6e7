//! What the reference check said of a graph on this CPU and runtime, kept beside the graph.
//! A kept int8 graph may have passed on another CPU (a home folder shared between
//! machines, a virtual machine moved to other hardware) and miss here, where f32 runs
//! instead: the verdict lets the model's name say so before any engine loads, so the
//! index asks for the vectors of what will really run.

use std::path::{Path, PathBuf};

use crate::cpu::Cpu;

/// A graph's verdict on this CPU with one runtime library.
pub(crate) struct Verdict {
    path: PathBuf,
}

impl Verdict {
    /// The verdict of the graph kept at `graph`, run by the library at `library`, on this
    /// CPU.
    pub(crate) fn of(graph: &Path, library: &Path) -> Self {
        Self::on(graph, library, &Cpu::this())
    }

    fn on(graph: &Path, library: &Path, cpu: &Cpu) -> Self {
        let runtime = library
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let size = std::fs::metadata(library).map_or(0, |m| m.len());
        let key = blake3::hash(format!("{}|{runtime}|{size}", cpu.key()).as_bytes());
        let mut name = graph.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".{}.verdict", &key.to_hex()[..16]));
        Self {
            path: graph.with_file_name(name),
        }
    }

    /// Whether the graph passed here when it was last checked; `None` when it never was,
    /// or when what lies at its path is not a verdict.
    pub(crate) fn passed(&self) -> Option<bool> {
        match self.read()?.split(' ').next()? {
            "passed" => Some(true),
            "missed" => Some(false),
            _ => None,
        }
    }

    /// Whether the graph `checked` (its bytes' hash and the bar it had to reach) passed
    /// here, so that loading it again need not check it again.
    pub(crate) fn passed_for(&self, checked: &str) -> bool {
        self.read()
            .is_some_and(|text| text.strip_prefix("passed ") == Some(checked))
    }

    /// The verdict's text (see `read_small`).
    fn read(&self) -> Option<String> {
        crate::read_small(&self.path, 160)
    }

    /// Keeps what the check said of the graph `checked` (see [`Verdict::passed_for`]). A
    /// verdict that cannot be kept costs the name's foresight and the next load a check.
    pub(crate) fn record(&self, passed: bool, checked: &str) {
        let text = format!("{} {checked}", if passed { "passed" } else { "missed" });
        if self.read().as_deref() == Some(text.as_str()) {
            return;
        }
        let Some(folder) = self.path.parent() else {
            return;
        };
        if let Err(error) = crate::keep(folder, &self.path, text.as_bytes()) {
            tracing::debug!(%error, "the embedding graph's verdict is not kept");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_is_kept_per_cpu_and_runtime() {
        let cache = tempfile::tempdir().unwrap();
        let graph = cache.path().join("model-int8-0123.onnx");
        let library = cache.path().join("libonnxruntime.so.1.31.1");
        std::fs::write(&library, b"library").unwrap();
        let cpu = Cpu {
            model: Some("Example".into()),
            avx2: true,
            avx512: true,
            vnni: true,
        };
        let here = Verdict::on(&graph, &library, &cpu);
        assert_eq!(here.passed(), None);
        here.record(false, "h1 0.99");
        assert_eq!(Verdict::on(&graph, &library, &cpu).passed(), Some(false));
        assert!(!here.passed_for("h1 0.99"));
        here.record(true, "h1 0.99");
        assert_eq!(here.passed(), Some(true));
        assert!(here.passed_for("h1 0.99"));
        // Another graph under the same name, or a higher bar, is checked again.
        assert!(!here.passed_for("h2 0.99"));
        assert!(!here.passed_for("h1 0.999"));
        // Another CPU, or another runtime library, has not been asked.
        let other = Cpu {
            vnni: false,
            ..cpu.clone()
        };
        assert_eq!(Verdict::on(&graph, &library, &other).passed(), None);
        let newer = cache.path().join("libonnxruntime.so.1.32.0");
        std::fs::write(&newer, b"library").unwrap();
        assert_eq!(Verdict::on(&graph, &newer, &cpu).passed(), None);
    }

    /// What lies at a verdict's path but is no verdict (a FIFO, which a read would wait
    /// on for ever; anything else) is no answer, at once; the next check writes a verdict.
    #[cfg(unix)]
    #[test]
    fn what_is_not_a_verdict_is_no_answer() {
        let cache = tempfile::tempdir().unwrap();
        let graph = cache.path().join("model-int8-0123.onnx");
        let library = cache.path().join("libonnxruntime.so");
        let verdict = Verdict::of(&graph, &library);
        let fifo = std::process::Command::new("mkfifo")
            .arg(&verdict.path)
            .status()
            .unwrap();
        assert!(fifo.success());
        let (tell, heard) = std::sync::mpsc::channel();
        let path = verdict.path.clone();
        std::thread::spawn(move || {
            let _ = tell.send(Verdict { path }.passed());
        });
        let answer = heard.recv_timeout(std::time::Duration::from_secs(10));
        assert_eq!(answer, Ok(None), "a FIFO at the verdict's path");
        verdict.record(false, "h 0.99");
        assert_eq!(verdict.passed(), Some(false));
        std::fs::write(&verdict.path, "passed".repeat(1000)).unwrap();
        assert_eq!(verdict.passed(), None, "a large file");
    }
}
