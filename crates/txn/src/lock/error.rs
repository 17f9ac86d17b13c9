//! How long a request may wait, and why it stopped waiting.

use std::time::{Duration, Instant};

use common::{PgError, SqlState};

/// How a lock request that cannot be granted at once behaves. The default blocks until
/// granted, a deadlock, or a cancel (lock rule 11).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaitPolicy {
    /// Fail at once with [`LockError::NotAvailable`] instead of waiting (`NOWAIT`).
    pub nowait: bool,
    /// `lock_timeout`: the longest this one request waits, counted from when it starts
    /// waiting; then [`LockError::LockTimeout`].
    pub lock_timeout: Option<Duration>,
    /// When the statement's `statement_timeout` runs out; then
    /// [`LockError::StatementTimeout`].
    pub statement_deadline: Option<Instant>,
    /// The session's `deadlock_timeout`; `None`: the manager's
    /// ([`LockConfig::deadlock_timeout`](super::LockConfig)).
    pub deadlock_timeout: Option<Duration>,
}

impl WaitPolicy {
    /// Wait as long as it takes.
    pub const BLOCK: WaitPolicy = WaitPolicy {
        nowait: false,
        lock_timeout: None,
        statement_deadline: None,
        deadlock_timeout: None,
    };

    /// Never wait.
    pub const NOWAIT: WaitPolicy = WaitPolicy {
        nowait: true,
        lock_timeout: None,
        statement_deadline: None,
        deadlock_timeout: None,
    };

    pub fn with_lock_timeout(mut self, timeout: Duration) -> WaitPolicy {
        self.lock_timeout = Some(timeout);
        self
    }

    pub fn with_deadlock_timeout(mut self, timeout: Duration) -> WaitPolicy {
        self.deadlock_timeout = Some(timeout);
        self
    }

    pub fn with_statement_deadline(mut self, deadline: Instant) -> WaitPolicy {
        self.statement_deadline = Some(deadline);
        self
    }
}

/// Why a lock request failed. The request left nothing behind: the session holds what it
/// held before the call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockError {
    /// NOWAIT and the lock is taken (55P03).
    NotAvailable,
    /// `lock_timeout` ran out while waiting (55P03).
    LockTimeout,
    /// The statement deadline passed while waiting (57014).
    StatementTimeout,
    /// The session's cancel flag was set while waiting (57014).
    Canceled,
    /// Waiting would never end: this session closes a cycle of waits and is the one to
    /// give up (40P01). `detail` is PostgreSQL's: one line per session in the cycle,
    /// "Process 12 waits for ShareLock on transaction 745; blocked by process 13.", the
    /// first line this session's.
    Deadlock { detail: String },
}

impl LockError {
    /// The error PostgreSQL reports. `what` names the object for NOWAIT's message, as the
    /// caller knows it: `relation "t"`, `row in relation "t"`.
    pub fn to_pg(&self, what: &str) -> PgError {
        match self {
            LockError::NotAvailable => PgError::new(
                SqlState::LOCK_NOT_AVAILABLE,
                format!("could not obtain lock on {what}"),
            ),
            LockError::LockTimeout => PgError::new(
                SqlState::LOCK_NOT_AVAILABLE,
                "canceling statement due to lock timeout",
            ),
            LockError::StatementTimeout => PgError::new(
                SqlState::QUERY_CANCELED,
                "canceling statement due to statement timeout",
            ),
            LockError::Canceled => PgError::new(
                SqlState::QUERY_CANCELED,
                "canceling statement due to user request",
            ),
            LockError::Deadlock { detail } => {
                PgError::new(SqlState::DEADLOCK_DETECTED, "deadlock detected")
                    .with_detail(detail.clone())
                    .with_hint("See server log for query details.")
            }
        }
    }
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockError::NotAvailable => f.write_str("lock not available"),
            LockError::LockTimeout => f.write_str("lock timeout"),
            LockError::StatementTimeout => f.write_str("statement timeout"),
            LockError::Canceled => f.write_str("canceled"),
            LockError::Deadlock { detail } => write!(f, "deadlock detected: {detail}"),
        }
    }
}

impl std::error::Error for LockError {}
