//! Grouping and aggregation: HashAggregate (and Aggregate, one group) with its groups in
//! a hash table keyed by their values; GroupAggregate over input in group order, one
//! group at a time.

#[allow(unused_imports)]
use super::*;

use std::borrow::Cow;

use crate::keytable::{GroupTable, key_values};
use crate::sortkey::GroupKey;

/// An aggregate's group columns: the keys, and the columns they determine (the plan's
/// `dependent`), carried from each group's first row.
pub(crate) struct GroupColumns<'a> {
    pub(crate) keys: Cow<'a, [Expr]>,
    pub(crate) carried: Vec<Expr>,
    pub(crate) dependent: &'a [usize],
}

impl<'a> GroupColumns<'a> {
    pub(crate) fn new(group_by: &'a [Expr], dependent: &'a [usize]) -> GroupColumns<'a> {
        if dependent.is_empty() {
            return GroupColumns {
                keys: Cow::Borrowed(group_by),
                carried: Vec::new(),
                dependent,
            };
        }
        let (mut keys, mut carried) = (Vec::new(), Vec::new());
        for (i, e) in group_by.iter().enumerate() {
            if dependent.contains(&i) {
                carried.push(e.clone());
            } else {
                keys.push(e.clone());
            }
        }
        GroupColumns {
            keys: Cow::Owned(keys),
            carried,
            dependent,
        }
    }

    /// The group columns a row of the grouping has: the keys and the carried ones.
    fn width(&self) -> usize {
        self.keys.len() + self.carried.len()
    }

    /// The carried columns' values over `row`.
    fn carry(&self, env: &Env<'_>, row: &[Value]) -> PgResult<Vec<Value>> {
        self.carried.iter().map(|e| env.eval(e, row)).collect()
    }

    /// A group's columns in the plan's order, from its key's values and its carried ones.
    fn row(&self, key: Vec<Value>, carried: Vec<Value>) -> Row {
        if carried.is_empty() {
            return key;
        }
        let n = key.len() + carried.len();
        let (mut k, mut c) = (key.into_iter(), carried.into_iter());
        (0..n)
            .map(|i| {
                if self.dependent.contains(&i) {
                    c.next()
                } else {
                    k.next()
                }
                .unwrap_or(Value::Null)
            })
            .collect()
    }
}

/// Each aggregate's input for `row`: its argument (added), or in a final aggregation
/// the partial state in its column after the group's (combined).
fn feed(
    accs: &mut [Accumulator],
    aggs: &[AggCall],
    split: planner::AggSplit,
    groups: usize,
    row: &[Value],
    env: &Env<'_>,
) -> PgResult<()> {
    for (k, (acc, call)) in accs.iter_mut().zip(aggs).enumerate() {
        match split {
            planner::AggSplit::Final => acc.combine(row.get(groups + k).unwrap_or(&Value::Null))?,
            _ => acc.add(call, row, env)?,
        }
    }
    Ok(())
}

/// A group's aggregates as its row ends: their results, or in a partial aggregation
/// their states.
fn results(
    accs: Vec<Accumulator>,
    aggs: &[AggCall],
    split: planner::AggSplit,
) -> PgResult<Vec<Value>> {
    accs.into_iter()
        .zip(aggs)
        .map(|(a, c)| match split {
            planner::AggSplit::Partial => a.partial(),
            _ => a.finish(c),
        })
        .collect()
}

pub(crate) struct AggregateOp<'a> {
    pub(crate) env: Env<'a>,
    pub(crate) input: Option<Box<dyn Operator + 'a>>,
    pub(crate) group_by: GroupColumns<'a>,
    pub(crate) aggs: &'a [AggCall],
    pub(crate) split: planner::AggSplit,
    pub(crate) output: std::vec::IntoIter<Row>,
    /// The groups held, against the hash memory (PostgreSQL's HashAggregate's).
    pub(crate) usage: crate::instrument::MemoryUsage,
    /// Rows of groups that did not fit, still to aggregate: a temporary file each, with
    /// the depth of the split that made it.
    pub(crate) pending: Vec<(crate::spill::RunReader, u32)>,
}

/// The files a hash aggregate past its memory splits new groups' rows into (by their
/// keys' hash), and how many times a file's rows may be split again.
pub(crate) const SPILL_PARTITIONS: usize = 8;
pub(crate) const SPILL_DEPTH_MAX: u32 = 4;

impl AggregateOp<'_> {
    /// Aggregate the rows `next` gives, split `depth` times already. Past the hash
    /// memory, the groups held go on taking their rows, and the rows of other groups go
    /// to [`SPILL_PARTITIONS`] files by their keys' hash (other bits of it at each
    /// depth), aggregated after these groups are out (PostgreSQL 13+'s spilling
    /// HashAggregate).
    fn compute(
        &mut self,
        next: &mut dyn FnMut() -> PgResult<Option<Row>>,
        depth: u32,
    ) -> PgResult<Vec<Row>> {
        // Each group's number, by its key: a hash table, as PostgreSQL's HashAggregate;
        // the groups come out in the order they were first seen.
        let mut table = GroupTable::default();
        let mut groups: Vec<Vec<Accumulator>> = Vec::new();
        let mut carried: Vec<Vec<Value>> = Vec::new();
        self.usage.limit = crate::env::work_mem_bytes(&self.env, true);
        self.usage.batches = self.usage.batches.max(1);
        self.usage.bytes = 0;
        let mut spill: Vec<Option<crate::spill::RunWriter>> = Vec::new();
        let new_accs = |aggs: &[AggCall]| aggs.iter().map(Accumulator::new).collect::<Vec<_>>();
        let plain = self.group_by.keys.is_empty();
        if plain {
            // A plain aggregate yields one row even over no input.
            table.group(&[]);
            groups.push(new_accs(self.aggs));
            carried.push(Vec::new());
        }
        while let Some(row) = next()? {
            // (Without GROUP BY, the one group.)
            let at = if plain {
                0
            } else {
                let key = key_values(&self.env, &self.group_by.keys, &row)?;
                // Spilling: a group held takes its row; another's goes to its file.
                if !spill.is_empty() && table.find(&key).is_none() {
                    let hash = crate::keytable::hash_key(key.iter().map(|v| &**v));
                    let part = (hash >> (8 + 8 * depth)) as usize % SPILL_PARTITIONS;
                    drop(key);
                    crate::spill::RunWriter::push_to(
                        &mut spill[part],
                        self.env.pool.smgr().temp(),
                        Some(self.env.session.temp),
                        &row,
                    )?;
                    continue;
                }
                let (at, new) = table.group(&key);
                if new {
                    // A group: its key, its carried columns and a state per aggregate.
                    let carry = self.group_by.carry(&self.env, &row)?;
                    self.usage.bytes += crate::env::row_bytes(&table.keys[at])
                        + crate::env::row_bytes(&carry)
                        + 64 * self.aggs.len();
                    groups.push(new_accs(self.aggs));
                    carried.push(carry);
                    if self.usage.bytes > self.usage.limit && depth < SPILL_DEPTH_MAX {
                        spill.resize_with(SPILL_PARTITIONS, || None);
                    }
                }
                at
            };
            let width = self.group_by.width();
            feed(
                &mut groups[at],
                self.aggs,
                self.split,
                width,
                &row,
                &self.env,
            )?;
        }
        self.usage.peak = self.usage.peak.max(self.usage.bytes);
        for w in spill.into_iter().flatten() {
            let run = w.finish()?;
            self.usage.disk += run.bytes();
            self.usage.batches += 1;
            self.pending.push((run, depth + 1));
        }
        table
            .keys
            .into_iter()
            .zip(carried)
            .zip(groups)
            .map(|((key, carry), accs)| {
                let mut row = self.group_by.row(key, carry);
                row.extend(results(accs, self.aggs, self.split)?);
                Ok(row)
            })
            .collect()
    }
}

impl Operator for AggregateOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        if let Some(mut input) = self.input.take() {
            self.output = self.compute(&mut || input.next(), 0)?.into_iter();
        }
        loop {
            if let Some(row) = self.output.next() {
                return Ok(Some(row));
            }
            // The groups that did not fit, a file at a time.
            let Some((mut run, depth)) = self.pending.pop() else {
                return Ok(None);
            };
            let tx = self.env.tx;
            self.output = self
                .compute(
                    &mut || {
                        tx.check_for_interrupts()?;
                        run.next()
                    },
                    depth,
                )?
                .into_iter();
        }
    }

    fn memory(&self) -> Option<crate::instrument::MemoryUsage> {
        (!self.group_by.keys.is_empty()).then_some(self.usage)
    }
}

/// Grouping over input in the order of the group keys (PostgreSQL's GroupAggregate):
/// rows with equal keys (NULLs equal, as GROUP BY) arrive together, so a group is
/// returned as soon as a row of the next one arrives, and one group is held at a time.
pub(crate) struct GroupAggregateOp<'a> {
    pub(crate) env: Env<'a>,
    pub(crate) input: Box<dyn Operator + 'a>,
    pub(crate) group_by: GroupColumns<'a>,
    pub(crate) aggs: &'a [AggCall],
    pub(crate) split: planner::AggSplit,
    /// The group being accumulated: its key, its carried columns and a state per
    /// aggregate.
    pub(crate) current: Option<(GroupKey, Vec<Value>, Vec<Accumulator>)>,
    pub(crate) done: bool,
}

impl GroupAggregateOp<'_> {
    fn finish(
        &self,
        (key, carried, accs): (GroupKey, Vec<Value>, Vec<Accumulator>),
    ) -> PgResult<Row> {
        let mut row = self.group_by.row(key.0, carried);
        row.extend(results(accs, self.aggs, self.split)?);
        Ok(row)
    }
}

impl Operator for GroupAggregateOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        while !self.done {
            let Some(row) = self.input.next()? else {
                self.done = true;
                break;
            };
            let key = GroupKey(
                self.group_by
                    .keys
                    .iter()
                    .map(|g| self.env.eval(g, &row))
                    .collect::<PgResult<_>>()?,
            );
            let finished = match &self.current {
                Some((k, _, _)) if *k == key => None,
                _ => {
                    let accs = self.aggs.iter().map(Accumulator::new).collect();
                    let carry = self.group_by.carry(&self.env, &row)?;
                    self.current.replace((key, carry, accs))
                }
            };
            let width = self.group_by.width();
            let (_, _, accs) = self.current.as_mut().expect("a group");
            feed(accs, self.aggs, self.split, width, &row, &self.env)?;
            if let Some(group) = finished {
                return self.finish(group).map(Some);
            }
        }
        match self.current.take() {
            Some(group) => self.finish(group).map(Some),
            None => Ok(None),
        }
    }
}
