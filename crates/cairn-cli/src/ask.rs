//! `cairn ask`: one prompt, answered on stdout.

use std::io::{IsTerminal, Read};

use crate::args::{AskArgs, Cli};
use crate::drive::{Approver, Drive, Driven};
use crate::interrupt::Interrupts;
use crate::{attach, input, setup};

/// Exit status for a usage error.
const USAGE: u8 = 2;

pub async fn run(cli: &Cli, args: &AskArgs) -> anyhow::Result<u8> {
    if args.resume {
        return resume(cli, args).await;
    }
    let message = match message(args)? {
        Some(message) => message,
        None if !args.attach.is_empty() => String::new(),
        None => {
            eprintln!("cairn ask: no message given (pass it as arguments or on stdin)");
            return Ok(USAGE);
        }
    };
    let mut launch = setup::launch(cli, args.yes, args.max_steps).await?;
    let workspace = launch.workspace.clone();
    let files = args.attach.clone();
    let attached = tokio::task::spawn_blocking(move || attach::read(&workspace, &files)).await??;
    let message = match attached.documents.is_empty() {
        true => message,
        false if message.is_empty() => attached.documents,
        false => format!("{message}\n\n{}", attached.documents),
    };
    if args.strict {
        let nudges = match launch.options.completion {
            cairn_app::cairn_core::Completion::Strict { nudges } => nudges,
            cairn_app::cairn_core::Completion::Lenient => 2,
        };
        launch.options.completion = cairn_app::cairn_core::Completion::Strict { nudges };
    }
    let session = setup::session(&launch, args.session.as_deref(), args.continue_latest).await?;
    let (agent, _memory) = launch.agent(session);
    if let Some(level) = args.thinking {
        agent.set_thinking(level);
    }
    if let Some(cut) = agent.interrupted_run() {
        eprintln!(
            "note: the last run of this session was cut short after {} model call(s); \
             `cairn ask --continue --resume` goes on with it instead",
            cut.step
        );
    }
    drive(&agent, args, Some((message, attached.pictures))).await
}

/// `--resume`: goes on with the interrupted run of the session named (or the latest).
async fn resume(cli: &Cli, args: &AskArgs) -> anyhow::Result<u8> {
    if !args.continue_latest && args.session.is_none() {
        eprintln!("cairn ask: --resume goes with --continue or --session ID");
        return Ok(USAGE);
    }
    if !args.message.is_empty() || !args.attach.is_empty() {
        eprintln!("cairn ask: --resume goes on with the interrupted run; it takes no message");
        return Ok(USAGE);
    }
    let launch = setup::launch(cli, args.yes, args.max_steps).await?;
    let session = setup::session(&launch, args.session.as_deref(), args.continue_latest).await?;
    let (agent, _memory) = launch.agent(session);
    if agent.interrupted_run().is_none() {
        eprintln!("cairn ask: this session has no interrupted run to go on with");
        return Ok(1);
    }
    if let Some(level) = args.thinking {
        agent.set_thinking(level);
    }
    drive(&agent, args, None).await
}

/// Drives `prompt` (or, `None`, the interrupted run) to its end, asking for approvals on
/// the terminal; the exit status.
async fn drive(
    agent: &cairn_app::cairn_core::Agent,
    args: &AskArgs,
    prompt: Option<(String, Vec<cairn_protocol::Picture>)>,
) -> anyhow::Result<u8> {
    let approver = Approver::detect();
    let mut lines = (approver == Approver::Terminal && !args.yes).then(input::lines);
    let drive = Drive {
        agent,
        json: args.json,
        approver,
        input: lines.as_mut(),
        interrupts: &mut Interrupts::listen()?,
    };
    let driven = match prompt {
        Some((message, pictures)) => drive.run(message, pictures).await?,
        None => drive.resume().await?,
    };
    Ok(match driven {
        Driven::Finished(report) => report.outcome.exit_code().clamp(0, 255) as u8,
        Driven::Quit => 130,
    })
}

/// The message from the arguments, or from stdin when there are none and stdin is piped.
fn message(args: &AskArgs) -> anyhow::Result<Option<String>> {
    let joined = args.message.join(" ");
    if !joined.trim().is_empty() {
        return Ok(Some(joined));
    }
    if std::io::stdin().is_terminal() {
        return Ok(None);
    }
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text)?;
    Ok((!text.trim().is_empty()).then_some(text))
}
