//! One session's side of the lock manager: its lock counts, the fast path, and marks for
//! savepoints (PostgreSQL's `LOCALLOCK` table and resource owners, simplified).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::ids::Oid;

use super::error::{LockError, WaitPolicy};
use super::hash::FxBuild;
use super::manager::LockManager;
use super::mode::LockMode;
use super::proc::Proc;
use super::tag::LockTag;
use crate::Xid;

/// After `release_all`, a session keeps the memory of its lock tables (no allocation per
/// transaction once warm) but for tables grown past this many entries, which shrink back
/// to it: one huge transaction does not pin its memory for the session's life.
const LOCAL_LOCKS_RETAINED_MAX: usize = 4096;

/// How often [`SessionLocks::wait_for_lockers`] looks whether the sessions it waits for
/// have ended their transactions.
const LOCKERS_POLL_INTERVAL: std::time::Duration = std::time::Duration::from_millis(5);

/// A point in a session's lock history: [`SessionLocks::release_since`] releases what
/// was taken after it. Valid until the next `release_all`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LockMark {
    /// The segment the mark began; everything taken since is logged in it or a later one.
    segment: u32,
}

/// Acquisitions of one lock within one segment (the time between two marks).
#[derive(Clone, Copy, Debug)]
struct Segment {
    id: u32,
    count: u32,
}

/// One lock (tag and mode) this session holds.
struct LocalLock {
    /// Times taken and not yet released (lock rule 6): the sum over the segments.
    count: u32,
    /// Taken by fast path; a strong locker may have moved it to the shared table since.
    fast: bool,
    /// Takes in the newest segment that has any ...
    top: Segment,
    /// ... and in older ones, oldest first (empty, so unallocated, unless marks are used).
    older: Vec<Segment>,
}

/// A session's handle on the lock manager: one per session, used only by its own thread.
/// Dropping it releases everything and leaves the registry.
pub struct SessionLocks {
    mgr: Arc<LockManager>,
    proc: Arc<Proc>,
    local: HashMap<(LockTag, LockMode), LocalLock, FxBuild>,
    /// Lock rule 14: each (lock, segment) pair in the order first taken in that segment.
    log: Vec<(LockTag, LockMode, u32)>,
    /// The current segment: marks taken since the last `release_all`.
    segment: u32,
    /// Held locks that live in the shared table by their own path (not fast-path ones that
    /// were transferred).
    shared_held: usize,
    /// Scratch for `release_all`, kept to reuse its memory.
    to_release: Vec<(LockTag, LockMode)>,
}

impl SessionLocks {
    pub(crate) fn new(mgr: Arc<LockManager>, proc: Arc<Proc>) -> SessionLocks {
        SessionLocks {
            mgr,
            proc,
            local: HashMap::default(),
            log: Vec::new(),
            segment: 0,
            shared_held: 0,
            to_release: Vec::new(),
        }
    }

    pub fn pid(&self) -> u32 {
        self.proc.pid
    }

    /// How many of this session's lock requests have had to wait, ever: a change
    /// across a statement's locking says another session held one of them.
    pub fn waits(&self) -> u64 {
        self.proc.wait.lock().waits
    }

    pub fn manager(&self) -> &Arc<LockManager> {
        &self.mgr
    }

    /// Takes `mode` on `tag`, waiting as `wait` allows. Taking a lock already held counts:
    /// it must be released as many times (or by `release_all`). On error the session holds
    /// what it held before.
    pub fn lock(
        &mut self,
        tag: LockTag,
        mode: LockMode,
        wait: WaitPolicy,
    ) -> Result<(), LockError> {
        let segment = self.segment;
        let slot = match self.local.entry((tag, mode)) {
            Entry::Occupied(held) => {
                let l = held.into_mut();
                l.count += 1;
                if l.top.id == segment {
                    l.top.count += 1;
                } else {
                    l.older.push(l.top);
                    l.top = Segment {
                        id: segment,
                        count: 1,
                    };
                    self.log.push((tag, mode, segment));
                }
                return Ok(());
            }
            Entry::Vacant(slot) => slot,
        };
        let fast = acquire(&self.mgr, &self.proc, tag, mode, wait)?;
        slot.insert(LocalLock {
            count: 1,
            fast,
            top: Segment {
                id: segment,
                count: 1,
            },
            older: Vec::new(),
        });
        if !fast {
            self.shared_held += 1;
        }
        self.log.push((tag, mode, segment));
        Ok(())
    }

    /// Releases one take of `mode` on `tag`; the lock goes when its count reaches 0.
    /// False (and nothing changes) if the session does not hold it (PostgreSQL warns "you
    /// don't own a lock of type ...").
    pub fn unlock(&mut self, tag: LockTag, mode: LockMode) -> bool {
        let Some(l) = self.local.get_mut(&(tag, mode)) else {
            return false;
        };
        l.count -= 1;
        l.top.count -= 1;
        if l.top.count == 0
            && let Some(prev) = l.older.pop()
        {
            l.top = prev;
        }
        if l.count == 0 {
            let fast = l.fast;
            self.local.remove(&(tag, mode));
            self.release_one(tag, mode, fast);
        }
        // Log entries whose segment count fell to 0 are stale; drop those at the end.
        while let Some(&(t, m, seg)) = self.log.last() {
            match self.local.get(&(t, m)) {
                Some(l) if l.top.id == seg => break,
                _ => {
                    self.log.pop();
                }
            }
        }
        true
    }

    /// A mark: [`release_since`](Self::release_since) with it releases every take after
    /// this point (ROLLBACK TO SAVEPOINT). Marks nest.
    pub fn mark(&mut self) -> LockMark {
        self.segment = self
            .segment
            .checked_add(1)
            .expect("lock manager: 2^32 marks in one transaction");
        LockMark {
            segment: self.segment,
        }
    }

    /// Releases every take since `mark`: locks first taken since are released, locks
    /// held before and taken again since drop back to their count at the mark. Locks
    /// released since the mark stay released.
    pub fn release_since(&mut self, mark: LockMark) {
        while let Some(&(tag, mode, seg)) = self.log.last()
            && seg >= mark.segment
        {
            self.log.pop();
            let Some(l) = self.local.get_mut(&(tag, mode)) else {
                continue;
            };
            // Later segments of this lock were popped already, so its top segment is
            // `seg` or older; older means this log entry is stale.
            if l.top.id != seg {
                continue;
            }
            l.count -= l.top.count;
            match l.older.pop() {
                Some(prev) => l.top = prev,
                None => debug_assert_eq!(l.count, 0),
            }
            if l.count == 0 {
                let fast = l.fast;
                self.local.remove(&(tag, mode));
                self.release_one(tag, mode, fast);
            }
        }
    }

    /// Releases everything the session holds: transaction end.
    pub fn release_all(&mut self) {
        let mut to_release = std::mem::take(&mut self.to_release);
        self.proc.with_fast(|fast| {
            if fast.transferred != 0 || self.shared_held != 0 {
                for (&(tag, mode), l) in &self.local {
                    let in_shared = !l.fast
                        || match tag {
                            LockTag::Relation(rel) => {
                                fast.rels.get(&rel).is_none_or(|m| m & mode.bit() == 0)
                            }
                            _ => true,
                        };
                    if in_shared {
                        to_release.push((tag, mode));
                    }
                }
            }
            fast.rels.clear();
            fast.transferred = 0;
            if fast.rels.capacity() > LOCAL_LOCKS_RETAINED_MAX {
                fast.rels.shrink_to(LOCAL_LOCKS_RETAINED_MAX);
            }
        });
        for (tag, mode) in to_release.drain(..) {
            self.release_shared(tag, mode);
        }
        self.to_release = to_release;
        self.local.clear();
        self.log.clear();
        // Lock rule 16: after the releases, so a waiter that sees the count move sees
        // the locks gone.
        self.proc.ended.fetch_add(1, Ordering::Release);
        if self.local.capacity() > LOCAL_LOCKS_RETAINED_MAX {
            self.local.shrink_to(LOCAL_LOCKS_RETAINED_MAX);
            self.log.shrink_to(LOCAL_LOCKS_RETAINED_MAX);
            self.to_release.shrink_to(LOCAL_LOCKS_RETAINED_MAX);
        }
        self.segment = 0;
        self.shared_held = 0;
    }

    /// Whether the session holds `mode` on `tag` (taken and not released).
    pub fn holds(&self, tag: LockTag, mode: LockMode) -> bool {
        self.local.contains_key(&(tag, mode))
    }

    /// How many distinct (tag, mode) locks the session holds.
    pub fn held_count(&self) -> usize {
        self.local.len()
    }

    /// The flag that cancels this session's waits: another thread stores `true` (then
    /// calls [`LockManager::interrupt`] to be heard at once) and the waiting request
    /// fails with [`LockError::Canceled`]. The lock manager only reads it; the session
    /// clears it before its next statement.
    pub fn set_cancel(&mut self, flag: Arc<AtomicBool>) {
        self.proc.wait.lock().cancel = Some(flag);
    }

    /// Waits until transaction `xid` ends (PostgreSQL's `XactLockTableWait`): takes and
    /// drops ShareLock on it, which its owner holds in ExclusiveLock (lock rule 9).
    pub fn wait_for_transaction(&mut self, xid: Xid, wait: WaitPolicy) -> Result<(), LockError> {
        let tag = LockTag::Transaction(xid);
        self.lock(tag, LockMode::Share, wait)?;
        self.unlock(tag, LockMode::Share);
        Ok(())
    }

    /// Waits until every other session that holds a lock on relation `rel` now has ended
    /// the transaction it holds it in (PostgreSQL's `WaitForLockers`, lock rule 16), as
    /// long as `wait` allows; a session taking a lock on `rel` later is not waited for.
    /// NOWAIT fails at once if there is anyone to wait for.
    pub fn wait_for_lockers(&mut self, rel: Oid, wait: WaitPolicy) -> Result<(), LockError> {
        let mut lockers = self.mgr.lockers(rel, self.proc.pid);
        let started = std::time::Instant::now();
        let shown = !lockers.is_empty() && !wait.nowait;
        if shown {
            *self.proc.awaits_lockers.lock() = Some((rel, lockers.clone()));
        }
        let got = self.await_lockers(&mut lockers, started, wait);
        if shown {
            *self.proc.awaits_lockers.lock() = None;
        }
        got
    }

    fn await_lockers(
        &self,
        lockers: &mut Vec<(Arc<Proc>, u64)>,
        started: std::time::Instant,
        wait: WaitPolicy,
    ) -> Result<(), LockError> {
        loop {
            lockers.retain(|(proc, ended)| proc.ended.load(Ordering::Acquire) == *ended);
            if lockers.is_empty() {
                return Ok(());
            }
            if wait.nowait {
                return Err(LockError::NotAvailable);
            }
            let now = std::time::Instant::now();
            let lock_timeout = wait.lock_timeout.map(|t| started + t);
            match (lock_timeout, wait.statement_deadline) {
                (Some(l), Some(s)) if now >= l.min(s) => {
                    return Err(if l <= s {
                        LockError::LockTimeout
                    } else {
                        LockError::StatementTimeout
                    });
                }
                (Some(l), None) if now >= l => return Err(LockError::LockTimeout),
                (None, Some(s)) if now >= s => return Err(LockError::StatementTimeout),
                _ => {}
            }
            let mut slot = self.proc.wait.lock();
            if slot
                .cancel
                .as_ref()
                .is_some_and(|c| c.load(Ordering::Acquire))
            {
                return Err(LockError::Canceled);
            }
            // `LockManager::interrupt` wakes this sleep early.
            self.proc.wake.wait_for(&mut slot, LOCKERS_POLL_INTERVAL);
        }
    }

    /// Releases a lock whose count reached 0.
    fn release_one(&mut self, tag: LockTag, mode: LockMode, fast: bool) {
        if fast {
            let LockTag::Relation(rel) = tag else {
                unreachable!("only relation locks take the fast path")
            };
            let released = self.proc.with_fast(|fp| match fp.rels.get_mut(&rel) {
                Some(mask) if *mask & mode.bit() != 0 => {
                    *mask &= !mode.bit();
                    if *mask == 0 {
                        fp.rels.remove(&rel);
                    }
                    true
                }
                _ => false,
            });
            if released {
                return;
            }
            // Lock rule 4: a strong locker moved it to the shared table.
        } else {
            self.shared_held -= 1;
        }
        self.release_shared(tag, mode);
    }

    fn release_shared(&self, tag: LockTag, mode: LockMode) {
        let released = self.mgr.release_shared(self.proc.pid, tag, mode);
        debug_assert!(released, "{tag:?} {mode} not in the shared table");
        if let LockTag::Relation(rel) = tag
            && mode.conflicts_with_fast_path()
        {
            // Lock rule 2: released (Release) only after the shared table shows it gone.
            self.mgr.strong_counter(rel).fetch_sub(1, Ordering::Release);
        }
    }
}

impl Drop for SessionLocks {
    fn drop(&mut self) {
        self.release_all();
        self.mgr.unregister(self.proc.pid);
    }
}

/// Takes the lock for real; true if by fast path.
fn acquire(
    mgr: &LockManager,
    proc: &Arc<Proc>,
    tag: LockTag,
    mode: LockMode,
    wait: WaitPolicy,
) -> Result<bool, LockError> {
    if let LockTag::Relation(rel) = tag {
        if mode.is_fast_path_eligible() {
            if try_fast_path(mgr, proc, rel, mode) {
                return Ok(true);
            }
        } else if mode.conflicts_with_fast_path() {
            // Lock rule 2: announce, then move the fast-path holders into view.
            let counter = mgr.strong_counter(rel);
            counter.fetch_add(1, Ordering::Relaxed);
            mgr.transfer_fast_path(rel);
            return match mgr.acquire_shared(proc, tag, mode, wait) {
                Ok(()) => Ok(false),
                Err(e) => {
                    counter.fetch_sub(1, Ordering::Release);
                    Err(e)
                }
            };
        }
    }
    mgr.acquire_shared(proc, tag, mode, wait)?;
    Ok(false)
}

/// Lock rule 3: records a weak relation lock in the session's own table, unless a
/// strong lock on a relation of the same counter is held or awaited.
fn try_fast_path(mgr: &LockManager, proc: &Proc, rel: u32, mode: LockMode) -> bool {
    proc.with_fast(|fast| {
        if let Some(max) = mgr.config().fast_path_relations_max
            && fast.rels.len() >= max
            && !fast.rels.contains_key(&rel)
        {
            return false;
        }
        if mgr.strong_counter(rel).load(Ordering::Acquire) != 0 {
            return false;
        }
        *fast.rels.entry(rel).or_insert(0) |= mode.bit();
        true
    })
}
