//! `cairn-desktop`: the Cairn window.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    cairn_app::tune_allocator();
    cairn_app::keep_files_private();
    let started = std::time::Instant::now();
    // A child started to read a document does only that, and exits.
    cairn_app::cairn_extract::guard::serve_if_asked();
    cairn_app::cairn_embed::candle::settle_threads();
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // Warnings go to stderr and to the log file (a launch from a menu has no terminal).
    let log =
        cairn_desktop::logfile::log_dir().and_then(|dir| cairn_desktop::logfile::open(&dir).ok());
    let file_layer = log.map(|(_, file)| {
        tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(std::sync::Mutex::new(file))
    });
    tracing_subscriber::registry()
        .with(filter)
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .with(file_layer)
        .init();
    if let Err(e) = cairn_desktop::run(cairn_desktop::paths_from_env(), started) {
        eprintln!("cairn-desktop: {e}");
        std::process::exit(1);
    }
}
