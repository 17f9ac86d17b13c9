//! Mini-transactions: the one way a logged page changes (wal rule 6).
//!
//! A mini-transaction ([`Mtr`]) latches the pages of one atomic step (a heap insert; a
//! btree split's left page, right page and metapage), lets the caller change them, and at
//! [`Mtr::commit`] logs every changed page in **one** WAL record, stamps the pages with the
//! record's end LSN and only then releases the latches. Recovery applies a record whole or
//! not at all (its CRC covers all of it), so the pages of one step never disagree after a
//! crash.
//!
//! What is logged is physical: for each page, the byte ranges that differ from the page as
//! it was latched (a *delta*), or, for the first change to a page after a checkpoint, the
//! whole page without the free hole between `pd_lower` and `pd_upper` (a *full image*,
//! which repairs a page torn by a crash mid-write: wal rule 4). Redo is then the same
//! routine for every access method: there is no per-record redo code that could disagree
//! with the code that made the change. The price is one 8 KiB copy per latched page and a
//! compare at commit; both are memory-speed and far below an fsync.
//!
//! A mini-transaction dropped without commit puts every page back as it was latched: an
//! error halfway through a change leaves no unlogged bytes behind.

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

struct Latched<'a> {
    tag: BufferTag,
    guard: BufferWriteGuard<'a>,
    before: Box<[u8; BLCKSZ]>,
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
        let tag = buf.tag();
        let guard = buf.write();
        let before = Box::new(*guard);
        self.pages.push(Latched { tag, guard, before });
        self.pages.len() - 1
    }

    /// The page latched as `index`, to change.
    pub fn page(&mut self, index: usize) -> &mut [u8; BLCKSZ] {
        &mut self.pages[index].guard
    }

    /// Log every changed page in one record and release the latches. Returns the record's
    /// end LSN, or 0 when nothing changed or the pool has no WAL (unlogged tests).
    pub fn commit(mut self) -> PgResult<Lsn> {
        let Some(wal) = self.pool.wal().cloned() else {
            self.pages.clear();
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
                self.pages.clear();
                return Ok(0);
            }
            let mut record = Vec::with_capacity(payload.len() + 2);
            record.extend_from_slice(&(changed.len() as u16).to_le_bytes());
            record.extend_from_slice(&payload);
            match wal.insert(RecordKind::Pages, &record, Some(redo)) {
                Ok(end) => {
                    for i in changed {
                        PageMut::new(&mut self.pages[i].guard).set_lsn(end);
                    }
                    self.pages.clear();
                    return Ok(end);
                }
                Err(InsertError::RedoMoved) => continue,
                // Dropping `self` puts the pages back: nothing unlogged stays.
                Err(InsertError::Failed(e)) => return Err(e),
            }
        }
    }
}

impl Drop for Mtr<'_> {
    fn drop(&mut self) {
        for p in &mut self.pages {
            *p.guard = *p.before;
        }
    }
}

/// Append one page's entry unless it did not change; true if appended.
fn encode_entry(out: &mut Vec<u8>, p: &Latched<'_>, redo: Lsn) -> bool {
    let now: &[u8; BLCKSZ] = &p.guard;
    let runs = diff(&p.before, now);
    if runs.is_empty() {
        return false;
    }
    out.extend_from_slice(&p.tag.rel.to_le_bytes());
    out.extend_from_slice(&p.tag.block.to_le_bytes());
    let delta_len: usize = runs.iter().map(|(s, e)| e - s + 4).sum();
    // wal rule 4: the first change after the redo point logs the whole page. A page's LSN
    // is the end of its last record, so one equal to the redo point was last changed
    // before it (and may be torn by a write after the checkpoint).
    if Page::new(&p.before).lsn() <= redo || delta_len > MAX_DELTA {
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
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()) as usize)
    }

    fn u32(&mut self) -> PgResult<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
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
    use super::*;

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
