//! Assembling Cairn for a front end: the settings (config.toml, secrets and the keyring,
//! choosing the provider and model for each purpose, building them) and the launch (the
//! workspace, the memory index with its embedding model, the consolidator and the agent
//! with every tool). The CLI and the desktop app share it, so a start is the same in both.

pub mod launch;
pub mod settings;

/// Files Cairn makes (sessions, `state.db`, the index, kept changes, saved tool output,
/// notes and logs) are its user's alone: 0600, folders 0700, whatever the login's umask.
/// A front end calls this first thing in `main`; the children it starts inherit it.
pub fn keep_files_private() {
    #[cfg(unix)]
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
}

/// The allocator of every front end (the CLI, the window, the benchmarks): mimalloc, with
/// a heap per thread. The harness allocates and frees small objects on several threads at
/// once (the run, the session writer, the event listeners); glibc's allocator made those
/// threads wait on each other's arena locks and grow and trim its heaps, which made a step
/// cost twice as much late in a long session as early in it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Lets the allocator give back to the system what the process freed, as glibc's did: by
/// default mimalloc commits its first arena eagerly and purges what was freed in it a
/// second later, so a short command (`cairn search`) never gave anything back and the
/// window kept about 30 MB of what its start freed. Commit is lazy and a purge immediate
/// instead (a step of the harness costs the same, within this machine's noise).
///
/// These must be set before the allocator's first arena is made, which is before `main`
/// (the standard library allocates first): on Linux a constructor sets them, ahead of
/// mimalloc's own. A front end calls this first thing in `main` all the same: that keeps
/// the constructor linked into it, and sets them where there is no constructor. Each is
/// a default: a `MIMALLOC_*` variable in the environment still has the last word.
pub fn tune_allocator() {
    #[cfg(target_os = "linux")]
    std::hint::black_box(&TUNE_BEFORE_MAIN);
    set_allocator_defaults();
}

/// Runs [`set_allocator_defaults`] while the program loads, before any constructor
/// without a priority (mimalloc's, which reads the options) and before `main`.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
#[used]
#[link_section = ".init_array.00100"]
static TUNE_BEFORE_MAIN: extern "C" fn() = {
    extern "C" fn tune() {
        set_allocator_defaults();
    }
    tune
};

fn set_allocator_defaults() {
    // Their places in mimalloc's list of options (mimalloc.h, `mi_option_e`).
    const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    #[allow(unsafe_code)]
    // SAFETY: mi_option_set_default takes two integers and only stores the value (unless
    // the option was read already); it allocates nothing, so it may run before mimalloc
    // has started.
    unsafe {
        libmimalloc_sys::mi_option_set_default(ARENA_EAGER_COMMIT, 0);
        libmimalloc_sys::mi_option_set_default(PURGE_DELAY, 0);
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
