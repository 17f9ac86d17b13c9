//! Binding INSERT, UPDATE and DELETE.

use std::sync::Arc;

use catalog::{ColumnDesc, TableDesc};
use common::{PgError, PgResult, SqlState, Value};
use sqlparser::ast::{self, Spanned};

use super::expr::{ExprContext, coerce_to_bool};
use super::{Binder, Scope, ident_name};
use crate::bound::{
    BoundDelete, BoundInsert, BoundStatement, BoundUpdate, Expr, LogicalPlan, Returning,
};
use crate::parser::Overriding;

/// 428C9 for a value given to a GENERATED ALWAYS identity column (INSERT, or UPDATE).
fn always_identity(col: &ColumnDesc, update: bool) -> PgResult<()> {
    if col.identity != Some(catalog::Identity::Always) {
        return Ok(());
    }
    let detail = format!(
        "Column \"{}\" is an identity column defined as GENERATED ALWAYS.",
        col.name
    );
    Err(if update {
        PgError::new(
            SqlState::GENERATED_ALWAYS,
            format!("column \"{}\" can only be updated to DEFAULT", col.name),
        )
        .with_detail(detail)
    } else {
        PgError::new(
            SqlState::GENERATED_ALWAYS,
            format!(
                "cannot insert a non-DEFAULT value into column \"{}\"",
                col.name
            ),
        )
        .with_detail(detail)
        .with_hint("Use OVERRIDING SYSTEM VALUE to override.")
    })
}

fn is_default_keyword(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Identifier(id) if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("default"))
}

/// A column's DEFAULT as bound for an INSERT (coerced to the column's type), or None
/// for a column without one: what `pg_attrdef.adbin` shows, deparsed.
pub fn bind_default(
    catalog: &catalog::CatalogSnapshot,
    col: &ColumnDesc,
    session: &common::session::SessionInfo,
) -> PgResult<Option<Expr>> {
    let Some(text) = &col.default else {
        return Ok(None);
    };
    Binder::new(catalog, text, session)
        .default_value(col)
        .map(Some)
}

impl Binder<'_> {
    /// The value a column gets when none is given: its DEFAULT, else NULL.
    pub(crate) fn default_value(&self, col: &ColumnDesc) -> PgResult<Expr> {
        match &col.default {
            None => Ok(Expr::constant(Value::Null, col.ty)),
            Some(text) => {
                let ast = crate::parser::parse_expr(text)?;
                let scope = Scope::default();
                let cx = ExprContext {
                    scope: &scope,
                    aggs_allowed: false,
                    clause: "DEFAULT expressions",
                };
                let e = self.bind_expr(&ast, &cx)?;
                self.assign(e, col)
            }
        }
    }

    /// A column of the target table named in INSERT's column list or UPDATE's SET.
    fn target_column(&self, table: &TableDesc, id: &ast::Ident) -> PgResult<(String, usize)> {
        let name = ident_name(id);
        match table.column_index(&name) {
            Some(i) => Ok((name, i)),
            None => Err(PgError::new(
                SqlState::UNDEFINED_COLUMN,
                format!(
                    "column \"{name}\" of relation \"{}\" does not exist",
                    table.name
                ),
            )
            .with_position(self.position(&id.span))),
        }
    }

    pub(crate) fn target_columns(
        &self,
        table: &TableDesc,
        cols: &[ast::ObjectName],
    ) -> PgResult<Vec<usize>> {
        if cols.is_empty() {
            return Ok(table.live_columns().collect());
        }
        let mut out = Vec::with_capacity(cols.len());
        for c in cols {
            let [ast::ObjectNamePart::Identifier(id)] = c.0.as_slice() else {
                return Err(PgError::unsupported(format!(
                    "column reference {c} in INSERT"
                )));
            };
            let (name, i) = self.target_column(table, id)?;
            if out.contains(&i) {
                return Err(PgError::new(
                    SqlState::DUPLICATE_COLUMN,
                    format!("column \"{name}\" specified more than once"),
                )
                .with_position(self.position(&id.span)));
            }
            out.push(i);
        }
        Ok(out)
    }

    pub(crate) fn bind_insert(&self, i: &ast::Insert) -> PgResult<BoundStatement> {
        if i.or.is_some()
            || i.ignore
            || i.overwrite
            || !i.after_columns.is_empty()
            || !i.assignments.is_empty()
            || i.output.is_some()
            || i.replace_into
            || i.priority.is_some()
            || i.insert_alias.is_some()
            || i.settings.is_some()
            || i.format_clause.is_some()
        {
            return Err(PgError::unsupported("this form of INSERT"));
        }
        if i.on.is_some() {
            return Err(PgError::unsupported("INSERT ... ON CONFLICT"));
        }
        let ast::TableObject::TableName(name) = &i.table else {
            return Err(PgError::unsupported("INSERT INTO a table function"));
        };
        if !i.into {
            // PostgreSQL's grammar requires INTO; sqlparser accepts MySQL's `INSERT t`.
            let (n, pos) = self.object_name(name)?;
            return Err(
                PgError::syntax(format!("syntax error at or near \"{n}\"")).with_position(pos)
            );
        }
        let overriding = crate::parser::insert_overriding(i)?;
        let table = self.table(name)?;
        let targets = self.target_columns(&table, &i.columns)?;
        let defaults = table
            .columns
            .iter()
            .map(|c| self.default_value(c))
            .collect::<PgResult<Vec<_>>>()?;
        // A value given for an identity column: refused for GENERATED ALWAYS unless
        // OVERRIDING SYSTEM VALUE, replaced by the column's default under OVERRIDING
        // USER VALUE (after it is bound, so its errors still show, as in PostgreSQL).
        let given = |value: Expr, t: usize| -> PgResult<Expr> {
            let col = &table.columns[t];
            match overriding {
                Some(Overriding::User) if col.identity.is_some() => Ok(defaults[t].clone()),
                Some(Overriding::System) => Ok(value),
                _ => always_identity(col, false).map(|()| value),
            }
        };
        let full_row = |provided: Vec<Expr>| -> Vec<Expr> {
            let mut row = defaults.clone();
            for (e, &t) in provided.into_iter().zip(&targets) {
                row[t] = e;
            }
            row
        };
        let count_check = |n: usize| -> PgResult<()> {
            if n > targets.len() {
                Err(PgError::syntax(
                    "INSERT has more expressions than target columns",
                ))
            } else if n < targets.len() && !i.columns.is_empty() {
                Err(PgError::syntax(
                    "INSERT has more target columns than expressions",
                ))
            } else {
                Ok(())
            }
        };
        let source = match &i.source {
            None => LogicalPlan::Values {
                rows: vec![defaults.clone()],
                width: table.columns.len(),
            },
            Some(q) => match q.body.as_ref() {
                ast::SetExpr::Values(v)
                    if q.order_by.is_none() && q.limit_clause.is_none() && q.with.is_none() =>
                {
                    let scope = Scope::default();
                    let cx = ExprContext {
                        scope: &scope,
                        aggs_allowed: false,
                        clause: "VALUES",
                    };
                    let mut rows = Vec::with_capacity(v.rows.len());
                    let width = v.rows.first().map_or(0, |r| r.content.len());
                    if v.rows.iter().any(|r| r.content.len() != width) {
                        return Err(PgError::syntax("VALUES lists must all be the same length"));
                    }
                    for r in &v.rows {
                        count_check(r.content.len())?;
                        let mut provided = Vec::with_capacity(r.content.len());
                        for (e, &t) in r.content.iter().zip(&targets) {
                            let col = &table.columns[t];
                            provided.push(if is_default_keyword(e) {
                                defaults[t].clone()
                            } else {
                                // PostgreSQL points at the value when it is not
                                // the column's type.
                                let value = self
                                    .assign(self.bind_expr(e, &cx)?, col)
                                    .map_err(|err| err.with_position(self.position(&e.span())))?;
                                given(value, t)?
                            });
                        }
                        rows.push(full_row(provided));
                    }
                    LogicalPlan::Values {
                        rows,
                        width: table.columns.len(),
                    }
                }
                _ => {
                    let sub = self.bind_query(q)?;
                    count_check(sub.columns.len())?;
                    let provided = sub
                        .columns
                        .iter()
                        .enumerate()
                        .zip(&targets)
                        .map(|((k, c), &t)| {
                            given(self.assign(Expr::column(k, c.ty), &table.columns[t])?, t)
                        })
                        .collect::<PgResult<Vec<_>>>()?;
                    LogicalPlan::Project {
                        input: Box::new(sub.plan),
                        exprs: full_row(provided),
                    }
                }
            },
        };
        let alias = i
            .table_alias
            .as_ref()
            .map(|a| ident_name(&a.alias))
            .unwrap_or_else(|| table.name.clone());
        let returning = self.bind_returning(i.returning.as_deref(), &table, &alias)?;
        let fks = self.fk_checks(&table, None, false);
        let checks = self.check_exprs(&table)?;
        let index_exprs = self.index_exprs(&table)?;
        Ok(BoundStatement::Insert(BoundInsert {
            table,
            source,
            returning,
            fks,
            checks,
            index_exprs,
        }))
    }

    /// The FROM item of UPDATE / DELETE: one table, maybe aliased.
    fn single_table(&self, twj: &ast::TableWithJoins) -> PgResult<(Arc<TableDesc>, String)> {
        if !twj.joins.is_empty() {
            return Err(PgError::unsupported("joins in UPDATE or DELETE"));
        }
        let ast::TableFactor::Table {
            name,
            alias,
            args: None,
            ..
        } = &twj.relation
        else {
            return Err(PgError::unsupported(format!("target \"{}\"", twj.relation)));
        };
        let table = self.table(name)?;
        let alias = alias
            .as_ref()
            .map(|a| ident_name(&a.name))
            .unwrap_or_else(|| table.name.clone());
        Ok((table, alias))
    }

    /// UPDATE ONLY / DELETE FROM ONLY a partitioned table: its own rows, of which it
    /// has none (`filter` made false).
    fn only_filter(&self, twj: &ast::TableWithJoins, table: &TableDesc, filter: &mut Option<Expr>) {
        if let ast::TableFactor::Table { name, .. } = &twj.relation
            && table.partition_key.is_some()
            && self.only(name)
        {
            *filter = Some(Expr::constant(Value::Bool(false), common::DataType::Bool));
        }
    }

    fn bind_filter(&self, selection: Option<&ast::Expr>, scope: &Scope) -> PgResult<Option<Expr>> {
        selection
            .map(|w| {
                let cx = ExprContext {
                    scope,
                    aggs_allowed: false,
                    clause: "WHERE",
                };
                coerce_to_bool(self, self.bind_expr(w, &cx)?, "WHERE")
            })
            .transpose()
    }

    pub(crate) fn bind_update(&self, u: &ast::Update) -> PgResult<BoundStatement> {
        if u.from.is_some() {
            return Err(PgError::unsupported("UPDATE ... FROM"));
        }
        if u.output.is_some() || u.or.is_some() || !u.order_by.is_empty() || u.limit.is_some() {
            return Err(PgError::unsupported("this form of UPDATE"));
        }
        let (table, alias) = self.single_table(&u.table)?;
        let table = aliased(table, &alias);
        let scope = Scope::for_table(&table, &alias);
        let cx = ExprContext {
            scope: &scope,
            aggs_allowed: false,
            clause: "UPDATE",
        };
        let mut assignments: Vec<(usize, Expr)> = Vec::with_capacity(u.assignments.len());
        for a in &u.assignments {
            let ast::AssignmentTarget::ColumnName(target) = &a.target else {
                return Err(PgError::unsupported("multiple-column UPDATE"));
            };
            let id = match target.0.as_slice() {
                [ast::ObjectNamePart::Identifier(id)] => id,
                _ => return Err(PgError::unsupported(format!("assignment target {target}"))),
            };
            let (name, c) = self.target_column(&table, id)?;
            if assignments.iter().any(|(x, _)| *x == c) {
                return Err(PgError::syntax(format!(
                    "multiple assignments to same column \"{name}\""
                )));
            }
            let col = &table.columns[c];
            let value = if is_default_keyword(&a.value) {
                self.default_value(col)?
            } else {
                always_identity(col, true)?;
                self.assign(self.bind_expr(&a.value, &cx)?, col)?
            };
            assignments.push((c, value));
        }
        let mut filter = self.bind_filter(u.selection.as_ref(), &scope)?;
        self.only_filter(&u.table, &table, &mut filter);
        let returning = self.bind_returning(u.returning.as_deref(), &table, &alias)?;
        let changed: Vec<usize> = assignments.iter().map(|(c, _)| *c).collect();
        let fks = self.fk_checks(&table, Some(&changed), true);
        let checks = self.check_exprs(&table)?;
        let index_exprs = self.index_exprs(&table)?;
        Ok(BoundStatement::Update(BoundUpdate {
            table,
            filter,
            assignments,
            returning,
            fks,
            checks,
            index_exprs,
        }))
    }

    pub(crate) fn bind_delete(&self, d: &ast::Delete) -> PgResult<BoundStatement> {
        if !d.tables.is_empty()
            || d.using.is_some()
            || d.output.is_some()
            || !d.order_by.is_empty()
            || d.limit.is_some()
        {
            return Err(PgError::unsupported("this form of DELETE"));
        }
        let from = match &d.from {
            ast::FromTable::WithFromKeyword(f) => f,
            // PostgreSQL's grammar requires FROM; sqlparser accepts BigQuery's `DELETE t`.
            ast::FromTable::WithoutKeyword(f) => {
                let near = f
                    .first()
                    .map(|t| t.relation.to_string())
                    .unwrap_or_default();
                let near = near.split_whitespace().next().unwrap_or("").to_string();
                return Err(PgError::syntax(format!(
                    "syntax error at or near \"{near}\""
                )));
            }
        };
        let [twj] = from.as_slice() else {
            return Err(PgError::unsupported("DELETE from several tables"));
        };
        let (table, alias) = self.single_table(twj)?;
        let scope = Scope::for_table(&table, &alias);
        let mut filter = self.bind_filter(d.selection.as_ref(), &scope)?;
        self.only_filter(twj, &table, &mut filter);
        let table = aliased(table, &alias);
        let returning = self.bind_returning(d.returning.as_deref(), &table, &alias)?;
        let fks = self.fk_checks(&table, Some(&[]), true);
        Ok(BoundStatement::Delete(BoundDelete {
            table,
            filter,
            returning,
            fks,
        }))
    }

    /// The foreign keys a write to `table` checks. `changed`: the columns an UPDATE sets
    /// (a key no column of which changes needs no check), `Some(&[])` for DELETE (no new
    /// rows), `None` for INSERT (every column is new); `removes`: old rows go (UPDATE,
    /// DELETE), so keys referencing them matter.
    pub(crate) fn fk_checks(
        &self,
        table: &TableDesc,
        changed: Option<&[usize]>,
        removes: bool,
    ) -> crate::bound::ForeignKeyChecks {
        let touches = |cols: &[usize]| changed.is_none_or(|ch| cols.iter().any(|c| ch.contains(c)));
        let mut out = crate::bound::ForeignKeyChecks::default();
        // A partition's rows are its ancestors' too: their keys hold for them.
        let mut level = Some(table);
        while let Some(t) = level {
            for fk in &t.foreign_keys {
                if touches(&fk.columns)
                    && let Some(r) = self.catalog.table_by_oid(fk.ref_table)
                {
                    out.outgoing.push((fk.clone(), r.clone()));
                }
            }
            level = t
                .partition_of
                .as_ref()
                .and_then(|p| self.catalog.table_by_oid(p.parent))
                .map(|p| &**p);
        }
        if removes {
            // A partition's rows are its ancestors' too: keys referencing them count.
            let mut at = Some(table.oid);
            while let Some(oid) = at {
                for (t, fk) in self.catalog.referencing(oid) {
                    if touches(&fk.ref_columns) || changed.is_some_and(<[usize]>::is_empty) {
                        out.incoming.push((fk.clone(), t.clone()));
                    }
                }
                at = self
                    .catalog
                    .table_by_oid(oid)
                    .and_then(|t| t.partition_of.as_ref().map(|p| p.parent));
            }
            // Keys may reference a partition below it too (CREATE TABLE ... REFERENCES
            // a partition, or ATTACH of a referenced table).
            if table.partition_key.is_some() {
                for (below, t, fk) in self.catalog.referencing_below(table.oid) {
                    if touches(&fk.ref_columns) || changed.is_some_and(<[usize]>::is_empty) {
                        out.incoming_below
                            .push((below.clone(), fk.clone(), t.clone()));
                    }
                }
            }
        }
        out
    }

    fn bind_returning(
        &self,
        items: Option<&[ast::SelectItem]>,
        table: &TableDesc,
        alias: &str,
    ) -> PgResult<Option<Returning>> {
        let Some(items) = items else { return Ok(None) };
        let scope = Scope::for_table(table, alias);
        let cx = ExprContext {
            scope: &scope,
            aggs_allowed: false,
            clause: "RETURNING",
        };
        let mut exprs = Vec::new();
        let mut columns = Vec::new();
        for item in items {
            self.bind_select_item(item, &cx, &mut exprs, &mut columns)?;
        }
        super::query::resolve_unknown_outputs(self, &mut exprs, &mut columns)?;
        Ok(Some(Returning { exprs, columns }))
    }
}

/// A write's target as the statement names it: with its alias, where it has one, so
/// that EXPLAIN shows it (`Delete on t x`, `Seq Scan on t x`).
fn aliased(table: Arc<TableDesc>, alias: &str) -> Arc<TableDesc> {
    if alias == table.name {
        return table;
    }
    Arc::new(TableDesc {
        alias: Some(alias.to_string()),
        ..(*table).clone()
    })
}
