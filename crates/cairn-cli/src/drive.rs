//! Running one prompt from the terminal: render events, answer approvals, steer with typed
//! lines, and handle Ctrl+C (the first stops the run, the second quits).

use std::io::IsTerminal;

use cairn_core::{Agent, RunReport};
use cairn_protocol::{AgentEvent, ApprovalDecision};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::render::{brief_arguments, Renderer};

/// How approval requests are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approver {
    /// Ask on the terminal.
    Terminal,
    /// Nobody can be asked: deny and tell the model why.
    Deny,
}

impl Approver {
    /// Ask when stdin and stderr are terminals, otherwise deny.
    pub fn detect() -> Self {
        if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
            Approver::Terminal
        } else {
            Approver::Deny
        }
    }
}

pub struct Drive<'a> {
    pub agent: &'a Agent,
    pub json: bool,
    pub approver: Approver,
    /// Typed lines: approval answers, otherwise steering messages.
    pub input: Option<&'a mut mpsc::UnboundedReceiver<String>>,
}

/// How driving a run ended.
pub enum Driven {
    Finished(RunReport),
    /// Ctrl+C twice: quit now.
    Quit,
}

impl Drive<'_> {
    pub async fn run(self, prompt: String) -> anyhow::Result<Driven> {
        let Drive {
            agent,
            json,
            approver,
            mut input,
        } = self;
        let mut events = agent.subscribe();
        let runner = agent.clone();
        let run = tokio::spawn(async move { runner.prompt(prompt).await });
        let mut renderer = Renderer::new(json);
        let mut pending: Option<String> = None;
        let mut interrupts = 0;
        loop {
            tokio::select! {
                event = events.recv() => {
                    let Some(event) = event else { break };
                    renderer.event(&event);
                    match event {
                        AgentEvent::ApprovalRequested { request_id, name, arguments, .. } => {
                            renderer.end_line();
                            pending = ask(agent, approver, request_id, &name, &arguments)?;
                        }
                        AgentEvent::AgentEnd { .. } => break,
                        _ => {}
                    }
                }
                line = recv(&mut input) => match (line, pending.take()) {
                    (Some(line), Some(request_id)) => answer(agent, &request_id, &line)?,
                    (Some(line), None) if !line.trim().is_empty() => {
                        agent.steer(line);
                        eprintln!("cairn: noted; the model will see it at its next step");
                    }
                    (Some(_), None) => {}
                    (None, _) => input = None,
                },
                _ = tokio::signal::ctrl_c() => {
                    interrupts += 1;
                    if interrupts > 1 {
                        return Ok(Driven::Quit);
                    }
                    agent.abort();
                    renderer.end_line();
                    eprintln!("cairn: stopping... (Ctrl+C again to quit)");
                }
            }
        }
        Ok(Driven::Finished(run.await??))
    }
}

async fn recv(input: &mut Option<&mut mpsc::UnboundedReceiver<String>>) -> Option<String> {
    match input {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// Handles an approval request; returns the request id when an answer must be typed.
fn ask(
    agent: &Agent,
    approver: Approver,
    request_id: String,
    name: &str,
    arguments: &Value,
) -> anyhow::Result<Option<String>> {
    match approver {
        Approver::Terminal => {
            eprint!(
                "? Allow {name}({})? [y]es / [a]lways for {name} / [N]o: ",
                brief_arguments(arguments)
            );
            Ok(Some(request_id))
        }
        Approver::Deny => {
            eprintln!(
                "cairn: denied {name}: no terminal to ask for approval (use --yes to allow tools)"
            );
            let reason = "no one was at a terminal to approve it; the user can rerun with --yes";
            agent.resolve_approval(&request_id, ApprovalDecision::Deny, Some(reason.into()))?;
            Ok(None)
        }
    }
}

fn answer(agent: &Agent, request_id: &str, line: &str) -> anyhow::Result<()> {
    let decision = match line.trim().to_lowercase().as_str() {
        "y" | "yes" => ApprovalDecision::AllowOnce,
        "a" | "always" => ApprovalDecision::AllowAlways,
        _ => ApprovalDecision::Deny,
    };
    agent.resolve_approval(request_id, decision, None)?;
    Ok(())
}
