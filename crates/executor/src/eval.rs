//! Expression evaluation over one row, with PostgreSQL's NULL semantics and errors.

use common::{DataType, PgError, PgResult, SqlState, Value};
use sql::bound::{BinaryOp, Expr, ExprKind, ScalarFunc};

use crate::cast::cast_value;
use crate::env::Env;
use crate::math::{arith, negate};
use crate::session::Session;

pub use crate::cast::fold_constant;
pub use crate::env::Row;

/// Evaluate `e` over `row`, where no subquery can appear (DEFAULT expressions, EXECUTE
/// arguments, constants): a subquery here is an internal error. Operators evaluate with
/// [`Env::eval`], which runs subqueries.
pub fn eval(e: &Expr, row: &[Value], session: &Session) -> PgResult<Value> {
    ev(e, row, session, None)
}

/// Evaluate `e`, which reads no row and no subquery, with a generic plan's parameter
/// values (what EXPLAIN's pruning of such a plan resolves its `$n` with).
pub fn eval_with_params(
    e: &Expr,
    session: &Session,
    params: crate::env::Params,
) -> PgResult<Value> {
    let bound = sql::bound::substitute_params(e.clone(), params.values, params.types)?;
    eval(&bound, &[], session)
}

impl Env<'_> {
    /// Evaluate `e` over `row` in this statement: subqueries in it run against the
    /// statement's snapshot.
    pub fn eval(&self, e: &Expr, row: &[Value]) -> PgResult<Value> {
        ev(e, row, self.session, Some(self))
    }
}

fn ev(e: &Expr, row: &[Value], s: &Session, env: Option<&Env>) -> PgResult<Value> {
    match &e.kind {
        ExprKind::Const(v) => Ok(v.clone()),
        ExprKind::Column(i) => Ok(row.get(*i).cloned().unwrap_or(Value::Null)),
        // A generic plan's parameter: its value, as the type this use of it has (the
        // value has the type Parse gave the parameter).
        ExprKind::Param(i) => {
            let params = env.map(|env| env.params).unwrap_or_default();
            let (Some(v), Some(ty)) = (params.values.get(*i), params.types.get(*i)) else {
                return Err(PgError::internal(format!(
                    "no value for parameter ${}",
                    i + 1
                )));
            };
            if *ty == e.ty {
                Ok(v.clone())
            } else {
                cast_value(v.clone(), &e.ty, false, s.text())
            }
        }
        ExprKind::Neg(x) => negate(ev(x, row, s, env)?, &e.ty),
        ExprKind::Not(x) => Ok(match ev(x, row, s, env)? {
            Value::Bool(b) => Value::Bool(!b),
            _ => Value::Null,
        }),
        ExprKind::Binary(op, l, r) => eval_binary(*op, l, r, &e.ty, row, s, env),
        ExprKind::IsNull { expr, negated } => {
            Ok(Value::Bool(ev(expr, row, s, env)?.is_null() != *negated))
        }
        ExprKind::IsBool {
            expr,
            value,
            negated,
        } => {
            let v = ev(expr, row, s, env)?;
            let is = match (value, &v) {
                (None, Value::Null) => true,
                (Some(want), Value::Bool(b)) => want == b,
                _ => false,
            };
            Ok(Value::Bool(is != *negated))
        }
        ExprKind::IsDistinctFrom {
            left,
            right,
            negated,
        } => {
            let (a, b) = (ev(left, row, s, env)?, ev(right, row, s, env)?);
            let distinct = match (a.is_null(), b.is_null()) {
                (true, true) => false,
                (true, false) | (false, true) => true,
                _ => a.cmp_non_null(&b) != std::cmp::Ordering::Equal,
            };
            Ok(Value::Bool(distinct != *negated))
        }
        ExprKind::Like {
            expr,
            pattern,
            escape,
            negated,
            case_insensitive,
        } => {
            let v = ev(expr, row, s, env)?;
            let p = ev(pattern, row, s, env)?;
            let esc = match escape {
                Some(x) => match ev(x, row, s, env)? {
                    Value::Null => return Ok(Value::Null),
                    other => Some(other),
                },
                None => None,
            };
            // LIKE on char(n) sees the blank padding (PostgreSQL's bpcharlike).
            let raw = |v: &Value| match v {
                Value::Bpchar(s) | Value::Text(s) => Some(s.clone()),
                _ => None,
            };
            let (Some(s), Some(p)) = (raw(&v), raw(&p)) else {
                return Ok(Value::Null);
            };
            let (s, p) = (s.as_str(), p.as_str());
            let escape_char = match &esc {
                None => Some('\\'),
                Some(e) => {
                    let s = e.as_str().unwrap_or("");
                    let mut chars = s.chars();
                    match (chars.next(), chars.next()) {
                        (None, _) => None,
                        (Some(c), None) => Some(c),
                        _ => {
                            return Err(PgError::new(
                                SqlState::INVALID_ESCAPE_SEQUENCE,
                                "invalid escape string",
                            )
                            .with_hint("Escape string must be empty or one character."));
                        }
                    }
                }
            };
            let m = if *case_insensitive {
                like(&s.to_lowercase(), &p.to_lowercase(), escape_char)?
            } else {
                like(s, p, escape_char)?
            };
            Ok(Value::Bool(m != *negated))
        }
        ExprKind::InList {
            expr,
            list,
            negated,
        } => {
            let v = ev(expr, row, s, env)?;
            if v.is_null() {
                return Ok(Value::Null);
            }
            let mut saw_null = false;
            for item in list {
                let x = ev(item, row, s, env)?;
                if x.is_null() {
                    saw_null = true;
                } else if v.cmp_non_null(&x) == std::cmp::Ordering::Equal {
                    return Ok(Value::Bool(!*negated));
                }
            }
            Ok(if saw_null {
                Value::Null
            } else {
                Value::Bool(*negated)
            })
        }
        ExprKind::Case { whens, else_result } => {
            for (cond, result) in whens {
                if ev(cond, row, s, env)?.is_true() {
                    return ev(result, row, s, env);
                }
            }
            ev(else_result, row, s, env)
        }
        ExprKind::Coalesce(list) => {
            for item in list {
                let v = ev(item, row, s, env)?;
                if !v.is_null() {
                    return Ok(v);
                }
            }
            Ok(Value::Null)
        }
        ExprKind::NullIf(a, b) => {
            let va = ev(a, row, s, env)?;
            let vb = ev(b, row, s, env)?;
            if !va.is_null() && !vb.is_null() && va.cmp_non_null(&vb) == std::cmp::Ordering::Equal {
                Ok(Value::Null)
            } else {
                Ok(va)
            }
        }
        ExprKind::Cast { expr, explicit } => {
            cast_value(ev(expr, row, s, env)?, &e.ty, *explicit, s.text())
        }
        // A value not read from a table: the size it takes stored inline, uncompressed.
        ExprKind::Func(ScalarFunc::PgColumnSize, args) => {
            let Some(a) = args.first() else {
                return Err(PgError::internal("pg_column_size without argument"));
            };
            let size = match ev(a, row, s, env)? {
                Value::Null => return Ok(Value::Null),
                // An untyped literal is a C string to PostgreSQL: its bytes and a NUL.
                Value::Text(t) if a.ty == DataType::Unknown => t.len() + 1,
                v => access::tuple::encoded_len(&v, &a.ty),
            };
            Ok(Value::Int4(i32::try_from(size).unwrap_or(i32::MAX)))
        }
        ExprKind::Func(f, args) => {
            let vals = args
                .iter()
                .map(|a| ev(a, row, s, env))
                .collect::<PgResult<Vec<_>>>()?;
            if let (
                Some(env),
                ScalarFunc::NextVal | ScalarFunc::CurrVal | ScalarFunc::SetVal,
                Some(Value::Int8(oid)),
            ) = (env, f, vals.first())
            {
                crate::sequence::lock(s, env.tx, *oid)?;
            }
            eval_func(s, *f, vals, &e.ty)
        }
        ExprKind::Agg(_) => Err(PgError::internal(
            "aggregate evaluated outside an Aggregate node",
        )),
        ExprKind::Outer(i) => env
            .and_then(|env| env.outer.get(*i))
            .cloned()
            .ok_or_else(|| PgError::internal("outer reference outside its subquery")),
        ExprKind::SubLink(link) => match env {
            Some(env) => env.subqueries.eval_sublink(link, row, env, &e.ty),
            None => Err(PgError::internal("subquery evaluated outside a statement")),
        },
    }
}

/// `e`'s value over `row`, borrowed from the row where `e` is one of its columns.
fn ev_ref<'r>(
    e: &'r Expr,
    row: &'r [Value],
    s: &Session,
    env: Option<&Env>,
) -> PgResult<std::borrow::Cow<'r, Value>> {
    match &e.kind {
        ExprKind::Column(i) if *i < row.len() => Ok(std::borrow::Cow::Borrowed(&row[*i])),
        // A constant too (`1 - l_discount`: no copy of the 1 per row).
        ExprKind::Const(v) => Ok(std::borrow::Cow::Borrowed(v)),
        _ => ev(e, row, s, env).map(std::borrow::Cow::Owned),
    }
}

fn eval_binary(
    op: BinaryOp,
    l: &Expr,
    r: &Expr,
    ty: &DataType,
    row: &[Value],
    s: &Session,
    env: Option<&Env>,
) -> PgResult<Value> {
    match op {
        BinaryOp::And => {
            let a = ev(l, row, s, env)?;
            if matches!(a, Value::Bool(false)) {
                return Ok(a);
            }
            let b = ev(r, row, s, env)?;
            Ok(match (a, b) {
                (_, Value::Bool(false)) => Value::Bool(false),
                (Value::Bool(true), Value::Bool(true)) => Value::Bool(true),
                _ => Value::Null,
            })
        }
        BinaryOp::Or => {
            let a = ev(l, row, s, env)?;
            if matches!(a, Value::Bool(true)) {
                return Ok(a);
            }
            let b = ev(r, row, s, env)?;
            Ok(match (a, b) {
                (_, Value::Bool(true)) => Value::Bool(true),
                (Value::Bool(false), Value::Bool(false)) => Value::Bool(false),
                _ => Value::Null,
            })
        }
        _ => {
            // A column operand is read in place: no copy of a numeric's digits or a
            // string per row (the operators below only look at their operands).
            let a = ev_ref(l, row, s, env)?;
            let b = ev_ref(r, row, s, env)?;
            let (a, b): (&Value, &Value) = (&a, &b);
            if a.is_null() || b.is_null() {
                return Ok(Value::Null);
            }
            if let Some((insensitive, negated)) = regex_op(op) {
                let (Some(s), Some(p)) = (a.as_str(), b.as_str()) else {
                    return Err(PgError::internal("regular expression match on non-text"));
                };
                // char(n) is matched with its padding (bpcharregexeq); Myriad keeps its
                // values unpadded.
                let s = match l.ty {
                    DataType::Bpchar(Some(n)) if (s.chars().count() as u32) < n => {
                        let pad = n as usize - s.chars().count();
                        std::borrow::Cow::Owned(format!("{s}{}", " ".repeat(pad)))
                    }
                    _ => std::borrow::Cow::Borrowed(s),
                };
                return Ok(Value::Bool(regex_matches(&s, p, insensitive)? != negated));
            }
            if op.is_comparison() {
                use std::cmp::Ordering::*;
                let c = a.cmp_non_null(b);
                let res = match op {
                    BinaryOp::Eq => c == Equal,
                    BinaryOp::NotEq => c != Equal,
                    BinaryOp::Lt => c == Less,
                    BinaryOp::LtEq => c != Greater,
                    BinaryOp::Gt => c == Greater,
                    _ => c != Less,
                };
                return Ok(Value::Bool(res));
            }
            if op == BinaryOp::Concat {
                let (a, b) = (
                    a.as_str().unwrap_or_default(),
                    b.as_str().unwrap_or_default(),
                );
                // A value is at most 1 GB (tuple rule 6): refused before it is made.
                let len = a.len() + b.len();
                if len > access::tuple::MAX_VARLENA {
                    return Err(access::tuple::value_too_long(len));
                }
                let mut s = String::with_capacity(len);
                s.push_str(a);
                s.push_str(b);
                return Ok(Value::Text(s));
            }
            let temporal = |v: &Value| {
                matches!(
                    v,
                    Value::Date(_)
                        | Value::Timestamp(_)
                        | Value::TimestampTz(_)
                        | Value::Interval(_)
                )
            };
            if temporal(a) || temporal(b) {
                return crate::datetime::arith(&s.text().clock, op, a, b, ty);
            }
            arith(op, a, b, ty)
        }
    }
}

/// SQL LIKE: `%` any run, `_` any one character, `escape` makes the next one literal.
/// For a `~` operator: (case-insensitive, negated).
fn regex_op(op: BinaryOp) -> Option<(bool, bool)> {
    match op {
        BinaryOp::RegexMatch => Some((false, false)),
        BinaryOp::RegexIMatch => Some((true, false)),
        BinaryOp::NotRegexMatch => Some((false, true)),
        BinaryOp::NotRegexIMatch => Some((true, true)),
        _ => None,
    }
}

thread_local! {
    /// Compiled patterns, case-sensitive ones first, by pattern: a scan matches one
    /// pattern against every row (looked up without allocating).
    static REGEXES: std::cell::RefCell<[std::collections::HashMap<String, regex::Regex>; 2]> =
        Default::default();
}

/// Whether `pattern` matches somewhere in `s`. Patterns are read by the `regex` crate,
/// whose syntax is PostgreSQL's for the common forms (classes, anchors, quantifiers,
/// alternation, groups); back-references and lookaround, which it lacks, are 2201B.
fn regex_matches(s: &str, pattern: &str, insensitive: bool) -> PgResult<bool> {
    REGEXES.with(|cache| {
        let cache = &mut cache.borrow_mut()[usize::from(insensitive)];
        if let Some(re) = cache.get(pattern) {
            return Ok(re.is_match(s));
        }
        let re = regex::RegexBuilder::new(pattern)
            .case_insensitive(insensitive)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| {
                let why = match e {
                    regex::Error::Syntax(m) => m.lines().last().unwrap_or_default().to_string(),
                    other => other.to_string(),
                };
                PgError::new(
                    SqlState::INVALID_REGULAR_EXPRESSION,
                    format!(
                        "invalid regular expression: {}",
                        why.trim_start_matches("error: ")
                    ),
                )
            })?;
        let matched = re.is_match(s);
        if cache.len() >= 64 {
            cache.clear();
        }
        cache.insert(pattern.to_string(), re);
        Ok(matched)
    })
}

fn like(s: &str, pattern: &str, escape: Option<char>) -> PgResult<bool> {
    enum Tok {
        Any,
        One,
        Lit(char),
    }
    let mut toks = Vec::new();
    let mut it = pattern.chars();
    while let Some(c) = it.next() {
        if Some(c) == escape {
            match it.next() {
                Some(n) => toks.push(Tok::Lit(n)),
                None => {
                    return Err(PgError::new(
                        SqlState::INVALID_ESCAPE_SEQUENCE,
                        "LIKE pattern must not end with escape character",
                    ));
                }
            }
        } else if c == '%' {
            toks.push(Tok::Any);
        } else if c == '_' {
            toks.push(Tok::One);
        } else {
            toks.push(Tok::Lit(c));
        }
    }
    let chars: Vec<char> = s.chars().collect();
    // Iterative matching with backtracking to the last `%` (linear in practice).
    let (mut si, mut pi) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < chars.len() {
        match toks.get(pi) {
            Some(Tok::Any) => {
                star = Some((pi, si));
                pi += 1;
            }
            Some(Tok::One) => {
                si += 1;
                pi += 1;
            }
            Some(Tok::Lit(c)) if *c == chars[si] => {
                si += 1;
                pi += 1;
            }
            _ => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return Ok(false),
            },
        }
    }
    Ok(toks[pi..].iter().all(|t| matches!(t, Tok::Any)))
}

fn eval_func(s: &Session, f: ScalarFunc, args: Vec<Value>, ty: &DataType) -> PgResult<Value> {
    if let Some(r) = crate::array::eval(s.text(), f, &args, ty) {
        return r;
    }
    if f == ScalarFunc::SetConfig {
        return crate::catalog_funcs::set_config(s, &args);
    }
    // Not strict: a NULL key routes too (to a DEFAULT or NULL partition).
    if f == ScalarFunc::PartitionOfRow {
        return partition_of_row(s, &args);
    }
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    match f {
        ScalarFunc::Now
        | ScalarFunc::CurrentTimestamp
        | ScalarFunc::TransactionTimestamp
        | ScalarFunc::StatementTimestamp
        | ScalarFunc::ClockTimestamp
        | ScalarFunc::CurrentDate
        | ScalarFunc::LocalTimestamp
        | ScalarFunc::DateTrunc
        | ScalarFunc::DatePart
        | ScalarFunc::Extract
        | ScalarFunc::Age
        | ScalarFunc::MakeDate
        | ScalarFunc::MakeTimestamp
        | ScalarFunc::MakeTimestampTz
        | ScalarFunc::MakeInterval
        | ScalarFunc::JustifyHours
        | ScalarFunc::JustifyDays
        | ScalarFunc::JustifyInterval
        | ScalarFunc::ToTimestamp
        | ScalarFunc::AtTimeZone => crate::datetime::eval_func(&s.text().clock, f, &args),
        ScalarFunc::NextVal | ScalarFunc::CurrVal | ScalarFunc::SetVal | ScalarFunc::LastVal => {
            crate::sequence::eval_func(s, f, &args)
        }
        // Taken by `crate::array::eval` above.
        ScalarFunc::ArrayCtor
        | ScalarFunc::Subscript
        | ScalarFunc::ArrayCompare { .. }
        | ScalarFunc::ArrayLength
        | ScalarFunc::ArrayUpper
        | ScalarFunc::ArrayLower
        | ScalarFunc::ArrayNdims
        | ScalarFunc::ArrayDims
        | ScalarFunc::Cardinality
        | ScalarFunc::ArrayToString
        | ScalarFunc::ArrayPosition
        | ScalarFunc::ArrayAppend
        | ScalarFunc::ArrayPrepend
        | ScalarFunc::ArrayCat
        | ScalarFunc::ArrayRemove
        | ScalarFunc::StringToArray
        | ScalarFunc::ArrayContains
        | ScalarFunc::ArrayContained
        | ScalarFunc::ArrayOverlap
        | ScalarFunc::FormatType => Err(PgError::internal(format!("{f:?} is an array function"))),
        ScalarFunc::PgColumnSize => Err(PgError::internal("pg_column_size is evaluated by ev")),
        ScalarFunc::PgGetExpr
        | ScalarFunc::PgGetIndexDef
        | ScalarFunc::PgGetConstraintDef
        | ScalarFunc::PgGetStatisticsObjDefColumns
        | ScalarFunc::PgRelationIsPublishable
        | ScalarFunc::PgPartitionAncestors
        | ScalarFunc::PgGetPartKeyDef
        | ScalarFunc::PgPartitionRoot
        | ScalarFunc::PartitionOfRow
        | ScalarFunc::PgPartitionTree
        | ScalarFunc::PartitionParent
        | ScalarFunc::PartitionIsLeaf
        | ScalarFunc::PartitionLevel
        | ScalarFunc::PgGetPartitionConstraintDef
        | ScalarFunc::PgGetTriggerDef
        | ScalarFunc::PgEncodingToChar
        | ScalarFunc::ColDescription
        | ScalarFunc::ObjDescription
        | ScalarFunc::ShobjDescription
        | ScalarFunc::QuoteIdent
        | ScalarFunc::CurrentSetting
        | ScalarFunc::SetConfig
        | ScalarFunc::PgTypeIsVisible
        | ScalarFunc::PgFunctionIsVisible
        | ScalarFunc::PgGetFunctionArguments
        | ScalarFunc::PgGetFunctionIdentityArguments
        | ScalarFunc::PgGetFunctionResult
        | ScalarFunc::PgRelationSize
        | ScalarFunc::PgTableSize
        | ScalarFunc::PgIndexesSize
        | ScalarFunc::PgTotalRelationSize
        | ScalarFunc::PgSizePretty => crate::catalog_funcs::eval(s, f, &args),
        ScalarFunc::PgGetUserById => Ok(match args.first().and_then(Value::as_i64) {
            None => Value::Null,
            Some(oid) if oid == i64::from(common::session::BOOTSTRAP_ROLE_OID) => {
                Value::Text(common::session::BOOTSTRAP_ROLE.into())
            }
            // PostgreSQL's predefined role that owns `public`.
            Some(6171) => Value::Text("pg_database_owner".into()),
            Some(oid) => Value::Text(format!("unknown (OID={oid})")),
        }),
        ScalarFunc::PgTableIsVisible => {
            let Some(oid) = args.first().and_then(Value::as_i64) else {
                return Ok(Value::Null);
            };
            let found = u32::try_from(oid).is_ok_and(|oid| s.catalog.relation_oid_exists(oid));
            Ok(if found {
                Value::Bool(true)
            } else {
                Value::Null
            })
        }
        ScalarFunc::Random => Ok(Value::Float8(rand::random::<f64>())),
        ScalarFunc::PgCancelBackend | ScalarFunc::PgTerminateBackend => signal_backend(f, &args, s),
        ScalarFunc::PgSleep => sleep(&args, s),
        ScalarFunc::PgStatForceNextFlush => Ok(Value::Text(String::new())),
        ScalarFunc::PgStatReset => {
            s.tx.manager().rel_stats().reset();
            Ok(Value::Text(String::new()))
        }
        ScalarFunc::PgStatResetSingleTableCounters => {
            // A table's or an index's counts (and its file's pages); NULL: none.
            if let Some(Value::Oid(oid) | Value::Reg(_, oid)) = args.first() {
                let catalog = &s.catalog;
                let file = catalog
                    .table_by_oid(*oid)
                    .map(|t| t.rel)
                    .or_else(|| catalog.index_by_oid(*oid).map(|(_, i)| i.rel));
                if let Some(file) = file {
                    s.tx.manager().rel_stats().reset_one(*oid, file);
                }
            }
            Ok(Value::Text(String::new()))
        }
        ScalarFunc::GenRandomUuid => {
            let mut u: [u8; 16] = rand::random();
            // RFC 4122 version 4, variant 10xx, as PostgreSQL's gen_random_uuid.
            u[6] = (u[6] & 0x0f) | 0x40;
            u[8] = (u[8] & 0x3f) | 0x80;
            Ok(Value::Uuid(u))
        }
        // The C collation: case mapping of ASCII letters only, as PostgreSQL does there.
        ScalarFunc::Lower => Ok(Value::Text(
            args[0].as_str().unwrap_or_default().to_ascii_lowercase(),
        )),
        ScalarFunc::Upper => Ok(Value::Text(
            args[0].as_str().unwrap_or_default().to_ascii_uppercase(),
        )),
        ScalarFunc::OctetLength | ScalarFunc::BitLength => {
            // char(n) counts its padding, which `as_str` leaves out.
            let bytes = match &args[0] {
                Value::Bpchar(s) => s.len(),
                other => other.as_str().unwrap_or_default().len(),
            } as i32;
            Ok(Value::Int4(if f == ScalarFunc::BitLength {
                bytes * 8
            } else {
                bytes
            }))
        }
        ScalarFunc::Length => Ok(Value::Int4(match &args[0] {
            Value::Bytea(b) => b.len() as i32,
            other => other.as_str().unwrap_or_default().chars().count() as i32,
        })),
        ScalarFunc::Abs
        | ScalarFunc::Round
        | ScalarFunc::Trunc
        | ScalarFunc::Ceil
        | ScalarFunc::Floor
        | ScalarFunc::Sign
        | ScalarFunc::Sqrt
        | ScalarFunc::Exp
        | ScalarFunc::Ln
        | ScalarFunc::Log
        | ScalarFunc::Power
        | ScalarFunc::Mod
        | ScalarFunc::Div
        | ScalarFunc::Scale => crate::math::eval_func(f, &args, ty),
        ScalarFunc::Repeat => {
            let s = args[0].as_str().unwrap_or_default();
            let count = usize::try_from(args[1].as_i64().unwrap_or(0)).unwrap_or(0);
            // PostgreSQL's limit on a value's size (MaxAllocSize less its header).
            const MAX_BYTES: usize = 0x3fff_ffff - 4;
            if s.len().checked_mul(count).is_none_or(|n| n > MAX_BYTES) {
                return Err(PgError::new(
                    SqlState::PROGRAM_LIMIT_EXCEEDED,
                    "requested length too large",
                ));
            }
            Ok(Value::Text(s.repeat(count)))
        }
        ScalarFunc::Substr => {
            let s = args[0].as_str().unwrap_or_default();
            let start = args[1].as_i64().unwrap_or(1);
            let end = match args.get(2) {
                None => i64::MAX,
                Some(l) => {
                    let len = l.as_i64().unwrap_or(0);
                    if len < 0 {
                        return Err(PgError::new(
                            SqlState::SUBSTRING_ERROR,
                            "negative substring length not allowed",
                        ));
                    }
                    start.saturating_add(len)
                }
            };
            let from = start.max(1);
            if end <= from {
                return Ok(Value::Text(String::new()));
            }
            let out: String = s
                .chars()
                .skip((from - 1) as usize)
                .take(usize::try_from(end - from).unwrap_or(usize::MAX))
                .collect();
            Ok(Value::Text(out))
        }
    }
}

/// `tableoid` of a partitioned table's row (`args`: the table's OID, then its columns,
/// those no level's key reads NULL): the leaf its key routes to, level by level.
fn partition_of_row(s: &Session, args: &[Value]) -> PgResult<Value> {
    let catalog = &s.catalog;
    let oid = match args.first() {
        Some(Value::Oid(o)) => *o,
        _ => return Ok(Value::Null),
    };
    let row = args.get(1..).unwrap_or(&[]);
    let mut t = catalog.table_by_oid(oid);
    while let Some(table) = t
        && let Some(key) = &table.partition_key
    {
        // The key expressions bound for each row: the binder passes the columns every
        // level's key reads, so they evaluate over them.
        let exprs = sql::binder::bind_partition_key_exprs(catalog, table, s.info)?;
        let values = partition_key_values(s, key, &exprs, row)?;
        t = catalog
            .partitions(table.oid)
            .and_then(|p| p.route(key.strategy, &values))
            .and_then(|o| catalog.table_by_oid(o));
    }
    Ok(match t {
        Some(leaf) => Value::Oid(leaf.oid),
        None => Value::Null,
    })
}

/// `pg_cancel_backend(pid)`, `pg_terminate_backend(pid [, timeout])`: false if there is
/// no such session (PostgreSQL warns too). A termination with a timeout waits, up to it,
/// for the session to go, as PostgreSQL 14+ does.
/// `pg_sleep(seconds)`: wait, a short step at a time so that a cancel, a terminate or
/// statement_timeout stops it (57014) as they stop any long loop. NULL in, NULL out
/// (the function is strict); else the one void value.
fn sleep(args: &[Value], s: &Session) -> PgResult<Value> {
    let Some(Value::Float8(seconds)) = args.first() else {
        return Ok(Value::Null);
    };
    let until = std::time::Instant::now()
        + std::time::Duration::try_from_secs_f64(seconds.max(0.0))
            .unwrap_or(std::time::Duration::MAX / 2);
    loop {
        s.tx.check_statement_timeout()?;
        let now = std::time::Instant::now();
        if now >= until {
            return Ok(Value::Text(String::new()));
        }
        std::thread::sleep((until - now).min(std::time::Duration::from_millis(10)));
    }
}

fn signal_backend(f: ScalarFunc, args: &[Value], s: &Session) -> PgResult<Value> {
    use txn::activity::Signal;
    let Some(pid) = args.first().and_then(Value::as_i64) else {
        return Ok(Value::Null);
    };
    let timeout = args.get(1).and_then(Value::as_i64).unwrap_or(0);
    if timeout < 0 {
        return Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "\"timeout\" must not be negative",
        ));
    }
    let signal = match f {
        ScalarFunc::PgCancelBackend => Signal::Cancel,
        _ => Signal::Terminate,
    };
    let manager = s.tx.manager();
    let signaled = u32::try_from(pid).is_ok_and(|pid| manager.signal_backend(pid, signal, None));
    if !signaled {
        s.notices.borrow_mut().push(PgError::warning(
            SqlState::WARNING,
            format!("PID {pid} is not a PostgreSQL backend process"),
        ));
        return Ok(Value::Bool(false));
    }
    let pid = pid as u32;
    if signal == Signal::Terminate && timeout > 0 && pid != s.info.backend_pid {
        let until = std::time::Instant::now() + std::time::Duration::from_millis(timeout as u64);
        let gone = || !manager.activity().sessions().iter().any(|b| b.pid() == pid);
        while !gone() {
            if std::time::Instant::now() >= until {
                return Ok(Value::Bool(false));
            }
            s.tx.check_statement_timeout()?;
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    Ok(Value::Bool(true))
}

/// The values of partition key `key` for `row` (its table's columns), its expressions
/// bound in `exprs`.
pub(crate) fn partition_key_values(
    s: &Session,
    key: &catalog::partition::PartitionKey,
    exprs: &[Expr],
    row: &[Value],
) -> PgResult<Vec<Value>> {
    key.columns
        .iter()
        .map(|&c| match catalog::partition::PartitionKey::expression(c) {
            Some(k) => match exprs.get(k) {
                Some(e) => eval(e, row, s),
                None => Err(PgError::internal(format!(
                    "partition key expression {k} is not bound"
                ))),
            },
            None => Ok(row.get(c).cloned().unwrap_or(Value::Null)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::value::TextContext;

    #[test]
    fn like_patterns() {
        assert!(like("hello", "h%o", Some('\\')).unwrap());
        assert!(like("hello", "_ello", Some('\\')).unwrap());
        assert!(!like("hello", "h_o", Some('\\')).unwrap());
        assert!(like("50%", "50\\%", Some('\\')).unwrap());
        assert!(!like("50x", "50\\%", Some('\\')).unwrap());
        assert!(like("", "%", Some('\\')).unwrap());
        assert!(like("abcabc", "%abc", Some('\\')).unwrap());
        assert!(like("a%b", "a%%b", None).unwrap());
        assert!(like("x", "x\\", Some('\\')).is_err());
    }

    #[test]
    fn integer_overflow_and_division() {
        let e = arith(
            BinaryOp::Add,
            &Value::Int4(i32::MAX),
            &Value::Int4(1),
            &DataType::Int4,
        )
        .unwrap_err();
        assert_eq!(e.message, "integer out of range");
        let e = arith(
            BinaryOp::Div,
            &Value::Int8(1),
            &Value::Int8(0),
            &DataType::Int8,
        )
        .unwrap_err();
        assert_eq!(e.code, SqlState::DIVISION_BY_ZERO);
        assert_eq!(
            arith(
                BinaryOp::Div,
                &Value::Int4(-7),
                &Value::Int4(2),
                &DataType::Int4
            )
            .unwrap(),
            Value::Int4(-3)
        );
        assert_eq!(
            arith(
                BinaryOp::Mod,
                &Value::Int4(i32::MIN),
                &Value::Int4(-1),
                &DataType::Int4
            )
            .unwrap(),
            Value::Int4(0)
        );
    }

    #[test]
    fn casts() {
        assert_eq!(
            cast_value(
                Value::Float8(2.5),
                &DataType::Int4,
                true,
                &TextContext::detached()
            )
            .unwrap(),
            Value::Int4(2)
        );
        assert_eq!(
            cast_value(
                Value::Float8(3.5),
                &DataType::Int4,
                true,
                &TextContext::detached()
            )
            .unwrap(),
            Value::Int4(4)
        );
        assert_eq!(
            cast_value(
                Value::Bool(true),
                &DataType::Text,
                true,
                &TextContext::detached()
            )
            .unwrap(),
            Value::Text("true".into())
        );
        assert_eq!(
            cast_value(
                Value::Bpchar("ab  ".into()),
                &DataType::Text,
                false,
                &TextContext::detached()
            )
            .unwrap(),
            Value::Text("ab".into())
        );
        assert!(
            cast_value(
                Value::Int4(70000),
                &DataType::Int2,
                true,
                &TextContext::detached()
            )
            .is_err()
        );
    }
}
