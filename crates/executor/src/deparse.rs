//! Expressions as PostgreSQL's ruleutils prints them: [`deparse`] for EXPLAIN's
//! conditions and output lists (constants folded, subqueries named as EXPLAIN numbers
//! them), [`deparse_stored`] for the expressions a catalog keeps (`pg_get_expr`). Below
//! EXPLAIN and the catalog functions, which both print with it; it evaluates nothing but
//! constant folding (`crate::cast`).

use common::{DataType, Value};
use sql::bound::{
    AggCall, AggFunc, BinaryOp, Expr, ExprKind, LogicalPlan, ScalarFunc, SubLinkKind,
};

/// What showing an expression reads: the session's text context (constants print as
/// its output functions print them), and, for the EXPLAIN being printed, the numbers of
/// the subqueries shown so far and the outer values of the subplans being shown
/// (innermost last): what [`deparse`] prints for a SubLink and for an outer reference.
pub struct ShowCx<'a> {
    pub text: &'a common::value::TextContext,
    pub(crate) subplans: std::cell::RefCell<SubplanNames>,
}

impl<'a> ShowCx<'a> {
    pub fn new(text: &'a common::value::TextContext) -> ShowCx<'a> {
        ShowCx {
            text,
            subplans: Default::default(),
        }
    }
}

#[derive(Default)]
pub(crate) struct SubplanNames {
    pub(crate) numbers: std::collections::HashMap<*const LogicalPlan, usize>,
    /// The InitPlans' output parameters (`$k`), by subquery.
    pub(crate) params: std::collections::HashMap<*const LogicalPlan, usize>,
    /// Those whose `SubPlan n` tree is placed.
    pub(crate) placed: std::collections::HashSet<*const LogicalPlan>,
    pub(crate) outer: Vec<Vec<String>>,
}

/// The `SubPlan n` number of a subquery (the next one the first time it is named).
pub(crate) fn subplan_number(cx: &ShowCx, query: &std::sync::Arc<LogicalPlan>) -> usize {
    let mut s = cx.subplans.borrow_mut();
    let next = s.numbers.len() + 1;
    *s.numbers
        .entry(std::sync::Arc::as_ptr(query))
        .or_insert(next)
}

/// An uncorrelated scalar, EXISTS or ARRAY subquery runs once, before the plan: a
/// PostgreSQL InitPlan, whose result the expression reads as parameter `$k` (numbered
/// as they are first shown).
pub(crate) fn init_param(cx: &ShowCx, link: &sql::bound::SubLink) -> Option<usize> {
    if !link.args.is_empty()
        || !matches!(
            link.kind,
            SubLinkKind::Scalar | SubLinkKind::Exists | SubLinkKind::Array
        )
    {
        return None;
    }
    let mut s = cx.subplans.borrow_mut();
    let next = s.params.len();
    Some(
        *s.params
            .entry(std::sync::Arc::as_ptr(&link.query))
            .or_insert(next),
    )
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

/// Conjuncts as one qual: one as itself, several as `(a AND b AND ...)`.
pub(crate) fn deparse_and(cx: &ShowCx, list: &[&Expr], names: &[String]) -> String {
    match list {
        [one] => deparse(cx, one, names),
        many => format!(
            "({})",
            many.iter()
                .map(|e| deparse(cx, e, names))
                .collect::<Vec<_>>()
                .join(" AND ")
        ),
    }
}

/// `e` as PostgreSQL's ruleutils prints an expression, for the forms Myriad binds.
pub fn deparse(cx: &ShowCx, e: &Expr, names: &[String]) -> String {
    let d = |x: &Expr| deparse(cx, x, names);
    match &e.kind {
        ExprKind::Const(v) => constant(cx.text, v, &e.ty),
        ExprKind::Column(i) => names.get(*i).cloned().unwrap_or_else(|| format!("${i}")),
        ExprKind::Param(i) => format!("${}", i + 1),
        ExprKind::Outer(i) => cx
            .subplans
            .borrow()
            .outer
            .last()
            .and_then(|o| o.get(*i).cloned())
            .unwrap_or_else(|| "?".into()),
        ExprKind::SubLink(link) => {
            let n = subplan_number(cx, &link.query);
            if let Some(k) = init_param(cx, link) {
                return format!("${k}");
            }
            if planner::hashed_subplan(link) {
                format!("(hashed SubPlan {n})")
            } else {
                format!("(SubPlan {n})")
            }
        }
        ExprKind::Neg(x) => format!("(- {})", d(x)),
        ExprKind::Not(x) => format!("(NOT {})", d(x)),
        ExprKind::Binary(op @ (BinaryOp::And | BinaryOp::Or), _, _) => {
            // PostgreSQL flattens AND (OR) chains into one list.
            let mut parts = Vec::new();
            flatten(e, *op, &mut parts);
            let word = if *op == BinaryOp::And {
                " AND "
            } else {
                " OR "
            };
            format!(
                "({})",
                parts.iter().map(|p| d(p)).collect::<Vec<_>>().join(word)
            )
        }
        ExprKind::Binary(op, l, r) => format!("({} {} {})", d(l), op.symbol(), d(r)),
        ExprKind::IsNull { expr, negated } => {
            format!(
                "({} IS {}NULL)",
                d(expr),
                if *negated { "NOT " } else { "" }
            )
        }
        ExprKind::IsBool {
            expr,
            value,
            negated,
        } => format!(
            "({} IS {}{})",
            d(expr),
            if *negated { "NOT " } else { "" },
            bool_test_word(*value)
        ),
        ExprKind::IsDistinctFrom {
            left,
            right,
            negated,
        } => format!(
            "({} IS {}DISTINCT FROM {})",
            d(left),
            if *negated { "NOT " } else { "" },
            d(right)
        ),
        ExprKind::Like {
            expr,
            pattern,
            negated,
            case_insensitive,
            ..
        } => format!(
            "({} {} {})",
            d(expr),
            like_operator(*negated, *case_insensitive),
            d(pattern)
        ),
        // As PostgreSQL's parser makes it: one value a comparison, constants one array
        // constant, else an ARRAY[...] (`= ANY`, or `<> ALL` for NOT IN).
        ExprKind::InList {
            expr,
            list,
            negated,
        } => {
            let (op, quantifier) = if *negated {
                ("<>", "ALL")
            } else {
                ("=", "ANY")
            };
            let constants: Option<Vec<Value>> = list
                .iter()
                .map(|i| match &i.kind {
                    ExprKind::Const(v) if i.ty == expr.ty => Some(v.clone()),
                    _ => None,
                })
                .collect();
            let array_ty = expr.ty.array();
            // A list reading columns is PostgreSQL's OR of comparisons (AND for NOT IN).
            let reads_columns = list.iter().any(|i| {
                let mut found = false;
                i.walk(&mut |n| {
                    found |= matches!(n.kind, ExprKind::Column(_) | ExprKind::Outer(_));
                });
                found
            });
            match (list.as_slice(), constants, array_ty) {
                ([one], _, _) => format!("({} {op} {})", d(expr), d(one)),
                (many, _, _) if reads_columns => {
                    let joiner = if *negated { " AND " } else { " OR " };
                    let arms: Vec<String> = many
                        .iter()
                        .map(|i| format!("({} {op} {})", d(expr), d(i)))
                        .collect();
                    format!("({})", arms.join(joiner))
                }
                (_, Some(items), Some(array_ty)) => {
                    let array = Value::Array(std::sync::Arc::new(
                        common::array::Array::from_items(expr.ty.oid(), items),
                    ));
                    format!(
                        "({} {op} {quantifier} ({}))",
                        d(expr),
                        constant(cx.text, &array, &array_ty)
                    )
                }
                _ => format!(
                    "({} {op} {quantifier} (ARRAY[{}]))",
                    d(expr),
                    list.iter().map(d).collect::<Vec<_>>().join(", ")
                ),
            }
        }
        ExprKind::Case { whens, else_result } => {
            let mut s = String::from("CASE");
            for (w, t) in whens {
                s.push_str(&format!(" WHEN {} THEN {}", d(w), d(t)));
            }
            s.push_str(&format!(" ELSE {} END", d(else_result)));
            s
        }
        ExprKind::Coalesce(list) => format!(
            "COALESCE({})",
            list.iter().map(d).collect::<Vec<_>>().join(", ")
        ),
        ExprKind::NullIf(a, b) => format!("NULLIF({}, {})", d(a), d(b)),
        // Constants are folded, as PostgreSQL's planner folds them before EXPLAIN shows
        // them; a cast the binder added is not shown, as PostgreSQL hides implicit ones.
        ExprKind::Cast { .. } if is_constant(e) => match crate::cast::fold_constant(e, cx.text) {
            Ok(v) => constant(cx.text, &v, &e.ty),
            Err(_) => format!("({})::{}", cast_operand(cx, e, names), e.ty.name()),
        },
        ExprKind::Cast {
            expr,
            explicit: false,
        } => d(expr),
        ExprKind::Cast { expr, .. } => format!("({})::{}", d(expr), e.ty.name()),
        // The array constructs and operators print as written, as ruleutils does; an
        // array of constants is folded into one, as the planner folds it.
        ExprKind::Func(ScalarFunc::ArrayCtor, _) if is_constant(e) => {
            match crate::cast::fold_constant(e, cx.text) {
                Ok(v) => constant(cx.text, &v, &e.ty),
                Err(_) => "ARRAY[...]".into(),
            }
        }
        ExprKind::Func(ScalarFunc::ArrayCtor, args) => format!(
            "ARRAY[{}]",
            args.iter().map(d).collect::<Vec<_>>().join(", ")
        ),
        ExprKind::Func(ScalarFunc::Subscript, args) => {
            let mut s = d(&args[0]);
            for i in &args[1..] {
                s.push_str(&format!("[{}]", d(i)));
            }
            s
        }
        ExprKind::Func(ScalarFunc::ArrayCompare { op, all }, args) => format!(
            "({} {} {} ({}))",
            d(&args[0]),
            op.symbol(),
            if *all { "ALL" } else { "ANY" },
            d(&args[1])
        ),
        ExprKind::Func(
            f @ (ScalarFunc::ArrayContains | ScalarFunc::ArrayContained | ScalarFunc::ArrayOverlap),
            args,
        ) => {
            let symbol = match f {
                ScalarFunc::ArrayContains => "@>",
                ScalarFunc::ArrayContained => "<@",
                _ => "&&",
            };
            format!("({} {symbol} {})", d(&args[0]), d(&args[1]))
        }
        ExprKind::Func(ScalarFunc::CurrentDate, _) => "CURRENT_DATE".into(),
        ExprKind::Func(ScalarFunc::CurrentTimestamp, _) => "CURRENT_TIMESTAMP".into(),
        ExprKind::Func(ScalarFunc::LocalTimestamp, _) => "LOCALTIMESTAMP".into(),
        // The binder resolved the sequence to its OID; PostgreSQL shows the regclass.
        ExprKind::Func(
            f @ (ScalarFunc::NextVal | ScalarFunc::CurrVal | ScalarFunc::SetVal),
            args,
        ) => {
            let mut shown: Vec<String> = args.iter().map(d).collect();
            if let Some(ExprKind::Const(Value::Int8(oid))) = args.first().map(|a| &a.kind) {
                let class = common::value::RegKind::Class;
                shown[0] = constant(
                    cx.text,
                    &Value::Reg(class, *oid as u32),
                    &DataType::Reg(class),
                );
            }
            format!("{}({})", func_name(*f), shown.join(", "))
        }
        // The system column a partitioned table's `tableoid` reads.
        ExprKind::Func(ScalarFunc::PartitionOfRow, _) => "tableoid".into(),
        ExprKind::Func(f, args) => format!(
            "{}({})",
            func_name(*f),
            args.iter().map(d).collect::<Vec<_>>().join(", ")
        ),
        ExprKind::Agg(call) => deparse_agg(cx, call, names),
    }
}

/// An expression a catalog keeps (a column DEFAULT), as PostgreSQL's `pg_get_expr`
/// prints it: nothing folded, implicit casts hidden, and an untyped literal shown with
/// the type it was read as (`'x'::text`, `'x'::character varying`).
pub fn deparse_stored(text: &common::value::TextContext, e: &Expr) -> String {
    let cx = ShowCx::new(text);
    deparse(&cx, &unfold(&cx, e), &[])
}

/// `e` with its implicit casts removed, except those that type a literal (which become
/// constants of the type without its modifier), and negated numbers made constants, as
/// PostgreSQL's parser makes them.
pub(crate) fn unfold(cx: &ShowCx, e: &Expr) -> Expr {
    let literal =
        |inner: &Expr| matches!(inner.kind, ExprKind::Const(_)) && inner.ty == DataType::Unknown;
    match &e.kind {
        ExprKind::Cast {
            expr,
            explicit: false,
        } if literal(expr) => {
            let ty = e.ty.without_typmod();
            match crate::cast::fold_constant(&Expr::new(e.kind.clone(), ty), cx.text) {
                Ok(v) => Expr::constant(v, ty),
                Err(_) => e.clone(),
            }
        }
        ExprKind::Cast {
            expr,
            explicit: false,
        } => unfold(cx, expr),
        ExprKind::Const(v) => Expr::constant(v.clone(), e.ty.without_typmod()),
        ExprKind::Neg(inner) if matches!(inner.kind, ExprKind::Const(_)) => {
            match crate::cast::fold_constant(e, cx.text) {
                Ok(v) => Expr::constant(v, e.ty),
                Err(_) => e.clone(),
            }
        }
        ExprKind::Func(f, args) => Expr::new(
            ExprKind::Func(*f, args.iter().map(|a| unfold(cx, a)).collect()),
            e.ty,
        ),
        ExprKind::Binary(op, l, r) => Expr::new(
            ExprKind::Binary(*op, Box::new(unfold(cx, l)), Box::new(unfold(cx, r))),
            e.ty,
        ),
        _ => e.clone(),
    }
}

/// Constants, casts and negations of constants only: what PostgreSQL folds.
pub(crate) fn is_constant(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Const(_) => true,
        ExprKind::Cast { expr, .. } | ExprKind::Neg(expr) => is_constant(expr),
        ExprKind::Func(ScalarFunc::ArrayCtor, args) => args.iter().all(is_constant),
        _ => false,
    }
}

pub(crate) fn cast_operand(cx: &ShowCx, e: &Expr, names: &[String]) -> String {
    match &e.kind {
        ExprKind::Cast { expr, .. } => deparse(cx, expr, names),
        _ => deparse(cx, e, names),
    }
}

pub(crate) fn flatten<'e>(e: &'e Expr, op: BinaryOp, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Binary(o, l, r) if *o == op => {
            flatten(l, op, out);
            flatten(r, op, out);
        }
        _ => out.push(e),
    }
}

pub(crate) fn deparse_agg(cx: &ShowCx, call: &AggCall, names: &[String]) -> String {
    let name = match call.func {
        AggFunc::CountStar => return "count(*)".into(),
        AggFunc::Count => "count",
        AggFunc::Sum => "sum",
        AggFunc::Avg => "avg",
        AggFunc::Min => "min",
        AggFunc::Max => "max",
        AggFunc::ArrayAgg => "array_agg",
        AggFunc::StringAgg => "string_agg",
    };
    let args: Vec<String> = call
        .arg
        .iter()
        .chain(call.sep.iter())
        .map(|a| deparse(cx, a, names))
        .collect();
    let distinct = if call.distinct { "DISTINCT " } else { "" };
    let order = if call.order_by.is_empty() {
        String::new()
    } else {
        let keys: Vec<String> = call
            .order_by
            .iter()
            .map(|k| {
                format!(
                    "{}{}",
                    deparse(cx, &k.expr, names),
                    if k.desc { " DESC" } else { "" }
                )
            })
            .collect();
        format!(" ORDER BY {}", keys.join(", "))
    };
    format!("{name}({distinct}{}{order})", args.join(", "))
}

/// The word after IS in `x IS [NOT] TRUE | FALSE | UNKNOWN`.
pub(crate) fn bool_test_word(value: Option<bool>) -> &'static str {
    match value {
        Some(true) => "TRUE",
        Some(false) => "FALSE",
        None => "UNKNOWN",
    }
}

/// The operator PostgreSQL's parser makes of [NOT] LIKE / ILIKE.
pub(crate) fn like_operator(negated: bool, case_insensitive: bool) -> &'static str {
    match (negated, case_insensitive) {
        (false, false) => "~~",
        (true, false) => "!~~",
        (false, true) => "~~*",
        (true, true) => "!~~*",
    }
}

/// A constant as PostgreSQL shows one: non-negative int4 and numeric and booleans bare,
/// everything else a quoted literal with its type.
pub(crate) fn constant(cx: &common::value::TextContext, v: &Value, ty: &DataType) -> String {
    let text = match v.to_text(cx) {
        None => return format!("NULL::{}", ty.name()),
        Some(t) => t,
    };
    match ty {
        DataType::Bool => (if text == "t" { "true" } else { "false" }).into(),
        DataType::Int4 if !text.starts_with('-') => text,
        // A numeric literal reads back as numeric only with a point in it.
        DataType::Numeric(_)
            if !text.starts_with('-')
                && text.contains('.')
                && text.bytes().all(|b| b.is_ascii_digit() || b == b'.') =>
        {
            text
        }
        _ => format!("'{}'::{}", text.replace('\'', "''"), ty.name()),
    }
}

pub(crate) fn func_name(f: ScalarFunc) -> String {
    let debug = format!("{f:?}");
    // PostgreSQL's names are the lower-case, underscore-separated spellings.
    let mut out = String::new();
    for (i, c) in debug.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    match out.as_str() {
        "at_time_zone" => "timezone".into(),
        "next_val" => "nextval".into(),
        "curr_val" => "currval".into(),
        "set_val" => "setval".into(),
        "last_val" => "lastval".into(),
        _ => out,
    }
}

/// The DETAIL of a constraint violation: `Failing row contains (1, null).` (dropped
/// columns left out).
pub(crate) fn failing_row(
    text: &common::value::TextContext,
    table: &catalog::TableDesc,
    row: &[Value],
) -> String {
    let vals: Vec<String> = table
        .live_columns()
        .filter_map(|i| row.get(i))
        .map(|v| v.to_text(text).unwrap_or_else(|| "null".into()))
        .collect();
    format!("Failing row contains ({}).", vals.join(", "))
}
