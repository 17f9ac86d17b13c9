//! Verifying a btree's structure (PostgreSQL's `amcheck`: `bt_index_parent_check`).
//!
//! Walks every level from the root down, left to right, and checks: levels and flags;
//! sibling links in both directions; items in strictly increasing order, below the high
//! key and at or above the page's low key (the parent's pivot); leaf items are leaf tuples
//! of the index's width; internal pages start with a minus-infinity downlink; the
//! downlinks of a level, in order, name exactly the pages of the level below, except the
//! right halves of incomplete splits, whose low key is then their left sibling's high key;
//! and each page's low key equals its left sibling's high key.
//!
//! One page is read-latched at a time, so on an index being changed concurrently a
//! report may be a false alarm: run it on a quiet index (tests, or under a DDL lock).

use std::cmp::Ordering;

use common::PgResult;
use common::ids::BlockNumber;

use super::BTree;
use super::page::{BtPage, P_NONE};
use super::search::LinkWalk;
use super::tuple::{self, TupleRef};

/// What [`BTree::check`] saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TreeStats {
    /// Levels, leaves included.
    pub levels: u32,
    /// Pages on each level, leaves first.
    pub pages: Vec<u64>,
    /// Entries on the leaf level.
    pub entries: u64,
    /// Pages whose split is incomplete.
    pub incomplete_splits: u64,
}

impl<'a> BTree<'a> {
    /// Check every structural invariant (see the module header); DATA_CORRUPTED naming the
    /// block on the first one broken.
    pub fn check(&self) -> PgResult<TreeStats> {
        let meta = self.read_meta()?;
        let mut stats = TreeStats {
            levels: meta.level + 1,
            pages: vec![0; meta.level as usize + 1],
            ..TreeStats::default()
        };
        // The downlinks into the level being checked, in order: (child, its low key).
        let mut expected: Vec<(BlockNumber, Option<Vec<u8>>)> = vec![(meta.root, None)];
        for level in (0..=meta.level).rev() {
            let mut below = Vec::new();
            let mut next_expected = 0;
            let mut block = expected[0].0;
            let mut prev = P_NONE;
            let mut prev_high_key: Option<Vec<u8>> = None;
            let mut prev_incomplete = false;
            let mut walk = LinkWalk::default();
            loop {
                let buf = self.pool.read_buffer(self.rel, block)?;
                let guard = buf.read();
                let page = BtPage::open(&guard, self.rel, block)?;
                let bad = |d: String| page.corrupt(d);
                if page.level() != level {
                    return Err(bad(format!("level {} on level {level}", page.level())));
                }
                if page.prev() != prev {
                    return Err(bad(format!(
                        "left-link {} but left sibling {prev}",
                        page.prev()
                    )));
                }
                if page.is_root() && (block != meta.root || level != meta.level) {
                    return Err(bad("a root page that the metapage does not name".into()));
                }
                if block == meta.root && !page.is_root() && !page.incomplete_split() {
                    return Err(bad("the metapage's root has no BTP_ROOT".into()));
                }
                let low_key = if expected.get(next_expected).is_some_and(|e| e.0 == block) {
                    next_expected += 1;
                    expected[next_expected - 1].1.clone()
                } else if prev_incomplete {
                    prev_high_key.clone()
                } else {
                    return Err(bad(
                        "no downlink, and the left sibling has no incomplete split".into(),
                    ));
                };
                if let (Some(lk), Some(phk)) = (&low_key, &prev_high_key) {
                    let (lk, phk) = (parse(&page, lk)?, parse(&page, phk)?);
                    if cmp(self.order, &page, &lk, &phk)? != Ordering::Equal {
                        return Err(bad(
                            "low key differs from the left sibling's high key".into()
                        ));
                    }
                }
                let high_key = page.high_key()?;
                let mut last: Option<TupleRef<'_>> = None;
                for off in page.first_data()..=page.max_offset() {
                    let t = page.tuple(off)?;
                    if page.is_leaf() {
                        if t.is_pivot() || t.natts() != meta.natts as usize {
                            return Err(bad(format!(
                                "item {off} is not a leaf tuple of the index"
                            )));
                        }
                        t.values().map_err(|d| page.corrupt(d))?;
                        stats.entries += 1;
                    } else {
                        let first = off == page.first_data();
                        if !t.is_pivot()
                            || t.is_minus_infinity() != first
                            || t.natts() > meta.natts as usize
                        {
                            return Err(bad(format!("item {off} is not a downlink in place")));
                        }
                        let child_low = if first {
                            low_key.clone()
                        } else {
                            Some(t.bytes().to_vec())
                        };
                        below.push((page.downlink(off)?, child_low));
                        if first {
                            continue;
                        }
                    }
                    if let Some(prev_item) = &last
                        && cmp(self.order, &page, prev_item, &t)? != Ordering::Less
                    {
                        return Err(bad(format!("item {off} is not above the item before it")));
                    }
                    if let Some(hk) = &high_key
                        && cmp(self.order, &page, &t, hk)? != Ordering::Less
                    {
                        return Err(bad(format!("item {off} is not below the high key")));
                    }
                    if let Some(lk) = &low_key {
                        let lk = parse(&page, lk)?;
                        let o = cmp(self.order, &page, &t, &lk)?;
                        if o == Ordering::Less || (!page.is_leaf() && o == Ordering::Equal) {
                            return Err(bad(format!("item {off} is below the page's low key")));
                        }
                    }
                    last = Some(t);
                }
                stats.pages[level as usize] += 1;
                stats.incomplete_splits += page.incomplete_split() as u64;
                prev = block;
                prev_high_key = high_key.map(|t| t.bytes().to_vec());
                prev_incomplete = page.incomplete_split();
                if page.is_rightmost() {
                    break;
                }
                block = page.next();
                walk.step(self, block)?;
            }
            if next_expected != expected.len() {
                return Err(super::page::corrupt(
                    self.rel,
                    expected[next_expected].0,
                    format!("downlink to a page not on level {level} in order"),
                ));
            }
            expected = below;
        }
        Ok(stats)
    }
}

fn parse<'t>(page: &BtPage<'_>, bytes: &'t [u8]) -> PgResult<TupleRef<'t>> {
    TupleRef::parse(bytes).map_err(|d| page.corrupt(d))
}

fn cmp(
    order: super::KeyOrder,
    page: &BtPage<'_>,
    a: &TupleRef<'_>,
    b: &TupleRef<'_>,
) -> PgResult<Ordering> {
    tuple::compare_tuples(a, b, order).map_err(|d| page.corrupt(d))
}
