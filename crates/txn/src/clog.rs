//! The commit log: two bits of status per transaction id, in pages cached in memory and
//! kept in segment files under `pg_xact/` (PostgreSQL's clog, an "SLRU").
//!
//! Durability comes from the WAL, not from these files (txn rule 2): a commit or abort is
//! a WAL record first, and redo sets the status again. The files are written only at
//! checkpoints ([`Clog::checkpoint`]) and when a page leaves the cache, and a page is
//! written only after the WAL is flushed past the last record whose status it holds
//! (with `synchronous_commit = off` a commit may still be only in memory; its status must
//! not reach disk before its record).
//!
//! Layout: page `p` holds xids `p * XIDS_PER_PAGE ..`; four per byte, low bits first.
//! Segment file `pg_xact/%016X` holds [`PAGES_PER_SEGMENT`] pages. Ids are 64-bit, so
//! the file of a page is named by the full segment number and never wraps.
//!
//! Truncation ([`Clog::truncate`], txn rule 11): the segments wholly below an id no
//! tuple needs the status of any more are removed; `pg_xact/oldest` records the first id
//! kept, written and fsync'd first, and asking the status of an id below it is an error,
//! never a guess.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};

use common::ids::Lsn;
use common::limits::BLCKSZ;
use common::{PgError, PgResult};
use parking_lot::{Mutex, RwLock};
use storage::vfs::Vfs;
use storage::xlog::Wal;

use crate::Xid;

/// The status of a transaction id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XidStatus {
    /// Running, or never finished (a crash): aborted unless it is still running.
    InProgress,
    Committed,
    Aborted,
}

impl XidStatus {
    fn bits(self) -> u8 {
        match self {
            XidStatus::InProgress => 0,
            XidStatus::Committed => 1,
            XidStatus::Aborted => 2,
        }
    }

    fn from_bits(b: u8) -> XidStatus {
        match b & 3 {
            1 => XidStatus::Committed,
            2 => XidStatus::Aborted,
            _ => XidStatus::InProgress,
        }
    }
}

/// Transaction ids per clog page.
pub const XIDS_PER_PAGE: u64 = BLCKSZ as u64 * 4;
/// Pages per segment file.
pub const PAGES_PER_SEGMENT: u64 = 32;
/// Directory of the segment files, under the data directory.
pub const CLOG_DIR: &str = "pg_xact";
/// Transaction ids per segment file.
pub const XIDS_PER_SEGMENT: u64 = XIDS_PER_PAGE * PAGES_PER_SEGMENT;
/// The file holding the first id whose status is kept (decimal), once truncated.
const OLDEST_FILE: &str = "oldest";

struct ClogPage {
    bytes: Box<[AtomicU8]>,
    dirty: AtomicBool,
    /// End of the last WAL record whose status this page holds.
    lsn: AtomicU64,
    /// Used since the last checkpoint (pages not used for a whole checkpoint cycle leave
    /// the cache after it).
    used: AtomicBool,
}

impl ClogPage {
    /// Note a use, writing the shared flag only when it changes.
    fn mark_used(&self) {
        if !self.used.load(Ordering::Relaxed) {
            self.used.store(true, Ordering::Relaxed);
        }
    }

    fn new(data: &[u8]) -> ClogPage {
        ClogPage {
            bytes: data.iter().map(|b| AtomicU8::new(*b)).collect(),
            dirty: AtomicBool::new(false),
            lsn: AtomicU64::new(0),
            used: AtomicBool::new(true),
        }
    }
}

/// The first id whose status is kept, from `path` (0 where there is no such file).
fn read_oldest(vfs: &dyn Vfs, path: &Path) -> PgResult<Xid> {
    if !vfs.exists(path) {
        return Ok(0);
    }
    let what = || format!("could not read \"{}\"", path.display());
    let f = vfs.open(path, false).map_err(io_err(what()))?;
    let mut buf = [0u8; 32];
    let n = f.read_at(&mut buf, 0).map_err(io_err(what()))?;
    std::str::from_utf8(&buf[..n])
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .ok_or_else(|| {
            PgError::new(
                common::SqlState::DATA_CORRUPTED,
                format!("invalid contents of \"{}\"", path.display()),
            )
        })
}

/// The commit log of one data directory.
pub struct Clog {
    vfs: Arc<dyn Vfs>,
    dir: PathBuf,
    /// By page number (Fx-hashed: every visibility check of a version not yet frozen
    /// looks a page up).
    pages: RwLock<HashMap<u64, Arc<ClogPage>, common::hash::FxBuild>>,
    /// Serialises writing pages out (checkpoint) and truncation against each other.
    io: Mutex<()>,
    /// The first id whose status is kept: the log was truncated below it (0: never).
    oldest: AtomicU64,
}

fn io_err(what: String) -> impl FnOnce(std::io::Error) -> PgError {
    move |e| PgError::io(what, e)
}

impl Clog {
    /// Open (creating) `data_dir/pg_xact`.
    pub fn open(vfs: Arc<dyn Vfs>, data_dir: &Path) -> PgResult<Clog> {
        let dir = data_dir.join(CLOG_DIR);
        vfs.create_dir_all(&dir).map_err(io_err(format!(
            "could not create directory \"{}\"",
            dir.display()
        )))?;
        let oldest = read_oldest(&*vfs, &dir.join(OLDEST_FILE))?;
        Ok(Clog {
            vfs,
            dir,
            pages: RwLock::new(HashMap::default()),
            io: Mutex::new(()),
            oldest: AtomicU64::new(oldest),
        })
    }

    /// The first id whose status is kept (0 if the log was never truncated).
    pub fn oldest(&self) -> Xid {
        self.oldest.load(Ordering::Acquire)
    }

    /// Forget the status of every id below `below`, rounded down to a segment: remove
    /// the segment files wholly below it. The caller knows that no tuple left holds such
    /// an id unfrozen (txn rule 11). `pg_xact/oldest` is written and fsync'd before a
    /// file goes, so a crash between leaves files nobody reads. Returns the segments
    /// removed.
    pub fn truncate(&self, below: Xid) -> PgResult<u64> {
        let _io = self.io.lock();
        let keep = below / XIDS_PER_SEGMENT;
        let from = self.oldest() / XIDS_PER_SEGMENT;
        if keep <= from {
            return Ok(0);
        }
        let oldest = keep * XIDS_PER_SEGMENT;
        let path = self.dir.join(OLDEST_FILE);
        let tmp = self.dir.join(format!("{OLDEST_FILE}.tmp"));
        let f = self
            .vfs
            .open(&tmp, true)
            .map_err(io_err(format!("could not open \"{}\"", tmp.display())))?;
        f.write_all_at(oldest.to_string().as_bytes(), 0)
            .and_then(|()| f.sync())
            .map_err(io_err(format!("could not write \"{}\"", tmp.display())))?;
        drop(f);
        self.vfs
            .rename(&tmp, &path)
            .and_then(|()| self.vfs.sync_dir(&self.dir))
            .map_err(io_err(format!("could not write \"{}\"", path.display())))?;
        self.oldest.store(oldest, Ordering::Release);
        self.pages
            .write()
            .retain(|pageno, _| pageno / PAGES_PER_SEGMENT >= keep);
        let mut removed = 0;
        for segment in from..keep {
            let seg = self.segment_path(segment);
            if self.vfs.exists(&seg) {
                self.vfs
                    .remove(&seg)
                    .map_err(io_err(format!("could not remove \"{}\"", seg.display())))?;
                removed += 1;
            }
        }
        if removed > 0 {
            self.vfs.sync_dir(&self.dir).map_err(io_err(format!(
                "could not fsync directory \"{}\"",
                self.dir.display()
            )))?;
        }
        Ok(removed)
    }

    fn segment_path(&self, segment: u64) -> PathBuf {
        self.dir.join(format!("{segment:016X}"))
    }

    fn page(&self, pageno: u64) -> PgResult<Arc<ClogPage>> {
        if let Some(p) = self.pages.read().get(&pageno) {
            p.mark_used();
            return Ok(p.clone());
        }
        let data = self.read_page(pageno)?;
        let mut pages = self.pages.write();
        Ok(pages
            .entry(pageno)
            .or_insert_with(|| Arc::new(ClogPage::new(&data)))
            .clone())
    }

    /// A page from its segment file; zeros (all in progress) where the file or the page
    /// does not exist yet.
    fn read_page(&self, pageno: u64) -> PgResult<Vec<u8>> {
        let mut data = vec![0u8; BLCKSZ];
        let path = self.segment_path(pageno / PAGES_PER_SEGMENT);
        if !self.vfs.exists(&path) {
            return Ok(data);
        }
        let f = self
            .vfs
            .open(&path, false)
            .map_err(io_err(format!("could not open \"{}\"", path.display())))?;
        let offset = (pageno % PAGES_PER_SEGMENT) * BLCKSZ as u64;
        let mut done = 0;
        while done < BLCKSZ {
            let n = f
                .read_at(&mut data[done..], offset + done as u64)
                .map_err(io_err(format!("could not read \"{}\"", path.display())))?;
            if n == 0 {
                break; // past the end: the rest is zeros
            }
            done += n;
        }
        Ok(data)
    }

    /// The status of `xid`; below [`Clog::oldest`] an error (PostgreSQL's "could not
    /// access status of transaction").
    pub fn status(&self, xid: Xid) -> PgResult<XidStatus> {
        let oldest = self.oldest();
        if xid < oldest {
            return Err(PgError::new(
                common::SqlState::DATA_CORRUPTED,
                format!("could not access status of transaction {xid}"),
            )
            .with_detail(format!(
                "The commit log was truncated below transaction {oldest}."
            )));
        }
        let (pageno, i) = (xid / XIDS_PER_PAGE, (xid % XIDS_PER_PAGE) as usize);
        let bits = |p: &ClogPage| {
            let byte = p.bytes[i / 4].load(Ordering::Acquire);
            XidStatus::from_bits(byte >> ((i % 4) * 2))
        };
        // A cached page is read under the map's shared lock, not cloned out of it.
        if let Some(p) = self.pages.read().get(&pageno) {
            p.mark_used();
            return Ok(bits(p));
        }
        Ok(bits(&*self.page(pageno)?))
    }

    /// Record the final status of `xids`, whose WAL record ends at `lsn`.
    pub fn set(&self, xids: &[Xid], status: XidStatus, lsn: Lsn) -> PgResult<()> {
        let oldest = self.oldest();
        // Redo of a record older than a truncation: nobody asks for those any more.
        for &xid in xids.iter().filter(|&&x| x >= oldest) {
            let page = self.page(xid / XIDS_PER_PAGE)?;
            let i = (xid % XIDS_PER_PAGE) as usize;
            let shift = (i % 4) * 2;
            // The LSN first: whoever copies the new bits also sees how far the WAL must
            // be flushed before the copy may be written.
            page.lsn.fetch_max(lsn, Ordering::AcqRel);
            let _ = page.bytes[i / 4].fetch_update(Ordering::AcqRel, Ordering::Acquire, |b| {
                Some((b & !(3 << shift)) | (status.bits() << shift))
            });
            page.dirty.store(true, Ordering::Release);
        }
        Ok(())
    }

    /// Write every dirty page (after flushing the WAL past its records) and fsync the
    /// files written; then forget clean pages not used since the previous checkpoint.
    pub fn checkpoint(&self, wal: Option<&Wal>) -> PgResult<()> {
        let _io = self.io.lock();
        let dirty: Vec<(u64, Arc<ClogPage>)> = {
            let pages = self.pages.read();
            let mut v: Vec<_> = pages
                .iter()
                .filter(|(_, p)| p.dirty.load(Ordering::Acquire))
                .map(|(n, p)| (*n, p.clone()))
                .collect();
            v.sort_by_key(|(n, _)| *n);
            v
        };
        let mut segments: Vec<u64> = Vec::new();
        let mut created = false;
        for (pageno, page) in &dirty {
            // Clear first: a status set while we copy marks it dirty again.
            page.dirty.store(false, Ordering::Release);
            let data: Vec<u8> = page
                .bytes
                .iter()
                .map(|b| b.load(Ordering::Acquire))
                .collect();
            // Read after the copy: covers every status in it.
            if let Some(wal) = wal
                && let Err(e) = wal.flush(page.lsn.load(Ordering::Acquire))
            {
                page.dirty.store(true, Ordering::Release);
                return Err(e);
            }
            let segment = pageno / PAGES_PER_SEGMENT;
            let path = self.segment_path(segment);
            created |= !self.vfs.exists(&path);
            let f = self
                .vfs
                .open(&path, true)
                .map_err(io_err(format!("could not open \"{}\"", path.display())))?;
            let offset = (pageno % PAGES_PER_SEGMENT) * BLCKSZ as u64;
            let res = f.write_all_at(&data, offset);
            if let Err(e) = res {
                page.dirty.store(true, Ordering::Release);
                return Err(PgError::io(
                    format!("could not write \"{}\"", path.display()),
                    e,
                ));
            }
            if segments.last() != Some(&segment) {
                segments.push(segment);
            }
        }
        for segment in segments {
            let path = self.segment_path(segment);
            let f = self
                .vfs
                .open(&path, false)
                .map_err(io_err(format!("could not open \"{}\"", path.display())))?;
            f.sync()
                .map_err(io_err(format!("could not fsync \"{}\"", path.display())))?;
        }
        if created {
            self.vfs.sync_dir(&self.dir).map_err(io_err(format!(
                "could not fsync directory \"{}\"",
                self.dir.display()
            )))?;
        }
        self.pages.write().retain(|_, p| {
            p.dirty.load(Ordering::Acquire) || p.used.swap(false, Ordering::Relaxed)
        });
        Ok(())
    }

    /// Pages in memory (for tests and statistics).
    pub fn cached_pages(&self) -> usize {
        self.pages.read().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use storage::vfs::OsVfs;

    #[test]
    fn status_survives_a_checkpoint_and_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let vfs: Arc<dyn Vfs> = Arc::new(OsVfs);
        let clog = Clog::open(vfs.clone(), dir.path()).unwrap();
        let far = (1u64 << 40) + 5;
        clog.set(&[3, 4], XidStatus::Committed, 0).unwrap();
        clog.set(&[5], XidStatus::Aborted, 0).unwrap();
        clog.set(&[far], XidStatus::Committed, 0).unwrap();
        assert_eq!(clog.status(3).unwrap(), XidStatus::Committed);
        assert_eq!(clog.status(5).unwrap(), XidStatus::Aborted);
        assert_eq!(clog.status(6).unwrap(), XidStatus::InProgress);
        clog.checkpoint(None).unwrap();
        let again = Clog::open(vfs, dir.path()).unwrap();
        assert_eq!(again.status(4).unwrap(), XidStatus::Committed);
        assert_eq!(again.status(5).unwrap(), XidStatus::Aborted);
        assert_eq!(again.status(far).unwrap(), XidStatus::Committed);
        assert_eq!(again.status(far + 1).unwrap(), XidStatus::InProgress);
        assert_eq!(
            again.status(XIDS_PER_PAGE * 7).unwrap(),
            XidStatus::InProgress
        );
    }

    #[test]
    fn truncation_removes_whole_segments_below_and_refuses_their_ids() {
        let dir = tempfile::tempdir().unwrap();
        let vfs: Arc<dyn Vfs> = Arc::new(OsVfs);
        let clog = Clog::open(vfs.clone(), dir.path()).unwrap();
        let seg = XIDS_PER_SEGMENT;
        let xids = [3, seg + 7, 2 * seg + 1, 3 * seg + 5];
        clog.set(&xids, XidStatus::Committed, 0).unwrap();
        clog.checkpoint(None).unwrap();
        let file = |s: u64| dir.path().join(CLOG_DIR).join(format!("{s:016X}"));
        assert!((0..4).all(|s| file(s).exists()));
        // Below the start of segment 2: segments 0 and 1 go; the id 2 * seg + 1 is kept.
        assert_eq!(clog.truncate(2 * seg + 3).unwrap(), 2);
        assert!(!file(0).exists() && !file(1).exists() && file(2).exists());
        assert_eq!(clog.oldest(), 2 * seg);
        let e = clog.status(seg + 7).expect_err("truncated");
        assert_eq!(e.code, common::SqlState::DATA_CORRUPTED);
        assert_eq!(clog.status(2 * seg + 1).unwrap(), XidStatus::Committed);
        // Redo of an old record changes nothing; truncating less is nothing.
        clog.set(&[5], XidStatus::Committed, 0).unwrap();
        clog.checkpoint(None).unwrap();
        assert!(!file(0).exists());
        assert_eq!(clog.truncate(seg).unwrap(), 0);
        // After a restart, the same.
        let again = Clog::open(vfs, dir.path()).unwrap();
        assert_eq!(again.oldest(), 2 * seg);
        assert!(again.status(3).is_err());
        assert_eq!(again.status(3 * seg + 5).unwrap(), XidStatus::Committed);
    }

    #[test]
    fn unused_clean_pages_leave_the_cache_after_two_checkpoints() {
        let dir = tempfile::tempdir().unwrap();
        let clog = Clog::open(Arc::new(OsVfs), dir.path()).unwrap();
        clog.set(&[1, XIDS_PER_PAGE * 3], XidStatus::Committed, 0)
            .unwrap();
        assert_eq!(clog.cached_pages(), 2);
        clog.checkpoint(None).unwrap();
        clog.status(1).unwrap();
        clog.checkpoint(None).unwrap();
        assert_eq!(clog.cached_pages(), 1, "the page read since stays");
        assert_eq!(
            clog.status(XIDS_PER_PAGE * 3).unwrap(),
            XidStatus::Committed,
            "a forgotten page reads back from its file"
        );
    }
}
