//! Reading a document with its cost contained. A program that calls [`serve_if_asked`]
//! first thing in `main` (the `cairn` CLI and the desktop app do) extracts each file in a
//! child process: itself, started again through `cairn-process`'s one door with the file
//! on its input, a cap on its address space, and a timeout after which its whole process
//! group is killed. A parser that loops, balloons or crashes on a hostile file costs that
//! file, reported with the reason; the index goes on.
//!
//! A program that does not serve (a library's tests) extracts on a thread of its own with
//! the panic caught and the same timeout; a thread that runs past it cannot be stopped and
//! is left to finish, its answer dropped.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Once, RwLock};
use std::time::Duration;

use cairn_process::{capture, neutral_dir, CaptureError, EnvScrub, Launch, Sandbox};
use serde::{Deserialize, Serialize};

use crate::html::Readable;
use crate::{extract_here, Extracted, Kind, ReadOptions, Reading, MAX_TEXT_BYTES};

/// Set in a child's environment to the format it is to read.
const ASK_VAR: &str = "CAIRN_EXTRACT_CHILD";
/// [`ASK_VAR`]'s value in a child started to prepare a picture (see `picture.rs`).
pub(crate) const PICTURE_JOB: &str = "picture";
/// [`ASK_VAR`]'s value in a child started to read a web page (see [`readable`]).
const PAGE_JOB: &str = "page";
/// Set in a picture child's environment to its options, as JSON.
const OPTIONS_VAR: &str = "CAIRN_EXTRACT_OPTIONS";
/// Set in a child's environment to its address-space limit, in bytes.
const MEMORY_VAR: &str = "CAIRN_EXTRACT_MEMORY";

/// Whether this program extracts in child processes (it called [`serve_if_asked`]).
static SERVES: AtomicBool = AtomicBool::new(false);

/// Paths a reader child never sees besides the homes (see [`hide_from_readers`]).
static HIDDEN: RwLock<Vec<PathBuf>> = RwLock::new(Vec::new());

/// Variables a reader child gets besides those every program needs: where Tesseract's
/// language files are, when the user moved them.
const READER_VARIABLES: [&str; 1] = ["TESSDATA_PREFIX"];

/// Hides `paths` (Cairn's config folder and key file, wherever the settings put them)
/// from the sandboxed reader children started from now on.
pub fn hide_from_readers(paths: Vec<PathBuf>) {
    if let Ok(mut hidden) = HIDDEN.write() {
        *hidden = paths;
    }
}

/// What one file may cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub timeout: Duration,
    /// The child's address space (virtual memory), in bytes.
    pub memory_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(60),
            memory_bytes: 2 << 30,
        }
    }
}

/// The child's one line of answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Answer {
    Ok(Extracted),
    Error(String),
}

/// Reads one document's bytes of a format; an error says why, for the user.
pub type Reader = fn(Kind, &[u8]) -> Result<Extracted, String>;

/// Call first thing in `main`. In a child started to extract, reads the file from the
/// input, writes the answer and exits; otherwise notes that this program can serve, and
/// returns.
pub fn serve_if_asked() {
    serve_if_asked_with(extract_here);
}

/// [`serve_if_asked`], the child reading with `read` instead of [`extract_here`]: for a
/// test program whose reader must hang or crash on cue.
#[doc(hidden)]
pub fn serve_if_asked_with(read: Reader) {
    let Some(asked) = std::env::var_os(ASK_VAR) else {
        SERVES.store(true, Ordering::Relaxed);
        return;
    };
    if let Some(limit) = std::env::var(MEMORY_VAR)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        limit_memory(limit);
    }
    let mut bytes = Vec::new();
    let input = std::io::stdin().read_to_end(&mut bytes);
    let line = match (asked.to_str(), input) {
        (_, Err(e)) => answer_line(&Answer::Error(format!("cannot read the file's bytes: {e}"))),
        (Some(PICTURE_JOB), Ok(_)) => {
            let options = std::env::var(OPTIONS_VAR)
                .ok()
                .and_then(|v| serde_json::from_str(&v).ok())
                .unwrap_or_default();
            let answer =
                std::panic::catch_unwind(|| crate::picture::prepare_here(&bytes, &options))
                    .unwrap_or_else(|_| Err("the picture reader crashed on this file".into()));
            serde_json::to_string(&answer).unwrap_or_default()
        }
        (Some(PAGE_JOB), Ok(_)) => {
            let url = std::env::var(OPTIONS_VAR).ok().filter(|u| !u.is_empty());
            let html = String::from_utf8_lossy(&bytes);
            let answer = std::panic::catch_unwind(|| crate::html::readable(&html, url.as_deref()))
                .map_err(|_| "the web page reader crashed on this page".to_string());
            serde_json::to_string(&answer).unwrap_or_default()
        }
        (kind, Ok(_)) => answer_line(&match kind.and_then(Kind::parse) {
            None => Answer::Error("unknown document format".into()),
            Some(kind) => {
                child_reading().set_current();
                in_thread_here(read, kind, &bytes)
            }
        }),
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "\n{line}");
    let _ = out.flush();
    std::process::exit(0);
}

fn answer_line(answer: &Answer) -> String {
    serde_json::to_string(answer).unwrap_or_default()
}

/// `read` with a panic caught and told as an error.
fn in_thread_here(read: Reader, kind: Kind, bytes: &[u8]) -> Answer {
    match std::panic::catch_unwind(|| read(kind, bytes)) {
        Ok(Ok(extracted)) => Answer::Ok(extracted),
        Ok(Err(why)) => Answer::Error(why),
        Err(_) => Answer::Error(format!("the {} reader crashed on this file", kind.as_str())),
    }
}

#[cfg(unix)]
#[allow(unsafe_code)]
fn limit_memory(bytes: u64) {
    let limit = libc::rlimit {
        rlim_cur: bytes as libc::rlim_t,
        rlim_max: bytes as libc::rlim_t,
    };
    // SAFETY: setrlimit reads the struct it is given and changes only this process.
    unsafe {
        libc::setrlimit(libc::RLIMIT_AS, &limit);
    }
}

#[cfg(not(unix))]
fn limit_memory(_bytes: u64) {}

/// Extracts `bytes` of format `kind` within `limits`: in a child process when this
/// program serves (see the module), else on a thread.
pub fn extract(kind: Kind, bytes: &[u8], limits: Limits) -> Result<Extracted, String> {
    extract_with(kind, bytes, limits, &ReadOptions::default())
}

/// [`extract`] with the readers' options (OCR, PDFium) given.
pub fn extract_with(
    kind: Kind,
    bytes: &[u8],
    limits: Limits,
    options: &ReadOptions,
) -> Result<Extracted, String> {
    if SERVES.load(Ordering::Relaxed) {
        if let Ok(program) = std::env::current_exe() {
            return in_child(&program, kind, bytes, limits, options);
        }
    }
    let reading = Reading::within(options.clone(), limits.timeout);
    in_thread_reading(extract_here, kind, bytes, limits, reading)
}

/// A web page's main content as markdown (see [`crate::html::readable`]), read within
/// `limits` as a document is: in a child process when this program serves, else on a
/// thread. A page that makes the reader loop, balloon or crash is an error saying so.
pub fn readable(html: &str, url: Option<&str>, limits: Limits) -> Result<Readable, String> {
    if SERVES.load(Ordering::Relaxed) {
        if let Ok(program) = std::env::current_exe() {
            let job = Job {
                name: PAGE_JOB,
                options: url.map(String::from),
                shown: &[],
            };
            let answer: Option<Result<Readable, String>> =
                run_child(&program, job, html.as_bytes(), limits)?;
            return answer.unwrap_or_else(|| Err(crashed("web page", limits)));
        }
    }
    let (html, url) = (html.to_string(), url.map(String::from));
    on_thread(
        move || Ok(crate::html::readable(&html, url.as_deref())),
        limits,
    )
}

/// What a document child is told of its reading (in its options variable): the options,
/// and how long OCR may start new pages.
#[derive(Debug, Serialize, Deserialize)]
struct ChildReading {
    options: ReadOptions,
    ocr_ms: u64,
}

/// The reading a document child was asked for (the default when it cannot be read).
fn child_reading() -> Reading {
    let asked: Option<ChildReading> = std::env::var(OPTIONS_VAR)
        .ok()
        .and_then(|v| serde_json::from_str(&v).ok());
    match asked {
        Some(asked) => Reading {
            options: asked.options,
            ocr_until: std::time::Instant::now().checked_add(Duration::from_millis(asked.ocr_ms)),
        },
        None => Reading::new(ReadOptions::default()),
    }
}

fn in_child(
    program: &std::path::Path,
    kind: Kind,
    bytes: &[u8],
    limits: Limits,
    options: &ReadOptions,
) -> Result<Extracted, String> {
    // PDFium's library where it really is: a path through a link (a models folder linked
    // in) would lead nowhere in the sandbox, which shows the library alone.
    let mut options = options.clone();
    options.pdfium = options
        .pdfium
        .map(|path| std::fs::canonicalize(&path).unwrap_or(path));
    let reading = ChildReading {
        options: options.clone(),
        ocr_ms: u64::try_from(Reading::ocr_share(limits.timeout).as_millis()).unwrap_or(u64::MAX),
    };
    let reading = serde_json::to_string(&reading).map_err(|e| e.to_string())?;
    let shown: Vec<PathBuf> = options.pdfium.iter().cloned().collect();
    let job = Job {
        name: kind.as_str(),
        options: Some(reading),
        shown: &shown,
    };
    let answer: Option<Answer> = run_child(program, job, bytes, limits)?;
    match answer {
        Some(Answer::Ok(extracted)) => Ok(extracted),
        Some(Answer::Error(why)) => Err(why),
        None => Err(crashed(kind.as_str(), limits)),
    }
}

/// What a reader that died (or whose answer cannot be read) is reported as.
pub(crate) fn crashed(what: &str, limits: Limits) -> String {
    format!(
        "the {what} reader crashed on this file (or needed more than the {} MB of memory \
         it may use)",
        limits.memory_bytes >> 20
    )
}

/// What a child is asked to do.
pub(crate) struct Job<'a> {
    /// A document format's name, or [`PICTURE_JOB`].
    pub name: &'a str,
    /// The job's options, as JSON.
    pub options: Option<String>,
    /// Files the child reads besides its program and the system's (PDFium's library).
    pub shown: &'a [PathBuf],
}

/// Runs this program as a child asked to do `job` on `bytes`, within `limits`; its
/// answer, or `None` when it died or its answer cannot be read.
pub(crate) fn run_child<A: serde::de::DeserializeOwned>(
    program: &Path,
    job: Job<'_>,
    bytes: &[u8],
    limits: Limits,
) -> Result<Option<A>, String> {
    let cwd = neutral_dir();
    let mut launch = Launch::new(program, &cwd, &reader_env())
        .env(ASK_VAR, job.name)
        .env(MEMORY_VAR, limits.memory_bytes.to_string())
        .stdin_piped();
    if let Some(options) = job.options {
        launch = launch.env(OPTIONS_VAR, options);
    }
    if let Some(sandbox) = reader_sandbox(program, &cwd, job.shown) {
        launch = launch.sandboxed(&sandbox);
    }
    let job = job.name;
    let prepared = launch.prepare();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the reader: {e}"))?;
    // JSON escapes at most double the text, and a little for the frame.
    let cap = 2 * MAX_TEXT_BYTES + 4096;
    let started = std::time::Instant::now();
    let captured = runtime
        .block_on(capture(prepared, bytes, cap, limits.timeout))
        .map_err(|e| match e {
            CaptureError::TimedOut(t) => {
                format!("reading it took longer than {}; it was stopped", shown(t))
            }
            other => format!("the {job} reader could not run: {other}"),
        })?;
    // A reader that answered after its time is over the limit too: the limit holds
    // whether or not the timer fired before the answer came.
    if started.elapsed() > limits.timeout {
        return Err(format!(
            "reading it took longer than {}; it was stopped",
            shown(limits.timeout)
        ));
    }
    if captured.code != Some(0) {
        return Ok(None);
    }
    Ok(captured
        .stdout
        .lines()
        .last()
        .and_then(|line| serde_json::from_str::<A>(line).ok()))
}

/// What of Cairn's environment a reader child gets: what every program needs to run and
/// [`READER_VARIABLES`]; no key, no token, no session bus.
fn reader_env() -> EnvScrub {
    EnvScrub {
        pass: READER_VARIABLES.map(String::from).to_vec(),
        allow_only: true,
        ..EnvScrub::default()
    }
}

/// The sandbox a reader child runs in (see the module), `None` where it cannot start
/// here (said once to the log).
fn reader_sandbox(program: &Path, cwd: &Path, shown: &[PathBuf]) -> Option<Sandbox> {
    static UNSANDBOXED: Once = Once::new();
    if let Err(why) = cairn_process::probe() {
        UNSANDBOXED.call_once(|| {
            tracing::warn!("documents are read outside the sandbox, which cannot start: {why}");
        });
        return None;
    }
    let hidden = HIDDEN.read().map(|h| h.clone()).unwrap_or_default();
    let shown: Vec<PathBuf> = std::iter::once(program.to_path_buf())
        .chain(shown.iter().cloned())
        .collect();
    Some(Sandbox::sealed(cwd, &hidden, &shown))
}

/// `read` on a thread of its own, waited for at most `limits.timeout`.
#[cfg(test)]
pub(crate) fn in_thread(
    read: Reader,
    kind: Kind,
    bytes: &[u8],
    limits: Limits,
) -> Result<Extracted, String> {
    let reading = Reading::within(ReadOptions::default(), limits.timeout);
    in_thread_reading(read, kind, bytes, limits, reading)
}

/// [`in_thread`], the thread's reading given.
fn in_thread_reading(
    read: Reader,
    kind: Kind,
    bytes: &[u8],
    limits: Limits,
    reading: Reading,
) -> Result<Extracted, String> {
    let bytes = bytes.to_vec();
    on_thread(
        move || {
            reading.set_current();
            match in_thread_here(read, kind, &bytes) {
                Answer::Ok(extracted) => Ok(extracted),
                Answer::Error(why) => Err(why),
            }
        },
        limits,
    )
}

/// `work` on a thread of its own, waited for at most `limits.timeout`.
pub(crate) fn on_thread<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
    limits: Limits,
) -> Result<T, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("cairn-extract".into())
        .spawn(move || {
            let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
                .unwrap_or_else(|_| Err("the reader crashed on this file".into()));
            let _ = tx.send(answer);
        })
        .map_err(|e| format!("cannot start the reader: {e}"))?;
    let started = std::time::Instant::now();
    let abandoned = || {
        format!(
            "reading it took longer than {}; it was abandoned",
            shown(limits.timeout)
        )
    };
    match rx.recv_timeout(limits.timeout) {
        Ok(_) if started.elapsed() > limits.timeout => Err(abandoned()),
        Ok(answer) => answer,
        Err(_) => Err(abandoned()),
    }
}

/// A limit as a person reads it: seconds, or milliseconds under one.
fn shown(limit: Duration) -> String {
    if limit >= Duration::from_secs(1) {
        format!("{} s", limit.as_secs())
    } else {
        format!("{} ms", limit.as_millis())
    }
}

/// Whether this program extracts in child processes.
pub fn serves() -> bool {
    SERVES.load(Ordering::Relaxed)
}
