//! Holding the index's writer in the middle of a pass over the files: an embedding model
//! whose tokenizer stops when it measures a chosen line, which the index does while it reads
//! the file holding that line, until the test lets it go on.

use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use cairn_memory::chunk::Tokens;
use cairn_memory::index::Embedder;

/// The two ends a test holds while the writer is stopped: it hears that the writer
/// reached the line, and lets it go on.
type Ends = (mpsc::Sender<()>, mpsc::Receiver<()>);

/// A tokenizer (about four characters a token) that stops at `line` once armed.
pub struct Pause {
    line: String,
    armed: Mutex<Option<Ends>>,
}

impl Pause {
    /// Stops the writer when it measures `line` (a whole line of some file) once armed.
    pub fn at_line(line: &str) -> Arc<Self> {
        Arc::new(Self {
            line: line.to_string(),
            armed: Mutex::new(None),
        })
    }

    /// The embedding model that measures chunks with this tokenizer.
    pub fn embedder(self: &Arc<Self>) -> Arc<dyn Embedder> {
        Arc::new(Model(self.clone()))
    }

    /// Stops the writer the next time it measures the line (once).
    pub fn arm(&self) -> Paused {
        let (reached, heard) = mpsc::channel();
        let (resume, waits) = mpsc::channel();
        *self.armed.lock().unwrap() = Some((reached, waits));
        Paused { heard, resume }
    }
}

/// A stop to come, or the writer stopped; it goes on when this is resumed or dropped.
pub struct Paused {
    heard: mpsc::Receiver<()>,
    resume: mpsc::Sender<()>,
}

impl Paused {
    /// Waits until the writer has stopped at the line.
    pub fn wait(&self) {
        self.heard
            .recv_timeout(Duration::from_secs(120))
            .expect("the index never read the line it was to stop at");
    }

    /// Lets the writer go on.
    pub fn resume(self) {
        let _ = self.resume.send(());
    }
}

impl Tokens for Pause {
    fn count(&self, text: &str) -> usize {
        if text == self.line {
            let armed = self.armed.lock().unwrap().take();
            if let Some((reached, waits)) = armed {
                let _ = reached.send(());
                // Until the test resumes, or drops its end (a test that failed).
                let _ = waits.recv();
            }
        }
        text.chars().count() / 4 + 1
    }

    fn window(&self) -> usize {
        256
    }

    fn name(&self) -> String {
        "pause".into()
    }
}

/// An embedding model of one dimension: search by meaning is not what these tests look at.
struct Model(Arc<Pause>);

impl Embedder for Model {
    fn model(&self) -> String {
        "pause".into()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        Ok(texts.iter().map(|_| vec![1.0]).collect())
    }

    fn tokens(&self) -> Option<Arc<dyn Tokens>> {
        Some(self.0.clone())
    }
}
