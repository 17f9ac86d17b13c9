//! A connection's session: its transaction block state and the statements that drive it.
//!
//! PostgreSQL's transaction block rules, as a client sees them:
//! - Outside BEGIN, a query string runs as one implicit transaction: it commits after
//!   the string's last statement, and an error in any statement rolls back all of them.
//! - BEGIN / START TRANSACTION [modes] opens a block (statements of the same string that
//!   came before it join the block); COMMIT / END ends it, ROLLBACK / ABORT undoes it.
//!   COMMIT of a failed block rolls back and says `ROLLBACK`.
//! - After an error inside a block, every statement but ROLLBACK, COMMIT and ROLLBACK TO
//!   gets 25P02 until the block ends.
//! - SAVEPOINT / RELEASE / ROLLBACK TO are subtransactions (`txn::Tx`).
//! - SERIALIZABLE is refused (0A000): Myriad does not run it, and never runs a weaker
//!   level under its name. READ UNCOMMITTED is READ COMMITTED, as in PostgreSQL.
//!
//! DDL is transactional, as in PostgreSQL: what CREATE, ALTER and DROP change is seen by
//! the transaction alone until it commits, and a ROLLBACK (or ROLLBACK TO a savepoint
//! before it) undoes it (`catalog::Catalog::commit`). A sequence restart (ALTER SEQUENCE
//! ... RESTART, TRUNCATE ... RESTART IDENTITY) gives the sequence new storage, so it is
//! undone too (`catalog::Catalog::renew_sequence`); `nextval` and `setval` themselves are
//! not transactional, as in PostgreSQL.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::{PgError, PgResult, SqlState, Value};
use parking_lot::Mutex;
use sql::parser::{Command, Statement};
use sqlparser::ast::{TransactionAccessMode, TransactionIsolationLevel, TransactionMode};
use txn::lock::WaitPolicy;
use txn::{Isolation, Tx};
use wire::{Completed, StatementOutcome, TxStatus};

use crate::Database;
use crate::extended::{BoundParams, Portal, Prepared};
use crate::settings::{self, Setting, Settings, Val};

/// One connection's session.
pub struct Session {
    pub(crate) db: Arc<Database>,
    /// Shared with the session's live portals, which run in it (`executor::portal`).
    pub(crate) tx: std::rc::Rc<Tx>,
    /// Inside BEGIN ... COMMIT.
    pub(crate) explicit: bool,
    /// The block failed: only ROLLBACK (or ROLLBACK TO) is accepted.
    pub(crate) failed: bool,
    pub(crate) settings: Arc<Mutex<Settings>>,
    /// What statements reach of the session: its settings (`current_setting`,
    /// `set_config`, `pg_settings`).
    hook: Arc<SettingsHook>,
    /// Who the session is, and the clock, zone and catalog its current statement reads
    /// and shows values with (`set_statement_context`).
    pub(crate) info: common::session::SessionInfo,
    /// `currval` and `lastval`, for the session's life.
    sequence_memory: std::rc::Rc<std::cell::RefCell<executor::session::SequenceMemory>>,
    /// Notices statements raise as they run, sent with the next outcome or rows
    /// ([`Session::take_notices`]).
    notices: std::rc::Rc<std::cell::RefCell<Vec<PgError>>>,
    /// The catalog `self.info`'s `reg*` names read, kept while the transaction's
    /// catalog is the same snapshot (one allocation per catalog change, not per
    /// statement).
    reg_catalog: Option<Arc<executor::session::SnapshotRegCatalog>>,
    /// This session in `pg_stat_activity`.
    pub(crate) activity: txn::activity::Registration,
    /// Wakes the connection waiting for its client when the session is to end.
    end_notify: Arc<tokio::sync::Notify>,
    /// What the session's temporary files hold, against its `temp_file_limit`.
    temp: Arc<storage::tempfile::TempBudget>,
    /// Prepared statements by name ("" is the unnamed one): `extended`.
    pub(crate) statements: HashMap<String, Prepared>,
    /// Portals by name ("" is the unnamed one).
    pub(crate) portals: HashMap<String, Portal>,
    /// Cursors by name (DECLARE).
    pub(crate) cursors: crate::cursor::Cursors,
    /// A COPY FROM STDIN waiting for data, and the statements after it.
    pub(crate) copy: Option<crate::copy::CopyState>,
    pub(crate) rest: Option<crate::copy::RestOfString>,
    /// A simple Query's statement whose rows are being sent, and the statements after
    /// it once it has ended (`stream`).
    pub(crate) streaming: Option<crate::stream::Streaming>,
    pub(crate) after_stream: Option<crate::copy::RestOfString>,
    /// Tables TRUNCATEd in this transaction, with the subtransaction depth (for COPY
    /// FREEZE's precondition).
    pub(crate) truncated: Vec<(common::Oid, usize)>,
    /// What the client was last told of each `Setting::REPORTED` setting, and
    /// `Settings::changes` then.
    reported: Vec<String>,
    reported_at: u64,
}

/// The name PostgreSQL's read-only error uses for a statement that writes, if it does.
fn write_kind(stmt: &Statement) -> Option<&'static str> {
    Some(match stmt {
        // EXPLAIN ANALYZE runs its statement.
        Statement::Explain {
            analyze,
            statement,
            options,
            ..
        } => {
            let analyzes = *analyze
                || options.iter().flatten().any(|o| {
                    o.name.value.eq_ignore_ascii_case("analyze")
                        && o.arg.as_ref().is_none_or(|a| {
                            common::value::parse_bool(&a.to_string().replace('\'', ""))
                                .unwrap_or(true)
                        })
                });
            return if analyzes {
                write_kind(statement)
            } else {
                None
            };
        }
        Statement::Query(q) => match q.locks.first().map(|l| sql::parser::lock_clause(l).mode) {
            Some(common::RowLockMode::Update) => "SELECT FOR UPDATE",
            Some(common::RowLockMode::NoKeyUpdate) => "SELECT FOR NO KEY UPDATE",
            Some(common::RowLockMode::Share) => "SELECT FOR SHARE",
            Some(common::RowLockMode::KeyShare) => "SELECT FOR KEY SHARE",
            None => return None,
        },
        Statement::Insert(_) => "INSERT",
        Statement::Update(_) => "UPDATE",
        Statement::Delete(_) => "DELETE",
        Statement::CreateTable(_) => "CREATE TABLE",
        Statement::CreateIndex(_) => "CREATE INDEX",
        Statement::CreateSequence { .. } => "CREATE SEQUENCE",
        Statement::Drop {
            object_type: sqlparser::ast::ObjectType::Index,
            ..
        } => "DROP INDEX",
        Statement::Drop {
            object_type: sqlparser::ast::ObjectType::Sequence,
            ..
        } => "DROP SEQUENCE",
        Statement::Drop { .. } => "DROP TABLE",
        Statement::AlterTable(_) => "ALTER TABLE",
        Statement::Comment { .. } => "COMMENT",
        Statement::Truncate(_) => "TRUNCATE TABLE",
        _ => return None,
    })
}

/// When PostgreSQL's ALTER TABLE runs an action of a statement with several
/// (`AT_PASS_*` in its tablecmds.c): drops, then added columns, CHECK constraints, SET
/// NOT NULL, primary keys and unique constraints, then foreign keys and defaults.
fn alter_pass(op: &sqlparser::ast::AlterTableOperation) -> u8 {
    use sqlparser::ast::{AlterColumnOperation as Col, AlterTableOperation as Op, TableConstraint};
    match op {
        Op::DropColumn { .. } | Op::DropConstraint { .. } => 0,
        Op::AlterColumn {
            op: Col::DropNotNull | Col::DropDefault,
            ..
        } => 0,
        Op::AlterColumn {
            op: Col::SetDataType { .. },
            ..
        } => 1,
        Op::AddColumn { .. } => 4,
        Op::AddConstraint {
            constraint: TableConstraint::Check(_),
            ..
        } => 5,
        Op::AlterColumn {
            op: Col::SetNotNull,
            ..
        } => 6,
        Op::AddConstraint {
            constraint: TableConstraint::PrimaryKey(_) | TableConstraint::Unique(_),
            ..
        } => 7,
        Op::AddConstraint { .. }
        | Op::AlterColumn {
            op: Col::SetDefault { .. },
            ..
        } => 9,
        _ => 10,
    }
}

pub(crate) fn aborted_block() -> PgError {
    PgError::new(
        SqlState::IN_FAILED_SQL_TRANSACTION,
        "current transaction is aborted, commands ignored until end of transaction block",
    )
}

fn only_in_block(what: &str) -> PgError {
    PgError::new(
        SqlState::NO_ACTIVE_SQL_TRANSACTION,
        format!("{what} can only be used in transaction blocks"),
    )
}

fn no_transaction_warning() -> PgError {
    PgError::warning(
        SqlState::NO_ACTIVE_SQL_TRANSACTION,
        "there is no transaction in progress",
    )
}

/// The isolation level and access mode a list of modes asks for.
fn modes(list: &[TransactionMode]) -> PgResult<(Option<Isolation>, Option<bool>)> {
    let mut iso = None;
    let mut ro = None;
    for m in list {
        match m {
            TransactionMode::IsolationLevel(l) => {
                iso = Some(match l {
                    TransactionIsolationLevel::ReadUncommitted
                    | TransactionIsolationLevel::ReadCommitted => Isolation::ReadCommitted,
                    TransactionIsolationLevel::RepeatableRead => Isolation::RepeatableRead,
                    TransactionIsolationLevel::Serializable => {
                        return Err(settings::serializable_refused());
                    }
                    TransactionIsolationLevel::Snapshot => {
                        return Err(PgError::syntax("syntax error at or near \"SNAPSHOT\""));
                    }
                })
            }
            TransactionMode::AccessMode(a) => ro = Some(*a == TransactionAccessMode::ReadOnly),
        }
    }
    Ok((iso, ro))
}

fn done(tag: &str) -> executor::StatementResult {
    executor::StatementResult {
        tag: tag.to_string(),
        ..Default::default()
    }
}

/// The error a panic in statement `stmt` becomes: XX000 for this session only (server
/// rule 3).
pub(crate) fn panic_error(p: &(dyn std::any::Any + Send), stmt: &Command) -> PgError {
    let msg = panic_message(p);
    tracing::error!(panic = %msg, statement = %stmt, "statement panicked");
    PgError::new(SqlState::INTERNAL_ERROR, format!("internal error: {msg}"))
}

/// The error a panic while a portal's rows were fetched becomes.
pub(crate) fn panic_payload_error(p: &(dyn std::any::Any + Send)) -> PgError {
    let msg = panic_message(p);
    tracing::error!(panic = %msg, "fetching rows panicked");
    PgError::new(SqlState::INTERNAL_ERROR, format!("internal error: {msg}"))
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// A statement's result for the wire, its rows shown in `text` (the statement's context:
/// the rows go out after the whole query string has run, and a later SET TimeZone must
/// not change them).
pub(crate) fn to_wire(
    r: executor::StatementResult,
    text: &common::value::TextContext,
) -> (Vec<PgError>, Completed) {
    let copy_out = r.copy_out;
    let rows = r.rows;
    let columns = r
        .columns
        .map(|cols| crate::extended::wire_columns(&cols, &vec![r.binary; cols.len()]));
    (
        r.notices,
        Completed {
            columns,
            rows,
            tag: r.tag,
            copy_in: None,
            copy_out,
            text: text.clone(),
            more: false,
            raised: Vec::new(),
        },
    )
}

/// A setting's name as written (case-insensitive, so lowercased unless quoted).
pub(crate) fn setting_name<'a>(
    parts: impl IntoIterator<Item = &'a sqlparser::ast::Ident>,
) -> String {
    let name = parts
        .into_iter()
        .map(sql::binder::ident_name)
        .collect::<Vec<_>>()
        .join(".");
    // SQL's spellings of two settings (SHOW TRANSACTION ISOLATION LEVEL, SHOW TIME ZONE).
    match name.as_str() {
        "transaction.isolation.level" => "transaction_isolation".into(),
        "time.zone" => "TimeZone".into(),
        _ => name,
    }
}

/// One schema of a `search_path` list as PostgreSQL shows it: a plain lower-case name as
/// is, anything else (`$user`, an empty name) double-quoted.
fn search_path_element(t: &str) -> String {
    let plain = t.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && t.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        t.to_string()
    } else {
        format!("\"{}\"", t.replace('"', "\"\""))
    }
}

/// The text of a SET value: a string, number or word; `None` for DEFAULT.
fn setting_text(e: &sqlparser::ast::Expr) -> PgResult<Option<String>> {
    use sqlparser::ast::{Expr, UnaryOperator, Value as V};
    Ok(Some(match e {
        Expr::Value(v) => match &v.value {
            V::SingleQuotedString(s) | V::Number(s, _) => s.clone(),
            V::Boolean(b) => b.to_string(),
            other => {
                return Err(PgError::syntax(format!(
                    "syntax error at or near \"{other}\""
                )));
            }
        },
        Expr::Identifier(id)
            if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("default") =>
        {
            return Ok(None);
        }
        Expr::Identifier(id) => sql::binder::ident_name(id),
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match setting_text(expr)? {
            Some(t) => format!("-{t}"),
            None => return Err(PgError::syntax("syntax error at or near \"DEFAULT\"")),
        },
        other => {
            return Err(PgError::syntax(format!(
                "syntax error at or near \"{other}\""
            )));
        }
    }))
}

fn parse_isolation(text: &str) -> PgResult<Isolation> {
    match Setting::DEFAULT_TRANSACTION_ISOLATION.parse(text) {
        Ok(v) => settings::isolation_of(v),
        Err(_) => Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("invalid value for parameter \"transaction_isolation\": \"{text}\""),
        )
        .with_hint(format!(
            "Available values: {}.",
            settings::ISOLATION_NAMES.join(", ")
        ))),
    }
}

impl Session {
    pub fn new(db: Arc<Database>) -> Session {
        let backend = db.next_backend.fetch_add(1, Ordering::Relaxed);
        let tx = Tx::new(db.txns().clone(), backend);
        let activity = db.txns().activity().register(backend);
        // Cancels and ends other sessions ask of this one reach its checks for
        // interrupts and its lock waits; an end wakes its connection if it is idle.
        let interrupts = activity.status().interrupts().clone();
        tx.set_interrupts(interrupts.clone());
        let end_notify = Arc::new(tokio::sync::Notify::new());
        let wake = end_notify.clone();
        interrupts.set_waker(Box::new(move || wake.notify_one()));
        let settings = Arc::new(Mutex::new(Settings::default()));
        if db.max_connections != crate::config::DEFAULT_MAX_CONNECTIONS {
            settings.lock().from_server(
                Setting::MAX_CONNECTIONS,
                Val::Int(db.max_connections as i64),
            );
        }
        Session {
            activity,
            end_notify,
            temp: Default::default(),
            db,
            tx: std::rc::Rc::new(tx),
            explicit: false,
            failed: false,
            settings: settings.clone(),
            hook: Arc::new(SettingsHook {
                settings,
                tx: Mutex::new((1, Isolation::ReadCommitted, false)),
                cursors: Mutex::new(Vec::new()),
            }),
            info: common::session::SessionInfo {
                backend_pid: backend,
                ..common::session::SessionInfo::detached()
            },
            sequence_memory: Default::default(),
            notices: Default::default(),
            reg_catalog: None,
            statements: HashMap::new(),
            portals: HashMap::new(),
            cursors: HashMap::new(),
            copy: None,
            rest: None,
            streaming: None,
            after_stream: None,
            truncated: Vec::new(),
            reported: Setting::REPORTED
                .iter()
                .map(|s| s.format(Settings::default().get(*s)))
                .collect(),
            reported_at: 0,
        }
    }

    fn default_isolation(&self) -> Isolation {
        // SET refuses SERIALIZABLE (see `set`).
        settings::isolation_of(
            self.settings
                .lock()
                .get(Setting::DEFAULT_TRANSACTION_ISOLATION),
        )
        .unwrap_or(Isolation::ReadCommitted)
    }

    pub(crate) fn begin_tx(&self, iso: Option<Isolation>, ro: Option<bool>) {
        self.tx.begin(
            iso.unwrap_or_else(|| self.default_isolation()),
            ro.unwrap_or_else(|| {
                self.settings
                    .lock()
                    .flag(Setting::DEFAULT_TRANSACTION_READ_ONLY)
            }),
        );
    }

    /// Make the context the statement about to run reads of its session: the clock and
    /// zone, the catalog its values are read and shown with (`self.info`), and the
    /// transaction's characteristics its settings report.
    pub(crate) fn set_statement_context(&mut self) {
        self.temp
            .set_limit_kb(match self.settings.lock().get(Setting::TEMP_FILE_LIMIT) {
                Val::Int(kb) => kb,
                _ => -1,
            });
        *self.hook.tx.lock() = (
            self.tx.depth().max(1),
            self.tx.isolation(),
            self.tx.is_active() && self.tx.read_only(),
        );
        let statement_start = common::datetime::clock_timestamp();
        let transaction_start = if self.tx.is_active() {
            common::datetime::session::timestamptz_of(self.tx.start_time())
        } else {
            statement_start
        };
        self.info.text.clock = common::datetime::SessionClock {
            transaction_start,
            statement_start,
            time_zone: self.settings.lock().time_zone(),
        };
        let catalog = self.db.catalog.snapshot(&self.tx);
        let reg = match &self.reg_catalog {
            Some(reg) if Arc::ptr_eq(&reg.0, &catalog) => reg.clone(),
            _ => {
                let reg = Arc::new(executor::session::SnapshotRegCatalog(catalog));
                self.reg_catalog = Some(reg.clone());
                reg
            }
        };
        self.info.text.catalog = Some(reg);
    }

    /// What a statement reads of this session, for `Database::execute_one`.
    pub(crate) fn parts(&self) -> crate::SessionParts<'_> {
        crate::SessionParts {
            db: &self.db,
            info: &self.info,
            settings: &self.hook,
            sequence_memory: &self.sequence_memory,
            notices: &self.notices,
            read_only: self.tx.is_active() && self.tx.read_only(),
            temp: &self.temp,
            cursors: &self.cursors,
            portals: &self.portals,
        }
    }

    /// End the transaction: commit (settings made in it stay) or roll back (they are
    /// undone).
    pub(crate) fn end_tx(&mut self, commit: bool) -> PgResult<()> {
        self.truncated.clear();
        // Portals belong to their transaction (executor rule 8), as in PostgreSQL;
        // cursors too, but for those declared WITH HOLD, whose rows are kept now.
        self.portals.clear();
        let held = self.cursors_at_end(commit);
        if let Err(e) = held {
            self.settings.lock().abort();
            let _ = self.db.abort(&self.tx);
            return Err(e);
        }
        if commit {
            self.settings.lock().commit();
            self.db.commit(&self.tx)
        } else {
            self.settings.lock().abort();
            self.db.abort(&self.tx)
        }
    }

    /// How the next statement waits for locks: the session's timeouts.
    pub(crate) fn hook(&self) -> &SettingsHook {
        &self.hook
    }

    pub(crate) fn wait_policy(&self) -> WaitPolicy {
        let s = self.settings.lock();
        WaitPolicy {
            nowait: false,
            lock_timeout: s.timeout(Setting::LOCK_TIMEOUT),
            statement_deadline: s
                .timeout(Setting::STATEMENT_TIMEOUT)
                .map(|t| Instant::now() + t),
            deadlock_timeout: s.timeout(Setting::DEADLOCK_TIMEOUT),
        }
    }

    /// How long the session may sit idle inside a transaction block before it is ended.
    pub fn idle_timeout(&self) -> Option<Duration> {
        if self.explicit {
            self.settings
                .lock()
                .timeout(Setting::IDLE_IN_TRANSACTION_SESSION_TIMEOUT)
        } else {
            None
        }
    }

    /// SET [SESSION | LOCAL] name { TO | = } value | DEFAULT.
    fn set(&mut self, name: &str, values: &[sqlparser::ast::Expr], local: bool) -> PgResult<()> {
        if name == "search_path" {
            // A list, kept as PostgreSQL shows it: names quoted where they need it.
            let mut parts = Vec::with_capacity(values.len());
            for v in values {
                match setting_text(v)? {
                    Some(t) => parts.push(search_path_element(&t)),
                    None if values.len() == 1 => parts.clear(),
                    None => return Err(PgError::syntax("syntax error at or near \"DEFAULT\"")),
                }
            }
            let value = (!parts.is_empty())
                .then(|| Setting::SEARCH_PATH.parse(&parts.join(", ")))
                .transpose()?;
            self.settings
                .lock()
                .set(Setting::SEARCH_PATH, value, local, self.tx.depth().max(1));
            return Ok(());
        }
        let text = match values {
            [v] => setting_text(v)?,
            _ => {
                return Err(PgError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("SET {name} takes only one argument"),
                ));
            }
        };
        match name {
            "transaction_isolation" => {
                let iso = text
                    .as_deref()
                    .map(parse_isolation)
                    .transpose()?
                    .unwrap_or_else(|| self.default_isolation());
                return self.tx.set_characteristics(Some(iso), None);
            }
            "transaction_read_only" => {
                let ro = match text.as_deref() {
                    Some(t) => settings::parse_bool(t).ok_or_else(|| {
                        PgError::new(
                            SqlState::INVALID_PARAMETER_VALUE,
                            format!("parameter \"{name}\" requires a Boolean value"),
                        )
                    })?,
                    None => self
                        .settings
                        .lock()
                        .flag(Setting::DEFAULT_TRANSACTION_READ_ONLY),
                };
                return self.tx.set_characteristics(None, Some(ro));
            }
            _ => {}
        }
        let mut all = self.settings.lock();
        let setting = all.find_or_create(name)?;
        let value = text.as_deref().map(|t| setting.parse(t)).transpose()?;
        if setting == Setting::DEFAULT_TRANSACTION_ISOLATION
            && let Some(v) = &value
        {
            settings::isolation_of(v.clone())?;
        }
        all.set(setting, value, local, self.tx.depth().max(1));
        Ok(())
    }

    /// SHOW name.
    fn show(&self, name: &str) -> PgResult<executor::StatementResult> {
        let value = match name {
            "transaction_isolation" => {
                if self.tx.is_active() {
                    self.tx.isolation().name().to_string()
                } else {
                    self.default_isolation().name().to_string()
                }
            }
            "transaction_read_only" => {
                let ro = if self.tx.is_active() {
                    self.tx.read_only()
                } else {
                    self.settings
                        .lock()
                        .flag(Setting::DEFAULT_TRANSACTION_READ_ONLY)
                };
                if ro { "on" } else { "off" }.to_string()
            }
            "all" => return Err(PgError::unsupported("SHOW ALL")),
            _ => {
                let settings = self.settings.lock();
                settings.show(settings.find(name)?)
            }
        };
        Ok(executor::StatementResult {
            columns: Some(vec![sql::bound::OutputColumn {
                name: name.into(),
                ty: common::DataType::Text,
                table_oid: 0,
                column_number: 0,
            }]),
            rows: vec![vec![Value::Text(value)]],
            tag: "SHOW".into(),
            ..Default::default()
        })
    }

    /// After a statement failed: an implicit transaction is rolled back; an explicit
    /// block becomes failed (its transaction is rolled back at once unless a savepoint
    /// may still revive it).
    pub(crate) fn fail(&mut self) {
        if self.explicit {
            self.failed = true;
            if self.tx.is_active() && !self.tx.in_savepoint() {
                let _ = self.end_tx(false);
            }
        } else if self.tx.is_active() {
            let _ = self.end_tx(false);
        }
    }

    fn end_block(&mut self) {
        self.explicit = false;
        self.failed = false;
    }

    /// Run one statement; `last` says whether it ends the query string (where an
    /// implicit transaction commits); `prepared` carries a portal's parameters.
    pub(crate) fn run(
        &mut self,
        cmd: &Command,
        sql: &str,
        last: bool,
        prepared: Option<&mut BoundParams<'_>>,
    ) -> PgResult<executor::StatementResult> {
        let stmt = match cmd {
            Command::Sql(stmt) => stmt,
            Command::Vacuum(v) => {
                let r = self.maintain(v, last)?;
                return self.statement_done(r, last);
            }
            Command::AlterSequence(_) => {
                let r = self.run_own_ddl(cmd, sql, "ALTER SEQUENCE")?;
                return self.statement_done(r, last);
            }
            Command::AlterColumnSet(_) => {
                let r = self.run_own_ddl(cmd, sql, "ALTER TABLE")?;
                return self.statement_done(r, last);
            }
            Command::AlterPartition(a) => {
                // PostgreSQL runs DETACH CONCURRENTLY as transactions of its own.
                if a.concurrently && (self.explicit || self.tx.is_active() || !last) {
                    return Err(PgError::new(
                        SqlState::ACTIVE_SQL_TRANSACTION,
                        "ALTER TABLE ... DETACH CONCURRENTLY cannot run inside a transaction block",
                    ));
                }
                let r = if a.concurrently {
                    self.detach_concurrently(a, sql)?
                } else {
                    if a.finalize && !self.failed {
                        self.tx.set_wait_policy(self.wait_policy());
                        self.db.await_detach(cmd, sql, &self.tx, &self.parts())?;
                    }
                    self.run_own_ddl(cmd, sql, "ALTER TABLE")?
                };
                return self.statement_done(r, last);
            }
            Command::AlterIndex(_) => {
                let mut r = self.run_own_ddl(cmd, sql, "ALTER INDEX")?;
                r.tag = "ALTER INDEX".into();
                return self.statement_done(r, last);
            }
            Command::Fetch(f) => {
                let r = self.fetch_cursor(f)?;
                return self.statement_done(r, last);
            }
            Command::Checkpoint => {
                // As in PostgreSQL: in a transaction block too, read-only or not (it
                // changes no data a transaction sees), but not in a failed one.
                if self.failed {
                    return Err(aborted_block());
                }
                self.db.checkpoint()?;
                return self.statement_done(done("CHECKPOINT"), last);
            }
        };
        let r = match stmt {
            Statement::StartTransaction {
                modes: m, begin, ..
            } => {
                if self.failed {
                    return Err(aborted_block());
                }
                let (iso, ro) = modes(m)?;
                let mut r = done(if *begin { "BEGIN" } else { "START TRANSACTION" });
                if self.explicit {
                    r.notices.push(PgError::warning(
                        SqlState::ACTIVE_SQL_TRANSACTION,
                        "there is already a transaction in progress",
                    ));
                } else {
                    if self.tx.is_active() {
                        self.tx.set_characteristics(iso, ro)?;
                    } else {
                        self.begin_tx(iso, ro);
                    }
                    self.explicit = true;
                }
                r
            }
            Statement::Commit { .. } => {
                let mut r = done("COMMIT");
                if !self.explicit {
                    r.notices.push(no_transaction_warning());
                }
                let failed = self.failed;
                self.end_block();
                if failed {
                    r.tag = "ROLLBACK".into();
                    if self.tx.is_active() {
                        self.end_tx(false)?;
                    }
                } else if self.tx.is_active() {
                    self.end_tx(true)?;
                }
                r
            }
            Statement::Rollback {
                savepoint: None, ..
            } => {
                let mut r = done("ROLLBACK");
                if !self.explicit {
                    r.notices.push(no_transaction_warning());
                }
                self.end_block();
                if self.tx.is_active() {
                    self.end_tx(false)?;
                }
                r
            }
            Statement::Rollback {
                savepoint: Some(name),
                ..
            } => {
                if !self.explicit {
                    return Err(only_in_block("ROLLBACK TO SAVEPOINT"));
                }
                let name = sql::binder::ident_name(name);
                if !self.tx.is_active() || !self.tx.has_savepoint(&name) {
                    return Err(PgError::new(
                        SqlState::INVALID_SAVEPOINT_SPECIFICATION,
                        format!("savepoint \"{name}\" does not exist"),
                    ));
                }
                let depth = self.tx.depth();
                let undone = self.db.rollback_to(&self.tx, &name)?;
                self.settings.lock().rollback_to(depth + 1 - undone);
                self.savepoint_ended(true);
                self.failed = false;
                done("ROLLBACK")
            }
            Statement::Savepoint { name } => {
                if self.failed {
                    return Err(aborted_block());
                }
                if !self.explicit {
                    return Err(only_in_block("SAVEPOINT"));
                }
                self.tx.savepoint(&sql::binder::ident_name(name));
                done("SAVEPOINT")
            }
            Statement::ReleaseSavepoint { name } => {
                if self.failed {
                    return Err(aborted_block());
                }
                if !self.explicit {
                    return Err(only_in_block("RELEASE SAVEPOINT"));
                }
                self.db.release(&self.tx, &sql::binder::ident_name(name))?;
                self.settings.lock().release(self.tx.depth());
                self.savepoint_ended(false);
                done("RELEASE")
            }
            Statement::Set(sqlparser::ast::Set::SetTransaction {
                modes: m,
                snapshot: None,
                session,
            }) => {
                if self.failed {
                    return Err(aborted_block());
                }
                let (iso, ro) = modes(m)?;
                let mut r = done("SET");
                if *session {
                    if !self.tx.is_active() {
                        self.begin_tx(None, None);
                    }
                    let depth = self.tx.depth();
                    if let Some(i) = iso {
                        self.settings.lock().set(
                            Setting::DEFAULT_TRANSACTION_ISOLATION,
                            Some(settings::isolation_value(i)),
                            false,
                            depth,
                        );
                    }
                    if let Some(ro) = ro {
                        self.settings.lock().set(
                            Setting::DEFAULT_TRANSACTION_READ_ONLY,
                            Some(Val::Bool(ro)),
                            false,
                            depth,
                        );
                    }
                } else if !self.explicit {
                    r.notices.push(PgError::warning(
                        SqlState::NO_ACTIVE_SQL_TRANSACTION,
                        "SET TRANSACTION can only be used in transaction blocks",
                    ));
                } else {
                    self.tx.set_characteristics(iso, ro)?;
                }
                r
            }
            Statement::Set(sqlparser::ast::Set::SingleAssignment {
                scope,
                hivevar: false,
                variable,
                values,
            }) if !matches!(scope, Some(sqlparser::ast::ContextModifier::Global)) => {
                if self.failed {
                    return Err(aborted_block());
                }
                if !self.tx.is_active() {
                    self.begin_tx(None, None);
                }
                let name = setting_name(variable.0.iter().filter_map(|p| p.as_ident()));
                let local = matches!(scope, Some(sqlparser::ast::ContextModifier::Local));
                let mut r = done("SET");
                if local && !self.explicit {
                    r.notices.push(PgError::warning(
                        SqlState::NO_ACTIVE_SQL_TRANSACTION,
                        "SET LOCAL can only be used in transaction blocks",
                    ));
                    // Still checked (and a custom setting created), as PostgreSQL does;
                    // then it lapses at once.
                    if !matches!(
                        name.as_str(),
                        "transaction_isolation" | "transaction_read_only"
                    ) {
                        self.settings.lock().find_or_create(&name)?;
                    }
                } else {
                    self.set(&name, values, local)?;
                }
                r
            }
            Statement::Set(sqlparser::ast::Set::SetTimeZone { local, value }) => {
                if self.failed {
                    return Err(aborted_block());
                }
                if !self.tx.is_active() {
                    self.begin_tx(None, None);
                }
                // SET TIME ZONE LOCAL means the default, as DEFAULT does.
                let value = match value {
                    sqlparser::ast::Expr::Identifier(id)
                        if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("local") =>
                    {
                        sqlparser::ast::Expr::Identifier("default".into())
                    }
                    other => other.clone(),
                };
                if *local && !self.explicit {
                    let mut r = done("SET");
                    r.notices.push(PgError::warning(
                        SqlState::NO_ACTIVE_SQL_TRANSACTION,
                        "SET LOCAL can only be used in transaction blocks",
                    ));
                    r
                } else {
                    self.set("timezone", &[value], *local)?;
                    done("SET")
                }
            }
            Statement::Prepare {
                name,
                data_types,
                statement,
            } => {
                if self.failed {
                    return Err(aborted_block());
                }
                self.sql_prepare(name, data_types, statement, sql)?
            }
            Statement::Execute {
                name: Some(name),
                parameters,
                immediate: false,
                into,
                using,
                output: false,
                default: false,
                ..
            } if into.is_empty() && using.is_empty() => {
                if self.failed {
                    return Err(aborted_block());
                }
                return self.sql_execute(name, parameters, sql, last, None);
            }
            // EXPLAIN EXECUTE: the prepared statement's plan for these arguments.
            Statement::Explain { statement, .. }
                if matches!(
                    &**statement,
                    Statement::Execute {
                        name: Some(_),
                        immediate: false,
                        output: false,
                        default: false,
                        ..
                    }
                ) =>
            {
                if self.failed {
                    return Err(aborted_block());
                }
                let Statement::Execute {
                    name: Some(name),
                    parameters,
                    into,
                    using,
                    ..
                } = &**statement
                else {
                    return Err(PgError::internal("EXPLAIN EXECUTE without EXECUTE"));
                };
                if !into.is_empty() || !using.is_empty() {
                    return Err(PgError::syntax("syntax error at or near \"EXECUTE\""));
                }
                let catalog = self.db.catalog.snapshot(&self.tx);
                let (explain, _) =
                    sql::Binder::new(&catalog, sql, &self.info).explain_parts(stmt)?;
                return self.sql_execute(name, parameters, sql, last, Some(explain));
            }
            Statement::Deallocate { name, .. } => {
                if self.failed {
                    return Err(aborted_block());
                }
                self.sql_deallocate(name)?
            }
            Statement::ShowVariable { variable } => {
                if self.failed {
                    return Err(aborted_block());
                }
                self.show(&setting_name(variable))?
            }
            Statement::Reset(sqlparser::ast::ResetStatement {
                reset:
                    reset @ (sqlparser::ast::Reset::ALL
                    | sqlparser::ast::Reset::ConfigurationParameter(_)),
            }) => {
                if self.failed {
                    return Err(aborted_block());
                }
                if !self.tx.is_active() {
                    self.begin_tx(None, None);
                }
                let depth = self.tx.depth();
                match reset {
                    sqlparser::ast::Reset::ConfigurationParameter(name) => {
                        let name = setting_name(name.0.iter().filter_map(|p| p.as_ident()));
                        let mut settings = self.settings.lock();
                        let setting = settings.find_or_create(&name)?;
                        settings.set(setting, None, false, depth);
                    }
                    _ => self.settings.lock().reset_all(depth),
                }
                done("RESET")
            }
            _ => {
                if self.failed {
                    return Err(aborted_block());
                }
                if matches!(stmt, Statement::Lock(_)) && !self.explicit {
                    return Err(only_in_block("LOCK TABLE"));
                }
                if !self.tx.is_active() {
                    self.begin_tx(None, None);
                }
                if self.tx.read_only()
                    && let Some(kind) = write_kind(stmt)
                {
                    return Err(PgError::new(
                        SqlState::READ_ONLY_SQL_TRANSACTION,
                        format!("cannot execute {kind} in a read-only transaction"),
                    ));
                }
                self.tx.set_wait_policy(self.wait_policy());
                self.set_statement_context();
                if let Statement::AlterTable(a) = stmt
                    && a.operations.len() > 1
                {
                    let r = self.alter_table_actions(a, sql)?;
                    return self.statement_done(r, last);
                }
                if let Statement::Close { cursor } = stmt {
                    let r = self.close_cursor(cursor)?;
                    return self.statement_done(r, last);
                }
                // DECLARE: its query, opened as a cursor.
                let declared = match stmt {
                    Statement::Declare { stmts } => Some(self.declaration(stmts, sql)?),
                    _ => None,
                };
                let snapshot = self.tx.start_statement();
                let res = match &declared {
                    Some(d) => {
                        let mut prepared = prepared;
                        if let Some(p) = prepared.as_deref_mut() {
                            p.cursor_query = true;
                            p.bound = None;
                        }
                        self.db
                            .execute_one(d.query(), sql, &self.tx, &self.parts(), prepared)
                    }
                    None => self
                        .db
                        .execute_one(cmd, sql, &self.tx, &self.parts(), prepared),
                };
                let res = match (res, declared) {
                    (Ok(r), Some(d)) => self.open_cursor(d, r, sql),
                    (res, _) => res,
                };
                match res {
                    Ok(mut r) if r.copy_in.is_some() => {
                        // COPY FROM STDIN: the statement goes on while the data comes.
                        let load = r.copy_in.take().expect("checked above");
                        // Its snapshot as the statement left it (taken again after a
                        // lock it waited for).
                        let snapshot = self.tx.snapshot().unwrap_or(snapshot);
                        self.start_copy(load, snapshot, last);
                        return Ok(r);
                    }
                    res => {
                        self.tx.end_statement();
                        let r = res?;
                        if matches!(stmt, Statement::Truncate(_)) {
                            self.note_truncated(r.truncated.iter().copied());
                        }
                        r
                    }
                }
            }
        };
        self.statement_done(r, last)
    }

    /// ALTER TABLE with several actions: each runs as an ALTER TABLE of its own, seeing
    /// what the ones before it did, in the order of PostgreSQL's passes ([`alter_pass`]:
    /// drops first, then new columns, then constraints, NOT NULL, keys, foreign keys and
    /// defaults), so `ADD CHECK (c > 0), ADD c int` works as there. One failing fails
    /// the statement, and with it the transaction that holds the actions before it: the
    /// statement takes effect whole or not at all. RENAME takes no other actions, as in
    /// PostgreSQL's grammar.
    fn alter_table_actions(
        &mut self,
        a: &sqlparser::ast::AlterTable,
        sql: &str,
    ) -> PgResult<executor::StatementResult> {
        use sqlparser::ast::AlterTableOperation as Op;
        if a.operations
            .iter()
            .any(|op| matches!(op, Op::RenameColumn { .. } | Op::RenameTable { .. }))
        {
            return Err(PgError::syntax("syntax error at or near \"RENAME\""));
        }
        let mut ops: Vec<&Op> = a.operations.iter().collect();
        ops.sort_by_key(|op| alter_pass(op));
        let mut r = done("ALTER TABLE");
        for op in ops {
            let one = Command::Sql(Statement::AlterTable(sqlparser::ast::AlterTable {
                operations: vec![op.clone()],
                ..a.clone()
            }));
            self.tx.start_statement();
            let res = self
                .db
                .execute_one(&one, sql, &self.tx, &self.parts(), None);
            self.tx.end_statement();
            let step = res?;
            r.notices.extend(step.notices);
            // IF EXISTS of a missing table: the one notice, and nothing to do.
            if a.if_exists && !self.db.alter_target_exists(a, sql, &self.tx, &self.info) {
                break;
            }
        }
        Ok(r)
    }

    /// After a statement succeeded: the implicit transaction of a query string commits
    /// with its last statement (a query's, once its portal has returned its rows).
    pub(crate) fn statement_done(
        &mut self,
        mut r: executor::StatementResult,
        last: bool,
    ) -> PgResult<executor::StatementResult> {
        if r.portal.is_none()
            && last
            && !self.explicit
            && self.tx.is_active()
            && let Err(e) = self.end_tx(true)
        {
            r.notices.clear();
            return Err(e);
        }
        Ok(r)
    }

    /// VACUUM and ANALYZE. VACUUM runs outside any transaction (it commits as it goes);
    /// ANALYZE may run in one and then keeps its locks to its end.
    /// A DDL command of Myriad's own grammar (ALTER SEQUENCE): the checks the sqlparser
    /// statements get in [`Session::run`], then binding and execution.
    fn run_own_ddl(
        &mut self,
        cmd: &Command,
        sql: &str,
        kind: &str,
    ) -> PgResult<executor::StatementResult> {
        if self.failed {
            return Err(aborted_block());
        }
        if !self.tx.is_active() {
            self.begin_tx(None, None);
        }
        if self.tx.read_only() {
            return Err(PgError::new(
                SqlState::READ_ONLY_SQL_TRANSACTION,
                format!("cannot execute {kind} in a read-only transaction"),
            ));
        }
        self.tx.set_wait_policy(self.wait_policy());
        self.set_statement_context();
        self.tx.start_statement();
        let res = self.db.execute_one(cmd, sql, &self.tx, &self.parts(), None);
        self.tx.end_statement();
        res
    }

    /// DETACH PARTITION CONCURRENTLY (partition rule 6): a transaction marks the
    /// partition pending and commits; once every transaction that held a lock on the
    /// parent then has ended, a second finishes the detach as FINALIZE does, left open
    /// for the caller to commit. An error in between leaves the partition pending, for
    /// FINALIZE.
    fn detach_concurrently(
        &mut self,
        a: &sql::parser::AlterPartition,
        sql: &str,
    ) -> PgResult<executor::StatementResult> {
        let mark = Command::AlterPartition(a.clone());
        let r = self.run_own_ddl(&mark, sql, "ALTER TABLE")?;
        self.end_tx(true)?;
        let finish = Command::AlterPartition(sql::parser::AlterPartition {
            concurrently: false,
            finalize: true,
            ..a.clone()
        });
        self.tx.set_wait_policy(self.wait_policy());
        self.db
            .await_detach(&finish, sql, &self.tx, &self.parts())?;
        self.run_own_ddl(&finish, sql, "ALTER TABLE")?;
        Ok(r)
    }

    fn maintain(
        &mut self,
        v: &sql::parser::Vacuum,
        last: bool,
    ) -> PgResult<executor::StatementResult> {
        if self.failed {
            return Err(aborted_block());
        }
        if let Some((message, position)) = &v.invalid {
            return Err(PgError::syntax(message.clone()).with_position(*position));
        }
        if v.vacuum && (self.explicit || self.tx.is_active() || !last) {
            return Err(PgError::new(
                SqlState::ACTIVE_SQL_TRANSACTION,
                "VACUUM cannot run inside a transaction block",
            ));
        }
        self.tx.set_wait_policy(self.wait_policy());
        let hold = self.tx.is_active();
        let target = self.settings.lock().int(Setting::DEFAULT_STATISTICS_TARGET);
        let notices = self.db.maintain(v, &self.tx, hold, target as u32)?;
        let mut r = done(if v.vacuum { "VACUUM" } else { "ANALYZE" });
        r.notices = notices;
        Ok(r)
    }
}

impl Drop for Session {
    /// A connection that ends inside a transaction rolls it back, catalog changes and
    /// all.
    fn drop(&mut self) {
        if self.tx.is_active() {
            let _ = self.end_tx(false);
        }
    }
}

impl wire::Session for Session {
    fn execute_simple(&mut self, sql_text: &str) -> Vec<StatementOutcome> {
        self.tx.clear_cancel();
        self.activity.status().start_query(sql_text);
        let out = self.execute_string(sql_text);
        if self.streaming.is_none() {
            self.set_idle_state();
        }
        out
    }

    fn fetch(&mut self, max_rows: usize) -> wire::Fetched {
        self.fetch_streaming(max_rows)
    }

    fn resume(&mut self) -> Vec<StatementOutcome> {
        self.resume_after_stream()
    }

    fn copy_data(&mut self, data: &[u8]) {
        self.copy_data_in(data)
    }

    fn copy_done(&mut self) -> Vec<StatementOutcome> {
        self.copy_finish()
    }

    fn copy_fail(&mut self, error: PgError) -> Vec<StatementOutcome> {
        self.copy_failed(error)
    }

    fn parse(&mut self, name: &str, sql: &str, param_types: &[u32]) -> Result<(), PgError> {
        self.prepare(name, sql, param_types)
    }

    fn bind(&mut self, bind: wire::BindRequest<'_>) -> Result<(), PgError> {
        self.bind_portal(bind)
    }

    fn describe(&mut self, portal: bool, name: &str) -> Result<wire::Description, PgError> {
        self.describe_target(portal, name)
    }

    fn execute(&mut self, portal: &str, max_rows: usize) -> wire::ExecuteOutcome {
        self.execute_portal(portal, max_rows)
    }

    fn close(&mut self, portal: bool, name: &str) {
        self.close_target(portal, name)
    }

    fn sync(&mut self) -> Result<(), PgError> {
        self.sync_batch()
    }

    fn idle_timeout(&self) -> Option<Duration> {
        Session::idle_timeout(self)
    }

    fn parameter_changes(&mut self) -> Vec<(String, String)> {
        if self.settings.lock().changes() == self.reported_at {
            return Vec::new();
        }
        self.reported_at = self.settings.lock().changes();
        let mut out = Vec::new();
        for (i, s) in Setting::REPORTED.iter().enumerate() {
            let now = s.format(self.settings.lock().get(*s));
            if now != self.reported[i] {
                if *s == Setting::APPLICATION_NAME {
                    self.activity.status().set_application_name(&now);
                }
                out.push((s.name().to_string(), now.clone()));
                self.reported[i] = now;
            }
        }
        out
    }

    fn startup_parameters(&mut self, params: &HashMap<String, String>) {
        // PostgreSQL's default database is the user's name.
        let user = params.get("user").map_or("postgres", String::as_str);
        let database = params.get("database").map_or(user, String::as_str);
        self.info.user = user.into();
        self.info.database = database.into();
        // The startup ParameterStatus announced application_name as the client sent it.
        if let Some(i) = Setting::REPORTED
            .iter()
            .position(|s| *s == Setting::APPLICATION_NAME)
        {
            self.reported[i] = params.get("application_name").cloned().unwrap_or_default();
        }
        // `options` (PGOPTIONS) first, then the packet's own settings, which win, as in
        // PostgreSQL. Where PostgreSQL ends the connection (FATAL) over a bad option or
        // value, Myriad logs it and goes on: the connection is ready by now.
        let (options, errors) = settings::parse_options(params.get("options").map_or("", |o| o));
        for e in errors {
            tracing::warn!(error = %e, "startup option ignored");
        }
        let direct = params
            .iter()
            .filter(|(name, _)| name.as_str() != "options")
            .map(|(n, v)| (n.clone(), v.clone()));
        for (name, value) in options.into_iter().chain(direct) {
            // Built-in settings and custom ones (`myapp.x`); not user, database, ...
            let Ok(setting) = self.settings.lock().find_or_create(&name) else {
                continue;
            };
            match setting.parse(&value) {
                Ok(v) => self.settings.lock().startup(setting, v),
                Err(e) => {
                    tracing::warn!(%name, %value, error = %e.message, "startup parameter ignored")
                }
            }
        }
        self.settings.lock().commit();
        let name =
            Setting::APPLICATION_NAME.format(self.settings.lock().get(Setting::APPLICATION_NAME));
        self.activity.status().set_application_name(&name);
    }

    fn backend_key(&self) -> (i32, i32) {
        let status = self.activity.status();
        (status.pid() as i32, status.interrupts().secret)
    }

    /// PostgreSQL's refusal past `max_connections` (every Myriad user is a superuser,
    /// so none of the connections are reserved).
    fn refusal(&self) -> Option<PgError> {
        (self.db.txns().activity().count() > self.db.max_connections).then(|| {
            PgError::fatal(
                SqlState::TOO_MANY_CONNECTIONS,
                "sorry, too many clients already",
            )
        })
    }

    fn terminating(&self) -> Option<PgError> {
        self.activity
            .status()
            .interrupts()
            .terminating()
            .then(txn::xact::terminated)
    }

    fn end_notify(&self) -> Option<Arc<tokio::sync::Notify>> {
        Some(self.end_notify.clone())
    }

    fn transaction_status(&self) -> TxStatus {
        if self.failed {
            TxStatus::Failed
        } else if self.explicit {
            TxStatus::InBlock
        } else {
            TxStatus::Idle
        }
    }
}

impl Session {
    /// `pg_stat_activity`'s state once a query or batch is done.
    pub(crate) fn set_idle_state(&self) {
        use txn::activity::BackendState as S;
        self.activity
            .status()
            .set_state(match wire::Session::transaction_status(self) {
                TxStatus::Idle => S::Idle,
                TxStatus::InBlock => S::IdleInTransaction,
                TxStatus::Failed => S::IdleInTransactionAborted,
            });
    }

    fn execute_string(&mut self, sql_text: &str) -> Vec<StatementOutcome> {
        let stmts = match self.db.parses.parse(sql_text) {
            Ok(s) => s,
            Err(e) => {
                self.fail();
                return vec![StatementOutcome {
                    notices: vec![],
                    result: Err(e),
                }];
            }
        };
        self.run_statements(stmts, 0, Arc::from(sql_text))
    }

    /// Run the statements of a query string from `start`, stopping after the first
    /// error, or after a COPY FROM STDIN that now waits for its data (the rest is kept
    /// and runs when the COPY ends).
    pub(crate) fn run_statements(
        &mut self,
        stmts: Vec<Command>,
        start: usize,
        sql_text: Arc<str>,
    ) -> Vec<StatementOutcome> {
        let n = stmts.len();
        let mut out = Vec::with_capacity(n - start.min(n));
        for i in start..n {
            let stmt = &stmts[i];
            let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
                self.run(stmt, &sql_text, i + 1 == n, None)
            }))
            .unwrap_or_else(|p| Err(panic_error(p.as_ref(), stmt)));
            let outcome = match result {
                // A query: its first batch now (`stream`).
                Ok(r) if r.portal.is_some() => self.start_stream(r, i + 1 == n),
                Ok(r) => {
                    let (notices, mut done) = to_wire(r, &self.info.text);
                    done.copy_in = self.copy_columns();
                    Ok(StatementOutcome {
                        notices,
                        result: Ok(done),
                    })
                }
                Err(e) => Err(e),
            };
            // What it raised as it ran goes with its result (after its RowDescription).
            let raised = self.take_notices();
            match outcome {
                Ok(mut o) => {
                    match &mut o.result {
                        Ok(done) => done.raised = raised,
                        Err(_) => o.notices.extend(raised),
                    }
                    out.push(o);
                    // A query whose rows go on, or a COPY FROM STDIN waiting for its
                    // data: the statements after it run once it ends.
                    if self.streaming.is_some() || self.copy.is_some() {
                        let rest = crate::copy::RestOfString {
                            stmts,
                            next: i + 1,
                            sql: sql_text,
                        };
                        match self.streaming.as_mut() {
                            Some(st) => st.set_rest(rest),
                            None => self.rest = Some(rest),
                        }
                        return out;
                    }
                }
                Err(e) => {
                    self.fail();
                    out.push(StatementOutcome {
                        notices: raised,
                        result: Err(e),
                    });
                    break;
                }
            }
        }
        out
    }

    /// The notices statements raised as they ran, since the last call (server rule 5).
    pub(crate) fn take_notices(&self) -> Vec<PgError> {
        std::mem::take(&mut *self.notices.borrow_mut())
    }
}

/// What a session's statements reach of it from inside expression evaluation
/// (`executor::session::SessionSettings`): its settings, and the running transaction's level
/// and characteristics, which `set_statement_context` records before each statement.
pub(crate) struct SettingsHook {
    settings: Arc<Mutex<Settings>>,
    /// The transaction's level (savepoints deep), isolation level and access mode.
    tx: Mutex<(usize, Isolation, bool)>,
    /// `pg_cursors`' rows, as the session's cursors last changed (`cursor`).
    pub(crate) cursors: Mutex<Vec<Vec<Value>>>,
}

impl executor::session::SessionSettings for SettingsHook {
    fn planner(&self) -> planner::PlannerSettings {
        self.settings.lock().planner()
    }

    fn cursor_rows(&self) -> Vec<Vec<Value>> {
        self.cursors.lock().clone()
    }

    fn plan_cache_mode(&self) -> planner::PlanCacheMode {
        self.settings.lock().plan_cache_mode()
    }

    fn current(&self, name: &str) -> PgResult<Option<String>> {
        let (_, isolation, read_only) = *self.tx.lock();
        Ok(Some(match name.to_ascii_lowercase().as_str() {
            "transaction_isolation" => isolation.name().to_string(),
            "transaction_read_only" => if read_only { "on" } else { "off" }.to_string(),
            _ => {
                let settings = self.settings.lock();
                match settings.find(name) {
                    Ok(s) => settings.show(s),
                    Err(_) => return Ok(None),
                }
            }
        }))
    }

    fn set(&self, name: &str, value: Option<&str>, local: bool) -> PgResult<String> {
        if matches!(
            name.to_ascii_lowercase().as_str(),
            "transaction_isolation" | "transaction_read_only"
        ) {
            return Err(PgError::unsupported(format!("set_config of {name}"))
                .with_hint("Use SET TRANSACTION."));
        }
        let depth = self.tx.lock().0;
        let mut s = self.settings.lock();
        let setting = s.find_or_create(name)?;
        let value = value.map(|t| setting.parse(t)).transpose()?;
        if setting == Setting::DEFAULT_TRANSACTION_ISOLATION
            && let Some(v) = &value
        {
            settings::isolation_of(v.clone())?;
        }
        s.set(setting, value, local, depth);
        Ok(s.show(setting))
    }

    fn rows(&self) -> Vec<Vec<Value>> {
        let (_, isolation, read_only) = *self.tx.lock();
        let mut rows = self.settings.lock().rows();
        rows.extend(settings::transaction_rows(isolation.name(), read_only));
        rows.sort_by_key(|r| match &r[0] {
            Value::Text(n) => n.to_ascii_lowercase(),
            _ => String::new(),
        });
        rows
    }
}
