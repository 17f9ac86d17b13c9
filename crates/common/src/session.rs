//! Who the session is and what its statements read of it: [`SessionInfo`], made by the
//! server for each statement and passed down to binding (`current_user` and
//! `current_database()` are bound as constants: they never change during a session),
//! execution and the wire's text output. Nothing here is kept per thread, so sessions can
//! share threads (issue 26).

use crate::value::TextContext;

/// Myriad has one role, the bootstrap superuser every session acts as (it has no roles
/// or privileges yet): its OID and name are PostgreSQL's for a cluster initialised by the
/// `postgres` user, and every object's owner.
pub const BOOTSTRAP_ROLE_OID: u32 = 10;
pub const BOOTSTRAP_ROLE: &str = "postgres";

/// The PostgreSQL version Myriad reports (ParameterStatus, `server_version`, `version()`):
/// clients pick their SQL by it.
pub const SERVER_VERSION: &str = concat!("15.0 (Myriad ", env!("CARGO_PKG_VERSION"), ")");

/// What a statement reads of its session, from binding to the wire.
#[derive(Clone, Debug)]
pub struct SessionInfo {
    /// The startup packet's user and database.
    pub user: String,
    pub database: String,
    /// The session's process id (`pg_backend_pid()`).
    pub backend_pid: u32,
    /// The clock, zone and catalog text input and output read.
    pub text: TextContext,
}

impl SessionInfo {
    /// Outside any session (tests, background work): the bootstrap role in database
    /// `postgres`, pid 0, and a detached text context.
    pub fn detached() -> SessionInfo {
        SessionInfo {
            user: BOOTSTRAP_ROLE.to_string(),
            database: "postgres".to_string(),
            backend_pid: 0,
            text: TextContext::detached(),
        }
    }
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
