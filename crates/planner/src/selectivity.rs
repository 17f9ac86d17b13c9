//! Selectivity (planner rule 5): the fraction of a table's rows a restriction keeps, estimated from the
//! table's statistics as PostgreSQL 15 estimates it (its `clausesel.c` and `selfuncs.c`),
//! so that estimated row counts follow PostgreSQL's and plans are chosen alike.
//!
//! - `col = k`: the most common value's frequency if `k` is one, else the rows left by
//!   the common values and NULLs spread evenly over the other distinct values (capped at
//!   the least common value's frequency); `1 / distinct` without statistics; `<>` is what
//!   `=` leaves of the non-NULL rows.
//! - `col < k` (and `<=`, `>`, `>=`): the common values that pass, plus the histogram's
//!   fraction below `k` (interpolated inside its bin, with the equality share added or
//!   taken off at the edges) of the other non-NULL rows; a third without statistics. A
//!   lower and an upper bound on one column combine as a range (`hi + lo - 1`).
//! - IN lists sum their elements' equalities; IS [NOT] NULL reads the NULL fraction;
//!   boolean columns their frequency of true; LIKE a fixed prefix as a range, the rest of
//!   the pattern by PostgreSQL's per-character factors; AND multiplies, OR adds as
//!   independent events, NOT complements.
//! - Anything else gets PostgreSQL's default for its kind (0.005 for equality-like tests,
//!   a third for inequalities, 0.5 for other boolean expressions).
//!
//! Not modelled: the actual minimum and maximum PostgreSQL reads from an index when a
//! constant falls in the histogram's first or last bin (Myriad clamps to one hundredth of
//! a bin as PostgreSQL does without such an index), extended statistics, and regular
//! expressions' fixed prefixes (their default is used).

use catalog::{ColumnStats, RelStats, TableDesc};
use common::{DataType, Value};
use sql::bound::{BinaryOp, Expr, ExprKind};

/// `=` without statistics to go by, and other equality-like tests.
pub const DEFAULT_EQ_SEL: f64 = 0.005;
/// `<`, `<=`, `>`, `>=` without statistics.
pub const DEFAULT_INEQ_SEL: f64 = 1.0 / 3.0;
/// A range (`x > a AND x < b`) one of whose bounds had no statistics.
pub const DEFAULT_RANGE_INEQ_SEL: f64 = 0.005;
/// LIKE and regular expressions without statistics.
pub const DEFAULT_MATCH_SEL: f64 = 0.005;
/// Distinct values assumed when nothing says how many there are.
pub const DEFAULT_NUM_DISTINCT: f64 = 200.0;
/// IS NULL without statistics.
pub const DEFAULT_UNK_SEL: f64 = 0.005;
/// IS NOT NULL without statistics.
pub const DEFAULT_NOT_UNK_SEL: f64 = 1.0 - DEFAULT_UNK_SEL;
/// A boolean function call with no better estimate.
const DEFAULT_BOOL_FUNC_SEL: f64 = 0.3333333;

/// What the estimators know of one table: its statistics and its estimated size.
#[derive(Clone)]
pub struct RelInfo<'a> {
    pub table: &'a TableDesc,
    pub stats: Option<&'a RelStats>,
    /// Estimated rows (PostgreSQL's `rel->tuples`).
    pub tuples: f64,
    /// Pages (PostgreSQL's `rel->pages`).
    pub pages: f64,
}

/// Bytes of a tuple's header and line pointer (PostgreSQL's per-tuple overhead when it
/// guesses a table's rows from its width).
const TUPLE_OVERHEAD: i64 = 28;
/// Bytes of a page usable for tuples.
const PAGE_USABLE: i64 = 8168;

impl<'a> RelInfo<'a> {
    /// The fraction of the table's pages the visibility map said were all-visible when
    /// VACUUM or ANALYZE last counted (PostgreSQL's `allvisfrac`: `relallvisible` over
    /// the pages there are now, at most 1).
    pub fn allvisfrac(&self) -> f64 {
        match self.stats {
            Some(s) if self.pages > 0.0 && s.relallvisible > 0 => {
                (f64::from(s.relallvisible) / self.pages).min(1.0)
            }
            _ => 0.0,
        }
    }

    /// `table`, now `curpages` pages long, with the statistics ANALYZE left (PostgreSQL's
    /// `estimate_rel_size`): rows per page from the last ANALYZE scaled to the current
    /// size; never analyzed, rows per page from the columns' widths, over at least 10
    /// pages.
    pub fn new(table: &'a TableDesc, stats: Option<&'a RelStats>, curpages: u64) -> RelInfo<'a> {
        let analyzed = stats.map(|s| (f64::from(s.reltuples as f32), f64::from(s.relpages)));
        if table.partition_key.is_some() {
            // No storage: its rows are its partitions', as ANALYZE last counted them (the
            // estimator sums the partitions' own where it scans them).
            return RelInfo {
                table,
                stats,
                tuples: analyzed.map_or(0.0, |(t, _)| t.max(0.0)),
                pages: 0.0,
            };
        }
        let mut pages = curpages as f64;
        if curpages < 10 && analyzed.is_none() {
            pages = 10.0;
        }
        let tuples = if pages == 0.0 {
            0.0
        } else {
            let density = match analyzed {
                Some((reltuples, relpages)) if relpages > 0.0 => reltuples / relpages,
                _ => {
                    let width = data_width(table, stats) + TUPLE_OVERHEAD;
                    (PAGE_USABLE / width.max(1)) as f64
                }
            };
            (density * pages).round_ties_even()
        };
        RelInfo {
            table,
            stats,
            tuples,
            pages,
        }
    }

    pub(crate) fn column(&self, i: usize) -> Option<&'a ColumnStats> {
        let col = self.table.columns.get(i)?;
        self.stats?.column(i as u16 + 1, &col.ty)
    }

    /// Whether column `i` alone is the key of a unique index of the whole table (only
    /// the indexes it leads are looked at).
    fn unique(&self, i: usize) -> bool {
        self.table
            .indexes_leading(i)
            .any(|ix| ix.proves_unique() && ix.columns.len() == 1)
    }
}

/// The average stored width of a table's rows (its live columns'), from statistics where
/// ANALYZE kept them, else from the types (PostgreSQL's `get_rel_data_width`).
pub fn data_width(table: &TableDesc, stats: Option<&RelStats>) -> i64 {
    table
        .columns
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.dropped)
        .map(|(i, c)| {
            stats
                .and_then(|s| s.column(i as u16 + 1, &c.ty))
                .map(|s| s.avg_width)
                .filter(|w| *w > 0)
                .map_or_else(|| type_width(&c.ty), i64::from)
        })
        .sum()
}

/// A type's typical stored width without statistics (`get_typavgwidth`): its length if
/// fixed; for a declared maximum (`varchar(n)`, `char(n)`) that maximum, or halfway from 32
/// towards it; else 32.
pub fn type_width(ty: &DataType) -> i64 {
    let len = ty.typlen();
    if len > 0 {
        return i64::from(len);
    }
    let max = match ty {
        DataType::Varchar(Some(n)) | DataType::Bpchar(Some(n)) => i64::from(*n) * 4 + 4,
        DataType::Numeric(Some((p, _))) => 8 + 2 * ((i64::from(*p) + 6) / 4),
        _ => -1,
    };
    if max <= 0 {
        return 32;
    }
    if matches!(ty, DataType::Bpchar(_)) || max <= 32 {
        max
    } else if max < 1000 {
        32 + (max - 32) / 2
    } else {
        32 + (1000 - 32) / 2
    }
}

/// PostgreSQL's `clamp_row_est`: at least one row, whole rows (half to even).
pub fn clamp_rows(n: f64) -> f64 {
    if n.is_nan() || n > 1e100 {
        1e100
    } else if n <= 1.0 {
        1.0
    } else {
        n.round_ties_even()
    }
}

fn clamp_probability(p: f64) -> f64 {
    // NaN stays NaN, as PostgreSQL's CLAMP_PROBABILITY leaves it.
    p.clamp(0.0, 1.0)
}

/// The selectivity of `conjuncts` ANDed together over `rel`'s rows (PostgreSQL's
/// `clauselist_selectivity`): the product of each's, except that a lower and an upper
/// bound on one column make one range.
pub fn conjuncts_selectivity(rel: &RelInfo<'_>, conjuncts: &[&Expr]) -> f64 {
    if let [one] = conjuncts {
        return clause_selectivity(rel, one);
    }
    let mut s = 1.0;
    // Per column: (column, lower bound's selectivity, upper bound's); most recent first.
    let mut ranges: Vec<(usize, Option<f64>, Option<f64>)> = Vec::new();
    for c in conjuncts {
        let s2 = clause_selectivity(rel, c);
        if let Some((col, is_lower)) = range_bound(c) {
            match ranges.iter_mut().find(|r| r.0 == col) {
                Some(r) => {
                    let side = if is_lower { &mut r.1 } else { &mut r.2 };
                    *side = Some(side.map_or(s2, |old: f64| old.min(s2)));
                }
                None => ranges.insert(
                    0,
                    if is_lower {
                        (col, Some(s2), None)
                    } else {
                        (col, None, Some(s2))
                    },
                ),
            }
            continue;
        }
        s *= s2;
    }
    for (col, lo, hi) in ranges {
        s *= match (lo, hi) {
            (Some(lo), Some(hi)) => {
                if hi == DEFAULT_INEQ_SEL || lo == DEFAULT_INEQ_SEL {
                    DEFAULT_RANGE_INEQ_SEL
                } else {
                    let mut s2 = hi + lo - 1.0;
                    s2 += null_frac(rel, col).unwrap_or(DEFAULT_UNK_SEL);
                    if s2 <= 0.0 {
                        if s2 < -0.01 {
                            DEFAULT_RANGE_INEQ_SEL
                        } else {
                            1.0e-10
                        }
                    } else {
                        s2
                    }
                }
            }
            (Some(one), None) | (None, Some(one)) => one,
            (None, None) => 1.0,
        };
    }
    s
}

/// `col < k`-like conjuncts that pair into ranges: the column and whether the bound is
/// a lower one.
fn range_bound(c: &Expr) -> Option<(usize, bool)> {
    let ExprKind::Binary(op, l, r) = &c.kind else {
        return None;
    };
    if !matches!(
        op,
        BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq
    ) {
        return None;
    }
    let is_gt = matches!(op, BinaryOp::Gt | BinaryOp::GtEq);
    if let Some(col) = column_of(l)
        && pseudo_constant(r)
    {
        return Some((col, is_gt));
    }
    if let Some(col) = column_of(r)
        && pseudo_constant(l)
    {
        return Some((col, !is_gt));
    }
    None
}

/// The column an operand reads, through casts that keep its order (a `varchar` read as
/// `text`, an integer widened, a `date` compared with a `timestamp`): what PostgreSQL's
/// statistics of it answer for (its histogram holds dates, compared with the constant as
/// timestamps, as PostgreSQL's cross-type operators compare them).
fn column_of(e: &Expr) -> Option<usize> {
    match &e.kind {
        ExprKind::Column(i) => Some(*i),
        ExprKind::Cast { expr, .. } => match (&expr.kind, expr.ty, e.ty) {
            (
                ExprKind::Column(i),
                DataType::Int2 | DataType::Int4,
                DataType::Int4 | DataType::Int8,
            ) => Some(*i),
            (
                ExprKind::Column(i),
                DataType::Varchar(_) | DataType::Text,
                DataType::Text | DataType::Varchar(_),
            ) => Some(*i),
            (ExprKind::Column(i), DataType::Date, DataType::Timestamp(_)) => Some(*i),
            _ => None,
        },
        _ => None,
    }
}

/// An operand fixed while the scan runs (no column of this row, nothing volatile).
fn pseudo_constant(e: &Expr) -> bool {
    let mut fixed = true;
    e.walk(&mut |n| {
        fixed &= !matches!(n.kind, ExprKind::Column(_) | ExprKind::Func(..));
    });
    fixed
}

/// An operand's value if the planner knows it: a constant, possibly cast.
pub(crate) fn constant_value(e: &Expr) -> Option<Value> {
    match &e.kind {
        ExprKind::Const(v) => Some(v.clone()),
        ExprKind::Cast { expr, .. } => match (constant_value(expr)?, e.ty) {
            (Value::Null, _) => Some(Value::Null),
            (v, DataType::Int8) => v.as_i64().map(Value::Int8),
            (v, DataType::Int4) => v
                .as_i64()
                .and_then(|x| i32::try_from(x).ok())
                .map(Value::Int4),
            (v, DataType::Float8) => v.as_f64().map(Value::Float8),
            (v @ Value::Text(_), DataType::Text | DataType::Varchar(_)) => Some(v),
            (v, ty) if value_has_type(&v, &ty) => Some(v),
            _ => None,
        },
        _ => None,
    }
}

fn value_has_type(v: &Value, ty: &DataType) -> bool {
    matches!(
        (v, ty),
        (Value::Int2(_), DataType::Int2)
            | (Value::Int4(_), DataType::Int4)
            | (Value::Int8(_), DataType::Int8)
            | (Value::Float4(_), DataType::Float4)
            | (Value::Float8(_), DataType::Float8)
            | (Value::Numeric(_), DataType::Numeric(_))
            | (Value::Date(_), DataType::Date)
            | (Value::Timestamp(_), DataType::Timestamp(_))
            | (Value::TimestampTz(_), DataType::TimestampTz(_))
            | (Value::Bool(_), DataType::Bool)
    )
}

fn null_frac(rel: &RelInfo<'_>, col: usize) -> Option<f64> {
    rel.column(col).map(|s| f64::from(s.null_frac))
}

/// The selectivity of one clause (PostgreSQL's `clause_selectivity`, after its
/// preprocessing pushed NOTs down into negated operators).
pub fn clause_selectivity(rel: &RelInfo<'_>, e: &Expr) -> f64 {
    match &e.kind {
        ExprKind::Const(v) => match v {
            Value::Bool(true) => 1.0,
            _ => 0.0,
        },
        ExprKind::Binary(BinaryOp::And, ..) => {
            let mut list = Vec::new();
            flatten(e, BinaryOp::And, &mut list);
            conjuncts_selectivity(rel, &list)
        }
        ExprKind::Binary(BinaryOp::Or, ..) => {
            let mut list = Vec::new();
            flatten(e, BinaryOp::Or, &mut list);
            list.iter().fold(0.0, |s, c| {
                let s2 = clause_selectivity(rel, c);
                s + s2 - s * s2
            })
        }
        ExprKind::Not(inner) => negated_selectivity(rel, inner),
        ExprKind::Binary(op, l, r) => operator_selectivity(rel, *op, l, r),
        ExprKind::IsNull { expr, negated } => {
            let frac = column_of(expr).and_then(|c| null_frac(rel, c));
            clamp_probability(match (frac, negated) {
                (Some(f), false) => f,
                (Some(f), true) => 1.0 - f,
                (None, false) => DEFAULT_UNK_SEL,
                (None, true) => DEFAULT_NOT_UNK_SEL,
            })
        }
        ExprKind::IsBool {
            expr,
            value,
            negated,
        } => bool_test_selectivity(rel, expr, *value, *negated),
        ExprKind::InList {
            expr,
            list,
            negated,
        } => in_list_selectivity(rel, expr, list, *negated),
        ExprKind::Like {
            expr,
            pattern,
            escape,
            negated,
            case_insensitive,
        } => like_selectivity_of(
            rel,
            expr,
            pattern,
            escape.is_some(),
            *negated,
            *case_insensitive,
        ),
        ExprKind::IsDistinctFrom {
            left,
            right,
            negated,
        } => {
            let eq = operator_selectivity(rel, BinaryOp::Eq, left, right);
            if *negated { eq } else { 1.0 - eq }
        }
        ExprKind::Func(..) => DEFAULT_BOOL_FUNC_SEL,
        ExprKind::Column(i) if e.ty == DataType::Bool => bool_column_selectivity(rel, *i),
        _ => 0.5,
    }
}

fn flatten<'e>(e: &'e Expr, op: BinaryOp, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Binary(o, l, r) if *o == op => {
            flatten(l, op, out);
            flatten(r, op, out);
        }
        _ => out.push(e),
    }
}

/// `NOT e`, as PostgreSQL's preprocessing rewrites it: a negated operator or test where
/// there is one, De Morgan over AND and OR, else the complement.
fn negated_selectivity(rel: &RelInfo<'_>, e: &Expr) -> f64 {
    let negate = |op: BinaryOp| match op {
        BinaryOp::Eq => Some(BinaryOp::NotEq),
        BinaryOp::NotEq => Some(BinaryOp::Eq),
        BinaryOp::Lt => Some(BinaryOp::GtEq),
        BinaryOp::LtEq => Some(BinaryOp::Gt),
        BinaryOp::Gt => Some(BinaryOp::LtEq),
        BinaryOp::GtEq => Some(BinaryOp::Lt),
        _ => None,
    };
    match &e.kind {
        ExprKind::Not(inner) => clause_selectivity(rel, inner),
        ExprKind::Binary(BinaryOp::And, l, r) => {
            let (a, b) = (negated_selectivity(rel, l), negated_selectivity(rel, r));
            a + b - a * b
        }
        ExprKind::Binary(BinaryOp::Or, l, r) => {
            negated_selectivity(rel, l) * negated_selectivity(rel, r)
        }
        ExprKind::Binary(op, l, r) if negate(*op).is_some() => {
            operator_selectivity(rel, negate(*op).unwrap_or(*op), l, r)
        }
        ExprKind::IsNull { expr, negated } => clause_selectivity(
            rel,
            &Expr::new(
                ExprKind::IsNull {
                    expr: expr.clone(),
                    negated: !negated,
                },
                DataType::Bool,
            ),
        ),
        ExprKind::InList {
            expr,
            list,
            negated,
        } => in_list_selectivity(rel, expr, list, !negated),
        ExprKind::Like {
            expr,
            pattern,
            escape,
            negated,
            case_insensitive,
        } => like_selectivity_of(
            rel,
            expr,
            pattern,
            escape.is_some(),
            !negated,
            *case_insensitive,
        ),
        ExprKind::IsBool {
            expr,
            value,
            negated,
        } => bool_test_selectivity(rel, expr, *value, !negated),
        _ => 1.0 - clause_selectivity(rel, e),
    }
}

/// `l op r` for a comparison operator (`=`, `<>`, `<`, `<=`, `>`, `>=`) or a regular
/// expression match.
fn operator_selectivity(rel: &RelInfo<'_>, op: BinaryOp, l: &Expr, r: &Expr) -> f64 {
    // The column on the left: `k < col` is `col > k`.
    let (col, other, op) = match (column_of(l), column_of(r)) {
        (Some(c), None) if pseudo_constant(r) => (c, r, op),
        (None, Some(c)) if pseudo_constant(l) => (c, l, commute(op)),
        _ => return default_selectivity(rel, op, l, r),
    };
    let value = constant_value(other);
    match op {
        BinaryOp::Eq | BinaryOp::NotEq => {
            let negate = op == BinaryOp::NotEq;
            match value {
                Some(v) => eq_const(rel, col, &v, negate),
                None => eq_non_const(rel, col, negate),
            }
        }
        BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq => match value {
            Some(Value::Null) => 0.0,
            Some(v) => ineq_const(rel, col, op, &v),
            None => DEFAULT_INEQ_SEL,
        },
        BinaryOp::RegexMatch | BinaryOp::RegexIMatch => DEFAULT_MATCH_SEL,
        BinaryOp::NotRegexMatch | BinaryOp::NotRegexIMatch => 1.0 - DEFAULT_MATCH_SEL,
        _ => 0.5,
    }
}

/// An operator's selectivity when it is not "column op constant" (both sides read the
/// row, or an expression of a column PostgreSQL keeps no statistics for).
fn default_selectivity(rel: &RelInfo<'_>, op: BinaryOp, l: &Expr, r: &Expr) -> f64 {
    // An expression over the row against a constant: equality by the distinct count an
    // unknown column would have.
    let one_side_expr =
        (pseudo_constant(r) && !pseudo_constant(l)) || (pseudo_constant(l) && !pseudo_constant(r));
    let expr_ty = if pseudo_constant(r) { l.ty } else { r.ty };
    match op {
        BinaryOp::Eq | BinaryOp::NotEq if one_side_expr => {
            let nd = if expr_ty == DataType::Bool {
                2.0
            } else {
                distinct_without_stats(rel)
            };
            let eq = 1.0 / nd;
            if op == BinaryOp::Eq { eq } else { 1.0 - eq }
        }
        BinaryOp::Eq => DEFAULT_EQ_SEL,
        BinaryOp::NotEq => 1.0 - DEFAULT_EQ_SEL,
        BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq => DEFAULT_INEQ_SEL,
        BinaryOp::RegexMatch | BinaryOp::RegexIMatch => DEFAULT_MATCH_SEL,
        BinaryOp::NotRegexMatch | BinaryOp::NotRegexIMatch => 1.0 - DEFAULT_MATCH_SEL,
        _ => 0.5,
    }
}

fn distinct_without_stats(rel: &RelInfo<'_>) -> f64 {
    if rel.tuples <= 0.0 {
        DEFAULT_NUM_DISTINCT
    } else if rel.tuples < DEFAULT_NUM_DISTINCT {
        clamp_rows(rel.tuples)
    } else {
        DEFAULT_NUM_DISTINCT
    }
}

fn commute(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::LtEq => BinaryOp::GtEq,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::GtEq => BinaryOp::LtEq,
        other => other,
    }
}

/// Distinct non-NULL values of column `col` (PostgreSQL's `get_variable_numdistinct`).
pub fn distinct_values(rel: &RelInfo<'_>, col: usize) -> f64 {
    distinct_values_or_default(rel, col).0
}

/// [`distinct_values`], and whether it is only the default (`isdefault`: no statistics,
/// not unique, and the table not known to be small).
pub fn distinct_values_or_default(rel: &RelInfo<'_>, col: usize) -> (f64, bool) {
    let stats = rel.column(col);
    let null_frac = stats.map_or(0.0, |s| f64::from(s.null_frac));
    let mut distinct = match stats {
        Some(s) => f64::from(s.n_distinct),
        None if rel.table.columns.get(col).map(|c| c.ty) == Some(DataType::Bool) => 2.0,
        None => 0.0,
    };
    if rel.unique(col) {
        distinct = -(1.0 - null_frac);
    }
    if distinct > 0.0 {
        return (clamp_rows(distinct), false);
    }
    if rel.tuples <= 0.0 {
        return (DEFAULT_NUM_DISTINCT, true);
    }
    if distinct < 0.0 {
        return (clamp_rows(-distinct * rel.tuples), false);
    }
    if rel.tuples < DEFAULT_NUM_DISTINCT {
        return (clamp_rows(rel.tuples), false);
    }
    (DEFAULT_NUM_DISTINCT, true)
}

/// `r1.c1 = r2.c2` in a semi join (PostgreSQL's `eqjoinsel_semi`): the fraction of
/// `r1`'s rows that some row of `r2` (`inner_rows` of them, after its conditions)
/// matches. With most common values on both sides, the frequencies of `r1`'s values the
/// other list holds, plus the rest by the distinct counts; else the non-NULL fraction,
/// scaled by the distinct counts when `r2` has fewer.
pub fn join_eq_semi_selectivity(
    r1: &RelInfo<'_>,
    c1: usize,
    r2: &RelInfo<'_>,
    c2: usize,
    inner_rows: f64,
) -> f64 {
    let (s1, s2) = (r1.column(c1), r2.column(c2));
    let (mut nd1, default1) = distinct_values_or_default(r1, c1);
    let (mut nd2, mut default2) = distinct_values_or_default(r2, c2);
    if nd2 >= inner_rows {
        nd2 = inner_rows;
        default2 = false;
    }
    let null1 = s1.map_or(0.0, |s| f64::from(s.null_frac));
    match (s1, s2) {
        (Some(s1), Some(s2)) if !s1.mcv.is_empty() && !s2.mcv.is_empty() => {
            let clamped2 = (s2.mcv.len() as f64).min(nd2) as usize;
            let mut match2 = vec![false; clamped2];
            let mut matchfreq1 = 0.0;
            let mut nmatches = 0.0;
            for (v1, f1) in &s1.mcv {
                for (j, (v2, _)) in s2.mcv.iter().take(clamped2).enumerate() {
                    if !match2[j] && v1.cmp_non_null(v2) == std::cmp::Ordering::Equal {
                        match2[j] = true;
                        matchfreq1 += f64::from(*f1);
                        nmatches += 1.0;
                        break;
                    }
                }
            }
            let matchfreq1 = clamp_probability(matchfreq1);
            let uncertainfrac = if !default1 && !default2 {
                nd1 -= nmatches;
                nd2 -= nmatches;
                if nd1 <= nd2 || nd2 < 0.0 {
                    1.0
                } else {
                    nd2 / nd1
                }
            } else {
                0.5
            };
            let uncertain = clamp_probability(1.0 - matchfreq1 - null1);
            matchfreq1 + uncertainfrac * uncertain
        }
        _ => {
            if !default1 && !default2 {
                if nd1 <= nd2 || nd2 < 0.0 {
                    1.0 - null1
                } else {
                    (nd2 / nd1) * (1.0 - null1)
                }
            } else {
                0.5 * (1.0 - null1)
            }
        }
    }
}

/// `r1.c1 = r2.c2` over the pairs of two tables' rows (PostgreSQL's `eqjoinsel_inner`):
/// with most common values on both sides, the frequencies of the values both lists hold,
/// plus the rest spread over the other distinct values; else the non-NULL fractions over
/// the larger distinct count.
pub fn join_eq_selectivity(r1: &RelInfo<'_>, c1: usize, r2: &RelInfo<'_>, c2: usize) -> f64 {
    let (s1, s2) = (r1.column(c1), r2.column(c2));
    let nd1 = distinct_values(r1, c1);
    let nd2 = distinct_values(r2, c2);
    let null1 = s1.map_or(0.0, |s| f64::from(s.null_frac));
    let null2 = s2.map_or(0.0, |s| f64::from(s.null_frac));
    let (Some(s1), Some(s2)) = (s1, s2) else {
        return clamp_probability((1.0 - null1) * (1.0 - null2) / nd1.max(nd2));
    };
    if s1.mcv.is_empty() || s2.mcv.is_empty() {
        // PostgreSQL matches the lists only when both sides have one.
        return clamp_probability((1.0 - null1) * (1.0 - null2) / nd1.max(nd2));
    }
    let (n1, n2) = (s1.mcv.len(), s2.mcv.len());
    let mut match1 = vec![false; n1];
    let mut match2 = vec![false; n2];
    let mut match_prod = 0.0;
    let mut nmatches = 0usize;
    for (i, (v1, f1)) in s1.mcv.iter().enumerate() {
        for (j, (v2, f2)) in s2.mcv.iter().enumerate() {
            if match2[j] {
                continue;
            }
            if v1.cmp_non_null(v2) == std::cmp::Ordering::Equal {
                match1[i] = true;
                match2[j] = true;
                match_prod += f64::from(*f1) * f64::from(*f2);
                nmatches += 1;
                break;
            }
        }
    }
    let match_prod = clamp_probability(match_prod);
    let sum = |s: &ColumnStats, m: &[bool], want: bool| -> f64 {
        s.mcv
            .iter()
            .zip(m)
            .filter(|(_, hit)| **hit == want)
            .map(|((_, f), _)| f64::from(*f))
            .sum()
    };
    let (match1_f, unmatch1) = (sum(s1, &match1, true), sum(s1, &match1, false));
    let (match2_f, unmatch2) = (sum(s2, &match2, true), sum(s2, &match2, false));
    let other1 = clamp_probability(1.0 - null1 - match1_f - unmatch1);
    let other2 = clamp_probability(1.0 - null2 - match2_f - unmatch2);
    let mut total1 = match_prod;
    if nd2 > n2 as f64 {
        total1 += unmatch1 * other2 / (nd2 - n2 as f64);
    }
    if nd2 > nmatches as f64 {
        total1 += other1 * (other2 + unmatch2) / (nd2 - nmatches as f64);
    }
    let mut total2 = match_prod;
    if nd1 > n1 as f64 {
        total2 += unmatch2 * other1 / (nd1 - n1 as f64);
    }
    if nd1 > nmatches as f64 {
        total2 += other2 * (other1 + unmatch1) / (nd1 - nmatches as f64);
    }
    clamp_probability(total1.min(total2))
}

/// `col = k` (`col <> k` if `negate`) for a constant `k` (`var_eq_const`).
fn eq_const(rel: &RelInfo<'_>, col: usize, k: &Value, negate: bool) -> f64 {
    if k.is_null() {
        return 0.0;
    }
    eq_selectivity(rel, col, negate, |s, null_frac| {
        match s
            .mcv
            .iter()
            .find(|(v, _)| v.cmp_non_null(k) == std::cmp::Ordering::Equal)
        {
            Some((_, freq)) => f64::from(*freq),
            None => {
                let sum_common: f64 = s.mcv.iter().map(|(_, f)| f64::from(*f)).sum();
                let mut sel = clamp_probability(1.0 - sum_common - null_frac);
                let other = distinct_values(rel, col) - s.mcv.len() as f64;
                if other > 1.0 {
                    sel /= other;
                }
                // No more common than the least common value in the list.
                s.mcv
                    .last()
                    .map_or(sel, |(_, least)| sel.min(f64::from(*least)))
            }
        }
    })
}

/// `col = x` for an `x` unknown until run time (a parameter of a generic plan).
fn eq_non_const(rel: &RelInfo<'_>, col: usize, negate: bool) -> f64 {
    eq_selectivity(rel, col, negate, |s, null_frac| {
        let mut sel = 1.0 - null_frac;
        let nd = distinct_values(rel, col);
        if nd > 1.0 {
            sel /= nd;
        }
        // No more common than the most common value.
        s.mcv
            .first()
            .map_or(sel, |(_, most)| sel.min(f64::from(*most)))
    })
}

/// What `col = x` and `col <> x` share: one row for a unique column, else `by_stats`
/// over the column's statistics (given its NULL fraction), else one over its distinct
/// values; `<>` is what `=` leaves of the non-NULL rows.
fn eq_selectivity(
    rel: &RelInfo<'_>,
    col: usize,
    negate: bool,
    by_stats: impl FnOnce(&ColumnStats, f64) -> f64,
) -> f64 {
    let stats = rel.column(col);
    let null_frac = stats.map_or(0.0, |s| f64::from(s.null_frac));
    let sel = if rel.unique(col) && rel.tuples >= 1.0 {
        1.0 / rel.tuples
    } else if let Some(s) = stats {
        by_stats(s, null_frac)
    } else {
        1.0 / distinct_values(rel, col)
    };
    clamp_probability(if negate { 1.0 - sel - null_frac } else { sel })
}

/// The smallest and largest values a column's statistics know of (the histogram's ends
/// and the most common values: PostgreSQL's `get_variable_range`); `None` without them,
/// or with most common values alone that leave some rows out (they would not show the
/// extremes).
pub(crate) fn variable_range(rel: &RelInfo<'_>, col: usize) -> Option<(Value, Value)> {
    let s = rel.column(col)?;
    if s.histogram.is_empty() {
        let common: f64 = s.mcv.iter().map(|(_, f)| f64::from(*f)).sum();
        if common + f64::from(s.null_frac) <= 0.99999 {
            return None;
        }
    }
    let mut range: Option<(Value, Value)> = None;
    let ends = s.histogram.first().into_iter().chain(s.histogram.last());
    for v in ends.chain(s.mcv.iter().map(|(v, _)| v)) {
        if v.is_null() {
            continue;
        }
        range = Some(match range {
            None => (v.clone(), v.clone()),
            Some((lo, hi)) => (
                if v.cmp_non_null(&lo).is_lt() {
                    v.clone()
                } else {
                    lo
                },
                if v.cmp_non_null(&hi).is_gt() {
                    v.clone()
                } else {
                    hi
                },
            ),
        });
    }
    range
}

/// The fraction of `rel`'s rows whose column `col` is `op` `k` (`<`, `<=`, `>`, `>=`):
/// `scalarineqsel` for a constant, NULLs never passing; [`DEFAULT_INEQ_SEL`] without
/// statistics.
pub(crate) fn inequality_selectivity(
    rel: &RelInfo<'_>,
    col: usize,
    op: BinaryOp,
    k: &Value,
) -> f64 {
    ineq_const(rel, col, op, k)
}

/// `col op k` for an inequality (`scalarineqsel`).
fn ineq_const(rel: &RelInfo<'_>, col: usize, op: BinaryOp, k: &Value) -> f64 {
    let Some(s) = rel.column(col) else {
        return DEFAULT_INEQ_SEL;
    };
    let passes = |v: &Value| {
        let o = v.cmp_non_null(k);
        match op {
            BinaryOp::Lt => o.is_lt(),
            BinaryOp::LtEq => o.is_le(),
            BinaryOp::Gt => o.is_gt(),
            _ => o.is_ge(),
        }
    };
    let (mut mcv_sel, mut sum_common) = (0.0, 0.0);
    for (v, f) in &s.mcv {
        sum_common += f64::from(*f);
        if passes(v) {
            mcv_sel += f64::from(*f);
        }
    }
    let is_gt = matches!(op, BinaryOp::Gt | BinaryOp::GtEq);
    let is_eq = matches!(op, BinaryOp::LtEq | BinaryOp::GtEq);
    let hist = histogram_selectivity(rel, col, s, &passes, is_gt, is_eq, k);
    let mut sel = 1.0 - f64::from(s.null_frac) - sum_common;
    sel *= hist.unwrap_or(0.5);
    sel += mcv_sel;
    clamp_probability(sel)
}

/// The fraction of the histogram's population that passes (`ineq_histogram_selectivity`),
/// `None` without a histogram.
fn histogram_selectivity(
    rel: &RelInfo<'_>,
    col: usize,
    s: &ColumnStats,
    passes: &dyn Fn(&Value) -> bool,
    is_gt: bool,
    is_eq: bool,
    k: &Value,
) -> Option<f64> {
    let h = &s.histogram;
    let n = h.len();
    if n < 2 {
        return None;
    }
    // The first bound for which "<" / "<=" no longer holds (or ">" / ">=" holds).
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let probe = (lo + hi) / 2;
        let mut t = passes(&h[probe]);
        if is_gt {
            t = !t;
        }
        if t {
            lo = probe + 1;
        } else {
            hi = probe;
        }
    }
    let histfrac = if lo == 0 {
        0.0
    } else if lo >= n {
        1.0
    } else {
        let i = lo;
        let mut eq_sel = 0.0;
        if i == 1 || is_gt == is_eq {
            let other = distinct_values(rel, col) - s.mcv.len() as f64;
            if other > 1.0 {
                eq_sel = 1.0 / other;
            }
        }
        let binfrac = match scalars(k, &h[i - 1], &h[i]) {
            Some((val, low, high)) => {
                if high <= low {
                    0.5
                } else if val <= low {
                    0.0
                } else if val >= high {
                    1.0
                } else {
                    let f = (val - low) / (high - low);
                    if f.is_nan() || !(0.0..=1.0).contains(&f) {
                        0.5
                    } else {
                        f
                    }
                }
            }
            None => 0.5,
        };
        let mut histfrac = ((i - 1) as f64 + binfrac) / (n - 1) as f64;
        if i == 1 {
            histfrac += eq_sel * (1.0 - binfrac);
        }
        if is_gt == is_eq {
            histfrac -= eq_sel;
        }
        histfrac
    };
    let mut hist = if is_gt { 1.0 - histfrac } else { histfrac };
    let cutoff = 0.01 / (n - 1) as f64;
    if hist < cutoff {
        hist = cutoff;
    } else if hist > 1.0 - cutoff {
        hist = 1.0 - cutoff;
    }
    Some(hist)
}

/// A constant and two histogram bounds on one numeric scale, for interpolating inside
/// the bin (`convert_to_scalar`); `None` for types without one.
fn scalars(k: &Value, low: &Value, high: &Value) -> Option<(f64, f64, f64)> {
    if let (Some(a), Some(b), Some(c)) =
        (numeric_scalar(k), numeric_scalar(low), numeric_scalar(high))
    {
        return Some((a, b, c));
    }
    match (k, low, high) {
        (
            Value::Text(_) | Value::Bpchar(_),
            Value::Text(_) | Value::Bpchar(_),
            Value::Text(_) | Value::Bpchar(_),
        ) => {
            let bytes = |v: &Value| -> Vec<u8> {
                match v {
                    Value::Text(s) | Value::Bpchar(s) => s.as_bytes().to_vec(),
                    _ => Vec::new(),
                }
            };
            Some(string_scalars(&bytes(k), &bytes(low), &bytes(high)))
        }
        (Value::Bytea(v), Value::Bytea(l), Value::Bytea(u)) => Some(bytea_scalars(v, l, u)),
        _ => None,
    }
}

const MICROS_PER_DAY: f64 = 86_400_000_000.0;

fn numeric_scalar(v: &Value) -> Option<f64> {
    Some(match v {
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Int2(_)
        | Value::Int4(_)
        | Value::Int8(_)
        | Value::Float4(_)
        | Value::Float8(_)
        | Value::Numeric(_)
        | Value::Oid(_)
        | Value::Reg(..) => v.as_f64()?,
        Value::Date(d) => match d.0 {
            i32::MIN => -f64::MAX,
            i32::MAX => f64::MAX,
            days => f64::from(days) * MICROS_PER_DAY,
        },
        Value::Timestamp(t) => t.0 as f64,
        Value::TimestampTz(t) => t.0 as f64,
        Value::Interval(iv) => {
            iv.micros as f64
                + f64::from(iv.days) * MICROS_PER_DAY
                + f64::from(iv.months) * (365.25 / 12.0 * MICROS_PER_DAY)
        }
        _ => return None,
    })
}

/// Strings as numbers in a base spanning the bytes the bounds use, after their common
/// prefix (PostgreSQL's `convert_string_to_scalar`, C collation).
fn string_scalars(v: &[u8], l: &[u8], u: &[u8]) -> (f64, f64, f64) {
    let cut = |s: &[u8]| -> Vec<u8> { s.iter().take_while(|b| **b != 0).copied().collect() };
    let (v, l, u) = (cut(v), cut(l), cut(u));
    let mut lo = u.first().copied().unwrap_or(0);
    let mut hi = lo;
    for &b in l.iter().chain(u.iter()) {
        lo = lo.min(b);
        hi = hi.max(b);
    }
    for (a, z) in [(b'A', b'Z'), (b'a', b'z'), (b'0', b'9')] {
        if lo <= z && hi >= a {
            lo = lo.min(a);
            hi = hi.max(z);
        }
    }
    if hi - lo < 9 {
        lo = b' ';
        hi = 127;
    }
    let mut k = 0;
    while k < l.len() && k < u.len() && k < v.len() && l[k] == u[k] && l[k] == v[k] {
        k += 1;
    }
    let one = |s: &[u8]| -> f64 {
        let base = f64::from(hi - lo) + 1.0;
        let (mut num, mut denom) = (0.0, base);
        for &c in s.iter().take(12) {
            let c = if c < lo {
                i32::from(lo) - 1
            } else if c > hi {
                i32::from(hi) + 1
            } else {
                i32::from(c)
            };
            num += f64::from(c - i32::from(lo)) / denom;
            denom *= base;
        }
        num
    };
    (one(&v[k..]), one(&l[k..]), one(&u[k..]))
}

fn bytea_scalars(v: &[u8], l: &[u8], u: &[u8]) -> (f64, f64, f64) {
    let min = v.len().min(l.len()).min(u.len());
    let mut k = 0;
    while k < min && l[k] == u[k] && l[k] == v[k] {
        k += 1;
    }
    let one = |s: &[u8]| -> f64 {
        let (mut num, mut denom) = (0.0, 256.0);
        for &c in s.iter().take(10) {
            num += f64::from(c) / denom;
            denom *= 256.0;
        }
        num
    };
    (one(&v[k..]), one(&l[k..]), one(&u[k..]))
}

/// A boolean column alone as a condition: its frequency of true (`boolvarsel`).
fn bool_column_selectivity(rel: &RelInfo<'_>, col: usize) -> f64 {
    if rel.column(col).is_some() {
        eq_const(rel, col, &Value::Bool(true), false)
    } else {
        0.5
    }
}

/// `e IS [NOT] TRUE | FALSE | UNKNOWN` (`booltestsel`).
fn bool_test_selectivity(rel: &RelInfo<'_>, e: &Expr, value: Option<bool>, negated: bool) -> f64 {
    let stats = column_of(e).and_then(|c| rel.column(c));
    let sel = match (stats, value) {
        (Some(s), None) => f64::from(s.null_frac),
        (Some(s), Some(want)) => {
            let null = f64::from(s.null_frac);
            let (t, f) = match s.mcv.first() {
                Some((v, freq)) => {
                    let freq = f64::from(*freq);
                    let t = if *v == Value::Bool(true) {
                        freq
                    } else {
                        1.0 - freq - null
                    };
                    (t, 1.0 - t - null)
                }
                None => ((1.0 - null) / 2.0, (1.0 - null) / 2.0),
            };
            if want { t } else { f }
        }
        (None, None) => DEFAULT_UNK_SEL,
        (None, Some(true)) => clause_selectivity(rel, e),
        (None, Some(false)) => 1.0 - clause_selectivity(rel, e),
    };
    let sel = if negated {
        match (stats, value) {
            (None, None) => DEFAULT_NOT_UNK_SEL,
            _ => 1.0 - sel,
        }
    } else {
        sel
    };
    clamp_probability(sel)
}

/// `e [NOT] IN (list)` (`scalararraysel` over `= ANY` / `<> ALL`): the elements'
/// selectivities summed when the sum makes sense, else combined as independent events.
fn in_list_selectivity(rel: &RelInfo<'_>, e: &Expr, list: &[Expr], negated: bool) -> f64 {
    if let [one] = list {
        let op = if negated {
            BinaryOp::NotEq
        } else {
            BinaryOp::Eq
        };
        return operator_selectivity(rel, op, e, one);
    }
    let op = if negated {
        BinaryOp::NotEq
    } else {
        BinaryOp::Eq
    };
    let use_or = !negated;
    let mut s = if use_or { 0.0 } else { 1.0 };
    let mut d = s;
    for item in list {
        let s2 = operator_selectivity(rel, op, e, item);
        if use_or {
            s = s + s2 - s * s2;
            d += s2;
        } else {
            s *= s2;
            d += s2 - 1.0;
        }
    }
    if (0.0..=1.0).contains(&d) {
        s = d;
    }
    clamp_probability(s)
}

/// `e [NOT] [I]LIKE pattern` (`patternsel`): an exact pattern as equality, a fixed prefix
/// as the range of strings starting with it, the rest by per-character factors.
fn like_selectivity_of(
    rel: &RelInfo<'_>,
    e: &Expr,
    pattern: &Expr,
    escape: bool,
    negated: bool,
    case_insensitive: bool,
) -> f64 {
    let default = if negated {
        1.0 - DEFAULT_MATCH_SEL
    } else {
        DEFAULT_MATCH_SEL
    };
    let (Some(col), Some(pat)) = (column_of(e), constant_value(pattern)) else {
        return default;
    };
    if escape {
        return default;
    }
    let Value::Text(pat) = pat else {
        return if pat.is_null() { 0.0 } else { default };
    };
    let stats = rel.column(col);
    let null_frac = stats.map_or(0.0, |s| f64::from(s.null_frac));
    let (prefix, exact, rest) = like_prefix(pat.as_bytes(), case_insensitive);
    let mut sel = if exact {
        eq_const(
            rel,
            col,
            &Value::Text(String::from_utf8_lossy(&prefix).into_owned()),
            false,
        )
    } else {
        let p = if prefix.is_empty() {
            1.0
        } else {
            prefix_selectivity(rel, col, &prefix)
        };
        let heuristic = p * rest;
        match stats {
            Some(s) => {
                let re = like_matcher(&pat, case_insensitive);
                // The histogram's bounds that match, first and last left out
                // (`histogram_selectivity`): with 100 bounds or more, their fraction
                // alone; with 12 to 100, mixed with the heuristic by the bounds' number;
                // fewer, the heuristic.
                let total = s.histogram.len();
                let inner = total.saturating_sub(2);
                let h = if total >= 10 + 2 {
                    let matched = s.histogram[1..s.histogram.len() - 1]
                        .iter()
                        .filter(|v| matches!(v, Value::Text(t) | Value::Bpchar(t) if re(t)))
                        .count();
                    let hist = matched as f64 / inner as f64;
                    if total >= 100 {
                        hist
                    } else {
                        let w = total as f64 / 100.0;
                        hist * w + heuristic * (1.0 - w)
                    }
                } else {
                    heuristic
                }
                .clamp(0.0001, 0.9999);
                let (mut mcv_sel, mut sum_common) = (0.0, 0.0);
                for (v, f) in &s.mcv {
                    sum_common += f64::from(*f);
                    if let Value::Text(t) | Value::Bpchar(t) = v
                        && re(t)
                    {
                        mcv_sel += f64::from(*f);
                    }
                }
                h * (1.0 - null_frac - sum_common) + mcv_sel
            }
            None => heuristic.clamp(0.0001, 0.9999),
        }
    };
    if negated {
        sel = 1.0 - sel - null_frac;
    }
    clamp_probability(sel)
}

/// A LIKE pattern's fixed prefix, whether the pattern is exactly it, and the rest's
/// selectivity (`like_fixed_prefix`, `like_selectivity`).
fn like_prefix(p: &[u8], case_insensitive: bool) -> (Vec<u8>, bool, f64) {
    let mut prefix = Vec::new();
    let mut pos = 0;
    while pos < p.len() {
        let b = p[pos];
        if b == b'%' || b == b'_' {
            break;
        }
        if b == b'\\' {
            pos += 1;
            if pos >= p.len() {
                break;
            }
        }
        if case_insensitive && (p[pos].is_ascii_alphabetic() || p[pos] >= 0x80) {
            break;
        }
        prefix.push(p[pos]);
        pos += 1;
    }
    let exact = pos >= p.len();
    let mut sel: f64 = 1.0;
    let rest = &p[pos.min(p.len())..];
    let mut i = rest
        .iter()
        .position(|b| *b != b'%' && *b != b'_')
        .unwrap_or(rest.len());
    while i < rest.len() {
        match rest[i] {
            b'%' => sel *= 5.0,
            b'_' => sel *= 0.9,
            b'\\' => {
                i += 1;
                if i >= rest.len() {
                    break;
                }
                sel *= 0.2;
            }
            _ => sel *= 0.2,
        }
        i += 1;
    }
    (prefix, exact, sel.min(1.0))
}

/// Does a string match a LIKE pattern (no escape clause; `\` escapes)?
fn like_matcher(pattern: &str, case_insensitive: bool) -> impl Fn(&str) -> bool {
    let fold = move |s: &str| {
        if case_insensitive {
            s.to_lowercase()
        } else {
            s.to_string()
        }
    };
    let pat: Vec<char> = fold(pattern).chars().collect();
    move |s: &str| {
        let s: Vec<char> = fold(s).chars().collect();
        like_match(&pat, &s)
    }
}

fn like_match(p: &[char], s: &[char]) -> bool {
    // Iterative matching with backtracking to the last '%'.
    let (mut pi, mut si) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while si < s.len() {
        if pi < p.len() && p[pi] == '%' {
            star = Some(pi);
            mark = si;
            pi += 1;
            continue;
        }
        let (lit, next) = if pi < p.len() && p[pi] == '\\' && pi + 1 < p.len() {
            (Some(p[pi + 1]), pi + 2)
        } else if pi < p.len() && p[pi] == '_' {
            (None, pi + 1)
        } else if pi < p.len() {
            (Some(p[pi]), pi + 1)
        } else {
            (Some('\0'), usize::MAX)
        };
        if next != usize::MAX && lit.is_none_or(|c| c == s[si]) {
            pi = next;
            si += 1;
            continue;
        }
        match star {
            Some(st) => {
                pi = st + 1;
                mark += 1;
                si = mark;
            }
            None => return false,
        }
    }
    while pi < p.len() && p[pi] == '%' {
        pi += 1;
    }
    pi == p.len()
}

/// The fraction of rows starting with `prefix` (`prefix_selectivity`): `>= prefix` and
/// `< the next string` over the histogram, at least the prefix's own equality.
fn prefix_selectivity(rel: &RelInfo<'_>, col: usize, prefix: &[u8]) -> f64 {
    let Some(s) = rel.column(col) else {
        return DEFAULT_MATCH_SEL;
    };
    let Ok(text) = String::from_utf8(prefix.to_vec()) else {
        return DEFAULT_MATCH_SEL;
    };
    let k = Value::Text(text.clone());
    let ge_pass = |v: &Value| v.cmp_non_null(&k).is_ge();
    let Some(mut ge) = histogram_selectivity(rel, col, s, &ge_pass, true, true, &k) else {
        return DEFAULT_MATCH_SEL;
    };
    if let Some(greater) = greater_string(&text) {
        let g = Value::Text(greater);
        let lt_pass = |v: &Value| v.cmp_non_null(&g).is_lt();
        if let Some(lt) = histogram_selectivity(rel, col, s, &lt_pass, false, false, &g) {
            ge = lt + ge - 1.0;
        }
    }
    let eq = eq_const(rel, col, &k, false);
    ge.max(eq)
}

/// The smallest string greater than every string starting with `s` that PostgreSQL's
/// `make_greater_string` finds: the last character incremented (dropped if it cannot be).
fn greater_string(s: &str) -> Option<String> {
    let mut chars: Vec<char> = s.chars().collect();
    while let Some(last) = chars.pop() {
        let mut c = last as u32 + 1;
        while c <= 0x10FFFF {
            if let Some(next) = char::from_u32(c)
                && (last as u32 >= 0x80 || c <= 0x7F)
            {
                chars.push(next);
                return Some(chars.into_iter().collect());
            }
            if (last as u32) < 0x80 {
                break;
            }
            c += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog::{ColumnDesc, IndexDesc};
    use common::Oid;
    use std::sync::Arc;

    fn table(cols: &[(&str, DataType)], unique_first: bool) -> TableDesc {
        TableDesc {
            oid: 1 as Oid,
            rel: 1,
            name: "t".into(),
            columns: cols
                .iter()
                .map(|(n, ty)| ColumnDesc::new(*n, *ty))
                .collect::<Vec<_>>()
                .into(),
            indexes: if unique_first {
                vec![IndexDesc {
                    oid: 2,
                    rel: 2,
                    name: "t_pkey".into(),
                    columns: vec![0],
                    unique: true,
                    primary: true,
                    constraint: true,
                    ..IndexDesc::default()
                }]
            } else {
                vec![]
            },
            ..Default::default()
        }
    }

    fn col(i: usize, ty: DataType) -> Expr {
        Expr::column(i, ty)
    }
    fn int(v: i32) -> Expr {
        Expr::constant(Value::Int4(v), DataType::Int4)
    }
    fn bin(op: BinaryOp, l: Expr, r: Expr) -> Expr {
        Expr::new(
            ExprKind::Binary(op, Box::new(l), Box::new(r)),
            DataType::Bool,
        )
    }
    fn rows(rel: &RelInfo<'_>, e: &Expr) -> f64 {
        clamp_rows(rel.tuples * clause_selectivity(rel, e))
    }

    /// PostgreSQL's numbers for a fresh one-integer-column table, never analyzed.
    #[test]
    fn defaults_without_statistics() {
        let t = table(&[("a", DataType::Int4)], false);
        let rel = RelInfo::new(&t, None, 1);
        assert_eq!(rel.tuples, 2550.0);
        let a = || col(0, DataType::Int4);
        assert_eq!(rows(&rel, &bin(BinaryOp::Eq, a(), int(1))), 13.0);
        assert_eq!(rows(&rel, &bin(BinaryOp::Lt, a(), int(1))), 850.0);
        let range = bin(
            BinaryOp::And,
            bin(BinaryOp::Gt, a(), int(1)),
            bin(BinaryOp::Lt, a(), int(5)),
        );
        assert_eq!(rows(&rel, &range), 13.0);
        let is_null = Expr::new(
            ExprKind::IsNull {
                expr: Box::new(a()),
                negated: false,
            },
            DataType::Bool,
        );
        assert_eq!(rows(&rel, &is_null), 13.0);
        assert_eq!(rows(&rel, &bin(BinaryOp::NotEq, a(), int(1))), 2537.0);
        let in_list = |negated| {
            Expr::new(
                ExprKind::InList {
                    expr: Box::new(a()),
                    list: vec![int(1), int(2), int(3)],
                    negated,
                },
                DataType::Bool,
            )
        };
        assert_eq!(rows(&rel, &in_list(false)), 38.0);
        assert_eq!(rows(&rel, &in_list(true)), 2512.0);
        // int + text: 1270 rows; LIKE with a prefix, a middle, an exact pattern.
        let t = table(&[("a", DataType::Int4), ("b", DataType::Text)], false);
        let rel = RelInfo::new(&t, None, 1);
        assert_eq!(rel.tuples, 1270.0);
        let like = |p: &str| {
            Expr::new(
                ExprKind::Like {
                    expr: Box::new(col(1, DataType::Text)),
                    pattern: Box::new(Expr::constant(Value::Text(p.into()), DataType::Text)),
                    escape: None,
                    negated: false,
                    case_insensitive: false,
                },
                DataType::Bool,
            )
        };
        assert_eq!(rows(&rel, &like("abc%")), 6.0);
        assert_eq!(rows(&rel, &like("%abc%")), 51.0);
        assert_eq!(rows(&rel, &like("abc")), 6.0);
    }

    /// A pattern without a fixed prefix over a column with a histogram of 101 bounds:
    /// the fraction of the inner 99 bounds it matches (PostgreSQL's
    /// histogram_selectivity); over 20 bounds, that mixed with the heuristic by 20%.
    #[test]
    fn like_counts_matching_histogram_bounds() {
        let t = table(&[("b", DataType::Text)], false);
        let rel_of = |bounds: i32| RelStats {
            reltuples: 10000.0,
            relpages: 45,
            relallvisible: 0,
            frozen_xid: 0,
            columns: Arc::from(vec![ColumnStats {
                attnum: 1,
                ty: DataType::Text,
                null_frac: 0.0,
                avg_width: 8,
                n_distinct: -1.0,
                mcv: vec![],
                // Every third bound holds "green".
                histogram: (0..bounds)
                    .map(|i| {
                        let word = if i % 3 == 0 { "green" } else { "red" };
                        Value::Text(format!("{i:04} {word}"))
                    })
                    .collect(),
                correlation: None,
            }]),
        };
        let like = Expr::new(
            ExprKind::Like {
                expr: Box::new(col(0, DataType::Text)),
                pattern: Box::new(Expr::constant(
                    Value::Text("%green%".into()),
                    DataType::Text,
                )),
                escape: None,
                negated: false,
                case_insensitive: false,
            },
            DataType::Bool,
        );
        let stats = rel_of(101);
        let rel = RelInfo::new(&t, Some(&stats), 45);
        // Bounds 1..=99: 33 hold "green".
        assert_eq!(rows(&rel, &like), 3333.0);
        let stats = rel_of(20);
        let rel = RelInfo::new(&t, Some(&stats), 45);
        // Bounds 1..=18: 6 hold "green"; 0.2 of that, 0.8 of the heuristic's.
        let heuristic = like_prefix(b"%green%", false).2;
        let want = ((6.0 / 18.0) * 0.2 + heuristic * 0.8) * 10000.0;
        assert_eq!(rows(&rel, &like), want.round());
    }

    /// A unique column of 0..9999 with a histogram of 101 bounds: interpolation inside
    /// a bin, the equality share, and a range.
    #[test]
    fn histogram_interpolation_and_ranges() {
        let t = table(&[("a", DataType::Int4)], false);
        let stats = RelStats {
            reltuples: 10000.0,
            relpages: 45,
            relallvisible: 0,
            frozen_xid: 0,
            columns: Arc::from(vec![ColumnStats {
                attnum: 1,
                ty: DataType::Int4,
                null_frac: 0.0,
                avg_width: 4,
                n_distinct: -1.0,
                mcv: vec![],
                histogram: (0..=100).map(|i| Value::Int4(i * 100)).collect(),
                correlation: Some(1.0),
            }]),
        };
        let rel = RelInfo::new(&t, Some(&stats), 45);
        assert_eq!(rel.tuples, 10000.0);
        let a = || col(0, DataType::Int4);
        assert_eq!(rows(&rel, &bin(BinaryOp::Lt, a(), int(2550))), 2549.0);
        assert_eq!(rows(&rel, &bin(BinaryOp::LtEq, a(), int(2550))), 2550.0);
        let range = bin(
            BinaryOp::And,
            bin(BinaryOp::GtEq, a(), int(1000)),
            bin(BinaryOp::Lt, a(), int(2000)),
        );
        assert_eq!(rows(&rel, &range), 1000.0);
        // Beyond the histogram: a hundredth of a bin.
        assert_eq!(rows(&rel, &bin(BinaryOp::Gt, a(), int(20000))), 1.0);
        assert_eq!(rows(&rel, &bin(BinaryOp::Eq, a(), int(5))), 1.0);
    }

    #[test]
    fn common_values_and_the_rest() {
        let t = table(&[("s", DataType::Int4)], false);
        // 60% ones, 20% twos, the rest distinct (n_distinct -0.2).
        let stats = RelStats {
            reltuples: 3000.0,
            relpages: 14,
            relallvisible: 0,
            frozen_xid: 0,
            columns: Arc::from(vec![ColumnStats {
                attnum: 1,
                ty: DataType::Int4,
                null_frac: 0.0,
                avg_width: 4,
                n_distinct: -0.20066667,
                mcv: vec![(Value::Int4(1), 0.6), (Value::Int4(2), 0.2)],
                histogram: vec![Value::Int4(8), Value::Int4(1500), Value::Int4(2999)],
                correlation: Some(0.44),
            }]),
        };
        let rel = RelInfo::new(&t, Some(&stats), 14);
        let s = || col(0, DataType::Int4);
        assert_eq!(rows(&rel, &bin(BinaryOp::Eq, s(), int(1))), 1800.0);
        assert_eq!(rows(&rel, &bin(BinaryOp::Eq, s(), int(2))), 600.0);
        // A rare value: (1 - 0.8) / (602 - 2) of 3000 rows.
        assert_eq!(rows(&rel, &bin(BinaryOp::Eq, s(), int(99))), 1.0);
        assert_eq!(rows(&rel, &bin(BinaryOp::NotEq, s(), int(1))), 1200.0);
    }

    #[test]
    fn string_scalars_follow_the_c_collation() {
        let (v, l, u) = string_scalars(b"abm", b"aba", b"abz");
        assert!(l < v && v < u, "{l} {v} {u}");
        assert_eq!(like_prefix(b"a_c%", false), (b"a".to_vec(), false, 1.0));
        assert_eq!(like_prefix(b"abc", false), (b"abc".to_vec(), true, 1.0));
        assert_eq!(greater_string("abc").as_deref(), Some("abd"));
        assert!(like_match(
            &"a%c".chars().collect::<Vec<_>>(),
            &"abbc".chars().collect::<Vec<_>>()
        ));
        assert!(!like_match(
            &"a_c".chars().collect::<Vec<_>>(),
            &"abbc".chars().collect::<Vec<_>>()
        ));
    }
}
