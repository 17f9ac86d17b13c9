//! Deadlocks: cycles of two and three sessions, on relations and on transactions. Each
//! ends with exactly one victim, which gets 40P01 with PostgreSQL's detail and aborts
//! (releases everything); the others then get their locks.

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use common::SqlState;
use myriad_txn::lock::{LockConfig, LockError, LockManager, LockMode, LockTag, WaitPolicy};

use LockMode::*;

fn manager(deadlock_timeout: Duration) -> Arc<LockManager> {
    LockManager::new(LockConfig {
        deadlock_timeout,
        database_oid: 5,
        ..LockConfig::default()
    })
}

/// Session `pids[i]` takes `held[i]`, all wait at a barrier, then each requests
/// `wanted[i]`; whoever fails aborts (releases everything). Returns each session's result
/// of the second request.
fn run_cycle(
    mgr: &Arc<LockManager>,
    pids: &[u32],
    held: &[(LockTag, LockMode)],
    wanted: &[(LockTag, LockMode)],
) -> Vec<Result<(), LockError>> {
    let barrier = Arc::new(Barrier::new(pids.len()));
    let threads: Vec<_> = (0..pids.len())
        .map(|i| {
            let (mgr, barrier) = (Arc::clone(mgr), Arc::clone(&barrier));
            let (pid, held, wanted) = (pids[i], held[i], wanted[i]);
            thread::spawn(move || {
                let mut s = mgr.register(pid);
                s.lock(held.0, held.1, WaitPolicy::BLOCK).unwrap();
                barrier.wait();
                let got = s.lock(wanted.0, wanted.1, WaitPolicy::BLOCK);
                s.release_all(); // commit or abort
                got
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

/// The one deadlock among `results`, and whose it was.
fn the_victim(pids: &[u32], results: &[Result<(), LockError>]) -> (u32, String) {
    let victims: Vec<(u32, String)> = pids
        .iter()
        .zip(results)
        .filter_map(|(pid, r)| match r {
            Ok(()) => None,
            Err(LockError::Deadlock { detail }) => Some((*pid, detail.clone())),
            Err(e) => panic!("session {pid}: unexpected {e:?}"),
        })
        .collect();
    assert_eq!(victims.len(), 1, "exactly one victim: {victims:?}");
    victims.into_iter().next().unwrap()
}

/// The detail PostgreSQL prints for a cycle, starting at `first`: line i says that
/// `cycle[i]` waits for what it wants, blocked by `cycle[i + 1]`.
fn expected_detail(first: usize, pids: &[u32], wanted: &[(LockTag, LockMode)]) -> String {
    let n = pids.len();
    (0..n)
        .map(|k| {
            let i = (first + k) % n;
            let next = pids[(i + 1) % n];
            format!(
                "Process {} waits for {} on {}; blocked by process {next}.",
                pids[i],
                wanted[i].1.name(),
                wanted[i].0.describe(5)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn check_cycle(held: &[(LockTag, LockMode)], wanted: &[(LockTag, LockMode)]) {
    let mgr = manager(Duration::from_millis(20));
    let pids: Vec<u32> = (0..held.len() as u32).map(|i| 12 + i).collect();
    let results = run_cycle(&mgr, &pids, held, wanted);
    let (victim, detail) = the_victim(&pids, &results);
    let at = pids.iter().position(|p| *p == victim).unwrap();
    assert_eq!(detail, expected_detail(at, &pids, wanted));
    assert!(mgr.snapshot().is_empty());
}

#[test]
fn two_sessions_on_relations() {
    let (r1, r2) = (LockTag::Relation(16384), LockTag::Relation(16385));
    check_cycle(
        &[(r1, AccessExclusive), (r2, AccessExclusive)],
        &[(r2, AccessExclusive), (r1, AccessExclusive)],
    );
}

#[test]
fn two_sessions_on_relations_through_the_fast_path() {
    // Each holds a weak (fast-path) lock and wants a strong one on the other's relation.
    let (r1, r2) = (LockTag::Relation(16384), LockTag::Relation(16385));
    check_cycle(
        &[(r1, RowExclusive), (r2, AccessShare)],
        &[(r2, AccessExclusive), (r1, Share)],
    );
}

#[test]
fn two_sessions_on_transactions() {
    // Each updated a row the other now wants: each waits for the other's xid.
    let (x1, x2) = (LockTag::Transaction(744), LockTag::Transaction(745));
    check_cycle(
        &[(x1, Exclusive), (x2, Exclusive)],
        &[(x2, Share), (x1, Share)],
    );
}

#[test]
fn the_detail_is_postgres_text() {
    let (x1, x2) = (LockTag::Transaction(744), LockTag::Transaction(745));
    let wanted = [(x2, Share), (x1, Share)];
    assert_eq!(
        expected_detail(0, &[12, 13], &wanted),
        "Process 12 waits for ShareLock on transaction 745; blocked by process 13.\n\
         Process 13 waits for ShareLock on transaction 744; blocked by process 12."
    );
    let err = LockError::Deadlock {
        detail: "Process 12 waits for AccessExclusiveLock on relation 16384 of database 5; \
                 blocked by process 13."
            .into(),
    };
    let pg = err.to_pg("");
    assert_eq!(pg.code, SqlState::DEADLOCK_DETECTED);
    assert_eq!(pg.message, "deadlock detected");
    assert_eq!(
        pg.hint.as_deref(),
        Some("See server log for query details.")
    );
}

#[test]
fn three_sessions_on_relations() {
    let r: Vec<LockTag> = (0..3).map(|i| LockTag::Relation(16384 + i)).collect();
    check_cycle(
        &[
            (r[0], AccessExclusive),
            (r[1], AccessExclusive),
            (r[2], AccessExclusive),
        ],
        &[
            (r[1], AccessShare),
            (r[2], RowExclusive),
            (r[0], AccessExclusive),
        ],
    );
}

#[test]
fn three_sessions_on_transactions() {
    let x: Vec<LockTag> = (0..3).map(|i| LockTag::Transaction(900 + i)).collect();
    check_cycle(
        &[(x[0], Exclusive), (x[1], Exclusive), (x[2], Exclusive)],
        &[(x[1], Share), (x[2], Share), (x[0], Share)],
    );
}

#[test]
fn a_cycle_through_a_queue_is_broken_by_reordering_the_queue() {
    // PostgreSQL's isolation test `deadlock-soft`, in miniature. A holds r1 and waits for
    // r2 (held by B). C waits for r1 (A's Share blocks its Exclusive). B then wants r1 in
    // a mode A's lock allows but C's waiting request does not: B waits behind C, C for A,
    // A for B. Putting B ahead of C breaks the cycle: B gets r1, finishes, and everyone
    // proceeds. No victim.
    let mgr = manager(Duration::from_millis(20));
    let (r1, r2) = (LockTag::Relation(1), LockTag::Relation(2));
    let mut a = mgr.register(1);
    let mut b = mgr.register(2);
    a.lock(r1, Share, WaitPolicy::BLOCK).unwrap();
    b.lock(r2, AccessExclusive, WaitPolicy::BLOCK).unwrap();
    let c = {
        let mgr = Arc::clone(&mgr);
        thread::spawn(move || {
            let mut c = mgr.register(3);
            let got = c.lock(r1, Exclusive, WaitPolicy::BLOCK);
            c.release_all();
            got
        })
    };
    while mgr.waiting_for(3).is_none() {
        thread::sleep(Duration::from_millis(1));
    }
    let a_thread = thread::spawn(move || {
        let got = a.lock(r2, AccessShare, WaitPolicy::BLOCK);
        a.release_all();
        got
    });
    while mgr.waiting_for(1).is_none() {
        thread::sleep(Duration::from_millis(1));
    }
    b.lock(r1, Share, WaitPolicy::BLOCK).unwrap();
    b.release_all();
    a_thread.join().unwrap().unwrap();
    c.join().unwrap().unwrap();
    assert!(mgr.snapshot().is_empty());
}

#[test]
fn two_upgraders_deadlock_at_once() {
    // Both hold AccessShare and want AccessExclusive: the second request can never be
    // granted and is refused at once, without waiting for deadlock_timeout. (A minute
    // here: were it not refused at once, A's check would pick a victim a minute later and
    // the asserts below would fail then.)
    let mgr = manager(Duration::from_secs(60));
    let rel = LockTag::Relation(16384);
    let mut a = mgr.register(12);
    let mut b = mgr.register(13);
    a.lock(rel, AccessShare, WaitPolicy::BLOCK).unwrap();
    b.lock(rel, AccessShare, WaitPolicy::BLOCK).unwrap();
    let a_thread = thread::spawn(move || {
        let got = a.lock(rel, AccessExclusive, WaitPolicy::BLOCK);
        a.release_all();
        got
    });
    while mgr.waiting_for(12).is_none() {
        thread::sleep(Duration::from_millis(1));
    }
    let err = b.lock(rel, AccessExclusive, WaitPolicy::BLOCK).unwrap_err();
    assert_eq!(
        err,
        LockError::Deadlock {
            detail: "Process 13 waits for AccessExclusiveLock on relation 16384 of database 5; \
                     blocked by process 12.\n\
                     Process 12 waits for AccessExclusiveLock on relation 16384 of database 5; \
                     blocked by process 13."
                .into()
        }
    );
    b.release_all();
    a_thread.join().unwrap().unwrap();
}

#[test]
fn a_long_wait_is_not_a_deadlock() {
    let mgr = manager(Duration::from_millis(2));
    let rel = LockTag::Relation(16384);
    let mut holder = mgr.register(1);
    holder
        .lock(rel, AccessExclusive, WaitPolicy::BLOCK)
        .unwrap();
    let waiter = {
        let mgr = Arc::clone(&mgr);
        thread::spawn(move || mgr.register(2).lock(rel, AccessShare, WaitPolicy::BLOCK))
    };
    while mgr.waiting_for(2).is_none() {
        thread::sleep(Duration::from_millis(1));
    }
    // Long enough for the waiter's deadlock check to have run and found nothing.
    thread::sleep(Duration::from_millis(30));
    holder.release_all();
    waiter.join().unwrap().unwrap();
}
