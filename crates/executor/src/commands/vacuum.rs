//! VACUUM: remove tuple versions no snapshot can see, and the index entries pointing at
//! them, so their space and item pointers can be used again.
//!
//! Passes, in this order (page rule 4):
//! 1. read every heap page (a copy, no latch held while deciding); one holding versions
//!    dead to everyone (`visibility::dead_to_all` against the transaction manager's
//!    oldest xmin) is pruned first (`heapam::prune`, access rules 7 and 11: dead
//!    versions become DEAD stubs, dead heap-only tuples UNUSED, HOT chains' roots
//!    redirects), and the DEAD stubs are collected;
//! 2. remove every index entry pointing at one of them (`BTree::bulk_delete`);
//! 3. on each heap page that had any, make the stubs UNUSED — one mini-transaction per
//!    page;
//! 4. mark each page read whose tuples are all visible to everyone all-visible, in its
//!    flag and the visibility map (`heapam::set_all_visible`, access rule 9), freezing
//!    them first with FREEZE.
//!
//! Pass 1 skips the pages the map says are all-visible (all-frozen, with FREEZE): they
//! hold nothing to remove, and they stay marked until a change clears them. A page
//! skipped is counted, not read: the caller estimates its rows.
//!
//! Why correct: a version dead to everyone stays dead (its deleter committed before every
//! snapshot, or its inserter aborted), so what pass 1 decided still holds in pass 3; no
//! index entry points at a line pointer once it is UNUSED, so reusing it is safe.

use std::collections::{BTreeMap, HashSet};

use access::nbtree::RootCache;
use access::{visibility, visibilitymap};
use catalog::TableDesc;
use common::ids::OffsetNumber;
use common::{ItemPointer, PgResult};
use storage::page::{LpFlags, Page, PageMut};
use storage::{BufferPool, Mtr};

/// What one VACUUM of a table did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VacuumStats {
    /// The table's pages, and those read (the others were skipped: all-visible).
    pub pages: u64,
    pub pages_scanned: u64,
    /// Pages marked all-visible, and all-frozen, by this VACUUM.
    pub pages_marked_visible: u64,
    pub pages_marked_frozen: u64,
    /// Pages all-visible when it ended, as far as it knows: those it skipped and those
    /// it marked (PostgreSQL's `relallvisible` after a VACUUM).
    pub pages_all_visible: u32,
    /// Empty pages cut from the end of the table.
    pub pages_removed: u64,
    pub tuples_removed: u64,
    /// Versions left (live, or still visible to some snapshot).
    pub tuples_remaining: u64,
    /// Of those, the rows of the table (committed, not deleted by a committed
    /// transaction) and the deleted ones some snapshot may still see: what
    /// `pg_stat_user_tables` shows as `n_live_tup` and `n_dead_tup`.
    pub live_tuples: u64,
    pub dead_tuples: u64,
    pub index_entries_removed: u64,
    /// No tuple left holds an id below this one unfrozen (txn rule 11): known when
    /// every page was read or skipped as all-frozen; the least of what the pages marked
    /// held and the horizon (a writer after the start has a later id).
    pub frozen_xid: Option<txn::Xid>,
}

/// VACUUM one table, then its TOAST relation (the chunks of the values its removed
/// versions stored out of line, access rule 12); with `freeze`, VACUUM FREEZE. The
/// counts are the table's.
pub fn vacuum_table(
    pool: &BufferPool,
    roots: &RootCache,
    tx: &txn::Tx,
    table: &TableDesc,
    freeze: bool,
) -> PgResult<VacuumStats> {
    let mut stats = vacuum_heap(pool, roots, tx, table, freeze)?;
    if let Some(toast) = table.toast.filter(|&rel| pool.smgr().exists(rel)) {
        // A heap with no index; truncating it takes the table's lock.
        let heap = TableDesc {
            rel: toast,
            indexes: Vec::new(),
            ..table.clone()
        };
        let chunks = vacuum_heap(pool, roots, tx, &heap, freeze)?;
        stats.frozen_xid = stats
            .frozen_xid
            .zip(chunks.frozen_xid)
            .map(|(a, b)| a.min(b));
    }
    Ok(stats)
}

/// VACUUM one heap and its indexes.
fn vacuum_heap(
    pool: &BufferPool,
    roots: &RootCache,
    tx: &txn::Tx,
    table: &TableDesc,
    freeze: bool,
) -> PgResult<VacuumStats> {
    let mgr = tx.manager();
    let horizon = mgr.oldest_xmin();
    let mut stats = VacuumStats::default();
    let nblocks = pool.smgr().nblocks(table.rel)?;
    stats.pages = u64::from(nblocks);
    let mut dead: BTreeMap<u32, Vec<OffsetNumber>> = BTreeMap::new();
    let mut scanned = Vec::new();
    let mut map = visibilitymap::Reader::new(pool, table.rel);
    let skip = if freeze {
        visibilitymap::ALL_FROZEN
    } else {
        visibilitymap::ALL_VISIBLE
    };
    let mut copy = Box::new([0u8; common::limits::BLCKSZ]);
    // The pages up to the last one that will hold a tuple when this VACUUM is done (a
    // page skipped counts as holding some): what a truncation keeps.
    let mut nonempty = 0;
    // Every page read, or skipped as all-frozen: the oldest id left is known.
    let mut complete = true;
    let mut oldest = txn::Xid::MAX;
    for block in 0..nblocks {
        // A clock read per page is nothing beside the page's work.
        tx.check_statement_timeout()?;
        let bits = map.get(block)?;
        if bits & skip != 0 {
            stats.pages_all_visible += 1;
            nonempty = block + 1;
            complete &= bits & visibilitymap::ALL_FROZEN != 0;
            continue;
        }
        scanned.push(block);
        let mut buf = pool.read_buffer(table.rel, block)?;
        copy.copy_from_slice(&buf.read()[..]);
        stats.pages_scanned += 1;
        if Page::new(&copy).is_new() {
            continue;
        }
        if prunable(&copy, mgr, horizon)? {
            let mut mtr = Mtr::new(pool);
            let p = mtr.latch(&mut buf);
            let pruned = access::heapam::prune(mtr.page(p), block, mgr, horizon)?;
            stats.tuples_removed += pruned.removed as u64;
            copy.copy_from_slice(mtr.page_ref(p));
            // Another session may have pruned it since the copy: then nothing to log.
            if pruned.changed {
                mtr.commit()?;
            }
        }
        drop(buf);
        let page = Page::new(&copy);
        for off in 1..=page.max_offset() {
            let Some(id) = page.item_id(off) else {
                continue;
            };
            let item = match id.flags {
                // A stub pruning left (access rules 7 and 11): its index entries go.
                LpFlags::Dead => {
                    dead.entry(block).or_default().push(off);
                    continue;
                }
                // A HOT chain's root: its entries stay.
                LpFlags::Redirect => {
                    nonempty = block + 1;
                    continue;
                }
                LpFlags::Unused => continue,
                LpFlags::Normal => page.get_item(off).unwrap_or_default(),
            };
            let h = access::tuple::header(item)?;
            if !visibility::dead_to_all(&h, mgr, horizon)? {
                nonempty = block + 1;
                stats.tuples_remaining += 1;
                match visibility::census(&h, mgr)? {
                    visibility::Census::Live | visibility::Census::DeleteInProgress(_) => {
                        stats.live_tuples += 1;
                    }
                    visibility::Census::Dead => stats.dead_tuples += 1,
                    // Not counted until its transaction ends, as PostgreSQL's VACUUM.
                    visibility::Census::InsertInProgress { .. } => {}
                }
            }
        }
    }
    drop(map);
    if !dead.is_empty() {
        remove_dead(pool, roots, table, dead, &mut stats)?;
    }
    for block in scanned {
        tx.check_statement_timeout()?;
        let marked = access::heapam::set_all_visible(pool, table.rel, block, horizon, mgr, freeze)?;
        let bits = marked.bits;
        oldest = oldest.min(marked.oldest_xid);
        // The room the page has now, for inserts to find (access rule 10).
        access::freespace::record(pool, table.rel, block, marked.room)?;
        stats.pages_marked_visible += u64::from(bits & visibilitymap::ALL_VISIBLE != 0);
        // Marked now, or before (by a VACUUM this one did not skip it for: FREEZE).
        if bits != 0
            || visibilitymap::get(pool, table.rel, block)? & visibilitymap::ALL_VISIBLE != 0
        {
            stats.pages_all_visible += 1;
        }
        stats.pages_marked_frozen += u64::from(bits & visibilitymap::ALL_FROZEN != 0);
    }
    truncate_empty_end(pool, tx, table, nonempty, &mut stats)?;
    stats.frozen_xid = complete.then_some(oldest.min(horizon));
    Ok(stats)
}

/// Empty pages at the end of a table are cut when there are at least this many, or a
/// sixteenth of the table (PostgreSQL's `REL_TRUNCATE_MINIMUM`, `REL_TRUNCATE_FRACTION`).
const TRUNCATE_MINIMUM: u32 = 1000;
const TRUNCATE_FRACTION: u32 = 16;

/// Pass 5: cut the empty pages at the end of the table (after the first `nonempty`, as
/// pass 1 found them), as PostgreSQL's VACUUM does, if its AccessExclusive lock can be
/// had without waiting (no scan is reading it, no write is under way); under the lock
/// the pages are looked at again. The visibility map's bits of the pages cut go first,
/// then their room in the free space map, then the pages.
fn truncate_empty_end(
    pool: &BufferPool,
    tx: &txn::Tx,
    table: &TableDesc,
    nonempty: u32,
    stats: &mut VacuumStats,
) -> PgResult<()> {
    use txn::lock::{LockError, LockMode, LockTag};
    let nblocks = pool.smgr().nblocks(table.rel)?;
    let mut nonempty = nonempty.min(nblocks);
    // Pass 1 skipped the last page (all-visible): it may be empty all the same (a page
    // whose rows all went is marked all-visible). It is read, as PostgreSQL's VACUUM
    // always reads the last page, and if it is, so are the pages before it.
    if nonempty == nblocks && nblocks > 0 && page_is_empty(pool, table, nblocks - 1)? {
        nonempty = nonempty_pages(pool, table, nblocks)?;
    }
    let freeable = nblocks - nonempty;
    if freeable == 0 || (freeable < TRUNCATE_MINIMUM && freeable < nblocks / TRUNCATE_FRACTION) {
        return Ok(());
    }
    match tx.lock(
        LockTag::Relation(table.oid),
        LockMode::AccessExclusive,
        true,
    ) {
        Ok(()) => {}
        Err(LockError::NotAvailable) => return Ok(()),
        Err(e) => return Err(e.to_pg(&format!("relation \"{}\"", table.name))),
    }
    let nblocks = pool.smgr().nblocks(table.rel)?;
    let keep = nonempty_pages(pool, table, nblocks)?;
    if keep < nblocks {
        visibilitymap::truncate(pool, table.rel, keep)?;
        access::freespace::truncate(pool, table.rel, keep)?;
        pool.truncate_relation(table.rel, keep)?;
        stats.pages_removed = u64::from(nblocks - keep);
    }
    Ok(())
}

/// The table's pages up to its last one holding any line pointer in use: those kept.
fn nonempty_pages(pool: &BufferPool, table: &TableDesc, nblocks: u32) -> PgResult<u32> {
    for block in (0..nblocks).rev() {
        if !page_is_empty(pool, table, block)? {
            return Ok(block + 1);
        }
    }
    Ok(0)
}

/// Whether page `block` has no line pointer in use.
fn page_is_empty(pool: &BufferPool, table: &TableDesc, block: u32) -> PgResult<bool> {
    let buf = pool.read_buffer(table.rel, block)?;
    let data = buf.read();
    let page = Page::new(&data);
    Ok(page.is_new()
        || (1..=page.max_offset()).all(|off| {
            page.item_id(off)
                .is_none_or(|id| id.flags == LpFlags::Unused)
        }))
}

/// Whether some version on the page copy is dead to everyone below `horizon`: then
/// pass 1 prunes the page (`heapam::prune`) before reading it.
fn prunable(
    page: &[u8; common::limits::BLCKSZ],
    mgr: &txn::TxnManager,
    horizon: txn::Xid,
) -> PgResult<bool> {
    let page = Page::new(page);
    for off in 1..=page.max_offset() {
        if let Some(item) = page.get_item(off)
            && visibility::dead_to_all(&access::tuple::header(item)?, mgr, horizon)?
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Passes 2 and 3: the index entries of the `dead` versions, then the versions.
fn remove_dead(
    pool: &BufferPool,
    roots: &RootCache,
    table: &TableDesc,
    dead: BTreeMap<u32, Vec<OffsetNumber>>,
    stats: &mut VacuumStats,
) -> PgResult<()> {
    let tids: HashSet<ItemPointer> = dead
        .iter()
        .flat_map(|(&block, offs)| {
            offs.iter()
                .map(move |&offset| ItemPointer { block, offset })
        })
        .collect();
    for index in &table.indexes {
        let tree = index.btree(pool, roots);
        let s = tree.bulk_delete(|tid| tids.contains(&tid))?;
        stats.index_entries_removed += s.tuples_removed;
    }
    for (block, offs) in dead {
        let mut buf = pool.read_buffer(table.rel, block)?;
        let mut mtr = Mtr::new(pool);
        let p = mtr.latch(&mut buf);
        let mut page = PageMut::new(mtr.page(p));
        page.set_unused(&offs);
        page.compact()?;
        mtr.commit()?;
    }
    Ok(())
}
