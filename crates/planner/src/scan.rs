//! Scans: which way a table's rows are read ([`scan_path`]), and index order for an
//! ORDER BY under a LIMIT ([`ordered_by_index`]).

#[allow(unused_imports)]
use super::*;

/// Under a LIMIT, a sort of one table's rows by an index's leading columns (after any
/// columns its scan fixes by equality) becomes an index scan in that order: the first
/// rows come without reading the rest. `ORDER BY` keys must all be ascending with NULLs
/// last (a forward scan) or all descending with NULLs first (backward), as the index
/// stores NULLs last. Anything else is returned unchanged, and so is everything under
/// `enable_indexscan = off`.
pub(crate) fn ordered_by_index(cx: &PlanContext<'_>, plan: Plan) -> Plan {
    if !cx.settings.enable_indexscan {
        return plan;
    }
    match plan {
        Plan::Project { input, exprs } => Plan::Project {
            input: Box::new(ordered_by_index(cx, *input)),
            exprs,
        },
        Plan::Sort { input, keys } => match *input {
            Plan::Project { input: scan, exprs } => match index_order(&scan, &exprs, &keys) {
                Some(ordered) => Plan::Project {
                    input: Box::new(ordered),
                    exprs,
                },
                None => Plan::Sort {
                    input: Box::new(Plan::Project { input: scan, exprs }),
                    keys,
                },
            },
            other => Plan::Sort {
                input: Box::new(other),
                keys,
            },
        },
        other => other,
    }
}

pub(crate) fn index_order(scan: &Plan, exprs: &[Expr], keys: &[SortKey]) -> Option<Plan> {
    let backward = keys.first()?.desc;
    let mut cols = Vec::with_capacity(keys.len());
    for k in keys {
        if k.desc != backward || k.nulls_first != backward {
            return None;
        }
        let ExprKind::Column(out) = k.expr.kind else {
            return None;
        };
        match exprs.get(out)?.kind {
            ExprKind::Column(c) => cols.push(c),
            _ => return None,
        }
    }
    match scan {
        Plan::SeqScan { table, filter } => {
            let index = table.indexes.iter().find(|i| {
                i.columns.starts_with(&cols) && cols.iter().all(|&c| indexable(table.columns[c].ty))
            })?;
            Some(Plan::IndexScan {
                table: table.clone(),
                index: index.clone(),
                lower: Bound::Unbounded,
                upper: Bound::Unbounded,
                filter: filter.clone(),
                backward,
            })
        }
        // Equality on a prefix fixes those columns: the order continues after them.
        Plan::IndexScan {
            table,
            index,
            lower: Bound::Included(lo),
            upper: Bound::Included(hi),
            filter,
            backward: false,
        } if lo == hi && index.columns[lo.len()..].starts_with(&cols) => Some(Plan::IndexScan {
            table: table.clone(),
            index: index.clone(),
            lower: Bound::Included(lo.clone()),
            upper: Bound::Included(hi.clone()),
            filter: filter.clone(),
            backward,
        }),
        _ => None,
    }
}

/// The scan for `table` filtered by `predicate`: an index scan if an index's leading
/// columns are constrained by the predicate's conjuncts (and `enable_indexscan` is on),
/// else a sequential scan. Without statistics the rule is PostgreSQL's default
/// preference: equality on a leading prefix first, then a range on the next column; most
/// constrained columns wins. (`enable_seqscan = off` changes nothing yet: a usable index
/// is always taken.)
pub fn scan_path(cx: &PlanContext<'_>, table: Arc<TableDesc>, predicate: Expr) -> Plan {
    let mut conjuncts = Vec::new();
    split_and(&predicate, &mut conjuncts);
    // (column, operator, constant) for each usable conjunct: a bare column of an indexable
    // type against a run-time constant of the same type.
    let mut quals: Vec<(usize, BinaryOp, Expr)> = Vec::new();
    for c in &conjuncts {
        if let ExprKind::Binary(op, l, r) = &c.kind
            && matches!(
                op,
                BinaryOp::Eq | BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq
            )
        {
            let (col, op, k) = match (&l.kind, &r.kind) {
                (ExprKind::Column(i), _) if is_constant(r) => (*i, *op, (**r).clone()),
                (_, ExprKind::Column(i)) if is_constant(l) => (*i, commute(*op), (**l).clone()),
                // A smallint or integer column widened to the constant's wider integer
                // type: the key keeps that type, and the scan narrows its value when it
                // runs (`exec::bound_values`), as PostgreSQL's cross-type btree operators
                // compare. So a parameter's generic plan uses the index as well.
                _ => match (
                    widened_integer_column(l, &table),
                    widened_integer_column(r, &table),
                ) {
                    (Some((i, _)), None) if is_constant(r) => {
                        quals.push((i, *op, (**r).clone()));
                        continue;
                    }
                    (None, Some((i, _))) if is_constant(l) => {
                        quals.push((i, commute(*op), (**l).clone()));
                        continue;
                    }
                    _ => continue,
                },
            };
            let ty = table.columns[col].ty;
            // The constant was cast to the column's type less its typmod (a
            // `numeric(10,2)` or `varchar(5)` column is compared as plain numeric or
            // varchar): the same order, so the index serves it.
            if indexable(ty) && k.ty == ty.without_typmod() {
                quals.push((col, op, k));
            }
        }
    }
    // (score, index, lower, upper) of the best index so far.
    type Candidate<'t> = (usize, &'t IndexDesc, Bound<Vec<Expr>>, Bound<Vec<Expr>>);
    let mut best: Option<Candidate> = None;
    for index in &table.indexes {
        let mut prefix = Vec::new();
        for &col in &index.columns {
            match quals
                .iter()
                .find(|(c, op, _)| *c == col && *op == BinaryOp::Eq)
            {
                Some((_, _, k)) => prefix.push(k.clone()),
                None => break,
            }
        }
        let mut score = prefix.len() * 2;
        let (mut lower, mut upper) = if prefix.is_empty() {
            (Bound::Unbounded, Bound::Unbounded)
        } else {
            (
                Bound::Included(prefix.clone()),
                Bound::Included(prefix.clone()),
            )
        };
        if let Some(&next) = index.columns.get(prefix.len()) {
            for (c, op, k) in &quals {
                if *c != next {
                    continue;
                }
                let mut key = prefix.clone();
                key.push(k.clone());
                match op {
                    BinaryOp::Gt if lower_is_prefix(&lower, prefix.len()) => {
                        lower = Bound::Excluded(key);
                        score += 1;
                    }
                    BinaryOp::GtEq if lower_is_prefix(&lower, prefix.len()) => {
                        lower = Bound::Included(key);
                        score += 1;
                    }
                    BinaryOp::Lt if lower_is_prefix(&upper, prefix.len()) => {
                        upper = Bound::Excluded(key);
                        score += 1;
                    }
                    BinaryOp::LtEq if lower_is_prefix(&upper, prefix.len()) => {
                        upper = Bound::Included(key);
                        score += 1;
                    }
                    _ => {}
                }
            }
        }
        if score > 0 && best.as_ref().is_none_or(|b| score > b.0) {
            best = Some((score, index, lower, upper));
        }
    }
    match best.filter(|_| cx.settings.enable_indexscan) {
        Some((_, index, lower, upper)) => Plan::IndexScan {
            index: index.clone(),
            table,
            lower,
            upper,
            filter: Some(predicate),
            backward: false,
        },
        None => Plan::SeqScan {
            table,
            filter: Some(predicate),
        },
    }
}

/// A smallint or integer column widened to a larger integer type for a comparison (the
/// binder's `int4_col = int8_value`): the column and its own type. PostgreSQL compares
/// these with cross-type operators its btree opfamily serves; here the index scan
/// narrows the key's value when it runs.
pub fn widened_integer_column(e: &Expr, table: &TableDesc) -> Option<(usize, DataType)> {
    let ExprKind::Cast { expr, .. } = &e.kind else {
        return None;
    };
    let ExprKind::Column(i) = expr.kind else {
        return None;
    };
    let ty = table.columns.get(i)?.ty;
    let rank = |t: DataType| match t {
        DataType::Int2 => Some(2),
        DataType::Int4 => Some(4),
        DataType::Int8 => Some(8),
        _ => None,
    };
    (rank(ty)? < rank(e.ty)?).then_some((i, ty))
}

/// The scan UPDATE and DELETE find their rows with: [`scan_path`] under a filter, else
/// the whole table.
pub fn target_scan(cx: &PlanContext<'_>, table: &Arc<TableDesc>, filter: Option<&Expr>) -> Plan {
    match filter {
        Some(f) => scan_path(cx, table.clone(), f.clone()),
        None => Plan::SeqScan {
            table: table.clone(),
            filter: None,
        },
    }
}

/// Is `b` still only the equality prefix (no range bound on the next column yet)?
pub(crate) fn lower_is_prefix(b: &Bound<Vec<Expr>>, prefix: usize) -> bool {
    match b {
        Bound::Unbounded => true,
        Bound::Included(k) | Bound::Excluded(k) => k.len() == prefix,
    }
}

pub(crate) fn split_and<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Binary(BinaryOp::And, l, r) => {
            split_and(l, out);
            split_and(r, out);
        }
        _ => out.push(e),
    }
}

/// An expression with no column references: known before the scan starts. Inside a
/// subquery that includes the outer query's values (fixed while the subquery runs), and
/// an uncorrelated subquery's result (computed once per statement); in a prepared
/// statement's generic plan, its parameters.
pub(crate) fn is_constant(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Outer(_) | ExprKind::Param(_) => true,
        ExprKind::SubLink(link) => link.args.is_empty(),
        ExprKind::Binary(_, l, r) => is_constant(l) && is_constant(r),
        ExprKind::Neg(x) | ExprKind::Cast { expr: x, .. } => is_constant(x),
        _ => false,
    }
}

/// `k op col` as `col op' k`.
pub(crate) fn commute(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::LtEq => BinaryOp::GtEq,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::GtEq => BinaryOp::LtEq,
        other => other,
    }
}

/// Types whose btree order is exactly SQL's comparison order. `char(n)` compares without
/// its padding, which the stored keys keep, so it is left to sequential scans for now.
pub(crate) fn indexable(ty: DataType) -> bool {
    matches!(
        ty,
        DataType::Bool
            | DataType::Int2
            | DataType::Int4
            | DataType::Int8
            | DataType::Float4
            | DataType::Float8
            | DataType::Text
            | DataType::Varchar(_)
            | DataType::Date
            | DataType::Timestamp(_)
            | DataType::TimestampTz(_)
            | DataType::Interval
            | DataType::Numeric(_)
            | DataType::Uuid
            | DataType::Bytea
            | DataType::Oid
            | DataType::Reg(_)
    )
}
