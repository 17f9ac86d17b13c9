//! Deadlock detection: a search of the wait-for graph (PostgreSQL's `deadlock.c`), run by a
//! waiter once it has waited `deadlock_timeout` (lock rule 12).

use std::collections::{HashMap, HashSet};

use common::ids::Oid;

use super::mode::LockMode;
use super::table::PartitionState;
use super::tag::LockTag;

/// How many wait queues a check may reorder to break soft cycles before it gives up and
/// declares a deadlock (PostgreSQL bounds its search by the number of sessions; a cycle
/// needing more than a few reorders is rare enough to report).
const QUEUE_REORDERS_MAX: usize = 8;

/// One edge of a cycle: `pid` waits for `mode` on `tag`, blocked by `blocker`, which holds
/// a conflicting mode ("hard") or waits ahead of it in the queue for one ("soft").
#[derive(Clone, Copy, Debug)]
pub(crate) struct WaitStep {
    pub(crate) pid: u32,
    pub(crate) tag: LockTag,
    pub(crate) mode: LockMode,
    pub(crate) blocker: u32,
    pub(crate) soft: bool,
}

/// What a check concludes.
pub(crate) enum Verdict {
    /// No cycle through the checker, perhaps once these queues are reordered (each the
    /// waiters' pids in their new order); the caller applies the orders and wakes whoever
    /// they unblock.
    NoDeadlock { reorders: Vec<(LockTag, Vec<u32>)> },
    /// The checker closes this cycle, first step its own.
    Deadlock(Vec<WaitStep>),
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

/// Decides whether waiter `me` is deadlocked, in the table as `parts` shows it. The caller
/// holds every partition, so the graph is one consistent state.
///
/// A cycle made only of hard edges is a deadlock. A cycle with a soft edge (`w` waits
/// behind `v` in a queue) may be broken by putting `w` ahead of `v`, as PostgreSQL's
/// `DeadLockCheckRecurse` does: the check tries that, first soft edge first, and accepts
/// the new order if it leaves no cycle through `me` or through any waiter of a reordered
/// queue (a cycle elsewhere would go unnoticed: those waiters' own checks may be over).
/// PostgreSQL searches every combination of reversals; this one reverses greedily, at most
/// `QUEUE_REORDERS_MAX` times, and reports the original cycle when that fails.
pub(crate) fn check(parts: &[&PartitionState], me: u32) -> Verdict {
    let mut graph = Graph::new(parts);
    let Some(first) = graph.cycle_through(me) else {
        return Verdict::NoDeadlock {
            reorders: Vec::new(),
        };
    };
    let mut cycle = first.clone();
    for _ in 0..QUEUE_REORDERS_MAX {
        let Some(soft) = cycle.iter().find(|s| s.soft).copied() else {
            break;
        };
        graph.move_ahead(soft.tag, soft.pid, soft.blocker);
        let mut starts = vec![me];
        for order in graph.orders.values() {
            starts.extend(order.iter().copied());
        }
        match starts.into_iter().find_map(|p| graph.cycle_through(p)) {
            None => {
                return Verdict::NoDeadlock {
                    reorders: graph.orders.into_iter().collect(),
                };
            }
            Some(c) => cycle = c,
        }
    }
    Verdict::Deadlock(first)
}

/// Where a waiting session sits: its lock, the partition holding it, and what it wants.
struct Waiting {
    tag: LockTag,
    partition: usize,
    mode: LockMode,
}

/// A session on the search path: whom it waits for (pid, soft edge), and how many of
/// those the search has followed.
struct Frame {
    pid: u32,
    blockers: Vec<(u32, bool)>,
    tried: usize,
}

/// The wait-for graph, edges computed on demand from the table, with some queues possibly
/// in a hypothetical order.
struct Graph<'a> {
    parts: &'a [&'a PartitionState],
    waiting: HashMap<u32, Waiting>,
    /// Queues in a new order (pids), tried by `check`.
    orders: HashMap<LockTag, Vec<u32>>,
}

impl<'a> Graph<'a> {
    fn new(parts: &'a [&'a PartitionState]) -> Graph<'a> {
        let mut waiting = HashMap::new();
        for (partition, part) in parts.iter().enumerate() {
            for (tag, entry) in &part.locks {
                for w in &entry.waiters {
                    let at = Waiting {
                        tag: *tag,
                        partition,
                        mode: w.mode,
                    };
                    waiting.insert(w.pid, at);
                }
            }
        }
        Graph {
            parts,
            waiting,
            orders: HashMap::new(),
        }
    }

    /// The waiters of `w`'s lock in queue order, each with the mode it wants.
    fn queue(&self, w: &Waiting) -> Vec<(u32, LockMode)> {
        match self.orders.get(&w.tag) {
            Some(order) => order.iter().map(|p| (*p, self.waiting[p].mode)).collect(),
            None => self.parts[w.partition].locks[&w.tag]
                .waiters
                .iter()
                .map(|x| (x.pid, x.mode))
                .collect(),
        }
    }

    /// Whom `pid` waits for: holders of conflicting modes (hard), then waiters ahead of it
    /// wanting conflicting modes (soft). Empty if it does not wait.
    fn blockers(&self, pid: u32) -> Vec<(u32, bool)> {
        let Some(w) = self.waiting.get(&pid) else {
            return Vec::new();
        };
        let entry = &self.parts[w.partition].locks[&w.tag];
        let conflicts = w.mode.conflicts();
        let mut out: Vec<(u32, bool)> = entry
            .holders
            .iter()
            .filter(|h| h.pid != pid && h.mask & conflicts != 0)
            .map(|h| (h.pid, false))
            .collect();
        for (ahead, mode) in self.queue(w).into_iter().take_while(|(p, _)| *p != pid) {
            if mode.conflicts_with(w.mode) && !out.iter().any(|(p, _)| *p == ahead) {
                out.push((ahead, true));
            }
        }
        out
    }

    /// A cycle of waits from `start` back to it, if any: depth first, each session
    /// expanded at most once, so O(sessions + edges).
    fn cycle_through(&self, start: u32) -> Option<Vec<WaitStep>> {
        let frame = |pid| Frame {
            pid,
            blockers: self.blockers(pid),
            tried: 0,
        };
        let mut path: Vec<Frame> = vec![frame(start)];
        let mut seen: HashSet<u32> = HashSet::from([start]);
        while let Some(top) = path.last_mut() {
            let Some(&(b, _)) = top.blockers.get(top.tried) else {
                path.pop();
                continue;
            };
            top.tried += 1;
            if b == start {
                let steps = path.iter().map(|f| {
                    let w = &self.waiting[&f.pid];
                    let (blocker, soft) = f.blockers[f.tried - 1];
                    WaitStep {
                        pid: f.pid,
                        tag: w.tag,
                        mode: w.mode,
                        blocker,
                        soft,
                    }
                });
                return Some(steps.collect());
            }
            if seen.insert(b) && self.waiting.contains_key(&b) {
                path.push(frame(b));
            }
        }
        None
    }

    /// Puts waiter `pid` just ahead of waiter `blocker` in the queue of `tag`.
    fn move_ahead(&mut self, tag: LockTag, pid: u32, blocker: u32) {
        let w = &self.waiting[&pid];
        let mut order: Vec<u32> = self.queue(w).into_iter().map(|(p, _)| p).collect();
        order.retain(|p| *p != pid);
        let at = order
            .iter()
            .position(|p| *p == blocker)
            .expect("a soft edge's blocker waits in the same queue");
        order.insert(at, pid);
        self.orders.insert(tag, order);
    }
}
