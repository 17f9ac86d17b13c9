//! Binding the catalog functions psql and drivers call (`pg_get_indexdef`,
//! `obj_description`, `quote_ident`, ...): each has a fixed signature, and an argument of
//! another type makes the call an undefined function (42883), as in PostgreSQL, whose
//! implicit casts are the only ones applied.

use common::DataType;

use super::coerce::CastContext;
use super::expr::{is_oid_like, undefined_function};
use crate::bound::{Expr, ExprKind, ScalarFunc};
use common::PgResult;

/// An argument's type in a catalog function's signature.
#[derive(Clone, Copy)]
enum Arg {
    /// oid (or a reg* type, or an integer, as PostgreSQL's implicit casts allow).
    Oid,
    Int4,
    Text,
    Bool,
    /// regclass: an untyped literal is a relation's name, as PostgreSQL reads it.
    RegClass,
    /// A size in bytes: bigint, or numeric (`pg_size_pretty(numeric)`, over a sum of
    /// sizes), read as bigint.
    Bytes,
}

/// `name`'s function and result type, and its arguments' types, for `n` arguments.
fn signature(name: &str, n: usize) -> Option<(ScalarFunc, DataType, &'static [Arg])> {
    use Arg::*;
    use ScalarFunc as F;
    Some(match (name, n) {
        ("pg_get_userbyid", 1) => (F::PgGetUserById, DataType::Text, &[Oid]),
        ("pg_table_is_visible", 1) => (F::PgTableIsVisible, DataType::Bool, &[Oid]),
        ("pg_type_is_visible", 1) => (F::PgTypeIsVisible, DataType::Bool, &[Oid]),
        ("pg_function_is_visible", 1) => (F::PgFunctionIsVisible, DataType::Bool, &[Oid]),
        ("pg_get_function_arguments", 1) => (F::PgGetFunctionArguments, DataType::Text, &[Oid]),
        ("pg_get_function_identity_arguments", 1) => {
            (F::PgGetFunctionIdentityArguments, DataType::Text, &[Oid])
        }
        ("pg_get_function_result", 1) => (F::PgGetFunctionResult, DataType::Text, &[Oid]),
        // pg_get_expr's first argument is the kept expression (pg_node_tree).
        ("pg_get_expr", 2) => (F::PgGetExpr, DataType::Text, &[Text, Oid]),
        ("pg_get_expr", 3) => (F::PgGetExpr, DataType::Text, &[Text, Oid, Bool]),
        ("pg_get_indexdef", 1) => (F::PgGetIndexDef, DataType::Text, &[Oid]),
        ("pg_get_partkeydef", 1) => (F::PgGetPartKeyDef, DataType::Text, &[Oid]),
        ("pg_get_partition_constraintdef", 1) => {
            (F::PgGetPartitionConstraintDef, DataType::Text, &[Oid])
        }
        ("pg_partition_root", 1) => (
            F::PgPartitionRoot,
            DataType::Reg(common::value::RegKind::Class),
            &[RegClass],
        ),
        ("pg_get_indexdef", 3) => (F::PgGetIndexDef, DataType::Text, &[Oid, Int4, Bool]),
        ("pg_get_constraintdef", 1) => (F::PgGetConstraintDef, DataType::Text, &[Oid]),
        ("pg_get_constraintdef", 2) => (F::PgGetConstraintDef, DataType::Text, &[Oid, Bool]),
        ("pg_get_triggerdef", 1) => (F::PgGetTriggerDef, DataType::Text, &[Oid]),
        ("pg_get_triggerdef", 2) => (F::PgGetTriggerDef, DataType::Text, &[Oid, Bool]),
        ("pg_get_statisticsobjdef_columns", 1) => {
            (F::PgGetStatisticsObjDefColumns, DataType::Text, &[Oid])
        }
        ("pg_relation_is_publishable", 1) => (F::PgRelationIsPublishable, DataType::Bool, &[Oid]),
        ("pg_relation_size", 1) => (F::PgRelationSize, DataType::Int8, &[RegClass]),
        ("pg_table_size", 1) => (F::PgTableSize, DataType::Int8, &[RegClass]),
        ("pg_indexes_size", 1) => (F::PgIndexesSize, DataType::Int8, &[RegClass]),
        ("pg_total_relation_size", 1) => (F::PgTotalRelationSize, DataType::Int8, &[RegClass]),
        ("pg_size_pretty", 1) => (F::PgSizePretty, DataType::Text, &[Bytes]),
        ("pg_encoding_to_char", 1) => (F::PgEncodingToChar, DataType::Text, &[Int4]),
        ("col_description", 2) => (F::ColDescription, DataType::Text, &[Oid, Int4]),
        ("obj_description", 1) => (F::ObjDescription, DataType::Text, &[Oid]),
        ("obj_description", 2) => (F::ObjDescription, DataType::Text, &[Oid, Text]),
        ("shobj_description", 2) => (F::ShobjDescription, DataType::Text, &[Oid, Text]),
        ("quote_ident", 1) => (F::QuoteIdent, DataType::Text, &[Text]),
        ("current_setting", 1) => (F::CurrentSetting, DataType::Text, &[Text]),
        ("current_setting", 2) => (F::CurrentSetting, DataType::Text, &[Text, Bool]),
        ("set_config", 3) => (F::SetConfig, DataType::Text, &[Text, Text, Bool]),
        _ => return None,
    })
}

/// A call of a catalog function, or None when `name` is not one of them.
pub(crate) fn bind_function(
    b: &super::Binder<'_>,
    name: &str,
    args: Vec<Expr>,
) -> Option<PgResult<Expr>> {
    let (f, ty, sig) = signature(name, args.len())?;
    Some(bind_call(b, name, f, ty, sig, args))
}

fn bind_call(
    b: &super::Binder<'_>,
    name: &str,
    f: ScalarFunc,
    ty: DataType,
    sig: &[Arg],
    args: Vec<Expr>,
) -> PgResult<Expr> {
    let mut out = Vec::with_capacity(args.len());
    for (a, want) in args.iter().zip(sig) {
        let unknown = a.ty == DataType::Unknown;
        let (ok, to) = match want {
            Arg::Oid => (
                unknown || a.ty.is_integer() || is_oid_like(&a.ty),
                DataType::Oid,
            ),
            Arg::Int4 => (
                unknown || matches!(a.ty, DataType::Int2 | DataType::Int4),
                DataType::Int4,
            ),
            Arg::Bytes if matches!(a.ty, DataType::Numeric(_)) => {
                out.push(b.coerce(a.clone(), &DataType::Int8, CastContext::Explicit)?);
                continue;
            }
            Arg::Bytes => (
                unknown || matches!(a.ty, DataType::Int2 | DataType::Int4 | DataType::Int8),
                DataType::Int8,
            ),
            Arg::Text => (unknown || a.ty.is_string(), DataType::Text),
            Arg::Bool => (unknown || a.ty == DataType::Bool, DataType::Bool),
            Arg::RegClass => (
                unknown || a.ty.is_integer() || is_oid_like(&a.ty),
                DataType::Reg(common::value::RegKind::Class),
            ),
        };
        if !ok {
            return Err(undefined_function(name, &args));
        }
        let mut e = b.coerce(a.clone(), &to, CastContext::Implicit)?;
        if matches!(want, Arg::RegClass) {
            e = b.coerce(e, &DataType::Oid, CastContext::Implicit)?;
        }
        out.push(e);
    }
    Ok(Expr::new(ExprKind::Func(f, out), ty))
}
