//! The storage manager: relations as arrays of 8 KiB blocks in files.
//!
//! Relation `rel` keeps its main fork in `<data_dir>/base/<rel>`; block `b` lives at byte
//! `b * BLCKSZ`. Its other forks are relations of their own here (`common::ids::fork`),
//! named `<rel>_fsm` and `<rel>_vm` as in PostgreSQL.
//!
//! Interface: [`Smgr::create`], [`Smgr::unlink`], [`Smgr::exists`], [`Smgr::nblocks`],
//! [`Smgr::extend`], [`Smgr::truncate`], [`Smgr::read_block`], [`Smgr::write_block`],
//! [`Smgr::sync`],
//! [`Smgr::sync_all`], [`Smgr::forget`]; [`Smgr::fd_stats`] for the open-file cache.
//!
//! Invariants (README "smgr rules"):
//! - A relation's size is asked of the file system once, when it is first opened, and is
//!   then kept in memory and moved only by [`Smgr::extend`]: no query pays an `lseek` or
//!   `stat` to learn a size (lessons L1, L4). Existence is cached the same way, absent
//!   relations included. [`Smgr::forget`] drops both, for DDL.
//! - A trailing partial block (a crash in the middle of an extend) is not counted; the next
//!   extend overwrites it.
//! - `read_block` / `write_block` only touch blocks below the cached size.
//! - At most `max_open_files` relation files are open at once (smgr rule 6, PostgreSQL's
//!   `fd.c` "virtual file descriptors"): every known relation keeps its entry (size,
//!   existence, `needs_sync`, extend lock) in memory, but only the most recently used ones
//!   hold a file. Using a relation whose file was closed reopens it (a miss), closing the
//!   least recently used other file (an eviction, second-chance clock: an approximation of
//!   LRU). A file with writes not yet synced is fsync'd before it is closed, so a closed
//!   file never owes a sync: `needs_sync` implies open.
//!
//! Locking, outermost first: a relation's `extend_lock` → `open_files` (the fd cache's
//! mutex: opening, evicting, creating, removing, forgetting) → `rels` (the map of known
//! relations, a `parking_lot::RwLock`) → a relation's `file` slot (a `RwLock`). The hit path
//! takes only `rels` shared and the relation's `file` shared, sets the relation's
//! `referenced` bit if it is clear and counts the hit in a per-thread counter shard: no
//! global write, no syscall. The file's read guard is held across the one `pread` /
//! `pwrite` / `fsync` it serves and nothing is waited for while holding it, so an evictor
//! (which needs the write side) never closes a file under an I/O and no handle outlives
//! the cache's bound. Each relation's size is an atomic, read without locking; an extend
//! holds the relation's extend mutex across its write so concurrent extends get distinct
//! blocks. Nothing here is on the buffer pool's hit path: smgr is reached on misses,
//! write-backs and extends.
//!
//! Crash safety: writes reach the disk at `sync`, `sync_all`, or when the fd cache closes
//! their file (rule 6). File creation and removal are made durable by syncing `base/` in
//! [`Smgr::sync_all`] (once, however many relations were created), not per create, so that
//! creating 10,000 partitions does not cost 10,000 directory fsyncs. Until WAL exists, a
//! crash between a create and the next `sync_all` may lose the file.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use common::ids::BlockNumber;
use common::limits::BLCKSZ;
use common::{PgError, PgResult, RelId, SqlState};
use parking_lot::{MappedRwLockReadGuard, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::vfs::{Vfs, VfsFile};

/// Relation files kept open when the process's open-file limit cannot be read (no
/// `/proc`): PostgreSQL's default `max_files_per_process`.
pub const DEFAULT_MAX_OPEN_RELATION_FILES: usize = 1000;

/// File descriptors left, below `RLIMIT_NOFILE`, for everything that is not a relation
/// file: WAL segments, the catalog log, `pg_control`, directory syncs, stdio, and client
/// sockets. PostgreSQL keeps 10 (`NUM_RESERVED_FDS`) per backend process, but Myriad's
/// sessions share one process, so the sockets come out of the same limit: a server that
/// expects more than a few dozen connections should pass its own limit to
/// [`Smgr::with_max_open_files`] (or raise `ulimit -n`).
pub const RESERVED_FDS: usize = 64;

/// The fd cache keeps at least this many relation files open however low the limit: a
/// B-tree descent and its heap fetches touch a few relations at once, and fewer slots than
/// that would turn every access into a miss.
pub const MIN_OPEN_RELATION_FILES: usize = 16;

/// Clock positions an evictor looks past a dirty candidate for a clean one before it
/// settles for syncing the dirty one (smgr rule 6). Bounds the extra work per miss when
/// most open files are dirty.
const CLEAN_VICTIM_SEARCH: usize = 32;

/// Shards of the hit counter, each on its own cache line, so concurrent hits from
/// different threads do not bounce one line between cores.
const HIT_COUNTER_SHARDS: usize = 16;

/// Largest number of blocks in one relation fork: block numbers are `u32` and
/// `u32::MAX` is PostgreSQL's `InvalidBlockNumber`.
pub const MAX_BLOCKS_PER_RELATION: BlockNumber = BlockNumber::MAX - 1;

/// SQLSTATE for creating a file that already exists (PostgreSQL's `duplicate_file`).
const DUPLICATE_FILE: SqlState = SqlState("58P02");

/// The name of a relation fork's file relative to the data directory, as error messages
/// show it (`base/16384`, `base/16384_vm`).
pub fn relpath(rel: RelId) -> String {
    format!("base/{}", file_name(rel))
}

/// A fork's file name in `base`.
fn file_name(id: RelId) -> String {
    use common::ids::Fork;
    match common::ids::fork_of(id) {
        (rel, Fork::Main) => rel.to_string(),
        (rel, Fork::FreeSpace) => format!("{rel}_fsm"),
        (rel, Fork::Visibility) => format!("{rel}_vm"),
    }
}

/// How many relation files to keep open by default: the process's soft `RLIMIT_NOFILE`
/// less [`RESERVED_FDS`], at least [`MIN_OPEN_RELATION_FILES`]; PostgreSQL's 1000 when the
/// limit cannot be read. Read from `/proc/self/limits` (process state, not data, so not
/// through [`Vfs`]; storage has no `libc` dependency for `getrlimit`).
pub fn max_open_files_from_rlimit() -> usize {
    std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|limits| nofile_soft_limit(&limits))
        .map_or(DEFAULT_MAX_OPEN_RELATION_FILES, open_files_for_limit)
}

/// The soft "Max open files" limit from the text of `/proc/<pid>/limits`.
fn nofile_soft_limit(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    let soft = line["Max open files".len()..].split_whitespace().next()?;
    if soft == "unlimited" {
        Some(u64::MAX)
    } else {
        soft.parse().ok()
    }
}

/// Relation files to keep open under a descriptor limit of `limit`.
fn open_files_for_limit(limit: u64) -> usize {
    usize::try_from(limit)
        .unwrap_or(usize::MAX)
        .saturating_sub(RESERVED_FDS)
        .max(MIN_OPEN_RELATION_FILES)
}

/// The open-file cache's counters ([`Smgr::fd_stats`]), cumulative since the [`Smgr`] was
/// made except `open_files`. A file use is one `read_block`, `write_block`, `extend` or
/// `sync`; `nblocks` and `exists` need no file and are not counted. The hit ratio is
/// `hits / (hits + misses)`; `evictions` close to `misses` means the working set of
/// relations is larger than `max_open_files`, and `eviction_syncs` says how many of those
/// evictions paid an fsync (smgr rule 6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FdStats {
    /// File uses that found the relation's file open: no syscall beyond the I/O itself.
    pub hits: u64,
    /// Relation files opened: a file use that found its file closed, the first use of a
    /// relation (which also reads its size), or a `create`. Equals the `Vfs::open` calls
    /// smgr has made for relation files.
    pub misses: u64,
    /// Files closed to make room for another (not counting `unlink` and `forget`).
    pub evictions: u64,
    /// Evictions that had to fsync the file first because it had unsynced writes.
    pub eviction_syncs: u64,
    /// Relation files open now; never more than `max_open_files`.
    pub open_files: usize,
    /// Questions put to the file system about a relation file: every `Vfs::open`
    /// (found or not: whether a fork exists is one) and every size read. Smgr rule 1
    /// keeps this to once per relation until DDL forgets it.
    pub probes: u64,
    /// The bound on open relation files.
    pub max_open_files: usize,
}

/// A known relation: its size, its sync obligation, and its file while the fd cache holds
/// it open. Kept for every relation used since start (about 100 bytes with its map slot).
struct SmgrRelation {
    rel: RelId,
    /// The open file, or `None` while the fd cache has it closed. Read-locked across each
    /// I/O through it; set only under `Smgr::open_files`, and `Some` exactly while the
    /// relation is in that ring.
    file: RwLock<Option<Arc<dyn VfsFile>>>,
    /// Cached size. Read without locking; written only under `extend_lock`, after the new
    /// block's zeros are written, so a reader never sees a block that is not on disk.
    nblocks: AtomicU32,
    /// Serialises extends, so concurrent extends get distinct blocks.
    extend_lock: Mutex<()>,
    /// Written since its last sync: `sync_all` syncs only these (smgr rule 5). Set only
    /// while holding `file` open for the write, so it implies the file is open (rule 6).
    needs_sync: AtomicBool,
    /// Used since the clock hand last passed (second-chance bit, smgr rule 6).
    referenced: AtomicBool,
    /// Index in the ring of open files while open; read and written only under
    /// `Smgr::open_files`.
    slot: AtomicUsize,
}

impl SmgrRelation {
    fn new(rel: RelId, nblocks: BlockNumber) -> SmgrRelation {
        SmgrRelation {
            rel,
            file: RwLock::new(None),
            nblocks: AtomicU32::new(nblocks),
            extend_lock: Mutex::new(()),
            needs_sync: AtomicBool::new(false),
            referenced: AtomicBool::new(false),
            slot: AtomicUsize::new(usize::MAX),
        }
    }

    fn nblocks(&self) -> BlockNumber {
        self.nblocks.load(Ordering::Acquire)
    }
}

/// The open relation files: a ring swept by a clock hand.
#[derive(Default)]
struct OpenFiles {
    ring: Vec<Arc<SmgrRelation>>,
    hand: usize,
}

/// A counter on its own cache line.
#[derive(Default)]
#[repr(align(128))]
struct PaddedCounter(AtomicU64);

/// This thread's hit-counter shard, assigned round robin at its first hit.
fn hit_shard() -> usize {
    static NEXT_SHARD: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SHARD: usize = NEXT_SHARD.fetch_add(1, Ordering::Relaxed) % HIT_COUNTER_SHARDS;
    }
    SHARD.with(|s| *s)
}

/// What [`Smgr::load`] found.
enum Loaded {
    Found(Arc<SmgrRelation>),
    /// No such file; the error says so, for callers that need one.
    NotFound(PgError),
}

fn open_error(rel: RelId, e: io::Error) -> PgError {
    PgError::io(format!("could not open file \"{}\"", relpath(rel)), e)
}

/// A relation's open file, read-locked for one I/O.
type FileGuard<'a> = MappedRwLockReadGuard<'a, dyn VfsFile>;

fn file_guard(g: RwLockReadGuard<'_, Option<Arc<dyn VfsFile>>>) -> Option<FileGuard<'_>> {
    RwLockReadGuard::try_map(g, |f| f.as_deref()).ok()
}

/// The storage manager: see the module header.
pub struct Smgr {
    vfs: Arc<dyn Vfs>,
    base_dir: PathBuf,
    /// Every relation known to exist, open file or not. Changed only under `open_files`.
    rels: RwLock<HashMap<RelId, Arc<SmgrRelation>>>,
    /// Relations known not to exist, so repeated `exists` probes cost no syscall (L4).
    absent: RwLock<HashSet<RelId>>,
    /// A file was created or removed in `base/` since the last directory sync.
    base_dir_dirty: AtomicBool,
    /// Some fsync of a relation file or of `base/` failed (smgr rule 7).
    fsync_failed: AtomicBool,
    /// The fd cache's slow path: the ring of open files and its clock hand.
    open_files: Mutex<OpenFiles>,
    max_open_files: usize,
    hits: [PaddedCounter; HIT_COUNTER_SHARDS],
    misses: AtomicU64,
    /// [`FdStats::probes`].
    probes: AtomicU64,
    evictions: AtomicU64,
    eviction_syncs: AtomicU64,
    /// `open_files.ring.len()`, readable without the mutex.
    open_count: AtomicUsize,
    /// Temporary files, in `base/pgsql_tmp` (temp rule 1).
    temp: Arc<crate::tempfile::TempSpace>,
}

impl Smgr {
    /// Open the storage under `data_dir`, creating `data_dir/base` if missing, keeping at
    /// most [`max_open_files_from_rlimit`] relation files open.
    pub fn new(vfs: Arc<dyn Vfs>, data_dir: &Path) -> PgResult<Smgr> {
        Smgr::with_max_open_files(vfs, data_dir, max_open_files_from_rlimit())
    }

    /// [`Smgr::new`] keeping at most `max_open_files` (at least 1) relation files open.
    pub fn with_max_open_files(
        vfs: Arc<dyn Vfs>,
        data_dir: &Path,
        max_open_files: usize,
    ) -> PgResult<Smgr> {
        assert!(max_open_files >= 1, "the fd cache needs at least one slot");
        let base_dir = data_dir.join("base");
        vfs.create_dir_all(&base_dir).map_err(|e| {
            PgError::io(
                format!("could not create directory \"{}\"", base_dir.display()),
                e,
            )
        })?;
        let temp = Arc::new(crate::tempfile::TempSpace::open(vfs.clone(), &base_dir)?);
        Ok(Smgr {
            temp,
            vfs,
            base_dir,
            rels: RwLock::new(HashMap::new()),
            absent: RwLock::new(HashSet::new()),
            // A previous run may have created files without syncing the directory (it
            // crashed, or stopped between its last create and a sync): the first sync_all
            // makes their entries durable before a checkpoint moves past their creation.
            base_dir_dirty: AtomicBool::new(true),
            fsync_failed: AtomicBool::new(false),
            open_files: Mutex::new(OpenFiles::default()),
            max_open_files,
            hits: Default::default(),
            misses: AtomicU64::new(0),
            probes: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            eviction_syncs: AtomicU64::new(0),
            open_count: AtomicUsize::new(0),
        })
    }

    /// The server's temporary file space.
    pub fn temp(&self) -> &Arc<crate::tempfile::TempSpace> {
        &self.temp
    }

    /// The bound on open relation files.
    pub fn max_open_files(&self) -> usize {
        self.max_open_files
    }

    /// The open-file cache's counters (see [`FdStats`]). Takes no lock.
    pub fn fd_stats(&self) -> FdStats {
        FdStats {
            hits: self.hits.iter().map(|c| c.0.load(Ordering::Relaxed)).sum(),
            misses: self.misses.load(Ordering::Relaxed),
            probes: self.probes.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
            eviction_syncs: self.eviction_syncs.load(Ordering::Relaxed),
            open_files: self.open_count.load(Ordering::Relaxed),
            max_open_files: self.max_open_files,
        }
    }

    fn path(&self, rel: RelId) -> PathBuf {
        self.base_dir.join(file_name(rel))
    }

    /// Create relation `rel`'s file, empty. Error if it already exists (a relation id
    /// reused without dropping the old storage is a bug worth hearing about).
    pub fn create(&self, rel: RelId) -> PgResult<()> {
        let duplicate = || {
            PgError::new(
                DUPLICATE_FILE,
                format!("could not create file \"{}\": File exists", relpath(rel)),
            )
        };
        if self.exists(rel) {
            return Err(duplicate());
        }
        let mut open = self.open_files.lock();
        if self.rels.read().contains_key(&rel) {
            return Err(duplicate());
        }
        self.make_room(&mut open)?;
        let file = self
            .vfs
            .open(&self.path(rel), true)
            .map_err(|e| PgError::io(format!("could not create file \"{}\"", relpath(rel)), e))?;
        self.misses.fetch_add(1, Ordering::Relaxed);
        self.base_dir_dirty.store(true, Ordering::Release);
        self.absent.write().remove(&rel);
        let r = Arc::new(SmgrRelation::new(rel, 0));
        *r.file.write() = Some(file);
        self.install(&mut open, &r);
        self.rels.write().insert(rel, r);
        Ok(())
    }

    /// Remove relation `rel`'s file. Removing a file that is already gone is not an error
    /// (a DROP replayed after a crash). The caller has dropped its buffers first
    /// (`BufferPool::drop_relation`), or a later write-back would recreate nothing but fail.
    /// Unsynced writes to the file are discarded with it, not synced.
    pub fn unlink(&self, rel: RelId) -> PgResult<()> {
        {
            let mut open = self.open_files.lock();
            let removed = self.rels.write().remove(&rel);
            if let Some(r) = removed {
                let mut file = r.file.write();
                if file.take().is_some() {
                    self.remove_from_ring(&mut open, &r);
                }
                r.needs_sync.store(false, Ordering::Release);
            }
        }
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
    /// until [`forget`](Self::forget), whether or not its file is open now.
    pub fn exists(&self, rel: RelId) -> bool {
        if self.rels.read().contains_key(&rel) {
            return true;
        }
        if self.absent.read().contains(&rel) {
            return false;
        }
        // One `open`: success caches the file (and its size); "no such file" caches absence.
        match self.load(rel) {
            Ok(Loaded::Found(_)) => true,
            Ok(Loaded::NotFound(_)) => {
                self.absent.write().insert(rel);
                false
            }
            // Not an answer about `rel` (an eviction's fsync failed, say): nothing cached,
            // so the next call asks again.
            Err(e) => {
                tracing::warn!(file = %relpath(rel), error = %e.message, "could not check whether file exists");
                false
            }
        }
    }

    /// Drop everything cached about `rel` (open file, size, existence), so that the next
    /// call asks the file system again. Called when DDL changes a relation's storage.
    ///
    /// An open file with unsynced writes is fsync'd before it is closed (smgr rule 6). If
    /// that fsync fails, the failure is logged (this call cannot return it) and `rel` stays
    /// cached, open and flagged, so the obligation is not dropped: the next
    /// [`sync_all`](Self::sync_all) syncs it again.
    pub fn forget(&self, rel: RelId) {
        let mut open = self.open_files.lock();
        let cached = self.rels.read().get(&rel).cloned();
        if let Some(r) = cached {
            let mut file = r.file.write();
            if let Some(f) = file.as_ref()
                && r.needs_sync.load(Ordering::Acquire)
            {
                if let Err(e) = f.sync() {
                    self.fsync_failed.store(true, Ordering::Release);
                    tracing::error!(
                        file = %relpath(rel),
                        error = %e,
                        "could not fsync file before closing it; left open for the next sync"
                    );
                    return;
                }
                r.needs_sync.store(false, Ordering::Release);
            }
            if file.take().is_some() {
                self.remove_from_ring(&mut open, &r);
            }
            drop(file);
            self.rels.write().remove(&rel);
        }
        self.absent.write().remove(&rel);
    }

    /// The cached relation, opening it (and reading its size, once) if it is not known.
    fn relation(&self, rel: RelId) -> PgResult<Arc<SmgrRelation>> {
        match self.load(rel)? {
            Loaded::Found(r) => Ok(r),
            Loaded::NotFound(e) => Err(e),
        }
    }

    /// [`relation`](Self::relation), telling a missing file apart from other failures.
    fn load(&self, rel: RelId) -> PgResult<Loaded> {
        if let Some(r) = self.rels.read().get(&rel) {
            return Ok(Loaded::Found(Arc::clone(r)));
        }
        let mut open = self.open_files.lock();
        if let Some(r) = self.rels.read().get(&rel) {
            return Ok(Loaded::Found(Arc::clone(r)));
        }
        let file = match self.open_file(&mut open, rel)? {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Loaded::NotFound(open_error(rel, e)));
            }
            Err(e) => return Err(open_error(rel, e)),
        };
        self.probes.fetch_add(1, Ordering::Relaxed);
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
        let r = Arc::new(SmgrRelation::new(rel, nblocks));
        *r.file.write() = Some(file);
        self.install(&mut open, &r);
        self.rels.write().insert(rel, Arc::clone(&r));
        Ok(Loaded::Found(r))
    }

    /// `r`'s file, read-locked for one I/O: the fd cache's hit path, or a reopen (smgr
    /// rule 6). `None` if `r` is no longer `rel`'s entry (a concurrent `unlink` or
    /// `forget`): the caller looks `rel` up again. The caller waits for nothing while it
    /// holds the guard.
    fn file<'a>(&self, rel: RelId, r: &'a Arc<SmgrRelation>) -> PgResult<Option<FileGuard<'a>>> {
        if let Some(f) = file_guard(r.file.read()) {
            if !r.referenced.load(Ordering::Relaxed) {
                r.referenced.store(true, Ordering::Relaxed);
            }
            self.hits[hit_shard()].0.fetch_add(1, Ordering::Relaxed);
            return Ok(Some(f));
        }
        let mut open = self.open_files.lock();
        match self.rels.read().get(&rel) {
            Some(current) if Arc::ptr_eq(current, r) => {}
            _ => return Ok(None),
        }
        let mut slot = r.file.write();
        if slot.is_none() {
            *slot = Some(
                self.open_file(&mut open, rel)?
                    .map_err(|e| open_error(rel, e))?,
            );
            self.install(&mut open, r);
        } else {
            // Another thread reopened it while this one waited for the mutex.
            self.hits[hit_shard()].0.fetch_add(1, Ordering::Relaxed);
        }
        drop(open);
        Ok(file_guard(RwLockWriteGuard::downgrade(slot)))
    }

    /// Open `rel`'s existing file, first closing another if the cache is full, so that no
    /// more than `max_open_files` are ever open. Counts a miss. The outer error is the
    /// eviction's, the inner one the `open`'s.
    fn open_file(
        &self,
        open: &mut OpenFiles,
        rel: RelId,
    ) -> PgResult<io::Result<Arc<dyn VfsFile>>> {
        self.make_room(open)?;
        self.probes.fetch_add(1, Ordering::Relaxed);
        let file = self.vfs.open(&self.path(rel), false);
        if file.is_ok() {
            self.misses.fetch_add(1, Ordering::Relaxed);
        }
        Ok(file)
    }

    /// Add `r`, whose file the caller has just set, to the ring of open files.
    fn install(&self, open: &mut OpenFiles, r: &Arc<SmgrRelation>) {
        debug_assert!(open.ring.len() < self.max_open_files);
        r.referenced.store(true, Ordering::Relaxed);
        r.slot.store(open.ring.len(), Ordering::Relaxed);
        open.ring.push(Arc::clone(r));
        self.open_count.store(open.ring.len(), Ordering::Relaxed);
    }

    /// Take `r`, whose file the caller has just closed, out of the ring.
    fn remove_from_ring(&self, open: &mut OpenFiles, r: &SmgrRelation) {
        let i = r.slot.load(Ordering::Relaxed);
        assert!(
            open.ring.get(i).is_some_and(|x| std::ptr::eq(&**x, r)),
            "fd cache: relation {} is not at its ring slot {i}",
            r.rel
        );
        open.ring.swap_remove(i);
        if let Some(moved) = open.ring.get(i) {
            moved.slot.store(i, Ordering::Relaxed);
        }
        r.slot.store(usize::MAX, Ordering::Relaxed);
        if open.hand >= open.ring.len() {
            open.hand = 0;
        }
        self.open_count.store(open.ring.len(), Ordering::Relaxed);
    }

    /// Close files until one more can be opened.
    fn make_room(&self, open: &mut OpenFiles) -> PgResult<()> {
        while open.ring.len() >= self.max_open_files {
            self.evict_one(open)?;
        }
        Ok(())
    }

    /// Close one open file, chosen by a second-chance clock (smgr rule 6): the hand skips
    /// and clears `referenced` bits, skips files with an I/O in flight (their read lock
    /// is held), and prefers a clean file, looking up to [`CLEAN_VICTIM_SEARCH`] positions
    /// past the first dirty candidate. A dirty victim is fsync'd before it is closed; if
    /// that fails it stays open and flagged and the error is returned.
    fn evict_one(&self, open: &mut OpenFiles) -> PgResult<()> {
        let n = open.ring.len();
        let mut dirty: Option<usize> = None;
        // Two turns clear every reference bit once; files busy for both are passed over.
        for _ in 0..2 * n {
            if dirty.is_some_and(|d| (open.hand + n - d) % n > CLEAN_VICTIM_SEARCH) {
                break;
            }
            let i = open.hand;
            open.hand = (i + 1) % n;
            let r = &open.ring[i];
            if r.referenced.load(Ordering::Relaxed) {
                r.referenced.store(false, Ordering::Relaxed);
                continue;
            }
            let Some(mut file) = r.file.try_write() else {
                continue;
            };
            if r.needs_sync.load(Ordering::Acquire) {
                dirty.get_or_insert(i);
                continue;
            }
            file.take();
            drop(file);
            let r = Arc::clone(r);
            self.remove_from_ring(open, &r);
            self.evictions.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        // No clean idle file: sync the dirty candidate, or, if every file was busy, wait
        // for the I/O on the one under the hand (the reader waits for nothing but its I/O).
        let r = Arc::clone(&open.ring[dirty.unwrap_or(open.hand)]);
        let mut file = r.file.write();
        if r.needs_sync.load(Ordering::Acquire) {
            let f = file.as_ref().expect("a file in the ring is open");
            f.sync().map_err(|e| {
                self.fsync_failed.store(true, Ordering::Release);
                PgError::io(format!("could not fsync file \"{}\"", relpath(r.rel)), e)
            })?;
            r.needs_sync.store(false, Ordering::Release);
            self.eviction_syncs.fetch_add(1, Ordering::Relaxed);
        }
        file.take();
        drop(file);
        self.remove_from_ring(open, &r);
        self.evictions.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Run `io` on `rel`'s entry and open file (hit or reopen).
    fn with_file<T>(
        &self,
        rel: RelId,
        io: impl FnOnce(&SmgrRelation, &dyn VfsFile) -> PgResult<T>,
    ) -> PgResult<T> {
        loop {
            let r = self.relation(rel)?;
            if let Some(file) = self.file(rel, &r)? {
                return io(&r, &*file);
            }
        }
    }

    /// Number of blocks in `rel`. No syscall after the relation's first use, and no file:
    /// the size stays cached while the fd cache has the file closed.
    pub fn nblocks(&self, rel: RelId) -> PgResult<BlockNumber> {
        Ok(self.relation(rel)?.nblocks())
    }

    /// Append one zeroed block to `rel`; returns its number. The zeroed block is a valid
    /// "new" page (see `page::is_new`), so a crash right after leaves a readable file.
    pub fn extend(&self, rel: RelId) -> PgResult<BlockNumber> {
        loop {
            let r = self.relation(rel)?;
            let _extending = r.extend_lock.lock();
            let Some(file) = self.file(rel, &r)? else {
                continue;
            };
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
            file.write_all_at(&ZEROES, block as u64 * BLCKSZ as u64)
                .map_err(|e| {
                    PgError::io(format!("could not extend file \"{}\"", relpath(rel)), e)
                })?;
            r.needs_sync.store(true, Ordering::Release);
            r.nblocks.store(block + 1, Ordering::Release);
            return Ok(block);
        }
    }

    /// Cut `rel` to its first `nblocks` blocks (VACUUM's truncation of empty pages at the
    /// end); nothing if it has no more. The caller has dropped the buffers of the blocks
    /// cut and logged the truncation first.
    pub fn truncate(&self, rel: RelId, nblocks: BlockNumber) -> PgResult<()> {
        loop {
            let r = self.relation(rel)?;
            let _extending = r.extend_lock.lock();
            if r.nblocks() <= nblocks {
                return Ok(());
            }
            let Some(file) = self.file(rel, &r)? else {
                continue;
            };
            // The size first: no reader asks for a block being cut.
            r.nblocks.store(nblocks, Ordering::Release);
            file.set_len(u64::from(nblocks) * BLCKSZ as u64)
                .map_err(|e| {
                    PgError::io(
                        format!(
                            "could not truncate file \"{}\" to {nblocks} blocks",
                            relpath(rel)
                        ),
                        e,
                    )
                })?;
            r.needs_sync.store(true, Ordering::Release);
            return Ok(());
        }
    }

    /// Read block `block` of `rel` into `buf`. The block must exist.
    pub fn read_block(
        &self,
        rel: RelId,
        block: BlockNumber,
        buf: &mut [u8; BLCKSZ],
    ) -> PgResult<()> {
        self.with_file(rel, |r, file| {
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
            let n = file.read_at(buf, block as u64 * BLCKSZ as u64).map_err(|e| {
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
        })
    }

    /// Write `buf` as block `block` of `rel`. The block must exist (use [`extend`] to add
    /// one). Durable after [`sync`](Self::sync), [`sync_all`](Self::sync_all), or the fd
    /// cache closing the file.
    ///
    /// [`extend`]: Self::extend
    pub fn write_block(&self, rel: RelId, block: BlockNumber, buf: &[u8; BLCKSZ]) -> PgResult<()> {
        self.with_file(rel, |r, file| {
            let nblocks = r.nblocks();
            if block >= nblocks {
                return Err(PgError::internal(format!(
                    "could not write block {block} in file \"{}\": beyond the end of the file ({nblocks} blocks)",
                    relpath(rel)
                )));
            }
            file.write_all_at(buf, block as u64 * BLCKSZ as u64)
                .map_err(|e| {
                    PgError::io(
                        format!("could not write block {block} in file \"{}\"", relpath(rel)),
                        e,
                    )
                })?;
            // Set after the write, with the file still held open: a concurrent `sync_all`
            // clears it before its fsync, and an evictor sees it (smgr rules 5, 6).
            r.needs_sync.store(true, Ordering::Release);
            Ok(())
        })
    }

    /// Make every write to `rel` so far durable. Reopens the file if the fd cache had
    /// closed it.
    pub fn sync(&self, rel: RelId) -> PgResult<()> {
        self.with_file(rel, |r, file| {
            r.needs_sync.store(false, Ordering::Release);
            file.sync().map_err(|e| {
                r.needs_sync.store(true, Ordering::Release);
                self.fsync_failed.store(true, Ordering::Release);
                PgError::io(format!("could not fsync file \"{}\"", relpath(rel)), e)
            })
        })
    }

    /// Make every write to every relation durable, and creations and removals of
    /// relation files too. Only relations written since their last sync are synced
    /// (smgr rule 5), so a checkpoint costs O(relations written), not O(relations); they
    /// are all among the open files (rule 6), so finding them costs O(open files).
    pub fn sync_all(&self) -> PgResult<()> {
        let written: Vec<Arc<SmgrRelation>> = self
            .open_files
            .lock()
            .ring
            .iter()
            .filter(|r| r.needs_sync.load(Ordering::Acquire))
            .cloned()
            .collect();
        for r in written {
            // Closed since the list was taken: the evictor synced it (rule 6).
            let Some(file) = file_guard(r.file.read()) else {
                continue;
            };
            // Cleared before the sync: a write racing with it sets the flag again.
            r.needs_sync.store(false, Ordering::Release);
            if let Err(e) = file.sync() {
                r.needs_sync.store(true, Ordering::Release);
                self.fsync_failed.store(true, Ordering::Release);
                return Err(PgError::io(
                    format!("could not fsync file \"{}\"", relpath(r.rel)),
                    e,
                ));
            }
        }
        if self.base_dir_dirty.swap(false, Ordering::AcqRel)
            && let Err(e) = self.vfs.sync_dir(&self.base_dir)
        {
            self.base_dir_dirty.store(true, Ordering::Release);
            self.fsync_failed.store(true, Ordering::Release);
            return Err(PgError::io(
                format!("could not fsync directory \"{}\"", self.base_dir.display()),
                e,
            ));
        }
        Ok(())
    }

    /// Has any fsync of relation data failed since startup? After one, a later fsync's
    /// success proves nothing (the kernel may have dropped the pages it could not write and
    /// cleared the error), so the checkpointer refuses to move the redo point (smgr rule 7).
    pub fn fsync_failed(&self) -> bool {
        self.fsync_failed.load(Ordering::Acquire)
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
    fn open_file_limit_from_proc_limits() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max processes             63459                63459                processes \n\
                      Max open files            1024                 524288               files     \n";
        assert_eq!(nofile_soft_limit(limits), Some(1024));
        assert_eq!(
            nofile_soft_limit(
                "Max open files            unlimited            unlimited            files"
            ),
            Some(u64::MAX)
        );
        assert_eq!(nofile_soft_limit("Max processes 10 10 processes"), None);
        assert_eq!(open_files_for_limit(1024), 1024 - RESERVED_FDS);
        assert_eq!(open_files_for_limit(20), MIN_OPEN_RELATION_FILES);
        assert_eq!(open_files_for_limit(u64::MAX), usize::MAX - RESERVED_FDS);
        // This process: whatever the limit, the default respects the floor.
        assert!(max_open_files_from_rlimit() >= MIN_OPEN_RELATION_FILES);
        let dir = tempfile::tempdir().expect("tempdir");
        let smgr = Smgr::new(Arc::new(OsVfs), dir.path()).expect("smgr");
        assert_eq!(smgr.max_open_files(), max_open_files_from_rlimit());
        assert_eq!(smgr.fd_stats().max_open_files, smgr.max_open_files());
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
