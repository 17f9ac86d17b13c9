//! Insertion, splits and new roots (PostgreSQL's `nbtinsert.c`).
//!
//! An insert descends to its leaf (search.rs), write-latches it, moves right if needed and
//! puts the tuple there. A full page splits in two steps (nbtree rule 5):
//!
//! 1. [`step_split`](BTree::step_split): the left page keeps the lower items and gets a
//!    new high key and `BTP_INCOMPLETE_SPLIT`; a new right page gets the upper items; the
//!    old right sibling's left-link is repointed. One atomic step over three pages.
//! 2. The downlink to the new right page goes into the parent, which clears the left
//!    page's flag in the same atomic step ([`step_insert`](BTree::step_insert), or
//!    [`step_split`](BTree::step_split) of the parent if it is full, or
//!    [`step_new_root`](BTree::step_new_root) if the page that split was the root).
//!
//! The left page stays write-latched from its split until its downlink is in (child
//! before parent, rule 4), so no one else sees the flag during a normal split; the flag is
//! met only when the second step never happened (an error between the steps, or a crash
//! whose log kept the split's record but not the next one), and then the inserter that
//! meets it finishes the split first.
//!
//! Each `step_*` function receives or takes every write latch of its step, checks
//! everything that can fail, then changes the pages in one mini-transaction
//! ([`storage::Mtr`]) and commits it: one WAL record per step (rule 5). Latches are
//! [`PageLatch`]es, which read as the page but cannot change it, so no page changes outside
//! a step. The left page of a split stays latched into the next step by being *included*
//! in the split's mini-transaction rather than adopted by it ([`Mtr::include`]): the split
//! is logged and the latch is still held when the downlink's step adopts it.

use std::cmp::Ordering;

use common::ids::{BlockNumber, ItemPointer, OffsetNumber};
use common::limits::BLCKSZ;
use common::{PgError, PgResult, Value};
use storage::Mtr;
use storage::mtr::PageLatch;
use storage::page::Page;

use super::page::{
    self, BT_PAGE_CAPACITY, BTP_INCOMPLETE_SPLIT, BTP_ROOT, BTREE_METAPAGE, BtMeta, BtOpaque,
    BtPage, P_NONE, item_space,
};
use super::rootcache::RootInfo;
use super::search::{Access, LinkWalk, StackEntry};
use super::tuple::{self, ScanKey, TupleRef};
use super::{BTREE_DEFAULT_FILLFACTOR, BTREE_NONLEAF_FILLFACTOR, BTree};

/// What [`BTree::insert_unique`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UniqueInsert {
    /// The entry is in the index.
    Inserted,
    /// Nothing was inserted: this live heap tuple has an equal key.
    Conflict(ItemPointer),
}

impl<'a> BTree<'a> {
    /// Insert the entry (`key`, `tid`). `key` has one value per index column. Errors:
    /// PROGRAM_LIMIT_EXCEEDED for an entry larger than [`tuple::BT_MAX_ITEM_SIZE`], an
    /// internal error if this exact entry is already there.
    pub fn insert(&self, key: &[Value], tid: ItemPointer) -> PgResult<()> {
        let info = self.root_info()?;
        let tuple = self.leaf_tuple(key, tid, info.natts)?;
        let sk = ScanKey::Exact {
            values: key,
            tid,
            order: self.order,
        };
        let (block, stack) = self.descend(&sk, Access::Insert)?;
        self.insert_on_leaf(&stack, block, &sk, tid, &tuple, None)
    }

    /// Move right from leaf `block` to the leaf where `sk` belongs (Lehman–Yao, rule 3),
    /// finishing incomplete splits met on the way (rule 5), and insert `tuple` there. A
    /// walk that starts right of a page the caller keeps latched passes it as `latched`:
    /// meeting it again means the sibling links form a cycle.
    fn insert_on_leaf(
        &self,
        stack: &[StackEntry],
        mut block: BlockNumber,
        sk: &ScanKey<'_>,
        tid: ItemPointer,
        tuple: &[u8],
        latched: Option<BlockNumber>,
    ) -> PgResult<()> {
        let mut buf = self.pool.read_buffer(self.rel, block)?;
        let mut walk = LinkWalk::default();
        let (latch, off) = loop {
            if latched == Some(block) {
                return Err(page::corrupt(self.rel, block, "sibling links form a cycle"));
            }
            let latch = PageLatch::new(&mut buf);
            let page = BtPage::open(&latch, self.rel, block)?;
            if !page.is_leaf() {
                return Err(page.corrupt("an internal page where a leaf was expected"));
            }
            if page.incomplete_split() {
                self.finish_split(stack, latch)?;
                continue;
            }
            if page.should_move_right(sk)? {
                block = page.next();
                drop(latch);
                walk.step(self, block)?;
                buf = self.pool.read_buffer(self.rel, block)?;
                continue;
            }
            let off = self.leaf_position(&page, sk, tid)?;
            break (latch, off);
        };
        self.insert_into_page(stack, latch, off, tuple, None)
    }

    /// Insert (`key`, `tid`) unless a live entry with an equal key exists (nbtree rule 7).
    /// The key is `key` less the tree's INCLUDE columns ([`BTree::with_included`]).
    ///
    /// Entries whose key equals `key` are handed to `is_live` (the caller's heap check);
    /// the first it calls live is returned as a conflict and nothing is inserted. A key
    /// with a NULL column never conflicts (as in PostgreSQL) and is inserted as usual. The
    /// leaf where `key` would come first stays write-latched from the check until the
    /// entry is in, so of two concurrent inserts of one key the second sees the first.
    /// `is_live` runs under that latch: it must not touch this index.
    pub fn insert_unique(
        &self,
        key: &[Value],
        tid: ItemPointer,
        mut is_live: impl FnMut(ItemPointer) -> PgResult<bool>,
    ) -> PgResult<UniqueInsert> {
        let entry = key;
        let key = &entry[..entry.len().saturating_sub(self.included as usize)];
        if key.iter().any(Value::is_null) {
            self.insert(entry, tid)?;
            return Ok(UniqueInsert::Inserted);
        }
        let info = self.root_info()?;
        let tuple = self.leaf_tuple(entry, tid, info.natts)?;
        let first_sk = ScanKey::Prefix {
            values: key,
            after: false,
            order: self.order,
        };
        let (block, stack) = self.descend(&first_sk, Access::Insert)?;
        let mut first_block = block;
        let mut first_buf = self.pool.read_buffer(self.rel, first_block)?;
        let mut walk = LinkWalk::default();
        let first = loop {
            let latch = PageLatch::new(&mut first_buf);
            let page = BtPage::open(&latch, self.rel, first_block)?;
            if !page.is_leaf() {
                return Err(page.corrupt("an internal page where a leaf was expected"));
            }
            if page.incomplete_split() {
                self.finish_split(&stack, latch)?;
                continue;
            }
            if page.should_move_right(&first_sk)? {
                first_block = page.next();
                drop(latch);
                walk.step(self, first_block)?;
                first_buf = self.pool.read_buffer(self.rel, first_block)?;
                continue;
            }
            break latch;
        };
        if let Some(conflict) = self.find_live_duplicate(first_block, &first, key, &mut is_live)? {
            return Ok(UniqueInsert::Conflict(conflict));
        }
        let sk = ScanKey::Exact {
            values: entry,
            tid,
            order: self.order,
        };
        let on_first = {
            let page = BtPage::open(&first, self.rel, first_block)?;
            if page.should_move_right(&sk)? {
                Err(page.next())
            } else {
                Ok(self.leaf_position(&page, &sk, tid)?)
            }
        };
        let next = match on_first {
            Ok(off) => {
                self.insert_into_page(&stack, first, off, &tuple, None)?;
                return Ok(UniqueInsert::Inserted);
            }
            Err(next) => next,
        };
        // Equal keys run past the first page: insert further right, still holding the
        // first page (left to right, rule 4).
        self.insert_on_leaf(&stack, next, &sk, tid, &tuple, Some(first_block))?;
        drop(first);
        Ok(UniqueInsert::Inserted)
    }

    /// Where (`sk`'s key, `tid`) goes on a leaf; an internal error if it is already there.
    fn leaf_position(
        &self,
        page: &BtPage<'_>,
        sk: &ScanKey<'_>,
        tid: ItemPointer,
    ) -> PgResult<OffsetNumber> {
        let off = page.binsrch(sk)?;
        if off <= page.max_offset() && page.compare(sk, off)? == Ordering::Equal {
            return Err(PgError::internal(format!(
                "duplicate entry for heap tuple ({},{}) in btree index {}",
                tid.block,
                tid.offset,
                self.display_name()
            )));
        }
        Ok(off)
    }

    /// Look for a live entry whose key equals `key`, from its first possible place on the
    /// latched page `first` rightwards, read-latching right siblings one at a time.
    fn find_live_duplicate(
        &self,
        first_block: BlockNumber,
        first: &[u8; BLCKSZ],
        key: &[Value],
        is_live: &mut impl FnMut(ItemPointer) -> PgResult<bool>,
    ) -> PgResult<Option<ItemPointer>> {
        let start = ScanKey::Prefix {
            values: key,
            after: false,
            order: self.order,
        };
        let page = BtPage::open(first, self.rel, first_block)?;
        let off = page.binsrch(&start)?;
        let mut next = match self.duplicates_on_page(&page, off, key, is_live)? {
            Dups::Live(tid) => return Ok(Some(tid)),
            Dups::End => return Ok(None),
            Dups::MaybeRight(next) => next,
        };
        let mut walk = LinkWalk::default();
        loop {
            if next == first_block {
                return Err(page::corrupt(self.rel, next, "sibling links form a cycle"));
            }
            walk.step(self, next)?;
            let buf = self.pool.read_buffer(self.rel, next)?;
            let guard = buf.read();
            let page = BtPage::open(&guard, self.rel, next)?;
            next = match self.duplicates_on_page(&page, page.first_data(), key, is_live)? {
                Dups::Live(tid) => return Ok(Some(tid)),
                Dups::End => return Ok(None),
                Dups::MaybeRight(next) => next,
            };
        }
    }

    fn duplicates_on_page(
        &self,
        page: &BtPage<'_>,
        from: OffsetNumber,
        key: &[Value],
        is_live: &mut impl FnMut(ItemPointer) -> PgResult<bool>,
    ) -> PgResult<Dups> {
        for off in from..=page.max_offset() {
            let t = page.tuple(off)?;
            let cmp = tuple::compare_bound(&t, key, self.order).map_err(|d| page.corrupt(d))?;
            if cmp != Some(Ordering::Equal) {
                return Ok(Dups::End);
            }
            let tid = t
                .heap_tid()
                .ok_or_else(|| page.corrupt(format!("leaf item {off} has no heap TID")))?;
            if is_live(tid)? {
                return Ok(Dups::Live(tid));
            }
        }
        let after = ScanKey::Prefix {
            values: key,
            after: true,
            order: self.order,
        };
        // Equal keys may continue on the right sibling unless the high key is above them.
        if page.is_rightmost() || !page.should_move_right(&after)? {
            return Ok(Dups::End);
        }
        Ok(Dups::MaybeRight(page.next()))
    }

    /// Put `item` at `off` on the write-latched page `latch`, splitting it if it is full
    /// and inserting the new downlink above; `child` is the left page of a split one level
    /// down whose downlink `item` is (its flag is cleared by the step that puts `item` in).
    /// Consumes (and so releases) both latches.
    fn insert_into_page(
        &self,
        stack: &[StackEntry],
        mut latch: PageLatch<'_>,
        off: OffsetNumber,
        item: &[u8],
        child: Option<PageLatch<'_>>,
    ) -> PgResult<()> {
        let block = latch.block();
        let (fits, was_root, level) = {
            let page = BtPage::open(&latch, self.rel, block)?;
            (
                page.free_space() >= storage::page::maxalign(item.len()),
                page.is_root(),
                page.level(),
            )
        };
        if fits {
            return self.step_insert(latch, off, item, child);
        }
        let (right_block, mut right_buf) = self.pool.extend(self.rel)?;
        let mut right = PageLatch::new(&mut right_buf);
        let pivot = self.step_split(&mut latch, &mut right, off, item, child)?;
        if was_root {
            self.step_new_root(latch, right, &pivot, level)?;
            return Ok(());
        }
        // The right page needs no latch while the parent is found (PostgreSQL releases it
        // here too); the left one keeps its latch until its flag is cleared (rule 4).
        drop(right);
        drop(right_buf);
        self.insert_downlink(stack, latch, right_block, &pivot, level)
    }

    /// Insert the downlink for `right_block` (split off `left_block`, at `child_level`) into
    /// the parent level, clearing the left page's `BTP_INCOMPLETE_SPLIT` (rule 5).
    fn insert_downlink(
        &self,
        stack: &[StackEntry],
        left: PageLatch<'_>,
        right_block: BlockNumber,
        pivot: &[u8],
        child_level: u32,
    ) -> PgResult<()> {
        let left_block = left.block();
        // The stack names where the left page's downlink was; if it ran out, the root
        // split since we descended, and the parent level is found from the top.
        let (parent_stack, mut pblock, mut hint) = match stack.split_last() {
            Some((top, rest)) => (rest, top.block, top.offset),
            None => (&[][..], self.leftmost_at_level(child_level + 1)?, 0),
        };
        let mut pbuf = self.pool.read_buffer(self.rel, pblock)?;
        let mut walk = LinkWalk::default();
        let (platch, off) = loop {
            let latch = PageLatch::new(&mut pbuf);
            let page = BtPage::open(&latch, self.rel, pblock)?;
            if page.level() != child_level + 1 {
                return Err(page.corrupt(format!(
                    "level {} where the parent of a level {child_level} page was expected",
                    page.level()
                )));
            }
            if page.incomplete_split() {
                self.finish_split(parent_stack, latch)?;
                continue;
            }
            // The downlink moves only right (splits), never left.
            if let Some(off) = page.find_downlink(left_block, hint)? {
                break (latch, off + 1);
            }
            if page.is_rightmost() {
                return Err(page::corrupt(
                    self.rel,
                    left_block,
                    format!(
                        "failed to re-find parent key for split pages {left_block}/{right_block}"
                    ),
                ));
            }
            pblock = page.next();
            hint = 0;
            drop(latch);
            walk.step(self, pblock)?;
            pbuf = self.pool.read_buffer(self.rel, pblock)?;
        };
        let pivot = TupleRef::parse(pivot).map_err(PgError::internal)?;
        let downlink = tuple::with_downlink(&pivot, right_block);
        self.insert_into_page(parent_stack, platch, off, &downlink, Some(left))
    }

    /// Finish the split of the write-latched page `left` if it is still incomplete: insert
    /// the missing downlink, or create the new root if the page was the root (the metapage
    /// still names it). Consumes the latch.
    pub(crate) fn finish_split(&self, stack: &[StackEntry], left: PageLatch<'_>) -> PgResult<()> {
        let left_block = left.block();
        let (right_block, pivot, level) = {
            let page = BtPage::open(&left, self.rel, left_block)?;
            if !page.incomplete_split() {
                return Ok(());
            }
            let hk = page
                .high_key()?
                .ok_or_else(|| page.corrupt("incomplete split on a rightmost page"))?;
            (page.next(), hk.bytes().to_vec(), page.level())
        };
        self.cache.count_meta_read();
        let meta = self.read_meta()?;
        if meta.root == left_block {
            let mut right_buf = self.pool.read_buffer(self.rel, right_block)?;
            let right = PageLatch::new(&mut right_buf);
            {
                let rpage = BtPage::open(&right, self.rel, right_block)?;
                if rpage.prev() != left_block || rpage.level() != level {
                    return Err(rpage.corrupt(format!(
                        "right half of the split of block {left_block} links back to {} at level {}",
                        rpage.prev(),
                        rpage.level()
                    )));
                }
            }
            self.step_new_root(left, right, &pivot, level)?;
            return Ok(());
        }
        self.insert_downlink(stack, left, right_block, &pivot, level)
    }

    /// During a descent for insert: finish the split of page `block` (found with
    /// `BTP_INCOMPLETE_SPLIT` under a read latch, since released).
    pub(crate) fn finish_split_at(&self, block: BlockNumber, stack: &[StackEntry]) -> PgResult<()> {
        let mut buf = self.pool.read_buffer(self.rel, block)?;
        let latch = PageLatch::new(&mut buf);
        self.finish_split(stack, latch)
    }

    /// Check that `child` is the left half of an incomplete split (before any change).
    fn check_child(&self, child: &Option<PageLatch<'_>>) -> PgResult<()> {
        if let Some(c) = child {
            let page = BtPage::open(c, self.rel, c.block())?;
            if !page.incomplete_split() {
                return Err(PgError::internal(format!(
                    "downlink insertion for block {} of btree index {}, which has no incomplete split",
                    c.block(),
                    self.display_name()
                )));
            }
        }
        Ok(())
    }

    /// Atomic step "insert on page": put `item` at `off` on the latched page (it fits)
    /// and, for a downlink, clear the child's `BTP_INCOMPLETE_SPLIT`. One mini-transaction;
    /// latches: the page and the child, both released at its commit.
    fn step_insert(
        &self,
        latch: PageLatch<'_>,
        off: OffsetNumber,
        item: &[u8],
        child: Option<PageLatch<'_>>,
    ) -> PgResult<()> {
        self.check_child(&child)?;
        let block = latch.block();
        let mut mtr = Mtr::new(self.pool);
        let p = mtr.adopt(latch);
        if !page::insert_item_at(mtr.page(p), off, item) {
            return Err(PgError::internal(format!(
                "item of {} bytes does not fit block {block} of btree index {} after all",
                item.len(),
                self.display_name()
            )));
        }
        if let Some(c) = child {
            let c = mtr.adopt(c);
            page::set_flags(mtr.page(c), 0, BTP_INCOMPLETE_SPLIT);
        }
        mtr.commit()?;
        Ok(())
    }

    /// Atomic step "split one level": page `left`, with `item` added at `off`, is divided
    /// between itself and the new page `right`; the old right sibling's left-link is
    /// repointed; the child's flag (if `item` is its downlink) is cleared. The left page
    /// gets `BTP_INCOMPLETE_SPLIT` and loses `BTP_ROOT`. Returns the left page's new high
    /// key, the pivot for the parent's downlink to the right page. One mini-transaction;
    /// latches: left and right (included: the caller still holds them after the commit),
    /// the old right sibling and the child (released at the commit).
    fn step_split(
        &self,
        left: &mut PageLatch<'_>,
        right: &mut PageLatch<'_>,
        off: OffsetNumber,
        item: &[u8],
        child: Option<PageLatch<'_>>,
    ) -> PgResult<Vec<u8>> {
        let (left_block, right_block) = (left.block(), right.block());
        // Plan on a copy; no page changes until everything that can fail has succeeded.
        let old: Box<[u8; BLCKSZ]> = Box::new(**left);
        let page = BtPage::open(&old, self.rel, left_block)?;
        let o = page.opaque();
        if page.incomplete_split() {
            return Err(PgError::internal(format!(
                "split of block {left_block} of btree index {} before its previous split was finished",
                self.display_name()
            )));
        }
        let old_hk = page.high_key()?.map(|t| t.bytes());
        let mut items = Vec::with_capacity(page.max_offset() as usize + 1);
        for item_off in page.first_data()..=page.max_offset() {
            items.push(page.tuple(item_off)?);
        }
        let new_item = TupleRef::parse(item).map_err(PgError::internal)?;
        items.insert((off - page.first_data()) as usize, new_item);
        let (firstright, high_key) = choose_split(page.is_leaf(), old_hk, &items, o.next == P_NONE)
            .map_err(|d| page.corrupt(d))?;

        let left_opaque = BtOpaque {
            prev: o.prev,
            next: right_block,
            level: o.level,
            flags: (o.flags & !BTP_ROOT) | BTP_INCOMPLETE_SPLIT,
        };
        let right_opaque = BtOpaque {
            prev: left_block,
            next: o.next,
            level: o.level,
            flags: o.flags & !(BTP_ROOT | BTP_INCOMPLETE_SPLIT),
        };
        let left_items: Vec<&[u8]> = items[..firstright].iter().map(TupleRef::bytes).collect();
        let minus_infinity;
        let mut right_items: Vec<&[u8]> = Vec::with_capacity(items.len() - firstright);
        if page.is_leaf() {
            right_items.extend(items[firstright..].iter().map(TupleRef::bytes));
        } else {
            // The first downlink of the right page becomes its minus-infinity item; its key
            // lives on as the left page's high key.
            minus_infinity = tuple::minus_infinity(items[firstright].downlink());
            right_items.push(&minus_infinity);
            right_items.extend(items[firstright + 1..].iter().map(TupleRef::bytes));
        }
        let lsn = Page::new(&old).lsn();
        let mut new_left = Box::new([0u8; BLCKSZ]);
        let mut new_right = Box::new([0u8; BLCKSZ]);
        if !page::build_page(
            &mut new_left,
            left_opaque,
            Some(&high_key),
            &left_items,
            lsn,
        ) || !page::build_page(&mut new_right, right_opaque, old_hk, &right_items, 0)
        {
            return Err(PgError::internal(format!(
                "split of block {left_block} of btree index {} does not fit after all",
                self.display_name()
            )));
        }
        let mut sibling_buf = match o.next {
            P_NONE => None,
            next if next == right_block => {
                return Err(page.corrupt("right sibling is the page being added"));
            }
            next => Some(self.pool.read_buffer(self.rel, next)?),
        };
        let sibling = sibling_buf.as_mut().map(PageLatch::new);
        if let Some(s) = &sibling {
            let spage = BtPage::open(s, self.rel, o.next)?;
            if spage.prev() != left_block || spage.level() != o.level {
                return Err(spage.corrupt(format!(
                    "left-link {} at level {} on the right sibling of block {left_block} (level {})",
                    spage.prev(),
                    spage.level(),
                    o.level
                )));
            }
        }
        self.check_child(&child)?;

        // Apply.
        let mut mtr = Mtr::new(self.pool);
        let l = mtr.include(left);
        let r = mtr.include(right);
        mtr.page(l).copy_from_slice(&new_left[..]);
        mtr.page(r).copy_from_slice(&new_right[..]);
        if let Some(s) = sibling {
            let s = mtr.adopt(s);
            page::set_prev(mtr.page(s), right_block);
        }
        if let Some(c) = child {
            let c = mtr.adopt(c);
            page::set_flags(mtr.page(c), 0, BTP_INCOMPLETE_SPLIT);
        }
        mtr.commit()?;
        Ok(high_key)
    }

    /// Atomic step "new root": a new root page one level up with downlinks to `left`
    /// (minus infinity) and `right` (`pivot`), the metapage pointing at it, and the old
    /// root's `BTP_INCOMPLETE_SPLIT` cleared. One mini-transaction; latches: left and right
    /// (held since the split, released at the commit), the new root, the metapage (always
    /// the last latch, rule 4).
    fn step_new_root(
        &self,
        left: PageLatch<'_>,
        right: PageLatch<'_>,
        pivot: &[u8],
        child_level: u32,
    ) -> PgResult<RootInfo> {
        let (left_block, right_block) = (left.block(), right.block());
        {
            let page = BtPage::open(&left, self.rel, left_block)?;
            if !page.incomplete_split() || page.next() != right_block {
                return Err(page.corrupt(format!(
                    "new root over block {left_block}, whose split to {right_block} is not incomplete"
                )));
            }
        }
        let pivot = TupleRef::parse(pivot).map_err(PgError::internal)?;
        let minus_infinity = tuple::minus_infinity(left_block);
        let downlink = tuple::with_downlink(&pivot, right_block);
        let root_opaque = BtOpaque {
            prev: P_NONE,
            next: P_NONE,
            level: child_level + 1,
            flags: BTP_ROOT,
        };
        let mut image = Box::new([0u8; BLCKSZ]);
        if !page::build_page(
            &mut image,
            root_opaque,
            None,
            &[&minus_infinity, &downlink],
            0,
        ) {
            return Err(PgError::internal(
                "two downlinks do not fit a new root page",
            ));
        }
        let (root_block, mut root_buf) = self.pool.extend(self.rel)?;
        let mut meta_buf = self.pool.read_buffer(self.rel, BTREE_METAPAGE)?;
        let mut mtr = Mtr::new(self.pool);
        let root = mtr.latch(&mut root_buf);
        let meta_page = mtr.latch(&mut meta_buf);
        let meta = page::read_meta(mtr.page_ref(meta_page), self.rel)?;
        if meta.root != left_block || meta.level != child_level {
            return Err(page::corrupt(
                self.rel,
                BTREE_METAPAGE,
                format!(
                    "metapage names root {} at level {}, but block {left_block} at level {child_level} was the root",
                    meta.root, meta.level
                ),
            ));
        }

        // Apply.
        mtr.page(root).copy_from_slice(&image[..]);
        let new_meta = BtMeta {
            root: root_block,
            level: child_level + 1,
            natts: meta.natts,
        };
        page::write_meta(mtr.page(meta_page), new_meta);
        let l = mtr.adopt(left);
        page::set_flags(mtr.page(l), 0, BTP_INCOMPLETE_SPLIT);
        // Unchanged, so not logged: held until the new root exists (rule 4).
        mtr.adopt(right);
        mtr.commit()?;
        // The creator of a root tells the cache, so it need not read the metapage (rule 6).
        Ok(self.cache.store_created(
            self.rel,
            RootInfo {
                root: root_block,
                level: new_meta.level,
                natts: new_meta.natts,
            },
        ))
    }
}

#[cfg(test)]
impl BTree<'_> {
    /// Insert (`key`, `tid`) by splitting its leaf and stopping there, as an error or a
    /// crash between the two steps of a split would (rule 5): the left page keeps
    /// `BTP_INCOMPLETE_SPLIT` and the right page has no downlink. Returns the left page.
    pub(crate) fn insert_with_interrupted_split(
        &self,
        key: &[Value],
        tid: ItemPointer,
    ) -> PgResult<BlockNumber> {
        let info = self.root_info()?;
        let tuple = self.leaf_tuple(key, tid, info.natts)?;
        let sk = ScanKey::Exact {
            values: key,
            tid,
            order: self.order,
        };
        let (mut block, _) = self.descend(&sk, Access::Read)?;
        loop {
            let mut buf = self.pool.read_buffer(self.rel, block)?;
            let mut latch = PageLatch::new(&mut buf);
            let off = {
                let page = BtPage::open(&latch, self.rel, block)?;
                if page.should_move_right(&sk)? {
                    Err(page.next())
                } else {
                    Ok(self.leaf_position(&page, &sk, tid)?)
                }
            };
            match off {
                Err(next) => block = next,
                Ok(off) => {
                    let (_, mut right_buf) = self.pool.extend(self.rel)?;
                    let mut right = PageLatch::new(&mut right_buf);
                    self.step_split(&mut latch, &mut right, off, &tuple, None)?;
                    return Ok(block);
                }
            }
        }
    }
}

/// What the scan of a page for equal keys found.
enum Dups {
    Live(ItemPointer),
    End,
    MaybeRight(BlockNumber),
}

/// Choose where to split `items` (the page's data items with the new one in place):
/// returns the index of the first item that goes right and the left page's new high key.
///
/// Aims for half the bytes on each side, or — when the page is the rightmost of its level,
/// where ascending inserts land — for the left page filled to the fill factor (90% for
/// leaves, 70% above), as PostgreSQL's `_bt_findsplitloc` does. Both pages must fit with
/// their high keys; with items of at most a third of a page (nbtree rule 2), some split
/// point always does.
fn choose_split(
    leaf: bool,
    old_hk: Option<&[u8]>,
    items: &[TupleRef<'_>],
    rightmost: bool,
) -> Result<(usize, Vec<u8>), String> {
    let n = items.len();
    if n < 2 {
        return Err(format!("a page with {n} items cannot split"));
    }
    let space: Vec<usize> = items.iter().map(|t| item_space(t.bytes().len())).collect();
    let total: usize = space.iter().sum();
    let mut prefix = Vec::with_capacity(n + 1);
    prefix.push(0usize);
    for s in &space {
        prefix.push(prefix.last().copied().unwrap_or(0) + s);
    }
    let fill_percent = match (rightmost, leaf) {
        (false, _) => 50,
        (true, true) => BTREE_DEFAULT_FILLFACTOR,
        (true, false) => BTREE_NONLEAF_FILLFACTOR,
    };
    let target = total * fill_percent / 100;
    let mut candidates: Vec<usize> = (1..n).collect();
    candidates.sort_by_key(|i| prefix[*i].abs_diff(target));
    let old_hk_space = old_hk.map_or(0, |hk| item_space(hk.len()));
    for i in candidates {
        let high_key = if leaf {
            tuple::leaf_pivot(&items[i - 1], &items[i])?
        } else {
            tuple::with_downlink(&items[i], P_NONE)
        };
        let left = prefix[i] + item_space(high_key.len());
        let mut right = old_hk_space + total - prefix[i];
        if !leaf {
            right = right - space[i] + item_space(tuple::BT_TUPLE_HEADER_SIZE);
        }
        if left <= BT_PAGE_CAPACITY && right <= BT_PAGE_CAPACITY {
            return Ok((i, high_key));
        }
    }
    Err(format!("no split point for {n} items of {total} bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nbtree::tuple::{BT_MAX_ITEM_SIZE, encode_leaf};

    fn leaf_items(widths: &[usize]) -> Vec<Vec<u8>> {
        widths
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let mut s = format!("{i:04}");
                s.push_str(&"z".repeat(w.saturating_sub(4)));
                encode_leaf(
                    &[Value::Text(s), Value::Int4(1)],
                    ItemPointer {
                        block: 1,
                        offset: i as u16 + 1,
                    },
                )
            })
            .collect()
    }

    fn split(items: &[Vec<u8>], rightmost: bool) -> (usize, Vec<u8>) {
        let refs: Vec<TupleRef<'_>> = items.iter().map(|t| TupleRef::parse(t).unwrap()).collect();
        choose_split(true, None, &refs, rightmost).expect("a split point")
    }

    #[test]
    fn split_point_halves_or_fills_the_rightmost() {
        let items = leaf_items(&[100; 70]);
        let (mid, hk) = split(&items, false);
        assert_eq!(mid, 35, "half the bytes on each side");
        // The high key is truncated to the first column, which differs.
        let hk = TupleRef::parse(&hk).unwrap();
        assert_eq!(hk.natts(), 1);
        assert_eq!(hk.heap_tid(), None);
        let (right_most, _) = split(&items, true);
        assert_eq!(right_most, 63, "the rightmost page's left half keeps 90%");
        // Items of the largest size: three to a page, and a split always fits.
        let big = leaf_items(&[BT_MAX_ITEM_SIZE - 20; 3]);
        for rightmost in [false, true] {
            let (i, _) = split(&big, rightmost);
            assert!(i == 1 || i == 2);
        }
        // Lopsided sizes: the split point moves to where both halves fit.
        let mut widths = vec![2600, 2600];
        widths.extend([50; 20]);
        let lopsided = leaf_items(&widths);
        let (i, _) = split(&lopsided, false);
        let refs: Vec<TupleRef<'_>> = lopsided
            .iter()
            .map(|t| TupleRef::parse(t).unwrap())
            .collect();
        let left: usize = refs[..i].iter().map(|t| item_space(t.bytes().len())).sum();
        assert!(left <= BT_PAGE_CAPACITY);
        assert!(
            choose_split(true, None, &refs[..1], false).is_err(),
            "one item cannot split"
        );
    }
}
