//! What each session is doing, for `pg_stat_activity` (PostgreSQL's backend status
//! array).
//!
//! Each session owns an [`Arc<BackendStatus>`] and updates it at the start and end of
//! every query: one uncontended mutex, and the query text copied, as PostgreSQL copies it
//! into shared memory. The registry itself is touched only when a session starts or
//! ends, and when someone reads `pg_stat_activity`. Lock waits are not recorded here:
//! the lock manager knows them (`LockManager::waiting_for`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::{Mutex, RwLock};

/// What another session (or a client's CancelRequest) may ask of a session: PostgreSQL's
/// signals to a backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// Cancel the running statement (57014), if any (`pg_cancel_backend`).
    Cancel,
    /// End the session (FATAL 57P01), even while it waits for its client
    /// (`pg_terminate_backend`).
    Terminate,
}

/// A session's flags that other threads set and its own reads where it checks for
/// interrupts (`Tx::check_for_interrupts`, lock waits).
pub struct Interrupts {
    /// Cancel the running statement. The lock manager's waits read it too; the session
    /// clears it before each statement (a cancel that finds it idle does nothing).
    pub cancel: Arc<AtomicBool>,
    /// End the session. Sets `cancel` too, so whatever it waits for gives up.
    pub terminate: AtomicBool,
    /// The key a CancelRequest must carry: what the session's BackendKeyData said.
    pub secret: i32,
    /// Wakes the session's connection while it waits for its client (to end it).
    waker: Mutex<Option<Box<dyn Fn() + Send + Sync>>>,
}

impl std::fmt::Debug for Interrupts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interrupts")
            .field("cancel", &self.cancel)
            .field("terminate", &self.terminate)
            .finish_non_exhaustive()
    }
}

impl Interrupts {
    /// What wakes the session's connection when it is to end.
    pub fn set_waker(&self, waker: Box<dyn Fn() + Send + Sync>) {
        *self.waker.lock() = Some(waker);
    }

    /// Whether the session is to end.
    pub fn terminating(&self) -> bool {
        self.terminate.load(Ordering::Acquire)
    }

    fn signal(&self, signal: Signal) {
        if signal == Signal::Terminate {
            self.terminate.store(true, Ordering::Release);
        }
        self.cancel.store(true, Ordering::Release);
        if signal == Signal::Terminate
            && let Some(wake) = &*self.waker.lock()
        {
            wake();
        }
    }
}

/// A key for a new session's CancelRequests: unpredictable to other clients (the
/// standard library's randomly seeded hasher over the pid and the clock).
fn secret_key(pid: u32) -> i32 {
    use std::hash::BuildHasher;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    std::collections::hash_map::RandomState::new().hash_one((pid, nanos)) as i32
}

/// `pg_stat_activity.state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendState {
    Active,
    Idle,
    IdleInTransaction,
    IdleInTransactionAborted,
}

impl BackendState {
    pub fn name(self) -> &'static str {
        match self {
            BackendState::Active => "active",
            BackendState::Idle => "idle",
            BackendState::IdleInTransaction => "idle in transaction",
            BackendState::IdleInTransactionAborted => "idle in transaction (aborted)",
        }
    }
}

#[derive(Clone, Debug)]
struct Current {
    state: BackendState,
    /// The running query, or the last one when idle.
    query: String,
    /// The session's `application_name` setting.
    application_name: String,
}

/// One session's status.
#[derive(Debug)]
pub struct BackendStatus {
    pid: u32,
    current: Mutex<Current>,
    interrupts: Arc<Interrupts>,
}

impl BackendStatus {
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The flags other sessions set to cancel or end this one.
    pub fn interrupts(&self) -> &Arc<Interrupts> {
        &self.interrupts
    }

    /// A query starts.
    pub fn start_query(&self, query: &str) {
        let mut c = self.current.lock();
        c.state = BackendState::Active;
        c.query.clear();
        c.query.push_str(query);
    }

    /// The query ended; the session now waits for the client in `state`.
    pub fn set_state(&self, state: BackendState) {
        self.current.lock().state = state;
    }

    /// The session's `application_name` changed.
    pub fn set_application_name(&self, name: &str) {
        let mut c = self.current.lock();
        c.application_name.clear();
        c.application_name.push_str(name);
    }

    /// (state, query, application_name).
    pub fn read(&self) -> (BackendState, String, String) {
        let c = self.current.lock();
        (c.state, c.query.clone(), c.application_name.clone())
    }
}

/// Every session's status.
#[derive(Default)]
pub struct Activity {
    backends: RwLock<BTreeMap<u32, Arc<BackendStatus>>>,
    /// `pg_stat_database`'s counts, since startup.
    pub counts: DatabaseCounts,
}

/// What `pg_stat_database` counts of the sessions' work, since startup.
#[derive(Default)]
pub struct DatabaseCounts {
    pub commits: std::sync::atomic::AtomicU64,
    pub rollbacks: std::sync::atomic::AtomicU64,
    pub deadlocks: std::sync::atomic::AtomicU64,
    pub sessions: std::sync::atomic::AtomicU64,
}

impl DatabaseCounts {
    pub fn add(counter: &std::sync::atomic::AtomicU64) {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn read(counter: &std::sync::atomic::AtomicU64) -> u64 {
        counter.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// A session's registration: leaves the registry when dropped.
pub struct Registration {
    activity: Arc<Activity>,
    status: Arc<BackendStatus>,
}

impl Registration {
    pub fn status(&self) -> &Arc<BackendStatus> {
        &self.status
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.activity.backends.write().remove(&self.status.pid);
    }
}

impl Activity {
    /// Session `pid` appears, idle.
    pub fn register(self: &Arc<Self>, pid: u32) -> Registration {
        DatabaseCounts::add(&self.counts.sessions);
        let status = Arc::new(BackendStatus {
            pid,
            current: Mutex::new(Current {
                state: BackendState::Idle,
                query: String::new(),
                application_name: String::new(),
            }),
            interrupts: Arc::new(Interrupts {
                cancel: Arc::new(AtomicBool::new(false)),
                terminate: AtomicBool::new(false),
                secret: secret_key(pid),
                waker: Mutex::new(None),
            }),
        });
        self.backends.write().insert(pid, status.clone());
        Registration {
            activity: self.clone(),
            status,
        }
    }

    /// Every session, by pid.
    pub fn sessions(&self) -> Vec<Arc<BackendStatus>> {
        self.backends.read().values().cloned().collect()
    }

    /// How many sessions there are.
    pub fn count(&self) -> usize {
        self.backends.read().len()
    }

    /// Send `signal` to session `pid`; with `key`, only if it is the session's (a
    /// CancelRequest). False if there is no such session (or the key is wrong). The
    /// caller wakes the session's lock wait, if any (`LockManager::interrupt`).
    pub fn signal(&self, pid: u32, signal: Signal, key: Option<i32>) -> bool {
        let Some(status) = self.backends.read().get(&pid).cloned() else {
            return false;
        };
        if key.is_some_and(|k| k != status.interrupts.secret) {
            return false;
        }
        status.interrupts.signal(signal);
        true
    }
}
