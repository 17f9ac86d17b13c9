//! Nested loop join: for each left row, the right side read again, from rows kept the
//! first time (a Materialize, or a Sort's own rows), run again (a rescan), or for a
//! LATERAL right side run with the left row's values. Kept rows are read from the right
//! side as a pass first needs them, as PostgreSQL's Materialize reads: a LIMIT above
//! that stops early stops the right side too.

use std::time::Instant;

use crate::instrument::Instrumentation;

#[allow(unused_imports)]
use super::*;

pub(crate) struct NestedLoopOp<'a> {
    pub(crate) env: Env<'a>,
    pub(crate) left: Box<dyn Operator + 'a>,
    pub(crate) inner: Inner<'a>,
    pub(crate) kind: JoinKind,
    pub(crate) on: Option<&'a Expr>,
    pub(crate) right_width: usize,
    pub(crate) current: Option<Row>,
    pub(crate) matched: bool,
    /// Pairs the join condition dropped.
    pub(crate) join_removed: u64,
}

/// How a nested loop reads its right side for each left row.
pub(crate) enum Inner<'a> {
    /// Read once and kept: by a Materialize over it, or by the node itself (a Sort).
    Kept {
        /// The right input until all of it has been read into `rows` (a pass past the
        /// rows kept so far reads the next one from it).
        input: Option<Box<dyn Operator + 'a>>,
        /// In memory up to `work_mem`, the rest in a temporary file.
        rows: Box<crate::spill::RowStore>,
        pos: usize,
        /// Under EXPLAIN ANALYZE, the node each pass over `rows` counts as one loop of:
        /// the Materialize, or the Sort after its first pass (which it counts itself).
        counter: Option<Counter<'a>>,
        /// Whether this pass's rows count into `counter`'s node.
        counting: bool,
    },
    /// Run again for each left row (a rescan): built anew, its nodes counting into the
    /// same EXPLAIN ANALYZE nodes as the first time.
    Rerun {
        plan: &'a Plan,
        op: Box<dyn Operator + 'a>,
        /// `op` has not been read yet: the first left row reads it as built.
        fresh: bool,
        /// Under EXPLAIN ANALYZE, the number of the right side's top node.
        first_id: Option<usize>,
    },
    /// A LATERAL right side, built for each left row with its values as outer values
    /// into `rows`. Under EXPLAIN ANALYZE its nodes are not counted (they would be built
    /// again for each row), as a subquery's are not.
    Lateral {
        plan: &'a Plan,
        args: &'a [Expr],
        rows: Vec<Row>,
        pos: usize,
    },
}

/// The EXPLAIN ANALYZE node that a nested loop's passes over kept rows count into.
pub(crate) struct Counter<'a> {
    pub(crate) ins: &'a Instrumentation,
    pub(crate) id: usize,
    /// Whether the first pass counts (a Materialize); a Sort counts its own first pass.
    pub(crate) first_pass: bool,
}

impl<'a> Inner<'a> {
    /// The right side built for a nested loop: kept where `materialize` or where it
    /// keeps its rows itself, otherwise run again per left row.
    pub(crate) fn build(
        right: &'a Plan,
        materialize: bool,
        lateral: Option<&'a [Expr]>,
        env: Env<'a>,
    ) -> PgResult<Inner<'a>> {
        if let Some(args) = lateral {
            return Ok(Inner::Lateral {
                plan: right,
                args,
                rows: Vec::new(),
                pos: 0,
            });
        }
        if materialize || right.materializes_output() {
            // The Materialize is numbered before the node it reads, as EXPLAIN shows it.
            let counter = env.instrument.map(|ins| Counter {
                ins,
                id: if materialize {
                    ins.register()
                } else {
                    ins.next_id()
                },
                first_pass: materialize,
            });
            return Ok(Inner::Kept {
                input: Some(build(right, env)?),
                rows: Box::new(crate::spill::RowStore::new(
                    crate::env::work_mem_bytes(&env, false),
                    env.pool.smgr().temp().clone(),
                    Some(env.session.temp.clone()),
                )),
                pos: 0,
                counter,
                counting: false,
            });
        }
        Ok(Inner::Rerun {
            plan: right,
            first_id: env.instrument.map(|ins| ins.next_id()),
            op: build(right, env)?,
            fresh: true,
        })
    }

    /// Start a pass over the right side for the left row `left`.
    fn start(&mut self, env: &Env<'a>, left: &[Value]) -> PgResult<()> {
        match self {
            Inner::Kept {
                input,
                rows,
                pos,
                counter,
                counting,
            } => {
                // The first pass is the one that reads the right side (a Sort counts it
                // itself).
                let first = input.is_some() && rows.is_empty() && *pos == 0;
                *pos = 0;
                *counting = counter.as_ref().is_some_and(|c| c.first_pass || !first);
                if let Some(c) = counter
                    && *counting
                {
                    let mut nodes = c.ins.nodes.borrow_mut();
                    let n = &mut nodes[c.id];
                    n.executed = true;
                    n.loops += 1;
                }
            }
            Inner::Rerun {
                plan,
                op,
                fresh,
                first_id,
            } => {
                if !*fresh {
                    *op = match (env.instrument, *first_id) {
                        (Some(ins), Some(id)) => ins.replaying(id, || build(plan, *env))?,
                        _ => build(plan, *env)?,
                    };
                }
                *fresh = false;
            }
            Inner::Lateral {
                plan,
                args,
                rows,
                pos,
            } => {
                let outer = args
                    .iter()
                    .map(|a| env.eval(a, left))
                    .collect::<PgResult<Vec<_>>>()?;
                let env = Env {
                    outer: &outer,
                    instrument: None,
                    ..*env
                };
                let mut op = build(plan, env)?;
                *rows = collect(op.as_mut())?;
                *pos = 0;
            }
        }
        Ok(())
    }

    /// Counts a kept row read in this pass into its EXPLAIN ANALYZE node.
    fn counted(counter: &Option<Counter<'_>>, counting: bool) {
        if let Some(c) = counter
            && counting
        {
            c.ins.nodes.borrow_mut()[c.id].rows += 1;
        }
    }
}

impl Operator for NestedLoopOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        loop {
            if self.current.is_none() {
                match self.left.next()? {
                    None => return Ok(None),
                    Some(l) => {
                        self.inner.start(&self.env, &l)?;
                        self.current = Some(l);
                        self.matched = false;
                    }
                }
            }
            let left = self.current.as_ref().expect("set above");
            loop {
                self.env.tx.check_for_interrupts()?;
                let fetched;
                let right: &Row = match &mut self.inner {
                    Inner::Kept {
                        input,
                        rows,
                        pos,
                        counter,
                        counting,
                    } => {
                        // Past the rows kept so far: the next one from the right side.
                        if *pos == rows.len()
                            && let Some(r) = input
                        {
                            let started = Instant::now();
                            let next = r.next()?;
                            if let Some(c) = counter
                                && c.first_pass
                                && c.ins.timing
                            {
                                let mut nodes = c.ins.nodes.borrow_mut();
                                let n = &mut nodes[c.id];
                                if rows.is_empty() {
                                    n.first += started.elapsed();
                                }
                                n.total += started.elapsed();
                            }
                            match next {
                                Some(row) => {
                                    let bytes = crate::env::row_bytes(&row);
                                    rows.push(row, bytes)?;
                                }
                                None => *input = None,
                            }
                        }
                        if *pos < rows.memory_len() {
                            *pos += 1;
                            Inner::counted(counter, *counting);
                            rows.in_memory(*pos - 1)
                        } else {
                            match rows.spilled(*pos)? {
                                Some(r) => {
                                    *pos += 1;
                                    Inner::counted(counter, *counting);
                                    fetched = r;
                                    &fetched
                                }
                                None => break,
                            }
                        }
                    }
                    Inner::Lateral { rows, pos, .. } => match rows.get(*pos) {
                        Some(r) => {
                            *pos += 1;
                            r
                        }
                        None => break,
                    },
                    Inner::Rerun { op, .. } => match op.next()? {
                        Some(r) => {
                            fetched = r;
                            &fetched
                        }
                        None => break,
                    },
                };
                let Some(mut row) = joined_row(&self.env, self.on, left, right)? else {
                    self.join_removed += 1;
                    continue;
                };
                self.matched = true;
                match self.kind {
                    // The left row once, at its first match; or not at all.
                    JoinKind::Semi => {
                        row.truncate(left.len());
                        self.current = None;
                        return Ok(Some(row));
                    }
                    JoinKind::Anti => break,
                    _ => return Ok(Some(row)),
                }
            }
            let left = self.current.take().expect("set above");
            if self.kind == JoinKind::Anti && !self.matched {
                return Ok(Some(left));
            }
            if self.kind == JoinKind::Left && !self.matched {
                let mut row = left;
                row.extend(std::iter::repeat_n(Value::Null, self.right_width));
                return Ok(Some(row));
            }
        }
    }

    fn join_removed(&self) -> u64 {
        self.join_removed
    }
}
