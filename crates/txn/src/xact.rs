//! One session's transaction: its ids, savepoints, command ids and snapshots.
//!
//! - Ids are assigned lazily, at the first write (txn rule 5): a read-only transaction
//!   never takes one, writes no WAL and costs the shared state nothing but its snapshot.
//! - A savepoint is a subtransaction with an id of its own, assigned at its first write
//!   after its parent's (so a parent's id is always smaller). ROLLBACK TO aborts the ids
//!   of the levels it undoes at once; RELEASE hands them to the parent, and the top-level
//!   commit commits every id of the tree in one record.
//! - Command ids order the statements of a transaction: a row written by this
//!   transaction is seen by statements whose command id is greater than the row's. When
//!   one transaction both inserts and deletes a tuple, the tuple's single `t_cid` field
//!   holds a *combo* id that maps to both (PostgreSQL's combo command ids, kept here in
//!   the session's memory: only this transaction ever needs them).
//! - Snapshots: READ COMMITTED takes a new one per statement, REPEATABLE READ one per
//!   transaction, at its first statement.
//!
//! - Locks: the session's [`SessionLocks`] live here. Every lock is held to transaction
//!   end (or to ROLLBACK TO of the savepoint before it was taken). Each assigned id is
//!   locked in ExclusiveLock by its owner, so a writer that must wait for another
//!   transaction waits in the lock manager, where deadlocks are found (lock rule 9).
//!   Waits follow the statement's [`WaitPolicy`] (`lock_timeout`, `statement_timeout`,
//!   `deadlock_timeout`), set by the session before each statement.
//!
//! A `Tx` belongs to one session's thread: its state sits in `RefCell`s so that the
//! executor can assign an id through a shared reference in the middle of a statement.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::Arc;

use common::{PgError, PgResult, SqlState};

use crate::activity::DatabaseCounts;
use crate::clog::XidStatus;
use crate::lock::{LockError, LockMark, LockMode, LockTag, SessionLocks, WaitPolicy};
use crate::{Cid, Snapshot, TxnManager, Xid};

/// Isolation levels that are implemented as PostgreSQL implements them. SERIALIZABLE is
/// not among them (the server rejects it rather than run it as a weaker level).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    ReadCommitted,
    RepeatableRead,
}

impl Isolation {
    /// The name `SHOW transaction_isolation` prints.
    pub fn name(self) -> &'static str {
        match self {
            Isolation::ReadCommitted => "read committed",
            Isolation::RepeatableRead => "repeatable read",
        }
    }
}

#[derive(Debug, Default)]
struct Level {
    /// The savepoint's name (`None` for the top level).
    name: Option<String>,
    xid: Option<Xid>,
    /// Ids of released (committed-into-this-level) subtransactions.
    children: Vec<Xid>,
    /// Where this savepoint's locks begin (`None` for the top level).
    mark: Option<LockMark>,
    /// The rows this level wrote, per table (txn rule 10).
    writes: crate::relstat::LevelWrites,
}

impl Level {
    fn all_xids(&self) -> impl Iterator<Item = Xid> + '_ {
        self.xid.into_iter().chain(self.children.iter().copied())
    }
}

struct Inner {
    active: bool,
    isolation: Isolation,
    read_only: bool,
    levels: Vec<Level>,
    /// This transaction's ids that are not aborted, ascending.
    mine: Vec<Xid>,
    cid: Cid,
    cid_used: bool,
    combos: Vec<(Cid, Cid)>,
    combo_ids: HashMap<(Cid, Cid), Cid>,
    xact_snapshot: Option<Arc<Snapshot>>,
    snapshot: Option<Arc<Snapshot>>,
    /// A statement has taken a snapshot: the isolation level is fixed.
    queried: bool,
    /// When `begin` ran: the transaction timestamp.
    start_time: std::time::SystemTime,
}

/// One session's transaction state (reused from one transaction to the next).
pub struct Tx {
    mgr: Arc<TxnManager>,
    backend: u32,
    inner: RefCell<Inner>,
    locks: RefCell<SessionLocks>,
    /// How the running statement's lock requests wait.
    wait: Cell<WaitPolicy>,
    /// Calls of `check_for_interrupts` since it last read the clock.
    interrupt_ticks: Cell<u32>,
    /// What other sessions set to cancel this one's statement or end it.
    interrupts: std::cell::OnceCell<Arc<crate::activity::Interrupts>>,
    /// The last final status looked up (a scan asks about the same id over and over).
    status_cache: Cell<(Xid, XidStatus)>,
    /// What this transaction counted of its relations' work, shared when it ends
    /// (txn rule 10).
    counted: RefCell<crate::relstat::Pending>,
}

/// PostgreSQL's error for a session `pg_terminate_backend` ends.
pub fn terminated() -> PgError {
    PgError::fatal(
        SqlState::ADMIN_SHUTDOWN,
        "terminating connection due to administrator command",
    )
}

fn no_savepoint(name: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_SAVEPOINT_SPECIFICATION,
        format!("savepoint \"{name}\" does not exist"),
    )
}

impl Tx {
    /// A session's transaction state; `backend` is its pid in the lock manager (unique
    /// among live sessions).
    pub fn new(mgr: Arc<TxnManager>, backend: u32) -> Tx {
        let locks = mgr.locks().register(backend);
        Tx {
            locks: RefCell::new(locks),
            wait: Cell::new(WaitPolicy::BLOCK),
            interrupt_ticks: Cell::new(0),
            interrupts: std::cell::OnceCell::new(),
            mgr,
            backend,
            inner: RefCell::new(Inner {
                active: false,
                isolation: Isolation::ReadCommitted,
                read_only: false,
                levels: Vec::new(),
                mine: Vec::new(),
                cid: 0,
                cid_used: false,
                combos: Vec::new(),
                combo_ids: HashMap::new(),
                xact_snapshot: None,
                snapshot: None,
                queried: false,
                start_time: std::time::UNIX_EPOCH,
            }),
            status_cache: Cell::new((crate::INVALID_XID, XidStatus::InProgress)),
            counted: RefCell::new(crate::relstat::Pending::default()),
        }
    }

    pub fn manager(&self) -> &Arc<TxnManager> {
        &self.mgr
    }

    /// The session this transaction belongs to.
    pub fn backend(&self) -> u32 {
        self.backend
    }

    /// Start a transaction (explicit or implicit).
    pub fn begin(&self, isolation: Isolation, read_only: bool) {
        let mut s = self.inner.borrow_mut();
        debug_assert!(!s.active, "begin inside a transaction");
        s.active = true;
        s.start_time = std::time::SystemTime::now();
        s.isolation = isolation;
        s.read_only = read_only;
        s.levels = vec![Level::default()];
        // The pages it asks of the buffer pool are counted (txn rule 10).
        storage::bufmgr::usage::start();
    }

    /// When the running transaction began (`now()`, `CURRENT_TIMESTAMP`); meaningless
    /// outside one.
    pub fn start_time(&self) -> std::time::SystemTime {
        self.inner.borrow().start_time
    }

    pub fn is_active(&self) -> bool {
        self.inner.borrow().active
    }

    pub fn isolation(&self) -> Isolation {
        self.inner.borrow().isolation
    }

    pub fn read_only(&self) -> bool {
        self.inner.borrow().read_only
    }

    /// Change the isolation level or access mode before the first statement (SET
    /// TRANSACTION); after it, 25001 as PostgreSQL.
    pub fn set_characteristics(
        &self,
        isolation: Option<Isolation>,
        read_only: Option<bool>,
    ) -> PgResult<()> {
        let mut s = self.inner.borrow_mut();
        if let Some(i) = isolation {
            if s.queried {
                return Err(PgError::new(
                    SqlState::ACTIVE_SQL_TRANSACTION,
                    "SET TRANSACTION ISOLATION LEVEL must be called before any query",
                ));
            }
            s.isolation = i;
        }
        if let Some(r) = read_only {
            s.read_only = r;
        }
        Ok(())
    }

    /// Take the snapshot a statement runs with: a new one under READ COMMITTED, the
    /// transaction's under REPEATABLE READ.
    pub fn start_statement(&self) -> Arc<Snapshot> {
        let mut s = self.inner.borrow_mut();
        s.queried = true;
        let snap = match s.isolation {
            Isolation::ReadCommitted => Arc::new(self.mgr.snapshot(self.backend)),
            Isolation::RepeatableRead => match &s.xact_snapshot {
                Some(snap) => snap.clone(),
                None => {
                    let snap = Arc::new(self.mgr.snapshot(self.backend));
                    s.xact_snapshot = Some(snap.clone());
                    snap
                }
            },
        };
        s.snapshot = Some(snap.clone());
        snap
    }

    /// A fresh snapshot for the rest of this statement (READ COMMITTED's re-check of a
    /// row a concurrent transaction changed, and DDL that must see all committed rows).
    pub fn fresh_snapshot(&self) -> Arc<Snapshot> {
        Arc::new(self.mgr.snapshot(self.backend))
    }

    /// The transaction's own snapshot, once its first statement took it (REPEATABLE
    /// READ and SERIALIZABLE); `None` under READ COMMITTED.
    pub fn transaction_snapshot(&self) -> Option<Arc<Snapshot>> {
        self.inner.borrow().xact_snapshot.clone()
    }

    /// The current statement's snapshot.
    pub fn snapshot(&self) -> Option<Arc<Snapshot>> {
        self.inner.borrow().snapshot.clone()
    }

    /// After a statement: later statements see what it wrote.
    pub fn end_statement(&self) {
        let mut s = self.inner.borrow_mut();
        if s.cid_used {
            s.cid += 1;
            s.cid_used = false;
        }
        s.snapshot = None;
    }

    /// The command id of the running statement; rows it writes carry it.
    pub fn cid(&self) -> Cid {
        self.inner.borrow().cid
    }

    /// The id this statement writes with (the innermost savepoint's), assigned now if
    /// it has none (outer levels first). Also marks the command id as used.
    pub fn xid(&self) -> PgResult<Xid> {
        let mut s = self.inner.borrow_mut();
        if !s.active {
            return Err(PgError::internal("a write outside a transaction"));
        }
        s.cid_used = true;
        if let Some(x) = s.levels.last().and_then(|l| l.xid) {
            return Ok(x);
        }
        for i in 0..s.levels.len() {
            if s.levels[i].xid.is_none() {
                let x = self.mgr.assign_xid()?;
                s.levels[i].xid = Some(x);
                s.mine.push(x);
                // Nobody knows the id yet: the lock is free (lock rule 9).
                self.locks
                    .borrow_mut()
                    .lock(
                        LockTag::Transaction(x),
                        LockMode::Exclusive,
                        WaitPolicy::NOWAIT,
                    )
                    .map_err(|e| PgError::internal(format!("locking a new transaction id: {e}")))?;
            }
        }
        Ok(s.levels.last().and_then(|l| l.xid).unwrap_or_default())
    }

    /// The top-level id, if one was assigned (for pg_stat_activity and pg_locks).
    pub fn top_xid(&self) -> Option<Xid> {
        self.inner.borrow().levels.first().and_then(|l| l.xid)
    }

    /// Whether `xid` is one of this transaction's own, not rolled back.
    pub fn is_mine(&self, xid: Xid) -> bool {
        self.inner.borrow().mine.binary_search(&xid).is_ok()
    }

    /// The `t_cid` for a tuple this transaction inserted at `cmin` and now deletes.
    pub fn combo_cid(&self, cmin: Cid, cmax: Cid) -> Cid {
        let mut s = self.inner.borrow_mut();
        if let Some(&c) = s.combo_ids.get(&(cmin, cmax)) {
            return c;
        }
        let c = s.combos.len() as Cid;
        s.combos.push((cmin, cmax));
        s.combo_ids.insert((cmin, cmax), c);
        c
    }

    /// The (cmin, cmax) a combo id stands for.
    pub fn combo_parts(&self, combo: Cid) -> Option<(Cid, Cid)> {
        self.inner.borrow().combos.get(combo as usize).copied()
    }

    /// Final status of another transaction's id, through a one-entry cache.
    pub fn status(&self, xid: Xid) -> PgResult<XidStatus> {
        let (x, st) = self.status_cache.get();
        if x == xid {
            return Ok(st);
        }
        let st = self.mgr.status(xid)?;
        if st != XidStatus::InProgress {
            self.status_cache.set((xid, st));
        }
        Ok(st)
    }

    /// SAVEPOINT name.
    pub fn savepoint(&self, name: &str) {
        let mark = self.locks.borrow_mut().mark();
        self.inner.borrow_mut().levels.push(Level {
            name: Some(name.to_string()),
            mark: Some(mark),
            ..Level::default()
        });
    }

    fn find(&self, name: &str) -> PgResult<usize> {
        let s = self.inner.borrow();
        s.levels
            .iter()
            .rposition(|l| l.name.as_deref() == Some(name))
            .ok_or_else(|| no_savepoint(name))
    }

    /// Transaction levels: 1 at the top, one more per open savepoint, 0 outside a
    /// transaction.
    pub fn depth(&self) -> usize {
        self.inner.borrow().levels.len()
    }

    /// Whether a savepoint is open (the transaction has a subtransaction level).
    pub fn in_savepoint(&self) -> bool {
        self.inner.borrow().levels.len() > 1
    }

    /// The level (as [`Tx::depth`] counts) of the newest savepoint named `name`: what
    /// ROLLBACK TO it undoes is every level from this one on.
    pub fn savepoint_level(&self, name: &str) -> PgResult<usize> {
        self.find(name).map(|i| i + 1)
    }

    /// Whether a savepoint of this name exists.
    pub fn has_savepoint(&self, name: &str) -> bool {
        self.find(name).is_ok()
    }

    /// `RELEASE [SAVEPOINT] name`: it and the savepoints after it end; what they did
    /// becomes part of the enclosing level.
    pub fn release(&self, name: &str) -> PgResult<()> {
        let i = self.find(name)?;
        let mut s = self.inner.borrow_mut();
        let gone: Vec<Level> = s.levels.drain(i..).collect();
        let parent = s
            .levels
            .last_mut()
            .ok_or_else(|| PgError::internal("a savepoint without a parent"))?;
        for mut l in gone {
            parent.children.extend(l.all_xids());
            crate::relstat::merge_level(&mut parent.writes, std::mem::take(&mut l.writes));
        }
        Ok(())
    }

    /// `ROLLBACK TO [SAVEPOINT] name`: undo everything since the savepoint, which stays.
    /// Returns the number of levels undone (the savepoint's included), so the caller can
    /// release what those levels held.
    pub fn rollback_to(&self, name: &str) -> PgResult<usize> {
        let i = self.find(name)?;
        let mut s = self.inner.borrow_mut();
        let mut gone: Vec<Level> = s.levels.drain(i..).collect();
        let xids: Vec<Xid> = gone.iter().flat_map(Level::all_xids).collect();
        s.mine.retain(|x| !xids.contains(x));
        drop(s);
        let mut counted = self.counted.borrow_mut();
        for l in &mut gone {
            counted.end_level(std::mem::take(&mut l.writes), false);
        }
        drop(counted);
        let res = self.mgr.abort(&xids);
        // After the abort is recorded: whoever waited on these ids finds them ended.
        let mut locks = self.locks.borrow_mut();
        if let Some(mark) = gone[0].mark {
            locks.release_since(mark);
        }
        let mark = locks.mark();
        drop(locks);
        self.inner.borrow_mut().levels.push(Level {
            name: Some(name.to_string()),
            mark: Some(mark),
            ..Level::default()
        });
        res?;
        Ok(gone.len())
    }

    /// COMMIT: every id of the transaction commits in one durable record. The state is
    /// reset whether or not that worked.
    pub fn commit(&self) -> PgResult<()> {
        self.commit_with(|| {})
    }

    /// COMMIT, running `committed` once the commit is durable and visible, before the
    /// transaction's locks go: whoever waited for them sees what `committed` published
    /// (the catalog's changes: `catalog::Catalog::commit`). Not run if the commit failed.
    pub fn commit_with(&self, committed: impl FnOnce()) -> PgResult<()> {
        let xids = self.take_xids();
        let res = self.mgr.commit(&xids);
        self.share_counts(res.is_ok());
        let counts = &self.mgr.activity().counts;
        if res.is_err() {
            // Never acknowledged: it must not stay running forever either.
            let _ = self.mgr.abort(&xids);
            DatabaseCounts::add(&counts.rollbacks);
        } else {
            committed();
            DatabaseCounts::add(&counts.commits);
        }
        self.reset();
        res
    }

    /// ROLLBACK (or the end of a failed implicit transaction).
    pub fn abort(&self) -> PgResult<()> {
        let xids = self.take_xids();
        let res = self.mgr.abort(&xids);
        self.share_counts(false);
        DatabaseCounts::add(&self.mgr.activity().counts.rollbacks);
        self.reset();
        res
    }

    /// Count a row written to table `rel` in the current level (txn rule 10).
    pub fn count_write(&self, rel: common::ids::Oid, what: crate::relstat::Write) {
        if let Some(l) = self.inner.borrow_mut().levels.last_mut() {
            crate::relstat::count_write(&mut l.writes, rel, what);
        }
    }

    /// Count an update of table `rel` that added no index entries (and the update).
    pub fn count_hot_update(&self, rel: common::ids::Oid) {
        self.count_write(rel, crate::relstat::Write::Update);
        self.counted.borrow_mut().hot_update(rel);
    }

    /// What this transaction counts of its relations' reads (scans, fetches, pages):
    /// shared, whatever its outcome, when it ends.
    pub fn counted(&self) -> std::cell::RefMut<'_, crate::relstat::Pending> {
        self.counted.borrow_mut()
    }

    /// Run `work` counting the pages it asks of the buffer pool, and share them (with
    /// any scans it counted) when it ends: for work outside a transaction (VACUUM,
    /// autovacuum). Inside one, the transaction counts them already.
    pub fn counting<T>(&self, work: impl FnOnce() -> T) -> T {
        let began = storage::bufmgr::usage::start();
        let out = work();
        if began {
            let mut counted = self.counted.borrow_mut();
            storage::bufmgr::usage::take_each(|rel, used| counted.blocks(rel, used));
            self.mgr.rel_stats().flush(&mut counted);
        }
        out
    }

    /// The transaction ends (`committed` or not): its levels' writes count as such, and
    /// everything it counted goes to the shared counts.
    fn share_counts(&self, committed: bool) {
        let mut s = self.inner.borrow_mut();
        let mut levels = s.levels.iter_mut();
        let mut writes = levels
            .next()
            .map(|l| std::mem::take(&mut l.writes))
            .unwrap_or_default();
        for l in levels {
            crate::relstat::merge_level(&mut writes, std::mem::take(&mut l.writes));
        }
        drop(s);
        let mut counted = self.counted.borrow_mut();
        counted.end_level(writes, committed);
        storage::bufmgr::usage::take_each(|rel, used| counted.blocks(rel, used));
        self.mgr.rel_stats().flush(&mut counted);
    }

    fn take_xids(&self) -> Vec<Xid> {
        let s = self.inner.borrow();
        let mut v: Vec<Xid> = s.levels.iter().flat_map(Level::all_xids).collect();
        v.sort_unstable();
        v
    }

    fn reset(&self) {
        let mut s = self.inner.borrow_mut();
        s.active = false;
        s.levels.clear();
        s.mine.clear();
        s.cid = 0;
        s.cid_used = false;
        s.combos.clear();
        s.combo_ids.clear();
        s.xact_snapshot = None;
        s.snapshot = None;
        s.queried = false;
        drop(s);
        self.mgr.release_snapshots(self.backend);
        // After commit or abort is recorded (lock rule 9).
        self.locks.borrow_mut().release_all();
    }

    /// How this statement's lock requests wait (set before each statement).
    pub fn set_wait_policy(&self, wait: WaitPolicy) {
        self.wait.set(wait);
    }

    /// The flags other sessions set to cancel this session's statements or end it: its
    /// checks for interrupts and its lock waits read them from now on.
    pub fn set_interrupts(&self, interrupts: Arc<crate::activity::Interrupts>) {
        self.locks
            .borrow_mut()
            .set_cancel(Arc::clone(&interrupts.cancel));
        let _ = self.interrupts.set(interrupts);
    }

    /// Forget a cancel that came while no statement ran (before the next one starts).
    pub fn clear_cancel(&self) {
        if let Some(i) = self.interrupts.get()
            && !i.terminating()
        {
            i.cancel.store(false, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// The error for a cancel or an end asked of this session, if one was.
    fn interrupted(&self) -> Option<PgError> {
        let i = self.interrupts.get()?;
        if !i.cancel.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        Some(if i.terminating() {
            terminated()
        } else {
            PgError::new(
                SqlState::QUERY_CANCELED,
                "canceling statement due to user request",
            )
        })
    }

    /// Fails with 57014 if the statement's `statement_timeout` has passed, reading the
    /// clock now, or if the statement was canceled (57014) or the session is to end
    /// (FATAL 57P01): for the end of a step that has no loop over rows to check it, such
    /// as planning (whose every search is bounded, so it ends).
    pub fn check_statement_timeout(&self) -> PgResult<()> {
        if let Some(e) = self.interrupted() {
            return Err(e);
        }
        match self.wait.get().statement_deadline {
            Some(deadline) if std::time::Instant::now() >= deadline => Err(PgError::new(
                SqlState::QUERY_CANCELED,
                "canceling statement due to statement timeout",
            )),
            _ => Ok(()),
        }
    }

    /// Called by loops over rows: fails with 57014 once the statement's
    /// `statement_timeout` has passed (read from the clock only every 1024th call) or it
    /// was canceled, and with FATAL 57P01 if the session is to end.
    pub fn check_for_interrupts(&self) -> PgResult<()> {
        if let Some(e) = self.interrupted() {
            return Err(e);
        }
        let ticks = self.interrupt_ticks.get().wrapping_add(1);
        self.interrupt_ticks.set(ticks);
        if !ticks.is_multiple_of(1024) {
            return Ok(());
        }
        match self.wait.get().statement_deadline {
            Some(deadline) if std::time::Instant::now() >= deadline => Err(PgError::new(
                SqlState::QUERY_CANCELED,
                "canceling statement due to statement timeout",
            )),
            _ => Ok(()),
        }
    }

    /// Take `mode` on `tag` until transaction end, waiting as the statement's policy
    /// allows (NOWAIT if `nowait`).
    pub fn lock(&self, tag: LockTag, mode: LockMode, nowait: bool) -> Result<(), LockError> {
        let mut wait = self.wait.get();
        wait.nowait |= nowait;
        let r = self.locks.borrow_mut().lock(tag, mode, wait);
        self.note_deadlock(&r);
        r
    }

    /// `pg_stat_database.deadlocks`: a lock wait of this session closed a cycle.
    fn note_deadlock<T>(&self, r: &Result<T, LockError>) {
        if let Err(LockError::Deadlock { .. }) = r {
            DatabaseCounts::add(&self.mgr.activity().counts.deadlocks);
        }
    }

    /// Wait until every other transaction holding a lock on relation `rel` now has
    /// ended (lock rule 16), as the statement's policy allows.
    pub fn wait_for_lockers(&self, rel: common::ids::Oid) -> Result<(), LockError> {
        let wait = self.wait.get();
        let r = self.locks.borrow_mut().wait_for_lockers(rel, wait);
        self.note_deadlock(&r);
        r
    }

    /// How many of this session's lock requests have had to wait ([`SessionLocks::waits`]).
    pub fn lock_waits(&self) -> u64 {
        self.locks.borrow().waits()
    }

    /// Release every lock now: for work outside a transaction (VACUUM), which ends its
    /// lock scope itself. Inside a transaction, locks go at its end.
    pub fn release_locks(&self) {
        debug_assert!(!self.is_active(), "releasing locks inside a transaction");
        self.locks.borrow_mut().release_all();
    }

    /// Wait until another transaction's id `xid` ends (a writer of a row this statement
    /// must change, or of a unique key it inserts): through the lock manager, so that a
    /// cycle of such waits is found (40P01) and the statement's timeouts apply. `what`
    /// names the object for NOWAIT's 55P03 (`row in relation "t"`). Returns the id's
    /// final status.
    pub fn wait_for_xid(&self, xid: Xid, nowait: bool, what: &str) -> PgResult<XidStatus> {
        let mut wait = self.wait.get();
        wait.nowait |= nowait;
        let r = self.locks.borrow_mut().wait_for_transaction(xid, wait);
        self.note_deadlock(&r);
        r.map_err(|e| e.to_pg(what))?;
        match self.mgr.status(xid)? {
            // Its owner released its locks without ending it (a commit whose WAL write
            // failed): wait the plain way.
            XidStatus::InProgress => self.mgr.wait_for(xid),
            st => Ok(st),
        }
    }
}

impl Drop for Tx {
    fn drop(&mut self) {
        if self.inner.borrow().active {
            let _ = self.abort();
        }
    }
}
