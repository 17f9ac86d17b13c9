//! The transaction manager: hands out transaction ids, records commits and aborts, takes
//! snapshots, and knows the oldest transaction any snapshot may still need (for VACUUM).
//!
//! One mutex guards the set of running transaction ids and the next id (PostgreSQL's
//! ProcArrayLock and XidGenLock in one): taking a snapshot copies the running set under
//! it, so a snapshot and a commit are ordered. A commit sets the commit log *before* it
//! leaves the running set (txn rule 3), so whoever no longer sees it running finds its
//! final status.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::ids::{ItemPointer, Lsn};
use common::{PgError, PgResult, RelId, RowLockMode, SqlState};
use parking_lot::{Condvar, Mutex, RwLock};
use storage::vfs::Vfs;
use storage::xlog::{Record, RecordKind, Wal};

use crate::clog::{CLOG_DIR, Clog, XidStatus};
use crate::{FIRST_NORMAL_XID, FROZEN_XID, Snapshot, Xid};

/// Transaction ids are logged as used in blocks of this many (txn rule 4).
const XID_BLOCK: u64 = 4096;

/// The file holding the id limit saved at the last checkpoint.
const XID_FILE: &str = "xid_limit";

const REC_COMMIT: u8 = 1;
const REC_ABORT: u8 = 2;
const REC_XID_LIMIT: u8 = 3;

struct ProcArray {
    next_xid: Xid,
    /// Ids below this are covered by a logged limit (or the saved one): never reused.
    xid_limit: Xid,
    running: BTreeSet<Xid>,
    /// The oldest snapshot xmin each session holds.
    xmins: HashMap<u32, Xid>,
}

/// Transaction ids, the commit log and snapshots of one data directory.
pub struct TxnManager {
    clog: Clog,
    vfs: Arc<dyn Vfs>,
    xid_file: PathBuf,
    wal: RwLock<Option<Arc<Wal>>>,
    procs: Mutex<ProcArray>,
    ended: Condvar,
    /// Held shared by a commit from its WAL record until its commit-log status is set,
    /// exclusive by the checkpoint before it writes the commit log (txn rule 2): a
    /// commit whose record lies before the redo point is not replayed, so its status
    /// must be in what the checkpoint writes (PostgreSQL's DELAY_CHKPT_START).
    commit_fence: RwLock<()>,
    /// The heavyweight lock manager: relation locks, and the transaction locks row
    /// writers wait on (lock rule 9).
    locks: Arc<crate::lock::LockManager>,
    /// What each session is doing (`pg_stat_activity`).
    activity: Arc<crate::activity::Activity>,
    /// What each relation's work counted (txn rule 10).
    rel_stats: crate::relstat::RelStats,
    /// The members of each multixact, and the lockers of updated versions, still worth
    /// remembering (txn rule 8).
    multis: Mutex<Multis>,
}

/// A transaction holding a row lock, and how strong it is.
pub type RowLocker = (Xid, RowLockMode);

/// An updated version's updater and the lockers that hold it alongside.
type UpdatedLockers = (Xid, Box<[RowLocker]>);

/// Row lockers kept in memory (txn rule 8): the members of each multixact, ids that
/// stand for a set of transactions sharing a row lock; and the lockers of versions whose
/// `t_xmax` names their updater, keyed by the version's address.
struct Multis {
    members: HashMap<Xid, Box<[RowLocker]>>,
    /// Per updated version: its updater (the entry is stale unless the version's
    /// `t_xmax` still names it) and the lockers that hold it alongside.
    updated: HashMap<(RelId, ItemPointer), UpdatedLockers>,
    /// Forget the entries without a running locker when there are this many.
    sweep_at: usize,
}

impl Multis {
    /// Forget, once the maps have doubled since the last time, every entry none of whose
    /// lockers runs: their locks are gone.
    fn sweep(&mut self, mgr: &TxnManager) {
        if self.members.len() + self.updated.len() < self.sweep_at {
            return;
        }
        let procs = mgr.procs.lock();
        let runs = |m: &[RowLocker]| m.iter().any(|(x, _)| procs.running.contains(x));
        self.members.retain(|_, m| runs(m));
        self.updated.retain(|_, (_, m)| runs(m));
        drop(procs);
        self.sweep_at = ((self.members.len() + self.updated.len()) * 2).max(MULTI_SWEEP_MIN);
    }
}

/// The fewest multixacts remembered before the first sweep.
const MULTI_SWEEP_MIN: usize = 64;

fn encode(kind: u8, xids: &[Xid]) -> Vec<u8> {
    let mut b = Vec::with_capacity(1 + 8 * xids.len());
    b.push(kind);
    for x in xids {
        b.extend_from_slice(&x.to_le_bytes());
    }
    b
}

/// The transaction ids a commit record commits (`None` for any other transaction
/// record): what recovery hands the catalog, whose changes wait for their commit.
pub fn committed_xids(payload: &[u8]) -> Option<Vec<Xid>> {
    let (&kind, body) = payload.split_first()?;
    if kind != REC_COMMIT || body.len() % 8 != 0 {
        return None;
    }
    Some(
        body.chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect(),
    )
}

fn corrupt(r: &Record) -> PgError {
    PgError::new(
        SqlState::DATA_CORRUPTED,
        format!(
            "invalid transaction record at {}",
            storage::xlog::fmt_lsn(r.lsn)
        ),
    )
}

impl TxnManager {
    /// Open the commit log and the saved id limit of `data_dir`. Replay the WAL's
    /// transaction records with [`TxnManager::redo`], then [`TxnManager::attach_wal`].
    pub fn open(vfs: Arc<dyn Vfs>, data_dir: &Path) -> PgResult<TxnManager> {
        let clog = Clog::open(vfs.clone(), data_dir)?;
        let xid_file = data_dir.join(CLOG_DIR).join(XID_FILE);
        let mut limit = FIRST_NORMAL_XID;
        if vfs.exists(&xid_file) {
            let f = vfs.open(&xid_file, false).map_err(|e| {
                PgError::io(format!("could not open \"{}\"", xid_file.display()), e)
            })?;
            let mut b = [0u8; 8];
            let n = f.read_at(&mut b, 0).map_err(|e| {
                PgError::io(format!("could not read \"{}\"", xid_file.display()), e)
            })?;
            if n != 8 {
                return Err(PgError::new(
                    SqlState::DATA_CORRUPTED,
                    format!("\"{}\" is corrupt", xid_file.display()),
                ));
            }
            limit = u64::from_le_bytes(b).max(FIRST_NORMAL_XID);
        }
        Ok(TxnManager {
            clog,
            vfs,
            xid_file,
            wal: RwLock::new(None),
            procs: Mutex::new(ProcArray {
                next_xid: limit,
                xid_limit: limit,
                running: BTreeSet::new(),
                xmins: HashMap::new(),
            }),
            ended: Condvar::new(),
            commit_fence: RwLock::new(()),
            locks: crate::lock::LockManager::new(crate::lock::LockConfig::default()),
            activity: Arc::default(),
            rel_stats: crate::relstat::RelStats::default(),
            multis: Mutex::new(Multis {
                members: HashMap::new(),
                updated: HashMap::new(),
                sweep_at: MULTI_SWEEP_MIN,
            }),
        })
    }

    /// What each relation's work counted since startup (txn rule 10).
    pub fn rel_stats(&self) -> &crate::relstat::RelStats {
        &self.rel_stats
    }

    /// The sessions' status registry.
    pub fn activity(&self) -> &Arc<crate::activity::Activity> {
        &self.activity
    }

    /// Send `signal` to session `pid` (with `key`: only if it is the session's), waking
    /// it if it waits for a lock. False if there is no such session.
    pub fn signal_backend(
        &self,
        pid: u32,
        signal: crate::activity::Signal,
        key: Option<i32>,
    ) -> bool {
        let sent = self.activity.signal(pid, signal, key);
        if sent {
            self.locks().interrupt(pid);
        }
        sent
    }

    /// The oldest snapshot xmin session `backend` holds (`pg_stat_activity.backend_xmin`).
    pub fn xmin_of(&self, backend: u32) -> Option<Xid> {
        self.procs.lock().xmins.get(&backend).copied()
    }

    /// The lock manager every session of this database registers with.
    pub fn locks(&self) -> &Arc<crate::lock::LockManager> {
        &self.locks
    }

    /// From now on log to `wal` (after recovery).
    pub fn attach_wal(&self, wal: Arc<Wal>) {
        *self.wal.write() = Some(wal);
    }

    fn wal(&self) -> PgResult<Arc<Wal>> {
        self.wal
            .read()
            .clone()
            .ok_or_else(|| PgError::internal("the transaction manager has no WAL yet"))
    }

    /// Replay one `Xact` record (idempotent).
    pub fn redo(&self, r: &Record) -> PgResult<()> {
        let (&kind, body) = r.payload.split_first().ok_or_else(|| corrupt(r))?;
        if body.len() % 8 != 0 {
            return Err(corrupt(r));
        }
        let xids: Vec<Xid> = body
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        let end = r.end;
        let mut procs = self.procs.lock();
        match kind {
            REC_COMMIT | REC_ABORT => {
                let status = if kind == REC_COMMIT {
                    XidStatus::Committed
                } else {
                    XidStatus::Aborted
                };
                self.clog.set(&xids, status, end)?;
                if let Some(&max) = xids.iter().max() {
                    // The last id there is cannot have been handed out: a corrupt record.
                    let next = max.checked_add(1).ok_or_else(|| corrupt(r))?;
                    procs.next_xid = procs.next_xid.max(next);
                }
            }
            REC_XID_LIMIT => {
                let &[limit] = xids.as_slice() else {
                    return Err(corrupt(r));
                };
                procs.next_xid = procs.next_xid.max(limit);
            }
            _ => return Err(corrupt(r)),
        }
        procs.xid_limit = procs.next_xid;
        Ok(())
    }

    /// The checkpoint's part: write the commit log out and save the id limit, which
    /// covers every id handed out so far (storage wal rule 7).
    pub fn checkpoint(&self) -> PgResult<()> {
        // The redo point is set: wait out the commits already logged before it.
        drop(self.commit_fence.write());
        let wal = self.wal.read().clone();
        self.clog.checkpoint(wal.as_deref())?;
        let limit = self.procs.lock().xid_limit;
        let tmp = self.xid_file.with_extension("tmp");
        let io = |what: &str, p: &Path| {
            let what = format!("could not {what} \"{}\"", p.display());
            move |e| PgError::io(what, e)
        };
        let f = self.vfs.open(&tmp, true).map_err(io("open", &tmp))?;
        f.set_len(0).map_err(io("truncate", &tmp))?;
        f.write_all_at(&limit.to_le_bytes(), 0)
            .map_err(io("write", &tmp))?;
        f.sync().map_err(io("fsync", &tmp))?;
        self.vfs
            .rename(&tmp, &self.xid_file)
            .map_err(io("rename", &tmp))?;
        let dir = self.xid_file.parent().unwrap_or(Path::new("."));
        self.vfs.sync_dir(dir).map_err(io("fsync directory", dir))
    }

    /// A new transaction id, running from now on.
    pub fn assign_xid(&self) -> PgResult<Xid> {
        let mut procs = self.procs.lock();
        let xid = self.take_id(&mut procs)?;
        procs.running.insert(xid);
        Ok(xid)
    }

    /// The next unused id, logged as used (txn rule 4).
    fn take_id(&self, procs: &mut ProcArray) -> PgResult<Xid> {
        if procs.next_xid >= procs.xid_limit {
            let limit = procs.next_xid + XID_BLOCK;
            self.wal()?
                .log(RecordKind::Xact, &encode(REC_XID_LIMIT, &[limit]))?;
            procs.xid_limit = limit;
        }
        let xid = procs.next_xid;
        procs.next_xid += 1;
        Ok(xid)
    }

    /// A new multixact standing for `members`, the transactions that share a row lock
    /// (txn rule 8). Its id comes from the transaction ids, so it is never reused, even
    /// after a crash; it never runs, commits or aborts.
    pub fn create_multi(&self, members: &[RowLocker]) -> PgResult<Xid> {
        let id = self.take_id(&mut self.procs.lock())?;
        let mut multis = self.multis.lock();
        multis.sweep(self);
        multis.members.insert(id, members.into());
        Ok(id)
    }

    /// The members of multixact `multi`, or none if it is forgotten: then none of them
    /// runs any more (or the server restarted since), so none holds its lock.
    pub fn multi_members(&self, multi: Xid) -> Vec<RowLocker> {
        self.multis
            .lock()
            .members
            .get(&multi)
            .map_or_else(Vec::new, |m| m.to_vec())
    }

    /// Record `lockers` as holding the version at `tid` of `rel` alongside `updater`,
    /// which its `t_xmax` names (txn rule 8); replaces what was recorded for it.
    pub fn set_version_lockers(
        &self,
        rel: RelId,
        tid: ItemPointer,
        updater: Xid,
        lockers: &[RowLocker],
    ) {
        let mut multis = self.multis.lock();
        multis.sweep(self);
        multis.updated.insert((rel, tid), (updater, lockers.into()));
    }

    /// The lockers holding the version at `tid` of `rel` alongside `updater`, or none if
    /// they are forgotten (none of them runs) or were recorded with another updater (the
    /// entry belongs to an older tuple at that address).
    pub fn version_lockers(&self, rel: RelId, tid: ItemPointer, updater: Xid) -> Vec<RowLocker> {
        match self.multis.lock().updated.get(&(rel, tid)) {
            Some((u, m)) if *u == updater => m.to_vec(),
            _ => Vec::new(),
        }
    }

    /// Commit `xids` (a transaction and its committed subtransactions) atomically: one
    /// WAL record, durable before this returns (unless `synchronous_commit` is off).
    pub fn commit(&self, xids: &[Xid]) -> PgResult<()> {
        if xids.is_empty() {
            return Ok(());
        }
        let wal = self.wal()?;
        let _fence = self.commit_fence.read();
        let end = wal.log(RecordKind::Xact, &encode(REC_COMMIT, xids));
        let end = match end.and_then(|end| wal.commit().map(|()| end)) {
            Ok(end) => end,
            Err(e) => {
                // Not known to be durable: it stays running in memory, so nobody sees
                // its changes; the WAL refuses all writes from now on (wal rule 5).
                return Err(e);
            }
        };
        self.finish(xids, XidStatus::Committed, end)
    }

    /// Abort `xids`: their changes become invisible to everyone. The record need not be
    /// flushed: after a crash an unfinished id counts as aborted anyway.
    pub fn abort(&self, xids: &[Xid]) -> PgResult<()> {
        if xids.is_empty() {
            return Ok(());
        }
        // If the log is broken nothing after this survives a restart, where an unfinished
        // id counts as aborted: marking it aborted now is consistent.
        let end = self
            .wal()?
            .log(RecordKind::Xact, &encode(REC_ABORT, xids))
            .unwrap_or_default();
        self.finish(xids, XidStatus::Aborted, end)
    }

    fn finish(&self, xids: &[Xid], status: XidStatus, end: Lsn) -> PgResult<()> {
        let res = self.clog.set(xids, status, end);
        let mut procs = self.procs.lock();
        for x in xids {
            procs.running.remove(x);
        }
        drop(procs);
        self.ended.notify_all();
        res
    }

    /// Final status of `xid` as the commit log has it (FROZEN and older ids: committed).
    pub fn status(&self, xid: Xid) -> PgResult<XidStatus> {
        if xid < FIRST_NORMAL_XID {
            return Ok(if xid == crate::INVALID_XID {
                XidStatus::Aborted
            } else {
                XidStatus::Committed
            });
        }
        self.clog.status(xid)
    }

    /// Whether `xid` is running now.
    pub fn is_running(&self, xid: Xid) -> bool {
        self.procs.lock().running.contains(&xid)
    }

    /// A snapshot for session `backend`: everything committed before now is visible,
    /// nothing running now is. Holds back [`TxnManager::oldest_xmin`] until
    /// [`TxnManager::release_snapshots`].
    pub fn snapshot(&self, backend: u32) -> Snapshot {
        let mut procs = self.procs.lock();
        let xmax = procs.next_xid;
        let xip: Vec<Xid> = procs.running.iter().copied().collect();
        let xmin = xip.first().copied().unwrap_or(xmax);
        procs.xmins.entry(backend).or_insert(xmin);
        Snapshot {
            xmin,
            xmax,
            xip,
            cid: None,
        }
    }

    /// Session `backend` holds no snapshot any more (its transaction ended).
    pub fn release_snapshots(&self, backend: u32) {
        self.procs.lock().xmins.remove(&backend);
    }

    /// The oldest id any running transaction or held snapshot may still see as running:
    /// a tuple deleted by a transaction that committed before it is dead to everyone.
    pub fn oldest_xmin(&self) -> Xid {
        let procs = self.procs.lock();
        let mut m = procs.next_xid;
        if let Some(&x) = procs.running.first() {
            m = m.min(x);
        }
        for &x in procs.xmins.values() {
            m = m.min(x);
        }
        m
    }

    /// The next id to be handed out.
    pub fn next_xid(&self) -> Xid {
        self.procs.lock().next_xid
    }

    /// Move the next id forward to `xid` (tests of ids beyond 2^32; never backwards).
    pub fn advance_next_xid(&self, xid: Xid) {
        let mut procs = self.procs.lock();
        if xid > procs.next_xid {
            procs.next_xid = xid;
        }
    }

    /// Block until `xid` is no longer running; returns its final status.
    pub fn wait_for(&self, xid: Xid) -> PgResult<XidStatus> {
        let mut procs = self.procs.lock();
        while procs.running.contains(&xid) {
            self.ended.wait(&mut procs);
        }
        drop(procs);
        self.status(xid)
    }

    /// The commit log (for tests and statistics).
    pub fn clog(&self) -> &Clog {
        &self.clog
    }

    /// Truncate the commit log below `below` (txn rule 11), never past an id some
    /// transaction or snapshot may still see running. Returns the segments removed.
    pub fn truncate_clog(&self, below: Xid) -> PgResult<u64> {
        self.clog.truncate(below.min(self.oldest_xmin()))
    }
}

#[allow(dead_code)]
const _: () = assert!(FROZEN_XID < FIRST_NORMAL_XID);
