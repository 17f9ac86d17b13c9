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

    /// A hash join's table, for EXPLAIN ANALYZE.
    fn hash_usage(&self) -> Option<crate::instrument::HashUsage> {
        None
    }
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
    /// set below a LockRows node.
    pub emit_tid: bool,
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
