//! Transactions: transaction ids, the commit log, snapshots, and the relation lock manager.
//!
//! - [`lock`]: PostgreSQL's eight table lock modes, a fast path with no slot limit for the
//!   weak modes, a partitioned shared lock table and deadlock detection (its README).

pub mod lock;
