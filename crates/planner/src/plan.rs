//! The plan the executor runs: [`Plan`] trees and [`PlannedStatement`]s.

#[allow(unused_imports)]
use super::*;

/// An Aggregate node's part of its grouping (PostgreSQL's `AggSplit`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AggSplit {
    /// Groups and their aggregates' results.
    #[default]
    Whole,
    /// Groups and their aggregates' transition states, for a final aggregation to
    /// combine (PostgreSQL's Partial Aggregate).
    Partial,
    /// Groups combined from partial aggregations' rows (group columns, then one state
    /// per aggregate), and their aggregates' results (Finalize Aggregate). Its
    /// aggregates' arguments are over the partial aggregations' input and are not
    /// evaluated: they say which state each is.
    Final,
}

/// What prunes an Append of a partitioned table's partitions when the plan runs.
#[derive(Clone, Debug)]
pub struct RunTimePrune {
    /// The partitioned table.
    pub table: Arc<TableDesc>,
    /// The conditions on its key that read parameters.
    pub filter: Expr,
    /// The leaf partition each input scans, by its oid: what finds the inputs a run
    /// keeps without looking at the others.
    pub inputs: std::collections::HashMap<common::Oid, usize>,
}

/// An executable plan tree. Every node produces rows of a fixed width.
#[derive(Clone, Debug)]
pub enum Plan {
    /// Heap sequential scan, all columns in table order, optionally filtered.
    SeqScan {
        table: Arc<TableDesc>,
        filter: Option<Expr>,
        /// The columns the plan above reads ([`crate::columns`]): the scan decodes these
        /// and its filter's, and returns the filter's others as NULL once a row has
        /// passed it; the rest are not decoded and read NULL. `None`: all of them.
        columns: Option<ColumnSet>,
    },
    /// Btree index scan: entries between the bounds (key prefixes of constant
    /// expressions, evaluated at run time), each heap tuple fetched and checked against
    /// the whole `filter` (the bounds are never tighter than it, so it decides).
    IndexScan {
        table: Arc<TableDesc>,
        index: IndexDesc,
        lower: Bound<Vec<Expr>>,
        upper: Bound<Vec<Expr>>,
        filter: Option<Expr>,
        /// Descending key order (NULLs first), for ORDER BY ... DESC.
        backward: bool,
        /// As a sequential scan's.
        columns: Option<ColumnSet>,
        /// An index-only scan (planner rule 19): the index holds every column the scan
        /// produces and its filter reads; a row comes from the entry, and the heap is
        /// read only where the visibility map does not say the page is all-visible.
        only: bool,
    },
    /// Bitmap heap scan: the row addresses `bitmap` collects from indexes, sorted, each
    /// row fetched once in heap order and checked against `recheck` (the conditions the
    /// bitmap came from: EXPLAIN's Recheck Cond) and `filter` (the others).
    BitmapHeapScan {
        table: Arc<TableDesc>,
        bitmap: BitmapQual,
        recheck: Expr,
        filter: Option<Expr>,
        /// As a sequential scan's.
        columns: Option<ColumnSet>,
    },
    /// A sequence's one row, from its running state.
    SequenceState {
        seq: Arc<catalog::SequenceDesc>,
    },
    /// A system view's rows, made from the live state when it is read; with `key`, only
    /// those of the one relation whose oid it is (the view's key column,
    /// `catalog::SystemView::key`).
    SystemView {
        view: catalog::SystemView,
        width: usize,
        key: Option<Expr>,
    },
    Values {
        rows: Vec<Vec<Expr>>,
        width: usize,
    },
    /// `unnest(array)` (or another function `func` computed as an array): the array
    /// evaluated once, one row per element, then its number WITH ORDINALITY.
    Unnest {
        array: Expr,
        func: &'static str,
        ordinality: bool,
    },
    /// `generate_series`: its bounds evaluated once, its rows made as they are read.
    GenerateSeries {
        start: Expr,
        stop: Expr,
        step: Option<Expr>,
    },
    Filter {
        input: Box<Plan>,
        predicate: Expr,
    },
    Project {
        input: Box<Plan>,
        exprs: Vec<Expr>,
    },
    /// For each left row, scan the right side again: its rows kept from the first time
    /// where `materialize` (PostgreSQL's Materialize over the inner side) or where the
    /// right node keeps its output anyway ([`Plan::materializes_output`]), otherwise run
    /// again (a rescan); for a LATERAL right side, run again with `lateral`'s values over
    /// the left row as its outer values (PostgreSQL's nested loop over a parameterized
    /// subquery or function scan).
    NestedLoopJoin {
        left: Box<Plan>,
        right: Box<Plan>,
        kind: JoinKind,
        on: Option<Expr>,
        right_width: usize,
        lateral: Option<Vec<Expr>>,
        materialize: bool,
    },
    /// For each left row, look the matching rows of `table` up through `index`, whose
    /// leading column equals `outer_key` (evaluated over the left row): PostgreSQL's
    /// nested loop over a parameterized index scan.
    IndexNestLoop {
        left: Box<Plan>,
        table: Arc<TableDesc>,
        index: IndexDesc,
        outer_key: Expr,
        /// The join conjunct the lookup serves, over the joined row: checked again on
        /// each match (the lookup is by key order, the conjunct by SQL equality).
        key_cond: Expr,
        /// The index's next key columns the join also fixes, in order: each one's outer
        /// value (over the left row) and its conjunct (over the joined row, checked
        /// again as `key_cond` is).
        more_keys: Vec<(Expr, Expr)>,
        /// Conditions on `table`'s rows alone (over its columns).
        inner_filter: Option<Expr>,
        /// The rest of the join condition, over the joined row.
        on: Option<Expr>,
        kind: JoinKind,
    },
    /// Hash join (PostgreSQL's Hash Join over a Hash node): the right input is read once
    /// into a hash table keyed by `right_keys`; each left row looks its `left_keys` up in
    /// it, and each right row with equal keys that passes `on` is joined to it. A LEFT
    /// join keeps a left row that finds none, NULL-padded. A NULL key matches nothing.
    HashJoin {
        left: Box<Plan>,
        right: Box<Plan>,
        kind: JoinKind,
        /// The hash clauses, `left_key = right_key` over the joined row (Hash Cond).
        hash_conds: Vec<Expr>,
        /// Each hash clause's left side, over the left row.
        left_keys: Vec<Expr>,
        /// Each hash clause's right side, over the right row.
        right_keys: Vec<Expr>,
        /// The rest of the join condition, over the joined row (Join Filter).
        on: Option<Expr>,
        right_width: usize,
    },
    /// Merge join (PostgreSQL's Merge Join): both inputs sorted on their keys (each
    /// ascending, NULLs last: a Sort or an index scan in that order under each side),
    /// read once side by side; the right rows of one key are kept while left rows with
    /// that key join them. Kinds as a hash join's (a RIGHT join is planned as a LEFT
    /// join of the sides swapped).
    MergeJoin {
        left: Box<Plan>,
        right: Box<Plan>,
        kind: JoinKind,
        /// The merge clauses, `left_key = right_key` over the joined row (Merge Cond).
        merge_conds: Vec<Expr>,
        /// Each merge clause's left side, over the left row; the left input's order.
        left_keys: Vec<Expr>,
        /// Each merge clause's right side, over the right row; the right input's order.
        right_keys: Vec<Expr>,
        /// The rest of the join condition, over the joined row (Join Filter).
        on: Option<Expr>,
        right_width: usize,
    },
    /// Grouping and aggregation. Hashed (PostgreSQL's HashAggregate): every group in a
    /// hash table until the input ends. `sorted` (GroupAggregate): the input arrives in
    /// the order of `group_by` (a Sort or an index under it), so each group is done when
    /// the next begins and one group is held at a time; the groups come out in that order.
    /// Without `group_by`, one row over the whole input either way (Aggregate).
    Aggregate {
        input: Box<Plan>,
        group_by: Vec<Expr>,
        aggs: Vec<AggCall>,
        sorted: bool,
        /// Whole, or one half of a grouping split in two (a partial grouping per
        /// partition under a final one: `crate::partitionwise`).
        split: AggSplit,
        /// The places in `group_by` of the columns the others determine (a table's
        /// columns where its primary key is grouped on: PostgreSQL's
        /// `remove_useless_groupby_columns`): not part of a group's key, each group keeps
        /// its first row's values. Usually empty.
        dependent: Vec<usize>,
    },
    Sort {
        input: Box<Plan>,
        keys: Vec<SortKey>,
    },
    Distinct {
        input: Box<Plan>,
    },
    /// The inputs' rows one input after the other (UNION ALL; under a Distinct, UNION;
    /// a partitioned table's partitions).
    Append {
        inputs: Vec<Plan>,
        /// Over a partitioned table's partitions: conditions on its key whose values
        /// come when the plan runs (`$n` of a generic plan), which prune `inputs` before
        /// any is started (planner rule 18).
        prune: Option<Box<RunTimePrune>>,
        /// Over a partitioned table's partitions: that table, as the query names it
        /// (what EXPLAIN qualifies the Append's columns by, as PostgreSQL does).
        parent: Option<Arc<TableDesc>>,
    },
    /// A partitioned table's partitions, each read by a sequential scan with the
    /// parent's conditions: an Append of `SeqScan`s held as the partitions'
    /// descriptors (8 bytes each) and the conditions and columns once, so a query that
    /// reads every partition plans in little memory per partition (planner rule 18).
    /// It runs, and EXPLAIN shows it, as [`Plan::partition_scans_append`] does.
    PartitionScans {
        /// The partitioned table, as the query names it.
        parent: Arc<TableDesc>,
        /// The partitions, in bound order.
        leaves: Vec<Arc<TableDesc>>,
        /// Each scan's conditions, over the parent's (and so each partition's) row.
        filter: Option<Expr>,
        /// As a sequential scan's.
        columns: Option<ColumnSet>,
        /// As an Append's, its inputs being the leaves.
        prune: Option<Box<RunTimePrune>>,
    },
    /// A partitioned table's partitions each read in `keys` order (an index in that
    /// order, or sorted), merged into one stream in that order (PostgreSQL's Merge
    /// Append): an ORDER BY ... LIMIT reads few rows of each partition.
    MergeAppend {
        inputs: Vec<Plan>,
        /// Over the inputs' rows (each the parent's row projected by `exprs`).
        keys: Vec<sql::bound::SortKey>,
        /// The partitioned table, as the query names it; `None` over a partition-wise
        /// grouping's groupings (`crate::partitionwise`), which name their own.
        parent: Option<Arc<TableDesc>>,
        /// The projection of the parent's row the inputs make (EXPLAIN's sort keys);
        /// empty without a parent, the inputs' rows being shown as the first one's.
        exprs: Vec<Expr>,
    },
    /// INTERSECT / EXCEPT [ALL]: the right side's rows counted, then the left side's
    /// passed on or not by those counts, in the left side's order.
    SetOp {
        /// INTERSECT, else EXCEPT (a UNION is an Append).
        intersect: bool,
        all: bool,
        left: Box<Plan>,
        right: Box<Plan>,
    },
    Limit {
        input: Box<Plan>,
        limit: Option<Expr>,
        offset: Option<Expr>,
    },
    /// PostgreSQL's gating Result: `filter` (conditions fixed for the whole statement, no
    /// column of the rows) is evaluated once, before the first row; if it is not true
    /// there are no rows, else `input`'s pass. Without `input` (a filter known false) it
    /// returns no rows of `width` columns.
    Result {
        input: Option<Box<Plan>>,
        filter: Expr,
        width: usize,
    },
    /// Lock each row's version as it passes (`sql::bound::LogicalPlan::LockRows`). The
    /// one table scan below it appends each row's address after the table's columns.
    LockRows {
        input: Box<Plan>,
        table: Arc<TableDesc>,
        tid_column: usize,
        mode: common::RowLockMode,
        wait: sql::bound::RowWait,
        recheck: Option<Expr>,
        exprs: Vec<Expr>,
    },
}

impl Plan {
    /// Whether the plan could return its rows backward, as PostgreSQL's
    /// `ExecSupportsBackwardScan` says: scans, function and values scans, sorts, and
    /// what passes their rows through. A cursor declared without SCROLL or NO SCROLL
    /// scrolls when its plan can (PostgreSQL's rule, which Myriad's cursors follow by
    /// keeping the rows they have read: `executor::portal::Cursor`).
    pub fn supports_backward(&self) -> bool {
        match self {
            Plan::SeqScan { .. }
            | Plan::IndexScan { .. }
            | Plan::PartitionScans { .. }
            | Plan::Values { .. }
            | Plan::Unnest { .. }
            | Plan::GenerateSeries { .. }
            | Plan::SequenceState { .. }
            | Plan::SystemView { .. }
            | Plan::Sort { .. } => true,
            Plan::Filter { input, .. }
            | Plan::Project { input, .. }
            | Plan::Limit { input, .. } => input.supports_backward(),
            Plan::Result { input, .. } => input.as_ref().is_none_or(|i| i.supports_backward()),
            Plan::Append { inputs, .. } => inputs.iter().all(Plan::supports_backward),
            _ => false,
        }
    }

    /// Whether the node keeps all its rows before returning the first (a Sort, a
    /// function scan), so that reading them again costs no more than a Materialize
    /// would: a nested loop keeps such an inner side's rows without one (PostgreSQL's
    /// `ExecMaterializesOutput`).
    pub fn materializes_output(&self) -> bool {
        matches!(self, Plan::Sort { .. } | Plan::GenerateSeries { .. })
    }

    /// A [`Plan::PartitionScans`] as the Append of its partitions' `SeqScan`s it
    /// stands for (`None` for any other node): what EXPLAIN shows and estimates.
    pub fn partition_scans_append(&self) -> Option<Plan> {
        let Plan::PartitionScans {
            parent,
            leaves,
            filter,
            columns,
            prune,
        } = self
        else {
            return None;
        };
        Some(Plan::Append {
            inputs: leaves
                .iter()
                .map(|leaf| Plan::SeqScan {
                    table: leaf.clone(),
                    filter: filter.clone(),
                    columns: columns.clone(),
                })
                .collect(),
            prune: prune.clone(),
            parent: Some(parent.clone()),
        })
    }

    /// Whether the plan reads table `oid`: scans it, probes it, or names it as the
    /// partitioned table its partitions' scans stand for (what DDL in the same session
    /// must not change while a cursor reads it: PostgreSQL's 55006).
    pub fn reads_table(&self, oid: common::Oid) -> bool {
        let here = match self {
            Plan::SeqScan { table, .. }
            | Plan::IndexScan { table, .. }
            | Plan::BitmapHeapScan { table, .. }
            | Plan::IndexNestLoop { table, .. } => table.oid == oid,
            Plan::PartitionScans { parent, leaves, .. } => {
                parent.oid == oid || leaves.iter().any(|l| l.oid == oid)
            }
            Plan::Append {
                parent: Some(p), ..
            }
            | Plan::MergeAppend {
                parent: Some(p), ..
            } => p.oid == oid,
            _ => false,
        };
        here || self.children().into_iter().any(|c| c.reads_table(oid))
    }

    /// The plans a node reads rows from, in order.
    pub fn children(&self) -> Vec<&Plan> {
        match self {
            Plan::SeqScan { .. }
            | Plan::IndexScan { .. }
            | Plan::BitmapHeapScan { .. }
            | Plan::SystemView { .. }
            | Plan::Values { .. }
            | Plan::GenerateSeries { .. }
            | Plan::Unnest { .. }
            | Plan::PartitionScans { .. }
            | Plan::SequenceState { .. } => vec![],
            Plan::NestedLoopJoin { left, right, .. }
            | Plan::HashJoin { left, right, .. }
            | Plan::MergeJoin { left, right, .. }
            | Plan::SetOp { left, right, .. } => vec![left, right],
            Plan::IndexNestLoop { left, .. } => vec![left],
            Plan::Append { inputs, .. } | Plan::MergeAppend { inputs, .. } => {
                inputs.iter().collect()
            }
            Plan::Filter { input, .. }
            | Plan::Project { input, .. }
            | Plan::Aggregate { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Distinct { input }
            | Plan::Limit { input, .. }
            | Plan::LockRows { input, .. } => vec![input],
            Plan::Result { input, .. } => input.iter().map(|b| &**b).collect(),
        }
    }

    /// [`Plan::children`], to change them.
    pub fn children_mut(&mut self) -> Vec<&mut Plan> {
        match self {
            Plan::SeqScan { .. }
            | Plan::IndexScan { .. }
            | Plan::BitmapHeapScan { .. }
            | Plan::SystemView { .. }
            | Plan::Values { .. }
            | Plan::GenerateSeries { .. }
            | Plan::Unnest { .. }
            | Plan::PartitionScans { .. }
            | Plan::SequenceState { .. } => vec![],
            Plan::NestedLoopJoin { left, right, .. }
            | Plan::HashJoin { left, right, .. }
            | Plan::MergeJoin { left, right, .. }
            | Plan::SetOp { left, right, .. } => vec![left, right],
            Plan::IndexNestLoop { left, .. } => vec![left],
            Plan::Append { inputs, .. } | Plan::MergeAppend { inputs, .. } => {
                inputs.iter_mut().collect()
            }
            Plan::Filter { input, .. }
            | Plan::Project { input, .. }
            | Plan::Aggregate { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Distinct { input }
            | Plan::Limit { input, .. }
            | Plan::LockRows { input, .. } => vec![input],
            Plan::Result { input, .. } => input.iter_mut().map(|b| &mut **b).collect(),
        }
    }

    /// The types of the columns this node produces, where the plan knows them all
    /// (`None` for function scans, system views and VALUES of unknown type).
    pub fn column_types(&self) -> Option<Vec<DataType>> {
        Some(match self {
            Plan::SeqScan { table, .. }
            | Plan::IndexScan { table, .. }
            | Plan::PartitionScans { parent: table, .. }
            | Plan::BitmapHeapScan { table, .. } => table.column_types(),
            Plan::Values { rows, .. } => {
                let types: Vec<DataType> = rows.first()?.iter().map(|e| e.ty).collect();
                if types.contains(&DataType::Unknown) {
                    return None;
                }
                types
            }
            Plan::Project { exprs, .. } => exprs.iter().map(|e| e.ty).collect(),
            Plan::NestedLoopJoin {
                left, right, kind, ..
            }
            | Plan::HashJoin {
                left, right, kind, ..
            }
            | Plan::MergeJoin {
                left, right, kind, ..
            } => {
                let mut t = left.column_types()?;
                if !kind.left_only() {
                    t.extend(right.column_types()?);
                }
                t
            }
            Plan::IndexNestLoop {
                left, table, kind, ..
            } => {
                let mut t = left.column_types()?;
                if !kind.left_only() {
                    t.extend(table.column_types());
                }
                t
            }
            Plan::Aggregate { group_by, aggs, .. } => group_by
                .iter()
                .map(|e| e.ty)
                .chain(aggs.iter().map(|a| a.ty))
                .collect(),
            Plan::Append { inputs, .. } | Plan::MergeAppend { inputs, .. } => {
                inputs.first()?.column_types()?
            }
            Plan::SetOp { left, .. } => left.column_types()?,
            Plan::Filter { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Distinct { input }
            | Plan::Limit { input, .. } => input.column_types()?,
            Plan::Result {
                input: Some(input), ..
            } => input.column_types()?,
            Plan::SystemView { view, .. } => view.columns().iter().map(|(_, t)| *t).collect(),
            Plan::SequenceState { .. }
            | Plan::Unnest { .. }
            | Plan::GenerateSeries { .. }
            | Plan::LockRows { .. }
            | Plan::Result { input: None, .. } => return None,
        })
    }

    /// Number of columns this node produces.
    pub fn width(&self) -> usize {
        match self {
            Plan::SeqScan { table, .. }
            | Plan::IndexScan { table, .. }
            | Plan::PartitionScans { parent: table, .. }
            | Plan::BitmapHeapScan { table, .. } => table.columns.len(),
            Plan::Values { width, .. } | Plan::SystemView { width, .. } => *width,
            Plan::GenerateSeries { .. } => 1,
            Plan::Unnest { ordinality, .. } => 1 + usize::from(*ordinality),
            Plan::SequenceState { .. } => 3,
            Plan::Project { exprs, .. } => exprs.len(),
            Plan::NestedLoopJoin {
                left,
                right_width,
                kind,
                ..
            }
            | Plan::HashJoin {
                left,
                right_width,
                kind,
                ..
            }
            | Plan::MergeJoin {
                left,
                right_width,
                kind,
                ..
            } => left.width() + if kind.left_only() { 0 } else { *right_width },
            Plan::IndexNestLoop {
                left, table, kind, ..
            } => {
                left.width()
                    + if kind.left_only() {
                        0
                    } else {
                        table.columns.len()
                    }
            }
            Plan::Aggregate { group_by, aggs, .. } => group_by.len() + aggs.len(),
            Plan::Append { inputs, .. } | Plan::MergeAppend { inputs, .. } => {
                inputs.first().map_or(0, Plan::width)
            }
            Plan::SetOp { left, .. } => left.width(),
            Plan::Filter { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Distinct { input }
            | Plan::Limit { input, .. }
            | Plan::LockRows { input, .. } => input.width(),
            Plan::Result { width, .. } => *width,
        }
    }
}

/// A statement ready for the executor, with every plan it runs (planner rule 1).
#[derive(Clone, Debug)]
pub enum PlannedStatement {
    Query {
        plan: Plan,
        columns: Vec<OutputColumn>,
        subplans: SubPlans,
    },
    Insert {
        insert: Box<BoundInsert>,
        source: Plan,
        subplans: SubPlans,
    },
    /// UPDATE (PostgreSQL's ModifyTable): the rows `scan` finds (a sequential or index
    /// scan of the table with the statement's filter) are changed.
    Update {
        update: BoundUpdate,
        scan: Plan,
        subplans: SubPlans,
    },
    /// DELETE, as UPDATE.
    Delete {
        delete: BoundDelete,
        scan: Plan,
        subplans: SubPlans,
    },
    /// EXPLAIN: the explained statement's plan; `planning` is filled in by the caller,
    /// who timed the binding and planning.
    Explain {
        options: sql::bound::ExplainOptions,
        inner: Box<PlannedStatement>,
        planning: std::time::Duration,
    },
    /// COPY TO STDOUT: the query's rows in COPY's format.
    CopyTo {
        plan: Plan,
        columns: Vec<OutputColumn>,
        format: sql::bound::CopyFormat,
        subplans: SubPlans,
    },
}

impl PlannedStatement {
    /// Whether a query or COPY TO reads table `oid`, in its plan or a subquery's
    /// ([`Plan::reads_table`]).
    pub fn reads_table(&self, oid: common::Oid) -> bool {
        let plan = match self {
            PlannedStatement::Query { plan, .. } | PlannedStatement::CopyTo { plan, .. } => plan,
            _ => return false,
        };
        plan.reads_table(oid) || self.subplans().iter().any(|(_, p)| p.reads_table(oid))
    }

    /// The plans of the statement's subqueries (an EXPLAIN's: those of the statement
    /// explained).
    pub fn subplans(&self) -> &SubPlans {
        match self {
            PlannedStatement::Query { subplans, .. }
            | PlannedStatement::Insert { subplans, .. }
            | PlannedStatement::Update { subplans, .. }
            | PlannedStatement::Delete { subplans, .. }
            | PlannedStatement::CopyTo { subplans, .. } => subplans,
            PlannedStatement::Explain { inner, .. } => inner.subplans(),
        }
    }
}

/// Where a bitmap heap scan's row addresses come from.
// Most bitmaps are one Index, and BitmapAnd / BitmapOr hold Indexes: boxing the large
// variant would add an allocation to nearly every bitmap and save nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum BitmapQual {
    /// A Bitmap Index Scan: the entries of `index` between the bounds (as an index
    /// scan's), from the conditions `conds` (EXPLAIN's Index Cond).
    Index {
        index: IndexDesc,
        lower: Bound<Vec<Expr>>,
        upper: Bound<Vec<Expr>>,
        conds: Vec<Expr>,
    },
    /// BitmapOr: the addresses any of the parts finds.
    Or(Vec<BitmapQual>),
    /// BitmapAnd: the addresses every part finds.
    And(Vec<BitmapQual>),
}

/// Which columns of a table a scan decodes (planner rule 12): shared, cheap to clone.
pub type ColumnSet = Arc<[bool]>;

/// The group keys of an aggregate: `group_by` less the `dependent` places.
pub fn group_keys<'e>(group_by: &'e [Expr], dependent: &[usize]) -> Vec<&'e Expr> {
    group_by
        .iter()
        .enumerate()
        .filter(|(i, _)| !dependent.contains(i))
        .map(|(_, e)| e)
        .collect()
}
