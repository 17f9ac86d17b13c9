//! The database a session thread's statements reach from inside expression evaluation
//! and system views: its catalog snapshot, buffer pool and running sequence states.
//!
//! Expressions are evaluated without a context argument ([`crate::eval::eval`] takes a
//! row), yet `nextval` needs the pool and the sequences, and `pg_class` the catalog. As
//! the session clock (`common::datetime::session`), this is per thread: each session
//! runs on its own thread, and the server attaches its database to that thread
//! ([`attach`]) before the session's first statement.

use std::cell::RefCell;
use std::sync::Arc;

use access::sequence::Sequences;
use catalog::CatalogSnapshot;
use common::{PgError, PgResult};
use storage::bufmgr::BufferPool;

/// What a session's statements reach through: the server's database.
pub trait Host: Send + Sync {
    fn catalog(&self) -> Arc<CatalogSnapshot>;
    fn pool(&self) -> &BufferPool;
    fn sequences(&self) -> &Sequences;
}

/// The session's run-time settings, as SQL reads and changes them: `current_setting`,
/// `set_config` and `pg_settings`. The server keeps them (with their transactional
/// rules); statements reach them through the session's thread ([`attach_settings`]).
pub trait SessionSettings: Send + Sync {
    /// `name`'s value as SHOW prints it (any case); `None` if there is no such setting.
    fn current(&self, name: &str) -> PgResult<Option<String>>;
    /// `set_config`: set `name` to `value` (to its reset value if `None`), until the
    /// transaction ends if `local`, undone if the transaction rolls back; returns the new
    /// value as SHOW prints it.
    fn set(&self, name: &str, value: Option<&str>, local: bool) -> PgResult<String>;
    /// `pg_settings`' rows, ordered by name.
    fn rows(&self) -> Vec<Vec<common::Value>>;
}

thread_local! {
    static HOST: RefCell<Option<Arc<dyn Host>>> = const { RefCell::new(None) };
    static SETTINGS: RefCell<Option<Arc<dyn SessionSettings>>> =
        const { RefCell::new(None) };
}

/// Let this thread's statements reach its session's settings.
pub fn attach_settings(settings: Arc<dyn SessionSettings>) {
    SETTINGS.with(|s| *s.borrow_mut() = Some(settings));
}

/// This thread's session settings (an internal error on a thread with none).
pub(crate) fn settings() -> PgResult<Arc<dyn SessionSettings>> {
    SETTINGS
        .with(|s| s.borrow().clone())
        .ok_or_else(|| PgError::internal("no session settings are attached to this thread"))
}

/// Let this thread's statements reach `host` (made once per session thread).
pub fn attach(host: impl FnOnce() -> Arc<dyn Host>) {
    HOST.with(|h| {
        let mut h = h.borrow_mut();
        if h.is_none() {
            *h = Some(host());
            common::value::attach_reg_catalog(std::rc::Rc::new(
                crate::catalog_funcs::HostRegCatalog,
            ));
        }
    });
}

/// This thread's database (an internal error on a thread no session attached).
pub(crate) fn host() -> PgResult<Arc<dyn Host>> {
    HOST.with(|h| h.borrow().clone())
        .ok_or_else(|| PgError::internal("no database is attached to this thread"))
}
