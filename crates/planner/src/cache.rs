//! The prepared-statement plan cache (planner rule 7): a statement as bound, what its
//! binding read of the catalog, its generic plan, and PostgreSQL's rule for choosing
//! between that generic plan and a custom plan made with each execution's values.
//!
//! `plan_cache_mode` = `force_generic_plan` always runs the generic plan (parameters read
//! at run time), `force_custom_plan` always plans with the values. `auto`, the default,
//! is PostgreSQL's `choose_custom_plan`: a statement without parameters runs its generic
//! plan; one with parameters gets custom plans for its first five executions, then the
//! generic plan while its estimated cost is below the custom plans' average (whose cost
//! counts the planning, PostgreSQL's `1000 × cpu_operator_cost × (relations + 1)`), else
//! custom plans again.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use sql::bound::BoundStatement;

use crate::cost::PlanContext;
use crate::estimate::Estimator;
use crate::{Plan, PlannedStatement};

/// `plan_cache_mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PlanCacheMode {
    #[default]
    Auto,
    ForceGenericPlan,
    ForceCustomPlan,
}

/// Custom plans made before the generic plan is considered (PostgreSQL's 5).
pub const CUSTOM_PLANS_FIRST: u32 = 5;

/// A prepared statement as bound, with its generic plan (for a query or DML): planned
/// once with the parameters in place (`ExprKind::Param`, read from each execution's
/// values). It holds for a later catalog while what its binding read is unchanged
/// ([`catalog::Dependencies`]): DDL on other relations leaves it alone.
pub struct CachedPlan {
    /// The last catalog version it was found to hold for (bound for, at first).
    checked_version: AtomicU64,
    deps: catalog::Dependencies,
    pub bound: BoundStatement,
    /// Whether it has a plan (a query or DML; not a utility statement).
    plannable: bool,
    /// The generic plan and its estimated cost, made when an execution first asks for
    /// it (as PostgreSQL's `BuildCachedPlan` does): a statement that runs with custom
    /// plans only never pays for it (a generic plan of a partitioned table holds every
    /// partition its constants leave).
    generic: OnceLock<(PlannedStatement, f64)>,
    /// The custom plans made so far: how many, and their total estimated cost.
    custom: Mutex<(u32, f64)>,
}

impl CachedPlan {
    pub fn new(
        version: u64,
        bound: BoundStatement,
        deps: catalog::Dependencies,
        plannable: bool,
    ) -> CachedPlan {
        CachedPlan {
            checked_version: AtomicU64::new(version),
            deps,
            bound,
            plannable,
            generic: OnceLock::new(),
            custom: Mutex::new((0, 0.0)),
        }
    }

    /// Whether it has a plan (a query or DML).
    pub fn plannable(&self) -> bool {
        self.plannable
    }

    /// The generic plan, made by `make` (with its cost) the first time it is asked for.
    fn generic(
        &self,
        make: impl FnOnce() -> common::PgResult<(PlannedStatement, f64)>,
    ) -> common::PgResult<&(PlannedStatement, f64)> {
        if let Some(g) = self.generic.get() {
            return Ok(g);
        }
        let made = make()?;
        // Another execution may have made it meanwhile: either is the statement's.
        Ok(self.generic.get_or_init(|| made))
    }

    /// Does it hold for `catalog`? O(1) for a catalog it was checked against already,
    /// else one lookup per relation it read.
    pub fn holds_for(&self, catalog: &catalog::CatalogSnapshot) -> bool {
        if self.checked_version.load(Ordering::Relaxed) == catalog.version {
            return true;
        }
        let holds = self.deps.hold_in(catalog);
        if holds {
            self.checked_version
                .store(catalog.version, Ordering::Relaxed);
        }
        holds
    }

    /// The generic plan, if this execution should run it (`choose_custom_plan`), else
    /// `None`: plan with the values and [`CachedPlan::note_custom`] its cost. `make`
    /// plans it (with its cost) if it is needed and not made yet.
    pub fn generic_for(
        &self,
        mode: PlanCacheMode,
        has_params: bool,
        make: impl FnOnce() -> common::PgResult<(PlannedStatement, f64)>,
    ) -> common::PgResult<Option<&PlannedStatement>> {
        if !self.plannable {
            return Ok(None);
        }
        let use_generic = match mode {
            PlanCacheMode::ForceGenericPlan => true,
            PlanCacheMode::ForceCustomPlan => !has_params,
            PlanCacheMode::Auto => {
                if !has_params {
                    true
                } else {
                    let (n, total) = *self.custom.lock().unwrap_or_else(|e| e.into_inner());
                    if n < CUSTOM_PLANS_FIRST {
                        false
                    } else {
                        return Ok((self.generic(make)?.1 < total / f64::from(n))
                            .then(|| self.generic.get().map(|g| &g.0))
                            .flatten());
                    }
                }
            }
        };
        if !use_generic {
            return Ok(None);
        }
        Ok(Some(&self.generic(make)?.0))
    }

    /// The generic plan, once [`CachedPlan::generic_for`] has made it.
    pub fn generic_plan(&self) -> Option<&PlannedStatement> {
        self.generic.get().map(|g| &g.0)
    }

    /// A custom plan was made and run, at `cost` (planning included).
    pub fn note_custom(&self, cost: f64) {
        let mut c = self.custom.lock().unwrap_or_else(|e| e.into_inner());
        c.0 = c.0.saturating_add(1);
        c.1 += cost;
    }

    /// Custom plans made so far.
    pub fn custom_plans(&self) -> u32 {
        self.custom.lock().unwrap_or_else(|e| e.into_inner()).0
    }
}

/// A planned statement's estimated cost (PostgreSQL's `cached_plan_cost`): its plan's
/// total, plus with `planning` what planning it is taken to cost,
/// `1000 × cpu_operator_cost × (relations + 1)`.
pub fn plan_cost(cx: &PlanContext<'_>, stmt: &PlannedStatement, planning: bool) -> f64 {
    let plan = match stmt {
        PlannedStatement::Query { plan, .. } | PlannedStatement::CopyTo { plan, .. } => plan,
        PlannedStatement::Insert { source, .. } => source,
        PlannedStatement::Update { scan, .. } | PlannedStatement::Delete { scan, .. } => scan,
        PlannedStatement::Explain { inner, .. } => return plan_cost(cx, inner, planning),
    };
    let mut cost = Estimator::new(*cx).estimate(plan).total;
    if planning {
        let relations = relations(plan)
            + usize::from(matches!(
                stmt,
                PlannedStatement::Insert { .. }
                    | PlannedStatement::Update { .. }
                    | PlannedStatement::Delete { .. }
            ));
        cost += 1000.0 * cx.settings.cpu_operator_cost * (relations as f64 + 1.0);
    }
    cost
}

/// The relations a plan reads (PostgreSQL counts its range table's entries).
fn relations(plan: &Plan) -> usize {
    let here = usize::from(matches!(
        plan,
        Plan::SeqScan { .. }
            | Plan::IndexScan { .. }
            | Plan::IndexNestLoop { .. }
            | Plan::Values { .. }
            | Plan::GenerateSeries { .. }
            | Plan::Unnest { .. }
            | Plan::SystemView { .. }
            | Plan::SequenceState { .. }
    ));
    let leaves = match plan {
        Plan::PartitionScans { leaves, .. } => leaves.len(),
        _ => 0,
    };
    here + leaves + plan.children().into_iter().map(relations).sum::<usize>()
}
