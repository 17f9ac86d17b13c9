//! Sort: every input row with its key values, sorted by them (PostgreSQL's quicksort);
//! under a LIMIT that reads at most `bound` rows, once the input passes twice that
//! many, only the `bound` smallest are kept, in a heap (PostgreSQL's top-N heapsort).

#[allow(unused_imports)]
use super::*;

use std::cmp::Ordering;
use std::collections::BinaryHeap;

pub(crate) struct SortOp<'a> {
    pub(crate) env: Env<'a>,
    pub(crate) input: Option<Box<dyn Operator + 'a>>,
    pub(crate) keys: &'a [SortKey],
    /// The rows a LIMIT above will read at most.
    pub(crate) bound: Option<usize>,
    pub(crate) output: std::vec::IntoIter<Row>,
    /// The rows and keys held, against `work_mem`.
    pub(crate) usage: crate::instrument::MemoryUsage,
    /// Whether the bounded heap was used (EXPLAIN ANALYZE's `top-N heapsort`).
    pub(crate) top_n: bool,
}

/// A row with its sort key values: ordered by those, then by `seq` (its arrival, so that
/// among equal keys the earlier rows are kept, as a stable sort would return them
/// first; a Merge Append's input, so equal keys come in the inputs' order).
pub(crate) struct Keyed<'k> {
    pub(crate) keys: &'k [SortKey],
    pub(crate) key: Row,
    pub(crate) seq: usize,
    pub(crate) row: Row,
}

impl Ord for Keyed<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_sort_keys(self.keys, &self.key, &other.key).then(self.seq.cmp(&other.seq))
    }
}

impl PartialOrd for Keyed<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Keyed<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Keyed<'_> {}

impl SortOp<'_> {
    fn bytes(k: &Keyed<'_>) -> usize {
        crate::env::row_bytes(&k.key) + crate::env::row_bytes(&k.row)
    }

    fn sort(&mut self, mut input: Box<dyn Operator + '_>) -> PgResult<Vec<Row>> {
        self.usage.limit = crate::env::work_mem_bytes(&self.env, false);
        let keys = self.keys;
        let mut all: Vec<Keyed> = Vec::new();
        // The `bound` smallest rows so far, largest on top, once `all` passed 2 x bound.
        let mut heap: Option<BinaryHeap<Keyed>> = None;
        let mut seq = 0;
        while let Some(row) = input.next()? {
            let key = keys
                .iter()
                .map(|k| self.env.eval(&k.expr, &row))
                .collect::<PgResult<Vec<_>>>()?;
            let item = Keyed {
                keys,
                key,
                seq,
                row,
            };
            seq += 1;
            match (&mut heap, self.bound) {
                (Some(h), Some(bound)) => {
                    if h.len() < bound {
                        self.usage.bytes += Self::bytes(&item);
                        h.push(item);
                    } else if h.peek().is_some_and(|top| item < *top) {
                        self.usage.bytes += Self::bytes(&item);
                        h.push(item);
                        if let Some(out) = h.pop() {
                            self.usage.bytes -= Self::bytes(&out);
                        }
                    }
                }
                _ => {
                    self.usage.bytes += Self::bytes(&item);
                    all.push(item);
                    if let Some(bound) = self.bound
                        && all.len() > bound.saturating_mul(2)
                    {
                        // PostgreSQL switches to a bounded heap here too.
                        all.sort();
                        for out in all.drain(bound..) {
                            self.usage.bytes -= Self::bytes(&out);
                        }
                        heap = Some(std::mem::take(&mut all).into());
                        self.top_n = true;
                    }
                }
            }
            self.usage.peak = self.usage.peak.max(self.usage.bytes);
        }
        let sorted = match heap {
            Some(h) => h.into_sorted_vec(),
            None => {
                all.sort();
                all
            }
        };
        Ok(sorted.into_iter().map(|k| k.row).collect())
    }
}

impl Operator for SortOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        if let Some(input) = self.input.take() {
            self.output = self.sort(input)?.into_iter();
        }
        Ok(self.output.next())
    }

    fn memory(&self) -> Option<crate::instrument::MemoryUsage> {
        Some(crate::instrument::MemoryUsage {
            top_n: self.top_n,
            ..self.usage
        })
    }
}
