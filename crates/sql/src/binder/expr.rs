//! Binding expressions: names to column positions, literals to typed constants, operators
//! and functions to typed nodes with PostgreSQL's implicit casts.

use common::numeric::Numeric;
use common::{DataType, PgError, PgResult, SqlState, Value};
use sqlparser::ast::{self, BinaryOperator, UnaryOperator};

use super::coerce::{CastContext, common_type};
use super::{Binder, Scope, ident_name};
use super::{datetime, math};
use crate::bound::{
    AggCall, AggFunc, BinaryOp, Expr, ExprKind, LogicalPlan, OutputColumn, ScalarFunc, SubLink,
    SubLinkKind,
};

/// Where an expression appears: decides whether aggregates are allowed and names the
/// clause in errors (`aggregate functions are not allowed in WHERE`).
#[derive(Clone, Copy)]
pub(crate) struct ExprContext<'s> {
    pub scope: &'s Scope,
    pub aggs_allowed: bool,
    pub clause: &'static str,
}

/// `pg_column_size(arg)`: for a column of a table in FROM, the size its scan read it
/// at (the column after the table's own that `query::with_stored_sizes` asked the scan
/// for: compressed, or out of line, as stored); for any other value, the size it would
/// take stored inline and uncompressed (`ScalarFunc::PgColumnSize`), as PostgreSQL's
/// for a value not read from a table.
fn column_size(arg: Expr, scope: &Scope) -> Expr {
    if let ExprKind::Column(i) = arg.kind
        && let Some(c) = scope.columns.get(i)
        && c.table_oid != 0
        && let Some(at) = scope
            .columns
            .iter()
            .position(|s| s.stored_size_of == Some(c.column_number) && s.table == c.table)
    {
        return Expr::column(at, DataType::Int4);
    }
    Expr::new(
        ExprKind::Func(ScalarFunc::PgColumnSize, vec![arg]),
        DataType::Int4,
    )
}

impl ExprContext<'_> {
    fn inside_agg(&self) -> Self {
        ExprContext {
            aggs_allowed: false,
            clause: "aggregate function calls",
            ..*self
        }
    }
}

pub(crate) fn undefined_operator(op: &str, l: &DataType, r: &DataType) -> PgError {
    PgError::new(
        SqlState::UNDEFINED_FUNCTION,
        format!("operator does not exist: {} {} {}", l.name(), op, r.name()),
    )
    .with_hint(
        "No operator matches the given name and argument types. You might need to add explicit type casts.",
    )
}

pub(crate) fn undefined_function(name: &str, args: &[Expr]) -> PgError {
    let types: Vec<String> = args.iter().map(|a| a.ty.name()).collect();
    PgError::new(
        SqlState::UNDEFINED_FUNCTION,
        format!("function {}({}) does not exist", name, types.join(", ")),
    )
    .with_hint(
        "No function matches the given name and argument types. You might need to add explicit type casts.",
    )
}

/// Require a boolean (PostgreSQL's `coerce_to_boolean`).
pub(crate) fn coerce_to_bool(b: &super::Binder<'_>, e: Expr, construct: &str) -> PgResult<Expr> {
    match e.ty {
        DataType::Bool => Ok(e),
        DataType::Unknown => b.coerce(e, &DataType::Bool, CastContext::Implicit),
        other => Err(PgError::new(
            SqlState::DATATYPE_MISMATCH,
            format!(
                "argument of {construct} must be type boolean, not type {}",
                other.name()
            ),
        )),
    }
}

/// Read a number literal as PostgreSQL types it: int4 if it is an integer that fits,
/// else int8, else (a decimal point, an exponent, or too many digits) `numeric`.
/// An operator written by name (`OPERATOR(pg_catalog.~)`), as sqlparser spells it.
fn operator_named(name: &str) -> Option<BinaryOperator> {
    Some(match name {
        "~" => BinaryOperator::PGRegexMatch,
        "~*" => BinaryOperator::PGRegexIMatch,
        "!~" => BinaryOperator::PGRegexNotMatch,
        "!~*" => BinaryOperator::PGRegexNotIMatch,
        "=" => BinaryOperator::Eq,
        "<>" | "!=" => BinaryOperator::NotEq,
        "<" => BinaryOperator::Lt,
        "<=" => BinaryOperator::LtEq,
        ">" => BinaryOperator::Gt,
        ">=" => BinaryOperator::GtEq,
        "+" => BinaryOperator::Plus,
        "-" => BinaryOperator::Minus,
        "*" => BinaryOperator::Multiply,
        "/" => BinaryOperator::Divide,
        "%" => BinaryOperator::Modulo,
        "||" => BinaryOperator::StringConcat,
        _ => return None,
    })
}

fn sublink(kind: SubLinkKind, query: LogicalPlan, args: Vec<Expr>, ty: DataType) -> Expr {
    let link = SubLink {
        kind,
        query: std::sync::Arc::new(query),
        args,
    };
    Expr::new(ExprKind::SubLink(Box::new(link)), ty)
}

/// `l AND r`, `l OR r` of two booleans.
fn bool_op(op: BinaryOp, l: Expr, r: Expr) -> Expr {
    Expr::new(
        ExprKind::Binary(op, Box::new(l), Box::new(r)),
        DataType::Bool,
    )
}

/// The items of a row constructor `(a, b, ...)` (parenthesised or not).
fn row_items(e: &ast::Expr) -> Option<&[ast::Expr]> {
    match e {
        ast::Expr::Tuple(items) => Some(items),
        ast::Expr::Nested(inner) => row_items(inner),
        _ => None,
    }
}

fn not(e: Expr) -> Expr {
    Expr::new(ExprKind::Not(Box::new(e)), DataType::Bool)
}

fn number_literal(text: &str) -> PgResult<Expr> {
    if let Ok(v) = text.parse::<i32>() {
        return Ok(Expr::constant(Value::Int4(v), DataType::Int4));
    }
    if let Ok(v) = text.parse::<i64>() {
        return Ok(Expr::constant(Value::Int8(v), DataType::Int8));
    }
    let n = Numeric::parse(text)?;
    Ok(Expr::constant(Value::Numeric(n), DataType::Numeric(None)))
}

impl Binder<'_> {
    /// Bind `e`, refusing an expression nested more than [`super::MAX_EXPR_DEPTH`] deep
    /// (54001, as PostgreSQL refuses one that would exhaust its stack): every later pass
    /// over a bound expression recurses as deep.
    pub(crate) fn bind_expr(&self, e: &ast::Expr, cx: &ExprContext) -> PgResult<Expr> {
        let depth = self.depth.get() + 1;
        if depth > super::MAX_EXPR_DEPTH {
            return Err(PgError::new(
                common::SqlState::STATEMENT_TOO_COMPLEX,
                "stack depth limit exceeded",
            )
            .with_hint("The statement is nested too deeply."));
        }
        self.depth.set(depth);
        let bound = self.bind_expr_at(e, cx);
        self.depth.set(depth - 1);
        bound
    }

    fn bind_expr_at(&self, e: &ast::Expr, cx: &ExprContext) -> PgResult<Expr> {
        use ast::Expr as A;
        match e {
            A::Identifier(id) => {
                if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("default") {
                    return Err(PgError::syntax("DEFAULT is not allowed in this context")
                        .with_position(self.position(&id.span)));
                }
                // SQL's parenthesis-free functions that sqlparser reads as names.
                if id.quote_style.is_none() {
                    let f = match id.value.to_ascii_lowercase().as_str() {
                        "user" | "current_role" => Some("current_user"),
                        "current_schema" => Some("current_schema"),
                        "current_catalog" => Some("current_database"),
                        _ => None,
                    };
                    if let Some(f) = f {
                        return self.bind_scalar_function(f, Vec::new());
                    }
                }
                // A reserved word is no column name in PostgreSQL's grammar
                // (`SELECT only FROM t`), where sqlparser's takes it for one.
                self.bind_column(None, id, cx).map_err(|e| {
                    match (
                        e.code == SqlState::UNDEFINED_COLUMN,
                        self.check_not_reserved(id),
                    ) {
                        (true, Err(syntax)) => syntax,
                        _ => e,
                    }
                })
            }
            A::CompoundIdentifier(parts) => match parts.as_slice() {
                [t, c] => self.bind_column(Some(t), c, cx),
                [s, t, c] if ident_name(s) == "public" => self.bind_column(Some(t), c, cx),
                _ => Err(PgError::unsupported(format!("qualified name {e}"))),
            },
            A::Value(v) => self.bind_literal(&v.value, v.span),
            A::Nested(inner) => self.bind_expr(inner, cx),
            A::UnaryOp { op, expr } => self.bind_unary(*op, expr, cx),
            // Myriad compares strings bytewise: the collations that do so are accepted.
            A::Collate { expr, collation } => {
                let e = self.bind_expr(expr, cx)?;
                let name = match collation.0.as_slice() {
                    [ast::ObjectNamePart::Identifier(n)] => ident_name(n),
                    [
                        ast::ObjectNamePart::Identifier(s),
                        ast::ObjectNamePart::Identifier(n),
                    ] if ident_name(s) == "pg_catalog" => ident_name(n),
                    _ => collation.to_string(),
                };
                if !matches!(name.as_str(), "default" | "C" | "POSIX") {
                    return Err(PgError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("collation \"{name}\" for encoding \"UTF8\" does not exist"),
                    ));
                }
                if !(e.ty.is_string() || e.ty == DataType::Unknown) {
                    return Err(PgError::new(
                        SqlState::DATATYPE_MISMATCH,
                        format!("collations are not supported by type {}", e.ty.name()),
                    ));
                }
                Ok(e)
            }
            A::BinaryOp { left, op, right }
                if row_items(left).is_some() || row_items(right).is_some() =>
            {
                match (row_items(left), row_items(right)) {
                    (Some(l), Some(r)) => self.bind_row_comparison(op, l, r, cx),
                    _ => {
                        let other = if row_items(left).is_some() {
                            right
                        } else {
                            left
                        };
                        let other = self.bind_expr(other, cx)?.ty.name();
                        let (l, r) = if row_items(left).is_some() {
                            ("record".to_string(), other)
                        } else {
                            (other, "record".to_string())
                        };
                        Err(PgError::new(
                            SqlState::UNDEFINED_FUNCTION,
                            format!("operator does not exist: {l} {op} {r}"),
                        ))
                    }
                }
            }
            A::BinaryOp { left, op, right } => {
                let l = self.bind_expr(left, cx)?;
                let r = self.bind_expr(right, cx)?;
                self.bind_binary(op, l, r)
            }
            A::IsNull(x) | A::IsNotNull(x) => Ok(Expr::new(
                ExprKind::IsNull {
                    expr: Box::new(self.bind_expr(x, cx)?),
                    negated: matches!(e, A::IsNotNull(_)),
                },
                DataType::Bool,
            )),
            A::IsTrue(x)
            | A::IsNotTrue(x)
            | A::IsFalse(x)
            | A::IsNotFalse(x)
            | A::IsUnknown(x)
            | A::IsNotUnknown(x) => {
                let (value, negated) = match e {
                    A::IsTrue(_) => (Some(true), false),
                    A::IsNotTrue(_) => (Some(true), true),
                    A::IsFalse(_) => (Some(false), false),
                    A::IsNotFalse(_) => (Some(false), true),
                    A::IsUnknown(_) => (None, false),
                    _ => (None, true),
                };
                let construct = match value {
                    Some(true) => "IS TRUE",
                    Some(false) => "IS FALSE",
                    None => "IS UNKNOWN",
                };
                let x = coerce_to_bool(self, self.bind_expr(x, cx)?, construct)?;
                Ok(Expr::new(
                    ExprKind::IsBool {
                        expr: Box::new(x),
                        value,
                        negated,
                    },
                    DataType::Bool,
                ))
            }
            A::IsDistinctFrom(l, r) | A::IsNotDistinctFrom(l, r) => {
                let l = self.bind_expr(l, cx)?;
                let r = self.bind_expr(r, cx)?;
                let (l, r) = self.unify_for_comparison(l, r, "=")?;
                Ok(Expr::new(
                    ExprKind::IsDistinctFrom {
                        left: Box::new(l),
                        right: Box::new(r),
                        negated: matches!(e, A::IsNotDistinctFrom(..)),
                    },
                    DataType::Bool,
                ))
            }
            // `(a, b) IN ((1, 2), (3, 4))`: a row equal to one of the rows.
            A::InList {
                expr,
                list,
                negated,
            } if row_items(expr).is_some() => {
                let row = row_items(expr).expect("a row");
                let mut any = None;
                for item in list {
                    let Some(items) = row_items(item) else {
                        return Err(PgError::new(
                            SqlState::UNDEFINED_FUNCTION,
                            format!(
                                "operator does not exist: record = {}",
                                self.bind_expr(item, cx)?.ty.name()
                            ),
                        ));
                    };
                    let eq = self.bind_row_comparison(&BinaryOperator::Eq, row, items, cx)?;
                    any = Some(match any {
                        None => eq,
                        Some(a) => bool_op(BinaryOp::Or, a, eq),
                    });
                }
                let any = any.ok_or_else(|| PgError::syntax("syntax error at or near \")\""))?;
                Ok(if *negated {
                    Expr::new(ExprKind::Not(Box::new(any)), DataType::Bool)
                } else {
                    any
                })
            }
            A::InList {
                expr,
                list,
                negated,
            } => {
                let x = self.bind_expr(expr, cx)?;
                let items = list
                    .iter()
                    .map(|i| self.bind_expr(i, cx))
                    .collect::<PgResult<Vec<_>>>()?;
                let mut types = vec![x.ty];
                types.extend(items.iter().map(|i| i.ty));
                let ty = common_type(&types, "IN").map_err(|_| {
                    let other = items
                        .iter()
                        .find(|i| common_type(&[x.ty, i.ty], "IN").is_err());
                    undefined_operator("=", &x.ty, &other.map(|o| o.ty).unwrap_or(x.ty))
                })?;
                // The items take their common type; the operator between the left side
                // and that type is then resolved as for `=` (PostgreSQL's
                // ScalarArrayOpExpr): `numeric IN (float4, ...)` compares as float8.
                let cmp_ty = if x.ty.is_numeric() && ty.is_numeric() {
                    math::arith_type(x.ty, ty)
                } else {
                    ty
                };
                let x = self.coerce(x, &cmp_ty, CastContext::Implicit)?;
                let items = items
                    .into_iter()
                    .map(|i| {
                        let i = self.coerce(i, &ty, CastContext::Implicit)?;
                        self.coerce(i, &cmp_ty, CastContext::Implicit)
                    })
                    .collect::<PgResult<Vec<_>>>()?;
                Ok(Expr::new(
                    ExprKind::InList {
                        expr: Box::new(x),
                        list: items,
                        negated: *negated,
                    },
                    DataType::Bool,
                ))
            }
            A::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let x = self.bind_expr(expr, cx)?;
                let lo = self.bind_expr(low, cx)?;
                let hi = self.bind_expr(high, cx)?;
                let ge = self.bind_binary(&BinaryOperator::GtEq, x.clone(), lo)?;
                let le = self.bind_binary(&BinaryOperator::LtEq, x, hi)?;
                let both = Expr::new(
                    ExprKind::Binary(BinaryOp::And, Box::new(ge), Box::new(le)),
                    DataType::Bool,
                );
                Ok(if *negated {
                    Expr::new(ExprKind::Not(Box::new(both)), DataType::Bool)
                } else {
                    both
                })
            }
            A::Like {
                negated,
                any,
                expr,
                pattern,
                escape_char,
            }
            | A::ILike {
                negated,
                any,
                expr,
                pattern,
                escape_char,
            } => {
                if *any {
                    return Err(PgError::unsupported("LIKE ANY"));
                }
                let op = match (matches!(e, A::ILike { .. }), negated) {
                    (false, false) => "~~",
                    (false, true) => "!~~",
                    (true, false) => "~~*",
                    (true, true) => "!~~*",
                };
                let x = self.bind_expr(expr, cx)?;
                let p = self.bind_expr(pattern, cx)?;
                let as_text = |v: Expr, other: &DataType| -> PgResult<Expr> {
                    if v.ty.is_string() {
                        Ok(v)
                    } else if v.ty == DataType::Unknown {
                        self.coerce(v, &DataType::Text, CastContext::Implicit)
                    } else {
                        Err(undefined_operator(op, &v.ty, other))
                    }
                };
                let (xt, pt) = (x.ty, p.ty);
                let x = as_text(x, &pt)?;
                let p = as_text(p, &xt)?;
                let escape = match escape_char {
                    Some(esc) => Some(Box::new(self.coerce(
                        self.bind_expr(esc, cx)?,
                        &DataType::Text,
                        CastContext::Implicit,
                    )?)),
                    None => None,
                };
                Ok(Expr::new(
                    ExprKind::Like {
                        expr: Box::new(x),
                        pattern: Box::new(p),
                        escape,
                        negated: *negated,
                        case_insensitive: matches!(e, A::ILike { .. }),
                    },
                    DataType::Bool,
                ))
            }
            A::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let operand = operand
                    .as_ref()
                    .map(|o| self.bind_expr(o, cx))
                    .transpose()?;
                let mut whens = Vec::with_capacity(conditions.len());
                let mut results = Vec::with_capacity(conditions.len() + 1);
                for c in conditions {
                    let cond = self.bind_expr(&c.condition, cx)?;
                    let cond = match &operand {
                        Some(op) => self.bind_binary(&BinaryOperator::Eq, op.clone(), cond)?,
                        None => coerce_to_bool(self, cond, "CASE/WHEN")?,
                    };
                    whens.push(cond);
                    results.push(self.bind_expr(&c.result, cx)?);
                }
                let else_expr = match else_result {
                    Some(e) => self.bind_expr(e, cx)?,
                    None => Expr::constant(Value::Null, DataType::Unknown),
                };
                results.push(else_expr);
                // PostgreSQL resolves the ELSE branch first, so errors name its type first.
                let mut types: Vec<DataType> = vec![results[results.len() - 1].ty];
                types.extend(results[..results.len() - 1].iter().map(|r| r.ty));
                let ty = common_type(&types, "CASE")?;
                let mut results = results
                    .into_iter()
                    .map(|r| self.coerce(r, &ty, CastContext::Implicit))
                    .collect::<PgResult<Vec<_>>>()?;
                let else_result = results.pop().expect("else branch pushed above");
                Ok(Expr::new(
                    ExprKind::Case {
                        whens: whens.into_iter().zip(results).collect(),
                        else_result: Box::new(else_result),
                    },
                    ty,
                ))
            }
            A::Cast {
                kind,
                expr,
                data_type,
                format,
            } => {
                if format.is_some()
                    || matches!(kind, ast::CastKind::TryCast | ast::CastKind::SafeCast)
                {
                    return Err(PgError::unsupported(format!("{e}")));
                }
                let to = self.bind_type(data_type)?;
                let x = match &**expr {
                    A::Array(arr) if matches!(to, DataType::Array(_)) => {
                        self.bind_array_ctor(&arr.elem, Some(&to), cx)?
                    }
                    other => self.bind_expr(other, cx)?,
                };
                self.coerce(x, &to, CastContext::Explicit)
            }
            A::Substring {
                expr,
                substring_from,
                substring_for,
                shorthand,
                ..
            } => {
                let mut args = vec![self.bind_expr(expr, cx)?];
                args.push(match substring_from {
                    Some(f) => self.bind_expr(f, cx)?,
                    None => Expr::constant(Value::Int4(1), DataType::Int4),
                });
                if let Some(f) = substring_for {
                    args.push(self.bind_expr(f, cx)?);
                }
                self.bind_scalar_function(if *shorthand { "substr" } else { "substring" }, args)
            }
            A::Function(f) => self.bind_function(f, cx),
            // `date '2024-01-01'`, `timestamptz '...'`: a literal of that type.
            A::TypedString(ts) => {
                let to = self.bind_type(&ts.data_type)?;
                let lit = self.bind_literal(&ts.value.value, ts.value.span)?;
                self.coerce(lit, &to, CastContext::Explicit)
            }
            A::Interval(iv) => {
                if iv.leading_precision.is_some() || iv.fractional_seconds_precision.is_some() {
                    return Err(PgError::unsupported(format!("interval precision in {e}")));
                }
                let Some(lead) = &iv.leading_field else {
                    let x = self.bind_expr(&iv.value, cx)?;
                    return self.coerce(x, &DataType::Interval, CastContext::Explicit);
                };
                datetime::bind_interval_fields(self, e, &iv.value, lead, iv.last_field.as_ref())
            }
            A::Extract { field, expr, .. } => {
                let name = match field {
                    ast::DateTimeField::Custom(id) => id.value.clone(),
                    other => other.to_string(),
                };
                let field = Expr::constant(Value::Text(name.to_lowercase()), DataType::Text);
                datetime::bind_date_part(self, field, self.bind_expr(expr, cx)?, true)
            }
            // sqlparser reads ceil(x) and floor(x) as expressions of their own.
            A::Ceil {
                expr,
                field: ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime),
            } => self.bind_scalar_function("ceil", vec![self.bind_expr(expr, cx)?]),
            A::Floor {
                expr,
                field: ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime),
            } => self.bind_scalar_function("floor", vec![self.bind_expr(expr, cx)?]),
            A::AtTimeZone {
                timestamp,
                time_zone,
            } => datetime::bind_at_time_zone(
                self,
                self.bind_expr(timestamp, cx)?,
                self.bind_expr(time_zone, cx)?,
            ),
            A::Subquery(q) => {
                let (query, columns, args) = self.bind_sublink_query(q, cx)?;
                if columns.len() != 1 {
                    return Err(PgError::syntax("subquery must return only one column"));
                }
                Ok(sublink(SubLinkKind::Scalar, query, args, columns[0].ty))
            }
            A::Exists { subquery, negated } => {
                let (query, _, args) = self.bind_sublink_query(subquery, cx)?;
                let e = sublink(SubLinkKind::Exists, query, args, DataType::Bool);
                Ok(if *negated { not(e) } else { e })
            }
            A::InSubquery {
                expr,
                subquery,
                negated,
            } => {
                let test = self.bind_expr(expr, cx)?;
                let e = self.bind_quantified(test, &BinaryOperator::Eq, subquery, false, cx)?;
                Ok(if *negated { not(e) } else { e })
            }
            // `x op ANY (subquery)` is a SubLink; over anything else, an array.
            A::AnyOp {
                left,
                compare_op,
                right,
                ..
            }
            | A::AllOp {
                left,
                compare_op,
                right,
            } => {
                let test = self.bind_expr(left, cx)?;
                let all = matches!(e, A::AllOp { .. });
                match &**right {
                    A::Subquery(q) => self.bind_quantified(test, compare_op, q, all, cx),
                    other => {
                        let array = self.bind_expr(other, cx)?;
                        self.bind_array_compare(test, compare_op, array, all)
                    }
                }
            }
            A::Array(arr) => self.bind_array_ctor(&arr.elem, None, cx),
            A::CompoundFieldAccess { root, access_chain } => {
                let mut base = self.bind_expr(root, cx)?;
                let mut index = Vec::new();
                for a in access_chain {
                    match a {
                        ast::AccessExpr::Subscript(ast::Subscript::Index { index: i }) => {
                            index.push(self.bind_expr(i, cx)?)
                        }
                        _ => return Err(PgError::unsupported(format!("expression \"{e}\""))),
                    }
                }
                if !index.is_empty() {
                    base = self.bind_subscript(base, index)?;
                }
                Ok(base)
            }
            other => Err(PgError::unsupported(format!("expression \"{other}\""))),
        }
    }

    /// Bind a subquery of an expression in `cx`: it sees `cx`'s columns, and those of
    /// the queries around that, as outer references. Returns the subquery, its columns
    /// and the outer values it reads.
    fn bind_sublink_query(
        &self,
        q: &ast::Query,
        cx: &ExprContext,
    ) -> PgResult<(LogicalPlan, Vec<OutputColumn>, Vec<Expr>)> {
        let refused = match cx.clause {
            "DEFAULT expressions" => Some("DEFAULT expression"),
            super::check::CHECK_CLAUSE => Some("check constraint"),
            super::index::INDEX_PREDICATE_CLAUSE => Some("index predicate"),
            super::index::INDEX_EXPRESSION_CLAUSE => Some("index expression"),
            super::partition::PARTITION_KEY_CLAUSE => Some("partition key expression"),
            "EXECUTE parameter" => Some("EXECUTE parameter"),
            _ => None,
        };
        if let Some(what) = refused {
            return Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("cannot use subquery in {what}"),
            ));
        }
        self.outer.borrow_mut().push(super::OuterFrame {
            scope: cx.scope.clone(),
            args: Vec::new(),
        });
        let bound = self.bind_query(q);
        let frame = self.outer.borrow_mut().pop().expect("pushed above");
        let mut bound = bound?;
        // `$n` typed inside the subquery: recorded now, as the statement's own walk over
        // its expressions does not enter subqueries.
        if let Some(params) = &self.params {
            let mut params = params.borrow_mut();
            bound.plan.for_each_expr_mut(&mut |e| {
                e.walk(&mut |n| {
                    if let ExprKind::Param(i) = n.kind
                        && params.get(i) == Some(&DataType::Unknown)
                    {
                        params[i] = n.ty.without_typmod();
                    }
                });
                Ok(())
            })?;
        }
        Ok((bound.plan, bound.columns, frame.args))
    }

    /// `test op ANY (subquery)`, or ALL: the comparison is bound as `op` between the
    /// two values would be (IN is `= ANY`).
    fn bind_quantified(
        &self,
        test: Expr,
        op: &BinaryOperator,
        q: &ast::Query,
        all: bool,
        cx: &ExprContext,
    ) -> PgResult<Expr> {
        let (query, columns, args) = self.bind_sublink_query(q, cx)?;
        let ty = match columns.as_slice() {
            [c] => c.ty,
            [] => return Err(PgError::syntax("subquery has too few columns")),
            _ => return Err(PgError::syntax("subquery has too many columns")),
        };
        let test = if test.ty == DataType::Unknown && ty != DataType::Unknown {
            self.coerce(test, &ty, CastContext::Implicit)?
        } else {
            test
        };
        let cmp = self.bind_binary(op, Expr::column(0, test.ty), Expr::column(1, ty))?;
        if cmp.ty != DataType::Bool {
            return Err(PgError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!(
                    "op {} (array) requires operator to yield boolean",
                    if all { "ALL" } else { "ANY" }
                ),
            ));
        }
        let kind = SubLinkKind::Quantified {
            all,
            test: Box::new(test),
            cmp: Box::new(cmp),
        };
        Ok(sublink(kind, query, args, DataType::Bool))
    }

    /// A column of an enclosing query (the current one lacks it): resolved in the
    /// innermost query around that has it, and passed down through each subquery in
    /// between as an outer value. `None` when no query around has it.
    fn resolve_outer(&self, table: Option<&str>, name: &str) -> PgResult<Option<Expr>> {
        let mut frames = self.outer.borrow_mut();
        let Some(level) = (0..frames.len())
            .rev()
            .find(|&j| frames[j].scope.resolve(table, name).is_ok())
        else {
            // An ambiguous name in a query around is still an error.
            for f in frames.iter().rev() {
                if let Err(e) = f.scope.resolve(table, name)
                    && e.code == SqlState::AMBIGUOUS_COLUMN
                {
                    return Err(e);
                }
            }
            return Ok(None);
        };
        let (index, ty) = frames[level].scope.resolve(table, name)?;
        let mut e = Expr::column(index, ty);
        for frame in frames[level..].iter_mut() {
            let i = match frame.args.iter().position(|a| *a == e) {
                Some(i) => i,
                None => {
                    frame.args.push(e);
                    frame.args.len() - 1
                }
            };
            e = Expr::new(ExprKind::Outer(i), ty);
        }
        Ok(Some(e))
    }

    fn bind_column(
        &self,
        table: Option<&ast::Ident>,
        col: &ast::Ident,
        cx: &ExprContext,
    ) -> PgResult<Expr> {
        let name = ident_name(col);
        let qualifier = table.map(ident_name);
        let pos = self.position(&table.unwrap_or(col).span);
        let local = cx.scope.resolve(qualifier.as_deref(), &name);
        if let Err(e) = &local
            && e.code == SqlState::UNDEFINED_COLUMN
            && name == "tableoid"
            && let Some(oid) = self
                .table_oid_column(cx.scope, qualifier.as_deref())
                .map_err(|e| e.with_position(pos))?
        {
            return Ok(oid);
        }
        if let Err(e) = &local
            && matches!(
                e.code,
                SqlState::UNDEFINED_COLUMN | SqlState::UNDEFINED_TABLE
            )
            && let Some(outer) = self.resolve_outer(qualifier.as_deref(), &name)?
        {
            return Ok(outer);
        }
        let (index, ty) = local.map_err(|e| {
            // `FROM emp e ... emp.id`: the table is there, but only under its alias.
            let aliased = qualifier.as_deref().and_then(|q| {
                let t = self.catalog.table(q)?;
                cx.scope
                    .columns
                    .iter()
                    .find(|c| c.table_oid == t.oid && c.table.as_deref() != Some(q))
            });
            match (aliased, &qualifier) {
                (Some(c), Some(q)) if e.code == SqlState::UNDEFINED_TABLE => PgError::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("invalid reference to FROM-clause entry for table \"{q}\""),
                )
                .with_hint(format!(
                    "Perhaps you meant to reference the table alias \"{}\".",
                    c.table.as_deref().unwrap_or_default()
                )),
                _ => e,
            }
            .with_position(pos)
        })?;
        Ok(Expr::column(index, ty))
    }

    /// The system column `tableoid` of the table in `scope` that `qualifier` names (or
    /// the one table there): the table's oid; for a partitioned table, the partition
    /// each row is in, found by routing the row's key (`ScalarFunc::PartitionOfRow`).
    /// `None` when no table of the scope is meant (a user column of that name wins, as
    /// in PostgreSQL, by being found first).
    fn table_oid_column(&self, scope: &Scope, qualifier: Option<&str>) -> PgResult<Option<Expr>> {
        // Each FROM item that is a table: where its first column is, and the table.
        let mut found: Option<(usize, std::sync::Arc<catalog::TableDesc>)> = None;
        for (i, c) in scope.columns.iter().enumerate() {
            if c.column_number != 1
                || c.table_oid == 0
                || qualifier.is_some_and(|q| c.table.as_deref() != Some(q))
            {
                continue;
            }
            let Some(t) = self.catalog.table_by_oid(c.table_oid) else {
                continue;
            };
            // The item's columns are the table's, in order (not a subquery's).
            let whole = t.columns.len() <= scope.columns.len() - i
                && t.columns.iter().enumerate().all(|(k, col)| {
                    let sc = &scope.columns[i + k];
                    sc.table == c.table
                        && sc.table_oid == t.oid
                        && sc.column_number == k as i16 + 1
                        && *sc.name == *col.name
                });
            if !whole {
                continue;
            }
            if found.is_some() {
                return Err(PgError::new(
                    SqlState::AMBIGUOUS_COLUMN,
                    "column reference \"tableoid\" is ambiguous",
                ));
            }
            found = Some((i, t.clone()));
        }
        let Some((start, table)) = found else {
            return Ok(None);
        };
        if table.partition_key.is_none() {
            return Ok(Some(Expr::constant(Value::Oid(table.oid), DataType::Oid)));
        }
        // The key columns of every partitioned level below it, the rest NULL.
        let mut keyed = vec![false; table.columns.len()];
        for t in std::iter::once(table.clone()).chain(self.catalog.descendants(table.oid)) {
            for c in t.partition_key.iter().flat_map(|k| k.columns_read()) {
                if let Some(k) = keyed.get_mut(c) {
                    *k = true;
                }
            }
        }
        let mut args = vec![Expr::constant(Value::Oid(table.oid), DataType::Oid)];
        args.extend(table.columns.iter().enumerate().map(|(c, col)| {
            if keyed[c] {
                Expr::column(start + c, col.ty)
            } else {
                Expr::constant(Value::Null, col.ty)
            }
        }));
        Ok(Some(Expr::new(
            ExprKind::Func(crate::bound::ScalarFunc::PartitionOfRow, args),
            DataType::Oid,
        )))
    }

    fn bind_literal(&self, v: &ast::Value, span: sqlparser::tokenizer::Span) -> PgResult<Expr> {
        use ast::Value as V;
        match v {
            V::Number(text, _) => number_literal(text),
            V::SingleQuotedString(s)
            | V::EscapedStringLiteral(s)
            | V::DollarQuotedString(ast::DollarQuotedString { value: s, .. }) => {
                Ok(Expr::constant(Value::Text(s.clone()), DataType::Unknown))
            }
            V::Boolean(b) => Ok(Expr::constant(Value::Bool(*b), DataType::Bool)),
            V::Null => Ok(Expr::constant(Value::Null, DataType::Unknown)),
            V::Placeholder(p) => {
                let n = p.strip_prefix('$').and_then(|n| n.parse::<usize>().ok());
                match n.and_then(|n| Some((n, self.param(n)?))) {
                    Some((n, ty)) => Ok(Expr::new(ExprKind::Param(n - 1), ty)),
                    None => Err(PgError::new(
                        SqlState::UNDEFINED_PARAMETER,
                        format!("there is no parameter {p}"),
                    )
                    .with_position(self.position(&span))),
                }
            }
            other => Err(PgError::unsupported(format!("literal {other}"))),
        }
    }

    fn bind_unary(&self, op: UnaryOperator, x: &ast::Expr, cx: &ExprContext) -> PgResult<Expr> {
        match op {
            UnaryOperator::Minus => {
                // A negative number literal is one constant, as PostgreSQL's grammar folds it:
                // -2147483648 is an int4.
                if let ast::Expr::Value(ast::ValueWithSpan {
                    value: ast::Value::Number(text, _),
                    ..
                }) = x
                {
                    return number_literal(&format!("-{text}"));
                }
                let e = self.bind_expr(x, cx)?;
                let e = if e.ty == DataType::Unknown {
                    self.coerce(e, &DataType::Float8, CastContext::Implicit)?
                } else {
                    e
                };
                if !e.ty.is_numeric() && e.ty != DataType::Interval {
                    return Err(PgError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("operator does not exist: - {}", e.ty.name()),
                    )
                    .with_hint("No operator matches the given name and argument type. You might need to add an explicit type cast."));
                }
                let ty = e.ty.without_typmod();
                Ok(Expr::new(ExprKind::Neg(Box::new(e)), ty))
            }
            UnaryOperator::Plus => {
                let e = self.bind_expr(x, cx)?;
                if !e.ty.is_numeric() {
                    return Err(PgError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("operator does not exist: + {}", e.ty.name()),
                    ));
                }
                Ok(e)
            }
            UnaryOperator::Not => {
                let e = coerce_to_bool(self, self.bind_expr(x, cx)?, "NOT")?;
                Ok(Expr::new(ExprKind::Not(Box::new(e)), DataType::Bool))
            }
            other => Err(PgError::unsupported(format!("operator {other}"))),
        }
    }

    /// Give two comparison operands one type, as operator resolution would.
    pub(crate) fn unify_for_comparison(
        &self,
        l: Expr,
        r: Expr,
        op: &str,
    ) -> PgResult<(Expr, Expr)> {
        let (lt, rt) = (l.ty, r.ty);
        let ty = match (lt, rt) {
            // void has no operators.
            (DataType::Void, _) | (_, DataType::Void) => {
                return Err(undefined_operator(op, &lt, &rt));
            }
            (DataType::Unknown, DataType::Unknown) => DataType::Text,
            (DataType::Unknown, t) | (t, DataType::Unknown) => t,
            // As arithmetic: the wider type, except that float4 meets anything but
            // float4 in float8 (`0.1 = 0.1::float4` is false: float84eq).
            (a, b) if a.is_numeric() && b.is_numeric() => math::arith_type(a, b),
            // bpchar = bpchar compares blank-insensitively; any other string mix compares
            // as text. Both are what `Value::cmp_non_null` does, so no cast is needed.
            (a, b) if a.is_string() && b.is_string() => return Ok((l, r)),
            // date < timestamp < timestamptz: the lower side is promoted (`date_cmp_timestamp`
            // and friends compare exactly so).
            (a, b) if a.datetime_rank().is_some() && b.datetime_rank().is_some() => {
                if a.datetime_rank() >= b.datetime_rank() {
                    a
                } else {
                    b
                }
            }
            (DataType::Array(_), _) | (_, DataType::Array(_)) => {
                return self.unify_arrays(l, r, op);
            }
            // oid and the reg* types compare as oids; an integer is read as one
            // (int4 -> oid and int4 -> regclass are implicit casts).
            (DataType::Reg(a), DataType::Reg(b)) if a == b => lt,
            (a, b)
                if is_oid_like(&a) && (is_oid_like(&b) || b.is_integer())
                    || is_oid_like(&b) && a.is_integer() =>
            {
                if a.is_integer() {
                    b
                } else if b.is_integer() {
                    a
                } else {
                    DataType::Oid
                }
            }
            (a, b) if a == b => a,
            _ => return Err(undefined_operator(op, &lt, &rt)),
        };
        let l = self.coerce(l, &ty.without_typmod(), CastContext::Implicit)?;
        let r = self.coerce(r, &ty.without_typmod(), CastContext::Implicit)?;
        Ok((l, r))
    }

    /// `(a, b) op (c, d)`, PostgreSQL's row comparison, pair by pair: `=` when every
    /// pair is equal, `<>` when one is not, and `<`, `<=`, `>`, `>=` decided by the first
    /// pair that is not equal (NULL when that pair's comparison is): `(a < c) OR (a = c
    /// AND b < d)`.
    fn bind_row_comparison(
        &self,
        op: &BinaryOperator,
        l: &[ast::Expr],
        r: &[ast::Expr],
        cx: &ExprContext,
    ) -> PgResult<Expr> {
        use BinaryOperator as O;
        if l.len() != r.len() {
            return Err(PgError::syntax(
                "unequal number of entries in row expressions",
            ));
        }
        let mut pairs = Vec::with_capacity(l.len());
        for (a, b) in l.iter().zip(r) {
            pairs.push((self.bind_expr(a, cx)?, self.bind_expr(b, cx)?));
        }
        let fold = |join: BinaryOp, parts: Vec<Expr>| {
            parts.into_iter().reduce(|acc, e| bool_op(join, acc, e))
        };
        let out = match op {
            O::Eq | O::NotEq => {
                let parts = pairs
                    .into_iter()
                    .map(|(a, b)| self.bind_binary(op, a, b))
                    .collect::<PgResult<Vec<_>>>()?;
                let join = if *op == O::Eq {
                    BinaryOp::And
                } else {
                    BinaryOp::Or
                };
                fold(join, parts)
            }
            O::Lt | O::LtEq | O::Gt | O::GtEq => {
                let strict = if matches!(op, O::Lt | O::LtEq) {
                    O::Lt
                } else {
                    O::Gt
                };
                let mut acc: Option<Expr> = None;
                for (a, b) in pairs.into_iter().rev() {
                    acc = Some(match acc {
                        None => self.bind_binary(op, a, b)?,
                        Some(rest) => {
                            let first = self.bind_binary(&strict, a.clone(), b.clone())?;
                            let equal = self.bind_binary(&O::Eq, a, b)?;
                            let then = bool_op(BinaryOp::And, equal, rest);
                            bool_op(BinaryOp::Or, first, then)
                        }
                    });
                }
                acc
            }
            _ => {
                return Err(PgError::unsupported(format!("row comparison with {op}")));
            }
        };
        out.ok_or_else(|| PgError::syntax("syntax error at or near \")\""))
    }

    pub(crate) fn bind_binary(&self, op: &BinaryOperator, l: Expr, r: Expr) -> PgResult<Expr> {
        if *op == BinaryOperator::PGExp {
            return math::bind_power_operator(self, l, r);
        }
        let is_array = |e: &Expr| matches!(e.ty, DataType::Array(_));
        match op {
            BinaryOperator::AtArrow => {
                return self.bind_array_set_op(ScalarFunc::ArrayContains, "@>", l, r);
            }
            BinaryOperator::ArrowAt => {
                return self.bind_array_set_op(ScalarFunc::ArrayContained, "<@", l, r);
            }
            BinaryOperator::PGOverlap => {
                return self.bind_array_set_op(ScalarFunc::ArrayOverlap, "&&", l, r);
            }
            BinaryOperator::StringConcat if is_array(&l) || is_array(&r) => {
                return self.bind_array_concat(l, r);
            }
            _ => {}
        }
        let op = if let Some(cmp) = comparison_op(op) {
            cmp
        } else {
            match op {
                BinaryOperator::Plus => BinaryOp::Add,
                BinaryOperator::Minus => BinaryOp::Sub,
                BinaryOperator::Multiply => BinaryOp::Mul,
                BinaryOperator::Divide => BinaryOp::Div,
                BinaryOperator::Modulo => BinaryOp::Mod,
                BinaryOperator::StringConcat => BinaryOp::Concat,
                BinaryOperator::And => BinaryOp::And,
                BinaryOperator::Or => BinaryOp::Or,
                BinaryOperator::PGRegexMatch => BinaryOp::RegexMatch,
                BinaryOperator::PGRegexIMatch => BinaryOp::RegexIMatch,
                BinaryOperator::PGRegexNotMatch => BinaryOp::NotRegexMatch,
                BinaryOperator::PGRegexNotIMatch => BinaryOp::NotRegexIMatch,
                // `OPERATOR(pg_catalog.~)`, as psql writes its operators.
                BinaryOperator::PGCustomBinaryOperator(parts) => {
                    let (name, schema) = match parts.as_slice() {
                        [name] => (name, None),
                        [schema, name] => (name, Some(schema)),
                        _ => return Err(PgError::unsupported(format!("operator {op}"))),
                    };
                    if let Some(s) = schema
                        && s != "pg_catalog"
                    {
                        return Err(PgError::new(
                            SqlState::INVALID_SCHEMA_NAME,
                            format!("schema \"{s}\" does not exist"),
                        ));
                    }
                    let Some(named) = operator_named(name) else {
                        return Err(undefined_operator(name, &l.ty, &r.ty));
                    };
                    return self.bind_binary(&named, l, r);
                }
                other => return Err(PgError::unsupported(format!("operator {other}"))),
            }
        };
        let binary = |op, l, r, ty| Expr::new(ExprKind::Binary(op, Box::new(l), Box::new(r)), ty);
        match op {
            BinaryOp::And | BinaryOp::Or => {
                let l = coerce_to_bool(self, l, op.symbol())?;
                let r = coerce_to_bool(self, r, op.symbol())?;
                Ok(binary(op, l, r, DataType::Bool))
            }
            BinaryOp::RegexMatch
            | BinaryOp::RegexIMatch
            | BinaryOp::NotRegexMatch
            | BinaryOp::NotRegexIMatch => {
                // textregexeq and friends. A string of any type is matched as it is
                // (char(n) with its padding, as bpcharregexeq); an untyped literal is text.
                let stringy = |t: &DataType| t.is_string() || *t == DataType::Unknown;
                if !stringy(&l.ty) || !stringy(&r.ty) {
                    return Err(undefined_operator(op.symbol(), &l.ty, &r.ty));
                }
                let text = |e: Expr| -> PgResult<Expr> {
                    if e.ty == DataType::Unknown {
                        self.coerce(e, &DataType::Text, CastContext::Implicit)
                    } else {
                        Ok(e)
                    }
                };
                Ok(binary(op, text(l)?, text(r)?, DataType::Bool))
            }
            _ if op.is_comparison() => {
                let (l, r) = self.unify_for_comparison(l, r, op.symbol())?;
                Ok(binary(op, l, r, DataType::Bool))
            }
            BinaryOp::Concat => {
                let stringy = |t: &DataType| t.is_string() || *t == DataType::Unknown;
                if !stringy(&l.ty) && !stringy(&r.ty) {
                    return Err(undefined_operator("||", &l.ty, &r.ty));
                }
                let to_text = |e: Expr| -> PgResult<Expr> {
                    if e.ty == DataType::Text {
                        Ok(e)
                    } else {
                        self.coerce(e, &DataType::Text, CastContext::Explicit)
                    }
                };
                Ok(binary(op, to_text(l)?, to_text(r)?, DataType::Text))
            }
            _ if datetime::is_temporal(&l.ty) || datetime::is_temporal(&r.ty) => {
                datetime::bind_arith(self, op, l, r)
            }
            _ => {
                // Arithmetic: an unknown literal takes the other side's type, less its
                // typmod (`x + '1.005'` over a numeric(10,2) x adds 1.005).
                let (lt, rt) = (l.ty, r.ty);
                let l = if lt == DataType::Unknown && rt.is_numeric() {
                    self.coerce(l, &rt.without_typmod(), CastContext::Implicit)?
                } else {
                    l
                };
                let r = if rt == DataType::Unknown && lt.is_numeric() {
                    self.coerce(r, &lt.without_typmod(), CastContext::Implicit)?
                } else {
                    r
                };
                if !l.ty.is_numeric() || !r.ty.is_numeric() {
                    return Err(undefined_operator(op.symbol(), &lt, &rt));
                }
                let ty = math::arith_type(l.ty, r.ty);
                if op == BinaryOp::Mod && ty.is_float() {
                    return Err(undefined_operator("%", &l.ty, &r.ty));
                }
                let l = self.coerce(l, &ty, CastContext::Implicit)?;
                let r = self.coerce(r, &ty, CastContext::Implicit)?;
                Ok(binary(op, l, r, ty))
            }
        }
    }

    fn bind_function(&self, f: &ast::Function, cx: &ExprContext) -> PgResult<Expr> {
        let name = match f.name.0.as_slice() {
            [ast::ObjectNamePart::Identifier(id)] => ident_name(id),
            [
                ast::ObjectNamePart::Identifier(s),
                ast::ObjectNamePart::Identifier(id),
            ] if ident_name(s) == "pg_catalog" => ident_name(id),
            _ => return Err(PgError::unsupported(format!("function {}", f.name))),
        };
        // SQL's CURRENT_CATALOG, which sqlparser reads as a call without parentheses.
        let name = match (&f.args, name.as_str()) {
            (ast::FunctionArguments::None, "current_catalog") => "current_database".to_string(),
            _ => name,
        };
        if f.filter.is_some()
            || f.null_treatment.is_some()
            || f.over.is_some()
            || !f.within_group.is_empty()
        {
            return Err(PgError::unsupported(format!("function call syntax in {f}")));
        }
        let (args, distinct, order_by) = match &f.args {
            ast::FunctionArguments::None => (Vec::new(), false, &[][..]),
            // `ARRAY(SELECT ...)`.
            ast::FunctionArguments::Subquery(q) if name == "array" => {
                let (query, columns, args) = self.bind_sublink_query(q, cx)?;
                let [column] = columns.as_slice() else {
                    return Err(PgError::syntax("subquery must return only one column"));
                };
                let ty = array_type_of(&column.ty)?;
                return Ok(sublink(SubLinkKind::Array, query, args, ty));
            }
            ast::FunctionArguments::Subquery(_) => {
                return Err(PgError::unsupported(format!("{}(subquery)", f.name)));
            }
            ast::FunctionArguments::List(list) => {
                let mut order_by: &[ast::OrderByExpr] = &[];
                for c in &list.clauses {
                    match c {
                        ast::FunctionArgumentClause::OrderBy(keys) => order_by = keys,
                        _ => {
                            return Err(PgError::unsupported(format!(
                                "function call syntax in {f}"
                            )));
                        }
                    }
                }
                let distinct = matches!(
                    list.duplicate_treatment,
                    Some(ast::DuplicateTreatment::Distinct)
                );
                (list.args.iter().collect::<Vec<_>>(), distinct, order_by)
            }
        };
        let agg = match name.as_str() {
            "count" => Some(AggFunc::Count),
            "sum" => Some(AggFunc::Sum),
            "avg" => Some(AggFunc::Avg),
            "min" => Some(AggFunc::Min),
            "max" => Some(AggFunc::Max),
            "array_agg" => Some(AggFunc::ArrayAgg),
            "string_agg" => Some(AggFunc::StringAgg),
            _ => None,
        };
        if agg.is_none() && !order_by.is_empty() {
            return Err(PgError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("ORDER BY specified, but {name} is not an aggregate function"),
            ));
        }
        if let Some(func) = agg {
            if !cx.aggs_allowed {
                let msg = if cx.clause == "aggregate function calls" {
                    "aggregate function calls cannot be nested".to_string()
                } else {
                    format!("aggregate functions are not allowed in {}", cx.clause)
                };
                return Err(PgError::new(SqlState::GROUPING_ERROR, msg));
            }
            let inner = cx.inside_agg();
            let star = matches!(
                args.as_slice(),
                [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard)]
            );
            if star {
                if func != AggFunc::Count {
                    return Err(PgError::syntax(format!(
                        "{name}(*) specified, but {name} is not an aggregate function"
                    )));
                }
                return Ok(agg_expr(AggCall {
                    func: AggFunc::CountStar,
                    arg: None,
                    sep: None,
                    order_by: Vec::new(),
                    distinct: false,
                    ty: DataType::Int8,
                }));
            }
            let mut bound = Vec::with_capacity(args.len());
            for a in &args {
                let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(a)) = a else {
                    return Err(PgError::unsupported(format!("function argument {a}")));
                };
                bound.push(self.bind_expr(a, &inner)?);
            }
            let want = if func == AggFunc::StringAgg { 2 } else { 1 };
            if bound.len() != want {
                return Err(undefined_function(&name, &bound));
            }
            let sep = (func == AggFunc::StringAgg).then(|| bound.pop()).flatten();
            let arg = bound.pop().expect("one argument");
            let arg = if arg.ty == DataType::Unknown && func != AggFunc::Count {
                self.coerce(arg, &DataType::Text, CastContext::Implicit)?
            } else {
                arg
            };
            let sep = match sep {
                None => None,
                Some(sep) => {
                    let stringy = |t: &DataType| t.is_string() || *t == DataType::Unknown;
                    if !arg.ty.is_string() || !stringy(&sep.ty) {
                        return Err(undefined_function(&name, &[arg, sep]));
                    }
                    Some(self.coerce(sep, &DataType::Text, CastContext::Implicit)?)
                }
            };
            let order_by = order_by
                .iter()
                .map(|k| super::query::sort_key(self.bind_expr(&k.expr, &inner)?, k))
                .collect::<PgResult<Vec<_>>>()?;
            let ty = match func {
                AggFunc::Count | AggFunc::CountStar => DataType::Int8,
                // PostgreSQL's result types: sums of int2 and int4 are int8, of int8
                // numeric (it cannot overflow); averages of integers and numerics are
                // numeric, of floats float8.
                AggFunc::Sum => match arg.ty {
                    DataType::Int2 | DataType::Int4 => DataType::Int8,
                    DataType::Int8 | DataType::Numeric(_) => DataType::Numeric(None),
                    DataType::Float4 => DataType::Float4,
                    DataType::Float8 => DataType::Float8,
                    _ => return Err(undefined_function(&name, &[arg])),
                },
                AggFunc::Avg => match arg.ty {
                    DataType::Int2 | DataType::Int4 | DataType::Int8 | DataType::Numeric(_) => {
                        DataType::Numeric(None)
                    }
                    DataType::Float4 | DataType::Float8 => DataType::Float8,
                    _ => return Err(undefined_function(&name, &[arg])),
                },
                AggFunc::Min | AggFunc::Max => {
                    if arg.ty == DataType::Unknown {
                        DataType::Text
                    } else {
                        arg.ty.without_typmod()
                    }
                }
                AggFunc::ArrayAgg => array_type_of(&arg.ty.without_typmod())?,
                AggFunc::StringAgg => DataType::Text,
            };
            return Ok(agg_expr(AggCall {
                func,
                arg: Some(arg),
                sep,
                order_by,
                distinct,
                ty,
            }));
        }
        if distinct {
            return Err(PgError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("DISTINCT specified, but {name} is not an aggregate function"),
            ));
        }
        if let Some(r) = self.bind_sequence_function(&name, &args, cx) {
            return r;
        }
        if name == "make_interval"
            && args
                .iter()
                .any(|a| !matches!(a, ast::FunctionArg::Unnamed(_)))
        {
            return self.bind_make_interval_named(&args, cx);
        }
        let mut bound = Vec::with_capacity(args.len());
        for a in args {
            match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => {
                    bound.push(self.bind_expr(x, cx)?)
                }
                _ => return Err(PgError::unsupported(format!("function argument {a}"))),
            }
        }
        if name == "pg_column_size" && bound.len() == 1 {
            return Ok(column_size(bound.remove(0), cx.scope));
        }
        self.bind_scalar_function(&name, bound)
    }

    /// `make_interval(days => 1, ...)`: PostgreSQL's named notation, positional
    /// arguments first.
    fn bind_make_interval_named(
        &self,
        args: &[&ast::FunctionArg],
        cx: &ExprContext,
    ) -> PgResult<Expr> {
        let mut slots: Vec<Option<Expr>> = vec![None; datetime::MAKE_INTERVAL_PARAMS.len()];
        let mut named = false;
        for (i, a) in args.iter().enumerate() {
            let (slot, x) = match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) if !named => (i, x),
                ast::FunctionArg::Unnamed(_) => {
                    return Err(PgError::syntax(
                        "positional argument cannot follow named argument",
                    ));
                }
                ast::FunctionArg::Named {
                    name,
                    arg: ast::FunctionArgExpr::Expr(x),
                    ..
                }
                | ast::FunctionArg::ExprNamed {
                    name: ast::Expr::Identifier(name),
                    arg: ast::FunctionArgExpr::Expr(x),
                    ..
                } => {
                    named = true;
                    let n = ident_name(name);
                    let Some(slot) = datetime::MAKE_INTERVAL_PARAMS.iter().position(|p| *p == n)
                    else {
                        return Err(PgError::new(
                            SqlState::UNDEFINED_FUNCTION,
                            format!("function make_interval({n} => ...) does not exist"),
                        ));
                    };
                    (slot, x)
                }
                _ => return Err(PgError::unsupported(format!("function argument {a}"))),
            };
            if slot >= slots.len() || slots[slot].is_some() {
                return Err(PgError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    "function make_interval with these arguments does not exist",
                ));
            }
            slots[slot] = Some(self.bind_expr(x, cx)?);
        }
        datetime::bind_make_interval(self, slots)
    }

    fn bind_scalar_function(&self, name: &str, args: Vec<Expr>) -> PgResult<Expr> {
        if let Some(r) = datetime::bind_function(self, name, args.clone()) {
            return r;
        }
        if let Some(r) = math::bind_function(self, name, args.clone()) {
            return r;
        }
        if let Some(r) = super::array::bind_function(self, name, args.clone()) {
            return r;
        }
        if let Some(r) = super::catalog_fn::bind_function(self, name, args.clone()) {
            return r;
        }
        let all = args.clone();
        let text_arg = |a: Expr| -> PgResult<Expr> {
            if a.ty.is_string() {
                Ok(a)
            } else if a.ty == DataType::Unknown {
                self.coerce(a, &DataType::Text, CastContext::Implicit)
            } else {
                Err(undefined_function(name, &all))
            }
        };
        let int_arg = |a: Expr, all: &[Expr]| -> PgResult<Expr> {
            if a.ty == DataType::Unknown || a.ty == DataType::Int2 || a.ty == DataType::Int4 {
                self.coerce(a, &DataType::Int4, CastContext::Implicit)
            } else {
                Err(undefined_function(name, all))
            }
        };
        match (name, args.len()) {
            // Fixed for the session: bound as a constant.
            // Fixed for the session (or the server): bound as constants.
            ("version", 0) => Ok(Expr::constant(
                Value::Text(format!(
                    "PostgreSQL {} on {}-unknown-{}, 64-bit",
                    common::session::SERVER_VERSION,
                    std::env::consts::ARCH,
                    std::env::consts::OS
                )),
                DataType::Text,
            )),
            ("current_database", 0) => Ok(Expr::constant(
                Value::Text(self.session.database.clone()),
                DataType::Text,
            )),
            ("current_user" | "session_user" | "current_role" | "user", 0) => Ok(Expr::constant(
                Value::Text(self.session.user.clone()),
                DataType::Text,
            )),
            // Myriad has one schema.
            ("current_schema", 0) => {
                Ok(Expr::constant(Value::Text("public".into()), DataType::Text))
            }
            // The schemas searched (`$user` has none): with the implicit pg_catalog when
            // the argument is true; NULL for NULL, as the function is strict. name[] is
            // text[] here, as name is text.
            ("current_schemas", 1) => {
                let ty = DataType::Text.array().expect("text has an array type");
                let a = args.into_iter().next().expect("one argument");
                if !matches!(a.ty, DataType::Bool | DataType::Unknown) {
                    return Err(undefined_function(name, &[a]));
                }
                let implicit = self.coerce(a, &DataType::Bool, CastContext::Implicit)?;
                let schemas = |names: &[&str]| {
                    let items = names.iter().map(|n| Value::Text(n.to_string())).collect();
                    Expr::constant(
                        Value::Array(std::sync::Arc::new(common::array::Array::from_items(
                            DataType::Text.oid(),
                            items,
                        ))),
                        ty,
                    )
                };
                let not = Expr::new(ExprKind::Not(Box::new(implicit.clone())), DataType::Bool);
                Ok(Expr::new(
                    ExprKind::Case {
                        whens: vec![
                            (implicit, schemas(&["pg_catalog", "public"])),
                            (not, schemas(&["public"])),
                        ],
                        else_result: Box::new(Expr::constant(Value::Null, ty)),
                    },
                    ty,
                ))
            }
            ("unnest" | "generate_series", _) => Err(PgError::unsupported(format!(
                "set-returning function {name} outside FROM"
            ))),
            // The type is known when binding: a constant.
            ("pg_typeof", 1) => Ok(Expr::constant(
                Value::Reg(common::value::RegKind::Type, args[0].ty.oid()),
                DataType::Reg(common::value::RegKind::Type),
            )),
            ("format_type", 2) => {
                let mut it = args.into_iter();
                let (t, m) = (it.next().expect("two"), it.next().expect("two"));
                let oid_ok = t.ty.is_integer() || is_oid_like(&t.ty) || t.ty == DataType::Unknown;
                let int_ok = matches!(m.ty, DataType::Int2 | DataType::Int4 | DataType::Unknown);
                if !oid_ok || !int_ok {
                    return Err(undefined_function(name, &[t, m]));
                }
                let t = self.coerce(t, &DataType::Oid, CastContext::Implicit)?;
                let m = self.coerce(m, &DataType::Int4, CastContext::Implicit)?;
                Ok(Expr::new(
                    ExprKind::Func(ScalarFunc::FormatType, vec![t, m]),
                    DataType::Text,
                ))
            }
            ("gen_random_uuid", 0) => Ok(Expr::new(
                ExprKind::Func(ScalarFunc::GenRandomUuid, Vec::new()),
                DataType::Uuid,
            )),
            // pg_cancel_backend(integer), pg_terminate_backend(integer, bigint DEFAULT 0).
            ("pg_cancel_backend", 1) | ("pg_terminate_backend", 1 | 2) => {
                let integer = |a: &Expr| a.ty.is_integer() || a.ty == DataType::Unknown;
                if !args.iter().all(integer) || (args.len() == 1 && args[0].ty == DataType::Int8) {
                    return Err(undefined_function(name, &args));
                }
                let f = if name == "pg_cancel_backend" {
                    ScalarFunc::PgCancelBackend
                } else {
                    ScalarFunc::PgTerminateBackend
                };
                let mut it = args.into_iter();
                let mut out = vec![self.coerce(
                    it.next().expect("one argument"),
                    &DataType::Int4,
                    CastContext::Implicit,
                )?];
                if let Some(timeout) = it.next() {
                    out.push(self.coerce(timeout, &DataType::Int8, CastContext::Implicit)?);
                }
                Ok(Expr::new(ExprKind::Func(f, out), DataType::Bool))
            }
            // pg_sleep(double precision): void.
            ("pg_sleep", 1) => {
                let a = args.into_iter().next().expect("one argument");
                if !(a.ty.is_numeric() || a.ty == DataType::Unknown) {
                    return Err(undefined_function(name, &[a]));
                }
                let a = self.coerce(a, &DataType::Float8, CastContext::Implicit)?;
                Ok(Expr::new(
                    ExprKind::Func(ScalarFunc::PgSleep, vec![a]),
                    DataType::Void,
                ))
            }
            ("pg_stat_force_next_flush", 0) | ("pg_stat_reset", 0) => Ok(Expr::new(
                ExprKind::Func(
                    if name == "pg_stat_reset" {
                        ScalarFunc::PgStatReset
                    } else {
                        ScalarFunc::PgStatForceNextFlush
                    },
                    Vec::new(),
                ),
                DataType::Void,
            )),
            ("pg_stat_reset_single_table_counters", 1) => {
                let a = args.into_iter().next().expect("one argument");
                let a = self.coerce(a, &DataType::Oid, CastContext::Implicit)?;
                Ok(Expr::new(
                    ExprKind::Func(ScalarFunc::PgStatResetSingleTableCounters, vec![a]),
                    DataType::Void,
                ))
            }
            ("pg_backend_pid", 0) => Ok(Expr::new(
                ExprKind::Const(Value::Int4(self.session.backend_pid as i32)),
                DataType::Int4,
            )),
            ("lower" | "upper", 1) => {
                let a = text_arg(args.into_iter().next().expect("one argument"))?;
                let f = if name == "lower" {
                    ScalarFunc::Lower
                } else {
                    ScalarFunc::Upper
                };
                Ok(Expr::new(
                    ExprKind::Func(
                        f,
                        vec![self.coerce(a, &DataType::Text, CastContext::Implicit)?],
                    ),
                    DataType::Text,
                ))
            }
            // length(bytea) and octet_length(bytea) count bytes.
            ("length" | "octet_length", 1) if args[0].ty == DataType::Bytea => Ok(Expr::new(
                ExprKind::Func(ScalarFunc::Length, args),
                DataType::Int4,
            )),
            ("octet_length" | "bit_length", 1) => {
                let a = text_arg(args.into_iter().next().expect("one argument"))?;
                let f = if name == "octet_length" {
                    ScalarFunc::OctetLength
                } else {
                    ScalarFunc::BitLength
                };
                Ok(Expr::new(ExprKind::Func(f, vec![a]), DataType::Int4))
            }
            ("length" | "char_length" | "character_length", 1) => {
                let a = text_arg(args.into_iter().next().expect("one argument"))?;
                Ok(Expr::new(
                    ExprKind::Func(ScalarFunc::Length, vec![a]),
                    DataType::Int4,
                ))
            }
            ("repeat", 2) => {
                let mut it = args.into_iter();
                let s = text_arg(it.next().expect("string argument"))?;
                let s = self.coerce(s, &DataType::Text, CastContext::Implicit)?;
                let n = int_arg(it.next().expect("count argument"), &all)?;
                Ok(Expr::new(
                    ExprKind::Func(ScalarFunc::Repeat, vec![s, n]),
                    DataType::Text,
                ))
            }
            ("substr" | "substring", 2 | 3) => {
                let mut it = args.into_iter();
                let s = text_arg(it.next().expect("string argument"))?;
                let s = self.coerce(s, &DataType::Text, CastContext::Implicit)?;
                let mut out = vec![s];
                for a in it {
                    out.push(int_arg(a, &all)?);
                }
                Ok(Expr::new(
                    ExprKind::Func(ScalarFunc::Substr, out),
                    DataType::Text,
                ))
            }
            ("coalesce", n) if n > 0 => {
                let types: Vec<DataType> = args.iter().map(|a| a.ty).collect();
                let ty = common_type(&types, "COALESCE")?;
                let args = args
                    .into_iter()
                    .map(|a| self.coerce(a, &ty, CastContext::Implicit))
                    .collect::<PgResult<Vec<_>>>()?;
                Ok(Expr::new(ExprKind::Coalesce(args), ty))
            }
            ("nullif", 2) => {
                let mut it = args.into_iter();
                let a = it.next().expect("two arguments");
                let b = it.next().expect("two arguments");
                let ty = if a.ty == DataType::Unknown {
                    b.ty.without_typmod()
                } else {
                    a.ty
                };
                let ty = if ty == DataType::Unknown {
                    DataType::Text
                } else {
                    ty
                };
                let (a, b) =
                    self.unify_for_comparison(self.coerce(a, &ty, CastContext::Implicit)?, b, "=")?;
                let ty = a.ty;
                Ok(Expr::new(ExprKind::NullIf(Box::new(a), Box::new(b)), ty))
            }
            _ => Err(undefined_function(name, &args)),
        }
    }

    /// Map a SQL type name to a [`DataType`].
    pub(crate) fn bind_type(&self, t: &ast::DataType) -> PgResult<DataType> {
        type_from_ast(t)
    }
}

/// Map a SQL type name to a [`DataType`].
pub fn type_from_ast(t: &ast::DataType) -> PgResult<DataType> {
    use ast::DataType as T;
    let char_len = |l: &Option<ast::CharacterLength>| -> PgResult<Option<u32>> {
        match l {
            None => Ok(None),
            Some(ast::CharacterLength::IntegerLength { length, .. }) => {
                if *length < 1 {
                    return Err(PgError::syntax(
                        "length for type varchar must be at least 1",
                    ));
                }
                if *length > common::limits::MAX_CHAR_TYPMOD as u64 {
                    return Err(PgError::syntax(format!(
                        "length for type varchar cannot exceed {}",
                        common::limits::MAX_CHAR_TYPMOD
                    )));
                }
                Ok(Some(*length as u32))
            }
            Some(ast::CharacterLength::Max) => {
                Err(PgError::syntax("syntax error at or near \"max\""))
            }
        }
    };
    Ok(match t {
        T::SmallInt(_) | T::Int2(_) => DataType::Int2,
        T::Int(_) | T::Integer(_) | T::Int4(_) => DataType::Int4,
        T::BigInt(_) | T::Int8(_) => DataType::Int8,
        T::Real | T::Float4 => DataType::Float4,
        T::DoublePrecision | T::Float8 | T::Double(ast::ExactNumberInfo::None) => DataType::Float8,
        T::Float(info) => match info {
            ast::ExactNumberInfo::None => DataType::Float8,
            ast::ExactNumberInfo::Precision(p) | ast::ExactNumberInfo::PrecisionAndScale(p, _) => {
                match *p {
                    0 => {
                        return Err(PgError::syntax(
                            "precision for type float must be at least 1 bit",
                        ));
                    }
                    1..=24 => DataType::Float4,
                    25..=53 => DataType::Float8,
                    _ => {
                        return Err(PgError::syntax(
                            "precision for type float must be less than 54 bits",
                        ));
                    }
                }
            }
        },
        T::Bool | T::Boolean => DataType::Bool,
        T::Text => DataType::Text,
        T::Uuid => DataType::Uuid,
        T::Bytea => DataType::Bytea,
        T::Date => DataType::Date,
        T::Timestamp(p, tz) => {
            // PostgreSQL warns that a precision over 6 is reduced to 6, and uses 6.
            let p = p.map(|p| p.min(u64::from(common::types::MAX_TIMESTAMP_PRECISION)) as u8);
            match tz {
                ast::TimezoneInfo::None | ast::TimezoneInfo::WithoutTimeZone => {
                    DataType::Timestamp(p)
                }
                ast::TimezoneInfo::WithTimeZone | ast::TimezoneInfo::Tz => DataType::TimestampTz(p),
            }
        }
        T::Interval {
            fields: None,
            precision: None,
        } => DataType::Interval,
        T::Varchar(l) | T::CharacterVarying(l) | T::CharVarying(l) => {
            DataType::Varchar(char_len(l)?)
        }
        T::Char(l) | T::Character(l) => DataType::Bpchar(Some(char_len(l)?.unwrap_or(1))),
        T::Numeric(info) | T::Decimal(info) | T::Dec(info) => {
            // Out-of-range modifiers saturate, so typmod_in reports them.
            let precision = |p: u64| i32::try_from(p).unwrap_or(i32::MAX);
            let scale = |s: i64| s.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
            let mods = match *info {
                ast::ExactNumberInfo::None => return Ok(DataType::Numeric(None)),
                ast::ExactNumberInfo::Precision(p) => vec![precision(p)],
                ast::ExactNumberInfo::PrecisionAndScale(p, s) => vec![precision(p), scale(s)],
            };
            let typmod = common::numeric::typmod_in(&mods)?;
            DataType::Numeric(common::numeric::typmod_precision_scale(typmod))
        }
        // `int[]`, `int[3]`, `int[][]` (more dimensions are the same type).
        T::Array(ast::ArrayElemTypeDef::SquareBracket(inner, _)) => {
            array_type_of(&type_from_ast(inner)?)?
        }
        T::Regclass => DataType::Reg(common::value::RegKind::Class),
        T::Custom(name, mods) if mods.is_empty() => {
            let parts: Vec<String> = name
                .0
                .iter()
                .map(|p| match p {
                    ast::ObjectNamePart::Identifier(id) => ident_name(id),
                    other => other.to_string(),
                })
                .collect();
            let n = match parts.as_slice() {
                [n] => n,
                [schema, n] if schema == "pg_catalog" => n,
                [schema, _] => {
                    return Err(PgError::new(
                        SqlState::INVALID_SCHEMA_NAME,
                        format!("schema \"{schema}\" does not exist"),
                    ));
                }
                _ => return Err(PgError::unsupported(format!("type {name}"))),
            };
            type_by_name(n).ok_or_else(|| {
                PgError::new(
                    SqlState::UNDEFINED_OBJECT,
                    format!("type \"{n}\" does not exist"),
                )
            })?
        }
        other => return Err(PgError::unsupported(format!("type {other}"))),
    })
}

/// The array type over elements of type `elem` (an array's own type for an array: more
/// dimensions, not arrays of arrays).
pub(crate) fn array_type_of(elem: &DataType) -> PgResult<DataType> {
    match elem {
        DataType::Array(_) => Ok(*elem),
        DataType::Unknown => Ok(DataType::Text.array().expect("text has an array type")),
        t => t.array().ok_or_else(|| {
            PgError::new(
                SqlState::UNDEFINED_OBJECT,
                format!("could not find array type for data type {}", t.name()),
            )
        }),
    }
}

/// A type by its one-word internal name (`int4`, `varchar`, `regclass`, `_int4` for
/// `int4[]`, ...).
pub fn type_by_name(n: &str) -> Option<DataType> {
    use common::value::RegKind;
    Some(match n {
        "bpchar" => DataType::Bpchar(None),
        "int2" => DataType::Int2,
        "int4" => DataType::Int4,
        "int8" => DataType::Int8,
        "float4" => DataType::Float4,
        "float8" => DataType::Float8,
        "bool" => DataType::Bool,
        "varchar" => DataType::Varchar(None),
        "text" => DataType::Text,
        "date" => DataType::Date,
        "timestamp" => DataType::Timestamp(None),
        "timestamptz" => DataType::TimestampTz(None),
        "interval" => DataType::Interval,
        "numeric" | "decimal" => DataType::Numeric(None),
        "uuid" => DataType::Uuid,
        "bytea" => DataType::Bytea,
        "oid" => DataType::Oid,
        "regclass" => DataType::Reg(RegKind::Class),
        "regtype" => DataType::Reg(RegKind::Type),
        "regnamespace" => DataType::Reg(RegKind::Namespace),
        "unknown" => DataType::Unknown,
        _ => {
            let elem = type_by_name(n.strip_prefix('_')?)?;
            return elem.array();
        }
    })
}

/// The comparison operators `=`, `<>`, `<`, `<=`, `>`, `>=`.
pub(crate) fn comparison_op(op: &BinaryOperator) -> Option<BinaryOp> {
    Some(match op {
        BinaryOperator::Eq => BinaryOp::Eq,
        BinaryOperator::NotEq => BinaryOp::NotEq,
        BinaryOperator::Lt => BinaryOp::Lt,
        BinaryOperator::LtEq => BinaryOp::LtEq,
        BinaryOperator::Gt => BinaryOp::Gt,
        BinaryOperator::GtEq => BinaryOp::GtEq,
        _ => return None,
    })
}

/// `oid` and the `reg*` types.
pub(crate) fn is_oid_like(t: &DataType) -> bool {
    matches!(t, DataType::Oid | DataType::Reg(_))
}

fn agg_expr(call: AggCall) -> Expr {
    let ty = call.ty;
    Expr::new(ExprKind::Agg(Box::new(call)), ty)
}

/// The name PostgreSQL gives an output column computed by `e` (`FigureColname`).
pub(crate) fn figure_colname(e: &ast::Expr) -> Option<String> {
    use ast::Expr as A;
    match e {
        A::Identifier(id) => Some(ident_name(id)),
        A::CompoundIdentifier(parts) => parts.last().map(ident_name),
        A::Nested(inner) => figure_colname(inner),
        A::Function(f) => f.name.0.last().and_then(|p| match p {
            ast::ObjectNamePart::Identifier(id) => Some(ident_name(id)),
            _ => None,
        }),
        // A cast names its column after its argument only if that is a column or a
        // function call (PostgreSQL's "strength 2"), else after its type: the
        // outermost cast of a literal wins (`'1'::text::numeric` is `numeric`).
        A::Cast {
            expr, data_type, ..
        } => match figure_colname(expr) {
            Some(name) if !is_weak_colname(expr) => Some(name),
            _ => Some(match data_type {
                ast::DataType::Custom(n, _) => n.to_string().to_lowercase(),
                other => type_internal_name(other).to_string(),
            }),
        },
        // Named after its ELSE result when that is a column or a call, as in PostgreSQL.
        A::Case {
            else_result: Some(e),
            ..
        } if !is_weak_colname(e) => figure_colname(e),
        A::Case { .. } => Some("case".into()),
        A::TypedString(ts) => Some(type_internal_name(&ts.data_type).to_string()),
        A::Interval(_) => Some("interval".into()),
        A::Extract { .. } => Some("extract".into()),
        A::Ceil { .. } => Some("ceil".into()),
        A::Floor { .. } => Some("floor".into()),
        A::AtTimeZone { .. } => Some("timezone".into()),
        // `substr(...)` is a function of its own name in PostgreSQL.
        A::Substring {
            shorthand: true, ..
        } => Some("substr".into()),
        A::Substring { .. } => Some("substring".into()),
        // A scalar subquery is named after its one column, as PostgreSQL's.
        A::Subquery(q) => Some(first_colname(q)),
        A::Exists { .. } => Some("exists".into()),
        _ => None,
    }
}

/// The name a query's first output column gets (a set operation's from its left side).
fn first_colname(q: &ast::Query) -> String {
    let mut body = q.body.as_ref();
    loop {
        match body {
            ast::SetExpr::SetOperation { left, .. } => body = left,
            ast::SetExpr::Query(q) => body = q.body.as_ref(),
            _ => break,
        }
    }
    let named = match body {
        ast::SetExpr::Select(s) => match s.projection.first() {
            Some(ast::SelectItem::ExprWithAlias { alias, .. }) => Some(ident_name(alias)),
            Some(ast::SelectItem::UnnamedExpr(e)) => figure_colname(e),
            _ => None,
        },
        ast::SetExpr::Values(_) => Some("column1".into()),
        _ => None,
    };
    named.unwrap_or_else(|| "?column?".into())
}

/// A name [`figure_colname`] gives only as a last resort (PostgreSQL's strength 1):
/// one from a type name or a keyword construct, which an enclosing cast overrides.
fn is_weak_colname(e: &ast::Expr) -> bool {
    use ast::Expr as A;
    match e {
        A::Identifier(_)
        | A::CompoundIdentifier(_)
        | A::Function(_)
        | A::Extract { .. }
        | A::Ceil { .. }
        | A::Floor { .. }
        | A::AtTimeZone { .. }
        | A::Substring { .. }
        | A::Subquery(_)
        | A::Exists { .. } => false,
        A::Nested(inner) => is_weak_colname(inner),
        A::Cast { expr, .. } => is_weak_colname(expr),
        A::Case {
            else_result: Some(e),
            ..
        } => is_weak_colname(e),
        _ => true,
    }
}

fn type_internal_name(t: &ast::DataType) -> &'static str {
    use ast::DataType as T;
    match t {
        T::SmallInt(_) | T::Int2(_) => "int2",
        T::Int(_) | T::Integer(_) | T::Int4(_) => "int4",
        T::BigInt(_) | T::Int8(_) => "int8",
        T::Real | T::Float4 => "float4",
        T::DoublePrecision | T::Float8 | T::Double(_) | T::Float(_) => "float8",
        T::Bool | T::Boolean => "bool",
        T::Text => "text",
        T::Varchar(_) | T::CharacterVarying(_) | T::CharVarying(_) => "varchar",
        T::Char(_) | T::Character(_) => "bpchar",
        T::Date => "date",
        T::Timestamp(_, ast::TimezoneInfo::WithTimeZone | ast::TimezoneInfo::Tz) => "timestamptz",
        T::Timestamp(..) => "timestamp",
        T::Interval { .. } => "interval",
        T::Numeric(_) | T::Decimal(_) | T::Dec(_) => "numeric",
        T::Uuid => "uuid",
        T::Bytea => "bytea",
        _ => "?column?",
    }
}
