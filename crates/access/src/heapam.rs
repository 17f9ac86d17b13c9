//! The heap access method: tuples in relation pages, addressed by item pointer.
//!
//! Interface: [`heap_insert`], [`heap_delete`], [`heap_update`], [`heap_fetch`] and the
//! sequential scan [`HeapScan`]. Tuples are opaque bytes here (built by
//! [`tuple::encode`]); this module only reads and writes their
//! `t_ctid`.
//!
//! This is the one place heap pages change (access rule 1): every change is one
//! mini-transaction ([`storage::Mtr`]) taken here, logged as one WAL record.
//!
//! Space (access rule 2): inserts go to the relation's last block, whose number is smgr's
//! cached size less one (no scan, no syscall); when it is full the relation is extended. A
//! delete only marks the line pointer DEAD; its space comes back when an insert or update
//! on that page runs short and compacts it. Pages other than the last one get new tuples
//! only through in-place updates until the free space map exists.
//!
//! Locking: each function pins one page at a time and holds its content lock only while
//! it works on that page (buffer rule 5). There is no row locking yet: callers must not
//! change the same tuple from two threads at once (the transactions issue adds xmax-based
//! row locks). An update that moves a tuple inserts the new version before deleting the
//! old, so a failure between the two leaves a duplicate rather than losing the row; with
//! transactions both steps become one atomic, logged change.

use common::ids::{BlockNumber, ItemPointer, OffsetNumber};
use common::limits::BLCKSZ;
use common::{PgError, PgResult, RelId};
use storage::page::{Page, PageMut};
use storage::smgr::relpath;
use storage::{BufferPool, Mtr, PinnedBuffer};

use crate::tuple::{self, HEAP_TUPLE_HEADER_SIZE, MAX_HEAP_TUPLE_SIZE};

/// Check a tuple handed to insert or update: it must have a header and fit on a page.
fn check_tuple(tuple: &[u8]) -> PgResult<()> {
    if tuple.len() > MAX_HEAP_TUPLE_SIZE {
        return Err(tuple::row_too_big(tuple.len()));
    }
    if tuple.len() < HEAP_TUPLE_HEADER_SIZE {
        return Err(PgError::internal(format!(
            "heap tuple of {} bytes is shorter than its header",
            tuple.len()
        )));
    }
    Ok(())
}

fn not_live(rel: RelId, tid: ItemPointer) -> PgError {
    PgError::internal(format!(
        "tuple ({},{}) of relation {} is not a live tuple",
        tid.block,
        tid.offset,
        relpath(rel)
    ))
}

/// Pin the page `tid` points into; an item pointer past the end of the relation is a
/// caller bug.
fn pin_tid_page(pool: &BufferPool, rel: RelId, tid: ItemPointer) -> PgResult<PinnedBuffer<'_>> {
    let nblocks = pool.smgr().nblocks(rel)?;
    if tid.block >= nblocks {
        return Err(PgError::internal(format!(
            "tuple ({},{}) is beyond the end of relation {} ({nblocks} blocks)",
            tid.block,
            tid.offset,
            relpath(rel)
        )));
    }
    pool.read_buffer(rel, tid.block)
}

/// Put `tuple` on the page, initialising a new page and compacting a fragmented one if
/// that makes room; stamps `t_ctid`. `None` if it does not fit.
fn place_on_page(
    page: &mut [u8; BLCKSZ],
    block: BlockNumber,
    tuple: &[u8],
) -> Option<OffsetNumber> {
    let mut page = PageMut::new(page);
    if page.as_page().is_new() {
        page.init(0);
    }
    let offset = match page.add_item(tuple) {
        Some(off) => off,
        None if page.as_page().needs_compaction() => {
            page.compact();
            page.add_item(tuple)?
        }
        None => return None,
    };
    let item = page.item_mut(offset).expect("an item just added is NORMAL");
    tuple::set_ctid(item, ItemPointer { block, offset });
    Some(offset)
}

/// Insert a tuple; returns where it went. Tries the relation's last page, else extends
/// the relation by one page. A tuple larger than [`MAX_HEAP_TUPLE_SIZE`] is
/// PROGRAM_LIMIT_EXCEEDED "row is too big".
pub fn heap_insert(pool: &BufferPool, rel: RelId, tuple: &[u8]) -> PgResult<ItemPointer> {
    check_tuple(tuple)?;
    let nblocks = pool.smgr().nblocks(rel)?;
    if let Some(block) = nblocks.checked_sub(1) {
        let mut buf = pool.read_buffer(rel, block)?;
        let mut mtr = Mtr::new(pool);
        let p = mtr.latch(&mut buf);
        if let Some(offset) = place_on_page(mtr.page(p), block, tuple) {
            mtr.commit()?;
            return Ok(ItemPointer { block, offset });
        }
        // Dropping the mtr undoes a compaction that did not make room.
    }
    let (block, mut buf) = pool.extend(rel)?;
    let mut mtr = Mtr::new(pool);
    let p = mtr.latch(&mut buf);
    let offset = place_on_page(mtr.page(p), block, tuple)
        .expect("a tuple of at most MAX_HEAP_TUPLE_SIZE fits on an empty page");
    mtr.commit()?;
    Ok(ItemPointer { block, offset })
}

/// Delete the tuple at `tid`: its line pointer becomes DEAD at once; its space is
/// reclaimed when the page next runs short. Deleting something that is not a live tuple
/// is a caller bug (an internal error).
pub fn heap_delete(pool: &BufferPool, rel: RelId, tid: ItemPointer) -> PgResult<()> {
    let mut buf = pin_tid_page(pool, rel, tid)?;
    let mut mtr = Mtr::new(pool);
    let p = mtr.latch(&mut buf);
    if !PageMut::new(mtr.page(p)).mark_dead(tid.offset) {
        return Err(not_live(rel, tid));
    }
    mtr.commit()?;
    Ok(())
}

/// Replace the tuple at `tid` with `new_tuple`; returns the new version's item pointer.
/// In place (same item pointer) when it fits on the same page, compacting the page if
/// that helps; otherwise the new version is inserted as by [`heap_insert`] and the old
/// one deleted.
pub fn heap_update(
    pool: &BufferPool,
    rel: RelId,
    tid: ItemPointer,
    new_tuple: &[u8],
) -> PgResult<ItemPointer> {
    check_tuple(new_tuple)?;
    {
        let mut buf = pin_tid_page(pool, rel, tid)?;
        let mut mtr = Mtr::new(pool);
        let p = mtr.latch(&mut buf);
        let mut page = PageMut::new(mtr.page(p));
        if page.as_page().get_item(tid.offset).is_none() {
            return Err(not_live(rel, tid));
        }
        let mut fits = page.replace_item(tid.offset, new_tuple);
        if !fits && page.as_page().needs_compaction() {
            page.compact();
            fits = page.replace_item(tid.offset, new_tuple);
        }
        if fits {
            let item = page
                .item_mut(tid.offset)
                .expect("a replaced item is NORMAL");
            tuple::set_ctid(item, tid);
            mtr.commit()?;
            return Ok(tid);
        }
        // Unpin before inserting: the insert may want this very page (buffer rule 5).
    }
    let new_tid = heap_insert(pool, rel, new_tuple)?;
    heap_delete(pool, rel, tid)?;
    Ok(new_tid)
}

/// A copy of the live tuple at `tid`, or `None` if there is none (dead, unused, past the
/// page's line pointers or past the end of the relation).
pub fn heap_fetch(pool: &BufferPool, rel: RelId, tid: ItemPointer) -> PgResult<Option<Vec<u8>>> {
    if tid.block >= pool.smgr().nblocks(rel)? {
        return Ok(None);
    }
    let buf = pool.read_buffer(rel, tid.block)?;
    let page = buf.read();
    Ok(Page::new(&page).get_item(tid.offset).map(<[u8]>::to_vec))
}

/// A sequential scan: every live tuple, in block and line pointer order, as
/// `(item pointer, tuple bytes)`.
///
/// Reads the relation's size once, at the start: pages added later are not seen. Each page
/// is pinned just long enough to copy it (one pin at a time, none between calls), so a
/// scan never holds a buffer while its caller works; a page's tuples are those present
/// when it was copied. After an error the scan ends.
pub struct HeapScan<'a> {
    pool: &'a BufferPool,
    rel: RelId,
    nblocks: BlockNumber,
    /// Next block to read.
    next_block: BlockNumber,
    /// Copy of the block before `next_block`.
    page: Box<[u8; BLCKSZ]>,
    next_offset: OffsetNumber,
    failed: bool,
}

impl<'a> HeapScan<'a> {
    pub fn new(pool: &'a BufferPool, rel: RelId) -> PgResult<HeapScan<'a>> {
        Ok(HeapScan {
            pool,
            rel,
            nblocks: pool.smgr().nblocks(rel)?,
            next_block: 0,
            page: Box::new([0; BLCKSZ]),
            next_offset: 1,
            failed: false,
        })
    }

    /// Number of blocks this scan covers.
    pub fn nblocks(&self) -> BlockNumber {
        self.nblocks
    }
}

impl Iterator for HeapScan<'_> {
    type Item = PgResult<(ItemPointer, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let page = Page::new(&self.page);
            while self.next_offset <= page.max_offset() {
                let offset = self.next_offset;
                self.next_offset += 1;
                if let Some(item) = page.get_item(offset) {
                    let tid = ItemPointer {
                        block: self.next_block - 1,
                        offset,
                    };
                    return Some(Ok((tid, item.to_vec())));
                }
            }
            if self.failed || self.next_block >= self.nblocks {
                return None;
            }
            match self.pool.read_buffer(self.rel, self.next_block) {
                Ok(buf) => self.page.copy_from_slice(&buf.read()[..]),
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
            self.next_block += 1;
            self.next_offset = 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::{DataType, SqlState, Value};
    use std::collections::BTreeMap;
    use std::sync::Arc;
    use storage::{OsVfs, Smgr};

    const REL: RelId = 16384;
    const TYPES: [DataType; 2] = [DataType::Int4, DataType::Text];

    fn open_pool(dir: &std::path::Path, pages: usize) -> BufferPool {
        let smgr = Arc::new(Smgr::new(Arc::new(OsVfs), dir).expect("smgr"));
        if !smgr.exists(REL) {
            smgr.create(REL).expect("create");
        }
        BufferPool::new(smgr, pages)
    }

    fn row(id: i32, text: &str) -> Vec<u8> {
        tuple::encode(&[Value::Int4(id), Value::Text(text.into())], &TYPES).expect("encode")
    }

    fn scan_all(pool: &BufferPool) -> Vec<(ItemPointer, Vec<Value>)> {
        HeapScan::new(pool, REL)
            .expect("scan")
            .map(|r| {
                let (tid, bytes) = r.expect("scan row");
                assert_eq!(
                    tuple::ctid(&bytes).expect("ctid"),
                    tid,
                    "t_ctid is the tuple's own"
                );
                (tid, tuple::decode(&bytes, &TYPES).expect("decode"))
            })
            .collect()
    }

    #[test]
    fn ten_thousand_rows_through_eight_frames() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pool = open_pool(dir.path(), 8);
        let mut tids = Vec::new();
        for i in 0..10_000 {
            tids.push(heap_insert(&pool, REL, &row(i, &format!("row {i}"))).expect("insert"));
        }
        assert!(
            tids.windows(2).all(|w| w[0] < w[1]),
            "inserts append in order"
        );
        let nblocks = pool.smgr().nblocks(REL).expect("nblocks");
        assert!(nblocks > 50, "{nblocks} pages");
        assert!(pool.stats().evictions > 0);
        let check = |pool: &BufferPool| {
            let rows = scan_all(pool);
            assert_eq!(rows.len(), 10_000);
            for (i, (tid, values)) in rows.iter().enumerate() {
                assert_eq!(*tid, tids[i]);
                assert_eq!(
                    values,
                    &vec![Value::Int4(i as i32), Value::Text(format!("row {i}"))]
                );
            }
        };
        check(&pool);
        assert_eq!(
            heap_fetch(&pool, REL, tids[1234]).expect("fetch"),
            Some(row(1234, "row 1234")).map(|mut t| {
                tuple::set_ctid(&mut t, tids[1234]);
                t
            })
        );
        pool.flush_all().expect("flush");
        drop(pool);
        check(&open_pool(dir.path(), 8));
    }

    #[test]
    fn delete_and_update_then_scan() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pool = open_pool(dir.path(), 8);
        let tids: Vec<ItemPointer> = (0..1000)
            .map(|i| heap_insert(&pool, REL, &row(i, "small")).expect("insert"))
            .collect();
        let mut expect: BTreeMap<i32, String> = (0..1000).map(|i| (i, "small".into())).collect();
        for i in (0..1000).step_by(3) {
            heap_delete(&pool, REL, tids[i as usize]).expect("delete");
            expect.remove(&i);
        }
        let mut moved = 0;
        for i in (1..1000).step_by(3) {
            let text = if i % 2 == 0 {
                "tiny".to_string()
            } else {
                "x".repeat(300)
            };
            let new = heap_update(&pool, REL, tids[i as usize], &row(i, &text)).expect("update");
            moved += usize::from(new != tids[i as usize]);
            expect.insert(i, text);
        }
        assert!(moved > 0, "some updates had to move");
        let got: BTreeMap<i32, String> = scan_all(&pool)
            .into_iter()
            .map(|(_, v)| match v.as_slice() {
                [Value::Int4(i), Value::Text(s)] => (*i, s.clone()),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(got, expect);
        // Deleted tuples are gone for fetch and for a second delete.
        assert_eq!(heap_fetch(&pool, REL, tids[0]).expect("fetch"), None);
        let e = heap_delete(&pool, REL, tids[0]).expect_err("already deleted");
        assert_eq!(e.code, SqlState::INTERNAL_ERROR);
        let e = heap_update(&pool, REL, tids[3], &row(3, "x")).expect_err("deleted");
        assert_eq!(e.code, SqlState::INTERNAL_ERROR);
        let beyond = ItemPointer {
            block: 1_000_000,
            offset: 1,
        };
        assert_eq!(heap_fetch(&pool, REL, beyond).expect("fetch"), None);
        assert!(heap_delete(&pool, REL, beyond).is_err());
    }

    #[test]
    fn deleted_space_on_the_last_page_is_reused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pool = open_pool(dir.path(), 4);
        let text = "y".repeat(200);
        let mut tids = Vec::new();
        while pool.smgr().nblocks(REL).expect("nblocks") <= 1 {
            tids.push(heap_insert(&pool, REL, &row(0, &text)).expect("insert"));
        }
        // Block 1 holds one tuple; fill it, then delete everything on it.
        let on_last: Vec<ItemPointer> = tids.iter().copied().filter(|t| t.block == 1).collect();
        for t in &on_last {
            heap_delete(&pool, REL, *t).expect("delete");
        }
        let per_page = tids.iter().filter(|t| t.block == 0).count();
        for _ in 0..per_page {
            let t = heap_insert(&pool, REL, &row(1, &text)).expect("insert");
            assert_eq!(t.block, 1, "compaction made room on the last page");
        }
        assert_eq!(pool.smgr().nblocks(REL).expect("nblocks"), 2);
    }

    #[test]
    fn too_big_and_malformed_tuples() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pool = open_pool(dir.path(), 4);
        let e = heap_insert(&pool, REL, &vec![0u8; 9000]).expect_err("too big");
        assert_eq!(e.code, SqlState::PROGRAM_LIMIT_EXCEEDED);
        assert_eq!(e.message, "row is too big: size 9000, maximum size 8160");
        assert!(heap_insert(&pool, REL, b"short").is_err());
        let big = "z".repeat(MAX_HEAP_TUPLE_SIZE - HEAP_TUPLE_HEADER_SIZE - 8 - 4);
        let a = heap_insert(&pool, REL, &row(1, &big)).expect("page-sized row");
        let b = heap_insert(&pool, REL, &row(2, &big)).expect("page-sized row");
        assert_eq!((a.block, b.block), (0, 1));
        assert_eq!(scan_all(&pool).len(), 2);
    }

    /// A seeded xorshift PRNG: tests replay from the seed printed on failure.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    #[test]
    fn randomized_against_a_model() {
        for seed in [1u64, 0xdead_beef, 42_4242] {
            run_model(seed);
        }
    }

    fn run_model(seed: u64) {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut pool = open_pool(dir.path(), 8);
        let mut rng = Rng(seed);
        // Model: live tuples by item pointer.
        let mut model: BTreeMap<ItemPointer, (i32, String)> = BTreeMap::new();
        let mut next_id = 0;
        for step in 0..3000 {
            let text_len = match rng.below(10) {
                0 => 2000 + rng.below(3000),
                1..=3 => 0,
                _ => rng.below(200),
            };
            let text: String =
                std::iter::repeat_n((b'a' + (step % 26) as u8) as char, text_len).collect();
            let live: Vec<ItemPointer> = model.keys().copied().collect();
            match rng.below(10) {
                0..=4 => {
                    let tid = heap_insert(&pool, REL, &row(next_id, &text)).expect("insert");
                    assert!(
                        model.insert(tid, (next_id, text)).is_none(),
                        "seed {seed} step {step}: insert reused live {tid:?}"
                    );
                    next_id += 1;
                }
                5 | 6 if !live.is_empty() => {
                    let tid = live[rng.below(live.len())];
                    heap_delete(&pool, REL, tid).expect("delete");
                    model.remove(&tid);
                }
                7 | 8 if !live.is_empty() => {
                    let tid = live[rng.below(live.len())];
                    let (id, _) = model.remove(&tid).expect("live");
                    let new = heap_update(&pool, REL, tid, &row(id, &text)).expect("update");
                    assert!(
                        model.insert(new, (id, text)).is_none(),
                        "seed {seed} step {step}: update landed on live {new:?}"
                    );
                }
                _ => {
                    // Fetch something live and something possibly dead.
                    if let Some(tid) = live.get(rng.below(live.len().max(1))) {
                        let bytes = heap_fetch(&pool, REL, *tid).expect("fetch").expect("live");
                        let (id, text) = &model[tid];
                        assert_eq!(
                            tuple::decode(&bytes, &TYPES).expect("decode"),
                            vec![Value::Int4(*id), Value::Text(text.clone())]
                        );
                    }
                    if rng.below(20) == 0 {
                        // Through disk: a fresh pool must see the same rows.
                        pool.flush_all().expect("flush");
                        drop(pool);
                        pool = open_pool(dir.path(), 8);
                    }
                }
            }
            if step % 500 == 499 {
                let got: BTreeMap<ItemPointer, (i32, String)> = scan_all(&pool)
                    .into_iter()
                    .map(|(tid, v)| match v.as_slice() {
                        [Value::Int4(i), Value::Text(s)] => (tid, (*i, s.clone())),
                        other => panic!("{other:?}"),
                    })
                    .collect();
                assert_eq!(got, model, "seed {seed} step {step}");
            }
        }
    }
}
