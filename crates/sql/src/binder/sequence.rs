//! Binding sequences: CREATE SEQUENCE, DROP SEQUENCE, SERIAL columns' options, and the
//! sequence functions (`nextval`, `currval`, `setval`, `lastval`).

use std::sync::Arc;

use catalog::{SequenceDesc, SequenceOptions};
use common::{DataType, PgError, PgResult, SqlState, Value};
use sqlparser::ast;

use super::coerce::CastContext;
use super::expr::ExprContext;
use super::{Binder, ident_name};
use crate::bound::{BoundStatement, Expr, ExprKind, ScalarFunc, SequenceDdl, SequenceDrop};

fn invalid(msg: String) -> PgError {
    PgError::new(SqlState::INVALID_PARAMETER_VALUE, msg)
}

/// The value of a sequence option: an integer literal, maybe negated.
fn option_value(e: &ast::Expr) -> PgResult<i64> {
    let bad = || PgError::syntax(format!("syntax error at or near \"{e}\""));
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse::<i64>().map_err(|_| {
                PgError::new(
                    SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                    format!("value \"{n}\" is out of range for type bigint"),
                )
            }),
            _ => Err(bad()),
        },
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => option_value(expr)?
            .checked_neg()
            .ok_or_else(|| invalid(format!("value \"{e}\" is out of range for type bigint"))),
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Plus,
            expr,
        } => option_value(expr),
        _ => Err(bad()),
    }
}

/// A sequence's options from CREATE SEQUENCE's clauses (or a SERIAL column's type), with
/// PostgreSQL's defaults and checks (`init_params`).
pub(crate) fn sequence_options(
    ty: Option<DataType>,
    opts: &[ast::SequenceOptions],
) -> PgResult<SequenceOptions> {
    resolve_options(None, ty, opts)
}

/// `init_params`: the options `opts` give on top of `old` (ALTER SEQUENCE) or of the
/// defaults (CREATE), checked.
fn resolve_options(
    old: Option<&SequenceOptions>,
    ty: Option<DataType>,
    opts: &[ast::SequenceOptions],
) -> PgResult<SequenceOptions> {
    let ty = ty.or(old.map(|o| o.ty)).unwrap_or(DataType::Int8);
    let (type_min, type_max) = match ty {
        DataType::Int2 => (i16::MIN as i64, i16::MAX as i64),
        DataType::Int4 => (i32::MIN as i64, i32::MAX as i64),
        DataType::Int8 => (i64::MIN, i64::MAX),
        _ => {
            return Err(invalid(
                "sequence type must be smallint, integer, or bigint".into(),
            ));
        }
    };
    // For each bound: not mentioned (None), NO MINVALUE / NO MAXVALUE (Some(None)), a value.
    let (mut increment, mut min, mut max, mut start, mut cache, mut cycle) =
        (None, None, None, None, None, None);
    let mut seen = Vec::with_capacity(opts.len());
    for o in opts {
        let kind = std::mem::discriminant(o);
        if seen.contains(&kind) {
            return Err(PgError::syntax("conflicting or redundant options"));
        }
        seen.push(kind);
        match o {
            ast::SequenceOptions::IncrementBy(e, _) => increment = Some(option_value(e)?),
            ast::SequenceOptions::MinValue(e) => {
                min = Some(e.as_ref().map(option_value).transpose()?)
            }
            ast::SequenceOptions::MaxValue(e) => {
                max = Some(e.as_ref().map(option_value).transpose()?)
            }
            ast::SequenceOptions::StartWith(e, _) => start = Some(option_value(e)?),
            ast::SequenceOptions::Cache(e) => cache = Some(option_value(e)?),
            // sqlparser's flag is true for NO CYCLE.
            ast::SequenceOptions::Cycle(no) => cycle = Some(!no),
        }
    }
    let increment = increment.or(old.map(|o| o.increment)).unwrap_or(1);
    if increment == 0 {
        return Err(invalid("INCREMENT must not be zero".into()));
    }
    let type_name = ty.name();
    let defaults = SequenceOptions::defaults(ty, increment);
    // An old bound at its old type's default follows a change of type (PostgreSQL's rule).
    let old_defaults = old.map(|o| SequenceOptions::defaults(o.ty, o.increment));
    let type_changed = old.is_some_and(|o| o.ty != ty);
    let keep =
        |given: Option<Option<i64>>, old_v: Option<i64>, old_default: Option<i64>, default: i64| {
            match given {
                Some(Some(v)) => v,
                Some(None) => default,
                None => match old_v {
                    Some(v) if !(type_changed && Some(v) == old_default) => v,
                    _ => default,
                },
            }
        };
    let in_type = |what: &str, v: i64| {
        if (type_min..=type_max).contains(&v) {
            Ok(v)
        } else {
            Err(invalid(format!(
                "{what} ({v}) is out of range for sequence data type {type_name}"
            )))
        }
    };
    let max = in_type(
        "MAXVALUE",
        keep(
            max,
            old.map(|o| o.max),
            old_defaults.map(|d| d.max),
            defaults.max,
        ),
    )?;
    let min = in_type(
        "MINVALUE",
        keep(
            min,
            old.map(|o| o.min),
            old_defaults.map(|d| d.min),
            defaults.min,
        ),
    )?;
    if min >= max {
        return Err(invalid(format!(
            "MINVALUE ({min}) must be less than MAXVALUE ({max})"
        )));
    }
    let start = start
        .or(old.map(|o| o.start))
        .unwrap_or(if increment > 0 { min } else { max });
    if start < min {
        return Err(invalid(format!(
            "START value ({start}) cannot be less than MINVALUE ({min})"
        )));
    }
    if start > max {
        return Err(invalid(format!(
            "START value ({start}) cannot be greater than MAXVALUE ({max})"
        )));
    }
    let cache = cache.or(old.map(|o| o.cache)).unwrap_or(1);
    let cycle = cycle.or(old.map(|o| o.cycle)).unwrap_or(false);
    if cache <= 0 {
        return Err(invalid(format!(
            "CACHE ({cache}) must be greater than zero"
        )));
    }
    Ok(SequenceOptions {
        ty,
        start,
        increment,
        min,
        max,
        cache,
        cycle,
    })
}

/// The columns `SELECT * FROM seq` shows, as a table for the binder's scope.
pub(crate) fn sequence_table(s: &SequenceDesc) -> Arc<catalog::TableDesc> {
    let col = |name: &str, ty: common::DataType| catalog::ColumnDesc {
        not_null: true,
        ..catalog::ColumnDesc::new(name, ty)
    };
    Arc::new(catalog::TableDesc {
        oid: s.oid,
        rel: s.rel,
        name: s.name.clone(),
        columns: vec![
            col("last_value", DataType::Int8),
            col("log_cnt", DataType::Int8),
            col("is_called", DataType::Bool),
        ]
        .into(),
        ..Default::default()
    })
}

/// A sequence's value (RESTART's, or its current one under ALTER) within its bounds.
pub fn check_restart(v: i64, o: &SequenceOptions) -> PgResult<()> {
    if v < o.min {
        return Err(invalid(format!(
            "RESTART value ({v}) cannot be less than MINVALUE ({})",
            o.min
        )));
    }
    if v > o.max {
        return Err(invalid(format!(
            "RESTART value ({v}) cannot be greater than MAXVALUE ({})",
            o.max
        )));
    }
    Ok(())
}

/// The type a SERIAL pseudo-type stands for, if `name` is one.
pub(crate) fn serial_type(name: &str) -> Option<DataType> {
    match name {
        "smallserial" | "serial2" => Some(DataType::Int2),
        "serial" | "serial4" => Some(DataType::Int4),
        "bigserial" | "serial8" => Some(DataType::Int8),
        _ => None,
    }
}

impl Binder<'_> {
    pub(crate) fn bind_create_sequence(
        &self,
        temporary: bool,
        if_not_exists: bool,
        name: &ast::ObjectName,
        data_type: Option<&ast::DataType>,
        opts: &[ast::SequenceOptions],
        owned_by: Option<&ast::ObjectName>,
    ) -> PgResult<BoundStatement> {
        if temporary {
            return Err(PgError::unsupported("CREATE TEMPORARY SEQUENCE"));
        }
        let (name, _) = self.object_name(name)?;
        if self.catalog.relation_exists(&name) {
            if if_not_exists {
                return Ok(BoundStatement::Nothing {
                    tag: "CREATE SEQUENCE",
                    notices: vec![super::ddl::already_exists_skipping(&name)],
                });
            }
            return Err(PgError::new(
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{name}\" already exists"),
            ));
        }
        let ty = data_type.map(|t| self.bind_type(t)).transpose()?;
        let options = sequence_options(ty, opts)?;
        let owned_by = match owned_by {
            None => None,
            Some(o) => self.owned_by(o)?,
        };
        Ok(BoundStatement::Sequence(SequenceDdl::Create {
            name,
            options,
            owned_by,
        }))
    }

    /// ALTER SEQUENCE: the new options (checked as CREATE checks them), the owner, and
    /// RESTART's value (checked against the new bounds; the current value is checked when
    /// the statement runs).
    pub(crate) fn bind_alter_sequence(
        &self,
        a: &crate::parser::AlterSequence,
    ) -> PgResult<BoundStatement> {
        let (name, _) = self.object_name(&a.name)?;
        let Some(seq) = self.catalog.sequence(&name).cloned() else {
            if self.catalog.relation_exists(&name) {
                return Err(PgError::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    format!("\"{name}\" is not a sequence"),
                ));
            }
            return super::alter::missing_relation(&name, a.if_exists, "ALTER SEQUENCE");
        };
        if let Some(u) = &a.unsupported {
            return Err(PgError::unsupported(format!(
                "ALTER SEQUENCE ... {}",
                u.split_whitespace()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ")
                    .to_uppercase()
            )));
        }
        let ty = a
            .data_type
            .as_ref()
            .map(|t| self.bind_type(t))
            .transpose()?;
        let options = resolve_options(Some(&seq.options), ty, &a.options)?;
        let owned_by = match &a.owned_by {
            None => seq.owned_by,
            Some(o) => self.owned_by(o)?,
        };
        let restart = match &a.restart {
            None => None,
            Some(v) => {
                let v = v
                    .as_ref()
                    .map(option_value)
                    .transpose()?
                    .unwrap_or(options.start);
                check_restart(v, &options)?;
                Some(v)
            }
        };
        Ok(BoundStatement::Sequence(SequenceDdl::Alter {
            seq,
            options,
            owned_by,
            restart,
        }))
    }

    /// `OWNED BY table.column | NONE`.
    fn owned_by(&self, o: &ast::ObjectName) -> PgResult<Option<(common::Oid, usize)>> {
        let parts: Vec<String> =
            o.0.iter()
                .map(|p| match p {
                    ast::ObjectNamePart::Identifier(id) => Ok(ident_name(id)),
                    _ => Err(PgError::unsupported(format!("OWNED BY {o}"))),
                })
                .collect::<PgResult<_>>()?;
        let (table, column) = match parts.as_slice() {
            [none] if none == "none" => return Ok(None),
            [t, c] => (t, c),
            [s, t, c] if s == "public" => (t, c),
            _ => {
                return Err(PgError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    "invalid OWNED BY option",
                )
                .with_hint("Specify OWNED BY table.column or OWNED BY NONE."));
            }
        };
        let t = self.catalog.table(table).ok_or_else(|| {
            PgError::new(
                SqlState::UNDEFINED_TABLE,
                format!("relation \"{table}\" does not exist"),
            )
        })?;
        let c = t
            .columns
            .iter()
            .position(|c| &c.name == column)
            .ok_or_else(|| {
                PgError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{column}\" of relation \"{table}\" does not exist"),
                )
            })?;
        Ok(Some((t.oid, c)))
    }

    /// DROP SEQUENCE [IF EXISTS] name, ... [CASCADE | RESTRICT]. A SERIAL column's
    /// DEFAULT depends on its sequence: RESTRICT refuses, CASCADE drops the DEFAULT.
    pub(crate) fn bind_drop_sequences(
        &self,
        if_exists: bool,
        names: &[ast::ObjectName],
        cascade: bool,
    ) -> PgResult<BoundStatement> {
        let mut sequences: Vec<SequenceDrop> = Vec::new();
        let mut notices = Vec::new();
        for n in names {
            let (name, pos) = self.object_name(n)?;
            let Some(seq) = self.catalog.sequence(&name) else {
                if self.catalog.table(&name).is_some() {
                    return Err(PgError::new(
                        SqlState::WRONG_OBJECT_TYPE,
                        format!("\"{name}\" is not a sequence"),
                    )
                    .with_hint("Use DROP TABLE to remove a table."));
                }
                if if_exists {
                    notices.push(PgError::notice(format!(
                        "sequence \"{name}\" does not exist, skipping"
                    )));
                    continue;
                }
                return Err(PgError::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("sequence \"{name}\" does not exist"),
                )
                .with_position(pos));
            };
            if sequences.iter().any(|d| d.sequence.oid == seq.oid) {
                continue;
            }
            // An identity column's sequence is part of the column: not even CASCADE drops it.
            if let Some((t, c)) = seq.owned_by
                && let Some(t) = self.catalog.table_by_oid(t)
                && let Some(c) = t.columns.get(c).filter(|c| c.identity.is_some())
            {
                return Err(PgError::new(
                    SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!(
                        "cannot drop sequence {name} because column {} of table {} requires it",
                        c.name, t.name
                    ),
                )
                .with_hint(format!(
                    "You can drop column {} of table {} instead.",
                    c.name, t.name
                )));
            }
            let defaults = self.defaults_using(seq);
            if !defaults.is_empty() {
                if !cascade {
                    let lines: Vec<String> = defaults
                        .iter()
                        .map(|(t, c)| {
                            format!(
                                "default value for column {c} of table {t} depends on sequence {name}"
                            )
                        })
                        .collect();
                    return Err(PgError::new(
                        SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                        format!("cannot drop sequence {name} because other objects depend on it"),
                    )
                    .with_detail(lines.join("\n"))
                    .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
                }
                // PostgreSQL names one dependent in the message, several in the detail.
                let lines: Vec<String> = defaults
                    .iter()
                    .map(|(t, c)| format!("default value for column {c} of table {t}"))
                    .collect();
                notices.push(super::alter::cascade_notice(&lines));
            }
            let defaults = defaults
                .iter()
                .filter_map(|(t, c)| {
                    let t = self.catalog.table(t)?;
                    Some((t.oid, t.column_index(c)?))
                })
                .collect();
            sequences.push(SequenceDrop {
                sequence: seq.clone(),
                defaults,
            });
        }
        Ok(BoundStatement::Sequence(SequenceDdl::Drop {
            sequences,
            notices,
        }))
    }

    /// The column DEFAULTs that call a function of `seq` (a SERIAL column's, or any
    /// written by hand), as (table, column) names: PostgreSQL's dependencies of a DEFAULT
    /// on the sequences it names. Found by binding the DEFAULTs that mention one of the
    /// sequence functions: DROP SEQUENCE pays for a pass over the catalog, nothing else
    /// does.
    fn defaults_using(&self, seq: &SequenceDesc) -> Vec<(String, String)> {
        let mut found = Vec::new();
        let mut tables: Vec<_> = self.catalog.tables().collect();
        tables.sort_by_key(|t| t.oid);
        for t in tables {
            for c in t.columns.iter() {
                let Some(text) = &c.default else {
                    continue;
                };
                if !text.contains("val(") {
                    continue;
                }
                let Ok(e) = self.default_value(c) else {
                    continue;
                };
                let mut uses = false;
                e.walk(&mut |x| {
                    if let ExprKind::Func(
                        ScalarFunc::NextVal | ScalarFunc::CurrVal | ScalarFunc::SetVal,
                        args,
                    ) = &x.kind
                        && let Some(first) = args.first()
                        && first.kind == ExprKind::Const(Value::Int8(i64::from(seq.oid)))
                    {
                        uses = true;
                    }
                });
                if uses {
                    found.push((t.name.clone(), c.name.clone()));
                }
            }
        }
        found
    }

    /// `nextval`, `currval`, `setval`, `lastval`, or `None` for any other function. The
    /// sequence argument must be a constant (`'name'` or `'name'::regclass`), resolved
    /// here as PostgreSQL resolves a `regclass` constant when it parses the call.
    pub(crate) fn bind_sequence_function(
        &self,
        name: &str,
        args: &[&ast::FunctionArg],
        cx: &ExprContext,
    ) -> Option<PgResult<Expr>> {
        let func = match name {
            "nextval" => ScalarFunc::NextVal,
            "currval" => ScalarFunc::CurrVal,
            "setval" => ScalarFunc::SetVal,
            "lastval" => ScalarFunc::LastVal,
            _ => return None,
        };
        Some(self.bind_sequence_call(name, func, args, cx))
    }

    fn bind_sequence_call(
        &self,
        name: &str,
        func: ScalarFunc,
        args: &[&ast::FunctionArg],
        cx: &ExprContext,
    ) -> PgResult<Expr> {
        let exprs: Vec<&ast::Expr> = args
            .iter()
            .map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => Ok(x),
                _ => Err(PgError::unsupported(format!("function argument {a}"))),
            })
            .collect::<PgResult<_>>()?;
        let arity_ok = match func {
            ScalarFunc::LastVal => exprs.is_empty(),
            ScalarFunc::SetVal => exprs.len() == 2 || exprs.len() == 3,
            _ => exprs.len() == 1,
        };
        if !arity_ok {
            let mut bound = Vec::with_capacity(exprs.len());
            for x in &exprs {
                bound.push(self.bind_expr(x, cx)?);
            }
            return Err(super::expr::undefined_function(name, &bound));
        }
        let mut out = Vec::with_capacity(exprs.len());
        if let Some(first) = exprs.first() {
            out.push(self.sequence_argument(first, cx)?);
        }
        if let Some(value) = exprs.get(1) {
            let v = self.bind_expr(value, cx)?;
            out.push(self.coerce(v, &DataType::Int8, CastContext::Implicit)?);
        }
        if let Some(called) = exprs.get(2) {
            let v = self.bind_expr(called, cx)?;
            out.push(self.coerce(v, &DataType::Bool, CastContext::Implicit)?);
        }
        Ok(Expr::new(ExprKind::Func(func, out), DataType::Int8))
    }

    /// The sequence a `regclass` argument names, as an int8 constant holding its OID
    /// (NULL stays NULL: the functions are strict).
    fn sequence_argument(&self, e: &ast::Expr, cx: &ExprContext) -> PgResult<Expr> {
        let literal = match e {
            ast::Expr::Cast {
                expr,
                data_type: ast::DataType::Regclass | ast::DataType::Text,
                format: None,
                ..
            } => expr.as_ref(),
            other => other,
        };
        let (text, span) = match literal {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::SingleQuotedString(s) => (s.clone(), v.span),
                ast::Value::Null => {
                    return Ok(Expr::new(ExprKind::Const(Value::Null), DataType::Int8));
                }
                _ => {
                    let bound = self.bind_expr(e, cx)?;
                    return Err(super::expr::undefined_function("nextval", &[bound]));
                }
            },
            _ => {
                return Err(PgError::unsupported(
                    "a sequence function whose sequence is not a constant",
                ));
            }
        };
        let seq = self.regclass_sequence(&text, self.position(&span))?;
        Ok(Expr::new(
            ExprKind::Const(Value::Int8(seq.oid as i64)),
            DataType::Int8,
        ))
    }

    /// Resolve `'name'` as a `regclass` naming a sequence: identifier rules (unquoted
    /// folds to lower case, `"..."` keeps case), optionally qualified by `public`.
    fn regclass_sequence(&self, text: &str, pos: Option<u32>) -> PgResult<Arc<SequenceDesc>> {
        let parts = common::ids::split_qualified(text).ok_or_else(|| {
            PgError::new(SqlState::INVALID_NAME, "invalid name syntax").with_position(pos)
        })?;
        let name = match parts.as_slice() {
            [n] => n.clone(),
            [s, n] if s == "public" || s == "pg_catalog" => n.clone(),
            [s, _] => {
                return Err(PgError::new(
                    SqlState::INVALID_SCHEMA_NAME,
                    format!("schema \"{s}\" does not exist"),
                )
                .with_position(pos));
            }
            _ => {
                return Err(PgError::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("relation \"{text}\" does not exist"),
                )
                .with_position(pos));
            }
        };
        if let Some(s) = self.catalog.sequence(&name) {
            return Ok(s.clone());
        }
        if self.catalog.relation_exists(&name) {
            return Err(PgError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("\"{name}\" is not a sequence"),
            ));
        }
        Err(PgError::new(
            SqlState::UNDEFINED_TABLE,
            format!("relation \"{name}\" does not exist"),
        )
        .with_position(pos))
    }
}
