//! Binding indexes: CREATE INDEX (key columns and expressions with their order, INCLUDE
//! columns, a partial index's predicate), and the stored expressions and predicates a
//! write evaluates on each new row. The catalog keeps expressions and predicates as SQL
//! text over the table's row, bound again here as a CHECK's condition is.

use catalog::{IndexExpr, TableDesc};
use common::{DataType, PgError, PgResult, SqlState};
use sqlparser::ast;

use super::coerce::CastContext;
use super::ddl::already_exists_skipping;
use super::expr::{ExprContext, coerce_to_bool};
use super::{Binder, Scope, ident_name};
use crate::bound::{BoundIndexExprs, BoundStatement, Expr, ExprKind};

/// The clause name in errors: `aggregate functions are not allowed in index predicates`.
pub(crate) const INDEX_PREDICATE_CLAUSE: &str = "index predicates";

/// The clause name in errors: `aggregate functions are not allowed in index expressions`.
pub(crate) const INDEX_EXPRESSION_CLAUSE: &str = "index expressions";

impl Binder<'_> {
    /// CREATE [UNIQUE] INDEX [IF NOT EXISTS] [name] ON t [USING btree]
    /// (col | func(...) | (expr) [ASC | DESC] [NULLS FIRST | LAST], ...)
    /// [INCLUDE (col, ...)] [WHERE cond].
    pub(crate) fn bind_create_index(&self, c: &ast::CreateIndex) -> PgResult<BoundStatement> {
        let table = self.table(&c.table_name)?;
        if let Some(u) = &c.using
            && !matches!(u, ast::IndexType::BTree)
        {
            return Err(PgError::unsupported(format!("index access method {u}")));
        }
        if c.concurrently {
            return Err(PgError::unsupported("CREATE INDEX CONCURRENTLY"));
        }
        if !c.with.is_empty() {
            return Err(PgError::unsupported("CREATE INDEX with WITH"));
        }
        if c.nulls_distinct == Some(false) {
            return Err(PgError::unsupported("NULLS NOT DISTINCT"));
        }
        let name = match &c.name {
            Some(n) => Some(self.object_name(n)?.0),
            None => None,
        };
        if c.if_not_exists
            && let Some(n) = &name
            && self.catalog.relation_exists(n)
        {
            return Ok(BoundStatement::Nothing {
                tag: "CREATE INDEX",
                notices: vec![already_exists_skipping(n)],
            });
        }
        let column = |id: &ast::Ident| {
            let col = ident_name(id);
            table.column_index(&col).ok_or_else(|| {
                PgError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{col}\" does not exist"),
                )
            })
        };
        let mut columns = Vec::with_capacity(c.columns.len());
        let mut order = catalog::KeyOrder::default();
        let mut exprs = Vec::new();
        let mut bound_exprs = Vec::new();
        for ic in &c.columns {
            if ic.operator_class.is_some() {
                return Err(PgError::unsupported("index columns with an operator class"));
            }
            let desc = match &ic.column.options.sort {
                None | Some(ast::OrderBySort::Asc) => false,
                Some(ast::OrderBySort::Desc) => true,
                Some(ast::OrderBySort::Using(_)) => {
                    return Err(PgError::unsupported("index columns with USING"));
                }
            };
            // DESC puts NULLs first unless told otherwise, as in ORDER BY.
            let nulls_first = ic.column.options.nulls_first.unwrap_or(desc);
            if columns.len() < common::limits::INDEX_MAX_KEYS {
                order.set(columns.len(), desc, nulls_first);
            }
            // `(a)` is the column itself, as in PostgreSQL.
            let mut e = &ic.column.expr;
            while let ast::Expr::Nested(inner) = e {
                e = inner;
            }
            if let ast::Expr::Identifier(id) = e {
                columns.push(column(id)?);
                continue;
            }
            let bound = self.index_expression(&table, e)?;
            exprs.push(IndexExpr {
                text: e.to_string(),
                columns: columns_read(&bound),
                name: expression_name(e).unwrap_or_else(|| "expr".into()),
            });
            columns.push(catalog::EXPRESSION_KEY + bound_exprs.len());
            bound_exprs.push(bound);
        }
        let include = c.include.iter().map(column).collect::<PgResult<Vec<_>>>()?;
        if columns.len() + include.len() > common::limits::INDEX_MAX_KEYS {
            return Err(PgError::new(
                SqlState::TOO_MANY_COLUMNS,
                format!(
                    "cannot use more than {} columns in an index",
                    common::limits::INDEX_MAX_KEYS
                ),
            ));
        }
        let predicate = match &c.predicate {
            Some(p) => Some((p.to_string(), self.index_predicate(&table, p)?)),
            None => None,
        };
        if c.unique
            && let Some(key) = &table.partition_key
        {
            super::partition::check_unique_holds_partition_key(&table, key, &columns, "UNIQUE")?;
        }
        Ok(BoundStatement::CreateIndex {
            index: catalog::NewIndex {
                check_xmin: 0,
                parent: None,
                name,
                columns,
                unique: c.unique,
                order,
                include,
                predicate: predicate.as_ref().map(|p| p.0.clone()),
                exprs,
            },
            bound: BoundIndexExprs {
                index: 0,
                predicate: predicate.map(|p| p.1),
                keys: bound_exprs,
            },
            table,
        })
    }

    /// A partial index's `WHERE` over `table`'s row (PostgreSQL's `ComputeIndexAttrs`
    /// checks): boolean, no subqueries, aggregates or window functions, and nothing
    /// whose value can change while the row does not (42P17): the index must hold the
    /// rows the condition picks whenever it is read.
    fn index_predicate(&self, table: &TableDesc, e: &ast::Expr) -> PgResult<Expr> {
        let scope = Scope::for_table(table, &table.name);
        let cx = ExprContext {
            scope: &scope,
            aggs_allowed: false,
            clause: INDEX_PREDICATE_CLAUSE,
        };
        let bound = coerce_to_bool(self, self.bind_expr(e, &cx)?, "WHERE")?;
        if !bound.is_immutable() {
            return Err(PgError::new(
                SqlState::INVALID_OBJECT_DEFINITION,
                "functions in index predicate must be marked IMMUTABLE",
            ));
        }
        Ok(bound)
    }

    /// An expression of an index's key over `table`'s row: as a predicate, immutable,
    /// without subqueries or aggregates, and of a type the btree orders (a string
    /// literal is text).
    fn index_expression(&self, table: &TableDesc, e: &ast::Expr) -> PgResult<Expr> {
        let bound = self.key_expression(table, e, INDEX_EXPRESSION_CLAUSE, "index expression")?;
        if matches!(bound.ty, DataType::Array(_)) {
            return Err(PgError::unsupported("an index over an array expression"));
        }
        Ok(bound)
    }

    /// An expression of an index's or a partition key's key over `table`'s row (`what`
    /// names it in the error): no subqueries or aggregates (`clause` names it in theirs),
    /// immutable (42P17: a row's entry or partition must not change while the row does
    /// not), a string literal as text.
    pub(crate) fn key_expression(
        &self,
        table: &TableDesc,
        e: &ast::Expr,
        clause: &'static str,
        what: &str,
    ) -> PgResult<Expr> {
        let scope = Scope::for_table(table, &table.name);
        let cx = ExprContext {
            scope: &scope,
            aggs_allowed: false,
            clause,
        };
        let mut bound = self.bind_expr(e, &cx)?;
        if bound.ty == DataType::Unknown {
            bound = self.coerce(bound, &DataType::Text, CastContext::Implicit)?;
        }
        if !bound.is_immutable() {
            return Err(PgError::new(
                SqlState::INVALID_OBJECT_DEFINITION,
                format!("functions in {what} must be marked IMMUTABLE"),
            ));
        }
        Ok(bound)
    }

    /// The stored predicate and expressions of each of `table`'s partial and expression
    /// indexes, bound over its row, for a write to evaluate on each new row.
    pub(crate) fn index_exprs(&self, table: &TableDesc) -> PgResult<Vec<BoundIndexExprs>> {
        let mut out = Vec::new();
        for i in table.indexes.iter().filter(|i| !i.is_plain()) {
            let predicate = match &i.predicate {
                Some(p) => Some(self.index_predicate(table, &crate::parser::parse_expr(p)?)?),
                None => None,
            };
            let keys = i
                .exprs
                .iter()
                .map(|e| self.index_expression(table, &crate::parser::parse_expr(&e.text)?))
                .collect::<PgResult<Vec<_>>>()?;
            out.push(BoundIndexExprs {
                index: i.oid,
                predicate,
                keys,
            });
        }
        Ok(out)
    }
}

/// The columns `e` reads, in column order.
pub(crate) fn columns_read(e: &Expr) -> Vec<usize> {
    let mut columns = Vec::new();
    e.walk(&mut |x| {
        if let ExprKind::Column(i) = x.kind {
            columns.push(i);
        }
    });
    columns.sort_unstable();
    columns.dedup();
    columns
}

/// The name PostgreSQL gives an index column over `e` (`FigureIndexColname`): a
/// function's name, a column's, through casts; `None` for anything else (`expr`).
fn expression_name(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::Function(f) => f.name.0.last().and_then(|p| p.as_ident()).map(ident_name),
        ast::Expr::Identifier(id) => Some(ident_name(id)),
        ast::Expr::CompoundIdentifier(ids) => ids.last().map(ident_name),
        ast::Expr::Cast { expr, .. } | ast::Expr::Nested(expr) => expression_name(expr),
        ast::Expr::Case { .. } => Some("case".into()),
        _ => None,
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

/// An index expression's stored text bound over `table`'s row (for the planner, which
/// matches it against a query's, and for showing it).
pub fn bind_index_expr(
    catalog: &catalog::CatalogSnapshot,
    table: &TableDesc,
    text: &str,
    session: &common::session::SessionInfo,
) -> PgResult<Expr> {
    Binder::new(catalog, text, session).index_expression(table, &crate::parser::parse_expr(text)?)
}

/// The stored predicates and expressions of `table`'s partial and expression indexes,
/// bound over its row, for a write the executor makes itself (not bound with a
/// statement: ADD COLUMN's fill).
pub fn bind_index_exprs(
    catalog: &catalog::CatalogSnapshot,
    table: &TableDesc,
    session: &common::session::SessionInfo,
) -> PgResult<Vec<BoundIndexExprs>> {
    Binder::new(catalog, "", session).index_exprs(table)
}
