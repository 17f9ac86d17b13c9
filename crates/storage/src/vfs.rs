//! The file system as the rest of storage sees it: a narrow trait over whole files.
//!
//! Every byte Myriad reads from or writes to disk goes through [`Vfs`] and [`VfsFile`], so
//! that a simulator can stand in for the operating system: drop writes that were never
//! synced, tear a page in half at a simulated crash, fail an `fsync`, all driven by a seed
//! that replays (STYLE.md, "All file I/O behind a narrow trait"). [`OsVfs`] is the real
//! thing, positioned reads and writes through `std::os::unix::fs::FileExt` (`pread` /
//! `pwrite`), so one open file is shared by all threads with no seek position to race on.
//!
//! Contract for implementations:
//! - [`VfsFile::read_at`] fills as much of `buf` as the file holds from `offset` and
//!   returns fewer bytes than asked only at end of file (never a short read mid-file).
//! - [`VfsFile::write_all_at`] writes all of `buf` or fails; the data is durable only after
//!   a later [`VfsFile::sync`] returns `Ok`.
//! - Creating, removing or renaming a file is durable only after [`Vfs::sync_dir`] on its
//!   directory.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

/// A file system: opens files and changes directories.
pub trait Vfs: Send + Sync {
    /// Open `path` for reading and writing; with `create`, create it (empty) if missing.
    fn open(&self, path: &Path, create: bool) -> io::Result<Arc<dyn VfsFile>>;
    /// Remove a file.
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// Does `path` exist? (One `stat`: callers cache the answer.)
    fn exists(&self, path: &Path) -> bool;
    /// Create a directory and its parents.
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Atomically replace `to` with `from`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Make the directory's entries (creations, removals, renames) durable.
    fn sync_dir(&self, path: &Path) -> io::Result<()>;
    /// The names of the files in a directory (startup only: WAL segments).
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>>;
}

/// One open file, shared between threads; all I/O is positioned.
#[expect(
    clippy::len_without_is_empty,
    reason = "a file's length is a syscall; callers cache it and never ask for emptiness"
)]
pub trait VfsFile: Send + Sync {
    /// Read into `buf` from `offset`; returns the bytes read, short only at end of file.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    /// Write all of `buf` at `offset`, extending the file if needed.
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Make every write so far durable (`fsync`).
    fn sync(&self) -> io::Result<()>;
    /// Make every write so far durable, with the metadata needed to read it back but not
    /// the rest (`fdatasync`): cheaper where the writes did not grow the file.
    fn sync_data(&self) -> io::Result<()> {
        self.sync()
    }
    /// The file's length in bytes (one `fstat`: callers cache the answer).
    fn len(&self) -> io::Result<u64>;
    /// Truncate or extend (with zeros) to `len` bytes.
    fn set_len(&self, len: u64) -> io::Result<()>;
}

/// The operating system's file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsVfs;

impl Vfs for OsVfs {
    fn open(&self, path: &Path, create: bool) -> io::Result<Arc<dyn VfsFile>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .truncate(false)
            .open(path)?;
        Ok(Arc::new(OsFile { file }))
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        std::fs::create_dir_all(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        File::open(path)?.sync_all()
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(path)? {
            if let Ok(name) = entry?.file_name().into_string() {
                names.push(name);
            }
        }
        Ok(names)
    }
}

/// An open OS file.
#[derive(Debug)]
pub struct OsFile {
    file: File,
}

impl VfsFile for OsFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        // `pread` may return short counts (signals, some file systems); loop until the
        // buffer is full or the file ends, as the trait's contract promises.
        let mut done = 0;
        while done < buf.len() {
            match self.file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.file.write_all_at(buf, offset)
    }

    fn sync(&self) -> io::Result<()> {
        self.file.sync_all()
    }

    fn sync_data(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_file_round_trip() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f");
        let vfs = OsVfs;
        assert!(!vfs.exists(&path));
        assert!(vfs.open(&path, false).is_err(), "open without create");
        let f = vfs.open(&path, true).expect("create");
        assert!(vfs.exists(&path));
        f.write_all_at(b"hello", 3).expect("write");
        assert_eq!(f.len().expect("len"), 8);
        let mut buf = [0xffu8; 10];
        assert_eq!(f.read_at(&mut buf, 0).expect("read"), 8);
        assert_eq!(&buf[..8], b"\0\0\0hello");
        f.set_len(4).expect("truncate");
        assert_eq!(f.len().expect("len"), 4);
        f.sync().expect("sync");
        vfs.sync_dir(dir.path()).expect("sync dir");
        let to = dir.path().join("g");
        vfs.rename(&path, &to).expect("rename");
        vfs.remove(&to).expect("remove");
        assert!(!vfs.exists(&to));
    }
}
