//! `cairn chat`: a conversation in the terminal.

use std::io::{IsTerminal, Write};

use crate::args::{ChatArgs, Cli};
use crate::drive::{Approver, Drive, Driven};
use crate::{input, setup};

const HELP: &str = "\
Type a message and press Enter. While the model works, typed lines steer it.
Ctrl+C stops a run (twice quits); Ctrl+D or /exit leaves.
Commands: /help, /session (show the session id), /compact [focus] (summarise the older
part of the conversation), /exit";

pub async fn run(cli: &Cli, args: &ChatArgs) -> anyhow::Result<u8> {
    let config = setup::Config::load(cli)?;
    let workspace = setup::workspace(cli, &config.settings)?;
    let chat = setup::provider(&config).await?;
    let store = setup::store(&workspace);
    let session = setup::session(&store, args.session.as_deref(), false).await?;
    let resumed = !session.tree.is_empty();
    let root = workspace.root().display().to_string();
    let memory = setup::memory(&workspace);
    let max_steps = cairn_core::AgentConfig::default().max_steps;
    let options = setup::AgentOptions::from_config(&config, &chat, false, max_steps).await;
    let (provider, model) = chat;
    let agent = setup::agent(
        workspace,
        provider,
        model.clone(),
        session,
        options,
        memory.index.clone(),
    );
    let session_id = agent.session_id();
    let verb = if resumed { "resumed" } else { "new" };
    eprintln!("Cairn chat: {verb} session {session_id}, model {model}, workspace {root}");
    eprintln!("/help for help.");
    let mut lines = input::lines();
    let approver = if std::io::stdin().is_terminal() {
        Approver::Terminal
    } else {
        Approver::Deny
    };
    let mut idle_interrupts = 0;
    loop {
        print!("\n› ");
        let _ = std::io::stdout().flush();
        let line = tokio::select! {
            line = lines.recv() => line,
            _ = tokio::signal::ctrl_c() => {
                idle_interrupts += 1;
                if idle_interrupts > 1 {
                    println!();
                    return Ok(130);
                }
                eprintln!("\n(Ctrl+C again, Ctrl+D or /exit to leave)");
                continue;
            }
        };
        idle_interrupts = 0;
        let Some(line) = line else {
            println!();
            return Ok(0);
        };
        match line.trim() {
            "" => continue,
            "/exit" | "/quit" => return Ok(0),
            "/help" => eprintln!("{HELP}"),
            "/session" => eprintln!("session {session_id}"),
            command if command == "/compact" || command.starts_with("/compact ") => {
                let focus = command.strip_prefix("/compact").map(str::trim);
                eprintln!("compacting (memory is flushed first)...");
                match agent.compact(focus.filter(|f| !f.is_empty())).await {
                    Ok(report) => eprintln!(
                        "compacted: about {} tokens before, {} after ({} ms)",
                        report.tokens_before,
                        report.tokens_after,
                        report.took.as_millis()
                    ),
                    Err(e) => eprintln!("cairn: {e}"),
                }
            }
            text => {
                let drive = Drive {
                    agent: &agent,
                    json: false,
                    approver,
                    input: Some(&mut lines),
                };
                if let Driven::Quit = drive.run(text.to_string()).await? {
                    return Ok(130);
                }
            }
        }
    }
}
