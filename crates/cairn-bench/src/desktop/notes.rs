//! The notes under `cairn-bench desktop`'s tables: what was measured and how.

use std::collections::HashSet;
use std::path::Path;

use super::Args;

/// The app's start-up functions, in the order its release build lays them out.
const START_ORDER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../src-tauri/start-order.txt"
);

pub fn notes(
    args: &Args,
    app: &Path,
    build: &str,
    base_url: &str,
    display: &str,
    pss: bool,
) -> Vec<String> {
    let mut notes = vec![
        format!(
            "The app's settings name a loopback OpenAI-compatible provider ({base_url}) where \
             nothing listens: no model loads and no request is answered, so the figures are \
             the app's own. With default settings the app would load the bundled local model \
             (about 100 MB) in the background."
        ),
        format!(
            "The long session is a generated sessions/<id>.jsonl of {} user and assistant \
             messages (markdown with code blocks), the newest session, so the app opens it. \
             The ready line comes on the first frame after the open session is rendered.",
            args.messages
        ),
        format!(
            "Each subject is launched once unmeasured (new profile, memory index built), \
             then {} times, the order reversed every other round; the page cache is warm.",
            args.runs
        ),
        "\"As each process counts it\": both count from the start of main, so it leaves out \
         only loading the binary and its libraries; the spawn-to-ready figures above include \
         that."
            .to_string(),
        "\"Where the start went\": the steps as each page marked them with its own clock \
         (performance.now() and its time origin), placed on the process's; the bare page \
         marks only when its script ran and its frame came. \"The first screen's data \
         arrived\" comes before the first render where the page asks for it all at once."
            .to_string(),
        "RSS adds up each process's resident pages (shared libraries count once per \
         process); PSS splits shared pages between the processes using them."
            .to_string(),
        format!(
            "The memory goal is judged on {}.",
            if pss {
                "PSS"
            } else {
                "RSS (PSS was not readable)"
            }
        ),
        format!(
            "Display: Xvfb {display} (1280x800x24) and a private D-Bus session; \
             WEBKIT_DISABLE_DMABUF_RENDERER=1, GDK_BACKEND=x11."
        ),
    ];
    notes.push(start_order(app));
    if build != "release" {
        notes.push(
            "These binaries are not release builds: their figures are not the product's \
             (`cargo build --release --locked -p cairn-desktop`)."
                .into(),
        );
    }
    notes
}

/// How many of the functions `src-tauri/start-order.txt` lists the app binary has: the
/// linker places those side by side, and a list gone stale (new dependencies, compiler,
/// start code) lets the start's code spread over the binary again.
fn start_order(app: &Path) -> String {
    let listed: HashSet<String> = std::fs::read_to_string(START_ORDER)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let symbols = std::process::Command::new("nm")
        .arg("--defined-only")
        .arg(app)
        .output();
    match symbols {
        Ok(out) if out.status.success() && !listed.is_empty() => {
            let text = String::from_utf8_lossy(&out.stdout);
            let found = text
                .lines()
                .filter_map(|line| line.split_whitespace().nth(2))
                .filter(|name| listed.contains(*name))
                .collect::<HashSet<_>>()
                .len();
            format!(
                "Start order: the app binary has {found} of the {} functions \
                 src-tauri/start-order.txt lists, which its release build lays out side by \
                 side (`scripts/start-order.sh` lists them again).",
                listed.len()
            )
        }
        _ => "Start order: not counted (no src-tauri/start-order.txt, or no `nm`).".into(),
    }
}
