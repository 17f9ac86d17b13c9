//! The extended query protocol: prepared statements, portals and the plan cache.
//!
//! - **Parse** parses one statement and, for a query or DML, binds it against the current
//!   catalog: that resolves each `$n`'s type from its context (`aid = $1`: int4) and the
//!   result columns, and reports errors (42P01, 42P18, ...) at Parse, as PostgreSQL does.
//!   The bound statement is kept with what its binding read of the catalog (the
//!   relations, each at the version that last changed it): the plan cache. No locks are
//!   taken; nothing runs.
//! - **Bind** decodes the parameter values (text or binary, `wire::binary`) into the
//!   statement's types and makes a portal holding the bound statement: the cached one if
//!   nothing it read has changed since, else a fresh binding (which replaces the cache).
//! - **Execute** runs the portal like any statement (`Session::run`): the relation locks
//!   are taken, and if a DDL changed what it read meanwhile the statement is bound
//!   again, so a cached binding is never used stale. A query or DML then runs the cached
//!   generic plan (`planner::CachedPlan`) with the portal's values, or a custom plan made
//!   with them, as `plan_cache_mode` and PostgreSQL's rule choose (planner rule 7).
//!   Other statements, and a binding made afresh, get the values substituted
//!   (`BoundStatement::substitute_params`) and are planned with them. A row limit returns the first rows and keeps the rest in the
//!   portal (PortalSuspended).
//! - **Sync** ends the batch: outside a transaction block, its implicit transaction
//!   commits, and the portals go.
//!
//! A rebinding that would change the result columns fails with PostgreSQL's 0A000
//! `cached plan must not change result type`. DDL invalidates the cached bindings that
//! read what it changed (`catalog::Dependencies`), and only those; their next Bind binds
//! once more.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use common::{DataType, PgError, PgResult, SqlState, Value};
use sql::bound::{BoundStatement, OutputColumn};
use sql::parser::{Command, Statement};
use wire::{BindRequest, Description, ExecuteEnd, ExecuteOutcome, Executed, STREAM_BATCH_ROWS};

use crate::session::Session;

/// A prepared statement (Parse, or SQL PREPARE).
pub(crate) struct Prepared {
    pub sql: Arc<str>,
    /// `None` for an empty query string.
    pub stmt: Option<Arc<Command>>,
    pub param_types: Arc<[DataType]>,
    /// The result columns, for statements that return rows.
    pub columns: Option<Arc<[OutputColumn]>>,
    /// The plan cache: the statement as bound, and its plan.
    pub bound: Option<Arc<planner::CachedPlan>>,
}

/// A prepared statement's plan cache entry (`planner::cache`): bound; its generic plan
/// (for a query or DML) is made when an execution first asks for it.
pub(crate) fn cache_plan(
    catalog: &catalog::CatalogSnapshot,
    bound: BoundStatement,
    deps: catalog::Dependencies,
) -> PgResult<Arc<planner::CachedPlan>> {
    let plannable = matches!(
        bound,
        BoundStatement::Query(_)
            | BoundStatement::Insert(_)
            | BoundStatement::Update(_)
            | BoundStatement::Delete(_)
    );
    Ok(Arc::new(planner::CachedPlan::new(
        catalog.version,
        bound,
        deps,
        plannable,
    )))
}

/// Where a portal stands.
enum PortalState {
    /// Not run yet.
    Ready,
    /// A query, running (executor rule 8): each Execute fetches its next rows, and
    /// `sent` counts those of the Execute under way (its batches, `ExecuteEnd::More`).
    Live {
        portal: executor::portal::Portal,
        sent: usize,
        /// COPY TO STDOUT: its rows go as lines (the header first).
        copy: Option<CopyOut>,
    },
    /// Ran; these rows are still to be sent (`tag` ends them).
    Suspended {
        rows: std::vec::IntoIter<Vec<Value>>,
        tag: Option<String>,
    },
    /// All sent; executing it again sends no rows.
    Done { tag: Option<String> },
}

/// What a portal running COPY TO STDOUT sends its rows as.
struct CopyOut {
    columns: usize,
    format: sql::bound::CopyFormat,
    /// Lines still to go before the rows' (the header).
    header: Vec<Vec<u8>>,
}

/// A portal: a prepared statement with its parameter values (Bind).
pub(crate) struct Portal {
    sql: Arc<str>,
    stmt: Option<Arc<Command>>,
    param_types: Arc<[DataType]>,
    values: Vec<Value>,
    columns: Option<Arc<[OutputColumn]>>,
    /// Per result column: sent in binary.
    binary: Vec<bool>,
    bound: Option<Arc<planner::CachedPlan>>,
    state: PortalState,
}

impl Portal {
    /// Whether its query, suspended, reads table `oid`.
    pub(crate) fn reads_table(&self, oid: common::Oid) -> bool {
        match &self.state {
            PortalState::Live { portal, .. } => portal.reads_table(oid),
            _ => false,
        }
    }
}

/// What `Database::execute_one` needs from a portal.
pub(crate) struct BoundParams<'a> {
    pub types: &'a [DataType],
    pub values: &'a [Value],
    pub columns: Option<&'a [OutputColumn]>,
    /// The statement as Bind found it bound (taken by the execution).
    pub bound: Option<Arc<planner::CachedPlan>>,
    /// EXPLAIN EXECUTE: the plan the execution chose is explained (and under ANALYZE
    /// run) with these options.
    pub explain: Option<sql::bound::ExplainOptions>,
    /// The statement run is a DECLARE's query: its columns are the cursor's, whatever
    /// they are (the DECLARE returns none).
    pub cursor_query: bool,
}

impl BoundParams<'_> {
    /// Bind the statement again (the catalog changed since).
    pub fn rebind(
        &self,
        binder: sql::Binder<'_>,
        stmt: &Statement,
    ) -> PgResult<(BoundStatement, catalog::Dependencies)> {
        match self.cursor_query {
            true => {
                let binder = binder.with_params(self.types.to_vec());
                let (bound, _) = binder.bind_prepared(stmt)?;
                Ok((bound, binder.dependencies()))
            }
            false => rebind(binder, stmt, self.types, self.columns),
        }
    }
}

/// Bind a prepared statement again: with the parameter types fixed at Parse, and the
/// same result column types or PostgreSQL's 0A000. Returns it with what it read.
fn rebind(
    binder: sql::Binder<'_>,
    stmt: &Statement,
    types: &[DataType],
    columns: Option<&[OutputColumn]>,
) -> PgResult<(BoundStatement, catalog::Dependencies)> {
    let binder = binder.with_params(types.to_vec());
    let (bound, _) = binder.bind_prepared(stmt)?;
    let deps = binder.dependencies();
    let same = |a: &[OutputColumn], b: &[OutputColumn]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.ty == y.ty)
    };
    match (bound.columns(), columns) {
        (None, None) => Ok((bound, deps)),
        (Some(a), Some(b)) if same(a, b) => Ok((bound, deps)),
        _ => Err(PgError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            "cached plan must not change result type",
        )),
    }
}

/// Statements Parse binds (the others are bound, if at all, when they run).
fn binds_at_parse(stmt: &Command) -> bool {
    matches!(
        stmt.sql(),
        Some(
            Statement::Query(_)
                | Statement::Insert(_)
                | Statement::Update(_)
                | Statement::Delete(_)
                | Statement::Explain { .. }
        )
    )
}

/// COMMIT and ROLLBACK [TO]: what a failed transaction block still accepts.
pub(crate) fn is_exit(stmt: &Command) -> bool {
    matches!(
        stmt.sql(),
        Some(Statement::Commit { .. } | Statement::Rollback { .. })
    )
}

fn no_statement(name: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_SQL_STATEMENT_NAME,
        if name.is_empty() {
            "unnamed prepared statement does not exist".to_string()
        } else {
            format!("prepared statement \"{name}\" does not exist")
        },
    )
}

fn duplicate_statement(name: &str) -> PgError {
    PgError::new(
        SqlState::DUPLICATE_PREPARED_STATEMENT,
        format!("prepared statement \"{name}\" already exists"),
    )
}

fn no_portal(name: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_CURSOR_NAME,
        if name.is_empty() {
            "unnamed portal does not exist".to_string()
        } else {
            format!("portal \"{name}\" does not exist")
        },
    )
}

fn protocol(msg: String) -> PgError {
    PgError::new(SqlState::PROTOCOL_VIOLATION, msg)
}

/// Per-item format codes as Bind sends them: none (all text), one (for all) or one each.
fn format_codes(codes: &[i16], n: usize, what: impl FnOnce() -> PgError) -> PgResult<Vec<i16>> {
    match codes {
        [] => Ok(vec![0; n]),
        [c] => Ok(vec![*c; n]),
        many if many.len() == n => Ok(many.to_vec()),
        _ => Err(what()),
    }
}

/// A format code: false for text, true for binary.
fn is_binary(code: i16) -> PgResult<bool> {
    match code {
        0 => Ok(false),
        1 => Ok(true),
        other => Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("unsupported format code: {other}"),
        )),
    }
}

/// The wire's columns for `columns`, each in its format.
pub(crate) fn wire_columns(columns: &[OutputColumn], binary: &[bool]) -> Vec<wire::Column> {
    columns
        .iter()
        .enumerate()
        .map(|(i, c)| wire::Column {
            name: c.name.clone(),
            table_oid: c.table_oid,
            column_number: c.column_number,
            type_oid: c.ty.oid(),
            type_size: c.ty.typlen(),
            type_modifier: c.ty.typmod(),
            binary: binary.get(i).copied().unwrap_or(false),
        })
        .collect()
}

impl Session {
    /// The catalog as it is now and the session's binder over it.
    fn bind_fresh(
        &self,
        sql: &str,
        stmt: &Statement,
        declared: Vec<DataType>,
    ) -> PgResult<(Arc<planner::CachedPlan>, Vec<DataType>)> {
        let catalog = self.db.catalog.snapshot(&self.tx);
        let binder = sql::Binder::new(&catalog, sql, &self.info).with_params(declared);
        let (bound, types) = binder.bind_prepared(stmt)?;
        let cached = cache_plan(&catalog, bound, binder.dependencies())?;
        Ok((cached, types))
    }

    /// Parse: a prepared statement named `name`.
    pub(crate) fn prepare(&mut self, name: &str, sql: &str, param_oids: &[u32]) -> PgResult<()> {
        if !name.is_empty() && self.statements.contains_key(name) {
            return Err(duplicate_statement(name));
        }
        let mut stmts = self.db.parses.parse(sql)?;
        if stmts.len() > 1 {
            return Err(PgError::syntax(
                "cannot insert multiple commands into a prepared statement",
            ));
        }
        let stmt = stmts.pop();
        // Literals bound now ('now', a timestamptz without a zone) read the session clock.
        self.set_statement_context();
        if self.failed && !stmt.as_ref().is_some_and(is_exit) {
            return Err(crate::session::aborted_block());
        }
        let mut declared = Vec::with_capacity(param_oids.len());
        for &oid in param_oids {
            declared.push(if oid == 0 {
                DataType::Unknown
            } else {
                DataType::from_oid(oid, -1).ok_or_else(|| {
                    PgError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("type with OID {oid} does not exist"),
                    )
                })?
            });
        }
        self.prepare_parsed(name, sql, stmt, declared)
    }

    /// Prepare `stmt` (from `sql`) as `name`, binding it if it is a query or DML.
    fn prepare_parsed(
        &mut self,
        name: &str,
        sql: &str,
        stmt: Option<Command>,
        declared: Vec<DataType>,
    ) -> PgResult<()> {
        let (param_types, columns, bound) = match &stmt {
            Some(cmd @ Command::Sql(s)) if binds_at_parse(cmd) => {
                let (cached, types) = self.bind_fresh(sql, s, declared)?;
                let columns = cached.bound.columns().map(Arc::from);
                (types, columns, Some(cached))
            }
            // FETCH returns its cursor's columns (MOVE, none).
            Some(Command::Fetch(f)) => (declared, self.cursor_columns(f).map(Arc::from), None),
            Some(Command::Sql(Statement::ShowVariable { variable })) => {
                let name = crate::session::setting_name(variable);
                let column = OutputColumn {
                    name: name.into(),
                    ty: DataType::Text,
                    table_oid: 0,
                    column_number: 0,
                };
                (declared, Some(Arc::from(vec![column])), None)
            }
            _ => (declared, None, None),
        };
        self.statements.insert(
            name.to_string(),
            Prepared {
                sql: Arc::from(sql),
                stmt: stmt.map(Arc::new),
                param_types: Arc::from(param_types),
                columns,
                bound,
            },
        );
        Ok(())
    }

    /// Bind: decode the parameters and make the portal.
    pub(crate) fn bind_portal(&mut self, req: BindRequest<'_>) -> PgResult<()> {
        // Text parameters of date/time types read the session clock and zone.
        self.set_statement_context();
        let prep = self
            .statements
            .get(req.statement)
            .ok_or_else(|| no_statement(req.statement))?;
        if self.failed && !prep.stmt.as_deref().is_some_and(is_exit) {
            return Err(crate::session::aborted_block());
        }
        if !req.portal.is_empty() && self.portals.contains_key(req.portal) {
            return Err(PgError::new(
                SqlState::DUPLICATE_CURSOR,
                format!("cursor \"{}\" already exists", req.portal),
            ));
        }
        let n = prep.param_types.len();
        if req.params.len() != n {
            return Err(protocol(format!(
                "bind message supplies {} parameters, but prepared statement \"{}\" requires {n}",
                req.params.len(),
                req.statement
            )));
        }
        let param_codes = format_codes(req.param_formats, n, || {
            protocol(format!(
                "bind message has {} parameter formats but {n} parameters",
                req.param_formats.len()
            ))
        })?;
        let mut values = Vec::with_capacity(n);
        for (i, (bytes, ty)) in req.params.iter().zip(prep.param_types.iter()).enumerate() {
            // PostgreSQL's context for a parameter's error; a text value shows as '...'
            // (its log_parameter_max_length_on_error is 0 by default).
            let context = |text: bool| {
                let portal = if req.portal.is_empty() {
                    "unnamed portal".to_string()
                } else {
                    format!("portal \"{}\"", req.portal)
                };
                let value = if text { " = '...'" } else { "" };
                format!("{portal} parameter ${}{value}", i + 1)
            };
            let value = match bytes {
                None => Ok(Value::Null),
                Some(b) => match is_binary(param_codes[i]) {
                    Err(e) => Err(e.with_context(context(false))),
                    Ok(true) => wire::binary::get_param(b, ty, i + 1)
                        .map_err(|e| e.with_context(context(false))),
                    Ok(false) => wire::binary::utf8(b)
                        .and_then(|text| match ty {
                            DataType::Unknown => Ok(Value::Text(text.to_string())),
                            ty => Value::parse(text, ty, &self.info.text),
                        })
                        .map_err(|e| e.with_context(context(true))),
                },
            };
            values.push(value?);
        }
        let ncols = prep.columns.as_ref().map_or(0, |c| c.len());
        let binary = format_codes(req.result_formats, ncols, || {
            protocol(format!(
                "bind message has {} result formats but query has {ncols} columns",
                req.result_formats.len()
            ))
        })?
        .into_iter()
        .map(is_binary)
        .collect::<PgResult<Vec<bool>>>()?;
        // The plan cache: the binding Parse (or the last Bind) made, if nothing it read
        // has changed since; else bind now and keep that.
        let catalog = self.db.catalog.snapshot(&self.tx);
        if prep.bound.as_ref().is_some_and(|c| !c.holds_for(&catalog)) {
            let stmt = prep
                .stmt
                .as_deref()
                .and_then(Command::sql)
                .expect("a bound statement has a statement");
            let binder = sql::Binder::new(&catalog, &prep.sql, &self.info);
            let (bound, deps) = rebind(binder, stmt, &prep.param_types, prep.columns.as_deref())?;
            let cached = cache_plan(&catalog, bound, deps)?;
            if let Some(p) = self.statements.get_mut(req.statement) {
                p.bound = Some(cached);
            }
        }
        let prep = &self.statements[req.statement];
        let portal = Portal {
            sql: prep.sql.clone(),
            stmt: prep.stmt.clone(),
            param_types: prep.param_types.clone(),
            values,
            columns: prep.columns.clone(),
            binary,
            bound: prep.bound.clone(),
            state: PortalState::Ready,
        };
        self.portals.insert(req.portal.to_string(), portal);
        Ok(())
    }

    pub(crate) fn describe_target(&mut self, portal: bool, name: &str) -> PgResult<Description> {
        if portal {
            // A cursor is a portal too (psycopg describes its server-side cursors).
            if !self.portals.contains_key(name)
                && let Some(columns) = self.named_cursor_columns(name)
            {
                return Ok(Description {
                    params: None,
                    columns: Some(wire_columns(&columns, &[])),
                });
            }
            let p = self.portals.get(name).ok_or_else(|| no_portal(name))?;
            Ok(Description {
                params: None,
                columns: p.columns.as_ref().map(|c| wire_columns(c, &p.binary)),
            })
        } else {
            let p = self
                .statements
                .get(name)
                .ok_or_else(|| no_statement(name))?;
            Ok(Description {
                params: Some(p.param_types.iter().map(|t| t.oid()).collect()),
                columns: p.columns.as_ref().map(|c| wire_columns(c, &[])),
            })
        }
    }

    /// Execute: run the portal (the first time) and send up to `max_rows` rows, after
    /// the notices the statement raised making them.
    pub(crate) fn execute_portal(&mut self, name: &str, max_rows: usize) -> ExecuteOutcome {
        let mut outcome = self.execute_portal_rows(name, max_rows);
        outcome.notices.extend(self.take_notices());
        outcome
    }

    fn execute_portal_rows(&mut self, name: &str, max_rows: usize) -> ExecuteOutcome {
        let Some(mut portal) = self.portals.remove(name) else {
            if self.cursors.contains_key(name) {
                return self.execute_cursor(name, max_rows);
            }
            return ExecuteOutcome {
                notices: vec![],
                result: Err(no_portal(name)),
            };
        };
        let mut notices = Vec::new();
        let first_run = matches!(portal.state, PortalState::Ready);
        if first_run {
            let Some(stmt) = portal.stmt.clone() else {
                portal.state = PortalState::Done { tag: None };
                self.portals.insert(name.to_string(), portal);
                return ExecuteOutcome {
                    notices,
                    result: Ok(Executed {
                        rows: vec![],
                        binary: vec![],
                        end: ExecuteEnd::Empty,
                        text: self.info.text.clone(),
                        copy_out: None,
                    }),
                };
            };
            self.tx.clear_cancel();
            self.activity.status().start_query(&portal.sql);
            let mut params = BoundParams {
                types: &portal.param_types,
                values: &portal.values,
                columns: portal.columns.as_deref(),
                bound: portal.bound.take(),
                explain: None,
                cursor_query: false,
            };
            // VACUUM runs alone and commits at once, as in PostgreSQL's extended protocol.
            let last = matches!(&*stmt, Command::Vacuum(v) if v.vacuum);
            let sql = portal.sql.clone();
            let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
                self.run(&stmt, &sql, last, Some(&mut params))
            }))
            .unwrap_or_else(|p| Err(crate::session::panic_error(p.as_ref(), &stmt)));
            if result.is_ok() && self.copy.is_some() {
                let e = PgError::unsupported("COPY FROM STDIN in the extended query protocol");
                self.copy_failed(e.clone());
                return ExecuteOutcome {
                    notices,
                    result: Err(e),
                };
            }
            match result {
                Ok(mut r) => {
                    notices = std::mem::take(&mut r.notices);
                    let copy = match (r.copy_format.take(), r.copy_out.take()) {
                        (Some(format), Some((columns, header))) => Some(CopyOut {
                            columns,
                            format,
                            header,
                        }),
                        _ => None,
                    };
                    portal.state = match r.portal {
                        Some(live) => PortalState::Live {
                            portal: live,
                            sent: 0,
                            copy,
                        },
                        None => PortalState::Suspended {
                            tag: (!matches!(*stmt, Command::Sql(Statement::Query(_))))
                                .then_some(r.tag),
                            rows: r.rows.into_iter(),
                        },
                    };
                }
                Err(e) => {
                    self.fail();
                    return ExecuteOutcome {
                        notices,
                        result: Err(e),
                    };
                }
            }
        }
        let mut text = self.info.text.clone();
        let mut copy_out = None;
        let (rows, end) = match &mut portal.state {
            PortalState::Ready => unreachable!("the portal ran above"),
            PortalState::Live {
                portal: live,
                sent,
                copy,
            } => {
                text = live.text().clone();
                // Each Execute of a suspended portal is a statement of its own for
                // statement_timeout and cancels, as in PostgreSQL (not each batch).
                if *sent == 0 && !first_run {
                    self.tx.clear_cancel();
                    self.tx.set_wait_policy(self.wait_policy());
                }
                // COPY runs to its end whatever the limit, as in PostgreSQL.
                let limit = if max_rows == 0 || copy.is_some() {
                    usize::MAX
                } else {
                    max_rows
                };
                // The first batch of an Execute is small, so its rows go out soon.
                let bytes = match sent {
                    0 => crate::stream::FIRST_BATCH_BYTES,
                    _ => crate::stream::BATCH_BYTES,
                };
                let rows =
                    match crate::stream::fetch_batch(live, limit.min(STREAM_BATCH_ROWS), bytes) {
                        Ok(rows) => rows,
                        Err(e) => {
                            // The portal goes with its failed transaction.
                            self.fail();
                            return ExecuteOutcome {
                                notices,
                                result: Err(e),
                            };
                        }
                    };
                *sent += rows.len();
                let rows = match copy {
                    Some(c) => {
                        let mut lines = std::mem::take(&mut c.header);
                        lines.extend(executor::commands::copy::rows_to_lines(
                            &c.format, &rows, &text,
                        ));
                        copy_out = Some((c.columns, lines));
                        Vec::new()
                    }
                    None => rows,
                };
                let end = if live.is_done() {
                    let end = ExecuteEnd::Complete(match (live.tag(), &copy_out) {
                        (Some(tag), _) => tag.to_string(),
                        (None, Some(_)) => format!("COPY {}", live.fetched()),
                        (None, None) => format!("SELECT {sent}"),
                    });
                    portal.state = PortalState::Done { tag: None };
                    end
                } else if rows.len() == limit {
                    *sent = 0;
                    ExecuteEnd::Suspended
                } else {
                    ExecuteEnd::More
                };
                (rows, end)
            }
            PortalState::Suspended { rows, tag } => {
                let take = if max_rows == 0 { usize::MAX } else { max_rows };
                let out: Vec<Vec<Value>> = rows.by_ref().take(take).collect();
                if rows.len() > 0 {
                    (out, ExecuteEnd::Suspended)
                } else {
                    let tag = tag.take();
                    let end = ExecuteEnd::Complete(
                        tag.clone()
                            .unwrap_or_else(|| format!("SELECT {}", out.len())),
                    );
                    portal.state = PortalState::Done { tag };
                    (out, end)
                }
            }
            PortalState::Done { tag } => (
                vec![],
                ExecuteEnd::Complete(tag.clone().unwrap_or_else(|| "SELECT 0".into())),
            ),
        };
        let binary = portal.binary.clone();
        self.portals.insert(name.to_string(), portal);
        ExecuteOutcome {
            notices,
            result: Ok(Executed {
                rows,
                binary,
                end,
                text,
                copy_out,
            }),
        }
    }

    /// SQL PREPARE name [(types)] AS statement.
    pub(crate) fn sql_prepare(
        &mut self,
        name: &sqlparser::ast::Ident,
        types: &[sqlparser::ast::DataType],
        stmt: &Statement,
        sql: &str,
    ) -> PgResult<executor::StatementResult> {
        let name = sql::binder::ident_name(name);
        if self.statements.contains_key(&name) {
            return Err(duplicate_statement(&name));
        }
        let stmt = Command::Sql(stmt.clone());
        if !binds_at_parse(&stmt) {
            let word = stmt.to_string();
            let word = word.split_whitespace().next().unwrap_or("");
            return Err(PgError::syntax(format!(
                "syntax error at or near \"{word}\""
            )));
        }
        let catalog = self.db.catalog.snapshot(&self.tx);
        let binder = sql::Binder::new(&catalog, sql, &self.info);
        // A parameter's type is an OID: PostgreSQL drops a declared typmod
        // (`PREPARE p(numeric(3,1))` passes 1.25 through unrounded).
        let declared = types
            .iter()
            .map(|t| binder.resolve_type(t).map(|t| t.without_typmod()))
            .collect::<PgResult<Vec<_>>>()?;
        self.prepare_parsed(&name, sql, Some(stmt), declared)?;
        Ok(executor::StatementResult {
            tag: "PREPARE".into(),
            ..Default::default()
        })
    }

    /// SQL EXECUTE name [(arguments)]: the statement's rows and command tag; under
    /// `explain` (EXPLAIN EXECUTE), the plan the execution chose, generic or custom, as
    /// EXPLAIN shows it.
    pub(crate) fn sql_execute(
        &mut self,
        name: &sqlparser::ast::ObjectName,
        args: &[sqlparser::ast::Expr],
        sql: &str,
        last: bool,
        explain: Option<sql::bound::ExplainOptions>,
    ) -> PgResult<executor::StatementResult> {
        let name = name
            .0
            .iter()
            .filter_map(|p| p.as_ident())
            .map(sql::binder::ident_name)
            .collect::<Vec<_>>()
            .join(".");
        let prep = self
            .statements
            .get(&name)
            .ok_or_else(|| no_statement(&name))?;
        let (stmt, prep_sql, types, columns) = (
            prep.stmt.clone(),
            prep.sql.clone(),
            prep.param_types.clone(),
            prep.columns.clone(),
        );
        let bound = prep.bound.clone();
        // The arguments are evaluated in the statement's transaction and read its clock
        // and zone (`now()`, a timestamptz literal), not the last statement's.
        if !self.tx.is_active() {
            self.begin_tx(None, None);
        }
        self.set_statement_context();
        if args.len() != types.len() {
            return Err(PgError::syntax(format!(
                "wrong number of parameters for prepared statement \"{name}\""
            ))
            .with_detail(format!(
                "Expected {} parameters but got {}.",
                types.len(),
                args.len()
            )));
        }
        let catalog = self.db.catalog.snapshot(&self.tx);
        let binder = sql::Binder::new(&catalog, sql, &self.info);
        let session = self
            .db
            .exec_session(&self.parts(), &self.tx, catalog.clone());
        let mut values = Vec::with_capacity(args.len());
        for (a, ty) in args.iter().zip(types.iter()) {
            let e = binder.bind_argument(a, ty)?;
            values.push(executor::eval::eval(&e, &[], &session)?);
        }
        let Some(stmt) = stmt else {
            return Err(PgError::internal("EXECUTE of an empty statement"));
        };
        let mut params = BoundParams {
            types: &types,
            values: &values,
            columns: columns.as_deref(),
            bound,
            explain,
            cursor_query: false,
        };
        self.run(&stmt, &prep_sql, last, Some(&mut params))
    }

    /// SQL DEALLOCATE [PREPARE] name | ALL.
    pub(crate) fn sql_deallocate(
        &mut self,
        name: &sqlparser::ast::Ident,
    ) -> PgResult<executor::StatementResult> {
        let tag = if name.quote_style.is_none() && name.value.eq_ignore_ascii_case("all") {
            self.statements.clear();
            "DEALLOCATE ALL"
        } else {
            let name = sql::binder::ident_name(name);
            if self.statements.remove(&name).is_none() {
                return Err(no_statement(&name));
            }
            "DEALLOCATE"
        };
        Ok(executor::StatementResult {
            tag: tag.into(),
            ..Default::default()
        })
    }

    pub(crate) fn close_target(&mut self, portal: bool, name: &str) {
        if portal {
            if self.portals.remove(name).is_none() {
                self.close_cursor_named(name);
            }
        } else {
            self.statements.remove(name);
        }
    }

    /// Sync: outside a block, the batch's implicit transaction commits and its portals go.
    pub(crate) fn sync_batch(&mut self) -> PgResult<()> {
        let r = if !self.explicit && self.tx.is_active() {
            self.end_tx(true)
        } else {
            Ok(())
        };
        if !self.explicit {
            self.portals.clear();
        }
        self.set_idle_state();
        r
    }
}
