//! Transaction ids, commits, aborts, savepoints and snapshots through the real WAL, and
//! their recovery after a restart.

use std::sync::Arc;

use myriad_txn::{Isolation, Tx, TxnManager, XidStatus};
use storage::bufmgr::BufferPool;
use storage::smgr::Smgr;
use storage::vfs::{OsVfs, Vfs};
use storage::xlog::{self, Wal, WalOptions};

struct Db {
    mgr: Arc<TxnManager>,
    _wal: Arc<Wal>,
    _pool: BufferPool,
}

fn open(dir: &std::path::Path) -> Db {
    let vfs: Arc<dyn Vfs> = Arc::new(OsVfs);
    let smgr = Arc::new(Smgr::new(vfs.clone(), dir).unwrap());
    let mut pool = BufferPool::new(smgr, 64);
    let mgr = Arc::new(TxnManager::open(vfs.clone(), dir).unwrap());
    let (wal, _) = xlog::open_and_recover_with(
        vfs,
        dir,
        &mut pool,
        WalOptions::default(),
        &mut |r| mgr.redo(r),
        &|| mgr.checkpoint(),
    )
    .unwrap();
    mgr.attach_wal(wal.clone());
    Db {
        mgr,
        _wal: wal,
        _pool: pool,
    }
}

#[test]
fn snapshots_see_what_committed_before_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let a = Tx::new(db.mgr.clone(), 1);
    let b = Tx::new(db.mgr.clone(), 2);
    a.begin(Isolation::ReadCommitted, false);
    let xa = a.xid().unwrap();
    b.begin(Isolation::RepeatableRead, false);
    let snap_b = b.start_statement();
    assert!(
        snap_b.in_progress(xa),
        "a is running when b's snapshot is taken"
    );
    a.commit().unwrap();
    assert_eq!(db.mgr.status(xa).unwrap(), XidStatus::Committed);
    assert!(!db.mgr.is_running(xa));
    assert!(
        b.start_statement().in_progress(xa),
        "repeatable read keeps its snapshot"
    );
    let c = Tx::new(db.mgr.clone(), 3);
    c.begin(Isolation::ReadCommitted, false);
    assert!(!c.start_statement().in_progress(xa));
    assert_eq!(
        db.mgr.oldest_xmin(),
        xa,
        "b's snapshot holds the horizon back"
    );
    b.commit().unwrap();
    c.commit().unwrap();
    assert!(db.mgr.oldest_xmin() > xa);
}

#[test]
fn read_only_transactions_take_no_id() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let next = db.mgr.next_xid();
    let a = Tx::new(db.mgr.clone(), 1);
    a.begin(Isolation::ReadCommitted, false);
    a.start_statement();
    a.end_statement();
    a.commit().unwrap();
    assert_eq!(db.mgr.next_xid(), next);
    assert_eq!(a.top_xid(), None);
}

#[test]
fn savepoints_abort_and_release_subtransactions() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let t = Tx::new(db.mgr.clone(), 1);
    t.begin(Isolation::ReadCommitted, false);
    let top = t.xid().unwrap();
    t.savepoint("a");
    let sub_a = t.xid().unwrap();
    assert!(sub_a > top);
    t.savepoint("b");
    let sub_b = t.xid().unwrap();
    assert_eq!(t.rollback_to("a").unwrap(), 2);
    assert_eq!(db.mgr.status(sub_a).unwrap(), XidStatus::Aborted);
    assert_eq!(db.mgr.status(sub_b).unwrap(), XidStatus::Aborted);
    assert!(!t.is_mine(sub_a) && !t.is_mine(sub_b) && t.is_mine(top));
    assert!(t.has_savepoint("a") && !t.has_savepoint("b"));
    let sub_a2 = t.xid().unwrap();
    t.savepoint("c");
    let sub_c = t.xid().unwrap();
    t.release("a").unwrap();
    assert!(!t.has_savepoint("c"));
    assert_eq!(
        t.release("a").unwrap_err().code,
        common::SqlState::INVALID_SAVEPOINT_SPECIFICATION
    );
    t.commit().unwrap();
    for x in [top, sub_a2, sub_c] {
        assert_eq!(db.mgr.status(x).unwrap(), XidStatus::Committed, "{x}");
    }
}

#[test]
fn combo_cids_map_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let t = Tx::new(db.mgr.clone(), 1);
    t.begin(Isolation::ReadCommitted, false);
    let c1 = t.combo_cid(0, 3);
    let c2 = t.combo_cid(1, 3);
    assert_ne!(c1, c2);
    assert_eq!(t.combo_cid(0, 3), c1);
    assert_eq!(t.combo_parts(c2), Some((1, 3)));
}

#[test]
fn statuses_and_ids_survive_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let (committed, aborted, unfinished);
    {
        let db = open(dir.path());
        let t = Tx::new(db.mgr.clone(), 1);
        t.begin(Isolation::ReadCommitted, false);
        committed = t.xid().unwrap();
        t.commit().unwrap();
        t.begin(Isolation::ReadCommitted, false);
        aborted = t.xid().unwrap();
        t.abort().unwrap();
        let u = Tx::new(db.mgr.clone(), 2);
        u.begin(Isolation::ReadCommitted, false);
        unfinished = u.xid().unwrap();
        // A crash: the WAL is flushed (the commit did), nothing else is written.
        std::mem::forget(u);
        std::mem::forget(t);
        std::mem::forget(db);
    }
    let db = open(dir.path());
    assert_eq!(db.mgr.status(committed).unwrap(), XidStatus::Committed);
    // An abort record need not be flushed: lost or not, the id never counts as committed
    // and nothing runs it any more.
    for x in [aborted, unfinished] {
        assert_ne!(db.mgr.status(x).unwrap(), XidStatus::Committed);
        assert!(!db.mgr.is_running(x));
    }
    assert!(
        db.mgr.next_xid() > unfinished,
        "an id handed out before the crash is never handed out again"
    );
}

#[test]
fn ids_beyond_32_bits_work_and_persist() {
    let dir = tempfile::tempdir().unwrap();
    let far = (1u64 << 32) - 2;
    let mut xids = Vec::new();
    {
        let db = open(dir.path());
        db.mgr.advance_next_xid(far);
        let t = Tx::new(db.mgr.clone(), 1);
        for _ in 0..5 {
            t.begin(Isolation::ReadCommitted, false);
            xids.push(t.xid().unwrap());
            t.commit().unwrap();
        }
        assert!(xids[0] == far && *xids.last().unwrap() > u32::MAX as u64);
        let snap = db.mgr.snapshot(9);
        for x in &xids {
            assert!(!snap.in_progress(*x), "{x} is committed and in the past");
        }
        std::mem::forget(t);
        std::mem::forget(db);
    }
    let db = open(dir.path());
    for x in &xids {
        assert_eq!(db.mgr.status(*x).unwrap(), XidStatus::Committed);
    }
    assert!(db.mgr.next_xid() > *xids.last().unwrap());
}

#[test]
fn waiting_for_a_transaction_returns_its_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mgr = db.mgr.clone();
    let t = Tx::new(db.mgr.clone(), 1);
    t.begin(Isolation::ReadCommitted, false);
    let x = t.xid().unwrap();
    let waiter = std::thread::spawn(move || mgr.wait_for(x).unwrap());
    t.commit().unwrap();
    assert_eq!(waiter.join().unwrap(), XidStatus::Committed);
}

/// A checkpoint taken while transactions commit must not lose one: a commit whose record
/// lies before the checkpoint's redo point is not replayed, so its status has to be in the
/// commit log the checkpoint writes, even if the committer had not set it yet when the
/// redo point was taken.
#[test]
fn commits_racing_checkpoints_survive_a_crash() {
    const COMMITTERS: u32 = 3;
    const COMMITS: usize = 2000;
    let dir = tempfile::tempdir().unwrap();
    let committed: Vec<u64> = {
        let db = open(dir.path());
        // Each commit waits for its fsync between logging and setting its status: the
        // window a checkpoint must not slip through.
        let done = std::sync::atomic::AtomicBool::new(false);
        let committed = std::thread::scope(|s| {
            let checkpoints = s.spawn(|| {
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    xlog::checkpoint_with(&db._pool, &db._wal, &|| db.mgr.checkpoint()).unwrap();
                }
            });
            let committers: Vec<_> = (0..COMMITTERS)
                .map(|b| {
                    let mgr = db.mgr.clone();
                    s.spawn(move || {
                        let t = Tx::new(mgr, b + 1);
                        (0..COMMITS)
                            .map(|_| {
                                t.begin(Isolation::ReadCommitted, false);
                                let x = t.xid().unwrap();
                                t.commit().unwrap();
                                x
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            let all: Vec<u64> = committers
                .into_iter()
                .flat_map(|c| c.join().unwrap())
                .collect();
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            checkpoints.join().unwrap();
            all
        });
        // A crash: nothing but the log and what the checkpoints wrote survives.
        std::mem::forget(db);
        committed
    };
    let db = open(dir.path());
    let lost: Vec<u64> = committed
        .iter()
        .copied()
        .filter(|x| db.mgr.status(*x).unwrap() != XidStatus::Committed)
        .collect();
    assert!(lost.is_empty(), "committed transactions lost: {lost:?}");
}

#[test]
fn multixacts_are_forgotten_once_their_members_end() {
    use common::RowLockMode::{KeyShare, Share};
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let a = Tx::new(db.mgr.clone(), 1);
    let b = Tx::new(db.mgr.clone(), 2);
    a.begin(Isolation::ReadCommitted, false);
    b.begin(Isolation::ReadCommitted, false);
    let (xa, xb) = (a.xid().unwrap(), b.xid().unwrap());
    let held = db.mgr.create_multi(&[(xa, Share), (xb, KeyShare)]).unwrap();
    let ended = db.mgr.create_multi(&[(xa, Share)]).unwrap();
    assert!(
        held > xb && ended > held,
        "ids come from the transaction ids"
    );
    assert_eq!(db.mgr.next_xid(), ended + 1);
    assert!(!db.mgr.is_running(held), "a multixact never runs");
    let rel: common::RelId = 16384;
    let tid = |offset| common::ItemPointer { block: 0, offset };
    db.mgr
        .set_version_lockers(rel, tid(1), 77, &[(xa, KeyShare)]);
    db.mgr
        .set_version_lockers(rel, tid(2), 78, &[(xb, KeyShare)]);
    assert_eq!(db.mgr.version_lockers(rel, tid(1), 77), [(xa, KeyShare)]);
    assert_eq!(
        db.mgr.version_lockers(rel, tid(1), 79),
        [],
        "recorded with another updater: an older tuple's"
    );
    a.commit().unwrap();
    assert_eq!(
        db.mgr.multi_members(ended),
        [(xa, Share)],
        "kept until a sweep"
    );
    // Enough new multixacts to sweep: those without a running member go.
    for _ in 0..100 {
        db.mgr.create_multi(&[(xb, Share)]).unwrap();
    }
    assert_eq!(db.mgr.multi_members(ended), []);
    assert_eq!(db.mgr.version_lockers(rel, tid(1), 77), []);
    assert_eq!(
        db.mgr.multi_members(held),
        [(xa, Share), (xb, KeyShare)],
        "b still runs"
    );
    assert_eq!(db.mgr.version_lockers(rel, tid(2), 78), [(xb, KeyShare)]);
    b.abort().unwrap();
    for _ in 0..300 {
        db.mgr.create_multi(&[]).unwrap();
    }
    assert_eq!(db.mgr.multi_members(held), []);
    assert_eq!(db.mgr.version_lockers(rel, tid(2), 78), []);
}
