//! The visibility map (access rule 9): two bits per heap page, in the table's `_vm` fork
//! (`common::ids::Fork::Visibility`): *all-visible* (every tuple on the page is visible
//! to every snapshot, now and later) and *all-frozen* (every tuple's inserter is
//! [`txn::FROZEN_XID`]: no commit-log lookup is ever needed for it).
//!
//! A map page is a standard page whose special space is the whole page after the header
//! (so a full-page image in the WAL keeps every bit: there is no free hole to leave out),
//! holding [`HEAP_BLOCKS_PER_PAGE`] heap pages' bits, four to a byte as in PostgreSQL.
//!
//! The bits are set only with the heap page's `PD_ALL_VISIBLE` flag, in the same
//! mini-transaction ([`set`]); every change to a heap page with the flag clears flag and
//! bits in the mini-transaction of the change ([`clear`]). So after any crash a bit is
//! set only if its page's flag is, and the flag only while every tuple on the page is
//! visible to all. A map page that does not exist (the fork never made, or shorter than
//! the table) reads as all zeros: nothing is claimed.
//!
//! Whether the fork exists and how long it is are the storage manager's cached answers
//! (smgr rule 1): reading a bit costs no system call once the fork has been opened.

use common::ids::{BlockNumber, Fork};
use common::limits::BLCKSZ;
use common::{PgResult, RelId};
use storage::bufmgr::{BufferPool, PinnedBuffer};
use storage::mtr::Mtr;
use storage::page::{Page, PageMut, SIZE_OF_PAGE_HEADER};

use crate::mapfork;

/// Every tuple on the heap page is visible to all.
pub const ALL_VISIBLE: u8 = 0x01;
/// Every tuple on the heap page is frozen.
pub const ALL_FROZEN: u8 = 0x02;
const BITS_PER_HEAP_BLOCK: usize = 2;

/// Heap pages one map page covers (PostgreSQL's `HEAPBLOCKS_PER_PAGE`).
pub const HEAP_BLOCKS_PER_PAGE: u32 = (mapfork::MAP_BYTES * 8 / BITS_PER_HEAP_BLOCK) as u32;

/// The storage id of `rel`'s map.
pub fn map_rel(rel: RelId) -> RelId {
    common::ids::fork(rel, Fork::Visibility)
}

/// Where heap page `block`'s bits are: map page, byte on it, shift in the byte.
fn locate(block: BlockNumber) -> (BlockNumber, usize, u32) {
    let page = block / HEAP_BLOCKS_PER_PAGE;
    let within = (block % HEAP_BLOCKS_PER_PAGE) as usize;
    let byte = SIZE_OF_PAGE_HEADER + within * BITS_PER_HEAP_BLOCK / 8;
    let shift = ((within * BITS_PER_HEAP_BLOCK) % 8) as u32;
    (page, byte, shift)
}

/// Heap page `block`'s bits in `rel`'s map (0 where the map has no page for it).
pub fn get(pool: &BufferPool, rel: RelId, block: BlockNumber) -> PgResult<u8> {
    let vm = map_rel(rel);
    let (page, byte, shift) = locate(block);
    if page >= mapfork::pages(pool, vm)? {
        return Ok(0);
    }
    let buf = pool.read_buffer(vm, page)?;
    let data = buf.read();
    Ok(bits_at(&data, byte, shift))
}

fn bits_at(page: &[u8; BLCKSZ], byte: usize, shift: u32) -> u8 {
    if Page::new(page).is_new() {
        return 0;
    }
    (page[byte] >> shift) & (ALL_VISIBLE | ALL_FROZEN)
}

/// Reads bits of one table's map page after page, keeping the map page it last read
/// pinned (a scan asks about heap pages in order).
pub struct Reader<'a> {
    pool: &'a BufferPool,
    vm: RelId,
    /// Map pages there are, read once.
    pages: Option<BlockNumber>,
    pinned: Option<(BlockNumber, PinnedBuffer<'a>)>,
}

impl<'a> Reader<'a> {
    pub fn new(pool: &'a BufferPool, rel: RelId) -> Reader<'a> {
        Reader {
            pool,
            vm: map_rel(rel),
            pages: None,
            pinned: None,
        }
    }

    /// Heap page `block`'s bits.
    pub fn get(&mut self, block: BlockNumber) -> PgResult<u8> {
        let (page, byte, shift) = locate(block);
        // The map's size as the reader first looked: a page it gained since (a VACUUM
        // running beside the scan) reads as 0, which claims nothing.
        let pages = match self.pages {
            Some(n) => n,
            None => *self.pages.insert(mapfork::pages(self.pool, self.vm)?),
        };
        if page >= pages {
            return Ok(0);
        }
        let buf = match &self.pinned {
            Some((p, buf)) if *p == page => buf,
            _ => {
                let buf = self.pool.read_buffer(self.vm, page)?;
                &self.pinned.insert((page, buf)).1
            }
        };
        Ok(bits_at(&buf.read(), byte, shift))
    }
}

/// Set `bits` for heap page `block` in the map, within `mtr`, which holds the heap page
/// latched and sets its `PD_ALL_VISIBLE` in the same step. The map is extended (and its
/// fork made) as far as the page needs; `pin` keeps the map page pinned while `mtr`
/// holds it (declare it before the mini-transaction).
pub fn set<'a, 'b>(
    mtr: &mut Mtr<'a>,
    pool: &'b BufferPool,
    rel: RelId,
    block: BlockNumber,
    bits: u8,
    pin: &'a mut Option<PinnedBuffer<'b>>,
) -> PgResult<()> {
    let vm = map_rel(rel);
    let (page, byte, shift) = locate(block);
    mapfork::extend_to(pool, vm, page)?;
    let m = mtr.latch(pin.insert(pool.read_buffer(vm, page)?));
    let data = mtr.page(m);
    if Page::new(data).is_new() {
        mapfork::init_page(data);
    }
    data[byte] |= (bits & (ALL_VISIBLE | ALL_FROZEN)) << shift;
    Ok(())
}

/// A map page a mini-transaction latched to clear bits on: its number and its index in
/// the mini-transaction, for a second heap page of the same step whose bits are on it.
pub type Latched = Option<(BlockNumber, usize)>;

/// Before a change to heap page `block` (latched in `mtr` as page `p`): if the page says
/// all-visible, clear its flag and its bits in the map, in the same step. `pin` keeps the
/// map page pinned (declared before the mini-transaction); `latched` is a map page this
/// step latched already (it is used again rather than latched twice). Returns the map
/// page latched, if any.
pub fn clear<'a, 'b>(
    mtr: &mut Mtr<'a>,
    pool: &'b BufferPool,
    (rel, p, block): (RelId, usize, BlockNumber),
    pin: &'a mut Option<PinnedBuffer<'b>>,
    latched: Latched,
) -> PgResult<Latched> {
    if !Page::new(mtr.page_ref(p)).is_all_visible() {
        return Ok(latched);
    }
    PageMut::new(mtr.page(p)).set_all_visible(false);
    let vm = map_rel(rel);
    let (page, byte, shift) = locate(block);
    // A map page that is not there claims nothing: only the flag had to go.
    if page >= mapfork::pages(pool, vm)? {
        return Ok(latched);
    }
    let m = match latched {
        Some((q, m)) if q == page => m,
        _ => mtr.latch(pin.insert(pool.read_buffer(vm, page)?)),
    };
    let data = mtr.page(m);
    if !Page::new(data).is_new() {
        data[byte] &= !((ALL_VISIBLE | ALL_FROZEN) << shift);
    }
    Ok(Some((page, m)))
}

/// The table is being cut to its first `nblocks` pages (VACUUM's truncation, before the
/// table itself): the bits of the pages cut are cleared, in a logged step, and the map
/// pages past the last one needed are cut, so a page the table grows into again later
/// starts with no claim.
pub fn truncate(pool: &BufferPool, rel: RelId, nblocks: BlockNumber) -> PgResult<()> {
    let vm = map_rel(rel);
    let pages = mapfork::pages(pool, vm)?;
    if pages == 0 {
        return Ok(());
    }
    let (page, byte, shift) = locate(nblocks);
    if page < pages {
        let mut buf = pool.read_buffer(vm, page)?;
        let mut mtr = Mtr::new(pool);
        let m = mtr.latch(&mut buf);
        if !Page::new(mtr.page_ref(m)).is_new() {
            let data = mtr.page(m);
            // This heap page's bits and those after it in the byte, then the bytes after.
            data[byte] &= !(0xFFu8 << shift);
            data[byte + 1..].fill(0);
        }
        mtr.commit()?;
    }
    let keep = if nblocks.is_multiple_of(HEAP_BLOCKS_PER_PAGE) {
        page
    } else {
        page + 1
    };
    if keep < pages {
        pool.truncate_relation(vm, keep)?;
    }
    Ok(())
}

/// How many of the first `nblocks` heap pages of `rel` are all-visible and all-frozen
/// (PostgreSQL's `visibilitymap_count`, for `pg_class.relallvisible`).
pub fn count(pool: &BufferPool, rel: RelId, nblocks: BlockNumber) -> PgResult<(u32, u32)> {
    let mut reader = Reader::new(pool, rel);
    let (mut visible, mut frozen) = (0, 0);
    for block in 0..nblocks {
        let bits = reader.get(block)?;
        visible += u32::from(bits & ALL_VISIBLE != 0);
        frozen += u32::from(bits & ALL_FROZEN != 0);
    }
    Ok((visible, frozen))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_of_neighbouring_pages_are_apart() {
        assert_eq!(
            HEAP_BLOCKS_PER_PAGE, 32672,
            "PostgreSQL's, with 8 KiB pages"
        );
        assert_eq!(locate(0), (0, SIZE_OF_PAGE_HEADER, 0));
        assert_eq!(locate(3), (0, SIZE_OF_PAGE_HEADER, 6));
        assert_eq!(locate(4), (0, SIZE_OF_PAGE_HEADER + 1, 0));
        let last = HEAP_BLOCKS_PER_PAGE - 1;
        assert_eq!(locate(last), (0, BLCKSZ - 1, 6));
        assert_eq!(locate(last + 1), (1, SIZE_OF_PAGE_HEADER, 0));
    }
}
