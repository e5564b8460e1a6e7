//! Running one prompt from the terminal: render events, answer approvals, steer with typed
//! lines, and handle Ctrl+C (the first stops the run, the second quits).

use std::collections::VecDeque;
use std::io::IsTerminal;

use cairn_app::cairn_core::{Agent, RunReport};
use cairn_protocol::{AgentEvent, ApprovalDecision};
use tokio::sync::mpsc;

use crate::approval::{self, Answer, Request};
use crate::escape;
use crate::interrupt::Interrupts;
use crate::render::Renderer;
use crate::terminal::Style;

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
    /// The command's Ctrl+C listener.
    pub interrupts: &'a mut Interrupts,
}

/// How driving a run ended.
pub enum Driven {
    Finished(RunReport),
    /// Ctrl+C twice: quit now.
    Quit,
}

impl Drive<'_> {
    pub async fn run(
        self,
        prompt: String,
        pictures: Vec<cairn_protocol::Picture>,
    ) -> anyhow::Result<Driven> {
        self.drive(Some((prompt, pictures))).await
    }

    /// Goes on with the session's interrupted run.
    pub async fn resume(self) -> anyhow::Result<Driven> {
        self.drive(None).await
    }

    /// Runs `prompt`, or (`None`) goes on with the interrupted run.
    async fn drive(
        self,
        prompt: Option<(String, Vec<cairn_protocol::Picture>)>,
    ) -> anyhow::Result<Driven> {
        let Drive {
            agent,
            json,
            approver,
            mut input,
            interrupts,
        } = self;
        let mut events = agent.subscribe();
        let runner = agent.clone();
        let run = tokio::spawn(async move {
            match prompt {
                Some((prompt, pictures)) => runner.prompt_with_pictures(prompt, pictures).await,
                None => runner.resume().await,
            }
        });
        let mut renderer = Renderer::new(json);
        // Requests wait their turn: subagents running side by side may ask at once.
        let mut waiting: VecDeque<Pending> = VecDeque::new();
        let mut pressed = 0;
        loop {
            tokio::select! {
                event = events.recv() => {
                    let Some(event) = event else { break };
                    renderer.event(&event);
                    let (agents, inner) = event.innermost();
                    match inner {
                        AgentEvent::ApprovalRequested {
                            request_id, name, arguments, change, reason, always, ..
                        } => {
                            renderer.end_line();
                            let request = Request {
                                agents: &agents,
                                name,
                                arguments,
                                change: change.as_ref(),
                                reason: reason.as_deref(),
                                always: always.as_deref(),
                            };
                            if let Some(asked) = ask(agent, approver, request_id, &request, waiting.is_empty())? {
                                waiting.push_back(asked);
                            }
                        }
                        AgentEvent::ApprovalResolved { request_id, .. } => {
                            // Answered elsewhere (an abort): no longer waiting.
                            let first = waiting.front().map(|p| p.request_id == *request_id);
                            waiting.retain(|p| p.request_id != *request_id);
                            if first == Some(true) {
                                show_next(&waiting);
                            }
                        }
                        AgentEvent::AgentEnd { .. } if agents.is_empty() => break,
                        _ => {}
                    }
                }
                line = recv(&mut input) => match (line, waiting.pop_front()) {
                    (Some(line), Some(asked)) => {
                        match answer(agent, asked, &line)? {
                            Some(again) => waiting.push_front(again),
                            None => show_next(&waiting),
                        }
                    }
                    (Some(line), None) if !line.trim().is_empty() => {
                        agent.steer(line);
                        eprintln!("cairn: noted; the model will see it at its next step");
                    }
                    (Some(_), None) => {}
                    (None, asked) => {
                        input = None;
                        if let Some(asked) = asked {
                            waiting.push_front(asked);
                        }
                    }
                },
                () = interrupts.next() => {
                    pressed += 1;
                    if pressed > 1 {
                        return Ok(Driven::Quit);
                    }
                    agent.request_abort();
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

/// An approval request waiting for a typed answer.
struct Pending {
    request_id: String,
    /// Whether "always" was offered.
    always: bool,
    /// The whole request and the choices, shown when its turn comes.
    shown: String,
}

/// Shows the request now first in line, if any.
fn show_next(waiting: &VecDeque<Pending>) {
    if let Some(next) = waiting.front() {
        eprint!("{}", next.shown);
    }
}

/// Handles an approval request: shows the whole call, then asks on the terminal or, with
/// nobody to ask, denies it. Returns the request when an answer must be typed.
fn ask(
    agent: &Agent,
    approver: Approver,
    request_id: &str,
    request: &Request<'_>,
    now: bool,
) -> anyhow::Result<Option<Pending>> {
    let style = Style::detect_stderr();
    let shown = approval::describe(request, style);
    match approver {
        Approver::Terminal => {
            let shown = format!("{shown}{}", approval::choices(request.always));
            if now {
                eprint!("{shown}");
            } else {
                eprintln!(
                    "cairn: another approval request ({}) waits until this one is answered",
                    escape::call_line(request.name)
                );
            }
            Ok(Some(Pending {
                request_id: request_id.to_string(),
                always: request.always.is_some(),
                shown,
            }))
        }
        Approver::Deny => {
            eprint!("{shown}");
            eprintln!(
                "cairn: denied {}: no terminal to ask for approval (use --yes to allow tools)",
                escape::call_line(request.name)
            );
            let reason = "no one was at a terminal to approve it; the user can rerun with --yes";
            settle(
                agent,
                request_id,
                ApprovalDecision::Deny,
                Some(reason.into()),
            );
            Ok(None)
        }
    }
}

/// Gives the answer to a request; one that is no longer waiting (its run ended or its
/// subagent timed out meanwhile) is said so and the command goes on.
fn settle(agent: &Agent, request_id: &str, decision: ApprovalDecision, reason: Option<String>) {
    if agent
        .resolve_approval(request_id, decision, reason)
        .is_err()
    {
        eprintln!("cairn: that request is no longer waiting (its run ended); nothing was run");
    }
}

/// Resolves the request with the typed answer; returns it again when it must be asked again.
fn answer(agent: &Agent, asked: Pending, line: &str) -> anyhow::Result<Option<Pending>> {
    match approval::answer(line, asked.always) {
        Answer::Decide(decision) => {
            settle(agent, &asked.request_id, decision, None);
            Ok(None)
        }
        Answer::NoAlways => {
            eprint!("this call can only be allowed once. Allow? [y/N]: ");
            Ok(Some(asked))
        }
    }
}
