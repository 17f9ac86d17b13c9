//! The join search (planner rule 9): the order in which a query's inner joins run.
//!
//! A tree of inner joins (a comma-separated FROM list, `JOIN ... ON`, `CROSS JOIN`) and
//! the WHERE above it are one join problem: its items (each FROM item that is not itself
//! an inner join: a table, a subquery, an outer join, a LATERAL join, each planned on
//! its own) and its conditions. A condition that reads one item goes into it; one that
//! reads none gates the plan; the others join. Up to [`EXACT_LIMIT`] items, dynamic
//! programming over the subsets of items, as PostgreSQL's `standard_join_search`: the
//! cheapest plan of each connected subset from the cheapest plans of each two halves
//! that a condition connects (sets no condition connects are joined last, by cross
//! products, cheapest first), each way of joining them costed (nested loop, index nested
//! loop, hash join, merge join), both halves tried on either side.
//! Past it, the linearized search of [`linear`] while its pairs stay within a budget;
//! beyond, a greedy search: repeatedly the join of two parts that a condition connects
//! with the fewest rows. The result's columns are put back in the order the query wrote them.

#[allow(unused_imports)]
use super::*;

mod classes;
mod linear;

pub use linear::{LINEAR_LIMIT, LINEAR_PAIRS};

use std::collections::HashMap;
use std::rc::Rc;

use crate::estimate::{Estimate, Estimator, InnerIndex, MergeInputs, Node, Rescan};

/// The most items solved exactly (PostgreSQL's `geqo_threshold` is 12; below it its
/// search is exhaustive too).
pub const EXACT_LIMIT: usize = 10;

/// The most pairs of connected parts the exact search may cost: a chain or a cycle of
/// 10 items has well under it, a star of 8 has 896. Past it the greedy search plans
/// (each costed pair takes microseconds: a star's exact search would cost more than the
/// query it plans, where PostgreSQL pays the same in its own exhaustive search).
pub const EXACT_PAIRS: usize = 512;

/// A condition of the problem, over the written columns, and the items it reads; an
/// equality of an equivalence class, its place there ([`classes`]).
struct Cond {
    expr: Expr,
    items: Items,
    pair: Option<classes::Pair>,
    /// Where a join lists it among the equalities PostgreSQL's classes hold (the place
    /// of the condition that made its class), after the other conditions; `None` for
    /// those.
    order: Option<usize>,
}

/// A set of a problem's items (bit `i`: item `i`), of any size.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Items(Vec<u64>);

impl Items {
    fn one(i: usize) -> Items {
        let mut s = Items::default();
        s.insert(i);
        s
    }

    fn insert(&mut self, i: usize) {
        if self.0.len() <= i / 64 {
            self.0.resize(i / 64 + 1, 0);
        }
        self.0[i / 64] |= 1 << (i % 64);
    }

    fn word(&self, k: usize) -> u64 {
        self.0.get(k).copied().unwrap_or(0)
    }

    fn union(&self, other: &Items) -> Items {
        let n = self.0.len().max(other.0.len());
        Items((0..n).map(|k| self.word(k) | other.word(k)).collect())
    }

    fn contains(&self, i: usize) -> bool {
        self.word(i / 64) & (1 << (i % 64)) != 0
    }

    fn intersects(&self, other: &Items) -> bool {
        self.0.iter().zip(&other.0).any(|(a, b)| a & b != 0)
    }

    /// Every item of `self` is in `other`.
    fn within(&self, other: &Items) -> bool {
        self.0
            .iter()
            .enumerate()
            .all(|(k, w)| w & !other.word(k) == 0)
    }

    fn len(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    /// The items, in order: each word's set bits, lowest first.
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(k, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(k * 64 + b)
            })
        })
    }

    /// The set as one machine word (the exact search's problems fit in one).
    fn small(&self) -> usize {
        self.word(0) as usize
    }
}

thread_local! {
    /// Pairs of parts the join search has costed on this thread (for tests that
    /// planning stays polynomial in the items).
    static PAIRS_COSTED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many pairs of parts this thread's join searches have costed so far.
pub fn join_pairs_costed() -> u64 {
    PAIRS_COSTED.with(|n| n.get())
}

/// The cheapest way found to join a set of items (PostgreSQL's path: how, not yet the
/// plan), with its estimate and its items in column order.
#[derive(Clone)]
struct Part {
    path: Rc<Path>,
    node: Node,
    layout: Vec<usize>,
    items: Items,
    /// The columns of its rows.
    width: usize,
}

/// How a part is made: an item, or a join of two parts (made into a plan only for the
/// search's result, [`Path::plan`]).
enum Path {
    Item(usize),
    Join {
        outer: Rc<Path>,
        inner: Rc<Path>,
        way: Box<Way>,
        inner_width: usize,
        /// Inner, or a semi or anti join to a pulled-up subquery item.
        kind: JoinKind,
    },
}

/// A way of joining, with the conditions over the joined row.
enum Way {
    /// A semi join made an inner join to its inner side made unique on the join keys
    /// (PostgreSQL's unique-ified inner path): the whole plan, the outer part's in it.
    Planned(Rc<Plan>),
    /// A nested loop, its inner part kept by a Materialize or read again.
    NestedLoop { on: Option<Expr>, materialize: bool },
    Hash {
        hash_conds: Vec<Expr>,
        left_keys: Vec<Expr>,
        right_keys: Vec<Expr>,
        on: Option<Expr>,
    },
    /// A merge join, each side in the order of its keys as [`Order`] says.
    Merge {
        merge_conds: Vec<Expr>,
        left_keys: Vec<Expr>,
        right_keys: Vec<Expr>,
        on: Option<Expr>,
        outer_order: Order,
        inner_order: Order,
    },
    /// The inner part is one table item, looked up through its index at position
    /// `index` (no index is copied for a way that may not be kept).
    Index {
        table: Arc<TableDesc>,
        index: usize,
        outer_key: Expr,
        key_cond: Expr,
        more_keys: Vec<(Expr, Expr)>,
        inner_filter: Option<Expr>,
        on: Option<Expr>,
    },
}

/// How a merge join's side comes in the order of its keys.
enum Order {
    /// It is in that order.
    AsIs,
    /// Sorted.
    Sort,
    /// The item (a table) scanned through an index in that order: this plan instead.
    Index(Rc<Plan>),
}

impl Order {
    fn apply(&self, plan: impl FnOnce() -> Plan, keys: &[Expr]) -> Plan {
        match self {
            Order::AsIs => plan(),
            Order::Sort => Plan::Sort {
                input: Box::new(plan()),
                keys: crate::merge::ascending(keys),
            },
            Order::Index(p) => (**p).clone(),
        }
    }
}

impl Path {
    /// The plan this path makes, of `items`.
    fn plan(&self, items: &[Plan]) -> Plan {
        match self {
            Path::Item(i) => items[*i].clone(),
            Path::Join {
                outer,
                inner,
                way,
                inner_width,
                kind,
            } => {
                if let Way::Planned(p) = &**way {
                    return (**p).clone();
                }
                let left = Box::new(outer.plan(items));
                match &**way {
                    Way::Planned(_) => unreachable!("returned above"),
                    Way::NestedLoop { on, materialize } => Plan::NestedLoopJoin {
                        left,
                        right: Box::new(inner.plan(items)),
                        kind: *kind,
                        on: on.clone(),
                        right_width: *inner_width,
                        lateral: None,
                        materialize: *materialize,
                    },
                    Way::Hash {
                        hash_conds,
                        left_keys,
                        right_keys,
                        on,
                    } => Plan::HashJoin {
                        left,
                        right: Box::new(inner.plan(items)),
                        kind: *kind,
                        hash_conds: hash_conds.clone(),
                        left_keys: left_keys.clone(),
                        right_keys: right_keys.clone(),
                        on: on.clone(),
                        right_width: *inner_width,
                    },
                    Way::Merge {
                        merge_conds,
                        left_keys,
                        right_keys,
                        on,
                        outer_order,
                        inner_order,
                    } => Plan::MergeJoin {
                        left: Box::new(outer_order.apply(|| *left, left_keys)),
                        right: Box::new(inner_order.apply(|| inner.plan(items), right_keys)),
                        kind: *kind,
                        merge_conds: merge_conds.clone(),
                        left_keys: left_keys.clone(),
                        right_keys: right_keys.clone(),
                        on: on.clone(),
                        right_width: *inner_width,
                    },
                    Way::Index {
                        table,
                        index,
                        outer_key,
                        key_cond,
                        more_keys,
                        inner_filter,
                        on,
                    } => Plan::IndexNestLoop {
                        left,
                        table: table.clone(),
                        index: table.indexes[*index].clone(),
                        outer_key: outer_key.clone(),
                        key_cond: key_cond.clone(),
                        more_keys: more_keys.clone(),
                        inner_filter: inner_filter.clone(),
                        on: on.clone(),
                        kind: *kind,
                    },
                }
            }
        }
    }
}

/// Is `lp` a join the search takes apart (an inner join without LATERAL)?
pub(crate) fn is_inner_join(lp: &LogicalPlan) -> bool {
    matches!(
        lp,
        LogicalPlan::Join {
            kind: JoinKind::Inner,
            lateral,
            ..
        } if lateral.is_empty()
    )
}

/// The items of an inner join tree in column order, each planned, and its conditions
/// over the tree's columns; `width`: the columns of the items so far. Explicit JOINs
/// and nested FROM lists are merged into the problem as PostgreSQL's
/// `deconstruct_recurse` merges them: an explicit JOIN's sides while they make at most
/// `join_collapse_limit` items (else each side is a problem of its own, and this join
/// joins the two), a FROM list's items always, and a JOIN among them while the list
/// stays within `from_collapse_limit`.
fn flatten(
    cx: &PlanContext<'_>,
    lp: LogicalPlan,
    items: &mut Vec<Item>,
    conds: &mut Vec<Expr>,
    width: &mut usize,
) {
    let s = cx.settings;
    match lp {
        LogicalPlan::Join {
            left,
            right,
            kind: JoinKind::Inner,
            on,
            lateral,
            explicit: true,
        } if lateral.is_empty() => {
            // The join's condition reads its own row, which starts here.
            let base = *width;
            if list_len(s, &left) + list_len(s, &right) <= s.join_collapse_limit {
                flatten(cx, *left, items, conds, width);
                flatten(cx, *right, items, conds, width);
            } else {
                item(cx, *left, items, width);
                item(cx, *right, items, width);
            }
            conds.extend(
                on.map(conjuncts)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|c| map_columns(c, &|i| i + base)),
            );
        }
        lp @ LogicalPlan::Join {
            explicit: false, ..
        } if is_inner_join(&lp) => {
            let base = *width;
            let mut on = Vec::new();
            let elements = from_list(lp, &mut on);
            conds.extend(on.into_iter().map(|c| map_columns(c, &|i| i + base)));
            let n = elements.len();
            let mut len = 0;
            for (k, e) in elements.into_iter().enumerate() {
                let sub = list_len(s, &e);
                if sub <= 1 || len + sub + (n - k - 1) <= s.from_collapse_limit {
                    len += sub;
                    flatten(cx, e, items, conds, width);
                } else {
                    len += 1;
                    item(cx, e, items, width);
                }
            }
        }
        other => item(cx, other, items, width),
    }
}

/// An item of a problem as [`flatten`] finds it: planned, or (a join of its own, under
/// the collapse limits) still to plan, once the conditions that read only it are known:
/// they are part of its own join problem, as PostgreSQL distributes a WHERE clause to
/// the relations it reads before it plans any join (rather than planned without them
/// and made again as each goes in).
enum Item {
    Planned(Box<Plan>),
    Pending {
        lp: Box<LogicalPlan>,
        types: Vec<DataType>,
    },
}

/// `lp`, one item of the problem: planned on its own, or kept to plan once its
/// conditions are known where it is an inner join (whose columns its tables tell).
fn item(cx: &PlanContext<'_>, lp: LogicalPlan, items: &mut Vec<Item>, width: &mut usize) {
    if let Some(types) = join_types(&lp) {
        *width += types.len();
        items.push(Item::Pending {
            lp: Box::new(lp),
            types,
        });
        return;
    }
    let p = plan_query(cx, lp);
    *width += p.width();
    items.push(Item::Planned(Box::new(p)));
}

/// The column types of `lp` where it is an inner join tree of table scans, or of
/// filters and joins of them (the join trees [`item`] keeps to plan later); `None`
/// otherwise.
fn join_types(lp: &LogicalPlan) -> Option<Vec<DataType>> {
    fn types(lp: &LogicalPlan, out: &mut Vec<DataType>) -> Option<()> {
        match lp {
            LogicalPlan::Scan { table } => out.extend(table.column_types()),
            LogicalPlan::Filter { input, .. } => types(input, out)?,
            LogicalPlan::Join {
                left,
                right,
                kind: JoinKind::Inner,
                lateral,
                ..
            } if lateral.is_empty() => {
                types(left, out)?;
                types(right, out)?;
            }
            _ => return None,
        }
        Some(())
    }
    let mut out = Vec::new();
    (is_inner_join(lp) && types(lp, &mut out).is_some()).then_some(out)
}

impl Item {
    fn width(&self) -> usize {
        match self {
            Item::Planned(p) => p.width(),
            Item::Pending { types, .. } => types.len(),
        }
    }

    fn column_types(&self) -> Option<Vec<DataType>> {
        match self {
            Item::Planned(p) => p.column_types(),
            Item::Pending { types, .. } => Some(types.clone()),
        }
    }

    /// The item planned, with the conditions `local` (over its columns) that read it
    /// alone.
    fn plan(self, cx: &PlanContext<'_>, local: Vec<Expr>) -> Plan {
        match (self, conjoin(local)) {
            (Item::Planned(p), None) => *p,
            (Item::Planned(p), Some(f)) => add_filter(cx, *p, f),
            (Item::Pending { lp, .. }, None) => plan_query(cx, *lp),
            (Item::Pending { lp, .. }, Some(predicate)) => plan_query(
                cx,
                LogicalPlan::Filter {
                    input: lp,
                    predicate,
                },
            ),
        }
    }
}

/// The items of a FROM list (comma joins, left-deep as the binder makes them), and any
/// condition they carry, over the list's columns.
fn from_list(lp: LogicalPlan, on: &mut Vec<Expr>) -> Vec<LogicalPlan> {
    match lp {
        LogicalPlan::Join {
            left,
            right,
            kind: JoinKind::Inner,
            on: cond,
            lateral,
            explicit: false,
        } if lateral.is_empty() => {
            let mut v = from_list(*left, on);
            v.push(*right);
            on.extend(cond.map(conjuncts).unwrap_or_default());
            v
        }
        other => vec![other],
    }
}

/// How many items `lp` makes in the problem above it (the length of PostgreSQL's
/// joinlist for it).
fn list_len(s: &PlannerSettings, lp: &LogicalPlan) -> usize {
    match lp {
        LogicalPlan::Join {
            left,
            right,
            kind: JoinKind::Inner,
            lateral,
            explicit: true,
            ..
        } if lateral.is_empty() => {
            let sum = list_len(s, left) + list_len(s, right);
            if sum <= s.join_collapse_limit { sum } else { 2 }
        }
        LogicalPlan::Join {
            explicit: false, ..
        } if is_inner_join(lp) => {
            let mut elements = Vec::new();
            let mut at = lp;
            while let LogicalPlan::Join {
                left,
                right,
                kind: JoinKind::Inner,
                lateral,
                explicit: false,
                ..
            } = at
                && lateral.is_empty()
            {
                elements.push(&**right);
                at = left;
            }
            elements.push(at);
            elements.reverse();
            let n = elements.len();
            let mut len = 0;
            for (k, e) in elements.into_iter().enumerate() {
                let sub = list_len(s, e);
                len += if sub <= 1 || len + sub + (n - k - 1) <= s.from_collapse_limit {
                    sub
                } else {
                    1
                };
            }
            len
        }
        _ => 1,
    }
}

/// A join problem: its items, planned with the conditions that read only them, where
/// each item's columns start and which item each column is of, the items' column types,
/// the conditions that join, and those that read no item.
struct Problem {
    /// The columns of the tree itself; the inner sides of semi joins made inner joins
    /// follow them.
    tree_width: usize,
    items: Vec<Plan>,
    widths: Vec<usize>,
    offsets: Vec<usize>,
    item_of: Vec<usize>,
    types: Vec<Vec<DataType>>,
    conds: Vec<Cond>,
    gate: Vec<Expr>,
    /// Per item: Inner, or for the inner side of a pulled-up semi or anti join (an
    /// EXISTS, NOT EXISTS or IN), its kind: joined only as the inner side of such a join,
    /// to a part that holds every other item its conditions read (`required`), and
    /// adding no columns (PostgreSQL's special joins in its join search).
    kinds: Vec<JoinKind>,
    required: Vec<Items>,
}

impl Problem {
    /// The problem of the inner join tree `tree` with the WHERE conjuncts `filter` over
    /// it; or, where it cannot be searched (items whose column types are unknown: the
    /// projection back to the written order needs them), the plan of its items joined in
    /// the order written.
    fn new(
        cx: &PlanContext<'_>,
        tree: LogicalPlan,
        filter: Vec<Expr>,
        semis: &mut Vec<crate::pullup::PulledUp>,
        special: bool,
    ) -> Result<Problem, (Box<Plan>, usize)> {
        let mut items = Vec::new();
        let mut exprs = Vec::new();
        let mut width = 0;
        flatten(cx, tree, &mut items, &mut exprs, &mut width);
        exprs.extend(filter);
        // Semi joins to a unique inner side: inner joins, items of the problem (not
        // where an item's column types are unknown: the problem is then joined in the
        // order written, and could not drop their columns).
        let tree_width = width;
        let typed = items.iter().all(|i| i.column_types().is_some());
        let mut kept = Vec::new();
        for p in semis.drain(..) {
            if p.kind == JoinKind::Semi && typed {
                let cond = p.placed_cond(width);
                let right = plan_query(cx, p.right.clone());
                // Its condition reads the tree's columns and its own (placed after).
                if crate::join::unique_on(&right, width, cond.as_ref()) {
                    width += right.width();
                    items.push(Item::Planned(Box::new(right)));
                    exprs.extend(cond.map(conjuncts).unwrap_or_default());
                    continue;
                }
            }
            kept.push(p);
        }
        // With `special`, the other semi and anti joins are items too, joined where the
        // search finds them cheapest (after the items their conditions read).
        let base_items = items.len();
        let mut specials = Vec::new();
        if special && typed {
            for p in kept.drain(..) {
                let cond = p.placed_cond(width);
                let right = plan_query(cx, p.right.clone());
                width += right.width();
                items.push(Item::Planned(Box::new(right)));
                specials.push(p.kind);
                exprs.extend(cond.map(conjuncts).unwrap_or_default());
            }
        }
        *semis = kept;
        let exprs: Vec<Expr> = crate::pushdown::equivalences_last(
            exprs
                .into_iter()
                .flat_map(crate::pushdown::factor_or)
                .collect(),
        );
        let widths: Vec<usize> = items.iter().map(Item::width).collect();
        let mut offsets = Vec::with_capacity(items.len());
        let mut item_of = Vec::new();
        for (i, w) in widths.iter().enumerate() {
            offsets.push(item_of.len());
            item_of.extend(std::iter::repeat_n(i, *w));
        }
        let types: Option<Vec<Vec<DataType>>> = items.iter().map(Item::column_types).collect();
        let Some(types) = types else {
            let items = items.into_iter().map(|i| i.plan(cx, vec![])).collect();
            return Err((Box::new(written_order(cx, items, exprs)), tree_width));
        };
        // Classes with a constant: each column equals it, in its own item.
        let exprs = classes::with_constants(exprs, &item_of, base_items);
        // Each condition to the items it reads: one goes into it, none gates the plan.
        let mut conds = Vec::new();
        let mut gate = Vec::new();
        let mut local: Vec<Vec<Expr>> = vec![Vec::new(); items.len()];
        for e in exprs {
            let mut mask = Items::default();
            e.walk(&mut |x| {
                if let ExprKind::Column(i) = x.kind
                    && let Some(&t) = item_of.get(i)
                {
                    mask.insert(t);
                }
            });
            match mask.len() {
                0 => gate.push(e),
                1 => {
                    let t = mask.iter().next().expect("one item");
                    local[t].push(shift_columns(e, offsets[t]));
                }
                _ => {
                    // An OR over several items restricts each item whose columns every
                    // arm tests: that test goes into the item too, the OR stays.
                    for t in mask.iter() {
                        if let Some(r) =
                            crate::pushdown::or_restriction(&e, &|c| item_of.get(c) == Some(&t))
                        {
                            local[t].push(shift_columns(r, offsets[t]));
                        }
                    }
                    conds.push(Cond {
                        expr: e,
                        items: mask,
                        pair: None,
                        order: None,
                    })
                }
            }
        }
        classes::derive(&mut conds, &item_of, &offsets, base_items, &mut local);
        let items: Vec<Plan> = items
            .into_iter()
            .zip(local)
            .map(|(item, local)| item.plan(cx, local))
            .collect();
        // A special item's required items: the others its conditions read.
        let n = items.len();
        let mut kinds = vec![JoinKind::Inner; n];
        let mut required = vec![Items::default(); n];
        for (k, kind) in specials.into_iter().enumerate() {
            let t = base_items + k;
            kinds[t] = kind;
            for c in conds.iter().filter(|c| c.items.iter().any(|i| i == t)) {
                required[t] = required[t].union(&c.items);
            }
            let mut without = Items::default();
            for i in required[t].iter().filter(|&i| i != t) {
                without.insert(i);
            }
            required[t] = without;
        }
        Ok(Problem {
            tree_width,
            items,
            widths,
            offsets,
            item_of,
            types,
            conds,
            gate,
            kinds,
            required,
        })
    }

    fn search<'a, 'c>(&'a self, cx: &'a PlanContext<'c>) -> Search<'a, 'c> {
        Search {
            cx,
            est: Estimator::new(*cx),
            items: &self.items,
            offsets: &self.offsets,
            item_of: &self.item_of,
            conds: &self.conds,
            kinds: &self.kinds,
            required: &self.required,
            index_orders: Default::default(),
            rows: Default::default(),
        }
    }

    /// Each item alone, as the search starts from them.
    fn parts(&self, search: &Search<'_, '_>) -> Vec<Part> {
        self.items
            .iter()
            .enumerate()
            .map(|(i, p)| Part {
                node: search.est.node(p),
                path: Rc::new(Path::Item(i)),
                layout: vec![i],
                items: Items::one(i),
                width: p.width(),
            })
            .collect()
    }
}

/// Plan the inner join tree `tree` with the WHERE conjuncts `filter` over it.
pub(crate) fn plan_joins(cx: &PlanContext<'_>, tree: LogicalPlan, filter: Vec<Expr>) -> Plan {
    plan_joins_with(cx, tree, filter, &mut Vec::new()).0
}

/// `plan` less its columns from `width` on (the inner sides of semi joins that joined as
/// inner joins).
pub(crate) fn keep_leading(plan: Plan, width: usize) -> Plan {
    if plan.width() <= width {
        return plan;
    }
    let Some(types) = plan.column_types() else {
        return plan;
    };
    Plan::Project {
        input: Box::new(plan),
        exprs: types[..width]
            .iter()
            .enumerate()
            .map(|(i, ty)| Expr::column(i, *ty))
            .collect(),
    }
}

/// [`plan_joins`], where `semis` are semi and anti joins pulled up from the WHERE (rule
/// 10) to go over the tree: each semi join whose inner side its condition makes unique
/// (PostgreSQL's `reduce_unique_semijoins`) becomes one more item of the problem, joined
/// by its condition, and is taken out of `semis`; its columns follow the tree's.
pub(crate) fn plan_joins_with(
    cx: &PlanContext<'_>,
    tree: LogicalPlan,
    filter: Vec<Expr>,
    semis: &mut Vec<crate::pullup::PulledUp>,
) -> (Plan, usize) {
    // Semi and anti joins (EXISTS, NOT EXISTS, IN) are items of the exact search, joined
    // where they cost least once their conditions' other items are there; past the
    // exact search they join above the tree (as where one has no plan among the items).
    let special = !semis.is_empty();
    // (Kept to plan again without them, where the exact search cannot place them.)
    let again = special.then(|| (tree.clone(), filter.clone(), semis.clone()));
    let problem = match Problem::new(cx, tree, filter, semis, special) {
        Ok(p) => p,
        Err((plan, width)) => return (*plan, width),
    };
    let n = problem.items.len();
    let search = problem.search(cx);
    let specials_joinable = problem
        .kinds
        .iter()
        .zip(&problem.required)
        .all(|(k, r)| *k == JoinKind::Inner || r.len() > 0);
    let exact = n <= EXACT_LIMIT && specials_joinable && search.exact_pairs(n) <= EXACT_PAIRS;
    let solved = if exact {
        search.exact(problem.parts(&search))
    } else {
        None
    };
    drop(search);
    let has_specials = problem.kinds.iter().any(|k| *k != JoinKind::Inner);
    let (problem, best) = match solved {
        Some(best) => (problem, best),
        None if has_specials => {
            let (tree, filter, original) = again.expect("kept where there are semi joins");
            *semis = original;
            let problem = match Problem::new(cx, tree, filter, semis, false) {
                Ok(p) => p,
                Err((plan, width)) => return (*plan, width),
            };
            let best = solve(&problem, cx);
            (problem, best)
        }
        None => {
            let best = solve(&problem, cx);
            (problem, best)
        }
    };
    let tree_width = problem.tree_width;
    let Problem {
        items,
        widths,
        types,
        gate,
        kinds,
        ..
    } = &problem;
    let n = items.len();
    // The columns back in the order written.
    let joined = best.path.plan(items);
    let plan = if best.layout.windows(2).all(|w| w[0] < w[1]) {
        joined
    } else {
        let mut start = vec![0; n];
        let mut at = 0;
        for &t in &best.layout {
            start[t] = at;
            at += widths[t];
        }
        let exprs = (0..n)
            .filter(|&t| kinds[t] == JoinKind::Inner)
            .flat_map(|t| {
                let start = start[t];
                types[t]
                    .iter()
                    .enumerate()
                    .map(move |(k, ty)| Expr::column(start + k, *ty))
            })
            .collect();
        Plan::Project {
            input: Box::new(joined),
            exprs,
        }
    };
    let plan = match conjoin(gate.clone()) {
        Some(g) => add_filter(cx, plan, g),
        None => plan,
    };
    (plan, tree_width)
}

/// The cheapest plan of `problem` (no semi or anti join items): exact, linearized or
/// greedy by its size.
fn solve(problem: &Problem, cx: &PlanContext<'_>) -> Part {
    let search = problem.search(cx);
    let n = problem.items.len();
    let parts = problem.parts(&search);
    if n <= EXACT_LIMIT
        && search.exact_pairs(n) <= EXACT_PAIRS
        && let Some(p) = search.exact(parts.clone())
    {
        return p;
    }
    if let Some(p) = search.linearized(&parts) {
        return p;
    }
    search.greedy(parts)
}

/// The items joined left to right, each condition at the first join that has its
/// columns (the plan before the join search, for items of unknown column types).
fn written_order(cx: &PlanContext<'_>, items: Vec<Plan>, exprs: Vec<Expr>) -> Plan {
    let mut items = items.into_iter();
    let mut plan = items.next().expect("a join has two items");
    for item in items {
        plan = make_join(cx, plan, item, JoinKind::Inner, None);
    }
    match conjoin(exprs) {
        Some(e) => add_filter(cx, plan, e),
        None => plan,
    }
}

struct Search<'a, 'c> {
    cx: &'a PlanContext<'c>,
    est: Estimator<'c>,
    items: &'a [Plan],
    offsets: &'a [usize],
    item_of: &'a [usize],
    conds: &'a [Cond],
    kinds: &'a [JoinKind],
    required: &'a [Items],
    /// Each item read through an index in the order of some of its columns (for merge
    /// joins), once asked for.
    #[allow(clippy::type_complexity)]
    index_orders: std::cell::RefCell<HashMap<(usize, Vec<usize>), Option<(Rc<Plan>, Estimate)>>>,
    /// Each joined set's rows, as first estimated.
    rows: std::cell::RefCell<HashMap<Items, f64>>,
}

impl Search<'_, '_> {
    /// The pairs of connected parts the exact search over `n` items would cost (each
    /// split of each connected subset into two connected halves, either side outer).
    fn exact_pairs(&self, n: usize) -> usize {
        let conds: Vec<usize> = self.conds.iter().map(|c| c.items.small()).collect();
        let connected_set = |m: usize| {
            let mut reached = 1usize << m.trailing_zeros();
            loop {
                let before = reached;
                for &c in &conds {
                    if c & !m == 0 && c & reached != 0 {
                        reached |= c;
                    }
                }
                if reached == before {
                    return reached == m;
                }
            }
        };
        let connected: Vec<bool> = (0..1usize << n)
            .map(|m| m != 0 && connected_set(m))
            .collect();
        let mut pairs = 0;
        for mask in 1..1usize << n {
            if mask.count_ones() < 2 || !connected[mask] {
                continue;
            }
            let mut a = 0usize;
            loop {
                a = a.wrapping_sub(mask) & mask;
                if a == mask {
                    break;
                }
                if connected[a] && connected[mask ^ a] {
                    pairs += 1;
                }
            }
            if pairs > EXACT_PAIRS {
                break;
            }
        }
        pairs
    }

    /// Dynamic programming over every subset of the items, smallest first; `None` where a
    /// connected set has no plan (a semi or anti join's item that only a cross product
    /// could reach: the caller plans without such items).
    fn exact(&self, parts: Vec<Part>) -> Option<Part> {
        let n = parts.len();
        let full = (1usize << n) - 1;
        let conds: Vec<usize> = self.conds.iter().map(|c| c.items.small()).collect();
        // The items of `within` that conditions inside `within` connect to `from`.
        let component = |from: usize, within: usize| {
            let mut reached = 1usize << from;
            loop {
                let before = reached;
                for &c in &conds {
                    if c & !within == 0 && c & reached != 0 {
                        reached |= c;
                    }
                }
                if reached == before {
                    return reached;
                }
            }
        };
        // Whether a condition reads both `a` and `b` (and nothing outside them).
        let connected = |a: usize, b: usize| {
            conds
                .iter()
                .any(|&c| c & a != 0 && c & b != 0 && c & !(a | b) == 0)
        };
        let mut best: Vec<Option<Part>> = vec![None; 1usize << n];
        for p in parts {
            let m = p.items.small();
            best[m] = Some(p);
        }
        // Each connected set of items (PostgreSQL forms join relations only where a
        // condition joins): its subsets by size, so that both halves of a split are
        // done before it.
        let mut components = Vec::new();
        let mut left = full;
        while left != 0 {
            let c = component(left.trailing_zeros() as usize, full);
            components.push(c);
            left &= !c;
        }
        for &comp in &components {
            let mut masks = Vec::new();
            let mut m = 0usize;
            loop {
                m = m.wrapping_sub(comp) & comp;
                if m == 0 {
                    break;
                }
                if m.count_ones() >= 2 && component(m.trailing_zeros() as usize, m) == m {
                    masks.push(m);
                }
            }
            masks.sort_by_key(|m| m.count_ones());
            for mask in masks {
                let mut found: Option<Part> = None;
                // Each split, the outer half's smallest subsets first (so that on a tie
                // the items written first stay outer, as PostgreSQL's order keeps them).
                let mut a = 0usize;
                loop {
                    a = a.wrapping_sub(mask) & mask;
                    if a == mask {
                        break;
                    }
                    let b = mask ^ a;
                    if let (Some(pa), Some(pb)) = (&best[a], &best[b])
                        && connected(a, b)
                        && let Some(p) = self.join(pa, pb)
                        && found.as_ref().is_none_or(|f| beats(&p, f))
                    {
                        found = Some(p);
                    }
                }
                best[mask] = found;
            }
        }
        // Sets no condition joins: by cross products, smallest first.
        let parts: Option<Vec<Part>> = components.iter().map(|&c| best[c].take()).collect();
        Some(self.greedy(parts?))
    }

    /// Greedy, as Fegaras's greedy operator ordering: while more than one part is left,
    /// join the two that a condition connects whose join has the fewest rows (each
    /// condition's selectivity estimated once), or, where no condition connects any
    /// two, the two with the fewest rows; each join made the cheapest way, the cheaper
    /// side outer. Per step: one pass over the conditions' items and two costed joins,
    /// so a problem of n items costs O(n x conditions) and 2(n - 1) join costings.
    fn greedy(&self, parts: Vec<Part>) -> Part {
        let all = Node::side_by_side(parts.iter().map(|p| &p.node));
        let sel: Vec<f64> = self
            .conds
            .iter()
            .map(|c| self.est.selectivity(&all, &c.expr))
            .collect();
        // Which part each item is in now.
        let mut part_of = vec![0usize; self.offsets.len()];
        for (i, p) in parts.iter().enumerate() {
            for t in p.items.iter() {
                part_of[t] = i;
            }
        }
        let mut parts: Vec<Option<Part>> = parts.into_iter().map(Some).collect();
        let mut left = parts.len();
        while left > 1 {
            // The conditions that join exactly two parts, by pair: their selectivity.
            let mut pairs: std::collections::BTreeMap<(usize, usize), f64> =
                std::collections::BTreeMap::new();
            // (Of a class's equalities between two parts, one: a join applies one.)
            let mut classes = std::collections::HashSet::new();
            for (c, s) in self.conds.iter().zip(&sel) {
                let mut touched: Vec<usize> = c.items.iter().map(|t| part_of[t]).collect();
                touched.sort_unstable();
                touched.dedup();
                if let [a, b] = touched[..]
                    && c.pair.is_none_or(|p| classes.insert((a, b, p.class)))
                {
                    *pairs.entry((a, b)).or_insert(1.0) *= s;
                }
            }
            let rows = |i: usize| parts[i].as_ref().map_or(f64::INFINITY, |p| p.node.est.rows);
            let (i, j) = if pairs.is_empty() {
                let mut by_rows: Vec<usize> =
                    (0..parts.len()).filter(|&i| parts[i].is_some()).collect();
                by_rows.sort_by(|&a, &b| rows(a).total_cmp(&rows(b)));
                (by_rows[0], by_rows[1])
            } else {
                pairs
                    .into_iter()
                    .map(|((a, b), s)| ((a, b), rows(a) * rows(b) * s))
                    .reduce(|best, p| if p.1 < best.1 { p } else { best })
                    .expect("a pair")
                    .0
            };
            let (pi, pj) = (
                parts[i].take().expect("a live part"),
                parts[j].take().expect("a live part"),
            );
            let p = match (self.join(&pi, &pj), self.join(&pj, &pi)) {
                (Some(a), Some(b)) => {
                    if beats(&b, &a) {
                        b
                    } else {
                        a
                    }
                }
                (a, b) => a.or(b).expect("two parts join"),
            };
            let at = parts.len();
            for t in p.items.iter() {
                part_of[t] = at;
            }
            parts.push(Some(p));
            left -= 1;
        }
        parts.into_iter().flatten().next().expect("one part")
    }

    /// Whether a condition reads both `a` and `b` (and nothing outside them).
    #[cfg(test)]
    fn connected(&self, a: &Items, b: &Items) -> bool {
        let ab = a.union(b);
        self.conds
            .iter()
            .any(|c| c.items.intersects(a) && c.items.intersects(b) && c.items.within(&ab))
    }

    /// The cheapest way to join `outer` and `inner` on the conditions between them;
    /// `None` where they may not be joined so: a semi or anti join's item is only ever
    /// the inner side, alone, of its own kind of join to a part holding every item its
    /// conditions read.
    fn join(&self, outer: &Part, inner: &Part) -> Option<Part> {
        let kind = match (&*outer.path, &*inner.path) {
            (Path::Item(t), _) if self.kinds[*t] != JoinKind::Inner => return None,
            (_, Path::Item(t)) if self.kinds[*t] != JoinKind::Inner => {
                if !self.required[*t].within(&outer.items) {
                    return None;
                }
                self.kinds[*t]
            }
            _ => JoinKind::Inner,
        };
        PAIRS_COSTED.with(|n| n.set(n.get() + 1));
        let items = outer.items.union(&inner.items);
        // Where each item's columns start in the joined row.
        let mut start = vec![0; self.offsets.len()];
        let mut at = 0;
        for &t in outer.layout.iter().chain(&inner.layout) {
            start[t] = at;
            at += self.item_width(t);
        }
        let left_width = outer.width;
        let remap = |e: &Expr| -> Expr {
            map_columns(e.clone(), &|g| {
                let t = self.item_of[g];
                start[t] + (g - self.offsets[t])
            })
        };
        // The conditions this join applies: those it completes (of a class's, one).
        let rest: Vec<Expr> = classes::applied(self.conds, &outer.items, &inner.items)
            .into_iter()
            .map(|c| remap(&c.expr))
            .collect();
        let mut ways: Vec<(Way, Node)> = Vec::new();
        // An index nested loop into an item that is a table scan.
        if let Path::Item(t) = *inner.path
            && let Some(l) = crate::join::index_lookup(self.cx, left_width, &self.items[t], &rest)
        {
            let (key_cond, more_keys, others) = crate::join::split_lookup(&l, &rest);
            let on = conjoin(others);
            let more_conds: Vec<Expr> = more_keys.iter().map(|(_, c)| c.clone()).collect();
            let node = self.est.index_nest_loop_node(
                &outer.node,
                &InnerIndex {
                    scan: usize::MAX - t,
                    table: l.table,
                    index: l.index,
                    key_cond: &key_cond,
                    more_conds: &more_conds,
                    filter: l.filter.as_ref(),
                    // PostgreSQL's loop_count: the rows of the items the outer value
                    // reads, the fewest.
                    loops: {
                        let mut fewest = f64::INFINITY;
                        l.outer_key.walk(&mut |e| {
                            if let ExprKind::Column(c) = e.kind
                                && let Some(&t) = outer
                                    .layout
                                    .iter()
                                    .find(|&&t| start[t] <= c && c < start[t] + self.item_width(t))
                            {
                                fewest = fewest.min(self.est.node(&self.items[t]).est.rows);
                            }
                        });
                        fewest.is_finite().then_some(fewest.max(1.0))
                    },
                },
                kind,
                on.as_ref(),
            );
            let way = Way::Index {
                table: l.table.clone(),
                index: l
                    .table
                    .indexes
                    .iter()
                    .position(|i| std::ptr::eq(i, l.index))
                    .expect("the lookup's index is one of its table's"),
                outer_key: l.outer_key,
                key_cond,
                more_keys,
                inner_filter: l.filter.clone(),
                on,
            };
            ways.push((way, node));
        }
        // A nested loop over the inner side read again for each outer row, and over it
        // kept by a Materialize (PostgreSQL tries both, unless the inner side keeps its
        // rows itself).
        let on = conjoin(rest.clone());
        let (unique, rescan) = match *inner.path {
            Path::Item(t) => (
                crate::join::inner_unique(kind, &self.items[t], left_width, on.as_ref()),
                Rescan::of(&self.items[t], false, false),
            ),
            _ => (false, Rescan::Rerun),
        };
        let mut loops = vec![(false, rescan)];
        if rescan == Rescan::Rerun && self.cx.settings.enable_material {
            loops.push((true, Rescan::Materialize));
        }
        for (materialize, rescan) in loops {
            let node = self.est.nested_loop_node(
                &outer.node,
                &inner.node,
                kind,
                on.as_ref(),
                rescan,
                unique,
            );
            let on = on.clone();
            ways.push((Way::NestedLoop { on, materialize }, node));
        }
        // A hash join on the equalities between them, and a merge join on the same.
        if let Some(h) = crate::join::hash_clauses(left_width, &rest) {
            let on = conjoin(h.others);
            let node = self.est.hash_join_node(
                &outer.node,
                &inner.node,
                kind,
                &h.hash_conds,
                on.as_ref(),
                unique,
            );
            let way = Way::Hash {
                hash_conds: h.hash_conds.clone(),
                left_keys: h.left_keys.clone(),
                right_keys: h.right_keys.clone(),
                on: on.clone(),
            };
            ways.push((way, node));
            let (outer_order, o) = self.ordered(outer, &h.left_keys);
            let (mut inner_order, mut i) = self.ordered(inner, &h.right_keys);
            // A sorted outer side takes a sorted inner side (PostgreSQL's
            // sort_inner_and_outer); an index scan for the inner side's order goes with
            // an outer side that has its order (match_unsorted_outer).
            if matches!(outer_order, Order::Sort) && matches!(inner_order, Order::Index(_)) {
                inner_order = Order::Sort;
                i = self.est.sorted(&inner.node);
            }
            // A merge join costs at least both sides' start-up (their sorts): where that
            // is more than a way already costed, it cannot win (PostgreSQL's
            // add_path_precheck on the initial cost), and it is not costed.
            let best = ways
                .iter()
                .map(|(_, n)| n.est.total)
                .fold(f64::INFINITY, f64::min);
            if o.startup + i.startup <= best {
                let node = self.est.merge_join_node(
                    &outer.node,
                    &inner.node,
                    kind,
                    &h.hash_conds,
                    on.as_ref(),
                    MergeInputs {
                        outer: o,
                        inner: i,
                        unique,
                        inner_sorted: matches!(inner_order, Order::Sort),
                    },
                );
                let way = Way::Merge {
                    merge_conds: h.hash_conds,
                    left_keys: h.left_keys,
                    right_keys: h.right_keys,
                    on,
                    outer_order,
                    inner_order,
                };
                // PostgreSQL makes merge paths first: first on a tie.
                ways.insert(0, (way, node));
            }
        }
        // A system view asked for the rows of the relation an outer value names, per
        // outer row (`join::view_lookup`).
        if let Path::Item(t) = *inner.path
            && matches!(self.items[t], Plan::SystemView { key: None, .. })
        {
            let outer_plan = outer.path.plan(self.items);
            if let Some(plan) = crate::join::view_lookup(&outer_plan, &self.items[t], kind, &rest) {
                // A fresh estimator: the search's remembers nodes by address.
                let node = Estimator::new(*self.cx).node(&plan);
                ways.push((Way::Planned(Rc::new(plan)), node));
            }
        }
        // A semi join may also make its inner side unique on the join keys and join it
        // as an inner join, on either side.
        if kind == JoinKind::Semi
            && let Path::Item(t) = *inner.path
        {
            let outer_plan = outer.path.plan(self.items);
            for plan in crate::join::unique_inner_joins(self.cx, &outer_plan, &self.items[t], &rest)
            {
                // A fresh estimator: the search's remembers nodes by address, and this
                // plan may not outlive the comparison.
                let node = Estimator::new(*self.cx).node(&plan);
                ways.push((Way::Planned(Rc::new(plan)), node));
            }
        }
        let (way, mut node) = ways
            .into_iter()
            .reduce(|best, w| if cheaper(&w.1, &best.1) { w } else { best })?;
        // The rows of a set of items are one estimate, whichever way it is joined (as
        // PostgreSQL's join relation's): of a class's equalities, each join applies the
        // pair its sides give, so the product of their selectivities may differ by join
        // tree, and a search that keeps the cheapest plan per set must see each set with
        // one row count above it.
        node.est.rows = *self
            .rows
            .borrow_mut()
            .entry(items.clone())
            .or_insert(node.est.rows);
        // A semi or anti join returns its outer part's columns alone.
        let mut layout = outer.layout.clone();
        let mut width = outer.width;
        if kind == JoinKind::Inner {
            layout.extend(&inner.layout);
            width += inner.width;
        }
        Some(Part {
            path: Rc::new(Path::Join {
                outer: outer.path.clone(),
                inner: inner.path.clone(),
                way: Box::new(way),
                inner_width: inner.width,
                kind,
            }),
            node,
            layout,
            items,
            width,
        })
    }

    /// How `part` comes in the order of `keys` (over its row), and its estimate so: as
    /// it is, through an index of the table it scans (once per item and keys), or sorted,
    /// whichever costs less.
    fn ordered(&self, part: &Part, keys: &[Expr]) -> (Order, Estimate) {
        let Path::Item(t) = *part.path else {
            return (Order::Sort, self.est.sorted(&part.node));
        };
        let item = &self.items[t];
        if crate::merge::in_key_order(item, keys) {
            return (Order::AsIs, part.node.est);
        }
        let sorted = self.est.sorted(&part.node);
        let cols: Vec<usize> = keys
            .iter()
            .map(|k| match k.kind {
                ExprKind::Column(c) => c,
                _ => usize::MAX,
            })
            .collect();
        let indexed = self
            .index_orders
            .borrow_mut()
            .entry((t, cols))
            .or_insert_with(|| {
                crate::merge::index_ordered(self.cx, item, keys).map(|p| {
                    let p = Rc::new(p);
                    let e = self.est.estimate(&p);
                    (p, e)
                })
            })
            .clone();
        match indexed {
            Some((p, e)) if e.total < sorted.total => (Order::Index(p), e),
            _ => (Order::Sort, sorted),
        }
    }

    fn item_width(&self, t: usize) -> usize {
        let end = self
            .offsets
            .get(t + 1)
            .copied()
            .unwrap_or(self.item_of.len());
        end - self.offsets[t]
    }
}

/// Is `new` cheaper than `old`: in total, then to its first row; an earlier plan stays
/// on a tie. (No add_path fuzz: a search that keeps one plan per set of items must keep
/// the cheapest, or it misses the cheapest plan of the whole.)
fn beats(new: &Part, old: &Part) -> bool {
    cheaper(&new.node, &old.node)
}

fn cheaper(new: &Node, old: &Node) -> bool {
    let (n, o) = (&new.est, &old.est);
    n.total < o.total || (n.total == o.total && n.startup < o.startup)
}

/// `e` with each column `i` renumbered `to(i)`.
fn map_columns(e: Expr, to: &dyn Fn(usize) -> usize) -> Expr {
    match e.kind {
        ExprKind::Column(i) => Expr::column(to(i), e.ty),
        _ => e
            .try_map_children(&mut |c| Ok(map_columns(c, to)))
            .expect("renumbering columns cannot fail"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog::{ColumnDesc, TableDesc};
    use std::collections::HashMap;

    /// Relation sizes set by the test.
    struct Sizes(HashMap<common::ids::RelId, u64>);

    impl RelSizes for Sizes {
        fn pages(&self, rel: common::ids::RelId) -> u64 {
            self.0.get(&rel).copied().unwrap_or(0)
        }
    }

    /// A small deterministic generator (xorshift).
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    fn table(i: u32) -> Arc<TableDesc> {
        let col = |name: &str| ColumnDesc::new(name, DataType::Int4);
        Arc::new(TableDesc {
            oid: 100 + i,
            rel: 100 + i,
            name: format!("t{i}"),
            columns: vec![col("a"), col("b")].into(),
            ..Default::default()
        })
    }

    /// `tables` written as a comma-separated FROM list.
    fn comma_list(tables: &[Arc<TableDesc>]) -> LogicalPlan {
        let mut tree = LogicalPlan::Scan {
            table: tables[0].clone(),
        };
        for t in &tables[1..] {
            tree = LogicalPlan::Join {
                left: Box::new(tree),
                right: Box::new(LogicalPlan::Scan { table: t.clone() }),
                kind: JoinKind::Inner,
                on: None,
                lateral: vec![],
                explicit: false,
            };
        }
        tree
    }

    fn eq(l: usize, r: usize) -> Expr {
        Expr::new(
            ExprKind::Binary(
                BinaryOp::Eq,
                Box::new(Expr::column(l, DataType::Int4)),
                Box::new(Expr::column(r, DataType::Int4)),
            ),
            DataType::Bool,
        )
    }

    /// `n` tables of random sizes written as a comma list, each but the first joined
    /// by an equality to a random earlier one (a connected graph), plus random extra
    /// equalities.
    fn problem(rng: &mut Rng, n: usize) -> (Sizes, LogicalPlan, Vec<Expr>) {
        let tables: Vec<_> = (0..n as u32).map(table).collect();
        let sizes = Sizes(
            tables
                .iter()
                .map(|t| (t.rel, 1 + rng.below(5000)))
                .collect(),
        );
        let tree = comma_list(&tables);
        let mut conds = Vec::new();
        for i in 1..n {
            let j = rng.below(i as u64) as usize;
            conds.push(eq(
                2 * i + rng.below(2) as usize,
                2 * j + rng.below(2) as usize,
            ));
        }
        for _ in 0..rng.below(3) {
            let (i, j) = (rng.below(n as u64) as usize, rng.below(n as u64) as usize);
            if i != j {
                conds.push(eq(2 * i, 2 * j + 1));
            }
        }
        (sizes, tree, conds)
    }

    /// Every join tree of `items` whose joins are each connected by a condition: the
    /// cheapest way of each, by the search's own costing.
    fn every_tree(search: &Search<'_, '_>, parts: &[Part], items: usize) -> Vec<Part> {
        if items.count_ones() == 1 {
            return vec![parts[items.trailing_zeros() as usize].clone()];
        }
        let mut out = Vec::new();
        let mut a: usize = 0;
        loop {
            a = a.wrapping_sub(items) & items;
            if a == items {
                break;
            }
            let b = items ^ a;
            let set = |m: usize| Items(vec![m as u64]);
            if !search.connected(&set(a), &set(b)) {
                continue;
            }
            for pa in every_tree(search, parts, a) {
                for pb in every_tree(search, parts, b) {
                    out.extend(search.join(&pa, &pb));
                }
            }
        }
        out
    }

    #[test]
    fn the_exact_search_finds_the_cheapest_of_every_join_tree() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let settings = PlannerSettings::default();
        let catalog = catalog::CatalogSnapshot::default();
        for round in 0..60 {
            let n = 2 + round % 5;
            let (sizes, tree, conds) = problem(&mut rng, n);
            let cx = PlanContext {
                snapshot_xmin: u64::MAX,
                catalog: &catalog,
                sizes: &sizes,
                settings: &settings,
                subplans: None,
            };
            let Ok(problem) = Problem::new(&cx, tree, conds, &mut Vec::new(), false) else {
                panic!("tables of known types are searched");
            };
            let search = problem.search(&cx);
            let parts = problem.parts(&search);
            let all = (1usize << n) - 1;
            let cheapest = every_tree(&search, &parts, all)
                .into_iter()
                .map(|p| p.node.est.total)
                .fold(f64::INFINITY, f64::min);
            let found = search.exact(parts).expect("a plan").node.est.total;
            // Equal but for floating point: the same costs summed along different trees.
            assert!(
                (found - cheapest).abs() <= cheapest * 1e-6,
                "round {round}: {n} tables, the search found {found}, the cheapest tree costs {cheapest}"
            );
        }
    }

    /// 14 tables (past the exact search: linearized, or greedy past its budget) come
    /// out in the written column order over a plan of every table once.
    #[test]
    fn a_searched_comma_list_joins_every_item_once() {
        let mut rng = Rng(12345);
        let settings = PlannerSettings::default();
        let catalog = catalog::CatalogSnapshot::default();
        let (sizes, tree, conds) = problem(&mut rng, 14);
        let cx = PlanContext {
            snapshot_xmin: u64::MAX,
            catalog: &catalog,
            sizes: &sizes,
            settings: &settings,
            subplans: None,
        };
        let plan = plan_query(
            &cx,
            LogicalPlan::Filter {
                input: Box::new(tree),
                predicate: conjoin(conds).expect("conditions"),
            },
        );
        // The columns back in the written order, over a plan of every table once.
        assert_eq!(plan.width(), 28);
        fn scans(p: &Plan, out: &mut Vec<String>) {
            match p {
                Plan::SeqScan { table, .. } | Plan::IndexScan { table, .. } => {
                    out.push(table.name.clone())
                }
                _ => p.children().into_iter().for_each(|c| scans(c, out)),
            }
        }
        let mut names = Vec::new();
        scans(&plan, &mut names);
        names.sort();
        let mut want: Vec<String> = (0..14).map(|i| format!("t{i}")).collect();
        want.sort();
        assert_eq!(names, want);
    }

    /// Planning stays polynomial: a comma list of 1,000 tables in a chain is joined by
    /// the greedy search costing 2 pairs per join, and every table appears once.
    #[test]
    fn a_thousand_tables_plan_with_polynomially_many_pairs() {
        let n = 1000;
        let tables: Vec<_> = (0..n as u32).map(table).collect();
        let sizes = Sizes(
            tables
                .iter()
                .map(|t| (t.rel, 1 + (t.rel as u64 * 37) % 500))
                .collect(),
        );
        let tree = comma_list(&tables);
        let conds = (1..n).map(|i| eq(2 * i, 2 * (i - 1) + 1)).collect();
        let settings = PlannerSettings::default();
        let catalog = catalog::CatalogSnapshot::default();
        let cx = PlanContext {
            snapshot_xmin: u64::MAX,
            catalog: &catalog,
            sizes: &sizes,
            settings: &settings,
            subplans: None,
        };
        let before = join_pairs_costed();
        let plan = plan_query(
            &cx,
            LogicalPlan::Filter {
                input: Box::new(tree),
                predicate: conjoin(conds).expect("conditions"),
            },
        );
        let pairs = join_pairs_costed() - before;
        assert_eq!(pairs, 2 * (n as u64 - 1), "pairs costed for {n} tables");
        assert_eq!(plan.width(), 2 * n);
    }

    /// Every join tree of the run `i..=j` of `order` whose joins each put together two
    /// runs that conditions connect: the cheapest way of each.
    fn every_run_tree(
        search: &Search<'_, '_>,
        parts: &[Part],
        order: &[usize],
        connected: &[bool],
        (i, j): (usize, usize),
    ) -> Vec<Part> {
        let len = order.len();
        if i == j {
            return vec![parts[order[i]].clone()];
        }
        if !connected[i * len + j] {
            return vec![];
        }
        let mut out = Vec::new();
        for k in i..j {
            for a in every_run_tree(search, parts, order, connected, (i, k)) {
                for b in every_run_tree(search, parts, order, connected, (k + 1, j)) {
                    out.extend(search.join(&a, &b));
                    out.extend(search.join(&b, &a));
                }
            }
        }
        out
    }

    /// The linearized search's two halves on random connected problems: IKKBZ's order
    /// holds every item once and each item after the first joins one before it (a
    /// left-deep order without cross products), and the dynamic programming over the
    /// order's runs finds the cheapest of every tree built from those runs.
    #[test]
    fn the_linearized_search_finds_the_cheapest_tree_over_its_order() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let settings = PlannerSettings::default();
        let catalog = catalog::CatalogSnapshot::default();
        for round in 0..40 {
            let n = 2 + round % 6;
            let (sizes, tree, conds) = problem(&mut rng, n);
            let cx = PlanContext {
                snapshot_xmin: u64::MAX,
                catalog: &catalog,
                sizes: &sizes,
                settings: &settings,
                subplans: None,
            };
            let Ok(problem) = Problem::new(&cx, tree, conds, &mut Vec::new(), false) else {
                panic!("tables of known types are searched");
            };
            let search = problem.search(&cx);
            let parts = problem.parts(&search);
            let graph = search.graph(&parts);
            let order = Search::linear_order((1u128 << n) - 1, &graph);
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(
                sorted,
                (0..n).collect::<Vec<_>>(),
                "round {round}: {order:?}"
            );
            for (p, &t) in order.iter().enumerate().skip(1) {
                assert!(
                    order[..p].iter().any(|&u| graph.linked[t * n + u]),
                    "round {round}: {t} joins nothing before it in {order:?}"
                );
            }
            let connected = Search::runs_connected(&order, &graph.conds);
            let cheapest = every_run_tree(&search, &parts, &order, &connected, (0, n - 1))
                .into_iter()
                .map(|p| p.node.est.total)
                .fold(f64::INFINITY, f64::min);
            let found = search
                .runs(&parts, &order, &connected)
                .expect("a connected problem has a plan")
                .node
                .est
                .total;
            assert!(
                (found - cheapest).abs() <= cheapest * 1e-6,
                "round {round}: {n} tables, the runs' search found {found}, the cheapest run tree costs {cheapest}"
            );
        }
    }

    /// A star of 100 dimensions around a fact table filtered to a few rows is searched
    /// linearly (its runs connect only through the fact table: a few hundred pairs, not
    /// a million) and every table appears once; a chain of 100 would cost more than the
    /// budget and is searched greedily.
    #[test]
    fn a_star_of_a_hundred_is_searched_linearly_and_a_chain_greedily() {
        let n = 101;
        let tables: Vec<_> = (0..n as u32).map(table).collect();
        let sizes = Sizes(tables.iter().map(|t| (t.rel, 10)).collect());
        let settings = PlannerSettings::default();
        let catalog = catalog::CatalogSnapshot::default();
        let cx = PlanContext {
            snapshot_xmin: u64::MAX,
            catalog: &catalog,
            sizes: &sizes,
            settings: &settings,
            subplans: None,
        };
        // Table 0 is the fact table: its column b fixed, each dimension's a = its a.
        let one = Expr::constant(common::Value::Int4(1), DataType::Int4);
        let mut star: Vec<Expr> = (1..n).map(|i| eq(2 * i, 0)).collect();
        star.push(Expr::new(
            ExprKind::Binary(
                BinaryOp::Eq,
                Box::new(Expr::column(1, DataType::Int4)),
                Box::new(one),
            ),
            DataType::Bool,
        ));
        let Ok(problem) = Problem::new(&cx, comma_list(&tables), star, &mut Vec::new(), false)
        else {
            panic!("tables of known types are searched");
        };
        let search = problem.search(&cx);
        let parts = problem.parts(&search);
        let before = join_pairs_costed();
        let best = search
            .linearized(&parts)
            .expect("a star is within the budget");
        let pairs = join_pairs_costed() - before;
        assert!(pairs <= 4 * n as u64, "{pairs} pairs for a star of {n}");
        let mut items: Vec<usize> = best.layout.clone();
        items.sort_unstable();
        assert_eq!(items, (0..n).collect::<Vec<_>>());

        let chain: Vec<Expr> = (1..n).map(|i| eq(2 * i, 2 * (i - 1) + 1)).collect();
        let Ok(problem) = Problem::new(&cx, comma_list(&tables), chain, &mut Vec::new(), false)
        else {
            panic!("tables of known types are searched");
        };
        let search = problem.search(&cx);
        let parts = problem.parts(&search);
        let before = join_pairs_costed();
        assert!(
            search.linearized(&parts).is_none(),
            "a chain of 101 is over the budget"
        );
        assert_eq!(
            join_pairs_costed(),
            before,
            "nothing costed before giving up"
        );
    }
}
