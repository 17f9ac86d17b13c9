//! System views: runtime state readable with SQL.
//!
//! They are not stored: each names a fixed set of columns, and the executor fills the
//! rows from the live state when the view is scanned. Myriad's own statistics views
//! (`myriad_stat_*`) have one row; `pg_locks` and `pg_stat_activity` are PostgreSQL's,
//! with its column names (their oid and xid columns are `bigint`, and timestamp
//! columns are left out). The catalogs' OID columns are of type `oid`. A user table of the same name takes precedence
//! (PostgreSQL would search `pg_catalog` first).

use std::sync::Arc;

use common::DataType;

use crate::{ColumnDesc, TableDesc};

/// A system view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SystemView {
    /// The relation file-descriptor cache (storage smgr rule 6).
    StatFd,
    /// The buffer pool.
    StatBuffers,
    /// The write-ahead log.
    StatWal,
    /// Every lock held or awaited (PostgreSQL's `pg_locks`).
    PgLocks,
    /// Every session (PostgreSQL's `pg_stat_activity`).
    PgStatActivity,
    /// The schemas (PostgreSQL's `pg_namespace`): `pg_catalog` and `public`.
    PgNamespace,
    /// Every table, index and sequence (PostgreSQL's `pg_class`, its common columns).
    PgClass,
    /// The types Myriad has (PostgreSQL's `pg_type`, its common columns).
    PgType,
    /// The built-in functions and aggregates (PostgreSQL's `pg_proc`, less its columns
    /// of vectors, argument modes and source): `crate::procs`.
    PgProc,
    /// The one database (PostgreSQL's `pg_database`).
    PgDatabase,
    /// The columns of every table (PostgreSQL's `pg_attribute`, user columns of tables).
    PgAttribute,
    /// The access methods Myriad has (PostgreSQL's `pg_am`): heap and btree.
    PgAm,
    /// Every index's table and kind (PostgreSQL's `pg_index`, less its array and
    /// expression columns).
    PgIndex,
    /// Every column DEFAULT (PostgreSQL's `pg_attrdef`, less its own OID): `adbin` holds
    /// the expression as Myriad keeps it, its SQL text.
    PgAttrdef,
    /// The collations Myriad has (PostgreSQL's `pg_collation`): default, C and POSIX, all
    /// bytewise.
    PgCollation,
    /// PRIMARY KEY, UNIQUE and FOREIGN KEY constraints (PostgreSQL's `pg_constraint`, its
    /// common columns); a key constraint has its index's OID.
    PgConstraint,
    /// Table inheritance (PostgreSQL's `pg_inherits`): each partition's parent (Myriad
    /// has no other inheritance; partitioned indexes' rows not yet).
    PgInherits,
    /// Partitioned tables' partitioning (PostgreSQL's `pg_partitioned_table`): each
    /// partitioned table's strategy, key columns and DEFAULT partition.
    PgPartitionedTable,
    /// The roles (PostgreSQL's `pg_roles` view): Myriad's one role, `postgres`.
    PgRoles,
    /// Row security policies (PostgreSQL's `pg_policy`): empty, Myriad has none.
    PgPolicy,
    /// Extended statistics objects (PostgreSQL's `pg_statistic_ext`): empty, Myriad has
    /// none.
    PgStatisticExt,
    /// What ANALYZE found of each column (PostgreSQL's `pg_stats` view). Its
    /// `anyarray` columns (`most_common_vals`, `histogram_bounds`, `most_common_elems`)
    /// are `text` here, holding the array's text; element statistics are NULL.
    PgStats,
    /// Logical replication publications (PostgreSQL's `pg_publication`): empty.
    PgPublication,
    /// Publications' schemas (PostgreSQL's `pg_publication_namespace`): empty.
    PgPublicationNamespace,
    /// Publications' tables (PostgreSQL's `pg_publication_rel`): empty.
    PgPublicationRel,
    /// Every sequence's parameters (PostgreSQL's `pg_sequence`).
    PgSequence,
    /// Dependencies between objects (PostgreSQL's `pg_depend`): the ones Myriad records,
    /// a sequence on the column that owns it ('a' for SERIAL and OWNED BY, 'i' for an
    /// identity column's).
    PgDepend,
    /// Comments on objects (PostgreSQL's `pg_description`): the schemas' own.
    PgDescription,
    /// Triggers (PostgreSQL's `pg_trigger`): empty. PostgreSQL enforces foreign keys
    /// with internal triggers; Myriad checks them in the executor.
    PgTrigger,
    /// Role memberships (PostgreSQL's `pg_auth_members`): empty, Myriad has one role.
    PgAuthMembers,
    /// The session's run-time settings (PostgreSQL's `pg_settings` view): the ones Myriad
    /// has, with PostgreSQL's descriptions.
    PgSettings,
    /// Privileges on settings (PostgreSQL's `pg_parameter_acl`): empty, Myriad grants
    /// none.
    PgParameterAcl,
    /// The session's SQL cursors (PostgreSQL's `pg_cursors` view).
    PgCursors,
    /// Counts of the database's work since startup (PostgreSQL's `pg_stat_database`):
    /// transactions, buffer reads, temporary files, deadlocks, sessions.
    PgStatDatabase,
    /// What each table's work counted since startup (PostgreSQL's
    /// `pg_stat_user_tables`): scans, rows written, live and dead rows, VACUUM and
    /// ANALYZE (`txn::relstat`).
    PgStatUserTables,
    /// The pages each table and its indexes asked of the buffer pool, and those found
    /// there (PostgreSQL's `pg_statio_user_tables`).
    PgStatioUserTables,
    /// What each index's scans counted (PostgreSQL's `pg_stat_user_indexes`).
    PgStatUserIndexes,
    /// `information_schema.tables`: the tables of `public`.
    InfoTables,
    /// `information_schema.columns`: their columns.
    InfoColumns,
    /// `information_schema.schemata`: the schemas.
    InfoSchemata,
    /// `information_schema.table_constraints`: PRIMARY KEY, UNIQUE, FOREIGN KEY, and
    /// the CHECK each NOT NULL column is in PostgreSQL 15.
    InfoTableConstraints,
    /// `information_schema.key_column_usage`: the columns of those keys.
    InfoKeyColumnUsage,
    /// `information_schema.check_constraints`: the CHECK constraints, and the one each
    /// NOT NULL column is in PostgreSQL 15.
    InfoCheckConstraints,
}

/// The schema of the SQL standard's views (`information_schema`): its OID, given from
/// the range PostgreSQL leaves to initdb (where PostgreSQL's own varies).
pub const INFORMATION_SCHEMA_OID: common::Oid = 12900;

impl SystemView {
    /// The column through which a query asks this view for one relation's rows, and
    /// the index PostgreSQL's catalog has on it (`pg_class.oid`, `pg_attribute.attrelid`,
    /// `pg_index.indrelid`, `pg_attrdef.adrelid`, `pg_constraint.conrelid`): such a lookup makes that relation's rows only, so psql's
    /// `\d` of one table and a driver's metadata calls cost what they return, not what the
    /// catalog holds. `None` for the other views.
    pub fn key(self) -> Option<(usize, &'static str)> {
        match self {
            SystemView::PgClass => Some((0, "pg_class_oid_index")),
            SystemView::PgAttribute => Some((0, "pg_attribute_relid_attnum_index")),
            SystemView::PgIndex => Some((1, "pg_index_indrelid_index")),
            SystemView::PgAttrdef => Some((0, "pg_attrdef_adrelid_adnum_index")),
            SystemView::PgConstraint => Some((7, "pg_constraint_conrelid_contypid_conname_index")),
            _ => None,
        }
    }

    pub const ALL: [SystemView; 43] = [
        SystemView::StatFd,
        SystemView::StatBuffers,
        SystemView::StatWal,
        SystemView::PgLocks,
        SystemView::PgStatActivity,
        SystemView::PgNamespace,
        SystemView::PgClass,
        SystemView::PgType,
        SystemView::PgProc,
        SystemView::PgDatabase,
        SystemView::PgAttribute,
        SystemView::PgAm,
        SystemView::PgIndex,
        SystemView::PgAttrdef,
        SystemView::PgCollation,
        SystemView::PgConstraint,
        SystemView::PgInherits,
        SystemView::PgPartitionedTable,
        SystemView::PgRoles,
        SystemView::PgPolicy,
        SystemView::PgStatisticExt,
        SystemView::PgStats,
        SystemView::PgPublication,
        SystemView::PgPublicationNamespace,
        SystemView::PgPublicationRel,
        SystemView::PgSequence,
        SystemView::PgDepend,
        SystemView::PgDescription,
        SystemView::PgTrigger,
        SystemView::PgAuthMembers,
        SystemView::PgSettings,
        SystemView::PgParameterAcl,
        SystemView::PgCursors,
        SystemView::PgStatDatabase,
        SystemView::PgStatUserTables,
        SystemView::PgStatioUserTables,
        SystemView::PgStatUserIndexes,
        SystemView::InfoTables,
        SystemView::InfoColumns,
        SystemView::InfoSchemata,
        SystemView::InfoTableConstraints,
        SystemView::InfoKeyColumnUsage,
        SystemView::InfoCheckConstraints,
    ];

    /// A view of `pg_catalog` (on every search path) by name.
    pub fn lookup(name: &str) -> Option<SystemView> {
        SystemView::lookup_in("pg_catalog", name)
    }

    /// A view by schema and name.
    pub fn lookup_in(schema: &str, name: &str) -> Option<SystemView> {
        SystemView::ALL
            .into_iter()
            .find(|v| v.name() == name && v.schema() == schema)
    }

    /// The schema the view is in: `information_schema` for the standard's views,
    /// `pg_catalog` for the others.
    pub fn schema(self) -> &'static str {
        match self {
            SystemView::InfoTables
            | SystemView::InfoColumns
            | SystemView::InfoSchemata
            | SystemView::InfoTableConstraints
            | SystemView::InfoKeyColumnUsage
            | SystemView::InfoCheckConstraints => "information_schema",
            _ => "pg_catalog",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SystemView::StatFd => "myriad_stat_fd",
            SystemView::StatBuffers => "myriad_stat_buffers",
            SystemView::StatWal => "myriad_stat_wal",
            SystemView::PgLocks => "pg_locks",
            SystemView::PgStatActivity => "pg_stat_activity",
            SystemView::PgNamespace => "pg_namespace",
            SystemView::PgClass => "pg_class",
            SystemView::PgType => "pg_type",
            SystemView::PgProc => "pg_proc",
            SystemView::PgDatabase => "pg_database",
            SystemView::PgAttribute => "pg_attribute",
            SystemView::PgAm => "pg_am",
            SystemView::PgIndex => "pg_index",
            SystemView::PgAttrdef => "pg_attrdef",
            SystemView::PgCollation => "pg_collation",
            SystemView::PgConstraint => "pg_constraint",
            SystemView::PgInherits => "pg_inherits",
            SystemView::PgPartitionedTable => "pg_partitioned_table",
            SystemView::PgRoles => "pg_roles",
            SystemView::PgPolicy => "pg_policy",
            SystemView::PgStatisticExt => "pg_statistic_ext",
            SystemView::PgStats => "pg_stats",
            SystemView::PgPublication => "pg_publication",
            SystemView::PgPublicationNamespace => "pg_publication_namespace",
            SystemView::PgPublicationRel => "pg_publication_rel",
            SystemView::PgSequence => "pg_sequence",
            SystemView::PgDepend => "pg_depend",
            SystemView::PgDescription => "pg_description",
            SystemView::PgTrigger => "pg_trigger",
            SystemView::PgAuthMembers => "pg_auth_members",
            SystemView::PgSettings => "pg_settings",
            SystemView::PgParameterAcl => "pg_parameter_acl",
            SystemView::PgCursors => "pg_cursors",
            SystemView::PgStatDatabase => "pg_stat_database",
            SystemView::PgStatUserTables => "pg_stat_user_tables",
            SystemView::PgStatioUserTables => "pg_statio_user_tables",
            SystemView::PgStatUserIndexes => "pg_stat_user_indexes",
            SystemView::InfoTables => "tables",
            SystemView::InfoColumns => "columns",
            SystemView::InfoSchemata => "schemata",
            SystemView::InfoTableConstraints => "table_constraints",
            SystemView::InfoKeyColumnUsage => "key_column_usage",
            SystemView::InfoCheckConstraints => "check_constraints",
        }
    }

    /// The view's OID: PostgreSQL's, for the catalogs it has (`'pg_class'::regclass`
    /// is 1259 on both); Myriad's own views take OIDs from the range PostgreSQL
    /// leaves to initdb's views (below 16384, where no user object goes).
    pub fn oid(self) -> common::Oid {
        match self {
            SystemView::PgNamespace => 2615,
            SystemView::PgClass => 1259,
            SystemView::PgType => 1247,
            SystemView::PgProc => 1255,
            SystemView::PgDatabase => 1262,
            SystemView::PgAttribute => 1249,
            SystemView::PgAm => 2601,
            SystemView::PgIndex => 2610,
            SystemView::PgAttrdef => 2604,
            SystemView::PgCollation => 3456,
            SystemView::PgConstraint => 2606,
            SystemView::PgInherits => 2611,
            SystemView::PgPartitionedTable => 3350,
            SystemView::PgRoles => 12002,
            SystemView::PgPolicy => 3256,
            SystemView::PgStatisticExt => 3381,
            SystemView::PgPublication => 6104,
            SystemView::PgPublicationNamespace => 6237,
            SystemView::PgPublicationRel => 6106,
            SystemView::PgSequence => 2224,
            SystemView::PgDepend => 2608,
            SystemView::PgDescription => 2609,
            SystemView::PgTrigger => 2620,
            SystemView::PgAuthMembers => 1261,
            SystemView::PgSettings => 12003,
            SystemView::PgStats => 12004,
            SystemView::PgParameterAcl => 6243,
            SystemView::PgCursors => 12077,
            SystemView::PgStatDatabase => 12266,
            SystemView::PgStatUserTables => 12161,
            SystemView::PgStatioUserTables => 12179,
            SystemView::PgStatUserIndexes => 12192,
            SystemView::InfoTables => 12901,
            SystemView::InfoColumns => 12902,
            SystemView::InfoSchemata => 12903,
            SystemView::InfoTableConstraints => 12904,
            SystemView::InfoKeyColumnUsage => 12905,
            SystemView::InfoCheckConstraints => 12906,
            SystemView::PgLocks => 12000,
            SystemView::PgStatActivity => 12001,
            SystemView::StatFd => 12100,
            SystemView::StatBuffers => 12101,
            SystemView::StatWal => 12102,
        }
    }

    pub fn by_oid(oid: common::Oid) -> Option<SystemView> {
        SystemView::ALL.into_iter().find(|v| v.oid() == oid)
    }

    /// Column names and types, in order.
    pub fn columns(self) -> &'static [(&'static str, DataType)] {
        use DataType::{Bool, Float4, Float8, Int2, Int4, Int8, Oid, Text, TimestampTz};
        const fn array_of(elem_oid: common::Oid) -> DataType {
            DataType::Array(common::types::ArrayType {
                elem_oid,
                typmod: -1,
            })
        }
        const INT2_ARRAY: DataType = array_of(common::types::oids::INT2);
        const OID_ARRAY: DataType = array_of(common::types::oids::OID);
        const TEXT_ARRAY: DataType = array_of(common::types::oids::TEXT);
        const FLOAT4_ARRAY: DataType = array_of(common::types::oids::FLOAT4);
        match self {
            SystemView::StatFd => &[
                ("max_open_files", Int8),
                ("open_files", Int8),
                ("hits", Int8),
                ("misses", Int8),
                ("evictions", Int8),
                ("eviction_syncs", Int8),
                ("probes", Int8),
            ],
            SystemView::StatBuffers => &[
                ("pages", Int8),
                ("hits", Int8),
                ("reads", Int8),
                ("evictions", Int8),
                ("writes", Int8),
            ],
            SystemView::StatWal => &[
                ("records", Int8),
                ("bytes", Int8),
                ("syncs", Int8),
                ("checkpoints", Int8),
                ("insert_lsn", Text),
                ("flushed_lsn", Text),
                ("redo_lsn", Text),
            ],
            SystemView::PgLocks => &[
                ("locktype", Text),
                ("database", Int8),
                ("relation", Int8),
                ("page", Int4),
                ("tuple", Int2),
                ("virtualxid", Text),
                ("transactionid", Int8),
                ("classid", Int8),
                ("objid", Int8),
                ("objsubid", Int2),
                ("virtualtransaction", Text),
                ("pid", Int4),
                ("mode", Text),
                ("granted", Bool),
                ("fastpath", Bool),
            ],
            SystemView::PgStatActivity => &[
                ("datid", Int8),
                ("datname", Text),
                ("pid", Int4),
                ("leader_pid", Int4),
                ("usesysid", Int8),
                ("usename", Text),
                ("application_name", Text),
                ("wait_event_type", Text),
                ("wait_event", Text),
                ("state", Text),
                ("backend_xid", Int8),
                ("backend_xmin", Int8),
                ("query", Text),
                ("backend_type", Text),
            ],
            // `name` and `"char"` columns are text.
            // Access privileges (`aclitem[]` in PostgreSQL) are NULL: the defaults.
            SystemView::PgNamespace => &[
                ("oid", Oid),
                ("nspname", Text),
                ("nspowner", Oid),
                ("nspacl", TEXT_ARRAY),
            ],
            // The standard's domains (sql_identifier, character_data, yes_or_no,
            // cardinal_number) are text and integer.
            SystemView::InfoTables => &[
                ("table_catalog", Text),
                ("table_schema", Text),
                ("table_name", Text),
                ("table_type", Text),
                ("self_referencing_column_name", Text),
                ("reference_generation", Text),
                ("user_defined_type_catalog", Text),
                ("user_defined_type_schema", Text),
                ("user_defined_type_name", Text),
                ("is_insertable_into", Text),
                ("is_typed", Text),
                ("commit_action", Text),
            ],
            SystemView::InfoColumns => &[
                ("table_catalog", Text),
                ("table_schema", Text),
                ("table_name", Text),
                ("column_name", Text),
                ("ordinal_position", Int4),
                ("column_default", Text),
                ("is_nullable", Text),
                ("data_type", Text),
                ("character_maximum_length", Int4),
                ("character_octet_length", Int4),
                ("numeric_precision", Int4),
                ("numeric_precision_radix", Int4),
                ("numeric_scale", Int4),
                ("datetime_precision", Int4),
                ("interval_type", Text),
                ("interval_precision", Int4),
                ("character_set_catalog", Text),
                ("character_set_schema", Text),
                ("character_set_name", Text),
                ("collation_catalog", Text),
                ("collation_schema", Text),
                ("collation_name", Text),
                ("domain_catalog", Text),
                ("domain_schema", Text),
                ("domain_name", Text),
                ("udt_catalog", Text),
                ("udt_schema", Text),
                ("udt_name", Text),
                ("scope_catalog", Text),
                ("scope_schema", Text),
                ("scope_name", Text),
                ("maximum_cardinality", Int4),
                ("dtd_identifier", Text),
                ("is_self_referencing", Text),
                ("is_identity", Text),
                ("identity_generation", Text),
                ("identity_start", Text),
                ("identity_increment", Text),
                ("identity_maximum", Text),
                ("identity_minimum", Text),
                ("identity_cycle", Text),
                ("is_generated", Text),
                ("generation_expression", Text),
                ("is_updatable", Text),
            ],
            SystemView::InfoSchemata => &[
                ("catalog_name", Text),
                ("schema_name", Text),
                ("schema_owner", Text),
                ("default_character_set_catalog", Text),
                ("default_character_set_schema", Text),
                ("default_character_set_name", Text),
                ("sql_path", Text),
            ],
            SystemView::InfoTableConstraints => &[
                ("constraint_catalog", Text),
                ("constraint_schema", Text),
                ("constraint_name", Text),
                ("table_catalog", Text),
                ("table_schema", Text),
                ("table_name", Text),
                ("constraint_type", Text),
                ("is_deferrable", Text),
                ("initially_deferred", Text),
                ("enforced", Text),
                ("nulls_distinct", Text),
            ],
            SystemView::InfoCheckConstraints => &[
                ("constraint_catalog", Text),
                ("constraint_schema", Text),
                ("constraint_name", Text),
                ("check_clause", Text),
            ],
            SystemView::InfoKeyColumnUsage => &[
                ("constraint_catalog", Text),
                ("constraint_schema", Text),
                ("constraint_name", Text),
                ("table_catalog", Text),
                ("table_schema", Text),
                ("table_name", Text),
                ("column_name", Text),
                ("ordinal_position", Int4),
                ("position_in_unique_constraint", Int4),
            ],
            SystemView::PgSequence => &[
                ("seqrelid", Oid),
                ("seqtypid", Oid),
                ("seqstart", Int8),
                ("seqincrement", Int8),
                ("seqmax", Int8),
                ("seqmin", Int8),
                ("seqcache", Int8),
                ("seqcycle", Bool),
            ],
            SystemView::PgDepend => &[
                ("classid", Oid),
                ("objid", Oid),
                ("objsubid", Int4),
                ("refclassid", Oid),
                ("refobjid", Oid),
                ("refobjsubid", Int4),
                ("deptype", Text),
            ],
            SystemView::PgDescription => &[
                ("objoid", Oid),
                ("classoid", Oid),
                ("objsubid", Int4),
                ("description", Text),
            ],
            SystemView::PgTrigger => &[
                ("oid", Oid),
                ("tgrelid", Oid),
                ("tgparentid", Oid),
                ("tgname", Text),
                ("tgfoid", Oid),
                ("tgtype", Int2),
                ("tgenabled", Text),
                ("tgisinternal", Bool),
                ("tgconstrrelid", Oid),
                ("tgconstrindid", Oid),
                ("tgconstraint", Oid),
                ("tgdeferrable", Bool),
                ("tginitdeferred", Bool),
                ("tgnargs", Int2),
            ],
            SystemView::PgStatDatabase => &[
                ("datid", Oid),
                ("datname", Text),
                ("numbackends", Int4),
                ("xact_commit", Int8),
                ("xact_rollback", Int8),
                ("blks_read", Int8),
                ("blks_hit", Int8),
                ("tup_returned", Int8),
                ("tup_fetched", Int8),
                ("tup_inserted", Int8),
                ("tup_updated", Int8),
                ("tup_deleted", Int8),
                ("conflicts", Int8),
                ("temp_files", Int8),
                ("temp_bytes", Int8),
                ("deadlocks", Int8),
                ("checksum_failures", Int8),
                ("checksum_last_failure", TimestampTz(None)),
                ("blk_read_time", Float8),
                ("blk_write_time", Float8),
                ("session_time", Float8),
                ("active_time", Float8),
                ("idle_in_transaction_time", Float8),
                ("sessions", Int8),
                ("sessions_abandoned", Int8),
                ("sessions_fatal", Int8),
                ("sessions_killed", Int8),
                ("stats_reset", TimestampTz(None)),
            ],
            SystemView::PgStatUserTables => &[
                ("relid", Oid),
                ("schemaname", Text),
                ("relname", Text),
                ("seq_scan", Int8),
                ("seq_tup_read", Int8),
                ("idx_scan", Int8),
                ("idx_tup_fetch", Int8),
                ("n_tup_ins", Int8),
                ("n_tup_upd", Int8),
                ("n_tup_del", Int8),
                ("n_tup_hot_upd", Int8),
                ("n_live_tup", Int8),
                ("n_dead_tup", Int8),
                ("n_mod_since_analyze", Int8),
                ("n_ins_since_vacuum", Int8),
                ("last_vacuum", TimestampTz(None)),
                ("last_autovacuum", TimestampTz(None)),
                ("last_analyze", TimestampTz(None)),
                ("last_autoanalyze", TimestampTz(None)),
                ("vacuum_count", Int8),
                ("autovacuum_count", Int8),
                ("analyze_count", Int8),
                ("autoanalyze_count", Int8),
            ],
            SystemView::PgStatioUserTables => &[
                ("relid", Oid),
                ("schemaname", Text),
                ("relname", Text),
                ("heap_blks_read", Int8),
                ("heap_blks_hit", Int8),
                ("idx_blks_read", Int8),
                ("idx_blks_hit", Int8),
                ("toast_blks_read", Int8),
                ("toast_blks_hit", Int8),
                ("tidx_blks_read", Int8),
                ("tidx_blks_hit", Int8),
            ],
            SystemView::PgStatUserIndexes => &[
                ("relid", Oid),
                ("indexrelid", Oid),
                ("schemaname", Text),
                ("relname", Text),
                ("indexrelname", Text),
                ("idx_scan", Int8),
                ("idx_tup_read", Int8),
                ("idx_tup_fetch", Int8),
            ],
            SystemView::PgCursors => &[
                ("name", Text),
                ("statement", Text),
                ("is_holdable", Bool),
                ("is_binary", Bool),
                ("is_scrollable", Bool),
                ("creation_time", TimestampTz(None)),
            ],
            SystemView::PgParameterAcl => {
                &[("oid", Oid), ("parname", Text), ("paracl", TEXT_ARRAY)]
            }
            SystemView::PgSettings => &[
                ("name", Text),
                ("setting", Text),
                ("unit", Text),
                ("category", Text),
                ("short_desc", Text),
                ("extra_desc", Text),
                ("context", Text),
                ("vartype", Text),
                ("source", Text),
                ("min_val", Text),
                ("max_val", Text),
                ("enumvals", TEXT_ARRAY),
                ("boot_val", Text),
                ("reset_val", Text),
                ("sourcefile", Text),
                ("sourceline", Int4),
                ("pending_restart", Bool),
            ],
            SystemView::PgAuthMembers => &[
                ("roleid", Oid),
                ("member", Oid),
                ("grantor", Oid),
                ("admin_option", Bool),
            ],
            SystemView::PgAttrdef => &[("adrelid", Oid), ("adnum", Int2), ("adbin", Text)],
            SystemView::PgCollation => &[
                ("oid", Oid),
                ("collname", Text),
                ("collnamespace", Oid),
                ("collowner", Oid),
                ("collprovider", Text),
                ("collisdeterministic", Bool),
                ("collencoding", Int4),
            ],
            SystemView::PgConstraint => &[
                ("oid", Oid),
                ("conname", Text),
                ("connamespace", Oid),
                ("contype", Text),
                ("condeferrable", Bool),
                ("condeferred", Bool),
                ("convalidated", Bool),
                ("conrelid", Oid),
                ("contypid", Oid),
                ("conindid", Oid),
                ("conparentid", Oid),
                ("confrelid", Oid),
                ("confupdtype", Text),
                ("confdeltype", Text),
                ("confmatchtype", Text),
                ("conislocal", Bool),
                ("coninhcount", Int4),
                ("connoinherit", Bool),
                ("conkey", INT2_ARRAY),
                ("confkey", INT2_ARRAY),
            ],
            SystemView::PgInherits => &[
                ("inhrelid", Oid),
                ("inhparent", Oid),
                ("inhseqno", Int4),
                ("inhdetachpending", Bool),
            ],
            SystemView::PgPartitionedTable => &[
                ("partrelid", Oid),
                ("partstrat", Text),
                ("partnatts", Int2),
                ("partdefid", Oid),
                ("partattrs", INT2_ARRAY),
                ("partclass", OID_ARRAY),
                ("partcollation", OID_ARRAY),
                ("partexprs", Text),
            ],
            SystemView::PgRoles => &[
                ("rolname", Text),
                ("rolsuper", Bool),
                ("rolinherit", Bool),
                ("rolcreaterole", Bool),
                ("rolcreatedb", Bool),
                ("rolcanlogin", Bool),
                ("rolreplication", Bool),
                ("rolconnlimit", Int4),
                ("rolpassword", Text),
                ("rolvaliduntil", TimestampTz(None)),
                ("rolbypassrls", Bool),
                ("rolconfig", TEXT_ARRAY),
                ("oid", Oid),
            ],
            SystemView::PgPolicy => &[
                ("oid", Oid),
                ("polname", Text),
                ("polrelid", Oid),
                ("polcmd", Text),
                ("polpermissive", Bool),
                ("polroles", OID_ARRAY),
                ("polqual", Text),
                ("polwithcheck", Text),
            ],
            SystemView::PgStats => &[
                ("schemaname", Text),
                ("tablename", Text),
                ("attname", Text),
                ("inherited", Bool),
                ("null_frac", Float4),
                ("avg_width", Int4),
                ("n_distinct", Float4),
                ("most_common_vals", Text),
                ("most_common_freqs", FLOAT4_ARRAY),
                ("histogram_bounds", Text),
                ("correlation", Float4),
                ("most_common_elems", Text),
                ("most_common_elem_freqs", FLOAT4_ARRAY),
                ("elem_count_histogram", FLOAT4_ARRAY),
            ],
            SystemView::PgStatisticExt => &[
                ("oid", Oid),
                ("stxrelid", Oid),
                ("stxname", Text),
                ("stxnamespace", Oid),
                ("stxowner", Oid),
                ("stxstattarget", Int4),
                ("stxkeys", INT2_ARRAY),
                ("stxkind", TEXT_ARRAY),
            ],
            SystemView::PgPublication => &[
                ("oid", Oid),
                ("pubname", Text),
                ("pubowner", Oid),
                ("puballtables", Bool),
                ("pubinsert", Bool),
                ("pubupdate", Bool),
                ("pubdelete", Bool),
                ("pubtruncate", Bool),
                ("pubviaroot", Bool),
            ],
            SystemView::PgPublicationNamespace => {
                &[("oid", Oid), ("pnpubid", Oid), ("pnnspid", Oid)]
            }
            SystemView::PgPublicationRel => &[
                ("oid", Oid),
                ("prpubid", Oid),
                ("prrelid", Oid),
                ("prqual", Text),
                ("prattrs", INT2_ARRAY),
            ],
            SystemView::PgAm => &[("oid", Oid), ("amname", Text), ("amtype", Text)],
            SystemView::PgIndex => &[
                ("indexrelid", Oid),
                ("indrelid", Oid),
                ("indnatts", Int2),
                ("indnkeyatts", Int2),
                ("indisunique", Bool),
                ("indnullsnotdistinct", Bool),
                ("indisprimary", Bool),
                ("indisexclusion", Bool),
                ("indimmediate", Bool),
                ("indisclustered", Bool),
                ("indisvalid", Bool),
                ("indcheckxmin", Bool),
                ("indisready", Bool),
                ("indislive", Bool),
                ("indisreplident", Bool),
                ("indexprs", Text),
                ("indpred", Text),
            ],
            SystemView::PgClass => &[
                ("oid", Oid),
                ("relname", Text),
                ("relnamespace", Oid),
                ("reltype", Oid),
                ("relowner", Oid),
                ("relam", Oid),
                ("relpages", Int4),
                ("reltuples", Float4),
                ("relhasindex", Bool),
                ("relpersistence", Text),
                ("relkind", Text),
                ("relnatts", Int2),
                ("relchecks", Int2),
                ("relhasrules", Bool),
                ("relhastriggers", Bool),
                ("relrowsecurity", Bool),
                ("relforcerowsecurity", Bool),
                ("relispartition", Bool),
                ("reltablespace", Oid),
                ("reloftype", Oid),
                ("reltoastrelid", Oid),
                ("relreplident", Text),
                ("relpartbound", Text),
                ("reloptions", TEXT_ARRAY),
                ("relallvisible", Int4),
            ],
            SystemView::PgType => &[
                ("oid", Oid),
                ("typname", Text),
                ("typnamespace", Oid),
                ("typlen", Int2),
                ("typtype", Text),
                ("typcategory", Text),
                ("typelem", Oid),
                ("typarray", Oid),
                ("typcollation", Oid),
                ("typrelid", Oid),
                ("typstorage", Text),
                ("typnotnull", Bool),
                ("typbasetype", Oid),
                ("typtypmod", Int4),
            ],
            SystemView::PgProc => &[
                ("oid", Oid),
                ("proname", Text),
                ("pronamespace", Oid),
                ("proowner", Oid),
                ("prolang", Oid),
                ("provariadic", Oid),
                ("prokind", Text),
                ("prosecdef", Bool),
                ("proleakproof", Bool),
                ("proisstrict", Bool),
                ("proretset", Bool),
                ("provolatile", Text),
                ("proparallel", Text),
                ("pronargs", Int2),
                ("pronargdefaults", Int2),
                ("prorettype", Oid),
                ("proargnames", TEXT_ARRAY),
                ("proconfig", TEXT_ARRAY),
                ("proacl", TEXT_ARRAY),
            ],
            SystemView::PgAttribute => &[
                ("attrelid", Oid),
                ("attname", Text),
                ("atttypid", Oid),
                ("attlen", Int2),
                ("attnum", Int2),
                ("atttypmod", Int4),
                ("attnotnull", Bool),
                ("atthasdef", Bool),
                ("attidentity", Text),
                ("attisdropped", Bool),
                ("attcollation", Oid),
                ("attgenerated", Text),
                ("attstorage", Text),
                ("attcompression", Text),
                ("attstattarget", Int4),
            ],
            SystemView::PgDatabase => &[
                ("oid", Oid),
                ("datname", Text),
                ("datdba", Oid),
                ("encoding", Int4),
                ("datcollate", Text),
                ("datctype", Text),
                ("datistemplate", Bool),
                ("datallowconn", Bool),
                ("datlocprovider", Text),
                ("daticulocale", Text),
                ("datacl", TEXT_ARRAY),
            ],
        }
    }

    /// A descriptor for binding: the view's columns, no storage (OID 0).
    pub fn desc(self) -> Arc<TableDesc> {
        Arc::new(TableDesc {
            oid: 0,
            rel: 0,
            name: self.name().to_string(),
            columns: self
                .columns()
                .iter()
                .map(|(name, ty)| ColumnDesc::new(*name, *ty))
                .collect::<Vec<_>>()
                .into(),
            indexes: Vec::new(),
            ..Default::default()
        })
    }
}
