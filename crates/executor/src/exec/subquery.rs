//! Subqueries in expressions (PostgreSQL's SubPlans): `EXISTS (...)`, scalar `(...)`, and
//! `x op ANY/ALL (...)` with IN and NOT IN.
//!
//! A subquery runs against the statement's snapshot each time its expression is
//! evaluated, with its outer values (the SubLink's `args`, evaluated over the outer row)
//! in [`Env::outer`] for its `ExprKind::Outer` references. Its plan is the planner's
//! (`planner::SubPlans`, made with the statement's plan and installed in the
//! statement's [`SubqueryCache`] when it starts); the cache also keeps, for an
//! uncorrelated subquery (no outer values), its result, computed once as PostgreSQL's
//! InitPlans and hashed SubPlans are (executor rule 4). For
//! `x IN (uncorrelated subquery)` comparing equal types, the rows are kept in an ordered
//! set and each test is a lookup, while they fit the hash memory; rows that do not are
//! kept past `work_mem` in a temporary file and compared one by one (what PostgreSQL's
//! planner does when a hashed SubPlan would not fit: a plain one over a Materialize).

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;
use std::sync::Arc;

use common::{DataType, PgError, PgResult, SqlState, Value};
use planner::Plan;
use sql::bound::{LogicalPlan, SubLink, SubLinkKind};

use crate::env::{Env, SubLinks};
use crate::exec::build;
use crate::sortkey::RowKey;

/// What a statement keeps per subquery while it runs. One per statement execution: an
/// uncorrelated subquery's result holds for one snapshot only.
#[derive(Default)]
pub struct SubqueryCache {
    entries: RefCell<HashMap<*const LogicalPlan, Rc<Entry>>>,
}

struct Entry {
    /// Keeps the key's address taken while the entry exists.
    _query: Arc<LogicalPlan>,
    plan: Arc<Plan>,
    /// An uncorrelated subquery's result, once computed.
    result: RefCell<Option<Rc<Cached>>>,
}

enum Cached {
    Exists(bool),
    Scalar(Value),
    /// The rows' one value each, compared one by one.
    Rows(Vec<Value>),
    /// As `Rows`, past the memory: in memory up to `work_mem`, the rest in a file.
    Stored(Box<RefCell<crate::spill::RowStore>>),
    /// `= ANY` comparing one type: the rows' non-NULL values, for lookups.
    Set {
        set: BTreeSet<RowKey>,
        has_null: bool,
        empty: bool,
    },
}

impl SubqueryCache {
    /// Make the statement's subquery plans the ones its subqueries run (before it
    /// starts: results kept from an earlier run of the plans go).
    pub fn install(&self, subplans: &planner::SubPlans) {
        let mut entries = self.entries.borrow_mut();
        entries.clear();
        for (query, plan) in subplans.iter() {
            entries.insert(
                Arc::as_ptr(query),
                Rc::new(Entry {
                    _query: query.clone(),
                    plan: plan.clone(),
                    result: RefCell::new(None),
                }),
            );
        }
    }

    /// The plan of subquery `query`, if the planner made one.
    pub fn plan(&self, query: &Arc<LogicalPlan>) -> Option<Arc<Plan>> {
        self.entries
            .borrow()
            .get(&Arc::as_ptr(query))
            .map(|e| e.plan.clone())
    }

    fn entry(&self, query: &Arc<LogicalPlan>) -> PgResult<Rc<Entry>> {
        self.entries
            .borrow()
            .get(&Arc::as_ptr(query))
            .cloned()
            .ok_or_else(|| PgError::internal("a subquery the planner did not plan"))
    }
}

impl SubLinks for SubqueryCache {
    fn eval_sublink(
        &self,
        link: &SubLink,
        row: &[Value],
        env: &Env,
        ty: &DataType,
    ) -> PgResult<Value> {
        eval_sublink(self.entry(&link.query)?, link, row, env, ty)
    }
}

/// The value of `link` for the outer row `row`, `entry` being its subquery's.
fn eval_sublink(
    entry: Rc<Entry>,
    link: &SubLink,
    row: &[Value],
    env: &Env,
    ty: &DataType,
) -> PgResult<Value> {
    let outer = link
        .args
        .iter()
        .map(|a| env.eval(a, row))
        .collect::<PgResult<Vec<_>>>()?;
    let sub_env = Env {
        outer: &outer,
        emit_tid: false,
        row_locks: false,
        instrument: None,
        ..*env
    };
    let uncorrelated = link.args.is_empty();
    match &link.kind {
        SubLinkKind::Exists => {
            let run = || -> PgResult<bool> { Ok(build(&entry.plan, sub_env)?.next()?.is_some()) };
            if uncorrelated {
                match &*cached(&entry, || run().map(Cached::Exists))? {
                    Cached::Exists(b) => Ok(Value::Bool(*b)),
                    _ => Err(PgError::internal("cached EXISTS result of another kind")),
                }
            } else {
                Ok(Value::Bool(run()?))
            }
        }
        SubLinkKind::Scalar => {
            let run = || -> PgResult<Value> {
                let mut op = build(&entry.plan, sub_env)?;
                let Some(first) = op.next()? else {
                    return Ok(Value::Null);
                };
                if op.next()?.is_some() {
                    return Err(PgError::new(
                        SqlState::CARDINALITY_VIOLATION,
                        "more than one row returned by a subquery used as an expression",
                    ));
                }
                Ok(first.into_iter().next().unwrap_or(Value::Null))
            };
            value_once(uncorrelated, &entry, run)
        }
        SubLinkKind::Array => {
            let run = || -> PgResult<Value> {
                let mut op = build(&entry.plan, sub_env)?;
                let mut items = Vec::new();
                while let Some(r) = op.next()? {
                    items.push(r.into_iter().next().unwrap_or(Value::Null));
                }
                let elem = ty.elem().map_or(0, |t| t.oid());
                // ARRAY(subquery of arrays) stacks them into one more dimension.
                if items.iter().any(|v| matches!(v, Value::Array(_))) {
                    return crate::array::construct_value(&items, ty);
                }
                Ok(Value::Array(std::sync::Arc::new(
                    common::array::Array::from_items(elem, items),
                )))
            };
            value_once(uncorrelated, &entry, run)
        }
        SubLinkKind::Quantified { all, test, cmp } => {
            let t = env.eval(test, row)?;
            let mut acc = Quantifier::new(*all);
            if uncorrelated {
                let result = cached(&entry, || {
                    let mut op = build(&entry.plan, sub_env)?;
                    let hashed = planner::hashed_subplan(link);
                    let limit = crate::env::work_mem_bytes(env, hashed);
                    let mut values = Vec::new();
                    let mut bytes = 0;
                    let mut store: Option<crate::spill::RowStore> = None;
                    while let Some(r) = op.next()? {
                        let v = vec![r.into_iter().next().unwrap_or(Value::Null)];
                        let size = crate::env::row_bytes(&v);
                        if let Some(s) = store.as_mut() {
                            s.push(v, size)?;
                            continue;
                        }
                        bytes += size;
                        values.extend(v);
                        if bytes > limit {
                            let mut s = crate::spill::RowStore::new(
                                crate::env::work_mem_bytes(env, false),
                                env.pool.smgr().temp().clone(),
                                Some(env.session.temp.clone()),
                            );
                            for v in values.drain(..) {
                                let v = vec![v];
                                let size = crate::env::row_bytes(&v);
                                s.push(v, size)?;
                            }
                            store = Some(s);
                        }
                    }
                    if let Some(s) = store {
                        return Ok(Cached::Stored(Box::new(RefCell::new(s))));
                    }
                    if !hashed {
                        return Ok(Cached::Rows(values));
                    }
                    Ok(Cached::Set {
                        empty: values.is_empty(),
                        has_null: values.iter().any(Value::is_null),
                        set: values
                            .into_iter()
                            .filter(|v| !v.is_null())
                            .map(|v| RowKey(vec![v]))
                            .collect(),
                    })
                })?;
                match &*result {
                    // `t = ANY (rows)`: true if found; else NULL if t or a row is NULL
                    // (and there are rows); else false.
                    Cached::Set {
                        empty,
                        has_null,
                        set,
                    } => {
                        return Ok(if *empty {
                            Value::Bool(false)
                        } else if t.is_null() {
                            Value::Null
                        } else if set.contains(&RowKey(vec![t])) {
                            Value::Bool(true)
                        } else if *has_null {
                            Value::Null
                        } else {
                            Value::Bool(false)
                        });
                    }
                    Cached::Rows(values) => {
                        for v in values {
                            if let Some(done) = acc.add(env.eval(cmp, &[t.clone(), v.clone()])?) {
                                return Ok(done);
                            }
                        }
                    }
                    Cached::Stored(store) => {
                        let mut store = store.borrow_mut();
                        let mut i = 0;
                        while let Some(r) = store.get(i)? {
                            env.tx.check_for_interrupts()?;
                            i += 1;
                            let v = r.into_iter().next().unwrap_or(Value::Null);
                            if let Some(done) = acc.add(env.eval(cmp, &[t.clone(), v])?) {
                                return Ok(done);
                            }
                        }
                    }
                    _ => return Err(PgError::internal("cached ANY/ALL rows of another kind")),
                }
            } else {
                let mut op = build(&entry.plan, sub_env)?;
                while let Some(r) = op.next()? {
                    let v = r.into_iter().next().unwrap_or(Value::Null);
                    if let Some(done) = acc.add(env.eval(cmp, &[t.clone(), v])?) {
                        return Ok(done);
                    }
                }
            }
            Ok(acc.finish())
        }
    }
}

/// The entry's cached result, computed by `compute` the first time.
/// A subquery's value (scalar or ARRAY): computed once if it is `uncorrelated`, else at
/// each call.
fn value_once(
    uncorrelated: bool,
    entry: &Entry,
    run: impl FnOnce() -> PgResult<Value>,
) -> PgResult<Value> {
    if !uncorrelated {
        return run();
    }
    match &*cached(entry, || run().map(Cached::Scalar))? {
        Cached::Scalar(v) => Ok(v.clone()),
        _ => Err(PgError::internal("cached subquery value of another kind")),
    }
}

fn cached(entry: &Entry, compute: impl FnOnce() -> PgResult<Cached>) -> PgResult<Rc<Cached>> {
    if let Some(c) = entry.result.borrow().as_ref() {
        return Ok(c.clone());
    }
    let c = Rc::new(compute()?);
    *entry.result.borrow_mut() = Some(c.clone());
    Ok(c)
}

/// SQL's three-valued OR (ANY) or AND (ALL) over comparison results.
struct Quantifier {
    all: bool,
    saw_null: bool,
}

impl Quantifier {
    fn new(all: bool) -> Quantifier {
        Quantifier {
            all,
            saw_null: false,
        }
    }

    /// The final result if this comparison decides it.
    fn add(&mut self, v: Value) -> Option<Value> {
        match v {
            Value::Bool(b) if b != self.all => Some(Value::Bool(b)),
            Value::Bool(_) => None,
            _ => {
                self.saw_null = true;
                None
            }
        }
    }

    fn finish(self) -> Value {
        if self.saw_null {
            Value::Null
        } else {
            Value::Bool(self.all)
        }
    }
}
