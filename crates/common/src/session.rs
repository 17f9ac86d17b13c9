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

/// PostgreSQL's server-side encoding names (`pg_enc2name_tbl`), indexed by encoding
/// number (`pg_database.encoding`, `pg_encoding_to_char`). Myriad speaks UTF8 (6).
pub const ENCODINGS: &[&str] = &[
    "SQL_ASCII",
    "EUC_JP",
    "EUC_CN",
    "EUC_KR",
    "EUC_TW",
    "EUC_JIS_2004",
    "UTF8",
    "MULE_INTERNAL",
    "LATIN1",
    "LATIN2",
    "LATIN3",
    "LATIN4",
    "LATIN5",
    "LATIN6",
    "LATIN7",
    "LATIN8",
    "LATIN9",
    "LATIN10",
    "WIN1256",
    "WIN1258",
    "WIN866",
    "WIN874",
    "KOI8R",
    "WIN1251",
    "WIN1252",
    "ISO_8859_5",
    "ISO_8859_6",
    "ISO_8859_7",
    "ISO_8859_8",
    "WIN1250",
    "WIN1253",
    "WIN1254",
    "WIN1255",
    "WIN1257",
    "KOI8U",
    "SJIS",
    "BIG5",
    "GBK",
    "UHC",
    "GB18030",
    "JOHAB",
    "SHIFT_JIS_2004",
];
