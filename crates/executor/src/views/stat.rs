//! The views of what each table's and index's work counted (`txn::relstat`, txn rule
//! 10): `pg_stat_user_tables`, `pg_statio_user_tables`, `pg_stat_user_indexes`, as
//! PostgreSQL 15 defines them over its `pg_stat_get_*` functions.

use std::collections::HashMap;

use common::{Oid, Value};
use txn::relstat::{BlockCounts, RelCounts};

use crate::env::{Env, Row};

fn n(v: u64) -> Value {
    Value::Int8(i64::try_from(v).unwrap_or(i64::MAX))
}

fn time(t: Option<std::time::SystemTime>) -> Value {
    t.map_or(Value::Null, |t| {
        Value::TimestampTz(common::datetime::session::timestamptz_of(t))
    })
}

/// A sum over a table's indexes: NULL when it has none (PostgreSQL's `sum` over its
/// join with `pg_index`).
fn over_indexes(
    t: &catalog::TableDesc,
    counts: &HashMap<Oid, RelCounts>,
    what: impl Fn(&RelCounts) -> u64,
) -> Option<u64> {
    (!t.indexes.is_empty()).then(|| {
        t.indexes
            .iter()
            .map(|i| counts.get(&i.oid).map_or(0, &what))
            .sum()
    })
}

/// `pg_stat_user_tables`: a row per table.
pub(crate) fn user_tables(env: Env) -> Vec<Row> {
    let counts = env.tx.manager().rel_stats().all();
    crate::views::rows_per_table(env.session, |t, out| {
        let c = counts.get(&t.oid).copied().unwrap_or_default();
        let idx_scan = over_indexes(t, &counts, |c| c.numscans);
        let idx_fetch = over_indexes(t, &counts, |c| c.tuples_fetched);
        out.push(vec![
            Value::Oid(t.oid),
            Value::Text("public".into()),
            Value::Text(t.name.clone()),
            n(c.numscans),
            n(c.tuples_returned),
            idx_scan.map_or(Value::Null, n),
            idx_fetch.map_or(Value::Null, |f| n(f + c.tuples_fetched)),
            n(c.tuples_inserted),
            n(c.tuples_updated),
            n(c.tuples_deleted),
            n(c.tuples_hot_updated),
            Value::Int8(c.live_tuples),
            Value::Int8(c.dead_tuples),
            n(c.mod_since_analyze),
            n(c.ins_since_vacuum),
            time(c.last_vacuum),
            time(c.last_autovacuum),
            time(c.last_analyze),
            time(c.last_autoanalyze),
            n(c.vacuum_count),
            n(c.autovacuum_count),
            n(c.analyze_count),
            n(c.autoanalyze_count),
        ]);
    })
}

/// `pg_statio_user_tables`: a row per table. The TOAST columns count the table's TOAST
/// relation (NULL for a table without one, as PostgreSQL's); its index columns are NULL:
/// Myriad's TOAST relations have no index (access rule 12).
pub(crate) fn statio_user_tables(env: Env) -> Vec<Row> {
    let blocks = env.tx.manager().rel_stats().all_blocks();
    let of = |file| blocks.get(&file).copied().unwrap_or_default();
    crate::views::rows_per_table(env.session, |t, out| {
        let c = of(t.rel);
        let over_indexes = |what: &dyn Fn(BlockCounts) -> u64| {
            (!t.indexes.is_empty()).then(|| t.indexes.iter().map(|i| what(of(i.rel))).sum::<u64>())
        };
        let idx_read = over_indexes(&|b| b.fetched - b.hit);
        let idx_hit = over_indexes(&|b| b.hit);
        out.push(vec![
            Value::Oid(t.oid),
            Value::Text("public".into()),
            Value::Text(t.name.clone()),
            n(c.fetched - c.hit),
            n(c.hit),
            idx_read.map_or(Value::Null, n),
            idx_hit.map_or(Value::Null, n),
            t.toast
                .map_or(Value::Null, |r| n(of(r).fetched - of(r).hit)),
            t.toast.map_or(Value::Null, |r| n(of(r).hit)),
            Value::Null,
            Value::Null,
        ]);
    })
}

/// `pg_stat_user_indexes`: a row per index.
pub(crate) fn user_indexes(env: Env) -> Vec<Row> {
    let counts = env.tx.manager().rel_stats().all();
    crate::views::rows_per_table(env.session, |t, out| {
        let mut indexes: Vec<_> = t.indexes.iter().collect();
        indexes.sort_by_key(|i| i.oid);
        for i in indexes {
            let c = counts.get(&i.oid).copied().unwrap_or_default();
            out.push(vec![
                Value::Oid(t.oid),
                Value::Oid(i.oid),
                Value::Text("public".into()),
                Value::Text(t.name.clone()),
                Value::Text(i.name.clone()),
                n(c.numscans),
                n(c.tuples_returned),
                n(c.tuples_fetched),
            ]);
        }
    })
}

/// The database's row counts (`pg_stat_database`'s `tup_*` columns): every
/// relation's together.
pub(crate) fn database_rows(env: Env) -> [u64; 5] {
    let mut sums = [0u64; 5];
    for c in env.tx.manager().rel_stats().all().values() {
        sums[0] += c.tuples_returned;
        sums[1] += c.tuples_fetched;
        sums[2] += c.tuples_inserted;
        sums[3] += c.tuples_updated;
        sums[4] += c.tuples_deleted;
    }
    sums
}
