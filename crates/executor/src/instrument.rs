//! EXPLAIN ANALYZE's instruments: each operator of a plan wrapped to count the rows it
//! returns, its time to the first row and in all, and its buffer accesses, numbered in
//! pre-order as `exec::build` builds them. Below EXPLAIN (which prints them) so that the
//! operators and DML can be counted without depending on it.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use common::PgResult;

use crate::eval::Row;
use crate::exec::Operator;

/// What ANALYZE counted for one plan node.
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeStats {
    pub executed: bool,
    pub rows: u64,
    /// Time until the first row was returned (or the end, if none was).
    pub first: Option<Duration>,
    pub total: Duration,
    pub removed: u64,
    /// Buffer accesses while the node made its rows (its children's included).
    pub buffers: storage::bufmgr::usage::RelUsage,
}

/// The counters of one EXPLAIN ANALYZE run, one per plan node in pre-order.
pub struct Instrumentation {
    timing: bool,
    /// Count buffer accesses (`storage::bufmgr::usage`, which the caller has started).
    buffers: bool,
    nodes: RefCell<Vec<NodeStats>>,
}

impl Instrumentation {
    pub fn new(timing: bool, buffers: bool) -> Instrumentation {
        Instrumentation {
            timing,
            buffers,
            nodes: RefCell::new(Vec::new()),
        }
    }

    /// The next node's number.
    pub(crate) fn register(&self) -> usize {
        let mut nodes = self.nodes.borrow_mut();
        nodes.push(NodeStats::default());
        nodes.len() - 1
    }

    pub fn stats(&self) -> Vec<NodeStats> {
        self.nodes.borrow().clone()
    }
}

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
}
