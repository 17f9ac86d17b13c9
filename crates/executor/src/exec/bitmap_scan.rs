//! Bitmap heap scans (Bitmap Heap Scan over Bitmap Index Scans, BitmapOr and
//! BitmapAnd): the row addresses the bitmap's indexes find are collected and sorted
//! first, then each row is fetched once, in heap order, and checked against the
//! conditions the bitmap came from and the others. A bitmap holds exact addresses while
//! they fit `work_mem`; past it, it keeps the pages they are on instead (lossy), and a
//! lossy page's rows are all read and checked (PostgreSQL's lossy TIDBitmap: `Heap
//! Blocks: exact=N lossy=M`).

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
    pub(crate) tids: Option<Walk>,
    pub(crate) removed: u64,
    /// Live rows fetched, counted for `pg_stat_user_tables` when the scan ends (txn
    /// rule 10).
    pub(crate) fetched: u64,
    /// Heap pages read so far, exactly and lossily, and the last one.
    pub(crate) blocks: (u64, u64),
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

/// Row addresses, sorted and each once (`exact`), and pages whose every row counts
/// (`lossy`, sorted, none of them a page of an exact address).
#[derive(Default)]
pub(crate) struct Bitmap {
    exact: Vec<ItemPointer>,
    lossy: Vec<u32>,
}

impl Bitmap {
    /// Past `max_exact` addresses, they become their pages.
    fn fit(&mut self, max_exact: usize) {
        if self.exact.len() <= max_exact {
            return;
        }
        self.lossy.extend(self.exact.drain(..).map(|t| t.block));
        self.lossy.sort_unstable();
        self.lossy.dedup();
    }

    /// Sorted, each once, and no exact address on a lossy page.
    fn settle(&mut self) {
        self.exact.sort_unstable();
        self.exact.dedup();
        self.lossy.sort_unstable();
        self.lossy.dedup();
        if !self.lossy.is_empty() {
            let lossy = &self.lossy;
            self.exact
                .retain(|t| lossy.binary_search(&t.block).is_err());
        }
    }

    fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.lossy.is_empty()
    }

    /// What both hold: an address both hold, or one holds on a page the other holds
    /// lossily; a page both hold lossily.
    fn and(self, other: Bitmap) -> Bitmap {
        let on = |pages: &[u32], t: &ItemPointer| pages.binary_search(&t.block).is_ok();
        let mut exact: Vec<ItemPointer> = self
            .exact
            .iter()
            .filter(|t| other.exact.binary_search(t).is_ok() || on(&other.lossy, t))
            .copied()
            .collect();
        exact.extend(other.exact.iter().filter(|t| on(&self.lossy, t)).copied());
        let lossy = self
            .lossy
            .iter()
            .filter(|p| other.lossy.binary_search(p).is_ok())
            .copied()
            .collect();
        let mut b = Bitmap { exact, lossy };
        b.settle();
        b
    }

    /// The pages to read in order, each with its addresses (`None`: every row of it).
    pub(crate) fn walk(self) -> Walk {
        Walk {
            exact: self.exact.into_iter().peekable(),
            lossy: self.lossy.into_iter().peekable(),
            page: None,
        }
    }
}

/// A bitmap's addresses in heap order, a lossy page's expanded as it is reached.
pub(crate) struct Walk {
    exact: std::iter::Peekable<std::vec::IntoIter<ItemPointer>>,
    lossy: std::iter::Peekable<std::vec::IntoIter<u32>>,
    /// The lossy page being read: its number, its next offset and its last.
    page: Option<(u32, u16, u16)>,
}

impl Walk {
    /// The next address, and whether its page is lossy; `max_offset` gives a page's
    /// last line pointer.
    fn next(
        &mut self,
        max_offset: impl Fn(u32) -> PgResult<u16>,
    ) -> PgResult<Option<(ItemPointer, bool)>> {
        loop {
            if let Some((block, next, last)) = self.page.as_mut() {
                if *next <= *last {
                    let tid = ItemPointer {
                        block: *block,
                        offset: *next,
                    };
                    *next += 1;
                    return Ok(Some((tid, true)));
                }
                self.page = None;
            }
            let lossy_first = match (self.exact.peek(), self.lossy.peek()) {
                (None, None) => return Ok(None),
                (Some(t), Some(&p)) => p < t.block,
                (None, Some(_)) => true,
                (Some(_), None) => false,
            };
            if lossy_first {
                let block = self.lossy.next().expect("peeked");
                self.page = Some((block, 1, max_offset(block)?));
                continue;
            }
            return Ok(self.exact.next().map(|t| (t, false)));
        }
    }
}

impl BitmapHeapScanOp<'_> {
    /// Exact addresses a bitmap holds at most: `work_mem`'s worth.
    fn max_exact(&self) -> usize {
        crate::env::work_mem_bytes(&self.env, false) / std::mem::size_of::<ItemPointer>()
    }

    /// The addresses `q` (the bitmap's node `at`, in pre-order) finds; counted, under
    /// EXPLAIN ANALYZE, as PostgreSQL counts a Bitmap Index Scan's rows (its index
    /// entries; none for a BitmapOr or BitmapAnd).
    fn collect(&self, q: &BitmapQual, at: usize) -> PgResult<Bitmap> {
        let started = self
            .counted
            .filter(|(ins, _)| ins.timing)
            .map(|_| Instant::now());
        let (bitmap, entries) = self.collect_node(q, at)?;
        if let Some((ins, first)) = self.counted {
            let mut nodes = ins.nodes.borrow_mut();
            let n = &mut nodes[first + at];
            n.executed = true;
            n.loops += 1;
            n.rows += entries;
            if let Some(s) = started {
                n.first += s.elapsed();
                n.total += s.elapsed();
            }
        }
        Ok(bitmap)
    }

    /// The bitmap of node `q`, and (for an index's) the entries it read.
    fn collect_node(&self, q: &BitmapQual, at: usize) -> PgResult<(Bitmap, u64)> {
        let env = &self.env;
        let max_exact = self.max_exact();
        let mut bitmap = match q {
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
                    return Ok((Bitmap::default(), 0));
                };
                let mut bitmap = Bitmap::default();
                let mut entries = 0;
                for entry in
                    index
                        .btree(env.pool, env.roots)
                        .scan(lo, hi, ScanDirection::Forward)?
                {
                    env.tx.check_for_interrupts()?;
                    bitmap.exact.push(entry?.1);
                    entries += 1;
                    bitmap.fit(max_exact);
                }
                bitmap.settle();
                env.tx.counted().scan(index.oid, entries, 0);
                return Ok((bitmap, entries));
            }
            BitmapQual::Or(parts) => {
                let mut bitmap = Bitmap::default();
                let mut part_at = at + 1;
                for p in parts {
                    let part = self.collect(p, part_at)?;
                    part_at += bitmap_nodes(p);
                    bitmap.exact.extend(part.exact);
                    bitmap.lossy.extend(part.lossy);
                    bitmap.settle();
                    bitmap.fit(max_exact);
                }
                bitmap
            }
            BitmapQual::And(parts) => {
                let mut parts = parts.iter();
                let mut part_at = at + 1;
                let mut bitmap = match parts.next() {
                    Some(p) => {
                        let b = self.collect(p, part_at)?;
                        part_at += bitmap_nodes(p);
                        b
                    }
                    None => Bitmap::default(),
                };
                for p in parts {
                    // Nothing left: the other parts are not run (as PostgreSQL's).
                    if bitmap.is_empty() {
                        break;
                    }
                    let other = self.collect(p, part_at)?;
                    part_at += bitmap_nodes(p);
                    bitmap = bitmap.and(other);
                }
                bitmap
            }
        };
        bitmap.settle();
        Ok((bitmap, 0))
    }
}

impl Operator for BitmapHeapScanOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        if self.tids.is_none() {
            self.tids = Some(self.collect(self.bitmap, 0)?.walk());
        }
        let env = self.env;
        let rel = self.table.rel;
        let max_offset = |block| access::heapam::heap_page_max_offset(env.pool, rel, block);
        while let Some((tid, lossy)) = self
            .tids
            .as_mut()
            .expect("collected above")
            .next(max_offset)?
        {
            env.tx.check_for_interrupts()?;
            // Addresses come sorted: a new block is a page read.
            if self.last_block != Some(tid.block) {
                self.last_block = Some(tid.block);
                match lossy {
                    true => self.blocks.1 += 1,
                    false => self.blocks.0 += 1,
                }
            }
            let Some(row) = super::scan::fetch_row(
                &env,
                (self.table.rel, self.table.oid),
                tid,
                !lossy,
                (&self.types, self.wanted, &self.table.stored_sizes),
            )?
            else {
                continue;
            };
            self.fetched += 1;
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

    fn heap_blocks(&self) -> Option<(u64, u64)> {
        Some(self.blocks)
    }
}

impl Drop for BitmapHeapScanOp<'_> {
    fn drop(&mut self) {
        self.env.tx.counted().fetched(self.table.oid, self.fetched);
    }
}
