//! Who the session is: its user and database, per thread, for `current_user` and
//! `current_database()` (bound as constants: they never change during a session).
//!
//! As [`crate::datetime::session`], these are per-thread globals because each session
//! runs on its own thread: the server sets them when the session starts.

use std::cell::RefCell;

/// Myriad has one role, the bootstrap superuser every session acts as (it has no roles
/// or privileges yet): its OID and name are PostgreSQL's for a cluster initialised by the
/// `postgres` user, and every object's owner.
pub const BOOTSTRAP_ROLE_OID: u32 = 10;
pub const BOOTSTRAP_ROLE: &str = "postgres";

/// The PostgreSQL version Myriad reports (ParameterStatus, `server_version`, `version()`):
/// clients pick their SQL by it.
pub const SERVER_VERSION: &str = concat!("15.0 (Myriad ", env!("CARGO_PKG_VERSION"), ")");

thread_local! {
    static IDENTITY: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// Make `user` and `database` this thread's session identity.
pub fn set_identity(user: &str, database: &str) {
    IDENTITY.with(|i| *i.borrow_mut() = Some((user.to_string(), database.to_string())));
}

/// This thread's session user and database (`postgres` for a thread with none).
pub fn identity() -> (String, String) {
    IDENTITY.with(|i| {
        i.borrow()
            .clone()
            .unwrap_or_else(|| ("postgres".to_string(), "postgres".to_string()))
    })
}
