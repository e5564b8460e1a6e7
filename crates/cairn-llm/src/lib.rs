//! Model providers behind one streaming trait.
//!
//! A provider turns a [`ChatRequest`] into a stream of [`StreamEvent`]s: text deltas,
//! complete tool calls, usage and a final stop reason. Errors say what kind they are
//! ([`LlmError::kind`]) so the harness can retry, compact or give up accordingly.

pub mod anthropic;
pub mod error;
mod http;
pub mod local;
pub mod openai;
pub mod provider;
pub mod remote;
pub mod retry;
pub mod scripted;
mod think;

#[cfg(test)]
mod fuzz_tests;

pub use error::LlmError;
pub use local::{LocalConfig, LocalProvider};
pub use provider::{ChatRequest, EventStream, Provider, ProviderInfo, StreamEvent, TokenCount};
pub use remote::RemoteConfig;
pub use scripted::{ScriptStep, ScriptedProvider, ScriptedTurn};
