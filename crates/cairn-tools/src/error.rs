//! Why a tool call failed, and whether the run goes on.

/// Why a tool failed. Every variant but `Fatal` is told to the model and the run goes on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The arguments did not match the schema.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The tool ran and failed (missing file, refused path, non-zero exit ...).
    #[error("{0}")]
    Failed(String),
    /// The run was aborted while the tool ran.
    #[error("aborted by the user")]
    Aborted,
    /// Something is broken beyond this call: the run must end.
    #[error("{0}")]
    Fatal(String),
    /// The model says the run cannot go on (the `block` tool): it ends as blocked.
    #[error("blocked: {0}")]
    Block(String),
}

impl ToolError {
    /// Whether the run must end (as opposed to telling the model and going on).
    pub fn ends_run(&self) -> bool {
        match self {
            ToolError::Fatal(_) | ToolError::Block(_) => true,
            ToolError::InvalidArguments(_) | ToolError::Failed(_) | ToolError::Aborted => false,
        }
    }
}
