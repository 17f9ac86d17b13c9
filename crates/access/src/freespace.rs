//! The free space map (access rule 10): how much room each heap page has, kept in the
//! table's `_fsm` fork (`common::ids::Fork::FreeSpace`), so an insert that does not fit
//! on the last page finds a page with room in a constant number of map pages, whatever
//! the table's size, and space VACUUM gives back is used again.
//!
//! Each heap page has one byte: its free space in steps of 32 bytes (PostgreSQL's
//! categories, `FSM_CAT_STEP`). Map page 0 holds, for each leaf page, the largest byte
//! on it; map page `1 + k` (a leaf) holds the bytes of heap pages `k * LEAF_SLOTS ..`.
//! Two levels cover [`LEAF_SLOTS`]² heap pages (about 66 million, 510 GB); a heap page
//! beyond that has no entry and is found only as the last page. PostgreSQL's map is a
//! tree of binary trees, which finds a page in a few comparisons; this one compares the
//! bytes of the root and of one leaf (two where the first leaf's room lies before the
//! page asked from: at most 24 KB, in memory) per search, and is updated only when an
//! insert finds a page full and when VACUUM has made room.
//!
//! The map is a hint: a page it names may have filled since (the inserter checks, and
//! records what it found), and a page with room it does not know of is found again by
//! the next VACUUM. Its pages change through mini-transactions like any page (logged,
//! whole after each checkpoint), so a crash never leaves a torn map page to read.

use common::ids::{BlockNumber, Fork};
use common::limits::BLCKSZ;
use common::{PgResult, RelId};
use storage::bufmgr::BufferPool;
use storage::mtr::Mtr;
use storage::page::{Page, SIZE_OF_PAGE_HEADER};

use crate::mapfork;

/// Bytes of free space per step of a category (PostgreSQL's `FSM_CAT_STEP`).
const STEP: usize = BLCKSZ / 256;
/// Heap pages per leaf page, and leaves the root page covers.
pub const LEAF_SLOTS: u32 = mapfork::MAP_BYTES as u32;

/// The storage id of `rel`'s free space map.
pub fn map_rel(rel: RelId) -> RelId {
    common::ids::fork(rel, Fork::FreeSpace)
}

/// The category of `free` bytes: rounded down, so a page found by it has at least that
/// much room.
fn category(free: usize) -> u8 {
    (free / STEP).min(255) as u8
}

/// The least category sure to hold `need` bytes: rounded up.
fn category_for(need: usize) -> u8 {
    need.div_ceil(STEP).min(255) as u8
}

/// Map pages searches read, and heap pages inserts examined for room, since the
/// process started: what the test of rule 10's constant cost counts.
pub mod counters {
    use std::sync::atomic::{AtomicU64, Ordering};

    static MAP_PAGES_READ: AtomicU64 = AtomicU64::new(0);
    static HEAP_PAGES_EXAMINED: AtomicU64 = AtomicU64::new(0);

    pub(crate) fn map_page_read() {
        MAP_PAGES_READ.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn heap_page_examined() {
        HEAP_PAGES_EXAMINED.fetch_add(1, Ordering::Relaxed);
    }

    /// Map pages read by searches so far.
    pub fn map_pages_read() -> u64 {
        MAP_PAGES_READ.load(Ordering::Relaxed)
    }

    /// Heap pages inserts have latched to look for room so far.
    pub fn heap_pages_examined() -> u64 {
        HEAP_PAGES_EXAMINED.load(Ordering::Relaxed)
    }
}

/// Where heap page `block`'s byte is: its leaf (a map page number) and its offset there;
/// `None` past what two levels cover.
fn locate(block: BlockNumber) -> Option<(BlockNumber, usize)> {
    let leaf = block / LEAF_SLOTS;
    (leaf < LEAF_SLOTS).then(|| {
        (
            1 + leaf,
            SIZE_OF_PAGE_HEADER + (block % LEAF_SLOTS) as usize,
        )
    })
}

/// Record that heap page `block` of `rel` has `free` bytes of room (making the map, and
/// its pages, as needed). Takes no heap page latch: call it with none held.
pub fn record(pool: &BufferPool, rel: RelId, block: BlockNumber, free: usize) -> PgResult<()> {
    let Some((leaf, at)) = locate(block) else {
        return Ok(());
    };
    let fsm = map_rel(rel);
    let cat = category(free);
    // Nothing to write where the map already says so (a page without one reads 0).
    let known = leaf < mapfork::pages(pool, fsm)?;
    if !known && cat == 0 {
        return Ok(());
    }
    if known {
        let buf = pool.read_buffer(fsm, leaf)?;
        let data = buf.read();
        if !Page::new(&data).is_new() && data[at] == cat {
            return Ok(());
        }
    }
    mapfork::extend_to(pool, fsm, leaf)?;
    let mut root = pool.read_buffer(fsm, 0)?;
    let mut leaf_buf = pool.read_buffer(fsm, leaf)?;
    // Root before leaf, everywhere: the one order map pages are latched in.
    let mut mtr = Mtr::new(pool);
    let r = mtr.latch(&mut root);
    let l = mtr.latch(&mut leaf_buf);
    for p in [r, l] {
        if Page::new(mtr.page_ref(p)).is_new() {
            mapfork::init_page(mtr.page(p));
        }
    }
    let page = mtr.page(l);
    page[at] = cat;
    let max = page[SIZE_OF_PAGE_HEADER..]
        .iter()
        .copied()
        .max()
        .unwrap_or(0);
    let slot = SIZE_OF_PAGE_HEADER + (leaf - 1) as usize;
    if mtr.page_ref(r)[slot] != max {
        mtr.page(r)[slot] = max;
    }
    mtr.commit()?;
    Ok(())
}

/// A heap page of `rel` at or after `from` that the map says has room for `need` bytes,
/// the first such; `None` if it knows of none. Reads the root and at most two leaves
/// (the first only past `from`, whose room may all be before it).
pub fn search(
    pool: &BufferPool,
    rel: RelId,
    need: usize,
    from: BlockNumber,
) -> PgResult<Option<BlockNumber>> {
    let fsm = map_rel(rel);
    let pages = mapfork::pages(pool, fsm)?;
    if pages < 2 {
        return Ok(None);
    }
    let want = category_for(need).max(1);
    let first_leaf = from / LEAF_SLOTS;
    let root = pool.read_buffer(fsm, 0)?;
    counters::map_page_read();
    let root = root.read();
    if Page::new(&root).is_new() {
        return Ok(None);
    }
    let leaves = (pages - 1).min(LEAF_SLOTS);
    for k in first_leaf..leaves {
        if root[SIZE_OF_PAGE_HEADER + k as usize] < want {
            continue;
        }
        let buf = pool.read_buffer(fsm, 1 + k)?;
        counters::map_page_read();
        let data = buf.read();
        if Page::new(&data).is_new() {
            continue;
        }
        let start = if k == first_leaf {
            from % LEAF_SLOTS
        } else {
            0
        };
        let found = (start..LEAF_SLOTS).find(|&i| data[SIZE_OF_PAGE_HEADER + i as usize] >= want);
        if let Some(i) = found {
            return Ok(Some(k * LEAF_SLOTS + i));
        }
    }
    Ok(None)
}

/// The table is being cut to its first `nblocks` pages: forget the room of the pages cut
/// (one logged step per leaf they are on).
pub fn truncate(pool: &BufferPool, rel: RelId, nblocks: BlockNumber) -> PgResult<()> {
    let fsm = map_rel(rel);
    let pages = mapfork::pages(pool, fsm)?;
    let Some((first_leaf, first_at)) = locate(nblocks) else {
        return Ok(());
    };
    for leaf in first_leaf..pages {
        let mut root = pool.read_buffer(fsm, 0)?;
        let mut buf = pool.read_buffer(fsm, leaf)?;
        let mut mtr = Mtr::new(pool);
        let r = mtr.latch(&mut root);
        let l = mtr.latch(&mut buf);
        if Page::new(mtr.page_ref(l)).is_new() || Page::new(mtr.page_ref(r)).is_new() {
            continue;
        }
        let from = if leaf == first_leaf {
            first_at
        } else {
            SIZE_OF_PAGE_HEADER
        };
        let page = mtr.page(l);
        if page[from..].iter().all(|&b| b == 0) {
            continue;
        }
        page[from..].fill(0);
        let max = page[SIZE_OF_PAGE_HEADER..]
            .iter()
            .copied()
            .max()
            .unwrap_or(0);
        mtr.page(r)[SIZE_OF_PAGE_HEADER + (leaf - 1) as usize] = max;
        mtr.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_round_the_safe_way() {
        assert_eq!(category(31), 0);
        assert_eq!(category(32), 1);
        assert_eq!(category(8000), 250);
        assert_eq!(category_for(1), 1);
        assert_eq!(category_for(32), 1);
        assert_eq!(category_for(33), 2);
        // A page recorded with room for `need` is found by a search for it.
        for need in [1, 31, 32, 33, 100, 4000, 8100] {
            assert!(category(need) <= category_for(need));
            assert!(category_for(need) as usize * STEP >= need);
        }
    }

    #[test]
    fn two_levels_cover_the_heap_pages() {
        assert_eq!(locate(0), Some((1, SIZE_OF_PAGE_HEADER)));
        assert_eq!(locate(LEAF_SLOTS), Some((2, SIZE_OF_PAGE_HEADER)));
        assert_eq!(locate(LEAF_SLOTS * LEAF_SLOTS), None);
    }
}
