//! Text in pictures, read by Tesseract (Debian's `tesseract-ocr`, a package per language):
//! the picture on its input, the text on its output, page segmentation 3 (automatic).
//!
//! It starts through `cairn-process`'s one door. In a reader child (the guard's) it joins
//! the child's process group, so it lives under the child's memory limit and dies with the
//! child when the child's time is up; it runs at background priority and on one thread,
//! leaving the other cores to the user.

use std::path::{Path, PathBuf};
use std::time::Duration;

use cairn_process::{capture, neutral_dir, CaptureError, EnvScrub, Launch};

/// How every error for a missing Tesseract begins, so a caller can tell it from a picture
/// that could not be read and say what to install.
pub const MISSING: &str = "Tesseract is not installed";
/// What to install for OCR, as the user is told.
pub const INSTALL: &str = "install tesseract-ocr";
/// How every error for OCR turned off begins.
pub const OFF: &str = "OCR is off";
/// The longest one picture is read for, unless the caller gives less.
pub const MAX_TIME: Duration = Duration::from_secs(120);
/// The most text kept of one picture.
const MAX_TEXT: usize = 4 << 20;
/// The scheduling priority OCR runs at (as `nice` counts).
const BACKGROUND_NICE: i32 = 10;

/// The error for a missing Tesseract, saying what is not read.
pub fn missing(what: &str) -> String {
    format!("{MISSING} ({INSTALL}): {what} not read")
}

/// The error for OCR turned off, saying what is not read.
pub fn off(what: &str) -> String {
    format!("{OFF} (`[memory] ocr = false`): {what} not read")
}

/// What a reason for text not read comes to, as a report says it: `install
/// tesseract-ocr`, `OCR is off (`[memory] ocr = false`)`, or the reason itself.
pub fn cause(why: &str) -> String {
    if why.starts_with(MISSING) {
        INSTALL.to_string()
    } else if why.starts_with(OFF) {
        format!("{OFF} (`[memory] ocr = false`)")
    } else {
        why.to_string()
    }
}

/// The text of `image` (PNG, TIFF, JPEG: what Tesseract's Leptonica decodes) in
/// `languages` (`eng`, `deu`; none: English). An error says why, for the user; a missing
/// Tesseract's begins with [`MISSING`].
pub fn read_text(image: &[u8], languages: &[String]) -> Result<String, String> {
    read_text_within(image, languages, MAX_TIME)
}

/// [`read_text`], Tesseract stopped after `limit`.
pub fn read_text_within(
    image: &[u8],
    languages: &[String],
    limit: Duration,
) -> Result<String, String> {
    let program = tesseract().ok_or_else(|| missing("text in pictures is"))?;
    run(&program, image, languages, limit)
}

/// Tesseract's program on `PATH`, when it is installed.
pub fn tesseract() -> Option<PathBuf> {
    find_on(&std::env::var_os("PATH")?, "tesseract")
}

/// `name` in one of the folders of `path` (a `PATH` value), as an executable file.
fn find_on(path: &std::ffi::OsStr, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

fn run(
    program: &Path,
    image: &[u8],
    languages: &[String],
    limit: Duration,
) -> Result<String, String> {
    let languages = if languages.is_empty() {
        "eng".to_string()
    } else {
        languages.join("+")
    };
    lower_priority();
    let mut prepared = Launch::new(program, &neutral_dir(), &EnvScrub::default())
        .args(["stdin", "stdout", "-l", &languages, "--psm", "3", "quiet"])
        // One thread: OCR is background work, and threads share the memory limit.
        .env("OMP_THREAD_LIMIT", "1")
        .stdin_piped()
        .prepare();
    join_own_group(&mut prepared.command);
    let captured = tokio_runtime()?
        .block_on(capture(prepared, image, MAX_TEXT, limit))
        .map_err(|e| match e {
            CaptureError::TimedOut(t) => {
                format!(
                    "reading its text took longer than {} s; it was stopped",
                    t.as_secs()
                )
            }
            CaptureError::Start(why) => format!("{MISSING} or cannot start ({INSTALL}): {why}"),
            other => format!("Tesseract failed: {other}"),
        })?;
    if captured.code != Some(0) {
        let why = captured
            .stderr
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("it ended without saying why");
        return Err(format!("Tesseract could not read the picture: {why}"));
    }
    Ok(crate::html::tidy(&captured.stdout.replace('\u{c}', "\n")))
}

fn tokio_runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start Tesseract: {e}"))
}

/// In a process that leads its own group (a reader child), Tesseract joins it: killing
/// the group on the child's timeout ends Tesseract too.
#[cfg(unix)]
#[allow(unsafe_code)]
fn join_own_group(command: &mut tokio::process::Command) {
    // SAFETY: getpgrp and getpid take nothing and cannot fail.
    let (group, pid) = unsafe { (libc::getpgrp(), libc::getpid()) };
    if group == pid {
        command.process_group(group);
    }
}

#[cfg(not(unix))]
fn join_own_group(_command: &mut tokio::process::Command) {}

/// Lowers the calling thread's priority (and so Tesseract's, which inherits it) to
/// [`BACKGROUND_NICE`], unless it is lower already.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn lower_priority() {
    // SAFETY: getpriority and setpriority take integers; with `who` 0 they act on the
    // calling thread alone (Linux keeps a nice value per thread).
    unsafe {
        let now = libc::getpriority(libc::PRIO_PROCESS, 0);
        if now < BACKGROUND_NICE {
            libc::setpriority(libc::PRIO_PROCESS, 0, BACKGROUND_NICE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

/// The languages Tesseract has here (`eng`, `osd`, …). An error says why not.
pub fn installed_languages() -> Result<Vec<String>, String> {
    let program = tesseract().ok_or_else(|| missing("text in pictures is"))?;
    let prepared = Launch::new(&program, &neutral_dir(), &EnvScrub::default())
        .arg("--list-langs")
        .prepare();
    // On a thread of its own: callers may be inside an async runtime (the app's start),
    // where blocking on another runtime is not allowed.
    let captured = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                tokio_runtime()?
                    .block_on(capture(prepared, b"", 1 << 20, Duration::from_secs(20)))
                    .map_err(|e| format!("Tesseract did not list its languages: {e}"))
            })
            .join()
            .unwrap_or_else(|_| Err("Tesseract did not list its languages".into()))
    })?;
    // "List of available languages in "…" (2):" goes to stdout, then one name a line.
    Ok(captured
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("List of available languages"))
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect())
}

/// `wanted` split into the languages installed here and those not, given what is
/// installed.
pub fn split_languages(wanted: &[String], installed: &[String]) -> (Vec<String>, Vec<String>) {
    wanted
        .iter()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .partition(|l| installed.contains(l))
}

/// Debian's package holding a language's data: `tesseract-ocr-deu`, `tesseract-ocr-chi-sim`.
pub fn language_package(language: &str) -> String {
    format!(
        "tesseract-ocr-{}",
        language.to_ascii_lowercase().replace('_', "-")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tesseract_is_told_apart_with_what_to_install() {
        let nowhere = tempfile::tempdir().unwrap();
        assert_eq!(find_on(nowhere.path().as_os_str(), "tesseract"), None);
        let error = missing("text in pictures is");
        assert!(error.starts_with(MISSING), "{error}");
        assert!(error.contains("install tesseract-ocr"), "{error}");
    }

    #[test]
    fn languages_are_split_by_what_is_installed_and_named_by_package() {
        let installed = vec!["eng".to_string(), "osd".to_string()];
        let wanted = vec![
            "eng".to_string(),
            " deu ".to_string(),
            "chi_sim".to_string(),
        ];
        let (usable, missing) = split_languages(&wanted, &installed);
        assert_eq!(usable, ["eng"]);
        assert_eq!(missing, ["deu", "chi_sim"]);
        assert_eq!(language_package("chi_sim"), "tesseract-ocr-chi-sim");
    }
}
