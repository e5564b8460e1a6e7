//! `cairn`: the harness from the terminal.

mod approval;
mod args;
mod ask;
mod attach;
mod chat;
mod consolidate;
mod diff;
mod drive;
mod escape;
mod fetch;
mod index;
mod input;
mod interrupt;
mod key;
mod mcp;
mod models;
mod prompts;
mod reading;
mod render;
mod sandbox;
mod search;
mod sessions;
mod setup;
mod terminal;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

fn main() -> ExitCode {
    cairn_app::tune_allocator();
    cairn_app::keep_files_private();
    // A child started to read a document does only that, and exits.
    cairn_app::cairn_extract::guard::serve_if_asked();
    cairn_app::cairn_embed::candle::settle_threads();
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
    // A local model may still be decoding the token it was on when the run was stopped
    // (Ctrl+C); exiting under it would crash the process.
    cairn_app::cairn_llm::local::settle(std::time::Duration::from_secs(3));
    // The same for the embedding model in the background.
    cairn_app::launch::settle_embedder(std::time::Duration::from_secs(3));
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            // Errors may quote a server or a file.
            eprintln!("cairn: {}", escape::prose(&describe(&e)));
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
        Command::Sessions(command) => sessions::run(&cli, command).await,
        Command::Models { fetch: true, .. } => fetch::all().await,
        Command::Models {
            json, local: true, ..
        } => models::local(*json).await,
        Command::Models { json, .. } => models::models(&cli, *json).await,
        Command::Doctor => models::doctor(&cli).await,
        Command::Prompts { json } => prompts::run(&cli, *json),
        Command::Key(command) => key::run(&cli, command),
        Command::Mcp(command) => mcp::run(&cli, command).await,
    }
}

/// The error and its causes, each said once: many errors already carry their source's
/// text in their own message (`{path}: {source}`), and `{:#}` would repeat it.
fn describe(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
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

#[cfg(test)]
mod tests {
    use super::describe;

    /// Shows its source in its message and gives it as its source, as most errors do.
    #[derive(Debug)]
    struct Unreadable {
        path: String,
        source: std::io::Error,
    }

    impl std::fmt::Display for Unreadable {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{}: {}", self.path, self.source)
        }
    }

    impl std::error::Error for Unreadable {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.source)
        }
    }

    #[test]
    fn a_cause_already_in_the_message_is_not_said_again() {
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "permission denied");
        let error = anyhow::Error::new(Unreadable {
            path: "notes/a.md".into(),
            source: io,
        });
        assert_eq!(describe(&error), "notes/a.md: permission denied");
        let error = error.context("cannot bring the memory index up to date");
        assert_eq!(
            describe(&error),
            "cannot bring the memory index up to date: notes/a.md: permission denied"
        );
    }
}
