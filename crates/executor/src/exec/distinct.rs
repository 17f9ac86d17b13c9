//! DISTINCT: each row the first time it comes, the rows seen kept in a hash table
//! (PostgreSQL's HashAggregate over the row). Past `work_mem` (as a hash table's, with
//! `hash_mem_multiplier`), the rows seen so far go on being recognised and dropped, and
//! rows not seen go to temporary files by their hash; each file is read after the
//! input, as an input of its own (PostgreSQL 13+'s spilling HashAggregate).

#[allow(unused_imports)]
use super::*;

use super::aggregate::{SPILL_DEPTH_MAX, SPILL_PARTITIONS};
use crate::spill::{RunReader, RunWriter};

pub(crate) struct DistinctOp<'a> {
    pub(crate) env: Env<'a>,
    /// Until it has returned its last row.
    pub(crate) input: Option<Box<dyn Operator + 'a>>,
    pub(crate) seen: std::collections::HashSet<crate::sortkey::GroupKey, common::hash::FxBuild>,
    pub(crate) usage: crate::instrument::MemoryUsage,
    /// The files rows not seen go to once `seen` is full (none before).
    pub(crate) spill: Vec<Option<RunWriter>>,
    /// The file read now, and how many times its rows were split.
    pub(crate) reading: Option<(RunReader, u32)>,
    /// Files still to read, each with its depth.
    pub(crate) pending: Vec<(RunReader, u32)>,
}

impl<'a> DistinctOp<'a> {
    pub(crate) fn new(env: Env<'a>, input: Box<dyn Operator + 'a>) -> DistinctOp<'a> {
        DistinctOp {
            env,
            input: Some(input),
            seen: Default::default(),
            usage: crate::instrument::MemoryUsage {
                limit: crate::env::work_mem_bytes(&env, true),
                batches: 1,
                ..Default::default()
            },
            spill: Vec::new(),
            reading: None,
            pending: Vec::new(),
        }
    }

    /// The depth of what is read now: 0 for the input.
    fn depth(&self) -> u32 {
        self.reading.as_ref().map_or(0, |(_, d)| *d)
    }

    /// The input (or the file read now) ended: its spilled rows' files are read next,
    /// each with a table of its own. False when nothing is left.
    fn next_source(&mut self) -> PgResult<bool> {
        let depth = self.depth();
        for w in std::mem::take(&mut self.spill).into_iter().flatten() {
            let run = w.finish()?;
            self.usage.disk += run.bytes();
            self.usage.batches += 1;
            self.pending.push((run, depth + 1));
        }
        self.reading = self.pending.pop();
        self.seen.clear();
        self.usage.bytes = 0;
        Ok(self.reading.is_some())
    }
}

impl Operator for DistinctOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        loop {
            let row = match (&mut self.input, &mut self.reading) {
                (Some(input), _) => input.next()?,
                (None, Some((run, _))) => {
                    self.env.tx.check_for_interrupts()?;
                    run.next()?
                }
                (None, None) => return Ok(None),
            };
            let Some(row) = row else {
                self.input = None;
                if !self.next_source()? {
                    return Ok(None);
                }
                continue;
            };
            let key = crate::sortkey::GroupKey(row);
            if self.seen.contains(&key) {
                continue;
            }
            if !self.spill.is_empty() {
                let hash = crate::keytable::hash_key(key.0.iter());
                let part = (hash >> (8 + 8 * self.depth())) as usize % SPILL_PARTITIONS;
                RunWriter::push_to(
                    &mut self.spill[part],
                    self.env.pool.smgr().temp(),
                    Some(self.env.session.temp),
                    &key.0,
                )?;
                continue;
            }
            let row = key.0.clone();
            self.usage.bytes += crate::env::row_bytes(&row) + 32;
            self.usage.peak = self.usage.peak.max(self.usage.bytes);
            self.seen.insert(key);
            if self.usage.bytes > self.usage.limit && self.depth() < SPILL_DEPTH_MAX {
                self.spill.resize_with(SPILL_PARTITIONS, || None);
            }
            return Ok(Some(row));
        }
    }

    fn memory(&self) -> Option<crate::instrument::MemoryUsage> {
        Some(self.usage)
    }
}
