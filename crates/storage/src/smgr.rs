//! The storage manager: relations as arrays of 8 KiB blocks in files.
//!
//! Relation `rel` keeps its main fork in `<data_dir>/base/<rel>`; block `b` lives at byte
//! `b * BLCKSZ`. Other forks (free space, visibility map) arrive with their issues and will
//! be named `<rel>_fsm`, `<rel>_vm` as in PostgreSQL.
//!
//! Interface: [`Smgr::create`], [`Smgr::unlink`], [`Smgr::exists`], [`Smgr::nblocks`],
//! [`Smgr::extend`], [`Smgr::read_block`], [`Smgr::write_block`], [`Smgr::sync`],
//! [`Smgr::sync_all`], [`Smgr::forget`].
//!
//! Invariants (README "smgr rules"):
//! - A relation's size is asked of the file system once, when it is first opened, and is
//!   then kept in memory and moved only by [`Smgr::extend`]: no query pays an `lseek` or
//!   `stat` to learn a size (lessons L1, L4). Existence is cached the same way, absent
//!   relations included. [`Smgr::forget`] drops both, for DDL.
//! - A trailing partial block (a crash in the middle of an extend) is not counted; the next
//!   extend overwrites it.
//! - `read_block` / `write_block` only touch blocks below the cached size.
//!
//! Locking: the map of open relations is one `parking_lot::RwLock`, taken shared to find an
//! open relation and exclusively to open or forget one. Each relation's size is an atomic,
//! read without locking; an extend holds the relation's extend mutex across its write so
//! concurrent extends get distinct blocks. Nothing
//! here is on the buffer pool's hit path: smgr is reached on misses, write-backs and
//! extends.
//!
//! Crash safety: writes reach the disk at `sync`. File creation and removal are made
//! durable by syncing `base/` in [`Smgr::sync_all`] (once, however many relations were
//! created), not per create, so that creating 10,000 partitions does not cost 10,000 directory
//! fsyncs. Until WAL exists, a crash between a create and the next `sync_all` may lose the
//! file.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use common::ids::BlockNumber;
use common::limits::BLCKSZ;
use common::{PgError, PgResult, RelId, SqlState};
use parking_lot::{Mutex, RwLock};

use crate::vfs::{Vfs, VfsFile};

/// Most relation files kept open at once. Not enforced yet: the bounded LRU fd cache (with
/// hit/miss counters) is a later issue and will evict from [`Smgr`]'s `open` map when it
/// holds more than this. 1000 is PostgreSQL's `max_files_per_process`; lesson L2 is that
/// more relations than this must not thrash `open()`, which is what the LRU is for.
pub const MAX_OPEN_RELATION_FILES: usize = 1000;

/// Largest number of blocks in one relation fork: block numbers are `u32` and
/// `u32::MAX` is PostgreSQL's `InvalidBlockNumber`.
pub const MAX_BLOCKS_PER_RELATION: BlockNumber = BlockNumber::MAX - 1;

/// SQLSTATE for creating a file that already exists (PostgreSQL's `duplicate_file`).
const DUPLICATE_FILE: SqlState = SqlState("58P02");

/// The name of a relation's main fork relative to the data directory, as error messages
/// show it (`base/16384`).
pub fn relpath(rel: RelId) -> String {
    format!("base/{rel}")
}

/// An open relation: its file and its size in blocks.
struct SmgrRelation {
    file: Arc<dyn VfsFile>,
    /// Cached size. Read without locking; written only under `extend_lock`, after the new
    /// block's zeros are written, so a reader never sees a block that is not on disk.
    nblocks: AtomicU32,
    /// Serialises extends, so concurrent extends get distinct blocks.
    extend_lock: Mutex<()>,
    /// Written since its last sync: `sync_all` syncs only these (smgr rule 5).
    needs_sync: AtomicBool,
}

impl SmgrRelation {
    fn new(file: Arc<dyn VfsFile>, nblocks: BlockNumber) -> SmgrRelation {
        SmgrRelation {
            file,
            nblocks: AtomicU32::new(nblocks),
            extend_lock: Mutex::new(()),
            needs_sync: AtomicBool::new(false),
        }
    }

    fn nblocks(&self) -> BlockNumber {
        self.nblocks.load(Ordering::Acquire)
    }
}

/// The storage manager: see the module header.
pub struct Smgr {
    vfs: Arc<dyn Vfs>,
    base_dir: PathBuf,
    /// Open relations. The LRU fd cache (MAX_OPEN_RELATION_FILES) will bound this map.
    open: RwLock<HashMap<RelId, Arc<SmgrRelation>>>,
    /// Relations known not to exist, so repeated `exists` probes cost no syscall (L4).
    absent: RwLock<HashSet<RelId>>,
    /// A file was created or removed in `base/` since the last directory sync.
    base_dir_dirty: AtomicBool,
}

impl Smgr {
    /// Open the storage under `data_dir`, creating `data_dir/base` if missing.
    pub fn new(vfs: Arc<dyn Vfs>, data_dir: &Path) -> PgResult<Smgr> {
        let base_dir = data_dir.join("base");
        vfs.create_dir_all(&base_dir).map_err(|e| {
            PgError::io(
                format!("could not create directory \"{}\"", base_dir.display()),
                e,
            )
        })?;
        Ok(Smgr {
            vfs,
            base_dir,
            open: RwLock::new(HashMap::new()),
            absent: RwLock::new(HashSet::new()),
            base_dir_dirty: AtomicBool::new(false),
        })
    }

    fn path(&self, rel: RelId) -> PathBuf {
        self.base_dir.join(rel.to_string())
    }

    /// Create relation `rel`'s file, empty. Error if it already exists (a relation id
    /// reused without dropping the old storage is a bug worth hearing about).
    pub fn create(&self, rel: RelId) -> PgResult<()> {
        let path = self.path(rel);
        if self.exists(rel) {
            return Err(PgError::new(
                DUPLICATE_FILE,
                format!("could not create file \"{}\": File exists", relpath(rel)),
            ));
        }
        let file = self
            .vfs
            .open(&path, true)
            .map_err(|e| PgError::io(format!("could not create file \"{}\"", relpath(rel)), e))?;
        self.base_dir_dirty.store(true, Ordering::Release);
        self.absent.write().remove(&rel);
        self.open
            .write()
            .insert(rel, Arc::new(SmgrRelation::new(file, 0)));
        Ok(())
    }

    /// Remove relation `rel`'s file. Removing a file that is already gone is not an error
    /// (a DROP replayed after a crash). The caller has dropped its buffers first
    /// (`BufferPool::drop_relation`), or a later write-back would recreate nothing but fail.
    pub fn unlink(&self, rel: RelId) -> PgResult<()> {
        self.open.write().remove(&rel);
        match self.vfs.remove(&self.path(rel)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(PgError::io(
                    format!("could not remove file \"{}\"", relpath(rel)),
                    e,
                ));
            }
        }
        self.base_dir_dirty.store(true, Ordering::Release);
        self.absent.write().insert(rel);
        Ok(())
    }

    /// Does relation `rel` have storage? Asks the file system at most once per relation
    /// until [`forget`](Self::forget).
    pub fn exists(&self, rel: RelId) -> bool {
        if self.open.read().contains_key(&rel) {
            return true;
        }
        if self.absent.read().contains(&rel) {
            return false;
        }
        // One `open`: success caches the file (and its size); failure caches absence.
        match self.relation(rel) {
            Ok(_) => true,
            Err(_) => {
                self.absent.write().insert(rel);
                false
            }
        }
    }

    /// Drop everything cached about `rel` (open file, size, existence), so that the next
    /// call asks the file system again. Called when DDL changes a relation's storage.
    pub fn forget(&self, rel: RelId) {
        self.open.write().remove(&rel);
        self.absent.write().remove(&rel);
    }

    /// The open relation, opening it (and reading its size, once) if needed.
    fn relation(&self, rel: RelId) -> PgResult<Arc<SmgrRelation>> {
        if let Some(r) = self.open.read().get(&rel) {
            return Ok(Arc::clone(r));
        }
        let mut open = self.open.write();
        if let Some(r) = open.get(&rel) {
            return Ok(Arc::clone(r));
        }
        let file = self
            .vfs
            .open(&self.path(rel), false)
            .map_err(|e| PgError::io(format!("could not open file \"{}\"", relpath(rel)), e))?;
        let len = file.len().map_err(|e| {
            PgError::io(
                format!("could not seek to end of file \"{}\"", relpath(rel)),
                e,
            )
        })?;
        // A trailing partial block is a crash mid-extend: not counted, overwritten by the
        // next extend.
        let blocks = len / BLCKSZ as u64;
        let nblocks = BlockNumber::try_from(blocks)
            .ok()
            .filter(|n| *n <= MAX_BLOCKS_PER_RELATION)
            .ok_or_else(|| {
                PgError::new(
                    SqlState::DATA_CORRUPTED,
                    format!("file \"{}\" is too large: {len} bytes", relpath(rel)),
                )
            })?;
        let r = Arc::new(SmgrRelation::new(file, nblocks));
        open.insert(rel, Arc::clone(&r));
        Ok(r)
    }

    /// Number of blocks in `rel`. No syscall after the relation's first use.
    pub fn nblocks(&self, rel: RelId) -> PgResult<BlockNumber> {
        Ok(self.relation(rel)?.nblocks())
    }

    /// Append one zeroed block to `rel`; returns its number. The zeroed block is a valid
    /// "new" page (see `page::is_new`), so a crash right after leaves a readable file.
    pub fn extend(&self, rel: RelId) -> PgResult<BlockNumber> {
        let r = self.relation(rel)?;
        let _extending = r.extend_lock.lock();
        let block = r.nblocks();
        if block >= MAX_BLOCKS_PER_RELATION {
            return Err(PgError::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                format!(
                    "cannot extend file \"{}\" beyond {MAX_BLOCKS_PER_RELATION} blocks",
                    relpath(rel)
                ),
            ));
        }
        static ZEROES: [u8; BLCKSZ] = [0; BLCKSZ];
        r.file
            .write_all_at(&ZEROES, block as u64 * BLCKSZ as u64)
            .map_err(|e| PgError::io(format!("could not extend file \"{}\"", relpath(rel)), e))?;
        r.needs_sync.store(true, Ordering::Release);
        r.nblocks.store(block + 1, Ordering::Release);
        Ok(block)
    }

    /// Read block `block` of `rel` into `buf`. The block must exist.
    pub fn read_block(
        &self,
        rel: RelId,
        block: BlockNumber,
        buf: &mut [u8; BLCKSZ],
    ) -> PgResult<()> {
        let r = self.relation(rel)?;
        let nblocks = r.nblocks();
        if block >= nblocks {
            return Err(PgError::new(
                SqlState::DATA_CORRUPTED,
                format!(
                    "could not read block {block} in file \"{}\": block is beyond the end of the file ({nblocks} blocks)",
                    relpath(rel)
                ),
            ));
        }
        let n = r
            .file
            .read_at(buf, block as u64 * BLCKSZ as u64)
            .map_err(|e| {
                PgError::io(
                    format!("could not read block {block} in file \"{}\"", relpath(rel)),
                    e,
                )
            })?;
        if n != BLCKSZ {
            return Err(PgError::new(
                SqlState::DATA_CORRUPTED,
                format!(
                    "could not read block {block} in file \"{}\": read only {n} of {BLCKSZ} bytes",
                    relpath(rel)
                ),
            ));
        }
        Ok(())
    }

    /// Write `buf` as block `block` of `rel`. The block must exist (use [`extend`] to add
    /// one). Durable after [`sync`](Self::sync).
    ///
    /// [`extend`]: Self::extend
    pub fn write_block(&self, rel: RelId, block: BlockNumber, buf: &[u8; BLCKSZ]) -> PgResult<()> {
        let r = self.relation(rel)?;
        let nblocks = r.nblocks();
        if block >= nblocks {
            return Err(PgError::internal(format!(
                "could not write block {block} in file \"{}\": beyond the end of the file ({nblocks} blocks)",
                relpath(rel)
            )));
        }
        r.file
            .write_all_at(buf, block as u64 * BLCKSZ as u64)
            .map_err(|e| {
                PgError::io(
                    format!("could not write block {block} in file \"{}\"", relpath(rel)),
                    e,
                )
            })?;
        // Set after the write: a concurrent `sync_all` clears it before its fsync.
        r.needs_sync.store(true, Ordering::Release);
        Ok(())
    }

    /// Make every write to `rel` so far durable.
    pub fn sync(&self, rel: RelId) -> PgResult<()> {
        let r = self.relation(rel)?;
        r.file
            .sync()
            .map_err(|e| PgError::io(format!("could not fsync file \"{}\"", relpath(rel)), e))
    }

    /// Make every write to every relation durable, and creations and removals of
    /// relation files too. Only relations written since their last sync are synced
    /// (smgr rule 5), so a checkpoint costs O(relations written), not O(relations).
    pub fn sync_all(&self) -> PgResult<()> {
        let written: Vec<(RelId, Arc<SmgrRelation>)> = self
            .open
            .read()
            .iter()
            .filter(|(_, r)| r.needs_sync.load(Ordering::Acquire))
            .map(|(rel, r)| (*rel, Arc::clone(r)))
            .collect();
        for (rel, r) in written {
            // Cleared before the sync: a write racing with it sets the flag again.
            r.needs_sync.store(false, Ordering::Release);
            if let Err(e) = r.file.sync() {
                r.needs_sync.store(true, Ordering::Release);
                return Err(PgError::io(
                    format!("could not fsync file \"{}\"", relpath(rel)),
                    e,
                ));
            }
        }
        if self.base_dir_dirty.swap(false, Ordering::AcqRel)
            && let Err(e) = self.vfs.sync_dir(&self.base_dir)
        {
            self.base_dir_dirty.store(true, Ordering::Release);
            return Err(PgError::io(
                format!("could not fsync directory \"{}\"", self.base_dir.display()),
                e,
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::vfs::OsVfs;
    use std::sync::atomic::AtomicUsize;

    /// A [`Vfs`] over the OS that counts `len` calls, to prove sizes are cached.
    #[derive(Default)]
    pub(crate) struct CountingVfs {
        pub(crate) len_calls: Arc<AtomicUsize>,
        pub(crate) exists_calls: AtomicUsize,
    }

    struct CountingFile {
        inner: Arc<dyn VfsFile>,
        len_calls: Arc<AtomicUsize>,
    }

    impl VfsFile for CountingFile {
        fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
            self.inner.read_at(buf, offset)
        }
        fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
            self.inner.write_all_at(buf, offset)
        }
        fn sync(&self) -> io::Result<()> {
            self.inner.sync()
        }
        fn len(&self) -> io::Result<u64> {
            self.len_calls.fetch_add(1, Ordering::SeqCst);
            self.inner.len()
        }
        fn set_len(&self, len: u64) -> io::Result<()> {
            self.inner.set_len(len)
        }
    }

    impl Vfs for CountingVfs {
        fn open(&self, path: &Path, create: bool) -> io::Result<Arc<dyn VfsFile>> {
            Ok(Arc::new(CountingFile {
                inner: OsVfs.open(path, create)?,
                len_calls: Arc::clone(&self.len_calls),
            }))
        }
        fn remove(&self, path: &Path) -> io::Result<()> {
            OsVfs.remove(path)
        }
        fn exists(&self, path: &Path) -> bool {
            self.exists_calls.fetch_add(1, Ordering::SeqCst);
            OsVfs.exists(path)
        }
        fn create_dir_all(&self, path: &Path) -> io::Result<()> {
            OsVfs.create_dir_all(path)
        }
        fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
            OsVfs.rename(from, to)
        }
        fn sync_dir(&self, path: &Path) -> io::Result<()> {
            OsVfs.sync_dir(path)
        }
        fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
            OsVfs.list_dir(path)
        }
    }

    #[test]
    fn nblocks_is_cached_after_first_look() {
        let dir = tempfile::tempdir().expect("tempdir");
        let vfs = Arc::new(CountingVfs::default());
        let smgr = Smgr::new(vfs.clone(), dir.path()).expect("smgr");
        smgr.create(16384).expect("create");
        for _ in 0..3 {
            smgr.extend(16384).expect("extend");
        }
        drop(smgr);

        // A fresh smgr over the same files: exactly one len() however often we ask.
        let smgr = Smgr::new(vfs.clone(), dir.path()).expect("smgr");
        let before = vfs.len_calls.load(Ordering::SeqCst);
        for _ in 0..100 {
            assert_eq!(smgr.nblocks(16384).expect("nblocks"), 3);
        }
        assert_eq!(smgr.extend(16384).expect("extend"), 3);
        assert_eq!(smgr.nblocks(16384).expect("nblocks"), 4);
        assert_eq!(vfs.len_calls.load(Ordering::SeqCst) - before, 1);

        smgr.forget(16384);
        assert_eq!(smgr.nblocks(16384).expect("nblocks"), 4);
        assert_eq!(vfs.len_calls.load(Ordering::SeqCst) - before, 2);
    }

    #[test]
    fn exists_is_cached_both_ways() {
        let dir = tempfile::tempdir().expect("tempdir");
        let vfs = Arc::new(CountingVfs::default());
        let smgr = Smgr::new(vfs.clone(), dir.path()).expect("smgr");
        for _ in 0..10 {
            assert!(!smgr.exists(7));
        }
        smgr.create(7).expect("create");
        for _ in 0..10 {
            assert!(smgr.exists(7));
        }
        smgr.unlink(7).expect("unlink");
        for _ in 0..10 {
            assert!(!smgr.exists(7));
        }
        assert_eq!(vfs.exists_calls.load(Ordering::SeqCst), 0);
        assert!(smgr.nblocks(7).is_err());
    }

    #[test]
    fn blocks_round_trip_and_bounds() {
        let dir = tempfile::tempdir().expect("tempdir");
        let smgr = Smgr::new(Arc::new(OsVfs), dir.path()).expect("smgr");
        smgr.create(1).expect("create");
        assert_eq!(smgr.create(1).expect_err("duplicate").code, DUPLICATE_FILE);
        assert_eq!(smgr.nblocks(1).expect("nblocks"), 0);
        assert_eq!(smgr.extend(1).expect("extend"), 0);
        assert_eq!(smgr.extend(1).expect("extend"), 1);
        let mut page = [7u8; BLCKSZ];
        smgr.write_block(1, 1, &page).expect("write");
        let mut buf = [0u8; BLCKSZ];
        smgr.read_block(1, 0, &mut buf).expect("read");
        assert!(buf.iter().all(|b| *b == 0));
        smgr.read_block(1, 1, &mut buf).expect("read");
        assert_eq!(buf, page);
        let e = smgr.read_block(1, 2, &mut buf).expect_err("beyond end");
        assert_eq!(e.code, SqlState::DATA_CORRUPTED);
        assert!(e.message.contains("base/1"), "{}", e.message);
        page[0] = 1;
        assert!(smgr.write_block(1, 2, &page).is_err());
        smgr.sync(1).expect("sync");
        smgr.sync_all().expect("sync all");
        smgr.unlink(1).expect("unlink");
        smgr.unlink(1).expect("unlink twice is fine");
        assert!(!dir.path().join("base/1").exists());
    }

    #[test]
    fn partial_trailing_block_is_not_counted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let smgr = Smgr::new(Arc::new(OsVfs), dir.path()).expect("smgr");
        smgr.create(5).expect("create");
        smgr.extend(5).expect("extend");
        drop(smgr);
        let f = OsVfs.open(&dir.path().join("base/5"), false).expect("open");
        f.set_len(BLCKSZ as u64 + 100).expect("set_len");
        let smgr = Smgr::new(Arc::new(OsVfs), dir.path()).expect("smgr");
        assert_eq!(smgr.nblocks(5).expect("nblocks"), 1);
        assert_eq!(smgr.extend(5).expect("extend"), 1);
        assert_eq!(f.len().expect("len"), 2 * BLCKSZ as u64);
    }
}
