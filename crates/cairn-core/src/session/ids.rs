//! Entry ids and timestamps as session files write them.

/// A new entry id: 8 hex digits, unique within its session.
pub(crate) fn new_entry_id(taken: impl Fn(&str) -> bool) -> String {
    loop {
        let id = format!("{:08x}", rand::random::<u32>());
        if !taken(&id) {
            return id;
        }
    }
}

/// Now, as written in session files.
pub(crate) fn timestamp() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
