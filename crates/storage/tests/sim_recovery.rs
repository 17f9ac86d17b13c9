//! Recovery through the simulated file system: power loss drops every write not covered
//! by a completed fsync and may tear one, and recovery must still find every change that
//! was acknowledged (the WAL flushed), keep each mini-transaction all-or-nothing, and never
//! show a change that was not logged.
//!
//! The workload: pairs of pages (block `i` of two relations) carry 16 counters each in
//! their special space; one mini-transaction increments counter `k` on both pages of a
//! pair, so after any crash both must agree (atomicity), and each counter lies between
//! what was acknowledged and what was attempted (durability, no phantom writes). A pool of
//! a few pages forces write-back; random checkpoints move the redo point.
//!
//! `MYRIAD_FUZZ_SEED=N` replays one seed; `MYRIAD_SIM_SEEDS` runs more.

use std::path::Path;

use myriad_storage as storage;
use std::sync::Arc;

use common::ids::BlockNumber;
use common::limits::BLCKSZ;
use storage::Mtr;
use storage::bufmgr::BufferPool;
use storage::page::{Page, PageMut};
use storage::simvfs::{SimRng, SimVfs};
use storage::smgr::Smgr;
use storage::vfs::Vfs;
use storage::xlog::{self, Wal, WalOptions};

const RELS: [u32; 2] = [16384, 16385];
const PAIRS: usize = 6;
const SLOTS: usize = 16;
const SPECIAL: usize = SLOTS * 8;

struct Model {
    acked: [[u64; SLOTS]; PAIRS],
    attempted: [[u64; SLOTS]; PAIRS],
}

fn open(vfs: Arc<SimVfs>) -> (BufferPool, Arc<Wal>) {
    let dir = Path::new("/sim/data");
    let vfs: Arc<dyn Vfs> = vfs;
    vfs.create_dir_all(dir).unwrap();
    let smgr = Arc::new(Smgr::new(vfs.clone(), dir).unwrap());
    let mut pool = BufferPool::new(smgr, 5);
    let (wal, _) = xlog::open_and_recover(
        vfs,
        dir,
        &mut pool,
        WalOptions {
            segment_size: xlog::MIN_WAL_SEGMENT_SIZE,
            synchronous_commit: true,
        },
    )
    .expect("recovery");
    (pool, wal)
}

fn slot_offset(k: usize) -> usize {
    BLCKSZ - SPECIAL + k * 8
}

fn counter(page: &[u8; BLCKSZ], k: usize) -> u64 {
    let o = slot_offset(k);
    u64::from_le_bytes(page[o..o + 8].try_into().unwrap())
}

/// The counters of block `block` of `rel`, zeros if the block or relation is not there.
fn read_counters(pool: &BufferPool, rel: u32, block: BlockNumber) -> [u64; SLOTS] {
    let mut out = [0; SLOTS];
    if !pool.smgr().exists(rel) || pool.smgr().nblocks(rel).unwrap() <= block {
        return out;
    }
    let buf = pool.read_buffer(rel, block).expect("read after recovery");
    let page = buf.read();
    if Page::new(&page).is_new() {
        return out;
    }
    for (k, v) in out.iter_mut().enumerate() {
        *v = counter(&page, k);
    }
    out
}

/// One step: increment counter `k` of pair `i` on both pages in one mini-transaction.
fn increment(pool: &BufferPool, i: usize, k: usize) -> common::PgResult<()> {
    for rel in RELS {
        while pool.smgr().nblocks(rel)? <= i as BlockNumber {
            pool.extend(rel)?;
        }
    }
    let mut a = pool.read_buffer(RELS[0], i as BlockNumber)?;
    let mut b = pool.read_buffer(RELS[1], i as BlockNumber)?;
    let mut mtr = Mtr::new(pool);
    let pa = mtr.latch(&mut a);
    let pb = mtr.latch(&mut b);
    for p in [pa, pb] {
        let page = mtr.page(p);
        if Page::new(page).is_new() {
            PageMut::new(page).init(SPECIAL);
        }
        let o = slot_offset(k);
        let v = counter(page, k) + 1;
        page[o..o + 8].copy_from_slice(&v.to_le_bytes());
    }
    mtr.commit()?;
    Ok(())
}

fn verify(pool: &BufferPool, model: &mut Model, seed: u64, round: u32) {
    for i in 0..PAIRS {
        let a = read_counters(pool, RELS[0], i as BlockNumber);
        let b = read_counters(pool, RELS[1], i as BlockNumber);
        assert_eq!(a, b, "seed {seed} round {round}: pair {i} disagrees");
        for (k, &v) in a.iter().enumerate() {
            let (acked, attempted) = (model.acked[i][k], model.attempted[i][k]);
            assert!(
                acked <= v && v <= attempted,
                "seed {seed} round {round}: counter {i}.{k} is {v}, acknowledged {acked}, attempted {attempted}"
            );
            model.acked[i][k] = v;
            model.attempted[i][k] = v;
        }
    }
}

fn run_seed(seed: u64, fail_syncs: bool) {
    eprintln!("seed {seed}");
    let mut rng = SimRng::new(seed);
    let mut vfs = Arc::new(SimVfs::new());
    let mut model = Model {
        acked: [[0; SLOTS]; PAIRS],
        attempted: [[0; SLOTS]; PAIRS],
    };
    {
        let (pool, wal) = open(vfs.clone());
        for rel in RELS {
            pool.create_relation(rel).unwrap();
        }
        wal.commit().unwrap();
        pool.smgr().sync_all().unwrap();
    }
    for round in 0..4 {
        let (pool, wal) = open(vfs.clone());
        verify(&pool, &mut model, seed, round);
        let ops = rng.below(400);
        let fail_at = fail_syncs.then(|| rng.below(ops.max(1)));
        for op in 0..ops {
            if fail_at == Some(op) {
                // A failing fsync, or a failing write (a full disk).
                if rng.chance(50) {
                    vfs.fail_syncs_after(Some(rng.below(3)));
                } else {
                    vfs.fail_writes_after(Some(rng.below(20)));
                }
            }
            let (i, k) = (
                rng.below(PAIRS as u64) as usize,
                rng.below(SLOTS as u64) as usize,
            );
            model.attempted[i][k] += 1;
            if increment(&pool, i, k).is_err() {
                // A failed step never counts as acknowledged; the log refuses more.
                break;
            }
            if rng.chance(40) {
                if wal.commit().is_err() {
                    break;
                }
                model.acked = model.attempted;
            }
            if rng.chance(3) && xlog::checkpoint(&pool, &wal).is_err() {
                break;
            }
        }
        vfs = Arc::new(vfs.crash(&mut rng));
    }
    let (pool, _wal) = open(vfs);
    verify(&pool, &mut model, seed, 4);
}

#[test]
fn power_loss_keeps_acknowledged_changes_and_atomic_steps() {
    for seed in storage::simvfs::seeds(40) {
        run_seed(seed, false);
    }
}

#[test]
fn failed_fsync_or_write_refuses_writes_and_recovery_keeps_acknowledged_changes() {
    for seed in storage::simvfs::seeds(40) {
        run_seed(seed, true);
    }
}

#[test]
fn a_failed_data_fsync_stops_writes_until_a_restart() {
    let vfs = Arc::new(SimVfs::new());
    let mut rng = SimRng::new(7);
    {
        let (pool, wal) = open(vfs.clone());
        for rel in RELS {
            pool.create_relation(rel).unwrap();
        }
        increment(&pool, 0, 0).unwrap();
        wal.commit().unwrap();
        // The checkpoint's fsync of the data files fails.
        vfs.fail_syncs_after(Some(0));
        let e = xlog::checkpoint(&pool, &wal).unwrap_err();
        assert_eq!(e.code, common::SqlState::IO_ERROR, "{}", e.message);
        vfs.fail_syncs_after(None);
        // fsync works again, but nothing more is written or acknowledged, nor does a
        // checkpoint move the redo point (smgr rule 7).
        assert!(increment(&pool, 0, 1).is_err());
        assert!(wal.commit().is_err());
        assert!(xlog::checkpoint(&pool, &wal).is_err());
    }
    // After a restart (here through a power loss) the acknowledged change is there.
    let (pool, wal) = open(Arc::new(vfs.crash(&mut rng)));
    assert_eq!(read_counters(&pool, RELS[0], 0)[0], 1);
    increment(&pool, 0, 1).unwrap();
    wal.commit().unwrap();
}

/// A truncation survives a crash, wherever it falls: the relation comes back cut to the
/// blocks kept, their contents whole, even when the pages past the cut were logged after
/// the last checkpoint (replay extends the file for them, then the truncation record
/// cuts it again). The record is flushed before the file is cut, so a crash after the
/// cut never finds the longer file without its record.
#[test]
fn a_truncation_is_replayed_after_a_crash() {
    const REL: u32 = 16390;
    for seed in 0..40u64 {
        let mut rng = SimRng::new(seed);
        let vfs = Arc::new(SimVfs::new());
        let keep: BlockNumber = 1 + rng.below(5) as BlockNumber;
        {
            let (pool, wal) = open(vfs.clone());
            pool.create_relation(REL).unwrap();
            let checkpoint_after = rng.below(10) as BlockNumber;
            for block in 0..10 {
                let (_, mut buf) = pool.extend(REL).unwrap();
                let mut mtr = Mtr::new(&pool);
                let p = mtr.latch(&mut buf);
                let mut page = PageMut::new(mtr.page(p));
                page.init(0);
                page.add_item(&[block as u8 + 1; 32]).expect("fits");
                mtr.commit().unwrap();
                if block == checkpoint_after {
                    xlog::checkpoint(&pool, &wal).unwrap();
                }
            }
            wal.commit().unwrap();
            pool.truncate_relation(REL, keep).unwrap();
            assert_eq!(pool.smgr().nblocks(REL).unwrap(), keep);
            if rng.chance(50) {
                xlog::checkpoint(&pool, &wal).unwrap();
            }
        }
        let vfs = Arc::new(vfs.crash(&mut rng));
        let (pool, _wal) = open(vfs);
        assert_eq!(pool.smgr().nblocks(REL).unwrap(), keep, "seed {seed}");
        for block in 0..keep {
            let buf = pool.read_buffer(REL, block).unwrap();
            let data = buf.read();
            let item = Page::new(&data).get_item(1).expect("the page's item");
            assert_eq!(
                item,
                &[block as u8 + 1; 32][..],
                "seed {seed} block {block}"
            );
        }
    }
}
