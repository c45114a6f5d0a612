//! Messages between ranks: the counts the summary gives, and the
//! causality check both message-passing sources (MPE, libRastro) apply
//! once a message's two ends are placed on the reference clock.

/// How early a receive may be before its send, after correction, without
/// counting as a causality violation: anchors and `.os`/`.traced` times
/// have microsecond resolution (docs/formats.md §7).
pub const TOLERANCE_NS: i64 = 1_000;

/// What a message-passing source matched, after clock correction.
#[derive(Debug, Clone, Default)]
pub struct MessageStats {
    /// Sends paired with their receive (one arrow each).
    pub matched: u64,
    /// Sends without a receive, per (sender rank, receiver rank, tag).
    pub unmatched_sends: u64,
    /// Receives without a send.
    pub unmatched_recvs: u64,
    /// Unmatched messages, described (`0->1 tag 7: 2 sends`).
    pub unmatched: Vec<String>,
    /// Receives before their send by at most the tolerance (1 µs).
    pub early_within_tolerance: u64,
    /// Per (sender host, receiver host): receives more than 1 µs before
    /// their send, and the worst (ns early, message description).
    pub violations: std::collections::BTreeMap<(String, String), (u64, i64, String)>,
    /// Every matched message between two hosts, as bounds on their
    /// clocks (`crate::clockfit`).
    pub clocks: crate::clockfit::Constraints,
}

impl MessageStats {
    /// Checks one paired message: a receive more than [`TOLERANCE_NS`]
    /// before its send is a violation, counted per host pair with the
    /// worst described; a smaller one is only counted. The hosts and the
    /// description are made only for a violation, off the common path.
    pub fn check_order(
        &mut self,
        send: i64,
        recv: i64,
        hosts: impl FnOnce() -> (String, String),
        describe: impl FnOnce() -> String,
    ) {
        let early = send - recv;
        if early > TOLERANCE_NS {
            let e = self
                .violations
                .entry(hosts())
                .or_insert((0, 0, String::new()));
            e.0 += 1;
            if early > e.1 {
                e.1 = early;
                e.2 = describe();
            }
        } else if early > 0 {
            self.early_within_tolerance += 1;
        }
    }
}
