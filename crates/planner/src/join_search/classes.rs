//! Equivalence classes (planner rule 16; PostgreSQL's `equivclass.c`): the columns a
//! problem's equalities make equal. `a.x = b.y AND b.y = c.z` makes `{a.x, b.y, c.z}`
//! one class, so `a` and `c` may join directly on `a.x = c.z`, a condition the query
//! does not write (TPC-H Q9 joins `partsupp` to `part` so). Every pair of a class's
//! members from different items is a condition of the problem (its join graph gains the
//! edges), and a join applies one equality per class between its sides, as PostgreSQL's
//! `generate_join_implied_equalities` does: the rest would say again what the sides
//! already hold, and count their selectivity twice.
//!
//! A member is a plain column, and a class's equalities are between columns of one type
//! (whose `=` is transitive), of items that are not the inner side of a semi or anti
//! join. Classes come from the conditions in the order written, each equality adding its
//! left column, then its right (PostgreSQL's member order, which decides which pair a
//! join takes: its outer side's first member and its inner side's first).
//!
//! A class with a constant (`a.x = 5 AND a.x = b.y`, or a parameter) is first made into
//! one `member = constant` condition per column ([`with_constants`]): `b.y = 5` filters
//! `b`, and no equality joins `a` and `b` (PostgreSQL's
//! `generate_base_implied_equalities_const`).

use super::*;
use std::collections::HashSet;

/// Classes larger than this keep their written equalities only: every pair would be
/// quadratic in conditions, where the search is linear in them (a 1,000-table chain on
/// one column).
const MAX_MEMBERS: usize = 16;

/// A condition's place in a class: the class (by creation, PostgreSQL's order of
/// `eq_classes`) and its two members, each as its index in the class and its item.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pair {
    pub class: usize,
    pub a: (usize, usize),
    pub b: (usize, usize),
}

impl Pair {
    /// The pair's order for a join with `outer` on its outer side: (outer member's index,
    /// inner member's index); the lowest is the one the join applies.
    pub(super) fn key(&self, outer: &Items) -> (usize, usize) {
        if outer.contains(self.a.1) {
            (self.a.0, self.b.0)
        } else {
            (self.b.0, self.a.0)
        }
    }
}

/// Classes as PostgreSQL's `process_equivalence` builds them: an equality of two members
/// adds the one not yet in a class to the other's, or makes a class of both, or merges
/// the second's class into the first's (which keeps its place). Members in the order
/// added; classes by their place (the order of creation).
struct Classes<M> {
    classes: Vec<Option<Class<M>>>,
    class_of: HashMap<M, usize>,
}

struct Class<M> {
    members: Vec<M>,
    /// The equalities that made it, by place.
    sources: Vec<usize>,
    ty: DataType,
}

impl<M: Copy + Eq + std::hash::Hash> Classes<M> {
    fn new() -> Classes<M> {
        Classes {
            classes: Vec::new(),
            class_of: HashMap::new(),
        }
    }

    /// The equality `source` of `a` and `b`, of type `ty`.
    fn add(&mut self, a: M, b: M, source: usize, ty: DataType) {
        let at = match (
            self.class_of.get(&a).copied(),
            self.class_of.get(&b).copied(),
        ) {
            (Some(x), Some(y)) if x == y => x,
            (Some(x), Some(y)) => {
                let moved = self.classes[y].take().expect("a live class");
                for &m in &moved.members {
                    self.class_of.insert(m, x);
                }
                let into = self.classes[x].as_mut().expect("a live class");
                into.members.extend(moved.members);
                into.sources.extend(moved.sources);
                x
            }
            (Some(x), None) => {
                self.classes[x]
                    .as_mut()
                    .expect("a live class")
                    .members
                    .push(b);
                self.class_of.insert(b, x);
                x
            }
            (None, Some(y)) => {
                self.classes[y]
                    .as_mut()
                    .expect("a live class")
                    .members
                    .push(a);
                self.class_of.insert(a, y);
                y
            }
            (None, None) => {
                let at = self.classes.len();
                self.class_of.insert(a, at);
                self.class_of.insert(b, at);
                self.classes.push(Some(Class {
                    members: vec![a, b],
                    sources: Vec::new(),
                    ty,
                }));
                at
            }
        };
        self.classes[at]
            .as_mut()
            .expect("a live class")
            .sources
            .push(source);
    }

    /// The live classes, by place.
    fn into_live(self) -> impl Iterator<Item = Class<M>> {
        self.classes.into_iter().flatten()
    }
}

/// A member of a class while [`with_constants`] builds them: a column of the problem,
/// or a constant, by its place among the distinct constants (equal constants are one
/// member, as PostgreSQL matches them).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Member {
    Column(usize),
    Constant(usize),
}

/// `e`'s two sides where it is an equality of one type that a class can hold: two
/// columns (`Ok`), or a column and a value fixed for the statement (`Err`:
/// `scan::is_constant`, not NULL), the column first.
fn members_equal(e: &Expr) -> Option<(usize, Result<usize, &Expr>)> {
    let ExprKind::Binary(BinaryOp::Eq, l, r) = &e.kind else {
        return None;
    };
    if l.ty != r.ty || !l.ty.hash_joins_with(&r.ty) {
        return None;
    }
    // Fixed for the statement (`scan::is_constant`: casts of constants, parameters,
    // outer values, uncorrelated subqueries), and not a NULL.
    let fixed = |x: &Expr| {
        crate::scan::is_constant(x) && !matches!(&x.kind, ExprKind::Const(v) if v.is_null())
    };
    match (&l.kind, &r.kind) {
        (ExprKind::Column(a), ExprKind::Column(b)) => Some((*a, Ok(*b))),
        (ExprKind::Column(a), _) if fixed(r) => Some((*a, Err(&**r))),
        (_, ExprKind::Column(b)) if fixed(l) => Some((*b, Err(&**l))),
        _ => None,
    }
}

/// The conditions `exprs` (over the problem's columns, `item_of` each column's item;
/// items from `special_from` on are semi and anti joins' inner sides), each class that
/// holds one constant made into `column = constant` for each of its columns, in the
/// class's member order, after the other conditions; the equalities that made the
/// class are dropped (they hold once every column equals the constant). A class of one
/// column and its constant, from one condition, stays as written; one with two
/// different constants too (PostgreSQL would test them against each other).
pub(super) fn with_constants(
    exprs: Vec<Expr>,
    item_of: &[usize],
    special_from: usize,
) -> Vec<Expr> {
    // An equality of columns of the problem's own items (not a semi or anti join's).
    let ours = |c: usize| item_of.get(c).is_some_and(|&t| t < special_from);
    let source =
        |e| members_equal(e).filter(|(a, b)| ours(*a) && b.as_ref().map_or(true, |&b| ours(b)));
    // Most problems have no constant equality: nothing to do.
    if !exprs.iter().any(|e| matches!(source(e), Some((_, Err(_))))) {
        return exprs;
    }
    let mut constants: Vec<&Expr> = Vec::new();
    let mut classes = Classes::new();
    for (k, e) in exprs.iter().enumerate() {
        let Some((a, b)) = source(e) else {
            continue;
        };
        let b = match b {
            Ok(c) => Member::Column(c),
            Err(k) => Member::Constant(match constants.iter().position(|c| *c == k) {
                Some(i) => i,
                None => {
                    constants.push(k);
                    constants.len() - 1
                }
            }),
        };
        classes.add(Member::Column(a), b, k, e_type(e));
    }
    let mut dropped = vec![false; exprs.len()];
    let mut made = Vec::new();
    for class in classes.into_live() {
        let held: Vec<usize> = class
            .members
            .iter()
            .filter_map(|m| match m {
                Member::Constant(k) => Some(*k),
                Member::Column(_) => None,
            })
            .collect();
        let [constant] = held[..] else {
            continue;
        };
        if class.members.len() == 2 && class.sources.len() == 1 {
            continue;
        }
        for &k in &class.sources {
            dropped[k] = true;
        }
        for m in &class.members {
            if let Member::Column(c) = m {
                made.push(Expr::new(
                    ExprKind::Binary(
                        BinaryOp::Eq,
                        Box::new(Expr::column(*c, class.ty)),
                        Box::new(constants[constant].clone()),
                    ),
                    DataType::Bool,
                ));
            }
        }
    }
    exprs
        .into_iter()
        .zip(dropped)
        .filter(|(_, d)| !d)
        .map(|(e, _)| e)
        .chain(made)
        .collect()
}

/// The type an equality compares in (its left operand's).
fn e_type(e: &Expr) -> DataType {
    match &e.kind {
        ExprKind::Binary(_, l, _) => l.ty,
        _ => e.ty,
    }
}

/// The two columns of `e` where it is `column = column` of one type that can be an
/// equivalence (btree equality).
fn columns_equal(e: &Expr) -> Option<(usize, usize, DataType)> {
    let ExprKind::Binary(BinaryOp::Eq, l, r) = &e.kind else {
        return None;
    };
    match (&l.kind, &r.kind) {
        (ExprKind::Column(a), ExprKind::Column(b))
            if l.ty == r.ty && l.ty.hash_joins_with(&r.ty) && a != b =>
        {
            Some((*a, *b, l.ty))
        }
        _ => None,
    }
}

/// Find the classes of `conds` (over the problem's columns; `item_of` each column's
/// item, items from `special_from` on are semi and anti joins' inner sides): each
/// written equality of a class gets its [`Pair`], each pair of members from different
/// items that no condition equates becomes a condition, and members of one item are
/// equated in it (`local`, over its own columns from `offsets`).
pub(super) fn derive(
    conds: &mut Vec<Cond>,
    item_of: &[usize],
    offsets: &[usize],
    special_from: usize,
    local: &mut [Vec<Expr>],
) {
    let mut classes = Classes::new();
    let mut sources = Vec::new();
    for (k, c) in conds.iter().enumerate() {
        let Some((a, b, ty)) = columns_equal(&c.expr) else {
            continue;
        };
        if item_of[a] >= special_from || item_of[b] >= special_from {
            continue;
        }
        sources.push(k);
        classes.add(a, b, k, ty);
    }
    // The classes in creation order, the merged ones gone; the large ones left out.
    // A class's place among them is its first equality's.
    let Classes { classes, class_of } = classes;
    let mut number = vec![None; classes.len()];
    let mut kept: Vec<(Vec<usize>, DataType, usize)> = Vec::new();
    for (i, c) in classes.into_iter().enumerate() {
        if let Some(c) = c
            && c.members.len() <= MAX_MEMBERS
        {
            number[i] = Some(kept.len());
            kept.push((c.members, c.ty, c.sources[0]));
        }
    }
    // Other equalities PostgreSQL makes classes of (of expressions): each its own,
    // listed at its place.
    for (k, c) in conds.iter_mut().enumerate() {
        if crate::pushdown::is_equivalence(&c.expr) {
            c.order = Some(k);
        }
    }
    let place = |col: usize| -> Option<(usize, usize)> {
        let class = number[*class_of.get(&col)?]?;
        let index = kept[class].0.iter().position(|&m| m == col)?;
        Some((class, index))
    };
    let mut equated: HashSet<(usize, usize, usize)> = HashSet::new();
    for k in sources {
        let (a, b, _) = columns_equal(&conds[k].expr).expect("a source is an equality");
        let (Some((class, ia)), Some((_, ib))) = (place(a), place(b)) else {
            continue;
        };
        equated.insert((class, ia.min(ib), ia.max(ib)));
        conds[k].pair = Some(Pair {
            class,
            a: (ia, item_of[a]),
            b: (ib, item_of[b]),
        });
        conds[k].order = Some(kept[class].2);
    }
    for (class, (members, ty, created)) in kept.iter().enumerate() {
        let (ty, created) = (*ty, *created);
        for i in 0..members.len() {
            for j in i + 1..members.len() {
                let (a, b) = (members[i], members[j]);
                let (ta, tb) = (item_of[a], item_of[b]);
                if ta == tb || equated.contains(&(class, i, j)) {
                    continue;
                }
                conds.push(Cond {
                    expr: column_eq(a, b, ty),
                    items: {
                        let mut s = Items::one(ta);
                        s.insert(tb);
                        s
                    },
                    pair: Some(Pair {
                        class,
                        a: (i, ta),
                        b: (j, tb),
                    }),
                    order: Some(created),
                });
            }
        }
        // Members of one item: each equals the one before it, in the item
        // (PostgreSQL's generate_base_implied_equalities).
        let mut last: HashMap<usize, usize> = HashMap::new();
        for &m in members.iter() {
            let t = item_of[m];
            if let Some(prev) = last.insert(t, m) {
                local[t].push(column_eq(prev - offsets[t], m - offsets[t], ty));
            }
        }
    }
}

fn column_eq(a: usize, b: usize, ty: DataType) -> Expr {
    Expr::new(
        ExprKind::Binary(
            BinaryOp::Eq,
            Box::new(Expr::column(a, ty)),
            Box::new(Expr::column(b, ty)),
        ),
        DataType::Bool,
    )
}

/// The conditions a join of `outer` and `inner` applies: those it completes, but of
/// each class only the pair of its outer side's first member and its inner side's
/// first; the conditions no class holds first, then the classes' in their order
/// (PostgreSQL's `build_joinrel_restrictlist`).
pub(super) fn applied<'c>(conds: &'c [Cond], outer: &Items, inner: &Items) -> Vec<&'c Cond> {
    let mut plain = Vec::new();
    let mut classed: Vec<&Cond> = Vec::new();
    let mut best: Vec<(usize, (usize, usize), usize)> = Vec::new();
    for c in conds {
        if !(c.items.intersects(outer) && c.items.intersects(inner)) {
            continue;
        }
        if !c
            .items
            .iter()
            .all(|t| outer.contains(t) || inner.contains(t))
        {
            continue;
        }
        match (&c.pair, c.order) {
            (None, None) => plain.push(c),
            (None, Some(_)) => classed.push(c),
            (Some(p), _) => {
                let key = p.key(outer);
                match best.iter_mut().find(|(class, _, _)| *class == p.class) {
                    Some(b) if key < b.1 => {
                        *b = (p.class, key, classed.len());
                        classed.push(c);
                    }
                    Some(_) => {}
                    None => {
                        best.push((p.class, key, classed.len()));
                        classed.push(c);
                    }
                }
            }
        }
    }
    // A class's pairs passed over are left out.
    let chosen: HashSet<usize> = best.iter().map(|b| b.2).collect();
    let mut classed: Vec<&Cond> = classed
        .into_iter()
        .enumerate()
        .filter(|(i, c)| c.pair.is_none() || chosen.contains(i))
        .map(|(_, c)| c)
        .collect();
    classed.sort_by_key(|c| c.order);
    plain.extend(classed);
    plain
}
