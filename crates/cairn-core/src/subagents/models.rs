//! Building the model a subagent definition or a worker call names.

use std::sync::Arc;

use async_trait::async_trait;
use cairn_llm::Provider;

/// A model built for a subagent.
#[derive(Clone)]
pub struct ResolvedModel {
    pub provider: Arc<dyn Provider>,
    /// The model's name as its provider knows it.
    pub model: String,
    /// `provider/model` as the settings name it (what worker events report as
    /// `model_used`).
    pub label: String,
}

/// Builds the provider a definition's or a call's `model` names.
#[async_trait]
pub trait ModelResolver: Send + Sync {
    /// The model for `spec` (`provider/model`, `provider` or `model`); an error (with the
    /// providers that may be named) for one that is not configured.
    async fn resolve(&self, spec: &str) -> Result<ResolvedModel, String>;
}
