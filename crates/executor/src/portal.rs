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
    pub notices: Rc<RefCell<Vec<PgError>>>,
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

/// Where a portal's rows come from.
enum Source {
    /// A query's operators, run as its rows are fetched.
    Plan(Running),
    /// Rows a statement made before its end (a write's RETURNING rows, in memory up to
    /// `work_mem`, then in a temporary file), read back in order; the tag it ends with.
    Made(Box<Made>),
}

/// [`Source::Made`]'s rows, the context they are shown in and their statement's tag.
struct Made {
    rows: Box<dyn Iterator<Item = PgResult<Row>>>,
    text: common::value::TextContext,
    tag: String,
}

impl Source {
    fn next(&mut self) -> PgResult<Option<Row>> {
        match self {
            Source::Plan(running) => running.with_dependent_mut(|_, op| op.next()),
            Source::Made(made) => made.rows.next().transpose(),
        }
    }
}

/// A query's running operators and what they borrow.
pub struct Portal {
    source: Source,
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
            notices: &s.notices,
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
            let (PlannedStatement::Query { plan, .. } | PlannedStatement::CopyTo { plan, .. }) =
                stmt
            else {
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
            source: Source::Plan(running),
            fetched: 0,
            done: false,
            pending: None,
        })
    }

    /// A portal over rows already made: a write's RETURNING rows, too many to hold in
    /// memory, sent as a query's are (executor rule 8). Their statement ends with `tag`.
    pub(crate) fn made(
        rows: crate::spill::RowStore,
        text: common::value::TextContext,
        tag: String,
    ) -> Portal {
        Portal {
            source: Source::Made(Box::new(Made {
                rows: Box::new(rows.drain()),
                text,
                tag,
            })),
            fetched: 0,
            done: false,
            pending: None,
        }
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
        let result = (|| {
            while rows.len() < max && bytes < max_bytes {
                match self.source.next()? {
                    Some(r) => {
                        bytes += crate::env::row_bytes(&r);
                        rows.push(r);
                    }
                    None => return Ok(true),
                }
            }
            Ok(false)
        })();
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

    /// The next row, if any (a cursor's reads: no batch to allocate).
    pub fn next_row(&mut self) -> PgResult<Option<Row>> {
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        if self.done {
            return Ok(None);
        }
        match self.source.next() {
            Ok(Some(r)) => {
                self.fetched += 1;
                Ok(Some(r))
            }
            Ok(None) => {
                self.done = true;
                Ok(None)
            }
            Err(e) => {
                self.done = true;
                Err(e)
            }
        }
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
        match &self.source {
            Source::Plan(running) => &running.borrow_owner().session.borrow_owner().info.text,
            Source::Made(made) => &made.text,
        }
    }

    /// The command tag its statement ends with, where it is not a query's (`SELECT n`).
    pub fn tag(&self) -> Option<&str> {
        match &self.source {
            Source::Plan(_) => None,
            Source::Made(made) => Some(&made.tag),
        }
    }

    /// Whether its query reads table `oid` (DDL of its session may not change it
    /// meanwhile: PostgreSQL's 55006). Rows already made read nothing.
    pub fn reads_table(&self, oid: common::Oid) -> bool {
        match &self.source {
            Source::Plan(running) => running
                .borrow_owner()
                .plan
                .get()
                .is_ok_and(|p| p.reads_table(oid)),
            Source::Made(_) => false,
        }
    }

    /// The running query, for what a cursor reads of it (a cursor's portal is a query's).
    fn running(&self) -> PgResult<&Running> {
        match &self.source {
            Source::Plan(running) => Ok(running),
            Source::Made(_) => Err(PgError::internal("a cursor over rows already made")),
        }
    }
}

/// PostgreSQL's error for a backward move of a cursor that cannot scroll.
fn forward_only() -> PgError {
    PgError::new(
        common::SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
        "cursor can only scan forward",
    )
    .with_hint("Declare it with SCROLL option to enable backward scan.")
}

/// A cursor (DECLARE ... CURSOR): a portal moved by FETCH and MOVE as PostgreSQL moves
/// one. A cursor that scrolls keeps the rows it has read (in memory up to `work_mem`,
/// then in a temporary file), so moving back reads them again rather than running the
/// plan backward; one that does not scroll keeps none. WITH HOLD keeps its rows after its
/// transaction commits ([`Cursor::hold`]).
pub struct Cursor {
    /// `None` once held: every row left is in `store`.
    portal: Option<Portal>,
    /// Rows `base + 1 ..`, as read.
    store: Option<crate::spill::RowStore>,
    base: u64,
    scroll: bool,
    /// Rows read from the portal so far (the last is row `read`).
    read: u64,
    /// The portal has returned its last row: there are `read` rows in all.
    exhausted: bool,
    /// 0 before the first row, k on row k, `read + 1` after the last.
    pos: u64,
    /// What its stores are made with: `work_mem` as it was declared, the temporary
    /// files' place and the session's budget for them.
    store_limit: usize,
    temp_space: Arc<storage::tempfile::TempSpace>,
    temp_budget: Arc<storage::tempfile::TempBudget>,
}

/// The rows a FETCH takes from its cursor at a time when it keeps them in a store
/// ([`Cursor::fetch_stored`]).
const FETCH_BATCH: u64 = 1000;

impl Cursor {
    /// A cursor over `portal`; `scroll`: `Some(true)` SCROLL, `Some(false)` NO SCROLL,
    /// `None` as the plan allows ([`planner::Plan::supports_backward`]).
    pub fn new(portal: Portal, scroll: Option<bool>) -> PgResult<Cursor> {
        let plan_scrolls = match portal.running()?.borrow_owner().plan.get()? {
            PlannedStatement::Query { plan, .. } => plan.supports_backward(),
            _ => false,
        };
        let scroll = scroll.unwrap_or(plan_scrolls);
        let sources = portal.running()?.borrow_owner().session.borrow_owner();
        let store_limit = (sources.settings.planner().work_mem * 1024.0) as usize;
        let temp_space = sources.shared.pool().smgr().temp().clone();
        let temp_budget = sources.temp.clone();
        let mut cursor = Cursor {
            portal: Some(portal),
            store: None,
            base: 0,
            scroll,
            read: 0,
            exhausted: false,
            pos: 0,
            store_limit,
            temp_space,
            temp_budget,
        };
        if scroll {
            cursor.store = Some(cursor.new_store()?);
        }
        Ok(cursor)
    }

    fn new_store(&self) -> PgResult<crate::spill::RowStore> {
        Ok(crate::spill::RowStore::new(
            self.store_limit,
            self.temp_space.clone(),
            Some(self.temp_budget.clone()),
        ))
    }

    /// FETCH FORWARD `count` (ALL: `None`) of more rows than a batch: the rows go to a
    /// store as the cursor moves (in memory up to `work_mem`, then in a temporary file)
    /// and are sent from there as a query's are (`text`: the context they are shown
    /// in), so a FETCH ALL of a big cursor holds a bounded part of it (executor rule 8).
    pub fn fetch_stored(
        &mut self,
        count: Option<u64>,
        text: common::value::TextContext,
    ) -> PgResult<Portal> {
        let mut store = self.new_store()?;
        let mut n = 0u64;
        loop {
            let want = count.map_or(FETCH_BATCH, |c| (c - n).min(FETCH_BATCH));
            if want == 0 {
                break;
            }
            let (rows, got) = self.fetch(
                sql::parser::FetchDirection::Forward(Some(want as i64)),
                true,
            )?;
            for r in rows {
                let bytes = crate::env::row_bytes(&r);
                store.push(r, bytes)?;
            }
            n += got;
            if got < want {
                break;
            }
        }
        Ok(Portal::made(store, text, format!("FETCH {n}")))
    }

    pub fn scrollable(&self) -> bool {
        self.scroll
    }

    /// The next row from the portal, kept if the cursor keeps rows.
    fn pull(&mut self) -> PgResult<Option<Row>> {
        if self.exhausted {
            return Ok(None);
        }
        let Some(portal) = self.portal.as_mut() else {
            self.exhausted = true;
            return Ok(None);
        };
        match portal.next_row()? {
            Some(r) => {
                self.read += 1;
                if let Some(store) = &mut self.store {
                    store.push(r.clone(), crate::env::row_bytes(&r))?;
                }
                Ok(Some(r))
            }
            None => {
                self.exhausted = true;
                Ok(None)
            }
        }
    }

    /// Row `k` (from 1), if there is one: kept, or read on from the portal.
    fn row(&mut self, k: u64) -> PgResult<Option<Row>> {
        while self.read < k {
            if self.pull()?.is_none() {
                return Ok(None);
            }
        }
        match &mut self.store {
            Some(store) if k > self.base => store.get((k - self.base - 1) as usize),
            _ if k == self.read && !self.scroll => Err(PgError::internal(
                "a cursor that keeps no rows read one again",
            )),
            _ => Ok(None),
        }
    }

    /// Move forward up to `count` rows, returning each one landed on (if `keep`).
    fn forward(&mut self, count: u64, keep: bool) -> PgResult<(Vec<Row>, u64)> {
        let mut rows = Vec::new();
        let mut n = 0;
        while n < count {
            if self.exhausted && self.pos > self.read {
                break;
            }
            let k = self.pos + 1;
            // A cursor that keeps no rows reads each new one once, here.
            let row = if self.store.is_none() && k == self.read + 1 {
                self.pull()?
            } else {
                self.row(k)?
            };
            self.pos = k;
            match row {
                Some(r) => {
                    n += 1;
                    if keep {
                        rows.push(r);
                    }
                }
                None => break,
            }
        }
        Ok((rows, n))
    }

    /// Move back up to `count` rows, returning each one landed on (if `keep`).
    fn backward(&mut self, count: u64, keep: bool) -> PgResult<(Vec<Row>, u64)> {
        if !self.scroll {
            return Err(forward_only());
        }
        let mut rows = Vec::new();
        let mut n = 0;
        while n < count {
            if self.pos <= self.base + 1 {
                self.pos = 0;
                break;
            }
            let k = self.pos - 1;
            self.pos = k;
            if let Some(r) = self.row(k)? {
                n += 1;
                if keep {
                    rows.push(r);
                }
            }
        }
        Ok((rows, n))
    }

    /// Go to row `k` and return it (if `keep`); past the last row, stop after it.
    fn go_to(&mut self, k: u64, keep: bool) -> PgResult<(Vec<Row>, u64)> {
        match self.row(k)? {
            Some(r) => {
                self.pos = k;
                Ok((if keep { vec![r] } else { Vec::new() }, 1))
            }
            None => {
                self.pos = self.read + 1;
                Ok((Vec::new(), 0))
            }
        }
    }

    /// FETCH (`keep`) or MOVE in `direction`, as PostgreSQL's `DoPortalRunFetch`: the
    /// rows landed on, and how many.
    pub fn fetch(
        &mut self,
        direction: sql::parser::FetchDirection,
        keep: bool,
    ) -> PgResult<(Vec<Row>, u64)> {
        use sql::parser::FetchDirection as D;
        let all = u64::MAX;
        match direction {
            // A count of 0 fetches the current row again, if the cursor is on one.
            D::Forward(Some(0)) | D::Backward(Some(0)) | D::Relative(0) => {
                let on_row = self.pos >= 1 && self.pos <= self.read;
                if !on_row {
                    return Ok((Vec::new(), 0));
                }
                if !keep {
                    return Ok((Vec::new(), 1));
                }
                if !self.scroll {
                    return Err(forward_only());
                }
                let row = self.row(self.pos)?;
                let n = u64::from(row.is_some());
                Ok((row.into_iter().collect(), n))
            }
            D::Forward(n) => self.forward(n.map_or(all, |n| n as u64), keep),
            D::Backward(n) => self.backward(n.map_or(all, |n| n as u64), keep),
            D::Absolute(0) => {
                if self.pos > 0 && !self.scroll {
                    return Err(forward_only());
                }
                self.pos = 0;
                Ok((Vec::new(), 0))
            }
            D::Absolute(n) if n > 0 => {
                let n = n as u64;
                if n <= self.pos {
                    if !self.scroll {
                        return Err(forward_only());
                    }
                    return self.go_to(n, keep);
                }
                // Forward to row n, returning only it.
                let skip = n - self.pos - 1;
                let (_, skipped) = self.forward(skip, false)?;
                if skipped < skip {
                    return Ok((Vec::new(), 0));
                }
                self.forward(1, keep)
            }
            D::Absolute(n) => {
                if !self.scroll {
                    return Err(forward_only());
                }
                while self.pull()?.is_some() {}
                let back = n.unsigned_abs();
                if back > self.read {
                    self.pos = 0;
                    return Ok((Vec::new(), 0));
                }
                self.go_to(self.read + 1 - back, keep)
            }
            D::Relative(n) if n > 0 => {
                let n = n as u64;
                let (_, skipped) = self.forward(n - 1, false)?;
                if skipped < n - 1 {
                    return Ok((Vec::new(), 0));
                }
                self.forward(1, keep)
            }
            D::Relative(n) => {
                if !self.scroll {
                    return Err(forward_only());
                }
                let back = n.unsigned_abs();
                let (_, moved) = self.backward(back - 1, false)?;
                if moved < back - 1 {
                    return Ok((Vec::new(), 0));
                }
                self.backward(1, keep)
            }
        }
    }

    /// Whether its query reads table `oid` (a held cursor's rows read nothing).
    pub fn reads_table(&self, oid: common::Oid) -> bool {
        self.portal.as_ref().is_some_and(|p| p.reads_table(oid))
    }

    /// WITH HOLD, at its transaction's commit: the rows not yet read are kept (all of
    /// them for a cursor that scrolls), so the cursor no longer needs its transaction,
    /// snapshot or plan.
    pub fn hold(&mut self) -> PgResult<()> {
        if self.portal.is_none() {
            return Ok(());
        }
        if self.store.is_none() {
            self.store = Some(self.new_store()?);
            self.base = self.read;
        }
        while self.pull()?.is_some() {}
        self.portal = None;
        Ok(())
    }
}
