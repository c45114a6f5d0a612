//! The MPI nodes file (docs/formats.md §5): MPICH machine-file syntax.

use crate::error::{Error, Result};
use std::path::Path;

/// An MPI nodes file (docs/formats.md §5): hosts with slot counts.
pub fn read_nodes(path: &Path) -> Result<Vec<(String, u32)>> {
    let file = crate::input::open(path).map_err(|e| Error::in_file(path, e))?;
    let text = integrador_lines::read_to_string_bounded(file, 16 << 20)
        .map_err(|e| Error::in_file(path, format!("MPI nodes file: {e}")))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (host, n) = match line.split_once(':') {
            Some((h, n)) => (h.trim(), n.trim().parse::<u32>().ok().filter(|&n| n > 0)),
            None => (line, Some(1)),
        };
        let Some(n) = n.filter(|_| !host.is_empty() && !host.contains(char::is_whitespace)) else {
            return Err(Error::in_file(
                path,
                format!(
                    "line {}: expected `host` or `host:N` (N ≥ 1 ranks), found `{line}`",
                    i + 1
                ),
            ));
        };
        out.push((host.to_string(), n));
    }
    if out.is_empty() {
        return Err(Error::in_file(path, "no host in the MPI nodes file"));
    }
    Ok(out)
}

/// The host of world rank `rank` under the nodes-file rule: slots in line
/// order, wrapping around.
pub fn host_of_rank(nodes: &[(String, u32)], rank: u32) -> Option<&str> {
    let total: u64 = nodes.iter().map(|(_, n)| u64::from(*n)).sum();
    if total == 0 {
        return None;
    }
    let mut r = u64::from(rank) % total;
    for (h, n) in nodes {
        if r < u64::from(*n) {
            return Some(h);
        }
        r -= u64::from(*n);
    }
    None
}
