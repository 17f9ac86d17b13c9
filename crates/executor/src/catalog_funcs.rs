//! The catalog functions psql and drivers call (`pg_get_indexdef`, `pg_get_expr`,
//! `obj_description`, `set_config`, ...); the `reg*` lookups are `reg_catalog`'s.

use catalog::CatalogSnapshot;
use common::ids::quote_identifier;
use common::{DataType, PgError, PgResult, SqlState};

use crate::reg_catalog::{PG_CATALOG_OID, PUBLIC_OID};
use crate::session::Session;

/// The catalog functions psql's `\d` calls (`ScalarFunc::PgGet*`); strict, so no
/// argument is NULL here.
/// `set_config(name, value, is_local)`, which is not strict: a NULL value is the
/// setting's reset value, a NULL is_local is false; a NULL name is PostgreSQL's 22004.
pub(crate) fn set_config(s: &Session, args: &[common::Value]) -> PgResult<common::Value> {
    use common::Value;
    let Some(Value::Text(name)) = args.first() else {
        return Err(PgError::new(
            SqlState::NULL_VALUE_NOT_ALLOWED,
            "SET requires parameter name",
        ));
    };
    let value = match args.get(1) {
        Some(Value::Text(v)) => Some(v.as_str()),
        _ => None,
    };
    let local = args.get(2) == Some(&Value::Bool(true));
    s.settings.set(name, value, local).map(Value::Text)
}

pub(crate) fn eval(
    s: &Session,
    f: sql::bound::ScalarFunc,
    args: &[common::Value],
) -> PgResult<common::Value> {
    use common::Value;
    use sql::bound::ScalarFunc as F;
    let oid = |i: usize| args.get(i).and_then(Value::as_i64).unwrap_or(0) as u32;
    let catalog = &s.catalog;
    let text = |s: Option<String>| s.map_or(Value::Null, Value::Text);
    Ok(match f {
        F::PgGetExpr => args[0].clone(),
        F::PgGetIndexDef => {
            let Some((t, i)) = catalog.index_by_oid(oid(0)) else {
                return Ok(Value::Null);
            };
            let column = args.get(1).and_then(Value::as_i64).unwrap_or(0);
            // Pretty-printed, a table on the search path goes unqualified (every one is).
            let pretty = args.get(2) == Some(&Value::Bool(true));
            let name = |c: usize| crate::ruleutils::index_column(s, t, i, c, pretty);
            if column > 0 {
                return Ok(text(i.stored_columns().nth(column as usize - 1).map(name)));
            }
            let cols: Vec<String> = i
                .columns
                .iter()
                .enumerate()
                .map(|(n, &c)| {
                    let mut s = name(c);
                    // As PostgreSQL prints them: an option only where it is not the
                    // default of the direction.
                    match i.order.column(n) {
                        (false, false) => {}
                        (false, true) => s.push_str(" NULLS FIRST"),
                        (true, true) => s.push_str(" DESC"),
                        (true, false) => s.push_str(" DESC NULLS LAST"),
                    }
                    s
                })
                .collect();
            let mut def = format!(
                "CREATE {}INDEX {} ON {}{} USING btree ({})",
                if i.unique { "UNIQUE " } else { "" },
                quote_identifier(&i.name),
                if pretty { "" } else { "public." },
                quote_identifier(&t.name),
                cols.join(", ")
            );
            if !i.include.is_empty() {
                let inc: Vec<String> = i.include.iter().map(|&c| name(c)).collect();
                def.push_str(&format!(" INCLUDE ({})", inc.join(", ")));
            }
            if let Some(p) = crate::ruleutils::index_predicate(s, t, i, pretty) {
                def.push_str(&format!(" WHERE {p}"));
            }
            Value::Text(def)
        }
        F::PgGetConstraintDef => {
            let pretty = args.get(1) == Some(&Value::Bool(true));
            text(constraint_def(s, oid(0), pretty))
        }
        F::PgGetStatisticsObjDefColumns => Value::Null,
        F::PgRelationIsPublishable => Value::Bool(catalog.table_by_oid(oid(0)).is_some()),
        // The partition itself, then its parents up to the root (empty for a table
        // that is no partition, NULL for no relation).
        F::PgPartitionAncestors => {
            let Some(mut t) = catalog.table_by_oid(oid(0)) else {
                return Ok(Value::Null);
            };
            let mut items = Vec::new();
            if t.partition_of.is_some() || t.partition_key.is_some() {
                items.push(Value::Reg(common::value::RegKind::Class, t.oid));
            }
            while let Some(p) = t
                .partition_of
                .as_ref()
                .and_then(|o| catalog.table_by_oid(o.parent))
            {
                items.push(Value::Reg(common::value::RegKind::Class, p.oid));
                t = p;
            }
            Value::Array(std::sync::Arc::new(common::array::Array::from_items(
                common::types::oids::REGCLASS,
                items,
            )))
        }
        // A partitioned index's tree: its partitions' indexes that belong to it, level
        // by level, each level's by OID.
        F::PgPartitionTree if catalog.table_by_oid(oid(0)).is_none() => {
            let Some((table, index)) = catalog.index_by_oid(oid(0)) else {
                return Ok(Value::Null);
            };
            let mut items = Vec::new();
            if index.parent.is_some() || table.partition_key.is_some() {
                let mut level = vec![(table.oid, index.oid)];
                while !level.is_empty() {
                    let mut next = Vec::new();
                    for &(t, i) in &level {
                        items.push(Value::Reg(common::value::RegKind::Class, i));
                        let Some(p) = catalog.partitions(t) else {
                            continue;
                        };
                        for part in p.all().into_iter().filter_map(|o| catalog.table_by_oid(o)) {
                            if let Some(child) = part.indexes.iter().find(|x| x.parent == Some(i)) {
                                next.push((part.oid, child.oid));
                            }
                        }
                    }
                    next.sort_unstable_by_key(|&(_, i)| i);
                    level = next;
                }
            }
            Value::Array(std::sync::Arc::new(common::array::Array::from_items(
                common::types::oids::REGCLASS,
                items,
            )))
        }
        F::PgPartitionTree => {
            let Some(t) = catalog.table_by_oid(oid(0)) else {
                return Ok(Value::Null);
            };
            let mut items = Vec::new();
            if t.partition_of.is_some() || t.partition_key.is_some() {
                // Level by level from the table, each level's partitions by OID.
                let mut level = vec![t.oid];
                while !level.is_empty() {
                    let mut next = Vec::new();
                    for &o in &level {
                        items.push(Value::Reg(common::value::RegKind::Class, o));
                        if let Some(p) = catalog.partitions(o) {
                            let mut below = p.all();
                            below.sort_unstable();
                            next.extend(below);
                        }
                    }
                    level = next;
                }
            }
            Value::Array(std::sync::Arc::new(common::array::Array::from_items(
                common::types::oids::REGCLASS,
                items,
            )))
        }
        // For an index: the partitioned index it belongs to; a leaf where its table is
        // not partitioned.
        F::PartitionParent => match catalog.table_by_oid(oid(0)) {
            Some(t) => match &t.partition_of {
                Some(of) => Value::Reg(common::value::RegKind::Class, of.parent),
                None => Value::Null,
            },
            None => match catalog.index_by_oid(oid(0)).and_then(|(_, i)| i.parent) {
                Some(p) => Value::Reg(common::value::RegKind::Class, p),
                None => Value::Null,
            },
        },
        F::PartitionIsLeaf => match catalog.table_by_oid(oid(0)) {
            Some(t) => Value::Bool(t.partition_key.is_none()),
            None => match catalog.index_by_oid(oid(0)) {
                Some((t, _)) => Value::Bool(t.partition_key.is_none()),
                None => Value::Null,
            },
        },
        F::PartitionLevel => {
            let top = oid(1);
            // The relation's parent: a table's partition_of, an index's parent.
            let parent = |o: u32| -> Option<u32> {
                match catalog.table_by_oid(o) {
                    Some(t) => t.partition_of.as_ref().map(|p| p.parent),
                    None => catalog.index_by_oid(o).and_then(|(_, i)| i.parent),
                }
            };
            let (mut at, mut level) = (Some(oid(0)), 0);
            while let Some(o) = at
                && o != top
            {
                level += 1;
                at = parent(o);
            }
            Value::Int4(level)
        }
        F::PgGetPartitionConstraintDef => text(
            catalog
                .table_by_oid(oid(0))
                .and_then(|t| crate::ruleutils::partition_constraint(s, t)),
        ),
        F::PgGetPartKeyDef => text(
            catalog
                .table_by_oid(oid(0))
                .and_then(|t| crate::ruleutils::partition_key_definition(s, t)),
        ),
        F::PgPartitionRoot => match catalog.table_by_oid(oid(0)) {
            None => Value::Null,
            Some(t) if t.partition_of.is_none() && t.partition_key.is_none() => Value::Null,
            Some(mut t) => {
                while let Some(p) = t
                    .partition_of
                    .as_ref()
                    .and_then(|o| catalog.table_by_oid(o.parent))
                {
                    t = p;
                }
                Value::Reg(common::value::RegKind::Class, t.oid)
            }
        },
        F::PgGetTriggerDef => Value::Null,
        F::PgTypeIsVisible => match DataType::from_oid(oid(0), -1) {
            Some(_) => Value::Bool(true),
            None => Value::Null,
        },
        F::PgFunctionIsVisible => match catalog::procs::builtin_proc(oid(0)) {
            Some(_) => Value::Bool(true),
            None => Value::Null,
        },
        F::PgGetFunctionArguments | F::PgGetFunctionIdentityArguments | F::PgGetFunctionResult => {
            let Some(p) = catalog::procs::builtin_proc(oid(0)) else {
                return Ok(Value::Null);
            };
            let name = signature_type_name;
            Value::Text(match f {
                F::PgGetFunctionArguments => p.arguments(name),
                F::PgGetFunctionIdentityArguments => p.identity_arguments(name),
                _ => p.result(name),
            })
        }
        F::CurrentSetting => {
            let Value::Text(name) = &args[0] else {
                return Ok(Value::Null);
            };
            let missing_ok = args.get(1) == Some(&Value::Bool(true));
            match s.settings.current(name)? {
                Some(v) => Value::Text(v),
                None if missing_ok => Value::Null,
                None => {
                    return Err(PgError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("unrecognized configuration parameter \"{name}\""),
                    ));
                }
            }
        }
        F::SetConfig => set_config(s, args)?,
        F::PgEncodingToChar => {
            let n = args[0].as_i64().unwrap_or(-1);
            let name = usize::try_from(n)
                .ok()
                .and_then(|n| common::session::ENCODINGS.get(n));
            Value::Text(name.copied().unwrap_or_default().into())
        }
        F::ColDescription => text(description(
            catalog,
            oid(0),
            Some(catalog::SystemView::PgClass.oid()),
            args[1].as_i64().unwrap_or(0),
        )),
        F::ObjDescription => {
            let class = match args.get(1) {
                Some(Value::Text(catalog_name)) => {
                    match catalog::SystemView::lookup(catalog_name) {
                        Some(v) => Some(v.oid()),
                        None => return Ok(Value::Null),
                    }
                }
                _ => None,
            };
            text(description(catalog, oid(0), class, 0))
        }
        F::PgRelationSize | F::PgTableSize | F::PgIndexesSize | F::PgTotalRelationSize => {
            relation_size(s, f, oid(0))?.map_or(Value::Null, Value::Int8)
        }
        F::PgSizePretty => match args[0].as_i64() {
            Some(n) => Value::Text(size_pretty(n)),
            None => Value::Null,
        },
        // Databases and roles have no comments in Myriad.
        F::ShobjDescription => Value::Null,
        F::QuoteIdent => match &args[0] {
            Value::Text(s) => Value::Text(quote_identifier(s).into_owned()),
            other => other.clone(),
        },
        other => {
            return Err(PgError::internal(format!(
                "{other:?} is not a catalog function"
            )));
        }
    })
}

/// The bytes `f` (one of the size functions) counts for relation `oid`, from the sizes
/// the storage manager caches (no system call); None if there is no such relation.
fn relation_size(s: &Session, f: sql::bound::ScalarFunc, oid: u32) -> PgResult<Option<i64>> {
    use sql::bound::ScalarFunc as F;
    let bytes = |rel| -> PgResult<i64> {
        Ok(i64::from(s.pool.smgr().nblocks(rel)?) * common::limits::BLCKSZ as i64)
    };
    let catalog = &s.catalog;
    let Some(table) = catalog.table_by_oid(oid) else {
        // An index or a sequence: its own bytes, and no indexes.
        let rel = match (catalog.index_by_oid(oid), catalog.sequence_by_oid(oid)) {
            // A partitioned table's index has no storage (partition rule 1).
            (Some((t, _)), _) if t.partition_key.is_some() => return Ok(Some(0)),
            (Some((_, i)), _) => i.rel,
            (None, Some(s)) => s.rel,
            (None, None) => return Ok(None),
        };
        return Ok(Some(match f {
            F::PgIndexesSize => 0,
            _ => bytes(rel)?,
        }));
    };
    // A partitioned table has no storage, nor have its indexes: 0, as in PostgreSQL.
    if table.partition_key.is_some() {
        return Ok(Some(0));
    }
    let indexes = || -> PgResult<i64> { table.indexes.iter().map(|i| bytes(i.rel)).sum() };
    // The table's free space and visibility maps, and its TOAST relation with its own,
    // where they were made: PostgreSQL's pg_table_size counts them with the table
    // (access rules 9, 10 and 12).
    let maps = || -> PgResult<i64> {
        use common::ids::{Fork, fork};
        let mut n = 0;
        let toast = table.toast.into_iter().map(|t| (t, Fork::Main));
        let maps = [table.rel].into_iter().chain(table.toast).flat_map(|r| {
            [Fork::FreeSpace, Fork::Visibility]
                .into_iter()
                .map(move |f| (r, f))
        });
        for (rel, f) in toast.chain(maps) {
            let id = fork(rel, f);
            if s.pool.smgr().exists(id) {
                n += bytes(id)?;
            }
        }
        Ok(n)
    };
    Ok(Some(match f {
        F::PgIndexesSize => indexes()?,
        F::PgTableSize => bytes(table.rel)? + maps()?,
        F::PgTotalRelationSize => bytes(table.rel)? + maps()? + indexes()?,
        _ => bytes(table.rel)?,
    }))
}

/// PostgreSQL's `pg_size_pretty(bigint)`: bytes below 10 kB, then the largest unit
/// (kB, MB, GB, TB, PB) in which the number, counted in halves, stays below 20479;
/// rounded half away from zero.
fn size_pretty(bytes: i64) -> String {
    const UNITS: [&str; 5] = ["kB", "MB", "GB", "TB", "PB"];
    if bytes.unsigned_abs() < 10 * 1024 {
        return format!("{bytes} bytes");
    }
    // In halves of the unit, so that the last step can round.
    let mut halves = bytes / (1 << 9);
    for (k, unit) in UNITS.iter().enumerate() {
        if halves.unsigned_abs() < 20 * 1024 - 1 || k == UNITS.len() - 1 {
            let rounded = (halves + if halves < 0 { -1 } else { 1 }) / 2;
            return format!("{rounded} {unit}");
        }
        halves /= 1 << 10;
    }
    unreachable!("the last unit returns")
}

/// The schemas' comments (`pg_description`: object, its catalog, column number or 0,
/// text), as initdb gives them.
const SCHEMA_DESCRIPTIONS: &[(u32, u32, i32, &str)] = &[
    (PG_CATALOG_OID, 2615, 0, "system catalog schema"),
    (PUBLIC_OID, 2615, 0, "standard public schema"),
];

/// Every comment (`pg_description`'s rows): the schemas', then COMMENT ON's, which the
/// tables keep.
pub(crate) fn descriptions(catalog: &CatalogSnapshot) -> Vec<(u32, u32, i32, String)> {
    let mut out: Vec<(u32, u32, i32, String)> = SCHEMA_DESCRIPTIONS
        .iter()
        .map(|&(o, c, s, t)| (o, c, s, t.to_string()))
        .collect();
    let class = catalog::SystemView::PgClass.oid();
    for t in catalog.tables() {
        out.extend(
            t.comments
                .iter()
                .map(|c| (c.object, class, c.sub, c.text.clone())),
        );
    }
    out
}

/// The comment on `object` (column `sub`, or 0 for the object itself) of catalog
/// `class` (any, for None).
fn description(
    catalog: &CatalogSnapshot,
    object: u32,
    class: Option<u32>,
    sub: i64,
) -> Option<String> {
    if let Some(d) = SCHEMA_DESCRIPTIONS
        .iter()
        .find(|d| d.0 == object && class.is_none_or(|c| d.1 == c) && i64::from(d.2) == sub)
    {
        return Some(d.3.to_string());
    }
    if class.is_some_and(|c| c != catalog::SystemView::PgClass.oid()) {
        return None;
    }
    // A table's comments, or its index's, are the table's.
    let table = match catalog.table_by_oid(object) {
        Some(t) => t,
        None => catalog.index_by_oid(object)?.0,
    };
    table
        .comments
        .iter()
        .find(|c| c.object == object && i64::from(c.sub) == sub)
        .map(|c| c.text.clone())
}

/// `pg_get_constraintdef`: a key constraint by its index's OID, a foreign key or a
/// check (whose condition `pretty` prints with fewer parentheses).
fn constraint_def(s: &Session, oid: u32, pretty: bool) -> Option<String> {
    let catalog = &*s.catalog;
    let names = |t: &catalog::TableDesc, cols: &[usize]| {
        cols.iter()
            .map(|&c| quote_identifier(&t.columns[c].name).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some((t, i)) = catalog.index_by_oid(oid) {
        if !i.constraint {
            return None;
        }
        let kind = if i.primary { "PRIMARY KEY" } else { "UNIQUE" };
        return Some(format!("{kind} ({})", names(t, &i.columns)));
    }
    for t in catalog.tables() {
        if let Some(f) = t.foreign_keys.iter().find(|f| f.oid == oid) {
            let target = catalog.table_by_oid(f.ref_table)?;
            let mut s = format!(
                "FOREIGN KEY ({}) REFERENCES {}({})",
                names(t, &f.columns),
                quote_identifier(&target.name),
                names(target, &f.ref_columns)
            );
            if f.match_full {
                s.push_str(" MATCH FULL");
            }
            if f.on_update == catalog::FkAction::Restrict {
                s.push_str(" ON UPDATE RESTRICT");
            }
            if f.on_delete == catalog::FkAction::Restrict {
                s.push_str(" ON DELETE RESTRICT");
            }
            return Some(s);
        }
        if let Some(c) = t.checks.iter().find(|c| c.oid == oid) {
            return Some(crate::ruleutils::check_definition(s, t, c, pretty));
        }
    }
    None
}

/// The name `pg_get_function_arguments` gives a type in a signature: `format_type`'s
/// without a typmod (`character` for bpchar), and the pseudo-types' names.
fn signature_type_name(oid: common::Oid) -> String {
    if oid == common::types::oids::BPCHAR {
        return "character".into();
    }
    if let Some((_, name)) = catalog::procs::PSEUDO_TYPES.iter().find(|(o, _)| *o == oid) {
        return (*name).into();
    }
    DataType::from_oid(oid, -1).map_or_else(|| "???".into(), |t| t.name())
}
