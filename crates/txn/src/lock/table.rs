//! The shared lock table: partitions, each a mutex over a hash map from tag to
//! [`LockEntry`] (PostgreSQL's `LOCK` with its `PROCLOCK`s folded in).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use parking_lot::Mutex;

use super::hash::FxBuild;
use super::mode::{LockMode, ModeMask};
use super::proc::Proc;
use super::tag::LockTag;

/// Emptied entries a partition keeps for reuse, so that a lock taken and released per
/// transaction (each transaction's own xid lock) costs no allocation once warm. The limit
/// bounds what an idle partition holds on to: 64 entries of a few dozen bytes each, plus
/// whatever their vectors grew to.
const SPARE_ENTRIES_MAX: usize = 64;

/// One partition of the shared table, alone on its cache lines so that two partitions'
/// mutexes never share one.
#[repr(align(128))]
pub(crate) struct Partition {
    pub(crate) state: Mutex<PartitionState>,
}

impl Partition {
    pub(crate) fn new() -> Partition {
        Partition {
            state: Mutex::new(PartitionState {
                locks: HashMap::default(),
                spare: Vec::new(),
            }),
        }
    }
}

pub(crate) struct PartitionState {
    pub(crate) locks: HashMap<LockTag, LockEntry, FxBuild>,
    spare: Vec<LockEntry>,
}

impl PartitionState {
    /// The entry for `tag`, created empty if absent.
    pub(crate) fn entry(&mut self, tag: LockTag) -> &mut LockEntry {
        let spare = &mut self.spare;
        self.locks
            .entry(tag)
            .or_insert_with(|| spare.pop().unwrap_or_default())
    }

    /// Drops `tag`'s entry if nobody holds or awaits it (lock rule 7).
    pub(crate) fn remove_if_unused(&mut self, tag: &LockTag) {
        if self.locks.get(tag).is_some_and(LockEntry::is_unused)
            && let Some(entry) = self.locks.remove(tag)
            && self.spare.len() < SPARE_ENTRIES_MAX
        {
            self.spare.push(entry);
        }
    }
}

/// A session holding some modes of one lock. In the shared table a holder holds each mode
/// once; how many times the session took it is counted in its own [`SessionLocks`]
/// (lock rule 6).
///
/// [`SessionLocks`]: super::SessionLocks
#[derive(Clone, Copy, Debug)]
pub(crate) struct Holder {
    pub(crate) pid: u32,
    pub(crate) mask: ModeMask,
}

/// A session waiting for one mode of one lock.
pub(crate) struct Waiter {
    pub(crate) pid: u32,
    pub(crate) mode: LockMode,
    pub(crate) proc: Arc<Proc>,
}

/// One lock in the shared table: who holds which modes, and who waits in which order.
#[derive(Default)]
pub(crate) struct LockEntry {
    pub(crate) holders: Vec<Holder>,
    /// How many holders hold each mode (index `mode - 1`): a conflict check is then a
    /// mask test, not a walk over the holders.
    granted_count: [u32; 8],
    granted_mask: ModeMask,
    /// FIFO but for upgrades (lock rule 8).
    pub(crate) waiters: VecDeque<Waiter>,
}

impl LockEntry {
    fn is_unused(&self) -> bool {
        self.holders.is_empty() && self.waiters.is_empty()
    }

    /// The modes `pid` holds.
    pub(crate) fn held_by(&self, pid: u32) -> ModeMask {
        self.holders
            .iter()
            .find(|h| h.pid == pid)
            .map_or(0, |h| h.mask)
    }

    /// Whether `mode` conflicts with a mode granted to some session other than `pid` (a
    /// session never conflicts with itself).
    pub(crate) fn conflicts_with_granted(&self, pid: u32, mode: LockMode) -> bool {
        let conflicting = mode.conflicts() & self.granted_mask;
        if conflicting == 0 {
            return false;
        }
        let mine = self.held_by(pid);
        LockMode::in_mask(conflicting).any(|m| {
            let own = u32::from(mine & m.bit() != 0);
            self.granted_count[m as usize - 1] > own
        })
    }

    /// Records that `pid` holds `mode`. Idempotent.
    pub(crate) fn grant(&mut self, pid: u32, mode: LockMode) {
        let bit = mode.bit();
        match self.holders.iter_mut().find(|h| h.pid == pid) {
            Some(h) if h.mask & bit != 0 => return,
            Some(h) => h.mask |= bit,
            None => self.holders.push(Holder { pid, mask: bit }),
        }
        self.granted_count[mode as usize - 1] += 1;
        self.granted_mask |= bit;
    }

    /// Forgets that `pid` holds `mode`; false if it did not.
    pub(crate) fn ungrant(&mut self, pid: u32, mode: LockMode) -> bool {
        let bit = mode.bit();
        let Some(i) = self
            .holders
            .iter()
            .position(|h| h.pid == pid && h.mask & bit != 0)
        else {
            return false;
        };
        self.holders[i].mask &= !bit;
        if self.holders[i].mask == 0 {
            self.holders.swap_remove(i);
        }
        let count = &mut self.granted_count[mode as usize - 1];
        *count -= 1;
        if *count == 0 {
            self.granted_mask &= !bit;
        }
        true
    }

    /// Grants every waiter that conflicts neither with what is granted nor with a waiter
    /// still ahead of it, in queue order, and wakes them (PostgreSQL's `ProcLockWakeup`).
    /// Called after anything that may unblock a waiter: a release, a waiter leaving.
    pub(crate) fn wake_waiters(&mut self) {
        let mut ahead: ModeMask = 0;
        let mut i = 0;
        while i < self.waiters.len() {
            let (pid, mode) = (self.waiters[i].pid, self.waiters[i].mode);
            if mode.conflicts() & ahead == 0 && !self.conflicts_with_granted(pid, mode) {
                let waiter = self.waiters.remove(i).expect("index in range");
                self.grant(pid, mode);
                waiter.proc.wake_granted();
            } else {
                ahead |= mode.bit();
                i += 1;
            }
        }
    }

    /// Puts the waiters in the order of `pids` (the same set), as a deadlock check decided.
    pub(crate) fn reorder_waiters(&mut self, pids: &[u32]) {
        assert_eq!(
            pids.len(),
            self.waiters.len(),
            "a reorder keeps every waiter"
        );
        for (i, pid) in pids.iter().enumerate() {
            let at = self
                .waiters
                .iter()
                .skip(i)
                .position(|w| w.pid == *pid)
                .expect("a reorder names waiters of this queue");
            let waiter = self.waiters.remove(i + at).expect("index in range");
            self.waiters.insert(i, waiter);
        }
    }

    /// Takes `pid` out of the wait queue (it gave up) and wakes whoever that unblocks.
    pub(crate) fn remove_waiter(&mut self, pid: u32) {
        if let Some(i) = self.waiters.iter().position(|w| w.pid == pid) {
            self.waiters.remove(i);
            self.wake_waiters();
        }
    }
}
