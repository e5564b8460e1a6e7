//! Assembling Cairn for a front end: the settings (config.toml, secrets and the keyring,
//! choosing the provider and model for each purpose, building them) and the launch (the
//! workspace, the memory index with its embedding model, the consolidator and the agent
//! with every tool). The CLI and the desktop app share it, so a start is the same in both.

pub mod launch;
pub mod settings;

/// The allocator of every front end (the CLI, the window, the benchmarks): mimalloc, with
/// a heap per thread. The harness allocates and frees small objects on several threads at
/// once (the run, the session writer, the event listeners); glibc's allocator made those
/// threads wait on each other's arena locks and grow and trim its heaps, which made a step
/// cost twice as much late in a long session as early in it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Lets the allocator give back to the system what the process freed, as glibc's did: by
/// default mimalloc commits its first arena eagerly on Linux and never purges it, which
/// kept about 30 MB of freed memory in the window's process. A front end calls it first
/// thing in `main`, before the arena is reserved.
pub fn tune_allocator() {
    /// `mi_option_arena_eager_commit`, fifth in mimalloc's list of options.
    const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
    #[allow(unsafe_code)]
    // SAFETY: mi_option_set takes two integers and only stores the option's value.
    unsafe {
        libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
    }
}

// The crates under the app, as the front ends reach them: a front end depends on
// cairn-app and cairn-protocol only (tests/layering.rs), so what it uses of the harness,
// the memory, the models and the sandbox comes through here.
pub use cairn_core;
pub use cairn_embed;
pub use cairn_extract;
pub use cairn_llm;
pub use cairn_memory;
pub use cairn_models;
pub use cairn_process;
