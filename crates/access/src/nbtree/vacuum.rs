//! Removing entries: one entry by key and heap TID, or every entry whose heap tuple a
//! callback calls dead, leaf by leaf (PostgreSQL's `btbulkdelete`; nbtree rule 9).
//!
//! Entries are removed physically (the page is rebuilt without them, in one atomic step
//! under the leaf's write latch: one mini-transaction, logged as one WAL record). Pages are never deleted or merged: an emptied leaf stays
//! in the tree, linked and with its downlink, and takes entries again later. High keys do
//! not change, so no other page is touched.
//!
//! The bulk delete walks the leaf level left to right, latching one page at a time and
//! following the right-link it read under the latch. A split during the walk moves
//! entries only right, onto pages between the one just done and the saved right-link:
//! those entries were on the page when it was done, so none is missed; entries inserted
//! during the walk point at live tuples and need no removal.

use common::ids::{ItemPointer, OffsetNumber};
use common::limits::BLCKSZ;
use common::{PgError, PgResult, Value};
use storage::Mtr;
use storage::mtr::PageLatch;
use storage::page::Page;

use super::BTree;
use super::page::{self, BtPage, P_NONE};
use super::search::{Access, LinkWalk};
use super::tuple::ScanKey;

/// What a [`BTree::bulk_delete`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BulkDeleteStats {
    /// Leaf pages visited.
    pub pages: u64,
    /// Entries removed.
    pub tuples_removed: u64,
    /// Entries left.
    pub tuples_remaining: u64,
}

impl<'a> BTree<'a> {
    /// Remove the entry (`key`, `tid`); false if there is none.
    pub fn delete(&self, key: &[Value], tid: ItemPointer) -> PgResult<bool> {
        let info = self.root_info()?;
        if key.len() != info.natts as usize {
            return Err(PgError::internal(format!(
                "btree index {} has {} key columns, given {}",
                self.display_name(),
                info.natts,
                key.len()
            )));
        }
        let sk = ScanKey::Exact {
            values: key,
            tid,
            order: self.order,
        };
        let (mut block, _) = self.descend(&sk, Access::Read)?;
        let mut walk = LinkWalk::default();
        loop {
            let mut buf = self.pool.read_buffer(self.rel, block)?;
            let latch = PageLatch::new(&mut buf);
            let found = {
                let page = BtPage::open(&latch, self.rel, block)?;
                if !page.is_leaf() {
                    return Err(page.corrupt("an internal page where a leaf was expected"));
                }
                if page.should_move_right(&sk)? {
                    Err(page.next())
                } else {
                    let off = page.binsrch(&sk)?;
                    Ok((off <= page.max_offset()
                        && page.compare(&sk, off)? == std::cmp::Ordering::Equal)
                        .then_some(off))
                }
            };
            match found {
                Ok(Some(off)) => {
                    self.step_delete(latch, &[off])?;
                    return Ok(true);
                }
                Ok(None) => return Ok(false),
                Err(next) => {
                    drop(latch);
                    block = next;
                    walk.step(self, block)?;
                }
            }
        }
    }

    /// Remove every entry whose heap TID `is_dead` calls dead (VACUUM). Visits each leaf
    /// once, left to right, under its write latch; `is_dead` runs under that latch and
    /// must not touch this index.
    pub fn bulk_delete(
        &self,
        mut is_dead: impl FnMut(ItemPointer) -> bool,
    ) -> PgResult<BulkDeleteStats> {
        let mut stats = BulkDeleteStats::default();
        let (mut block, _) = self.descend(&ScanKey::MinusInfinity, Access::Read)?;
        let mut walk = LinkWalk::default();
        loop {
            let mut buf = self.pool.read_buffer(self.rel, block)?;
            let latch = PageLatch::new(&mut buf);
            let mut dead: Vec<OffsetNumber> = Vec::new();
            let next = {
                let page = BtPage::open(&latch, self.rel, block)?;
                if !page.is_leaf() {
                    return Err(page.corrupt("an internal page on the leaf level"));
                }
                for off in page.first_data()..=page.max_offset() {
                    let t = page.tuple(off)?;
                    let tid = t
                        .heap_tid()
                        .ok_or_else(|| page.corrupt(format!("leaf item {off} has no heap TID")))?;
                    if is_dead(tid) {
                        dead.push(off);
                    } else {
                        stats.tuples_remaining += 1;
                    }
                }
                page.next()
            };
            stats.pages += 1;
            stats.tuples_removed += dead.len() as u64;
            if dead.is_empty() {
                drop(latch);
            } else {
                self.step_delete(latch, &dead)?;
            }
            if next == P_NONE {
                return Ok(stats);
            }
            block = next;
            walk.step(self, block)?;
        }
    }

    /// Atomic step "delete from leaf": rebuild the latched leaf without the items at
    /// `offs` (ascending). One mini-transaction; latches: the leaf, released at its commit.
    fn step_delete(&self, latch: PageLatch<'_>, offs: &[OffsetNumber]) -> PgResult<()> {
        let mut image = Box::new([0u8; BLCKSZ]);
        {
            let page = BtPage::open(&latch, self.rel, latch.block())?;
            let high_key = page.high_key()?.map(|t| t.bytes());
            let mut items = Vec::with_capacity(page.max_offset() as usize);
            for off in page.first_data()..=page.max_offset() {
                if offs.binary_search(&off).is_err() {
                    items.push(page.tuple(off)?.bytes());
                }
            }
            if !page::build_page(
                &mut image,
                page.opaque(),
                high_key,
                &items,
                Page::new(&latch).lsn(),
            ) {
                return Err(PgError::internal("a page's own items do not fit it"));
            }
        }
        let mut mtr = Mtr::new(self.pool);
        let p = mtr.adopt(latch);
        mtr.page(p).copy_from_slice(&image[..]);
        mtr.commit()?;
        Ok(())
    }
}
