//! Myriad's storage layer: bytes on disk, as pages, through a bounded cache.
//!
//! Bottom to top:
//! - [`vfs`]: every file operation behind the [`Vfs`] / [`VfsFile`] traits, so a simulator
//!   can drop unsynced writes and tear pages ([`OsVfs`] is the real file system;
//!   [`simvfs`] is the simulator, for crash and fault tests).
//! - [`smgr`]: relations as arrays of 8 KiB blocks in `base/<rel>`, sizes and existence
//!   cached in memory, open files bounded by an fd cache ([`Smgr`]).
//! - [`page`]: PostgreSQL's slotted page layout, checksums, verification ([`Page`],
//!   [`PageMut`]).
//! - [`bufmgr`]: the buffer pool: pins, clock sweep, partitioned mapping table, content
//!   locks ([`BufferPool`], [`PinnedBuffer`]).
//! - [`xlog`]: the write-ahead log, group commit, checkpoints, crash recovery ([`Wal`]).
//! - [`mtr`]: mini-transactions, the one way a logged page changes ([`Mtr`]).
//!
//! The rules these modules keep are numbered in this crate's README.md; code cites them as
//! "buffer rule N" / "smgr rule N" / "wal rule N". A lower module never calls a higher
//! one (upper layers reach recovery and checkpoints through closures they pass in), and
//! nothing here knows what a tuple is.

pub mod bufmgr;
pub mod mtr;
pub mod page;
pub mod simvfs;
pub mod smgr;
pub mod tempfile;
pub mod vfs;
pub mod xlog;

pub use bufmgr::{
    BufferPool, BufferPoolStats, BufferReadGuard, BufferTag, BufferWriteGuard, PinnedBuffer,
};
pub use mtr::{Mtr, PageLatch};
pub use page::{Page, PageMut};
pub use smgr::Smgr;
pub use vfs::{OsVfs, Vfs, VfsFile};
pub use xlog::{Wal, WalOptions};
