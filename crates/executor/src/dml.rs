//! INSERT, UPDATE and DELETE: compute every change first, check constraints, then apply.
//!
//! Statement atomicity without transactions (until the transactions issue lands): all new
//! rows are computed and every NOT NULL and unique check runs before the first page is
//! changed, so a statement that fails on a constraint or an expression error changes
//! nothing. Unique keys are checked by scanning the table (no indexes yet); the check
//! follows PostgreSQL's per-row order for UPDATE, so `SET id = id + 1` fails or succeeds
//! exactly where PostgreSQL's immediate unique check would.

use std::collections::HashMap;

use access::heapam;
use catalog::TableDesc;
use common::{ItemPointer, PgError, PgResult, SqlState, Value};
use sql::bound::{BoundDelete, BoundUpdate, Returning};
use storage::bufmgr::BufferPool;

use crate::eval::{Row, eval};
use crate::exec::TableScan;

/// Canonical bytes of a key, equal exactly when the values are equal under the type's
/// equality (`char(n)` blanks and `-0` included); `None` if any part is NULL, since NULLs
/// never conflict.
fn key_bytes(row: &[Value], cols: &[usize]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for &c in cols {
        let part = match &row[c] {
            Value::Null => return None,
            Value::Float4(f) => canonical_float(*f as f64),
            Value::Float8(f) => canonical_float(*f),
            v @ (Value::Int2(_) | Value::Int4(_) | Value::Int8(_)) => {
                v.as_i64().unwrap_or(0).to_string()
            }
            Value::Bool(b) => b.to_string(),
            v => v.as_str().unwrap_or_default().to_string(),
        };
        out.extend_from_slice(&(part.len() as u32).to_le_bytes());
        out.extend_from_slice(part.as_bytes());
    }
    Some(out)
}

fn canonical_float(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f == 0.0 {
        "0".into()
    } else {
        format!("{f:e}")
    }
}

fn format_key(table: &TableDesc, cols: &[usize], row: &[Value]) -> String {
    let names: Vec<&str> = cols
        .iter()
        .map(|&c| table.columns[c].name.as_str())
        .collect();
    let vals: Vec<String> = cols
        .iter()
        .map(|&c| row[c].to_text().unwrap_or_else(|| "null".into()))
        .collect();
    format!(
        "Key ({})=({}) already exists.",
        names.join(", "),
        vals.join(", ")
    )
}

fn check_not_null(table: &TableDesc, row: &[Value]) -> PgResult<()> {
    for (i, c) in table.columns.iter().enumerate() {
        if c.not_null && row[i].is_null() {
            let vals: Vec<String> = row
                .iter()
                .map(|v| v.to_text().unwrap_or_else(|| "null".into()))
                .collect();
            return Err(PgError::new(
                SqlState::NOT_NULL_VIOLATION,
                format!(
                    "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                    c.name, table.name
                ),
            )
            .with_detail(format!("Failing row contains ({}).", vals.join(", "))));
        }
    }
    Ok(())
}

/// Multisets of the table's current keys, one per unique constraint.
struct KeySets {
    sets: Vec<HashMap<Vec<u8>, u32>>,
}

impl KeySets {
    fn load(pool: &BufferPool, table: &TableDesc) -> PgResult<KeySets> {
        let mut sets = vec![HashMap::new(); table.keys.len()];
        if !table.keys.is_empty() {
            let mut scan = TableScan::new(pool, table.rel, table.column_types())?;
            while let Some((_, row)) = scan.next_row()? {
                for (k, set) in table.keys.iter().zip(sets.iter_mut()) {
                    if let Some(b) = key_bytes(&row, &k.columns) {
                        *set.entry(b).or_insert(0) += 1;
                    }
                }
            }
        }
        Ok(KeySets { sets })
    }

    fn remove(&mut self, table: &TableDesc, row: &[Value]) {
        for (k, set) in table.keys.iter().zip(self.sets.iter_mut()) {
            if let Some(b) = key_bytes(row, &k.columns)
                && let Some(n) = set.get_mut(&b)
            {
                *n -= 1;
                if *n == 0 {
                    set.remove(&b);
                }
            }
        }
    }

    /// Add `row`'s keys, failing with 23505 if one is already present.
    fn add(&mut self, table: &TableDesc, row: &[Value]) -> PgResult<()> {
        for (k, set) in table.keys.iter().zip(self.sets.iter()) {
            if let Some(b) = key_bytes(row, &k.columns)
                && set.contains_key(&b)
            {
                return Err(PgError::new(
                    SqlState::UNIQUE_VIOLATION,
                    format!(
                        "duplicate key value violates unique constraint \"{}\"",
                        k.name
                    ),
                )
                .with_detail(format_key(table, &k.columns, row)));
            }
        }
        for (k, set) in table.keys.iter().zip(self.sets.iter_mut()) {
            if let Some(b) = key_bytes(row, &k.columns) {
                *set.entry(b).or_insert(0) += 1;
            }
        }
        Ok(())
    }
}

fn returning_rows(r: Option<&Returning>, rows: &[Row]) -> PgResult<Vec<Row>> {
    let Some(r) = r else { return Ok(Vec::new()) };
    rows.iter()
        .map(|row| {
            r.exprs
                .iter()
                .map(|e| eval(e, row))
                .collect::<PgResult<Row>>()
        })
        .collect()
}

/// Insert `rows` (full width, already cast); returns the RETURNING rows.
pub fn insert(
    pool: &BufferPool,
    table: &TableDesc,
    rows: Vec<Row>,
    returning: Option<&Returning>,
) -> PgResult<Vec<Row>> {
    let types = table.column_types();
    // Length checks of char(n)/varchar(n) happened in the casts; NOT NULL and keys here.
    for row in &rows {
        check_not_null(table, row)?;
    }
    let mut keys = KeySets::load(pool, table)?;
    for row in &rows {
        keys.add(table, row)?;
    }
    let out = returning_rows(returning, &rows)?;
    let encoded = rows
        .iter()
        .map(|r| access::tuple::encode(r, &types))
        .collect::<PgResult<Vec<_>>>()?;
    for t in &encoded {
        heapam::heap_insert(pool, table.rel, t)?;
    }
    Ok(out)
}

fn matching_rows(
    pool: &BufferPool,
    table: &TableDesc,
    filter: Option<&sql::bound::Expr>,
) -> PgResult<Vec<(ItemPointer, Row)>> {
    let mut scan = TableScan::new(pool, table.rel, table.column_types())?;
    let mut out = Vec::new();
    while let Some((tid, row)) = scan.next_row()? {
        match filter {
            Some(f) if eval(f, &row)? != Value::Bool(true) => {}
            _ => out.push((tid, row)),
        }
    }
    Ok(out)
}

/// Returns (rows changed, RETURNING rows).
pub fn update(pool: &BufferPool, u: &BoundUpdate) -> PgResult<(usize, Vec<Row>)> {
    let table = &u.table;
    let targets = matching_rows(pool, table, u.filter.as_ref())?;
    let mut new_rows = Vec::with_capacity(targets.len());
    for (_, old) in &targets {
        let mut new = old.clone();
        for (c, e) in &u.assignments {
            new[*c] = eval(e, old)?;
        }
        check_not_null(table, &new)?;
        new_rows.push(new);
    }
    if !table.keys.is_empty() && !targets.is_empty() {
        let mut keys = KeySets::load(pool, table)?;
        for ((_, old), new) in targets.iter().zip(&new_rows) {
            keys.remove(table, old);
            keys.add(table, new)?;
        }
    }
    let out = returning_rows(u.returning.as_ref(), &new_rows)?;
    let types = table.column_types();
    let encoded = new_rows
        .iter()
        .map(|r| access::tuple::encode(r, &types))
        .collect::<PgResult<Vec<_>>>()?;
    for ((tid, _), t) in targets.iter().zip(&encoded) {
        heapam::heap_update(pool, table.rel, *tid, t)?;
    }
    Ok((targets.len(), out))
}

pub fn delete(pool: &BufferPool, d: &BoundDelete) -> PgResult<(usize, Vec<Row>)> {
    let targets = matching_rows(pool, &d.table, d.filter.as_ref())?;
    let old: Vec<Row> = targets.iter().map(|(_, r)| r.clone()).collect();
    let out = returning_rows(d.returning.as_ref(), &old)?;
    for (tid, _) in &targets {
        heapam::heap_delete(pool, d.table.rel, *tid)?;
    }
    Ok((targets.len(), out))
}
