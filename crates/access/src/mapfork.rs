//! What the visibility map (`visibilitymap`) and the free space map (`freespace`) share:
//! a fork of the table made when first needed, whose pages are standard pages with the
//! whole page after the header as special space. There is no free hole between
//! `pd_lower` and `pd_upper`, so a full-page image in the WAL keeps every byte of the map.

use common::ids::BlockNumber;
use common::limits::BLCKSZ;
use common::{PgResult, RelId};
use storage::bufmgr::BufferPool;
use storage::mtr::Mtr;
use storage::page::{PageMut, SIZE_OF_PAGE_HEADER};

/// Bytes of a map page after its header.
pub(crate) const MAP_BYTES: usize = BLCKSZ - SIZE_OF_PAGE_HEADER;

/// Make `page` an empty map page: every byte after the header 0.
pub(crate) fn init_page(page: &mut [u8; BLCKSZ]) {
    PageMut::new(page).init(MAP_BYTES);
}

/// The map fork's pages: 0 if it was never made. Both answers are the storage
/// manager's cached ones (smgr rule 1): no system call once the fork was looked at.
pub(crate) fn pages(pool: &BufferPool, fork: RelId) -> PgResult<BlockNumber> {
    if pool.smgr().exists(fork) {
        pool.smgr().nblocks(fork)
    } else {
        Ok(0)
    }
}

/// Make the map fork at least `page + 1` pages long (making its file first if need be),
/// each new page made whole in a mini-transaction of its own before anything is set on
/// it.
pub(crate) fn extend_to(pool: &BufferPool, fork: RelId, page: BlockNumber) -> PgResult<()> {
    if !pool.smgr().exists(fork) {
        pool.create_relation(fork)?;
    }
    while pool.smgr().nblocks(fork)? <= page {
        let (_, mut buf) = pool.extend(fork)?;
        let mut mtr = Mtr::new(pool);
        let m = mtr.latch(&mut buf);
        init_page(mtr.page(m));
        mtr.commit()?;
    }
    Ok(())
}
