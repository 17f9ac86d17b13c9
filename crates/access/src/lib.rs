//! Myriad's access layer: how rows live in pages.
//!
//! - [`tuple`](mod@tuple): the heap tuple format (header with 64-bit xmin/xmax, null bitmap, column
//!   data) and its encoding from / decoding to [`common::Value`]s.
//! - [`heapam`]: the heap access method: insert, delete, update, fetch by item pointer,
//!   and the sequential scan [`HeapScan`]. The one place heap pages change.
//! - [`nbtree`]: btree indexes (Lehman–Yao, root cached per index, every step one
//!   mini-transaction).
//! - [`sequence`]: sequence counters, one page each, logged ahead as PostgreSQL's.
//!
//! Below: `storage` (pages, buffer pool, WAL). Above: the executor, which turns rows into
//! tuples and back. Visibility map and free space map arrive as `visibilitymap` and
//! `freespace` with their issues. Rules: this crate's README.md ("access rule N",
//! "tuple rule N", "nbtree rule N").

pub mod freespace;
pub mod heapam;
pub mod nbtree;
pub mod sequence;
pub mod tuple;
pub mod visibility;
pub mod visibilitymap;

pub use heapam::{HeapScan, heap_delete, heap_fetch, heap_insert, heap_update};
