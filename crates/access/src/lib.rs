//! Myriad's access layer: how rows live in pages.
//!
//! - [`tuple`](mod@tuple): the heap tuple format (header with 64-bit xmin/xmax, null bitmap, column
//!   data) and its encoding from / decoding to [`common::Value`]s.
//! - [`heapam`]: the heap access method: insert, delete, update, fetch by item pointer,
//!   and the sequential scan [`HeapScan`]. The one place heap pages change.
//! - [`nbtree`]: btree indexes (Lehman–Yao, root cached per index, every step one
//!   mini-transaction).
//! - [`sequence`]: sequence counters, one page each, logged ahead as PostgreSQL's.
//! - [`visibilitymap`]: each heap page's all-visible and all-frozen bits (access rule 9).
//! - [`freespace`]: each heap page's room, for inserts to find (access rule 10).
//! - [`toast`]: values too large for their row, compressed or out of line (access rule 12).
//!
//! Below: `storage` (pages, buffer pool, WAL). Above: the executor, which turns rows into
//! tuples and back. Rules: this crate's README.md ("access rule N", "tuple rule N",
//! "nbtree rule N").

pub mod freespace;
pub mod heapam;
mod mapfork;
pub mod nbtree;
pub mod sequence;
pub mod toast;
pub mod tuple;
pub mod visibility;
pub mod visibilitymap;

pub use heapam::{HeapScan, heap_delete, heap_fetch, heap_insert, heap_update};
