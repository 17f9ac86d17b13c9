//! What plans are chosen by: the session's planner settings (PostgreSQL's cost units and
//! `enable_*` switches), with the catalog snapshot the statement was bound against.

use catalog::CatalogSnapshot;

/// The planner's settings, as the session has them (`SET`, `pg_settings`): PostgreSQL's
/// cost units and method switches, with PostgreSQL's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannerSettings {
    /// A page read in sequence.
    pub seq_page_cost: f64,
    /// A page read out of sequence.
    pub random_page_cost: f64,
    /// Processing one row.
    pub cpu_tuple_cost: f64,
    /// Processing one index entry.
    pub cpu_index_tuple_cost: f64,
    /// One operator or function call.
    pub cpu_operator_cost: f64,
    /// The data caches' size, in pages.
    pub effective_cache_size: f64,
    pub enable_seqscan: bool,
    pub enable_indexscan: bool,
    pub enable_indexonlyscan: bool,
    pub enable_bitmapscan: bool,
    pub enable_nestloop: bool,
    pub enable_hashjoin: bool,
    pub enable_mergejoin: bool,
    pub enable_hashagg: bool,
    pub enable_sort: bool,
    pub enable_material: bool,
}

impl Default for PlannerSettings {
    fn default() -> Self {
        PlannerSettings {
            seq_page_cost: 1.0,
            random_page_cost: 4.0,
            cpu_tuple_cost: 0.01,
            cpu_index_tuple_cost: 0.005,
            cpu_operator_cost: 0.0025,
            effective_cache_size: 524288.0,
            enable_seqscan: true,
            enable_indexscan: true,
            enable_indexonlyscan: true,
            enable_bitmapscan: true,
            enable_nestloop: true,
            enable_hashjoin: true,
            enable_mergejoin: true,
            enable_hashagg: true,
            enable_sort: true,
            enable_material: true,
        }
    }
}

/// What one planning reads: the catalog snapshot the statement was bound against (its
/// tables' statistics) and the session's planner settings.
#[derive(Clone, Copy)]
pub struct PlanContext<'a> {
    pub catalog: &'a CatalogSnapshot,
    pub settings: &'a PlannerSettings,
}
