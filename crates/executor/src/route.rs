//! Tuple routing: the leaf partition each row written to a partitioned table goes to,
//! found by binary search or modulus in the parent's bounds
//! (`catalog::partition::Partitions::route`, partition rule 2), level by level.
//!
//! A write through a parent holds RowExclusive on the parent, and no partition of it
//! is dropped or detached without AccessExclusive on the parent (as in PostgreSQL), so
//! the leaves the statement's catalog snapshot names stay while it writes them.

use std::collections::HashMap;
use std::sync::Arc;

use catalog::TableDesc;
use common::{DataType, Oid, PgError, PgResult, SqlState, Value};
use sql::bound::{BoundCheck, BoundIndexExprs};

use crate::ExecContext;

/// What writing a row to one leaf partition needs, bound once per statement.
#[derive(Debug)]
pub(crate) struct Leaf {
    pub table: Arc<TableDesc>,
    pub types: Vec<DataType>,
    pub checks: Vec<BoundCheck>,
    pub index_exprs: Vec<BoundIndexExprs>,
    /// Rows written to it by the statement.
    pub rows: u64,
}

impl Leaf {
    /// Bind what writing to partition `t` needs: its CHECK constraints and its
    /// indexes' expressions.
    pub fn bind(cx: &ExecContext, t: Arc<TableDesc>) -> PgResult<Leaf> {
        // Written to: RowExclusive, as PostgreSQL locks a partition it routes to (the
        // parent's lock keeps it from going: partition rule 5).
        cx.tx
            .lock(
                txn::lock::LockTag::Relation(t.oid),
                txn::lock::LockMode::RowExclusive,
                false,
            )
            .map_err(|e| e.to_pg(&format!("relation \"{}\"", t.name)))?;
        let s = cx.session;
        let checks = t
            .checks
            .iter()
            .map(|c| {
                Ok(BoundCheck {
                    name: c.name.clone(),
                    expr: sql::binder::bind_check(&s.catalog, &t, &c.expr, s.info)?,
                })
            })
            .collect::<PgResult<Vec<_>>>()?;
        let index_exprs = sql::binder::bind_index_exprs(&s.catalog, &t, s.info)?;
        Ok(Leaf {
            types: t.column_types(),
            table: t,
            checks,
            index_exprs,
            rows: 0,
        })
    }
}

/// The leaves one statement's rows went to.
#[derive(Debug)]
pub(crate) struct Router {
    root: Arc<TableDesc>,
    leaves: HashMap<Oid, Leaf>,
}

impl Router {
    pub fn new(root: Arc<TableDesc>) -> Router {
        Router {
            root,
            leaves: HashMap::new(),
        }
    }

    /// The leaf partition `row` (the root's columns) belongs in: 23514 where some level
    /// has no partition for it.
    pub fn leaf(&mut self, cx: &ExecContext, row: &[Value]) -> PgResult<&mut Leaf> {
        let catalog = &cx.session.catalog;
        let mut t = self.root.clone();
        while let Some(key) = &t.partition_key {
            let values: Vec<Value> = key.columns.iter().map(|&c| row[c].clone()).collect();
            let found = catalog
                .partitions(t.oid)
                .and_then(|p| p.route(key.strategy, &values))
                .and_then(|oid| catalog.table_by_oid(oid));
            t = match found {
                Some(next) => next.clone(),
                None => return Err(no_partition(cx, &t, &key.columns, &values)),
            };
        }
        match self.leaves.entry(t.oid) {
            std::collections::hash_map::Entry::Occupied(e) => Ok(e.into_mut()),
            std::collections::hash_map::Entry::Vacant(e) => Ok(e.insert(Leaf::bind(cx, t)?)),
        }
    }

    /// The rows written to each leaf.
    pub fn changed(&self) -> Vec<(Oid, u64)> {
        self.leaves
            .values()
            .map(|l| (l.table.oid, l.rows))
            .collect()
    }
}

/// PostgreSQL's error for a row no partition of `t` takes.
fn no_partition(cx: &ExecContext, t: &TableDesc, columns: &[usize], values: &[Value]) -> PgError {
    let names: Vec<&str> = columns
        .iter()
        .map(|&c| t.columns[c].name.as_str())
        .collect();
    let text: Vec<String> = values
        .iter()
        .map(|v| {
            v.to_text(cx.session.text())
                .unwrap_or_else(|| "null".into())
        })
        .collect();
    PgError::new(
        SqlState::CHECK_VIOLATION,
        format!("no partition of relation \"{}\" found for row", t.name),
    )
    .with_detail(format!(
        "Partition key of the failing row contains ({}) = ({}).",
        names.join(", "),
        text.join(", ")
    ))
}
