//! The btree index access method: Lehman–Yao B-link trees on PostgreSQL's page layout
//! (PostgreSQL's `access/nbtree`, whose README is background reading).
//!
//! Interface: a [`BTree`] is a cheap handle (buffer pool, [`RootCache`], relation) with
//! - [`create`](BTree::create) (metapage and an empty root leaf) and
//!   [`build`](BTree::build) (bulk build from unsorted entries: sort, fill leaves left to
//!   right, build upper levels bottom-up);
//! - [`insert`](BTree::insert) and [`insert_unique`](BTree::insert_unique) (checks for a
//!   live entry with an equal key under the leaf's write latch, through a caller callback);
//! - [`delete`](BTree::delete) of one entry and [`bulk_delete`](BTree::bulk_delete) by an
//!   "is dead" callback, page by page (VACUUM);
//! - [`scan`](BTree::scan): forward or backward between two bounds on a key prefix,
//!   returning `(key values, heap TID)` through a [`BTreeScan`] that holds no pin
//!   between calls;
//! - [`check`](BTree::check): verify every structural invariant (amcheck), for tests.
//!
//! An entry is a key, a tuple of [`common::Value`]s (one per index column), and the heap
//! TID of its row. Keys order column by column (`Value::cmp_non_null`, NULLs last unless
//! the index's [`KeyOrder`] makes a column descending or its NULLs first) and then by heap TID, so every entry is unique and duplicates of a key sit in TID order.
//!
//! Invariants (README "nbtree rules", cited by number in the code):
//! - Every level is a doubly linked list of pages in key order; each non-rightmost page's
//!   high key bounds its items from above (`items < high key <= right sibling's items`).
//! - A page with `BTP_INCOMPLETE_SPLIT` has a right sibling that its parent does not point
//!   to yet; everything else has exactly one downlink in the level above.
//! - The metapage names the root; the root page carries `BTP_ROOT`.
//!
//! Locking (rules 3, 4): buffer content locks are the latches. Readers hold one at a time
//! and move right when a split got in their way. Writers take latches left to right on a
//! level and child before parent, the metapage last, so latch waits never form a cycle.
//!
//! Crash safety (rule 5): every change is one of four atomic steps — insert on a page,
//! split one level, create a new root, delete from a leaf — plus `create`, each one
//! mini-transaction ([`storage::Mtr`]) that latches every page it changes and is logged
//! as one WAL record, so recovery replays a step whole or not at all. A split and the
//! insertion of its downlink are separate steps; `BTP_INCOMPLETE_SPLIT` marks the gap,
//! and whoever meets it finishes the split, after a crash as after an error. Pages are
//! latched as [`storage::mtr::PageLatch`]es, which cannot change a page outside a step;
//! the left page of a split is lent to the split's mini-transaction and stays latched into
//! the downlink's step. A bulk build logs each page it writes as a full image, the
//! metapage last. `tests/btree_recovery.rs` crashes all of it through a simulated file
//! system.

mod check;
mod insert;
pub mod page;
mod rootcache;
mod scan;
mod search;
mod sort;
pub mod tuple;
mod vacuum;

#[cfg(test)]
mod tests;

use common::{PgError, PgResult, RelId, Value};
use storage::BufferPool;
use storage::smgr::relpath;

pub use check::TreeStats;
pub use insert::UniqueInsert;
pub use rootcache::{RootCache, RootInfo};
pub use scan::{BTreeScan, ScanDirection};
pub use sort::{BuildStats, SortSpill};
pub use tuple::{BT_MAX_ITEM_SIZE, INDEX_MAX_KEYS, KeyOrder, index_row_too_big};
pub use vacuum::BulkDeleteStats;

/// Leaf pages are filled to this percentage by a bulk build and by splits of the
/// rightmost leaf (PostgreSQL's `BTREE_DEFAULT_FILLFACTOR`): room for a few updates
/// without splitting at once, and append-only growth leaves full pages behind.
pub const BTREE_DEFAULT_FILLFACTOR: usize = 90;
/// Internal pages are filled to this percentage by a bulk build and by splits of the
/// rightmost internal page (PostgreSQL's `BTREE_NONLEAF_FILLFACTOR`).
pub const BTREE_NONLEAF_FILLFACTOR: usize = 70;

/// One btree index: a handle, cheap to make per operation (three references and a name).
#[derive(Clone, Copy)]
pub struct BTree<'a> {
    pool: &'a BufferPool,
    cache: &'a RootCache,
    rel: RelId,
    name: Option<&'a str>,
    order: KeyOrder,
    /// Trailing columns of each entry that are carried, not keyed (INCLUDE).
    included: u16,
}

impl<'a> BTree<'a> {
    /// The btree stored in relation `rel` of `pool`, whose root `cache` remembers.
    pub fn new(pool: &'a BufferPool, cache: &'a RootCache, rel: RelId) -> BTree<'a> {
        BTree {
            pool,
            cache,
            rel,
            name: None,
            order: KeyOrder::default(),
            included: 0,
        }
    }

    /// Name the index for user-facing errors ("index row size ... for index \"name\"");
    /// without a name they show the relation's path.
    pub fn with_name(self, name: &'a str) -> BTree<'a> {
        BTree {
            name: Some(name),
            ..self
        }
    }

    /// The order of the index's key columns (DESC, NULLS FIRST); every operation on one
    /// index must use the same.
    pub fn with_order(self, order: KeyOrder) -> BTree<'a> {
        BTree { order, ..self }
    }

    /// The last `n` columns of each entry are INCLUDE columns: stored with the key but
    /// not part of it, so [`insert_unique`](Self::insert_unique) compares the columns
    /// before them. (They still order entries of equal key, as the TID does: harmless,
    /// since nothing searches on them.)
    pub fn with_included(self, n: usize) -> BTree<'a> {
        BTree {
            included: n as u16,
            ..self
        }
    }

    pub fn rel(&self) -> RelId {
        self.rel
    }

    fn display_name(&self) -> String {
        match self.name {
            Some(n) => n.to_string(),
            None => relpath(self.rel),
        }
    }

    /// The root, its level (the tree's height less one) and the key width, from the root
    /// cache: no page is read when it is warm (the height is what the planner's costing
    /// needs, L1). The metapage is read on a miss.
    pub fn root_info(&self) -> PgResult<RootInfo> {
        match self.cache.get(self.rel) {
            Some(info) => Ok(info),
            None => self.refresh_root(),
        }
    }

    /// Check a key handed to insert: one value per key column, and small enough.
    fn leaf_tuple(&self, key: &[Value], tid: common::ItemPointer, natts: u16) -> PgResult<Vec<u8>> {
        if key.len() != natts as usize {
            return Err(PgError::internal(format!(
                "btree index {} has {natts} key columns, given {}",
                self.display_name(),
                key.len()
            )));
        }
        let size = tuple::aligned_size(tuple::leaf_tuple_size(key));
        if size > BT_MAX_ITEM_SIZE {
            return Err(index_row_too_big(size, &self.display_name()));
        }
        Ok(tuple::encode_leaf(key, tid))
    }
}
