//! Subqueries in WHERE made joins (PostgreSQL's `pull_up_sublinks`, planner rule 10):
//! `EXISTS (...)` and `x IN (...)` a semi join, `NOT EXISTS (...)` an anti join, when
//! the subquery is a plain FROM list with a WHERE (no grouping, DISTINCT, LIMIT, set
//! operations or subqueries of its own). Its FROM becomes the join's inner side with
//! the WHERE conjuncts that read only it; the conjuncts that read the outer row (and,
//! for IN, the equality of `x` with the subquery's value) become the join condition.
//! An IN over any other subquery that reads no outer value is a semi join to the whole
//! subquery ([`whole_subquery`]). Run as a join, the subquery is no longer run once per
//! outer row: a hash semi join reads it once.

#[allow(unused_imports)]
use super::*;
use sql::bound::SubLinkKind;

/// A WHERE subquery taken out to be joined.
#[derive(Clone)]
pub(crate) struct PulledUp {
    pub kind: JoinKind,
    /// The subquery's FROM, with its conditions that read only it.
    pub right: LogicalPlan,
    /// The join condition's conjuncts: over the subquery's row, with `Outer(i)` the
    /// outer row's `args[i]`, and, for IN, `Column(OUTER_TEST)` the tested value.
    pub cond: Vec<Expr>,
    /// What `Outer(i)` stands for, over the outer row.
    pub args: Vec<Expr>,
    /// IN's tested value, over the outer row.
    pub test: Option<Expr>,
}

/// Where IN's tested value stands in a pulled-up condition before it is placed.
const OUTER_TEST: usize = usize::MAX;

/// Take the conjuncts of `conjuncts` that can run as semi or anti joins out of it.
pub(crate) fn pull_up(conjuncts: Vec<Expr>) -> (Vec<Expr>, Vec<PulledUp>) {
    // Most WHEREs hold no subquery: nothing to take apart.
    if !conjuncts.iter().any(|c| match &c.kind {
        ExprKind::SubLink(_) => true,
        ExprKind::Not(x) => matches!(x.kind, ExprKind::SubLink(_)),
        _ => false,
    }) {
        return (conjuncts, Vec::new());
    }
    let mut rest = Vec::new();
    let mut pulled = Vec::new();
    for c in conjuncts {
        match pull_up_one(&c) {
            Some(p) => pulled.push(p),
            None => rest.push(c),
        }
    }
    (rest, pulled)
}

fn pull_up_one(c: &Expr) -> Option<PulledUp> {
    let (link, anti) = match &c.kind {
        ExprKind::SubLink(link) => (link, false),
        ExprKind::Not(inner) => match &inner.kind {
            ExprKind::SubLink(link) if matches!(link.kind, SubLinkKind::Exists) => (link, true),
            _ => return None,
        },
        _ => return None,
    };
    // The subquery: [Project] [Filter] FROM.
    let (select, below) = match &*link.query {
        LogicalPlan::Project { input, exprs } => (Some(exprs), &**input),
        other => (None, other),
    };
    let (from, wheres) = match below {
        LogicalPlan::Filter { input, predicate } => (&**input, conjuncts(predicate.clone())),
        other => (other, vec![]),
    };
    if !plain_from(from) || wheres.iter().any(has_sublink) {
        return whole_subquery(link, anti);
    }
    let (mut cond, local): (Vec<Expr>, Vec<Expr>) = wheres.into_iter().partition(reads_outer);
    let (kind, test) = match &link.kind {
        SubLinkKind::Exists => {
            // An uncorrelated EXISTS is a one-time condition (an InitPlan), not a join.
            if cond.is_empty() {
                return None;
            }
            (if anti { JoinKind::Anti } else { JoinKind::Semi }, None)
        }
        SubLinkKind::Quantified {
            all: false,
            test,
            cmp,
        } if !anti => {
            let value = select?.first()?.clone();
            if has_sublink(&value) || has_sublink(test) || has_sublink(cmp) {
                return None;
            }
            // `[0] op [1]` over (test, value): the test placed later, the value over the
            // subquery's row.
            let placed = map_cmp(cmp, &value);
            cond.push(placed);
            (JoinKind::Semi, Some((**test).clone()))
        }
        _ => return None,
    };
    let right = match conjoin(local) {
        Some(predicate) => LogicalPlan::Filter {
            input: Box::new(from.clone()),
            predicate,
        },
        None => from.clone(),
    };
    Some(PulledUp {
        kind,
        right,
        cond,
        args: link.args.clone(),
        test,
    })
}

/// `x IN (subquery)` over a subquery that is not a plain FROM list (grouping, DISTINCT,
/// LIMIT, set operations, subqueries of its own) and reads no outer value: a semi join
/// to the whole subquery, its first column the value (PostgreSQL's
/// `convert_ANY_sublink_to_join`, which joins such a subquery as a subquery in FROM).
/// A grouped subquery is unique on its group columns, so the semi join may then run as
/// an inner join ([`crate::join::unique_on`]).
fn whole_subquery(link: &sql::bound::SubLink, anti: bool) -> Option<PulledUp> {
    let SubLinkKind::Quantified {
        all: false,
        test,
        cmp,
    } = &link.kind
    else {
        return None;
    };
    // (No args: the subquery reads nothing of the outer row, at any depth.)
    if anti || !link.args.is_empty() || has_sublink(test) || has_sublink(cmp) {
        return None;
    }
    let value = Expr::column(0, first_column_type(&link.query)?);
    Some(PulledUp {
        kind: JoinKind::Semi,
        right: (*link.query).clone(),
        cond: vec![map_cmp(cmp, &value)],
        args: vec![],
        test: Some((**test).clone()),
    })
}

/// The type of a subquery's first output column, where its plan says it.
fn first_column_type(lp: &LogicalPlan) -> Option<DataType> {
    match lp {
        LogicalPlan::Project { exprs, .. } => exprs.first().map(|e| e.ty),
        LogicalPlan::Filter { input, .. }
        | LogicalPlan::Sort { input, .. }
        | LogicalPlan::Limit { input, .. }
        | LogicalPlan::Distinct { input } => first_column_type(input),
        LogicalPlan::SetOp { left, .. } => first_column_type(left),
        LogicalPlan::Aggregate { group_by, aggs, .. } => group_by
            .first()
            .map(|e| e.ty)
            .or_else(|| aggs.first().map(|a| a.ty)),
        _ => None,
    }
}

/// `cmp` over (test, value) with the value put in and the test left as
/// `Column(OUTER_TEST)`.
fn map_cmp(cmp: &Expr, value: &Expr) -> Expr {
    match &cmp.kind {
        ExprKind::Column(0) => Expr::column(OUTER_TEST, cmp.ty),
        ExprKind::Column(_) => value.clone(),
        _ => cmp
            .clone()
            .try_map_children(&mut |c| Ok(map_cmp(&c, value)))
            .expect("mapping columns cannot fail"),
    }
}

/// A FROM list the join search can take as it is: tables, joins, filters and
/// projections that read no outer value, without subqueries, grouping, DISTINCT, LIMIT
/// or set operations.
fn plain_from(lp: &LogicalPlan) -> bool {
    let clean = |e: &Expr| !has_sublink(e) && !reads_outer(e);
    match lp {
        LogicalPlan::Scan { .. } => true,
        LogicalPlan::Values { rows, .. } => rows.iter().flatten().all(clean),
        LogicalPlan::Filter { input, predicate } => clean(predicate) && plain_from(input),
        LogicalPlan::Project { input, exprs } => exprs.iter().all(clean) && plain_from(input),
        LogicalPlan::Join {
            left,
            right,
            on,
            lateral,
            ..
        } => {
            lateral.is_empty()
                && on.as_ref().is_none_or(clean)
                && plain_from(left)
                && plain_from(right)
        }
        _ => false,
    }
}

fn has_sublink(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| found |= matches!(x.kind, ExprKind::SubLink(_)));
    found
}

fn reads_outer(e: &Expr) -> bool {
    let mut outer = false;
    e.walk(&mut |x| outer |= matches!(x.kind, ExprKind::Outer(_)));
    outer
}

impl PulledUp {
    /// The join condition over the joined row: the outer row's `width` columns, then
    /// the subquery's.
    pub fn placed_cond(&self, width: usize) -> Option<Expr> {
        fn place(e: Expr, p: &PulledUp, width: usize) -> Expr {
            match e.kind {
                ExprKind::Column(OUTER_TEST) => p.test.clone().expect("IN has a test"),
                ExprKind::Column(i) => Expr::column(i + width, e.ty),
                ExprKind::Outer(i) => p.args[i].clone(),
                _ => e
                    .try_map_children(&mut |c| Ok(place(c, p, width)))
                    .expect("placing columns cannot fail"),
            }
        }
        conjoin(
            self.cond
                .iter()
                .map(|c| place(c.clone(), self, width))
                .collect(),
        )
    }
}
