//! Fuzz targets for Myriad's front doors: every place where bytes from outside (a socket,
//! a query string, a disk) are decoded.
//!
//! Each target is one function taking `&[u8]`. It runs the real decoder or reader on the
//! bytes and asserts what must hold; a panic (an assertion included), a hang or an endless
//! allocation is a bug. The same functions run in two ways:
//! - under `cargo fuzz` (the `fuzz/` crate at the repository root, nightly Rust), one
//!   `fuzz/fuzz_targets/<name>.rs` per target, calling the function here;
//! - as ordinary tests on stable Rust (`tests/replay.rs`): every file of
//!   `fuzz/corpus/<name>/` and `fuzz/regressions/<name>/` goes through the function, so the
//!   corpus and every input that once failed are checked by `cargo test --workspace`.
//!
//! The targets ([`TARGETS`]; README.md beside this crate says what each one asserts):
//! - [`wire_frames`]: a client's byte stream through the frame reader and pgwire's decoder;
//! - [`bind_params`]: a Bind parameter in binary format, decoded for one of Myriad's types;
//! - [`sql_front_end`]: a query string through parse, bind and plan against a catalog;
//! - [`wal_record`]: log records replayed by crash recovery (storage, catalog, transactions);
//! - [`heap_page`]: heap pages read by scans, fetches, visibility checks and pruning;
//! - [`btree_page`]: btree pages read by amcheck, scans, searches, inserts and VACUUM.
//!
//! Inputs that are pages use the WAL's full-page image form ([`pages::page_images`]), so a
//! seed page is a few hundred bytes rather than 8 KiB.

pub mod pages;
pub mod sql_front_end;
pub mod wal;
pub mod wire;

pub use pages::{btree_page, heap_page};
pub use sql_front_end::sql_front_end;
pub use wal::wal_record;
pub use wire::{bind_params, wire_frames};

/// A fuzz target: runs one input, panics on a finding.
pub type Target = fn(&[u8]);

/// Every target, by the name its corpus directory and `fuzz/fuzz_targets/` file have.
pub const TARGETS: &[(&str, Target)] = &[
    ("wire_frames", wire_frames),
    ("bind_params", bind_params),
    ("sql_front_end", sql_front_end),
    ("wal_record", wal_record),
    ("heap_page", heap_page),
    ("btree_page", btree_page),
];
