//! The llama.cpp backend: initialised once per process, never torn down.

use std::sync::OnceLock;

use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::{send_logs_to_tracing, LogOptions};

static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();

/// The process's llama.cpp backend, initialised on first use; llama.cpp's own log lines are
/// sent to `tracing` from then on.
///
/// llama.cpp allows one backend per process, so everything that drives llama-cpp-2 (the
/// local chat model, the embedding benchmark's llama.cpp engine) takes it from here.
pub fn llama_backend() -> Result<&'static LlamaBackend, String> {
    BACKEND
        .get_or_init(|| {
            send_logs_to_tracing(LogOptions::default());
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| format!("cannot initialise llama.cpp: {e}"))
}
