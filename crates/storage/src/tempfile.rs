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
