//! The lock manager: PostgreSQL's heavyweight locks (`storage/lmgr`) for relations,
//! transactions, tuples and other objects, held by sessions until transaction end.
//!
//! The rules it keeps, and why they are correct, are numbered in this module's README
//! (`crates/txn/src/lock/README.md`, "lock rule N"); the code cites them.
//!
//! # Interface
//!
//! - [`LockManager::new`] makes the one manager of a database (`Arc<LockManager>`);
//!   [`LockManager::register`] gives each session (a thread, identified by a pid the
//!   caller picks) its [`SessionLocks`], which leaves the registry when dropped.
//! - [`SessionLocks::lock`] takes a [`LockMode`] on a [`LockTag`] under a [`WaitPolicy`]
//!   (block, NOWAIT, `lock_timeout`, a statement deadline; the cancel flag of
//!   [`SessionLocks::set_cancel`] always applies). It fails with a [`LockError`], which
//!   [`LockError::to_pg`] turns into PostgreSQL's error (55P03, 57014, 40P01).
//! - Takes are counted: [`SessionLocks::unlock`] releases one; [`SessionLocks::release_all`]
//!   releases everything at transaction end; [`SessionLocks::mark`] and
//!   [`SessionLocks::release_since`] release what a rolled-back savepoint took.
//! - Row-level waits go through here too: a transaction holds ExclusiveLock on
//!   [`LockTag::Transaction`] of its own xid, and [`SessionLocks::wait_for_transaction`]
//!   waits for another to end; [`LockTag::Tuple`] queues row lockers. So the deadlock
//!   detector sees them.
//! - Introspection: [`LockManager::snapshot`] (`pg_locks`) and
//!   [`LockManager::waiting_for`] (`pg_stat_activity.wait_event`).
//!
//! # Shape
//!
//! Weak relation locks (AccessShare, RowShare, RowExclusive) go to the session's own
//! fast-path table, a hash map with no slot limit behind a mutex only strong lockers ever
//! contend for. Strong ones (Share and up) announce themselves in one of 1024 counters and
//! pull every session's conflicting fast-path entries into the shared table, 128
//! partitions of `tag → LockEntry` each behind its own mutex, with granted modes per
//! session and a FIFO wait queue. Waiters sleep on their own condition variable; after
//! `deadlock_timeout` a waiter searches the wait-for graph for a cycle through itself.
//!
//! Locking order (lock rule 15), outermost first: the session registry; one session's fast-path table
//! (several only in `snapshot`, by pid); partitions (several only in deadlock checks and
//! `snapshot`, by index); one session's wait slot.

mod deadlock;
mod error;
mod hash;
mod manager;
mod mode;
mod proc;
mod session;
mod table;
mod tag;

pub use error::{LockError, WaitPolicy};
pub use manager::{LockConfig, LockInfo, LockManager};
pub use mode::LockMode;
pub use session::{LockMark, SessionLocks};
pub use tag::LockTag;
