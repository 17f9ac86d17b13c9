//! Deadlock detection: a search of the wait-for graph (PostgreSQL's `deadlock.c`), run by a
//! waiter once it has waited `deadlock_timeout` (lock rule 12).

use std::collections::{HashMap, HashSet};

use common::ids::Oid;

use super::mode::LockMode;
use super::table::PartitionState;
use super::tag::LockTag;

/// One edge of a cycle: `pid` waits for `mode` on `tag`, blocked by `blocker`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WaitStep {
    pub(crate) pid: u32,
    pub(crate) tag: LockTag,
    pub(crate) mode: LockMode,
    pub(crate) blocker: u32,
}

/// PostgreSQL's detail for a deadlock: one line per step, the first the victim's.
pub(crate) fn describe(cycle: &[WaitStep], database_oid: Oid) -> String {
    let lines: Vec<String> = cycle
        .iter()
        .map(|s| {
            format!(
                "Process {} waits for {} on {}; blocked by process {}.",
                s.pid,
                s.mode.name(),
                s.tag.describe(database_oid),
                s.blocker
            )
        })
        .collect();
    lines.join("\n")
}

/// Where a waiting session sits: its lock, the partition holding it, and what it wants.
struct Waiting {
    tag: LockTag,
    partition: usize,
    mode: LockMode,
}

/// Looks for a cycle of waits that starts and ends at `me`, in the table as `parts` shows
/// it. The caller holds every partition, so the graph is one consistent state: no edge
/// appears or disappears during the search. Fast-path locks are not in it and need not be
/// (lock rule 12).
///
/// Edges, from a waiter: to every other holder of a mode that conflicts with the mode it
/// waits for ("hard" edges), and to every other waiter ahead of it in the same queue that
/// wants a conflicting mode ("soft" edges: it waits behind them by FIFO). Depth-first,
/// each session expanded at most once: O(sessions + edges).
pub(crate) fn find_cycle(parts: &[&PartitionState], me: u32) -> Option<Vec<WaitStep>> {
    let mut waiting: HashMap<u32, Waiting> = HashMap::new();
    for (partition, part) in parts.iter().enumerate() {
        for (tag, entry) in &part.locks {
            for w in &entry.waiters {
                waiting.insert(
                    w.pid,
                    Waiting {
                        tag: *tag,
                        partition,
                        mode: w.mode,
                    },
                );
            }
        }
    }
    let blockers = |pid: u32| -> Vec<u32> {
        let Some(w) = waiting.get(&pid) else {
            return Vec::new();
        };
        let entry = &parts[w.partition].locks[&w.tag];
        let conflicts = w.mode.conflicts();
        let mut out: Vec<u32> = entry
            .holders
            .iter()
            .filter(|h| h.pid != pid && h.mask & conflicts != 0)
            .map(|h| h.pid)
            .collect();
        for ahead in entry.waiters.iter().take_while(|a| a.pid != pid) {
            if ahead.mode.conflicts_with(w.mode) && !out.contains(&ahead.pid) {
                out.push(ahead.pid);
            }
        }
        out
    };

    // The path from `me`, each session with its blockers and how many were tried.
    let mut path: Vec<(u32, Vec<u32>, usize)> = vec![(me, blockers(me), 0)];
    let mut seen: HashSet<u32> = HashSet::from([me]);
    while let Some((_, next, tried)) = path.last_mut() {
        let Some(&b) = next.get(*tried) else {
            path.pop();
            continue;
        };
        *tried += 1;
        if b == me {
            return Some(
                path.iter()
                    .map(|(pid, next, tried)| {
                        let w = &waiting[pid];
                        WaitStep {
                            pid: *pid,
                            tag: w.tag,
                            mode: w.mode,
                            blocker: next[*tried - 1],
                        }
                    })
                    .collect(),
            );
        }
        if seen.insert(b) && waiting.contains_key(&b) {
            path.push((b, blockers(b), 0));
        }
    }
    None
}
