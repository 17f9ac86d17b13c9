//! The heap access method: tuple versions in relation pages, addressed by item pointer.
//!
//! Interface: [`heap_insert`], [`heap_delete`], [`heap_update`], [`heap_lock`],
//! [`heap_fetch`] / [`heap_fetch_visible`] (a version by its address),
//! [`heap_hot_search`] / [`heap_hot_fetch`] (a row by its index entry, through its HOT
//! chain: access rule 11), [`prune`], [`set_all_visible`] and the sequential scan
//! [`HeapScan`]. Tuples are bytes built by [`tuple::encode`]; this module stamps their
//! MVCC fields.
//!
//! This is the one place heap pages change (access rule 1): every change is one
//! mini-transaction ([`storage::Mtr`]) taken here, logged as one WAL record.
//!
//! MVCC (access rule 4): nothing is changed in place. DELETE stamps the version's
//! `t_xmax`; UPDATE stamps it and inserts the new version, whose item pointer goes into
//! the old one's `t_ctid` — both pages in one mini-transaction, so a crash never leaves
//! half an update. Whether the caller may do so is decided under the page's latch
//! ([`visibility::check_write`]); if another transaction is in the way the call changes
//! nothing and says why ([`HeapWrite`]), and the caller waits or gives up. Dead versions
//! stay until pruning or VACUUM. An update that changes no index's entry and fits on its
//! page is HOT: the new version is heap-only, found from the old one (access rule 11).
//!
//! Space (access rule 2): inserts go to the relation's last block, whose number is smgr's
//! cached size less one (no scan, no syscall); when it is full, a page the free space map
//! names (access rule 10), else a new one. A new version goes on its old version's page
//! if it fits, else on a page after it.
//!
//! Latching (buffer rule 5): one page at a time, except an update that moves a tuple,
//! which latches the old page and then a page after it (the last or a new one): always
//! in ascending block order, so two updates never wait for each other in a cycle.

use common::ids::{BlockNumber, ItemPointer, OffsetNumber};
use common::limits::BLCKSZ;
use common::{PgError, PgResult, RelId, RowLockMode};
use storage::page::{Page, PageMut};
use storage::smgr::relpath;
use storage::{BufferPool, Mtr, PinnedBuffer};
use txn::{Cid, INVALID_XID, RowLocker, Snapshot, Tx, Xid};

use crate::tuple::{
    self, HEAP_COMBOCID, HEAP_HOT_UPDATED, HEAP_KEYS_UPDATED, HEAP_ONLY_TUPLE,
    HEAP_TUPLE_HEADER_SIZE, HEAP_UPDATED, HEAP_XMAX_IS_MULTI, HEAP_XMAX_LOCK_ONLY,
    HEAP_XMAX_LOCKERS_ASIDE, MAX_HEAP_TUPLE_SIZE,
};
use crate::visibility::{self, Fate, WriteCheck};
use crate::{freespace, visibilitymap};

/// Check a tuple handed to insert or update: it must have a header and fit on a page.
fn check_tuple(tuple: &[u8]) -> PgResult<()> {
    if tuple.len() > MAX_HEAP_TUPLE_SIZE {
        return Err(tuple::row_too_big(tuple.len()));
    }
    if tuple.len() < HEAP_TUPLE_HEADER_SIZE {
        return Err(PgError::internal(format!(
            "heap tuple of {} bytes is shorter than its header",
            tuple.len()
        )));
    }
    Ok(())
}

fn not_live(rel: RelId, tid: ItemPointer) -> PgError {
    PgError::internal(format!(
        "tuple ({},{}) of relation {} is not a live tuple",
        tid.block,
        tid.offset,
        relpath(rel)
    ))
}

/// Pin the page `tid` points into; an item pointer past the end of the relation is a
/// caller bug.
fn pin_tid_page(pool: &BufferPool, rel: RelId, tid: ItemPointer) -> PgResult<PinnedBuffer<'_>> {
    let nblocks = pool.smgr().nblocks(rel)?;
    if tid.block >= nblocks {
        return Err(PgError::internal(format!(
            "tuple ({},{}) is beyond the end of relation {} ({nblocks} blocks)",
            tid.block,
            tid.offset,
            relpath(rel)
        )));
    }
    pool.read_buffer(rel, tid.block)
}

/// The MVCC stamp of a new version: inserted by `xmin` at command `cid`, locked by
/// `xmax` (the row lockers an update carries over) or not.
#[derive(Clone, Copy)]
struct Stamp {
    xmin: Xid,
    xmax: Xid,
    cid: Cid,
    bits: u16,
}

/// Put `tuple` on the page, initialising a new page and compacting a fragmented one if
/// that makes room; stamps `t_ctid` and the MVCC fields. `None` if it does not fit.
fn place_on_page(
    page: &mut [u8; BLCKSZ],
    block: BlockNumber,
    tuple: &[u8],
    stamp: Stamp,
) -> Option<OffsetNumber> {
    let mut page = PageMut::new(page);
    if page.as_page().is_new() {
        page.init(0);
    }
    let offset = match page.add_item(tuple) {
        Some(off) => off,
        // A page whose items do not add up is corrupt: it takes no new tuple (its
        // readers report it), and the tuple goes to another page.
        None if page.as_page().needs_compaction() => {
            page.compact().ok()?;
            page.add_item(tuple)?
        }
        None => return None,
    };
    let item = page.item_mut(offset).expect("an item just added is NORMAL");
    tuple::set_ctid(item, ItemPointer { block, offset });
    tuple::set_mvcc(item, stamp.xmin, stamp.xmax, stamp.cid, stamp.bits);
    Some(offset)
}

/// Insert a tuple as a version made by `xid` at command `cid`; returns where it went.
/// Tries the relation's last page, then pages the free space map says have room (access
/// rule 10), else extends the relation by one page. A page takes the tuple only if
/// `100 - fillfactor` percent of it stays free after it (room kept for updated versions,
/// PostgreSQL's `RelationGetTargetPageFreeSpace`); an empty page always takes it. A tuple larger than [`MAX_HEAP_TUPLE_SIZE`] is
/// PROGRAM_LIMIT_EXCEEDED "row is too big".
pub fn heap_insert(
    pool: &BufferPool,
    rel: RelId,
    tuple: &[u8],
    xid: Xid,
    cid: Cid,
    fillfactor: u8,
) -> PgResult<ItemPointer> {
    check_tuple(tuple)?;
    let stamp = Stamp {
        xmin: xid,
        xmax: INVALID_XID,
        cid,
        bits: 0,
    };
    let reserve = BLCKSZ * 100usize.saturating_sub(fillfactor as usize) / 100;
    let need = storage::page::maxalign(tuple.len()) + reserve;
    let nblocks = pool.smgr().nblocks(rel)?;
    if let Some(last) = nblocks.checked_sub(1) {
        if let Some(tid) = insert_into(pool, rel, last, tuple, stamp, reserve)? {
            return Ok(tid);
        }
        // The last page is full: a page the free space map knows has room (access rule
        // 10), a few tries at most (a page it names may have filled since).
        let mut from = 0;
        for _ in 0..FREE_SPACE_TRIES {
            match freespace::search(pool, rel, need, from)? {
                Some(block) if block < last => {
                    if let Some(tid) = insert_into(pool, rel, block, tuple, stamp, reserve)? {
                        return Ok(tid);
                    }
                    from = block + 1;
                }
                _ => break,
            }
        }
    }
    let (block, mut buf) = pool.extend(rel)?;
    let mut mtr = Mtr::new(pool);
    let p = mtr.latch(&mut buf);
    let offset = place_on_page(mtr.page(p), block, tuple, stamp)
        .expect("a tuple of at most MAX_HEAP_TUPLE_SIZE fits on an empty page");
    mtr.commit()?;
    Ok(ItemPointer { block, offset })
}

/// Pages the free space map names that an insert tries before it extends the table.
const FREE_SPACE_TRIES: usize = 3;

/// Insert into page `block` if the tuple fits leaving `reserve` bytes free (an empty
/// page always takes it); if not, record the room the page has in the free space map.
fn insert_into(
    pool: &BufferPool,
    rel: RelId,
    block: BlockNumber,
    tuple: &[u8],
    stamp: Stamp,
    reserve: usize,
) -> PgResult<Option<ItemPointer>> {
    freespace::counters::heap_page_examined();
    let mut buf = pool.read_buffer(rel, block)?;
    let mut map_pin = None;
    let mut mtr = Mtr::new(pool);
    let p = mtr.latch(&mut buf);
    let page = Page::new(mtr.page(p));
    let need = storage::page::maxalign(tuple.len()) + reserve;
    // A new (all-zero) last page belongs to the session that just extended the
    // relation and is about to initialise it: leave it to that session.
    let fits = !page.is_new()
        && (reserve == 0
            || page.max_offset() == 0
            || need <= page.free_space()
            || need <= page.free_space() + page.fragmented_space());
    if fits && let Some(offset) = place_on_page(mtr.page(p), block, tuple, stamp) {
        visibilitymap::clear(&mut mtr, pool, (rel, p, block), &mut map_pin, None)?;
        mtr.commit()?;
        return Ok(Some(ItemPointer { block, offset }));
    }
    let page = Page::new(mtr.page_ref(p));
    let room = if page.is_new() {
        0
    } else {
        page.free_space() + page.fragmented_space()
    };
    // Dropping the mtr undoes a compaction that did not make room.
    drop(mtr);
    drop(buf);
    freespace::record(pool, rel, block, room)?;
    Ok(None)
}

/// What a delete, update or row lock did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeapWrite {
    /// Done; for an update, where the new version went (else the tuple's own pointer).
    Done(ItemPointer),
    /// This transaction already deleted or updated the version (in this statement).
    SelfModified,
    /// Another running transaction changed or locked it: wait for it, then try again.
    BeingModified(Xid),
    /// A committed transaction deleted it (`None`) or updated it (the newer version).
    Updated(Option<ItemPointer>),
    /// A committed transaction moved the row to another partition of its table (an
    /// UPDATE of its partition key, [`heap_move_out`]): it is not gone, but not here.
    Moved,
    /// The version's inserter aborted: there is nothing there.
    Invisible,
}

/// Read the version at `tid` on a latched page and decide whether `tx` may take `want`
/// on it (`visibility::check_write`).
fn check_target(
    page: &[u8; BLCKSZ],
    rel: RelId,
    tid: ItemPointer,
    tx: &Tx,
    want: RowLockMode,
    xmin_checked: bool,
) -> PgResult<(tuple::TupleHeader, Option<HeapWrite>)> {
    let item = Page::new(page)
        .get_item(tid.offset)
        .ok_or_else(|| not_live(rel, tid))?;
    let h = tuple::header(item)?;
    let verdict = match visibility::check_write(&h, rel, tid, tx, want, xmin_checked)? {
        WriteCheck::Ok => None,
        WriteCheck::SelfModified => Some(HeapWrite::SelfModified),
        WriteCheck::BeingModified(x) => Some(HeapWrite::BeingModified(x)),
        WriteCheck::Invisible => Some(HeapWrite::Invisible),
        WriteCheck::Updated if h.ctid == MOVED_TO_ANOTHER_PARTITION => Some(HeapWrite::Moved),
        WriteCheck::Updated => Some(HeapWrite::Updated((h.ctid != tid).then_some(h.ctid))),
    };
    Ok((h, verdict))
}

/// The MVCC bits a version keeps when its `t_xmax` is rewritten.
fn kept_bits(h: &tuple::TupleHeader) -> u16 {
    h.infomask & HEAP_UPDATED
}

/// The `t_xmax` and its bits for row lockers (none, one, or a multixact of several).
fn lockers_xmax(tx: &Tx, lockers: &[RowLocker]) -> PgResult<(Xid, u16)> {
    Ok(match lockers {
        [] => (INVALID_XID, 0),
        [(x, m)] => (*x, visibility::lock_bits(*m)),
        _ => (
            tx.manager().create_multi(lockers)?,
            HEAP_XMAX_LOCK_ONLY | HEAP_XMAX_IS_MULTI,
        ),
    })
}

/// The `t_ctid` of a version whose row an UPDATE moved to another partition (as
/// PostgreSQL marks it): no tuple is ever there.
pub const MOVED_TO_ANOTHER_PARTITION: ItemPointer = ItemPointer {
    block: u32::MAX,
    offset: 0xfffd,
};

/// Delete the version at `tid` because its row moved to another partition (the new
/// version was routed there): as [`heap_delete`], and its `t_ctid` says so, so that
/// a concurrent writer waiting on it learns the row moved ([`HeapWrite::Moved`]) rather
/// than that it was deleted.
pub fn heap_move_out(
    pool: &BufferPool,
    rel: RelId,
    tid: ItemPointer,
    xid: Xid,
    tx: &Tx,
) -> PgResult<HeapWrite> {
    delete_version(pool, rel, tid, xid, tx, true)
}

/// Delete the version at `tid` as transaction `xid` (the tuple stays until no snapshot
/// can see it). A delete holds the row in Update mode: it waits for every locker.
pub fn heap_delete(
    pool: &BufferPool,
    rel: RelId,
    tid: ItemPointer,
    xid: Xid,
    tx: &Tx,
) -> PgResult<HeapWrite> {
    delete_version(pool, rel, tid, xid, tx, false)
}

fn delete_version(
    pool: &BufferPool,
    rel: RelId,
    tid: ItemPointer,
    xid: Xid,
    tx: &Tx,
    moved: bool,
) -> PgResult<HeapWrite> {
    let mut buf = pin_tid_page(pool, rel, tid)?;
    let mut map_pin = None;
    let mut mtr = Mtr::new(pool);
    let p = mtr.latch(&mut buf);
    let (h, verdict) = check_target(mtr.page(p), rel, tid, tx, RowLockMode::Update, false)?;
    if let Some(v) = verdict {
        return Ok(v);
    }
    let (cid, combo) = visibility::cid_for_delete(&h, tx);
    let mut page = PageMut::new(mtr.page(p));
    let item = page
        .item_mut(tid.offset)
        .ok_or_else(|| not_live(rel, tid))?;
    tuple::set_xmax(item, xid, cid, kept_bits(&h) | combo | HEAP_KEYS_UPDATED);
    if moved {
        tuple::set_ctid(item, MOVED_TO_ANOTHER_PARTITION);
    }
    mark_prunable(mtr.page(p), xid);
    visibilitymap::clear(&mut mtr, pool, (rel, p, tid.block), &mut map_pin, None)?;
    mtr.commit()?;
    Ok(HeapWrite::Done(tid))
}

/// Lock the version at `tid` for `xid` in `mode` (SELECT ... FOR UPDATE / FOR NO KEY
/// UPDATE / FOR SHARE / FOR KEY SHARE, a foreign key check): its `t_xmax` names the
/// locker (or a multixact of the lockers), which blocks conflicting writers and lockers
/// until it ends. FOR KEY SHARE of a version whose updater kept the key also locks the
/// newer versions that update made (PostgreSQL's `heap_lock_updated_tuple`), so that
/// whichever of them turns out to be the row, its deleter waits.
pub fn heap_lock(
    pool: &BufferPool,
    rel: RelId,
    tid: ItemPointer,
    xid: Xid,
    tx: &Tx,
    mode: RowLockMode,
) -> PgResult<HeapWrite> {
    lock_row(pool, rel, tid, xid, tx, mode, false)
}

/// [`heap_lock`] for a version found through an index entry, which may outlive it:
/// a version pruning removed is [`HeapWrite::Invisible`], not an error.
pub fn heap_lock_entry(
    pool: &BufferPool,
    rel: RelId,
    tid: ItemPointer,
    xid: Xid,
    tx: &Tx,
    mode: RowLockMode,
) -> PgResult<HeapWrite> {
    lock_row(pool, rel, tid, xid, tx, mode, true)
}

/// What locking one version did.
enum LockStep {
    /// Locked, or held already.
    Done,
    /// Locked (or nothing to lock: its updater committed), and its updater, which does
    /// not conflict, made a newer version at this address that must be locked too.
    Follow(ItemPointer, Xid),
    Refused(HeapWrite),
}

fn lock_row(
    pool: &BufferPool,
    rel: RelId,
    tid: ItemPointer,
    xid: Xid,
    tx: &Tx,
    mode: RowLockMode,
    missing_ok: bool,
) -> PgResult<HeapWrite> {
    let mut step = lock_version(pool, rel, tid, xid, tx, mode, missing_ok, None)?;
    while let LockStep::Follow(next, updater) = step {
        step = match lock_version(pool, rel, next, xid, tx, mode, true, Some(updater))? {
            // A newer version is being deleted or its key changed (wait, then start
            // again), or that happened (go on from there).
            LockStep::Refused(w @ (HeapWrite::BeingModified(_) | HeapWrite::Updated(_))) => {
                return Ok(w);
            }
            // The chain ends: its updater aborted, or pruning removed the rest.
            LockStep::Refused(_) => LockStep::Done,
            s => s,
        };
    }
    Ok(match step {
        LockStep::Refused(w) => w,
        _ => HeapWrite::Done(tid),
    })
}

/// Lock one version. `prior` is the updater of the version before it in an update
/// chain being followed: this version must be the one it inserted.
#[allow(clippy::too_many_arguments)]
fn lock_version(
    pool: &BufferPool,
    rel: RelId,
    tid: ItemPointer,
    xid: Xid,
    tx: &Tx,
    mode: RowLockMode,
    missing_ok: bool,
    prior: Option<Xid>,
) -> PgResult<LockStep> {
    // A newer version VACUUM removed may have had its page truncated away.
    if prior.is_some() && tid.block >= pool.smgr().nblocks(rel)? {
        return Ok(LockStep::Refused(HeapWrite::Invisible));
    }
    let mut buf = pin_tid_page(pool, rel, tid)?;
    let mut map_pin = None;
    let mut mtr = Mtr::new(pool);
    let p = mtr.latch(&mut buf);
    let mut tid = tid;
    // An index entry's root pruned to a redirect: the chain goes on at its target
    // (access rule 11), and the versions after it are followed as any update's.
    if missing_ok
        && prior.is_none()
        && let Some(id) = Page::new(mtr.page_ref(p)).item_id(tid.offset)
        && id.flags == storage::page::LpFlags::Redirect
    {
        tid.offset = id.off;
    }
    match (Page::new(mtr.page(p)).get_item(tid.offset), prior) {
        (None, _) if missing_ok => return Ok(LockStep::Refused(HeapWrite::Invisible)),
        // The address holds another tuple now: the chain ended.
        (Some(item), Some(u)) if tuple::header(item)?.xmin != u => {
            return Ok(LockStep::Refused(HeapWrite::Invisible));
        }
        _ => {}
    }
    let (h, verdict) = check_target(mtr.page(p), rel, tid, tx, mode, prior.is_some())?;
    if let Some(v) = verdict {
        return Ok(LockStep::Refused(v));
    }
    let holders = visibility::holders(&h, rel, tid, tx)?;
    let covered = holders.mine_covers(mode);
    // This transaction's lock under `xid` becomes the stronger of the two; its locks
    // under other ids of its own (an outer savepoint's) stay, for a rollback to undo.
    let mut lockers = holders.others;
    let mut strongest = mode;
    for (x, m) in holders.mine {
        if x == xid {
            strongest = strongest.max(m);
        } else {
            lockers.push((x, m));
        }
    }
    lockers.push((xid, strongest));
    let updater = if h.xmax != INVALID_XID && !visibility::lock_only(&h) {
        Some((h.xmax, visibility::fate(h.xmax, tx)?))
    } else {
        None
    };
    let newer = (h.ctid != tid && h.ctid != MOVED_TO_ANOTHER_PARTITION).then_some(h.ctid);
    let follow = |u| Ok(newer.map_or(LockStep::Done, |n| LockStep::Follow(n, u)));
    match updater {
        // Dead once its updater committed: only the newer versions need the lock.
        Some((u, Fate::Committed)) => return follow(u),
        // Updated by a running transaction that kept the key: `t_xmax` stays the
        // updater's, the lockers go aside (txn rule 8).
        Some((u, Fate::Running)) => {
            if !covered {
                tx.manager().set_version_lockers(rel, tid, u, &lockers);
                if h.infomask & HEAP_XMAX_LOCKERS_ASIDE == 0 {
                    let mut page = PageMut::new(mtr.page(p));
                    let item = page
                        .item_mut(tid.offset)
                        .ok_or_else(|| not_live(rel, tid))?;
                    let bits = h.infomask & !(tuple::HEAP_HASNULL | tuple::HEAP_HASVARWIDTH);
                    tuple::set_xmax(item, u, h.cid, bits | HEAP_XMAX_LOCKERS_ASIDE);
                    visibilitymap::clear(&mut mtr, pool, (rel, p, tid.block), &mut map_pin, None)?;
                    mtr.commit()?;
                }
            }
            return follow(u);
        }
        // An aborted updater: the version is the row again.
        _ => {}
    }
    if covered {
        return Ok(LockStep::Done);
    }
    let (locker, bits) = lockers_xmax(tx, &lockers)?;
    let mut page = PageMut::new(mtr.page(p));
    let item = page
        .item_mut(tid.offset)
        .ok_or_else(|| not_live(rel, tid))?;
    let bits = kept_bits(&h) | (h.infomask & HEAP_COMBOCID) | bits;
    tuple::set_xmax(item, locker, h.cid, bits);
    visibilitymap::clear(&mut mtr, pool, (rel, p, tid.block), &mut map_pin, None)?;
    mtr.commit()?;
    Ok(LockStep::Done)
}

/// Replace the version at `tid` with `new_tuple`, as transaction `xid`: the old version
/// gets `t_xmax` and points at the new one. Returns where the new version went.
/// `keys_updated`: the new version changes a key column (a column of a unique index),
/// so the update holds the row in Update mode and waits for every locker; otherwise in
/// NoKeyUpdate mode, which FOR KEY SHARE lockers (foreign key checks) do not block:
/// they keep their lock on the old version, kept aside, and on the new one, whose
/// `t_xmax` they become.
///
/// `hot`: no index's entry for the row changes, so a new version on the old one's page
/// is a heap-only tuple (access rule 11): the update is HOT exactly when `hot` and the
/// new version's block is the old one's, and then the caller adds no index entry.
#[allow(clippy::too_many_arguments)]
pub fn heap_update(
    pool: &BufferPool,
    rel: RelId,
    tid: ItemPointer,
    new_tuple: &[u8],
    xid: Xid,
    tx: &Tx,
    keys_updated: bool,
    hot: bool,
) -> PgResult<HeapWrite> {
    check_tuple(new_tuple)?;
    let want = if keys_updated {
        RowLockMode::Update
    } else {
        RowLockMode::NoKeyUpdate
    };
    let mut old_buf = pin_tid_page(pool, rel, tid)?;
    // Declared before the mini-transaction, which borrows them until it ends.
    let mut last_buf: Option<PinnedBuffer<'_>> = None;
    let mut new_buf: Option<PinnedBuffer<'_>> = None;
    let mut free_buf: Option<PinnedBuffer<'_>> = None;
    let (mut old_map_pin, mut new_map_pin) = (None, None);
    let mut mtr = Mtr::new(pool);
    let p = mtr.latch(&mut old_buf);
    let (h, verdict) = check_target(mtr.page(p), rel, tid, tx, want, false)?;
    if let Some(v) = verdict {
        return Ok(v);
    }
    // Running lockers that do not conflict (FOR KEY SHARE, for a NoKeyUpdate) keep
    // the row locked through both versions.
    let others = visibility::holders(&h, rel, tid, tx)?.others;
    let (carried, carried_bits) = lockers_xmax(tx, &others)?;
    let stamp = Stamp {
        xmin: xid,
        xmax: carried,
        cid: tx.cid(),
        bits: HEAP_UPDATED | carried_bits,
    };
    let mut old_bits = kept_bits(&h);
    if keys_updated {
        old_bits |= HEAP_KEYS_UPDATED;
    }
    if !others.is_empty() {
        tx.manager().set_version_lockers(rel, tid, xid, &others);
        old_bits |= HEAP_XMAX_LOCKERS_ASIDE;
    }
    let (cid, combo) = visibility::cid_for_delete(&h, tx);
    let stamp_old = |page: &mut [u8; BLCKSZ], new_tid: ItemPointer, bits: u16| -> PgResult<()> {
        let mut view = PageMut::new(page);
        let item = view
            .item_mut(tid.offset)
            .ok_or_else(|| not_live(rel, tid))?;
        tuple::set_xmax(item, xid, cid, old_bits | combo | bits);
        tuple::set_ctid(item, new_tid);
        mark_prunable(page, xid);
        Ok(())
    };
    let same_stamp = Stamp {
        bits: stamp.bits | if hot { HEAP_ONLY_TUPLE } else { 0 },
        ..stamp
    };
    let mut same_page = place_on_page(mtr.page(p), tid.block, new_tuple, same_stamp);
    if same_page.is_none() && prune_page(mtr.page(p), tid.block, tx)?.removed > 0 {
        same_page = place_on_page(mtr.page(p), tid.block, new_tuple, same_stamp);
    }
    if let Some(offset) = same_page {
        let new_tid = ItemPointer {
            block: tid.block,
            offset,
        };
        let bits = if hot { HEAP_HOT_UPDATED } else { 0 };
        stamp_old(mtr.page(p), new_tid, bits)?;
        visibilitymap::clear(&mut mtr, pool, (rel, p, tid.block), &mut old_map_pin, None)?;
        mtr.commit()?;
        return Ok(HeapWrite::Done(new_tid));
    }
    // Another page, after this one (ascending latch order): one the free space map says
    // has room (access rule 10), else the last page if it is a different one, else a new
    // page.
    let last = pool.smgr().nblocks(rel)?.saturating_sub(1);
    let mut placed = None;
    let need = storage::page::maxalign(new_tuple.len());
    if let Some(block) = freespace::search(pool, rel, need, tid.block + 1)?
        && block < last
    {
        freespace::counters::heap_page_examined();
        let q = mtr.latch(free_buf.insert(pool.read_buffer(rel, block)?));
        if !Page::new(mtr.page_ref(q)).is_new()
            && let Some(offset) = place_on_page(mtr.page(q), block, new_tuple, stamp)
        {
            placed = Some((ItemPointer { block, offset }, q));
        }
    }
    if placed.is_none() && last > tid.block {
        let q = mtr.latch(last_buf.insert(pool.read_buffer(rel, last)?));
        // A new (all-zero) last page belongs to the session that just extended the
        // relation and is about to initialise it (as in `heap_insert`): writing into it
        // here would make that session's extension find a page it did not make.
        if !Page::new(mtr.page_ref(q)).is_new()
            && let Some(offset) = place_on_page(mtr.page(q), last, new_tuple, stamp)
        {
            placed = Some((
                ItemPointer {
                    block: last,
                    offset,
                },
                q,
            ));
        }
    }
    let (new_tid, q) = match placed {
        Some(t) => t,
        None => {
            let (block, buf) = pool.extend(rel)?;
            let q = mtr.latch(new_buf.insert(buf));
            let offset = place_on_page(mtr.page(q), block, new_tuple, stamp)
                .expect("a tuple of at most MAX_HEAP_TUPLE_SIZE fits on an empty page");
            (ItemPointer { block, offset }, q)
        }
    };
    stamp_old(mtr.page(p), new_tid, 0)?;
    // Both pages' map bits go (one map page, latched once, where both are on it).
    let latched =
        visibilitymap::clear(&mut mtr, pool, (rel, p, tid.block), &mut old_map_pin, None)?;
    visibilitymap::clear(
        &mut mtr,
        pool,
        (rel, q, new_tid.block),
        &mut new_map_pin,
        latched,
    )?;
    mtr.commit()?;
    Ok(HeapWrite::Done(new_tid))
}

/// What [`set_all_visible`] did and found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Marked {
    /// The visibility map bits set (0: none).
    pub bits: u8,
    /// The page's free and fragmented bytes, for the free space map.
    pub room: usize,
    /// The oldest transaction id a tuple on the page still holds unfrozen (`t_xmin`,
    /// `t_xmax`, a multixact's members, lockers kept aside), once it is marked;
    /// `Xid::MAX` for none: what VACUUM's `frozen_xid` is the least of (txn rule 11).
    pub oldest_xid: Xid,
}

/// Mark heap page `block` all-visible (and all-frozen) in its flag and the visibility
/// map if every tuple on it is visible to all below `horizon`, deciding under the page's
/// latch in the mini-transaction that sets them (access rule 9). With `freeze`, each
/// such tuple's inserter becomes [`txn::FROZEN_XID`] first (VACUUM FREEZE), and a row
/// lock that no longer holds goes. A page with a DEAD stub (index entries may still
/// point at it) or an empty new page is left as it is. Returns the bits set, the page's
/// room for the free space map, and the oldest id its tuples still hold.
pub fn set_all_visible(
    pool: &BufferPool,
    rel: RelId,
    block: BlockNumber,
    horizon: Xid,
    mgr: &txn::TxnManager,
    freeze: bool,
) -> PgResult<Marked> {
    let mut buf = pool.read_buffer(rel, block)?;
    let mut map_pin = None;
    let mut mtr = Mtr::new(pool);
    let p = mtr.latch(&mut buf);
    let page = Page::new(mtr.page_ref(p));
    let untouched = |room, oldest_xid| Marked {
        bits: 0,
        room,
        oldest_xid,
    };
    if page.is_new() {
        return Ok(untouched(0, Xid::MAX));
    }
    // Marking and freezing change no tuple's size: the room is what it is now.
    let room = page.free_space() + page.fragmented_space();
    let mut frozen = true;
    let mut visible = true;
    let mut to_freeze = Vec::new();
    // The oldest ids the tuples hold: inserters (frozen if the page is marked with
    // FREEZE) and deleters or lockers.
    let (mut oldest_xmin, mut oldest_xmax) = (Xid::MAX, Xid::MAX);
    for off in 1..=page.max_offset() {
        let Some(id) = page.item_id(off) else {
            continue;
        };
        match id.flags {
            storage::page::LpFlags::Normal => {}
            storage::page::LpFlags::Dead => {
                visible = false;
                continue;
            }
            _ => continue,
        }
        let item = page.get_item(off).ok_or_else(|| {
            PgError::new(
                common::SqlState::DATA_CORRUPTED,
                format!(
                    "invalid line pointer {off} in block {block} of relation {}",
                    relpath(rel)
                ),
            )
        })?;
        let h = tuple::header(item)?;
        if h.xmin >= txn::FIRST_NORMAL_XID {
            oldest_xmin = oldest_xmin.min(h.xmin);
        }
        if h.xmax >= txn::FIRST_NORMAL_XID {
            // A multixact's members, and the lockers kept aside beside an updater, are
            // ids whose status a writer asks too (txn rule 8).
            let tid = ItemPointer { block, offset: off };
            let lockers = if h.infomask & tuple::HEAP_XMAX_IS_MULTI != 0 {
                mgr.multi_members(h.xmax)
            } else {
                oldest_xmax = oldest_xmax.min(h.xmax);
                if h.infomask & tuple::HEAP_XMAX_LOCKERS_ASIDE != 0 {
                    mgr.version_lockers(rel, tid, h.xmax)
                } else {
                    Vec::new()
                }
            };
            for (x, _) in lockers {
                oldest_xmax = oldest_xmax.min(x);
            }
        }
        if !visible || !visibility::visible_to_all(&h, mgr, horizon)? {
            visible = false;
            continue;
        }
        if freeze && h.xmin >= txn::FIRST_NORMAL_XID {
            to_freeze.push((off, h));
        }
        // A tuple with a `t_xmax` (a row lock, or a deleter that aborted) keeps it, and
        // keeps its page from being all-frozen: a locker may still run.
        frozen &= h.xmax == INVALID_XID && (freeze || h.xmin < txn::FIRST_NORMAL_XID);
    }
    if !visible {
        return Ok(untouched(room, oldest_xmin.min(oldest_xmax)));
    }
    // Marked, with FREEZE every inserter is frozen.
    let oldest_xid = if freeze {
        oldest_xmax
    } else {
        oldest_xmin.min(oldest_xmax)
    };
    let bits = visibilitymap::ALL_VISIBLE | if frozen { visibilitymap::ALL_FROZEN } else { 0 };
    let had = visibilitymap::get(pool, rel, block)?;
    if to_freeze.is_empty() && Page::new(mtr.page_ref(p)).is_all_visible() && had & bits == bits {
        // Set already (a VACUUM that did not skip the page).
        return Ok(untouched(room, oldest_xid));
    }
    let mut page = PageMut::new(mtr.page(p));
    for (off, h) in to_freeze {
        let item = page
            .item_mut(off)
            .ok_or_else(|| not_live(rel, ItemPointer { block, offset: off }))?;
        let bits = h.infomask & !(tuple::HEAP_HASNULL | tuple::HEAP_HASVARWIDTH);
        tuple::set_mvcc(item, txn::FROZEN_XID, h.xmax, h.cid, bits);
    }
    page.set_all_visible(true);
    visibilitymap::set(&mut mtr, pool, rel, block, bits, &mut map_pin)?;
    mtr.commit()?;
    Ok(Marked {
        bits,
        room,
        oldest_xid,
    })
}

/// Opportunistic pruning (access rules 7 and 11) of page `block`: [`prune`] against
/// the transaction manager's oldest xmin. The caller holds the page's exclusive latch in
/// a mini-transaction, which logs the change.
pub fn prune_page(page: &mut [u8; BLCKSZ], block: BlockNumber, tx: &Tx) -> PgResult<Pruned> {
    let mgr = tx.manager();
    prune(page, block, mgr, mgr.oldest_xmin())
}

/// What [`prune`] did to a page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Versions removed.
    pub removed: usize,
    /// Whether the page changed (versions removed, or its `pd_prune_xid` hint).
    pub changed: bool,
}

/// `pd_prune_xid` holds the low 32 bits of the oldest deleter on the page whose version
/// is not dead to all yet (0: none), compared modulo 2^32 as PostgreSQL compares its
/// xids. It is a hint (a wrong answer costs a futile prune, or a late one), so 64-bit
/// ids need no more room in the header.
fn prune_hint(xid: Xid) -> u32 {
    (xid as u32).max(1)
}

fn hint_precedes(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// Note on the page that `xid` deleted or updated a version on it (PostgreSQL's
/// `PageSetPrunable`): the hint keeps the oldest.
fn mark_prunable(page: &mut [u8; BLCKSZ], xid: Xid) {
    let x = prune_hint(xid);
    let p = Page::new(page).prune_xid();
    if p == 0 || hint_precedes(x, p) {
        PageMut::new(page).set_prune_xid(x);
    }
}

/// Whether pruning the page on access may pay (PostgreSQL's `heap_page_prune_opt`): it
/// has under a tenth free, and its hint names a deleter older than every snapshot's
/// xmin (`horizon`, asked only then).
fn worth_pruning(page: &[u8; BLCKSZ], horizon: impl FnOnce() -> Xid) -> bool {
    let view = Page::new(page);
    let hint = view.prune_xid();
    !view.is_new()
        && hint != 0
        && view.free_space() < BLCKSZ / 10
        && hint_precedes(hint, prune_hint(horizon()))
}

/// Prune page `block` of the buffer's relation if [`worth_pruning`], as a reader meets
/// it; a page whose versions are then all visible to everyone is marked so, as VACUUM
/// marks it (access rule 9: [`set_all_visible`] decides under the page's latch).
fn prune_on_access(
    pool: &BufferPool,
    buf: &mut PinnedBuffer<'_>,
    block: BlockNumber,
    mgr: &txn::TxnManager,
) -> PgResult<()> {
    let horizon = mgr.oldest_xmin();
    let pruned = {
        let mut mtr = Mtr::new(pool);
        let p = mtr.latch(buf);
        if !worth_pruning(mtr.page_ref(p), || horizon) {
            return Ok(());
        }
        let pruned = prune(mtr.page(p), block, mgr, horizon)?;
        if pruned.changed {
            mtr.commit()?;
        }
        pruned
    };
    if pruned.removed > 0 {
        set_all_visible(pool, buf.rel(), block, horizon, mgr, false)?;
    }
    Ok(())
}

/// What pruning knows of a NORMAL item.
#[derive(Clone, Copy)]
struct PruneItem {
    dead: bool,
    heap_only: bool,
    xmin: Xid,
    xmax: Xid,
    /// The next member of its HOT chain, if it was HOT-updated.
    next: Option<OffsetNumber>,
}

/// The offset of the next member of `h`'s HOT chain, if `h` (on page `block`) was
/// HOT-updated. Whether that member is the one its updater made is the caller's test
/// (its `t_xmin` is `h`'s `t_xmax`).
fn hot_next(h: &tuple::TupleHeader, block: BlockNumber) -> Option<OffsetNumber> {
    (h.infomask & HEAP_HOT_UPDATED != 0 && h.ctid.block == block).then_some(h.ctid.offset)
}

/// Prune page `block` (access rules 7 and 11): remove the versions no snapshot can see
/// (`visibility::dead_to_all` below `horizon`) and compact the page, so their space
/// serves new versions at once. For each HOT chain, from its root (a line pointer index
/// entries point at: a tuple that is not heap-only, or a redirect):
/// - every member dead: the root becomes a DEAD stub (VACUUM removes the index entries
///   pointing at it, then the stub) and the heap-only members UNUSED;
/// - the oldest members dead: the root redirects to the oldest member left, and the
///   dead heap-only members become UNUSED (no index entry points at them);
/// - dead members after a live one (the versions of an updater that aborted) become
///   UNUSED, as do dead heap-only tuples no chain reaches.
///
/// The page's `pd_prune_xid` becomes the oldest deleter of a version left that may
/// become dead (0: none). The caller holds the page's exclusive latch in a
/// mini-transaction, which logs the change if there is one.
pub fn prune(
    page: &mut [u8; BLCKSZ],
    block: BlockNumber,
    mgr: &txn::TxnManager,
    horizon: Xid,
) -> PgResult<Pruned> {
    let view = Page::new(page);
    let max = view.max_offset() as usize;
    let mut items: Vec<Option<PruneItem>> = vec![None; max + 1];
    let mut any_dead = false;
    // The oldest deleter of a version left that is not dead yet: at or above the
    // horizon (one below it that did not kill its version aborted, or only locked).
    let mut hint = 0;
    for off in 1..=max as OffsetNumber {
        let Some(item) = view.get_item(off) else {
            continue;
        };
        let h = tuple::header(item)?;
        let dead = visibility::dead_to_all(&h, mgr, horizon)?;
        any_dead |= dead;
        if !dead
            && h.xmax != INVALID_XID
            && h.xmax >= horizon
            && !visibility::lock_only(&h)
            && (hint == 0 || hint_precedes(prune_hint(h.xmax), hint))
        {
            hint = prune_hint(h.xmax);
        }
        items[off as usize] = Some(PruneItem {
            dead,
            heap_only: h.infomask & HEAP_ONLY_TUPLE != 0,
            xmin: h.xmin,
            xmax: h.xmax,
            next: hot_next(&h, block),
        });
    }
    let hint_changed = view.prune_xid() != hint;
    if !any_dead {
        if hint_changed {
            PageMut::new(page).set_prune_xid(hint);
        }
        return Ok(Pruned {
            removed: 0,
            changed: hint_changed,
        });
    }
    let mut reached = vec![false; max + 1];
    let mut redirects = Vec::new();
    let mut dead_roots = Vec::new();
    let mut unused = Vec::new();
    let mut removed = 0;
    for root in 1..=max as OffsetNumber {
        let Some(id) = view.item_id(root) else {
            continue;
        };
        let (start, redirected) = match id.flags {
            storage::page::LpFlags::Redirect => (id.off, true),
            storage::page::LpFlags::Normal
                if items[root as usize].is_some_and(|i| !i.heap_only) =>
            {
                (root, false)
            }
            _ => continue,
        };
        let chain = walk_chain(start, redirected, |off| {
            let i = items.get(off as usize).copied().flatten()?;
            Some((i.heap_only, i.xmin, i.xmax, i.next))
        });
        for &off in &chain {
            reached[off as usize] = true;
        }
        let dead = |off: OffsetNumber| items[off as usize].is_some_and(|i| i.dead);
        let ndead = chain.iter().take_while(|&&o| dead(o)).count();
        // Members after the first live one that are dead: an aborted updater's; only
        // the whole rest of the chain goes.
        if let Some(j) = chain[ndead..].iter().position(|&o| dead(o))
            && chain[ndead + j..].iter().all(|&o| dead(o))
        {
            unused.extend_from_slice(&chain[ndead + j..]);
            removed += chain.len() - ndead - j;
        }
        if ndead == 0 {
            if redirected && chain.is_empty() {
                // A redirect to nothing (never made so): a stub VACUUM clears.
                dead_roots.push(root);
            }
            continue;
        }
        removed += ndead;
        let heap_only = &chain[usize::from(!redirected)..ndead];
        unused.extend_from_slice(heap_only);
        if ndead == chain.len() {
            dead_roots.push(root);
        } else {
            redirects.push((root, chain[ndead]));
        }
    }
    for off in 1..=max {
        if let Some(i) = items[off]
            && i.heap_only
            && i.dead
            && !reached[off]
        {
            unused.push(off as OffsetNumber);
            removed += 1;
        }
    }
    let mut page = PageMut::new(page);
    if hint_changed {
        page.set_prune_xid(hint);
    }
    if removed == 0 && dead_roots.is_empty() {
        return Ok(Pruned {
            removed: 0,
            changed: hint_changed,
        });
    }
    for (root, to) in redirects {
        page.set_redirect(root, to);
    }
    for &off in dead_roots.iter().chain(&unused) {
        page.mark_dead(off);
    }
    page.set_unused(&unused);
    page.compact()?;
    Ok(Pruned {
        removed,
        changed: true,
    })
}

/// The members of the HOT chain that starts at `start` (`redirected`: reached through a
/// redirect, so it must be heap-only), oldest first. `item(off)` tells of a NORMAL item
/// whether it is heap-only, its `t_xmin`, `t_xmax` and next member. The chain is the
/// root (not heap-only, unless redirected), then heap-only tuples each inserted by the
/// previous one's updater; anything else ends it (a line pointer used again). At most
/// one member per line pointer: a loop ends it too.
fn walk_chain(
    start: OffsetNumber,
    redirected: bool,
    item: impl Fn(OffsetNumber) -> Option<(bool, Xid, Xid, Option<OffsetNumber>)>,
) -> Vec<OffsetNumber> {
    let mut chain: Vec<OffsetNumber> = Vec::new();
    let mut off = start;
    let mut prior = None;
    while let Some((heap_only, xmin, xmax, next)) = item(off) {
        if heap_only != (redirected || prior.is_some())
            || prior.is_some_and(|x| x != xmin)
            || chain.contains(&off)
        {
            break;
        }
        chain.push(off);
        match next {
            Some(n) => {
                prior = Some(xmax);
                off = n;
            }
            None => break,
        }
    }
    chain
}

/// Search the HOT chain an index entry's `tid` points at (its root: a redirect, or a
/// tuple that is not heap-only), oldest member first, under the page's shared latch:
/// `f` gets each member's address, bytes and header, and the first `Some` it returns is
/// the answer (PostgreSQL's `heap_hot_search_buffer`). An address past the relation's
/// end, or one whose line pointer is not a root, has no members.
///
/// Pruning on access (access rule 11): a page that is nearly full (under a tenth free,
/// PostgreSQL's threshold) and whose `pd_prune_xid` hint is older than every snapshot's
/// xmin is pruned afterwards, so chains collapse where rows are read, not only where
/// they are updated.
pub fn heap_hot_search<T>(
    pool: &BufferPool,
    rel: RelId,
    tid: ItemPointer,
    tx: &Tx,
    mut f: impl FnMut(ItemPointer, &[u8], &tuple::TupleHeader) -> PgResult<Option<T>>,
) -> PgResult<Option<T>> {
    if tid.block >= pool.smgr().nblocks(rel)? {
        return Ok(None);
    }
    let mut buf = pool.read_buffer(rel, tid.block)?;
    let (found, prune_first) = {
        let guard = buf.read();
        let page = Page::new(&guard);
        let (start, redirected) = match page.item_id(tid.offset) {
            Some(id) if id.flags == storage::page::LpFlags::Redirect => (id.off, true),
            Some(id) if id.flags == storage::page::LpFlags::Normal => (tid.offset, false),
            _ => return Ok(None),
        };
        let chain = walk_chain(start, redirected, |off| {
            let h = tuple::header(page.get_item(off)?).ok()?;
            Some((
                h.infomask & HEAP_ONLY_TUPLE != 0,
                h.xmin,
                h.xmax,
                hot_next(&h, tid.block),
            ))
        });
        let mut found = None;
        for &off in &chain {
            let item = page.get_item(off).ok_or_else(|| not_live(rel, tid))?;
            let h = tuple::header(item)?;
            let at = ItemPointer {
                block: tid.block,
                offset: off,
            };
            if let Some(t) = f(at, item, &h)? {
                found = Some(t);
                break;
            }
        }
        let mgr = tx.manager();
        (found, worth_pruning(&guard, || mgr.oldest_xmin()))
    };
    if prune_first {
        prune_on_access(pool, &mut buf, tid.block, tx.manager())?;
    }
    Ok(found)
}

/// The newer version an update made of the version at `tid` (through a redirect, for
/// an index entry's root: access rule 11), if one did: where a foreign key check goes on
/// from a row this transaction updated ([`HeapWrite::SelfModified`]).
pub fn heap_entry_newer(
    pool: &BufferPool,
    rel: RelId,
    tid: ItemPointer,
) -> PgResult<Option<ItemPointer>> {
    if tid.block >= pool.smgr().nblocks(rel)? {
        return Ok(None);
    }
    let buf = pool.read_buffer(rel, tid.block)?;
    let guard = buf.read();
    let page = Page::new(&guard);
    let at = match page.item_id(tid.offset) {
        Some(id) if id.flags == storage::page::LpFlags::Redirect => ItemPointer {
            block: tid.block,
            offset: id.off,
        },
        _ => tid,
    };
    let Some(item) = page.get_item(at.offset) else {
        return Ok(None);
    };
    let h = tuple::header(item)?;
    let updated = h.xmax != INVALID_XID && !visibility::lock_only(&h);
    Ok((updated && h.ctid != at && h.ctid != MOVED_TO_ANOTHER_PARTITION).then_some(h.ctid))
}

/// The version of the row index entry `tid` points at that `snap` sees, with its own
/// address (a member of the entry's HOT chain, [`heap_hot_search`]): what index scans
/// return.
pub fn heap_hot_fetch(
    pool: &BufferPool,
    rel: RelId,
    tid: ItemPointer,
    snap: &Snapshot,
    tx: &Tx,
) -> PgResult<Option<(ItemPointer, Vec<u8>)>> {
    heap_hot_search(pool, rel, tid, tx, |at, item, h| {
        Ok(visibility::visible(h, snap, tx)?.then(|| (at, item.to_vec())))
    })
}

/// The root of each NORMAL item's HOT chain on `page` (block `block`), by offset, with
/// its place in the chain (0: the oldest member); root 0: not a chain member. What a
/// new index's entries point at (access rule 11): every version of a chain is found
/// from its root.
pub fn hot_roots(page: &[u8; BLCKSZ], block: BlockNumber) -> Vec<(OffsetNumber, usize)> {
    let view = Page::new(page);
    let max = view.max_offset();
    let mut roots = vec![(0, 0); max as usize + 1];
    let info = |off: OffsetNumber| {
        let h = tuple::header(view.get_item(off)?).ok()?;
        Some((
            h.infomask & HEAP_ONLY_TUPLE != 0,
            h.xmin,
            h.xmax,
            hot_next(&h, block),
        ))
    };
    for root in 1..=max {
        let Some(id) = view.item_id(root) else {
            continue;
        };
        let (start, redirected) = match id.flags {
            storage::page::LpFlags::Redirect => (id.off, true),
            storage::page::LpFlags::Normal => (root, false),
            _ => continue,
        };
        for (depth, off) in walk_chain(start, redirected, info).into_iter().enumerate() {
            roots[off as usize] = (root, depth);
        }
    }
    roots
}

/// A copy of the tuple at `tid`, any version, or `None` if there is none (dead, unused,
/// past the page's line pointers or past the end of the relation).
pub fn heap_fetch(pool: &BufferPool, rel: RelId, tid: ItemPointer) -> PgResult<Option<Vec<u8>>> {
    if tid.block >= pool.smgr().nblocks(rel)? {
        return Ok(None);
    }
    let buf = pool.read_buffer(rel, tid.block)?;
    let page = buf.read();
    Ok(Page::new(&page).get_item(tid.offset).map(<[u8]>::to_vec))
}

/// The last line pointer of page `block` of `rel` (0 past its end): a lossy bitmap
/// page's rows are offsets 1 to it.
pub fn heap_page_max_offset(
    pool: &BufferPool,
    rel: RelId,
    block: BlockNumber,
) -> PgResult<OffsetNumber> {
    if block >= pool.smgr().nblocks(rel)? {
        return Ok(0);
    }
    let buf = pool.read_buffer(rel, block)?;
    let page = buf.read();
    Ok(Page::new(&page).max_offset())
}

/// A copy of the tuple at `tid` if `snap` sees that version.
pub fn heap_fetch_visible(
    pool: &BufferPool,
    rel: RelId,
    tid: ItemPointer,
    snap: &Snapshot,
    tx: &Tx,
) -> PgResult<Option<Vec<u8>>> {
    let Some(bytes) = heap_fetch(pool, rel, tid)? else {
        return Ok(None);
    };
    let h = tuple::header(&bytes)?;
    Ok(visibility::visible(&h, snap, tx)?.then_some(bytes))
}

/// A sequential scan: every tuple (or, with a snapshot, every version it sees), in block
/// and line pointer order, as `(item pointer, tuple bytes)`.
///
/// Reads the relation's size once, at the start: pages added later are not seen. Each page
/// is pinned just long enough to copy it (one pin at a time, none between calls), so a
/// scan never holds a buffer while its caller works; a page's tuples are those present
/// when it was copied. After an error the scan ends.
pub struct HeapScan<'a> {
    pool: &'a BufferPool,
    rel: RelId,
    nblocks: BlockNumber,
    /// Next block to read.
    next_block: BlockNumber,
    /// Copy of the block before `next_block` (none before the first block is read, so
    /// a scan of an empty table allocates nothing).
    page: Option<Box<[u8; BLCKSZ]>>,
    next_offset: OffsetNumber,
    failed: bool,
    visible_to: Option<(&'a Snapshot, &'a Tx)>,
}

impl<'a> HeapScan<'a> {
    /// Every tuple, whatever its version.
    pub fn new(pool: &'a BufferPool, rel: RelId) -> PgResult<HeapScan<'a>> {
        Ok(HeapScan {
            pool,
            rel,
            nblocks: pool.smgr().nblocks(rel)?,
            next_block: 0,
            page: None,
            next_offset: 1,
            failed: false,
            visible_to: None,
        })
    }

    /// The versions `snap` sees.
    pub fn visible(
        pool: &'a BufferPool,
        rel: RelId,
        snap: &'a Snapshot,
        tx: &'a Tx,
    ) -> PgResult<HeapScan<'a>> {
        let mut scan = HeapScan::new(pool, rel)?;
        scan.visible_to = Some((snap, tx));
        Ok(scan)
    }

    /// Number of blocks this scan covers.
    pub fn nblocks(&self) -> BlockNumber {
        self.nblocks
    }

    /// The scan's copy of the page the last tuple came from (for [`hot_roots`]).
    pub fn page(&self) -> Option<&[u8; BLCKSZ]> {
        self.page.as_deref()
    }
}

impl HeapScan<'_> {
    /// The next tuple, borrowed from the scan's copy of its page until the next call (a
    /// scan that decodes each tuple in place copies none of them).
    pub fn next_ref(&mut self) -> Option<PgResult<(ItemPointer, &[u8])>> {
        // Where the tuple lies in the page copy: found first, then borrowed.
        let (tid, start, len) = loop {
            if let Some(data) = self.page.as_deref() {
                let page = Page::new(data);
                let mut found = None;
                while self.next_offset <= page.max_offset() {
                    let offset = self.next_offset;
                    self.next_offset += 1;
                    if let Some(item) = page.get_item(offset) {
                        if let Some((snap, tx)) = self.visible_to {
                            let seen =
                                tuple::header(item).and_then(|h| visibility::visible(&h, snap, tx));
                            match seen {
                                Ok(true) => {}
                                Ok(false) => continue,
                                Err(e) => {
                                    self.failed = true;
                                    self.next_block = self.nblocks;
                                    return Some(Err(e));
                                }
                            }
                        }
                        let tid = ItemPointer {
                            block: self.next_block - 1,
                            offset,
                        };
                        let start = item.as_ptr() as usize - data.as_ptr() as usize;
                        found = Some((tid, start, item.len()));
                        break;
                    }
                }
                if let Some(f) = found {
                    break f;
                }
            }
            if self.failed || self.next_block >= self.nblocks {
                return None;
            }
            let read = self
                .pool
                .read_buffer(self.rel, self.next_block)
                .and_then(|mut buf| {
                    let copy = self.page.get_or_insert_with(|| Box::new([0; BLCKSZ]));
                    copy.copy_from_slice(&buf.read()[..]);
                    // A scan with a snapshot prunes a crowded page as it meets it (access
                    // rule 11), as PostgreSQL's does, and copies it again.
                    if let Some((_, tx)) = self.visible_to
                        && worth_pruning(copy, || tx.manager().oldest_xmin())
                    {
                        prune_on_access(self.pool, &mut buf, self.next_block, tx.manager())?;
                        copy.copy_from_slice(&buf.read()[..]);
                    }
                    Ok(())
                });
            if let Err(e) = read {
                self.failed = true;
                return Some(Err(e));
            }
            self.next_block += 1;
            self.next_offset = 1;
        };
        let data = self
            .page
            .as_deref()
            .expect("a tuple was found in the page copy");
        Some(Ok((tid, &data[start..start + len])))
    }
}

impl Iterator for HeapScan<'_> {
    type Item = PgResult<(ItemPointer, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_ref()
            .map(|r| r.map(|(tid, bytes)| (tid, bytes.to_vec())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::RowLockMode::{KeyShare, NoKeyUpdate, Share};
    use common::{DataType, SqlState, Value};
    use std::collections::BTreeMap;
    use std::sync::Arc;
    use storage::xlog::{self, WalOptions};
    use storage::{OsVfs, Smgr};
    use txn::{Isolation, TxnManager};

    const REL: RelId = 16384;
    const TYPES: [DataType; 2] = [DataType::Int4, DataType::Text];

    struct Env {
        dir: tempfile::TempDir,
        pool: BufferPool,
        mgr: Arc<TxnManager>,
    }

    /// A pool with a WAL and a transaction manager, and an empty relation `REL`.
    fn env(pages: usize) -> Env {
        let dir = tempfile::tempdir().expect("tempdir");
        let vfs: Arc<dyn storage::Vfs> = Arc::new(OsVfs);
        let smgr = Arc::new(Smgr::new(vfs.clone(), dir.path()).expect("smgr"));
        let mut pool = BufferPool::new(smgr, pages);
        let mgr = Arc::new(TxnManager::open(vfs.clone(), dir.path()).expect("txns"));
        let (wal, _) = xlog::open_and_recover_with(
            vfs,
            dir.path(),
            &mut pool,
            WalOptions::default(),
            &mut |r| mgr.redo(r),
            &|| mgr.checkpoint(),
        )
        .expect("wal");
        mgr.attach_wal(wal);
        pool.create_relation(REL).expect("create");
        Env { dir, pool, mgr }
    }

    impl Env {
        fn tx(&self, backend: u32) -> Tx {
            let t = Tx::new(self.mgr.clone(), backend);
            t.begin(Isolation::ReadCommitted, false);
            t
        }
    }

    /// One row, inserted by a transaction that committed (backend 1).
    fn committed_row(e: &Env) -> ItemPointer {
        let setup = e.tx(1);
        let tid = insert(&e.pool, &setup, 1, "a");
        setup.commit().expect("commit");
        tid
    }

    fn row(id: i32, text: &str) -> Vec<u8> {
        tuple::encode(&[Value::Int4(id), Value::Text(text.into())], &TYPES).expect("encode")
    }

    /// What a new statement of `tx` sees, by id.
    fn seen(pool: &BufferPool, tx: &Tx) -> BTreeMap<i32, (ItemPointer, String)> {
        let snap = tx.start_statement();
        let out = HeapScan::visible(pool, REL, &snap, tx)
            .expect("scan")
            .map(|r| {
                let (tid, bytes) = r.expect("scan row");
                match tuple::decode(&bytes, &TYPES).expect("decode").as_slice() {
                    [Value::Int4(i), Value::Text(s)] => (*i, (tid, s.clone())),
                    other => panic!("{other:?}"),
                }
            })
            .collect();
        tx.end_statement();
        out
    }

    fn insert(pool: &BufferPool, tx: &Tx, id: i32, text: &str) -> ItemPointer {
        let xid = tx.xid().expect("xid");
        heap_insert(pool, REL, &row(id, text), xid, tx.cid(), 100).expect("insert")
    }

    #[test]
    fn fillfactor_leaves_room_on_each_page() {
        let e = env(64);
        let t = e.tx(1);
        let xid = t.xid().expect("xid");
        let text = "x".repeat(200);
        let rows_on_first_page = |ff: u8, rel: RelId| {
            e.pool.create_relation(rel).expect("create");
            for i in 0..200 {
                heap_insert(&e.pool, rel, &row(i, &text), xid, 0, ff).expect("insert");
            }
            let buf = e.pool.read_buffer(rel, 0).expect("read");
            let page = buf.read();
            let page = Page::new(&page);
            (page.max_offset() as usize, page.free_space())
        };
        let (full, _) = rows_on_first_page(100, REL + 1);
        let (half, free) = rows_on_first_page(50, REL + 2);
        assert!(full > 30, "{full}");
        // Half the page stays free; one more row would have eaten into it.
        assert!(free >= BLCKSZ / 2, "{free}");
        assert!(free < BLCKSZ / 2 + 300, "{free}");
        assert!(half < full * 6 / 10, "{half} of {full}");
        // The smallest fillfactor still puts a row on every page.
        let (one, _) = rows_on_first_page(10, REL + 3);
        assert!(one >= 1);
    }

    /// Another session has just extended the relation (the file has a new zero block
    /// that it has not mapped into the pool yet) when an update's new version does not
    /// fit on its page: the update must not write into that block, or the extender finds
    /// a page it did not make ("already in the buffer pool").
    #[test]
    fn an_update_leaves_a_page_being_extended_to_its_extender() {
        let e = env(16);
        let t = e.tx(1);
        let text = "x".repeat(300);
        let mut first = None;
        while e.pool.smgr().nblocks(REL).expect("nblocks") < 2 {
            let tid = insert(&e.pool, &t, 0, &text);
            first.get_or_insert(tid);
        }
        // Block 0 is full and block 1 holds the last row. Another session extends the
        // relation: block 2 exists in the file, all zeros, not in the pool yet.
        let being_extended = e.pool.smgr().extend(REL).expect("another session extends");
        assert_eq!(being_extended, 2);
        // A new version too big for block 0 goes to the last page, or to a new one.
        let tid = first.expect("a row on block 0");
        let xid = t.xid().expect("xid");
        let w = heap_update(
            &e.pool,
            REL,
            tid,
            &row(1, &"y".repeat(600)),
            xid,
            &t,
            true,
            false,
        )
        .expect("update");
        let HeapWrite::Done(new_tid) = w else {
            panic!("{w:?}");
        };
        assert_ne!(
            new_tid.block, being_extended,
            "the update wrote into the new page"
        );
        let buf = e.pool.read_buffer(REL, being_extended).expect("read");
        assert!(
            Page::new(&buf.read()).is_new(),
            "the new page is still its extender's"
        );
    }

    #[test]
    fn ten_thousand_rows_through_eight_frames() {
        let e = env(8);
        let t = e.tx(1);
        let tids: Vec<ItemPointer> = (0..10_000)
            .map(|i| insert(&e.pool, &t, i, &format!("row {i}")))
            .collect();
        assert!(
            tids.windows(2).all(|w| w[0] < w[1]),
            "inserts append in order"
        );
        let other = e.tx(2);
        assert!(seen(&e.pool, &other).is_empty(), "not committed yet");
        t.commit().expect("commit");
        assert!(e.pool.smgr().nblocks(REL).expect("nblocks") > 50);
        assert!(e.pool.stats().evictions > 0);
        let check = |pool: &BufferPool| {
            let rows = seen(pool, &other);
            assert_eq!(rows.len(), 10_000);
            for (i, (tid, text)) in rows.values().enumerate() {
                assert_eq!(*tid, tids[i]);
                assert_eq!(text, &format!("row {i}"));
            }
        };
        check(&e.pool);
        let bytes = heap_fetch(&e.pool, REL, tids[1234])
            .expect("fetch")
            .expect("live");
        assert_eq!(tuple::ctid(&bytes).expect("ctid"), tids[1234]);
        e.pool.flush_all().expect("flush");
        let smgr = Arc::new(Smgr::new(Arc::new(OsVfs), e.dir.path()).expect("smgr"));
        check(&BufferPool::new(smgr, 8));
    }

    #[test]
    fn versions_follow_snapshots() {
        versions_follow_snapshots_from(txn::FIRST_NORMAL_XID);
    }

    /// The same with ids crossing 2^32, where PostgreSQL's 32-bit ids would wrap around
    /// (tuple rule 1).
    #[test]
    fn versions_follow_snapshots_across_2_pow_32() {
        versions_follow_snapshots_from((1 << 32) - 3);
    }

    fn versions_follow_snapshots_from(first_xid: Xid) {
        let e = env(16);
        e.mgr.advance_next_xid(first_xid);
        let setup = e.tx(1);
        let a = insert(&e.pool, &setup, 1, "a");
        let b = insert(&e.pool, &setup, 2, "b");
        let c = insert(&e.pool, &setup, 3, "c");
        setup.commit().expect("commit");

        let reader = e.tx(2);
        let rr = Tx::new(e.mgr.clone(), 3);
        rr.begin(Isolation::RepeatableRead, false);
        assert_eq!(seen(&e.pool, &rr).len(), 3);

        let writer = e.tx(4);
        let wx = writer.xid().expect("xid");
        assert_eq!(
            heap_delete(&e.pool, REL, a, wx, &writer).expect("delete"),
            HeapWrite::Done(a)
        );
        let HeapWrite::Done(b2) =
            heap_update(&e.pool, REL, b, &row(2, "b2"), wx, &writer, true, false).expect("update")
        else {
            panic!("update")
        };
        assert_ne!(b2, b);
        assert_eq!(
            heap_delete(&e.pool, REL, a, wx, &writer).expect("again"),
            HeapWrite::SelfModified
        );
        // Uncommitted: others see the old versions; the writer's next statement the new.
        let r = seen(&e.pool, &reader);
        assert_eq!(r.keys().copied().collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(r[&2].1, "b");
        writer.end_statement();
        let w = seen(&e.pool, &writer);
        assert_eq!(w.keys().copied().collect::<Vec<_>>(), vec![2, 3]);
        assert_eq!(w[&2], (b2, "b2".to_string()));

        // Another writer runs into the change and must wait for it.
        let second = e.tx(5);
        let sx = second.xid().expect("xid");
        assert_eq!(
            heap_update(&e.pool, REL, b, &row(2, "x"), sx, &second, true, false).expect("blocked"),
            HeapWrite::BeingModified(wx)
        );
        writer.commit().expect("commit");
        assert_eq!(
            heap_update(&e.pool, REL, b, &row(2, "x"), sx, &second, true, false).expect("after"),
            HeapWrite::Updated(Some(b2))
        );
        assert_eq!(
            heap_delete(&e.pool, REL, a, sx, &second).expect("deleted"),
            HeapWrite::Updated(None)
        );
        // Read committed sees the commit in its next statement; repeatable read never.
        assert_eq!(
            seen(&e.pool, &reader).keys().copied().collect::<Vec<_>>(),
            vec![2, 3]
        );
        assert_eq!(seen(&e.pool, &rr).len(), 3);
        assert_eq!(seen(&e.pool, &rr)[&2].1, "b");

        // An aborted change is as if it never happened.
        let doomed = e.tx(6);
        let dx = doomed.xid().expect("xid");
        heap_delete(&e.pool, REL, c, dx, &doomed).expect("delete");
        insert(&e.pool, &doomed, 4, "d");
        doomed.abort().expect("abort");
        assert_eq!(
            heap_delete(&e.pool, REL, c, sx, &second).expect("delete"),
            HeapWrite::Done(c)
        );
        second.commit().expect("commit");
        assert_eq!(
            seen(&e.pool, &reader).keys().copied().collect::<Vec<_>>(),
            vec![2]
        );
    }

    #[test]
    fn a_transaction_sees_its_own_commands_in_order() {
        let e = env(16);
        let t = e.tx(1);
        let tid = insert(&e.pool, &t, 1, "mine");
        assert!(
            seen(&e.pool, &t).is_empty(),
            "a command does not see its own rows"
        );
        assert_eq!(seen(&e.pool, &t).len(), 1, "the next command does");
        let x = t.xid().expect("xid");
        let snap = t.start_statement();
        assert_eq!(
            heap_delete(&e.pool, REL, tid, x, &t).expect("delete"),
            HeapWrite::Done(tid)
        );
        let h = tuple::header(&heap_fetch(&e.pool, REL, tid).unwrap().unwrap()).unwrap();
        assert_ne!(
            h.infomask & HEAP_COMBOCID,
            0,
            "inserted and deleted by one transaction"
        );
        assert!(
            visibility::visible(&h, &snap, &t).unwrap(),
            "the deleting command still sees it"
        );
        t.end_statement();
        assert!(seen(&e.pool, &t).is_empty(), "later commands do not");
    }

    #[test]
    fn row_locks_block_writers_not_readers() {
        let e = env(16);
        let tid = committed_row(&e);
        let locker = e.tx(2);
        let lx = locker.xid().expect("xid");
        assert_eq!(
            heap_lock(&e.pool, REL, tid, lx, &locker, RowLockMode::Update).expect("lock"),
            HeapWrite::Done(tid)
        );
        let reader = e.tx(3);
        assert_eq!(seen(&e.pool, &reader).len(), 1, "a lock hides nothing");
        let writer = e.tx(4);
        let wx = writer.xid().expect("xid");
        assert_eq!(
            heap_delete(&e.pool, REL, tid, wx, &writer).expect("blocked"),
            HeapWrite::BeingModified(lx)
        );
        assert_eq!(
            heap_update(&e.pool, REL, tid, &row(1, "b"), lx, &locker, true, false)
                .expect("own lock"),
            HeapWrite::Done(ItemPointer {
                block: 0,
                offset: 2
            })
        );
        locker.commit().expect("commit");
        assert_eq!(
            heap_delete(&e.pool, REL, tid, wx, &writer).expect("updated"),
            HeapWrite::Updated(Some(ItemPointer {
                block: 0,
                offset: 2
            }))
        );
    }

    #[test]
    fn row_lock_modes_conflict_as_in_postgresql() {
        use common::RowLockMode::Update;
        let all = [KeyShare, Share, NoKeyUpdate, Update];
        let e = env(16);
        for held in all {
            for want in all {
                let tid = committed_row(&e);
                let (a, b) = (e.tx(2), e.tx(3));
                let ax = a.xid().expect("xid");
                assert_eq!(
                    heap_lock(&e.pool, REL, tid, ax, &a, held).unwrap(),
                    HeapWrite::Done(tid)
                );
                let bx = b.xid().expect("xid");
                let got = heap_lock(&e.pool, REL, tid, bx, &b, want).unwrap();
                let expected = if held.conflicts(want) {
                    HeapWrite::BeingModified(ax)
                } else {
                    HeapWrite::Done(tid)
                };
                assert_eq!(got, expected, "{held:?} held, {want:?} wanted");
                // Whoever holds the row, a delete waits for the first holder.
                let c = e.tx(4);
                let cx = c.xid().expect("xid");
                assert_eq!(
                    heap_delete(&e.pool, REL, tid, cx, &c).unwrap(),
                    HeapWrite::BeingModified(ax)
                );
                // And taking a lock again, or a weaker one, changes nothing.
                let h = tuple::header(&heap_fetch(&e.pool, REL, tid).unwrap().unwrap()).unwrap();
                assert_eq!(
                    heap_lock(&e.pool, REL, tid, ax, &a, KeyShare).unwrap(),
                    HeapWrite::Done(tid)
                );
                let again = tuple::header(&heap_fetch(&e.pool, REL, tid).unwrap().unwrap());
                assert_eq!(again.unwrap(), h);
                for t in [a, b, c] {
                    t.abort().expect("abort");
                }
            }
        }
    }

    #[test]
    fn key_share_lockers_and_no_key_updates_coexist() {
        let e = env(16);
        let tid = committed_row(&e);
        let header = |tid| tuple::header(&heap_fetch(&e.pool, REL, tid).unwrap().unwrap()).unwrap();
        let (a, u, w, b) = (e.tx(2), e.tx(3), e.tx(4), e.tx(5));
        let (ax, ux, wx, bx) = (
            a.xid().unwrap(),
            u.xid().unwrap(),
            w.xid().unwrap(),
            b.xid().unwrap(),
        );
        assert_eq!(
            heap_lock(&e.pool, REL, tid, ax, &a, KeyShare).unwrap(),
            HeapWrite::Done(tid)
        );
        // A key change waits for the FOR KEY SHARE locker; an update keeping the key
        // does not, and the lock goes on to the new version.
        assert_eq!(
            heap_update(&e.pool, REL, tid, &row(1, "k"), ux, &u, true, false).unwrap(),
            HeapWrite::BeingModified(ax)
        );
        let HeapWrite::Done(new) =
            heap_update(&e.pool, REL, tid, &row(1, "b"), ux, &u, false, false).unwrap()
        else {
            panic!("a no-key update waited")
        };
        let old = header(tid);
        assert_eq!(old.xmax, ux);
        assert_ne!(old.infomask & HEAP_XMAX_LOCKERS_ASIDE, 0);
        assert_eq!(e.mgr.version_lockers(REL, tid, ux), [(ax, KeyShare)]);
        let h = header(new);
        assert_eq!((h.xmax, visibility::lock_only(&h)), (ax, true));
        // Another FOR KEY SHARE of the old version does not wait for the running
        // updater either: it locks both versions.
        assert_eq!(
            heap_lock(&e.pool, REL, tid, bx, &b, KeyShare).unwrap(),
            HeapWrite::Done(tid)
        );
        assert_eq!(
            e.mgr.version_lockers(REL, tid, ux),
            [(ax, KeyShare), (bx, KeyShare)]
        );
        let h = header(new);
        assert_ne!(h.infomask & HEAP_XMAX_IS_MULTI, 0);
        assert_eq!(
            e.mgr.multi_members(h.xmax),
            [(ax, KeyShare), (bx, KeyShare)]
        );
        // FOR SHARE conflicts with the running update.
        assert_eq!(
            heap_lock(&e.pool, REL, tid, wx, &w, Share).unwrap(),
            HeapWrite::BeingModified(ux)
        );
        // The updater aborts: the old version is the row again, still locked by both.
        u.abort().expect("abort");
        assert_eq!(
            heap_delete(&e.pool, REL, tid, wx, &w).unwrap(),
            HeapWrite::BeingModified(ax)
        );
        a.commit().expect("commit");
        assert_eq!(
            heap_delete(&e.pool, REL, tid, wx, &w).unwrap(),
            HeapWrite::BeingModified(bx)
        );
        // A no-key update now, committed: FOR KEY SHARE of the old version goes on
        // (to the new one), FOR SHARE finds it updated.
        let HeapWrite::Done(newer) =
            heap_update(&e.pool, REL, tid, &row(1, "c"), wx, &w, false, false).unwrap()
        else {
            panic!("b's key share lock blocked a no-key update")
        };
        w.commit().expect("commit");
        let (c, d) = (e.tx(6), e.tx(7));
        let (cx, dx) = (c.xid().unwrap(), d.xid().unwrap());
        assert_eq!(
            heap_lock(&e.pool, REL, tid, cx, &c, Share).unwrap(),
            HeapWrite::Updated(Some(newer))
        );
        assert_eq!(
            heap_lock(&e.pool, REL, tid, cx, &c, KeyShare).unwrap(),
            HeapWrite::Done(tid)
        );
        let h = header(newer);
        assert_eq!(
            e.mgr.multi_members(h.xmax),
            [(bx, KeyShare), (cx, KeyShare)]
        );
        // Deleting the newest version waits for both lockers; b's lock goes with it.
        assert_eq!(
            heap_delete(&e.pool, REL, newer, dx, &d).unwrap(),
            HeapWrite::BeingModified(bx)
        );
        b.abort().expect("abort");
        c.abort().expect("abort");
        assert_eq!(
            heap_delete(&e.pool, REL, newer, dx, &d).unwrap(),
            HeapWrite::Done(newer)
        );
        d.commit().expect("commit");
        // Deleted: FOR KEY SHARE of the first version follows the chain to the delete.
        let f = e.tx(8);
        let fx = f.xid().unwrap();
        assert_eq!(
            heap_lock(&e.pool, REL, tid, fx, &f, KeyShare).unwrap(),
            HeapWrite::Updated(None)
        );
    }

    #[test]
    fn share_lockers_hold_a_row_together() {
        let e = env(16);
        let tid = committed_row(&e);
        let share = |t: &Tx| {
            let x = t.xid().expect("xid");
            heap_lock(&e.pool, REL, tid, x, t, RowLockMode::Share).expect("share lock")
        };
        let header = || tuple::header(&heap_fetch(&e.pool, REL, tid).unwrap().unwrap()).unwrap();
        let (a, b, c) = (e.tx(2), e.tx(3), e.tx(4));
        assert_eq!(share(&a), HeapWrite::Done(tid));
        assert_eq!(
            header().xmax,
            a.top_xid().unwrap(),
            "one locker: its own id"
        );
        assert_eq!(
            share(&b),
            HeapWrite::Done(tid),
            "a second share lock does not wait"
        );
        let h = header();
        assert_ne!(h.infomask & HEAP_XMAX_IS_MULTI, 0);
        let members = e.mgr.multi_members(h.xmax);
        assert_eq!(
            members,
            [(a.top_xid().unwrap(), Share), (b.top_xid().unwrap(), Share)]
        );
        assert_eq!(share(&b), HeapWrite::Done(tid), "held already");
        assert_eq!(header(), h, "nothing written");
        // A writer, and an exclusive locker, wait for each share locker in turn.
        let w = e.tx(5);
        let wx = w.xid().expect("xid");
        let ax = a.top_xid().unwrap();
        assert_eq!(
            heap_delete(&e.pool, REL, tid, wx, &w).unwrap(),
            HeapWrite::BeingModified(ax)
        );
        assert_eq!(
            heap_lock(&e.pool, REL, tid, wx, &w, RowLockMode::Update).unwrap(),
            HeapWrite::BeingModified(ax)
        );
        a.commit().expect("commit");
        // The third share locker joins the one still running.
        assert_eq!(share(&c), HeapWrite::Done(tid));
        let members = e.mgr.multi_members(header().xmax);
        assert_eq!(
            members,
            [(b.top_xid().unwrap(), Share), (c.top_xid().unwrap(), Share)]
        );
        // A member that wants the row for itself waits for the others.
        let bx = b.top_xid().unwrap();
        assert_eq!(
            heap_delete(&e.pool, REL, tid, bx, &b).unwrap(),
            HeapWrite::BeingModified(c.top_xid().unwrap())
        );
        c.abort().expect("abort");
        assert_eq!(
            heap_update(&e.pool, REL, tid, &row(1, "b"), bx, &b, true, false).unwrap(),
            HeapWrite::Done(ItemPointer {
                block: 0,
                offset: 2
            })
        );
        let h = header();
        assert_eq!((h.xmax, h.infomask & HEAP_XMAX_IS_MULTI), (bx, 0));
        b.commit().expect("commit");
        assert_eq!(
            heap_delete(&e.pool, REL, tid, wx, &w).unwrap(),
            HeapWrite::Updated(Some(ItemPointer {
                block: 0,
                offset: 2
            }))
        );
    }

    #[test]
    fn share_locks_after_a_restart_are_gone() {
        let e = env(16);
        let tid = committed_row(&e);
        let (a, b) = (e.tx(2), e.tx(3));
        for t in [&a, &b] {
            let x = t.xid().expect("xid");
            assert_eq!(
                heap_lock(&e.pool, REL, tid, x, t, RowLockMode::Share).unwrap(),
                HeapWrite::Done(tid)
            );
        }
        // A manager that never saw the multixact (as after a restart, where its members
        // are gone) finds no running member: the row is free.
        e.mgr.checkpoint().expect("checkpoint");
        let vfs: Arc<dyn storage::Vfs> = Arc::new(OsVfs);
        let other = Arc::new(TxnManager::open(vfs, e.dir.path()).expect("txns"));
        other.advance_next_xid(e.mgr.next_xid());
        let fresh = Tx::new(other, 9);
        fresh.begin(Isolation::ReadCommitted, false);
        let h = tuple::header(&heap_fetch(&e.pool, REL, tid).unwrap().unwrap()).unwrap();
        assert_eq!(
            visibility::check_write(&h, REL, tid, &fresh, RowLockMode::Update, false).unwrap(),
            WriteCheck::Ok
        );
    }

    #[test]
    fn too_big_and_malformed_tuples() {
        let e = env(4);
        let t = e.tx(1);
        let x = t.xid().expect("xid");
        let err = heap_insert(&e.pool, REL, &vec![0u8; 9000], x, 0, 100).expect_err("too big");
        assert_eq!(err.code, SqlState::PROGRAM_LIMIT_EXCEEDED);
        assert_eq!(err.message, "row is too big: size 9000, maximum size 8160");
        assert!(heap_insert(&e.pool, REL, b"short", x, 0, 100).is_err());
        let big = "z".repeat(MAX_HEAP_TUPLE_SIZE - HEAP_TUPLE_HEADER_SIZE - 8 - 4);
        let a = insert(&e.pool, &t, 1, &big);
        let b = insert(&e.pool, &t, 2, &big);
        assert_eq!((a.block, b.block), (0, 1));
        t.end_statement();
        assert_eq!(seen(&e.pool, &t).len(), 2);
        let beyond = ItemPointer {
            block: 1_000_000,
            offset: 1,
        };
        assert_eq!(heap_fetch(&e.pool, REL, beyond).expect("fetch"), None);
        assert!(heap_delete(&e.pool, REL, beyond, x, &t).is_err());
    }

    /// A seeded xorshift PRNG: tests replay from the seed printed on failure.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    #[test]
    fn randomized_against_a_model() {
        for seed in [1u64, 0xdead_beef, 42_4242] {
            run_model(seed);
        }
    }

    /// Random inserts, deletes and updates, each its own transaction (some aborted); a
    /// new snapshot must always see exactly the model.
    fn run_model(seed: u64) {
        let e = env(8);
        let mut rng = Rng(seed);
        let mut model: BTreeMap<i32, (ItemPointer, String)> = BTreeMap::new();
        let mut next_id = 0;
        for step in 0..1500u32 {
            let text_len = match rng.below(10) {
                0 => 2000 + rng.below(3000),
                1..=3 => 0,
                _ => rng.below(200),
            };
            let text: String =
                std::iter::repeat_n((b'a' + (step % 26) as u8) as char, text_len).collect();
            let t = e.tx(1);
            let x = t.xid().expect("xid");
            let ids: Vec<i32> = model.keys().copied().collect();
            let mut change = None;
            match rng.below(10) {
                0..=4 => {
                    let tid = insert(&e.pool, &t, next_id, &text);
                    change = Some((next_id, Some((tid, text))));
                    next_id += 1;
                }
                5 | 6 if !ids.is_empty() => {
                    let id = ids[rng.below(ids.len())];
                    let tid = model[&id].0;
                    assert_eq!(
                        heap_delete(&e.pool, REL, tid, x, &t).expect("delete"),
                        HeapWrite::Done(tid)
                    );
                    change = Some((id, None));
                }
                7..=9 if !ids.is_empty() => {
                    let id = ids[rng.below(ids.len())];
                    let tid = model[&id].0;
                    let HeapWrite::Done(new) =
                        heap_update(&e.pool, REL, tid, &row(id, &text), x, &t, true, false)
                            .expect("update")
                    else {
                        panic!("seed {seed} step {step}: update refused")
                    };
                    change = Some((id, Some((new, text))));
                }
                _ => {}
            }
            if rng.below(5) == 0 {
                t.abort().expect("abort");
            } else {
                t.commit().expect("commit");
                match change {
                    Some((id, Some(v))) => {
                        model.insert(id, v);
                    }
                    Some((id, None)) => {
                        model.remove(&id);
                    }
                    None => {}
                }
            }
            if step % 100 == 99 {
                let reader = e.tx(2);
                assert_eq!(seen(&e.pool, &reader), model, "seed {seed} step {step}");
                reader.commit().expect("commit");
            }
        }
    }

    /// The page's flag and its map bits, as a reader finds them.
    fn visibility_of(e: &Env, block: BlockNumber) -> (bool, u8) {
        let flag =
            Page::new(&e.pool.read_buffer(REL, block).expect("page").read()).is_all_visible();
        (flag, visibilitymap::get(&e.pool, REL, block).expect("map"))
    }

    fn mark(e: &Env, freeze: bool) -> u8 {
        set_all_visible(&e.pool, REL, 0, e.mgr.oldest_xmin(), &e.mgr, freeze)
            .expect("mark")
            .bits
    }

    #[test]
    fn all_visible_pages_are_marked_only_when_every_tuple_is_visible_to_all() {
        use visibilitymap::ALL_VISIBLE;
        let e = env(16);
        let nothing = visibilitymap::get(&e.pool, REL, 0).expect("map");
        assert_eq!(nothing, 0, "no page, no map: nothing claimed");
        committed_row(&e);
        // A running inserter keeps the page from being all-visible.
        let running = e.tx(2);
        let tid = insert(&e.pool, &running, 2, "b");
        assert_eq!(mark(&e, false), 0);
        assert_eq!(visibility_of(&e, 0), (false, 0));
        running.commit().expect("commit");
        assert_eq!(
            mark(&e, false),
            ALL_VISIBLE,
            "not frozen: the inserters are not"
        );
        assert_eq!(visibility_of(&e, 0), (true, ALL_VISIBLE));
        assert_eq!(mark(&e, false), 0, "marked already");
        // A committed delete leaves a version no one may see: not all-visible.
        let deleter = e.tx(3);
        let xid = deleter.xid().expect("xid");
        heap_delete(&e.pool, REL, tid, xid, &deleter).expect("delete");
        deleter.commit().expect("commit");
        assert_eq!(mark(&e, false), 0);
    }

    #[test]
    fn every_change_to_an_all_visible_page_clears_it_in_the_same_step() {
        type Change = fn(&Env, &Tx, ItemPointer);
        let changes: [(&str, Change); 4] = [
            ("insert", |e, tx, _| {
                insert(&e.pool, tx, 3, "c");
            }),
            ("lock", |e, tx, tid| {
                let xid = tx.xid().expect("xid");
                heap_lock(&e.pool, REL, tid, xid, tx, KeyShare).expect("lock");
            }),
            ("update", |e, tx, tid| {
                let xid = tx.xid().expect("xid");
                heap_update(&e.pool, REL, tid, &row(1, "a2"), xid, tx, false, false)
                    .expect("update");
            }),
            ("delete", |e, tx, tid| {
                let xid = tx.xid().expect("xid");
                heap_delete(&e.pool, REL, tid, xid, tx).expect("delete");
            }),
        ];
        for (what, change) in changes {
            let e = env(16);
            let tid = committed_row(&e);
            assert_eq!(mark(&e, false), visibilitymap::ALL_VISIBLE);
            let tx = e.tx(2);
            change(&e, &tx, tid);
            assert_eq!(
                visibility_of(&e, 0),
                (false, 0),
                "{what} cleared flag and bits"
            );
            // Rolled back, the change still cleared them: the page holds its version.
            tx.abort().expect("abort");
            assert_eq!(visibility_of(&e, 0), (false, 0), "{what}");
        }
    }

    #[test]
    fn vacuum_freeze_freezes_inserters_and_marks_the_page_all_frozen() {
        use visibilitymap::{ALL_FROZEN, ALL_VISIBLE};
        let e = env(16);
        let tid = committed_row(&e);
        assert_eq!(mark(&e, true), ALL_VISIBLE | ALL_FROZEN);
        assert_eq!(visibility_of(&e, 0), (true, ALL_VISIBLE | ALL_FROZEN));
        let bytes = heap_fetch(&e.pool, REL, tid)
            .expect("fetch")
            .expect("there");
        assert_eq!(tuple::header(&bytes).expect("header").xmin, txn::FROZEN_XID);
        assert_eq!(seen(&e.pool, &e.tx(2)).len(), 1, "a frozen row is visible");
        // A row lock keeps the page from being all-frozen (its locker may run).
        let locker = e.tx(3);
        let xid = locker.xid().expect("xid");
        heap_lock(&e.pool, REL, tid, xid, &locker, Share).expect("lock");
        assert_eq!(mark(&e, true), ALL_VISIBLE, "visible to all, not frozen");
        locker.commit().expect("commit");
    }
}
