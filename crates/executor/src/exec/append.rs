//! Append (UNION ALL, a partitioned table's partitions), pruned when it starts by the
//! values of the parameters its partitions' bounds are compared with (planner rule 18).

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
