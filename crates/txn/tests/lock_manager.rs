//! The lock manager seen by sessions: modes and conflicts, the fast path, queueing,
//! wait policies, counting and savepoint marks, introspection. No test asserts on time:
//! where one must know that a session waits, it polls `waiting_for`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use common::SqlState;
use myriad_txn::lock::{
    LockConfig, LockError, LockInfo, LockManager, LockMode, LockTag, WaitPolicy,
};

use LockMode::*;

const REL: LockTag = LockTag::Relation(16384);

fn manager() -> Arc<LockManager> {
    LockManager::new(LockConfig::default())
}

/// Blocks until session `pid` waits for a lock, and returns what it waits for.
fn await_waiting(mgr: &LockManager, pid: u32) -> (LockTag, LockMode) {
    for _ in 0..20_000 {
        if let Some(w) = mgr.waiting_for(pid) {
            return w;
        }
        thread::sleep(Duration::from_millis(1));
    }
    panic!("session {pid} never started waiting");
}

fn rows(mgr: &LockManager, pid: u32) -> Vec<LockInfo> {
    let mut rows: Vec<LockInfo> = mgr
        .snapshot()
        .into_iter()
        .filter(|r| r.pid == pid)
        .collect();
    rows.sort();
    rows
}

/// PostgreSQL's manual, "Conflicting Lock Modes": row = requested, column = existing, in
/// the order AccessShare .. AccessExclusive; X = conflict.
const PG_CONFLICTS: [&str; 8] = [
    ".......X", // ACCESS SHARE
    "......XX", // ROW SHARE
    "....XXXX", // ROW EXCLUSIVE
    "...XXXXX", // SHARE UPDATE EXCLUSIVE
    "..XX.XXX", // SHARE
    "..XXXXXX", // SHARE ROW EXCLUSIVE
    ".XXXXXXX", // EXCLUSIVE
    "XXXXXXXX", // ACCESS EXCLUSIVE
];

#[test]
fn conflict_table_matches_postgres() {
    let mgr = manager();
    let mut a = mgr.register(1);
    let mut b = mgr.register(2);
    for (i, held) in LockMode::ALL.into_iter().enumerate() {
        for (j, wanted) in LockMode::ALL.into_iter().enumerate() {
            let pg = PG_CONFLICTS[j].as_bytes()[i] == b'X';
            assert_eq!(wanted.conflicts_with(held), pg, "{wanted} vs {held}");
            // And the manager acts on it, through fast path and shared table alike.
            for tag in [REL, LockTag::Transaction(7)] {
                a.lock(tag, held, WaitPolicy::BLOCK).unwrap();
                let got = b.lock(tag, wanted, WaitPolicy::NOWAIT);
                assert_eq!(got.is_err(), pg, "{tag:?}: {wanted} while {held} is held");
                b.release_all();
                a.release_all();
            }
        }
    }
    assert!(mgr.snapshot().is_empty());
}

#[test]
fn mode_and_tag_names_are_postgres_names() {
    let names: Vec<&str> = LockMode::ALL.iter().map(|m| m.name()).collect();
    assert_eq!(
        names,
        [
            "AccessShareLock",
            "RowShareLock",
            "RowExclusiveLock",
            "ShareUpdateExclusiveLock",
            "ShareLock",
            "ShareRowExclusiveLock",
            "ExclusiveLock",
            "AccessExclusiveLock"
        ]
    );
    assert_eq!(REL.locktype(), "relation");
    assert_eq!(LockTag::Transaction(3).wait_event(), "transactionid");
    let tuple = LockTag::Tuple {
        rel: 16384,
        block: 2,
        offset: 7,
    };
    assert_eq!(tuple.wait_event(), "tuple");
}

#[test]
fn thousands_of_relations_stay_on_the_fast_path() {
    let mgr = manager();
    let mut a = mgr.register(1);
    let mut b = mgr.register(2);
    const N: u32 = 5000;
    for rel in 0..N {
        a.lock(
            LockTag::Relation(20_000 + rel),
            AccessShare,
            WaitPolicy::BLOCK,
        )
        .unwrap();
        b.lock(
            LockTag::Relation(20_000 + rel),
            RowExclusive,
            WaitPolicy::BLOCK,
        )
        .unwrap();
    }
    let snap = mgr.snapshot();
    assert_eq!(snap.len(), 2 * N as usize);
    assert!(snap.iter().all(|r| r.fastpath && r.granted));
    // A strong lock still sees them.
    let mut c = mgr.register(3);
    let last = LockTag::Relation(20_000 + N - 1);
    assert_eq!(
        c.lock(last, Share, WaitPolicy::NOWAIT),
        Err(LockError::NotAvailable)
    );
    // The failed request moved the entries for that relation only, and left nothing.
    let moved: Vec<LockInfo> = mgr.snapshot().into_iter().filter(|r| !r.fastpath).collect();
    assert_eq!(moved.len(), 2);
    assert!(moved.iter().all(|r| r.tag == last && r.granted));
    a.release_all();
    b.release_all();
    assert!(mgr.snapshot().is_empty());
    // The counter is back to 0: weak locks take the fast path again.
    a.lock(last, AccessShare, WaitPolicy::BLOCK).unwrap();
    assert!(rows(&mgr, 1)[0].fastpath);
}

#[test]
fn strong_locker_waits_for_fast_path_holders_and_weak_lockers_wait_behind_it() {
    let mgr = manager();
    let mut a = mgr.register(1);
    a.lock(REL, AccessShare, WaitPolicy::BLOCK).unwrap();
    assert!(rows(&mgr, 1)[0].fastpath);

    let (tx, rx) = mpsc::channel();
    let strong = {
        let (mgr, tx) = (Arc::clone(&mgr), tx.clone());
        thread::spawn(move || {
            let mut b = mgr.register(2);
            b.lock(REL, AccessExclusive, WaitPolicy::BLOCK).unwrap();
            tx.send("strong granted").unwrap();
            b.release_all();
        })
    };
    assert_eq!(await_waiting(&mgr, 2), (REL, AccessExclusive));
    // A's lock moved to the shared table; B's request waits there.
    assert_eq!(
        rows(&mgr, 1),
        [LockInfo {
            tag: REL,
            mode: AccessShare,
            granted: true,
            fastpath: false,
            pid: 1
        }]
    );
    assert!(!rows(&mgr, 2)[0].granted);

    let weak = {
        let mgr = Arc::clone(&mgr);
        thread::spawn(move || {
            let mut c = mgr.register(3);
            c.lock(REL, AccessShare, WaitPolicy::BLOCK).unwrap();
            tx.send("weak granted").unwrap();
            c.release_all();
        })
    };
    // C conflicts with nothing granted, but with B ahead of it in the queue.
    assert_eq!(await_waiting(&mgr, 3), (REL, AccessShare));
    a.release_all();
    assert_eq!(rx.recv().unwrap(), "strong granted");
    assert_eq!(rx.recv().unwrap(), "weak granted");
    strong.join().unwrap();
    weak.join().unwrap();
    assert!(mgr.snapshot().is_empty());
}

#[test]
fn waiters_are_granted_in_arrival_order() {
    let mgr = manager();
    let mut holder = mgr.register(1);
    holder.lock(REL, Share, WaitPolicy::BLOCK).unwrap();
    let (tx, rx) = mpsc::channel();
    let mut threads = Vec::new();
    // Exclusive waiters arrive in pid order; each holds its lock until the next one is
    // queued, so they are granted one at a time.
    for (pid, mode) in [
        (2, Exclusive),
        (3, RowExclusive),
        (4, AccessExclusive),
        (5, Exclusive),
    ] {
        let (m, tx) = (Arc::clone(&mgr), tx.clone());
        threads.push(thread::spawn(move || {
            let mut s = m.register(pid);
            s.lock(REL, mode, WaitPolicy::BLOCK).unwrap();
            tx.send(pid).unwrap();
            s.release_all();
        }));
        assert_eq!(await_waiting(&mgr, pid), (REL, mode));
    }
    // A newcomer compatible with the holder still queues behind the waiters.
    let mut late = mgr.register(6);
    assert_eq!(
        late.lock(REL, AccessShare, WaitPolicy::NOWAIT),
        Err(LockError::NotAvailable)
    );
    holder.release_all();
    let order: Vec<u32> = (0..4).map(|_| rx.recv().unwrap()).collect();
    assert_eq!(order, [2, 3, 4, 5]);
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn a_holder_upgrading_goes_ahead_of_waiters_it_blocks() {
    let mgr = manager();
    let mut a = mgr.register(1);
    a.lock(REL, AccessShare, WaitPolicy::BLOCK).unwrap();
    let strong = {
        let mgr = Arc::clone(&mgr);
        thread::spawn(move || {
            let mut b = mgr.register(2);
            b.lock(REL, AccessExclusive, WaitPolicy::BLOCK).unwrap();
            b.release_all();
        })
    };
    await_waiting(&mgr, 2);
    // RowExclusive conflicts with B's waiting AccessExclusive, but B waits for A anyway:
    // A goes first and gets it at once.
    a.lock(REL, RowExclusive, WaitPolicy::NOWAIT).unwrap();
    a.release_all();
    strong.join().unwrap();
}

#[test]
fn nowait_fails_at_once_with_55p03() {
    let mgr = manager();
    let mut a = mgr.register(1);
    let mut b = mgr.register(2);
    a.lock(REL, RowExclusive, WaitPolicy::BLOCK).unwrap();
    let err = b.lock(REL, Share, WaitPolicy::NOWAIT).unwrap_err();
    assert_eq!(err, LockError::NotAvailable);
    let pg = err.to_pg("relation \"t\"");
    assert_eq!(pg.code, SqlState::LOCK_NOT_AVAILABLE);
    assert_eq!(pg.message, "could not obtain lock on relation \"t\"");
    assert!(!b.holds(REL, Share));
    assert!(rows(&mgr, 2).is_empty());
}

#[test]
fn lock_timeout_and_statement_timeout() {
    let mgr = manager();
    let mut a = mgr.register(1);
    let mut b = mgr.register(2);
    a.lock(REL, AccessExclusive, WaitPolicy::BLOCK).unwrap();

    let lock_timeout = WaitPolicy::BLOCK.with_lock_timeout(Duration::from_millis(10));
    let err = b.lock(REL, AccessShare, lock_timeout).unwrap_err();
    assert_eq!(err, LockError::LockTimeout);
    let pg = err.to_pg("relation \"t\"");
    assert_eq!(pg.code, SqlState::LOCK_NOT_AVAILABLE);
    assert_eq!(pg.message, "canceling statement due to lock timeout");

    let stmt =
        WaitPolicy::BLOCK.with_statement_deadline(Instant::now() + Duration::from_millis(10));
    let err = b.lock(REL, AccessShare, stmt).unwrap_err();
    assert_eq!(err, LockError::StatementTimeout);
    let pg = err.to_pg("relation \"t\"");
    assert_eq!(pg.code, SqlState::QUERY_CANCELED);
    assert_eq!(pg.message, "canceling statement due to statement timeout");

    // Both set: the one that runs out first is reported.
    let both = WaitPolicy::BLOCK
        .with_lock_timeout(Duration::from_secs(3600))
        .with_statement_deadline(Instant::now() + Duration::from_millis(10));
    assert_eq!(
        b.lock(REL, AccessShare, both),
        Err(LockError::StatementTimeout)
    );

    assert!(
        rows(&mgr, 2).is_empty(),
        "a timed-out request leaves nothing"
    );
    a.release_all();
    b.lock(REL, AccessShare, WaitPolicy::NOWAIT).unwrap();
}

#[test]
fn cancel_stops_a_wait_with_57014() {
    let mgr = manager();
    let mut a = mgr.register(1);
    a.lock(REL, AccessExclusive, WaitPolicy::BLOCK).unwrap();
    for interrupt in [true, false] {
        let flag = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (mgr, flag) = (Arc::clone(&mgr), Arc::clone(&flag));
            thread::spawn(move || {
                let mut b = mgr.register(2);
                b.set_cancel(flag);
                b.lock(REL, AccessShare, WaitPolicy::BLOCK)
            })
        };
        await_waiting(&mgr, 2);
        flag.store(true, Ordering::Release);
        if interrupt {
            assert!(mgr.interrupt(2));
        } // else the waiter notices at its next poll
        let err = waiter.join().unwrap().unwrap_err();
        assert_eq!(err, LockError::Canceled);
        let pg = err.to_pg("relation \"t\"");
        assert_eq!(pg.code, SqlState::QUERY_CANCELED);
        assert_eq!(pg.message, "canceling statement due to user request");
    }
    assert_eq!(mgr.snapshot().len(), 1, "only A's lock is left");
}

#[test]
fn takes_are_counted() {
    let mgr = manager();
    let mut a = mgr.register(1);
    let mut b = mgr.register(2);
    for tag in [REL, LockTag::Transaction(9)] {
        a.lock(tag, RowExclusive, WaitPolicy::BLOCK).unwrap();
        a.lock(tag, RowExclusive, WaitPolicy::BLOCK).unwrap();
        assert!(a.unlock(tag, RowExclusive));
        assert!(a.holds(tag, RowExclusive));
        assert!(b.lock(tag, Share, WaitPolicy::NOWAIT).is_err());
        assert!(a.unlock(tag, RowExclusive));
        assert!(!a.holds(tag, RowExclusive));
        assert!(!a.unlock(tag, RowExclusive), "not held any more");
        b.lock(tag, Share, WaitPolicy::NOWAIT).unwrap();
        b.release_all();
    }
    assert!(mgr.snapshot().is_empty());
}

#[test]
fn release_since_mark_undoes_a_savepoint() {
    let mgr = manager();
    let mut a = mgr.register(1);
    let (r1, r2, r3) = (
        LockTag::Relation(1),
        LockTag::Relation(2),
        LockTag::Relation(3),
    );
    a.lock(r1, AccessShare, WaitPolicy::BLOCK).unwrap();
    let sp1 = a.mark();
    a.lock(r2, AccessShare, WaitPolicy::BLOCK).unwrap();
    a.lock(r1, AccessShare, WaitPolicy::BLOCK).unwrap(); // again, inside the savepoint
    let sp2 = a.mark();
    a.lock(r3, AccessExclusive, WaitPolicy::BLOCK).unwrap();
    a.lock(r2, AccessShare, WaitPolicy::BLOCK).unwrap();

    a.release_since(sp2);
    assert!(!a.holds(r3, AccessExclusive));
    assert!(a.holds(r2, AccessShare));
    assert_eq!(a.held_count(), 2);

    a.release_since(sp1);
    assert!(!a.holds(r2, AccessShare));
    assert!(a.holds(r1, AccessShare));
    // r1 is back to one take: a single unlock releases it.
    assert!(a.unlock(r1, AccessShare));
    assert!(!a.holds(r1, AccessShare));
    assert!(mgr.snapshot().is_empty());

    // A lock released inside a savepoint stays released when it rolls back, and a lock
    // taken again after a rollback to the same mark is released by the next one.
    a.lock(r1, AccessShare, WaitPolicy::BLOCK).unwrap();
    let sp = a.mark();
    assert!(a.unlock(r1, AccessShare));
    a.lock(r2, RowExclusive, WaitPolicy::BLOCK).unwrap();
    a.release_since(sp);
    a.lock(r3, RowExclusive, WaitPolicy::BLOCK).unwrap();
    a.release_since(sp);
    assert_eq!(a.held_count(), 0);
    assert!(mgr.snapshot().is_empty());
}

#[test]
fn release_since_mark_releases_shared_and_strong_locks() {
    let mgr = manager();
    let mut a = mgr.register(1);
    let mut b = mgr.register(2);
    let sp = a.mark();
    a.lock(REL, AccessExclusive, WaitPolicy::BLOCK).unwrap();
    a.lock(LockTag::Transaction(5), Exclusive, WaitPolicy::BLOCK)
        .unwrap();
    a.release_since(sp);
    assert!(mgr.snapshot().is_empty());
    b.lock(REL, AccessShare, WaitPolicy::BLOCK).unwrap();
    assert!(
        rows(&mgr, 2)[0].fastpath,
        "the strong counter went back to 0"
    );
}

#[test]
fn waiting_for_a_transaction_and_what_pg_stat_activity_sees() {
    let mgr = manager();
    let mut owner = mgr.register(1);
    let xid = LockTag::Transaction(744);
    owner.lock(xid, Exclusive, WaitPolicy::BLOCK).unwrap();
    let waiter = {
        let mgr = Arc::clone(&mgr);
        thread::spawn(move || {
            let mut s = mgr.register(2);
            s.wait_for_transaction(744, WaitPolicy::BLOCK).unwrap();
            assert_eq!(s.held_count(), 0, "the ShareLock was dropped");
        })
    };
    let (tag, mode) = await_waiting(&mgr, 2);
    assert_eq!((tag, mode), (xid, Share));
    assert_eq!(tag.wait_event(), "transactionid");
    assert_eq!(mgr.waiting_for(1), None);
    let mut snap = mgr.snapshot();
    snap.sort();
    assert_eq!(
        snap,
        [
            LockInfo {
                tag: xid,
                mode: Share,
                granted: false,
                fastpath: false,
                pid: 2
            },
            LockInfo {
                tag: xid,
                mode: Exclusive,
                granted: true,
                fastpath: false,
                pid: 1
            },
        ]
        .into_iter()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
    );
    owner.release_all(); // commit
    waiter.join().unwrap();
    assert!(mgr.snapshot().is_empty());
}

#[test]
fn tuple_locks_queue_row_lockers() {
    let mgr = manager();
    let mut a = mgr.register(1);
    let mut b = mgr.register(2);
    let t = LockTag::Tuple {
        rel: 16384,
        block: 0,
        offset: 1,
    };
    a.lock(t, AccessExclusive, WaitPolicy::BLOCK).unwrap();
    assert_eq!(
        b.lock(t, AccessExclusive, WaitPolicy::NOWAIT),
        Err(LockError::NotAvailable)
    );
    let other = LockTag::Tuple {
        rel: 16384,
        block: 0,
        offset: 2,
    };
    b.lock(other, AccessExclusive, WaitPolicy::NOWAIT).unwrap();
    assert_eq!(t.describe(5), "tuple (0,1) of relation 16384 of database 5");
}

#[test]
fn dropping_a_session_releases_its_locks_and_its_pid() {
    let mgr = manager();
    let mut a = mgr.register(1);
    a.lock(REL, AccessShare, WaitPolicy::BLOCK).unwrap();
    a.lock(LockTag::Relation(2), AccessExclusive, WaitPolicy::BLOCK)
        .unwrap();
    drop(a);
    assert!(mgr.snapshot().is_empty());
    let mut again = mgr.register(1);
    again
        .lock(LockTag::Relation(2), AccessExclusive, WaitPolicy::NOWAIT)
        .unwrap();
}

#[test]
fn share_update_exclusive_lives_in_the_shared_table_without_disturbing_the_fast_path() {
    let mgr = manager();
    let mut vacuum = mgr.register(1);
    let mut dml = mgr.register(2);
    vacuum
        .lock(REL, ShareUpdateExclusive, WaitPolicy::BLOCK)
        .unwrap();
    dml.lock(REL, RowExclusive, WaitPolicy::NOWAIT).unwrap();
    assert!(!rows(&mgr, 1)[0].fastpath);
    assert!(rows(&mgr, 2)[0].fastpath);
    let mut vacuum2 = mgr.register(3);
    assert_eq!(
        vacuum2.lock(REL, ShareUpdateExclusive, WaitPolicy::NOWAIT),
        Err(LockError::NotAvailable)
    );
}

#[test]
fn a_sixteen_slot_fast_path_spills_to_the_shared_table() {
    let mgr = LockManager::new(LockConfig {
        fast_path_relations_max: Some(16),
        ..LockConfig::default()
    });
    let mut a = mgr.register(1);
    for rel in 0..20 {
        a.lock(LockTag::Relation(rel), AccessShare, WaitPolicy::BLOCK)
            .unwrap();
    }
    let fast = mgr.snapshot().iter().filter(|r| r.fastpath).count();
    assert_eq!(fast, 16);
    a.release_all();
    assert!(mgr.snapshot().is_empty());
}

#[test]
fn waiting_for_lockers_waits_for_their_transactions_not_for_later_ones() {
    let mgr = manager();
    let rel = 16384;
    let mut fast = mgr.register(1);
    let mut shared = mgr.register(2);
    let mut detacher = mgr.register(3);
    fast.lock(REL, AccessShare, WaitPolicy::BLOCK).unwrap();
    shared
        .lock(REL, ShareUpdateExclusive, WaitPolicy::BLOCK)
        .unwrap();
    // Its own lock is not waited for.
    detacher.lock(REL, AccessShare, WaitPolicy::BLOCK).unwrap();
    assert_eq!(
        detacher.wait_for_lockers(rel, WaitPolicy::NOWAIT),
        Err(LockError::NotAvailable)
    );
    let (done_tx, done_rx) = mpsc::channel();
    let waiter = thread::spawn(move || {
        let got = detacher.wait_for_lockers(rel, WaitPolicy::BLOCK);
        done_tx.send(()).unwrap();
        got
    });
    // Seen waiting, as for AccessExclusive on the relation.
    assert_eq!(await_waiting(&mgr, 3), (REL, AccessExclusive));
    assert!(rows(&mgr, 3).iter().any(|r| !r.granted));
    // The fast-path holder's transaction ends; the other's has not.
    fast.release_all();
    assert!(done_rx.recv_timeout(Duration::from_millis(50)).is_err());
    // A transaction that takes the lock after the look is not waited for.
    fast.lock(REL, AccessShare, WaitPolicy::BLOCK).unwrap();
    shared.release_all();
    done_rx.recv().unwrap();
    assert_eq!(waiter.join().unwrap(), Ok(()));
    assert_eq!(mgr.waiting_for(3), None);
}

#[test]
fn waiting_for_lockers_keeps_the_wait_policy() {
    let mgr = manager();
    let mut holder = mgr.register(1);
    let mut detacher = mgr.register(2);
    holder.lock(REL, AccessShare, WaitPolicy::BLOCK).unwrap();
    let rel = 16384;
    assert_eq!(
        detacher.wait_for_lockers(
            rel,
            WaitPolicy::BLOCK.with_lock_timeout(Duration::from_millis(20))
        ),
        Err(LockError::LockTimeout)
    );
    let cancel = Arc::new(AtomicBool::new(true));
    detacher.set_cancel(Arc::clone(&cancel));
    assert_eq!(
        detacher.wait_for_lockers(rel, WaitPolicy::BLOCK),
        Err(LockError::Canceled)
    );
    cancel.store(false, Ordering::Release);
    // Nobody else: no wait at all.
    assert_eq!(
        detacher.wait_for_lockers(rel + 1, WaitPolicy::NOWAIT),
        Ok(())
    );
}
