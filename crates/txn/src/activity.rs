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

use parking_lot::{Mutex, RwLock};

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
}

impl BackendStatus {
    pub fn pid(&self) -> u32 {
        self.pid
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
        let status = Arc::new(BackendStatus {
            pid,
            current: Mutex::new(Current {
                state: BackendState::Idle,
                query: String::new(),
                application_name: String::new(),
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
}
