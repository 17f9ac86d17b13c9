//! The fast-path transfer race under many threads (lock rules 2 to 4): weak lockers take
//! and release locks on random relations while two strong lockers take AccessExclusive
//! and Exclusive on one relation at a time; no two sessions may ever hold conflicting
//! modes of one relation. Each side counts itself in per-relation atomics while it holds
//! a lock, and checks the other side's counts.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;

use myriad_txn::lock::{LockConfig, LockError, LockManager, LockMode, LockTag, WaitPolicy};

const RELATIONS: usize = 16;
const WEAK_THREADS: u32 = 4;
const ROUNDS_PER_THREAD: u32 = 20_000;

/// xorshift64*: enough randomness for choosing relations, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

struct Shared {
    /// Takes of any weak mode held, per relation: AccessExclusive conflicts with them.
    weak_holders: [AtomicUsize; RELATIONS],
    /// Takes of RowShare and RowExclusive held: Exclusive conflicts with those.
    row_holders: [AtomicUsize; RELATIONS],
    /// AccessExclusive and Exclusive held (they conflict with each other too).
    strong_holders: [AtomicUsize; RELATIONS],
    access_exclusive_holders: [AtomicUsize; RELATIONS],
    violations: AtomicUsize,
    done: AtomicBool,
}

fn rel(i: usize) -> LockTag {
    LockTag::Relation(16384 + i as u32)
}

#[test]
fn strong_lockers_and_fast_path_lockers_never_overlap() {
    // Weak lockers queued behind strong ones can form cycles that a queue reorder breaks
    // (lock rule 12); a short deadlock_timeout keeps those waits short.
    let mgr = LockManager::new(LockConfig {
        deadlock_timeout: std::time::Duration::from_millis(10),
        ..LockConfig::default()
    });
    let shared = Arc::new(Shared {
        weak_holders: std::array::from_fn(|_| AtomicUsize::new(0)),
        row_holders: std::array::from_fn(|_| AtomicUsize::new(0)),
        access_exclusive_holders: std::array::from_fn(|_| AtomicUsize::new(0)),
        strong_holders: std::array::from_fn(|_| AtomicUsize::new(0)),
        violations: AtomicUsize::new(0),
        done: AtomicBool::new(false),
    });

    let weak: Vec<_> = (0..WEAK_THREADS)
        .map(|t| {
            let (mgr, shared) = (Arc::clone(&mgr), Arc::clone(&shared));
            thread::spawn(move || {
                let mut s = mgr.register(100 + t);
                let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ u64::from(t + 1));
                let modes = [
                    LockMode::AccessShare,
                    LockMode::RowShare,
                    LockMode::RowExclusive,
                ];
                let mut held: Vec<(usize, LockMode)> = Vec::new();
                let count = |r: usize, mode: LockMode, delta: isize| {
                    let add = |c: &AtomicUsize| {
                        if delta > 0 {
                            c.fetch_add(1, Ordering::SeqCst);
                        } else {
                            c.fetch_sub(1, Ordering::SeqCst);
                        }
                    };
                    add(&shared.weak_holders[r]);
                    if mode != LockMode::AccessShare {
                        add(&shared.row_holders[r]);
                    }
                };
                for round in 0..ROUNDS_PER_THREAD {
                    for _ in 0..1 + rng.below(4) {
                        let r = rng.below(RELATIONS);
                        let mode = modes[rng.below(3)];
                        match s.lock(rel(r), mode, WaitPolicy::BLOCK) {
                            Ok(()) => {}
                            Err(LockError::Deadlock { .. }) => continue,
                            Err(e) => panic!("{e:?}"),
                        }
                        count(r, mode, 1);
                        let blocked_by = if mode == LockMode::AccessShare {
                            &shared.access_exclusive_holders[r]
                        } else {
                            &shared.strong_holders[r]
                        };
                        if blocked_by.load(Ordering::SeqCst) != 0 {
                            shared.violations.fetch_add(1, Ordering::SeqCst);
                        }
                        held.push((r, mode));
                        // Sometimes release one lock alone, perhaps a transferred one.
                        if rng.below(4) == 0 {
                            count(r, mode, -1);
                            held.pop();
                            assert!(s.unlock(rel(r), mode));
                        }
                    }
                    for (r, mode) in held.drain(..) {
                        count(r, mode, -1);
                    }
                    if round % 2 == 0 {
                        s.release_all();
                    } else {
                        // A savepoint rollback releases them just as well.
                        let mark = s.mark();
                        s.lock(rel(0), LockMode::AccessShare, WaitPolicy::BLOCK)
                            .unwrap();
                        s.release_since(mark);
                        s.release_all();
                    }
                }
            })
        })
        .collect();

    let strong: Vec<_> = [
        (LockMode::AccessExclusive, 1u32),
        (LockMode::Exclusive, 2u32),
    ]
    .into_iter()
    .map(|(mode, pid)| {
        let (mgr, shared) = (Arc::clone(&mgr), Arc::clone(&shared));
        thread::spawn(move || {
            let mut s = mgr.register(pid);
            let mut rng = Rng(u64::from(pid) * 7919);
            let mut taken = 0u64;
            while !shared.done.load(Ordering::SeqCst) {
                let r = rng.below(RELATIONS);
                match s.lock(rel(r), mode, WaitPolicy::BLOCK) {
                    Ok(()) => {}
                    Err(LockError::Deadlock { .. }) => continue,
                    Err(e) => panic!("{e:?}"),
                }
                shared.strong_holders[r].fetch_add(1, Ordering::SeqCst);
                let exclusive_of = if mode == LockMode::AccessExclusive {
                    shared.access_exclusive_holders[r].fetch_add(1, Ordering::SeqCst);
                    &shared.weak_holders[r]
                } else {
                    &shared.row_holders[r]
                };
                if exclusive_of.load(Ordering::SeqCst) != 0
                    || shared.strong_holders[r].load(Ordering::SeqCst) != 1
                {
                    shared.violations.fetch_add(1, Ordering::SeqCst);
                }
                thread::yield_now();
                if mode == LockMode::AccessExclusive {
                    shared.access_exclusive_holders[r].fetch_sub(1, Ordering::SeqCst);
                }
                shared.strong_holders[r].fetch_sub(1, Ordering::SeqCst);
                s.release_all();
                taken += 1;
            }
            taken
        })
    })
    .collect();

    for t in weak {
        t.join().unwrap();
    }
    shared.done.store(true, Ordering::SeqCst);
    let taken: u64 = strong.into_iter().map(|t| t.join().unwrap()).sum();
    assert!(taken > 0);
    assert_eq!(shared.violations.load(Ordering::SeqCst), 0);
    assert!(mgr.snapshot().is_empty(), "{:?}", mgr.snapshot());
    // Every strong counter is back to 0: a weak lock on each relation takes the fast path.
    let mut s = mgr.register(7);
    for r in 0..RELATIONS {
        s.lock(rel(r), LockMode::RowExclusive, WaitPolicy::NOWAIT)
            .unwrap();
    }
    assert!(mgr.snapshot().iter().all(|l| l.fastpath));
}
