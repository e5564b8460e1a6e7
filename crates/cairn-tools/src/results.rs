//! Where tool results are kept whole: a result too long for the context (evicted by the
//! harness) and the whole output a tool keeps itself (bash), both under
//! `.cairn/tool-results/`, and the tools whose results are never evicted.

/// Tools whose results are never evicted: each bounds its own answer (read_file and
/// memory_get cut long lines and stop near 100,000 characters; list_dir, grep and
/// memory_search cap their entries), so keeping it whole is safe.
const EXEMPT: &[&str] = &[
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "grep",
    "memory_search",
    "memory_get",
    "memory_save",
];

/// Where evicted results go, inside the workspace.
pub const TOOL_RESULTS_DIR: &str = ".cairn/tool-results";

/// Where the whole result of `call_id` is kept, workspace-relative.
pub fn result_file(call_id: &str) -> String {
    format!("{TOOL_RESULTS_DIR}/{}.txt", safe_file_name(call_id))
}

/// Where a tool that keeps its own whole output (bash) saves it, workspace-relative: a name
/// apart from [`result_file`], so evicting the tool's shortened result never replaces it.
pub fn output_file(call_id: &str) -> String {
    format!("{TOOL_RESULTS_DIR}/{}.output.txt", safe_file_name(call_id))
}

/// Whether `tool`'s results stay whole in the context (file and memory tools).
pub fn is_exempt(tool: &str) -> bool {
    EXEMPT.contains(&tool)
}

/// A call id as a file name: letters, digits, `-` and `_` only.
fn safe_file_name(id: &str) -> String {
    let name: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    if name.is_empty() {
        "result".to_string()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_ids_cannot_escape_the_folder() {
        assert_eq!(safe_file_name("../../etc/passwd"), "______etc_passwd");
        assert_eq!(safe_file_name(""), "result");
        assert_eq!(safe_file_name("call_1-a"), "call_1-a");
    }
}
