//! Tuple routing: the leaf partition each row written to a partitioned table goes to,
//! found by binary search or modulus in the parent's bounds
//! (`catalog::partition::Partitions::route`, partition rule 2), level by level.
//!
//! A write through a parent holds RowExclusive on the parent, and no partition of it
//! is dropped or detached without AccessExclusive on the parent (as in PostgreSQL), so
//! the leaves the statement's catalog snapshot names stay while it writes them. An
//! ATTACH beside it (ShareUpdateExclusive on the parent, AccessExclusive on the DEFAULT
//! partition: partition rule 5) may narrow the DEFAULT partition's bound: a row routed
//! there by the statement's older directory is checked against the catalog as it stands
//! once the DEFAULT partition is locked, as PostgreSQL checks it (23514).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use catalog::TableDesc;
use common::{DataType, Oid, PgError, PgResult, SqlState, Value};
use sql::bound::{BoundCheck, BoundIndexExprs, Expr, ForeignKeyChecks};

use crate::ExecContext;

/// A partitioned table's key expressions bound over its row, by the table's OID: bound
/// once per statement, where its rows are first routed or checked (a key never changes
/// once its table is made).
#[derive(Debug, Default)]
pub struct KeyExprs(RefCell<HashMap<Oid, Rc<Vec<Expr>>>>);

impl ExecContext<'_> {
    /// The leaf `row` (of `root`'s columns) routes to in `catalog`, if any (`root` itself
    /// if it is not partitioned).
    pub(crate) fn routed_in(
        &self,
        catalog: &catalog::CatalogSnapshot,
        root: &TableDesc,
        row: &[Value],
    ) -> PgResult<Option<Oid>> {
        let mut t = root;
        loop {
            if t.partition_key.is_none() {
                return Ok(Some(t.oid));
            }
            let values = self.partition_key_values(t, row)?;
            let key = t.partition_key.as_ref().map(|k| k.strategy);
            let next = key
                .and_then(|strategy| catalog.partitions(t.oid)?.route(strategy, &values))
                .and_then(|oid| catalog.table_by_oid(oid));
            match next {
                Some(n) => t = n,
                None => return Ok(None),
            }
        }
    }

    /// The key of partitioned table `t` for `row` (`t`'s columns): its columns' values,
    /// its expressions evaluated.
    pub(crate) fn partition_key_values(
        &self,
        t: &TableDesc,
        row: &[Value],
    ) -> PgResult<Vec<Value>> {
        let Some(key) = &t.partition_key else {
            return Err(PgError::internal(format!(
                "\"{}\" is not partitioned",
                t.name
            )));
        };
        if key.exprs.is_empty() {
            return Ok(key.columns.iter().map(|&c| row[c].clone()).collect());
        }
        let cached = self.partition_keys.0.borrow().get(&t.oid).cloned();
        let exprs = match cached {
            Some(e) => e,
            None => {
                let s = self.session;
                let bound = Rc::new(sql::binder::bind_partition_key_exprs(
                    &s.catalog, t, s.info,
                )?);
                self.partition_keys
                    .0
                    .borrow_mut()
                    .insert(t.oid, bound.clone());
                bound
            }
        };
        crate::eval::partition_key_values(self.session, key, &exprs, row)
    }
}

/// What writing a row to one leaf partition needs, bound once per statement.
#[derive(Debug)]
pub(crate) struct Leaf {
    pub table: Arc<TableDesc>,
    pub types: Vec<DataType>,
    pub checks: Vec<BoundCheck>,
    pub index_exprs: Vec<BoundIndexExprs>,
    /// The foreign keys of the levels between it and the table written through, its
    /// own included (an attached table's), each with the table it references: the
    /// statement's own checks hold the written table's and its ancestors'.
    pub fks: ForeignKeyChecks,
    /// A DEFAULT partition whose lock was granted after the catalog moved on (an ATTACH
    /// of a sibling committed meanwhile: it holds the DEFAULT partition's lock): the
    /// catalog its rows are checked against, the statement's directory being older.
    pub recheck: Option<Recheck>,
}

/// The catalog a DEFAULT partition's rows are checked against ([`Leaf::recheck`]).
pub(crate) struct Recheck(Arc<catalog::CatalogSnapshot>);

impl std::fmt::Debug for Recheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Recheck(version {})", self.0.version)
    }
}

/// Lock partition `t` RowExclusive, as PostgreSQL locks a partition it writes through
/// or to (its parent's lock keeps it from going: partition rule 5), and return its
/// descriptor as it stands under the lock: an index made on it, or a partition added
/// below it, since the statement's catalog snapshot (their DDL locks it alone) is seen.
fn lock_for_write(cx: &ExecContext, t: Arc<TableDesc>) -> PgResult<Arc<TableDesc>> {
    crate::lock_relation(cx.tx, &t, txn::lock::LockMode::RowExclusive)?;
    Ok(cx
        .catalog
        .snapshot(cx.tx)
        .table_by_oid(t.oid)
        .cloned()
        .unwrap_or(t))
}

impl Leaf {
    /// Lock partition `t` for writing and bind what writing to it needs: its
    /// descriptor as it is now that it is locked, its CHECK constraints, its indexes'
    /// expressions and the foreign keys of the levels below `root` (the table written
    /// through), whose referenced tables it locks RowShare.
    pub fn bind(cx: &ExecContext, t: Arc<TableDesc>, root: Oid) -> PgResult<Leaf> {
        let t = lock_for_write(cx, t)?;
        let mut fks = ForeignKeyChecks::default();
        let mut level = Some(t.clone());
        while let Some(l) = level.filter(|l| l.oid != root) {
            for fk in &l.foreign_keys {
                if let Some(r) = cx.session.catalog.table_by_oid(fk.ref_table) {
                    crate::lock_relation(cx.tx, r, txn::lock::LockMode::RowShare)?;
                    fks.outgoing.push((fk.clone(), r.clone()));
                }
            }
            level = l
                .partition_of
                .as_ref()
                .and_then(|p| cx.session.catalog.table_by_oid(p.parent).cloned());
        }
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
        let recheck = match &t.partition_of {
            Some(of) if of.bound == catalog::partition::PartitionBound::Default => {
                let now = cx.catalog.snapshot(cx.tx);
                (now.version != s.catalog.version).then_some(Recheck(now))
            }
            _ => None,
        };
        Ok(Leaf {
            types: t.column_types(),
            table: t,
            checks,
            index_exprs,
            fks,
            recheck,
        })
    }

    /// Rows written to this leaf reference rows that exist: the statement's foreign
    /// keys (`written`: the table written through, and its ancestors') and the leaf's
    /// own levels'. Errors name the leaf, as PostgreSQL's checks of its clones do.
    pub fn check_keys(
        &self,
        cx: &ExecContext,
        written: &ForeignKeyChecks,
        rows: &[&[Value]],
    ) -> PgResult<()> {
        if written.outgoing.is_empty() && self.fks.outgoing.is_empty() {
            return Ok(());
        }
        crate::fkey::check_outgoing(cx, &self.table, written, rows)?;
        crate::fkey::check_outgoing(cx, &self.table, &self.fks, rows)
    }
}

/// The leaves one statement's rows went to.
pub(crate) struct Router {
    root: Arc<TableDesc>,
    leaves: HashMap<Oid, Leaf>,
    /// The partitioned tables below the root, locked as rows went through them, as
    /// they stood once locked.
    levels: HashMap<Oid, Arc<TableDesc>>,
    /// The catalog the levels below the root route by: taken after the last of them
    /// was locked (the root's own directory is the statement's: it is locked).
    catalog: Option<Arc<catalog::CatalogSnapshot>>,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field("root", &self.root.name)
            .field("leaves", &self.leaves.len())
            .finish()
    }
}

impl Router {
    pub fn new(root: Arc<TableDesc>) -> Router {
        Router {
            root,
            leaves: HashMap::new(),
            levels: HashMap::new(),
            catalog: None,
        }
    }

    /// The leaf partition `row` (the root's columns) belongs in: 23514 where some level
    /// has no partition for it.
    pub fn leaf(&mut self, cx: &ExecContext, row: &[Value]) -> PgResult<&mut Leaf> {
        let mut t = self.root.clone();
        while let Some(key) = &t.partition_key {
            let values = cx.partition_key_values(&t, row)?;
            let catalog = match &self.catalog {
                Some(c) if t.oid != self.root.oid => c,
                _ => &cx.session.catalog,
            };
            let found = catalog
                .partitions(t.oid)
                .and_then(|p| p.route(key.strategy, &values))
                .and_then(|oid| catalog.table_by_oid(oid));
            let next = match found {
                Some(next) => next.clone(),
                None => return Err(no_partition(cx, &t, &values)),
            };
            // A partitioned level below the root: locked before its directory is read.
            t = match (&next.partition_key, self.levels.get(&next.oid)) {
                (None, _) => next,
                (Some(_), Some(locked)) => locked.clone(),
                (Some(_), None) => {
                    let locked = lock_for_write(cx, next)?;
                    self.catalog = Some(cx.catalog.snapshot(cx.tx));
                    self.levels.insert(locked.oid, locked.clone());
                    locked
                }
            };
        }
        let leaf = match self.leaves.entry(t.oid) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(Leaf::bind(cx, t, self.root.oid)?)
            }
        };
        if let Some(Recheck(now)) = &leaf.recheck
            && cx.routed_in(now, &self.root, row)? != Some(leaf.table.oid)
        {
            return Err(PgError::new(
                SqlState::CHECK_VIOLATION,
                format!(
                    "new row for relation \"{}\" violates partition constraint",
                    leaf.table.name
                ),
            )
            .with_detail(crate::deparse::failing_row(
                cx.session.text(),
                &leaf.table,
                row,
            )));
        }
        Ok(leaf)
    }

    /// The table rows are written through.
    pub fn root(&self) -> &Arc<TableDesc> {
        &self.root
    }

    /// The leaf partition `oid`, if a row went to it.
    pub fn written(&self, oid: Oid) -> Option<&Leaf> {
        self.leaves.get(&oid)
    }
}

/// PostgreSQL's error for a row no partition of `t` takes.
fn no_partition(cx: &ExecContext, t: &TableDesc, values: &[Value]) -> PgError {
    let names = crate::ruleutils::partition_key_parts(cx.session, t, true);
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
