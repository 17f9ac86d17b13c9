//! The rows of the pg_catalog views psql's `\d` reads beside pg_class: defaults,
//! constraints, collations, roles, and the catalogs of features Myriad does not have yet
//! (inheritance, policies, extended statistics, publications), which are empty.

use std::sync::Arc;

use crate::session::Session;
use catalog::{FkAction, SystemView, TableDesc};
use common::array::Array;
use common::{DataType, Value};

use crate::env::Row;
use crate::reg_catalog::{PG_CATALOG_OID, PUBLIC_OID};

/// `pg_proc`: the built-in functions (`catalog::procs`), in pg_catalog, owned by the
/// bootstrap superuser, of language `internal` (12).
fn pg_proc_rows() -> Vec<Row> {
    let text_array = |items: &[&str]| {
        Value::Array(Arc::new(Array::from_items(
            common::types::oids::TEXT,
            items.iter().map(|s| Value::Text((*s).into())).collect(),
        )))
    };
    let char_value = |c: char| Value::Text(c.to_string());
    catalog::procs::builtin_procs()
        .iter()
        .map(|p| {
            vec![
                Value::Oid(p.oid),
                Value::Text(p.name.into()),
                Value::Oid(PG_CATALOG_OID),
                Value::Oid(10),
                Value::Oid(12),
                Value::Oid(0),
                char_value(p.kind),
                Value::Bool(false),
                Value::Bool(false),
                Value::Bool(p.strict),
                Value::Bool(p.retset),
                char_value(p.volatility),
                char_value(p.parallel),
                Value::Int2(p.args.len() as i16),
                Value::Int2(p.defaults.len() as i16),
                Value::Oid(p.ret),
                if p.arg_names.is_empty() {
                    Value::Null
                } else {
                    text_array(p.arg_names)
                },
                Value::Null,
                Value::Null,
            ]
        })
        .collect()
}

/// `pg_stats`: a row per column ANALYZE kept statistics of (not dropped, and of the
/// type they were taken of).
fn pg_stats_rows(s: &Session) -> Vec<Row> {
    let float4_array = |items: Vec<Value>| {
        Value::Array(Arc::new(Array::from_items(
            common::types::oids::FLOAT4,
            items,
        )))
    };
    crate::views::rows_per_table(s, |t, out| {
        let Some(stats) = s.catalog.stats(t.oid) else {
            return;
        };
        for (i, c) in t.columns.iter().enumerate() {
            if c.dropped {
                continue;
            }
            let Some(cs) = stats.column(i as u16 + 1, &c.ty) else {
                continue;
            };
            let values_text = |values: Vec<Value>| {
                if values.is_empty() {
                    return Value::Null;
                }
                Value::Text(Array::from_items(c.ty.oid(), values).to_text(s.text()))
            };
            out.push(vec![
                Value::Text("public".into()),
                Value::Text(t.name.clone()),
                Value::Text(c.name.clone()),
                // A partitioned table's statistics are of its partitions' rows.
                Value::Bool(t.partition_key.is_some()),
                Value::Float4(cs.null_frac),
                Value::Int4(cs.avg_width),
                Value::Float4(cs.n_distinct),
                values_text(cs.mcv.iter().map(|(v, _)| v.clone()).collect()),
                if cs.mcv.is_empty() {
                    Value::Null
                } else {
                    float4_array(cs.mcv.iter().map(|(_, f)| Value::Float4(*f)).collect())
                },
                values_text(cs.histogram.clone()),
                cs.correlation.map_or(Value::Null, Value::Float4),
                Value::Null,
                Value::Null,
                Value::Null,
            ]);
        }
    })
}

/// The rows of `view`, one of this module's; with `key`, those of that relation (for the
/// views `SystemView::key` names).
pub(crate) fn rows(s: &Session, view: SystemView, key: Option<common::Oid>) -> Vec<Row> {
    match view {
        SystemView::PgProc => pg_proc_rows(),
        SystemView::PgStats => pg_stats_rows(s),
        SystemView::PgAttrdef => crate::views::rows_of_tables(s, key, 0, |t, out| {
            for (i, c) in t.columns.iter().enumerate() {
                // An identity column's values come from its sequence, not a DEFAULT.
                if c.identity.is_none() && c.default.is_some() {
                    out.push(vec![
                        Value::Oid(t.oid),
                        Value::Int2(i as i16 + 1),
                        Value::Text(default_text(s, c)),
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
        SystemView::PgConstraint => crate::views::rows_of_tables(s, key, 7, constraint_rows),
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
            Value::Null,
            Value::Bool(true),
            Value::Null,
            Value::Oid(common::session::BOOTSTRAP_ROLE_OID),
        ]],
        SystemView::PgSequence => sequences(s)
            .into_iter()
            .map(|s| {
                let o = &s.options;
                vec![
                    Value::Oid(s.oid),
                    Value::Oid(o.ty.oid()),
                    Value::Int8(o.start),
                    Value::Int8(o.increment),
                    Value::Int8(o.max),
                    Value::Int8(o.min),
                    Value::Int8(o.cache),
                    Value::Bool(o.cycle),
                ]
            })
            .collect(),
        SystemView::PgDepend => sequences(s)
            .into_iter()
            .filter_map(|seq| {
                let (table, column) = seq.owned_by?;
                let identity = s
                    .catalog
                    .table_by_oid(table)
                    .and_then(|t| t.columns.get(column)?.identity)
                    .is_some();
                Some(vec![
                    Value::Oid(SystemView::PgClass.oid()),
                    Value::Oid(seq.oid),
                    Value::Int4(0),
                    Value::Oid(SystemView::PgClass.oid()),
                    Value::Oid(table),
                    Value::Int4(column as i32 + 1),
                    Value::Text(if identity { "i" } else { "a" }.into()),
                ])
            })
            .collect(),
        SystemView::PgDescription => crate::catalog_funcs::descriptions(&s.catalog)
            .into_iter()
            .map(|(object, class, sub, text)| {
                vec![
                    Value::Oid(object),
                    Value::Oid(class),
                    Value::Int4(sub),
                    Value::Text(text),
                ]
            })
            .collect(),
        // Each partition's parent.
        SystemView::PgInherits => crate::views::rows_of_tables(s, key, 0, |t, out| {
            if let Some(of) = &t.partition_of {
                out.push(vec![
                    Value::Oid(t.oid),
                    Value::Oid(of.parent),
                    Value::Int4(1),
                    Value::Bool(of.detach_pending.is_some()),
                ]);
            }
        }),
        SystemView::PgPartitionedTable => crate::views::rows_of_tables(s, key, 0, |t, out| {
            let Some(k) = &t.partition_key else {
                return;
            };
            let hash = k.strategy == catalog::partition::PartitionStrategy::Hash;
            let types = k.types(&t.columns);
            let oids = |f: &dyn Fn(&DataType) -> u32| {
                let items = types.iter().map(|ty| Value::Oid(f(ty))).collect();
                Value::Array(Arc::new(Array::from_items(DataType::Oid.oid(), items)))
            };
            out.push(vec![
                Value::Oid(t.oid),
                Value::Text(k.strategy.code().to_string()),
                Value::Int2(k.columns.len() as i16),
                Value::Oid(
                    s.catalog
                        .partitions(t.oid)
                        .and_then(|p| p.default_partition())
                        .unwrap_or(0),
                ),
                // An expression's place is 0, as in PostgreSQL's `partattrs`.
                Value::Array(Arc::new(Array::from_items(
                    DataType::Int2.oid(),
                    k.columns
                        .iter()
                        .map(|&c| match catalog::partition::PartitionKey::expression(c) {
                            Some(_) => Value::Int2(0),
                            None => Value::Int2(c as i16 + 1),
                        })
                        .collect(),
                ))),
                oids(&|ty| default_opclass(ty, hash)),
                oids(&|ty| {
                    if matches!(
                        ty,
                        DataType::Text | DataType::Varchar(_) | DataType::Bpchar(_)
                    ) {
                        100
                    } else {
                        0
                    }
                }),
                // The expressions' SQL text where PostgreSQL has their node trees.
                match k.exprs.is_empty() {
                    true => Value::Null,
                    false => Value::Text(
                        k.exprs
                            .iter()
                            .map(|e| e.text.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    ),
                },
            ]);
        }),
        _ => Vec::new(),
    }
}

/// The default btree (or hash) operator class of a type, as PostgreSQL 15 numbers them
/// (`pg_partitioned_table.partclass`); 0 for a type without one here.
fn default_opclass(ty: &DataType, hash: bool) -> u32 {
    let (btree, h) = match ty {
        DataType::Bool => (10003, 10048),
        DataType::Bpchar(_) => (10004, 10005),
        DataType::Bytea => (10006, 10049),
        DataType::Date => (3122, 10011),
        DataType::Float4 => (10012, 10013),
        DataType::Float8 => (3123, 10014),
        DataType::Int2 => (1979, 10019),
        DataType::Int4 => (1978, 10020),
        DataType::Int8 => (3124, 10021),
        DataType::Interval => (10022, 10023),
        DataType::Numeric(_) => (3125, 10030),
        DataType::Oid => (1981, 10031),
        DataType::Text | DataType::Varchar(_) => (3126, 10037),
        DataType::Timestamp(_) => (3128, 10046),
        DataType::TimestampTz(_) => (3127, 10040),
        DataType::Uuid => (10065, 10066),
        _ => (0, 0),
    };
    if hash { h } else { btree }
}

/// Every sequence, in OID order.
fn sequences(s: &Session) -> Vec<Arc<catalog::SequenceDesc>> {
    let mut seqs: Vec<_> = s.catalog.sequences().cloned().collect();
    seqs.sort_by_key(|s| s.oid);
    seqs
}

/// A column's DEFAULT as PostgreSQL deparses it (`'x'::text`): bound as an INSERT binds
/// it, then printed. A default that no longer binds (a function since dropped, say)
/// shows as written.
pub(crate) fn default_text(s: &Session, c: &catalog::ColumnDesc) -> String {
    let written = c.default.clone().unwrap_or_default();
    match sql::binder::bind_default(&s.catalog, c, s.info) {
        Ok(Some(e)) => crate::deparse::deparse_stored(s.text(), &e),
        _ => written,
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
    for c in &t.checks {
        let mut r = row(c.oid, &c.name, "c", 0, None, &c.columns);
        r[6] = Value::Bool(c.validated);
        r[17] = Value::Bool(false);
        if c.columns.is_empty() {
            r[18] = Value::Null;
        }
        out.push(r);
    }
}
