//! The one user-facing error type.
//!
//! Two kinds of failure are kept apart (STYLE.md): user and operating errors are values of
//! [`PgError`], carrying the SQLSTATE PostgreSQL would send; programmer errors are
//! assertions. The server turns a panic in one session into [`SqlState::INTERNAL_ERROR`]
//! for that session only.

use std::fmt;

/// A five-character SQLSTATE code, as in PostgreSQL's `errcodes.txt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SqlState(pub &'static str);

impl SqlState {
    /// Informational: NOTICE and friends.
    pub const SUCCESSFUL_COMPLETION: SqlState = SqlState("00000");
    /// A WARNING without a more specific class.
    pub const WARNING: SqlState = SqlState("01000");
    /// A statement the grammar accepts but Myriad does not implement (yet).
    pub const FEATURE_NOT_SUPPORTED: SqlState = SqlState("0A000");
    /// A value that does not fit its type (`integer out of range`).
    pub const NUMERIC_VALUE_OUT_OF_RANGE: SqlState = SqlState("22003");
    /// A string longer than `varchar(n)` / `char(n)` allows.
    pub const STRING_DATA_RIGHT_TRUNCATION: SqlState = SqlState("22001");
    /// Division (or modulo) by zero.
    pub const DIVISION_BY_ZERO: SqlState = SqlState("22012");
    /// A literal that cannot be read as its type (`invalid input syntax for type integer`).
    pub const INVALID_TEXT_REPRESENTATION: SqlState = SqlState("22P02");
    /// A bad argument to a function (negative substring length, ...).
    pub const INVALID_PARAMETER_VALUE: SqlState = SqlState("22023");
    pub const SEQUENCE_GENERATOR_LIMIT_EXCEEDED: SqlState = SqlState("2200H");
    /// A value given to a GENERATED ALWAYS identity column.
    pub const GENERATED_ALWAYS: SqlState = SqlState("428C9");
    /// A bad substring length.
    pub const SUBSTRING_ERROR: SqlState = SqlState("22011");
    /// LIKE pattern ending in the escape character.
    pub const INVALID_ESCAPE_SEQUENCE: SqlState = SqlState("22025");
    /// Bad LIMIT / OFFSET value (negative).
    pub const INVALID_ROW_COUNT_IN_LIMIT_CLAUSE: SqlState = SqlState("2201W");
    pub const INVALID_ROW_COUNT_IN_RESULT_OFFSET_CLAUSE: SqlState = SqlState("2201X");
    /// A scalar subquery returned more than one row.
    pub const CARDINALITY_VIOLATION: SqlState = SqlState("21000");
    /// A NULL into a NOT NULL column.
    pub const NOT_NULL_VIOLATION: SqlState = SqlState("23502");
    /// A duplicate key in a PRIMARY KEY or UNIQUE constraint.
    pub const UNIQUE_VIOLATION: SqlState = SqlState("23505");
    /// A row referencing a key that is not there, or a referenced key removed.
    pub const FOREIGN_KEY_VIOLATION: SqlState = SqlState("23503");
    /// A row for which a CHECK constraint is false.
    pub const CHECK_VIOLATION: SqlState = SqlState("23514");
    /// A foreign key whose columns do not match a key of the referenced table.
    pub const INVALID_FOREIGN_KEY: SqlState = SqlState("42830");
    /// Malformed SQL.
    pub const SYNTAX_ERROR: SqlState = SqlState("42601");
    /// A column name that resolves to more than one column.
    pub const AMBIGUOUS_COLUMN: SqlState = SqlState("42702");
    /// A column name that resolves to nothing.
    pub const UNDEFINED_COLUMN: SqlState = SqlState("42703");
    /// A schema name that resolves to nothing.
    pub const INVALID_SCHEMA_NAME: SqlState = SqlState("3F000");
    /// A table name that resolves to nothing.
    pub const UNDEFINED_TABLE: SqlState = SqlState("42P01");
    /// A table that already exists.
    pub const DUPLICATE_TABLE: SqlState = SqlState("42P07");
    /// A column listed twice in CREATE TABLE or an INSERT column list.
    pub const DUPLICATE_COLUMN: SqlState = SqlState("42701");
    /// Two FROM items with the same name.
    pub const DUPLICATE_ALIAS: SqlState = SqlState("42712");
    /// A constraint name used twice.
    pub const DUPLICATE_OBJECT: SqlState = SqlState("42710");
    /// An expression whose type does not fit where it is used.
    pub const DATATYPE_MISMATCH: SqlState = SqlState("42804");
    pub const ARRAY_SUBSCRIPT_ERROR: SqlState = SqlState("2202E");
    pub const DATA_EXCEPTION: SqlState = SqlState("22000");
    pub const NULL_VALUE_NOT_ALLOWED: SqlState = SqlState("22004");
    /// A cast that does not exist (`cannot cast type boolean to bigint`).
    pub const CANNOT_COERCE: SqlState = SqlState("42846");
    /// An operator with no implementation for its argument types.
    pub const UNDEFINED_FUNCTION: SqlState = SqlState("42883");
    /// Several operators or functions match a call equally well.
    pub const AMBIGUOUS_FUNCTION: SqlState = SqlState("42725");
    /// A type name that resolves to nothing.
    pub const UNDEFINED_OBJECT: SqlState = SqlState("42704");
    pub const INVALID_REGULAR_EXPRESSION: SqlState = SqlState("2201B");
    /// An object cannot be dropped because another depends on it.
    pub const DEPENDENT_OBJECTS_STILL_EXIST: SqlState = SqlState("2BP01");
    /// A non-aggregated column outside GROUP BY, or an aggregate where none is allowed.
    pub const GROUPING_ERROR: SqlState = SqlState("42803");
    /// Misuse of a construct that is valid elsewhere (an aggregate in WHERE, ...).
    pub const INVALID_COLUMN_REFERENCE: SqlState = SqlState("42P10");
    /// A construct that is not allowed in this position.
    pub const INVALID_TABLE_DEFINITION: SqlState = SqlState("42P16");
    pub const INVALID_OBJECT_DEFINITION: SqlState = SqlState("42P17");
    /// Too many columns, too long a name, ...
    pub const TOO_MANY_COLUMNS: SqlState = SqlState("54011");
    /// A statement that is well-formed but not allowed here.
    pub const WRONG_OBJECT_TYPE: SqlState = SqlState("42809");
    /// A malformed protocol message.
    pub const PROTOCOL_VIOLATION: SqlState = SqlState("08P01");
    /// The connection to the client failed.
    pub const CONNECTION_FAILURE: SqlState = SqlState("08006");
    /// Bytes that are not valid in the encoding (UTF-8).
    pub const CHARACTER_NOT_IN_REPERTOIRE: SqlState = SqlState("22021");
    /// Disk I/O failed.
    pub const IO_ERROR: SqlState = SqlState("58030");
    /// Out of file descriptors (EMFILE, ENFILE) or another resource.
    pub const INSUFFICIENT_RESOURCES: SqlState = SqlState("53000");
    /// No space left on the device (ENOSPC).
    pub const DISK_FULL: SqlState = SqlState("53100");
    /// A file that should exist does not.
    pub const UNDEFINED_FILE: SqlState = SqlState("58P01");
    /// Data on disk is not what it should be (bad checksum, impossible page).
    pub const DATA_CORRUPTED: SqlState = SqlState("XX001");
    /// A bug: an invariant did not hold. Reported to the one session that hit it.
    pub const INTERNAL_ERROR: SqlState = SqlState("XX000");
    /// The server is shutting down.
    pub const ADMIN_SHUTDOWN: SqlState = SqlState("57P01");
    /// Too many buffers pinned at once.
    pub const CONFIGURATION_LIMIT_EXCEEDED: SqlState = SqlState("53400");
    /// `max_connections` sessions exist already.
    pub const TOO_MANY_CONNECTIONS: SqlState = SqlState("53300");
    /// A program limit such as the largest row that fits on a page.
    pub const PROGRAM_LIMIT_EXCEEDED: SqlState = SqlState("54000");
    /// `stack depth limit exceeded`: a statement nested too deeply.
    pub const STATEMENT_TOO_COMPLEX: SqlState = SqlState("54001");
    /// A name that is reserved or otherwise invalid.
    pub const INVALID_NAME: SqlState = SqlState("42602");
    /// `$n` where the statement has no parameter n (or no parameters at all).
    pub const UNDEFINED_PARAMETER: SqlState = SqlState("42P02");
    /// A parameter no context gave a type.
    pub const INDETERMINATE_DATATYPE: SqlState = SqlState("42P18");
    /// An unknown prepared statement name.
    pub const INVALID_SQL_STATEMENT_NAME: SqlState = SqlState("26000");
    /// PREPARE or Parse of a name that is taken.
    pub const DUPLICATE_PREPARED_STATEMENT: SqlState = SqlState("42P05");
    /// Bind to a named portal that exists.
    pub const DUPLICATE_CURSOR: SqlState = SqlState("42P03");
    /// An unknown portal name.
    pub const INVALID_CURSOR_NAME: SqlState = SqlState("34000");
    /// COPY data that does not fit its format (a missing or extra column, a broken
    /// quote).
    pub const BAD_COPY_FILE_FORMAT: SqlState = SqlState("22P04");
    /// A binary parameter value that is malformed for its type.
    pub const INVALID_BINARY_REPRESENTATION: SqlState = SqlState("22P03");
    /// A statement in a transaction that already failed: only ROLLBACK is accepted.
    pub const IN_FAILED_SQL_TRANSACTION: SqlState = SqlState("25P02");
    /// BEGIN inside a transaction block (a WARNING), or a statement that cannot run in one.
    pub const ACTIVE_SQL_TRANSACTION: SqlState = SqlState("25001");
    /// COMMIT / ROLLBACK / SAVEPOINT outside a transaction block.
    pub const NO_ACTIVE_SQL_TRANSACTION: SqlState = SqlState("25P01");
    /// A write in a READ ONLY transaction.
    pub const READ_ONLY_SQL_TRANSACTION: SqlState = SqlState("25006");
    /// The idle-in-transaction timeout ended the session.
    pub const IDLE_IN_TRANSACTION_SESSION_TIMEOUT: SqlState = SqlState("25P03");
    /// ROLLBACK TO / RELEASE of a savepoint that does not exist.
    pub const INVALID_SAVEPOINT_SPECIFICATION: SqlState = SqlState("3B001");
    /// A concurrent change makes this transaction's result impossible to serialize.
    pub const SERIALIZATION_FAILURE: SqlState = SqlState("40001");
    /// The transaction was chosen to break a deadlock.
    pub const DEADLOCK_DETECTED: SqlState = SqlState("40P01");
    /// NOWAIT, lock_timeout: a lock could not be had.
    pub const LOCK_NOT_AVAILABLE: SqlState = SqlState("55P03");
    /// An object in the wrong state for the request.
    pub const OBJECT_NOT_IN_PREREQUISITE_STATE: SqlState = SqlState("55000");
    /// DDL on a table a cursor of the same session reads.
    pub const OBJECT_IN_USE: SqlState = SqlState("55006");
    /// Another server holds the data directory (`postmaster.pid`).
    pub const LOCK_FILE_EXISTS: SqlState = SqlState("F0001");
    /// SET of a parameter fixed at server start.
    pub const CANT_CHANGE_RUNTIME_PARAM: SqlState = SqlState("55P02");
    /// statement_timeout or a cancel request stopped the statement (or the client ended
    /// COPY FROM STDIN with CopyFail).
    pub const QUERY_CANCELED: SqlState = SqlState("57014");
}

impl fmt::Display for SqlState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// Severity of a message sent to the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Fatal,
    Warning,
    Notice,
    /// What VERBOSE options report (sent whatever `client_min_messages` says).
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "ERROR",
            Severity::Fatal => "FATAL",
            Severity::Warning => "WARNING",
            Severity::Notice => "NOTICE",
            Severity::Info => "INFO",
        }
    }
}

/// A user-facing error (or notice): what PostgreSQL's `ereport` carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgError {
    pub severity: Severity,
    pub code: SqlState,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    /// 1-based character position in the statement text, as PostgreSQL's `P` field.
    pub position: Option<u32>,
    /// Where it happened (`COPY t, line 3, column a: "x"`), PostgreSQL's `W` field.
    /// Boxed: rare, and it keeps `PgResult` small.
    pub context: Option<Box<str>>,
}

pub type PgResult<T> = Result<T, PgError>;

impl PgError {
    pub fn new(code: SqlState, message: impl Into<String>) -> PgError {
        PgError {
            severity: Severity::Error,
            code,
            message: message.into(),
            detail: None,
            hint: None,
            position: None,
            context: None,
        }
    }

    /// A WARNING (not an error): sent to the client, execution continues.
    pub fn warning(code: SqlState, message: impl Into<String>) -> PgError {
        PgError {
            severity: Severity::Warning,
            ..PgError::new(code, message)
        }
    }

    /// A FATAL error: the session ends after sending it.
    pub fn fatal(code: SqlState, message: impl Into<String>) -> PgError {
        PgError {
            severity: Severity::Fatal,
            ..PgError::new(code, message)
        }
    }

    /// A NOTICE (not an error): sent to the client, execution continues.
    pub fn notice(message: impl Into<String>) -> PgError {
        PgError {
            severity: Severity::Notice,
            ..PgError::new(SqlState::SUCCESSFUL_COMPLETION, message)
        }
    }

    /// An INFO message (VACUUM VERBOSE): sent to the client, execution continues.
    pub fn info(message: impl Into<String>) -> PgError {
        PgError {
            severity: Severity::Info,
            ..PgError::new(SqlState::SUCCESSFUL_COMPLETION, message)
        }
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> PgError {
        self.detail = Some(detail.into());
        self
    }

    pub fn with_code(mut self, code: SqlState) -> PgError {
        self.code = code;
        self
    }

    /// 22021 for `bytes` that are not UTF-8 (the only encoding Myriad speaks), naming the
    /// bad sequence as PostgreSQL does (`0xe2 0x28`).
    pub fn invalid_utf8(bytes: &[u8], e: std::str::Utf8Error) -> PgError {
        let at = e.valid_up_to();
        let len = e.error_len().unwrap_or(bytes.len() - at).max(1);
        let bad: Vec<String> = bytes[at..]
            .iter()
            .take(len)
            .map(|b| format!("0x{b:02x}"))
            .collect();
        PgError::new(
            SqlState::CHARACTER_NOT_IN_REPERTOIRE,
            format!(
                "invalid byte sequence for encoding \"UTF8\": {}",
                bad.join(" ")
            ),
        )
    }

    /// Attach a context unless one is already set (the innermost wins).
    pub fn with_context(mut self, context: impl Into<String>) -> PgError {
        if self.context.is_none() {
            self.context = Some(context.into().into_boxed_str());
        }
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> PgError {
        self.hint = Some(hint.into());
        self
    }

    /// Attach a cursor position unless one is already set (the innermost position wins).
    pub fn with_position(mut self, position: Option<u32>) -> PgError {
        if self.position.is_none() {
            self.position = position;
        }
        self
    }

    pub fn syntax(message: impl Into<String>) -> PgError {
        PgError::new(SqlState::SYNTAX_ERROR, message)
    }

    pub fn unsupported(feature: impl fmt::Display) -> PgError {
        PgError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            format!("{feature} is not supported"),
        )
    }

    pub fn internal(message: impl Into<String>) -> PgError {
        PgError::new(SqlState::INTERNAL_ERROR, message)
    }

    /// A failed file operation: PostgreSQL's `errcode_for_file_access` codes (53000 out
    /// of file descriptors, 53100 disk full, 58P01 no such file, else 58030), and the
    /// system's message as its `%m` prints it.
    pub fn io(context: impl fmt::Display, err: std::io::Error) -> PgError {
        // Linux's ENFILE, EMFILE and ENOSPC.
        let code = match (err.kind(), err.raw_os_error()) {
            (_, Some(23 | 24)) => SqlState::INSUFFICIENT_RESOURCES,
            (std::io::ErrorKind::StorageFull, _) | (_, Some(28)) => SqlState::DISK_FULL,
            (std::io::ErrorKind::NotFound, _) => SqlState::UNDEFINED_FILE,
            _ => SqlState::IO_ERROR,
        };
        let text = err.to_string();
        let text = match text.rfind(" (os error ") {
            Some(at) if text.ends_with(')') => &text[..at],
            _ => &text,
        };
        PgError::new(code, format!("{context}: {text}"))
    }

    pub fn division_by_zero() -> PgError {
        PgError::new(SqlState::DIVISION_BY_ZERO, "division by zero")
    }
}

impl fmt::Display for PgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.severity.as_str(), self.message)?;
        if let Some(d) = &self.detail {
            write!(f, " (DETAIL: {d})")?;
        }
        Ok(())
    }
}

impl std::error::Error for PgError {}
