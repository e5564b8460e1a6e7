//! The bundled model's engines as they are held: loaded, or the reason they cannot load,
//! and let go when idle.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use super::Engine;
use crate::candle::LocalEmbedder;
use crate::onnx::Precision;

/// The engines loaded, shared with the thread that lets them go when idle.
#[derive(Default)]
pub(super) struct Held {
    pub(super) chunks: Mutex<Slot>,
    pub(super) queries: Mutex<Slot>,
    pub(super) candle: Mutex<Option<Result<Arc<LocalEmbedder>, String>>>,
    /// How the engine that ran last computed (`Some(None)`: candle), so that the model's
    /// name stays the same while it is let go.
    pub(super) ran: Mutex<Option<Option<Precision>>>,
    pub(super) last_used: Mutex<Option<Instant>>,
    /// Whether a thread watches for idleness.
    pub(super) watched: Mutex<bool>,
}

/// One engine: loaded, or the reason it cannot load (kept: it is not tried again).
#[derive(Default)]
pub(super) struct Slot {
    pub(super) engine: Option<Arc<Engine>>,
    pub(super) failed: Option<String>,
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Held {
    pub(super) fn touch(&self) {
        *lock(&self.last_used) = Some(Instant::now());
    }

    pub(super) fn loaded(&self) -> Option<Arc<Engine>> {
        [&self.chunks, &self.queries]
            .into_iter()
            .find_map(|slot| lock(slot).engine.clone())
    }

    /// Lets go of every engine no text is being embedded by; says whether none is left.
    pub(super) fn unload(&self) -> bool {
        let mut left = false;
        let mut gone = Vec::new();
        for slot in [&self.chunks, &self.queries] {
            let mut slot = lock(slot);
            match &slot.engine {
                Some(engine) if Arc::strong_count(engine) > 1 => left = true,
                Some(_) => gone.extend(slot.engine.take()),
                None => {}
            }
        }
        if left {
            return false;
        }
        let candle = lock(&self.candle).take();
        // Sessions are torn down inside the library's bounds, as they run: a process
        // closing waits for it. One already closing keeps them (it is about to exit, and
        // tearing a session down under the library's exit would crash it).
        match crate::engine::Inside::enter() {
            Ok(_inside) => {
                drop(gone);
                drop(candle);
                crate::runtime::release_shared_weights();
            }
            Err(_) => {
                std::mem::forget(gone);
                std::mem::forget(candle);
            }
        }
        release_freed_memory();
        true
    }
}

/// Gives the memory the C and C++ libraries freed (ONNX Runtime's sessions) back to the
/// system; the allocator keeps it otherwise.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: malloc_trim takes no pointer; it walks glibc's own heaps under their locks.
    unsafe {
        libc::malloc_trim(0);
    }
}
