//! The bounded open-file cache in smgr (smgr rule 6): many more relations than open files
//! stay correct, no more than the limit is ever open, a file closed with unsynced writes
//! loses nothing, and a hit opens nothing.
//!
//! Every test wraps its file system in [`TrackingVfs`], which counts `open` calls and the
//! file handles alive at once (a handle is alive from `open` until its last `Arc` drops),
//! so the bound is checked on what the file system saw, not on smgr's own counters.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;

use common::RelId;
use common::ids::BlockNumber;
use common::limits::BLCKSZ;
use myriad_storage as storage;
use storage::simvfs::{SimRng, SimVfs};
use storage::smgr::{FdStats, Smgr};
use storage::vfs::{OsVfs, Vfs, VfsFile};

const DATA_DIR: &str = "/sim/data";
const FIRST_REL: RelId = 16384;

/// A [`Vfs`] that counts opens and live handles over another one.
struct TrackingVfs {
    inner: Arc<dyn Vfs>,
    opens: AtomicUsize,
    live: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
}

struct TrackedFile {
    inner: Arc<dyn VfsFile>,
    live: Arc<AtomicUsize>,
}

impl Drop for TrackedFile {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Ordering::SeqCst);
    }
}

impl VfsFile for TrackedFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        self.inner.read_at(buf, offset)
    }
    fn write_all_at(&self, buf: &[u8], offset: u64) -> std::io::Result<()> {
        self.inner.write_all_at(buf, offset)
    }
    fn sync(&self) -> std::io::Result<()> {
        self.inner.sync()
    }
    fn len(&self) -> std::io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.inner.set_len(len)
    }
}

impl TrackingVfs {
    fn new(inner: Arc<dyn Vfs>) -> Arc<TrackingVfs> {
        Arc::new(TrackingVfs {
            inner,
            opens: AtomicUsize::new(0),
            live: Arc::new(AtomicUsize::new(0)),
            peak: Arc::new(AtomicUsize::new(0)),
        })
    }

    fn opens(&self) -> usize {
        self.opens.load(Ordering::SeqCst)
    }

    fn live(&self) -> usize {
        self.live.load(Ordering::SeqCst)
    }

    fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }
}

impl Vfs for TrackingVfs {
    fn open(&self, path: &Path, create: bool) -> std::io::Result<Arc<dyn VfsFile>> {
        let inner = self.inner.open(path, create)?;
        self.opens.fetch_add(1, Ordering::SeqCst);
        let live = self.live.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(live, Ordering::SeqCst);
        Ok(Arc::new(TrackedFile {
            inner,
            live: Arc::clone(&self.live),
        }))
    }
    fn remove(&self, path: &Path) -> std::io::Result<()> {
        self.inner.remove(path)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn create_dir_all(&self, path: &Path) -> std::io::Result<()> {
        self.inner.create_dir_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        self.inner.rename(from, to)
    }
    fn sync_dir(&self, path: &Path) -> std::io::Result<()> {
        self.inner.sync_dir(path)
    }
    fn list_dir(&self, path: &Path) -> std::io::Result<Vec<String>> {
        self.inner.list_dir(path)
    }
}

/// The page written as version `version` of block `block` of `rel`: every byte depends
/// on all three, so a block read from the wrong file, place or time does not match.
fn page(rel: RelId, block: BlockNumber, version: u32) -> [u8; BLCKSZ] {
    let mut p = [0u8; BLCKSZ];
    p[0..4].copy_from_slice(&rel.to_le_bytes());
    p[4..8].copy_from_slice(&block.to_le_bytes());
    p[8..12].copy_from_slice(&version.to_le_bytes());
    let seed = rel
        .wrapping_mul(2_654_435_761)
        .wrapping_add(block.wrapping_mul(40_503))
        .wrapping_add(version.wrapping_mul(97));
    let mut pattern = [0u8; 244];
    for (i, b) in pattern.iter_mut().enumerate() {
        *b = (seed.wrapping_add(i as u32 * 7) >> 3) as u8;
    }
    // 244 does not divide 8180, so each repetition lands at a different phase.
    for chunk in p[12..].chunks_mut(pattern.len()) {
        chunk.copy_from_slice(&pattern[..chunk.len()]);
    }
    p
}

fn check_block(smgr: &Smgr, rel: RelId, block: BlockNumber, version: u32) {
    let mut buf = [0u8; BLCKSZ];
    smgr.read_block(rel, block, &mut buf)
        .unwrap_or_else(|e| panic!("read {rel}/{block}: {e}"));
    assert!(
        buf == page(rel, block, version),
        "block {block} of {rel}: expected version {version}, found rel {} block {} version {}",
        u32::from_le_bytes(buf[0..4].try_into().unwrap()),
        u32::from_le_bytes(buf[4..8].try_into().unwrap()),
        u32::from_le_bytes(buf[8..12].try_into().unwrap()),
    );
}

/// Smgr's counters agree with what the file system saw, and the bound held.
fn check_bound(smgr: &Smgr, vfs: &TrackingVfs, limit: usize) -> FdStats {
    let stats = smgr.fd_stats();
    assert_eq!(stats.max_open_files, limit);
    assert!(vfs.peak() <= limit, "{} files open at once", vfs.peak());
    assert!(stats.open_files <= limit, "{stats:?}");
    assert_eq!(stats.open_files, vfs.live(), "{stats:?}");
    assert_eq!(stats.misses, vfs.opens() as u64, "{stats:?}");
    stats
}

/// A tiny deterministic generator for the thread tests.
fn next(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    *state >> 33
}

/// 5,000 relations, 256 open files: create, write, then read and rewrite in rotation
/// (a stride through all relations, the worst case for any LRU) for three rounds,
/// growing some relations on the way. Every read returns the last write, every size is
/// right, no more than 256 files are ever open, and after `sync_all` a power loss keeps
/// everything (evicted files were synced when closed, open ones by `sync_all`).
#[test]
fn five_thousand_relations_in_rotation_with_256_open_files() {
    const RELS: u32 = 5000;
    const LIMIT: usize = 256;
    const STRIDE: u32 = 7919; // prime, so coprime to RELS: every relation once per round
    let sim = Arc::new(SimVfs::new());
    let vfs = TrackingVfs::new(sim.clone());
    let smgr = Smgr::with_max_open_files(vfs.clone(), Path::new(DATA_DIR), LIMIT).unwrap();
    // versions[i][b]: the version last written to block b of relation i.
    let mut versions: Vec<Vec<u32>> = vec![vec![0]; RELS as usize];
    for i in 0..RELS {
        let rel = FIRST_REL + i;
        smgr.create(rel).unwrap();
        assert_eq!(smgr.extend(rel).unwrap(), 0);
        smgr.write_block(rel, 0, &page(rel, 0, 0)).unwrap();
    }
    check_bound(&smgr, &vfs, LIMIT);
    for round in 1..=3u32 {
        for k in 0..RELS {
            let i = (k * STRIDE + round) % RELS;
            let rel = FIRST_REL + i;
            let blocks = &mut versions[i as usize];
            assert_eq!(smgr.nblocks(rel).unwrap() as usize, blocks.len());
            for (b, v) in blocks.iter().enumerate() {
                check_block(&smgr, rel, b as BlockNumber, *v);
            }
            if (i + round).is_multiple_of(3) {
                let b = smgr.extend(rel).unwrap();
                assert_eq!(b as usize, blocks.len());
                smgr.write_block(rel, b, &page(rel, b, 0)).unwrap();
                blocks.push(0);
            }
            let b = (i + round) as usize % blocks.len();
            blocks[b] = round;
            smgr.write_block(rel, b as BlockNumber, &page(rel, b as BlockNumber, round))
                .unwrap();
        }
        check_bound(&smgr, &vfs, LIMIT);
    }
    let stats = check_bound(&smgr, &vfs, LIMIT);
    assert_eq!(stats.open_files, LIMIT);
    // Nothing was closed but by eviction; a rotation misses on almost every relation.
    assert_eq!(stats.evictions, stats.misses - LIMIT as u64, "{stats:?}");
    assert!(stats.misses >= 3 * u64::from(RELS), "{stats:?}");
    assert!(stats.eviction_syncs > 0, "{stats:?}");

    smgr.sync_all().unwrap();
    drop((smgr, vfs));
    let crashed = Arc::new(sim.crash(&mut SimRng::new(5000)));
    drop(sim);
    let vfs = TrackingVfs::new(crashed);
    let smgr = Smgr::with_max_open_files(vfs.clone(), Path::new(DATA_DIR), LIMIT).unwrap();
    for (i, blocks) in versions.iter().enumerate() {
        let rel = FIRST_REL + i as u32;
        assert_eq!(smgr.nblocks(rel).unwrap() as usize, blocks.len());
        for (b, v) in blocks.iter().enumerate() {
            check_block(&smgr, rel, b as BlockNumber, *v);
        }
    }
    check_bound(&smgr, &vfs, LIMIT);
}

/// The same shape on the real file system with real descriptors, smaller: every
/// eviction of a written file is a real fsync.
#[test]
fn rotation_on_the_os_file_system() {
    const RELS: u32 = 600;
    const LIMIT: usize = 64;
    let dir = tempfile::tempdir().unwrap();
    let vfs = TrackingVfs::new(Arc::new(OsVfs));
    let smgr = Smgr::with_max_open_files(vfs.clone(), dir.path(), LIMIT).unwrap();
    for i in 0..RELS {
        let rel = FIRST_REL + i;
        smgr.create(rel).unwrap();
        smgr.extend(rel).unwrap();
        smgr.write_block(rel, 0, &page(rel, 0, 1)).unwrap();
    }
    for round in 0..2 {
        for k in 0..RELS {
            let rel = FIRST_REL + (k * 7 + round) % RELS;
            assert_eq!(smgr.nblocks(rel).unwrap(), 1);
            check_block(&smgr, rel, 0, 1);
        }
    }
    let stats = check_bound(&smgr, &vfs, LIMIT);
    assert!(stats.evictions > 0, "{stats:?}");
    smgr.sync_all().unwrap();
    drop(smgr);
    assert_eq!(vfs.live(), 0, "dropping smgr closes its files");

    // A fresh smgr over the same directory reads the sizes and data back.
    let vfs = TrackingVfs::new(Arc::new(OsVfs));
    let smgr = Smgr::with_max_open_files(vfs.clone(), dir.path(), LIMIT).unwrap();
    for i in 0..RELS {
        assert_eq!(smgr.nblocks(FIRST_REL + i).unwrap(), 1);
        check_block(&smgr, FIRST_REL + i, 0, 1);
    }
    check_bound(&smgr, &vfs, LIMIT);
}

/// Writes to a relation whose file is then evicted, followed by `sync_all` and a power
/// loss: the data is there. So it is when the power fails right after the eviction,
/// before any `sync_all`: the evictor synced the file before closing it.
#[test]
fn evicted_file_with_unsynced_writes_stays_durable() {
    for seed in 0..20 {
        let sim = Arc::new(SimVfs::new());
        let vfs = TrackingVfs::new(sim.clone());
        let smgr = Smgr::with_max_open_files(vfs.clone(), Path::new(DATA_DIR), 2).unwrap();
        let (a, b, c) = (FIRST_REL, FIRST_REL + 1, FIRST_REL + 2);
        for rel in [a, b, c] {
            smgr.create(rel).unwrap();
        }
        smgr.sync_all().unwrap(); // the files' names are durable; their contents are not
        smgr.extend(a).unwrap();
        smgr.write_block(a, 0, &page(a, 0, 7)).unwrap();
        // Write b and c so that a, the least recently used, is closed. (They must be
        // dirty too: the evictor prefers a clean file to one it would have to sync.)
        for rel in [b, c] {
            smgr.extend(rel).unwrap();
        }
        for v in 0..3 {
            for rel in [b, c] {
                smgr.write_block(rel, 0, &page(rel, 0, v)).unwrap();
            }
        }
        let stats = check_bound(&smgr, &vfs, 2);
        assert!(stats.eviction_syncs >= 1, "{stats:?}");

        // Power loss now, before any sync_all: a was synced when it was closed.
        let mut rng = SimRng::new(seed);
        let crashed = Arc::new(sim.crash(&mut rng));
        let after = Smgr::with_max_open_files(crashed, Path::new(DATA_DIR), 2).unwrap();
        assert_eq!(after.nblocks(a).unwrap(), 1, "seed {seed}");
        check_block(&after, a, 0, 7);

        // sync_all with a closed a, a written again (reopened, then closed again), and
        // power loss after it.
        smgr.write_block(a, 0, &page(a, 0, 8)).unwrap();
        smgr.write_block(b, 0, &page(b, 0, 9)).unwrap();
        smgr.extend(c).unwrap();
        smgr.sync_all().unwrap();
        let crashed = Arc::new(sim.crash(&mut rng));
        let after = Smgr::with_max_open_files(crashed, Path::new(DATA_DIR), 2).unwrap();
        check_block(&after, a, 0, 8);
        check_block(&after, b, 0, 9);
        assert_eq!(after.nblocks(c).unwrap(), 2);
        check_bound(&smgr, &vfs, 2);
    }
}

/// `forget` closes the file; unsynced writes are synced first, so a power loss right
/// after keeps them.
#[test]
fn forget_syncs_a_dirty_file_before_closing_it() {
    let sim = Arc::new(SimVfs::new());
    let vfs = TrackingVfs::new(sim.clone());
    let smgr = Smgr::with_max_open_files(vfs.clone(), Path::new(DATA_DIR), 4).unwrap();
    smgr.create(FIRST_REL).unwrap();
    smgr.sync_all().unwrap();
    smgr.extend(FIRST_REL).unwrap();
    smgr.write_block(FIRST_REL, 0, &page(FIRST_REL, 0, 3))
        .unwrap();
    smgr.forget(FIRST_REL);
    assert_eq!(smgr.fd_stats().open_files, 0);
    assert_eq!(vfs.live(), 0);
    let after = Smgr::new(
        Arc::new(sim.crash(&mut SimRng::new(1))),
        Path::new(DATA_DIR),
    )
    .unwrap();
    check_block(&after, FIRST_REL, 0, 3);
    // The forgotten relation is found again, size and all.
    assert_eq!(smgr.nblocks(FIRST_REL).unwrap(), 1);
    check_block(&smgr, FIRST_REL, 0, 3);
}

/// An fsync that fails while evicting: the operation that needed the slot fails, the
/// dirty file stays open and flagged (the obligation is not lost), and once fsync works
/// again `sync_all` makes the data durable.
#[test]
fn failed_fsync_at_eviction_keeps_the_file_and_its_obligation() {
    let sim = Arc::new(SimVfs::new());
    let vfs = TrackingVfs::new(sim.clone());
    let smgr = Smgr::with_max_open_files(vfs.clone(), Path::new(DATA_DIR), 2).unwrap();
    let (a, b, c) = (FIRST_REL, FIRST_REL + 1, FIRST_REL + 2);
    for rel in [a, b] {
        smgr.create(rel).unwrap();
    }
    smgr.sync_all().unwrap();
    for rel in [a, b] {
        smgr.extend(rel).unwrap();
        smgr.write_block(rel, 0, &page(rel, 0, 1)).unwrap();
    }
    sim.fail_syncs_after(Some(0));
    let e = smgr
        .create(c)
        .expect_err("no clean file to close, and fsync fails");
    assert!(e.message.contains("could not fsync file"), "{}", e.message);
    let stats = check_bound(&smgr, &vfs, 2);
    assert_eq!(stats.open_files, 2);
    assert_eq!(stats.eviction_syncs, 0);
    assert!(smgr.sync_all().is_err());

    sim.fail_syncs_after(None);
    smgr.sync_all().unwrap();
    let after = Smgr::new(
        Arc::new(sim.crash(&mut SimRng::new(2))),
        Path::new(DATA_DIR),
    )
    .unwrap();
    for rel in [a, b] {
        check_block(&after, rel, 0, 1);
    }
    // Both are clean now, so c gets a slot without an fsync.
    smgr.create(c).unwrap();
    assert_eq!(smgr.fd_stats().eviction_syncs, 0);
    check_bound(&smgr, &vfs, 2);
}

/// Once a relation's file is open, reads, writes, extends, syncs, size and existence
/// questions open nothing; and size and existence of relations whose files are closed
/// open nothing either (smgr rules 1 and 6).
#[test]
fn hits_and_cached_facts_open_nothing() {
    let vfs = TrackingVfs::new(Arc::new(SimVfs::new()));
    let smgr = Smgr::with_max_open_files(vfs.clone(), Path::new(DATA_DIR), 16).unwrap();
    let rels: Vec<RelId> = (0..10).map(|i| FIRST_REL + i).collect();
    for &rel in &rels {
        smgr.create(rel).unwrap();
        smgr.extend(rel).unwrap();
    }
    let before = smgr.fd_stats();
    let opens = vfs.opens();
    let mut buf = [0u8; BLCKSZ];
    let mut uses = 0;
    for round in 0..100u32 {
        for &rel in &rels {
            assert!(smgr.exists(rel));
            let n = smgr.nblocks(rel).unwrap();
            smgr.write_block(rel, n - 1, &page(rel, n - 1, round))
                .unwrap();
            smgr.read_block(rel, n - 1, &mut buf).unwrap();
            uses += 2;
            if round % 10 == 0 {
                smgr.extend(rel).unwrap();
                smgr.sync(rel).unwrap();
                uses += 2;
            }
        }
    }
    let after = smgr.fd_stats();
    assert_eq!(vfs.opens(), opens, "a hit opened a file");
    assert_eq!(after.misses, before.misses);
    assert_eq!(after.hits - before.hits, uses);

    // Now more relations than slots: sizes and existence of closed files stay cached.
    let many: Vec<RelId> = (100..140).map(|i| FIRST_REL + i).collect();
    for &rel in &many {
        smgr.create(rel).unwrap();
        smgr.extend(rel).unwrap();
    }
    let opens = vfs.opens();
    for _ in 0..10 {
        for &rel in rels.iter().chain(&many) {
            assert!(smgr.exists(rel));
            assert!(smgr.nblocks(rel).unwrap() >= 1);
        }
    }
    assert!(!smgr.exists(FIRST_REL + 1000));
    assert_eq!(vfs.opens(), opens);
    check_bound(&smgr, &vfs, 16);
}

/// A relation used between every two cold ones keeps its file under a scan of many cold
/// relations (the clock's second chance): it is opened once.
#[test]
fn hot_relation_survives_a_scan() {
    let vfs = TrackingVfs::new(Arc::new(SimVfs::new()));
    let smgr = Smgr::with_max_open_files(vfs.clone(), Path::new(DATA_DIR), 8).unwrap();
    let hot = FIRST_REL;
    smgr.create(hot).unwrap();
    smgr.extend(hot).unwrap();
    let mut buf = [0u8; BLCKSZ];
    for i in 1..=100 {
        smgr.create(FIRST_REL + i).unwrap();
        smgr.read_block(hot, 0, &mut buf).unwrap();
    }
    let stats = check_bound(&smgr, &vfs, 8);
    assert_eq!(
        stats.misses, 101,
        "the hot relation was reopened: {stats:?}"
    );
    assert_eq!(stats.hits, 101, "{stats:?}");
}

/// `unlink` closes an open file without syncing it and frees its slot.
#[test]
fn unlink_frees_the_slot() {
    let vfs = TrackingVfs::new(Arc::new(SimVfs::new()));
    let smgr = Smgr::with_max_open_files(vfs.clone(), Path::new(DATA_DIR), 3).unwrap();
    for i in 0..3 {
        smgr.create(FIRST_REL + i).unwrap();
        smgr.extend(FIRST_REL + i).unwrap();
    }
    smgr.unlink(FIRST_REL + 1).unwrap();
    assert_eq!(smgr.fd_stats().open_files, 2);
    assert_eq!(vfs.live(), 2);
    smgr.create(FIRST_REL + 3).unwrap();
    let stats = check_bound(&smgr, &vfs, 3);
    assert_eq!(stats.evictions, 0, "{stats:?}");
    assert_eq!(stats.eviction_syncs, 0, "{stats:?}");
    assert!(!smgr.exists(FIRST_REL + 1));
    assert!(smgr.nblocks(FIRST_REL + 1).is_err());
}

/// Several threads read many relations through 8 open files while two others write
/// their own relations and one keeps calling `forget`: every read sees the right bytes,
/// every writer reads back its own last write, and no more than 8 files are ever open.
#[test]
fn concurrent_readers_and_writers_under_a_tiny_limit() {
    const LIMIT: usize = 8;
    const READ_RELS: u32 = 40;
    const BLOCKS: u32 = 3;
    const READERS: u64 = 6;
    const WRITERS: u32 = 2;
    const WRITER_RELS: u32 = 5;
    let vfs = TrackingVfs::new(Arc::new(SimVfs::new()));
    let smgr =
        Arc::new(Smgr::with_max_open_files(vfs.clone(), Path::new(DATA_DIR), LIMIT).unwrap());
    let writer_rel = |w: u32, j: u32| FIRST_REL + 1000 + w * WRITER_RELS + j;
    for i in 0..READ_RELS {
        let rel = FIRST_REL + i;
        smgr.create(rel).unwrap();
        for b in 0..BLOCKS {
            smgr.extend(rel).unwrap();
            smgr.write_block(rel, b, &page(rel, b, 1)).unwrap();
        }
    }
    for w in 0..WRITERS {
        for j in 0..WRITER_RELS {
            smgr.create(writer_rel(w, j)).unwrap();
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    for t in 0..READERS {
        let smgr = Arc::clone(&smgr);
        threads.push(thread::spawn(move || {
            let mut state = t + 1;
            let mut buf = [0u8; BLCKSZ];
            for _ in 0..3000 {
                let rel = FIRST_REL + (next(&mut state) % u64::from(READ_RELS)) as u32;
                let b = (next(&mut state) % u64::from(BLOCKS)) as u32;
                assert_eq!(smgr.nblocks(rel).unwrap(), BLOCKS);
                smgr.read_block(rel, b, &mut buf).unwrap();
                assert!(buf == page(rel, b, 1), "reader {t}: {rel}/{b}");
            }
        }));
    }
    for w in 0..WRITERS {
        let smgr = Arc::clone(&smgr);
        threads.push(thread::spawn(move || {
            let mut state = 100 + u64::from(w);
            for version in 0..600u32 {
                let rel = writer_rel(w, (next(&mut state) % u64::from(WRITER_RELS)) as u32);
                let n = smgr.nblocks(rel).unwrap();
                let b = if n < 4 {
                    smgr.extend(rel).unwrap()
                } else {
                    version % n
                };
                smgr.write_block(rel, b, &page(rel, b, version)).unwrap();
                check_block(&smgr, rel, b, version);
            }
        }));
    }
    let forgetter = {
        let smgr = Arc::clone(&smgr);
        let stop = Arc::clone(&stop);
        thread::spawn(move || {
            let mut state = 7;
            while !stop.load(Ordering::Relaxed) {
                smgr.forget(FIRST_REL + (next(&mut state) % u64::from(READ_RELS)) as u32);
                thread::yield_now();
            }
        })
    };
    for t in threads {
        t.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    forgetter.join().unwrap();
    let stats = check_bound(&smgr, &vfs, LIMIT);
    assert!(stats.hits + stats.misses >= READERS * 3000, "{stats:?}");
    assert!(stats.evictions > 0, "{stats:?}");
}
