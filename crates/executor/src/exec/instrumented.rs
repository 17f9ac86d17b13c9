//! EXPLAIN ANALYZE's wrapper around each operator: counts what it returns into the
//! node's `instrument::NodeStats`.

use std::time::Instant;

use crate::instrument::Instrumentation;

#[allow(unused_imports)]
use super::*;
/// An operator that counts what its inner operator returns. A node built again (a nested
/// loop's inner side run again) gets a new wrapper counting into the same node: one more
/// loop.
pub(crate) struct Instrumented<'a> {
    inner: Box<dyn Operator + 'a>,
    ins: &'a Instrumentation,
    id: usize,
    /// Whether this loop has been called yet.
    started: bool,
    /// What the node's earlier loops removed by filter and read of the heap (an
    /// operator counts its own run only).
    removed_before: u64,
    join_removed_before: u64,
    blocks_before: Option<(u64, u64)>,
    fetches_before: Option<u64>,
}

impl<'a> Instrumented<'a> {
    pub(crate) fn new(
        inner: Box<dyn Operator + 'a>,
        ins: &'a Instrumentation,
        id: usize,
    ) -> Instrumented<'a> {
        let n = ins.nodes.borrow()[id];
        Instrumented {
            inner,
            ins,
            id,
            started: false,
            removed_before: n.removed,
            join_removed_before: n.join_removed,
            blocks_before: n.heap_blocks,
            fetches_before: n.heap_fetches,
        }
    }
}

impl Operator for Instrumented<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        use storage::bufmgr::usage;
        let start = self.ins.timing.then(Instant::now);
        let before = self.ins.buffers.then(usage::total);
        let r = self.inner.next();
        let removed = self.inner.rows_removed();
        let mut nodes = self.ins.nodes.borrow_mut();
        let n = &mut nodes[self.id];
        n.executed = true;
        n.removed = self.removed_before + removed;
        n.join_removed = self.join_removed_before + self.inner.join_removed();
        if let Some(h) = self.inner.memory() {
            n.memory = Some(h);
        }
        if let Some((exact, lossy)) = self.inner.heap_blocks() {
            let (e0, l0) = self.blocks_before.unwrap_or((0, 0));
            n.heap_blocks = Some((e0 + exact, l0 + lossy));
        }
        if let Some(fetches) = self.inner.heap_fetches() {
            n.heap_fetches = Some(self.fetches_before.unwrap_or(0) + fetches);
        }
        if let Some(b) = before {
            let d = usage::total().since(b);
            n.buffers.hits += d.hits;
            n.buffers.reads += d.reads;
            n.buffers.writes += d.writes;
        }
        let took = start.map(|s| s.elapsed()).unwrap_or_default();
        n.total += took;
        if matches!(r, Ok(Some(_))) {
            n.rows += 1;
        }
        if !self.started {
            self.started = true;
            n.loops += 1;
            n.first += took;
        }
        r
    }

    fn rows_removed(&self) -> u64 {
        self.inner.rows_removed()
    }

    fn join_removed(&self) -> u64 {
        self.inner.join_removed()
    }

    fn memory(&self) -> Option<crate::instrument::MemoryUsage> {
        self.inner.memory()
    }

    fn heap_blocks(&self) -> Option<(u64, u64)> {
        self.inner.heap_blocks()
    }

    fn heap_fetches(&self) -> Option<u64> {
        self.inner.heap_fetches()
    }
}
