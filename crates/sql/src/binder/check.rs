//! Binding CHECK constraints: the condition of a new one (CREATE TABLE, ALTER TABLE ADD
//! CHECK), checked and reduced to the SQL text the catalog keeps, and the conditions a
//! write must evaluate on each new row.

use catalog::{NewCheck, TableDesc};
use common::{PgError, PgResult};
use sqlparser::ast;

use super::expr::{ExprContext, coerce_to_bool};
use super::{Binder, Scope, ident_name};
use crate::bound::{BoundCheck, Expr, ExprKind};

/// The clause name in errors: `aggregate functions are not allowed in check constraints`.
pub(crate) const CHECK_CLAUSE: &str = "check constraints";

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
