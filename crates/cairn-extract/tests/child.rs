//! Extraction in a child process, as the app and the CLI do it: this program serves (its
//! `main` calls `serve_if_asked_with` first), so every file is read by this program started
//! again, with a memory limit and a timeout.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use cairn_extract::guard::{self, Limits};
use cairn_extract::{extract_here, Extracted, Kind};
use cairn_testkit::documents;

const TESTS: [(&str, fn()); 7] = [
    (
        "a_document_is_read_in_a_child",
        a_document_is_read_in_a_child,
    ),
    (
        "a_child_over_its_memory_limit_is_reported_not_fatal",
        a_child_over_its_memory_limit_is_reported_not_fatal,
    ),
    (
        "a_child_past_its_timeout_is_killed",
        a_child_past_its_timeout_is_killed,
    ),
    (
        "a_child_killed_by_a_signal_is_reported_as_a_crash",
        a_child_killed_by_a_signal_is_reported_as_a_crash,
    ),
    (
        "a_child_reads_scans_by_ocr_as_its_options_say",
        a_child_reads_scans_by_ocr_as_its_options_say,
    ),
    (
        "a_picture_is_prepared_in_a_child_and_a_bomb_refused_there",
        a_picture_is_prepared_in_a_child_and_a_bomb_refused_there,
    ),
    (
        "a_reader_reaches_no_home_no_network_and_no_secret",
        a_reader_reaches_no_home_no_network_and_no_secret,
    ),
];

/// A document this program's children read by sleeping for [`HANG_FOR`].
const HANG: &[u8] = b"hang";
/// How long a child given [`HANG`] sleeps: far past the limit the test sets.
const HANG_FOR: Duration = Duration::from_secs(60);
/// A document this program's children read by dying of a signal.
const CRASH: &[u8] = b"crash";
/// A document this program's children read by trying what a parser an exploit took over
/// would: `probe <file in the home>\n<port on the loopback>`; the text says what they got.
const PROBE: &[u8] = b"probe ";
/// A secret-looking variable of this program's, which its readers must not get.
const PLANTED_VAR: &str = "READER_PROBE_API_TOKEN";

/// Serves first; then speaks enough of the test harness's command line for cargo and
/// nextest: `--list` names the tests, a name (with `--exact`) runs that one, nothing runs
/// all.
fn main() {
    guard::serve_if_asked_with(reader);
    assert!(guard::serves());
    // Still one thread: nothing else reads the environment yet.
    std::env::set_var(PLANTED_VAR, "planted");
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        if !args.iter().any(|a| a == "--ignored") {
            for (name, _) in TESTS {
                println!("{name}: test");
            }
        }
        return;
    }
    let wanted: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    for (name, test) in TESTS {
        if wanted.is_empty() || wanted.iter().any(|w| name.contains(w.as_str())) {
            test();
            println!("test {name} ... ok");
        }
    }
}

/// The children's reader: the real one, but [`HANG`], [`CRASH`] and [`PROBE`] do as they
/// say.
fn reader(kind: Kind, bytes: &[u8]) -> Result<Extracted, String> {
    if bytes == HANG {
        std::thread::sleep(HANG_FOR);
    } else if bytes == CRASH {
        crash();
    } else if let Some(asked) = bytes.strip_prefix(PROBE) {
        return Ok(Extracted::text(probe(std::str::from_utf8(asked).unwrap())));
    }
    extract_here(kind, bytes)
}

/// What a reader gets of a planted file, a listener on the loopback, its working folder
/// and a secret-looking variable, one word each.
fn probe(asked: &str) -> String {
    let (file, port) = asked.split_once('\n').unwrap();
    let home = match std::fs::read_to_string(file) {
        Ok(_) => "read",
        Err(_) => "absent",
    };
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port.parse().unwrap()));
    let network = match std::net::TcpStream::connect_timeout(&address, Duration::from_secs(2)) {
        Ok(_) => "reached",
        Err(_) => "refused",
    };
    let cwd = match std::fs::write("planted-by-a-reader", "x") {
        Ok(()) => "written",
        Err(_) => "read-only",
    };
    let token = match std::env::var_os(PLANTED_VAR) {
        Some(_) => "present",
        None => "absent",
    };
    format!("home: {home}; network: {network}; cwd: {cwd}; token: {token}")
}

/// This program's processes but itself (its reader children), by their program.
fn readers_now() -> Vec<u32> {
    let me = std::env::current_exe().unwrap();
    let own = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != own)
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| exe == me))
        .collect()
}

/// Ends this process with SIGKILL, as the kernel's out-of-memory killer would (no core
/// file is written).
#[allow(unsafe_code)]
fn crash() {
    // SAFETY: raise takes one integer and signals only this process.
    unsafe {
        libc::raise(libc::SIGKILL);
    }
}

fn a_document_is_read_in_a_child() {
    let pdf = documents::pdf(&["The ferry to Hvar leaves at nine.", "Page two."]);
    let extracted = guard::extract(Kind::Pdf, &pdf, Limits::default()).unwrap();
    assert_eq!(extracted.pages.len(), 2);
    assert!(extracted.pages[0].text.contains("Hvar"));
    let error = guard::extract(Kind::Pdf, b"%PDF-1.4 junk", Limits::default()).unwrap_err();
    assert!(error.contains("cannot be read"), "{error}");
}

fn a_child_over_its_memory_limit_is_reported_not_fatal() {
    // About 40 MB of text to inflate, in a child allowed far less address space.
    let big = vec![b'a'; 40 << 20];
    let docx = documents::zip(&[("word/document.xml", big.as_slice())]);
    let limits = Limits {
        memory_bytes: 24 << 20,
        ..Limits::default()
    };
    let error = guard::extract(Kind::Docx, &docx, limits).unwrap_err();
    // Either the reader sees the allocation fail, or the child dies of it.
    assert!(error.contains("memory"), "{error}");
    // The parent is unharmed and reads the next file.
    let ok = guard::extract(
        Kind::Docx,
        &documents::docx(&[(None, "fine")]),
        Limits::default(),
    );
    assert_eq!(ok.unwrap().pages[0].text, "fine");
}

fn a_child_past_its_timeout_is_killed() {
    let limits = Limits {
        timeout: Duration::from_secs(2),
        ..Limits::default()
    };
    // The readers seen while the document is read (a sandboxed one is in a process
    // namespace of its own, so its pid is found from here, not told).
    let reading = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let watcher = {
        let reading = reading.clone();
        std::thread::spawn(move || {
            let mut seen = std::collections::BTreeSet::new();
            while reading.load(std::sync::atomic::Ordering::Relaxed) {
                seen.extend(readers_now());
                std::thread::sleep(Duration::from_millis(50));
            }
            seen
        })
    };
    let started = Instant::now();
    let error = guard::extract(Kind::Pdf, HANG, limits).unwrap_err();
    let elapsed = started.elapsed();
    reading.store(false, std::sync::atomic::Ordering::Relaxed);
    let seen = watcher.join().unwrap();
    assert_eq!(error, "reading it took longer than 2 s; it was stopped");
    assert!(
        elapsed >= limits.timeout && elapsed < limits.timeout + Duration::from_secs(5),
        "gave up after {elapsed:?}, the limit being {:?} and the read {HANG_FOR:?}",
        limits.timeout
    );
    // The reader did start and hang, and is gone (killed and reaped). A sandboxed reader
    // dies with its sandbox's process namespace, which the kernel tears down just after
    // the sandbox is killed: on a loaded machine that takes a moment, so it is given one.
    assert!(!seen.is_empty(), "no reader was seen reading");
    for pid in seen {
        let gone_by = Instant::now() + Duration::from_secs(3);
        while let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            if Instant::now() >= gone_by {
                let state = status.lines().find(|l| l.starts_with("State:"));
                panic!("the reader (pid {pid}) is still there: {state:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn a_child_killed_by_a_signal_is_reported_as_a_crash() {
    let error = guard::extract(Kind::Pdf, CRASH, Limits::default()).unwrap_err();
    assert_eq!(
        error,
        "the pdf reader crashed on this file (or needed more than the 2048 MB of memory it may use)"
    );
}

/// The reading's options reach the child: PDFium and Tesseract read a scanned page there,
/// and OCR turned off is heard there too.
fn a_child_reads_scans_by_ocr_as_its_options_say() {
    use cairn_extract::{ocr, ReadOptions};
    use cairn_testkit::pdfs;
    let library = pdfs::pdfium_library();
    let typed = documents::pdf(&["The ferry to Hvar leaves at nine."]);
    let grey = cairn_extract::render_pages(&typed, 300.0, &library)
        .unwrap()
        .remove(0);
    let mut jpeg = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageLuma8(grey.clone())
        .write_to(&mut jpeg, image::ImageFormat::Jpeg)
        .unwrap();
    let scan = pdfs::Scan {
        width: grey.width(),
        height: grey.height(),
        dpi: 300,
        jpeg: jpeg.into_inner(),
    };
    let scanned = pdfs::scanned(&[scan]);
    let on = ReadOptions {
        ocr: Some(vec!["eng".into()]),
        pdfium: Some(library),
    };
    let read = guard::extract_with(Kind::Pdf, &scanned, Limits::default(), &on).unwrap();
    assert_eq!(read.pages[0].text, "The ferry to Hvar leaves at nine.");
    assert!(read.pages[0].ocr);
    let off = ReadOptions { ocr: None, ..on };
    let read = guard::extract_with(Kind::Pdf, &scanned, Limits::default(), &off).unwrap();
    let unread = read.unread.unwrap();
    assert!(unread.why.starts_with(ocr::OFF), "{unread:?}");
}

/// A picture of the conversation is understood in a child as documents are: its copy for a
/// model scaled there and its text read there, a decompression bomb refused there by its
/// header, and a child that dies on one told as a crash.
fn a_picture_is_prepared_in_a_child_and_a_bomb_refused_there() {
    use cairn_extract::picture::{self, PictureOptions};
    use cairn_testkit::pictures::{png_claiming, RECEIPT_PNG, RECEIPT_TEXT};
    let options = PictureOptions {
        max_side: Some(300),
        ocr_languages: vec!["eng".into()],
    };
    let prepared = picture::prepare(RECEIPT_PNG, &options, Limits::default()).unwrap();
    let copy = prepared.scaled.unwrap();
    assert_eq!((copy.width, copy.height), (300, 73));
    if cairn_extract::ocr::tesseract().is_some() {
        let text = prepared.text.unwrap_or_default();
        assert!(text.contains(RECEIPT_TEXT[1]), "{text:?}");
    }
    let why =
        picture::prepare(&png_claiming(50_000, 50_000), &options, Limits::default()).unwrap_err();
    assert!(why.contains("50000 × 50000"), "{why}");
    let tight = Limits {
        timeout: Duration::from_secs(20),
        memory_bytes: 16 << 20,
    };
    let why = picture::prepare(RECEIPT_PNG, &options, tight).unwrap_err();
    assert!(why.contains("picture reader crashed"), "{why}");
}

/// A reader an exploit took over gets nothing to send nor a way to send it: a file in the
/// home is absent, the loopback refuses, its working folder is read-only and a
/// secret-looking variable of Cairn's is not in its environment.
fn a_reader_reaches_no_home_no_network_and_no_secret() {
    cairn_process::probe().expect("the sandbox starts on this machine");
    let home = dirs::home_dir().unwrap();
    let planted = tempfile::Builder::new()
        .prefix(".cairn-reader-probe")
        .tempfile_in(&home)
        .unwrap();
    std::fs::write(planted.path(), "a secret").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let asked = format!("{}\n{port}", planted.path().display());
    let document = [PROBE, asked.as_bytes()].concat();
    let read = guard::extract(Kind::Html, &document, Limits::default()).unwrap();
    assert_eq!(
        read.pages[0].text,
        "home: absent; network: refused; cwd: read-only; token: absent"
    );
    let cwd = cairn_process::neutral_dir();
    assert!(!cwd.join("planted-by-a-reader").exists());
    // The same probe outside the sandbox gets all four: the test can fail.
    let unguarded = probe(&asked);
    let _ = std::fs::remove_file("planted-by-a-reader");
    assert_eq!(
        unguarded,
        "home: read; network: reached; cwd: written; token: present"
    );
}
