//! Memory of a process and everything it started (WebKit's web and network processes),
//! read from /proc.

use std::collections::BTreeSet;
use std::fs;

/// Memory of a process tree at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TreeMemory {
    pub processes: usize,
    /// Sum of VmRSS: pages shared between the processes count once per process.
    pub rss_kib: u64,
    /// Sum of PSS (shared pages split between their users), when smaps_rollup is readable.
    pub pss_kib: Option<u64>,
    /// Whether any of the processes has ONNX Runtime (the embedding model's engine) loaded.
    pub embedder_loaded: bool,
}

/// `root` and its descendants, found through `/proc/<pid>/task/*/children`, or by
/// scanning every process's parent where the kernel has no `children` files.
pub fn tree(root: u32) -> Vec<u32> {
    let mut found = vec![root];
    let mut seen: BTreeSet<u32> = found.iter().copied().collect();
    let mut next = 0;
    let parents = if has_children_files(root) {
        None
    } else {
        Some(parent_map())
    };
    while next < found.len() {
        let pid = found[next];
        next += 1;
        let kids = match &parents {
            None => children(pid),
            Some(map) => map
                .iter()
                .filter(|(_, parent)| *parent == pid)
                .map(|(child, _)| *child)
                .collect(),
        };
        for kid in kids {
            if seen.insert(kid) {
                found.push(kid);
            }
        }
    }
    found
}

/// Sums the memory of `pids` (processes that ended meanwhile are left out).
pub fn measure(pids: &[u32]) -> TreeMemory {
    let mut total = TreeMemory::default();
    let mut pss = Some(0u64);
    for &pid in pids {
        let Some(rss) = status_kib(pid, "VmRSS:") else {
            continue;
        };
        total.processes += 1;
        total.rss_kib += rss;
        total.embedder_loaded |= fs::read_to_string(format!("/proc/{pid}/maps"))
            .is_ok_and(|maps| maps.contains("libonnxruntime"));
        pss = match (pss, rollup_kib(pid, "Pss:")) {
            (Some(sum), Some(p)) => Some(sum + p),
            _ => None,
        };
    }
    total.pss_kib = pss.filter(|_| total.processes > 0);
    total
}

/// Whether `pid` is still running (and not a zombie).
pub fn alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

fn has_children_files(pid: u32) -> bool {
    fs::metadata(format!("/proc/{pid}/task/{pid}/children")).is_ok()
}

fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for task in tasks.flatten() {
        let text = fs::read_to_string(task.path().join("children")).unwrap_or_default();
        out.extend(
            text.split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok()),
        );
    }
    out
}

/// (pid, parent pid) of every process.
fn parent_map() -> Vec<(u32, u32)> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            Some((pid, parent_of(&stat)?))
        })
        .collect()
}

/// The parent pid in a `/proc/<pid>/stat` line (the name may hold spaces and parens).
fn parent_of(stat: &str) -> Option<u32> {
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

pub fn status_kib(pid: u32, key: &str) -> Option<u64> {
    field_kib(
        &fs::read_to_string(format!("/proc/{pid}/status")).ok()?,
        key,
    )
}

fn rollup_kib(pid: u32, key: &str) -> Option<u64> {
    field_kib(
        &fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?,
        key,
    )
}

/// The value of a `Key:   1234 kB` line.
fn field_kib(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_proc_fields() {
        let stat = "4242 (Web Content (x)) S 17 4242 4242 0 -1";
        assert_eq!(parent_of(stat), Some(17));
        let status = "Name:\tcat\nVmPeak:\t  9000 kB\nVmRSS:\t    2028 kB\n";
        assert_eq!(field_kib(status, "VmRSS:"), Some(2028));
        assert_eq!(field_kib(status, "VmSwap:"), None);
    }

    #[test]
    fn this_process_is_its_own_tree_and_has_memory() {
        let me = std::process::id();
        let pids = tree(me);
        assert_eq!(pids[0], me);
        let memory = measure(&pids);
        assert!(memory.processes >= 1);
        assert!(memory.rss_kib > 0);
        assert!(alive(me));
    }
}
