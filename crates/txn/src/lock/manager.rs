//! The lock manager shared by all sessions: the registry of sessions, the strong-lock
//! counters, the partitioned shared table, sleeping and waking, deadlock checks, and
//! `pg_locks`.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use common::ids::Oid;
use parking_lot::{MutexGuard, RwLock};

use super::deadlock::{self, Verdict};
use super::error::{LockError, WaitPolicy};
use super::hash::{partition_of, strong_partition_of};
use super::mode::LockMode;
use super::proc::{FastPath, Proc, WaitState};
use super::session::SessionLocks;
use super::table::{Partition, PartitionState, Waiter};
use super::tag::LockTag;

/// log2 of the number of shared-table partitions: 128 (PostgreSQL has 16). More
/// partitions cost only the deadlock check and `pg_locks`, which lock them all.
const LOCK_PARTITIONS_LOG2: u32 = 7;

/// log2 of the number of strong-lock counters: 1024, as PostgreSQL's
/// `FAST_PATH_STRONG_LOCK_HASH_PARTITIONS`. A strong lock sends the weak lockers of every
/// relation that shares its counter to the shared table while it is held: more counters,
/// fewer bystanders.
const STRONG_LOCK_PARTITIONS_LOG2: u32 = 10;

/// The longest a waiter sleeps without looking at its cancel flag. A canceller that calls
/// [`LockManager::interrupt`] wakes it at once; this bounds the delay for one that only
/// stores to the flag.
const CANCEL_POLL_INTERVAL: Duration = Duration::from_millis(100);

/// Settings of one lock manager.
#[derive(Clone, Debug)]
pub struct LockConfig {
    /// How long a request waits before it looks for a deadlock (PostgreSQL's
    /// `deadlock_timeout`, default 1 s).
    pub deadlock_timeout: Duration,
    /// The database oid printed in messages ("relation 16384 of database 5"); PostgreSQL's
    /// `postgres` database is 5.
    pub database_oid: Oid,
    /// At most this many relations per session on the fast path; `None` (the default):
    /// no limit. `Some(16)` imitates PostgreSQL's 16 slots, for the benchmark's baseline.
    pub fast_path_relations_max: Option<usize>,
}

impl Default for LockConfig {
    fn default() -> LockConfig {
        LockConfig {
            deadlock_timeout: Duration::from_secs(1),
            database_oid: 5,
            fast_path_relations_max: None,
        }
    }
}

/// One lock held or awaited, as a row of `pg_locks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LockInfo {
    pub tag: LockTag,
    pub mode: LockMode,
    /// False while the session waits for it.
    pub granted: bool,
    /// Held in the session's fast-path table (`pg_locks.fastpath`).
    pub fastpath: bool,
    pub pid: u32,
}

/// The lock manager: one per database, shared by every session (`Arc<LockManager>`).
pub struct LockManager {
    cfg: LockConfig,
    partitions: Box<[Partition]>,
    /// Lock rule 2: per counter, how many strong locks on its relations are held or
    /// awaited.
    strong: Box<[AtomicU32]>,
    /// Lock rule 5: every session, so that strong lockers and `pg_locks` can see its
    /// fast-path entries.
    procs: RwLock<HashMap<u32, Arc<Proc>>>,
}

impl LockManager {
    pub fn new(cfg: LockConfig) -> Arc<LockManager> {
        Arc::new(LockManager {
            cfg,
            partitions: (0..1usize << LOCK_PARTITIONS_LOG2)
                .map(|_| Partition::new())
                .collect(),
            strong: (0..1usize << STRONG_LOCK_PARTITIONS_LOG2)
                .map(|_| AtomicU32::new(0))
                .collect(),
            procs: RwLock::new(HashMap::new()),
        })
    }

    pub fn config(&self) -> &LockConfig {
        &self.cfg
    }

    /// Registers session `pid` (which the caller chooses, unique among live sessions) and
    /// returns its handle. The session leaves the registry when the handle drops.
    ///
    /// Panics if `pid` is already registered: two sessions with one pid would share
    /// their locks.
    pub fn register(self: &Arc<Self>, pid: u32) -> SessionLocks {
        let proc = Arc::new(Proc::new(pid));
        let mut procs = self.procs.write();
        assert!(
            !procs.contains_key(&pid),
            "lock manager: pid {pid} registered twice"
        );
        procs.insert(pid, Arc::clone(&proc));
        drop(procs);
        SessionLocks::new(Arc::clone(self), proc)
    }

    pub(crate) fn unregister(&self, pid: u32) {
        self.procs.write().remove(&pid);
    }

    /// Every lock held or awaited, fast-path ones included, for `pg_locks`. One consistent
    /// picture: every session's fast-path table and every partition are locked together
    /// (lock rule 13), so a lock moving from fast path to shared table shows once.
    pub fn snapshot(&self) -> Vec<LockInfo> {
        let procs = self.procs.read();
        let mut sorted: Vec<&Arc<Proc>> = procs.values().collect();
        sorted.sort_by_key(|p| p.pid);
        let fast: Vec<_> = sorted.iter().map(|p| (p.pid, p.fast.lock())).collect();
        let parts: Vec<MutexGuard<'_, PartitionState>> =
            self.partitions.iter().map(|p| p.state.lock()).collect();
        let mut out = Vec::new();
        for (pid, fp) in &fast {
            for (&rel, &mask) in &fp.rels {
                out.extend(LockMode::in_mask(mask).map(|mode| LockInfo {
                    tag: LockTag::Relation(rel),
                    mode,
                    granted: true,
                    fastpath: true,
                    pid: *pid,
                }));
            }
        }
        for part in &parts {
            for (tag, entry) in &part.locks {
                for h in &entry.holders {
                    out.extend(LockMode::in_mask(h.mask).map(|mode| LockInfo {
                        tag: *tag,
                        mode,
                        granted: true,
                        fastpath: false,
                        pid: h.pid,
                    }));
                }
                out.extend(entry.waiters.iter().map(|w| LockInfo {
                    tag: *tag,
                    mode: w.mode,
                    granted: false,
                    fastpath: false,
                    pid: w.pid,
                }));
            }
        }
        // Lock rule 16: a wait for a relation's lockers.
        for p in &sorted {
            if let Some((tag, mode)) = p.awaited_lockers() {
                out.push(LockInfo {
                    tag,
                    mode,
                    granted: false,
                    fastpath: false,
                    pid: p.pid,
                });
            }
        }
        out
    }

    /// The sessions other than `except` that hold a lock on relation `rel` now, each with
    /// its count of ended transactions (lock rule 16). The counts are read before the
    /// locks are looked at: a session whose count moves has ended the transaction that
    /// held the lock, or held none when looked at.
    pub(crate) fn lockers(&self, rel: Oid, except: u32) -> Vec<(Arc<Proc>, u64)> {
        let procs: Vec<(Arc<Proc>, u64)> = self
            .procs
            .read()
            .values()
            .filter(|p| p.pid != except)
            .map(|p| (Arc::clone(p), p.ended.load(Ordering::Acquire)))
            .collect();
        // Fast paths before the shared table: a lock a strong locker moves between the
        // two meanwhile (lock rule 4) is seen in one or the other.
        let (mut out, rest): (Vec<_>, Vec<_>) = procs
            .into_iter()
            .partition(|(p, _)| p.fast.lock().rels.contains_key(&rel));
        let tag = LockTag::Relation(rel);
        let shared: Vec<u32> = self
            .partition(&tag)
            .state
            .lock()
            .locks
            .get(&tag)
            .map(|e| e.holders.iter().map(|h| h.pid).collect())
            .unwrap_or_default();
        out.extend(rest.into_iter().filter(|(p, _)| shared.contains(&p.pid)));
        out
    }

    /// The lock session `pid` waits for, if it waits: `pg_stat_activity`'s
    /// `wait_event_type` "Lock" and `wait_event` [`LockTag::wait_event`].
    pub fn waiting_for(&self, pid: u32) -> Option<(LockTag, LockMode)> {
        self.procs.read().get(&pid)?.waiting_for()
    }

    /// Wakes session `pid` if it waits for a lock, so that it looks at its cancel flag
    /// now rather than within `CANCEL_POLL_INTERVAL`. False if no such session.
    pub fn interrupt(&self, pid: u32) -> bool {
        let Some(proc) = self.procs.read().get(&pid).cloned() else {
            return false;
        };
        proc.interrupt();
        true
    }

    fn partition(&self, tag: &LockTag) -> &Partition {
        &self.partitions[partition_of(tag, LOCK_PARTITIONS_LOG2)]
    }

    pub(crate) fn strong_counter(&self, rel: Oid) -> &AtomicU32 {
        &self.strong[strong_partition_of(rel, STRONG_LOCK_PARTITIONS_LOG2)]
    }

    /// Lock rule 4: moves every session's fast-path entries for `rel` into the shared
    /// table. The caller has already counted its strong request in `rel`'s counter, so no
    /// new fast-path entry for `rel` appears behind this walk.
    ///
    /// Sessions whose mutex is busy (a session takes it for every lock, and may be
    /// preempted holding it) are put aside and retried after the others, blocking on one
    /// only when a whole pass made no progress: the walk then waits about as long as the
    /// slowest session, not the sum of them all.
    pub(crate) fn transfer_fast_path(&self, rel: Oid) {
        let procs = self.procs.read();
        let mut busy: Vec<&Arc<Proc>> = Vec::new();
        for proc in procs.values() {
            match proc.fast.try_lock() {
                Some(mut fast) => self.transfer_from(proc, &mut fast, rel),
                None => busy.push(proc),
            }
        }
        while !busy.is_empty() {
            let before = busy.len();
            busy.retain(|proc| match proc.fast.try_lock() {
                Some(mut fast) => {
                    self.transfer_from(proc, &mut fast, rel);
                    false
                }
                None => true,
            });
            if busy.len() == before
                && let Some(proc) = busy.pop()
            {
                let mut fast = proc.fast.lock();
                self.transfer_from(proc, &mut fast, rel);
            }
        }
    }

    /// Moves `proc`'s fast-path entry for `rel`, if any, into the shared table. Caller
    /// holds `proc`'s fast-path mutex (`fast`).
    fn transfer_from(&self, proc: &Proc, fast: &mut FastPath, rel: Oid) {
        let Some(mask) = fast.rels.remove(&rel) else {
            return;
        };
        let tag = LockTag::Relation(rel);
        let mut state = self.partition(&tag).state.lock();
        let entry = state.entry(tag);
        for mode in LockMode::in_mask(mask) {
            entry.grant(proc.pid, mode);
        }
        drop(state);
        fast.transferred += 1;
    }

    /// Takes `mode` on `tag` in the shared table for `proc`, waiting as `policy` allows.
    /// On error nothing is held or queued.
    pub(crate) fn acquire_shared(
        &self,
        proc: &Arc<Proc>,
        tag: LockTag,
        mode: LockMode,
        policy: WaitPolicy,
    ) -> Result<(), LockError> {
        let pid = proc.pid;
        let mut state = self.partition(&tag).state.lock();
        let entry = state.entry(tag);
        let held = entry.held_by(pid);
        debug_assert!(held & mode.bit() == 0, "{pid} takes {mode} twice");

        // Lock rule 8: a request waits behind every conflicting waiter, except that a
        // session already holding modes of this lock goes ahead of the first waiter those
        // modes block (that waiter waits for it anyway).
        let mut pos = entry.waiters.len();
        let mut ahead = 0;
        for (i, w) in entry.waiters.iter().enumerate() {
            if w.mode.conflicts() & held != 0 {
                if mode.conflicts() & entry.held_by(w.pid) != 0 {
                    // Each blocks the other whatever the order: a deadlock now, no need
                    // to wait for the timeout (PostgreSQL's `RememberSimpleDeadLock`).
                    let db = self.cfg.database_oid;
                    let detail = deadlock::describe(
                        &[
                            deadlock::WaitStep {
                                pid,
                                tag,
                                mode,
                                blocker: w.pid,
                                soft: false,
                            },
                            deadlock::WaitStep {
                                pid: w.pid,
                                tag,
                                mode: w.mode,
                                blocker: pid,
                                soft: false,
                            },
                        ],
                        db,
                    );
                    return Err(LockError::Deadlock { detail });
                }
                pos = i;
                break;
            }
            ahead |= w.mode.bit();
        }
        if mode.conflicts() & ahead == 0 && !entry.conflicts_with_granted(pid, mode) {
            entry.grant(pid, mode);
            return Ok(());
        }
        if policy.nowait {
            state.remove_if_unused(&tag);
            return Err(LockError::NotAvailable);
        }
        entry.waiters.insert(
            pos,
            Waiter {
                pid,
                mode,
                proc: Arc::clone(proc),
            },
        );
        proc.wait.lock().state = WaitState::Waiting(tag, mode);
        drop(state);
        self.sleep(proc, tag, policy)
    }

    /// Lock rules 10 and 11: sleeps until granted, a deadline, a cancel, or a deadlock.
    fn sleep(&self, proc: &Arc<Proc>, tag: LockTag, policy: WaitPolicy) -> Result<(), LockError> {
        let start = Instant::now();
        let lock_deadline = policy.lock_timeout.map(|t| start + t);
        let mut deadlock_check_at =
            Some(start + policy.deadlock_timeout.unwrap_or(self.cfg.deadlock_timeout));
        let mut slot = proc.wait.lock();
        slot.waits += 1;
        loop {
            if slot.state == WaitState::Granted {
                slot.state = WaitState::Idle;
                return Ok(());
            }
            let now = Instant::now();
            let failure = fired(now, lock_deadline, policy.statement_deadline).or_else(|| {
                let canceled = slot
                    .cancel
                    .as_ref()
                    .is_some_and(|c| c.load(Ordering::Acquire));
                canceled.then_some(LockError::Canceled)
            });
            if let Some(err) = failure {
                drop(slot);
                return self.give_up(proc, tag, err);
            }
            if deadlock_check_at.is_some_and(|at| now >= at) {
                deadlock_check_at = None;
                drop(slot);
                if let Some(outcome) = self.check_deadlock(proc, tag) {
                    return outcome;
                }
                slot = proc.wait.lock();
                continue;
            }
            let wake_at = [lock_deadline, policy.statement_deadline, deadlock_check_at]
                .into_iter()
                .flatten()
                .fold(now + CANCEL_POLL_INTERVAL, Instant::min);
            proc.wake.wait_until(&mut slot, wake_at);
        }
    }

    /// Leaves the wait queue of `tag` with `err`, unless the lock was granted meanwhile:
    /// then the grant stands and the request succeeds.
    fn give_up(&self, proc: &Arc<Proc>, tag: LockTag, err: LockError) -> Result<(), LockError> {
        let mut state = self.partition(&tag).state.lock();
        let mut slot = proc.wait.lock();
        let granted = slot.state == WaitState::Granted;
        slot.state = WaitState::Idle;
        drop(slot);
        if granted {
            return Ok(());
        }
        if let Some(entry) = state.locks.get_mut(&tag) {
            entry.remove_waiter(proc.pid);
        }
        state.remove_if_unused(&tag);
        Err(err)
    }

    /// Lock rule 12: with every partition locked (in index order), searches for a cycle of
    /// waits through `proc`. `None`: no deadlock (perhaps after reordering queues), keep
    /// waiting. `Some(Ok)`: granted meanwhile. `Some(Err)`: this session is the victim and
    /// has left the queue.
    fn check_deadlock(&self, proc: &Arc<Proc>, tag: LockTag) -> Option<Result<(), LockError>> {
        let mut parts: Vec<MutexGuard<'_, PartitionState>> =
            self.partitions.iter().map(|p| p.state.lock()).collect();
        {
            let mut slot = proc.wait.lock();
            if slot.state == WaitState::Granted {
                slot.state = WaitState::Idle;
                return Some(Ok(()));
            }
        }
        let views: Vec<&PartitionState> = parts.iter().map(|g| &**g).collect();
        let cycle = match deadlock::check(&views, proc.pid) {
            Verdict::Deadlock(cycle) => cycle,
            Verdict::NoDeadlock { reorders } => {
                for (tag, order) in reorders {
                    let state = &mut parts[partition_of(&tag, LOCK_PARTITIONS_LOG2)];
                    let entry = state.locks.get_mut(&tag).expect("a reordered queue exists");
                    entry.reorder_waiters(&order);
                    entry.wake_waiters();
                }
                return None;
            }
        };
        let detail = deadlock::describe(&cycle, self.cfg.database_oid);
        let state = &mut parts[partition_of(&tag, LOCK_PARTITIONS_LOG2)];
        if let Some(entry) = state.locks.get_mut(&tag) {
            entry.remove_waiter(proc.pid);
        }
        state.remove_if_unused(&tag);
        proc.wait.lock().state = WaitState::Idle;
        Some(Err(LockError::Deadlock { detail }))
    }

    /// Releases `pid`'s `mode` on `tag` in the shared table and wakes whoever that
    /// unblocks. False if it was not held there.
    pub(crate) fn release_shared(&self, pid: u32, tag: LockTag, mode: LockMode) -> bool {
        let mut state = self.partition(&tag).state.lock();
        let Some(entry) = state.locks.get_mut(&tag) else {
            return false;
        };
        let released = entry.ungrant(pid, mode);
        if released && !entry.waiters.is_empty() {
            entry.wake_waiters();
        }
        state.remove_if_unused(&tag);
        released
    }
}

/// The deadline that has passed, if any; if both have, the one that passed first
/// (PostgreSQL reports that one too).
fn fired(
    now: Instant,
    lock_deadline: Option<Instant>,
    statement_deadline: Option<Instant>,
) -> Option<LockError> {
    let lock = lock_deadline.filter(|d| *d <= now);
    let stmt = statement_deadline.filter(|d| *d <= now);
    match (lock, stmt) {
        (Some(l), Some(s)) if s < l => Some(LockError::StatementTimeout),
        (Some(_), _) => Some(LockError::LockTimeout),
        (None, Some(_)) => Some(LockError::StatementTimeout),
        (None, None) => None,
    }
}
