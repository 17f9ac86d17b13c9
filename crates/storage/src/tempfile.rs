//! Temporary files: where a sort (or, later, a hash) that outgrows `work_mem` puts what
//! it cannot hold, as PostgreSQL's `base/pgsql_tmp`.
//!
//! Rules (cited as "temp rule N"):
//! 1. A temporary file lives in `<data_dir>/base/pgsql_tmp`, named by a number unique in
//!    the server's life (`pgsql_tmp<N>`). It is removed when its handle drops: at the
//!    end of the operation that made it, whether it ends in success, an error or a
//!    cancel. The directory is emptied when the server starts (a crash leaves files).
//! 2. Temporary files are neither WAL-logged nor synced: nothing in them outlives the
//!    query, and a crash only leaves garbage for rule 1 to remove.
//! 3. The server counts the files made and the bytes written to them
//!    (`pg_stat_database.temp_files`, `temp_bytes`).
//! 4. A session's files together may hold at most its `temp_file_limit`
//!    ([`TempBudget`]): a write past it fails with PostgreSQL's 53400, and the query's
//!    files go with the error (rule 1).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use common::{PgError, PgResult, SqlState};

/// What one session's temporary files hold, against its `temp_file_limit` (temp rule 4).
#[derive(Debug)]
pub struct TempBudget {
    used: AtomicU64,
    /// In bytes; negative: no limit.
    limit: AtomicI64,
}

impl Default for TempBudget {
    fn default() -> TempBudget {
        TempBudget {
            used: AtomicU64::new(0),
            limit: AtomicI64::new(-1),
        }
    }
}

impl TempBudget {
    /// The limit, in kB as `temp_file_limit` gives it (-1: none).
    pub fn set_limit_kb(&self, kb: i64) {
        self.limit
            .store(kb.saturating_mul(1024).max(-1), Ordering::Relaxed);
    }

    /// Bytes the session's temporary files hold now.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }
}

use crate::vfs::{Vfs, VfsFile};

/// The server's temporary file space.
pub struct TempSpace {
    vfs: Arc<dyn Vfs>,
    dir: PathBuf,
    next: AtomicU64,
    files: AtomicU64,
    bytes: AtomicU64,
}

impl std::fmt::Debug for TempSpace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TempSpace").field("dir", &self.dir).finish()
    }
}

impl TempSpace {
    /// The space under `base_dir` (`<data_dir>/base`), emptied of what an earlier run
    /// left (temp rule 1).
    pub fn open(vfs: Arc<dyn Vfs>, base_dir: &Path) -> PgResult<TempSpace> {
        let dir = base_dir.join("pgsql_tmp");
        vfs.create_dir_all(&dir).map_err(|e| {
            PgError::io(
                format!("could not create directory \"{}\"", dir.display()),
                e,
            )
        })?;
        for name in vfs.list_dir(&dir).unwrap_or_default() {
            let _ = vfs.remove(&dir.join(name));
        }
        Ok(TempSpace {
            vfs,
            dir,
            next: AtomicU64::new(0),
            files: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        })
    }

    /// A new, empty temporary file, its bytes counted against `budget` if given.
    pub fn create(self: &Arc<Self>, budget: Option<&Arc<TempBudget>>) -> PgResult<TempFile> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.join(format!("pgsql_tmp{n}"));
        let file = self.vfs.open(&path, true).map_err(|e| {
            PgError::io(
                format!("could not create temporary file \"{}\"", path.display()),
                e,
            )
        })?;
        self.files.fetch_add(1, Ordering::Relaxed);
        Ok(TempFile {
            space: Arc::clone(self),
            budget: budget.cloned(),
            path,
            file,
            len: 0,
        })
    }

    /// Temporary files made since the server started.
    pub fn files_created(&self) -> u64 {
        self.files.load(Ordering::Relaxed)
    }

    /// Bytes written to temporary files since the server started.
    pub fn bytes_written(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// The files there now (for tests of temp rule 1).
    pub fn present(&self) -> usize {
        self.vfs.list_dir(&self.dir).map_or(0, |l| l.len())
    }
}

/// A record written to a temporary file: its length (4 bytes, little-endian), then its
/// bytes. Sort runs and row stores write their rows so ([`FrameReader`] reads them).
pub fn put_frame(out: &mut Vec<u8>, record: &[u8]) {
    out.extend_from_slice(&(record.len() as u32).to_le_bytes());
    out.extend_from_slice(record);
}

/// Framed records ([`put_frame`]) read back from a temporary file in order, `block`
/// bytes at a time (what the reader's owner accounts for it), from the start or from a
/// record's offset.
pub struct FrameReader {
    buf: Vec<u8>,
    /// Where the next record starts in `buf`.
    at: usize,
    /// The file offset of `buf`'s end.
    offset: u64,
    block: usize,
}

impl FrameReader {
    /// A reader reading `block` bytes at a time, whose first record starts at `offset`.
    pub fn new(block: usize, offset: u64) -> FrameReader {
        FrameReader {
            buf: Vec::new(),
            at: 0,
            offset,
            block,
        }
    }

    /// The next record's bytes, `None` at the end of `file`; XX001 if the file ends
    /// inside a record.
    pub fn next<'r>(&'r mut self, file: &TempFile) -> PgResult<Option<&'r [u8]>> {
        if !self.available(file, 4)? {
            return Ok(None);
        }
        let mut len = [0u8; 4];
        len.copy_from_slice(&self.buf[self.at..self.at + 4]);
        let len = u32::from_le_bytes(len) as usize;
        if !self.available(file, 4 + len)? {
            return Err(PgError::new(
                SqlState::DATA_CORRUPTED,
                format!(
                    "temporary file \"{}\" ends inside a record",
                    file.path.display()
                ),
            ));
        }
        let start = self.at + 4;
        self.at = start + len;
        Ok(Some(&self.buf[start..start + len]))
    }

    /// Make `n` bytes from `at` available in `buf`, reading more of `file`; false if the
    /// file ends first.
    fn available(&mut self, file: &TempFile, n: usize) -> PgResult<bool> {
        while self.buf.len() - self.at < n {
            if self.offset >= file.len() {
                return Ok(false);
            }
            self.buf.drain(..self.at);
            self.at = 0;
            let old = self.buf.len();
            self.buf.resize(old + self.block.max(n - old), 0);
            let got = file.read_at(&mut self.buf[old..], self.offset)?;
            self.buf.truncate(old + got);
            self.offset += got as u64;
            if got == 0 {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// One temporary file, written at its end and read anywhere; removed when dropped.
pub struct TempFile {
    space: Arc<TempSpace>,
    budget: Option<Arc<TempBudget>>,
    path: PathBuf,
    file: Arc<dyn VfsFile>,
    len: u64,
}

impl TempFile {
    /// Append `bytes`; returns where they start.
    pub fn append(&mut self, bytes: &[u8]) -> PgResult<u64> {
        let at = self.len;
        if let Some(b) = &self.budget {
            let limit = b.limit.load(Ordering::Relaxed);
            if limit >= 0 && b.used() + bytes.len() as u64 > limit as u64 {
                return Err(PgError::new(
                    SqlState::CONFIGURATION_LIMIT_EXCEEDED,
                    format!(
                        "temporary file size exceeds temp_file_limit ({}kB)",
                        limit / 1024
                    ),
                ));
            }
            b.used.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        }
        self.file.write_all_at(bytes, at).map_err(|e| {
            PgError::io(
                format!(
                    "could not write to temporary file \"{}\"",
                    self.path.display()
                ),
                e,
            )
        })?;
        self.len += bytes.len() as u64;
        self.space
            .bytes
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        Ok(at)
    }

    /// Read into `buf` from `offset`; short only at the end of the file.
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> PgResult<usize> {
        self.file.read_at(buf, offset).map_err(|e| {
            PgError::io(
                format!(
                    "could not read from temporary file \"{}\"",
                    self.path.display()
                ),
                e,
            )
        })
    }

    /// Bytes written so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(b) = &self.budget {
            b.used.fetch_sub(self.len, Ordering::Relaxed);
        }
        let _ = self.space.vfs.remove(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_read_back_from_any_record_and_a_cut_one_is_xx001() {
        let dir = tempfile::tempdir().expect("tempdir");
        let space =
            Arc::new(TempSpace::open(Arc::new(crate::vfs::OsVfs), dir.path()).expect("space"));
        let mut file = space.create(None).expect("file");
        let mut buf = Vec::new();
        let mut starts = Vec::new();
        for i in 0..1000u32 {
            starts.push(buf.len() as u64);
            put_frame(&mut buf, &i.to_le_bytes().repeat(i as usize % 7));
        }
        file.append(&buf).expect("append");
        // A small block: records cross block ends.
        for from in [0, 1, 500, 999] {
            let mut r = FrameReader::new(16, starts[from]);
            for i in from as u32..1000 {
                let want = i.to_le_bytes().repeat(i as usize % 7);
                assert_eq!(r.next(&file).expect("read"), Some(&want[..]));
            }
            assert_eq!(r.next(&file).expect("end"), None);
        }
        // A record whose bytes the file does not hold.
        file.append(&[200, 0, 0, 0, 1, 2]).expect("append");
        let mut r = FrameReader::new(16, starts[999]);
        r.next(&file).expect("the last whole record");
        let e = r.next(&file).expect_err("cut");
        assert_eq!(e.code, SqlState::DATA_CORRUPTED);
    }
}
