//! Myriad test kit: runs sqllogictest (`.slt`) files over the PostgreSQL wire protocol.
//!
//! The same files run against Myriad and against PostgreSQL 15 (DESIGN.md §5): PostgreSQL is
//! the oracle, so a file PostgreSQL disagrees with is a wrong test.
//!
//! Interface:
//! - [`PgWire`]: a [`sqllogictest::AsyncDB`] over `tokio_postgres` that sends every statement
//!   with the **simple query protocol**, so each value arrives as the server's text output
//!   (exactly what `psql` shows). NULL is written `NULL` and the empty string `(empty)`.
//! - Errors display as `<SQLSTATE>: <message>` ([`SqlError`]), so a file can match
//!   `statement error 42P01` or `query error 22012: division by zero` by regex, or
//!   `statement error (42P01)` by SQLSTATE alone.
//! - [`run_files`] runs each file on a fresh connection and reports every failure (file, line,
//!   diff), not just the first; [`slt_files`] lists the `.slt` files of a directory.
//! - [`isolation`]: multi-session isolation specs (`tests/isolation/*.spec`), with lock waits
//!   made visible, compared with transcripts produced against PostgreSQL 15.
//!
//! A string of several statements (`INSERT ...; SELECT ...`) yields the result of its *last*
//! statement, as `psql -c` did before version 15: rows if it returned rows, else its count.

pub mod isolation;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use sqllogictest::{DBOutput, DefaultColumnType, Record, Runner};
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

/// How long [`PgWire`]'s shutdown waits for the server to see the session end.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

/// How a NULL value is written in `.slt` results.
pub const NULL_TEXT: &str = "NULL";
/// How the empty string is written in `.slt` results (an empty cell would vanish).
pub const EMPTY_TEXT: &str = "(empty)";

/// Formats one value of a result row, as received in text form, for comparison with a file.
pub fn format_value(value: Option<&str>) -> String {
    match value {
        None => NULL_TEXT.to_owned(),
        Some("") => EMPTY_TEXT.to_owned(),
        Some(text) => text.to_owned(),
    }
}

/// An error reported by the server (with its SQLSTATE) or by the client library (without).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlError {
    /// Five-character SQLSTATE from the server's ErrorResponse; `None` for client-side errors
    /// (connection refused, connection closed, protocol violation).
    pub sqlstate: Option<String>,
    /// The primary message, without detail or hint.
    pub message: String,
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.sqlstate {
            Some(code) => write!(f, "{code}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for SqlError {}

impl From<tokio_postgres::Error> for SqlError {
    fn from(err: tokio_postgres::Error) -> Self {
        match err.as_db_error() {
            Some(db) => SqlError {
                sqlstate: Some(db.code().code().to_owned()),
                message: db.message().to_owned(),
            },
            None => {
                // Client-side errors keep their cause ("error connecting to server: Connection
                // refused") in the source chain.
                let mut message = err.to_string();
                let mut source = std::error::Error::source(&err);
                while let Some(cause) = source {
                    message.push_str(&format!(": {cause}"));
                    source = cause.source();
                }
                SqlError {
                    sqlstate: None,
                    message,
                }
            }
        }
    }
}

/// The result of one statement within a simple query.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StatementResult {
    /// `Some(n)` when the statement returned a row description of `n` columns (a query).
    pub columns: Option<usize>,
    /// Formatted rows (see [`format_value`]).
    pub rows: Vec<Vec<String>>,
    /// The row count from CommandComplete (rows affected or returned).
    pub count: u64,
}

/// Splits the messages of one simple query into per-statement results.
fn split_results(messages: Vec<SimpleQueryMessage>) -> Vec<StatementResult> {
    let mut results = Vec::new();
    let mut current = StatementResult::default();
    for message in messages {
        match message {
            SimpleQueryMessage::RowDescription(columns) => current.columns = Some(columns.len()),
            SimpleQueryMessage::Row(row) => {
                current
                    .rows
                    .push((0..row.len()).map(|i| format_value(row.get(i))).collect());
            }
            SimpleQueryMessage::CommandComplete(count) => {
                current.count = count;
                results.push(std::mem::take(&mut current));
            }
            // The enum is non-exhaustive; nothing else carries results today.
            _ => {}
        }
    }
    results
}

/// Chooses what a statement string of several statements reports: its last statement's result.
pub fn last_output(results: Vec<StatementResult>) -> DBOutput<DefaultColumnType> {
    match results.into_iter().last() {
        Some(StatementResult {
            columns: Some(columns),
            rows,
            ..
        }) => DBOutput::Rows {
            // The simple protocol's row description carries no types we keep; the runner does
            // not validate column types by default, so every column is `?`.
            types: vec![DefaultColumnType::Any; columns],
            rows,
        },
        Some(result) => DBOutput::StatementComplete(result.count),
        None => DBOutput::StatementComplete(0),
    }
}

/// One client session, speaking the simple query protocol.
pub struct PgWire {
    /// `None` once shut down.
    client: Option<Client>,
    connection: tokio::task::JoinHandle<()>,
    /// Set when the connection is found dead, so [`run_files`] can stop a file early instead of
    /// reporting every remaining record as "connection closed".
    lost: Arc<AtomicBool>,
}

impl PgWire {
    /// Connects to `url` (`postgres://user@host:port/db`), without TLS.
    pub async fn connect(url: &str) -> Result<Self, SqlError> {
        Self::connect_tracked(url, Arc::new(AtomicBool::new(false))).await
    }

    async fn connect_tracked(url: &str, lost: Arc<AtomicBool>) -> Result<Self, SqlError> {
        let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
        let connection = tokio::spawn(async move {
            if let Err(err) = connection.await {
                eprintln!("slt: connection error: {err}");
            }
        });
        Ok(PgWire {
            client: Some(client),
            connection,
            lost,
        })
    }
}

#[async_trait]
impl sqllogictest::AsyncDB for PgWire {
    type Error = SqlError;
    type ColumnType = DefaultColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<Self::ColumnType>, Self::Error> {
        let Some(client) = &self.client else {
            return Err(SqlError {
                sqlstate: None,
                message: "connection already shut down".to_owned(),
            });
        };
        match client.simple_query(sql).await {
            Ok(messages) => Ok(last_output(split_results(messages))),
            Err(err) => {
                if client.is_closed() {
                    self.lost.store(true, Ordering::SeqCst);
                }
                Err(err.into())
            }
        }
    }

    async fn shutdown(&mut self) {
        // Dropping the client makes the connection task send Terminate and finish; the timeout
        // bounds the wait if the server has stopped answering.
        drop(self.client.take());
        let finished = tokio::time::timeout(SHUTDOWN_WAIT, &mut self.connection).await;
        if finished.is_err() {
            self.connection.abort();
        }
    }

    async fn sleep(dur: Duration) {
        tokio::time::sleep(dur).await;
    }

    fn error_sql_state(err: &Self::Error) -> Option<String> {
        err.sqlstate.clone()
    }
}

/// The sorted `*.slt` files directly inside `dir` (empty if it cannot be read).
pub fn slt_files(dir: &Path) -> Vec<PathBuf> {
    files_with_extension(dir, "slt")
}

/// The files of `dir` whose extension is `ext`, sorted by name (none if it is unreadable).
pub fn files_with_extension(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|path| path.is_file() && path.extension().is_some_and(|e| e == ext))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// A command line's paths as files: each file as given, each directory as its `*.<ext>`
/// files in name order. An error (for exit status 2) names a missing path or a directory
/// without such files.
pub fn command_line_files(paths: &[PathBuf], ext: &str) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let found = files_with_extension(path, ext);
            if found.is_empty() {
                return Err(format!("no .{ext} files in {}", path.display()));
            }
            files.extend(found);
        } else if path.is_file() {
            files.push(path.clone());
        } else {
            return Err(format!("no such file or directory: {}", path.display()));
        }
    }
    Ok(files)
}

/// Runs every file on its own fresh connection to `connect_url`; see [`run_files_with_labels`].
pub async fn run_files(connect_url: &str, files: &[PathBuf]) -> Result<(), String> {
    run_files_with_labels(connect_url, files, &[]).await
}

/// Runs every file on its own fresh connection to `connect_url`, continuing past failures.
///
/// `labels` are matched by `skipif <label>` / `onlyif <label>` records. Prints one line per
/// file to stderr as it goes. On failure returns a report of every failing record (file,
/// line, expected and actual output) followed by a summary line.
pub async fn run_files_with_labels(
    connect_url: &str,
    files: &[PathBuf],
    labels: &[String],
) -> Result<(), String> {
    let mut report = String::new();
    let mut failed_files = 0usize;
    let mut failed_records = 0usize;
    for file in files {
        let failures = run_file(connect_url, file, labels).await;
        if failures.is_empty() {
            eprintln!("ok   {}", file.display());
        } else {
            eprintln!("FAIL {} ({} failures)", file.display(), failures.len());
            failed_files += 1;
            failed_records += failures.len();
            for failure in failures {
                report.push_str(&format!("--- {}\n{failure}\n", file.display()));
            }
        }
    }
    if failed_files == 0 {
        Ok(())
    } else {
        report.push_str(&format!(
            "{failed_records} failures in {failed_files} of {} files\n",
            files.len()
        ));
        Err(report)
    }
}

/// Runs one file; returns its failures, each already formatted.
async fn run_file(connect_url: &str, file: &Path, labels: &[String]) -> Vec<String> {
    let records = match sqllogictest::parse_file::<DefaultColumnType>(file) {
        Ok(records) => records,
        Err(err) => return vec![format!("parse error: {err}")],
    };
    let lost = Arc::new(AtomicBool::new(false));
    // Connect once up front so an unreachable server is one failure, not one per record.
    let first = match PgWire::connect_tracked(connect_url, Arc::clone(&lost)).await {
        Ok(conn) => conn,
        Err(err) => return vec![format!("cannot connect to {connect_url}: {err}")],
    };
    let mut first = Some(first);
    let url = connect_url.to_owned();
    let lost_for_new = Arc::clone(&lost);
    let mut runner = Runner::new(move || {
        let ready = first.take();
        let url = url.clone();
        let lost = Arc::clone(&lost_for_new);
        async move {
            match ready {
                Some(conn) => Ok(conn),
                None => PgWire::connect_tracked(&url, lost).await,
            }
        }
    });
    for label in labels {
        runner.add_label(label);
    }

    let mut failures = Vec::new();
    for record in records {
        if let Record::Halt { .. } = record {
            break;
        }
        if let Err(err) = runner.run_async(record).await {
            failures.push(err.display(false).to_string());
            if lost.load(Ordering::SeqCst) {
                failures.push("connection lost; rest of file skipped".to_owned());
                break;
            }
        }
    }
    runner.shutdown_async().await;
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(result: DBOutput<DefaultColumnType>) -> Vec<Vec<String>> {
        match result {
            DBOutput::Rows { rows, .. } => rows,
            _ => panic!("expected rows, got a statement count"),
        }
    }

    #[test]
    fn values_format_as_text_with_null_and_empty_marked() {
        assert_eq!(format_value(None), "NULL");
        assert_eq!(format_value(Some("")), "(empty)");
        assert_eq!(format_value(Some("1.5")), "1.5");
        assert_eq!(format_value(Some("t")), "t");
        // A stored string that looks like a marker is passed through unchanged.
        assert_eq!(format_value(Some("NULL")), "NULL");
    }

    #[test]
    fn server_errors_display_sqlstate_then_message() {
        let err = SqlError {
            sqlstate: Some("42P01".to_owned()),
            message: r#"relation "nosuch" does not exist"#.to_owned(),
        };
        assert_eq!(
            err.to_string(),
            r#"42P01: relation "nosuch" does not exist"#
        );
        assert_eq!(
            <PgWire as sqllogictest::AsyncDB>::error_sql_state(&err).as_deref(),
            Some("42P01")
        );
    }

    #[test]
    fn client_errors_display_message_only() {
        let err = SqlError {
            sqlstate: None,
            message: "connection closed".to_owned(),
        };
        assert_eq!(err.to_string(), "connection closed");
        assert_eq!(
            <PgWire as sqllogictest::AsyncDB>::error_sql_state(&err),
            None
        );
    }

    #[test]
    fn last_statement_decides_the_output() {
        let query = StatementResult {
            columns: Some(1),
            rows: vec![vec!["1".to_owned()]],
            count: 1,
        };
        let insert = StatementResult {
            columns: None,
            rows: vec![],
            count: 3,
        };
        assert_eq!(
            rows(last_output(vec![insert.clone(), query.clone()])),
            vec![vec!["1".to_owned()]]
        );
        assert!(matches!(
            last_output(vec![query, insert]),
            DBOutput::StatementComplete(3)
        ));
        assert!(matches!(
            last_output(vec![]),
            DBOutput::StatementComplete(0)
        ));
    }

    #[test]
    fn a_query_with_no_rows_is_still_rows() {
        let empty = StatementResult {
            columns: Some(2),
            rows: vec![],
            count: 0,
        };
        assert!(rows(last_output(vec![empty])).is_empty());
    }

    #[test]
    fn slt_files_are_sorted_and_filtered() {
        let dir = std::env::temp_dir().join(format!("myriad-testkit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["b.slt", "a.slt", "notes.md", "c.slt.bak"] {
            std::fs::write(dir.join(name), "").unwrap();
        }
        let names: Vec<String> = slt_files(&dir)
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(names, ["a.slt", "b.slt"]);
    }
}
