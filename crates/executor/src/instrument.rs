//! EXPLAIN ANALYZE's counters: per plan node, the rows it returned, its time to the first
//! row and in all, and its buffer accesses, numbered in pre-order as `exec::build`
//! builds them (`exec::instrumented` wraps each operator to count). Below the operators
//! and EXPLAIN (which prints them), so that operators and DML can be counted without
//! depending on EXPLAIN.

use std::cell::RefCell;
use std::time::Duration;

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
    /// What the node's sort or hash table held.
    pub memory: Option<MemoryUsage>,
    /// A bitmap heap scan's heap pages read (`Heap Blocks: exact=N`; no bitmap is lossy).
    pub heap_blocks: Option<u64>,
}

/// What a sort or hash table held, accounted against the memory it may use: `work_mem`
/// for a sort, `work_mem × hash_mem_multiplier` for a hash table (PostgreSQL's hash_mem).
/// A hash table's buckets (the keys it holds without growing) and batches (1: it is in
/// memory); the bytes of its rows and keys now and at most. Nothing spills to disk yet:
/// past its limit a node still runs in memory, and `peak` shows by how much.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemoryUsage {
    /// A sort kept only a LIMIT's rows, in a heap (`top-N heapsort`).
    pub top_n: bool,
    pub buckets: usize,
    pub batches: usize,
    pub bytes: usize,
    pub peak: usize,
    pub limit: usize,
}

/// The counters of one EXPLAIN ANALYZE run, one per plan node in pre-order.
pub struct Instrumentation {
    pub(crate) timing: bool,
    /// Count buffer accesses (`storage::bufmgr::usage`, which the caller has started).
    pub(crate) buffers: bool,
    pub(crate) nodes: RefCell<Vec<NodeStats>>,
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
