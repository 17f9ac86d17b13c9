//! Nested loop over a parameterized index scan: each outer row's matches looked up
//! through the inner table's index.

#[allow(unused_imports)]
use super::*;

/// For each left row, the matching rows of a table found through an index on the join
/// key (planner `Plan::IndexNestLoop`); a LEFT JOIN pads a left row without matches.
pub(crate) struct IndexNestLoopOp<'a> {
    pub(crate) left: Box<dyn Operator + 'a>,
    pub(crate) env: Env<'a>,
    pub(crate) table: &'a catalog::TableDesc,
    pub(crate) index: &'a catalog::IndexDesc,
    pub(crate) types: Vec<DataType>,
    pub(crate) outer_key: &'a Expr,
    pub(crate) key_cond: &'a Expr,
    /// The further key columns' outer values and conjuncts (`Plan::IndexNestLoop`).
    pub(crate) more_keys: &'a [(Expr, Expr)],
    pub(crate) inner_filter: Option<&'a Expr>,
    pub(crate) on: Option<&'a Expr>,
    pub(crate) kind: JoinKind,
    /// Joined rows of the current left row not returned yet.
    pub(crate) pending: std::collections::VecDeque<Row>,
    /// Pairs the join condition dropped.
    pub(crate) join_removed: u64,
}

impl Operator for IndexNestLoopOp<'_> {
    fn next(&mut self) -> PgResult<Option<Row>> {
        loop {
            if let Some(r) = self.pending.pop_front() {
                return Ok(Some(r));
            }
            let Some(left) = self.left.next()? else {
                return Ok(None);
            };
            // The key's values over the left row; a NULL matches nothing.
            let mut key = Vec::with_capacity(1 + self.more_keys.len());
            for e in std::iter::once(self.outer_key).chain(self.more_keys.iter().map(|(o, _)| o)) {
                key.push(self.env.eval(e, &left)?);
            }
            let mut matched = false;
            if !key.iter().any(Value::is_null) {
                let env = self.env;
                let scan = self.index.btree(env.pool, env.roots).scan(
                    Bound::Included(key.clone()),
                    Bound::Included(key),
                    ScanDirection::Forward,
                )?;
                for entry in scan {
                    let (_, tid) = entry?;
                    env.tx.check_for_interrupts()?;
                    let Some(bytes) = heapam::heap_fetch_visible(
                        env.pool,
                        self.table.rel,
                        tid,
                        env.snapshot,
                        env.tx,
                    )?
                    else {
                        continue;
                    };
                    let inner = access::tuple::decode(&bytes, &self.types)?;
                    if let Some(f) = self.inner_filter
                        && !self.env.eval(f, &inner)?.is_true()
                    {
                        continue;
                    }
                    let mut row = left.clone();
                    row.extend(inner);
                    if !self.env.eval(self.key_cond, &row)?.is_true() {
                        continue;
                    }
                    let mut keys_hold = true;
                    for (_, cond) in self.more_keys {
                        if !self.env.eval(cond, &row)?.is_true() {
                            keys_hold = false;
                            break;
                        }
                    }
                    if !keys_hold {
                        continue;
                    }
                    if let Some(on) = self.on
                        && !self.env.eval(on, &row)?.is_true()
                    {
                        self.join_removed += 1;
                        continue;
                    }
                    matched = true;
                    if self.kind.left_only() {
                        break;
                    }
                    self.pending.push_back(row);
                }
            }
            match self.kind {
                JoinKind::Semi if matched => return Ok(Some(left)),
                JoinKind::Anti if !matched => return Ok(Some(left)),
                _ => {}
            }
            if !matched && self.kind == JoinKind::Left {
                let mut row = left;
                row.resize(row.len() + self.types.len(), Value::Null);
                return Ok(Some(row));
            }
        }
    }

    fn join_removed(&self) -> u64 {
        self.join_removed
    }
}
