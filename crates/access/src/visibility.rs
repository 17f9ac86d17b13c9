//! Which tuple versions a transaction sees, and whether it may change one: PostgreSQL's
//! `HeapTupleSatisfiesMVCC`, `HeapTupleSatisfiesUpdate` and `SnapshotDirty`, on the 64-bit
//! ids of `txn`.
//!
//! A version is visible to a snapshot when its inserter committed before the snapshot
//! (or is this transaction, in an earlier command) and its deleter did not (access rule
//! 4). Ids below [`txn::FIRST_NORMAL_XID`] (bootstrap, frozen) count as committed.

use common::{ItemPointer, PgResult, RelId, RowLockMode};
use txn::{Cid, FIRST_NORMAL_XID, INVALID_XID, RowLocker, Snapshot, Tx, Xid, XidStatus};

use crate::tuple::{
    HEAP_COMBOCID, HEAP_KEYS_UPDATED, HEAP_XMAX_EXCL_LOCK, HEAP_XMAX_IS_MULTI,
    HEAP_XMAX_KEYSHR_LOCK, HEAP_XMAX_LOCK_ONLY, HEAP_XMAX_LOCKERS_ASIDE, HEAP_XMAX_SHR_LOCK,
    TupleHeader,
};

/// The command id that inserted a tuple this transaction wrote.
fn cmin(h: &TupleHeader, tx: &Tx) -> Cid {
    if h.infomask & HEAP_COMBOCID != 0 {
        tx.combo_parts(h.cid).map_or(h.cid, |p| p.0)
    } else {
        h.cid
    }
}

/// The command id that deleted a tuple this transaction deleted.
fn cmax(h: &TupleHeader, tx: &Tx) -> Cid {
    if h.infomask & HEAP_COMBOCID != 0 {
        tx.combo_parts(h.cid).map_or(h.cid, |p| p.1)
    } else {
        h.cid
    }
}

/// The combined `t_cid` and `HEAP_COMBOCID` bit for deleting `h` now.
pub fn cid_for_delete(h: &TupleHeader, tx: &Tx) -> (Cid, u16) {
    if tx.is_mine(h.xmin) {
        (tx.combo_cid(cmin(h, tx), tx.cid()), HEAP_COMBOCID)
    } else {
        (tx.cid(), 0)
    }
}

/// Whether `t_xmax` only locked the row (a multixact always does).
pub fn lock_only(h: &TupleHeader) -> bool {
    h.infomask & HEAP_XMAX_LOCK_ONLY != 0
}

fn is_multi(h: &TupleHeader) -> bool {
    h.infomask & HEAP_XMAX_IS_MULTI != 0
}

/// The strength of the lock a single locker in `t_xmax` holds.
fn lock_mode(h: &TupleHeader) -> RowLockMode {
    if h.infomask & HEAP_XMAX_KEYSHR_LOCK != 0 {
        RowLockMode::KeyShare
    } else if h.infomask & HEAP_XMAX_SHR_LOCK != 0 {
        RowLockMode::Share
    } else if h.infomask & (HEAP_XMAX_EXCL_LOCK | HEAP_KEYS_UPDATED) == HEAP_XMAX_EXCL_LOCK {
        RowLockMode::NoKeyUpdate
    } else {
        RowLockMode::Update
    }
}

/// The `t_infomask` bits of a `t_xmax` that locks the row in `mode` (one locker).
pub fn lock_bits(mode: RowLockMode) -> u16 {
    HEAP_XMAX_LOCK_ONLY
        | match mode {
            RowLockMode::KeyShare => HEAP_XMAX_KEYSHR_LOCK,
            RowLockMode::Share => HEAP_XMAX_SHR_LOCK,
            RowLockMode::NoKeyUpdate => HEAP_XMAX_EXCL_LOCK,
            RowLockMode::Update => HEAP_XMAX_EXCL_LOCK | HEAP_KEYS_UPDATED,
        }
}

/// What the updater or deleter in `t_xmax` holds: Update if it deleted the version or
/// changed a key column, else NoKeyUpdate.
pub fn update_mode(h: &TupleHeader) -> RowLockMode {
    if h.infomask & HEAP_KEYS_UPDATED != 0 {
        RowLockMode::Update
    } else {
        RowLockMode::NoKeyUpdate
    }
}

/// Every transaction that may hold a row lock on the version `h` at `tid` of `rel`
/// (running or not): the locker in a lock-only `t_xmax`, a multixact's members, or the
/// lockers kept aside for an updated version (txn rule 8).
pub fn lockers(h: &TupleHeader, rel: RelId, tid: ItemPointer, tx: &Tx) -> Vec<RowLocker> {
    if h.xmax == INVALID_XID {
        Vec::new()
    } else if is_multi(h) {
        tx.manager().multi_members(h.xmax)
    } else if lock_only(h) {
        vec![(h.xmax, lock_mode(h))]
    } else if h.infomask & HEAP_XMAX_LOCKERS_ASIDE != 0 {
        tx.manager().version_lockers(rel, tid, h.xmax)
    } else {
        Vec::new()
    }
}

/// The row locks held on a version: by other transactions still running, and by `tx`.
#[derive(Debug, Default)]
pub struct Holders {
    pub others: Vec<RowLocker>,
    pub mine: Vec<RowLocker>,
}

impl Holders {
    /// Whether `tx` holds a lock at least as strong as `mode` already.
    pub fn mine_covers(&self, mode: RowLockMode) -> bool {
        self.mine.iter().any(|&(_, m)| m >= mode)
    }
}

/// Who holds a row lock on the version `h` at `tid` of `rel` now (its updater aside).
pub fn holders(h: &TupleHeader, rel: RelId, tid: ItemPointer, tx: &Tx) -> PgResult<Holders> {
    let mut out = Holders::default();
    for (x, m) in lockers(h, rel, tid, tx) {
        if tx.is_mine(x) {
            out.mine.push((x, m));
        } else if fate(x, tx)? == Fate::Running {
            out.others.push((x, m));
        }
    }
    Ok(out)
}

/// Whether the version `h` is visible to `snap`, taken by `tx`.
pub fn visible(h: &TupleHeader, snap: &Snapshot, tx: &Tx) -> PgResult<bool> {
    let cid = || snap.cid.unwrap_or_else(|| tx.cid());
    if h.xmin >= FIRST_NORMAL_XID {
        if tx.is_mine(h.xmin) {
            if cmin(h, tx) >= cid() {
                return Ok(false); // inserted by this or a later command
            }
        } else if snap.in_progress(h.xmin) || tx.status(h.xmin)? != XidStatus::Committed {
            return Ok(false);
        }
    } else if h.xmin == INVALID_XID {
        return Ok(false);
    }
    if h.xmax == INVALID_XID || lock_only(h) {
        return Ok(true);
    }
    if tx.is_mine(h.xmax) {
        return Ok(cmax(h, tx) >= cid()); // deleted by this or a later command
    }
    if snap.in_progress(h.xmax) {
        return Ok(true);
    }
    Ok(tx.status(h.xmax)? != XidStatus::Committed)
}

/// Where another transaction's id stands right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Running,
    Committed,
    Aborted,
}

/// The fate of `xid` now. Commits set the commit log before they stop running (txn rule
/// 3), so an id found neither running nor committed has aborted (or died in a crash).
pub fn fate(xid: Xid, tx: &Tx) -> PgResult<Fate> {
    if xid < FIRST_NORMAL_XID {
        return Ok(if xid == INVALID_XID {
            Fate::Aborted
        } else {
            Fate::Committed
        });
    }
    match tx.status(xid)? {
        XidStatus::Committed => return Ok(Fate::Committed),
        XidStatus::Aborted => return Ok(Fate::Aborted),
        XidStatus::InProgress => {}
    }
    if tx.manager().is_running(xid) {
        return Ok(Fate::Running);
    }
    Ok(match tx.manager().status(xid)? {
        XidStatus::Committed => Fate::Committed,
        _ => Fate::Aborted,
    })
}

/// May `tx` delete, update or lock the version `h` (which its snapshot saw)?
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteCheck {
    /// Yes.
    Ok,
    /// This transaction already deleted or updated it (in this statement: skip it).
    SelfModified,
    /// Another running transaction deleted, updated or locked it in a mode that
    /// conflicts: wait for that one.
    BeingModified(Xid),
    /// A committed transaction deleted or updated it (`t_ctid` says which).
    Updated,
    /// Its inserter aborted or has not committed: there is nothing to change.
    Invisible,
}

/// `HeapTupleSatisfiesUpdate` and the conflict test of `heap_lock_tuple`: the check made
/// under the page's latch before `t_xmax` is written, for taking `want` on the version
/// `h` at `tid` of `rel` (a delete takes Update; an update Update or NoKeyUpdate). Locks
/// and updates that do not conflict with `want` are no obstacle: FOR KEY SHARE goes on
/// past an update that kept the key, even a committed one (whose newer versions the
/// caller locks too). With `xmin_checked` the caller has found the inserter to be the
/// updater of the version before, whose chain it follows.
pub fn check_write(
    h: &TupleHeader,
    rel: RelId,
    tid: ItemPointer,
    tx: &Tx,
    want: RowLockMode,
    xmin_checked: bool,
) -> PgResult<WriteCheck> {
    if !xmin_checked && !tx.is_mine(h.xmin) {
        match fate(h.xmin, tx)? {
            Fate::Committed => {}
            Fate::Running => return Ok(WriteCheck::BeingModified(h.xmin)),
            Fate::Aborted => return Ok(WriteCheck::Invisible),
        }
    }
    if h.xmax == INVALID_XID {
        return Ok(WriteCheck::Ok);
    }
    if !lock_only(h) {
        if tx.is_mine(h.xmax) {
            return Ok(WriteCheck::SelfModified);
        }
        let held = update_mode(h);
        match fate(h.xmax, tx)? {
            Fate::Running if want.conflicts(held) => {
                return Ok(WriteCheck::BeingModified(h.xmax));
            }
            Fate::Committed if want.conflicts(held) || want != RowLockMode::KeyShare => {
                return Ok(WriteCheck::Updated);
            }
            _ => {}
        }
    }
    for (x, m) in lockers(h, rel, tid, tx) {
        if !tx.is_mine(x) && want.conflicts(m) && fate(x, tx)? == Fate::Running {
            return Ok(WriteCheck::BeingModified(x));
        }
    }
    Ok(WriteCheck::Ok)
}

/// Whether VACUUM may remove the version `h`: its inserter aborted, or its deleter
/// committed before `horizon` (the oldest id any snapshot may still see as running, so
/// no snapshot sees the version).
pub fn dead_to_all(h: &TupleHeader, mgr: &txn::TxnManager, horizon: Xid) -> PgResult<bool> {
    if h.xmin >= FIRST_NORMAL_XID && final_status(h.xmin, mgr)? == Fate::Aborted {
        return Ok(true);
    }
    if h.xmax == INVALID_XID || lock_only(h) || h.xmax >= horizon {
        return Ok(false);
    }
    Ok(final_status(h.xmax, mgr)? == Fate::Committed)
}

/// Is `h` visible to every snapshot there is or will be: inserted by a transaction that
/// committed below `horizon` (or frozen), and not deleted or updated by one that did not
/// abort (a row lock does not hide it)? What a page must hold of every tuple to be marked
/// all-visible (access rule 9).
pub fn visible_to_all(h: &TupleHeader, mgr: &txn::TxnManager, horizon: Xid) -> PgResult<bool> {
    if h.xmin >= FIRST_NORMAL_XID
        && (h.xmin >= horizon || final_status(h.xmin, mgr)? != Fate::Committed)
    {
        return Ok(false);
    }
    if h.xmax == INVALID_XID || lock_only(h) {
        return Ok(true);
    }
    Ok(final_status(h.xmax, mgr)? == Fate::Aborted)
}

/// What ANALYZE counts a version as (`HeapTupleSatisfiesVacuum`'s classes, folded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Census {
    /// Committed and not deleted by a committed transaction: a row of the table.
    Live,
    /// Deleted by a committed transaction, or inserted by an aborted one.
    Dead,
    /// Inserted by `xmin`, still running; `deleter`: the running transaction that also
    /// deleted it, if one did (not a lock).
    InsertInProgress { xmin: Xid, deleter: Option<Xid> },
    /// Committed, and deleted by `xmax`, still running.
    DeleteInProgress(Xid),
}

/// Classify `h` for ANALYZE, without a transaction of its own (the caller decides what
/// its own transaction's versions count as).
pub fn census(h: &TupleHeader, mgr: &txn::TxnManager) -> PgResult<Census> {
    let deleted = h.xmax != INVALID_XID && !lock_only(h);
    if h.xmin >= FIRST_NORMAL_XID {
        match final_status(h.xmin, mgr)? {
            Fate::Committed => {}
            Fate::Running => {
                return Ok(Census::InsertInProgress {
                    xmin: h.xmin,
                    deleter: deleted.then_some(h.xmax),
                });
            }
            Fate::Aborted => return Ok(Census::Dead),
        }
    }
    if !deleted {
        return Ok(Census::Live);
    }
    Ok(match final_status(h.xmax, mgr)? {
        Fate::Committed => Census::Dead,
        Fate::Running => Census::DeleteInProgress(h.xmax),
        Fate::Aborted => Census::Live,
    })
}

/// [`fate`] without a transaction's cache (for VACUUM).
fn final_status(xid: Xid, mgr: &txn::TxnManager) -> PgResult<Fate> {
    match mgr.status(xid)? {
        XidStatus::Committed => return Ok(Fate::Committed),
        XidStatus::Aborted => return Ok(Fate::Aborted),
        XidStatus::InProgress => {}
    }
    if mgr.is_running(xid) {
        return Ok(Fate::Running);
    }
    Ok(match mgr.status(xid)? {
        XidStatus::Committed => Fate::Committed,
        _ => Fate::Aborted,
    })
}

/// What a unique check makes of an equal key's heap tuple (`SnapshotDirty`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Liveness {
    /// Deleted by a committed transaction or by this one, or inserted by an aborted one.
    Dead,
    /// Committed (or this transaction's own) and not deleted: a conflict.
    Live,
    /// Inserted or deleted by a running transaction: wait for it, then look again.
    InDoubt(Xid),
}

/// Inserted by a transaction that aborted (PostgreSQL's HEAPTUPLE_DEAD for an aborted
/// inserter): no snapshot will ever see it, and its columns may follow a catalog that
/// rolled back with it (a rolled-back ADD COLUMN's rewrite leaves versions one column
/// wider than the table), so scans of every version skip it before decoding it.
pub fn aborted_insert(h: &TupleHeader, tx: &Tx) -> PgResult<bool> {
    Ok(!tx.is_mine(h.xmin) && matches!(fate(h.xmin, tx)?, Fate::Aborted))
}

/// `SnapshotDirty` for a unique check: sees every committed and in-progress change.
pub fn liveness(h: &TupleHeader, tx: &Tx) -> PgResult<Liveness> {
    if !tx.is_mine(h.xmin) {
        match fate(h.xmin, tx)? {
            Fate::Committed => {}
            Fate::Running => return Ok(Liveness::InDoubt(h.xmin)),
            Fate::Aborted => return Ok(Liveness::Dead),
        }
    }
    if h.xmax == INVALID_XID || lock_only(h) {
        return Ok(Liveness::Live);
    }
    if tx.is_mine(h.xmax) {
        return Ok(Liveness::Dead);
    }
    Ok(match fate(h.xmax, tx)? {
        Fate::Committed => Liveness::Dead,
        Fate::Running => Liveness::InDoubt(h.xmax),
        Fate::Aborted => Liveness::Live,
    })
}
