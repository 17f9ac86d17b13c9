//! Myriad's own system views: runtime statistics readable with SQL.
//!
//! They are not stored: each names a fixed set of columns, and the executor fills the one
//! row from the live counters when the view is scanned. A user table of the same name
//! takes precedence (PostgreSQL would search `pg_catalog` first; these are not
//! PostgreSQL's views, so Myriad lets a user's table win).

use std::sync::Arc;

use common::DataType;

use crate::{ColumnDesc, TableDesc};

/// A system view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SystemView {
    /// The relation file-descriptor cache (storage smgr rule 6).
    StatFd,
    /// The buffer pool.
    StatBuffers,
    /// The write-ahead log.
    StatWal,
}

impl SystemView {
    pub const ALL: [SystemView; 3] = [
        SystemView::StatFd,
        SystemView::StatBuffers,
        SystemView::StatWal,
    ];

    pub fn lookup(name: &str) -> Option<SystemView> {
        SystemView::ALL.into_iter().find(|v| v.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            SystemView::StatFd => "myriad_stat_fd",
            SystemView::StatBuffers => "myriad_stat_buffers",
            SystemView::StatWal => "myriad_stat_wal",
        }
    }

    /// Column names and types, in order.
    pub fn columns(self) -> &'static [(&'static str, DataType)] {
        use DataType::{Int8, Text};
        match self {
            SystemView::StatFd => &[
                ("max_open_files", Int8),
                ("open_files", Int8),
                ("hits", Int8),
                ("misses", Int8),
                ("evictions", Int8),
                ("eviction_syncs", Int8),
            ],
            SystemView::StatBuffers => &[
                ("pages", Int8),
                ("hits", Int8),
                ("reads", Int8),
                ("evictions", Int8),
                ("writes", Int8),
            ],
            SystemView::StatWal => &[
                ("records", Int8),
                ("bytes", Int8),
                ("syncs", Int8),
                ("checkpoints", Int8),
                ("insert_lsn", Text),
                ("flushed_lsn", Text),
                ("redo_lsn", Text),
            ],
        }
    }

    /// A descriptor for binding: the view's columns, no storage (OID 0).
    pub fn desc(self) -> Arc<TableDesc> {
        Arc::new(TableDesc {
            oid: 0,
            rel: 0,
            name: self.name().to_string(),
            columns: self
                .columns()
                .iter()
                .map(|(name, ty)| ColumnDesc {
                    name: name.to_string(),
                    ty: *ty,
                    not_null: true,
                    default: None,
                })
                .collect(),
            indexes: Vec::new(),
        })
    }
}
