//! Creating an index: empty, or built in bulk from unsorted entries (PostgreSQL's
//! `btbuildempty` and `nbtsort.c`; nbtree rule 10).
//!
//! The bulk build encodes every entry into one arena, sorts them (key, then heap TID),
//! and streams them into leaves from left to right, each filled to
//! [`BTREE_DEFAULT_FILLFACTOR`] percent. When a page is full its last item moves to the
//! next page and the high key is made from the last two items (suffix truncation), so the
//! high key always fits where that item was. Each finished page passes a downlink up to
//! the level above, which fills the same way (to [`BTREE_NONLEAF_FILLFACTOR`] percent),
//! so upper levels are built bottom-up in the same pass. The top level's single page is
//! the root; the metapage is written last. No entry goes through `insert`.
//!
//! Every page is written through the buffer pool in a mini-transaction of its own, which
//! logs it as a full image (a new page has no LSN, so wal rule 4 applies): one WAL record
//! of at most a page per finished page, so the log always covers a page before the pool
//! can write it (buffer rule 3), and recovery redoes the build page by page. The metapage
//! is logged last: a crash before it leaves a metapage that names no root, an index the
//! DDL that built it never published. `create` is one mini-transaction (metapage and root).
//!
//! Both run under the DDL lock that keeps everyone else off the index, on a relation
//! that exists and is empty.

use common::ids::{BlockNumber, ItemPointer};
use common::limits::BLCKSZ;
use common::{PgError, PgResult, Value};

use storage::Mtr;

use super::page::{
    self, BT_PAGE_CAPACITY, BTP_LEAF, BTP_ROOT, BTREE_METAPAGE, BtMeta, BtOpaque, P_NONE,
    item_space,
};
use super::rootcache::RootInfo;
use super::tuple::{self, INDEX_MAX_KEYS, TupleRef};
use super::{BTREE_DEFAULT_FILLFACTOR, BTREE_NONLEAF_FILLFACTOR, BTree};

/// Room kept free on a page being filled for its high key to outgrow the item it
/// replaces: a pivot may carry a heap TID the leaf item stored in its header
/// (`MAXALIGN(sizeof(ItemPointerData))`).
const HIGH_KEY_GROWTH: usize = 8;

/// What a [`BTree::build`] made.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildStats {
    /// Entries in the index.
    pub entries: u64,
    /// Levels, leaves included (1 when the root is a leaf).
    pub levels: u32,
    /// Blocks written, metapage included.
    pub pages: u64,
}

/// The page being filled on one level.
struct LevelState {
    level: u32,
    block: BlockNumber,
    prev: BlockNumber,
    items: Vec<Vec<u8>>,
    /// Bytes the items take, line pointers included.
    used: usize,
    /// The pivot that leads to this page (the left neighbour's high key); `None` for the
    /// leftmost page, reached through a minus-infinity downlink.
    low_key: Option<Vec<u8>>,
}

struct Builder<'t, 'a> {
    tree: &'t BTree<'a>,
    levels: Vec<LevelState>,
    pages: u64,
}

impl<'a> BTree<'a> {
    fn check_new_index(&self, natts: usize) -> PgResult<()> {
        if natts == 0 {
            return Err(PgError::internal(
                "a btree index needs at least one key column",
            ));
        }
        if natts > INDEX_MAX_KEYS {
            return Err(PgError::new(
                common::SqlState::TOO_MANY_COLUMNS,
                format!("cannot use more than {INDEX_MAX_KEYS} columns in an index"),
            ));
        }
        let nblocks = self.pool.smgr().nblocks(self.rel)?;
        if nblocks != 0 {
            return Err(PgError::internal(format!(
                "btree index {} is not empty ({nblocks} blocks)",
                self.display_name()
            )));
        }
        Ok(())
    }

    /// The metapage just written is the truth: cache it.
    fn publish_root(&self, root: BlockNumber, level: u32, natts: usize) {
        self.cache.store(
            self.rel,
            RootInfo {
                root,
                level,
                natts: natts as u16,
            },
        );
    }

    /// Make an empty index of `natts` key columns in the (existing, empty) relation: the
    /// metapage and an empty root leaf, in one atomic step (one mini-transaction).
    pub fn create(&self, natts: usize) -> PgResult<()> {
        self.check_new_index(natts)?;
        let (meta_block, mut meta_buf) = self.pool.extend(self.rel)?;
        let (root_block, mut root_buf) = self.pool.extend(self.rel)?;
        if meta_block != BTREE_METAPAGE {
            return Err(PgError::internal(format!(
                "btree index {} grew while being created",
                self.display_name()
            )));
        }
        let mut mtr = Mtr::new(self.pool);
        let meta = mtr.latch(&mut meta_buf);
        let root = mtr.latch(&mut root_buf);
        let opaque = BtOpaque {
            prev: P_NONE,
            next: P_NONE,
            level: 0,
            flags: BTP_LEAF | BTP_ROOT,
        };
        if !page::build_page(mtr.page(root), opaque, None, &[], 0) {
            return Err(PgError::internal("an empty page does not fit"));
        }
        page::init_meta(
            mtr.page(meta),
            BtMeta {
                root: root_block,
                level: 0,
                natts: natts as u16,
            },
        );
        mtr.commit()?;
        self.publish_root(root_block, 0, natts);
        Ok(())
    }

    /// Build the index from `entries` in any order: sort them, then write pages bottom-up
    /// (see the module header). The relation must exist and be empty. Errors as
    /// [`insert`](Self::insert): an entry too large, a key of the wrong width, the same
    /// (key, TID) twice.
    pub fn build(
        &self,
        natts: usize,
        entries: impl IntoIterator<Item = (Vec<Value>, ItemPointer)>,
    ) -> PgResult<BuildStats> {
        self.build_spilling(natts, entries.into_iter().map(Ok), None)
    }

    /// [`BTree::build`], its sort holding at most `spill.memory` bytes of entries: past
    /// that, each sorted batch goes to a temporary file (a run), and the pages are
    /// written from a merge of the runs (PostgreSQL's tuplesort under
    /// `maintenance_work_mem`).
    pub fn build_spilling(
        &self,
        natts: usize,
        entries: impl IntoIterator<Item = PgResult<(Vec<Value>, ItemPointer)>>,
        spill: Option<SortSpill<'_>>,
    ) -> PgResult<BuildStats> {
        self.check_new_index(natts)?;
        let mut arena = Vec::new();
        let mut spans: Vec<(usize, usize)> = Vec::new();
        let mut runs = Vec::new();
        let mut total = 0u64;
        for entry in entries {
            let (key, tid) = entry?;
            let t = self.leaf_tuple(&key, tid, natts as u16)?;
            spans.push((arena.len(), t.len()));
            arena.extend_from_slice(&t);
            total += 1;
            if let Some(s) = &spill
                && arena.len() + spans.len() * std::mem::size_of::<(usize, usize)>() >= s.memory
            {
                self.sort_spans(&arena, &mut spans)?;
                runs.push(write_run(s, &arena, &spans)?);
                arena.clear();
                spans.clear();
            }
        }
        self.sort_spans(&arena, &mut spans)?;
        let mut sorted = Merge {
            tree: self,
            files: runs.into_iter().map(RunReader::new).collect(),
            heads: Vec::new(),
            arena: &arena,
            spans: &spans,
            next_span: 0,
        };
        sorted.start()?;

        let (meta_block, meta_buf) = self.pool.extend(self.rel)?;
        drop(meta_buf);
        if meta_block != BTREE_METAPAGE {
            return Err(PgError::internal(format!(
                "btree index {} grew while being built",
                self.display_name()
            )));
        }
        let mut builder = Builder {
            tree: self,
            levels: Vec::new(),
            pages: 1,
        };
        let first = builder.alloc()?;
        builder.levels.push(LevelState::new(0, first));
        let mut last: Option<Vec<u8>> = None;
        while let Some(t) = sorted.next()? {
            if let Some(prev) = &last
                && self.compare_encoded(prev, &t)? == std::cmp::Ordering::Equal
            {
                let tid = TupleRef::parse(&t)
                    .ok()
                    .and_then(|t| t.heap_tid())
                    .unwrap_or(ItemPointer {
                        block: 0,
                        offset: 0,
                    });
                return Err(PgError::internal(format!(
                    "duplicate entry for heap tuple ({},{}) in btree index {}",
                    tid.block,
                    tid.offset,
                    self.display_name()
                )));
            }
            builder.add(0, t.clone())?;
            last = Some(t);
        }
        let (root, level, pages) = builder.finish()?;
        let mut meta_buf = self.pool.read_buffer(self.rel, BTREE_METAPAGE)?;
        let mut mtr = Mtr::new(self.pool);
        let meta = mtr.latch(&mut meta_buf);
        page::init_meta(
            mtr.page(meta),
            BtMeta {
                root,
                level,
                natts: natts as u16,
            },
        );
        mtr.commit()?;
        self.publish_root(root, level, natts);
        Ok(BuildStats {
            entries: total,
            levels: level + 1,
            pages,
        })
    }
}

impl BTree<'_> {
    /// Two encoded leaf tuples in the tree's order (key, then heap TID).
    fn compare_encoded(&self, a: &[u8], b: &[u8]) -> PgResult<std::cmp::Ordering> {
        let (a, b) = (TupleRef::parse(a), TupleRef::parse(b));
        a.and_then(|a| b.and_then(|b| tuple::compare_tuples(&a, &b, self.order)))
            .map_err(|e| PgError::internal(format!("btree build: {e}")))
    }

    /// Sort `spans` of `arena` in the tree's order.
    fn sort_spans(&self, arena: &[u8], spans: &mut [(usize, usize)]) -> PgResult<()> {
        let tuple_at = |s: &(usize, usize)| TupleRef::parse(&arena[s.0..s.0 + s.1]);
        let mut failure = None;
        spans.sort_unstable_by(|a, b| {
            tuple_at(a)
                .and_then(|a| tuple_at(b).and_then(|b| tuple::compare_tuples(&a, &b, self.order)))
                .unwrap_or_else(|e| {
                    failure.get_or_insert(e);
                    std::cmp::Ordering::Equal
                })
        });
        match failure {
            Some(e) => Err(PgError::internal(format!("btree build: {e}"))),
            None => Ok(()),
        }
    }
}

/// Where a bulk build's sort may spill: temporary files of `space` (counted against
/// `budget`), past `memory` bytes of encoded entries.
pub struct SortSpill<'s> {
    pub space: &'s std::sync::Arc<storage::tempfile::TempSpace>,
    pub budget: Option<&'s std::sync::Arc<storage::tempfile::TempBudget>>,
    pub memory: usize,
}

/// Bytes a run is written in at a time.
const RUN_BLOCK: usize = 64 << 10;

/// Write the sorted `spans` of `arena` to a new temporary file, each tuple a frame
/// (`storage::tempfile::put_frame`).
fn write_run(
    spill: &SortSpill<'_>,
    arena: &[u8],
    spans: &[(usize, usize)],
) -> PgResult<storage::tempfile::TempFile> {
    let mut file = spill.space.create(spill.budget)?;
    let mut buf = Vec::with_capacity(RUN_BLOCK);
    for &(at, len) in spans {
        storage::tempfile::put_frame(&mut buf, &arena[at..at + len]);
        if buf.len() >= RUN_BLOCK {
            file.append(&buf)?;
            buf.clear();
        }
    }
    if !buf.is_empty() {
        file.append(&buf)?;
    }
    Ok(file)
}

/// A run read back in order.
struct RunReader {
    file: storage::tempfile::TempFile,
    frames: storage::tempfile::FrameReader,
}

impl RunReader {
    fn new(file: storage::tempfile::TempFile) -> RunReader {
        RunReader {
            file,
            frames: storage::tempfile::FrameReader::new(RUN_BLOCK, 0),
        }
    }

    fn next(&mut self) -> PgResult<Option<Vec<u8>>> {
        Ok(self.frames.next(&self.file)?.map(<[u8]>::to_vec))
    }
}

/// The build's entries in order: the runs written to temporary files and the last
/// batch, still in memory, merged.
struct Merge<'a, 't> {
    tree: &'a BTree<'t>,
    files: Vec<RunReader>,
    /// The next tuple of each file (`None`: it has ended).
    heads: Vec<Option<Vec<u8>>>,
    arena: &'a [u8],
    spans: &'a [(usize, usize)],
    next_span: usize,
}

impl Merge<'_, '_> {
    fn start(&mut self) -> PgResult<()> {
        for f in &mut self.files {
            self.heads.push(f.next()?);
        }
        Ok(())
    }

    fn next(&mut self) -> PgResult<Option<Vec<u8>>> {
        // The least of the heads and the next in-memory tuple: runs are few (each holds
        // `maintenance_work_mem` of entries), so a linear pass over them is cheap.
        let mut best: Option<usize> = None;
        for i in 0..self.heads.len() {
            let Some(t) = &self.heads[i] else { continue };
            best = match best {
                Some(b) => {
                    let bt = self.heads[b].as_deref().expect("a head");
                    if self.tree.compare_encoded(t, bt)? == std::cmp::Ordering::Less {
                        Some(i)
                    } else {
                        Some(b)
                    }
                }
                None => Some(i),
            };
        }
        let memory = self
            .spans
            .get(self.next_span)
            .map(|&(at, len)| &self.arena[at..at + len]);
        match (best, memory) {
            (Some(b), Some(m))
                if self
                    .tree
                    .compare_encoded(m, self.heads[b].as_deref().expect("a head"))?
                    == std::cmp::Ordering::Less =>
            {
                self.next_span += 1;
                Ok(Some(m.to_vec()))
            }
            (Some(b), _) => {
                let next = self.files[b].next()?;
                Ok(std::mem::replace(&mut self.heads[b], next))
            }
            (None, Some(m)) => {
                self.next_span += 1;
                Ok(Some(m.to_vec()))
            }
            (None, None) => Ok(None),
        }
    }
}

impl LevelState {
    fn new(level: u32, block: BlockNumber) -> LevelState {
        LevelState {
            level,
            block,
            prev: P_NONE,
            items: Vec::new(),
            used: 0,
            low_key: None,
        }
    }

    /// The downlink to this page for the level above.
    fn downlink(&self) -> Result<Vec<u8>, String> {
        Ok(match &self.low_key {
            None => tuple::minus_infinity(self.block),
            Some(k) => tuple::with_downlink(&TupleRef::parse(k)?, self.block),
        })
    }
}

impl Builder<'_, '_> {
    fn alloc(&mut self) -> PgResult<BlockNumber> {
        let (block, _buf) = self.tree.pool.extend(self.tree.rel)?;
        self.pages += 1;
        Ok(block)
    }

    /// Write the finished page of `st`: one mini-transaction, logging a full image.
    fn write(&self, st: &LevelState, opaque: BtOpaque, high_key: Option<&[u8]>) -> PgResult<()> {
        let items: Vec<&[u8]> = st.items.iter().map(Vec::as_slice).collect();
        let mut buf = self.tree.pool.read_buffer(self.tree.rel, st.block)?;
        let mut mtr = Mtr::new(self.tree.pool);
        let p = mtr.latch(&mut buf);
        if !page::build_page(mtr.page(p), opaque, high_key, &items, 0) {
            return Err(PgError::internal(format!(
                "btree build: {} items do not fit block {}",
                items.len(),
                st.block
            )));
        }
        mtr.commit()?;
        Ok(())
    }

    /// Add `item` (a leaf tuple, or a downlink) to the page being filled on level `l`,
    /// finishing that page first if it is full.
    fn add(&mut self, l: usize, item: Vec<u8>) -> PgResult<()> {
        let leaf = l == 0;
        let fill = if leaf {
            BTREE_DEFAULT_FILLFACTOR
        } else {
            BTREE_NONLEAF_FILLFACTOR
        };
        let full_below_free = BLCKSZ * (100 - fill) / 100;
        let st = &self.levels[l];
        let free = BT_PAGE_CAPACITY - st.used;
        if st.items.len() >= 2
            && (free < item_space(item.len()) + HIGH_KEY_GROWTH || free < full_below_free)
        {
            self.finish_page(l)?;
        }
        let st = &mut self.levels[l];
        st.used += item_space(item.len());
        st.items.push(item);
        Ok(())
    }

    /// Write out the full page on level `l`: its last item starts the next page, the high
    /// key separates the two, and the downlink goes up.
    fn finish_page(&mut self, l: usize) -> PgResult<()> {
        let new_block = self.alloc()?;
        let st = &mut self.levels[l];
        let leaf = st.level == 0;
        let last = st.items.pop().expect("a full page has at least two items");
        let high_key = {
            let last = TupleRef::parse(&last).map_err(PgError::internal)?;
            if leaf {
                let lastleft = st.items.last().expect("two items");
                let lastleft = TupleRef::parse(lastleft).map_err(PgError::internal)?;
                tuple::leaf_pivot(&lastleft, &last).map_err(PgError::internal)?
            } else {
                tuple::with_downlink(&last, P_NONE)
            }
        };
        let opaque = BtOpaque {
            prev: st.prev,
            next: new_block,
            level: st.level,
            flags: if leaf { BTP_LEAF } else { 0 },
        };
        let downlink = st.downlink().map_err(PgError::internal)?;
        let first = if leaf {
            last
        } else {
            let last = TupleRef::parse(&last).map_err(PgError::internal)?;
            tuple::minus_infinity(last.downlink())
        };
        let st = &self.levels[l];
        self.write(st, opaque, Some(&high_key))?;
        let st = &mut self.levels[l];
        st.prev = st.block;
        st.block = new_block;
        st.used = item_space(first.len());
        st.items = vec![first];
        st.low_key = Some(high_key);
        if self.levels.len() == l + 1 {
            let block = self.alloc()?;
            self.levels.push(LevelState::new(l as u32 + 1, block));
        }
        self.add(l + 1, downlink)
    }

    /// Write out the last page of every level, bottom-up; returns the root, its level and
    /// the blocks written.
    fn finish(mut self) -> PgResult<(BlockNumber, u32, u64)> {
        let mut l = 0;
        loop {
            let top = l + 1 == self.levels.len();
            let st = &self.levels[l];
            let mut flags = if st.level == 0 { BTP_LEAF } else { 0 };
            if top {
                flags |= BTP_ROOT;
            }
            let opaque = BtOpaque {
                prev: st.prev,
                next: P_NONE,
                level: st.level,
                flags,
            };
            self.write(st, opaque, None)?;
            if top {
                return Ok((st.block, st.level, self.pages));
            }
            let downlink = st.downlink().map_err(PgError::internal)?;
            self.add(l + 1, downlink)?;
            l += 1;
        }
    }
}
