//! Which columns each scan decodes (planner rule 12): a walk down a finished plan that
//! carries the set of each node's output columns someone above reads, adds what the node
//! itself reads (its conditions, keys, expressions), and leaves at every table scan the
//! columns it must produce. The scan decodes those and leaves the rest NULL, so a query
//! that reads 3 of `lineitem`'s 16 columns neither copies the other 13 out of each tuple
//! nor carries them through its joins and hash tables. (PostgreSQL plans a target list
//! for each scan; Myriad keeps every row as wide as its table, which keeps column
//! numbers stable, and pays only for the columns it fills.)
//!
//! A column stays whenever some expression of a node reads it, whether or not that
//! expression's own output is read above: an expression is evaluated either way, and one
//! that read NULL in place of a value might fail where the query would not.

#[allow(unused_imports)]
use super::*;

/// Mark the columns of `plan`'s scans that its output columns marked in `needed` (as
/// wide as the plan's rows) read.
pub(crate) fn prune(plan: &mut Plan, needed: &[bool]) {
    // A LEFT JOIN nothing above reads the right side of, whose right rows are unique on
    // its condition, returns each left row once as it is: it is not run at all.
    if let Some(left) = removable_left_join(plan, needed) {
        *plan = left;
        return prune(plan, needed);
    }
    match plan {
        // The columns read above only: the scan decodes its filter's too, and drops
        // those only the filter reads once a row has passed it (else they would be
        // copied up through joins and hash tables for nothing: a LIKE's long text).
        Plan::SeqScan { columns, .. } | Plan::PartitionScans { columns, .. } => {
            *columns = (!needed.iter().all(|&n| n)).then(|| needed.into());
        }
        Plan::IndexScan {
            filter, columns, ..
        } => {
            // Every column read above: nothing to leave out (a primary-key lookup).
            if needed.iter().all(|&n| n) {
                *columns = None;
                return;
            }
            let mut need = needed.to_vec();
            read(filter.iter(), &mut need);
            *columns = (!need.iter().all(|&n| n)).then(|| need.into());
        }
        Plan::BitmapHeapScan {
            recheck,
            filter,
            columns,
            ..
        } => {
            if needed.iter().all(|&n| n) {
                *columns = None;
                return;
            }
            let mut need = needed.to_vec();
            read(filter.iter().chain([&*recheck]), &mut need);
            *columns = (!need.iter().all(|&n| n)).then(|| need.into());
        }
        Plan::Filter { input, predicate } => {
            let mut need = needed.to_vec();
            read([&*predicate], &mut need);
            prune(input, &need);
        }
        Plan::Project { input, exprs } => {
            let width = input.width();
            // Every input column in order (SELECT *): all read, nothing to collect.
            if exprs.len() == width
                && exprs
                    .iter()
                    .enumerate()
                    .all(|(i, e)| matches!(e.kind, ExprKind::Column(c) if c == i))
                && width <= ALL.len()
            {
                prune(input, &ALL[..width]);
                return;
            }
            let mut need = vec![false; width];
            read(exprs.iter(), &mut need);
            prune(input, &need);
        }
        Plan::NestedLoopJoin {
            left,
            right,
            kind,
            on,
            lateral,
            ..
        } => {
            let lw = left.width();
            let mut joined = joined_needs(needed, lw, right.width(), *kind);
            read(on.iter(), &mut joined);
            let mut left_need = joined[..lw].to_vec();
            read(lateral.iter().flatten(), &mut left_need);
            prune(left, &left_need);
            // A LATERAL side reads its outer values, not its own columns, from the left.
            prune(right, &joined[lw..]);
        }
        Plan::IndexNestLoop {
            left,
            outer_key,
            key_cond,
            more_keys,
            on,
            ..
        } => {
            let lw = left.width();
            let mut joined = needed.to_vec();
            joined.resize(joined.len().max(lw), false);
            read([&*key_cond], &mut joined);
            read(more_keys.iter().map(|(_, c)| c), &mut joined);
            read(on.iter(), &mut joined);
            let mut left_need = joined[..lw].to_vec();
            read([&*outer_key], &mut left_need);
            read(more_keys.iter().map(|(o, _)| o), &mut left_need);
            prune(left, &left_need);
        }
        Plan::HashJoin {
            left,
            right,
            kind,
            hash_conds,
            left_keys,
            right_keys,
            on,
            ..
        }
        | Plan::MergeJoin {
            left,
            right,
            kind,
            merge_conds: hash_conds,
            left_keys,
            right_keys,
            on,
            ..
        } => {
            let lw = left.width();
            let mut joined = joined_needs(needed, lw, right.width(), *kind);
            read(hash_conds.iter().chain(on.iter()), &mut joined);
            let (l, r) = joined.split_at_mut(lw);
            read(left_keys.iter(), l);
            read(right_keys.iter(), r);
            prune(left, l);
            prune(right, r);
        }
        Plan::Aggregate {
            input,
            group_by,
            aggs,
            ..
        } => {
            let mut need = vec![false; input.width()];
            read(group_by.iter(), &mut need);
            read(aggs.iter().flat_map(|a| a.inputs()), &mut need);
            prune(input, &need);
        }
        Plan::Sort { input, keys } => {
            let mut need = needed.to_vec();
            read(keys.iter().map(|k| &k.expr), &mut need);
            prune(input, &need);
        }
        Plan::Limit { input, .. } => prune(input, needed),
        Plan::Result { input, filter, .. } => {
            if let Some(input) = input {
                let mut need = needed.to_vec();
                read([&*filter], &mut need);
                prune(input, &need);
            }
        }
        Plan::Append { inputs, .. } => {
            for input in inputs {
                prune(input, needed);
            }
        }
        Plan::MergeAppend { inputs, keys, .. } => {
            let mut need = needed.to_vec();
            read(keys.iter().map(|k| &k.expr), &mut need);
            for input in inputs {
                prune(input, &need);
            }
        }
        // Whole rows compared, or locked and rebuilt: every column.
        Plan::Distinct { input } => {
            let all = vec![true; input.width()];
            prune(input, &all);
        }
        Plan::SetOp { left, right, .. } => {
            let all = vec![true; left.width()];
            prune(left, &all);
            prune(right, &all);
        }
        Plan::LockRows { .. } => {}
        Plan::SequenceState { .. }
        | Plan::SystemView { .. }
        | Plan::Values { .. }
        | Plan::Unnest { .. }
        | Plan::GenerateSeries { .. } => {}
    }
}

/// `plan` without its join, where it is a LEFT JOIN whose right columns `needed` does
/// not mark, whose right rows are unique on its condition (at most one matches a left
/// row, so each left row comes out once) and whose condition has no subquery or volatile
/// call: its left input, with NULLs for the right columns (PostgreSQL's
/// `remove_useless_joins`, which removes such a join before planning the rest).
fn removable_left_join(plan: &Plan, needed: &[bool]) -> Option<Plan> {
    use std::borrow::Cow;
    // The right side as a plan (an index nested loop's is its table), borrowed.
    let (left, right, conds): (&Plan, Cow<'_, Plan>, Vec<&Expr>) = match plan {
        Plan::NestedLoopJoin {
            left,
            right,
            kind: JoinKind::Left,
            on,
            lateral: None,
            ..
        } => (left, Cow::Borrowed(&**right), on.iter().collect()),
        Plan::HashJoin {
            left,
            right,
            kind: JoinKind::Left,
            hash_conds: conds,
            on,
            ..
        }
        | Plan::MergeJoin {
            left,
            right,
            kind: JoinKind::Left,
            merge_conds: conds,
            on,
            ..
        } => (
            left,
            Cow::Borrowed(&**right),
            conds.iter().chain(on).collect(),
        ),
        Plan::IndexNestLoop {
            left,
            table,
            key_cond,
            more_keys,
            on,
            kind: JoinKind::Left,
            ..
        } => (
            left,
            Cow::Owned(Plan::SeqScan {
                table: table.clone(),
                filter: None,
                columns: None,
            }),
            std::iter::once(key_cond)
                .chain(more_keys.iter().map(|(_, c)| c))
                .chain(on)
                .collect(),
        ),
        _ => return None,
    };
    // Most joins' right sides are read above.
    let lw = left.width();
    if needed.iter().skip(lw).any(|&n| n) {
        return None;
    }
    let plain = conds.iter().all(|c| {
        let mut ok = !c.is_volatile();
        c.walk(&mut |x| ok &= !matches!(x.kind, ExprKind::SubLink(_)));
        ok
    });
    let cond = conjoin(conds.into_iter().cloned().collect());
    if !plain || !crate::join::unique_on(&right, lw, cond.as_ref()) {
        return None;
    }
    let right_types = right.column_types()?;
    let left_types = left.column_types()?;
    let exprs = left_types
        .iter()
        .enumerate()
        .map(|(i, ty)| Expr::column(i, *ty))
        .chain(
            right_types
                .iter()
                .map(|ty| Expr::constant(common::Value::Null, *ty)),
        )
        .collect();
    Some(Plan::Project {
        input: Box::new(left.clone()),
        exprs,
    })
}

/// Every column read, for rows up to PostgreSQL's 1,600 columns (and then some): passed
/// down without allocating.
static ALL: [bool; 2048] = [true; 2048];

/// The columns of a join's joined row (`lw` left, `rw` right) that its output columns
/// marked in `needed` are: a semi or anti join returns its left side only.
fn joined_needs(needed: &[bool], lw: usize, rw: usize, kind: JoinKind) -> Vec<bool> {
    let mut joined = vec![false; lw + rw];
    let out = if kind.left_only() { lw } else { lw + rw }.min(needed.len());
    joined[..out].copy_from_slice(&needed[..out]);
    joined
}

/// Mark in `need` the columns that `exprs` read, the values a subquery of theirs takes
/// from the row included.
/// The columns of a row of `width` that `e` reads, the values a subquery of its takes
/// from the row included (what a sequential scan decodes for its filter).
pub fn columns_read(e: &Expr, width: usize) -> Vec<bool> {
    let mut need = vec![false; width];
    read([e], &mut need);
    need
}

fn read<'e>(exprs: impl IntoIterator<Item = &'e Expr>, need: &mut [bool]) {
    for e in exprs {
        // A bare column (most of a select list) without the walk.
        if let ExprKind::Column(i) = e.kind {
            if let Some(n) = need.get_mut(i) {
                *n = true;
            }
            continue;
        }
        e.walk(&mut |x| {
            if let ExprKind::Column(i) = x.kind
                && let Some(n) = need.get_mut(i)
            {
                *n = true;
            }
        });
    }
}

/// Prune a statement's plans: a query's rows are all read; so are those an INSERT takes
/// (UPDATE and DELETE rebuild whole rows from their scans: they are left alone), and each
/// subquery's.
pub(crate) fn prune_statement(stmt: &mut PlannedStatement) {
    let whole = |p: &mut Plan| {
        let width = p.width();
        if width <= ALL.len() {
            prune(p, &ALL[..width]);
        } else {
            prune(p, &vec![true; width]);
        }
    };
    match stmt {
        PlannedStatement::Query { plan, subplans, .. }
        | PlannedStatement::CopyTo { plan, subplans, .. } => {
            whole(plan);
            subplans.prune();
        }
        PlannedStatement::Insert {
            source, subplans, ..
        } => {
            whole(source);
            subplans.prune();
        }
        PlannedStatement::Update { subplans, .. } | PlannedStatement::Delete { subplans, .. } => {
            subplans.prune()
        }
        PlannedStatement::Explain { inner, .. } => prune_statement(inner),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog::ColumnDesc;
    use common::{DataType, Value};

    fn table(oid: u32, width: usize) -> Arc<TableDesc> {
        Arc::new(TableDesc {
            oid,
            rel: oid,
            name: format!("t{oid}"),
            columns: (0..width)
                .map(|i| ColumnDesc::new(format!("c{i}"), DataType::Int4))
                .collect::<Vec<_>>()
                .into(),
            ..Default::default()
        })
    }

    fn col(i: usize) -> Expr {
        Expr::column(i, DataType::Int4)
    }

    fn eq(l: Expr, r: Expr) -> Expr {
        Expr::new(
            ExprKind::Binary(BinaryOp::Eq, Box::new(l), Box::new(r)),
            DataType::Bool,
        )
    }

    fn scan(t: Arc<TableDesc>, filter: Option<Expr>) -> Plan {
        Plan::SeqScan {
            table: t,
            filter,
            columns: None,
        }
    }

    fn columns_of(p: &Plan) -> Option<Vec<bool>> {
        match p {
            Plan::SeqScan { columns, .. } | Plan::IndexScan { columns, .. } => {
                columns.as_ref().map(|c| c.to_vec())
            }
            _ => panic!("not a scan: {p:?}"),
        }
    }

    /// A projection of one column over a filtered scan marks the projected one (the
    /// scan adds its filter's, and drops them once a row passes); a hash join's sides decode their keys, its condition's columns
    /// and what is read above; a scan read whole decodes everything (`None`).
    #[test]
    fn scans_decode_what_the_plan_reads() {
        let one = Expr::constant(Value::Int4(1), DataType::Int4);
        let mut p = Plan::Project {
            input: Box::new(scan(table(1, 4), Some(eq(col(0), one.clone())))),
            exprs: vec![col(2)],
        };
        prune(&mut p, &[true]);
        let Plan::Project { input, .. } = &p else {
            unreachable!()
        };
        assert_eq!(columns_of(input), Some(vec![false, false, true, false]));

        // t1 (3 columns) joined to t2 (2 columns) on t1.c1 = t2.c0, t2.c1 = 1 after the
        // join, the aggregate counting t1.c2.
        let mut j = Plan::Aggregate {
            input: Box::new(Plan::HashJoin {
                left: Box::new(scan(table(1, 3), None)),
                right: Box::new(scan(table(2, 2), None)),
                kind: JoinKind::Inner,
                hash_conds: vec![eq(col(1), col(3))],
                left_keys: vec![col(1)],
                right_keys: vec![col(0)],
                on: Some(eq(col(4), one)),
                right_width: 2,
            }),
            group_by: vec![],
            aggs: vec![AggCall {
                func: sql::bound::AggFunc::Count,
                arg: Some(col(2)),
                sep: None,
                order_by: vec![],
                distinct: false,
                ty: DataType::Int8,
            }],
            sorted: false,
            split: crate::AggSplit::Whole,
            dependent: vec![],
        };
        prune(&mut j, &[true]);
        let Plan::Aggregate { input, .. } = &j else {
            unreachable!()
        };
        let Plan::HashJoin { left, right, .. } = &**input else {
            unreachable!()
        };
        assert_eq!(columns_of(left), Some(vec![false, true, true]));
        assert_eq!(columns_of(right), None, "both of t2's columns are read");

        let mut whole = scan(table(3, 2), None);
        prune(&mut whole, &[true, true]);
        assert_eq!(columns_of(&whole), None);
    }
}
