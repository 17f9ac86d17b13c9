//! Foreign keys: the checks a write makes (PostgreSQL's `ri_triggers.c`, as immediate
//! checks at the end of each statement), and ADD FOREIGN KEY's check of existing rows.
//!
//! A row of the referencing table C whose key columns are all non-NULL (MATCH SIMPLE;
//! MATCH FULL also refuses a mix of NULL and non-NULL) must match a row of the
//! referenced table P. The check probes P's unique index for the key and row-locks the
//! version it finds (FOR KEY SHARE), so no transaction can delete it or change its key until
//! this one ends; a version another transaction is changing is waited for, as a writer
//! waits. A version this transaction wrote counts, so a statement may insert a parent
//! and its child, in either order, before the check runs.
//!
//! A key of P that a DELETE or an UPDATE of its key columns removes must not be
//! referenced: with NO ACTION only if no other row of P now has the key. C's rows are
//! found through an index whose leading columns are the key's, else by one scan of C
//! for all the statement's keys. A referencing version inserted by a running
//! transaction is waited for (it row-locked the parent, so this happens only in a
//! race lost by that transaction); committed, or this transaction's own, it is a
//! violation.
//!
//! The lock taken on P's row is FOR KEY SHARE, as PostgreSQL's: an UPDATE of P that
//! keeps the key neither waits for it nor makes the check wait.

use std::collections::BTreeSet;
use std::ops::Bound;

use access::heapam::{self, HeapWrite};
use access::nbtree::ScanDirection;
use access::visibility::{self, Liveness};
use catalog::{FkAction, ForeignKey, IndexDesc, TableDesc};
use common::{ItemPointer, PgError, PgResult, RowLockMode, SqlState, Value};
use sql::bound::ForeignKeyChecks;
use txn::Isolation;

use crate::ExecContext;
use crate::index::{btree, columns_key_text};
use crate::sortkey::RowKey;

/// A key as a set member, equal as the btree compares (1.0 = 1.00); `None` when a part
/// is NULL (a NULL key matches nothing).
fn key_id(key: &[Value]) -> Option<RowKey> {
    (!key.iter().any(Value::is_null)).then(|| RowKey(key.to_vec()))
}

/// The key `row` of the referencing table holds for `fk`, or `None` when NULLs exempt
/// it; MATCH FULL's error for a partly NULL key.
fn referencing_key(
    table: &TableDesc,
    fk: &ForeignKey,
    row: &[Value],
) -> PgResult<Option<Vec<Value>>> {
    let key: Vec<Value> = fk.columns.iter().map(|&c| row[c].clone()).collect();
    let nulls = key.iter().filter(|v| v.is_null()).count();
    if nulls == 0 {
        return Ok(Some(key));
    }
    if fk.match_full && nulls < key.len() {
        return Err(PgError::new(
            SqlState::FOREIGN_KEY_VIOLATION,
            format!(
                "insert or update on table \"{}\" violates foreign key constraint \"{}\"",
                table.name, fk.name
            ),
        )
        .with_detail("MATCH FULL does not allow mixing of null and nonnull key values."));
    }
    Ok(None)
}

fn not_present(
    text: &common::value::TextContext,
    table: &TableDesc,
    fk: &ForeignKey,
    referenced: &TableDesc,
    key: &[Value],
) -> PgError {
    PgError::new(
        SqlState::FOREIGN_KEY_VIOLATION,
        format!(
            "insert or update on table \"{}\" violates foreign key constraint \"{}\"",
            table.name, fk.name
        ),
    )
    .with_detail(format!(
        "{} is not present in table \"{}\".",
        columns_key_text(text, table, &fk.columns, key),
        referenced.name
    ))
}

/// The index of `referenced` that `fk` references: its own, or in a partition of the
/// table `fk` references, the partition's index that belongs to that one (at any depth).
fn ref_index<'a>(
    cx: &ExecContext,
    referenced: &'a TableDesc,
    fk: &ForeignKey,
) -> PgResult<&'a IndexDesc> {
    let belongs = |i: &IndexDesc| {
        let mut at = Some(i.oid);
        while let Some(o) = at {
            if o == fk.ref_index {
                return true;
            }
            at = cx
                .session
                .catalog
                .index_by_oid(o)
                .and_then(|(_, x)| x.parent);
        }
        false
    };
    referenced
        .indexes
        .iter()
        .find(|i| i.oid == fk.ref_index)
        .or_else(|| referenced.indexes.iter().find(|i| belongs(i)))
        .ok_or_else(|| {
            PgError::internal(format!(
                "index {} of foreign key \"{}\" is missing",
                fk.ref_index, fk.name
            ))
        })
}

/// Where a row of partitioned table `referenced` with `key` (in `index`'s column order,
/// which holds the partition key: partitioned keys must) would be: the leaf partition
/// the key routes to, level by level, and that partition's index belonging to `index`.
/// Each partition on the way is locked RowShare and read under the lock. `None` for a
/// table that is not partitioned; `Some(None)` when no partition takes the key.
type Home = Option<Option<(std::sync::Arc<TableDesc>, IndexDesc)>>;

fn partition_home(
    cx: &ExecContext,
    referenced: &TableDesc,
    index: &IndexDesc,
    key: &[Value],
) -> PgResult<Home> {
    if referenced.partition_key.is_none() {
        return Ok(None);
    }
    let mut row = vec![Value::Null; referenced.columns.len()];
    for (&c, v) in index.columns.iter().zip(key) {
        if let Some(slot) = row.get_mut(c) {
            *slot = v.clone();
        }
    }
    let mut catalog = cx.session.catalog.clone();
    let mut at = (referenced.oid, index.oid);
    loop {
        let Some(t) = catalog.table_by_oid(at.0).cloned() else {
            return Ok(Some(None));
        };
        let Some(pk) = &t.partition_key else {
            let leaf_index = t.indexes.iter().find(|i| i.oid == at.1).cloned();
            return Ok(Some(leaf_index.map(|i| (t, i))));
        };
        let values = cx.partition_key_values(&t, &row)?;
        let Some(next) = catalog
            .partitions(t.oid)
            .and_then(|p| p.route(pk.strategy, &values))
        else {
            return Ok(Some(None));
        };
        cx.tx
            .lock(
                txn::lock::LockTag::Relation(next),
                txn::lock::LockMode::RowShare,
                false,
            )
            .map_err(|e| e.to_pg(&format!("relation with OID {next}")))?;
        catalog = cx.catalog.snapshot(cx.tx);
        let child_index = catalog
            .table_by_oid(next)
            .and_then(|n| n.indexes.iter().find(|i| i.parent == Some(at.1)))
            .map(|i| i.oid);
        let Some(child_index) = child_index else {
            return Ok(Some(None));
        };
        at = (next, child_index);
    }
}

/// Lock the row of `referenced` whose key (in `fk.ref_index`'s column order) is `key`
/// (FOR KEY SHARE); false if there is none. A version another transaction is changing
/// in a way that conflicts (deleting it, changing its key) or inserting is waited for
/// only when no other version of the key can be locked: an update that kept the key
/// leaves both its versions lockable, and one of them will do.
fn lock_referenced(
    cx: &ExecContext,
    referenced: &TableDesc,
    fk: &ForeignKey,
    key: &[Value],
) -> PgResult<bool> {
    let index = ref_index(cx, referenced, fk)?;
    // A partitioned table's row is in the partition its key routes to.
    let home = partition_home(cx, referenced, index, key)?;
    let (referenced, index) = match &home {
        None => (referenced, index),
        Some(None) => return Ok(false),
        Some(Some((t, i))) => (&**t, i),
    };
    let want = key_id(key);
    let xid = cx.tx.xid()?;
    let rr = cx.tx.isolation() == Isolation::RepeatableRead;
    loop {
        let tids: Vec<ItemPointer> = btree(cx, index)
            .scan(
                Bound::Included(key.to_vec()),
                Bound::Included(key.to_vec()),
                ScanDirection::Forward,
            )?
            .map(|e| e.map(|(_, tid)| tid))
            .collect::<PgResult<_>>()?;
        let mut blocked = None;
        for first in tids {
            let mut tid = first;
            loop {
                let mode = RowLockMode::KeyShare;
                let newer = match heapam::heap_lock_entry(
                    cx.pool,
                    referenced.rel,
                    tid,
                    xid,
                    cx.tx,
                    mode,
                )? {
                    HeapWrite::Done(_) => return Ok(true),
                    HeapWrite::BeingModified(other) => {
                        blocked.get_or_insert(other);
                        break;
                    }
                    HeapWrite::Moved => return Err(crate::moved_to_another_partition()),
                    HeapWrite::Updated(Some(_)) if rr => {
                        return Err(crate::serialization_failure("update"));
                    }
                    // A committed update: its newer version.
                    HeapWrite::Updated(Some(newer)) => newer,
                    // Updated by this transaction: its newer version is the row, with
                    // an entry of its own only if the update was not HOT (access
                    // rule 11).
                    HeapWrite::SelfModified => {
                        match heapam::heap_entry_newer(cx.pool, referenced.rel, tid)? {
                            Some(newer) => newer,
                            None => break,
                        }
                    }
                    // Deleted (by this transaction too), or never there.
                    HeapWrite::Updated(None) | HeapWrite::Invisible => break,
                };
                // The newer version is the row if its key is the same.
                let Some(bytes) = heapam::heap_fetch(cx.pool, referenced.rel, newer)? else {
                    break;
                };
                let row = access::tuple::decode_with(&bytes, &referenced.column_types(), cx.pool)?;
                if key_id(&crate::index::key_of(&row, index)) != want {
                    break;
                }
                tid = newer;
            }
        }
        let Some(other) = blocked else {
            return Ok(false);
        };
        crate::wait_for_writer(cx.tx, referenced, other, false)?;
    }
}

/// The keys of `fk`'s referenced table, as `ref_index` orders them, that `rows` of the
/// referencing `table` hold (each once).
fn distinct_keys(
    table: &TableDesc,
    fk: &ForeignKey,
    rows: &[&[Value]],
) -> PgResult<Vec<Vec<Value>>> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for row in rows {
        if let Some(key) = referencing_key(table, fk, row)?
            && seen.insert(key_id(&key))
        {
            out.push(key);
        }
    }
    Ok(out)
}

/// New or changed rows of `table` reference rows that exist (and are now locked).
pub(crate) fn check_outgoing(
    cx: &ExecContext,
    table: &TableDesc,
    fks: &ForeignKeyChecks,
    rows: &[&[Value]],
) -> PgResult<()> {
    for (fk, referenced) in &fks.outgoing {
        for key in distinct_keys(table, fk, rows)? {
            if !lock_referenced(cx, referenced, fk, &key)? {
                return Err(not_present(cx.session.text(), table, fk, referenced, &key));
            }
        }
    }
    Ok(())
}

/// Is a row of `table` with `key` in `index` live now (committed or this transaction's,
/// not deleted)? Rows being changed by running transactions count as not there.
fn key_live(
    cx: &ExecContext,
    table: &TableDesc,
    index: &IndexDesc,
    key: &[Value],
) -> PgResult<bool> {
    let home = partition_home(cx, table, index, key)?;
    let (table, index) = match &home {
        None => (table, index),
        Some(None) => return Ok(false),
        Some(Some((t, i))) => (&**t, i),
    };
    for entry in btree(cx, index).scan(
        Bound::Included(key.to_vec()),
        Bound::Included(key.to_vec()),
        ScanDirection::Forward,
    )? {
        let (_, tid) = entry?;
        if crate::index::chain_liveness(cx, table, tid)? == Liveness::Live {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Keys that `old` rows of `table` held and that are gone: no row referencing them may
/// remain (PostgreSQL's NO ACTION and RESTRICT checks).
pub(crate) fn check_incoming(
    cx: &ExecContext,
    table: &TableDesc,
    fks: &ForeignKeyChecks,
    old: &[&[Value]],
    new: &[&[Value]],
) -> PgResult<()> {
    for (fk, referencing) in &fks.incoming {
        check_incoming_key(cx, table, fk, referencing, old, new)?;
    }
    // Keys referencing a partition below: the rows that were, or are, in it.
    for (below, fk, referencing) in &fks.incoming_below {
        let old = rows_in_partition(cx, below, table, old)?;
        if old.is_empty() {
            continue;
        }
        let new = rows_in_partition(cx, below, table, new)?;
        check_incoming_key(cx, below, fk, referencing, &old, &new)?;
    }
    Ok(())
}

/// The `rows` (of `top`'s layout, which is its partitions': partition rule 1) that are
/// in `partition`, below `top`: the leaf each routes to is it or below it.
fn rows_in_partition<'r>(
    cx: &ExecContext,
    partition: &TableDesc,
    top: &TableDesc,
    rows: &[&'r [Value]],
) -> PgResult<Vec<&'r [Value]>> {
    let catalog = &cx.session.catalog;
    let mut out = Vec::new();
    for &r in rows {
        let mut at = cx.routed_in(catalog, top, r)?;
        while let Some(oid) = at.filter(|&o| o != top.oid) {
            if oid == partition.oid {
                out.push(r);
                break;
            }
            at = catalog
                .table_by_oid(oid)
                .and_then(|t| t.partition_of.as_ref())
                .map(|o| o.parent);
        }
    }
    Ok(out)
}

/// [`check_incoming`] for one key `fk` of `referencing` that references `table`.
fn check_incoming_key(
    cx: &ExecContext,
    table: &TableDesc,
    fk: &catalog::ForeignKey,
    referencing: &TableDesc,
    old: &[&[Value]],
    new: &[&[Value]],
) -> PgResult<()> {
    {
        let index = ref_index(cx, table, fk)?;
        let action = if new.is_empty() {
            fk.on_delete
        } else {
            fk.on_update
        };
        let kept: BTreeSet<Option<RowKey>> = new
            .iter()
            .map(|r| key_id(&crate::index::key_of(r, index)))
            .collect();
        let mut gone = Vec::new();
        let mut gone_at = Vec::new();
        let mut seen = BTreeSet::new();
        for (at, &row) in old.iter().enumerate() {
            let key = crate::index::key_of(row, index);
            let bytes = key_id(&key);
            // A NULL key references nothing; an unchanged key is still there.
            if bytes.is_none() || kept.contains(&bytes) || !seen.insert(bytes) {
                continue;
            }
            if action == FkAction::NoAction && key_live(cx, table, index, &key)? {
                continue;
            }
            gone.push(key);
            gone_at.push(at);
        }
        if let Some(key) = first_referenced(cx, referencing, fk, &gone)? {
            // PostgreSQL's check runs on the partition the row was in, and names it,
            // unless an UPDATE moved the row to another (`new` is parallel to `old`
            // for an UPDATE): then on the table written.
            let at = gone.iter().position(|k| *k == key).map(|i| gone_at[i]);
            let catalog = &cx.session.catalog;
            let leaf = match at {
                Some(at) if table.partition_key.is_some() => {
                    let was = cx.routed_in(catalog, table, old[at])?;
                    let stays = match new.get(at) {
                        Some(row) => cx.routed_in(catalog, table, row)?,
                        None => was,
                    };
                    was.filter(|_| was == stays)
                        .and_then(|oid| catalog.table_by_oid(oid))
                }
                _ => None,
            };
            let name = leaf.map_or(&table.name, |l| &l.name);
            return Err(PgError::new(
                SqlState::FOREIGN_KEY_VIOLATION,
                format!(
                    "update or delete on table \"{}\" violates foreign key constraint \"{}\" on table \"{}\"",
                    name, fk.name, referencing.name
                ),
            )
            .with_detail(format!(
                "{} is still referenced from table \"{}\".",
                columns_key_text(cx.session.text(), table, &fk.ref_columns, &key),
                referencing.name
            )));
        }
    }
    Ok(())
}

/// DETACH of partition `table` from a table foreign keys reference (`fks`, each with
/// its referencing table): no row of the partition may be referenced, as its rows
/// leave the referenced table (PostgreSQL's check; its message names the key's clone
/// on the partition, which Myriad does not make: the key's own name here). `rows`: the
/// partition's rows.
pub(crate) fn check_detach(
    cx: &ExecContext,
    table: &TableDesc,
    fks: &[(ForeignKey, std::sync::Arc<TableDesc>)],
    rows: &[Vec<Value>],
) -> PgResult<()> {
    for (fk, referencing) in fks {
        let mut seen = BTreeSet::new();
        let keys: Vec<Vec<Value>> = rows
            .iter()
            .map(|r| {
                fk.ref_columns
                    .iter()
                    .map(|&c| r.get(c).cloned().unwrap_or(Value::Null))
                    .collect::<Vec<_>>()
            })
            .filter(|k| key_id(k).is_some_and(|id| seen.insert(id)))
            .collect();
        if let Some(key) = first_referenced(cx, referencing, fk, &keys)? {
            return Err(PgError::new(
                SqlState::FOREIGN_KEY_VIOLATION,
                format!(
                    "removing partition \"{}\" violates foreign key constraint \"{}\"",
                    table.name, fk.name
                ),
            )
            .with_detail(format!(
                "{} is still referenced from table \"{}\".",
                crate::index::columns_key_text(cx.session.text(), referencing, &fk.columns, &key),
                referencing.name
            )));
        }
    }
    Ok(())
}

/// The first of `keys` (referenced-side, in `fk.ref_index` order, which is `fk.columns`'
/// order) that a live row of `referencing` holds.
fn first_referenced(
    cx: &ExecContext,
    referencing: &TableDesc,
    fk: &ForeignKey,
    keys: &[Vec<Value>],
) -> PgResult<Option<Vec<Value>>> {
    if keys.is_empty() {
        return Ok(None);
    }
    if referencing.partition_key.is_some() {
        return first_referenced_in_partitions(cx, referencing, fk, keys);
    }
    // An index whose leading columns are the key's columns (in some order).
    let n = fk.columns.len();
    let usable = referencing
        .indexes
        .iter()
        .find(|i| i.columns.len() >= n && i.columns[..n].iter().all(|c| fk.columns.contains(c)));
    let types = referencing.column_types();
    loop {
        let mut wait = None;
        let mut found = None;
        let mut consider = |liveness: Liveness, key: &[Value]| -> PgResult<bool> {
            match liveness {
                Liveness::Dead => Ok(false),
                Liveness::Live => {
                    found = Some(key.to_vec());
                    Ok(true)
                }
                Liveness::InDoubt(x) => {
                    wait = Some(x);
                    Ok(true)
                }
            }
        };
        match usable {
            Some(index) => {
                'keys: for key in keys {
                    // The key in the index's column order.
                    let probe: Vec<Value> = index.columns[..n]
                        .iter()
                        .map(|c| {
                            let k = fk.columns.iter().position(|x| x == c).expect("checked");
                            key[k].clone()
                        })
                        .collect();
                    for entry in btree(cx, index).scan(
                        Bound::Included(probe.clone()),
                        Bound::Included(probe),
                        ScanDirection::Forward,
                    )? {
                        let (_, tid) = entry?;
                        let liveness = crate::index::chain_liveness(cx, referencing, tid)?;
                        if consider(liveness, key)? {
                            break 'keys;
                        }
                    }
                }
            }
            None => {
                let wanted: BTreeSet<Option<RowKey>> = keys.iter().map(|k| key_id(k)).collect();
                for item in heapam::HeapScan::new(cx.pool, referencing.rel)? {
                    let (_, bytes) = item?;
                    let h = access::tuple::header(&bytes)?;
                    if access::visibility::aborted_insert(&h, cx.tx)? {
                        continue;
                    }
                    let row = access::tuple::decode_with(&bytes, &types, cx.pool)?;
                    let key: Vec<Value> = fk.columns.iter().map(|&c| row[c].clone()).collect();
                    let kb = key_id(&key);
                    if kb.is_some()
                        && wanted.contains(&kb)
                        && consider(visibility::liveness(&h, cx.tx)?, &key)?
                    {
                        break;
                    }
                }
            }
        }
        match (found, wait) {
            (Some(key), _) => return Ok(Some(key)),
            (None, Some(xid)) => {
                crate::wait_for_writer(cx.tx, referencing, xid, false)?;
            }
            (None, None) => return Ok(None),
        }
    }
}

/// [`first_referenced`] of partitioned table `referencing`: in its leaf partitions, each
/// locked RowShare as PostgreSQL's check of the referencing rows locks them. Where one
/// key column is the whole partition key of every level, each key is looked for in the
/// one partition it routes to; else every partition is looked in.
fn first_referenced_in_partitions(
    cx: &ExecContext,
    referencing: &TableDesc,
    fk: &ForeignKey,
    keys: &[Vec<Value>],
) -> PgResult<Option<Vec<Value>>> {
    let catalog = &cx.session.catalog;
    let lock = |leaf: &TableDesc| crate::lock_relation(cx.tx, leaf, txn::lock::LockMode::RowShare);
    let routed = referencing
        .partition_key
        .as_ref()
        .and_then(|k| match k.columns.as_slice() {
            [c] => fk.columns.iter().position(|x| x == c).map(|pos| (*c, pos)),
            _ => None,
        })
        .filter(|&(c, _)| planner::partition::lookup_routes(catalog, referencing, c));
    match routed {
        Some((col, pos)) => {
            for key in keys {
                for leaf in
                    planner::partition::lookup_leaves(catalog, referencing, col, &key[pos], None)
                {
                    lock(&leaf)?;
                    if let Some(found) = first_referenced(cx, &leaf, fk, std::slice::from_ref(key))?
                    {
                        return Ok(Some(found));
                    }
                }
            }
        }
        None => {
            for leaf in catalog.descendants_ref(referencing.oid) {
                if leaf.partition_key.is_some() {
                    continue;
                }
                lock(leaf)?;
                if let Some(found) = first_referenced(cx, leaf, fk, keys)? {
                    return Ok(Some(found));
                }
            }
        }
    }
    Ok(None)
}

/// ALTER TABLE ADD FOREIGN KEY: every row of `table` (as this statement sees it) must
/// reference a row of `referenced` that it sees (the caller holds locks that keep
/// writers of both out).
pub(crate) fn validate_new_key(
    cx: &ExecContext,
    table: &TableDesc,
    referenced: &TableDesc,
    fk: &ForeignKey,
) -> PgResult<()> {
    if table.partition_key.is_some() {
        // Its rows are its leaves' (locked with it).
        for leaf in cx.session.catalog.descendants_ref(table.oid) {
            if leaf.partition_key.is_none() {
                validate_new_key(cx, leaf, referenced, fk)?;
            }
        }
        return Ok(());
    }
    let index = ref_index(cx, referenced, fk)?;
    let types = table.column_types();
    let mut present = BTreeSet::new();
    let mut scan = crate::exec::TableScan::new(cx.env(), table.rel, types)?;
    while let Some((_, row)) = scan.next_row()? {
        let Some(key) = referencing_key(table, fk, &row)? else {
            continue;
        };
        let bytes = key_id(&key);
        if present.contains(&bytes) {
            continue;
        }
        let mut found = false;
        let home = partition_home(cx, referenced, index, &key)?;
        let (target, target_index) = match &home {
            None => (referenced, index),
            Some(None) => return Err(not_present(cx.session.text(), table, fk, referenced, &key)),
            Some(Some((t, i))) => (&**t, i),
        };
        for entry in btree(cx, target_index).scan(
            Bound::Included(key.clone()),
            Bound::Included(key.clone()),
            ScanDirection::Forward,
        )? {
            let (_, tid) = entry?;
            if heapam::heap_hot_fetch(cx.pool, target.rel, tid, cx.snapshot, cx.tx)?.is_some() {
                found = true;
                break;
            }
        }
        if !found {
            return Err(not_present(cx.session.text(), table, fk, referenced, &key));
        }
        present.insert(bytes);
    }
    Ok(())
}
