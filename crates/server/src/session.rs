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
//! DDL inside an explicit block is refused (0A000) until the catalog is transactional:
//! it would otherwise survive a ROLLBACK.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use common::{PgError, PgResult, SqlState};
use sql::parser::Statement;
use sqlparser::ast::{TransactionAccessMode, TransactionIsolationLevel, TransactionMode};
use txn::{Isolation, Tx};
use wire::{Column, Completed, StatementOutcome, TxStatus};

use crate::Database;

/// One connection's session.
pub struct Session {
    db: Arc<Database>,
    tx: Tx,
    /// Inside BEGIN ... COMMIT.
    explicit: bool,
    /// The block failed: only ROLLBACK (or ROLLBACK TO) is accepted.
    failed: bool,
    default_isolation: Isolation,
    default_read_only: bool,
}

/// Statements that change the catalog: run alone, refused in explicit blocks for now.
pub(crate) fn is_ddl(stmt: &Statement) -> bool {
    matches!(
        stmt,
        Statement::CreateTable(_)
            | Statement::CreateIndex(_)
            | Statement::Drop { .. }
            | Statement::AlterTable(_)
            | Statement::Truncate(_)
    )
}

/// The name PostgreSQL's read-only error uses for a statement that writes, if it does.
fn write_kind(stmt: &Statement) -> Option<&'static str> {
    Some(match stmt {
        Statement::Insert(_) => "INSERT",
        Statement::Update(_) => "UPDATE",
        Statement::Delete(_) => "DELETE",
        Statement::CreateTable(_) => "CREATE TABLE",
        Statement::CreateIndex(_) => "CREATE INDEX",
        Statement::Drop {
            object_type: sqlparser::ast::ObjectType::Index,
            ..
        } => "DROP INDEX",
        Statement::Drop { .. } => "DROP TABLE",
        Statement::AlterTable(_) => "ALTER TABLE",
        Statement::Truncate(_) => "TRUNCATE TABLE",
        _ => return None,
    })
}

fn aborted_block() -> PgError {
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
                        // Never a weaker level under this name.
                        return Err(PgError::unsupported("SERIALIZABLE isolation")
                            .with_hint("Use REPEATABLE READ."));
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

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

fn to_wire(r: executor::StatementResult) -> (Vec<PgError>, Completed) {
    let columns = r.columns.map(|cols| {
        cols.into_iter()
            .map(|c| Column {
                name: c.name,
                table_oid: c.table_oid,
                column_number: c.column_number,
                type_oid: c.ty.oid(),
                type_size: c.ty.typlen(),
                type_modifier: c.ty.typmod(),
            })
            .collect()
    });
    (
        r.notices,
        Completed {
            columns,
            rows: r.rows,
            tag: r.tag,
        },
    )
}

impl Session {
    pub fn new(db: Arc<Database>) -> Session {
        let backend = db.next_backend.fetch_add(1, Ordering::Relaxed);
        let tx = Tx::new(db.txns().clone(), backend);
        Session {
            db,
            tx,
            explicit: false,
            failed: false,
            default_isolation: Isolation::ReadCommitted,
            default_read_only: false,
        }
    }

    /// After a statement failed: an implicit transaction is rolled back; an explicit
    /// block becomes failed (its transaction is rolled back at once unless a savepoint
    /// may still revive it).
    fn fail(&mut self) {
        if self.explicit {
            self.failed = true;
            if self.tx.is_active() && !self.tx.in_savepoint() {
                let _ = self.tx.abort();
            }
        } else if self.tx.is_active() {
            let _ = self.tx.abort();
        }
    }

    fn end_block(&mut self) {
        self.explicit = false;
        self.failed = false;
    }

    /// Run one statement; `last` says whether it ends the query string (where an
    /// implicit transaction commits).
    fn run(
        &mut self,
        stmt: &Statement,
        sql: &str,
        last: bool,
    ) -> PgResult<executor::StatementResult> {
        let mut r = match stmt {
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
                        self.tx.begin(
                            iso.unwrap_or(self.default_isolation),
                            ro.unwrap_or(self.default_read_only),
                        );
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
                        self.tx.abort()?;
                    }
                } else if self.tx.is_active() {
                    self.tx.commit()?;
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
                    self.tx.abort()?;
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
                self.tx.rollback_to(&name)?;
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
                self.tx.release(&sql::binder::ident_name(name))?;
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
                    if let Some(i) = iso {
                        self.default_isolation = i;
                    }
                    if let Some(ro) = ro {
                        self.default_read_only = ro;
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
            Statement::Vacuum(v) => {
                if self.failed {
                    return Err(aborted_block());
                }
                if self.explicit || self.tx.is_active() || !last {
                    return Err(PgError::new(
                        SqlState::ACTIVE_SQL_TRANSACTION,
                        "VACUUM cannot run inside a transaction block",
                    ));
                }
                if v.full {
                    return Err(PgError::unsupported("VACUUM FULL"));
                }
                // sqlparser's other VACUUM options are Redshift's; PostgreSQL has none.
                let redshift = [
                    (v.sort_only, "SORT"),
                    (v.delete_only, "DELETE"),
                    (v.reindex, "REINDEX"),
                    (v.recluster, "RECLUSTER"),
                    (v.threshold.is_some(), "TO"),
                    (v.boost, "BOOST"),
                ];
                if let Some((_, word)) = redshift.iter().find(|(on, _)| *on) {
                    return Err(PgError::syntax(format!(
                        "syntax error at or near \"{word}\""
                    )));
                }
                self.db.vacuum(v.table_name.as_ref())?;
                done("VACUUM")
            }
            _ => {
                if self.failed {
                    return Err(aborted_block());
                }
                if !self.tx.is_active() {
                    self.tx
                        .begin(self.default_isolation, self.default_read_only);
                }
                if self.tx.read_only()
                    && let Some(kind) = write_kind(stmt)
                {
                    return Err(PgError::new(
                        SqlState::READ_ONLY_SQL_TRANSACTION,
                        format!("cannot execute {kind} in a read-only transaction"),
                    ));
                }
                if self.explicit && is_ddl(stmt) {
                    return Err(PgError::unsupported(
                        "DDL inside a transaction block (the catalog is not transactional yet)",
                    ));
                }
                let snapshot = self.tx.start_statement();
                let res = self.db.execute_one(stmt, sql, &self.tx, &snapshot);
                self.tx.end_statement();
                res?
            }
        };
        if last
            && !self.explicit
            && self.tx.is_active()
            && let Err(e) = self.tx.commit()
        {
            r.notices.clear();
            return Err(e);
        }
        Ok(r)
    }
}

impl wire::Session for Session {
    fn execute_simple(&mut self, sql_text: &str) -> Vec<StatementOutcome> {
        let stmts = match sql::parser::parse(sql_text) {
            Ok(s) => s,
            Err(e) => {
                self.fail();
                return vec![StatementOutcome {
                    notices: vec![],
                    result: Err(e),
                }];
            }
        };
        let mut out = Vec::with_capacity(stmts.len());
        let n = stmts.len();
        for (i, stmt) in stmts.iter().enumerate() {
            let result =
                std::panic::catch_unwind(AssertUnwindSafe(|| self.run(stmt, sql_text, i + 1 == n)))
                    .unwrap_or_else(|p| {
                        let msg = panic_message(p.as_ref());
                        tracing::error!(panic = %msg, statement = %stmt, "statement panicked");
                        Err(PgError::new(
                            SqlState::INTERNAL_ERROR,
                            format!("internal error: {msg}"),
                        ))
                    });
            match result {
                Ok(r) => {
                    let (notices, done) = to_wire(r);
                    out.push(StatementOutcome {
                        notices,
                        result: Ok(done),
                    });
                }
                Err(e) => {
                    self.fail();
                    out.push(StatementOutcome {
                        notices: vec![],
                        result: Err(e),
                    });
                    break;
                }
            }
        }
        out
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
