//! The buffer pool: a bounded set of 8 KiB frames caching relation blocks.
//!
//! Interface: [`BufferPool::read_buffer`] and [`BufferPool::extend`] return a
//! [`PinnedBuffer`]; its [`read`](PinnedBuffer::read) guard derefs to the page and its
//! [`write`](PinnedBuffer::write) guard derefs mutably and marks the buffer dirty. Dropping
//! the `PinnedBuffer` unpins. [`BufferPool::flush_all`] writes every dirty page and syncs;
//! [`BufferPool::drop_relation`] discards a relation's buffers unwritten (DROP TABLE).
//!
//! Structure (as PostgreSQL's `storage/buffer`):
//! - Frames: a header (state, pin count, dirty flag, usage count) under a small mutex, and
//!   the page under a content `RwLock`. A frame is in one `FrameState`; every change of
//!   state goes through `FrameHeader::set_state`, which asserts the edge is legal.
//! - The buffer mapping table, tag -> frame, split into [`NUM_BUFFER_PARTITIONS`]
//!   mutex-protected hash maps by a hash of the tag. A hit locks one partition and one frame
//!   header, briefly: there is no global lock on the hit path.
//! - Victims are found by clock sweep over unpinned frames: each pass over a frame with a
//!   non-zero usage count decrements it; a frame at zero is taken. A dirty victim is written
//!   back (with its checksum stamped) before it is reused.
//!
//! Lock order (README "buffer rule 4"): partition(s), lowest index first -> frame header.
//! A content lock is never waited for while a partition lock is held (a miss takes the
//! victim's content lock with `try_write`, which cannot fail on a frame pinned only by the
//! caller). The frame header mutex is always innermost and held only for a few
//! instructions.
//!
//! Crash safety: pages reach disk on eviction and in `flush_all`, checksummed. Until WAL
//! exists nothing orders those writes; the WAL issue adds "WAL first, up to the page's LSN"
//! at the one place a page is written out (`write_back`), and logging at the one place a
//! page is changed ([`PinnedBuffer::write`]).

use std::collections::HashMap;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::ids::BlockNumber;
use common::limits::BLCKSZ;
use common::{PgError, PgResult, RelId, SqlState};
use parking_lot::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::page;
use crate::smgr::{Smgr, relpath};
use crate::xlog::{RecordKind, Wal};

/// Number of partitions of the buffer mapping table (PostgreSQL's
/// `NUM_BUFFER_PARTITIONS` is 128; 16 is plenty for the core counts Myriad runs on and
/// keeps `stats()` cheap).
pub const NUM_BUFFER_PARTITIONS: usize = 16;

/// Ceiling of a frame's usage count (`BM_MAX_USAGE_COUNT`): a hot page survives at most
/// this many clock passes without being touched.
pub const BM_MAX_USAGE_COUNT: u8 = 5;

/// How many times one `read_buffer` call retries after losing a race (another backend
/// loaded the page first, the victim was re-pinned). Each retry is a real race lost; a
/// hundred in a row means something is wrong.
pub const READ_BUFFER_ATTEMPTS_MAX: usize = 100;

/// `drop_relation` looks up each block of a relation smaller than
/// `pool pages / BUF_DROP_FULL_SCAN_DIVISOR` instead of scanning every frame, so DROP of
/// a small table does not cost O(pool size) (PostgreSQL's `BUF_DROP_FULL_SCAN_THRESHOLD`).
pub const BUF_DROP_FULL_SCAN_DIVISOR: usize = 32;

/// How long `drop_relation` waits for a transient pin (an eviction writing the page back)
/// to go away before calling it a bug: a caller must not hold pins on a relation it drops.
pub const DROP_RELATION_PIN_WAIT: Duration = Duration::from_secs(10);

/// Buffer accesses per relation by the current thread, while it asks for them (buffer
/// rule 9): what `EXPLAIN (ANALYZE, BUFFERS)`, per-statement I/O reports and each
/// transaction's `pg_statio_user_tables` counts read.
///
/// Kept in the thread, not in shared memory, so the hit path writes nothing shared: when
/// tracking is off counting is one thread-local flag test. A session runs on one thread
/// (a statement, a transaction), so its thread's counts are its own.
pub mod usage {
    use std::cell::{Cell, RefCell};
    use std::collections::HashMap;

    use common::RelId;

    /// One relation's counts.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct RelUsage {
        /// Found in the pool.
        pub hits: u64,
        /// Read from disk (or created by extend) into the pool.
        pub reads: u64,
        /// Written to disk by this thread (its evictions, its checkpoint).
        pub writes: u64,
    }

    impl RelUsage {
        /// What was counted after `earlier`, a reading of the same counters.
        pub fn since(self, earlier: RelUsage) -> RelUsage {
            RelUsage {
                hits: self.hits - earlier.hits,
                reads: self.reads - earlier.reads,
                writes: self.writes - earlier.writes,
            }
        }
    }

    #[derive(Clone, Copy)]
    pub(crate) enum Kind {
        Hit,
        Read,
        Write,
    }

    /// The relations a transaction touches are usually few: the first ones are found by
    /// comparing ids in a short list, the rest through a map.
    const LISTED: usize = 8;

    #[derive(Default)]
    struct Counts {
        listed: Vec<(RelId, RelUsage)>,
        more: HashMap<RelId, RelUsage>,
    }

    impl Counts {
        fn get(&mut self, rel: RelId) -> &mut RelUsage {
            if let Some(i) = self.listed.iter().position(|(r, _)| *r == rel) {
                return &mut self.listed[i].1;
            }
            if self.listed.len() < LISTED {
                self.listed.push((rel, RelUsage::default()));
                return &mut self.listed.last_mut().expect("just pushed").1;
            }
            self.more.entry(rel).or_default()
        }
    }

    thread_local! {
        static TRACKING: Cell<bool> = const { Cell::new(false) };
        static COUNTS: RefCell<Counts> = RefCell::new(Counts::default());
        static TOTAL: Cell<RelUsage> = const {
            Cell::new(RelUsage {
                hits: 0,
                reads: 0,
                writes: 0,
            })
        };
    }

    /// Start counting this thread's buffer accesses (from zero), unless it counts
    /// already (then the counts go on); true if this call started it. Whoever started
    /// it [`take`]s the counts.
    pub fn start() -> bool {
        if TRACKING.with(Cell::get) {
            return false;
        }
        COUNTS.with(|c| {
            let mut c = c.borrow_mut();
            c.listed.clear();
            c.more.clear();
        });
        TOTAL.with(|t| t.set(RelUsage::default()));
        TRACKING.with(|t| t.set(true));
        true
    }

    /// The counts of every relation together since [`start`], read cheaply (what EXPLAIN
    /// reads around each of a plan node's rows).
    pub fn total() -> RelUsage {
        TOTAL.with(Cell::get)
    }

    /// Stop counting; returns the counts since [`start`].
    pub fn take() -> HashMap<RelId, RelUsage> {
        let mut all = HashMap::new();
        take_each(|rel, u| {
            all.insert(rel, u);
        });
        all
    }

    /// Stop counting; hands each relation's counts since [`start`] to `f`, allocating
    /// nothing (what a transaction's end does).
    pub fn take_each(mut f: impl FnMut(RelId, RelUsage)) {
        TRACKING.with(|t| t.set(false));
        COUNTS.with(|c| {
            let mut c = c.borrow_mut();
            for (rel, u) in c.listed.drain(..) {
                f(rel, u);
            }
            for (rel, u) in c.more.drain() {
                f(rel, u);
            }
        })
    }

    pub(crate) fn count(rel: RelId, kind: Kind) {
        if !TRACKING.with(Cell::get) {
            return;
        }
        let add = |u: &mut RelUsage| match kind {
            Kind::Hit => u.hits += 1,
            Kind::Read => u.reads += 1,
            Kind::Write => u.writes += 1,
        };
        COUNTS.with(|c| add(c.borrow_mut().get(rel)));
        TOTAL.with(|t| {
            let mut u = t.get();
            add(&mut u);
            t.set(u);
        });
    }
}

/// Which page of which relation a buffer holds (`BufferTag`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BufferTag {
    pub rel: RelId,
    pub block: BlockNumber,
}

impl fmt::Display for BufferTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "block {} of relation {}", self.block, relpath(self.rel))
    }
}

/// The life of a frame.
///
/// ```text
///   Free --miss--> Loading(tag) --read ok--> Valid(tag) --evicted--> Loading(tag')
///     ^                 |                        |
///     +---read failed---+------drop_relation-----+
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FrameState {
    /// Holds no page.
    Free,
    /// Mapped to `tag`; the page is being read by the backend holding the content write
    /// lock. Others pin it and wait on the content lock.
    Loading(BufferTag),
    /// Holds the page `tag`.
    Valid(BufferTag),
}

impl FrameState {
    fn tag(self) -> Option<BufferTag> {
        match self {
            FrameState::Free => None,
            FrameState::Loading(t) | FrameState::Valid(t) => Some(t),
        }
    }
}

struct FrameHeader {
    state: FrameState,
    /// The page differs from disk. Set by the write guard, cleared by a write-back.
    dirty: bool,
    pin_count: u32,
    usage_count: u8,
}

impl FrameHeader {
    /// The one place a frame changes state.
    fn set_state(&mut self, to: FrameState) {
        use FrameState::*;
        let legal = match (self.state, to) {
            (Free, Loading(_)) | (Loading(_), Free) => true,
            (Valid(_), Loading(_)) | (Valid(_), Free) => !self.dirty,
            (Loading(a), Valid(b)) => a == b,
            _ => false,
        };
        assert!(
            legal,
            "illegal buffer state change {:?} -> {to:?} (dirty: {})",
            self.state, self.dirty
        );
        self.state = to;
    }

    fn pin(&mut self) {
        self.pin_count += 1;
        self.usage_count = (self.usage_count + 1).min(BM_MAX_USAGE_COUNT);
    }
}

struct Frame {
    header: Mutex<FrameHeader>,
    content: RwLock<Box<[u8; BLCKSZ]>>,
    /// Held across one write-back, from the copy to the file write (buffer rule 10):
    /// two write-backs of a frame never overlap, and `flush_all` waits out one in flight.
    io: Mutex<()>,
}

/// One partition of the mapping table, with its share of the hit/miss counters (counted
/// under the partition lock the lookup takes anyway: no shared counter cache line).
#[derive(Default)]
struct PartitionMap {
    frames: HashMap<BufferTag, usize>,
    hits: u64,
    misses: u64,
}

/// Padded to a cache line so neighbouring partitions' locks do not share one.
#[repr(align(64))]
#[derive(Default)]
struct Partition {
    map: Mutex<PartitionMap>,
}

/// Counters since the pool was created.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferPoolStats {
    /// Lookups that found the page in the pool.
    pub hits: u64,
    /// Pages read from disk (or created by `extend`) into the pool.
    pub misses: u64,
    /// Valid pages pushed out to make room.
    pub evictions: u64,
    /// Pages written to disk.
    pub writes: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ReadMode {
    /// Read the block from disk and verify it.
    Read,
    /// The block was just added by `smgr.extend`: initialise an empty page, no read.
    NewPage,
    /// Recovery will overwrite the whole page with a full image: no read (the page on
    /// disk may be torn), zeros in memory.
    Overwrite,
}

/// The buffer pool: see the module header.
pub struct BufferPool {
    smgr: Arc<Smgr>,
    /// The log pages are written behind (buffer rule 3); `None` in unlogged tests.
    wal: Option<Arc<Wal>>,
    frames: Box<[Frame]>,
    partitions: Box<[Partition]>,
    clock_hand: AtomicUsize,
    evictions: AtomicU64,
    writes: AtomicU64,
}

impl BufferPool {
    /// A pool of `pages` frames over `smgr`.
    pub fn new(smgr: Arc<Smgr>, pages: usize) -> BufferPool {
        assert!(pages >= 1, "a buffer pool needs at least one frame");
        let frames = (0..pages)
            .map(|_| Frame {
                header: Mutex::new(FrameHeader {
                    state: FrameState::Free,
                    dirty: false,
                    pin_count: 0,
                    usage_count: 0,
                }),
                content: RwLock::new(Box::new([0; BLCKSZ])),
                io: Mutex::new(()),
            })
            .collect();
        let partitions = (0..NUM_BUFFER_PARTITIONS)
            .map(|_| Partition::default())
            .collect();
        BufferPool {
            smgr,
            wal: None,
            frames,
            partitions,
            clock_hand: AtomicUsize::new(0),
            evictions: AtomicU64::new(0),
            writes: AtomicU64::new(0),
        }
    }

    /// The storage manager under this pool.
    pub fn smgr(&self) -> &Arc<Smgr> {
        &self.smgr
    }

    /// Log page changes to `wal` from now on, and write no page before the log covers its
    /// LSN. Done once, at startup, before recovery.
    pub fn attach_wal(&mut self, wal: Arc<Wal>) {
        self.wal = Some(wal);
    }

    /// The log this pool writes behind, if any.
    pub fn wal(&self) -> Option<&Arc<Wal>> {
        self.wal.as_ref()
    }

    /// Create the file of a new relation, logging it first so that recovery re-creates a
    /// file whose directory entry a crash lost (smgr rule 4).
    pub fn create_relation(&self, rel: RelId) -> PgResult<()> {
        if let Some(wal) = &self.wal {
            wal.log(RecordKind::SmgrCreate, &rel.to_le_bytes())?;
        }
        self.smgr.create(rel)
    }

    /// Discard a relation's buffers and remove its file (DROP). The removal is logged and
    /// the log flushed first, so recovery never re-creates a file that is gone.
    pub fn unlink_relation(&self, rel: RelId) -> PgResult<()> {
        if let Some(wal) = &self.wal {
            let end = wal.log(RecordKind::SmgrUnlink, &rel.to_le_bytes())?;
            wal.flush(end)?;
        }
        self.drop_relation(rel)?;
        self.smgr.unlink(rel)
    }

    /// Cut `rel` to its first `nblocks` blocks (VACUUM's truncation): logged and the log
    /// flushed first (a crash after the file is cut replays the cut, never a page past
    /// it that a later record does not bring back), then the buffers of the blocks cut
    /// go, then the file is cut. The caller holds the relation's AccessExclusive lock:
    /// no one else reads or pins those blocks.
    pub fn truncate_relation(&self, rel: RelId, nblocks: BlockNumber) -> PgResult<()> {
        if let Some(wal) = &self.wal {
            let mut payload = rel.to_le_bytes().to_vec();
            payload.extend_from_slice(&nblocks.to_le_bytes());
            let end = wal.log(RecordKind::SmgrTruncate, &payload)?;
            wal.flush(end)?;
        }
        self.drop_blocks_from(rel, nblocks)?;
        self.smgr.truncate(rel, nblocks)
    }

    /// Discard the buffers of `rel`'s blocks from `nblocks` on, dirty or not: looking up
    /// each block where they are few (`BUF_DROP_FULL_SCAN_DIVISOR`), else every frame
    /// (also where the relation's size is unknown).
    pub fn drop_blocks_from(&self, rel: RelId, nblocks: BlockNumber) -> PgResult<()> {
        let few = self.smgr.nblocks(rel).ok().filter(|end| {
            (end.saturating_sub(nblocks) as usize) < self.frames.len() / BUF_DROP_FULL_SCAN_DIVISOR
        });
        if let Some(end) = few {
            for block in nblocks..end {
                let tag = BufferTag { rel, block };
                let found = self.partitions[Self::partition_of(tag)]
                    .map
                    .lock()
                    .frames
                    .get(&tag)
                    .copied();
                if let Some(id) = found {
                    self.invalidate(id, |t| t == tag)?;
                }
            }
        } else {
            for id in 0..self.frames.len() {
                self.invalidate(id, |t| t.rel == rel && t.block >= nblocks)?;
            }
        }
        Ok(())
    }

    /// Recovery's access to a block: extends the relation up to `block` if a crash lost
    /// its extension, and with `overwrite` skips reading a page that a full image is about
    /// to replace (it may be torn on disk).
    pub fn read_buffer_for_redo(
        &self,
        rel: RelId,
        block: BlockNumber,
        overwrite: bool,
    ) -> PgResult<PinnedBuffer<'_>> {
        while self.smgr.nblocks(rel)? <= block {
            self.smgr.extend(rel)?;
        }
        let mode = if overwrite {
            ReadMode::Overwrite
        } else {
            ReadMode::Read
        };
        self.get_buffer(BufferTag { rel, block }, mode)
    }

    /// Number of frames.
    pub fn capacity(&self) -> usize {
        self.frames.len()
    }

    /// Pin block `block` of `rel`, reading it from disk (and verifying its checksum and
    /// header) if it is not in the pool. Errors: I/O, DATA_CORRUPTED for a bad page, and
    /// CONFIGURATION_LIMIT_EXCEEDED when every frame is pinned.
    pub fn read_buffer(&self, rel: RelId, block: BlockNumber) -> PgResult<PinnedBuffer<'_>> {
        self.get_buffer(BufferTag { rel, block }, ReadMode::Read)
    }

    /// Add a block to `rel` and pin it, holding a new page: all zeros (`Page::is_new`), as on
    /// disk; the access method initialises it in its first logged change. It is not dirty
    /// until then.
    pub fn extend(&self, rel: RelId) -> PgResult<(BlockNumber, PinnedBuffer<'_>)> {
        let block = self.smgr.extend(rel)?;
        let buf = self.get_buffer(BufferTag { rel, block }, ReadMode::NewPage)?;
        Ok((block, buf))
    }

    fn partition_of(tag: BufferTag) -> usize {
        let key = (tag.rel as u64) << 32 | tag.block as u64;
        let h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> 32) as usize % NUM_BUFFER_PARTITIONS
    }

    fn get_buffer(&self, tag: BufferTag, mode: ReadMode) -> PgResult<PinnedBuffer<'_>> {
        let part = Self::partition_of(tag);
        for _ in 0..READ_BUFFER_ATTEMPTS_MAX {
            // Hit: pin under the partition lock, so the frame cannot be remapped under us.
            let hit = {
                let mut map = self.partitions[part].map.lock();
                match map.frames.get(&tag).copied() {
                    Some(id) => {
                        map.hits += 1;
                        let mut hdr = self.frames[id].header.lock();
                        hdr.pin();
                        Some((id, hdr.state))
                    }
                    None => None,
                }
            };
            if let Some((id, state)) = hit {
                usage::count(tag.rel, usage::Kind::Hit);
                let buf = PinnedBuffer {
                    pool: self,
                    frame: id,
                    tag,
                };
                let valid = state == FrameState::Valid(tag) || self.wait_for_load(id, tag);
                if mode == ReadMode::NewPage {
                    // Another session read the block between the file's growth and this
                    // mapping (a reader of a relation's last page): still all zeros, it
                    // is the new page. Anything else is a dropped relation's stale buffer.
                    if valid && buf.read().iter().all(|b| *b == 0) {
                        return Ok(buf);
                    }
                    return Err(PgError::internal(format!(
                        "new {tag} is already in the buffer pool (stale buffers of a dropped relation?)"
                    )));
                }
                if valid {
                    return Ok(buf);
                }
                // The load failed; drop our pin and try (and probably fail) ourselves.
                continue;
            }

            // Miss: take a victim, clean it, and map it to `tag` if nobody beat us to it.
            let victim = self.clean_victim()?;
            let Some(mut content) = self.remap(victim, tag) else {
                self.unpin(victim);
                continue;
            };
            let buf = PinnedBuffer {
                pool: self,
                frame: victim,
                tag,
            };
            usage::count(tag.rel, usage::Kind::Read);
            let loaded = match mode {
                ReadMode::Read => self
                    .smgr
                    .read_block(tag.rel, tag.block, &mut content)
                    .and_then(|()| page::verify(&content, tag.rel, tag.block)),
                // The same zeros as on disk (smgr rule 3): a page looks the same whether
                // it was just added or evicted unchanged and read back.
                ReadMode::NewPage | ReadMode::Overwrite => {
                    content.fill(0);
                    Ok(())
                }
            };
            let frame = &self.frames[victim];
            match loaded {
                Ok(()) => {
                    let mut hdr = frame.header.lock();
                    hdr.set_state(FrameState::Valid(tag));
                    // A new page is zeros on disk (smgr rule 3), valid as it is: it is
                    // written only once a logged change dirties it.
                    hdr.dirty = false;
                }
                Err(e) => {
                    // Unmap before releasing the content lock, so waiters see Free.
                    let mut map = self.partitions[part].map.lock();
                    map.frames.remove(&tag);
                    let mut hdr = frame.header.lock();
                    hdr.set_state(FrameState::Free);
                    hdr.usage_count = 0;
                    drop(hdr);
                    drop(map);
                    content.fill(0);
                    return Err(e);
                }
            }
            drop(content);
            return Ok(buf);
        }
        Err(PgError::internal(format!(
            "could not pin {tag}: lost {READ_BUFFER_ATTEMPTS_MAX} races in a row"
        )))
    }

    /// Wait for a frame we pinned in state Loading(tag) to finish loading; true if it is
    /// now Valid(tag).
    fn wait_for_load(&self, id: usize, tag: BufferTag) -> bool {
        let frame = &self.frames[id];
        // The loader holds the content write lock from before the mapping was published
        // until the state is final.
        drop(frame.content.read());
        frame.header.lock().state == FrameState::Valid(tag)
    }

    /// A clean victim frame, pinned by us: clock sweep, writing a dirty victim back first.
    /// A victim whose content lock is held (someone pinned and latched it since the sweep
    /// chose it) is passed over, not waited for: the latch holder may be waiting for a
    /// latch this thread holds (buffer rule 8).
    fn clean_victim(&self) -> PgResult<usize> {
        for _ in 0..self.frames.len() * 2 + 1 {
            let victim = self.clock_sweep()?;
            match self.write_back(victim, false) {
                Ok(true) => return Ok(victim),
                Ok(false) => self.unpin(victim),
                Err(e) => {
                    self.unpin(victim);
                    return Err(e);
                }
            }
        }
        Err(PgError::new(
            SqlState::CONFIGURATION_LIMIT_EXCEEDED,
            "no unpinned buffers available",
        )
        .with_hint("Every candidate page was latched by another session."))
    }

    /// Find an unpinned frame by clock sweep and pin it. Gives up after every frame has had
    /// its usage count run down, which only happens if they are all pinned.
    fn clock_sweep(&self) -> PgResult<usize> {
        let n = self.frames.len();
        for _ in 0..n * (BM_MAX_USAGE_COUNT as usize + 1) {
            let id = self.clock_hand.fetch_add(1, Ordering::Relaxed) % n;
            let mut hdr = self.frames[id].header.lock();
            if hdr.pin_count == 0 {
                if hdr.usage_count == 0 {
                    hdr.pin_count = 1;
                    return Ok(id);
                }
                hdr.usage_count -= 1;
            }
        }
        Err(PgError::new(
            SqlState::CONFIGURATION_LIMIT_EXCEEDED,
            "no unpinned buffers available",
        )
        .with_hint(format!(
            "The buffer pool has {n} pages; every one is pinned."
        )))
    }

    /// Map `victim` (pinned by us alone) to `tag`, in state Loading, and return its content
    /// write guard, taken before the mapping is visible. `None` if we lost a race: `tag` is
    /// already mapped, or the victim was pinned or dirtied again since we chose it.
    fn remap(
        &self,
        victim: usize,
        tag: BufferTag,
    ) -> Option<RwLockWriteGuard<'_, Box<[u8; BLCKSZ]>>> {
        let frame = &self.frames[victim];
        let old = frame.header.lock().state.tag();
        let new_part = Self::partition_of(tag);
        let old_part = old.map(Self::partition_of).filter(|p| *p != new_part);
        let (mut new_map, mut old_map) = self.lock_partitions(new_part, old_part);
        if new_map.frames.contains_key(&tag) {
            return None;
        }
        let mut hdr = frame.header.lock();
        if hdr.pin_count != 1 || hdr.dirty || hdr.state.tag() != old {
            return None;
        }
        let Some(content) = frame.content.try_write() else {
            panic!("frame {victim} is pinned only by us, yet its content lock is held");
        };
        if let Some(old) = old {
            let map = old_map.as_mut().unwrap_or(&mut new_map);
            let removed = map.frames.remove(&old);
            assert_eq!(
                removed,
                Some(victim),
                "mapping of {old} disagrees with its frame"
            );
            self.evictions.fetch_add(1, Ordering::Relaxed);
        }
        new_map.frames.insert(tag, victim);
        new_map.misses += 1;
        hdr.set_state(FrameState::Loading(tag));
        hdr.usage_count = 1;
        Some(content)
    }

    /// Lock partition `a` and, if given, partition `b != a`, in index order (buffer rule 4).
    fn lock_partitions(
        &self,
        a: usize,
        b: Option<usize>,
    ) -> (
        MutexGuard<'_, PartitionMap>,
        Option<MutexGuard<'_, PartitionMap>>,
    ) {
        match b {
            None => (self.partitions[a].map.lock(), None),
            Some(b) if b > a => {
                let ga = self.partitions[a].map.lock();
                (ga, Some(self.partitions[b].map.lock()))
            }
            Some(b) => {
                let gb = self.partitions[b].map.lock();
                (self.partitions[a].map.lock(), Some(gb))
            }
        }
    }

    /// If frame `id` (pinned by the caller) is dirty, write it out: stamp the checksum on
    /// a copy taken under the shared content lock, so writers wait only for the copy.
    /// The WAL is flushed up to the page's LSN first (buffer rule 3).
    /// With `wait` false, returns `Ok(false)` instead of waiting for a held content lock
    /// or for another write-back of the frame.
    fn write_back(&self, id: usize, wait: bool) -> PgResult<bool> {
        let frame = &self.frames[id];
        let mut copy = [0u8; BLCKSZ];
        // Taken before the content lock and held until the page is in the file.
        let _io = if wait {
            frame.io.lock()
        } else {
            match frame.io.try_lock() {
                Some(io) => io,
                None => return Ok(false),
            }
        };
        let tag = {
            let content = if wait {
                frame.content.read()
            } else {
                match frame.content.try_read() {
                    Some(c) => c,
                    None => return Ok(false),
                }
            };
            let mut hdr = frame.header.lock();
            let tag = match hdr.state {
                FrameState::Valid(tag) if hdr.dirty => tag,
                _ => return Ok(true),
            };
            // Cleared under the content lock: a change after our copy sets it again.
            hdr.dirty = false;
            copy.copy_from_slice(&content[..]);
            tag
        };
        // buffer rule 3: the log first, up to the page's LSN.
        if let Some(wal) = &self.wal
            && let Err(e) = wal.flush(page::Page::new(&copy).lsn())
        {
            frame.header.lock().dirty = true;
            return Err(e);
        }
        page::set_checksum(&mut copy, tag.block);
        if let Err(e) = self.smgr.write_block(tag.rel, tag.block, &copy) {
            // Still pinned by us, so still Valid(tag): it stays dirty for the next try.
            frame.header.lock().dirty = true;
            return Err(e);
        }
        self.writes.fetch_add(1, Ordering::Relaxed);
        usage::count(tag.rel, usage::Kind::Write);
        Ok(true)
    }

    fn unpin(&self, id: usize) {
        let mut hdr = self.frames[id].header.lock();
        assert!(hdr.pin_count > 0, "unpin of unpinned frame {id}");
        hdr.pin_count -= 1;
    }

    /// Write every dirty page, then make all relation files durable. Pages dirtied while
    /// this runs may or may not be included; a page dirty when it started is in its file
    /// when it returns, whoever wrote it (buffer rule 10).
    pub fn flush_all(&self) -> PgResult<()> {
        for id in 0..self.frames.len() {
            {
                let frame = &self.frames[id];
                let mut hdr = frame.header.lock();
                if !(matches!(hdr.state, FrameState::Valid(_)) && hdr.dirty) {
                    drop(hdr);
                    // An evictor may have taken the dirty flag and not written the page
                    // yet: wait for it, so that the sync below covers that write.
                    if frame.io.is_locked() {
                        drop(frame.io.lock());
                    }
                    continue;
                }
                // Pin (without touching the usage count) so it cannot be evicted mid-write.
                hdr.pin_count += 1;
            }
            let result = self.write_back(id, true).map(|_| ());
            self.unpin(id);
            result?;
        }
        self.smgr.sync_all()
    }

    /// Discard every buffer of `rel` without writing it (DROP TABLE, before
    /// `Smgr::unlink`). The caller holds no pin on `rel` and keeps others off it (the DDL
    /// lock); a pin held by an eviction in progress is waited out.
    pub fn drop_relation(&self, rel: RelId) -> PgResult<()> {
        self.drop_blocks_from(rel, 0)
    }

    /// Make frame `id` Free if it holds a page matching `matches`, waiting out pins.
    fn invalidate(&self, id: usize, matches: impl Fn(BufferTag) -> bool) -> PgResult<()> {
        let frame = &self.frames[id];
        let started = Instant::now();
        loop {
            let Some(tag) = frame.header.lock().state.tag().filter(|t| matches(*t)) else {
                return Ok(());
            };
            let mut map = self.partitions[Self::partition_of(tag)].map.lock();
            let mut hdr = frame.header.lock();
            if hdr.state.tag() != Some(tag) {
                continue;
            }
            if hdr.pin_count == 0 {
                let removed = map.frames.remove(&tag);
                assert_eq!(
                    removed,
                    Some(id),
                    "mapping of {tag} disagrees with its frame"
                );
                hdr.dirty = false;
                hdr.usage_count = 0;
                hdr.set_state(FrameState::Free);
                return Ok(());
            }
            drop(hdr);
            drop(map);
            if started.elapsed() > DROP_RELATION_PIN_WAIT {
                return Err(PgError::internal(format!(
                    "cannot drop {tag}: still pinned after {DROP_RELATION_PIN_WAIT:?}"
                )));
            }
            std::thread::yield_now();
        }
    }

    /// Counters since the pool was created.
    pub fn stats(&self) -> BufferPoolStats {
        let mut stats = BufferPoolStats {
            evictions: self.evictions.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
            ..BufferPoolStats::default()
        };
        for p in self.partitions.iter() {
            let map = p.map.lock();
            stats.hits += map.hits;
            stats.misses += map.misses;
        }
        stats
    }
}

/// A pinned buffer: while it lives, the frame keeps holding its page (it cannot be
/// evicted). Dropping it unpins. Look at the page through [`read`](Self::read) or change
/// it through [`write`](Self::write).
///
/// Deadlock rule (README "buffer rule 5"): a thread holds at most one content guard at a
/// time unless it takes them in block order of one relation; `write` takes `&mut self` so
/// that one `PinnedBuffer` cannot hand out a read and a write guard at once.
pub struct PinnedBuffer<'a> {
    pool: &'a BufferPool,
    frame: usize,
    tag: BufferTag,
}

impl<'a> PinnedBuffer<'a> {
    pub fn tag(&self) -> BufferTag {
        self.tag
    }

    pub fn rel(&self) -> RelId {
        self.tag.rel
    }

    pub fn block(&self) -> BlockNumber {
        self.tag.block
    }

    /// Shared access to the page (the content lock in share mode).
    pub fn read(&self) -> BufferReadGuard<'_> {
        BufferReadGuard {
            guard: self.pool.frames[self.frame].content.read(),
        }
    }

    /// Exclusive access to the page; marks the buffer dirty. This is the one place every
    /// page change goes through (buffer rule 1): the WAL issue hooks in here, so that a
    /// change is logged and the page's LSN set before the guard is released.
    pub fn write(&mut self) -> BufferWriteGuard<'_> {
        let frame = &self.pool.frames[self.frame];
        let guard = frame.content.write();
        frame.header.lock().dirty = true;
        BufferWriteGuard { guard }
    }
}

impl Drop for PinnedBuffer<'_> {
    fn drop(&mut self) {
        self.pool.unpin(self.frame);
    }
}

impl fmt::Debug for PinnedBuffer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PinnedBuffer({}, frame {})", self.tag, self.frame)
    }
}

/// Shared access to a pinned page.
pub struct BufferReadGuard<'a> {
    guard: RwLockReadGuard<'a, Box<[u8; BLCKSZ]>>,
}

impl Deref for BufferReadGuard<'_> {
    type Target = [u8; BLCKSZ];
    fn deref(&self) -> &[u8; BLCKSZ] {
        &self.guard
    }
}

/// Exclusive access to a pinned page; the buffer is already marked dirty.
pub struct BufferWriteGuard<'a> {
    guard: RwLockWriteGuard<'a, Box<[u8; BLCKSZ]>>,
}

impl Deref for BufferWriteGuard<'_> {
    type Target = [u8; BLCKSZ];
    fn deref(&self) -> &[u8; BLCKSZ] {
        &self.guard
    }
}

impl DerefMut for BufferWriteGuard<'_> {
    fn deref_mut(&mut self) -> &mut [u8; BLCKSZ] {
        &mut self.guard
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::{Page, PageMut};
    use crate::vfs::{OsVfs, Vfs};

    fn pool(dir: &std::path::Path, pages: usize) -> BufferPool {
        let smgr = Arc::new(Smgr::new(Arc::new(OsVfs), dir).expect("smgr"));
        BufferPool::new(smgr, pages)
    }

    fn stamp(buf: &mut PinnedBuffer<'_>, value: u32) {
        let mut g = buf.write();
        let mut page = PageMut::new(&mut g);
        if page.as_page().is_new() {
            page.init(0);
        }
        page.add_item(&value.to_le_bytes()).expect("fits");
    }

    fn read_stamp(buf: &PinnedBuffer<'_>) -> u32 {
        let g = buf.read();
        let item = Page::new(&g).get_item(1).expect("item 1");
        u32::from_le_bytes(item.try_into().expect("4 bytes"))
    }

    #[test]
    fn four_frames_over_a_hundred_pages() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pool = pool(dir.path(), 4);
        pool.smgr().create(10).expect("create");
        for i in 0..100u32 {
            let (block, mut buf) = pool.extend(10).expect("extend");
            assert_eq!(block, i);
            stamp(&mut buf, i * 7);
        }
        let s = pool.stats();
        assert_eq!(s.misses, 100);
        assert_eq!(s.evictions, 96);
        assert_eq!(s.writes, 96);
        // Read back in a scrambled order: almost every read is a miss through disk.
        for i in (0..100u32).map(|i| (i * 37) % 100) {
            let buf = pool.read_buffer(10, i).expect("read");
            assert_eq!(read_stamp(&buf), i * 7);
        }
        // Re-reading one page hits.
        let before = pool.stats();
        for _ in 0..10 {
            let buf = pool.read_buffer(10, 63).expect("read");
            assert_eq!(read_stamp(&buf), 63 * 7);
        }
        assert_eq!(pool.stats().hits, before.hits + 10);
        pool.flush_all().expect("flush");

        // A fresh pool over the same files sees every page.
        drop(pool);
        let pool = self::pool(dir.path(), 4);
        for i in 0..100u32 {
            let buf = pool.read_buffer(10, i).expect("read");
            assert_eq!(read_stamp(&buf), i * 7);
        }
    }

    #[test]
    fn all_pinned_is_an_error_not_a_hang() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pool = pool(dir.path(), 2);
        pool.smgr().create(1).expect("create");
        let (_, a) = pool.extend(1).expect("extend");
        let (_, b) = pool.extend(1).expect("extend");
        let e = pool.extend(1).expect_err("no frame");
        assert_eq!(e.code, SqlState::CONFIGURATION_LIMIT_EXCEEDED);
        assert_eq!(e.message, "no unpinned buffers available");
        drop(a);
        let (block, _c) = pool.extend(1).expect("a frame is free again");
        // The failed extend still grew the file: block 2 is a zero page on disk.
        assert_eq!(block, 3);
        drop(b);
        let zero = pool.read_buffer(1, 2).expect("read");
        assert!(Page::new(&zero.read()).is_new());
    }

    #[test]
    fn corrupt_page_on_disk_is_reported() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pool = pool(dir.path(), 4);
        pool.smgr().create(20).expect("create");
        for i in 0..3 {
            let (_, mut buf) = pool.extend(20).expect("extend");
            stamp(&mut buf, i);
        }
        pool.flush_all().expect("flush");
        drop(pool);
        let file = OsVfs
            .open(&dir.path().join("base/20"), false)
            .expect("open");
        let at = BLCKSZ as u64 + 8000;
        let mut byte = [0u8; 1];
        file.read_at(&mut byte, at).expect("read");
        byte[0] ^= 0xff;
        file.write_all_at(&byte, at).expect("write");

        let pool = self::pool(dir.path(), 4);
        assert!(pool.read_buffer(20, 0).is_ok());
        for _ in 0..2 {
            let e = pool.read_buffer(20, 1).expect_err("corrupt");
            assert_eq!(e.code, SqlState::DATA_CORRUPTED);
            assert_eq!(e.message, "invalid page in block 1 of relation base/20");
            assert!(
                e.detail.as_deref().unwrap_or("").contains("checksum"),
                "{e:?}"
            );
        }
        assert!(pool.read_buffer(20, 2).is_ok());
    }

    #[test]
    fn racing_loads_of_good_and_corrupt_pages() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pool = pool(dir.path(), 3);
        pool.smgr().create(30).expect("create");
        for i in 0..6 {
            let (_, mut buf) = pool.extend(30).expect("extend");
            stamp(&mut buf, i);
        }
        pool.flush_all().expect("flush");
        drop(pool);
        // Corrupt block 4's header.
        let file = OsVfs
            .open(&dir.path().join("base/30"), false)
            .expect("open");
        file.write_all_at(&[0xee], 4 * BLCKSZ as u64 + 13)
            .expect("write");
        let pool = self::pool(dir.path(), 4);
        // Eight threads, four frames: every page is loaded and waited on concurrently.
        let all_pinned = AtomicU64::new(0);
        std::thread::scope(|s| {
            for t in 0..8u32 {
                let (pool, all_pinned) = (&pool, &all_pinned);
                s.spawn(move || {
                    for round in 0..300u32 {
                        let block = (round + t) % 6;
                        match pool.read_buffer(30, block) {
                            Ok(buf) => assert_eq!(read_stamp(&buf), block),
                            // Eight threads may pin more than four frames at once.
                            Err(e) if e.code == SqlState::CONFIGURATION_LIMIT_EXCEEDED => {
                                all_pinned.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(e) if block == 4 => assert_eq!(e.code, SqlState::DATA_CORRUPTED),
                            Err(e) => panic!("block {block}: {e:?}"),
                        }
                    }
                });
            }
        });
        let s = pool.stats();
        let refused = all_pinned.load(Ordering::Relaxed);
        assert!(refused < 8 * 300, "some reads got a frame: {s:?}");
        assert!(s.misses > 6 && s.hits > 0, "{s:?}");
    }

    #[test]
    fn drop_relation_discards_dirty_buffers() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pool = pool(dir.path(), 256);
        pool.smgr().create(5).expect("create");
        pool.smgr().create(6).expect("create");
        for i in 0..3 {
            let (_, mut a) = pool.extend(5).expect("extend");
            stamp(&mut a, i);
            let (_, mut b) = pool.extend(6).expect("extend");
            stamp(&mut b, 100 + i);
        }
        pool.drop_relation(5).expect("drop");
        pool.smgr().unlink(5).expect("unlink");
        // Nothing of rel 5 is written back (its file is gone; a write would fail).
        pool.flush_all().expect("flush");
        assert_eq!(pool.stats().writes, 3);
        let b = pool.read_buffer(6, 2).expect("read");
        assert_eq!(read_stamp(&b), 102);
        drop(b);
        // Full-scan path: a pool small enough that 3 blocks is above the threshold.
        let pool2 = self::pool(dir.path(), 4);
        let mut b = pool2.read_buffer(6, 0).expect("read");
        stamp(&mut b, 9);
        drop(b);
        pool2.drop_relation(6).expect("drop");
        assert_eq!(pool2.stats().writes, 0);
        pool2.flush_all().expect("flush");
        assert_eq!(pool2.stats().writes, 0);
    }

    /// A file system whose writes wait while a gate is closed.
    #[derive(Default)]
    struct Gate {
        state: Mutex<(bool, usize)>,
        changed: parking_lot::Condvar,
    }

    impl Gate {
        fn set_open(&self, open: bool) {
            self.state.lock().0 = open;
            self.changed.notify_all();
        }

        fn pass(&self) {
            let mut st = self.state.lock();
            st.1 += 1;
            self.changed.notify_all();
            while !st.0 {
                self.changed.wait(&mut st);
            }
            st.1 -= 1;
        }

        fn wait_for_writer(&self) {
            let mut st = self.state.lock();
            while st.1 == 0 {
                self.changed.wait(&mut st);
            }
        }
    }

    struct GatedVfs(Arc<Gate>);
    struct GatedFile(Arc<Gate>, Arc<dyn crate::vfs::VfsFile>);

    impl Vfs for GatedVfs {
        fn open(
            &self,
            path: &std::path::Path,
            create: bool,
        ) -> std::io::Result<Arc<dyn crate::vfs::VfsFile>> {
            Ok(Arc::new(GatedFile(
                self.0.clone(),
                OsVfs.open(path, create)?,
            )))
        }
        fn remove(&self, path: &std::path::Path) -> std::io::Result<()> {
            OsVfs.remove(path)
        }
        fn exists(&self, path: &std::path::Path) -> bool {
            OsVfs.exists(path)
        }
        fn create_dir_all(&self, path: &std::path::Path) -> std::io::Result<()> {
            OsVfs.create_dir_all(path)
        }
        fn rename(&self, from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
            OsVfs.rename(from, to)
        }
        fn sync_dir(&self, path: &std::path::Path) -> std::io::Result<()> {
            OsVfs.sync_dir(path)
        }
        fn list_dir(&self, path: &std::path::Path) -> std::io::Result<Vec<String>> {
            OsVfs.list_dir(path)
        }
    }

    impl crate::vfs::VfsFile for GatedFile {
        fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
            self.1.read_at(buf, offset)
        }
        fn write_all_at(&self, buf: &[u8], offset: u64) -> std::io::Result<()> {
            self.0.pass();
            self.1.write_all_at(buf, offset)
        }
        fn sync(&self) -> std::io::Result<()> {
            self.1.sync()
        }
        fn len(&self) -> std::io::Result<u64> {
            self.1.len()
        }
        fn set_len(&self, len: u64) -> std::io::Result<()> {
            self.1.set_len(len)
        }
    }

    /// An evictor has taken a page's dirty flag but not written it yet when a checkpoint
    /// flushes: the checkpoint must not return (and move its redo point past the page's
    /// changes) before the page is in its file (buffer rule 10).
    #[test]
    fn flush_all_waits_for_a_write_back_in_flight() {
        let dir = tempfile::tempdir().expect("tempdir");
        let gate = Arc::new(Gate::default());
        gate.set_open(true);
        let vfs = Arc::new(GatedVfs(gate.clone()));
        let pool = BufferPool::new(Arc::new(Smgr::new(vfs, dir.path()).expect("smgr")), 1);
        pool.smgr().create(10).expect("create");
        let (_, mut b0) = pool.extend(10).expect("extend");
        stamp(&mut b0, 1);
        drop(b0);
        let (_, mut b1) = pool.extend(10).expect("extend");
        stamp(&mut b1, 2);
        drop(b1);
        // The one frame holds block 1, dirty. Reading block 0 evicts it; its write waits.
        gate.set_open(false);
        std::thread::scope(|s| {
            let evictor = s.spawn(|| read_stamp(&pool.read_buffer(10, 0).expect("read")));
            gate.wait_for_writer();
            s.spawn(|| {
                // Long enough that a flush_all that does not wait has long returned.
                std::thread::sleep(Duration::from_millis(300));
                gate.set_open(true);
            });
            pool.flush_all().expect("flush");
            let file = std::fs::read(dir.path().join(crate::smgr::relpath(10))).expect("read");
            let block1: &[u8; BLCKSZ] = file[BLCKSZ..2 * BLCKSZ].try_into().expect("block 1");
            assert_eq!(
                Page::new(block1).get_item(1),
                Some(&2u32.to_le_bytes()[..]),
                "block 1 is in its file when flush_all returns"
            );
            assert_eq!(evictor.join().expect("evictor"), 1);
        });
    }

    #[test]
    fn concurrent_readers_and_writers_under_eviction() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pool = pool(dir.path(), 8);
        pool.smgr().create(1).expect("create");
        const PAGES: u32 = 32;
        for _ in 0..PAGES {
            let (_, mut buf) = pool.extend(1).expect("extend");
            stamp(&mut buf, 0);
        }
        // Thread t increments the counter on pages with block % 4 == t and reads the rest.
        let visits = |t: u32| (0..200u32).map(move |round| (round * 3 + t * 5) % PAGES);
        let expected: usize = (0..4u32)
            .map(|t| visits(t).filter(|b| b % 4 == t).count())
            .sum();
        std::thread::scope(|s| {
            for t in 0..4u32 {
                let pool = &pool;
                s.spawn(move || {
                    for block in visits(t) {
                        let mut buf = pool.read_buffer(1, block).expect("read");
                        if block % 4 == t {
                            let mut g = buf.write();
                            let mut page = PageMut::new(&mut g);
                            let item = page.item_mut(1).expect("item");
                            let v = u32::from_le_bytes(item.try_into().expect("4 bytes"));
                            item.copy_from_slice(&(v + 1).to_le_bytes());
                        } else {
                            let _ = read_stamp(&buf);
                        }
                    }
                });
            }
        });
        pool.flush_all().expect("flush");
        let total: u32 = (0..PAGES)
            .map(|b| read_stamp(&pool.read_buffer(1, b).expect("read")))
            .sum();
        assert_eq!(total as usize, expected);
        assert!(expected > 0 && expected < 800);
    }

    #[test]
    fn per_relation_usage_is_counted_only_while_asked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pool = pool(dir.path(), 2);
        for rel in [1, 2] {
            pool.smgr().create(rel).expect("create");
            let (_, mut b) = pool.extend(rel).expect("extend");
            stamp(&mut b, rel);
        }
        drop(pool.read_buffer(1, 0).expect("read"));
        assert!(
            usage::take().is_empty(),
            "nothing counted while not tracking"
        );
        usage::start();
        drop(pool.read_buffer(1, 0).expect("read"));
        drop(pool.read_buffer(1, 0).expect("read"));
        // A third relation's page evicts one of the two frames: a write and a read.
        pool.smgr().create(3).expect("create");
        let (_, mut b) = pool.extend(3).expect("extend");
        stamp(&mut b, 3);
        drop(b);
        let total = usage::total();
        let counts = usage::take();
        assert_eq!(
            total.hits + total.reads,
            counts.values().map(|u| u.hits + u.reads).sum::<u64>()
        );
        assert_eq!(counts[&1].hits, 2);
        assert_eq!(counts[&3].reads, 1);
        let writes: u64 = counts.values().map(|u| u.writes).sum();
        assert!(writes <= 1);
        assert!(usage::take().is_empty(), "take stops tracking");
    }

    #[test]
    fn usage_started_twice_goes_on_counting() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pool = pool(dir.path(), 16);
        for rel in 1..=12 {
            pool.smgr().create(rel).expect("create");
            let (_, mut b) = pool.extend(rel).expect("extend");
            stamp(&mut b, rel);
        }
        assert!(usage::start());
        drop(pool.read_buffer(1, 0).expect("read"));
        assert!(!usage::start(), "already counting: the counts go on");
        // More relations than the short list holds.
        for rel in 1..=12 {
            drop(pool.read_buffer(rel, 0).expect("read"));
        }
        let counts = usage::take();
        assert_eq!(counts.len(), 12);
        assert_eq!(counts[&1].hits, 2);
        assert_eq!(counts[&12].hits, 1);
    }
}
