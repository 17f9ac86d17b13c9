//! SQL cursors: DECLARE, FETCH, MOVE and CLOSE. A cursor is a portal the session keeps
//! by name (`executor::portal::Cursor`, executor rule 8): DECLARE runs its query as far
//! as opening it, each FETCH reads on from where the last stopped. A cursor ends with its
//! transaction, unless declared WITH HOLD: then its rows are kept at the commit and it
//! lives until CLOSE or the session's end (one declared in a transaction that rolls back
//! goes with it).

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;

use common::{PgError, PgResult, SqlState};
use executor::portal::Cursor;
use sql::bound::OutputColumn;
use sql::parser::{Command, Fetch};
use sqlparser::ast::{CloseCursor, Declare, DeclareType, Statement};

use crate::session::Session;

/// A session's cursor.
pub(crate) struct Named {
    cursor: Cursor,
    columns: Vec<OutputColumn>,
    hold: bool,
    /// DECLARE BINARY: FETCH sends its rows in binary (in the simple protocol; Bind's
    /// formats decide in the extended one).
    binary: bool,
    /// Declared in the transaction under way (a rollback drops it, held or not), at
    /// this savepoint depth (a ROLLBACK TO below it drops it).
    new: bool,
    depth: usize,
    /// `pg_cursors`: the query string that declared it, and when.
    statement: std::sync::Arc<str>,
    created: common::datetime::TimestampTz,
    /// Rows sent by the protocol's Execute of its name under way (its batches).
    executing: usize,
}

/// The session's cursors by name.
pub(crate) type Cursors = HashMap<String, Named>;

/// What DECLARE asks for, its query made a statement of its own.
pub(crate) struct Declaration {
    name: String,
    query: Command,
    scroll: Option<bool>,
    hold: bool,
    binary: bool,
}

fn no_cursor(name: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_CURSOR_NAME,
        format!("cursor \"{name}\" does not exist"),
    )
}

impl Named {
    /// Whether its query reads table `oid` (not once held).
    pub(crate) fn reads_table(&self, oid: common::Oid) -> bool {
        self.cursor.reads_table(oid)
    }
}

impl Declaration {
    /// The cursor's query, as a statement.
    pub(crate) fn query(&self) -> &Command {
        &self.query
    }
}

/// Where `word` starts in DECLARE's text `sql`: its first appearance (in any case) after
/// the words CURSOR and FOR.
fn word_after_for(sql: &str, word: &str) -> Option<usize> {
    let upper = sql.to_ascii_uppercase();
    let mut at = 0;
    for w in ["CURSOR", "FOR", word] {
        let found = upper[at..]
            .match_indices(w)
            .map(|(i, _)| at + i)
            .find(|&i| {
                let before = upper[..i].chars().next_back();
                let after = upper[i + w.len()..].chars().next();
                let edge = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric() && c != '_');
                edge(before) && edge(after)
            })?;
        at = found + w.len();
    }
    Some(at - word.len())
}

impl Session {
    /// DECLARE's checks, before its query is bound and planned (`sql`: its text): one
    /// cursor FOR a query (a SELECT, VALUES or TABLE, not a write), read only if it
    /// scrolls or is held, not one of the session's already, in a transaction block
    /// unless WITH HOLD.
    pub(crate) fn declaration(&self, stmts: &[Declare], sql: &str) -> PgResult<Declaration> {
        let [d] = stmts else {
            return Err(PgError::syntax("DECLARE takes one cursor"));
        };
        let (Some(DeclareType::Cursor), Some(query), [name]) =
            (&d.declare_type, &d.for_query, d.names.as_slice())
        else {
            return Err(PgError::syntax("DECLARE takes a cursor FOR a query"));
        };
        let hold = d.hold == Some(true);
        use sqlparser::ast::SetExpr;
        let write = match &*query.body {
            SetExpr::Insert(_) => Some("INSERT"),
            SetExpr::Update(_) => Some("UPDATE"),
            SetExpr::Delete(_) => Some("DELETE"),
            SetExpr::Merge(_) => Some("MERGE"),
            _ => None,
        };
        if let Some(word) = write {
            // PostgreSQL's grammar takes a SELECT only: the write's first word is where
            // it stops.
            let at = word_after_for(sql, word);
            let written = at.map_or(word, |at| &sql[at..at + word.len()]);
            return Err(
                PgError::syntax(format!("syntax error at or near \"{written}\""))
                    .with_position(at.map(|at| sql[..at].chars().count() as u32 + 1)),
            );
        }
        if let Some(lock) = query.locks.first() {
            let clause = sql::parser::lock_clause(lock).mode.clause();
            let refused = |what: &str, detail: &str| {
                PgError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    format!("DECLARE {what} ... FOR {clause} is not supported"),
                )
                .with_detail(detail)
            };
            if hold {
                return Err(refused(
                    "CURSOR WITH HOLD",
                    "Holdable cursors must be READ ONLY.",
                ));
            }
            if d.scroll == Some(true) {
                return Err(refused(
                    "SCROLL CURSOR",
                    "Scrollable cursors must be READ ONLY.",
                ));
            }
        }
        if !self.explicit && !hold {
            return Err(PgError::new(
                SqlState::NO_ACTIVE_SQL_TRANSACTION,
                "DECLARE CURSOR can only be used in transaction blocks",
            ));
        }
        let name = sql::binder::ident_name(name);
        if self.cursors.contains_key(&name) {
            return Err(PgError::new(
                SqlState::DUPLICATE_CURSOR,
                format!("cursor \"{name}\" already exists"),
            ));
        }
        Ok(Declaration {
            name,
            query: Command::Sql(Statement::Query(query.clone())),
            scroll: d.scroll,
            hold,
            binary: d.binary == Some(true),
        })
    }

    /// The query of `d` is open: keep it as the cursor.
    pub(crate) fn open_cursor(
        &mut self,
        d: Declaration,
        r: executor::StatementResult,
        statement: &str,
    ) -> PgResult<executor::StatementResult> {
        let (Some(portal), Some(columns)) = (r.portal, r.columns) else {
            return Err(PgError::internal("DECLARE's query made no portal"));
        };
        let cursor = Cursor::new(portal, d.scroll)?;
        self.cursors.insert(
            d.name,
            Named {
                cursor,
                columns,
                hold: d.hold,
                binary: d.binary,
                new: true,
                depth: self.tx.depth(),
                statement: statement.into(),
                created: self.info.text.clock.statement_start,
                executing: 0,
            },
        );
        self.publish_cursors();
        Ok(executor::StatementResult {
            tag: "DECLARE CURSOR".into(),
            notices: r.notices,
            ..Default::default()
        })
    }

    /// FETCH or MOVE.
    pub(crate) fn fetch_cursor(&mut self, f: &Fetch) -> PgResult<executor::StatementResult> {
        if self.failed {
            return Err(crate::session::aborted_block());
        }
        self.set_statement_context();
        self.tx.set_wait_policy(self.wait_policy());
        let name = sql::binder::ident_name(&f.cursor);
        let named = self
            .cursors
            .get_mut(&name)
            .ok_or_else(|| no_cursor(&name))?;
        // More rows forward than a batch: kept in a store as the cursor moves, and sent
        // from there.
        let stored = match f.direction {
            _ if f.move_only => None,
            sql::parser::FetchDirection::Forward(None) => Some(None),
            sql::parser::FetchDirection::Forward(Some(n)) if n > wire::STREAM_BATCH_ROWS as i64 => {
                Some(Some(n as u64))
            }
            _ => None,
        };
        if let Some(count) = stored {
            let text = self.info.text.clone();
            let portal = std::panic::catch_unwind(AssertUnwindSafe(|| {
                named.cursor.fetch_stored(count, text)
            }))
            .unwrap_or_else(|p| Err(crate::session::panic_payload_error(p.as_ref())))?;
            return Ok(executor::StatementResult {
                columns: Some(named.columns.clone()),
                portal: Some(portal),
                binary: named.binary,
                ..Default::default()
            });
        }
        let moved = std::panic::catch_unwind(AssertUnwindSafe(|| {
            named.cursor.fetch(f.direction, !f.move_only)
        }))
        .unwrap_or_else(|p| Err(crate::session::panic_payload_error(p.as_ref())))?;
        let (rows, n) = moved;
        Ok(if f.move_only {
            executor::StatementResult {
                tag: format!("MOVE {n}"),
                ..Default::default()
            }
        } else {
            executor::StatementResult {
                columns: Some(named.columns.clone()),
                rows,
                tag: format!("FETCH {n}"),
                binary: named.binary,
                ..Default::default()
            }
        })
    }

    /// The protocol's Execute of a cursor's name (a cursor is a portal, as in
    /// PostgreSQL): its next rows forward, up to the Execute's limit (`max_rows`, 0 for
    /// no limit), a batch at a time (`ExecuteEnd::More`); the end is PortalSuspended at
    /// the limit, else `SELECT n`. An error fails the transaction, as FETCH's does.
    pub(crate) fn execute_cursor(&mut self, name: &str, max_rows: usize) -> wire::ExecuteOutcome {
        let outcome = |result| wire::ExecuteOutcome {
            notices: Vec::new(),
            result,
        };
        if self.failed {
            return outcome(Err(crate::session::aborted_block()));
        }
        let batch = match max_rows {
            0 => wire::STREAM_BATCH_ROWS,
            n => n.min(wire::STREAM_BATCH_ROWS),
        };
        let first = self.cursors.get(name).is_some_and(|n| n.executing == 0);
        if first {
            // Each Execute is a statement of its own (statement_timeout, cancels).
            self.set_statement_context();
            self.tx.clear_cancel();
            self.tx.set_wait_policy(self.wait_policy());
        }
        let Some(named) = self.cursors.get_mut(name) else {
            return outcome(Err(no_cursor(name)));
        };
        let direction = sql::parser::FetchDirection::Forward(Some(batch as i64));
        let fetched =
            std::panic::catch_unwind(AssertUnwindSafe(|| named.cursor.fetch(direction, true)))
                .unwrap_or_else(|p| Err(crate::session::panic_payload_error(p.as_ref())));
        let rows = match fetched {
            Ok((rows, _)) => rows,
            Err(e) => {
                named.executing = 0;
                self.fail();
                return outcome(Err(e));
            }
        };
        named.executing += rows.len();
        let end = if max_rows > 0 && rows.len() == max_rows {
            named.executing = 0;
            wire::ExecuteEnd::Suspended
        } else if rows.len() == batch {
            wire::ExecuteEnd::More
        } else {
            let tag = format!("SELECT {}", named.executing);
            named.executing = 0;
            wire::ExecuteEnd::Complete(tag)
        };
        let binary = vec![named.binary; named.columns.len()];
        outcome(Ok(wire::Executed {
            rows,
            binary,
            end,
            text: self.info.text.clone(),
            copy_out: None,
        }))
    }

    /// The result columns a FETCH of cursor `name` returns, if it exists (Describe).
    pub(crate) fn cursor_columns(&self, f: &Fetch) -> Option<Vec<OutputColumn>> {
        if f.move_only {
            return None;
        }
        self.cursors
            .get(&sql::binder::ident_name(&f.cursor))
            .map(|n| n.columns.clone())
    }

    /// The result columns of cursor `name` (as the protocol names a portal), if it
    /// exists.
    pub(crate) fn named_cursor_columns(&self, name: &str) -> Option<Vec<OutputColumn>> {
        self.cursors.get(name).map(|n| n.columns.clone())
    }

    /// CLOSE name | ALL.
    pub(crate) fn close_cursor(&mut self, c: &CloseCursor) -> PgResult<executor::StatementResult> {
        let tag = match c {
            CloseCursor::All => {
                self.cursors.clear();
                "CLOSE CURSOR ALL"
            }
            CloseCursor::Specific { name } => {
                let name = sql::binder::ident_name(name);
                self.cursors.remove(&name).ok_or_else(|| no_cursor(&name))?;
                "CLOSE CURSOR"
            }
        };
        self.publish_cursors();
        Ok(executor::StatementResult {
            tag: tag.into(),
            ..Default::default()
        })
    }

    /// After ROLLBACK TO (`rolled_back`) or RELEASE: the cursors declared in the
    /// subtransactions rolled back go, as in PostgreSQL; those of released ones belong
    /// to the parent.
    pub(crate) fn cursors_after_savepoint(&mut self, rolled_back: bool) {
        let depth = self.tx.depth();
        if rolled_back {
            self.cursors.retain(|_, n| !n.new || n.depth < depth);
            self.publish_cursors();
        } else {
            for n in self.cursors.values_mut() {
                n.depth = n.depth.min(depth);
            }
        }
    }

    /// Close a cursor by name, as the protocol's Close of a portal does; false if
    /// there is none.
    pub(crate) fn close_cursor_named(&mut self, name: &str) -> bool {
        let closed = self.cursors.remove(name).is_some();
        if closed {
            self.publish_cursors();
        }
        closed
    }

    /// `pg_cursors`' rows, for the statements that read it.
    fn publish_cursors(&self) {
        use common::Value;
        let mut named: Vec<_> = self.cursors.iter().collect();
        named.sort_by(|a, b| a.0.cmp(b.0));
        let rows: Vec<Vec<Value>> = named
            .into_iter()
            .map(|(name, n)| {
                vec![
                    Value::Text(name.clone()),
                    Value::Text(n.statement.to_string()),
                    Value::Bool(n.hold),
                    Value::Bool(n.binary),
                    Value::Bool(n.cursor.scrollable()),
                    Value::TimestampTz(n.created),
                ]
            })
            .collect();
        *self.hook().cursors.lock() = rows;
    }

    /// At the end of a transaction: a commit keeps the rows of cursors WITH HOLD (an
    /// error doing so fails the commit) and ends the others; a rollback ends the cursors
    /// it declared and those without HOLD (server rule 4).
    pub(crate) fn cursors_at_end(&mut self, commit: bool) -> PgResult<()> {
        let mut result = Ok(());
        if commit {
            for named in self.cursors.values_mut() {
                if named.hold
                    && let Err(e) = named.cursor.hold()
                {
                    result = Err(e);
                    break;
                }
            }
        }
        // A failed hold fails the commit: the transaction rolls back instead.
        let committed = commit && result.is_ok();
        let before = self.cursors.len();
        self.cursors.retain(|_, n| n.hold && (committed || !n.new));
        for n in self.cursors.values_mut() {
            n.new = false;
        }
        if self.cursors.len() != before {
            self.publish_cursors();
        }
        result
    }
}
