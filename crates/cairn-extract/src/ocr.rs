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

/// The languages Tesseract has here (`eng`, `osd`, …). An error says why not. Asking
/// Tesseract takes tens of milliseconds at every start, so its answer is kept (in the
/// user's cache folder) while the program and its language folder are unchanged.
pub fn installed_languages() -> Result<Vec<String>, String> {
    let program = tesseract().ok_or_else(|| missing("text in pictures is"))?;
    let kept = dirs::cache_dir().map(|dir| dir.join("cairn").join("ocr-languages.json"));
    if let Some(known) = kept
        .as_deref()
        .and_then(|kept| KnownLanguages::read(kept, &program))
    {
        return Ok(known);
    }
    let (folder, languages) = list_languages(&program)?;
    if let (Some(kept), Some(folder)) = (kept, folder) {
        KnownLanguages::keep(&kept, &program, &folder, &languages);
    }
    Ok(languages)
}

/// Tesseract's languages as it listed them, with what says they are still the same: the
/// program (its path, size and time of change), `TESSDATA_PREFIX`, and the folder it
/// listed (installing or removing a language changes the folder's time of change).
#[derive(serde::Serialize, serde::Deserialize, PartialEq)]
struct KnownLanguages {
    program: PathBuf,
    program_stamp: Option<(u64, u128)>,
    prefix: Option<String>,
    folder: PathBuf,
    folder_stamp: Option<(u64, u128)>,
    languages: Vec<String>,
}

fn stamp(path: &Path) -> Option<(u64, u128)> {
    let meta = std::fs::metadata(path).ok()?;
    let since = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some((meta.len(), since.as_nanos()))
}

impl KnownLanguages {
    /// The languages kept at `kept` for `program`, when nothing they rest on changed.
    fn read(kept: &Path, program: &Path) -> Option<Vec<String>> {
        let meta = std::fs::symlink_metadata(kept).ok()?;
        if !meta.is_file() || meta.len() > 64 * 1024 {
            return None;
        }
        let known: Self = serde_json::from_slice(&std::fs::read(kept).ok()?).ok()?;
        let same = known.program == program
            && known.program_stamp.is_some()
            && known.program_stamp == stamp(program)
            && known.prefix == std::env::var("TESSDATA_PREFIX").ok()
            && known.folder_stamp.is_some()
            && known.folder_stamp == stamp(&known.folder);
        same.then_some(known.languages)
    }

    fn keep(kept: &Path, program: &Path, folder: &Path, languages: &[String]) {
        let known = Self {
            program: program.to_path_buf(),
            program_stamp: stamp(program),
            prefix: std::env::var("TESSDATA_PREFIX").ok(),
            folder: folder.to_path_buf(),
            folder_stamp: stamp(folder),
            languages: languages.to_vec(),
        };
        let written = (|| -> std::io::Result<()> {
            let dir = kept.parent().ok_or(std::io::ErrorKind::NotFound)?;
            std::fs::create_dir_all(dir)?;
            let mut temp = tempfile::NamedTempFile::new_in(dir)?;
            std::io::Write::write_all(&mut temp, &serde_json::to_vec(&known)?)?;
            temp.persist(kept)?;
            Ok(())
        })();
        if let Err(error) = written {
            tracing::debug!(%error, "Tesseract's languages are not kept");
        }
    }
}

/// Asks Tesseract for its languages: the folder it read them from (when it says) and
/// their names.
fn list_languages(program: &Path) -> Result<(Option<PathBuf>, Vec<String>), String> {
    let prepared = Launch::new(program, &neutral_dir(), &EnvScrub::default())
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
    let heading = captured
        .stdout
        .lines()
        .find(|l| l.starts_with("List of available languages"));
    let folder = heading
        .and_then(|l| l.split('"').nth(1))
        .map(PathBuf::from)
        .filter(|folder| folder.is_absolute());
    let languages = captured
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("List of available languages"))
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    Ok((folder, languages))
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

    /// Tesseract's languages are kept while the program and its language folder are as
    /// they were: a language installed (the folder changes), another program, or a kept
    /// file that is not one, and Tesseract is asked again.
    #[test]
    fn the_languages_are_kept_until_the_program_or_its_folder_changes() {
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("tesseract");
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        let folder = dir.path().join("tessdata");
        std::fs::create_dir(&folder).unwrap();
        let kept = dir.path().join("cache").join("ocr-languages.json");
        let languages = vec!["eng".to_string(), "osd".to_string()];
        KnownLanguages::keep(&kept, &program, &folder, &languages);
        assert_eq!(KnownLanguages::read(&kept, &program), Some(languages));
        assert_eq!(KnownLanguages::read(&kept, &dir.path().join("other")), None);
        // A language installed: the folder's time of change moves on.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(folder.join("deu.traineddata"), "data").unwrap();
        assert_eq!(KnownLanguages::read(&kept, &program), None);
        std::fs::write(&kept, "not what was kept").unwrap();
        assert_eq!(KnownLanguages::read(&kept, &program), None);
    }

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
