//! EXPLAIN ANALYZE's wrapper around each operator: counts what it returns into the
//! node's `instrument::NodeStats`.

use std::time::Instant;

use crate::instrument::Instrumentation;

#[allow(unused_imports)]
use super::*;
/// An operator that counts what its inner operator returns.
pub(crate) struct Instrumented<'a> {
    inner: Box<dyn Operator + 'a>,
    ins: &'a Instrumentation,
    id: usize,
}

impl<'a> Instrumented<'a> {
    pub(crate) fn new(
        inner: Box<dyn Operator + 'a>,
        ins: &'a Instrumentation,
        id: usize,
    ) -> Instrumented<'a> {
        Instrumented { inner, ins, id }
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
        n.removed = removed;
        if let Some(h) = self.inner.memory() {
            n.memory = Some(h);
        }
        if let Some(b) = self.inner.heap_blocks() {
            n.heap_blocks = Some(b);
        }
        if let Some(b) = before {
            let d = usage::total().since(b);
            n.buffers.hits += d.hits;
            n.buffers.reads += d.reads;
            n.buffers.writes += d.writes;
        }
        if let Some(s) = start {
            n.total += s.elapsed();
        }
        if matches!(r, Ok(Some(_))) {
            n.rows += 1;
        }
        if n.first.is_none() {
            n.first = Some(n.total);
        }
        r
    }

    fn rows_removed(&self) -> u64 {
        self.inner.rows_removed()
    }

    fn memory(&self) -> Option<crate::instrument::MemoryUsage> {
        self.inner.memory()
    }

    fn heap_blocks(&self) -> Option<u64> {
        self.inner.heap_blocks()
    }
}
