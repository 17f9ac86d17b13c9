//! Run-time settings (PostgreSQL's GUCs) of one session: `SET`, `SET LOCAL`, `RESET`,
//! `SHOW`, with PostgreSQL's parsing, units, ranges, messages and transactional rules:
//!
//! - `SET` inside a transaction is undone if the transaction (or the savepoint it came
//!   after) rolls back; it stays if it commits.
//! - `SET LOCAL` lasts until the end of the transaction, whatever its outcome.
//! - Names are case-insensitive; an unknown one is 42704.
//! - A name of two or more identifiers joined by dots (`myapp.user_id`) is a custom
//!   setting, as in PostgreSQL: its first SET or `set_config` creates it in the session,
//!   it holds any text, RESET makes it empty, and it stays for the rest of the session
//!   even if the transaction that created it rolls back. SHOW of one never set is 42704;
//!   `pg_settings` does not list them (PostgreSQL's placeholders).
//!
//! Only the settings Myriad acts on are here; each says where it takes effect. The
//! pseudo-settings `transaction_isolation` and `transaction_read_only` belong to the
//! running transaction and live in `session`.

use std::time::Duration;

use common::datetime::TimeZone;
use common::{PgError, PgResult, SqlState, Value};
use txn::Isolation;

/// What a setting holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// Milliseconds (0 = off for the timeouts).
    Millis(i64),
    Bool(bool),
    /// An index into the setting's value names.
    Enum(usize),
    /// A time zone; `None` is the default, [`DEFAULT_TIME_ZONE`].
    Zone(Option<TimeZone>),
    Text(String),
    /// A plain integer setting's value; a memory setting's, in its unit.
    Int(i64),
    /// A floating-point setting's value.
    Real(f64),
}

#[derive(Clone, Copy)]
enum Kind {
    /// An integer in `min..=max`, without a unit.
    Int {
        min: i64,
        max: i64,
    },
    /// A floating-point number in `min..=max`, without a unit (the planner's costs).
    Real {
        min: f64,
        max: f64,
    },
    /// An amount of memory, held as a count of `unit_kb`-kilobyte units in
    /// `min..=max`; set with or without a unit (B, kB, MB, GB, TB).
    Memory {
        unit_kb: i64,
        min: i64,
        max: i64,
    },
    Millis {
        min: i64,
    },
    Bool,
    Enum(&'static [&'static str]),
    /// `TimeZone`: a zone name, POSIX TZ string or hours from UTC.
    Zone,
    /// `DateStyle`: only `ISO, MDY`, the only style Myriad's date/time I/O implements.
    DateStyle,
    /// `application_name`: printable ASCII, at most 63 bytes (others become `?`).
    Name,
    /// `client_encoding`: UTF8 (Myriad converts to no other encoding).
    ClientEncoding,
    /// A boolean only `on` of which is implemented (`standard_conforming_strings`).
    OnlyOn,
    /// Fixed when the server starts (`server_version`, ...): SHOW only (SET is 55P02).
    /// `vartype` is what `pg_settings` calls its type.
    ReadOnly {
        value: &'static str,
        vartype: &'static str,
    },
    /// `extra_float_digits`: -15 to 3; Myriad implements the values above 0, which
    /// PostgreSQL 12 and later treat alike (the shortest exact output).
    FloatDigits,
    /// `search_path`: a list of schema names, kept as given.
    SearchPath,
    /// `max_connections`: the server's, fixed when it starts (each session is given it:
    /// [`Settings::from_server`]).
    MaxConnections,
}

/// The `TimeZone` a session starts with: what PostgreSQL 15's initdb picks on a host whose
/// zone is UTC, and what the server announces in ParameterStatus (`wire`).
pub const DEFAULT_TIME_ZONE: &str = "Etc/UTC";

/// `IntervalStyle`'s values in PostgreSQL's order; Myriad prints only the first.
const INTERVAL_STYLE_NAMES: &[&str] = &["postgres", "postgres_verbose", "sql_standard", "iso_8601"];

struct Def {
    name: &'static str,
    /// What `pg_settings` says of it, as PostgreSQL 15 does.
    category: &'static str,
    short_desc: &'static str,
    extra_desc: Option<&'static str>,
    /// Who may change it: `user`, `superuser`, or `internal` (nobody).
    context: &'static str,
    kind: Kind,
    default: Val,
}

/// `plan_cache_mode`'s values, in PostgreSQL's order.
const PLAN_CACHE_MODE_NAMES: &[&str] = &["auto", "force_generic_plan", "force_custom_plan"];

/// `default_transaction_isolation`'s values, in PostgreSQL's order (its error hint lists
/// them so).
pub const ISOLATION_NAMES: &[&str] = &[
    "serializable",
    "repeatable read",
    "read committed",
    "read uncommitted",
];

/// SERIALIZABLE is refused: Myriad never runs a weaker level under its name.
pub fn serializable_refused() -> PgError {
    PgError::unsupported("SERIALIZABLE isolation").with_hint("Use REPEATABLE READ.")
}

/// The level a `default_transaction_isolation` value names (READ UNCOMMITTED is READ
/// COMMITTED, as in PostgreSQL; SERIALIZABLE is refused).
pub fn isolation_of(v: Val) -> PgResult<Isolation> {
    match v {
        Val::Enum(0) => Err(serializable_refused()),
        Val::Enum(1) => Ok(Isolation::RepeatableRead),
        _ => Ok(Isolation::ReadCommitted),
    }
}

/// The `default_transaction_isolation` value naming `iso`.
pub fn isolation_value(iso: Isolation) -> Val {
    Val::Enum(match iso {
        Isolation::RepeatableRead => 1,
        Isolation::ReadCommitted => 2,
    })
}

const MAX_MILLIS: i64 = i32::MAX as i64;

/// Every setting, by index (the `Setting` constants below).
const DEFS: &[Def] = &[
    Def {
        name: "statement_timeout",
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the maximum allowed duration of any statement.",
        extra_desc: Some("A value of 0 turns off the timeout."),
        context: "user",
        kind: Kind::Millis { min: 0 },
        default: Val::Millis(0),
    },
    Def {
        name: "lock_timeout",
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the maximum allowed duration of any wait for a lock.",
        extra_desc: Some("A value of 0 turns off the timeout."),
        context: "user",
        kind: Kind::Millis { min: 0 },
        default: Val::Millis(0),
    },
    Def {
        name: "deadlock_timeout",
        category: "Lock Management",
        short_desc: "Sets the time to wait on a lock before checking for deadlock.",
        extra_desc: None,
        context: "superuser",
        kind: Kind::Millis { min: 1 },
        default: Val::Millis(1000),
    },
    Def {
        name: "idle_in_transaction_session_timeout",
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the maximum allowed idle time between queries, when in a transaction.",
        extra_desc: Some("A value of 0 turns off the timeout."),
        context: "user",
        kind: Kind::Millis { min: 0 },
        default: Val::Millis(0),
    },
    Def {
        name: "default_transaction_isolation",
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the transaction isolation level of each new transaction.",
        extra_desc: None,
        context: "user",
        kind: Kind::Enum(ISOLATION_NAMES),
        default: Val::Enum(2),
    },
    Def {
        name: "default_transaction_read_only",
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the default read-only status of new transactions.",
        extra_desc: None,
        context: "user",
        kind: Kind::Bool,
        default: Val::Bool(false),
    },
    Def {
        name: "TimeZone",
        category: "Client Connection Defaults / Locale and Formatting",
        short_desc: "Sets the time zone for displaying and interpreting time stamps.",
        extra_desc: None,
        context: "user",
        kind: Kind::Zone,
        default: Val::Zone(None),
    },
    Def {
        name: "DateStyle",
        category: "Client Connection Defaults / Locale and Formatting",
        short_desc: "Sets the display format for date and time values.",
        extra_desc: Some("Also controls interpretation of ambiguous date inputs."),
        context: "user",
        kind: Kind::DateStyle,
        default: Val::Enum(0),
    },
    Def {
        name: "IntervalStyle",
        category: "Client Connection Defaults / Locale and Formatting",
        short_desc: "Sets the display format for interval values.",
        extra_desc: None,
        context: "user",
        kind: Kind::Enum(INTERVAL_STYLE_NAMES),
        default: Val::Enum(0),
    },
    Def {
        name: "application_name",
        category: "Reporting and Logging / What to Log",
        short_desc: "Sets the application name to be reported in statistics and logs.",
        extra_desc: None,
        context: "user",
        kind: Kind::Name,
        default: Val::Text(String::new()),
    },
    Def {
        name: "client_encoding",
        category: "Client Connection Defaults / Locale and Formatting",
        short_desc: "Sets the client's character set encoding.",
        extra_desc: None,
        context: "user",
        kind: Kind::ClientEncoding,
        default: Val::Text(String::new()),
    },
    Def {
        name: "standard_conforming_strings",
        category: "Version and Platform Compatibility / Previous PostgreSQL Versions",
        short_desc: "Causes '...' strings to treat backslashes literally.",
        extra_desc: None,
        context: "user",
        kind: Kind::OnlyOn,
        default: Val::Bool(true),
    },
    Def {
        name: "server_version",
        category: "Preset Options",
        short_desc: "Shows the server version.",
        extra_desc: None,
        context: "internal",
        kind: Kind::ReadOnly {
            value: wire::SERVER_VERSION,
            vartype: "string",
        },
        default: Val::Bool(true),
    },
    Def {
        name: "server_version_num",
        category: "Preset Options",
        short_desc: "Shows the server version as an integer.",
        extra_desc: None,
        context: "internal",
        kind: Kind::ReadOnly {
            value: "150000",
            vartype: "integer",
        },
        default: Val::Bool(true),
    },
    Def {
        name: "server_encoding",
        category: "Preset Options",
        short_desc: "Shows the server (database) character set encoding.",
        extra_desc: None,
        context: "internal",
        kind: Kind::ReadOnly {
            value: "UTF8",
            vartype: "string",
        },
        default: Val::Bool(true),
    },
    Def {
        name: "integer_datetimes",
        category: "Preset Options",
        short_desc: "Shows whether datetimes are integer based.",
        extra_desc: None,
        context: "internal",
        kind: Kind::ReadOnly {
            value: "on",
            vartype: "bool",
        },
        default: Val::Bool(true),
    },
    Def {
        name: "extra_float_digits",
        category: "Client Connection Defaults / Locale and Formatting",
        short_desc: "Sets the number of digits displayed for floating-point values.",
        extra_desc: Some(
            "This affects real, double precision, and geometric data types. A zero or negative parameter value is added to the standard number of digits (FLT_DIG or DBL_DIG as appropriate). Any value greater than zero selects precise output mode.",
        ),
        context: "user",
        kind: Kind::FloatDigits,
        default: Val::Enum(1),
    },
    Def {
        name: "search_path",
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the schema search order for names that are not schema-qualified.",
        extra_desc: None,
        context: "user",
        kind: Kind::SearchPath,
        default: Val::Text(String::new()),
    },
    Def {
        name: "default_statistics_target",
        category: "Query Tuning / Other Planner Options",
        short_desc: "Sets the default statistics target.",
        extra_desc: Some(
            "This applies to table columns that have not had a column-specific target set via ALTER TABLE SET STATISTICS.",
        ),
        context: "user",
        kind: Kind::Int { min: 1, max: 10000 },
        default: Val::Int(100),
    },
    Def {
        name: "seq_page_cost",
        category: "Query Tuning / Planner Cost Constants",
        short_desc: "Sets the planner's estimate of the cost of a sequentially fetched disk page.",
        extra_desc: None,
        context: "user",
        kind: Kind::Real {
            min: 0.0,
            max: f64::MAX,
        },
        default: Val::Real(1.0),
    },
    Def {
        name: "random_page_cost",
        category: "Query Tuning / Planner Cost Constants",
        short_desc: "Sets the planner's estimate of the cost of a nonsequentially fetched disk page.",
        extra_desc: None,
        context: "user",
        kind: Kind::Real {
            min: 0.0,
            max: f64::MAX,
        },
        default: Val::Real(4.0),
    },
    Def {
        name: "cpu_tuple_cost",
        category: "Query Tuning / Planner Cost Constants",
        short_desc: "Sets the planner's estimate of the cost of processing each tuple (row).",
        extra_desc: None,
        context: "user",
        kind: Kind::Real {
            min: 0.0,
            max: f64::MAX,
        },
        default: Val::Real(0.01),
    },
    Def {
        name: "cpu_index_tuple_cost",
        category: "Query Tuning / Planner Cost Constants",
        short_desc: "Sets the planner's estimate of the cost of processing each index entry during an index scan.",
        extra_desc: None,
        context: "user",
        kind: Kind::Real {
            min: 0.0,
            max: f64::MAX,
        },
        default: Val::Real(0.005),
    },
    Def {
        name: "cpu_operator_cost",
        category: "Query Tuning / Planner Cost Constants",
        short_desc: "Sets the planner's estimate of the cost of processing each operator or function call.",
        extra_desc: None,
        context: "user",
        kind: Kind::Real {
            min: 0.0,
            max: f64::MAX,
        },
        default: Val::Real(0.0025),
    },
    Def {
        name: "effective_cache_size",
        category: "Query Tuning / Planner Cost Constants",
        short_desc: "Sets the planner's assumption about the total size of the data caches.",
        extra_desc: Some(
            "That is, the total size of the caches (kernel cache and shared buffers) used for PostgreSQL data files. This is measured in disk pages, which are normally 8 kB each.",
        ),
        context: "user",
        kind: Kind::Memory {
            unit_kb: 8,
            min: 1,
            max: i32::MAX as i64,
        },
        default: Val::Int(524288),
    },
    Def {
        name: "enable_seqscan",
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of sequential-scan plans.",
        extra_desc: None,
        context: "user",
        kind: Kind::Bool,
        default: Val::Bool(true),
    },
    Def {
        name: "enable_indexscan",
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of index-scan plans.",
        extra_desc: None,
        context: "user",
        kind: Kind::Bool,
        default: Val::Bool(true),
    },
    Def {
        name: "enable_indexonlyscan",
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of index-only-scan plans.",
        extra_desc: None,
        context: "user",
        kind: Kind::Bool,
        default: Val::Bool(true),
    },
    Def {
        name: "enable_bitmapscan",
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of bitmap-scan plans.",
        extra_desc: None,
        context: "user",
        kind: Kind::Bool,
        default: Val::Bool(true),
    },
    Def {
        name: "enable_nestloop",
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of nested-loop join plans.",
        extra_desc: None,
        context: "user",
        kind: Kind::Bool,
        default: Val::Bool(true),
    },
    Def {
        name: "enable_hashjoin",
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of hash join plans.",
        extra_desc: None,
        context: "user",
        kind: Kind::Bool,
        default: Val::Bool(true),
    },
    Def {
        name: "enable_mergejoin",
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of merge join plans.",
        extra_desc: None,
        context: "user",
        kind: Kind::Bool,
        default: Val::Bool(true),
    },
    Def {
        name: "enable_hashagg",
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of hashed aggregation plans.",
        extra_desc: None,
        context: "user",
        kind: Kind::Bool,
        default: Val::Bool(true),
    },
    Def {
        name: "enable_sort",
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of explicit sort steps.",
        extra_desc: None,
        context: "user",
        kind: Kind::Bool,
        default: Val::Bool(true),
    },
    Def {
        name: "enable_material",
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of materialization.",
        extra_desc: None,
        context: "user",
        kind: Kind::Bool,
        default: Val::Bool(true),
    },
    Def {
        name: "plan_cache_mode",
        category: "Query Tuning / Other Planner Options",
        short_desc: "Controls the planner's selection of custom or generic plan.",
        extra_desc: Some(
            "Prepared statements can have custom and generic plans, and the planner will attempt to choose which is better.  This can be set to override the default behavior.",
        ),
        context: "user",
        kind: Kind::Enum(PLAN_CACHE_MODE_NAMES),
        default: Val::Enum(0),
    },
    Def {
        name: "work_mem",
        category: "Resource Usage / Memory",
        short_desc: "Sets the maximum memory to be used for query workspaces.",
        extra_desc: Some(
            "This much memory can be used by each internal sort operation and hash table before switching to temporary disk files.",
        ),
        context: "user",
        kind: Kind::Memory {
            unit_kb: 1,
            min: 64,
            max: i32::MAX as i64,
        },
        default: Val::Int(4096),
    },
    Def {
        name: "hash_mem_multiplier",
        category: "Resource Usage / Memory",
        short_desc: "Multiple of work_mem to use for hash tables.",
        extra_desc: None,
        context: "user",
        kind: Kind::Real {
            min: 1.0,
            max: 1000.0,
        },
        default: Val::Real(2.0),
    },
    Def {
        name: "join_collapse_limit",
        category: "Query Tuning / Other Planner Options",
        short_desc: "Sets the FROM-list size beyond which JOIN constructs are not flattened.",
        extra_desc: Some(
            "The planner will flatten explicit JOIN constructs into lists of FROM items whenever a list of no more than this many items would result.",
        ),
        context: "user",
        kind: Kind::Int {
            min: 1,
            max: i32::MAX as i64,
        },
        default: Val::Int(8),
    },
    Def {
        name: "from_collapse_limit",
        category: "Query Tuning / Other Planner Options",
        short_desc: "Sets the FROM-list size beyond which subqueries are not collapsed.",
        extra_desc: Some(
            "The planner will merge subqueries into upper queries if the resulting FROM list would have no more than this many items.",
        ),
        context: "user",
        kind: Kind::Int {
            min: 1,
            max: i32::MAX as i64,
        },
        default: Val::Int(8),
    },
    Def {
        name: "enable_partitionwise_join",
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables partitionwise join.",
        extra_desc: None,
        context: "user",
        kind: Kind::Bool,
        default: Val::Bool(false),
    },
    Def {
        name: "enable_memoize",
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables the planner's use of memoization.",
        extra_desc: None,
        context: "user",
        kind: Kind::Bool,
        default: Val::Bool(true),
    },
    Def {
        name: "enable_partitionwise_aggregate",
        category: "Query Tuning / Planner Method Configuration",
        short_desc: "Enables partitionwise aggregation and grouping.",
        extra_desc: None,
        context: "user",
        kind: Kind::Bool,
        default: Val::Bool(false),
    },
    Def {
        name: "temp_file_limit",
        category: "Resource Usage / Disk",
        short_desc: "Limits the total size of all temporary files used by each process.",
        extra_desc: Some("-1 means no limit."),
        context: "superuser",
        kind: Kind::Memory {
            unit_kb: 1,
            min: -1,
            max: i32::MAX as i64,
        },
        default: Val::Int(-1),
    },
    Def {
        name: "max_connections",
        category: "Connections and Authentication / Connection Settings",
        short_desc: "Sets the maximum number of concurrent connections.",
        extra_desc: None,
        context: "postmaster",
        kind: Kind::MaxConnections,
        default: Val::Int(crate::config::DEFAULT_MAX_CONNECTIONS as i64),
    },
    Def {
        name: "maintenance_work_mem",
        category: "Resource Usage / Memory",
        short_desc: "Sets the maximum memory to be used for maintenance operations.",
        extra_desc: Some("This includes operations such as VACUUM and CREATE INDEX."),
        context: "user",
        kind: Kind::Memory {
            unit_kb: 1,
            min: 1024,
            max: i32::MAX as i64,
        },
        default: Val::Int(65536),
    },
    // Myriad compresses with lz4 alone (access rule 12): PostgreSQL's pglz is not one of
    // its values, as lz4 is not one of a PostgreSQL built without it.
    Def {
        name: "default_toast_compression",
        category: "Client Connection Defaults / Statement Behavior",
        short_desc: "Sets the default compression method for compressible values.",
        extra_desc: None,
        context: "user",
        kind: Kind::Enum(TOAST_COMPRESSION_NAMES),
        default: Val::Enum(0),
    },
];

/// The compression methods `default_toast_compression` takes.
const TOAST_COMPRESSION_NAMES: &[&str] = &["lz4"];

/// `application_name` as PostgreSQL stores it: truncated to 63 bytes, every byte outside
/// printable ASCII replaced by `?`.
fn clean_name(text: &str) -> String {
    let cleaned: String = text
        .bytes()
        .map(|b| {
            if (32..127).contains(&b) {
                b as char
            } else {
                '?'
            }
        })
        .collect();
    let mut n = cleaned.len().min(common::limits::MAX_IDENTIFIER_BYTES);
    while !cleaned.is_char_boundary(n) {
        n -= 1;
    }
    cleaned[..n].to_string()
}

/// A setting, by its index in the table; past the table, a session's custom setting
/// (found through [`Settings::find`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setting(usize);

impl Setting {
    /// Cancel a statement that runs longer (per statement, as PostgreSQL 13 and later).
    pub const STATEMENT_TIMEOUT: Setting = Setting(0);
    /// Fail a lock wait that lasts longer (55P03).
    pub const LOCK_TIMEOUT: Setting = Setting(1);
    /// Wait this long for a lock before looking for a deadlock.
    pub const DEADLOCK_TIMEOUT: Setting = Setting(2);
    /// End a session idle this long inside a transaction block (FATAL 25P03).
    pub const IDLE_IN_TRANSACTION_SESSION_TIMEOUT: Setting = Setting(3);
    /// The isolation level of new transactions.
    pub const DEFAULT_TRANSACTION_ISOLATION: Setting = Setting(4);
    /// Whether new transactions are READ ONLY.
    pub const DEFAULT_TRANSACTION_READ_ONLY: Setting = Setting(5);
    /// The zone timestamptz input and output use (`common::datetime::session`).
    pub const TIME_ZONE: Setting = Setting(6);
    /// Date/time output style and input field order: only `ISO, MDY`.
    pub const DATE_STYLE: Setting = Setting(7);
    /// Interval output style: only `postgres`.
    pub const INTERVAL_STYLE: Setting = Setting(8);
    /// The client's name, shown in `pg_stat_activity`.
    pub const APPLICATION_NAME: Setting = Setting(9);
    /// The client's encoding: UTF8 only.
    pub const CLIENT_ENCODING: Setting = Setting(10);
    /// Backslashes in '...' literals are ordinary characters: on only.
    pub const STANDARD_CONFORMING_STRINGS: Setting = Setting(11);
    /// The schemas unqualified names are looked up in. Myriad has one schema, `public`,
    /// and resolves every unqualified name there whatever this says.
    pub const SEARCH_PATH: Setting = Setting(17);
    /// The statistics target of columns without one of their own (ANALYZE keeps up to
    /// this many most common values and histogram bins).
    pub const DEFAULT_STATISTICS_TARGET: Setting = Setting(18);
    /// The planner's cost units (`planner::PlannerSettings`), 19 to 23, then
    /// `effective_cache_size` (24) and the `enable_*` switches (25 to 34), in the table's
    /// order.
    pub const SEQ_PAGE_COST: Setting = Setting(19);
    pub const EFFECTIVE_CACHE_SIZE: Setting = Setting(24);
    pub const ENABLE_SEQSCAN: Setting = Setting(25);
    /// How prepared statements choose between generic and custom plans.
    pub const PLAN_CACHE_MODE: Setting = Setting(35);
    /// The memory each sort and hash table may use (kB), and hash tables' multiple of it.
    pub const WORK_MEM: Setting = Setting(36);
    pub const HASH_MEM_MULTIPLIER: Setting = Setting(37);
    /// How far the join search reorders explicit JOINs, and merges nested FROM lists.
    pub const JOIN_COLLAPSE_LIMIT: Setting = Setting(38);
    pub const FROM_COLLAPSE_LIMIT: Setting = Setting(39);
    /// Whether joins and aggregates over partitioned tables may be done partition by
    /// partition (off, as in PostgreSQL).
    pub const ENABLE_PARTITIONWISE_JOIN: Setting = Setting(40);
    /// Kept and shown: Myriad makes no Memoize nodes.
    pub const ENABLE_MEMOIZE: Setting = Setting(41);
    pub const ENABLE_PARTITIONWISE_AGGREGATE: Setting = Setting(42);
    /// The total size of one session's temporary files (kB; -1: no limit).
    pub const TEMP_FILE_LIMIT: Setting = Setting(43);
    /// The server's limit on sessions (SHOW only).
    pub const MAX_CONNECTIONS: Setting = Setting(44);
    /// The memory CREATE INDEX's sort may use (kB) before it spills.
    pub const MAINTENANCE_WORK_MEM: Setting = Setting(45);

    /// The settings a client is told of (ParameterStatus) when their values change, as
    /// PostgreSQL 15 reports them (`GUC_REPORT`), with the values announced at startup.
    pub const REPORTED: [Setting; 7] = [
        Setting::APPLICATION_NAME,
        Setting::CLIENT_ENCODING,
        Setting::DATE_STYLE,
        Setting::DEFAULT_TRANSACTION_READ_ONLY,
        Setting::INTERVAL_STYLE,
        Setting::STANDARD_CONFORMING_STRINGS,
        Setting::TIME_ZONE,
    ];

    /// The built-in setting named `name` (any case).
    pub fn lookup(name: &str) -> Option<Setting> {
        DEFS.iter()
            .position(|d| d.name.eq_ignore_ascii_case(name))
            .map(Setting)
    }

    /// A built-in setting's name.
    pub fn name(self) -> &'static str {
        self.def().name
    }

    fn is_custom(self) -> bool {
        self.0 >= DEFS.len()
    }
}

/// Whether `name` may name a custom setting: two or more identifiers joined by dots,
/// each a letter, `_` or non-ASCII character, then also digits and `$`
/// (PostgreSQL's `valid_custom_variable_name`).
fn valid_custom_name(name: &str) -> bool {
    name.contains('.')
        && name.split('.').all(|part| {
            let mut bytes = part.bytes();
            bytes
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_' || b >= 0x80)
                && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80)
        })
}

fn invalid_custom_name(name: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_NAME,
        format!("invalid configuration parameter name \"{name}\""),
    )
    .with_detail("Custom parameter names must be two or more simple identifiers separated by dots.")
}

pub fn unrecognized(name: &str) -> PgError {
    PgError::new(
        SqlState::UNDEFINED_OBJECT,
        format!("unrecognized configuration parameter \"{name}\""),
    )
}

fn invalid_value(name: &str, text: &str) -> PgError {
    PgError::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!("invalid value for parameter \"{name}\": \"{text}\""),
    )
}

pub use common::value::parse_bool;

/// A duration in milliseconds: a number (of milliseconds) with an optional unit (us, ms,
/// s, min, h, d), rounded to the nearest millisecond as PostgreSQL rounds.
fn parse_millis(name: &str, text: &str, min: i64) -> PgResult<i64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .unwrap_or(t.len());
    // An exponent's 'e' is part of the number only when digits follow it.
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| invalid_value(name, text))?;
    let factor = match unit.trim() {
        "" | "ms" => 1.0,
        "us" => 0.001,
        "s" => 1000.0,
        "min" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        _ => {
            return Err(invalid_value(name, text).with_hint(
                "Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\".",
            ));
        }
    };
    let ms = (value * factor).round();
    if !ms.is_finite() || ms > MAX_MILLIS as f64 || ms < i32::MIN as f64 {
        return Err(invalid_value(name, text).with_hint("Value exceeds integer range."));
    }
    let ms = ms as i64;
    if ms < min {
        return Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!(
                "{ms} ms is outside the valid range for parameter \"{name}\" ({min} .. {MAX_MILLIS})"
            ),
        ));
    }
    Ok(ms)
}

/// How `SHOW` prints milliseconds: in the largest unit that divides them exactly.
fn format_millis(ms: i64) -> String {
    if ms == 0 {
        return "0".into();
    }
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("min", 60_000),
        ("s", 1000),
    ] {
        if ms % size == 0 {
            return format!("{}{unit}", ms / size);
        }
    }
    format!("{ms}ms")
}

impl Setting {
    /// A built-in setting's definition (custom ones have none: callers check first).
    fn def(self) -> &'static Def {
        &DEFS[self.0]
    }

    /// Parse `text` as this setting's value (a custom setting takes any text).
    pub fn parse(self, text: &str) -> PgResult<Val> {
        if self.is_custom() {
            return Ok(Val::Text(text.into()));
        }
        let d = self.def();
        match d.kind {
            Kind::Millis { min } => parse_millis(d.name, text, min).map(Val::Millis),
            Kind::Int { min, max } => parse_int(d.name, text, min, max).map(Val::Int),
            Kind::Real { min, max } => parse_real(d.name, text, min, max).map(Val::Real),
            Kind::Memory { unit_kb, min, max } => {
                parse_memory(d.name, text, unit_kb, min, max).map(Val::Int)
            }
            Kind::Bool => parse_bool(text).map(Val::Bool).ok_or_else(|| {
                PgError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("parameter \"{}\" requires a Boolean value", d.name),
                )
            }),
            Kind::Enum(names) => {
                let i = names
                    .iter()
                    .position(|n| n.eq_ignore_ascii_case(text.trim()))
                    .ok_or_else(|| {
                        invalid_value(d.name, text)
                            .with_hint(format!("Available values: {}.", names.join(", ")))
                    })?;
                if self == Setting::INTERVAL_STYLE && i != 0 {
                    return Err(PgError::unsupported(format!("IntervalStyle {}", names[i]))
                        .with_hint("Only IntervalStyle postgres is implemented."));
                }
                Ok(Val::Enum(i))
            }
            Kind::Zone => TimeZone::parse(text.trim()).map(|z| Val::Zone(Some(z))),
            Kind::DateStyle => parse_date_style(text).map(|()| Val::Enum(0)),
            Kind::Name => Ok(Val::Text(clean_name(text))),
            Kind::ClientEncoding => {
                // PostgreSQL's name matching ignores case and punctuation (`utf-8`).
                let key: String = text
                    .chars()
                    .filter(char::is_ascii_alphanumeric)
                    .collect::<String>()
                    .to_ascii_uppercase();
                if key == "UTF8" || key == "UNICODE" {
                    return Ok(Val::Text(String::new()));
                }
                match common::session::ENCODINGS
                    .iter()
                    .find(|e| e.replace('_', "") == key)
                {
                    Some(e) => Err(PgError::unsupported(format!(
                        "conversion between {e} and UTF8"
                    ))),
                    None => Err(invalid_value(d.name, text)),
                }
            }
            Kind::ReadOnly { .. } => Err(PgError::new(
                SqlState::CANT_CHANGE_RUNTIME_PARAM,
                format!("parameter \"{}\" cannot be changed", d.name),
            )),
            Kind::MaxConnections => Err(PgError::new(
                SqlState::CANT_CHANGE_RUNTIME_PARAM,
                format!(
                    "parameter \"{}\" cannot be changed without restarting the server",
                    d.name
                ),
            )),
            Kind::FloatDigits => {
                let n: i64 = text.trim().parse().map_err(|_| {
                    PgError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        format!("invalid value for parameter \"{}\": \"{text}\"", d.name),
                    )
                })?;
                if !(-15..=3).contains(&n) {
                    return Err(PgError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        format!(
                            "{n} is outside the valid range for parameter \"{}\" (-15 .. 3)",
                            d.name
                        ),
                    ));
                }
                if n <= 0 {
                    return Err(PgError::unsupported(format!("{} {n}", d.name)).with_hint(
                        "Myriad prints floats in the shortest exact form (values 1 to 3).",
                    ));
                }
                Ok(Val::Enum(n as usize))
            }
            Kind::SearchPath => Ok(Val::Text(text.to_string())),
            Kind::OnlyOn => match parse_bool(text) {
                Some(true) => Ok(Val::Bool(true)),
                Some(false) => Err(PgError::unsupported(format!("{} off", d.name))),
                None => Err(PgError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("parameter \"{}\" requires a Boolean value", d.name),
                )),
            },
        }
    }

    /// The value as `pg_settings.setting` shows it: a duration as a number of its unit
    /// (milliseconds), anything else as SHOW prints it.
    pub fn raw(self, v: Val) -> String {
        match v {
            Val::Millis(ms) | Val::Int(ms) => ms.to_string(),
            v => self.format(v),
        }
    }

    /// `pg_settings`' row for this setting, whose value is `v` (from `source`) and reset
    /// value `reset`.
    fn row(self, v: Val, source: Source, reset: Val) -> Vec<Value> {
        let d = self.def();
        let ints = |min: i64, max: i64| Some((min.to_string(), max.to_string()));
        let (vartype, unit, range) = match d.kind {
            Kind::Millis { min } => ("integer", Some("ms"), ints(min, MAX_MILLIS)),
            Kind::FloatDigits => ("integer", None, ints(-15, 3)),
            Kind::Int { min, max } => ("integer", None, ints(min, max)),
            Kind::Memory { unit_kb, min, max } => (
                "integer",
                Some(if unit_kb == 8 { "8kB" } else { "kB" }),
                ints(min, max),
            ),
            Kind::Real { min, max } => ("real", None, Some((format_g(min), format_g(max)))),
            Kind::Bool | Kind::OnlyOn => ("bool", None, None),
            Kind::Enum(_) => ("enum", None, None),
            // A read-only integer's range is its one value.
            Kind::ReadOnly { value, vartype } => (
                vartype,
                None,
                value.parse().ok().and_then(|n: i64| ints(n, n)),
            ),
            Kind::MaxConnections => ("integer", None, ints(1, 262143)),
            _ => ("string", None, None),
        };
        SettingRow {
            name: d.name,
            setting: self.raw(v),
            unit,
            category: d.category,
            short_desc: d.short_desc,
            extra_desc: d.extra_desc,
            context: d.context,
            vartype,
            source: source.name(),
            range,
            enumvals: match d.kind {
                Kind::Enum(names) => names,
                _ => &[],
            },
            boot_val: self.raw(d.default.clone()),
            reset_val: self.raw(reset),
        }
        .values()
    }

    /// The value as `SHOW` prints it.
    pub fn format(self, v: Val) -> String {
        if self.is_custom() {
            return match v {
                Val::Text(t) => t,
                _ => String::new(),
            };
        }
        match (self.def().kind, v) {
            (Kind::ReadOnly { value, .. }, _) => value.into(),
            (_, Val::Millis(ms)) => format_millis(ms),
            (Kind::Memory { unit_kb, .. }, Val::Int(n)) => format_memory(n * unit_kb),
            (_, Val::Real(x)) => format_g(x),
            (_, Val::Int(n)) => n.to_string(),
            (_, Val::Bool(b)) => if b { "on" } else { "off" }.into(),
            (Kind::DateStyle, _) => "ISO, MDY".into(),
            (Kind::Enum(names), Val::Enum(i)) => names[i].into(),
            (_, Val::Enum(i)) => i.to_string(),
            (_, Val::Zone(Some(z))) => z.name().into(),
            (_, Val::Zone(None)) => DEFAULT_TIME_ZONE.into(),
            (Kind::ClientEncoding, _) => "UTF8".into(),
            (Kind::SearchPath, Val::Text(t)) if t.is_empty() => "\"$user\", public".into(),
            (_, Val::Text(t)) => t,
        }
    }
}

/// A floating-point setting's value (`parse_real` without units).
fn parse_real(name: &str, text: &str, min: f64, max: f64) -> PgResult<f64> {
    let t = text.trim();
    let x: f64 = t
        .parse()
        .ok()
        .filter(|x: &f64| !x.is_nan())
        .ok_or_else(|| invalid_value(name, text))?;
    if !(min..=max).contains(&x) {
        return Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!(
                "{} is outside the valid range for parameter \"{name}\" ({} .. {})",
                format_g(x),
                format_g(min),
                format_g(max)
            ),
        ));
    }
    Ok(x)
}

/// A number as C's `%g` prints it (six significant digits, trailing zeros dropped,
/// an exponent below 1e-4 and from 1e6): how PostgreSQL shows a real setting.
pub(crate) fn format_g(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if !x.is_finite() {
        return x.to_string();
    }
    let sci = format!("{x:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-4..6).contains(&exp) {
        let m = trim(mantissa.to_string());
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (5 - exp).max(0) as usize;
        trim(format!("{x:.decimals$}"))
    }
}

/// A memory setting's value in units of `unit_kb` kilobytes: a number, in those units
/// unless a unit follows (B, kB, MB, GB, TB), rounded to the nearest unit (half to
/// even, as C's `rint`).
fn parse_memory(name: &str, text: &str, unit_kb: i64, min: i64, max: i64) -> PgResult<i64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+')))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| invalid_value(name, text))?;
    let kb = match unit.trim() {
        "" => unit_kb as f64,
        "B" => 1.0 / 1024.0,
        "kB" => 1.0,
        "MB" => 1024.0,
        "GB" => 1024.0 * 1024.0,
        "TB" => 1024.0 * 1024.0 * 1024.0,
        _ => {
            return Err(invalid_value(name, text).with_hint(
                "Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \"TB\".",
            ));
        }
    };
    let units = (value * kb / unit_kb as f64).round_ties_even();
    if !units.is_finite() || units.abs() > i64::MAX as f64 / 2.0 {
        return Err(invalid_value(name, text).with_hint("Value exceeds integer range."));
    }
    let n = units as i64;
    if !(min..=max).contains(&n) {
        return Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!(
                "{n} {unit_kb}kB is outside the valid range for parameter \"{name}\" ({min} .. {max})"
            ),
        ));
    }
    Ok(n)
}

/// How `SHOW` prints an amount of memory: in the largest unit that divides it exactly.
fn format_memory(kb: i64) -> String {
    // 0, and -1 (`temp_file_limit`'s "no limit"), without a unit.
    if kb <= 0 {
        return kb.to_string();
    }
    for (unit, size) in [("TB", 1i64 << 30), ("GB", 1 << 20), ("MB", 1 << 10)] {
        if kb % size == 0 {
            return format!("{}{unit}", kb / size);
        }
    }
    format!("{kb}kB")
}

/// An integer setting's value (`parse_int` without units): decimal, or hexadecimal after
/// `0x`, or octal after `0`; a fraction rounds to the nearest integer (half away from 0).
fn parse_int(name: &str, text: &str, min: i64, max: i64) -> PgResult<i64> {
    let t = text.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let parsed = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i64::from_str_radix(hex, 16).ok()
    } else if digits.len() > 1
        && digits.starts_with('0')
        && digits.bytes().all(|b| b.is_ascii_digit())
    {
        i64::from_str_radix(&digits[1..], 8).ok()
    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse::<i64>().ok()
    } else {
        digits
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite() && !digits.starts_with(['i', 'I', 'n', 'N']))
            .filter(|f| f.abs() < 9.2e18)
            .map(|f| f.round() as i64)
    };
    let Some(n) = parsed.map(|n| if neg { -n } else { n }) else {
        return Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("invalid value for parameter \"{name}\": \"{text}\""),
        ));
    };
    if !(min..=max).contains(&n) {
        return Err(PgError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("{n} is outside the valid range for parameter \"{name}\" ({min} .. {max})"),
        ));
    }
    Ok(n)
}

/// Checks a `DateStyle` value (`check_datestyle`): a comma-separated list of an output
/// style (ISO, SQL, Postgres, German) and a field order (YMD, DMY, MDY, or Euro/European,
/// NonEuro/NonEuropean/US); either may be left out. Myriad implements ISO output with MDY
/// order only, so any other recognized word is 0A000.
fn parse_date_style(text: &str) -> PgResult<()> {
    let name = "DateStyle";
    let (mut style, mut order): (Option<&str>, Option<&str>) = (None, None);
    for raw in text.split(',') {
        let word = raw.trim().to_ascii_lowercase();
        let (slot, value) = match word.as_str() {
            "iso" => (&mut style, "ISO"),
            "sql" => (&mut style, "SQL"),
            "postgres" => (&mut style, "Postgres"),
            "german" => (&mut style, "German"),
            "ymd" => (&mut order, "YMD"),
            "dmy" | "euro" | "european" => (&mut order, "DMY"),
            "mdy" | "us" | "noneuro" | "noneuropean" => (&mut order, "MDY"),
            "default" => (&mut style, "ISO"),
            _ => {
                return Err(invalid_value(name, text)
                    .with_detail(format!("Unrecognized key word: \"{}\".", raw.trim())));
            }
        };
        if slot.is_some_and(|v| v != value) {
            return Err(
                invalid_value(name, text).with_detail("Conflicting \"datestyle\" specifications.")
            );
        }
        *slot = Some(value);
    }
    if style.unwrap_or("ISO") != "ISO" || order.unwrap_or("MDY") != "MDY" {
        return Err(
            PgError::unsupported(format!("DateStyle \"{}\"", text.trim()))
                .with_hint("Only DateStyle ISO, MDY is implemented."),
        );
    }
    Ok(())
}

/// One row of `pg_settings` (its file columns are NULL, `pending_restart` false).
struct SettingRow {
    name: &'static str,
    setting: String,
    unit: Option<&'static str>,
    category: &'static str,
    short_desc: &'static str,
    extra_desc: Option<&'static str>,
    context: &'static str,
    vartype: &'static str,
    source: &'static str,
    /// `min_val` and `max_val`, for an integer.
    range: Option<(String, String)>,
    /// `enumvals`, for an enum (NULL if empty).
    enumvals: &'static [&'static str],
    boot_val: String,
    reset_val: String,
}

impl SettingRow {
    fn values(self) -> Vec<Value> {
        let text = |t: &str| Value::Text(t.into());
        let opt = |t: Option<&str>| t.map_or(Value::Null, text);
        let (min, max) = match self.range {
            Some((min, max)) => (text(&min), text(&max)),
            None => (Value::Null, Value::Null),
        };
        vec![
            text(self.name),
            text(&self.setting),
            opt(self.unit),
            text(self.category),
            text(self.short_desc),
            opt(self.extra_desc),
            text(self.context),
            text(self.vartype),
            text(self.source),
            min,
            max,
            if self.enumvals.is_empty() {
                Value::Null
            } else {
                Value::Array(std::sync::Arc::new(common::array::Array::from_items(
                    common::types::oids::TEXT,
                    self.enumvals.iter().map(|n| text(n)).collect(),
                )))
            },
            text(&self.boot_val),
            text(&self.reset_val),
            Value::Null,
            Value::Null,
            Value::Bool(false),
        ]
    }
}

/// `pg_settings`' rows of the transaction's own pseudo-settings, `transaction_isolation`
/// and `transaction_read_only`, as PostgreSQL shows them (source `override`).
pub fn transaction_rows(isolation: &'static str, read_only: bool) -> Vec<Vec<Value>> {
    let row = |name, setting: &str, short_desc, vartype, enumvals, boot: &str| SettingRow {
        name,
        setting: setting.into(),
        unit: None,
        category: "Client Connection Defaults / Statement Behavior",
        short_desc,
        extra_desc: None,
        context: "user",
        vartype,
        source: "override",
        range: None,
        enumvals,
        boot_val: boot.into(),
        reset_val: boot.into(),
    };
    vec![
        row(
            "transaction_isolation",
            isolation,
            "Sets the current transaction's isolation level.",
            "enum",
            ISOLATION_NAMES,
            "read committed",
        )
        .values(),
        row(
            "transaction_read_only",
            if read_only { "on" } else { "off" },
            "Sets the current transaction's read-only status.",
            "bool",
            &[],
            "off",
        )
        .values(),
    ]
}

/// The settings in a startup packet's `options` (what libpq's `PGOPTIONS` sends), as
/// (name, value) in order: `-c name=value`, `-cname=value` or `--name=value`, words
/// separated by spaces, a backslash taking the next character literally, and `-` in a
/// name read as `_` (PostgreSQL's `pg_split_opts` and `ParseLongOption`). Anything else
/// is returned as an error message, one per word, for the caller to report.
pub fn parse_options(options: &str) -> (Vec<(String, String)>, Vec<String>) {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = options.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => word.extend(chars.next()),
            c if c.is_ascii_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    let mut settings = Vec::new();
    let mut errors = Vec::new();
    let mut words = words.into_iter();
    while let Some(w) = words.next() {
        let arg = if w == "-c" {
            match words.next() {
                Some(a) => a,
                None => {
                    errors.push("-c requires a value".to_string());
                    continue;
                }
            }
        } else if let Some(a) = w.strip_prefix("--").or_else(|| w.strip_prefix("-c")) {
            a.to_string()
        } else {
            errors.push(format!(
                "invalid command-line argument for server process: {w}"
            ));
            continue;
        };
        match arg.split_once('=') {
            Some((name, value)) => settings.push((name.replace('-', "_"), value.to_string())),
            None => errors.push(format!("-c {arg} requires a value")),
        }
    }
    (settings, errors)
}

/// Where a setting's value came from (`pg_settings.source`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Never set.
    Default,
    /// The server's configuration (`max_connections`).
    Server,
    /// The client's startup packet.
    Client,
    /// SET, SET LOCAL or set_config.
    Session,
}

impl Source {
    fn name(self) -> &'static str {
        match self {
            Source::Default => "default",
            Source::Server => "configuration file",
            Source::Client => "client",
            Source::Session => "session",
        }
    }
}

/// A change to undo if its transaction level rolls back.
#[derive(Clone, Debug)]
struct Undo {
    /// The transaction level (1 = top, +1 per savepoint) the change was made at.
    depth: usize,
    setting: Setting,
    session: Val,
    source: Source,
    local: Option<Val>,
}

/// One session's settings: each vector has the built-in settings (`DEFS`), then the
/// custom ones in the order they were created.
#[derive(Debug)]
pub struct Settings {
    /// The custom settings' names (lower case), from index `DEFS.len()` on.
    custom: Vec<String>,
    session: Vec<Val>,
    /// Where each session value came from.
    sources: Vec<Source>,
    /// What RESET goes back to: the client's startup value, else the default.
    reset: Vec<(Val, Source)>,
    /// `SET LOCAL` values, until the transaction ends.
    local: Vec<Option<Val>>,
    undo: Vec<Undo>,
    /// Counts the changes that may have moved a value (what ParameterStatus checks:
    /// nothing to compare while it stands still).
    changes: u64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            custom: Vec::new(),
            session: DEFS.iter().map(|d| d.default.clone()).collect(),
            sources: vec![Source::Default; DEFS.len()],
            reset: DEFS
                .iter()
                .map(|d| (d.default.clone(), Source::Default))
                .collect(),
            local: vec![None; DEFS.len()],
            undo: Vec::new(),
            changes: 0,
        }
    }
}

impl Settings {
    /// The setting named `name` (any case): a built-in one, or a custom one this session
    /// has created. 42704 if there is none.
    pub fn find(&self, name: &str) -> PgResult<Setting> {
        if let Some(s) = Setting::lookup(name) {
            return Ok(s);
        }
        self.custom
            .iter()
            .position(|c| c.eq_ignore_ascii_case(name))
            .map(|i| Setting(DEFS.len() + i))
            .ok_or_else(|| unrecognized(name))
    }

    /// [`Settings::find`], creating a custom setting (empty) if `name` may be one: what
    /// SET and `set_config` look a name up with. 42602 for a dotted name that may not.
    pub fn find_or_create(&mut self, name: &str) -> PgResult<Setting> {
        match self.find(name) {
            Ok(s) => Ok(s),
            Err(e) if !name.contains('.') => Err(e),
            Err(_) if !valid_custom_name(name) => Err(invalid_custom_name(name)),
            Err(_) => {
                self.custom.push(name.to_lowercase());
                let empty = Val::Text(String::new());
                self.session.push(empty.clone());
                self.sources.push(Source::Default);
                self.reset.push((empty, Source::Default));
                self.local.push(None);
                Ok(Setting(self.session.len() - 1))
            }
        }
    }

    /// The value of `s` as `SHOW` prints it.
    pub fn show(&self, s: Setting) -> String {
        s.format(self.get(s))
    }

    pub fn get(&self, s: Setting) -> Val {
        self.local[s.0]
            .clone()
            .unwrap_or_else(|| self.session[s.0].clone())
    }

    /// The `TimeZone` in effect.
    pub fn time_zone(&self) -> TimeZone {
        match self.get(Setting::TIME_ZONE) {
            Val::Zone(Some(z)) => z,
            // Looked up once: every statement asks (the session clock), and the zone
            // cache behind `lookup` is one mutex shared by all sessions.
            _ => {
                static DEFAULT: std::sync::LazyLock<TimeZone> = std::sync::LazyLock::new(|| {
                    TimeZone::lookup(DEFAULT_TIME_ZONE).unwrap_or_else(TimeZone::utc)
                });
                DEFAULT.clone()
            }
        }
    }

    /// A timeout setting as a duration; `None` when 0 (off).
    pub fn timeout(&self, s: Setting) -> Option<Duration> {
        match self.get(s) {
            Val::Millis(ms) if ms > 0 => Some(Duration::from_millis(ms as u64)),
            _ => None,
        }
    }

    /// What the planner reads: the cost units, `effective_cache_size`, the `enable_*`
    /// switches, `work_mem`, `hash_mem_multiplier` and the collapse limits.
    pub fn planner(&self) -> planner::PlannerSettings {
        let real = |i: usize| match self.get(Setting(Setting::SEQ_PAGE_COST.0 + i)) {
            Val::Real(x) => x,
            _ => 0.0,
        };
        let on = |i: usize| self.flag(Setting(Setting::ENABLE_SEQSCAN.0 + i));
        planner::PlannerSettings {
            seq_page_cost: real(0),
            random_page_cost: real(1),
            cpu_tuple_cost: real(2),
            cpu_index_tuple_cost: real(3),
            cpu_operator_cost: real(4),
            effective_cache_size: self.int(Setting::EFFECTIVE_CACHE_SIZE) as f64,
            enable_seqscan: on(0),
            enable_indexscan: on(1),
            enable_indexonlyscan: on(2),
            enable_bitmapscan: on(3),
            enable_nestloop: on(4),
            enable_hashjoin: on(5),
            enable_mergejoin: on(6),
            enable_hashagg: on(7),
            enable_sort: on(8),
            enable_material: on(9),
            plan_cache_mode: self.plan_cache_mode(),
            work_mem: self.int(Setting::WORK_MEM) as f64,
            maintenance_work_mem: self.int(Setting::MAINTENANCE_WORK_MEM) as f64,
            hash_mem_multiplier: match self.get(Setting::HASH_MEM_MULTIPLIER) {
                Val::Real(x) => x,
                _ => 2.0,
            },
            join_collapse_limit: self.int(Setting::JOIN_COLLAPSE_LIMIT) as usize,
            from_collapse_limit: self.int(Setting::FROM_COLLAPSE_LIMIT) as usize,
            enable_partitionwise_join: self.flag(Setting::ENABLE_PARTITIONWISE_JOIN),
            enable_partitionwise_aggregate: self.flag(Setting::ENABLE_PARTITIONWISE_AGGREGATE),
        }
    }

    /// `plan_cache_mode`.
    pub fn plan_cache_mode(&self) -> planner::PlanCacheMode {
        match self.get(Setting::PLAN_CACHE_MODE) {
            Val::Enum(1) => planner::PlanCacheMode::ForceGenericPlan,
            Val::Enum(2) => planner::PlanCacheMode::ForceCustomPlan,
            _ => planner::PlanCacheMode::Auto,
        }
    }

    /// An integer setting's value.
    pub fn int(&self, s: Setting) -> i64 {
        match self.get(s) {
            Val::Int(n) => n,
            _ => 0,
        }
    }

    pub fn flag(&self, s: Setting) -> bool {
        self.get(s) == Val::Bool(true)
    }

    /// Set `s` to `v` (its reset value if `None`) at transaction level `depth`;
    /// `local`: until the transaction ends.
    pub fn set(&mut self, s: Setting, v: Option<Val>, local: bool, depth: usize) {
        self.changes += 1;
        self.undo.push(Undo {
            depth,
            setting: s,
            session: self.session[s.0].clone(),
            source: self.sources[s.0],
            local: self.local[s.0].clone(),
        });
        let (v, source) = match v {
            Some(v) => (v, Source::Session),
            None => self.reset[s.0].clone(),
        };
        if local {
            self.local[s.0] = Some(v);
        } else {
            self.session[s.0] = v;
            self.sources[s.0] = source;
            self.local[s.0] = None;
        }
    }

    /// A value from the client's startup packet: the session starts with it, and RESET
    /// goes back to it.
    /// A value the server's configuration gives setting `s` (`max_connections`).
    pub fn from_server(&mut self, s: Setting, v: Val) {
        self.session[s.0] = v.clone();
        self.sources[s.0] = Source::Server;
        self.reset[s.0] = (v, Source::Server);
    }

    pub fn startup(&mut self, s: Setting, v: Val) {
        self.changes += 1;
        self.session[s.0] = v.clone();
        self.sources[s.0] = Source::Client;
        self.reset[s.0] = (v, Source::Client);
    }

    /// `pg_settings`' rows of the built-in settings, unordered.
    pub fn rows(&self) -> Vec<Vec<Value>> {
        (0..DEFS.len())
            .map(|i| {
                let s = Setting(i);
                s.row(self.get(s), self.sources[i], self.reset[i].0.clone())
            })
            .collect()
    }

    /// `RESET ALL`.
    pub fn reset_all(&mut self, depth: usize) {
        for i in 0..self.session.len() {
            self.set(Setting(i), None, false, depth);
        }
    }

    /// The transaction committed: session values stay, local ones end.
    pub fn commit(&mut self) {
        self.undo.clear();
        self.end_locals();
    }

    /// SET LOCAL values end with their transaction.
    fn end_locals(&mut self) {
        for l in self.local.iter_mut().filter(|l| l.is_some()) {
            *l = None;
            self.changes += 1;
        }
    }

    /// A number that moves whenever a value may have changed.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// The transaction rolled back: every change made in it is undone.
    pub fn abort(&mut self) {
        self.rollback_to(1);
        self.end_locals();
    }

    /// Savepoints released down to level `depth`: their changes now belong to it.
    pub fn release(&mut self, depth: usize) {
        for u in &mut self.undo {
            u.depth = u.depth.min(depth);
        }
    }

    /// Levels from `depth` on rolled back (ROLLBACK TO): their changes are undone.
    pub fn rollback_to(&mut self, depth: usize) {
        while let Some(u) = self.undo.pop_if(|u| u.depth >= depth) {
            self.changes += 1;
            self.session[u.setting.0] = u.session;
            self.sources[u.setting.0] = u.source;
            self.local[u.setting.0] = u.local;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_and_print_as_postgres() {
        let lt = Setting::LOCK_TIMEOUT;
        assert_eq!(lt.parse("1.5s").unwrap(), Val::Millis(1500));
        assert_eq!(lt.parse("60000").unwrap(), Val::Millis(60000));
        assert_eq!(lt.parse("1 h").unwrap(), Val::Millis(3_600_000));
        assert_eq!(lt.parse("1e3").unwrap(), Val::Millis(1000));
        assert_eq!(lt.parse("1500 us").unwrap(), Val::Millis(2));
        assert_eq!(lt.parse("1 us").unwrap(), Val::Millis(0));
        assert_eq!(lt.format(Val::Millis(1500)), "1500ms");
        assert_eq!(lt.format(Val::Millis(60000)), "1min");
        assert_eq!(lt.format(Val::Millis(3_600_000)), "1h");
        assert_eq!(lt.format(Val::Millis(0)), "0");
        let e = lt.parse("10 parsecs").unwrap_err();
        assert_eq!(e.code, SqlState::INVALID_PARAMETER_VALUE);
        assert!(e.hint.is_some());
        let e = lt.parse("-1").unwrap_err();
        assert_eq!(
            e.message,
            "-1 ms is outside the valid range for parameter \"lock_timeout\" (0 .. 2147483647)"
        );
        assert!(Setting::DEADLOCK_TIMEOUT.parse("0").is_err());
        assert!(lt.parse("2147483648").is_err());
    }

    #[test]
    fn booleans_and_enums() {
        let ro = Setting::DEFAULT_TRANSACTION_READ_ONLY;
        for (t, v) in [
            ("on", true),
            ("OFF", false),
            ("1", true),
            ("t", true),
            ("n", false),
        ] {
            assert_eq!(ro.parse(t).unwrap(), Val::Bool(v), "{t}");
        }
        assert!(ro.parse("maybe").is_err());
        assert!(ro.parse("o").is_err());
        let iso = Setting::DEFAULT_TRANSACTION_ISOLATION;
        assert_eq!(iso.parse("Repeatable Read").unwrap(), Val::Enum(1));
        assert!(iso.parse("bogus").is_err());
    }

    #[test]
    fn time_zone_and_date_styles() {
        let tz = Setting::TIME_ZONE;
        let mut s = Settings::default();
        assert_eq!(tz.format(s.get(tz)), "Etc/UTC");
        let v = tz.parse("America/New_York").unwrap();
        assert_eq!(tz.format(v.clone()), "America/New_York");
        s.set(tz, Some(v), false, 1);
        assert_eq!(s.time_zone().name(), "America/New_York");
        s.abort();
        assert_eq!(s.time_zone().offset_at_unix(0), 0);
        assert_eq!(tz.format(tz.parse("-8").unwrap()), "<-08>+08");
        assert_eq!(
            tz.parse("Nowhere/Special").unwrap_err().code,
            SqlState::INVALID_PARAMETER_VALUE
        );
        let ds = Setting::DATE_STYLE;
        for ok in ["ISO, MDY", "iso", "MDY", "us, ISO", "default"] {
            assert_eq!(ds.format(ds.parse(ok).unwrap()), "ISO, MDY", "{ok}");
        }
        assert_eq!(
            ds.parse("German").unwrap_err().code,
            SqlState::FEATURE_NOT_SUPPORTED
        );
        assert_eq!(
            ds.parse("ISO, DMY").unwrap_err().code,
            SqlState::FEATURE_NOT_SUPPORTED
        );
        let e = ds.parse("ISO, SQL").unwrap_err();
        assert_eq!(e.code, SqlState::INVALID_PARAMETER_VALUE);
        assert_eq!(
            e.detail.as_deref(),
            Some("Conflicting \"datestyle\" specifications.")
        );
        assert_eq!(
            ds.parse("Klingon").unwrap_err().code,
            SqlState::INVALID_PARAMETER_VALUE
        );
        let is = Setting::INTERVAL_STYLE;
        assert_eq!(is.format(is.parse("Postgres").unwrap()), "postgres");
        assert_eq!(
            is.parse("sql_standard").unwrap_err().code,
            SqlState::FEATURE_NOT_SUPPORTED
        );
        assert!(is.parse("bogus").is_err());
    }

    #[test]
    fn startup_options_as_postgres_splits_them() {
        let (settings, errors) =
            parse_options(r"-c lock_timeout=2s  -cmyapp.x=a\ b --statement-timeout=5 -x -c foo -c");
        let pairs: Vec<(&str, &str)> = settings
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("lock_timeout", "2s"),
                ("myapp.x", "a b"),
                ("statement_timeout", "5")
            ]
        );
        assert_eq!(
            errors,
            [
                "invalid command-line argument for server process: -x",
                "-c foo requires a value",
                "-c requires a value"
            ]
        );
        assert_eq!(parse_options("  "), (vec![], vec![]));
    }

    #[test]
    fn custom_settings_are_made_by_their_first_set() {
        let mut s = Settings::default();
        assert_eq!(
            s.find("MyApp.X").unwrap_err().code,
            SqlState::UNDEFINED_OBJECT
        );
        let x = s.find_or_create("MyApp.X").unwrap();
        assert_eq!(s.find("myapp.x"), Ok(x));
        assert_eq!(s.show(x), "");
        s.set(x, Some(x.parse("v").unwrap()), false, 1);
        assert_eq!(s.show(x), "v");
        s.abort();
        assert_eq!(s.find("myapp.x"), Ok(x), "a rollback keeps it, empty");
        assert_eq!(s.show(x), "");
        assert_eq!(
            s.find_or_create("nodot").unwrap_err().code,
            SqlState::UNDEFINED_OBJECT
        );
        assert_eq!(
            s.find_or_create("a.b-c").unwrap_err().code,
            SqlState::INVALID_NAME
        );
        assert_eq!(s.rows().len(), DEFS.len(), "not in pg_settings");
    }

    #[test]
    fn rollback_undoes_set_and_local_ends_with_the_transaction() {
        let lt = Setting::LOCK_TIMEOUT;
        let mut s = Settings::default();
        s.set(lt, Some(Val::Millis(5)), false, 1);
        s.abort();
        assert_eq!(s.get(lt), Val::Millis(0));
        s.set(lt, Some(Val::Millis(5)), false, 1);
        s.set(lt, Some(Val::Millis(6)), false, 1);
        s.abort();
        assert_eq!(s.get(lt), Val::Millis(0));
        s.set(lt, Some(Val::Millis(5)), false, 1);
        s.set(lt, Some(Val::Millis(7)), false, 2);
        s.rollback_to(2);
        assert_eq!(s.get(lt), Val::Millis(5));
        s.commit();
        s.set(lt, Some(Val::Millis(9)), true, 1);
        assert_eq!(s.get(lt), Val::Millis(9));
        s.commit();
        assert_eq!(s.get(lt), Val::Millis(5));
    }
}
