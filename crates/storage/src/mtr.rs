//! Mini-transactions: the one way a logged page changes (wal rule 6).
//!
//! A mini-transaction ([`Mtr`]) latches the pages of one atomic step (a heap insert; a
//! btree split's left page, right page and metapage), lets the caller change them, and at
//! [`Mtr::commit`] logs every changed page in **one** WAL record, stamps the pages with the
//! record's end LSN and only then releases the latches. Recovery applies a record whole or
//! not at all (its CRC covers all of it), so the pages of one step never disagree after a
//! crash.
//!
//! Interface:
//! - [`Mtr::latch`] write-latches a pinned buffer for this mini-transaction;
//! - [`PageLatch::new`] write-latches a page *outside* any mini-transaction, for code that
//!   must look at a page under its latch before it knows what to change (a btree descent
//!   that may move right, a split that must keep its left page latched into the next step).
//!   A `PageLatch` reads as the page but cannot change it;
//! - [`Mtr::adopt`] hands such a latch to a mini-transaction, which releases it at commit;
//! - [`Mtr::include`] lends it for one step: the mini-transaction logs its changes, and the
//!   caller still holds the latch after commit, into the next step (wal rule 6);
//! - [`Mtr::page`] is the only `&mut` access to a latched page; [`Mtr::page_ref`] reads.
//!
//! A kept latch is lent (`include`), not handed back by commit, so that it keeps its own
//! lifetime: the pages of one mini-transaction share the shortest borrow among them, and a
//! latch returned by commit would be tied to the pin of every other page of the step (the
//! right half of a split, which its inserter wants to unpin before climbing to the parent).
//!
//! What is logged is physical: for each page, the byte ranges that differ from the page as
//! it was when this mini-transaction first touched it (a *delta*), or, for the first
//! change to a page after a checkpoint, the whole page without the free hole between
//! `pd_lower` and `pd_upper` (a *full image*, which repairs a page torn by a crash
//! mid-write: wal rule 4). Redo is then the same routine for every access method: there is
//! no per-record redo code that could disagree with the code that made the change. The
//! price is one 8 KiB copy per changed page (taken at the first [`Mtr::page`]) and a
//! compare at commit; both are memory-speed and far below an fsync.
//!
//! A mini-transaction dropped without commit puts every page it changed back as it was
//! when it first touched it: an error halfway through a change leaves no unlogged bytes
//! behind, and a page carried over from an earlier step keeps that step's (logged) change.

use std::ops::Deref;

use common::ids::{BlockNumber, Lsn};
use common::limits::BLCKSZ;
use common::{PgError, PgResult, RelId, SqlState};

use crate::bufmgr::{BufferPool, BufferTag, BufferWriteGuard, PinnedBuffer};
use crate::page::{Page, PageMut, SIZE_OF_PAGE_HEADER};
use crate::xlog::{InsertError, Record, RecordKind, RecoveryStats};

/// Bytes at the start of a page that a delta ignores: the LSN (set from the record) and
/// the checksum (stamped at write-out).
const DELTA_SKIP: usize = 10;
/// Differing ranges closer than this are merged (a range header costs 4 bytes).
const MERGE_GAP: usize = 8;
/// A delta larger than this is logged as a full image instead.
const MAX_DELTA: usize = BLCKSZ / 2;

const ENTRY_DELTA: u8 = 1;
const ENTRY_IMAGE: u8 = 2;

/// A page write-latched for a logged change, held by code rather than by a
/// mini-transaction: see the module header.
///
/// It reads as the page ([`Deref`]); there is no way to change it except through a
/// mini-transaction that [adopts](Mtr::adopt) or [includes](Mtr::include) it, so holding
/// one across steps cannot leak an unlogged change (wal rule 6). Dropping it releases the
/// latch. Taking it marks the buffer dirty (buffer rule 1), as any write guard does; the
/// flag cannot be cleared while the latch is held, since a write-back needs the content
/// lock shared.
pub struct PageLatch<'a> {
    tag: BufferTag,
    guard: BufferWriteGuard<'a>,
}

impl<'a> PageLatch<'a> {
    /// Write-latch the pinned page `buf` (waits for the content lock; buffer rule 5 and
    /// the access method's latch order say when that is safe).
    pub fn new(buf: &'a mut PinnedBuffer<'_>) -> PageLatch<'a> {
        let tag = buf.tag();
        PageLatch {
            tag,
            guard: buf.write(),
        }
    }

    pub fn tag(&self) -> BufferTag {
        self.tag
    }

    pub fn block(&self) -> BlockNumber {
        self.tag.block
    }
}

impl Deref for PageLatch<'_> {
    type Target = [u8; BLCKSZ];
    fn deref(&self) -> &[u8; BLCKSZ] {
        &self.guard
    }
}

/// How a mini-transaction holds one of its pages.
enum Held<'a> {
    /// Latched or adopted by the mini-transaction: released at commit or drop.
    Owned(PageLatch<'a>),
    /// The page of a [`PageLatch`] the caller holds and keeps holding after commit.
    Included(&'a mut [u8; BLCKSZ]),
}

struct Latched<'a> {
    tag: BufferTag,
    page: Held<'a>,
    /// The page as it was when this mini-transaction first handed it out to change
    /// ([`Mtr::page`]); `None` while untouched, and so not logged nor restored.
    before: Option<Box<[u8; BLCKSZ]>>,
}

impl Latched<'_> {
    fn bytes(&self) -> &[u8; BLCKSZ] {
        match &self.page {
            Held::Owned(l) => &l.guard,
            Held::Included(p) => p,
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8; BLCKSZ] {
        match &mut self.page {
            Held::Owned(l) => &mut l.guard,
            Held::Included(p) => p,
        }
    }
}

/// A mini-transaction: see the module header.
pub struct Mtr<'a> {
    pool: &'a BufferPool,
    pages: Vec<Latched<'a>>,
}

impl<'a> Mtr<'a> {
    pub fn new(pool: &'a BufferPool) -> Mtr<'a> {
        Mtr {
            pool,
            pages: Vec::new(),
        }
    }

    /// Latch `buf` exclusively for this mini-transaction; returns its index for
    /// [`page`](Self::page). Latches are held until commit or drop, so take them in an
    /// order that cannot deadlock (buffer rule 5).
    pub fn latch(&mut self, buf: &'a mut PinnedBuffer<'_>) -> usize {
        self.adopt(PageLatch::new(buf))
    }

    /// Take over a latch the caller already holds; it is released at commit or drop, like
    /// one taken by [`latch`](Self::latch). Returns its index.
    pub fn adopt(&mut self, latch: PageLatch<'a>) -> usize {
        self.push(latch.tag, Held::Owned(latch))
    }

    /// Change, in this mini-transaction, a page whose latch the caller keeps: commit logs
    /// its changes and stamps its LSN, and the caller still holds the latch afterwards (a
    /// step that must keep a page latched into the next step, which includes it again).
    /// A drop restores only what this mini-transaction changed; earlier steps' logged
    /// changes stay. Returns its index.
    pub fn include(&mut self, latch: &'a mut PageLatch<'_>) -> usize {
        let tag = latch.tag;
        self.push(tag, Held::Included(&mut latch.guard))
    }

    fn push(&mut self, tag: BufferTag, page: Held<'a>) -> usize {
        debug_assert!(
            self.pages.iter().all(|p| p.tag != tag),
            "page {tag} latched twice in one mini-transaction"
        );
        self.pages.push(Latched {
            tag,
            page,
            before: None,
        });
        self.pages.len() - 1
    }

    /// The page latched as `index`, to change. The first call per page copies it, so a
    /// drop can put it back and commit can log what changed.
    pub fn page(&mut self, index: usize) -> &mut [u8; BLCKSZ] {
        let p = &mut self.pages[index];
        if p.before.is_none() {
            p.before = Some(Box::new(*p.bytes()));
        }
        p.bytes_mut()
    }

    /// The page latched as `index`, to read (no copy).
    pub fn page_ref(&self, index: usize) -> &[u8; BLCKSZ] {
        self.pages[index].bytes()
    }

    /// Log every changed page in one record, stamp each with the record's end LSN and
    /// release the latches this mini-transaction owns (included ones stay with the
    /// caller). Returns the record's end LSN, or 0 when nothing changed or the pool has no
    /// WAL (unlogged tests). On an error every page is put back as it was and every owned
    /// latch released.
    pub fn commit(mut self) -> PgResult<Lsn> {
        let Some(wal) = self.pool.wal().cloned() else {
            self.release();
            return Ok(0);
        };
        loop {
            let redo = wal.redo_lsn();
            let mut payload = Vec::new();
            let mut changed = Vec::new();
            for (i, p) in self.pages.iter().enumerate() {
                if encode_entry(&mut payload, p, redo) {
                    changed.push(i);
                }
            }
            if changed.is_empty() {
                self.release();
                return Ok(0);
            }
            let mut record = Vec::with_capacity(payload.len() + 2);
            record.extend_from_slice(&(changed.len() as u16).to_le_bytes());
            record.extend_from_slice(&payload);
            // Every page is still latched here (wal rule 6): no one can change one between
            // this insert and its LSN stamp, so a page's LSN order is its log order.
            match wal.insert(RecordKind::Pages, &record, Some(redo)) {
                Ok(end) => {
                    for i in changed {
                        PageMut::new(self.pages[i].bytes_mut()).set_lsn(end);
                    }
                    self.release();
                    return Ok(end);
                }
                Err(InsertError::RedoMoved) => continue,
                // Dropping `self` puts the pages back: nothing unlogged stays.
                Err(InsertError::Failed(e)) => return Err(e),
            }
        }
    }

    /// Forget the before-images (the changes are final) and release the latches.
    fn release(&mut self) {
        self.pages.clear();
    }
}

impl Drop for Mtr<'_> {
    fn drop(&mut self) {
        for p in &mut self.pages {
            if let Some(before) = p.before.take() {
                *p.bytes_mut() = *before;
            }
        }
    }
}

/// Append one page's entry unless it did not change; true if appended.
fn encode_entry(out: &mut Vec<u8>, p: &Latched<'_>, redo: Lsn) -> bool {
    let Some(before) = &p.before else {
        return false;
    };
    let now: &[u8; BLCKSZ] = p.bytes();
    let runs = diff(before, now);
    if runs.is_empty() {
        return false;
    }
    out.extend_from_slice(&p.tag.rel.to_le_bytes());
    out.extend_from_slice(&p.tag.block.to_le_bytes());
    let delta_len: usize = runs.iter().map(|(s, e)| e - s + 4).sum();
    // wal rule 4: the first change after the redo point logs the whole page. A page's LSN
    // is the end of its last record, so one equal to the redo point was last changed
    // before it (and may be torn by a write after the checkpoint).
    if Page::new(before).lsn() <= redo || delta_len > MAX_DELTA {
        out.push(ENTRY_IMAGE);
        let (hole_start, hole_end) = hole(now);
        out.extend_from_slice(&(hole_start as u16).to_le_bytes());
        out.extend_from_slice(&(hole_end as u16).to_le_bytes());
        out.extend_from_slice(&now[..hole_start]);
        out.extend_from_slice(&now[hole_end..]);
    } else {
        out.push(ENTRY_DELTA);
        out.extend_from_slice(&(runs.len() as u16).to_le_bytes());
        for (s, e) in runs {
            out.extend_from_slice(&(s as u16).to_le_bytes());
            out.extend_from_slice(&((e - s) as u16).to_le_bytes());
            out.extend_from_slice(&now[s..e]);
        }
    }
    true
}

/// The free hole of a standard page, `[pd_lower, pd_upper)`, or an empty one.
fn hole(page: &[u8; BLCKSZ]) -> (usize, usize) {
    let p = Page::new(page);
    let (lower, upper) = (p.lower() as usize, p.upper() as usize);
    if SIZE_OF_PAGE_HEADER <= lower && lower <= upper && upper <= BLCKSZ {
        (lower, upper)
    } else {
        (BLCKSZ, BLCKSZ)
    }
}

/// Byte ranges `[start, end)` where `a` and `b` differ, ignoring the LSN and checksum.
fn diff(a: &[u8; BLCKSZ], b: &[u8; BLCKSZ]) -> Vec<(usize, usize)> {
    const CHUNK: usize = 64;
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut push = |i: usize| match runs.last_mut() {
        Some((_, end)) if i < *end + MERGE_GAP => *end = i + 1,
        _ => runs.push((i, i + 1)),
    };
    for i in DELTA_SKIP..CHUNK {
        if a[i] != b[i] {
            push(i);
        }
    }
    for c in (CHUNK..BLCKSZ).step_by(CHUNK) {
        if a[c..c + CHUNK] == b[c..c + CHUNK] {
            continue;
        }
        for i in c..c + CHUNK {
            if a[i] != b[i] {
                push(i);
            }
        }
    }
    runs
}

/// A cursor over a Pages record that reports a malformed one as corrupt WAL.
struct Cursor<'a> {
    bytes: &'a [u8],
    lsn: Lsn,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> PgResult<&'a [u8]> {
        if n > self.bytes.len() {
            return Err(PgError::new(
                SqlState::DATA_CORRUPTED,
                format!(
                    "malformed page record at {}",
                    crate::xlog::fmt_lsn(self.lsn)
                ),
            ));
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }

    fn u16(&mut self) -> PgResult<usize> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]) as usize)
    }

    fn u32(&mut self) -> PgResult<u32> {
        Ok(crate::xlog::le_u32(self.take(4)?, 0))
    }
}

/// Replay a Pages record (recovery). Idempotent: a delta is applied only to a page whose
/// LSN is older than the record; a full image is always applied (replay is in log order,
/// so later records roll it forward again).
pub(crate) fn redo_pages(pool: &BufferPool, r: &Record, stats: &mut RecoveryStats) -> PgResult<()> {
    let mut c = Cursor {
        bytes: &r.payload,
        lsn: r.lsn,
    };
    let n = c.u16()?;
    for _ in 0..n {
        let rel: RelId = c.u32()?;
        let block: BlockNumber = c.u32()?;
        let kind = c.take(1)?[0];
        // A relation dropped later in the log: its file is gone, skip its pages.
        let present = pool.smgr().exists(rel);
        match kind {
            ENTRY_IMAGE => {
                let hole_start = c.u16()?;
                let hole_end = c.u16()?;
                if hole_start > hole_end || hole_end > BLCKSZ {
                    return Err(c.take(usize::MAX).unwrap_err());
                }
                let head = c.take(hole_start)?;
                let tail = c.take(BLCKSZ - hole_end)?;
                if !present {
                    stats.pages_skipped += 1;
                    continue;
                }
                let mut buf = pool.read_buffer_for_redo(rel, block, true)?;
                let mut page = buf.write();
                page.fill(0);
                page[..hole_start].copy_from_slice(head);
                page[hole_end..].copy_from_slice(tail);
                PageMut::new(&mut page).set_lsn(r.end);
                stats.pages_applied += 1;
            }
            ENTRY_DELTA => {
                let nruns = c.u16()?;
                let mut runs = Vec::with_capacity(nruns);
                for _ in 0..nruns {
                    let start = c.u16()?;
                    let len = c.u16()?;
                    if start < DELTA_SKIP || start + len > BLCKSZ {
                        return Err(c.take(usize::MAX).unwrap_err());
                    }
                    runs.push((start, c.take(len)?));
                }
                if !present {
                    stats.pages_skipped += 1;
                    continue;
                }
                let mut buf = pool.read_buffer_for_redo(rel, block, false)?;
                let mut page = buf.write();
                if Page::new(&page).lsn() >= r.end {
                    stats.pages_skipped += 1;
                    continue;
                }
                for (start, bytes) in runs {
                    page[start..start + bytes.len()].copy_from_slice(bytes);
                }
                PageMut::new(&mut page).set_lsn(r.end);
                stats.pages_applied += 1;
            }
            _ => return Err(c.take(usize::MAX).unwrap_err()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::simvfs::{SimRng, SimVfs};
    use crate::smgr::Smgr;
    use crate::vfs::Vfs;
    use crate::xlog::{self, MIN_WAL_SEGMENT_SIZE, Wal, WalOptions, WalReader};

    const REL: RelId = 16384;
    /// Test pages carry counters in their special space, as `tests/sim_recovery.rs`.
    const SLOTS: usize = 8;

    fn pool_over(vfs: &Arc<SimVfs>) -> BufferPool {
        let dir = Path::new("/sim/data");
        let vfs: Arc<dyn Vfs> = vfs.clone();
        vfs.create_dir_all(dir).unwrap();
        BufferPool::new(Arc::new(Smgr::new(vfs, dir).unwrap()), 8)
    }

    fn open_logged(vfs: &Arc<SimVfs>) -> (BufferPool, Arc<Wal>) {
        let mut pool = pool_over(vfs);
        let options = WalOptions {
            segment_size: MIN_WAL_SEGMENT_SIZE,
            synchronous_commit: true,
        };
        let dir = Path::new("/sim/data");
        let (wal, _) = xlog::open_and_recover(vfs.clone(), dir, &mut pool, options).unwrap();
        (pool, wal)
    }

    fn slot(k: usize) -> usize {
        BLCKSZ - SLOTS * 8 + k * 8
    }

    /// Set counter `k` of a test page, initialising a new page first.
    fn set(page: &mut [u8; BLCKSZ], k: usize, v: u64) {
        if Page::new(page).is_new() {
            PageMut::new(page).init(SLOTS * 8);
        }
        page[slot(k)..slot(k) + 8].copy_from_slice(&v.to_le_bytes());
    }

    fn counters(page: &[u8; BLCKSZ]) -> [u64; SLOTS] {
        std::array::from_fn(|k| u64::from_le_bytes(page[slot(k)..slot(k) + 8].try_into().unwrap()))
    }

    fn counters_of(pool: &BufferPool, block: BlockNumber) -> [u64; SLOTS] {
        let buf = pool.read_buffer(REL, block).unwrap();
        counters(&buf.read())
    }

    /// The (block, entry kind) of each page in the Pages record that ends at `end` (after
    /// the redo point).
    fn entries_ending_at(wal: &Wal, end: Lsn) -> Vec<(BlockNumber, u8)> {
        wal.flush(end).unwrap();
        let mut reader = WalReader::new(wal, wal.redo_lsn());
        while let Some(r) = reader.next_record().unwrap() {
            if r.end != end {
                continue;
            }
            assert_eq!(r.kind, RecordKind::Pages);
            let mut c = Cursor {
                bytes: &r.payload,
                lsn: r.lsn,
            };
            let mut out = Vec::new();
            for _ in 0..c.u16().unwrap() {
                let _rel = c.u32().unwrap();
                let block = c.u32().unwrap();
                let kind = c.take(1).unwrap()[0];
                if kind == ENTRY_IMAGE {
                    let (start, end) = (c.u16().unwrap(), c.u16().unwrap());
                    c.take(start + BLCKSZ - end).unwrap();
                } else {
                    for _ in 0..c.u16().unwrap() {
                        let _start = c.u16().unwrap();
                        let len = c.u16().unwrap();
                        c.take(len).unwrap();
                    }
                }
                out.push((block, kind));
            }
            return out;
        }
        panic!("no record ends at {}", xlog::fmt_lsn(end));
    }

    #[test]
    fn adopt_and_include_without_wal() {
        let vfs = Arc::new(SimVfs::new());
        let pool = pool_over(&vfs);
        pool.smgr().create(REL).unwrap();
        let (a_block, mut a_buf) = pool.extend(REL).unwrap();
        let (b_block, mut b_buf) = pool.extend(REL).unwrap();
        let mut a = PageLatch::new(&mut a_buf);
        assert_eq!(a.block(), a_block);
        {
            let mut mtr = Mtr::new(&pool);
            let pa = mtr.include(&mut a);
            let pb = mtr.latch(&mut b_buf);
            set(mtr.page(pa), 0, 1);
            set(mtr.page(pb), 0, 1);
            assert_eq!(mtr.commit().unwrap(), 0, "no WAL, no LSN");
        }
        assert_eq!(
            counters(&a)[0],
            1,
            "the kept latch sees its committed change"
        );
        {
            // Dropped: the included page goes back to its state at this step's start.
            let mut mtr = Mtr::new(&pool);
            let pa = mtr.include(&mut a);
            set(mtr.page(pa), 0, 99);
            set(mtr.page(pa), 1, 99);
        }
        assert_eq!(counters(&a)[..2], [1, 0]);
        {
            let mut mtr = Mtr::new(&pool);
            let pa = mtr.adopt(a);
            assert_eq!(counters(mtr.page_ref(pa))[0], 1);
            set(mtr.page(pa), 2, 3);
            mtr.commit().unwrap();
        }
        assert_eq!(counters_of(&pool, a_block)[..3], [1, 0, 3]);
        assert_eq!(counters_of(&pool, b_block)[0], 1);
    }

    #[test]
    fn kept_latch_is_logged_per_step_and_recovered() {
        let vfs = Arc::new(SimVfs::new());
        let (lsns, a_block, b_block) = {
            let (pool, wal) = open_logged(&vfs);
            pool.create_relation(REL).unwrap();
            let (a_block, mut a_buf) = pool.extend(REL).unwrap();
            let (b_block, mut b_buf) = pool.extend(REL).unwrap();
            let mut a = PageLatch::new(&mut a_buf);
            // Step 1: a (kept) and b (released at commit), both new: full images.
            let lsn1 = {
                let mut mtr = Mtr::new(&pool);
                let pa = mtr.include(&mut a);
                let pb = mtr.latch(&mut b_buf);
                set(mtr.page(pa), 0, 1);
                set(mtr.page(pb), 0, 1);
                mtr.commit().unwrap()
            };
            assert!(lsn1 > 0);
            assert_eq!(Page::new(&a).lsn(), lsn1);
            let images = vec![(a_block, ENTRY_IMAGE), (b_block, ENTRY_IMAGE)];
            assert_eq!(entries_ending_at(&wal, lsn1), images);
            // Step 2: a again, still latched: a delta after step 1's record.
            let lsn2 = {
                let mut mtr = Mtr::new(&pool);
                let pa = mtr.include(&mut a);
                set(mtr.page(pa), 1, 2);
                mtr.commit().unwrap()
            };
            assert!(lsn2 > lsn1);
            assert_eq!(Page::new(&a).lsn(), lsn2);
            assert_eq!(entries_ending_at(&wal, lsn2), vec![(a_block, ENTRY_DELTA)]);
            // A dropped step restores only its own change, LSN included.
            {
                let mut mtr = Mtr::new(&pool);
                let pa = mtr.include(&mut a);
                set(mtr.page(pa), 0, 99);
                set(mtr.page(pa), 2, 99);
            }
            assert_eq!(counters(&a)[..3], [1, 2, 0]);
            assert_eq!(Page::new(&a).lsn(), lsn2);
            // A step that changes nothing logs nothing.
            let records = wal.stats().records;
            {
                let mut mtr = Mtr::new(&pool);
                let pa = mtr.include(&mut a);
                let _ = mtr.page(pa);
                assert_eq!(mtr.commit().unwrap(), 0);
            }
            assert_eq!(wal.stats().records, records);
            // The last step adopts the latch and releases it.
            let lsn3 = {
                let mut mtr = Mtr::new(&pool);
                let pa = mtr.adopt(a);
                set(mtr.page(pa), 3, 3);
                mtr.commit().unwrap()
            };
            assert_eq!(Page::new(&a_buf.read()).lsn(), lsn3);
            assert_eq!(Page::new(&b_buf.read()).lsn(), lsn1);
            wal.flush(lsn3).unwrap();
            ([lsn1, lsn2, lsn3], a_block, b_block)
        };
        // Power loss: the data pages were never written; recovery rebuilds them from the
        // three records, whatever else the crash kept.
        for seed in 0..8 {
            let crashed = Arc::new(vfs.crash(&mut SimRng::new(seed)));
            let (pool, _wal) = open_logged(&crashed);
            assert_eq!(
                counters_of(&pool, a_block)[..4],
                [1, 2, 0, 3],
                "seed {seed}"
            );
            assert_eq!(counters_of(&pool, b_block)[..2], [1, 0], "seed {seed}");
            let buf = pool.read_buffer(REL, a_block).unwrap();
            assert_eq!(Page::new(&buf.read()).lsn(), lsns[2]);
        }
    }

    #[test]
    fn readers_never_see_a_kept_page_between_steps() {
        let vfs = Arc::new(SimVfs::new());
        let (pool, _wal) = open_logged(&vfs);
        pool.create_relation(REL).unwrap();
        let (block, mut buf) = pool.extend(REL).unwrap();
        std::thread::scope(|s| {
            let mut a = PageLatch::new(&mut buf);
            // Pins the page, then waits for its content lock until the last step is done.
            let reader = s.spawn(|| counters_of(&pool, block));
            for k in 0..3 {
                let mut mtr = Mtr::new(&pool);
                let pa = mtr.include(&mut a);
                set(mtr.page(pa), k, 10 + k as u64);
                mtr.commit().unwrap();
                // Give a wrongly released latch time to let the reader in.
                std::thread::sleep(Duration::from_millis(5));
            }
            drop(a);
            assert_eq!(reader.join().unwrap()[..3], [10, 11, 12]);
        });
    }

    #[test]
    fn checkpoint_between_steps_makes_the_next_step_log_an_image() {
        let vfs = Arc::new(SimVfs::new());
        let (pool, wal) = open_logged(&vfs);
        pool.create_relation(REL).unwrap();
        let (block, mut buf) = pool.extend(REL).unwrap();
        let mut a = PageLatch::new(&mut buf);
        let step = |a: &mut PageLatch<'_>, k: usize| {
            let mut mtr = Mtr::new(&pool);
            let pa = mtr.include(a);
            set(mtr.page(pa), k, 1);
            mtr.commit().unwrap()
        };
        step(&mut a, 0);
        let lsn = step(&mut a, 1);
        assert_eq!(entries_ending_at(&wal, lsn), vec![(block, ENTRY_DELTA)]);
        let redo_before = wal.redo_lsn();
        std::thread::scope(|s| {
            // The checkpoint moves the redo point, then waits for the latched dirty page.
            let checkpointer = s.spawn(|| xlog::checkpoint(&pool, &wal));
            let deadline = Instant::now() + Duration::from_secs(30);
            while wal.redo_lsn() == redo_before {
                assert!(Instant::now() < deadline, "checkpoint never started");
                std::thread::yield_now();
            }
            let lsn = step(&mut a, 2);
            assert_eq!(
                entries_ending_at(&wal, lsn),
                vec![(block, ENTRY_IMAGE)],
                "first change after the redo point (wal rule 4)"
            );
            drop(a);
            checkpointer.join().unwrap().unwrap();
        });
    }

    #[test]
    fn diff_finds_and_merges_ranges() {
        let a = [0u8; BLCKSZ];
        let mut b = a;
        b[0] = 1; // LSN: ignored
        b[9] = 1; // checksum: ignored
        b[12] = 1;
        b[14] = 1; // within MERGE_GAP of 12: one range
        b[100] = 1;
        b[8191] = 1;
        assert_eq!(diff(&a, &b), vec![(12, 15), (100, 101), (8191, 8192)]);
        assert!(diff(&a, &a).is_empty());
    }
}
