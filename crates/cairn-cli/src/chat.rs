//! `cairn chat`: a conversation in the terminal.

use std::io::{IsTerminal, Write};

use crate::args::{ChatArgs, Cli};
use crate::drive::{Approver, Drive, Driven};
use crate::interrupt::Interrupts;
use crate::terminal::Style;
use crate::{consolidate, escape, input, setup};
use cairn_app::cairn_core::upkeep::SchedulerHandle;
use cairn_app::cairn_core::Agent;

const HELP: &str = "\
Type a message and press Enter. While the model works, typed lines steer it.
Ctrl+C stops a run (twice quits); Ctrl+D or /exit leaves.
Commands: /help, /session (show the session id), /compact [focus] (summarise the older
part of the conversation), /consolidate (merge new daily logs into MEMORY.md), /exit;
/<skill> [what for] runs a skill (skills/<name>/SKILL.md) on your message.";

pub async fn run(cli: &Cli, args: &ChatArgs) -> anyhow::Result<u8> {
    let mut launch = setup::launch(cli, false, None).await?;
    let session = setup::session(&launch, args.session.as_deref(), false).await?;
    let resumed = !session.tree.is_empty();
    let root = launch.workspace.root().display().to_string();
    let scheduler = launch.consolidation(&mut setup::warn).await;
    let model = launch.chat.1.clone();
    let (agent, _memory) = launch.agent(session);
    let verb = if resumed { "resumed" } else { "new" };
    eprintln!(
        "Cairn chat: {verb} session {}, model {model}, workspace {root}",
        agent.session_id()
    );
    eprintln!("/help for help.");
    let status = converse(&agent, scheduler.as_ref()).await;
    if let Some(scheduler) = scheduler {
        // Stops a consolidation in progress: MEMORY.md is written whole or not at all.
        scheduler.shutdown().await;
    }
    status
}

/// The conversation loop, until the user leaves.
async fn converse(agent: &Agent, scheduler: Option<&SchedulerHandle>) -> anyhow::Result<u8> {
    let session_id = agent.session_id();
    let mut lines = input::lines();
    let approver = if std::io::stdin().is_terminal() {
        Approver::Terminal
    } else {
        Approver::Deny
    };
    let mut interrupts = Interrupts::listen()?;
    let mut idle_interrupts = 0;
    loop {
        print!("\n› ");
        let _ = std::io::stdout().flush();
        let line = tokio::select! {
            line = lines.recv() => line,
            () = interrupts.next() => {
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
                    Err(e) => eprintln!("cairn: {}", escape::prose(&e.to_string())),
                }
            }
            "/consolidate" => match scheduler {
                Some(scheduler) => {
                    eprintln!("consolidating MEMORY.md...");
                    match scheduler.run_now().await {
                        Ok(report) => eprint!("{}", consolidate::describe(&report, Style::plain())),
                        Err(e) => eprintln!("cairn: {}", escape::prose(&e.to_string())),
                    }
                }
                None => {
                    eprintln!("background consolidation is off here; `cairn consolidate` runs it")
                }
            },
            text => {
                let drive = Drive {
                    agent,
                    json: false,
                    approver,
                    input: Some(&mut lines),
                    interrupts: &mut interrupts,
                };
                if let Driven::Quit = drive.run(text.to_string(), Vec::new()).await? {
                    return Ok(130);
                }
            }
        }
    }
}
