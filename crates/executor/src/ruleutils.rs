//! Stored expressions (a CHECK constraint's condition, a partial index's predicate) as
//! PostgreSQL's ruleutils prints them for `pg_get_constraintdef`, `pg_get_indexdef` and
//! `pg_get_expr`: nothing folded, the implicit casts
//! of operator and function arguments shown (`b >= (0)::numeric`), `x IN (...)` as
//! `x = ANY (ARRAY[...])`. Each operator, test and boolean node brings its own
//! parentheses; `pretty` (psql's `\d`) leaves out those that precedence makes needless,
//! by PostgreSQL's rules (`isSimpleNode`): `c > 0 AND d < 100 OR c IS NULL`.

use catalog::TableDesc;
use common::{DataType, Value};
use sql::bound::{BinaryOp, Expr, ExprKind, ScalarFunc};

use crate::deparse::{bool_test_word, constant, deparse, func_name, like_operator};

/// `e` over columns `names` as PostgreSQL's `pg_get_expr` prints it (`pretty`: with
/// fewer parentheses); constants print in the session's text context `text`.
pub fn deparse_stored_expr(
    text: &common::value::TextContext,
    e: &Expr,
    names: &[String],
    pretty: bool,
) -> String {
    Deparser {
        cx: crate::deparse::ShowCx::new(text),
        names,
        pretty,
    }
    .expr(e, false)
}

/// What ruleutils' precedence rules know of a node.
#[derive(Clone, Copy, PartialEq)]
enum Node {
    /// A column, constant or function call: never parenthesised.
    Simple,
    /// A binary operator: `+ -` low, `* / %` high, anything else other.
    Op(Priority),
    And,
    Or,
    Not,
    /// IS NULL, IS TRUE, IS DISTINCT FROM.
    Test,
    /// `x op ANY (array)`.
    ArrayOp,
    /// A type cast.
    Cast,
}

#[derive(Clone, Copy, PartialEq)]
enum Priority {
    Low,
    High,
    Other,
}

fn node(e: &Expr) -> Node {
    match &e.kind {
        ExprKind::Binary(BinaryOp::And, ..) => Node::And,
        ExprKind::Binary(BinaryOp::Or, ..) => Node::Or,
        ExprKind::Binary(op, ..) => Node::Op(match op {
            BinaryOp::Add | BinaryOp::Sub => Priority::Low,
            BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod => Priority::High,
            _ => Priority::Other,
        }),
        ExprKind::Neg(_) | ExprKind::Like { .. } => Node::Op(Priority::Other),
        ExprKind::Not(_) => Node::Not,
        ExprKind::IsDistinctFrom { negated: true, .. } => Node::Not,
        ExprKind::IsNull { .. } | ExprKind::IsBool { .. } | ExprKind::IsDistinctFrom { .. } => {
            Node::Test
        }
        ExprKind::InList { list, .. } if list.len() == 1 => Node::Op(Priority::Other),
        ExprKind::InList { .. } | ExprKind::Func(ScalarFunc::ArrayCompare { .. }, _) => {
            Node::ArrayOp
        }
        ExprKind::Cast { .. } => Node::Cast,
        _ => Node::Simple,
    }
}

/// May `child` go without parentheses under `parent` (`isSimpleNode`)? `first`: it is
/// the parent operator's left operand.
fn simple_under(child: &Expr, parent: Node, first: bool) -> bool {
    match node(child) {
        Node::Simple => true,
        Node::Cast => match &child.kind {
            ExprKind::Cast { expr, .. } => simple_under(expr, Node::Cast, true),
            _ => true,
        },
        Node::Op(op) => {
            if let Node::Op(p) = parent {
                return match (op, p) {
                    (Priority::Other, _) | (_, Priority::Other) => false,
                    (Priority::High, Priority::Low) => true,
                    (Priority::Low, Priority::High) => false,
                    // Same priority: (a - b) - c, not a - (b - c).
                    _ => first,
                };
            }
            matches!(parent, Node::And | Node::Or | Node::Not)
        }
        Node::Test | Node::ArrayOp => matches!(parent, Node::And | Node::Or | Node::Not),
        Node::And | Node::Not => matches!(parent, Node::And | Node::Or | Node::Not),
        Node::Or => parent == Node::Or,
    }
}

struct Deparser<'a> {
    cx: crate::deparse::ShowCx<'a>,
    names: &'a [String],
    pretty: bool,
}

impl Deparser<'_> {
    /// `e` with its own parentheses; `show_implicit`: an implicit cast is printed (an
    /// operator's or function's argument) rather than left out (the whole expression).
    fn expr(&self, e: &Expr, show_implicit: bool) -> String {
        let wrap = |s: String| if self.pretty { s } else { format!("({s})") };
        match &e.kind {
            ExprKind::Const(v) => constant(self.cx.text, v, &e.ty),
            ExprKind::Column(i) => match self.names.get(*i) {
                Some(n) => common::ids::quote_identifier(n).into_owned(),
                None => format!("${i}"),
            },
            // PostgreSQL's parser makes `-1` a constant.
            ExprKind::Neg(x) if matches!(x.kind, ExprKind::Const(_)) => {
                match crate::cast::fold_constant(e, self.cx.text) {
                    Ok(v) => constant(self.cx.text, &v, &e.ty),
                    Err(_) => wrap(format!("- {}", self.arg(x, e, true))),
                }
            }
            ExprKind::Neg(x) => wrap(format!("- {}", self.arg(x, e, false))),
            ExprKind::Not(x) => wrap(format!("NOT {}", self.arg(x, e, true))),
            ExprKind::Binary(op @ (BinaryOp::And | BinaryOp::Or), _, _) => {
                let mut parts = Vec::new();
                flatten(e, *op, &mut parts);
                let word = if *op == BinaryOp::And {
                    " AND "
                } else {
                    " OR "
                };
                wrap(
                    parts
                        .iter()
                        .map(|p| self.arg(p, e, false))
                        .collect::<Vec<_>>()
                        .join(word),
                )
            }
            ExprKind::Binary(op, l, r) => wrap(format!(
                "{} {} {}",
                self.arg(l, e, true),
                op.symbol(),
                self.operand(r, e)
            )),
            ExprKind::Like {
                expr,
                pattern,
                negated,
                case_insensitive,
                escape: None,
            } => wrap(format!(
                "{} {} {}",
                self.arg(expr, e, true),
                like_operator(*negated, *case_insensitive),
                self.operand(pattern, e)
            )),
            ExprKind::IsNull { expr, negated } => wrap(format!(
                "{} IS {}NULL",
                self.arg(expr, e, true),
                if *negated { "NOT " } else { "" }
            )),
            ExprKind::IsBool {
                expr,
                value,
                negated,
            } => wrap(format!(
                "{} IS {}{}",
                self.arg(expr, e, true),
                if *negated { "NOT " } else { "" },
                bool_test_word(*value)
            )),
            // `a IS NOT DISTINCT FROM b` is NOT over IS DISTINCT FROM in PostgreSQL.
            ExprKind::IsDistinctFrom {
                left,
                right,
                negated,
            } => {
                let inner = Expr::new(
                    ExprKind::IsDistinctFrom {
                        left: left.clone(),
                        right: right.clone(),
                        negated: false,
                    },
                    DataType::Bool,
                );
                let test = wrap(format!(
                    "{} IS DISTINCT FROM {}",
                    self.arg(left, &inner, true),
                    self.operand(right, &inner)
                ));
                if *negated {
                    let paren = self.pretty && !simple_under(&inner, Node::Not, true);
                    wrap(format!(
                        "NOT {}",
                        if paren { format!("({test})") } else { test }
                    ))
                } else {
                    test
                }
            }
            // `x IN (a)` is `x = a`; with more, `x = ANY (ARRAY[a, b])` (`<> ALL` for
            // NOT IN), as PostgreSQL's parser makes them.
            ExprKind::InList {
                expr,
                list,
                negated,
            } => {
                let op = if *negated { "<>" } else { "=" };
                if let [one] = list.as_slice() {
                    return wrap(format!(
                        "{} {op} {}",
                        self.arg(expr, e, true),
                        self.operand(one, e)
                    ));
                }
                let items: Vec<String> = list.iter().map(|x| self.expr(x, true)).collect();
                wrap(format!(
                    "{} {op} {} (ARRAY[{}])",
                    self.arg(expr, e, true),
                    if *negated { "ALL" } else { "ANY" },
                    items.join(", ")
                ))
            }
            ExprKind::Func(ScalarFunc::ArrayCompare { op, all }, args) if args.len() == 2 => {
                wrap(format!(
                    "{} {} {} ({})",
                    self.arg(&args[0], e, true),
                    op.symbol(),
                    if *all { "ALL" } else { "ANY" },
                    self.expr(&args[1], true)
                ))
            }
            ExprKind::Func(ScalarFunc::ArrayCtor, args) => format!(
                "ARRAY[{}]",
                args.iter()
                    .map(|a| self.expr(a, true))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ExprKind::Func(
                ScalarFunc::CurrentDate
                | ScalarFunc::CurrentTimestamp
                | ScalarFunc::LocalTimestamp
                | ScalarFunc::NextVal
                | ScalarFunc::CurrVal
                | ScalarFunc::SetVal,
                _,
            ) => deparse(&self.cx, e, self.names),
            ExprKind::Func(ScalarFunc::Subscript, args) if !args.is_empty() => {
                let base = self.expr(&args[0], true);
                let mut out = match args[0].kind {
                    ExprKind::Column(_) => base,
                    _ => format!("({base})"),
                };
                for i in &args[1..] {
                    out.push_str(&format!("[{}]", self.expr(i, true)));
                }
                out
            }
            // PostgreSQL 14+ keeps EXTRACT's own syntax.
            ExprKind::Func(ScalarFunc::Extract, args) if extract_field(args).is_some() => format!(
                "EXTRACT({} FROM {})",
                extract_field(args).unwrap_or_default(),
                self.expr(&args[1], false)
            ),
            ExprKind::Func(f, args) => format!(
                "{}({})",
                func_name(*f),
                args.iter()
                    .map(|a| self.func_arg(a))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ExprKind::Cast {
                expr,
                explicit: false,
            } if !show_implicit => self.expr(expr, false),
            ExprKind::Cast { expr, .. } => {
                let inner = self.expr(expr, true);
                let inner = if !self.pretty || !simple_under(expr, Node::Cast, true) {
                    format!("({inner})")
                } else {
                    inner
                };
                format!("{inner}::{}", e.ty.name())
            }
            ExprKind::Coalesce(list) => format!(
                "COALESCE({})",
                list.iter()
                    .map(|a| self.expr(a, true))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ExprKind::NullIf(a, b) => {
                format!("NULLIF({}, {})", self.expr(a, true), self.expr(b, true))
            }
            ExprKind::Case { whens, else_result } => {
                let mut s = String::from("CASE");
                for (w, t) in whens {
                    s.push_str(&format!(
                        " WHEN {} THEN {}",
                        self.expr(w, false),
                        self.expr(t, true)
                    ));
                }
                if !matches!(&else_result.kind, ExprKind::Const(Value::Null)) {
                    s.push_str(&format!(" ELSE {}", self.expr(else_result, true)));
                }
                s.push_str(" END");
                s
            }
            _ => deparse(&self.cx, e, self.names),
        }
    }

    /// A child of `parent`, parenthesised in pretty mode where precedence needs it
    /// (`get_rule_expr_paren`); `first`: the left operand.
    fn arg(&self, child: &Expr, parent: &Expr, first: bool) -> String {
        if !matches!(node(parent), Node::And | Node::Or | Node::Not)
            && let Some(s) = self.varchar_as_text(child)
        {
            return s;
        }
        let s = self.expr(
            child,
            !matches!(node(parent), Node::And | Node::Or | Node::Not),
        );
        if self.pretty && !simple_under(child, node(parent), first) {
            format!("({s})")
        } else {
            s
        }
    }

    /// PostgreSQL has no varchar operators or functions: a varchar argument is read as
    /// text (`(v)::text <> ''::text`, `length((v)::text)`), a literal typed as text.
    fn varchar_as_text(&self, e: &Expr) -> Option<String> {
        if !matches!(e.ty, DataType::Varchar(_)) {
            return None;
        }
        Some(match &e.kind {
            ExprKind::Const(v) => constant(self.cx.text, v, &DataType::Text),
            _ => {
                let inner = self.expr(e, true);
                if self.pretty && simple_under(e, Node::Cast, true) {
                    format!("{inner}::text")
                } else {
                    format!("({inner})::text")
                }
            }
        })
    }

    /// A function's argument.
    fn func_arg(&self, e: &Expr) -> String {
        self.varchar_as_text(e)
            .unwrap_or_else(|| self.expr(e, true))
    }

    /// The right operand of a binary operator.
    fn operand(&self, child: &Expr, parent: &Expr) -> String {
        self.arg(child, parent, false)
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

pub(crate) fn column_names(table: &TableDesc) -> Vec<String> {
    table.columns.iter().map(|c| c.name.clone()).collect()
}

/// Key column `c` of `index` as `pg_get_indexdef` prints it: a column's name, or an
/// expression, in parentheses of its own unless it is a function call.
pub(crate) fn index_column(
    s: &crate::session::Session,
    table: &TableDesc,
    index: &catalog::IndexDesc,
    c: usize,
    pretty: bool,
) -> String {
    let Some(k) = catalog::IndexDesc::expression(c) else {
        return common::ids::quote_identifier(&table.columns[c].name).into_owned();
    };
    let Some(e) = index.exprs.get(k) else {
        return "expr".into();
    };
    match sql::binder::bind_index_expr(&s.catalog, table, &e.text, s.info) {
        Ok(b) => key_expression(s.text(), &b, table, pretty),
        // Not expected: the text was bound when the index was made.
        Err(_) => format!("({})", e.text),
    }
}

/// The field of an EXTRACT call's arguments (`year` of `EXTRACT(year FROM d)`).
fn extract_field(args: &[Expr]) -> Option<&str> {
    match args {
        [field, _] => match &field.kind {
            ExprKind::Const(Value::Text(f)) => Some(f),
            _ => None,
        },
        _ => None,
    }
}

/// An expression of an index's or a partition key's key as PostgreSQL lists it: in
/// parentheses of its own unless it looks like a function call (ruleutils'
/// `looks_like_function`: a call, COALESCE, GREATEST and LEAST).
fn key_expression(
    text: &common::value::TextContext,
    e: &Expr,
    table: &TableDesc,
    pretty: bool,
) -> String {
    let shown = deparse_stored_expr(text, e, &column_names(table), pretty);
    let call = match &e.kind {
        ExprKind::Func(f, _) => !matches!(
            f,
            ScalarFunc::Subscript | ScalarFunc::ArrayCompare { .. } | ScalarFunc::ArrayCtor
        ),
        ExprKind::Coalesce(_) => true,
        _ => false,
    };
    if call { shown } else { format!("({shown})") }
}

/// A partial index's predicate as `pg_get_indexdef` prints it after `WHERE` (`pretty`:
/// psql's `\d`, without the outer parentheses), or `None` for a whole-table index.
pub(crate) fn index_predicate(
    s: &crate::session::Session,
    table: &TableDesc,
    index: &catalog::IndexDesc,
    pretty: bool,
) -> Option<String> {
    let text = index.predicate.as_ref()?;
    Some(
        match sql::binder::bind_index_predicate(&s.catalog, table, text, s.info) {
            Ok(e) => deparse_stored_expr(s.text(), &e, &column_names(table), pretty),
            // Not expected: the text was bound when the index was made.
            Err(_) => text.clone(),
        },
    )
}

/// `CHECK (condition)` as `pg_get_constraintdef` prints it, `NOT VALID` after one whose
/// rows were not checked.
pub(crate) fn check_definition(
    s: &crate::session::Session,
    table: &TableDesc,
    check: &catalog::CheckConstraint,
    pretty: bool,
) -> String {
    let condition = match sql::binder::bind_check(&s.catalog, table, &check.expr, s.info) {
        Ok(e) => deparse_stored_expr(s.text(), &e, &column_names(table), pretty),
        // Not expected: the text was bound when the constraint was made.
        Err(_) => check.expr.clone(),
    };
    let mut s = format!("CHECK ({condition})");
    if !check.validated {
        s.push_str(" NOT VALID");
    }
    s
}

/// A partitioned table's key as `pg_get_partkeydef` prints it (`RANGE (a, lower(b))`);
/// `None` for any other table.
pub(crate) fn partition_key_definition(
    s: &crate::session::Session,
    t: &TableDesc,
) -> Option<String> {
    let key = t.partition_key.as_ref()?;
    let parts = partition_key_parts(s, t, false);
    Some(format!("{} ({})", key.strategy.keyword(), parts.join(", ")))
}

/// The parts of partitioned table `t`'s key as `pg_get_partkeydef` lists them: a
/// column's name, or an expression as [`key_expression`] shows it (`pretty`: as
/// PostgreSQL's messages show them).
pub(crate) fn partition_key_parts(
    s: &crate::session::Session,
    t: &TableDesc,
    pretty: bool,
) -> Vec<String> {
    let Some(key) = &t.partition_key else {
        return Vec::new();
    };
    let exprs = sql::binder::bind_partition_key_exprs(&s.catalog, t, s.info).unwrap_or_default();
    key.columns
        .iter()
        .map(|&c| match catalog::partition::PartitionKey::expression(c) {
            Some(k) => match exprs.get(k) {
                Some(e) => key_expression(s.text(), e, t, pretty),
                // Not expected: the text was bound when the table was made.
                None => key
                    .exprs
                    .get(k)
                    .map(|e| format!("({})", e.text))
                    .unwrap_or_default(),
            },
            None => common::ids::quote_identifier(&t.columns[c].name).into_owned(),
        })
        .collect()
}

/// A partition's bound as `pg_get_expr(relpartbound, oid)` prints it (`FOR VALUES FROM
/// (1) TO (10)`); `None` for a table that is no partition.
pub(crate) fn partition_bound(text: &common::value::TextContext, t: &TableDesc) -> Option<String> {
    use catalog::partition::{PartitionBound, RangeDatum};
    let of = t.partition_of.as_ref()?;
    let value = |v: &Value| bound_constant(text, v);
    Some(match &of.bound {
        PartitionBound::Default => "DEFAULT".to_string(),
        PartitionBound::Hash { modulus, remainder } => {
            format!("FOR VALUES WITH (modulus {modulus}, remainder {remainder})")
        }
        PartitionBound::List(values) => {
            let items: Vec<String> = values.iter().map(value).collect();
            format!("FOR VALUES IN ({})", items.join(", "))
        }
        PartitionBound::Range { from, to } => {
            let side = |datums: &[RangeDatum]| {
                datums
                    .iter()
                    .map(|d| match d {
                        RangeDatum::MinValue => "MINVALUE".to_string(),
                        RangeDatum::MaxValue => "MAXVALUE".to_string(),
                        RangeDatum::Value(v) => value(v),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            format!("FOR VALUES FROM ({}) TO ({})", side(from), side(to))
        }
    })
}

/// A bound's value as ruleutils prints a constant without its type: a non-negative
/// `integer`, a `numeric` with a point or exponent and a `boolean` bare, anything else
/// quoted (`'-5'`, `'10'` for a bigint, `'2020-01-01'`).
fn bound_constant(text: &common::value::TextContext, v: &Value) -> String {
    let Some(s) = v.to_text(text) else {
        return "NULL".to_string();
    };
    let bare = match v {
        Value::Int4(_) => !s.starts_with('-'),
        Value::Numeric(_) => {
            s.starts_with(|c: char| c.is_ascii_digit()) && s.contains(['.', 'e', 'E'])
        }
        Value::Bool(_) => return if s == "t" { "true" } else { "false" }.to_string(),
        _ => false,
    };
    if bare {
        s
    } else {
        format!("'{}'", s.replace('\'', "''"))
    }
}

/// The conditions a range partition's bound `from` .. `to` over key columns `cols`
/// puts on a row, as PostgreSQL words them (its NOT NULL tests apart): each leading
/// column both bounds fix to one value equal to it; then from the first column they
/// differ in, the lower bound as an OR of arms (`a > 0`, then `a = 0 AND b >= 10`, one
/// more column each, the last `>=` where it is the key's last column or MINVALUE follows
/// it) while its values are finite, and the upper bound alike (`<`, `<=` where MAXVALUE
/// follows).
fn range_conjuncts(
    cols: &[usize],
    from: &[catalog::partition::RangeDatum],
    to: &[catalog::partition::RangeDatum],
    name: &dyn Fn(usize) -> String,
    konst: &dyn Fn(usize, &Value) -> String,
) -> Vec<String> {
    use catalog::partition::RangeDatum;
    let n = cols.len().min(from.len()).min(to.len());
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        match (&from[i], &to[i]) {
            (RangeDatum::Value(a), RangeDatum::Value(b)) if a.cmp_non_null(b).is_eq() => {
                out.push(format!("({} = {})", name(cols[i]), konst(cols[i], a)));
                i += 1;
            }
            _ => break,
        }
    }
    if i == n {
        return out;
    }
    let arms = |bound: &[RangeDatum], lower: bool| -> Option<String> {
        let mut arms = Vec::new();
        for j in i..n {
            let RangeDatum::Value(v) = &bound[j] else {
                break;
            };
            let next = bound.get(j + 1).filter(|_| j + 1 < n);
            let op = match (lower, next) {
                (true, None | Some(RangeDatum::MinValue)) => ">=",
                (true, _) => ">",
                (false, Some(RangeDatum::MaxValue)) => "<=",
                (false, _) => "<",
            };
            let mut conj: Vec<String> = (i..j)
                .filter_map(|e| match &bound[e] {
                    RangeDatum::Value(x) => {
                        Some(format!("({} = {})", name(cols[e]), konst(cols[e], x)))
                    }
                    _ => None,
                })
                .collect();
            conj.push(format!("({} {op} {})", name(cols[j]), konst(cols[j], v)));
            arms.push(match conj.as_slice() {
                [one] => one.clone(),
                all => format!("({})", all.join(" AND ")),
            });
            if !matches!(next, Some(RangeDatum::Value(_))) {
                break;
            }
        }
        match arms.as_slice() {
            [] => None,
            [one] => Some(one.clone()),
            all => Some(format!("({})", all.join(" OR "))),
        }
    };
    out.extend(arms(from, true));
    out.extend(arms(to, false));
    out
}

/// A partition's constraint as `pg_get_partition_constraintdef` prints it: what its
/// bound and each bound above it require of a row (`((a IS NOT NULL) AND (a >= 10) AND
/// (a < 20))`). `None` for a table that is no partition, and for the bounds whose
/// constraint PostgreSQL writes out in forms not made here yet (over several key
/// columns; a DEFAULT hash partition's): psql then shows no constraint. A DEFAULT
/// partition's is NOT what its siblings take.
pub(crate) fn partition_constraint(s: &crate::session::Session, t: &TableDesc) -> Option<String> {
    use catalog::partition::{PartitionBound, PartitionKey};
    let (catalog, text) = (&s.catalog, s.text());
    t.partition_of.as_ref()?;
    // From the root down.
    let mut chain = vec![t];
    while let Some(p) = chain
        .last()
        .and_then(|c| c.partition_of.as_ref())
        .and_then(|o| catalog.table_by_oid(o.parent))
    {
        chain.push(p);
    }
    chain.reverse();
    let mut parts: Vec<String> = Vec::new();
    for pair in chain.windows(2) {
        let (parent, part) = (pair[0], pair[1]);
        let (key, of) = (parent.partition_key.as_ref()?, part.partition_of.as_ref()?);
        // A key part: a column by name, an expression as an operand (PostgreSQL's
        // deparsed node: an operator in its own parentheses).
        // Folded, as PostgreSQL's partition key holds its expressions.
        let exprs: Vec<Expr> = sql::binder::bind_partition_key_exprs(catalog, parent, s.info)
            .ok()?
            .into_iter()
            .map(planner::fold)
            .collect();
        let name = |c: usize| match PartitionKey::expression(c) {
            Some(k) => exprs
                .get(k)
                .map(|e| deparse_stored_expr(text, e, &column_names(t), false))
                .unwrap_or_default(),
            None => common::ids::quote_identifier(&t.columns[c].name).into_owned(),
        };
        let konst = |c: usize, v: &Value| {
            let ty = key
                .part_type(c, &t.columns)
                .unwrap_or(common::DataType::Text);
            crate::deparse::constant(text, v, &ty)
        };
        match &of.bound {
            PartitionBound::Default => {
                // NOT what its siblings take (PostgreSQL's `get_qual_for_default`).
                let siblings: Vec<PartitionBound> = catalog
                    .partitions(parent.oid)
                    .map(|p| p.all())
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|o| catalog.table_by_oid(o))
                    .filter_map(|s| s.partition_of.as_ref().map(|o| o.bound.clone()))
                    .filter(|b| *b != PartitionBound::Default)
                    .collect();
                if siblings.is_empty() {
                    return None;
                }
                let taken = match key.strategy {
                    catalog::partition::PartitionStrategy::List => {
                        let c = key.columns[0];
                        let mut null = false;
                        let mut items = Vec::new();
                        for b in &siblings {
                            if let PartitionBound::List(values) = b {
                                for v in values {
                                    if v.is_null() {
                                        null = true;
                                    } else {
                                        items.push(konst(c, v));
                                    }
                                }
                            }
                        }
                        let any = match items.as_slice() {
                            [one] => format!("({} = {one})", name(c)),
                            many => format!("({} = ANY (ARRAY[{}]))", name(c), many.join(", ")),
                        };
                        if null {
                            format!("(({} IS NULL) OR {any})", name(c))
                        } else {
                            format!("(({} IS NOT NULL) AND {any})", name(c))
                        }
                    }
                    catalog::partition::PartitionStrategy::Range => {
                        let not_null: Vec<String> = key
                            .columns
                            .iter()
                            .map(|&c| format!("({} IS NOT NULL)", name(c)))
                            .collect();
                        let qual = |b: &PartitionBound| -> Vec<String> {
                            match b {
                                PartitionBound::Range { from, to } => {
                                    range_conjuncts(&key.columns, from, to, &name, &konst)
                                }
                                _ => Vec::new(),
                            }
                        };
                        // Each sibling's conditions as one arm (PostgreSQL keeps an
                        // arm of several conditions parenthesised, even alone).
                        let arms: Vec<String> = siblings
                            .iter()
                            .map(|b| match qual(b).as_slice() {
                                [] => "true".to_string(),
                                [one] => one.clone(),
                                all => format!("({})", all.join(" AND ")),
                            })
                            .collect();
                        let taken = match arms.as_slice() {
                            [one] => one.clone(),
                            many => format!("({})", many.join(" OR ")),
                        };
                        format!("({} AND {taken})", not_null.join(" AND "))
                    }
                    catalog::partition::PartitionStrategy::Hash => return None,
                };
                parts.push(format!("(NOT {taken})"));
            }
            PartitionBound::Hash { modulus, remainder } => {
                let cols: Vec<String> = key.columns.iter().map(|&c| name(c)).collect();
                parts.push(format!(
                    "satisfies_hash_partition('{}'::oid, {modulus}, {remainder}, {})",
                    parent.oid,
                    cols.join(", ")
                ));
            }
            PartitionBound::List(values) => {
                let c = key.columns[0];
                let items: Vec<String> = values
                    .iter()
                    .filter(|v| !v.is_null())
                    .map(|v| konst(c, v))
                    .collect();
                let test = match items.as_slice() {
                    [] => None,
                    [one] => Some(format!("({} = {one})", name(c))),
                    many => Some(format!("({} = ANY (ARRAY[{}]))", name(c), many.join(", "))),
                };
                let null = values.iter().any(Value::is_null);
                match (test, null) {
                    (Some(test), false) => {
                        parts.push(format!("({} IS NOT NULL)", name(c)));
                        parts.push(test);
                    }
                    (Some(test), true) => parts.push(format!("(({} IS NULL) OR {test})", name(c))),
                    (None, _) => parts.push(format!("({} IS NULL)", name(c))),
                }
            }
            PartitionBound::Range { from, to } => {
                for &c in &key.columns {
                    parts.push(format!("({} IS NOT NULL)", name(c)));
                }
                parts.extend(range_conjuncts(&key.columns, from, to, &name, &konst));
            }
        }
    }
    Some(match parts.as_slice() {
        [one] => one.clone(),
        _ => format!("({})", parts.join(" AND ")),
    })
}
