//! What a lock is on: PostgreSQL's `LOCKTAG`, for the kinds Myriad uses.

use common::ids::{BlockNumber, OffsetNumber, Oid};

use crate::Xid;

/// The object a lock is on. The database is implicit: one lock manager serves one database,
/// whose oid ([`LockConfig::database_oid`](super::LockConfig)) only appears in messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LockTag {
    /// A table, index or other relation, by oid. The only tag with a fast path (lock rule 1).
    Relation(Oid),
    /// A transaction, by xid. Each transaction holds ExclusiveLock on its own xid until it
    /// ends; whoever must wait for it takes (and drops) ShareLock (lock rule 9).
    Transaction(Xid),
    /// One heap tuple: queueing for a row lock (PostgreSQL's `LOCKTAG_TUPLE`), held only
    /// while the row's lock bits are set by the winner.
    Tuple {
        rel: Oid,
        block: BlockNumber,
        offset: OffsetNumber,
    },
    /// A catalog object that is not a relation (a type, a schema), by class and oid.
    Object { class: Oid, id: Oid },
    /// `pg_advisory_lock(bigint)`.
    Advisory(u64),
}

impl LockTag {
    /// `pg_locks.locktype`.
    pub fn locktype(&self) -> &'static str {
        match self {
            LockTag::Relation(_) => "relation",
            LockTag::Transaction(_) => "transactionid",
            LockTag::Tuple { .. } => "tuple",
            LockTag::Object { .. } => "object",
            LockTag::Advisory(_) => "advisory",
        }
    }

    /// `pg_stat_activity.wait_event` of a session waiting for this lock (its
    /// `wait_event_type` is "Lock"). PostgreSQL names the event after the lock type.
    pub fn wait_event(&self) -> &'static str {
        self.locktype()
    }

    /// The tag as PostgreSQL's `DescribeLockTag` words it in error details:
    /// "relation 16384 of database 5", "transaction 745".
    pub fn describe(&self, database_oid: Oid) -> String {
        match *self {
            LockTag::Relation(rel) => format!("relation {rel} of database {database_oid}"),
            LockTag::Transaction(xid) => format!("transaction {xid}"),
            LockTag::Tuple { rel, block, offset } => {
                format!("tuple ({block},{offset}) of relation {rel} of database {database_oid}")
            }
            LockTag::Object { class, id } => {
                format!("object {id} of class {class} of database {database_oid}")
            }
            LockTag::Advisory(key) => format!(
                "advisory lock [{database_oid},{},{},1]",
                key >> 32,
                key & 0xffff_ffff
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_match_postgres() {
        assert_eq!(
            LockTag::Relation(16384).describe(5),
            "relation 16384 of database 5"
        );
        assert_eq!(LockTag::Transaction(745).describe(5), "transaction 745");
        assert_eq!(
            LockTag::Tuple {
                rel: 16384,
                block: 0,
                offset: 3
            }
            .describe(5),
            "tuple (0,3) of relation 16384 of database 5"
        );
        assert_eq!(
            LockTag::Advisory((7 << 32) | 9).describe(5),
            "advisory lock [5,7,9,1]"
        );
    }
}
