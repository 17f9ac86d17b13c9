//! Identifiers shared by every layer, named as in PostgreSQL.

/// A catalog object identifier (tables, types, namespaces), as PostgreSQL's `oid`.
pub type Oid = u32;

/// Identifies a relation's storage. Today one relation has one file per fork, named by its
/// `RelId`; it stays a separate name from `Oid` because TRUNCATE and rewrites will give a
/// relation new storage under the same `Oid` (PostgreSQL's relfilenode).
pub type RelId = u32;

/// A block (page) number within one relation fork.
pub type BlockNumber = u32;

/// A line pointer number within a page, 1-based as in PostgreSQL.
pub type OffsetNumber = u16;

/// A position in the write-ahead log: the byte offset in the log's endless stream. 0 is
/// "never logged" (a page that no WAL record has touched).
pub type Lsn = u64;

/// The physical address of a heap tuple: block and line pointer, PostgreSQL's `ItemPointer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ItemPointer {
    pub block: BlockNumber,
    pub offset: OffsetNumber,
}

/// First OID handed out to user objects; lower ones are reserved for built-in objects
/// (PostgreSQL's `FirstNormalObjectId`).
pub const FIRST_NORMAL_OID: Oid = 16384;
