//! The rows of the pg_catalog views psql's `\d` reads beside pg_class: defaults,
//! constraints, collations, roles, and the catalogs of features Myriad does not have yet
//! (inheritance, policies, extended statistics, publications), which are empty.

use std::sync::Arc;

use catalog::{FkAction, SystemView, TableDesc};
use common::array::Array;
use common::{DataType, Value};

use crate::catalog_funcs::{PG_CATALOG_OID, PUBLIC_OID};
use crate::eval::Row;

/// The rows of `view`, one of this module's.
pub(crate) fn rows(view: SystemView) -> Vec<Row> {
    match view {
        SystemView::PgAttrdef => crate::exec::rows_per_table(|t, out| {
            for (i, c) in t.columns.iter().enumerate() {
                // An identity column's values come from its sequence, not a DEFAULT.
                if let (Some(d), None) = (&c.default, c.identity) {
                    out.push(vec![
                        Value::Oid(t.oid),
                        Value::Int2(i as i16 + 1),
                        Value::Text(d.clone()),
                    ]);
                }
            }
        }),
        SystemView::PgCollation => [(100, "default", "d"), (950, "C", "c"), (951, "POSIX", "c")]
            .into_iter()
            .map(|(oid, name, provider)| {
                vec![
                    Value::Oid(oid),
                    Value::Text(name.into()),
                    Value::Oid(PG_CATALOG_OID),
                    Value::Oid(common::session::BOOTSTRAP_ROLE_OID),
                    Value::Text(provider.into()),
                    Value::Bool(true),
                    Value::Int4(-1),
                ]
            })
            .collect(),
        SystemView::PgConstraint => crate::exec::rows_per_table(constraint_rows),
        SystemView::PgRoles => vec![vec![
            Value::Text(common::session::BOOTSTRAP_ROLE.into()),
            Value::Bool(true),
            Value::Bool(true),
            Value::Bool(true),
            Value::Bool(true),
            Value::Bool(true),
            Value::Bool(true),
            Value::Int4(-1),
            Value::Text("********".into()),
            Value::Bool(true),
            Value::Oid(common::session::BOOTSTRAP_ROLE_OID),
        ]],
        _ => Vec::new(),
    }
}

/// 1-based column numbers as an `int2[]`.
fn attnums(columns: &[usize]) -> Value {
    let items = columns.iter().map(|&c| Value::Int2(c as i16 + 1)).collect();
    Value::Array(Arc::new(Array::from_items(DataType::Int2.oid(), items)))
}

fn action_code(a: FkAction) -> &'static str {
    match a {
        FkAction::NoAction => "a",
        FkAction::Restrict => "r",
    }
}

/// A table's key constraints (their OID is their index's) and foreign keys.
fn constraint_rows(t: &TableDesc, out: &mut Vec<Row>) {
    let row = |oid,
               name: &str,
               kind: &str,
               index,
               foreign: Option<&catalog::ForeignKey>,
               key: &[usize]| {
        vec![
            Value::Oid(oid),
            Value::Text(name.to_string()),
            Value::Oid(PUBLIC_OID),
            Value::Text(kind.into()),
            Value::Bool(false),
            Value::Bool(false),
            Value::Bool(true),
            Value::Oid(t.oid),
            Value::Oid(0),
            Value::Oid(index),
            Value::Oid(0),
            Value::Oid(foreign.map_or(0, |f| f.ref_table)),
            Value::Text(foreign.map_or(" ", |f| action_code(f.on_update)).into()),
            Value::Text(foreign.map_or(" ", |f| action_code(f.on_delete)).into()),
            Value::Text(
                foreign
                    .map_or(" ", |f| if f.match_full { "f" } else { "s" })
                    .into(),
            ),
            Value::Bool(true),
            Value::Int4(0),
            Value::Bool(true),
            attnums(key),
            foreign.map_or(Value::Null, |f| attnums(&f.ref_columns)),
        ]
    };
    for i in t.indexes.iter().filter(|i| i.constraint) {
        let kind = if i.primary { "p" } else { "u" };
        out.push(row(i.oid, &i.name, kind, i.oid, None, &i.columns));
    }
    for f in &t.foreign_keys {
        out.push(row(f.oid, &f.name, "f", f.ref_index, Some(f), &f.columns));
    }
}
