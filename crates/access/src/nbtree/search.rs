//! Finding the root and descending to a leaf (PostgreSQL's `_bt_getroot`, `_bt_search`,
//! `_bt_moveright`).
//!
//! A descent starts at the cached root (nbtree rule 6), read-latches one page at a time
//! and moves right whenever the search key is at or beyond a page's high key (rule 3),
//! so a split that happens between reading a parent and reading its child costs one step
//! right, never a wrong answer. It returns the leaf's block *unlatched*: the caller latches
//! it in the mode it needs and moves right again if the leaf split in between. Inserters
//! also get the stack of internal pages passed through (to find parents after a split)
//! and finish any incomplete split they meet on the way (rule 5).

use common::ids::{BlockNumber, OffsetNumber};
use common::{PgError, PgResult};

use super::BTree;
use super::page::{self, BTREE_METAPAGE, BtMeta, BtPage};
use super::rootcache::RootInfo;
use super::tuple::ScanKey;

/// A walk along sibling links takes this many steps before it starts checking the walk
/// against the relation's size (one smgr lookup, repeated if the relation grew).
const LINK_WALK_FREE_STEPS: u64 = 1024;

/// Bounds a walk along sibling links, so that corrupt links forming a cycle are an error,
/// not a hang: no left-to-right walk visits a page twice, so it can take no more steps
/// than the relation has blocks.
#[derive(Default)]
pub(crate) struct LinkWalk {
    steps: u64,
}

impl LinkWalk {
    pub(crate) fn step(&mut self, tree: &BTree<'_>, to: BlockNumber) -> PgResult<()> {
        self.steps += 1;
        if self.steps <= LINK_WALK_FREE_STEPS {
            return Ok(());
        }
        let nblocks = tree.pool.smgr().nblocks(tree.rel)? as u64;
        if self.steps > nblocks + LINK_WALK_FREE_STEPS {
            return Err(page::corrupt(
                tree.rel,
                to,
                format!("sibling links form a cycle ({} steps)", self.steps),
            ));
        }
        Ok(())
    }
}

/// An internal page passed through on the way down, and the downlink followed there: where
/// an inserter starts looking for a parent after a split (`BTStackData`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct StackEntry {
    pub(crate) block: BlockNumber,
    pub(crate) offset: OffsetNumber,
}

/// What a descent is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Searching: incomplete splits are stepped over (rule 3).
    Read,
    /// Inserting: incomplete splits met on the way are finished first (rule 5).
    Insert,
}

impl<'a> BTree<'a> {
    /// Read the metapage (no counting; callers that use it to find the root count).
    pub(crate) fn read_meta(&self) -> PgResult<BtMeta> {
        let buf = self.pool.read_buffer(self.rel, BTREE_METAPAGE)?;
        let guard = buf.read();
        page::read_meta(&guard, self.rel)
    }

    /// Read the root from the metapage and cache it (rule 6).
    pub(crate) fn refresh_root(&self) -> PgResult<RootInfo> {
        self.cache.count_meta_read();
        let meta = self.read_meta()?;
        Ok(self.cache.store(
            self.rel,
            RootInfo {
                root: meta.root,
                level: meta.level,
                natts: meta.natts,
            },
        ))
    }

    /// Descend from the root to the leaf whose key range holds `sk`; returns its block
    /// (unlatched) and the stack of internal pages above it.
    ///
    /// The cached root is checked against the page itself: it must still carry `BTP_ROOT`
    /// at the cached level (rule 6). If not, the metapage is read once and the descent
    /// starts again from the root it names, even if that page is not (yet) marked root:
    /// during a root split the old root is a fine place to start (rule 3).
    pub(crate) fn descend(
        &self,
        sk: &ScanKey<'_>,
        access: Access,
    ) -> PgResult<(BlockNumber, Vec<StackEntry>)> {
        let mut info = self.root_info()?;
        let mut refreshed = false;
        'from_root: loop {
            let mut block = info.root;
            let mut stack = Vec::with_capacity(info.level as usize);
            let mut expect_level = None;
            let mut walk = LinkWalk::default();
            loop {
                let buf = match self.pool.read_buffer(self.rel, block) {
                    Ok(buf) => buf,
                    // A cached root past the end of the relation: the index was rebuilt
                    // without forget_root. The metapage knows better.
                    Err(_) if expect_level.is_none() && !refreshed => {
                        refreshed = true;
                        info = self.refresh_root()?;
                        continue 'from_root;
                    }
                    Err(e) => return Err(e),
                };
                let guard = buf.read();
                let opened = BtPage::open(&guard, self.rel, block);
                if expect_level.is_none() {
                    let is_cached_root =
                        matches!(&opened, Ok(p) if p.is_root() && p.level() == info.level);
                    if !is_cached_root && !refreshed {
                        refreshed = true;
                        drop(guard);
                        info = self.refresh_root()?;
                        continue 'from_root;
                    }
                }
                let page = opened?;
                if let Some(level) = expect_level
                    && page.level() != level
                {
                    return Err(page.corrupt(format!(
                        "level {} where a descent expected level {level}",
                        page.level()
                    )));
                }
                expect_level = Some(page.level());
                if access == Access::Insert && page.incomplete_split() {
                    drop(guard);
                    self.finish_split_at(block, &stack)?;
                    continue;
                }
                if page.should_move_right(sk)? {
                    block = page.next();
                    walk.step(self, block)?;
                    continue;
                }
                if page.is_leaf() {
                    return Ok((block, stack));
                }
                let (offset, child) = page.find_child(sk)?;
                stack.push(StackEntry { block, offset });
                if page.level() == 1 {
                    return Ok((child, stack));
                }
                expect_level = Some(page.level() - 1);
                block = child;
            }
        }
    }

    /// The leftmost page of `level`: for an inserter whose stack ran out because the root
    /// split after it descended (PostgreSQL's `_bt_get_endpoint` for a "concurrent root
    /// split"). Any page that was once the root is the leftmost of its level, so a stale
    /// cached root at or above `level` is as good a start as the real one.
    pub(crate) fn leftmost_at_level(&self, level: u32) -> PgResult<BlockNumber> {
        let mut info = self.root_info()?;
        if info.level < level {
            info = self.refresh_root()?;
        }
        if info.level < level {
            return Err(PgError::internal(format!(
                "btree index {} has no level {level} (root level {})",
                self.display_name(),
                info.level
            )));
        }
        let mut block = info.root;
        let mut above = u32::MAX;
        loop {
            let buf = self.pool.read_buffer(self.rel, block)?;
            let guard = buf.read();
            let page = BtPage::open(&guard, self.rel, block)?;
            if page.level() == level {
                return Ok(block);
            }
            if page.level() < level || page.level() >= above {
                return Err(page.corrupt(format!(
                    "level {} on the way down from level {above} to level {level}",
                    page.level()
                )));
            }
            above = page.level();
            block = page.downlink(page.first_data())?;
        }
    }
}
