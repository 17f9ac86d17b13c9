//! EXPLAIN ANALYZE's counters: per plan node, the rows it returned, its time to the first
//! row and in all, and its buffer accesses, numbered in pre-order as `exec::build`
//! builds them (`exec::instrumented` wraps each operator to count). Below the operators
//! and EXPLAIN (which prints them), so that operators and DML can be counted without
//! depending on EXPLAIN.

use std::cell::{Cell, RefCell};
use std::time::Duration;

/// What ANALYZE counted for one plan node.
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeStats {
    pub executed: bool,
    /// The times the node ran: more than once as a nested loop's inner side read again
    /// (PostgreSQL's `nloops`; EXPLAIN shows rows and times per loop).
    pub loops: u64,
    /// Rows returned, over all loops.
    pub rows: u64,
    /// Time until each loop's first row was returned (or its end, if none was), summed
    /// over the loops.
    pub first: Duration,
    pub total: Duration,
    /// Rows read and dropped by the node's filter, over all loops.
    pub removed: u64,
    /// Pairs of rows a join's condition dropped, over all loops.
    pub join_removed: u64,
    /// Buffer accesses while the node made its rows (its children's included).
    pub buffers: storage::bufmgr::usage::RelUsage,
    /// What the node's sort or hash table held.
    pub memory: Option<MemoryUsage>,
    /// A bitmap heap scan's heap pages read, exact and lossy (`Heap Blocks: exact=N
    /// lossy=M`).
    pub heap_blocks: Option<(u64, u64)>,
    /// An index-only scan's heap tuples read, over all loops (`Heap Fetches: N`).
    pub heap_fetches: Option<u64>,
}

/// What a sort or hash table held, accounted against the memory it may use: `work_mem`
/// for a sort, `work_mem × hash_mem_multiplier` for a hash table (PostgreSQL's hash_mem).
/// A hash table's buckets (the keys it holds without growing) and batches (1: it is in
/// memory); the bytes of its rows and keys now and at most. A sort past its limit writes
/// sorted runs to temporary files and merges them, and a hash aggregate writes the rows
/// of groups it cannot hold to files (`disk`: their bytes; `batches` counts those
/// files, plus one); a hash join goes in batches, the later ones' rows in files (a
/// later batch that outgrows the limit by itself still runs in memory, and `peak`
/// shows by how much).
#[derive(Clone, Copy, Debug, Default)]
pub struct MemoryUsage {
    /// A sort kept only a LIMIT's rows, in a heap (`top-N heapsort`).
    pub top_n: bool,
    /// Bytes a sort wrote to temporary files (`external merge  Disk: NkB`); 0 in memory.
    pub disk: u64,
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
    /// While a subtree is built again (a nested loop's inner side run again): the number
    /// its next node had the first time.
    replay: Cell<Option<usize>>,
}

impl Instrumentation {
    pub fn new(timing: bool, buffers: bool) -> Instrumentation {
        Instrumentation {
            timing,
            buffers,
            nodes: RefCell::new(Vec::new()),
            replay: Cell::new(None),
        }
    }

    /// The next node's number: a new one, or while [`Self::replaying`], the number the
    /// same node had when first built.
    pub(crate) fn register(&self) -> usize {
        if let Some(id) = self.replay.get() {
            self.replay.set(Some(id + 1));
            return id;
        }
        let mut nodes = self.nodes.borrow_mut();
        nodes.push(NodeStats::default());
        nodes.len() - 1
    }

    /// The number the next node built will get.
    pub(crate) fn next_id(&self) -> usize {
        self.replay
            .get()
            .unwrap_or_else(|| self.nodes.borrow().len())
    }

    /// `build`, run with the nodes it builds numbered from `first` again: a subtree
    /// built anew counts into the same nodes.
    pub(crate) fn replaying<T>(&self, first: usize, build: impl FnOnce() -> T) -> T {
        let saved = self.replay.replace(Some(first));
        let built = build();
        self.replay.set(saved);
        built
    }

    /// Change node `id`'s counters: what an operator counts for a node it runs inside
    /// itself (an index nested loop's inner lookups).
    pub(crate) fn record(&self, id: usize, f: impl FnOnce(&mut NodeStats)) {
        if let Some(n) = self.nodes.borrow_mut().get_mut(id) {
            f(n);
        }
    }

    pub fn stats(&self) -> Vec<NodeStats> {
        self.nodes.borrow().clone()
    }
}
