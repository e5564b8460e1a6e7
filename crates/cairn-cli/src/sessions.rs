//! `cairn sessions list | show | tree | export | import`.

use std::collections::HashSet;

use anyhow::Context;
use cairn_app::cairn_core::session::{export, import, SessionTree};
use cairn_protocol::{EntryKind, Message, SessionEntry};
use serde_json::json;

use crate::args::{Cli, SessionsCommand};
use crate::escape::{prose, prose_line};
use crate::setup;

/// Copies an exported session's pictures into the folder its links point to, beside
/// `exported`. A picture whose file is gone is said and skipped; the export stands.
fn copy_pictures(
    workspace: &cairn_app::cairn_memory::Workspace,
    pictures: &[cairn_protocol::Picture],
    exported: &std::path::Path,
) -> anyhow::Result<()> {
    if pictures.is_empty() {
        return Ok(());
    }
    let dir = exported
        .parent()
        .unwrap_or(std::path::Path::new("."))
        .join(export::PICTURES_FOLDER);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut copied = 0;
    for picture in pictures {
        let target = dir.join(picture.file_name());
        if target.is_file() {
            copied += 1;
            continue;
        }
        match workspace.attachments().bytes_of(picture) {
            Ok(bytes) => {
                std::fs::write(&target, bytes)
                    .with_context(|| format!("cannot write {}", target.display()))?;
                copied += 1;
            }
            Err(why) => eprintln!("{why}"),
        }
    }
    eprintln!("copied {copied} picture(s) into {}", dir.display());
    Ok(())
}

pub async fn run(cli: &Cli, command: &SessionsCommand) -> anyhow::Result<u8> {
    let config = setup::config(cli)?;
    let workspace = setup::workspace(cli, &config)?;
    let store = setup::store(&workspace);
    match command {
        SessionsCommand::List { json, all } => {
            let mut list = store.list()?;
            list.retain(|s| *all || s.parent_session.is_none());
            if *json {
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else if list.is_empty() {
                eprintln!("no sessions yet in {}", workspace.sessions_dir().display());
            } else {
                for s in list {
                    let title = prose_line(s.title.as_deref().unwrap_or("(untitled)"));
                    let parent = s
                        .parent_session
                        .as_deref()
                        .map(|p| format!("  (subagent of {})", prose_line(p)))
                        .unwrap_or_default();
                    println!(
                        "{}  {}  {:>4} msgs  {title}{parent}",
                        prose_line(&s.id),
                        local_time(&s.updated_at),
                        s.messages
                    );
                }
            }
        }
        SessionsCommand::Show { id, json } => {
            let loaded = store.load(id)?;
            if *json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&show_json(&loaded.tree))?
                );
            } else {
                print_active_path(&loaded.tree);
            }
        }
        SessionsCommand::Tree { id } => print_tree(&store.load(id)?.tree),
        SessionsCommand::Rm { id } => {
            let to = store.delete(id).await?;
            eprintln!("moved to {to}");
        }
        SessionsCommand::Export { id, output } => {
            let tree = store.load(id)?.tree;
            let markdown = export::to_markdown(&tree);
            let pictures = export::pictures(&tree);
            match output {
                // A session holds text from models and files: never raw to a terminal.
                None => {
                    print!("{}", prose(&markdown));
                    if !pictures.is_empty() {
                        eprintln!(
                            "the session has {} picture(s): export with --output FILE to copy \
                             them beside it",
                            pictures.len()
                        );
                    }
                }
                Some(path) => {
                    use std::io::Write;
                    let mut file = std::fs::OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .open(path)
                        .with_context(|| format!("cannot create {}", path.display()))?;
                    file.write_all(markdown.as_bytes())
                        .and_then(|()| file.sync_all())
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    eprintln!("wrote {}", path.display());
                    copy_pictures(&workspace, &pictures, path)?;
                }
            }
        }
        SessionsCommand::Import { file, json } => {
            let bytes =
                std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
            let (source, conversations) = import::parse(&bytes)
                .with_context(|| format!("cannot import {}", file.display()))?;
            let done = import::import(&store, source, &conversations).await?;
            let (new, already): (Vec<_>, Vec<_>) = done
                .iter()
                .partition(|i| matches!(i, import::Imported::New(_)));
            let ids = |list: &[&import::Imported]| {
                list.iter().map(|i| i.id().to_string()).collect::<Vec<_>>()
            };
            if *json {
                println!(
                    "{}",
                    json!({"source": source.name(), "sessions": ids(&new), "already": ids(&already)})
                );
            } else {
                for (done, c) in done.iter().zip(&conversations) {
                    let note = match done {
                        import::Imported::New(_) => "",
                        import::Imported::Already(_) => "  (imported before)",
                    };
                    println!(
                        "{}  {:>4} msgs  {}{note}",
                        done.id(),
                        c.messages.len(),
                        prose_line(&c.title)
                    );
                }
                eprintln!(
                    "imported {} conversations from {} into {}{}",
                    new.len(),
                    source.name(),
                    workspace.sessions_dir().display(),
                    if already.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; {} were imported before and left as they are",
                            already.len()
                        )
                    }
                );
            }
        }
    }
    Ok(0)
}

fn local_time(ts: &str) -> String {
    chrono_like(ts).unwrap_or_else(|| ts.to_string())
}

/// `2026-01-02T03:04:05.678Z` -> `2026-01-02 03:04`.
fn chrono_like(ts: &str) -> Option<String> {
    let (date, time) = ts.split_once('T')?;
    Some(format!("{date} {}", time.get(..5)?))
}

fn show_json(tree: &SessionTree) -> serde_json::Value {
    let active: Vec<&SessionEntry> = tree.active_path();
    json!({
        "id": tree.id(),
        "title": tree.title(),
        "created_at": tree.header().created_at,
        "leaf": tree.leaf(),
        "active_path": active,
        "last_run": tree.last_run().map(|(outcome, steps, duration_ms)| json!({
            "outcome": outcome,
            "steps": steps,
            "duration_ms": duration_ms,
            "said": outcome.ended(steps),
        })),
        "entries": tree.entries().iter().filter(|e| !matches!(e.kind, EntryKind::Unknown { .. })).collect::<Vec<_>>(),
    })
}

fn print_active_path(tree: &SessionTree) {
    println!(
        "# {}  ({})",
        prose_line(tree.title().unwrap_or("(untitled)")),
        prose_line(tree.id())
    );
    for entry in tree.active_path() {
        match &entry.kind {
            EntryKind::Message { message } => print_message(message),
            EntryKind::Compaction { summary, .. } => {
                println!("\n[summary of earlier turns]\n{}", prose(summary))
            }
            EntryKind::BranchSummary { summary, .. } => {
                println!("\n[summary of a left branch]\n{}", prose(summary))
            }
            EntryKind::ModelChange { provider, model } => {
                println!("\n[model: {}/{}]", prose_line(provider), prose_line(model))
            }
            EntryKind::ThinkingLevel { level } => println!("\n[thinking: {level}]"),
            _ => {}
        }
    }
    if let Some((outcome, steps, _)) = tree.last_run() {
        println!("\n[{}]", prose_line(&outcome.ended(steps)));
    }
}

fn print_message(message: &Message) {
    match message {
        Message::User { .. } => println!("\nyou: {}", prose(&message.text())),
        Message::Assistant(a) => {
            let text = a.text();
            if !text.is_empty() {
                println!("\ncairn: {}", prose(&text));
            }
            for call in a.tool_calls() {
                println!(
                    "  ⏺ {}({})",
                    prose_line(&call.name),
                    crate::render::brief_arguments(&call.arguments)
                );
            }
        }
        Message::ToolResult(r) => {
            let mark = if r.is_error { "✗" } else { "⎿" };
            let first = r.content.lines().next().unwrap_or("");
            println!("  {mark} {}", prose_line(first));
        }
    }
}

/// Every branch, indented by depth; `*` marks the active path, `<- active` its leaf.
fn print_tree(tree: &SessionTree) {
    println!(
        "{}  {}",
        prose_line(tree.id()),
        prose_line(tree.title().unwrap_or("(untitled)"))
    );
    let active: HashSet<&str> = tree.active_path().iter().map(|e| e.id.as_str()).collect();
    let mut stack: Vec<(&SessionEntry, usize)> = tree
        .children(None)
        .into_iter()
        .rev()
        .map(|e| (e, 0))
        .collect();
    while let Some((entry, depth)) = stack.pop() {
        let children = tree.children(Some(&entry.id));
        // A straight line of single children stays at one depth; a fork indents.
        let child_depth = if children.len() > 1 { depth + 1 } else { depth };
        let mark = if active.contains(entry.id.as_str()) {
            '*'
        } else {
            ' '
        };
        let leaf = if tree.leaf() == Some(entry.id.as_str()) {
            "  <- active"
        } else {
            ""
        };
        let label = tree
            .label(&entry.id)
            .map(|l| format!(" [{}]", prose_line(l)))
            .unwrap_or_default();
        println!(
            "{mark} {}{} {}{label}{leaf}",
            "  ".repeat(depth),
            prose_line(&entry.id),
            preview(entry)
        );
        for child in children.into_iter().rev() {
            stack.push((child, child_depth));
        }
    }
}

fn preview(entry: &SessionEntry) -> String {
    let text = match &entry.kind {
        EntryKind::Message {
            message: m @ Message::User { .. },
        } => format!("you: {}", m.text()),
        EntryKind::Message {
            message: Message::Assistant(a),
        } => {
            let calls: Vec<_> = a.tool_calls().map(|c| c.name.as_str()).collect();
            if calls.is_empty() {
                format!("cairn: {}", a.text())
            } else {
                format!("cairn: {} [{}]", a.text(), calls.join(", "))
            }
        }
        EntryKind::Message {
            message: Message::ToolResult(r),
        } => format!("result of {}", r.tool_name),
        EntryKind::Compaction { .. } => "[compaction]".into(),
        EntryKind::BranchSummary { .. } => "[branch summary]".into(),
        EntryKind::ModelChange { model, .. } => format!("[model {model}]"),
        EntryKind::ThinkingLevel { level } => format!("[thinking {level}]"),
        _ => String::new(),
    };
    let line = text.lines().next().unwrap_or("").to_string();
    if line.chars().count() > 70 {
        format!(
            "{}…",
            prose_line(&line.chars().take(70).collect::<String>())
        )
    } else {
        prose_line(&line)
    }
}
