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

/// Which of a partitioned Append's inputs the run-time values leave (`None`: all).
pub(crate) fn surviving(env: Env, p: &planner::RunTimePrune) -> PgResult<Option<Vec<bool>>> {
    let resolve = |e: &sql::bound::Expr| match e.kind {
        sql::bound::ExprKind::Param(_) => env.eval(e, &[]).ok(),
        _ => None,
    };
    let Some(leaves) =
        planner::partition::run_time_leaves(&env.session.catalog, &p.table, &p.filter, &resolve)
    else {
        return Ok(None);
    };
    Ok(Some(p.leaves.iter().map(|l| leaves.contains(l)).collect()))
}
