//! `cairn mcp serve`: the workspace's memory tools (`memory_search`, `memory_get`, and
//! `memory_save` when allowed) for any MCP client on this machine, through the same tool
//! code the agent uses.

use std::sync::Arc;

use cairn_memory::{MemoryIndex, Workspace};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool as McpToolDef,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use cairn_tools::{handlers, Tool, ToolCtx, ToolError};

/// The memory tools served over MCP.
#[derive(Clone)]
pub struct MemoryServer {
    workspace: Arc<Workspace>,
    tools: Arc<Vec<Arc<dyn Tool>>>,
    /// Ends calls in flight when the server shuts down.
    cancel: CancellationToken,
}

impl MemoryServer {
    /// The tools over `index` (without one, memory_search is left out); memory_save only
    /// when `allow_save`.
    pub fn new(workspace: Arc<Workspace>, index: Option<MemoryIndex>, allow_save: bool) -> Self {
        let tools = handlers::memory(index)
            .into_iter()
            .filter(|tool| allow_save || tool.spec().name != "memory_save")
            .collect();
        Self {
            workspace,
            tools: Arc::new(tools),
            cancel: CancellationToken::new(),
        }
    }

    /// The names of the tools served.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.spec().name).collect()
    }

    /// Runs one call as the agent would, without asking: the client chose to call it.
    async fn run(&self, name: &str, args: Value) -> Result<CallToolResult, ErrorData> {
        let tool = self
            .tools
            .iter()
            .find(|t| t.spec().name == name)
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    format!(
                        "no tool `{name}`; this server has {}",
                        self.tool_names().join(", ")
                    ),
                    None,
                )
            })?;
        let ctx = ToolCtx::outside_run(self.workspace.clone(), self.cancel.child_token());
        Ok(match tool.call(args, ctx).await {
            Ok(output) if output.is_error => {
                CallToolResult::error(vec![ContentBlock::text(output.content)])
            }
            Ok(output) => CallToolResult::success(vec![ContentBlock::text(output.content)]),
            Err(ToolError::InvalidArguments(why)) => {
                return Err(ErrorData::invalid_params(why, None))
            }
            Err(e) => CallToolResult::error(vec![ContentBlock::text(e.to_string())]),
        })
    }
}

impl ServerHandler for MemoryServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "cairn-memory",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "The long-term memory of the user's Cairn workspace: search it with \
                 memory_search, read what a hit cites with memory_get.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .tools
            .iter()
            .map(|tool| {
                let spec = tool.spec();
                let schema = match spec.parameters {
                    Value::Object(map) => map,
                    _ => Default::default(),
                };
                let read_only = spec.name != "memory_save";
                let mut def = McpToolDef::new(spec.name, spec.description, schema);
                def.annotations = Some(rmcp::model::ToolAnnotations::new().read_only(read_only));
                def
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        self.run(&request.name, args).await.map(Into::into)
    }
}

impl Drop for MemoryServer {
    fn drop(&mut self) {
        if Arc::strong_count(&self.tools) == 1 {
            self.cancel.cancel();
        }
    }
}
