//! Append (UNION ALL, a partitioned table's partitions), pruned when it starts by the
//! values of the parameters its partitions' bounds are compared with (planner rule 18),
//! and the locks of the partitions a plan reads (executor rule 7).

#[allow(unused_imports)]
use super::*;

pub(crate) struct AppendOp<'a> {
    pub(crate) inputs: std::collections::VecDeque<Box<dyn Operator + 'a>>,
}

impl Operator for AppendOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        while let Some(input) = self.inputs.front_mut() {
            if let Some(row) = input.next()? {
                return Ok(Some(row));
            }
            self.inputs.pop_front();
        }
        Ok(None)
    }
}

/// The positions of the inputs of a partitioned Append that the run-time values leave,
/// in order: found by the bounds and each leaf's position, so a run costs what it keeps,
/// not what the plan holds.
pub(crate) fn surviving(env: Env, p: &planner::RunTimePrune) -> Vec<usize> {
    // Parameters and stable functions, evaluated once as the plan starts.
    let resolve = |e: &sql::bound::Expr| {
        planner::partition::known_at_start(e)
            .then(|| env.eval(e, &[]).ok())
            .flatten()
    };
    surviving_with(&env.session.catalog, p, &resolve)
}

/// [`surviving`], the run-time values given by `resolve` (EXPLAIN's, which has no
/// statement running).
pub(crate) fn surviving_with(
    catalog: &catalog::CatalogSnapshot,
    p: &planner::RunTimePrune,
    resolve: &dyn Fn(&sql::bound::Expr) -> Option<Value>,
) -> Vec<usize> {
    let leaves = planner::partition::run_time_leaves(catalog, &p.table, &p.filter, resolve);
    let mut kept: Vec<usize> = leaves
        .iter()
        .filter_map(|l| p.inputs.get(l).copied())
        .collect();
    kept.sort_unstable();
    kept
}

/// Lock partition `table` (partition rule 5): RowShare under a row lock
/// (`Env::row_locks`), RowExclusive under a write (`Env::emit_tid`), else AccessShare. Its parent is locked already, so it cannot go.
/// A scan takes it as it starts; [`lock_partitions`] takes them all before a statement's
/// snapshot, so the scan's is then a count.
pub(crate) fn lock_partition(env: &Env, table: &catalog::TableDesc) -> PgResult<()> {
    if table.partition_of.is_none() {
        return Ok(());
    }
    use txn::lock::LockMode;
    let mode = if env.row_locks {
        LockMode::RowShare
    } else if env.emit_tid {
        LockMode::RowExclusive
    } else {
        LockMode::AccessShare
    };
    crate::lock_relation(env.tx, table, mode)
}

/// Lock every partition `stmt`'s plans will read, in the modes their scans take, and
/// none that its run-time pruning leaves out (with `cx`'s parameter values): executor
/// rule 7's first step, before the statement's snapshot and the check that its plan
/// still holds for the catalog. Returns how many partitions it locked.
pub fn lock_partitions(
    stmt: &planner::PlannedStatement,
    cx: &crate::ExecContext,
) -> PgResult<usize> {
    use planner::PlannedStatement as S;
    let env = cx.env();
    let mut locked = 0;
    let subplans = match stmt {
        S::Query { plan, subplans, .. } | S::CopyTo { plan, subplans, .. } => {
            lock_in(plan, env, &mut locked)?;
            subplans
        }
        S::Insert {
            source, subplans, ..
        } => {
            lock_in(source, env, &mut locked)?;
            subplans
        }
        S::Update { scan, subplans, .. } | S::Delete { scan, subplans, .. } => {
            let target = Env {
                emit_tid: true,
                ..env
            };
            lock_in(scan, target, &mut locked)?;
            subplans
        }
        S::Explain { inner, .. } => return lock_partitions(inner, cx),
    };
    for (_, plan) in subplans.iter() {
        lock_in(plan, env, &mut locked)?;
    }
    Ok(locked)
}

/// [`lock_partitions`] of one plan tree: the modes as `build` gives its scans.
fn lock_in(plan: &Plan, env: Env, locked: &mut usize) -> PgResult<()> {
    let table = match plan {
        Plan::SeqScan { table, .. }
        | Plan::IndexScan { table, .. }
        | Plan::BitmapHeapScan { table, .. } => Some(table),
        _ => None,
    };
    if let Some(t) = table.filter(|t| t.partition_of.is_some()) {
        lock_partition(&env, t)?;
        *locked += 1;
    }
    match plan {
        Plan::Append {
            inputs,
            prune: Some(p),
            ..
        } => {
            for i in surviving(env, p) {
                if let Some(input) = inputs.get(i) {
                    lock_in(input, env, locked)?;
                }
            }
        }
        Plan::PartitionScans { leaves, prune, .. } => {
            let kept: Vec<usize> = match prune {
                Some(p) => surviving(env, p),
                None => (0..leaves.len()).collect(),
            };
            for leaf in kept.into_iter().filter_map(|i| leaves.get(i)) {
                lock_partition(&env, leaf)?;
                *locked += 1;
            }
        }
        Plan::LockRows { input, .. } => lock_in(
            input,
            Env {
                emit_tid: true,
                row_locks: true,
                ..env
            },
            locked,
        )?,
        other => {
            for child in other.children() {
                lock_in(child, env, locked)?;
            }
        }
    }
    Ok(())
}
