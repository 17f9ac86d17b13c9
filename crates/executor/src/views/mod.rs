//! System views' rows (pg_class, pg_attribute, pg_index, pg_type, pg_locks,
//! pg_stat_activity, Myriad's own counters), made when the view is scanned; the
//! pg_catalog views psql reads beside them in [`pg_catalog`], and the
//! information_schema views in [`information_schema`]. The rows are the state the
//! statement sees (its catalog snapshot, the live lock table and sessions), read through
//! [`Env`]; nothing here runs a plan.

pub(crate) mod information_schema;
pub(crate) mod pg_catalog;
pub(crate) mod stat;

use common::{DataType, Value};

use crate::env::{Env, Row};

/// The rows of a system view, from the live state; with `key`, only those of that
/// relation (for the views `catalog::SystemView::key` names).
pub(crate) fn system_view_rows(
    view: catalog::SystemView,
    env: Env,
    key: Option<common::Oid>,
) -> Vec<Row> {
    use catalog::SystemView;
    let pool = env.pool;
    let n = |v: u64| Value::Int8(v.min(i64::MAX as u64) as i64);
    match view {
        SystemView::PgLocks => pg_locks_rows(env.tx.manager().locks()),
        SystemView::PgStatActivity => pg_stat_activity_rows(env.tx.manager()),
        SystemView::PgNamespace => vec![
            vec![
                Value::Oid(11),
                Value::Text("pg_catalog".into()),
                Value::Oid(10),
                Value::Null,
            ],
            // Owned by pg_database_owner, as in PostgreSQL 15.
            vec![
                Value::Oid(2200),
                Value::Text("public".into()),
                Value::Oid(6171),
                Value::Null,
            ],
            vec![
                Value::Oid(catalog::INFORMATION_SCHEMA_OID),
                Value::Text("information_schema".into()),
                Value::Oid(10),
                Value::Null,
            ],
        ],
        SystemView::PgClass => pg_class_rows(env, key),
        SystemView::PgAm => [(2, "heap", "t"), (403, "btree", "i")]
            .into_iter()
            .map(|(oid, name, kind)| {
                vec![
                    Value::Oid(oid),
                    Value::Text(name.into()),
                    Value::Text(kind.into()),
                ]
            })
            .collect(),
        SystemView::PgAttribute => pg_attribute_rows(env.session, key),
        SystemView::PgIndex => pg_index_rows(env.session, key),
        SystemView::PgAttrdef
        | SystemView::PgProc
        | SystemView::PgCollation
        | SystemView::PgConstraint
        | SystemView::PgInherits
        | SystemView::PgPartitionedTable
        | SystemView::PgRoles
        | SystemView::PgPolicy
        | SystemView::PgStatisticExt
        | SystemView::PgStats
        | SystemView::PgPublication
        | SystemView::PgPublicationNamespace
        | SystemView::PgPublicationRel
        | SystemView::PgSequence
        | SystemView::PgDepend
        | SystemView::PgDescription
        | SystemView::PgTrigger
        | SystemView::PgAuthMembers
        | SystemView::PgParameterAcl => pg_catalog::rows(env.session, view, key),
        SystemView::PgSettings => env.session.settings.rows(),
        SystemView::PgCursors => env.session.settings.cursor_rows(),
        SystemView::PgStatUserTables => stat::user_tables(env),
        SystemView::PgStatioUserTables => stat::statio_user_tables(env),
        SystemView::PgStatUserIndexes => stat::user_indexes(env),
        SystemView::PgStatDatabase => {
            use txn::activity::DatabaseCounts as C;
            let activity = env.tx.manager().activity();
            let counts = &activity.counts;
            let buffers = pool.stats();
            let temp = pool.smgr().temp();
            // What Myriad does not count yet (times, abandoned sessions) is 0; checksum
            // failures are NULL, as in a cluster without data checksums.
            let [returned, fetched, inserted, updated, deleted] = stat::database_rows(env);
            vec![vec![
                Value::Oid(5),
                Value::Text(env.session.info.database.clone()),
                Value::Int4(activity.count() as i32),
                n(C::read(&counts.commits)),
                n(C::read(&counts.rollbacks)),
                n(buffers.misses),
                n(buffers.hits),
                n(returned),
                n(fetched),
                n(inserted),
                n(updated),
                n(deleted),
                n(0),
                n(temp.files_created()),
                n(temp.bytes_written()),
                n(C::read(&counts.deadlocks)),
                Value::Null,
                Value::Null,
                Value::Float8(0.0),
                Value::Float8(0.0),
                Value::Float8(0.0),
                Value::Float8(0.0),
                Value::Float8(0.0),
                n(C::read(&counts.sessions)),
                n(0),
                n(0),
                n(0),
                Value::Null,
            ]]
        }
        SystemView::InfoTables
        | SystemView::InfoColumns
        | SystemView::InfoSchemata
        | SystemView::InfoTableConstraints
        | SystemView::InfoKeyColumnUsage
        | SystemView::InfoCheckConstraints => information_schema::rows(env.session, view),
        SystemView::PgType => pg_type_rows(),
        SystemView::PgDatabase => vec![vec![
            Value::Oid(5),
            Value::Text(env.session.info.database.clone()),
            Value::Oid(10),
            Value::Int4(6),
            Value::Text("C".into()),
            Value::Text("C".into()),
            Value::Bool(false),
            Value::Bool(true),
            Value::Text("c".into()),
            Value::Null,
            Value::Null,
        ]],
        SystemView::StatFd => {
            let s = pool.smgr().fd_stats();
            vec![vec![
                n(s.max_open_files as u64),
                n(s.open_files as u64),
                n(s.hits),
                n(s.misses),
                n(s.evictions),
                n(s.eviction_syncs),
                n(s.probes),
            ]]
        }
        SystemView::StatBuffers => {
            let s = pool.stats();
            vec![vec![
                n(pool.capacity() as u64),
                n(s.hits),
                n(s.misses),
                n(s.evictions),
                n(s.writes),
            ]]
        }
        SystemView::StatWal => vec![match pool.wal() {
            Some(wal) => {
                let s = wal.stats();
                let lsn = |l| Value::Text(storage::xlog::fmt_lsn(l));
                vec![
                    n(s.records),
                    n(s.bytes),
                    n(s.syncs),
                    n(s.checkpoints),
                    lsn(wal.insert_lsn()),
                    lsn(wal.flushed_lsn()),
                    lsn(wal.redo_lsn()),
                ]
            }
            None => vec![Value::Null; view.columns().len()],
        }],
    }
}

/// `pg_locks`: one row per lock held or awaited, by session.
pub(crate) fn pg_locks_rows(locks: &txn::lock::LockManager) -> Vec<Row> {
    use txn::lock::LockTag;
    let db = Value::Int8(i64::from(locks.config().database_oid));
    let oid = |o: u32| Value::Int8(i64::from(o));
    let mut infos = locks.snapshot();
    infos.sort_by_key(|l| (l.pid, l.tag, l.mode));
    infos
        .into_iter()
        .map(|l| {
            let mut row = vec![Value::Null; 15];
            row[0] = Value::Text(l.tag.locktype().into());
            match l.tag {
                LockTag::Relation(rel) => {
                    row[1] = db.clone();
                    row[2] = oid(rel);
                }
                LockTag::Transaction(xid) => {
                    row[6] = Value::Int8(xid.min(i64::MAX as u64) as i64);
                }
                LockTag::Tuple { rel, block, offset } => {
                    row[1] = db.clone();
                    row[2] = oid(rel);
                    row[3] = Value::Int4(block as i32);
                    row[4] = Value::Int2(offset as i16);
                }
                LockTag::Object { class, id } => {
                    row[1] = db.clone();
                    row[7] = oid(class);
                    row[8] = oid(id);
                    row[9] = Value::Int2(0);
                }
                LockTag::Advisory(key) => {
                    row[1] = db.clone();
                    row[7] = Value::Int8((key >> 32) as i64);
                    row[8] = Value::Int8((key & 0xffff_ffff) as i64);
                    row[9] = Value::Int2(1);
                }
            }
            row[11] = Value::Int4(l.pid as i32);
            row[12] = Value::Text(l.mode.name().into());
            row[13] = Value::Bool(l.granted);
            row[14] = Value::Bool(l.fastpath);
            row
        })
        .collect()
}

/// `pg_stat_activity`: one row per client session.
pub(crate) fn pg_stat_activity_rows(mgr: &txn::TxnManager) -> Vec<Row> {
    use txn::lock::{LockMode, LockTag};
    let locks = mgr.locks();
    let held = locks.snapshot();
    mgr.activity()
        .sessions()
        .into_iter()
        .map(|s| {
            let pid = s.pid();
            let (state, query, application_name) = s.read();
            let (wait_type, wait_event) = match locks.waiting_for(pid) {
                Some((tag, _)) => (
                    Value::Text("Lock".into()),
                    Value::Text(tag.wait_event().into()),
                ),
                None if state != txn::activity::BackendState::Active => (
                    Value::Text("Client".into()),
                    Value::Text("ClientRead".into()),
                ),
                None => (Value::Null, Value::Null),
            };
            // Its top-level id: the oldest id it holds its own transaction lock on.
            let xid = held
                .iter()
                .filter(|l| l.pid == pid && l.granted && l.mode == LockMode::Exclusive)
                .filter_map(|l| match l.tag {
                    LockTag::Transaction(x) => Some(x),
                    _ => None,
                })
                .min();
            let int8 = |x: Option<u64>| {
                x.map_or(Value::Null, |x| Value::Int8(x.min(i64::MAX as u64) as i64))
            };
            vec![
                Value::Int8(i64::from(locks.config().database_oid)),
                Value::Text("postgres".into()),
                Value::Int4(pid as i32),
                Value::Null,
                Value::Int8(10),
                Value::Text("postgres".into()),
                Value::Text(application_name),
                wait_type,
                wait_event,
                Value::Text(state.name().into()),
                int8(xid),
                int8(mgr.xmin_of(pid)),
                Value::Text(query),
                Value::Text("client backend".into()),
            ]
        })
        .collect()
}

/// `pg_class`: every table ('r'), index ('i') and sequence ('S') of the catalog snapshot
/// the session sees, all in `public` (2200), owned by the bootstrap superuser (10).
/// `relpages` is the relation's size now (PostgreSQL's is VACUUM's last estimate);
/// a table's `reltuples` is ANALYZE's last estimate (-1 before it ran, as for indexes).
pub(crate) fn pg_class_rows(env: Env, key: Option<common::Oid>) -> Vec<Row> {
    let catalog = &env.session.catalog;
    let pages = |rel| Value::Int4(env.pool.smgr().nblocks(rel).unwrap_or(0) as i32);
    let row = |oid: common::Oid,
               name: &str,
               am: u32,
               pages: Value,
               tuples: f32,
               has_index: bool,
               kind: &str,
               natts: usize| {
        vec![
            Value::Oid(oid),
            Value::Text(name.to_string()),
            Value::Oid(2200),
            Value::Oid(0),
            Value::Oid(10),
            Value::Oid(am),
            pages,
            Value::Float4(tuples),
            Value::Bool(has_index),
            Value::Text("p".into()),
            Value::Text(kind.into()),
            Value::Int2(natts as i16),
            // No rules, row security, tablespaces, typed tables or TOAST yet.
            // relchecks, relhastriggers, relispartition and relpartbound are set by
            // the caller.
            Value::Int2(0),
            Value::Bool(false),
            Value::Bool(false),
            Value::Bool(false),
            Value::Bool(false),
            Value::Bool(false),
            Value::Oid(0),
            Value::Oid(0),
            Value::Oid(0),
            // REPLICA IDENTITY DEFAULT for tables, NOTHING for the others.
            Value::Text(if matches!(kind, "r" | "p") { "d" } else { "n" }.into()),
            Value::Null,
            Value::Null,
            // relallvisible: a table's is set by the caller.
            Value::Int4(0),
        ]
    };
    // One relation (a table, an index or a sequence), or all of them.
    let (tables, index, seqs) = match key {
        Some(oid) => (
            catalog.table_by_oid(oid).into_iter().collect(),
            catalog.index_by_oid(oid),
            catalog.sequence_by_oid(oid).into_iter().collect(),
        ),
        None => {
            let mut tables: Vec<_> = catalog.tables().collect();
            tables.sort_by_key(|t| t.oid);
            let mut seqs: Vec<_> = catalog.sequences().collect();
            seqs.sort_by_key(|s| s.oid);
            (tables, None, seqs)
        }
    };
    // A partitioned table's index has no storage (relkind 'I'); a partition's index
    // that belongs to one is a partition.
    let index_row = |(t, i): (&std::sync::Arc<catalog::TableDesc>, &catalog::IndexDesc)| {
        let partitioned = t.partition_key.is_some();
        let mut r = row(
            i.oid,
            &i.name,
            403,
            if partitioned {
                Value::Int4(0)
            } else {
                pages(i.rel)
            },
            if partitioned { 0.0 } else { -1.0 },
            false,
            if partitioned { "I" } else { "i" },
            i.columns.len(),
        );
        r[RELISPARTITION] = Value::Bool(i.parent.is_some());
        r
    };
    let mut out = Vec::new();
    for t in tables {
        // A partitioned table has no storage (relkind 'p', no access method).
        let partitioned = t.partition_key.is_some();
        let mut r = row(
            t.oid,
            &t.name,
            if partitioned { 0 } else { 2 },
            if partitioned {
                Value::Int4(0)
            } else {
                pages(t.rel)
            },
            catalog.stats(t.oid).map_or(-1.0, |s| s.reltuples as f32),
            !t.indexes.is_empty(),
            if partitioned { "p" } else { "r" },
            t.columns.len(),
        );
        r[RELISPARTITION] = Value::Bool(t.partition_of.is_some());
        r[RELPARTBOUND] = crate::ruleutils::partition_bound(env.session.text(), t)
            .map_or(Value::Null, Value::Text);
        // PostgreSQL enforces a foreign key with triggers on both tables, and psql's \d
        // lists foreign keys only for a table with triggers. Myriad enforces them
        // without triggers (pg_trigger is empty) but says the same of such tables. A
        // partition has its parents' keys (PostgreSQL clones them, triggers and all).
        let mut keyed = false;
        let mut level: Option<&catalog::TableDesc> = Some(t);
        while let Some(l) = level.filter(|_| !keyed) {
            keyed = !l.foreign_keys.is_empty();
            level = l
                .partition_of
                .as_ref()
                .and_then(|o| catalog.table_by_oid(o.parent))
                .map(|p| &**p);
        }
        r[RELHASTRIGGERS] =
            Value::Bool(keyed || !catalog.referencing_through_parents(t.oid).is_empty());
        r[RELOPTIONS] = reloptions(&t.options);
        r[RELCHECKS] = Value::Int2(t.checks.len() as i16);
        r[RELALLVISIBLE] = Value::Int4(
            catalog
                .stats(t.oid)
                .map_or(0, |s| i32::try_from(s.relallvisible).unwrap_or(i32::MAX)),
        );
        out.push(r);
        if key.is_none() {
            out.extend(t.indexes.iter().map(|i| index_row((t, i))));
        }
    }
    out.extend(index.map(index_row));
    for s in seqs {
        out.push(row(s.oid, &s.name, 0, pages(s.rel), 1.0, false, "S", 3));
    }
    out
}

/// pg_class's columns that differ between tables.
pub(crate) const RELCHECKS: usize = 12;

pub(crate) const RELHASTRIGGERS: usize = 14;

pub(crate) const RELISPARTITION: usize = 17;

pub(crate) const RELPARTBOUND: usize = 22;

pub(crate) const RELOPTIONS: usize = 23;

pub(crate) const RELALLVISIBLE: usize = 24;

/// A table's storage options as `pg_class.reloptions` lists them (`{fillfactor=70}`),
/// NULL for none. Myriad keeps the options' values, not whether they were given, so
/// an option at its default is not listed.
pub(crate) fn reloptions(o: &catalog::TableOptions) -> Value {
    let defaults = catalog::TableOptions::default();
    let mut items = Vec::new();
    if o.fillfactor != defaults.fillfactor {
        items.push(Value::Text(format!("fillfactor={}", o.fillfactor)));
    }
    if o.autovacuum_enabled != defaults.autovacuum_enabled {
        items.push(Value::Text(format!(
            "autovacuum_enabled={}",
            o.autovacuum_enabled
        )));
    }
    if items.is_empty() {
        return Value::Null;
    }
    Value::Array(std::sync::Arc::new(common::array::Array::from_items(
        common::types::oids::TEXT,
        items,
    )))
}

/// `pg_attribute`: the user columns of every table (attnum from 1), with their types as
/// PostgreSQL numbers them; a dropped column as PostgreSQL shows one (type 0,
/// `attisdropped`). PostgreSQL also lists system columns (negative attnum) and index
/// columns; Myriad does not yet.
pub(crate) fn pg_attribute_rows(s: &crate::session::Session, key: Option<common::Oid>) -> Vec<Row> {
    rows_of_tables(s, key, 0, |t, out| {
        for (i, c) in t.columns.iter().enumerate() {
            let (ty, typmod) = match c.dropped {
                true => (0, -1),
                false => (c.ty.oid(), c.ty.typmod()),
            };
            out.push(vec![
                Value::Oid(t.oid),
                Value::Text(c.name.clone()),
                Value::Oid(ty),
                Value::Int2(c.ty.typlen()),
                Value::Int2(i as i16 + 1),
                Value::Int4(typmod),
                Value::Bool(c.not_null),
                // An identity column's values come from its sequence, not a DEFAULT.
                Value::Bool(c.default.is_some() && c.identity.is_none()),
                Value::Text(
                    match c.identity {
                        Some(catalog::Identity::Always) => "a",
                        Some(catalog::Identity::ByDefault) => "d",
                        None => "",
                    }
                    .into(),
                ),
                Value::Bool(c.dropped),
                // The database's default collation for strings.
                Value::Oid(if c.ty.is_string() && !c.dropped {
                    100
                } else {
                    0
                }),
                Value::Text(String::new()),
                Value::Text(c.storage.code().into()),
                // No compression method chosen; the statistics target (-1: the default;
                // a dropped column's is 0).
                Value::Text(String::new()),
                Value::Int4(match (c.dropped, c.stat_target) {
                    (true, _) => 0,
                    (false, None) => -1,
                    (false, Some(t)) => i32::from(t),
                }),
            ]);
        }
        // An index's columns: its table's, renumbered, without NOT NULL, DEFAULT,
        // identity or a statistics target of their own; an expression's named as
        // PostgreSQL names it, of the expression's type.
        let first = out.len() - t.columns.len();
        for index in &t.indexes {
            for (n, c) in index.stored_columns().enumerate() {
                let mut row = match catalog::IndexDesc::expression(c) {
                    None => out[first + c].clone(),
                    Some(k) => {
                        let (Some(e), Some(template)) = (index.exprs.get(k), out.get(first)) else {
                            continue;
                        };
                        let ty = sql::binder::bind_index_expr(&s.catalog, t, &e.text, s.info)
                            .map_or(DataType::Text, |b| b.ty);
                        let mut row = template.clone();
                        row[1] = Value::Text(e.name.clone());
                        row[2] = Value::Oid(ty.oid());
                        row[3] = Value::Int2(ty.typlen());
                        row[5] = Value::Int4(ty.typmod());
                        row[9] = Value::Bool(false);
                        row[10] = Value::Oid(if ty.is_string() { 100 } else { 0 });
                        row[12] = Value::Text(ty.typstorage().into());
                        row
                    }
                };
                row[0] = Value::Oid(index.oid);
                row[4] = Value::Int2(n as i16 + 1);
                row[6] = Value::Bool(false);
                row[7] = Value::Bool(false);
                row[8] = Value::Text(String::new());
                row[14] = Value::Int4(-1);
                out.push(row);
            }
        }
    })
}

/// `pg_index`: each index's table, width and kind. Myriad builds an index before it
/// commits the CREATE INDEX that makes it visible, so every index is valid, ready and
/// live; unique checks are immediate (no DEFERRABLE yet).
pub(crate) fn pg_index_rows(s: &crate::session::Session, key: Option<common::Oid>) -> Vec<Row> {
    rows_of_tables(s, key, 1, |t, out| {
        for i in &t.indexes {
            out.push(vec![
                Value::Oid(i.oid),
                Value::Oid(t.oid),
                Value::Int2((i.columns.len() + i.include.len()) as i16),
                Value::Int2(i.columns.len() as i16),
                Value::Bool(i.unique),
                Value::Bool(false),
                Value::Bool(i.primary),
                Value::Bool(false),
                Value::Bool(true),
                Value::Bool(false),
                Value::Bool(true),
                Value::Bool(false),
                Value::Bool(true),
                Value::Bool(true),
                Value::Bool(false),
                Value::Null,
                // The predicate as `pg_get_expr` shows it (Myriad's node trees are text).
                crate::ruleutils::index_predicate(s, t, i, false).map_or(Value::Null, Value::Text),
            ]);
        }
    })
}

/// A catalog view's rows: `rows` of each table, tables in oid order.
/// [`rows_per_table`], or with `key` those of its rows whose column `col` is that oid,
/// made from the one table it is (or whose index it is).
pub(crate) fn rows_of_tables(
    s: &crate::session::Session,
    key: Option<common::Oid>,
    col: usize,
    mut rows: impl FnMut(&catalog::TableDesc, &mut Vec<Row>),
) -> Vec<Row> {
    let Some(oid) = key else {
        return rows_per_table(s, rows);
    };
    let catalog = &s.catalog;
    let table = catalog
        .table_by_oid(oid)
        .or_else(|| catalog.index_by_oid(oid).map(|(t, _)| t));
    let mut out = Vec::new();
    if let Some(t) = table {
        rows(t, &mut out);
    }
    out.retain(|r| matches!(r.get(col), Some(Value::Oid(o)) if *o == oid));
    out
}

pub(crate) fn rows_per_table(
    s: &crate::session::Session,
    mut rows: impl FnMut(&catalog::TableDesc, &mut Vec<Row>),
) -> Vec<Row> {
    let catalog = &s.catalog;
    let mut tables: Vec<_> = catalog.tables().collect();
    tables.sort_by_key(|t| t.oid);
    let mut out = Vec::new();
    for t in tables {
        rows(t, &mut out);
    }
    out
}

/// `pg_type`: the built-in types Myriad has, with PostgreSQL's OIDs, names, lengths and
/// categories.
pub(crate) fn pg_type_rows() -> Vec<Row> {
    use DataType as T;
    let types = [
        (T::Bool, "B"),
        (T::Bytea, "U"),
        (T::Int8, "N"),
        (T::Int2, "N"),
        (T::Int4, "N"),
        (T::Text, "S"),
        (T::Float4, "N"),
        (T::Float8, "N"),
        (T::Bpchar(None), "S"),
        (T::Varchar(None), "S"),
        (T::Date, "D"),
        (T::Timestamp(None), "D"),
        (T::TimestampTz(None), "D"),
        (T::Interval, "T"),
        (T::Numeric(None), "N"),
        (T::Uuid, "U"),
        (T::Oid, "N"),
        (T::Reg(common::value::RegKind::Class), "N"),
        (T::Reg(common::value::RegKind::Type), "N"),
        (T::Reg(common::value::RegKind::Namespace), "N"),
    ];
    // The collatable types use the database's default collation (`pg_collation` 100).
    let collation = |t: &DataType| if t.is_string() { 100 } else { 0 };
    let mut rows: Vec<Row> = Vec::new();
    for (t, category) in types {
        let array = t.array().expect("every base type has an array type");
        rows.push(vec![
            Value::Oid(t.oid()),
            Value::Text(t.internal_name().into()),
            Value::Oid(11),
            Value::Int2(t.typlen()),
            Value::Text("b".into()),
            Value::Text(category.into()),
            Value::Oid(0),
            Value::Oid(array.oid()),
            Value::Oid(collation(&t)),
            Value::Oid(0),
            Value::Text(t.typstorage().into()),
            Value::Bool(false),
            Value::Oid(0),
            Value::Int4(-1),
        ]);
        rows.push(vec![
            Value::Oid(array.oid()),
            Value::Text(format!("_{}", t.internal_name())),
            Value::Oid(11),
            Value::Int2(-1),
            Value::Text("b".into()),
            Value::Text("A".into()),
            Value::Oid(t.oid()),
            Value::Oid(0),
            Value::Oid(collation(&t)),
            Value::Oid(0),
            Value::Text("x".into()),
            Value::Bool(false),
            Value::Oid(0),
            Value::Int4(-1),
        ]);
    }
    // void, the pseudo-type of a function that returns nothing (`pg_sleep`).
    rows.push(vec![
        Value::Oid(DataType::Void.oid()),
        Value::Text(DataType::Void.internal_name().into()),
        Value::Oid(11),
        Value::Int2(DataType::Void.typlen()),
        Value::Text("p".into()),
        Value::Text("P".into()),
        Value::Oid(0),
        Value::Oid(0),
        Value::Oid(0),
        Value::Oid(0),
        Value::Text("p".into()),
        Value::Bool(false),
        Value::Oid(0),
        Value::Int4(-1),
    ]);
    rows.sort_by_key(|r| r[0].as_i64());
    rows
}
