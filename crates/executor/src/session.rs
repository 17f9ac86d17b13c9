//! The session as a statement's execution sees it: [`Session`], made by the server for
//! each statement and passed explicitly, in [`crate::ExecContext`] and in every
//! operator's [`crate::exec::Env`], down to expression evaluation.
//!
//! PostgreSQL keeps what a backend's statements read of their session in per-backend
//! globals: its settings, the transaction's catalog view, `currval`'s memory, the clock.
//! Myriad passes them instead, so nothing about a session or its transaction is tied to
//! an OS thread: two sessions' statements may run interleaved on one thread, and a
//! portal may outlive the statement that opened it (executor rule 3).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use access::sequence::Sequences;
use catalog::CatalogSnapshot;
use common::session::SessionInfo;
use common::value::TextContext;
use common::{Oid, PgResult};
use storage::bufmgr::BufferPool;

pub use crate::reg_catalog::SnapshotRegCatalog;

/// The session's run-time settings, as SQL reads and changes them: `current_setting`,
/// `set_config` and `pg_settings`. The server keeps them (with their transactional
/// rules) and hands them to each statement ([`Session::settings`]).
pub trait SessionSettings: Send + Sync {
    /// `name`'s value as SHOW prints it (any case); `None` if there is no such setting.
    fn current(&self, name: &str) -> PgResult<Option<String>>;
    /// `set_config`: set `name` to `value` (to its reset value if `None`), until the
    /// transaction ends if `local`, undone if the transaction rolls back; returns the new
    /// value as SHOW prints it.
    fn set(&self, name: &str, value: Option<&str>, local: bool) -> PgResult<String>;
    /// `pg_settings`' rows, ordered by name.
    fn rows(&self) -> Vec<Vec<common::Value>>;
    /// What the planner reads of them.
    fn planner(&self) -> planner::PlannerSettings;
    /// `plan_cache_mode` alone (read at each execution of a prepared statement).
    fn plan_cache_mode(&self) -> planner::PlanCacheMode;
    /// `pg_cursors`' rows: the session's SQL cursors.
    fn cursor_rows(&self) -> Vec<Vec<common::Value>> {
        Vec::new()
    }
}

/// What a session remembers of the sequences it used, for its life, as PostgreSQL keeps
/// it per backend: `currval` and `lastval`.
#[derive(Debug, Default)]
pub struct SequenceMemory {
    /// `currval` of each sequence this session called `nextval` (or `setval`) on.
    pub(crate) currval: HashMap<Oid, i64>,
    /// The sequence of the last `nextval`, for `lastval()`.
    pub(crate) last: Option<Oid>,
}

/// What a statement's execution reads and changes of its session and database.
pub struct Session<'a> {
    /// Who the session is, and its clock, zone and catalog for text input and output.
    pub info: &'a SessionInfo,
    /// The catalog as the statement's transaction sees it (its own uncommitted DDL
    /// included): what system views, `reg*` names and sequence functions read.
    pub catalog: Arc<CatalogSnapshot>,
    pub settings: &'a dyn SessionSettings,
    pub sequence_memory: &'a RefCell<SequenceMemory>,
    /// The transaction is read-only: `nextval` and `setval` refuse (25006).
    pub read_only: bool,
    pub pool: &'a BufferPool,
    /// The running state of every sequence (shared by all sessions).
    pub sequences: &'a Sequences,
    /// The statement's transaction, and the catalog itself (its newest state, not the
    /// statement's snapshot): what [`Session::catalog_now`] reads.
    pub tx: &'a txn::Tx,
    pub live_catalog: &'a catalog::Catalog,
    /// What the session's temporary files hold, against its `temp_file_limit`.
    pub temp: &'a std::sync::Arc<storage::tempfile::TempBudget>,
    /// Notices a statement raises as it runs (a WARNING of `pg_cancel_backend`): the
    /// session sends them with the statement's next rows or its end.
    pub notices: &'a RefCell<Vec<common::PgError>>,
}

impl Session<'_> {
    /// The context values are read and shown in.
    pub fn text(&self) -> &TextContext {
        &self.info.text
    }

    /// The catalog as the transaction sees it now, not as the statement began: what a
    /// sequence function reads after waiting for a transaction that gave the sequence
    /// new storage (ALTER SEQUENCE RESTART), which publishes the catalog before its
    /// locks go.
    pub fn catalog_now(&self) -> Arc<CatalogSnapshot> {
        self.live_catalog.snapshot(self.tx)
    }
}

/// The text context of a statement that sees `catalog` at `clock`: `reg*` names are
/// read and shown through that catalog.
pub fn text_context(
    clock: common::datetime::SessionClock,
    catalog: Arc<CatalogSnapshot>,
) -> TextContext {
    TextContext {
        clock,
        catalog: Some(Arc::new(SnapshotRegCatalog(catalog))),
    }
}
