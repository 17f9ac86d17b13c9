//! Subqueries planned with their statement ([`SubPlans`]).

#[allow(unused_imports)]
use super::*;

/// The subqueries of a statement's expressions (planner rule 2), each planned once, at plan time
/// (PostgreSQL's `PlannedStmt.subplans`), with those nested in them. The executor and
/// EXPLAIN find a subquery's plan by its [`sql::bound::SubLink`]'s query, which the
/// expressions of the statement's plans share.
#[derive(Clone, Debug, Default)]
pub struct SubPlans {
    plans: Vec<(Arc<LogicalPlan>, Arc<Plan>)>,
    /// What each costs to run (for the conditions that run them).
    costs: crate::cost::SubplanCosts,
}

impl SubPlans {
    /// The plan of the subquery `query`.
    pub fn get(&self, query: &Arc<LogicalPlan>) -> Option<&Arc<Plan>> {
        self.plans
            .iter()
            .find(|(q, _)| Arc::ptr_eq(q, query))
            .map(|(_, p)| p)
    }

    /// Every subquery with its plan.
    pub fn iter(&self) -> impl Iterator<Item = (&Arc<LogicalPlan>, &Arc<Plan>)> {
        self.plans.iter().map(|(q, p)| (q, p))
    }

    pub fn is_empty(&self) -> bool {
        self.plans.is_empty()
    }

    /// Decode in each subquery's scans only the columns it reads (planner rule 12); all
    /// of a subquery's own output is read.
    pub(crate) fn prune(&mut self) {
        for (_, plan) in &mut self.plans {
            let plan = Arc::make_mut(plan);
            let all = vec![true; plan.width()];
            crate::columns::prune(plan, &all);
        }
    }

    /// Run `f` on each subquery's plan.
    pub(crate) fn for_each_plan(&mut self, mut f: impl FnMut(&mut crate::Plan)) {
        for (_, plan) in &mut self.plans {
            f(Arc::make_mut(plan));
        }
    }

    /// Order the conditions of each subquery's plan (rule 17).
    pub(crate) fn choose_index_only(&mut self, cx: &PlanContext<'_>) {
        for (_, plan) in &mut self.plans {
            crate::indexonly::choose(cx, Arc::make_mut(plan));
        }
    }

    pub(crate) fn order_quals(&mut self, cx: &PlanContext<'_>) {
        for (_, plan) in &mut self.plans {
            crate::quals::order(cx, Arc::make_mut(plan));
        }
    }

    /// What each subquery costs to run.
    pub fn costs(&self) -> &crate::cost::SubplanCosts {
        &self.costs
    }

    /// Plan every subquery `e` holds (at any depth), and those in their own
    /// expressions, once each.
    pub(crate) fn add_from(&mut self, cx: &PlanContext<'_>, e: &Expr) {
        e.walk(&mut |node| {
            if let ExprKind::SubLink(link) = &node.kind {
                if self.get(&link.query).is_some() {
                    return;
                }
                let mut query = (*link.query).clone();
                // Its min and max through an index (rule 15): subqueries of its own.
                crate::minmax::rewrite(cx, &mut query);
                // Its expressions share their subqueries with `link.query`'s.
                let _ = query.for_each_expr_mut(&mut |inner| {
                    self.add_from(cx, inner);
                    Ok(())
                });
                // Its own subqueries are planned: what they cost is known.
                let cx = PlanContext {
                    subplans: Some(&self.costs),
                    ..*cx
                };
                let plan = plan_query(&cx, query);
                let estimate = crate::estimate::Estimator::new(cx).estimate(&plan);
                self.costs.costs.push((link.query.clone(), estimate));
                self.plans.push((link.query.clone(), Arc::new(plan)));
            }
        });
    }

    /// The subqueries of `stmt`'s expressions, planned.
    pub(crate) fn of(cx: &PlanContext<'_>, stmt: &mut BoundStatement) -> SubPlans {
        let mut out = SubPlans::default();
        let _ = stmt.for_each_expr_mut(&mut |e| {
            out.add_from(cx, e);
            Ok(())
        });
        out
    }
}

/// Whether `link` runs as a hashed SubPlan (PostgreSQL's `useHashTable`): `x = ANY
/// (uncorrelated subquery)` whose comparison is `[0] = [1]` with no conversion on either
/// side, SQL equality of two values of one type, which is what a set's key equality is.
/// Its rows are then read once into a set and each test is a lookup; EXPLAIN shows it as
/// `hashed SubPlan n`.
pub fn hashed_subplan(link: &sql::bound::SubLink) -> bool {
    let sql::bound::SubLinkKind::Quantified {
        all: false, cmp, ..
    } = &link.kind
    else {
        return false;
    };
    link.args.is_empty()
        && match &cmp.kind {
            ExprKind::Binary(BinaryOp::Eq, l, r) => {
                matches!(l.kind, ExprKind::Column(0))
                    && matches!(r.kind, ExprKind::Column(1))
                    && l.ty == r.ty
            }
            _ => false,
        }
}
