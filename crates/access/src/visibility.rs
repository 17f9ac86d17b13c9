//! Which tuple versions a transaction sees, and whether it may change one: PostgreSQL's
//! `HeapTupleSatisfiesMVCC`, `HeapTupleSatisfiesUpdate` and `SnapshotDirty`, on the 64-bit
//! ids of `txn`.
//!
//! A version is visible to a snapshot when its inserter committed before the snapshot
//! (or is this transaction, in an earlier command) and its deleter did not (access rule
//! 4). Ids below [`txn::FIRST_NORMAL_XID`] (bootstrap, frozen) count as committed.

use common::PgResult;
use txn::{Cid, FIRST_NORMAL_XID, INVALID_XID, Snapshot, Tx, Xid, XidStatus};

use crate::tuple::{
    HEAP_COMBOCID, HEAP_XMAX_IS_MULTI, HEAP_XMAX_LOCK_ONLY, HEAP_XMAX_SHR_LOCK, TupleHeader,
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
fn lock_only(h: &TupleHeader) -> bool {
    h.infomask & HEAP_XMAX_LOCK_ONLY != 0
}

fn is_multi(h: &TupleHeader) -> bool {
    h.infomask & HEAP_XMAX_IS_MULTI != 0
}

/// Who holds a FOR SHARE lock on `h` now: the other transactions (running), and whether
/// `tx` is one of the holders.
pub fn share_lockers(h: &TupleHeader, tx: &Tx) -> PgResult<(Vec<Xid>, bool)> {
    let holders = if is_multi(h) {
        tx.manager().multi_members(h.xmax)
    } else if h.xmax != INVALID_XID && lock_only(h) && h.infomask & HEAP_XMAX_SHR_LOCK != 0 {
        vec![h.xmax]
    } else {
        Vec::new()
    };
    let mut others = Vec::with_capacity(holders.len() + 1);
    let mut mine = false;
    for x in holders {
        if tx.is_mine(x) {
            mine = true;
        } else if fate(x, tx)? == Fate::Running {
            others.push(x);
        }
    }
    Ok((others, mine))
}

/// Whether the version `h` is visible to `snap`, taken by `tx`.
pub fn visible(h: &TupleHeader, snap: &Snapshot, tx: &Tx) -> PgResult<bool> {
    if h.xmin >= FIRST_NORMAL_XID {
        if tx.is_mine(h.xmin) {
            if cmin(h, tx) >= tx.cid() {
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
        return Ok(cmax(h, tx) >= tx.cid()); // deleted by this or a later command
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
    /// Another running transaction deleted, updated or locked it: wait for that one.
    BeingModified(Xid),
    /// A committed transaction deleted or updated it (`t_ctid` says which).
    Updated,
    /// Its inserter aborted or has not committed: there is nothing to change.
    Invisible,
}

/// `HeapTupleSatisfiesUpdate`: the check made under the page's latch before `t_xmax` is
/// written. `share` asks for a FOR SHARE lock, which other FOR SHARE lockers do not
/// block (the caller makes them a multixact with [`share_lockers`]).
pub fn check_write(h: &TupleHeader, tx: &Tx, share: bool) -> PgResult<WriteCheck> {
    if !tx.is_mine(h.xmin) {
        match fate(h.xmin, tx)? {
            Fate::Committed => {}
            Fate::Running => return Ok(WriteCheck::BeingModified(h.xmin)),
            Fate::Aborted => return Ok(WriteCheck::Invisible),
        }
    }
    if h.xmax == INVALID_XID {
        return Ok(WriteCheck::Ok);
    }
    if is_multi(h) {
        if !share {
            // Wait for each other share locker in turn.
            for x in tx.manager().multi_members(h.xmax) {
                if !tx.is_mine(x) && fate(x, tx)? == Fate::Running {
                    return Ok(WriteCheck::BeingModified(x));
                }
            }
        }
        return Ok(WriteCheck::Ok);
    }
    if tx.is_mine(h.xmax) {
        return Ok(if lock_only(h) {
            WriteCheck::Ok
        } else {
            WriteCheck::SelfModified
        });
    }
    match fate(h.xmax, tx)? {
        Fate::Aborted => Ok(WriteCheck::Ok),
        Fate::Running if share && lock_only(h) && h.infomask & HEAP_XMAX_SHR_LOCK != 0 => {
            Ok(WriteCheck::Ok)
        }
        Fate::Running => Ok(WriteCheck::BeingModified(h.xmax)),
        Fate::Committed if lock_only(h) => Ok(WriteCheck::Ok),
        Fate::Committed => Ok(WriteCheck::Updated),
    }
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

/// What ANALYZE counts a version as (`HeapTupleSatisfiesVacuum`'s classes, folded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Census {
    /// Committed and not deleted by a committed transaction: a row of the table.
    Live,
    /// Deleted by a committed transaction, or inserted by an aborted one.
    Dead,
    /// Inserted or deleted by a transaction still running.
    InProgress,
}

/// Classify `h` for ANALYZE, without a transaction of its own.
pub fn census(h: &TupleHeader, mgr: &txn::TxnManager) -> PgResult<Census> {
    if h.xmin >= FIRST_NORMAL_XID {
        match final_status(h.xmin, mgr)? {
            Fate::Committed => {}
            Fate::Running => return Ok(Census::InProgress),
            Fate::Aborted => return Ok(Census::Dead),
        }
    }
    if h.xmax == INVALID_XID || lock_only(h) {
        return Ok(Census::Live);
    }
    Ok(match final_status(h.xmax, mgr)? {
        Fate::Committed => Census::Dead,
        Fate::Running => Census::InProgress,
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
