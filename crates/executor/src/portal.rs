//! A portal: a query's running operator tree, kept between protocol messages so that
//! rows go to the client as they are made and an Execute with a row limit (or a cursor's
//! FETCH) goes on where the last one stopped (executor rule 8).
//!
//! The operators borrow what they run in (`Env`: the session, the snapshot, the plan,
//! the parameter values, the subquery cache). A portal owns all of those ([`Sources`]
//! and [`Owned`]) and its operator tree in one value, through `self_cell`: the tree is
//! built borrowing the owned part, and dropped before it.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use access::nbtree::RootCache;
use access::sequence::Sequences;
use catalog::{Catalog, CatalogSnapshot};
use common::session::SessionInfo;
use common::{DataType, PgError, PgResult, Value};
use planner::PlannedStatement;
use storage::bufmgr::BufferPool;

use crate::env::{Env, Operator, Params, Row};
use crate::exec::subquery::SubqueryCache;
use crate::session::{SequenceMemory, Session, SessionSettings};

/// What a database shares with every session's statements.
pub trait Shared {
    fn pool(&self) -> &BufferPool;
    fn catalog(&self) -> &Catalog;
    fn roots(&self) -> &RootCache;
    fn sequences(&self) -> &Sequences;
}

/// What a portal's statement reads of its session, owned: a [`Session`] is made from it.
pub struct Sources {
    pub shared: Arc<dyn Shared + Send + Sync>,
    pub tx: Rc<txn::Tx>,
    /// The session as the statement started: its clock, zone and catalog for text.
    pub info: SessionInfo,
    pub catalog: Arc<CatalogSnapshot>,
    pub settings: Arc<dyn SessionSettings>,
    pub sequence_memory: Rc<RefCell<SequenceMemory>>,
    pub read_only: bool,
    pub temp: Arc<storage::tempfile::TempBudget>,
}

self_cell::self_cell!(
    /// A portal's session, made from what it owns.
    struct SessionCell {
        owner: Sources,
        #[covariant]
        dependent: Session,
    }
);

/// A portal's plan: one made for this execution, or a prepared statement's generic plan
/// (kept in its cache entry).
pub enum PlanOf {
    Own(Box<PlannedStatement>),
    Generic(Arc<planner::CachedPlan>),
}

impl PlanOf {
    fn get(&self) -> PgResult<&PlannedStatement> {
        match self {
            PlanOf::Own(p) => Ok(p),
            PlanOf::Generic(c) => c
                .generic_plan()
                .ok_or_else(|| PgError::internal("a portal's generic plan is gone")),
        }
    }
}

/// Everything a portal's operators borrow.
struct Owned {
    session: SessionCell,
    snapshot: Arc<txn::Snapshot>,
    plan: PlanOf,
    values: Vec<Value>,
    types: Vec<DataType>,
    subqueries: SubqueryCache,
}

type Tree<'a> = Box<dyn Operator + 'a>;

self_cell::self_cell!(
    struct Running {
        owner: Owned,
        #[covariant]
        dependent: Tree,
    }
);

/// A query's running operators and what they borrow.
pub struct Portal {
    running: Running,
    /// Rows returned so far.
    fetched: u64,
    /// The operators returned their last row (or failed): nothing more comes.
    done: bool,
    /// An error met after rows of the same fetch: returned by the next, so the rows
    /// made before it go out first, as PostgreSQL sends them.
    pending: Option<PgError>,
}

impl std::fmt::Debug for Portal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Portal")
            .field("fetched", &self.fetched)
            .field("done", &self.done)
            .finish()
    }
}

impl Portal {
    /// Start the query `plan` (a `PlannedStatement::Query`) in the session `sources`
    /// describes, seeing `snapshot`, with a prepared statement's parameter values (for
    /// a generic plan). Nothing is read until the first [`Portal::fetch`], but what
    /// starting a scan does (locking a partition, evaluating a key) is done here, and
    /// its errors are returned here.
    pub fn open(
        sources: Sources,
        snapshot: Arc<txn::Snapshot>,
        plan: PlanOf,
        values: Vec<Value>,
        types: Vec<DataType>,
    ) -> PgResult<Portal> {
        let session = SessionCell::new(sources, |s| Session {
            info: &s.info,
            catalog: s.catalog.clone(),
            settings: &*s.settings,
            sequence_memory: &s.sequence_memory,
            read_only: s.read_only,
            pool: s.shared.pool(),
            sequences: s.shared.sequences(),
            tx: &s.tx,
            live_catalog: s.shared.catalog(),
            temp: &s.temp,
        });
        // Its own transaction's later statements stay unseen, as they would be by a
        // statement that had run to its end.
        let snapshot = Arc::new(txn::Snapshot {
            cid: Some(session.borrow_owner().tx.cid()),
            ..(*snapshot).clone()
        });
        let owned = Owned {
            session,
            snapshot,
            plan,
            values,
            types,
            subqueries: SubqueryCache::default(),
        };
        let running = Running::try_new(owned, |o| -> PgResult<Tree<'_>> {
            let stmt = o.plan.get()?;
            let PlannedStatement::Query { plan, .. } = stmt else {
                return Err(PgError::internal("a portal runs a query"));
            };
            o.subqueries.install(stmt.subplans());
            let sources = o.session.borrow_owner();
            let env = Env {
                session: o.session.borrow_dependent(),
                pool: sources.shared.pool(),
                roots: sources.shared.roots(),
                tx: &sources.tx,
                snapshot: &o.snapshot,
                emit_tid: false,
                row_locks: false,
                instrument: None,
                outer: &[],
                subqueries: &o.subqueries,
                params: Params {
                    values: &o.values,
                    types: &o.types,
                },
            };
            crate::exec::build(plan, env)
        })?;
        Ok(Portal {
            running,
            fetched: 0,
            done: false,
            pending: None,
        })
    }

    /// Up to `max` more rows, fewer at the end or once they hold `max_bytes`
    /// ([`crate::env::row_bytes`]; at least one row). An error is returned once the
    /// rows before it have been; after it the portal returns nothing more.
    pub fn fetch(&mut self, max: usize, max_bytes: usize) -> PgResult<Vec<Row>> {
        let mut rows = Vec::new();
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        if self.done {
            return Ok(rows);
        }
        let mut bytes = 0;
        let result = self.running.with_dependent_mut(|_, op| {
            while rows.len() < max && bytes < max_bytes {
                match op.next()? {
                    Some(r) => {
                        bytes += crate::env::row_bytes(&r);
                        rows.push(r);
                    }
                    None => return Ok(true),
                }
            }
            Ok(false)
        });
        match result {
            Ok(end) => {
                self.done = end;
                self.fetched += rows.len() as u64;
                Ok(rows)
            }
            Err(e) => {
                self.done = true;
                if rows.is_empty() {
                    return Err(e);
                }
                self.pending = Some(e);
                self.fetched += rows.len() as u64;
                Ok(rows)
            }
        }
    }

    /// Every row left.
    pub fn fetch_all(&mut self) -> PgResult<Vec<Row>> {
        let mut all = Vec::new();
        while !self.is_done() {
            all.extend(self.fetch(usize::MAX, usize::MAX)?);
        }
        Ok(all)
    }

    /// The operators have returned their last row (and no error waits to be
    /// returned).
    pub fn is_done(&self) -> bool {
        self.done && self.pending.is_none()
    }

    /// Rows returned so far.
    pub fn fetched(&self) -> u64 {
        self.fetched
    }

    /// The context its rows' values are shown in: the session's as the query started.
    pub fn text(&self) -> &common::value::TextContext {
        &self.running.borrow_owner().session.borrow_owner().info.text
    }
}
