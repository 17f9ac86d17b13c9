//! The planner: bound statements to executable plans.
//!
//! Today's plans are simple and the planner's job is small: map each logical operator to
//! its physical one and push WHERE filters into the scans below them, so that a filtered
//! scan never materialises rows it will drop. Index paths (L1: only the indexes that can
//! serve the query are looked at), join ordering and partition pruning (L3) land here.

use std::sync::Arc;

use catalog::{NewTable, TableDesc};
use common::PgError;
use sql::bound::{
    AggCall, BoundDelete, BoundInsert, BoundStatement, BoundUpdate, Expr, JoinKind, LogicalPlan,
    OutputColumn, SortKey,
};

/// An executable plan tree. Every node produces rows of a fixed width.
#[derive(Clone, Debug)]
pub enum Plan {
    /// Heap sequential scan, all columns in table order, optionally filtered.
    SeqScan {
        table: Arc<TableDesc>,
        filter: Option<Expr>,
    },
    Values {
        rows: Vec<Vec<Expr>>,
        width: usize,
    },
    Filter {
        input: Box<Plan>,
        predicate: Expr,
    },
    Project {
        input: Box<Plan>,
        exprs: Vec<Expr>,
    },
    /// For each left row, scan the (materialised) right side.
    NestedLoopJoin {
        left: Box<Plan>,
        right: Box<Plan>,
        kind: JoinKind,
        on: Option<Expr>,
        right_width: usize,
    },
    /// Sort-free grouping: groups are kept in an ordered map keyed by the group values.
    Aggregate {
        input: Box<Plan>,
        group_by: Vec<Expr>,
        aggs: Vec<AggCall>,
    },
    Sort {
        input: Box<Plan>,
        keys: Vec<SortKey>,
    },
    Distinct {
        input: Box<Plan>,
    },
    Limit {
        input: Box<Plan>,
        limit: Option<Expr>,
        offset: Option<Expr>,
    },
}

impl Plan {
    /// Number of columns this node produces.
    pub fn width(&self) -> usize {
        match self {
            Plan::SeqScan { table, .. } => table.columns.len(),
            Plan::Values { width, .. } => *width,
            Plan::Project { exprs, .. } => exprs.len(),
            Plan::NestedLoopJoin {
                left, right_width, ..
            } => left.width() + right_width,
            Plan::Aggregate { group_by, aggs, .. } => group_by.len() + aggs.len(),
            Plan::Filter { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Distinct { input }
            | Plan::Limit { input, .. } => input.width(),
        }
    }
}

/// A statement ready for the executor.
#[derive(Clone, Debug)]
pub enum PlannedStatement {
    Query {
        plan: Plan,
        columns: Vec<OutputColumn>,
    },
    Insert {
        insert: BoundInsert,
        source: Plan,
    },
    Update(BoundUpdate),
    Delete(BoundDelete),
    CreateTable(NewTable),
    Notice(PgError),
    DropTables {
        tables: Vec<Arc<TableDesc>>,
        notices: Vec<PgError>,
    },
    CreateIndex {
        table: Arc<TableDesc>,
        index: catalog::NewIndex,
    },
    DropIndexes {
        indexes: Vec<(Arc<TableDesc>, catalog::IndexDesc)>,
        notices: Vec<PgError>,
    },
}

pub fn plan(stmt: BoundStatement) -> PlannedStatement {
    match stmt {
        BoundStatement::Query(q) => PlannedStatement::Query {
            plan: plan_query(q.plan),
            columns: q.columns,
        },
        BoundStatement::Insert(mut i) => {
            let source = plan_query(std::mem::replace(
                &mut i.source,
                LogicalPlan::Values {
                    rows: vec![],
                    width: 0,
                },
            ));
            PlannedStatement::Insert { insert: i, source }
        }
        BoundStatement::Update(u) => PlannedStatement::Update(u),
        BoundStatement::Delete(d) => PlannedStatement::Delete(d),
        BoundStatement::CreateTable(t) => PlannedStatement::CreateTable(t),
        BoundStatement::CreateTableSkipped(n) => PlannedStatement::Notice(n),
        BoundStatement::DropTables { tables, notices } => {
            PlannedStatement::DropTables { tables, notices }
        }
        BoundStatement::CreateIndex { table, index } => {
            PlannedStatement::CreateIndex { table, index }
        }
        BoundStatement::DropIndexes { indexes, notices } => {
            PlannedStatement::DropIndexes { indexes, notices }
        }
    }
}

/// Map a logical plan to a physical one.
pub fn plan_query(lp: LogicalPlan) -> Plan {
    let b = |p: Box<LogicalPlan>| Box::new(plan_query(*p));
    match lp {
        LogicalPlan::Scan { table } => Plan::SeqScan {
            table,
            filter: None,
        },
        LogicalPlan::Values { rows, width } => Plan::Values { rows, width },
        LogicalPlan::Filter { input, predicate } => match plan_query(*input) {
            // Push the filter into the scan below it.
            Plan::SeqScan {
                table,
                filter: None,
            } => Plan::SeqScan {
                table,
                filter: Some(predicate),
            },
            other => Plan::Filter {
                input: Box::new(other),
                predicate,
            },
        },
        LogicalPlan::Project { input, exprs } => Plan::Project {
            input: b(input),
            exprs,
        },
        LogicalPlan::Join {
            left,
            right,
            kind,
            on,
        } => {
            let right = plan_query(*right);
            let right_width = right.width();
            Plan::NestedLoopJoin {
                left: b(left),
                right: Box::new(right),
                kind,
                on,
                right_width,
            }
        }
        LogicalPlan::Aggregate {
            input,
            group_by,
            aggs,
        } => Plan::Aggregate {
            input: b(input),
            group_by,
            aggs,
        },
        LogicalPlan::Sort { input, keys } => Plan::Sort {
            input: b(input),
            keys,
        },
        LogicalPlan::Distinct { input } => Plan::Distinct { input: b(input) },
        LogicalPlan::Limit {
            input,
            limit,
            offset,
        } => Plan::Limit {
            input: b(input),
            limit,
            offset,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog::ColumnDesc;
    use common::{DataType, Value};

    #[test]
    fn filters_are_pushed_into_scans() {
        let table = Arc::new(TableDesc {
            oid: 1,
            rel: 1,
            name: "t".into(),
            columns: vec![ColumnDesc {
                name: "a".into(),
                ty: DataType::Int4,
                not_null: false,
                default: None,
            }],
            indexes: vec![],
        });
        let pred = Expr::constant(Value::Bool(true), DataType::Bool);
        let lp = LogicalPlan::Filter {
            input: Box::new(LogicalPlan::Scan { table }),
            predicate: pred,
        };
        match plan_query(lp) {
            Plan::SeqScan {
                filter: Some(_), ..
            } => {}
            other => panic!("filter not pushed down: {other:?}"),
        }
    }
}
