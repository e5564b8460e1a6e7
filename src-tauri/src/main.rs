//! `cairn-desktop`: the Cairn window.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    let started = std::time::Instant::now();
    cairn_llm::embed::settle_threads();
    let filter = tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    if let Err(e) = cairn_desktop::run(cairn_desktop::paths_from_env(), started) {
        eprintln!("cairn-desktop: {e}");
        std::process::exit(1);
    }
}
