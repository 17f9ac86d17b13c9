//! Bitmap heap scans (Bitmap Heap Scan over Bitmap Index Scans and BitmapOr): the row
//! addresses the bitmap's indexes find are collected and sorted first (an exact bitmap:
//! every address, none lossy), then each row is fetched once, in heap order, and checked
//! against the conditions the bitmap came from and the others.

#[allow(unused_imports)]
use super::*;

use std::time::Instant;

use planner::BitmapQual;

use crate::instrument::Instrumentation;

pub(crate) struct BitmapHeapScanOp<'a> {
    pub(crate) env: Env<'a>,
    pub(crate) table: &'a catalog::TableDesc,
    pub(crate) bitmap: &'a BitmapQual,
    pub(crate) recheck: &'a Expr,
    pub(crate) filter: Option<&'a Expr>,
    pub(crate) types: Vec<DataType>,
    /// The columns decoded (the plan's `columns`); the others read NULL.
    pub(crate) wanted: Option<&'a [bool]>,
    /// The addresses still to fetch, once collected.
    pub(crate) tids: Option<std::vec::IntoIter<ItemPointer>>,
    pub(crate) removed: u64,
    /// Heap pages read so far, and the last one.
    pub(crate) blocks: u64,
    pub(crate) last_block: Option<u32>,
    /// Under EXPLAIN ANALYZE, the number of the bitmap's first node (its nodes follow in
    /// pre-order, as EXPLAIN shows them).
    pub(crate) counted: Option<(&'a Instrumentation, usize)>,
}

/// The nodes of bitmap `q`: it and its parts', at any depth.
pub(crate) fn bitmap_nodes(q: &BitmapQual) -> usize {
    match q {
        BitmapQual::Index { .. } => 1,
        BitmapQual::Or(parts) | BitmapQual::And(parts) => {
            1 + parts.iter().map(bitmap_nodes).sum::<usize>()
        }
    }
}

impl BitmapHeapScanOp<'_> {
    /// The addresses `q` (the bitmap's node `at`, in pre-order) finds, sorted, each
    /// once; counted, under EXPLAIN ANALYZE, as PostgreSQL counts a Bitmap Index Scan's
    /// rows (its index entries; none for a BitmapOr or BitmapAnd).
    fn collect(&self, q: &BitmapQual, at: usize) -> PgResult<Vec<ItemPointer>> {
        let started = self
            .counted
            .filter(|(ins, _)| ins.timing)
            .map(|_| Instant::now());
        let tids = self.collect_node(q, at)?;
        if let Some((ins, first)) = self.counted {
            let mut nodes = ins.nodes.borrow_mut();
            let n = &mut nodes[first + at];
            n.executed = true;
            n.loops += 1;
            if matches!(q, BitmapQual::Index { .. }) {
                n.rows += tids.len() as u64;
            }
            if let Some(s) = started {
                n.first += s.elapsed();
                n.total += s.elapsed();
            }
        }
        Ok(tids)
    }

    fn collect_node(&self, q: &BitmapQual, at: usize) -> PgResult<Vec<ItemPointer>> {
        let env = &self.env;
        let mut tids = match q {
            BitmapQual::Index {
                index,
                lower,
                upper,
                ..
            } => {
                let (Some(lo), Some(hi)) = (
                    bound_values(env, lower, false, self.table, index)?,
                    bound_values(env, upper, true, self.table, index)?,
                ) else {
                    // A NULL bound matches nothing.
                    return Ok(Vec::new());
                };
                let mut tids = Vec::new();
                for entry in
                    index
                        .btree(env.pool, env.roots)
                        .scan(lo, hi, ScanDirection::Forward)?
                {
                    env.tx.check_for_interrupts()?;
                    tids.push(entry?.1);
                }
                tids
            }
            BitmapQual::Or(parts) => {
                let mut tids = Vec::new();
                let mut part_at = at + 1;
                for p in parts {
                    tids.extend(self.collect(p, part_at)?);
                    part_at += bitmap_nodes(p);
                }
                tids
            }
            BitmapQual::And(parts) => {
                let mut parts = parts.iter();
                let mut part_at = at + 1;
                let mut tids = match parts.next() {
                    Some(p) => {
                        let t = self.collect(p, part_at)?;
                        part_at += bitmap_nodes(p);
                        t
                    }
                    None => Vec::new(),
                };
                for p in parts {
                    // Nothing left: the other parts are not run (as PostgreSQL's).
                    if tids.is_empty() {
                        break;
                    }
                    // Both sorted: keep what the next part finds too.
                    let other = self.collect(p, part_at)?;
                    part_at += bitmap_nodes(p);
                    let mut at = 0;
                    tids.retain(|t| {
                        while at < other.len() && other[at] < *t {
                            at += 1;
                        }
                        at < other.len() && other[at] == *t
                    });
                }
                return Ok(tids);
            }
        };
        tids.sort_unstable();
        tids.dedup();
        Ok(tids)
    }
}

impl Operator for BitmapHeapScanOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        if self.tids.is_none() {
            self.tids = Some(self.collect(self.bitmap, 0)?.into_iter());
        }
        let env = self.env;
        let tids = self.tids.as_mut().expect("collected above");
        for tid in tids.by_ref() {
            env.tx.check_for_interrupts()?;
            // Addresses come sorted: a new block is a page read.
            if self.last_block != Some(tid.block) {
                self.last_block = Some(tid.block);
                self.blocks += 1;
            }
            let Some(row) = super::scan::fetch_row(
                &env,
                (self.table.rel, self.table.oid),
                tid,
                &self.types,
                self.wanted,
            )?
            else {
                continue;
            };
            if !env.eval(self.recheck, &row)?.is_true() {
                continue;
            }
            match self.filter {
                Some(f) if !env.eval(f, &row)?.is_true() => self.removed += 1,
                _ => return Ok(Some(row)),
            }
        }
        Ok(None)
    }

    fn rows_removed(&self) -> u64 {
        self.removed
    }

    fn heap_blocks(&self) -> Option<u64> {
        Some(self.blocks)
    }
}
