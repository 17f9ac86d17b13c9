//! Sort: every input row with its key values, sorted by them (PostgreSQL's quicksort);
//! under a LIMIT that reads at most `bound` rows, once the input passes twice that
//! many, only the `bound` smallest are kept, in a heap (PostgreSQL's top-N heapsort).
//! Past `work_mem`, the rows held are sorted and written out as a run to a temporary
//! file (`crate::spill`), and the runs are merged at the end, at most as many at once
//! as `work_mem` has room for a block of each (6 to [`FAN_IN_MAX`]), in passes until
//! one is left, whose rows come out as the merge makes them (PostgreSQL's external merge
//! sort). Runs already merge while the input is read, whenever that many of one size
//! are written (a run of the next size), so a sort holds at most that many files open
//! per size, not one per run. Equal keys keep their input order throughout.

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
    pub(crate) output: Sorted<'a>,
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

/// The most runs a sort merges at once (and so holds open per size of run).
const FAN_IN_MAX: usize = 64;

/// A sort's result: in memory, or the last merge of its runs.
pub(crate) enum Sorted<'k> {
    Memory(std::vec::IntoIter<Row>),
    Merge(Merge<'k>),
}

/// A merge of sorted runs: the next record of each, smallest on top (ties to the earlier
/// run, which holds the earlier input).
pub(crate) struct Merge<'k> {
    keys: &'k [SortKey],
    runs: Vec<crate::spill::RunReader>,
    heads: BinaryHeap<std::cmp::Reverse<Keyed<'k>>>,
}

impl<'k> Merge<'k> {
    fn new(keys: &'k [SortKey], mut runs: Vec<crate::spill::RunReader>) -> PgResult<Merge<'k>> {
        let mut heads = BinaryHeap::with_capacity(runs.len());
        for (i, run) in runs.iter_mut().enumerate() {
            if let Some(head) = Self::read(keys, run, i)? {
                heads.push(std::cmp::Reverse(head));
            }
        }
        Ok(Merge { keys, runs, heads })
    }

    /// A run's next record as a key and row (`seq`: the run).
    fn read(
        keys: &'k [SortKey],
        run: &mut crate::spill::RunReader,
        i: usize,
    ) -> PgResult<Option<Keyed<'k>>> {
        Ok(run.next()?.map(|mut values| {
            let row = values.split_off(keys.len());
            Keyed {
                keys,
                key: values,
                seq: i,
                row,
            }
        }))
    }

    /// The smallest record left, as its key and row.
    fn next(&mut self) -> PgResult<Option<Keyed<'k>>> {
        let Some(std::cmp::Reverse(top)) = self.heads.pop() else {
            return Ok(None);
        };
        if let Some(next) = Self::read(self.keys, &mut self.runs[top.seq], top.seq)? {
            self.heads.push(std::cmp::Reverse(next));
        }
        Ok(Some(top))
    }
}

impl<'a> SortOp<'a> {
    fn bytes(k: &Keyed<'_>) -> usize {
        crate::env::row_bytes(&k.key) + crate::env::row_bytes(&k.row)
    }

    /// Runs merged at once: as many as `work_mem` has a block for, 6 at least and
    /// [`FAN_IN_MAX`] at most.
    fn fan_in(&self) -> usize {
        (self.usage.limit / crate::spill::BLOCK).clamp(6, FAN_IN_MAX)
    }

    /// Sort `all` and write it out as a run; when that makes [`SortOp::fan_in`] runs of
    /// one size at the end, merge them into one of the next size (in order, so the runs
    /// stay in input order).
    fn write_run(
        &mut self,
        all: &mut Vec<Keyed<'_>>,
        runs: &mut Vec<(u32, crate::spill::RunReader)>,
    ) -> PgResult<()> {
        all.sort();
        let mut run =
            crate::spill::RunWriter::new(self.env.pool.smgr().temp(), Some(self.env.session.temp))?;
        for k in all.drain(..) {
            self.env.tx.check_for_interrupts()?;
            run.push(&[&k.key, &k.row])?;
        }
        let run = run.finish()?;
        self.usage.disk += run.bytes();
        runs.push((0, run));
        self.usage.bytes = 0;
        while let Some(&(size, _)) = runs.last() {
            let same = runs.iter().rev().take_while(|(s, _)| *s == size).count();
            if same < self.fan_in() {
                break;
            }
            let group: Vec<_> = runs.drain(runs.len() - same..).map(|(_, r)| r).collect();
            let merged = self.merge_group(group)?;
            runs.push((size + 1, merged));
        }
        Ok(())
    }

    /// Merge `group` (in input order) into one run.
    fn merge_group(
        &mut self,
        group: Vec<crate::spill::RunReader>,
    ) -> PgResult<crate::spill::RunReader> {
        let mut merge = Merge::new(self.keys, group)?;
        let mut out =
            crate::spill::RunWriter::new(self.env.pool.smgr().temp(), Some(self.env.session.temp))?;
        while let Some(k) = merge.next()? {
            self.env.tx.check_for_interrupts()?;
            out.push(&[&k.key, &k.row])?;
        }
        out.finish()
    }

    fn sort(&mut self, mut input: Box<dyn Operator + 'a>) -> PgResult<Sorted<'a>> {
        self.usage.limit = crate::env::work_mem_bytes(&self.env, false);
        let keys = self.keys;
        let mut all: Vec<Keyed> = Vec::new();
        let mut runs: Vec<(u32, crate::spill::RunReader)> = Vec::new();
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
                    // Past work_mem, what is held goes out as a sorted run.
                    if self.bound.is_none() && self.usage.bytes > self.usage.limit {
                        self.usage.peak = self.usage.peak.max(self.usage.bytes);
                        self.write_run(&mut all, &mut runs)?;
                        continue;
                    }
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
        if !runs.is_empty() {
            if !all.is_empty() {
                self.write_run(&mut all, &mut runs)?;
            }
            return Ok(Sorted::Merge(
                self.merge(runs.into_iter().map(|(_, r)| r).collect())?,
            ));
        }
        let sorted = match heap {
            Some(h) => h.into_sorted_vec(),
            None => {
                all.sort();
                all
            }
        };
        Ok(Sorted::Memory(
            sorted
                .into_iter()
                .map(|k| k.row)
                .collect::<Vec<_>>()
                .into_iter(),
        ))
    }

    /// Merge `runs` down to the last merge: while there are more than `work_mem` has a
    /// block for each of, merge neighbours in groups of that many into longer runs (in
    /// order, so ties keep their input order).
    fn merge(&mut self, mut runs: Vec<crate::spill::RunReader>) -> PgResult<Merge<'a>> {
        let fan_in = self.fan_in();
        while runs.len() > fan_in {
            let mut merged = Vec::with_capacity(runs.len().div_ceil(fan_in));
            let mut rest = runs.into_iter();
            loop {
                let group: Vec<_> = rest.by_ref().take(fan_in).collect();
                if group.is_empty() {
                    break;
                }
                merged.push(self.merge_group(group)?);
            }
            runs = merged;
        }
        Merge::new(self.keys, runs)
    }
}

impl<'a> Operator for SortOp<'a> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        if let Some(input) = self.input.take() {
            self.output = self.sort(input)?;
        }
        match &mut self.output {
            Sorted::Memory(rows) => Ok(rows.next()),
            Sorted::Merge(m) => Ok(m.next()?.map(|k| k.row)),
        }
    }

    fn memory(&self) -> Option<crate::instrument::MemoryUsage> {
        Some(crate::instrument::MemoryUsage {
            top_n: self.top_n,
            ..self.usage
        })
    }
}
