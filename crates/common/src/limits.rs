//! Fixed sizes and named limits. Every bound on a queue, cache or loop is named here once,
//! with the reason for its value.

/// Size of every page, heap and index alike, in bytes (PostgreSQL's `BLCKSZ`).
pub const BLCKSZ: usize = 8192;

/// Maximum number of columns in a table (PostgreSQL's `MaxHeapAttributeNumber`).
pub const MAX_COLUMNS: usize = 1600;

/// Longest identifier; longer ones are truncated as PostgreSQL does (`NAMEDATALEN - 1`).
pub const MAX_IDENTIFIER_BYTES: usize = 63;

/// Largest length modifier accepted for `varchar(n)` / `char(n)` (PostgreSQL's
/// `MaxAttrSize` in characters).
pub const MAX_CHAR_TYPMOD: u32 = 10 * 1024 * 1024;

/// Default buffer pool size in pages (16 MiB of 8 KiB pages), overridable in the config file.
pub const DEFAULT_BUFFER_POOL_PAGES: usize = 2048;

/// Most columns in one index (PostgreSQL's `INDEX_MAX_KEYS`).
pub const INDEX_MAX_KEYS: usize = 32;

/// Most dimensions an array may have (PostgreSQL's `MAXDIM`).
pub const MAX_ARRAY_DIMS: usize = 6;
