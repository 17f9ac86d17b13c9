//! Bitmap heap scans (Bitmap Heap Scan over Bitmap Index Scans and BitmapOr): the row
//! addresses the bitmap's indexes find are collected and sorted first (an exact bitmap:
//! every address, none lossy), then each row is fetched once, in heap order, and checked
//! against the conditions the bitmap came from and the others.

#[allow(unused_imports)]
use super::*;

use planner::BitmapQual;

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
}

impl BitmapHeapScanOp<'_> {
    /// The addresses `q` finds, sorted, each once.
    fn collect(&self, q: &BitmapQual) -> PgResult<Vec<ItemPointer>> {
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
                for p in parts {
                    tids.extend(self.collect(p)?);
                }
                tids
            }
            BitmapQual::And(parts) => {
                let mut parts = parts.iter();
                let mut tids = match parts.next() {
                    Some(p) => self.collect(p)?,
                    None => Vec::new(),
                };
                for p in parts {
                    if tids.is_empty() {
                        break;
                    }
                    // Both sorted: keep what the next part finds too.
                    let other = self.collect(p)?;
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
            self.tids = Some(self.collect(self.bitmap)?.into_iter());
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
            let Some(row) =
                super::scan::fetch_row(&env, self.table.rel, tid, &self.types, self.wanted)?
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
