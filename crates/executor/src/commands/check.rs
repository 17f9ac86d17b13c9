//! CHECK constraints in DDL, beyond the per-row test of a write (`dml::check_row`): the
//! rows a new one must hold for, and its text after a column it reads is renamed (its
//! definition as `pg_get_constraintdef` prints it is `ruleutils::check_definition`).
//! Partial indexes' predicates are stored the same way and follow a renamed column too.

use catalog::TableDesc;
use common::{DataType, Oid, PgError, PgResult, SqlState};
use sql::bound::{Expr, ExprKind};

use crate::ExecContext;
use crate::ruleutils::{column_names, deparse_stored_expr};

/// ALTER TABLE ADD CHECK (not NOT VALID): no row committed by now may make `condition`
/// false, or PostgreSQL's 23514 names the constraint. The caller holds AccessExclusive.
pub(crate) fn validate(
    cx: &ExecContext,
    table: &std::sync::Arc<TableDesc>,
    name: &str,
    condition: &Expr,
) -> PgResult<()> {
    let is_false = Expr::new(
        ExprKind::IsBool {
            expr: Box::new(condition.clone()),
            value: Some(false),
            negated: false,
        },
        DataType::Bool,
    );
    if super::some_row_where(cx, table, &is_false)? {
        return Err(PgError::new(
            SqlState::CHECK_VIOLATION,
            format!(
                "check constraint \"{name}\" of relation \"{}\" is violated by some row",
                table.name
            ),
        ));
    }
    Ok(())
}

/// RENAME COLUMN: the new text of each check and partial index predicate of `table` that
/// reads column `at` (by OID), and of each index expression that does (by index and
/// position), written from its bound form with the new name (as PostgreSQL's stored node
/// tree reads the new name). A text that would not bind back to the same expression
/// refuses the rename (0A000) rather than leave one that means something else.
#[allow(clippy::type_complexity)]
pub(crate) fn renamed_column(
    cx: &ExecContext,
    table: &TableDesc,
    at: usize,
    new_name: &str,
) -> PgResult<(Vec<(Oid, String)>, Vec<(Oid, usize, String)>)> {
    let s = cx.session;
    let catalog = cx.catalog.snapshot(cx.tx);
    let mut renamed = table.clone();
    std::sync::Arc::make_mut(&mut renamed.columns)[at].name = new_name.to_string();
    let names = column_names(&renamed);
    // `before` written with the new name, if that text binds back (by `bind`, over the
    // renamed table) to the same expression; else 0A000 naming `what` reads the column.
    let rewrite = |before: &Expr, bind: Bind, what: String| -> PgResult<String> {
        let text = deparse_stored_expr(s.text(), before, &names, false);
        let same = bind(&catalog, &renamed, &text, s.info)
            .is_ok_and(|after| deparse_stored_expr(s.text(), &after, &names, false) == text);
        if !same {
            return Err(PgError::unsupported(format!(
                "renaming column \"{}\", which {what} reads",
                table.columns[at].name
            )));
        }
        Ok(text)
    };
    let mut out = Vec::new();
    for c in table.checks.iter().filter(|c| c.columns.contains(&at)) {
        let before = sql::binder::bind_check(&catalog, table, &c.expr, s.info)?;
        let what = format!("check constraint \"{}\"", c.name);
        out.push((c.oid, rewrite(&before, sql::binder::bind_check, what)?));
    }
    let mut exprs = Vec::new();
    for i in &table.indexes {
        if let Some(p) = &i.predicate {
            let before = sql::binder::bind_index_predicate(&catalog, table, p, s.info)?;
            if reads_column(&before, at) {
                let what = format!("the predicate of index \"{}\"", i.name);
                let bind = sql::binder::bind_index_predicate;
                out.push((i.oid, rewrite(&before, bind, what)?));
            }
        }
        for (k, e) in i
            .exprs
            .iter()
            .enumerate()
            .filter(|(_, e)| e.columns.contains(&at))
        {
            let before = sql::binder::bind_index_expr(&catalog, table, &e.text, s.info)?;
            let what = format!("an expression of index \"{}\"", i.name);
            exprs.push((
                i.oid,
                k,
                rewrite(&before, sql::binder::bind_index_expr, what)?,
            ));
        }
    }
    Ok((out, exprs))
}

/// How a stored condition or expression is bound again over a table's row.
type Bind = fn(
    &catalog::CatalogSnapshot,
    &TableDesc,
    &str,
    &common::session::SessionInfo,
) -> PgResult<Expr>;

/// Does `e`, over a table's row, read column `at`?
fn reads_column(e: &Expr, at: usize) -> bool {
    let mut reads = false;
    e.walk(&mut |x| reads |= matches!(x.kind, ExprKind::Column(c) if c == at));
    reads
}

/// DROP COLUMN: the partial indexes of `table` whose predicate reads column `at`, which
/// go with it (as the indexes whose key holds it do, in the catalog's `drop_column`).
pub(crate) fn predicates_reading(
    cx: &ExecContext,
    table: &TableDesc,
    at: usize,
) -> PgResult<Vec<Oid>> {
    let s = cx.session;
    let mut out = Vec::new();
    for i in &table.indexes {
        let Some(p) = &i.predicate else { continue };
        let e = sql::binder::bind_index_predicate(&s.catalog, table, p, s.info)?;
        if reads_column(&e, at) {
            out.push(i.oid);
        }
    }
    Ok(out)
}
