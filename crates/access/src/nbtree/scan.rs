//! Index scans: entries between two bounds, forward or backward (PostgreSQL's
//! `nbtsearch.c`: `_bt_first`, `_bt_next`, `_bt_readpage`, `_bt_walk_left`; nbtree rule 8).
//!
//! A scan positions itself with one descent, then reads a page at a time: under the page's
//! read latch it copies the matching entries and remembers the sibling link it will follow
//! next; then it drops latch and pin and hands out the copies. So it holds at most one pin,
//! and none between calls, and a slow consumer never blocks a writer.
//!
//! Concurrent splits: a split moves entries only right, onto a new page between the split
//! page and its old right sibling.
//! - Forward, the saved right-link skips such a new page, whose entries were copied
//!   with the page they came from: nothing is missed, nothing is returned twice.
//! - Backward, the saved left-link may point at a page that has split since: the scan
//!   latches it and, if its right-link is no longer the page it came from, walks right
//!   until it finds the page whose right-link is (PostgreSQL's `_bt_walk_left`), so the
//!   pages in between are read, right to left.
//!
//! Entries inserted during the scan may or may not be returned; entries present for the
//! whole scan are returned exactly once, in order. Returned heap TIDs are a snapshot: the
//! caller's heap fetch decides visibility (as with PostgreSQL's MVCC scans, which also drop
//! the pin).

use std::ops::Bound;

use common::ids::{BlockNumber, ItemPointer, OffsetNumber};
use common::{PgError, PgResult, Value};

use super::BTree;
use super::page::{BtPage, P_NONE};
use super::search::{Access, LinkWalk};
use super::tuple::{self, ScanKey, TupleRef};

/// Which way a scan goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanDirection {
    /// Ascending key order.
    Forward,
    /// Descending key order.
    Backward,
}

/// What the scan returns and where it starts and stops.
struct ScanSpec<'a> {
    tree: BTree<'a>,
    direction: ScanDirection,
    lower: Bound<Vec<Value>>,
    upper: Bound<Vec<Value>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ScanState {
    /// No page read yet.
    Start,
    /// Handing out the copies of one page; `next_block` is the next page to read.
    Running,
    /// Finished (or failed).
    Done,
}

/// Where the scan is.
struct ScanPos {
    state: ScanState,
    /// The matching tuples of the current page, back to back, in scan order.
    copied: Vec<u8>,
    spans: Vec<(usize, usize)>,
    next_item: usize,
    /// The page the copies came from.
    block: BlockNumber,
    /// The sibling to read next (right-link forward, left-link backward), saved under
    /// the latch; `P_NONE` when the scan ends with this page.
    next_block: BlockNumber,
}

/// A running index scan: an iterator of `(key values, heap TID)`; see the module header.
/// After an error it returns `None`.
pub struct BTreeScan<'a> {
    spec: ScanSpec<'a>,
    pos: ScanPos,
}

impl<'a> BTree<'a> {
    /// Scan the entries whose leading key columns lie between `lower` and `upper` (each
    /// bound a prefix of the key: equality on a leading prefix is `Included(v)..=Included(v)`),
    /// in `direction`. Bound values compare as keys do, in the tree's [`super::KeyOrder`].
    pub fn scan(
        &self,
        lower: Bound<Vec<Value>>,
        upper: Bound<Vec<Value>>,
        direction: ScanDirection,
    ) -> PgResult<BTreeScan<'a>> {
        let natts = self.root_info()?.natts as usize;
        for b in [&lower, &upper] {
            if let Bound::Included(v) | Bound::Excluded(v) = b
                && v.len() > natts
            {
                return Err(PgError::internal(format!(
                    "scan bound of {} columns on btree index {} of {natts}",
                    v.len(),
                    self.display_name()
                )));
            }
        }
        Ok(BTreeScan {
            spec: ScanSpec {
                tree: *self,
                direction,
                lower,
                upper,
            },
            pos: ScanPos {
                state: ScanState::Start,
                copied: Vec::new(),
                spans: Vec::new(),
                next_item: 0,
                block: P_NONE,
                next_block: P_NONE,
            },
        })
    }
}

impl ScanSpec<'_> {
    /// The key the scan starts from: the first entry at or after it (forward), the last
    /// entry before it (backward).
    fn start_key(&self) -> ScanKey<'_> {
        let (bound, forward) = match self.direction {
            ScanDirection::Forward => (&self.lower, true),
            ScanDirection::Backward => (&self.upper, false),
        };
        match bound {
            Bound::Unbounded if forward => ScanKey::MinusInfinity,
            Bound::Unbounded => ScanKey::PlusInfinity,
            Bound::Included(v) => ScanKey::Prefix {
                values: v,
                after: !forward,
                order: self.tree.order,
            },
            Bound::Excluded(v) => ScanKey::Prefix {
                values: v,
                after: forward,
                order: self.tree.order,
            },
        }
    }

    /// Does a leaf tuple pass the bound the scan moves towards?
    fn before_end(&self, page: &BtPage<'_>, t: &TupleRef<'_>) -> PgResult<bool> {
        let (bound, forward) = match self.direction {
            ScanDirection::Forward => (&self.upper, true),
            ScanDirection::Backward => (&self.lower, false),
        };
        let (v, inclusive) = match bound {
            Bound::Unbounded => return Ok(true),
            Bound::Included(v) => (v, true),
            Bound::Excluded(v) => (v, false),
        };
        let cmp = tuple::compare_bound(t, v, self.tree.order).map_err(|d| page.corrupt(d))?;
        Ok(match cmp {
            None => true,
            Some(std::cmp::Ordering::Equal) => inclusive,
            Some(o) => (o == std::cmp::Ordering::Less) == forward,
        })
    }

    /// Forward: is every entry right of this page past the upper bound? (Those entries
    /// are at or above the high key.) Saves reading the next page at the end of a range.
    fn high_key_ends_scan(&self, page: &BtPage<'_>) -> PgResult<bool> {
        let Some(hk) = page.high_key()? else {
            return Ok(true);
        };
        let (v, inclusive) = match &self.upper {
            Bound::Unbounded => return Ok(false),
            Bound::Included(v) => (v, true),
            Bound::Excluded(v) => (v, false),
        };
        Ok(
            match tuple::compare_bound(&hk, v, self.tree.order).map_err(|d| page.corrupt(d))? {
                Some(std::cmp::Ordering::Greater) => true,
                Some(std::cmp::Ordering::Equal) => !inclusive,
                _ => false,
            },
        )
    }
}

impl ScanPos {
    /// Copy the entries of `page` from `start` on in the scan's direction, up to the end
    /// bound, and save the sibling to read next. `start` may be one past either end.
    fn load(
        &mut self,
        spec: &ScanSpec<'_>,
        page: &BtPage<'_>,
        start: OffsetNumber,
    ) -> PgResult<()> {
        self.copied.clear();
        self.spans.clear();
        self.next_item = 0;
        self.block = page.block();
        let mut ended = false;
        let mut copy = |t: &TupleRef<'_>| {
            let at = self.copied.len();
            self.copied.extend_from_slice(t.bytes());
            self.spans.push((at, t.bytes().len()));
        };
        match spec.direction {
            ScanDirection::Forward => {
                for off in start.max(page.first_data())..=page.max_offset() {
                    let t = page.tuple(off)?;
                    if !spec.before_end(page, &t)? {
                        ended = true;
                        break;
                    }
                    copy(&t);
                }
                ended = ended || spec.high_key_ends_scan(page)?;
                self.next_block = if ended { P_NONE } else { page.next() };
            }
            ScanDirection::Backward => {
                let last = start.min(page.max_offset());
                for off in (page.first_data()..=last).rev() {
                    let t = page.tuple(off)?;
                    if !spec.before_end(page, &t)? {
                        ended = true;
                        break;
                    }
                    copy(&t);
                }
                self.next_block = if ended { P_NONE } else { page.prev() };
            }
        }
        self.state = ScanState::Running;
        Ok(())
    }

    /// Descend to the start and load the first page (`_bt_first`).
    fn first_page(&mut self, spec: &ScanSpec<'_>) -> PgResult<()> {
        let tree = &spec.tree;
        let sk = spec.start_key();
        let (mut block, _) = tree.descend(&sk, Access::Read)?;
        let mut walk = LinkWalk::default();
        loop {
            let buf = tree.pool.read_buffer(tree.rel, block)?;
            let guard = buf.read();
            let page = BtPage::open(&guard, tree.rel, block)?;
            if !page.is_leaf() {
                return Err(page.corrupt("an internal page where a leaf was expected"));
            }
            if page.should_move_right(&sk)? {
                block = page.next();
                walk.step(tree, block)?;
                continue;
            }
            let off = page.binsrch(&sk)?;
            let start = match spec.direction {
                ScanDirection::Forward => off,
                // The last entry before the start key; off - 1 may be the high key's slot
                // or 0, which `load` reads as "nothing on this page".
                ScanDirection::Backward => off - 1,
            };
            return self.load(spec, &page, start);
        }
    }

    /// Read the next page in the scan's direction (`_bt_steppage`).
    fn next_page(&mut self, spec: &ScanSpec<'_>) -> PgResult<()> {
        if self.next_block == P_NONE {
            self.state = ScanState::Done;
            return Ok(());
        }
        let tree = &spec.tree;
        match spec.direction {
            ScanDirection::Forward => {
                let block = self.next_block;
                let buf = tree.pool.read_buffer(tree.rel, block)?;
                let guard = buf.read();
                let page = BtPage::open(&guard, tree.rel, block)?;
                if !page.is_leaf() {
                    return Err(page.corrupt("an internal page on the leaf level"));
                }
                self.load(spec, &page, page.first_data())
            }
            ScanDirection::Backward => {
                // `_bt_walk_left`: the left sibling is the page whose right-link is the
                // page we came from; if the saved left-link's page split since, that is a
                // page to its right.
                let came_from = self.block;
                let mut block = self.next_block;
                let mut walk = LinkWalk::default();
                loop {
                    if block == came_from {
                        return Err(crate::nbtree::page::corrupt(
                            tree.rel,
                            block,
                            "walking left, no page links to the page scanned last",
                        ));
                    }
                    let buf = tree.pool.read_buffer(tree.rel, block)?;
                    let guard = buf.read();
                    let page = BtPage::open(&guard, tree.rel, block)?;
                    if !page.is_leaf() {
                        return Err(page.corrupt("an internal page on the leaf level"));
                    }
                    if page.next() == came_from {
                        return self.load(spec, &page, page.max_offset());
                    }
                    if page.is_rightmost() {
                        return Err(page.corrupt(format!(
                            "walking left from block {came_from}, reached the end of the level"
                        )));
                    }
                    block = page.next();
                    walk.step(tree, block)?;
                }
            }
        }
    }
}

impl Iterator for BTreeScan<'_> {
    type Item = PgResult<(Vec<Value>, ItemPointer)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let pos = &mut self.pos;
            if let Some(&(at, len)) = pos.spans.get(pos.next_item) {
                pos.next_item += 1;
                let tree = &self.spec.tree;
                let block = pos.block;
                let entry = TupleRef::parse(&pos.copied[at..at + len])
                    .and_then(|t| {
                        let tid = t
                            .heap_tid()
                            .ok_or_else(|| "leaf item has no heap TID".to_string())?;
                        Ok((t.values()?, tid))
                    })
                    .map_err(|d| crate::nbtree::page::corrupt(tree.rel, block, d));
                if entry.is_err() {
                    pos.state = ScanState::Done;
                    pos.spans.clear();
                }
                return Some(entry);
            }
            let step = match pos.state {
                ScanState::Start => pos.first_page(&self.spec),
                ScanState::Running => pos.next_page(&self.spec),
                ScanState::Done => return None,
            };
            if let Err(e) = step {
                self.pos.state = ScanState::Done;
                self.pos.spans.clear();
                return Some(Err(e));
            }
        }
    }
}
