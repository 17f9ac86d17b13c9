//! Transactions: transaction ids, the commit log, snapshots, and the relation lock manager.
//!
//! - [`manager`]: hands out 64-bit transaction ids, logs commits and aborts, takes
//!   snapshots, and knows the oldest snapshot (VACUUM's horizon).
//! - [`clog`]: the commit log, two bits per id, cached pages written at checkpoints.
//! - [`xact`]: one session's transaction: lazily assigned ids, savepoints as
//!   subtransactions, command ids, combo command ids, its snapshots.
//! - [`activity`]: what each session is doing (`pg_stat_activity`).
//! - [`relstat`]: what each table's and index's work counted (`pg_stat_user_tables`).
//! - [`lock`]: PostgreSQL's eight table lock modes, a fast path with no slot limit for the
//!   weak modes, a partitioned shared lock table and deadlock detection (its README).
//!
//! Visibility rules (which tuple versions a snapshot sees) live with the tuple format in
//! `access::visibility`; this crate answers the questions they ask.

pub mod activity;
pub mod clog;
pub mod lock;
pub mod manager;
pub mod relstat;
pub mod xact;

pub use clog::XidStatus;
pub use manager::{RowLocker, TxnManager};
pub use xact::{Isolation, Tx};

/// A transaction id: 64 bits, so ids never wrap around (txn rule 1).
pub type Xid = u64;

/// A command id: the statements of one transaction, counted.
pub type Cid = u32;

/// No transaction (`t_xmax` of a tuple nobody deleted).
pub const INVALID_XID: Xid = 0;
/// The transaction of rows written before transactions existed: committed, visible to all.
pub const BOOTSTRAP_XID: Xid = 1;
/// A frozen tuple's xmin: committed, visible to all (VACUUM FREEZE).
pub const FROZEN_XID: Xid = 2;
/// The first id handed to a transaction.
pub const FIRST_NORMAL_XID: Xid = 3;

/// Which transactions' effects a statement sees: those committed before the snapshot was
/// taken. `xip` lists the ids running then (sorted); ids from `xmax` on started later.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// Every id below this had finished when the snapshot was taken.
    pub xmin: Xid,
    /// The first id not yet handed out when the snapshot was taken.
    pub xmax: Xid,
    pub xip: Vec<Xid>,
    /// The command of its own transaction the snapshot sees up to (not including):
    /// fixed for a portal, which goes on reading while later statements of its
    /// transaction write (PostgreSQL's `curcid`). `None`: the transaction's current
    /// command, for a statement that ends before the next begins.
    pub cid: Option<Cid>,
}

impl Snapshot {
    /// Whether `xid` counts as still running for this snapshot (its effects unseen even if
    /// it has committed since).
    pub fn in_progress(&self, xid: Xid) -> bool {
        if xid >= self.xmax {
            return true;
        }
        xid >= self.xmin && self.xip.binary_search(&xid).is_ok()
    }
}
