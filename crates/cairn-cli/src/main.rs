//! `cairn`: the harness from the terminal.

mod args;
mod ask;
mod chat;
mod consolidate;
mod drive;
mod index;
mod input;
mod key;
mod models;
mod render;
mod search;
mod sessions;
mod setup;
mod terminal;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing(&cli.command);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cairn: cannot start: {e}");
            return ExitCode::from(1);
        }
    };
    let result = runtime.block_on(run(cli));
    // Do not wait for the stdin reader thread.
    runtime.shutdown_background();
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("cairn: {e:#}");
            ExitCode::from(1)
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<u8> {
    match &cli.command {
        Command::Ask(args) => ask::run(&cli, args).await,
        Command::Chat(args) => chat::run(&cli, args).await,
        Command::Search(args) => search::run(&cli, args).await,
        Command::Index(args) => index::run(&cli, args).await,
        Command::Consolidate(args) => consolidate::run(&cli, args).await,
        Command::Sessions(command) => sessions::run(&cli, command),
        Command::Models { json } => models::models(&cli, *json).await,
        Command::Doctor => models::doctor(&cli).await,
        Command::Key(command) => key::run(&cli, command),
    }
}

/// Logs go to stderr, filtered by `CAIRN_LOG` (e.g. `CAIRN_LOG=debug`); warnings by default.
/// `search` and `index` report the index's own warnings (skipped files, rebuilds) in their
/// output, so by default they do not log them a second time.
fn init_tracing(command: &Command) {
    let default = match command {
        Command::Search(_) | Command::Index(_) => "warn,cairn_memory::index=error",
        _ => "warn",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
