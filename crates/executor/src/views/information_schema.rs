//! The SQL standard's `information_schema` views that ORMs, drivers and GUI tools read:
//! tables, columns, schemata, table_constraints, key_column_usage and check_constraints,
//! made from the
//! catalog snapshot as PostgreSQL 15 makes them from its catalogs. Myriad's tables are
//! all in `public`; its system views are not listed (PostgreSQL lists its catalogs).

use catalog::{ColumnDesc, Identity, SystemView, TableDesc};
use common::{DataType, Value};

use crate::env::Row;
use crate::reg_catalog::PUBLIC_OID;

/// The rows of `view`, one of the `information_schema` views.
pub(crate) fn rows(s: &crate::session::Session, view: SystemView) -> Vec<Row> {
    let db = s.info.database.clone();
    match view {
        SystemView::InfoTables => crate::views::rows_per_table(s, |t, out| {
            out.push(vec![
                text(&db),
                text("public"),
                text(&t.name),
                text("BASE TABLE"),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                text("YES"),
                text("NO"),
                Value::Null,
            ]);
        }),
        SystemView::InfoColumns => crate::views::rows_per_table(s, |t, out| {
            for i in t.live_columns() {
                out.push(column_row(s, &db, t, i, &t.columns[i]));
            }
        }),
        SystemView::InfoSchemata => [
            ("information_schema", common::session::BOOTSTRAP_ROLE),
            ("pg_catalog", common::session::BOOTSTRAP_ROLE),
            ("public", "pg_database_owner"),
        ]
        .into_iter()
        .map(|(schema, owner)| {
            let mut row = vec![text(&db), text(schema), text(owner)];
            row.resize(7, Value::Null);
            row
        })
        .collect(),
        SystemView::InfoTableConstraints => crate::views::rows_per_table(s, |t, out| {
            let mut row = |name: &str, kind: &str| {
                let mut row = constraint_of(&db, name, t);
                row.extend([
                    text(kind),
                    text("NO"),
                    text("NO"),
                    text("YES"),
                    if kind == "UNIQUE" {
                        text("YES")
                    } else {
                        Value::Null
                    },
                ]);
                out.push(row);
            };
            for i in t.indexes.iter().filter(|i| i.constraint) {
                row(&i.name, if i.primary { "PRIMARY KEY" } else { "UNIQUE" });
            }
            for f in &t.foreign_keys {
                row(&f.name, "FOREIGN KEY");
            }
            for c in &t.checks {
                row(&c.name, "CHECK");
            }
            // PostgreSQL 15 shows each NOT NULL column as a CHECK constraint, named
            // after the schema's and table's OIDs and the column's number.
            for (n, c) in t.columns.iter().enumerate() {
                if c.not_null {
                    row(
                        &format!("{PUBLIC_OID}_{}_{}_not_null", t.oid, n + 1),
                        "CHECK",
                    );
                }
            }
        }),
        SystemView::InfoCheckConstraints => {
            crate::views::rows_per_table(s, |t, out| {
                let mut row = |name: &str, clause: String| {
                    out.push(vec![
                        text(&db),
                        text("public"),
                        text(name),
                        Value::Text(clause),
                    ]);
                };
                for c in &t.checks {
                    // pg_get_constraintdef's text after its "CHECK ", as PostgreSQL's
                    // view takes it.
                    let def = crate::ruleutils::check_definition(s, t, c, false);
                    row(
                        &c.name,
                        def.strip_prefix("CHECK ").unwrap_or(&def).to_string(),
                    );
                }
                for (n, c) in t.columns.iter().enumerate() {
                    if c.not_null {
                        row(
                            &format!("{PUBLIC_OID}_{}_{}_not_null", t.oid, n + 1),
                            format!("{} IS NOT NULL", c.name),
                        );
                    }
                }
            })
        }
        SystemView::InfoKeyColumnUsage => {
            let catalog = &s.catalog;
            crate::views::rows_per_table(s, |t, out| {
                let mut row =
                    |name: &str, column: usize, position: usize, unique: Option<usize>| {
                        let mut row = constraint_of(&db, name, t);
                        row.extend([
                            text(&t.columns[column].name),
                            Value::Int4(position as i32 + 1),
                            unique.map_or(Value::Null, |u| Value::Int4(u as i32 + 1)),
                        ]);
                        out.push(row);
                    };
                for i in t.indexes.iter().filter(|i| i.constraint) {
                    for (k, &c) in i.columns.iter().enumerate() {
                        row(&i.name, c, k, None);
                    }
                }
                for f in &t.foreign_keys {
                    let key = catalog.index_by_oid(f.ref_index).map(|(_, i)| &i.columns);
                    for (k, (&c, r)) in f.columns.iter().zip(&f.ref_columns).enumerate() {
                        let unique = key.and_then(|key| key.iter().position(|x| x == r));
                        row(&f.name, c, k, unique);
                    }
                }
            })
        }
        _ => Vec::new(),
    }
}

/// A constraint's catalog, schema and name, then its table's.
fn constraint_of(db: &str, name: &str, t: &TableDesc) -> Row {
    vec![
        text(db),
        text("public"),
        text(name),
        text(db),
        text("public"),
        text(&t.name),
    ]
}

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

fn yes_no(b: bool) -> Value {
    text(if b { "YES" } else { "NO" })
}

/// `information_schema.columns` for column `i` of `t`.
fn column_row(
    s: &crate::session::Session,
    db: &str,
    t: &TableDesc,
    i: usize,
    c: &ColumnDesc,
) -> Row {
    let ty = c.ty;
    let int = |v: Option<u32>| v.map_or(Value::Null, |v| Value::Int4(v as i32));
    let (max_len, octets) = match ty {
        DataType::Varchar(n) | DataType::Bpchar(n) => (n, Some(n.map_or(1 << 30, |n| n * 4))),
        DataType::Text => (None, Some(1 << 30)),
        _ => (None, None),
    };
    let (precision, radix, scale) = match ty {
        DataType::Int2 => (Some(16), Some(2), Some(0)),
        DataType::Int4 => (Some(32), Some(2), Some(0)),
        DataType::Int8 => (Some(64), Some(2), Some(0)),
        DataType::Float4 => (Some(24), Some(2), None),
        DataType::Float8 => (Some(53), Some(2), None),
        DataType::Numeric(ps) => (
            ps.map(|(p, _)| p as u32),
            Some(10),
            ps.map(|(_, s)| s as u32),
        ),
        _ => (None, None, None),
    };
    let datetime = match ty {
        DataType::Date => Some(0),
        DataType::Timestamp(p) | DataType::TimestampTz(p) => {
            Some(p.unwrap_or(common::types::MAX_TIMESTAMP_PRECISION).into())
        }
        DataType::Interval => Some(6),
        _ => None,
    };
    let data_type = match ty {
        DataType::Array(_) => "ARRAY",
        _ => ty.base_name(),
    };
    let udt = match ty {
        DataType::Array(a) => format!("_{}", a.elem().internal_name()),
        _ => ty.internal_name().to_string(),
    };
    // An identity column's sequence gives its parameters.
    let identity = c.identity.and_then(|kind| {
        let seq = s
            .catalog
            .sequences()
            .find(|q| q.owned_by == Some((t.oid, i)))?
            .options;
        Some((kind, seq))
    });
    let identity_text = |f: fn(&catalog::SequenceOptions) -> i64| {
        identity.map_or(Value::Null, |(_, o)| Value::Text(f(&o).to_string()))
    };
    let default = match (&c.default, c.identity) {
        (Some(_), None) => Value::Text(crate::views::pg_catalog::default_text(s, c)),
        _ => Value::Null,
    };
    vec![
        text(db),
        text("public"),
        text(&t.name),
        text(&c.name),
        Value::Int4(i as i32 + 1),
        default,
        yes_no(!c.not_null),
        text(data_type),
        int(max_len),
        int(octets),
        int(precision),
        int(radix),
        int(scale),
        int(datetime),
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        text(db),
        text("pg_catalog"),
        text(&udt),
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        text(&(i + 1).to_string()),
        text("NO"),
        yes_no(c.identity.is_some()),
        match c.identity {
            Some(Identity::Always) => text("ALWAYS"),
            Some(Identity::ByDefault) => text("BY DEFAULT"),
            None => Value::Null,
        },
        identity_text(|o| o.start),
        identity_text(|o| o.increment),
        identity_text(|o| o.max),
        identity_text(|o| o.min),
        yes_no(identity.is_some_and(|(_, o)| o.cycle)),
        text("NEVER"),
        Value::Null,
        text("YES"),
    ]
}
