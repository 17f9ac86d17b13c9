//! Nested loop over a parameterized index scan: each outer row's matches looked up
//! through the inner table's index; for a partitioned inner table, through the indexes
//! of the partitions the outer value leaves (planner rule 18), each locked as it is
//! first read (executor rule 7).

#[allow(unused_imports)]
use super::*;

use std::sync::Arc;

use catalog::{IndexDesc, TableDesc};

/// For each left row, the matching rows of a table found through an index on the join
/// key (planner `Plan::IndexNestLoop`); a LEFT JOIN pads a left row without matches.
pub(crate) struct IndexNestLoopOp<'a> {
    pub(crate) left: Box<dyn Operator + 'a>,
    pub(crate) env: Env<'a>,
    pub(crate) table: &'a catalog::TableDesc,
    pub(crate) index: &'a catalog::IndexDesc,
    pub(crate) types: Vec<DataType>,
    pub(crate) outer_key: &'a Expr,
    pub(crate) key_cond: &'a Expr,
    /// The further key columns' outer values and conjuncts (`Plan::IndexNestLoop`).
    pub(crate) more_keys: &'a [(Expr, Expr)],
    pub(crate) inner_filter: Option<&'a Expr>,
    pub(crate) on: Option<&'a Expr>,
    pub(crate) kind: JoinKind,
    /// Joined rows of the current left row not returned yet.
    pub(crate) pending: std::collections::VecDeque<Row>,
    /// Pairs the join condition dropped.
    pub(crate) join_removed: u64,
    /// A partitioned inner table's partitions read so far, each with the place among its
    /// indexes of the one that belongs to `index` (locked when first found).
    pub(crate) partitions: std::collections::HashMap<common::Oid, (Arc<TableDesc>, usize)>,
    /// Under EXPLAIN ANALYZE, the inner lookups' own counters.
    pub(crate) counted: Option<InnerCounts<'a>>,
}

/// EXPLAIN ANALYZE's nodes for an index nested loop's inner side, which runs inside
/// the join's operator: the inner index scan, or for a partitioned table the Append of
/// its partitions' (numbered after the outer side, in the order EXPLAIN lists them:
/// `planner::partition::leaves_in`). Each outer row is a loop of the Append and of the
/// plain scan; a partition's scan counts a loop where the outer value reached it, so
/// one never reached shows `never executed`, as PostgreSQL's run-time pruning does.
pub(crate) struct InnerCounts<'a> {
    ins: &'a crate::instrument::Instrumentation,
    /// The Append's node, where there are several partitions.
    append: Option<usize>,
    /// The scans' nodes: the table's (by its OID), or each partition's.
    scans: std::collections::HashMap<common::Oid, usize>,
}

impl<'a> InnerCounts<'a> {
    /// Number the inner nodes of `table`'s lookups through `index`, as EXPLAIN lists
    /// them.
    pub(crate) fn register(
        ins: &'a crate::instrument::Instrumentation,
        env: Env<'_>,
        table: &TableDesc,
        index: &IndexDesc,
        inner_filter: Option<&Expr>,
    ) -> InnerCounts<'a> {
        let mut scans = std::collections::HashMap::new();
        let mut append = None;
        if table.partition_key.is_some() {
            let catalog = &env.session.catalog;
            let listed: Vec<common::Oid> =
                planner::partition::leaves_in(catalog, table, inner_filter)
                    .iter()
                    .filter(|l| planner::partition::leaf_index(catalog, table, index, l).is_some())
                    .map(|l| l.oid)
                    .collect();
            if listed.len() > 1 {
                append = Some(ins.register());
            }
            for oid in listed {
                scans.insert(oid, ins.register());
            }
        } else {
            scans.insert(table.oid, ins.register());
        }
        InnerCounts { ins, append, scans }
    }

    /// One loop of node `id`: `rows` returned, `removed` dropped by its filter, in
    /// `took`.
    fn count(&self, id: usize, rows: u64, removed: u64, took: std::time::Duration) {
        self.ins.record(id, |n| {
            n.executed = true;
            n.loops += 1;
            n.rows += rows;
            n.removed += removed;
            n.first += took;
            n.total += took;
        });
    }
}

impl IndexNestLoopOp<'_> {
    /// The tables and indexes a lookup of `key` reads: the inner table's own index, or
    /// for a partitioned table, its partitions' that `key`'s first value and the
    /// inner filter's constants leave.
    fn targets(&mut self, key: &Value) -> PgResult<Vec<(Arc<TableDesc>, usize)>> {
        let env = self.env;
        let catalog = &env.session.catalog;
        let col = self.index.columns.first().copied().unwrap_or(usize::MAX);
        let leaves =
            planner::partition::lookup_leaves(catalog, self.table, col, key, self.inner_filter);
        let mut out = Vec::with_capacity(leaves.len());
        for leaf in leaves {
            if let Some(found) = self.partitions.get(&leaf.oid) {
                out.push(found.clone());
                continue;
            }
            lock_partition(&env, &leaf)?;
            let Some(pos) = planner::partition::leaf_index(catalog, self.table, self.index, &leaf)
                .and_then(|ix| leaf.indexes.iter().position(|x| x.oid == ix.oid))
            else {
                return Err(PgError::internal(format!(
                    "partition \"{}\" has no index of \"{}\"",
                    leaf.name, self.index.name
                )));
            };
            let found = (leaf.clone(), pos);
            self.partitions.insert(leaf.oid, found.clone());
            out.push(found);
        }
        Ok(out)
    }
}

impl Operator for IndexNestLoopOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        loop {
            if let Some(r) = self.pending.pop_front() {
                return Ok(Some(r));
            }
            let Some(left) = self.left.next()? else {
                return Ok(None);
            };
            // The key's values over the left row; a NULL matches nothing.
            let mut key = Vec::with_capacity(1 + self.more_keys.len());
            for e in std::iter::once(self.outer_key).chain(self.more_keys.iter().map(|(o, _)| o)) {
                key.push(self.env.eval(e, &left)?);
            }
            let mut matched = false;
            let started = self
                .counted
                .as_ref()
                .filter(|c| c.ins.timing)
                .map(|_| std::time::Instant::now());
            let elapsed =
                |from: Option<std::time::Instant>| from.map(|t| t.elapsed()).unwrap_or_default();
            // Rows each lookup returned and dropped, for EXPLAIN ANALYZE.
            let mut lookups_done: Vec<(common::Oid, u64, u64, std::time::Duration)> = Vec::new();
            if !key.iter().any(Value::is_null) {
                let env = self.env;
                let targets = if self.table.partition_key.is_some() {
                    self.targets(&key[0])?
                } else {
                    Vec::new()
                };
                let single = [(self.table, self.index)];
                let mut lookups: Vec<(&TableDesc, &IndexDesc)> = targets
                    .iter()
                    .map(|(t, pos)| (&**t, &t.indexes[*pos]))
                    .collect();
                if self.table.partition_key.is_none() {
                    lookups = single.to_vec();
                }
                for (table, index) in lookups {
                    let lookup_started = started.map(|_| std::time::Instant::now());
                    let (mut returned, mut removed) = (0u64, 0u64);
                    let scan = index.btree(env.pool, env.roots).scan(
                        Bound::Included(key.clone()),
                        Bound::Included(key.clone()),
                        ScanDirection::Forward,
                    )?;
                    // Each lookup is a scan of the index (as PostgreSQL counts a rescan).
                    let mut counted = (0u64, 0u64);
                    for entry in scan {
                        let (_, tid) = entry?;
                        env.tx.check_for_interrupts()?;
                        counted.0 += 1;
                        let Some((_, bytes)) =
                            heapam::heap_hot_fetch(env.pool, table.rel, tid, env.snapshot, env.tx)?
                        else {
                            continue;
                        };
                        counted.1 += 1;
                        let inner = super::scan::decode_row(
                            &bytes,
                            &self.types,
                            None,
                            env.pool,
                            &table.stored_sizes,
                        )?;
                        if let Some(f) = self.inner_filter
                            && !self.env.eval(f, &inner)?.is_true()
                        {
                            removed += 1;
                            continue;
                        }
                        let mut row = left.clone();
                        row.extend(inner);
                        if !self.env.eval(self.key_cond, &row)?.is_true() {
                            continue;
                        }
                        let mut keys_hold = true;
                        for (_, cond) in self.more_keys {
                            if !self.env.eval(cond, &row)?.is_true() {
                                keys_hold = false;
                                break;
                            }
                        }
                        if !keys_hold {
                            continue;
                        }
                        if let Some(on) = self.on
                            && !self.env.eval(on, &row)?.is_true()
                        {
                            self.join_removed += 1;
                            removed += 1;
                            continue;
                        }
                        matched = true;
                        returned += 1;
                        if self.kind.left_only() {
                            break;
                        }
                        self.pending.push_back(row);
                    }
                    env.tx.counted().scan(index.oid, counted.0, counted.1);
                    lookups_done.push((table.oid, returned, removed, elapsed(lookup_started)));
                    if matched && self.kind.left_only() {
                        break;
                    }
                }
            }
            if let Some(c) = &self.counted {
                let total: u64 = lookups_done.iter().map(|l| l.1).sum();
                // A key that reaches no partition (NULL) is a loop of the plain scan
                // still, as PostgreSQL's rescan of it.
                if self.table.partition_key.is_none() && lookups_done.is_empty() {
                    lookups_done.push((self.table.oid, 0, 0, elapsed(started)));
                }
                for (oid, rows, removed, took) in &lookups_done {
                    if let Some(&id) = c.scans.get(oid) {
                        c.count(id, *rows, *removed, *took);
                    }
                }
                if let Some(id) = c.append {
                    c.count(id, total, 0, elapsed(started));
                }
            }
            match self.kind {
                JoinKind::Semi if matched => return Ok(Some(left)),
                JoinKind::Anti if !matched => return Ok(Some(left)),
                _ => {}
            }
            if !matched && self.kind == JoinKind::Left {
                let mut row = left;
                row.resize(row.len() + self.table.columns.len(), Value::Null);
                return Ok(Some(row));
            }
        }
    }

    fn join_removed(&self) -> u64 {
        self.join_removed
    }
}
