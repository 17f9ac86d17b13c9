//! What plan nodes and expressions share, below both: a row, the operator interface,
//! and [`Env`], the statement's environment every operator and expression evaluates in.
//! Subqueries, which are plans, are reached through [`SubLinks`], which the executor's
//! subquery module implements, so that expression evaluation does not depend on the plan
//! nodes (executor rule 1).

use access::nbtree::RootCache;
use common::{DataType, PgResult, Value};
use sql::bound::SubLink;
use storage::bufmgr::BufferPool;

pub type Row = Vec<Value>;

/// Runs the subqueries of a statement's expressions (PostgreSQL's SubPlans), with the
/// plans the planner made for them.
pub trait SubLinks {
    /// The value of `link` (EXISTS, scalar, `op ANY / ALL`, ARRAY) for the outer row
    /// `row`, as type `ty`.
    fn eval_sublink(
        &self,
        link: &SubLink,
        row: &[Value],
        env: &Env<'_>,
        ty: &DataType,
    ) -> PgResult<Value>;
}

pub trait Operator {
    fn next(&mut self) -> PgResult<Option<Row>>;

    /// Rows this node read and its filter dropped so far (EXPLAIN ANALYZE's "Rows Removed
    /// by Filter").
    fn rows_removed(&self) -> u64 {
        0
    }

    /// Pairs of rows a join read and its join condition (the Join Filter) dropped so far
    /// (EXPLAIN ANALYZE's "Rows Removed by Join Filter").
    fn join_removed(&self) -> u64 {
        0
    }

    /// What the node's sort or hash table held, for EXPLAIN ANALYZE.
    fn memory(&self) -> Option<crate::instrument::MemoryUsage> {
        None
    }

    /// The heap pages a bitmap heap scan has read so far, exact and lossy (EXPLAIN
    /// ANALYZE's `Heap Blocks`); `None` for other nodes.
    fn heap_blocks(&self) -> Option<(u64, u64)> {
        None
    }

    /// The heap tuples an index-only scan has read so far (EXPLAIN ANALYZE's `Heap
    /// Fetches`); `None` for other nodes.
    fn heap_fetches(&self) -> Option<u64> {
        None
    }
}

/// The bytes a row takes in memory: its values, and what they point to (what sorts and
/// hash tables account against `work_mem`).
pub fn row_bytes(row: &[Value]) -> usize {
    let heap: usize = row
        .iter()
        .map(|v| match v {
            Value::Text(s) | Value::Bpchar(s) => s.capacity(),
            Value::Bytea(b) => b.capacity(),
            Value::Numeric(_) => 16,
            Value::Array(_) => 64,
            _ => 0,
        })
        .sum();
    std::mem::size_of::<Row>() + std::mem::size_of_val(row) + heap
}

/// The memory a sort (`work_mem`) or a hash table (`work_mem × hash_mem_multiplier`)
/// may use, in bytes, by the session's settings.
pub fn work_mem_bytes(env: &Env<'_>, hash: bool) -> usize {
    let s = env.session.settings.planner();
    let factor = if hash { s.hash_mem_multiplier } else { 1.0 };
    (s.work_mem * 1024.0 * factor) as usize
}

/// What operators read from: pages, cached btree roots, and the snapshot that decides
/// which tuple versions they see.
#[derive(Clone, Copy)]
pub struct Env<'a> {
    /// The session: what expressions read of it (settings, clock, catalog view).
    pub session: &'a crate::session::Session<'a>,
    pub pool: &'a BufferPool,
    pub roots: &'a RootCache,
    pub tx: &'a txn::Tx,
    pub snapshot: &'a txn::Snapshot,
    /// Table scans append each row's address (`exec::lock_rows::tid_value`) after its columns:
    /// set below a LockRows node and for an UPDATE's or DELETE's rows.
    pub emit_tid: bool,
    /// Below a LockRows node: the rows are locked, not written (a partition is locked
    /// RowShare, as PostgreSQL's SELECT ... FOR UPDATE locks it).
    pub row_locks: bool,
    /// EXPLAIN ANALYZE: every operator is wrapped to count its rows and time.
    pub instrument: Option<&'a crate::instrument::Instrumentation>,
    /// Inside a subquery: its outer values (`ExprKind::Outer`).
    pub outer: &'a [Value],
    /// The statement's subquery plans and results.
    pub subqueries: &'a dyn SubLinks,
    /// A prepared statement's parameter values (`ExprKind::Param`), when its plan was
    /// made with the parameters in place (a generic plan).
    pub params: Params<'a>,
}

/// The values of a prepared statement's parameters, each of the type Parse gave it.
#[derive(Clone, Copy, Default)]
pub struct Params<'a> {
    pub values: &'a [Value],
    pub types: &'a [DataType],
}
