//! Catalog lookups behind the `reg*` types: a relation, type or schema by OID or by
//! name, as `regclassin` / `regclassout` and friends read and print them. Below the
//! session (which carries it in each statement's text context) and everything else.

use std::sync::Arc;

use catalog::CatalogSnapshot;
use common::ids::quote_identifier;
use common::value::{RegCatalog, RegKind};
use common::{DataType, PgError, PgResult, SqlState};

fn undefined_schema(name: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_SCHEMA_NAME,
        format!("schema \"{name}\" does not exist"),
    )
}

/// The schemas Myriad has, with PostgreSQL's OIDs.
pub(crate) const PG_CATALOG_OID: u32 = 11;
pub(crate) const PUBLIC_OID: u32 = 2200;

/// A catalog snapshot as `reg*` input and output see it: what the server puts in each
/// statement's text context (`common::value::TextContext`).
pub struct SnapshotRegCatalog(pub Arc<CatalogSnapshot>);

fn schema_oid(name: &str) -> Option<u32> {
    match name {
        "pg_catalog" => Some(PG_CATALOG_OID),
        "public" => Some(PUBLIC_OID),
        "information_schema" => Some(catalog::INFORMATION_SCHEMA_OID),
        _ => None,
    }
}

/// A relation's OID by name in one schema: system views in `pg_catalog`, everything
/// else in `public`.
fn relation_in(catalog: &CatalogSnapshot, schema: u32, name: &str) -> Option<u32> {
    if schema == PG_CATALOG_OID {
        return catalog::SystemView::lookup(name).map(|v| v.oid());
    }
    if schema == catalog::INFORMATION_SCHEMA_OID {
        return catalog::SystemView::lookup_in("information_schema", name).map(|v| v.oid());
    }
    if let Some(t) = catalog.table(name) {
        return Some(t.oid);
    }
    if let Some((_, i)) = catalog.index(name) {
        return Some(i.oid);
    }
    catalog.sequence(name).map(|s| s.oid)
}

/// A possibly qualified, possibly quoted name's parts (`public."My Table"`), or
/// PostgreSQL's 42602.
fn name_parts(text: &str) -> PgResult<Vec<String>> {
    common::ids::split_qualified(text)
        .ok_or_else(|| PgError::new(SqlState::INVALID_NAME, "invalid name syntax"))
}

impl RegCatalog for SnapshotRegCatalog {
    fn reg_name(&self, kind: RegKind, oid: u32) -> Option<String> {
        match kind {
            RegKind::Class => {
                if let Some(v) = catalog::SystemView::by_oid(oid) {
                    // Off the search path, the name is qualified.
                    return Some(match v.schema() {
                        "pg_catalog" => v.name().to_string(),
                        s => format!("{s}.{}", v.name()),
                    });
                }
                let catalog = &self.0;
                let name = if let Some(t) = catalog.table_by_oid(oid) {
                    t.name.clone()
                } else if let Some((_, i)) = catalog.index_by_oid(oid) {
                    i.name.clone()
                } else {
                    catalog.sequence_by_oid(oid)?.name.clone()
                };
                Some(quote_identifier(&name).into_owned())
            }
            // `format_type_be`: the SQL name without a modifier (`character` for bpchar).
            RegKind::Type => match DataType::from_oid(oid, -1)? {
                DataType::Bpchar(None) => Some("character".into()),
                t => Some(t.name()),
            },
            RegKind::Namespace => match oid {
                PG_CATALOG_OID => Some("pg_catalog".into()),
                PUBLIC_OID => Some("public".into()),
                catalog::INFORMATION_SCHEMA_OID => Some("information_schema".into()),
                _ => None,
            },
        }
    }

    fn reg_oid(&self, kind: RegKind, text: &str) -> PgResult<u32> {
        match kind {
            RegKind::Class => {
                let parts = name_parts(text)?;
                let missing = || {
                    PgError::new(
                        SqlState::UNDEFINED_TABLE,
                        format!("relation \"{}\" does not exist", parts.join(".")),
                    )
                };
                match parts.as_slice() {
                    // The search path: pg_catalog, then public.
                    [name] => relation_in(&self.0, PG_CATALOG_OID, name)
                        .or_else(|| relation_in(&self.0, PUBLIC_OID, name))
                        .ok_or_else(missing),
                    [schema, name] => {
                        let s = schema_oid(schema).ok_or_else(|| undefined_schema(schema))?;
                        relation_in(&self.0, s, name).ok_or_else(missing)
                    }
                    _ => Err(PgError::new(
                        SqlState::INVALID_NAME,
                        format!("improper relation name (too many dotted names): {text}"),
                    )),
                }
            }
            RegKind::Type => sql::parser::parse_type_name(text)
                .map(|t| t.oid())
                .ok_or_else(|| {
                    PgError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("type \"{text}\" does not exist"),
                    )
                }),
            RegKind::Namespace => {
                let parts = name_parts(text)?;
                let [name] = parts.as_slice() else {
                    return Err(PgError::new(SqlState::INVALID_NAME, "invalid name syntax"));
                };
                schema_oid(name).ok_or_else(|| undefined_schema(name))
            }
        }
    }
}
