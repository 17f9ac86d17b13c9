//! Binding conditions over one table's row that the catalog keeps as SQL text: CHECK
//! constraints (the condition of a new one, from CREATE TABLE or ALTER TABLE ADD CHECK,
//! checked and reduced to that text) and partial indexes' predicates (CREATE INDEX ...
//! WHERE), and the conditions a write must evaluate on each new row.

use catalog::{NewCheck, TableDesc};
use common::{PgError, PgResult};
use sqlparser::ast;

use super::expr::{ExprContext, coerce_to_bool};
use super::{Binder, Scope, ident_name};
use crate::bound::{BoundCheck, BoundIndexPredicate, Expr, ExprKind};

/// The clause name in errors: `aggregate functions are not allowed in check constraints`.
pub(crate) const CHECK_CLAUSE: &str = "check constraints";

/// The clause name in errors: `aggregate functions are not allowed in index predicates`.
pub(crate) const INDEX_PREDICATE_CLAUSE: &str = "index predicates";

impl Binder<'_> {
    /// `[CONSTRAINT name] CHECK (expr)` over `table`'s columns (for CREATE TABLE, a
    /// descriptor of the table being made). `validated`: false for NOT VALID. Returns
    /// the constraint and its condition bound over the table's row.
    pub(crate) fn bind_new_check(
        &self,
        table: &TableDesc,
        c: &ast::CheckConstraint,
        validated: bool,
    ) -> PgResult<(NewCheck, Expr)> {
        if c.enforced == Some(false) {
            return Err(PgError::unsupported("NOT ENFORCED check constraints"));
        }
        if c.no_inherit {
            return Err(PgError::unsupported("NO INHERIT check constraints"));
        }
        let text = c.expr.to_string();
        let bound = self.check_condition(table, &c.expr)?;
        let mut columns = Vec::new();
        bound.walk(&mut |e| {
            if let ExprKind::Column(i) = e.kind {
                columns.push(i);
            }
        });
        columns.sort_unstable();
        columns.dedup();
        let check = NewCheck {
            name: c.name.as_ref().map(ident_name),
            expr: text,
            columns,
            validated,
        };
        Ok((check, bound))
    }

    /// A check's condition bound over `table`'s row: boolean, no subqueries, aggregates
    /// or window functions, columns of the table only.
    fn check_condition(&self, table: &TableDesc, e: &ast::Expr) -> PgResult<Expr> {
        let scope = Scope::for_table(table, &table.name);
        let cx = ExprContext {
            scope: &scope,
            aggs_allowed: false,
            clause: CHECK_CLAUSE,
        };
        coerce_to_bool(self, self.bind_expr(e, &cx)?, "CHECK")
    }

    /// The CHECK constraints a write to `table` evaluates on each new row, in name order
    /// (PostgreSQL's: the first violated one is reported).
    pub(crate) fn check_exprs(&self, table: &TableDesc) -> PgResult<Vec<BoundCheck>> {
        let mut out = Vec::with_capacity(table.checks.len());
        for c in &table.checks {
            out.push(BoundCheck {
                name: c.name.clone(),
                expr: self.stored_check(table, &c.expr)?,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// A stored check's text, bound again over `table`'s row.
    fn stored_check(&self, table: &TableDesc, text: &str) -> PgResult<Expr> {
        self.check_condition(table, &crate::parser::parse_expr(text)?)
    }

    /// A partial index's `WHERE` over `table`'s row (PostgreSQL's `ComputeIndexAttrs`
    /// checks): boolean, no subqueries, aggregates or window functions, and nothing
    /// whose value can change while the row does not (42P17): the index must hold the
    /// rows the condition picks whenever it is read.
    pub(crate) fn index_predicate(&self, table: &TableDesc, e: &ast::Expr) -> PgResult<Expr> {
        let scope = Scope::for_table(table, &table.name);
        let cx = ExprContext {
            scope: &scope,
            aggs_allowed: false,
            clause: INDEX_PREDICATE_CLAUSE,
        };
        let bound = coerce_to_bool(self, self.bind_expr(e, &cx)?, "WHERE")?;
        if !bound.is_immutable() {
            return Err(PgError::new(
                common::SqlState::INVALID_OBJECT_DEFINITION,
                "functions in index predicate must be marked IMMUTABLE",
            ));
        }
        Ok(bound)
    }

    /// The predicates of `table`'s partial indexes, for a write to evaluate on each new
    /// row.
    pub(crate) fn index_predicates(&self, table: &TableDesc) -> PgResult<Vec<BoundIndexPredicate>> {
        table
            .indexes
            .iter()
            .filter_map(|i| i.predicate.as_ref().map(|p| (i.oid, p)))
            .map(|(index, text)| {
                Ok(BoundIndexPredicate {
                    index,
                    expr: self.index_predicate(table, &crate::parser::parse_expr(text)?)?,
                })
            })
            .collect()
    }
}

/// A partial index's stored predicate bound over `table`'s row (for the planner, which
/// uses the index only where a query's conditions imply it, and for showing it).
pub fn bind_index_predicate(
    catalog: &catalog::CatalogSnapshot,
    table: &TableDesc,
    text: &str,
    session: &common::session::SessionInfo,
) -> PgResult<Expr> {
    Binder::new(catalog, text, session).index_predicate(table, &crate::parser::parse_expr(text)?)
}

/// A CHECK condition's stored text bound over `table`'s row (for showing it, for
/// checking a row, or for rewriting it when a column it reads is renamed), in `session`.
pub fn bind_check(
    catalog: &catalog::CatalogSnapshot,
    table: &TableDesc,
    text: &str,
    session: &common::session::SessionInfo,
) -> PgResult<Expr> {
    Binder::new(catalog, text, session).stored_check(table, text)
}
