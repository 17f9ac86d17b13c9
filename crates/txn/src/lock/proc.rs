//! What the lock manager shares about each session (PostgreSQL's `PGPROC`, the lock
//! fields): its fast-path entries and its wait slot.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use common::ids::Oid;
use parking_lot::{Condvar, Mutex, MutexGuard};

use super::hash::FxBuild;
use super::mode::{LockMode, ModeMask};
use super::tag::LockTag;

/// One registered session, shared between its own thread, strong lockers (which transfer
/// its fast-path entries), granters (which wake it) and introspection.
pub(crate) struct Proc {
    pub(crate) pid: u32,
    /// Lock rule 3: the session's weak relation locks. Its own thread takes this mutex for
    /// every fast-path lock and release, so it is uncontended but while a strong locker
    /// or `pg_locks` looks.
    pub(crate) fast: Mutex<FastPath>,
    /// Lock rule 10: the wait slot. Granters and cancellers change it under this mutex and
    /// then notify `wake`, so a sleeper never misses a wakeup.
    pub(crate) wait: Mutex<WaitSlot>,
    pub(crate) wake: Condvar,
    /// Lock rule 16: how many times the session has released everything (ended a
    /// transaction, or left): a waiter for its lockers watches this change.
    pub(crate) ended: AtomicU64,
    /// Lock rule 16: the relation whose lockers the session waits out, with those
    /// lockers and their counts of ended transactions when it looked; shown as an
    /// ungranted AccessExclusive request on it while one has not ended.
    pub(crate) awaits_lockers: Mutex<Option<AwaitedLockers>>,
}

/// A relation, and the sessions that held a lock on it with their counts of ended
/// transactions then (lock rule 16).
pub(crate) type AwaitedLockers = (Oid, Vec<(Arc<Proc>, u64)>);

/// The fast-path lock table of one session.
#[derive(Default)]
pub(crate) struct FastPath {
    /// Relation → the weak modes held on it by fast path. No slot limit (the seed lesson).
    pub(crate) rels: HashMap<Oid, ModeMask, FxBuild>,
    /// How many entries strong lockers moved to the shared table since the session last
    /// released everything. While 0, a release never needs to look in the shared table
    /// for a fast-path lock.
    pub(crate) transferred: u64,
}

pub(crate) struct WaitSlot {
    pub(crate) state: WaitState,
    /// Set from another thread to make a waiting request fail with `Canceled`.
    pub(crate) cancel: Option<Arc<AtomicBool>>,
    /// Requests that had to wait, since the session began: a READ COMMITTED statement
    /// that waited for a lock takes its snapshot after it, as PostgreSQL's does.
    pub(crate) waits: u64,
}

/// Where a session stands with respect to the one lock it may be waiting for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WaitState {
    /// Not waiting.
    Idle,
    /// Queued in the shared table for this lock. Set by the session under the lock's
    /// partition mutex.
    Waiting(LockTag, LockMode),
    /// A releaser granted the awaited lock (under the partition mutex) and the session has
    /// not yet noticed.
    Granted,
}

impl Proc {
    pub(crate) fn new(pid: u32) -> Proc {
        Proc {
            pid,
            fast: Mutex::new(FastPath::default()),
            wait: Mutex::new(WaitSlot {
                state: WaitState::Idle,
                cancel: None,
                waits: 0,
            }),
            wake: Condvar::new(),
            ended: AtomicU64::new(0),
            awaits_lockers: Mutex::new(None),
        }
    }

    /// Runs `f` on the session's own fast-path table: the owner's way in. The mutex is
    /// released fairly: if a strong locker is parked on it (lock rule 4), it is handed the
    /// mutex, instead of watching the owner, which takes it for every lock, take it back
    /// again and again before the strong locker's thread gets to run. Costs nothing when
    /// nobody waits (the same single atomic as a plain unlock).
    pub(crate) fn with_fast<R>(&self, f: impl FnOnce(&mut FastPath) -> R) -> R {
        let mut fast = self.fast.lock();
        let result = f(&mut fast);
        MutexGuard::unlock_fair(fast);
        result
    }

    /// Marks the awaited lock granted and wakes the session. Caller holds the partition
    /// mutex of that lock and has already recorded the grant in its entry.
    pub(crate) fn wake_granted(&self) {
        let mut slot = self.wait.lock();
        debug_assert!(matches!(slot.state, WaitState::Waiting(..)));
        slot.state = WaitState::Granted;
        self.wake.notify_one();
    }

    /// Wakes the session if it sleeps, so it looks at its cancel flag now.
    pub(crate) fn interrupt(&self) {
        let _slot = self.wait.lock();
        self.wake.notify_one();
    }

    /// The lock this session waits for, if any.
    pub(crate) fn waiting_for(&self) -> Option<(LockTag, LockMode)> {
        match self.wait.lock().state {
            WaitState::Waiting(tag, mode) => Some((tag, mode)),
            WaitState::Idle | WaitState::Granted => self.awaited_lockers(),
        }
    }

    /// What [`Proc::awaits_lockers`] shows: the relation as an AccessExclusive request.
    pub(crate) fn awaited_lockers(&self) -> Option<(LockTag, LockMode)> {
        let awaited = self.awaits_lockers.lock();
        let (rel, lockers) = awaited.as_ref()?;
        lockers
            .iter()
            .any(|(p, ended)| p.ended.load(Ordering::Acquire) == *ended)
            .then_some((LockTag::Relation(*rel), LockMode::AccessExclusive))
    }
}
