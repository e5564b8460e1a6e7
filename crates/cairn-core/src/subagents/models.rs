//! Building the model a subagent definition names.

use std::sync::Arc;

use async_trait::async_trait;
use cairn_llm::Provider;

/// Builds the provider a definition's `model` names.
#[async_trait]
pub trait ModelResolver: Send + Sync {
    /// The provider and model name for `spec` (`provider/model`, `provider` or `model`).
    async fn resolve(&self, spec: &str) -> Result<(Arc<dyn Provider>, String), String>;
}
