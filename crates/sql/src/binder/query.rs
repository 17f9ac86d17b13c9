//! Binding queries: FROM, WHERE, GROUP BY / HAVING, the select list, DISTINCT, ORDER BY,
//! LIMIT / OFFSET, in PostgreSQL's order of evaluation.

use common::{DataType, PgError, PgResult, SqlState, Value};
use sqlparser::ast::{self, SetExpr};

use super::coerce::{CastContext, can_cast, common_type};
use super::expr::{ExprContext, coerce_to_bool, figure_colname};
use super::{Binder, Scope, ScopeColumn, ident_name};
use crate::bound::{
    AggCall, BoundQuery, Expr, ExprKind, JoinKind, LogicalPlan, OutputColumn, RowWait, ScalarFunc,
    SetOpKind, SortKey,
};

/// An ORDER BY item: a select-list column, or an expression over the input.
enum SortTarget {
    Output(usize),
    Input(Expr),
}

/// Select-list items of no type yet (`SELECT 'a'`, `SELECT NULL`) are text, as in
/// PostgreSQL 10 and later.
pub(crate) fn resolve_unknown_outputs(
    b: &super::Binder<'_>,
    exprs: &mut [Expr],
    columns: &mut [OutputColumn],
) -> PgResult<()> {
    for (e, c) in exprs.iter_mut().zip(columns.iter_mut()) {
        if e.ty == DataType::Unknown {
            let taken = std::mem::replace(e, Expr::constant(Value::Null, DataType::Unknown));
            *e = b.coerce(taken, &DataType::Text, CastContext::Implicit)?;
            c.ty = DataType::Text;
        }
    }
    Ok(())
}

/// `left op right`: PostgreSQL's transformSetOperationTree. The sides must have as many
/// columns (42601); each column takes the two sides' common type (42804 where there is
/// none) and its name from the left side.
fn set_operation(
    b: &super::Binder<'_>,
    kind: SetOpKind,
    all: bool,
    left: BoundQuery,
    right: BoundQuery,
) -> PgResult<BoundQuery> {
    let kw = kind.keyword();
    if left.columns.len() != right.columns.len() {
        return Err(PgError::syntax(format!(
            "each {kw} query must have the same number of columns"
        )));
    }
    let types = left
        .columns
        .iter()
        .zip(&right.columns)
        .map(|(l, r)| common_type(&[l.ty, r.ty], kw))
        .collect::<PgResult<Vec<_>>>()?;
    if !all || kind != SetOpKind::Union {
        for t in &types {
            check_operator(*t, true)?;
        }
    }
    let cast = |mut q: BoundQuery| -> PgResult<LogicalPlan> {
        // A leaf's untyped literals and parameters take the type in place (so that a
        // `$n` there is typed by the set operation, as in PostgreSQL).
        if let LogicalPlan::Project { exprs, .. } = &mut q.plan {
            for ((e, c), t) in exprs.iter_mut().zip(q.columns.iter_mut()).zip(&types) {
                if c.ty == DataType::Unknown && e.ty == DataType::Unknown {
                    let taken =
                        std::mem::replace(e, Expr::constant(Value::Null, DataType::Unknown));
                    *e = b.coerce(taken, t, CastContext::Implicit)?;
                    c.ty = *t;
                }
            }
        }
        if q.columns.iter().zip(&types).all(|(c, t)| c.ty == *t) {
            return Ok(q.plan);
        }
        let exprs = q
            .columns
            .iter()
            .zip(&types)
            .enumerate()
            .map(|(i, (c, t))| b.coerce(Expr::column(i, c.ty), t, CastContext::Implicit))
            .collect::<PgResult<Vec<_>>>()?;
        Ok(LogicalPlan::Project {
            input: Box::new(q.plan),
            exprs,
        })
    };
    let columns = left
        .columns
        .iter()
        .zip(&types)
        .map(|(c, t)| OutputColumn {
            name: c.name.clone(),
            ty: *t,
            table_oid: 0,
            column_number: 0,
        })
        .collect();
    Ok(BoundQuery {
        plan: LogicalPlan::SetOp {
            kind,
            all,
            left: Box::new(cast(left)?),
            right: Box::new(cast(right)?),
        },
        columns,
    })
}

/// The columns whose stored size a SELECT asks for: each `pg_column_size(col)` or
/// `pg_column_size(t.col)` in it, its subqueries' too (a scan asked for a size no
/// expression reads returns it unread).
fn stored_sizes_asked(
    s: &ast::Select,
    order_by: &[ast::OrderByExpr],
) -> Vec<(Option<String>, String)> {
    let mut asked = Vec::new();
    let mut look = |e: &ast::Expr| {
        if let ast::Expr::Function(f) = e
            && let [ast::ObjectNamePart::Identifier(n)] = f.name.0.as_slice()
            && ident_name(n) == "pg_column_size"
            && let ast::FunctionArguments::List(list) = &f.args
            && let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(arg))] =
                list.args.as_slice()
        {
            match arg {
                ast::Expr::Identifier(c) => asked.push((None, ident_name(c))),
                ast::Expr::CompoundIdentifier(p) if p.len() == 2 => {
                    asked.push((Some(ident_name(&p[0])), ident_name(&p[1])))
                }
                _ => {}
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    };
    let _ = ast::visit_expressions(s, &mut look);
    for o in order_by {
        let _ = ast::visit_expressions(o, &mut look);
    }
    asked
}

/// The alias a one-table scope is known by, if it has columns.
fn scope_name_of(scope: &Scope) -> Option<&str> {
    scope.columns.first().and_then(|c| c.table.as_deref())
}

impl Binder<'_> {
    /// `table` as a scan of it for the SELECT being bound returns it: with an int4
    /// column after its own for each of its columns whose stored size the SELECT asks for
    /// (`TableDesc::stored_sizes`, filled by the scan: access rule 12). A partitioned
    /// table's scans are its partitions', and return none.
    fn with_stored_sizes(
        &self,
        table: std::sync::Arc<catalog::TableDesc>,
        scope_name: &str,
    ) -> std::sync::Arc<catalog::TableDesc> {
        let sized = self.sized.borrow();
        if sized.is_empty() || table.partition_key.is_some() {
            return table;
        }
        let mut wanted: Vec<u16> = Vec::new();
        for (qualifier, name) in sized.iter() {
            if qualifier.as_deref().is_some_and(|q| q != scope_name) {
                continue;
            }
            let found = table
                .columns
                .iter()
                .position(|c| !c.dropped && c.name == *name);
            if let Some(i) = found
                && !wanted.contains(&(i as u16))
            {
                wanted.push(i as u16);
            }
        }
        if wanted.is_empty() {
            return table;
        }
        let mut columns = (*table.columns).clone();
        for &i in &wanted {
            let name = format!("pg_column_size({})", table.columns[i as usize].name);
            columns.push(catalog::ColumnDesc::new(name, DataType::Int4));
        }
        let mut sized = catalog::TableDesc {
            columns: std::sync::Arc::new(columns),
            stored_sizes: wanted,
            ..(*table).clone()
        };
        if !sized.index_leads.is_empty() {
            // Its map of the indexes each column leads, for its columns.
            sized.index_leading_columns();
        }
        std::sync::Arc::new(sized)
    }

    pub(crate) fn bind_query(&self, q: &ast::Query) -> PgResult<BoundQuery> {
        if q.with.is_some() {
            return Err(PgError::unsupported("WITH"));
        }
        if q.fetch.is_some() || q.for_clause.is_some() || !q.pipe_operators.is_empty() {
            return Err(PgError::unsupported(format!("query clause in \"{q}\"")));
        }
        let order_by = match &q.order_by {
            None => &[][..],
            Some(ob) => match &ob.kind {
                ast::OrderByKind::Expressions(list) => list.as_slice(),
                ast::OrderByKind::All(_) => return Err(PgError::unsupported("ORDER BY ALL")),
            },
        };
        let (limit, offset) = match &q.limit_clause {
            None => (None, None),
            Some(ast::LimitClause::LimitOffset {
                limit,
                offset,
                limit_by,
            }) => {
                if !limit_by.is_empty() {
                    return Err(PgError::unsupported("LIMIT BY"));
                }
                (limit.as_ref(), offset.as_ref().map(|o| &o.value))
            }
            Some(ast::LimitClause::OffsetCommaLimit { .. }) => {
                return Err(PgError::unsupported("LIMIT #,#"));
            }
        };
        let lock = match q.locks.as_slice() {
            [] => None,
            [l] => Some(crate::parser::lock_clause(l)),
            _ => return Err(PgError::unsupported("more than one locking clause")),
        };
        let mut query = match q.body.as_ref() {
            SetExpr::Select(s) => self.bind_select(s, order_by, lock.as_ref())?,
            _ if lock.is_some() => {
                return Err(PgError::unsupported(
                    "FOR UPDATE/SHARE outside a plain SELECT of one table",
                ));
            }
            other => {
                let inner = self.bind_set_expr(other)?;
                self.order_outputs(inner, order_by)?
            }
        };
        if limit.is_some() || offset.is_some() {
            let bind_count = |e: &ast::Expr, what: &'static str| -> PgResult<Option<Expr>> {
                let scope = Scope::default();
                let cx = ExprContext {
                    scope: &scope,
                    aggs_allowed: false,
                    clause: what,
                };
                let bound = self.bind_expr(e, &cx)?;
                if matches!(bound.kind, ExprKind::Const(Value::Null)) {
                    return Ok(None);
                }
                // By assignment, as PostgreSQL's coerce_to_specific_type: LIMIT 2.5 is
                // LIMIT 3.
                if bound.ty != DataType::Unknown
                    && !can_cast(&bound.ty, &DataType::Int8, CastContext::Assignment)
                {
                    return Err(PgError::new(
                        SqlState::DATATYPE_MISMATCH,
                        format!(
                            "argument of {what} must be type bigint, not type {}",
                            bound.ty.name()
                        ),
                    ));
                }
                self.coerce(bound, &DataType::Int8, CastContext::Assignment)
                    .map(Some)
            };
            let limit = limit.map(|e| bind_count(e, "LIMIT")).transpose()?.flatten();
            let offset = offset
                .map(|e| bind_count(e, "OFFSET"))
                .transpose()?
                .flatten();
            query.plan = LogicalPlan::Limit {
                input: Box::new(query.plan),
                limit,
                offset,
            };
        }
        Ok(query)
    }

    /// A query body without its own ORDER BY or LIMIT: a SELECT, VALUES, a parenthesised
    /// query, or a set operation of those.
    fn bind_set_expr(&self, body: &SetExpr) -> PgResult<BoundQuery> {
        match body {
            SetExpr::Select(s) => self.bind_select(s, &[], None),
            SetExpr::Values(v) => self.bind_values(v),
            SetExpr::Query(q) => self.bind_query(q),
            SetExpr::SetOperation {
                op,
                set_quantifier,
                left,
                right,
            } => {
                let kind = match op {
                    ast::SetOperator::Union => SetOpKind::Union,
                    ast::SetOperator::Intersect => SetOpKind::Intersect,
                    ast::SetOperator::Except => SetOpKind::Except,
                    ast::SetOperator::Minus => return Err(PgError::unsupported("MINUS")),
                };
                let all = match set_quantifier {
                    ast::SetQuantifier::None | ast::SetQuantifier::Distinct => false,
                    ast::SetQuantifier::All => true,
                    other => return Err(PgError::unsupported(format!("{op} {other}"))),
                };
                // A SELECT leaf leaves its bare literals untyped: they take the other
                // side's type, as PostgreSQL's (`SELECT NULL UNION SELECT 1` is int4,
                // `SELECT 'a' UNION SELECT 1` reads 'a' as an integer).
                self.set_op_leaf.set(matches!(**left, SetExpr::Select(_)));
                let left = self.bind_set_expr(left)?;
                self.set_op_leaf.set(matches!(**right, SetExpr::Select(_)));
                let right = self.bind_set_expr(right)?;
                set_operation(self, kind, all, left, right)
            }
            other => Err(PgError::unsupported(format!("query \"{other}\""))),
        }
    }

    /// ORDER BY over a finished query (VALUES, parenthesised queries): only output columns,
    /// by position or name.
    fn order_outputs(&self, q: BoundQuery, order_by: &[ast::OrderByExpr]) -> PgResult<BoundQuery> {
        if order_by.is_empty() {
            return Ok(q);
        }
        let mut keys = Vec::new();
        for o in order_by {
            let idx = match self.output_reference(&o.expr, &q.columns)? {
                Some(i) => i,
                None => {
                    let scope = Scope {
                        columns: q
                            .columns
                            .iter()
                            .map(|c| ScopeColumn {
                                table: None,
                                name: c.name.clone(),
                                ty: c.ty,
                                table_oid: 0,
                                column_number: 0,
                                dropped: false,
                                merged_away: false,
                                stored_size_of: None,
                            })
                            .collect(),
                    };
                    let cx = ExprContext {
                        scope: &scope,
                        aggs_allowed: false,
                        clause: "ORDER BY",
                    };
                    match self.bind_expr(&o.expr, &cx)?.kind {
                        ExprKind::Column(i) => i,
                        _ => {
                            return Err(PgError::unsupported(
                                "ORDER BY expressions over this query",
                            ));
                        }
                    }
                }
            };
            keys.push(sort_key(Expr::column(idx, q.columns[idx].ty), o)?);
        }
        Ok(BoundQuery {
            plan: LogicalPlan::Sort {
                input: Box::new(q.plan),
                keys,
            },
            columns: q.columns,
        })
    }

    /// `ORDER BY 2` or `ORDER BY name` naming an output column.
    fn output_reference(&self, e: &ast::Expr, columns: &[OutputColumn]) -> PgResult<Option<usize>> {
        match e {
            ast::Expr::Value(v) => {
                if let ast::Value::Number(n, _) = &v.value {
                    let k: i64 = n.parse().unwrap_or(0);
                    if k < 1 || k as usize > columns.len() {
                        return Err(PgError::new(
                            SqlState::INVALID_COLUMN_REFERENCE,
                            format!("ORDER BY position {n} is not in select list"),
                        )
                        .with_position(self.position(&v.span)));
                    }
                    return Ok(Some(k as usize - 1));
                }
                Ok(None)
            }
            ast::Expr::Identifier(id) => {
                let name = ident_name(id);
                let matches: Vec<usize> = columns
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| *c.name == *name)
                    .map(|(i, _)| i)
                    .collect();
                match matches.as_slice() {
                    [] => Ok(None),
                    [i] => Ok(Some(*i)),
                    _ => Err(PgError::new(
                        SqlState::AMBIGUOUS_COLUMN,
                        format!("ORDER BY \"{name}\" is ambiguous"),
                    )
                    .with_position(self.position(&id.span))),
                }
            }
            _ => Ok(None),
        }
    }

    pub(crate) fn bind_values(&self, v: &ast::Values) -> PgResult<BoundQuery> {
        let scope = Scope::default();
        let cx = ExprContext {
            scope: &scope,
            aggs_allowed: false,
            clause: "VALUES",
        };
        let mut rows = Vec::with_capacity(v.rows.len());
        for r in &v.rows {
            let row = r
                .content
                .iter()
                .map(|e| self.bind_expr(e, &cx))
                .collect::<PgResult<Vec<_>>>()?;
            if let Some(first) = rows.first() {
                let first: &Vec<Expr> = first;
                if first.len() != row.len() {
                    return Err(PgError::syntax("VALUES lists must all be the same length"));
                }
            }
            rows.push(row);
        }
        let width = rows.first().map_or(0, |r| r.len());
        let mut columns = Vec::with_capacity(width);
        for c in 0..width {
            let types: Vec<DataType> = rows.iter().map(|r| r[c].ty).collect();
            let ty = common_type(&types, "VALUES")?;
            for r in rows.iter_mut() {
                let e = std::mem::replace(&mut r[c], Expr::constant(Value::Null, ty));
                r[c] = self.coerce(e, &ty, CastContext::Implicit)?;
            }
            columns.push(OutputColumn {
                name: format!("column{}", c + 1).into(),
                ty,
                table_oid: 0,
                column_number: 0,
            });
        }
        Ok(BoundQuery {
            plan: LogicalPlan::Values { rows, width },
            columns,
        })
    }

    fn bind_select(
        &self,
        s: &ast::Select,
        order_by: &[ast::OrderByExpr],
        lock: Option<&crate::parser::LockClause<'_>>,
    ) -> PgResult<BoundQuery> {
        if let Some(scan) = srf_select_as_scan(s) {
            return self.bind_select(&scan, order_by, lock);
        }
        let set_op_leaf = self.set_op_leaf.replace(false);
        if s.top.is_some()
            || s.into.is_some()
            || !s.lateral_views.is_empty()
            || s.prewhere.is_some()
            || !s.cluster_by.is_empty()
            || !s.distribute_by.is_empty()
            || !s.sort_by.is_empty()
            || !s.named_window.is_empty()
            || s.qualify.is_some()
            || !s.connect_by.is_empty()
        {
            return Err(PgError::unsupported(format!("SELECT clause in \"{s}\"")));
        }
        // FROM
        let (mut plan, scope) = if s.from.is_empty() {
            (
                LogicalPlan::Values {
                    rows: vec![vec![]],
                    width: 0,
                },
                Scope::default(),
            )
        } else {
            let asked = match self.may_size {
                true => stored_sizes_asked(s, order_by),
                false => Vec::new(),
            };
            let outer = self.sized.replace(asked);
            let from = self.bind_from(&s.from);
            self.sized.replace(outer);
            from?
        };
        // FOR UPDATE / FOR SHARE: rows of one table, each locked as it passes (after
        // sorting, before LIMIT, as PostgreSQL's LockRows). Its scan appends each row's
        // address as a hidden column after the table's own.
        let locked_table = match (lock, &plan) {
            (None, _) => None,
            (Some(l), LogicalPlan::Scan { table }) => {
                if let Some(of) = &l.of {
                    if let [ast::ObjectNamePart::Identifier(first), _, ..] = of.0.as_slice() {
                        return Err(PgError::new(
                            SqlState::SYNTAX_ERROR,
                            format!(
                                "FOR {} must specify unqualified relation names",
                                l.mode.clause()
                            ),
                        )
                        .with_position(self.position(&first.span)));
                    }
                    let (name, pos) = self.object_name(of)?;
                    if name != table.name && scope_name_of(&scope) != Some(name.as_str()) {
                        return Err(PgError::new(
                            SqlState::UNDEFINED_TABLE,
                            format!(
                                "relation \"{name}\" in FOR {} clause not found in FROM clause",
                                l.mode.clause()
                            ),
                        )
                        .with_position(pos));
                    }
                }
                Some(table.clone())
            }
            (Some(_), LogicalPlan::Sequence { seq, .. }) => {
                return Err(PgError::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    format!("cannot lock rows in sequence \"{}\"", seq.name),
                ));
            }
            (Some(l), _) => {
                return Err(PgError::unsupported(format!(
                    "FOR {} on a join, subquery, VALUES or system view",
                    l.mode.clause()
                )));
            }
        };
        let mut where_predicate = None;
        // WHERE
        if let Some(w) = &s.selection {
            let cx = ExprContext {
                scope: &scope,
                aggs_allowed: false,
                clause: "WHERE",
            };
            let pred = coerce_to_bool(self, self.bind_expr(w, &cx)?, "WHERE")?;
            if locked_table.is_some() {
                where_predicate = Some(pred.clone());
            }
            plan = LogicalPlan::Filter {
                input: Box::new(plan),
                predicate: pred,
            };
        }
        // Select list
        let cx = ExprContext {
            scope: &scope,
            aggs_allowed: true,
            clause: "SELECT",
        };
        let mut exprs: Vec<Expr> = Vec::new();
        let mut columns: Vec<OutputColumn> = Vec::new();
        for item in &s.projection {
            self.bind_select_item(item, &cx, &mut exprs, &mut columns)?;
        }
        if !set_op_leaf {
            resolve_unknown_outputs(self, &mut exprs, &mut columns)?;
        }

        // GROUP BY
        let group_exprs = match &s.group_by {
            ast::GroupByExpr::Expressions(list, modifiers) => {
                if !modifiers.is_empty() {
                    return Err(PgError::unsupported("GROUP BY modifiers"));
                }
                list.as_slice()
            }
            ast::GroupByExpr::All(_) => return Err(PgError::unsupported("GROUP BY ALL")),
        };
        let mut group_by = Vec::with_capacity(group_exprs.len());
        for g in group_exprs {
            let by_output = match g {
                ast::Expr::Value(v) if matches!(v.value, ast::Value::Number(..)) => {
                    let ast::Value::Number(n, _) = &v.value else {
                        unreachable!("matched above")
                    };
                    let k: i64 = n.parse().unwrap_or(0);
                    if k < 1 || k as usize > exprs.len() {
                        return Err(PgError::new(
                            SqlState::INVALID_COLUMN_REFERENCE,
                            format!("GROUP BY position {n} is not in select list"),
                        )
                        .with_position(self.position(&v.span)));
                    }
                    Some(exprs[k as usize - 1].clone())
                }
                ast::Expr::Identifier(id) => {
                    let name = ident_name(id);
                    if scope.resolve(None, &name).is_err() {
                        columns
                            .iter()
                            .position(|c| *c.name == *name)
                            .map(|i| exprs[i].clone())
                    } else {
                        None
                    }
                }
                _ => None,
            };
            let e = match by_output {
                Some(e) => e,
                None => self.bind_expr(
                    g,
                    &ExprContext {
                        scope: &scope,
                        aggs_allowed: false,
                        clause: "GROUP BY",
                    },
                )?,
            };
            if e.contains_agg() {
                return Err(PgError::new(
                    SqlState::GROUPING_ERROR,
                    "aggregate functions are not allowed in GROUP BY",
                ));
            }
            check_operator(e.ty, true)?;
            group_by.push(e);
        }
        // HAVING
        let having = match &s.having {
            Some(h) => Some(coerce_to_bool(self, self.bind_expr(h, &cx)?, "HAVING")?),
            None => None,
        };
        // ORDER BY targets
        let mut sort_targets = Vec::with_capacity(order_by.len());
        for o in order_by {
            let target = match self.output_reference(&o.expr, &columns)? {
                Some(i) => SortTarget::Output(i),
                None => SortTarget::Input(self.bind_expr(&o.expr, &cx)?),
            };
            sort_targets.push(target);
        }
        // Aggregation
        let has_aggs = exprs.iter().any(Expr::contains_agg)
            || having.is_some()
            || sort_targets
                .iter()
                .any(|t| matches!(t, SortTarget::Input(e) if e.contains_agg()));
        let mut having = having;
        if let Some(l) = lock {
            let what = if !group_by.is_empty() {
                Some("GROUP BY clause")
            } else if has_aggs {
                Some("aggregate functions")
            } else if matches!(s.distinct, Some(ast::Distinct::Distinct)) {
                Some("DISTINCT clause")
            } else {
                None
            };
            if let Some(what) = what {
                return Err(PgError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    format!("FOR {} is not allowed with {what}", l.mode.clause()),
                ));
            }
        }
        if has_aggs || !group_by.is_empty() {
            let mut aggs: Vec<AggCall> = Vec::new();
            let mut rw = |e: Expr| self.rewrite_for_agg(e, &group_by, &mut aggs, &scope);
            exprs = exprs.into_iter().map(&mut rw).collect::<PgResult<_>>()?;
            having = having.map(&mut rw).transpose()?;
            for t in sort_targets.iter_mut() {
                if let SortTarget::Input(e) = t {
                    *e = rw(std::mem::replace(
                        e,
                        Expr::constant(Value::Null, DataType::Unknown),
                    ))?;
                }
            }
            plan = LogicalPlan::Aggregate {
                input: Box::new(plan),
                group_by: group_by.clone(),
                aggs,
            };
            if let Some(h) = having {
                plan = LogicalPlan::Filter {
                    input: Box::new(plan),
                    predicate: h,
                };
            }
        }
        // Projection, with hidden columns for ORDER BY expressions not in the select list.
        let distinct = match &s.distinct {
            None | Some(ast::Distinct::All) => false,
            Some(ast::Distinct::Distinct) => true,
            Some(ast::Distinct::On(_)) => return Err(PgError::unsupported("SELECT DISTINCT ON")),
        };
        let visible = exprs.len();
        let mut keys = Vec::with_capacity(order_by.len());
        for (t, o) in sort_targets.into_iter().zip(order_by) {
            let idx = match t {
                SortTarget::Output(i) => i,
                SortTarget::Input(e) => match exprs.iter().position(|x| *x == e) {
                    Some(i) => i,
                    None if distinct => {
                        return Err(PgError::new(
                            SqlState::INVALID_COLUMN_REFERENCE,
                            "for SELECT DISTINCT, ORDER BY expressions must appear in select list",
                        ));
                    }
                    None => {
                        exprs.push(e);
                        exprs.len() - 1
                    }
                },
            };
            keys.push(sort_key(Expr::column(idx, exprs[idx].ty), o)?);
        }
        let mut lock_rows = None;
        if let (Some(table), Some(l)) = (&locked_table, lock) {
            // The row's address and its table's oid (a partition's), as the scan appends
            // them (`exec::lock_rows::push_address`).
            let tid_column = exprs.len();
            exprs.push(Expr::column(table.columns.len(), DataType::Int8));
            exprs.push(Expr::column(table.columns.len() + 1, DataType::Oid));
            lock_rows = Some((table.clone(), tid_column, l, exprs.clone()));
        }
        let types: Vec<DataType> = exprs.iter().map(|e| e.ty).collect();
        plan = LogicalPlan::Project {
            input: Box::new(plan),
            exprs,
        };
        if distinct {
            for t in &types {
                check_operator(*t, true)?;
            }
            plan = LogicalPlan::Distinct {
                input: Box::new(plan),
            };
        }
        if !keys.is_empty() {
            plan = LogicalPlan::Sort {
                input: Box::new(plan),
                keys,
            };
        }
        if let Some((table, tid_column, l, exprs)) = lock_rows {
            plan = LogicalPlan::LockRows {
                input: Box::new(plan),
                table,
                tid_column,
                mode: l.mode,
                wait: match l.nonblock {
                    None => RowWait::Block,
                    Some(ast::NonBlock::Nowait) => RowWait::Nowait,
                    Some(ast::NonBlock::SkipLocked) => RowWait::SkipLocked,
                },
                recheck: where_predicate,
                exprs,
            };
        }
        if types.len() > visible {
            let exprs = (0..visible).map(|i| Expr::column(i, types[i])).collect();
            plan = LogicalPlan::Project {
                input: Box::new(plan),
                exprs,
            };
        }
        Ok(BoundQuery { plan, columns })
    }

    /// Bind one select-list (or RETURNING) item, expanding `*` and `t.*`, appending its
    /// expressions and output columns.
    pub(crate) fn bind_select_item(
        &self,
        item: &ast::SelectItem,
        cx: &ExprContext,
        exprs: &mut Vec<Expr>,
        columns: &mut Vec<OutputColumn>,
    ) -> PgResult<()> {
        match item {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                let bound = self.bind_expr(e, cx)?;
                let name = match item {
                    ast::SelectItem::ExprWithAlias { alias, .. } => ident_name(alias),
                    _ => figure_colname(e).unwrap_or_else(|| "?column?".into()),
                };
                let ty = bound.ty;
                let col = match bound.kind {
                    ExprKind::Column(i) => cx.scope.output_column(i, name.into(), ty),
                    _ => OutputColumn {
                        name: name.into(),
                        ty,
                        table_oid: 0,
                        column_number: 0,
                    },
                };
                exprs.push(bound);
                columns.push(col);
            }
            ast::SelectItem::Wildcard(opts) | ast::SelectItem::QualifiedWildcard(_, opts) => {
                if opts.opt_exclude.is_some()
                    || opts.opt_except.is_some()
                    || opts.opt_replace.is_some()
                    || opts.opt_rename.is_some()
                    || opts.opt_ilike.is_some()
                {
                    return Err(PgError::unsupported("wildcard options"));
                }
                let qualifier = match item {
                    ast::SelectItem::QualifiedWildcard(
                        ast::SelectItemQualifiedWildcardKind::ObjectName(n),
                        _,
                    ) => Some(self.object_name(n)?.0),
                    ast::SelectItem::QualifiedWildcard(..) => {
                        return Err(PgError::unsupported("expression.*"));
                    }
                    _ => None,
                };
                if cx.scope.columns.is_empty() && qualifier.is_none() {
                    return Err(PgError::syntax(
                        "SELECT * with no tables specified is not valid",
                    ));
                }
                let mut any = false;
                for (i, c) in cx.scope.columns.iter().enumerate() {
                    if qualifier.is_none() || c.table.as_deref() == qualifier.as_deref() {
                        any = true;
                        if c.dropped || (qualifier.is_none() && c.merged_away) {
                            continue;
                        }
                        exprs.push(Expr::column(i, c.ty));
                        columns.push(cx.scope.output_column(i, c.name.clone(), c.ty));
                    }
                }
                if !any {
                    return Err(PgError::new(
                        SqlState::UNDEFINED_TABLE,
                        format!(
                            "missing FROM-clause entry for table \"{}\"",
                            qualifier.unwrap_or_default()
                        ),
                    ));
                }
            }
            ast::SelectItem::ExprWithAliases { .. } => {
                return Err(PgError::unsupported("multiple aliases"));
            }
        }
        Ok(())
    }

    /// Replace group keys and aggregate calls by columns of the Aggregate node's output;
    /// any other column reference is a grouping error.
    fn rewrite_for_agg(
        &self,
        e: Expr,
        groups: &[Expr],
        aggs: &mut Vec<AggCall>,
        scope: &Scope,
    ) -> PgResult<Expr> {
        self.rewrite_over_groups(e, groups, aggs, scope, false)
    }

    /// [`Self::rewrite_for_agg`]; `outer` inside a subquery's outer values, which must be
    /// grouped too (PostgreSQL words that error apart).
    fn rewrite_over_groups(
        &self,
        e: Expr,
        groups: &[Expr],
        aggs: &mut Vec<AggCall>,
        scope: &Scope,
        outer: bool,
    ) -> PgResult<Expr> {
        if let Some(i) = groups.iter().position(|g| *g == e) {
            return Ok(Expr::column(i, e.ty));
        }
        match e.kind {
            ExprKind::Agg(call) => {
                let j = match aggs.iter().position(|a| *a == *call) {
                    Some(j) => j,
                    None => {
                        aggs.push(*call);
                        aggs.len() - 1
                    }
                };
                Ok(Expr::column(groups.len() + j, e.ty))
            }
            // pg_column_size of a column outside an aggregate: its scan's size is a row's,
            // not the group's; the grouped value's is its size stored inline.
            ExprKind::Column(i)
                if let Some(n) = scope.columns[i].stored_size_of
                    && let Some(m) = scope.columns.iter().position(|c| {
                        c.stored_size_of.is_none()
                            && c.table == scope.columns[i].table
                            && c.column_number == n
                    }) =>
            {
                let arg = Expr::column(m, scope.columns[m].ty);
                let size = Expr::new(ExprKind::Func(ScalarFunc::PgColumnSize, vec![arg]), e.ty);
                self.rewrite_over_groups(size, groups, aggs, scope, outer)
            }
            ExprKind::Column(i) => {
                let c = &scope.columns[i];
                let name = match &c.table {
                    Some(t) => format!("{t}.{}", c.name),
                    None => c.name.to_string(),
                };
                let message = if outer {
                    format!("subquery uses ungrouped column \"{name}\" from outer query")
                } else {
                    format!(
                        "column \"{name}\" must appear in the GROUP BY clause or be used in an aggregate function"
                    )
                };
                Err(PgError::new(SqlState::GROUPING_ERROR, message))
            }
            ExprKind::SubLink(mut link) => {
                link.try_map_outer(&mut |x, is_arg| {
                    self.rewrite_over_groups(x, groups, aggs, scope, outer || is_arg)
                })?;
                Ok(Expr::new(ExprKind::SubLink(link), e.ty))
            }
            _ => {
                e.try_map_children(&mut |c| self.rewrite_over_groups(c, groups, aggs, scope, outer))
            }
        }
    }

    fn bind_from(&self, from: &[ast::TableWithJoins]) -> PgResult<(LogicalPlan, Scope)> {
        let mut acc: Option<(LogicalPlan, Scope)> = None;
        let mut names: Vec<String> = Vec::new();
        for twj in from {
            // A LATERAL item at the top level reads the FROM items before it: it joins
            // them at once.
            let left = acc.as_ref().map(|(_, s)| s);
            let (plan, scope, lateral) = self.bind_table_factor(&twj.relation, &mut names, left)?;
            let mut cur = match acc.take() {
                Some(left) if !lateral.is_empty() => {
                    self.join(left, (plan, scope), JoinKind::Inner, None, lateral, false)?
                }
                prior => {
                    acc = prior;
                    (plan, scope)
                }
            };
            for j in &twj.joins {
                // A LATERAL item in a JOIN reads the JOIN's left side and the FROM items
                // before it: those join the left side first when it does.
                let left = match &acc {
                    _ if !may_be_lateral(&j.relation) => None,
                    Some((_, before)) => {
                        let mut s = before.clone();
                        s.columns.extend(cur.1.columns.iter().cloned());
                        Some(s)
                    }
                    None => Some(cur.1.clone()),
                };
                let (plan, scope, lateral) =
                    self.bind_table_factor(&j.relation, &mut names, left.as_ref())?;
                if !lateral.is_empty()
                    && let Some(before) = acc.take()
                {
                    cur = self.join(before, cur, JoinKind::Inner, None, Vec::new(), false)?;
                }
                let right = (plan, scope);
                let swapped = matches!(
                    j.join_operator,
                    ast::JoinOperator::Right(_) | ast::JoinOperator::RightOuter(_)
                );
                let (kind, constraint) = match &j.join_operator {
                    ast::JoinOperator::Join(c) | ast::JoinOperator::Inner(c) => {
                        (JoinKind::Inner, Some(c))
                    }
                    ast::JoinOperator::Left(c) | ast::JoinOperator::LeftOuter(c) => {
                        (JoinKind::Left, Some(c))
                    }
                    ast::JoinOperator::CrossJoin(c) => (JoinKind::Inner, Some(c)),
                    ast::JoinOperator::Right(c) | ast::JoinOperator::RightOuter(c) => {
                        (JoinKind::Left, Some(c))
                    }
                    ast::JoinOperator::FullOuter(c) => (JoinKind::Full, Some(c)),
                    other => {
                        return Err(PgError::unsupported(join_name(other)));
                    }
                };
                cur = if swapped {
                    if !lateral.is_empty() {
                        return Err(lateral_outer_error(&cur.1, &lateral));
                    }
                    self.right_join(cur, right, constraint)?
                } else {
                    self.join(cur, right, kind, constraint, lateral, true)?
                };
            }
            acc = Some(match acc {
                None => cur,
                Some(left) => self.join(left, cur, JoinKind::Inner, None, Vec::new(), false)?,
            });
        }
        Ok(acc.expect("FROM has at least one item"))
    }

    fn join(
        &self,
        left: (LogicalPlan, Scope),
        right: (LogicalPlan, Scope),
        kind: JoinKind,
        constraint: Option<&ast::JoinConstraint>,
        lateral: Vec<Expr>,
        explicit: bool,
    ) -> PgResult<(LogicalPlan, Scope)> {
        let how = JoinHow {
            kind,
            swapped: false,
            explicit,
        };
        self.join_sides(left, right, how, constraint, lateral)
    }

    /// `left RIGHT JOIN right ON c`: `right LEFT JOIN left ON c` (PostgreSQL's planner
    /// runs it as either), under a projection that puts the columns back in the order
    /// written, which the scope keeps.
    fn right_join(
        &self,
        left: (LogicalPlan, Scope),
        right: (LogicalPlan, Scope),
        constraint: Option<&ast::JoinConstraint>,
    ) -> PgResult<(LogicalPlan, Scope)> {
        let how = JoinHow {
            kind: JoinKind::Left,
            swapped: true,
            explicit: true,
        };
        self.join_sides(left, right, how, constraint, vec![])
    }

    /// A join of `left` and `right` (as `how` says) on an ON condition, or on the columns JOIN ... USING or NATURAL
    /// names: each pair equal, and the pair merged into one column that comes first
    /// (the left one, the right one for a RIGHT join, COALESCE of both for a FULL one).
    fn join_sides(
        &self,
        (lp, ls): (LogicalPlan, Scope),
        (rp, rs): (LogicalPlan, Scope),
        JoinHow {
            kind,
            swapped,
            explicit,
        }: JoinHow,
        constraint: Option<&ast::JoinConstraint>,
        lateral: Vec<Expr>,
    ) -> PgResult<(LogicalPlan, Scope)> {
        let (lw, rw) = (ls.columns.len(), rs.columns.len());
        if !lateral.is_empty() && kind == JoinKind::Full {
            return Err(lateral_outer_error(&ls, &lateral));
        }
        let using = match constraint {
            Some(ast::JoinConstraint::Using(names)) => {
                let names = names
                    .iter()
                    .map(|n| Ok(self.object_name(n)?.0))
                    .collect::<PgResult<Vec<_>>>()?;
                Some(using_pairs(&ls, &rs, names)?)
            }
            Some(ast::JoinConstraint::Natural) => {
                let names = ls
                    .columns
                    .iter()
                    .filter(|c| !c.dropped && !c.merged_away)
                    .map(|c| c.name.to_string())
                    .filter(|n| {
                        rs.columns
                            .iter()
                            .any(|c| !c.dropped && !c.merged_away && *c.name == **n)
                    })
                    .fold(Vec::<String>::new(), |mut v, n| {
                        if !v.contains(&n) {
                            v.push(n);
                        }
                        v
                    });
                Some(using_pairs(&ls, &rs, names)?)
            }
            _ => None,
        };
        let mut scope = ls;
        scope.columns.extend(rs.columns);
        let mut merged = Vec::new();
        let on = match (constraint, &using) {
            (_, Some(pairs)) => {
                let mut conds = Vec::new();
                for &(li, ri) in pairs {
                    let (l, r) = (&scope.columns[li], &scope.columns[lw + ri]);
                    let (l, r) = self.unify_for_comparison(
                        Expr::column(li, l.ty),
                        Expr::column(lw + ri, r.ty),
                        "=",
                    )?;
                    merged.push(match (kind, swapped) {
                        (JoinKind::Full, _) => {
                            let ty = l.ty;
                            Expr::new(ExprKind::Coalesce(vec![l.clone(), r.clone()]), ty)
                        }
                        (_, true) => r.clone(),
                        _ => l.clone(),
                    });
                    conds.push(self.bind_binary(&ast::BinaryOperator::Eq, l, r)?);
                }
                conds.into_iter().reduce(|a, b| {
                    Expr::new(
                        ExprKind::Binary(crate::bound::BinaryOp::And, Box::new(a), Box::new(b)),
                        DataType::Bool,
                    )
                })
            }
            (None | Some(ast::JoinConstraint::None), None) => None,
            (Some(ast::JoinConstraint::On(e)), None) => {
                let cx = ExprContext {
                    scope: &scope,
                    aggs_allowed: false,
                    clause: "JOIN conditions",
                };
                let on = coerce_to_bool(self, self.bind_expr(e, &cx)?, "JOIN/ON")?;
                // `ON true` is no condition (PostgreSQL's planner drops it too).
                (on.kind != ExprKind::Const(Value::Bool(true))).then_some(on)
            }
            (Some(_), None) => return Err(PgError::unsupported("this join condition")),
        };
        if kind == JoinKind::Full && !has_hash_clause(on.as_ref(), lw) {
            return Err(PgError::unsupported(
                "FULL JOIN is only supported with merge-joinable or hash-joinable join conditions",
            ));
        }
        let mut plan = if swapped {
            // Columns over `left ++ right` renumbered over `right ++ left`.
            fn swap(e: Expr, lw: usize, rw: usize) -> PgResult<Expr> {
                match e.kind {
                    ExprKind::Column(i) if i < lw => Ok(Expr::column(i + rw, e.ty)),
                    ExprKind::Column(i) => Ok(Expr::column(i - lw, e.ty)),
                    _ => e.try_map_children(&mut |c| swap(c, lw, rw)),
                }
            }
            let on = on.map(|e| swap(e, lw, rw)).transpose()?;
            let exprs = scope
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| Expr::column(if i < lw { i + rw } else { i - lw }, c.ty))
                .collect();
            LogicalPlan::Project {
                input: Box::new(LogicalPlan::Join {
                    left: Box::new(rp),
                    right: Box::new(lp),
                    kind,
                    on,
                    lateral,
                    explicit,
                }),
                exprs,
            }
        } else {
            LogicalPlan::Join {
                left: Box::new(lp),
                right: Box::new(rp),
                kind,
                on,
                lateral,
                explicit,
            }
        };
        if let Some(pairs) = using {
            // The merged columns first, then every column of both sides, those merged
            // found only by their qualified names.
            let mut columns = Vec::with_capacity(pairs.len() + scope.columns.len());
            let mut exprs = Vec::with_capacity(pairs.len() + scope.columns.len());
            for (&(li, ri), e) in pairs.iter().zip(merged) {
                let from = &scope.columns[if swapped { lw + ri } else { li }];
                columns.push(ScopeColumn {
                    table: None,
                    name: from.name.clone(),
                    ty: e.ty,
                    table_oid: from.table_oid,
                    column_number: from.column_number,
                    dropped: false,
                    merged_away: false,
                    stored_size_of: None,
                });
                exprs.push(e);
            }
            for (i, c) in scope.columns.iter().enumerate() {
                let mut c = c.clone();
                c.merged_away |= pairs.iter().any(|&(li, ri)| i == li || i == lw + ri);
                exprs.push(Expr::column(i, c.ty));
                columns.push(c);
            }
            plan = LogicalPlan::Project {
                input: Box::new(plan),
                exprs,
            };
            scope = Scope { columns };
        }
        Ok((plan, scope))
    }

    /// A function in FROM: `generate_series(start, stop [, step])` over integers,
    /// `unnest(array)`, `pg_partition_ancestors(regclass)`. Its one column takes the
    /// alias's column name, else the alias (as PostgreSQL names a scalar function's
    /// column), else the function's name. WITH ORDINALITY adds a bigint column
    /// `ordinality` numbering the rows (not for generate_series yet).
    fn bind_table_function(
        &self,
        name: &ast::ObjectName,
        args: &ast::TableFunctionArgs,
        alias: Option<&ast::TableAlias>,
        ordinality: bool,
    ) -> PgResult<(LogicalPlan, Scope, String)> {
        let (fname, pos) = self.object_name(name)?;
        let scope = Scope::default();
        let cx = ExprContext {
            scope: &scope,
            aggs_allowed: false,
            clause: "functions in FROM",
        };
        let mut bound = Vec::with_capacity(args.args.len());
        for a in &args.args {
            let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) = a else {
                return Err(PgError::unsupported(format!("argument {a} of {fname}")));
            };
            bound.push(self.bind_expr(e, &cx)?);
        }
        let types: Vec<DataType> = bound.iter().map(|e| e.ty).collect();
        let no_such = || super::expr::undefined_function(&fname, &bound).with_position(pos);
        match (fname.as_str(), bound.len()) {
            ("unnest", 1) => {
                let array = bound.into_iter().next().expect("one argument");
                return self.unnest_scan(array, "unnest", alias, ordinality);
            }
            // Only partitions and partitioned tables have ancestors (itself included);
            // `ScalarFunc::PgPartitionAncestors` makes the array, unnested here.
            ("pg_partition_ancestors", 1) => {
                let t = types[0];
                if !(t.is_integer() || super::expr::is_oid_like(&t) || t == DataType::Unknown) {
                    return Err(no_such());
                }
                let a = bound.pop().expect("one argument");
                let class = DataType::Reg(common::value::RegKind::Class);
                let a = self.coerce(a, &class, CastContext::Implicit)?;
                let array = Expr::new(
                    ExprKind::Func(crate::bound::ScalarFunc::PgPartitionAncestors, vec![a]),
                    class.array().expect("regclass has an array type"),
                );
                return self.unnest_scan(array, "pg_partition_ancestors", alias, ordinality);
            }
            // `ScalarFunc::PgPartitionTree` makes the relations, unnested here; the
            // other columns are functions of each.
            ("pg_partition_tree", 1) => {
                let t = types[0];
                if !(t.is_integer() || super::expr::is_oid_like(&t) || t == DataType::Unknown) {
                    return Err(no_such());
                }
                return self.partition_tree_scan(bound.pop().expect("one argument"), alias);
            }
            ("generate_series", 2 | 3) if ordinality => {
                return Err(PgError::unsupported("generate_series WITH ORDINALITY"));
            }
            ("generate_series", 2 | 3) => {}
            _ => return Err(no_such()),
        }
        if !(2..=3).contains(&bound.len()) {
            return Err(no_such());
        }
        // The variants PostgreSQL has: (int4, int4 [, int4]), the same over int8 and
        // numeric, and (timestamp, timestamp, interval) and the same over timestamptz,
        // chosen as its resolution would: numeric if an argument is, int8 if one is,
        // else int4; timestamp if the bounds are that, else timestamptz (a date's
        // preferred cast).
        let integral = |t: &DataType| matches!(t, DataType::Int2 | DataType::Int4 | DataType::Int8);
        let numeric = DataType::Numeric(None);
        let datetime = |t: &DataType| {
            matches!(
                t,
                DataType::Timestamp(_)
                    | DataType::TimestampTz(_)
                    | DataType::Date
                    | DataType::Unknown
            )
        };
        let ty = if types
            .iter()
            .all(|t| integral(t) || matches!(t, DataType::Numeric(_) | DataType::Unknown))
        {
            if types.iter().any(|t| matches!(t, DataType::Numeric(_))) {
                numeric
            } else if types.contains(&DataType::Int8) {
                DataType::Int8
            } else {
                DataType::Int4
            }
        } else if types.len() == 3
            && types[..2].iter().all(datetime)
            && matches!(types[2], DataType::Interval | DataType::Unknown)
        {
            if types[..2]
                .iter()
                .all(|t| matches!(t, DataType::Timestamp(_) | DataType::Unknown))
            {
                DataType::Timestamp(None)
            } else {
                DataType::TimestampTz(None)
            }
        } else {
            return Err(no_such());
        };
        // Coercion can fail only on a bad literal, with its own error (22P02), as in
        // PostgreSQL.
        let step = if matches!(ty, DataType::Timestamp(_) | DataType::TimestampTz(_)) {
            DataType::Interval
        } else {
            ty
        };
        let arg_types = [ty, ty, step];
        let mut args = bound
            .into_iter()
            .zip(arg_types)
            .map(|(e, t)| self.coerce(e, &t, CastContext::Implicit))
            .collect::<PgResult<Vec<_>>>()?
            .into_iter();
        let (start, stop, step) = (
            args.next().expect("two or three"),
            args.next().expect("two or three"),
            args.next(),
        );
        let table_name = alias
            .map(|a| ident_name(&a.name))
            .unwrap_or_else(|| fname.clone());
        let column = alias
            .and_then(|a| a.columns.first())
            .map(|c| ident_name(&c.name))
            .unwrap_or_else(|| table_name.clone());
        if alias.is_some_and(|a| a.columns.len() > 1) {
            return Err(PgError::new(
                SqlState::SYNTAX_ERROR,
                "too many column aliases specified for function generate_series",
            ));
        }
        let scope = Scope {
            columns: vec![ScopeColumn {
                table: Some(table_name.as_str().into()),
                name: column.into(),
                ty,
                table_oid: 0,
                column_number: 0,
                dropped: false,
                merged_away: false,
                stored_size_of: None,
            }],
        };
        Ok((
            LogicalPlan::GenerateSeries { start, stop, step },
            scope,
            table_name,
        ))
    }

    /// `unnest(array)` in FROM: one column named as a function's is (the column alias,
    /// else the table alias, else `unnest`).
    fn bind_unnest(
        &self,
        exprs: &[ast::Expr],
        alias: Option<&ast::TableAlias>,
        ordinality: bool,
    ) -> PgResult<(LogicalPlan, Scope, String)> {
        let scope = Scope::default();
        let cx = ExprContext {
            scope: &scope,
            aggs_allowed: false,
            clause: "functions in FROM",
        };
        let [e] = exprs else {
            return Err(PgError::unsupported("unnest of more than one array"));
        };
        let array = self.bind_expr(e, &cx)?;
        self.unnest_scan(array, "unnest", alias, ordinality)
    }

    /// A function scan over the elements of `array`, for the set-returning function
    /// `func`: its column is named by the alias's first column, else by the function's
    /// OUT parameter (pg_partition_ancestors' `relid`), else by the table alias, else
    /// by the function; WITH ORDINALITY adds `ordinality`.
    /// `pg_partition_tree(rel)`: relid, parentrelid, isleaf and level of `rel` and each
    /// partition below it (PostgreSQL's columns; the alias may rename them).
    fn partition_tree_scan(
        &self,
        rel: Expr,
        alias: Option<&ast::TableAlias>,
    ) -> PgResult<(LogicalPlan, Scope, String)> {
        use crate::bound::ScalarFunc as F;
        let class = DataType::Reg(common::value::RegKind::Class);
        let rel = self.coerce(rel, &class, CastContext::Implicit)?;
        let array = Expr::new(
            ExprKind::Func(F::PgPartitionTree, vec![rel.clone()]),
            class.array().expect("regclass has an array type"),
        );
        let (unnest, _, table_name) = self.unnest_scan(array, "pg_partition_tree", None, false)?;
        if alias.is_some_and(|a| a.columns.len() > 4) {
            return Err(PgError::new(
                SqlState::SYNTAX_ERROR,
                "too many column aliases specified for function pg_partition_tree",
            ));
        }
        let relid = Expr::column(0, class);
        let call = |f: F, args: Vec<Expr>, ty: DataType| Expr::new(ExprKind::Func(f, args), ty);
        let exprs = vec![
            relid.clone(),
            call(F::PartitionParent, vec![relid.clone()], class),
            call(F::PartitionIsLeaf, vec![relid.clone()], DataType::Bool),
            call(F::PartitionLevel, vec![relid, rel], DataType::Int4),
        ];
        let table_name = alias.map(|a| ident_name(&a.name)).unwrap_or(table_name);
        let names = ["relid", "parentrelid", "isleaf", "level"];
        let columns = exprs
            .iter()
            .zip(names)
            .enumerate()
            .map(|(i, (e, n))| ScopeColumn {
                table: Some(table_name.as_str().into()),
                name: alias
                    .and_then(|a| a.columns.get(i))
                    .map(|c| ident_name(&c.name))
                    .unwrap_or_else(|| n.to_string())
                    .into(),
                ty: e.ty,
                table_oid: 0,
                column_number: 0,
                dropped: false,
                merged_away: false,
                stored_size_of: None,
            })
            .collect();
        Ok((
            LogicalPlan::Project {
                input: Box::new(unnest),
                exprs,
            },
            Scope { columns },
            table_name,
        ))
    }

    fn unnest_scan(
        &self,
        array: Expr,
        func: &'static str,
        alias: Option<&ast::TableAlias>,
        ordinality: bool,
    ) -> PgResult<(LogicalPlan, Scope, String)> {
        let Some(elem) = array.ty.elem() else {
            return Err(super::expr::undefined_function(func, &[array]));
        };
        let table_name = alias
            .map(|a| ident_name(&a.name))
            .unwrap_or_else(|| func.into());
        let width = 1 + usize::from(ordinality);
        if let Some(a) = alias.filter(|a| a.columns.len() > width) {
            return Err(if ordinality {
                PgError::new(
                    SqlState::INVALID_COLUMN_REFERENCE,
                    format!(
                        "table \"{table_name}\" has {width} columns available but {} columns specified",
                        a.columns.len()
                    ),
                )
            } else {
                PgError::new(
                    SqlState::SYNTAX_ERROR,
                    format!("too many column aliases specified for function {func}"),
                )
            });
        }
        let first = match alias.and_then(|a| a.columns.first()) {
            Some(c) => ident_name(&c.name),
            None if func == "pg_partition_ancestors" => "relid".into(),
            None => table_name.clone(),
        };
        let column = |name: String, ty: DataType| ScopeColumn {
            table: Some(table_name.as_str().into()),
            name: name.into(),
            ty,
            table_oid: 0,
            column_number: 0,
            dropped: false,
            merged_away: false,
            stored_size_of: None,
        };
        let mut columns = vec![column(first, elem.without_typmod())];
        if ordinality {
            let name = alias
                .and_then(|a| a.columns.get(1))
                .map(|c| ident_name(&c.name))
                .unwrap_or_else(|| "ordinality".into());
            columns.push(column(name, DataType::Int8));
        }
        Ok((
            LogicalPlan::Unnest {
                array,
                func,
                ordinality,
            },
            Scope { columns },
            table_name,
        ))
    }

    /// `bind` a LATERAL FROM item with the columns to its left (`left`) offered as a
    /// query around it would offer them: what it binds, and what it reads of them.
    fn lateral<T>(
        &self,
        left: Option<&Scope>,
        bind: impl FnOnce() -> PgResult<T>,
    ) -> PgResult<(T, Vec<Expr>)> {
        let Some(left) = left else {
            return bind().map(|b| (b, Vec::new()));
        };
        self.outer.borrow_mut().push(super::OuterFrame {
            scope: left.clone(),
            args: Vec::new(),
        });
        let bound = bind();
        let frame = self.outer.borrow_mut().pop().expect("pushed above");
        bound.map(|b| (b, frame.args))
    }

    /// A FROM item: its plan and columns, and when it is LATERAL (a subquery so marked,
    /// or a function, which PostgreSQL makes LATERAL by itself) and reads columns of
    /// `left` (the FROM items it may see), what it reads over `left`'s row (see
    /// `LogicalPlan::Join::lateral`).
    fn bind_table_factor(
        &self,
        tf: &ast::TableFactor,
        names: &mut Vec<String>,
        left: Option<&Scope>,
    ) -> PgResult<(LogicalPlan, Scope, Vec<Expr>)> {
        let mut lateral = Vec::new();
        let (plan, mut scope, name, alias) = match tf {
            ast::TableFactor::Table {
                name,
                alias,
                args,
                with_hints,
                version,
                with_ordinality,
                partitions,
                json_path,
                sample,
                index_hints,
            } => {
                if let Some(args) = args {
                    if !with_hints.is_empty() || sample.is_some() {
                        return Err(PgError::unsupported(format!("table reference \"{tf}\"")));
                    }
                    let ((plan, scope, scope_name), reads) = self.lateral(left, || {
                        self.bind_table_function(name, args, alias.as_ref(), *with_ordinality)
                    })?;
                    lateral = reads;
                    (plan, scope, scope_name, alias.as_ref())
                } else {
                    if !with_hints.is_empty()
                        || version.is_some()
                        || *with_ordinality
                        || !partitions.is_empty()
                        || json_path.is_some()
                        || sample.is_some()
                        || !index_hints.is_empty()
                    {
                        return Err(PgError::unsupported(format!("table reference \"{tf}\"")));
                    }
                    let (table, view, seq) = match self.standard_view(name) {
                        Some(v) => {
                            let v = v?;
                            (v.desc(), Some(v), None)
                        }
                        None => match self.table(name) {
                            Ok(t) => (t, None, None),
                            Err(e) => {
                                let n = self.object_name(name).ok().map(|(n, _)| n);
                                let n = n.as_deref().unwrap_or_default();
                                match (catalog::SystemView::lookup(n), self.catalog.sequence(n)) {
                                    (Some(v), _) => (v.desc(), Some(v), None),
                                    (None, Some(s)) => {
                                        (super::sequence::sequence_table(s), None, Some(s.clone()))
                                    }
                                    (None, None) => return Err(e),
                                }
                            }
                        },
                    };
                    let scope_name = alias
                        .as_ref()
                        .map(|a| ident_name(&a.name))
                        .unwrap_or_else(|| table.name.clone());
                    let scope = Scope::for_table(&table, &scope_name);
                    let plan = match (view, seq) {
                        (Some(view), _) => LogicalPlan::SystemView { view, table },
                        (None, Some(seq)) => LogicalPlan::Sequence { seq, table },
                        // An alias other than the table's name goes with the scan, for
                        // EXPLAIN to show.
                        (None, None) if scope_name != table.name => LogicalPlan::Scan {
                            table: std::sync::Arc::new(catalog::TableDesc {
                                alias: Some(scope_name.clone()),
                                ..(*table).clone()
                            }),
                        },
                        (None, None) => LogicalPlan::Scan { table },
                    };
                    let (plan, scope) = match plan {
                        LogicalPlan::Scan { table } => {
                            let table = self.with_stored_sizes(table, &scope_name);
                            let scope = Scope::for_table(&table, &scope_name);
                            (LogicalPlan::Scan { table }, scope)
                        }
                        plan => (plan, scope),
                    };
                    // FROM ONLY a partitioned table: its own rows, of which it has none.
                    let plan = match &plan {
                        LogicalPlan::Scan { table }
                            if table.partition_key.is_some() && self.only(name) =>
                        {
                            LogicalPlan::Filter {
                                input: Box::new(plan),
                                predicate: Expr::constant(Value::Bool(false), DataType::Bool),
                            }
                        }
                        _ => plan,
                    };
                    (plan, scope, scope_name, alias.as_ref())
                }
            }
            // `LATERAL f(...)`: a function in FROM, LATERAL or not.
            ast::TableFactor::Function {
                lateral: true,
                name,
                args,
                with_ordinality,
                alias,
            } => {
                let args = ast::TableFunctionArgs {
                    args: args.clone(),
                    settings: None,
                };
                let ((plan, scope, scope_name), reads) = self.lateral(left, || {
                    self.bind_table_function(name, &args, alias.as_ref(), *with_ordinality)
                })?;
                lateral = reads;
                (plan, scope, scope_name, alias.as_ref())
            }
            ast::TableFactor::UNNEST {
                alias,
                array_exprs,
                with_offset: false,
                with_ordinality,
                ..
            } => {
                let ((plan, scope, scope_name), reads) = self.lateral(left, || {
                    self.bind_unnest(array_exprs, alias.as_ref(), *with_ordinality)
                })?;
                lateral = reads;
                (plan, scope, scope_name, alias.as_ref())
            }
            ast::TableFactor::Derived {
                lateral: lateral_subquery,
                subquery,
                alias,
                sample,
            } => {
                if sample.is_some() {
                    return Err(PgError::unsupported(format!("table reference \"{tf}\"")));
                }
                let Some(a) = alias else {
                    return Err(PgError::syntax("subquery in FROM must have an alias")
                        .with_hint("For example, FROM (SELECT ...) [AS] foo."));
                };
                let q = if *lateral_subquery {
                    let (q, reads) = self.lateral(left, || self.bind_query(subquery))?;
                    lateral = reads;
                    q
                } else {
                    self.bind_query(subquery)?
                };
                let scope_name: std::sync::Arc<str> = ident_name(&a.name).into();
                let scope = Scope {
                    columns: q
                        .columns
                        .iter()
                        .map(|c| ScopeColumn {
                            table: Some(scope_name.clone()),
                            name: c.name.clone(),
                            ty: c.ty,
                            table_oid: c.table_oid,
                            column_number: c.column_number,
                            dropped: false,
                            merged_away: false,
                            stored_size_of: None,
                        })
                        .collect(),
                };
                (q.plan, scope, scope_name.to_string(), Some(a))
            }
            ast::TableFactor::NestedJoin {
                table_with_joins,
                alias: None,
            } => {
                let (plan, scope) =
                    self.bind_from(std::slice::from_ref(table_with_joins.as_ref()))?;
                return Ok((plan, scope, Vec::new()));
            }
            other => return Err(PgError::unsupported(format!("table reference \"{other}\""))),
        };
        if let Some(a) = alias {
            let available = scope.columns.iter().filter(|c| !c.dropped).count();
            if a.columns.len() > available {
                return Err(PgError::new(
                    SqlState::INVALID_COLUMN_REFERENCE,
                    format!(
                        "table \"{name}\" has {available} columns available but {} columns specified",
                        a.columns.len()
                    ),
                ));
            }
            let live = scope.columns.iter_mut().filter(|c| !c.dropped);
            for (c, def) in live.zip(&a.columns) {
                c.name = ident_name(&def.name).into();
            }
        }
        if names.contains(&name) {
            return Err(PgError::new(
                SqlState::DUPLICATE_ALIAS,
                format!("table name \"{name}\" specified more than once"),
            ));
        }
        names.push(name);
        Ok((plan, scope, lateral))
    }
}

/// Whether a FROM item can read the items before it: a LATERAL subquery, or a function.
fn may_be_lateral(tf: &ast::TableFactor) -> bool {
    matches!(
        tf,
        ast::TableFactor::Derived { lateral: true, .. }
            | ast::TableFactor::Function { .. }
            | ast::TableFactor::UNNEST { .. }
            | ast::TableFactor::Table { args: Some(_), .. }
    )
}

/// How two FROM items join: `kind` (`swapped`: a RIGHT join, run as `kind` with the
/// sides swapped), `explicit`: written with JOIN rather than a comma.
struct JoinHow {
    kind: JoinKind,
    swapped: bool,
    explicit: bool,
}

/// The columns JOIN ... USING (`names`) pairs: each name's one visible column on the
/// left and on the right (by position in each side's scope), with PostgreSQL's errors.
fn using_pairs(ls: &Scope, rs: &Scope, names: Vec<String>) -> PgResult<Vec<(usize, usize)>> {
    let find = |scope: &Scope, name: &str, side: &str| -> PgResult<usize> {
        let mut found = scope
            .columns
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.dropped && !c.merged_away && *c.name == *name);
        let Some((i, _)) = found.next() else {
            return Err(PgError::new(
                SqlState::UNDEFINED_COLUMN,
                format!(
                    "column \"{name}\" specified in USING clause does not exist in {side} table"
                ),
            ));
        };
        if found.next().is_some() {
            return Err(PgError::new(
                SqlState::AMBIGUOUS_COLUMN,
                format!("common column name \"{name}\" appears more than once in {side} table"),
            ));
        }
        Ok(i)
    };
    let mut pairs = Vec::with_capacity(names.len());
    for (k, name) in names.iter().enumerate() {
        if names[..k].contains(name) {
            return Err(PgError::new(
                SqlState::DUPLICATE_COLUMN,
                format!("column name \"{name}\" appears more than once in USING clause"),
            ));
        }
        pairs.push((find(ls, name, "left")?, find(rs, name, "right")?));
    }
    Ok(pairs)
}

/// A RIGHT or FULL join's right side reading its left side: the rows it reads may be
/// missing (42P10, naming the table read).
fn lateral_outer_error(left: &Scope, lateral: &[Expr]) -> PgError {
    let table = lateral
        .iter()
        .find_map(|e| match e.kind {
            ExprKind::Column(i) => left.columns.get(i).and_then(|c| c.table.clone()),
            _ => None,
        })
        .unwrap_or_default();
    PgError::new(
        SqlState::INVALID_COLUMN_REFERENCE,
        format!("invalid reference to FROM-clause entry for table \"{table}\""),
    )
    .with_detail("The combining JOIN type must be INNER or LEFT for a LATERAL reference.")
}

/// Whether `on` has a conjunct `l = r` of one hash-joinable type whose sides read one
/// input each (of a join whose left input has `left_width` columns): what a FULL join
/// runs by (PostgreSQL's planner refuses one without).
fn has_hash_clause(on: Option<&Expr>, left_width: usize) -> bool {
    fn reads(e: &Expr, left_width: usize) -> (bool, bool) {
        let (mut l, mut r) = (false, false);
        e.walk(&mut |x| {
            if let ExprKind::Column(i) = x.kind {
                if i < left_width {
                    l = true;
                } else {
                    r = true;
                }
            }
        });
        (l, r)
    }
    fn any(e: &Expr, left_width: usize) -> bool {
        match &e.kind {
            ExprKind::Binary(crate::bound::BinaryOp::And, a, b) => {
                any(a, left_width) || any(b, left_width)
            }
            ExprKind::Binary(crate::bound::BinaryOp::Eq, a, b) if a.ty.hash_joins_with(&b.ty) => {
                matches!(
                    (reads(a, left_width), reads(b, left_width)),
                    ((true, false), (false, true)) | ((false, true), (true, false))
                )
            }
            _ => false,
        }
    }
    on.is_some_and(|e| any(e, left_width))
}

fn join_name(op: &ast::JoinOperator) -> &'static str {
    match op {
        ast::JoinOperator::Right(_) | ast::JoinOperator::RightOuter(_) => "RIGHT JOIN",
        ast::JoinOperator::FullOuter(_) => "FULL JOIN",
        _ => "this join",
    }
}

/// 42883 for a type without an ordering (`equality`: an equality) operator: `void`,
/// the one Myriad has.
pub(crate) fn check_operator(ty: DataType, equality: bool) -> PgResult<()> {
    if ty != DataType::Void {
        return Ok(());
    }
    let (what, hint) = match equality {
        true => (
            "equality",
            "Use an explicit equality operator or modify the query.",
        ),
        false => (
            "ordering",
            "Use an explicit ordering operator or modify the query.",
        ),
    };
    let e = PgError::new(
        SqlState::UNDEFINED_FUNCTION,
        format!(
            "could not identify an {what} operator for type {}",
            ty.name()
        ),
    );
    Err(match equality {
        true => e,
        false => e.with_hint(hint),
    })
}

pub(crate) fn sort_key(expr: Expr, o: &ast::OrderByExpr) -> PgResult<SortKey> {
    check_operator(expr.ty, false)?;
    if o.with_fill.is_some() {
        return Err(PgError::unsupported("WITH FILL"));
    }
    let desc = match o.options.sort {
        None | Some(ast::OrderBySort::Asc) => false,
        Some(ast::OrderBySort::Desc) => true,
        Some(_) => return Err(PgError::unsupported("ORDER BY ... USING")),
    };
    Ok(SortKey {
        expr,
        desc,
        nulls_first: o.options.nulls_first.unwrap_or(desc),
    })
}

/// The set-returning functions Myriad has (in FROM).
pub(crate) const SET_RETURNING: &[&str] = &[
    "generate_series",
    "unnest",
    "pg_partition_ancestors",
    "pg_partition_tree",
];

/// `SELECT srf(args) [AS name]` without FROM, read as PostgreSQL reads it: the same
/// rows as `SELECT f AS name FROM srf(args) AS srf(f)`, its column named after the
/// function. Only a select list of that one call is read so; a set-returning function
/// anywhere else in a select list stays unsupported (0A000).
fn srf_select_as_scan(s: &ast::Select) -> Option<ast::Select> {
    if !s.from.is_empty() || s.projection.len() != 1 || s.having.is_some() {
        return None;
    }
    if !matches!(&s.group_by, ast::GroupByExpr::Expressions(g, m) if g.is_empty() && m.is_empty()) {
        return None;
    }
    let (f, alias) = match &s.projection[0] {
        ast::SelectItem::UnnamedExpr(ast::Expr::Function(f)) => (f, None),
        ast::SelectItem::ExprWithAlias {
            expr: ast::Expr::Function(f),
            alias,
        } => (f, Some(alias.clone())),
        _ => return None,
    };
    let parts: Vec<String> = f
        .name
        .0
        .iter()
        .map(|p| p.as_ident().map(ident_name))
        .collect::<Option<_>>()?;
    let fname = match parts.as_slice() {
        [n] => n,
        [s, n] if s == "pg_catalog" => n,
        _ => return None,
    };
    let ast::FunctionArguments::List(list) = &f.args else {
        return None;
    };
    if !SET_RETURNING.contains(&fname.as_str())
        || list.duplicate_treatment.is_some()
        || !list.clauses.is_empty()
        || f.filter.is_some()
        || f.over.is_some()
        || !f.within_group.is_empty()
    {
        return None;
    }
    let table = ast::Ident::new(fname.clone());
    let column = ast::Ident::new("f");
    let mut out = s.clone();
    out.from = vec![ast::TableWithJoins {
        relation: ast::TableFactor::Table {
            name: f.name.clone(),
            alias: Some(ast::TableAlias {
                explicit: true,
                name: table.clone(),
                columns: vec![ast::TableAliasColumnDef {
                    name: column.clone(),
                    data_type: None,
                }],
                at: None,
            }),
            args: Some(ast::TableFunctionArgs {
                args: list.args.clone(),
                settings: None,
            }),
            with_hints: Vec::new(),
            version: None,
            with_ordinality: false,
            partitions: Vec::new(),
            json_path: None,
            sample: None,
            index_hints: Vec::new(),
        },
        joins: Vec::new(),
    }];
    out.projection = vec![ast::SelectItem::ExprWithAlias {
        expr: ast::Expr::CompoundIdentifier(vec![table.clone(), column]),
        alias: alias.unwrap_or(table),
    }];
    Some(out)
}
