//! INTERSECT and EXCEPT [ALL].

#[allow(unused_imports)]
use super::*;

use super::aggregate::{SPILL_DEPTH_MAX, SPILL_PARTITIONS};
use crate::spill::{RunReader, RunWriter};

/// INTERSECT / EXCEPT [ALL]. The right side's rows are counted first; each left row then
/// passes or not by its count, which an ALL operation spends as it goes (so a row in the
/// left side n times and the right side m times comes out min(n, m) times for INTERSECT
/// ALL, max(n - m, 0) for EXCEPT ALL). Without ALL a passed row's count is set so that
/// its duplicates no longer pass: at most once each.
///
/// The counts are a hash table's memory (`work_mem` with `hash_mem_multiplier`). Past
/// it, the counts so far and the rows still to come of both sides go to temporary
/// files by their hash, a pair of files per part, and each pair is then done as a set
/// operation of its own (a row's count and its left rows land in the same part).
pub(crate) struct SetOpOp<'a> {
    pub(crate) env: Env<'a>,
    /// The left rows, from the plan or a part's file; `None` once all are out.
    pub(crate) left: Option<Input<'a>>,
    /// Until it has been counted (a part's file holds each row with its count).
    pub(crate) right: Option<Input<'a>>,
    /// INTERSECT, else EXCEPT.
    pub(crate) intersect: bool,
    pub(crate) all: bool,
    /// Per distinct row: the right side's count (INTERSECT), or for EXCEPT the count
    /// with -1 marking a row already passed.
    pub(crate) counts: BTreeMap<RowKey, i64>,
    pub(crate) usage: crate::instrument::MemoryUsage,
    /// How many times the rows read now were split.
    pub(crate) depth: u32,
    /// Past the memory: each part's files of counts and of left rows.
    pub(crate) parts: Vec<(Option<RunWriter>, Option<RunWriter>)>,
    /// Parts still to do: their counts, their left rows, their depth.
    pub(crate) pending: Vec<(Option<RunReader>, RunReader, u32)>,
}

/// Where a set operation's side comes from.
pub(crate) enum Input<'a> {
    Plan(Box<dyn Operator + 'a>),
    File(RunReader),
}

impl<'a> SetOpOp<'a> {
    pub(crate) fn new(
        env: Env<'a>,
        left: Box<dyn Operator + 'a>,
        right: Box<dyn Operator + 'a>,
        intersect: bool,
        all: bool,
    ) -> SetOpOp<'a> {
        SetOpOp {
            env,
            left: Some(Input::Plan(left)),
            right: Some(Input::Plan(right)),
            intersect,
            all,
            counts: BTreeMap::new(),
            usage: crate::instrument::MemoryUsage {
                limit: crate::env::work_mem_bytes(&env, true),
                batches: 1,
                ..Default::default()
            },
            depth: 0,
            parts: Vec::new(),
            pending: Vec::new(),
        }
    }

    fn read(&self, input: &mut Input<'_>) -> PgResult<Option<Row>> {
        match input {
            Input::Plan(op) => op.next(),
            Input::File(run) => {
                self.env.tx.check_for_interrupts()?;
                run.next()
            }
        }
    }

    /// The part of `row` at this depth (other bits of its hash at each).
    fn part(&self, row: &[Value]) -> usize {
        let hash = crate::keytable::hash_key(row.iter());
        (hash >> (8 + 8 * self.depth)) as usize % SPILL_PARTITIONS
    }

    fn write(&mut self, right: bool, row: &[Value]) -> PgResult<()> {
        let part = self.part(&row[..row.len() - usize::from(right)]);
        let (counts, lefts) = &mut self.parts[part];
        let slot = if right { counts } else { lefts };
        RunWriter::push_to(
            slot,
            self.env.pool.smgr().temp(),
            Some(self.env.session.temp),
            row,
        )
    }

    /// Count a right row `n` more times (n: a part's file's count); past the memory,
    /// split the counts into parts.
    fn count(&mut self, row: Row, n: i64) -> PgResult<()> {
        if !self.parts.is_empty() {
            let mut row = row;
            row.push(Value::Int8(n));
            return self.write(true, &row);
        }
        let bytes = crate::env::row_bytes(&row) + 48;
        match self.counts.entry(RowKey(row)) {
            std::collections::btree_map::Entry::Occupied(mut e) => *e.get_mut() += n,
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(n);
                self.note(bytes)?;
            }
        }
        Ok(())
    }

    /// `bytes` more held; past the memory (and not split too often already), the
    /// counts go to the parts' files, and the rows to come after them.
    fn note(&mut self, bytes: usize) -> PgResult<()> {
        self.usage.bytes += bytes;
        self.usage.peak = self.usage.peak.max(self.usage.bytes);
        if self.usage.bytes <= self.usage.limit || self.depth >= SPILL_DEPTH_MAX {
            return Ok(());
        }
        self.parts.resize_with(SPILL_PARTITIONS, || (None, None));
        for (key, n) in std::mem::take(&mut self.counts) {
            let mut row = key.0;
            row.push(Value::Int8(n));
            self.write(true, &row)?;
        }
        self.usage.bytes = 0;
        Ok(())
    }

    /// Whether left row `key` passes, spending its count as the operation does.
    fn passes(&mut self, key: &RowKey) -> PgResult<bool> {
        Ok(match (self.intersect, self.all) {
            (true, true) => match self.counts.get_mut(key) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    true
                }
                _ => false,
            },
            (true, false) => match self.counts.get_mut(key) {
                Some(n) if *n > 0 => {
                    *n = 0;
                    true
                }
                _ => false,
            },
            (false, true) => match self.counts.get_mut(key) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => true,
            },
            (false, false) => match self.counts.get(key) {
                Some(_) => false,
                None => {
                    self.counts.insert(key.clone(), -1);
                    self.note(crate::env::row_bytes(&key.0) + 48)?;
                    true
                }
            },
        })
    }

    /// This level's rows are all read: its parts are done next, each on its own. False
    /// when nothing is left.
    fn next_part(&mut self) -> PgResult<bool> {
        for (counts, lefts) in std::mem::take(&mut self.parts) {
            let counts = counts.map(RunWriter::finish).transpose()?;
            // A part without left rows gives none.
            let Some(lefts) = lefts.map(RunWriter::finish).transpose()? else {
                continue;
            };
            self.usage.disk += lefts.bytes() + counts.as_ref().map_or(0, RunReader::bytes);
            self.usage.batches += 1;
            self.pending.push((counts, lefts, self.depth + 1));
        }
        let Some((counts, lefts, depth)) = self.pending.pop() else {
            return Ok(false);
        };
        self.counts.clear();
        self.usage.bytes = 0;
        self.depth = depth;
        self.right = counts.map(Input::File);
        self.left = Some(Input::File(lefts));
        Ok(true)
    }
}

impl Operator for SetOpOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        loop {
            if let Some(mut right) = self.right.take() {
                let counted = matches!(right, Input::File(_));
                while let Some(mut row) = self.read(&mut right)? {
                    let n = match counted {
                        true => match row.pop() {
                            Some(Value::Int8(n)) => n,
                            _ => return Err(PgError::internal("a set operation's count is gone")),
                        },
                        false => 1,
                    };
                    self.count(row, n)?;
                }
            }
            let Some(mut left) = self.left.take() else {
                return Ok(None);
            };
            let row = self.read(&mut left)?;
            self.left = Some(left);
            let Some(row) = row else {
                self.left = None;
                if !self.next_part()? {
                    return Ok(None);
                }
                continue;
            };
            if !self.parts.is_empty() {
                self.write(false, &row)?;
                continue;
            }
            let key = RowKey(row);
            if self.passes(&key)? {
                return Ok(Some(key.0));
            }
        }
    }

    fn memory(&self) -> Option<crate::instrument::MemoryUsage> {
        Some(self.usage)
    }
}
