//! Configuration: command-line options over an optional TOML file over defaults.
//!
//! ```toml
//! # myriad.toml
//! listen = "127.0.0.1:5433"       # address and port to listen on
//! data_dir = "./myriad-data"      # created on first start
//! buffer_pool_pages = 2048        # 8 KiB pages held in memory (16 MiB)
//! synchronous_commit = true       # false: a statement returns before its WAL is fsync'd
//! checkpoint_timeout_secs = 300   # checkpoint at least this often
//! max_wal_size_mb = 1024          # ... or when this much WAL was written since the last one
//! wal_segment_size = 16777216     # bytes per WAL segment file; used only when the data
//!                                 # directory is created (a power of two, >= 64 KiB)
//! autovacuum = true               # vacuum tables in the background as rows change
//! autovacuum_naptime_ms = 1000    # how often the worker looks for tables to vacuum
//! max_connections = 100           # sessions at once; the next client gets 53300
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub listen: String,
    pub data_dir: PathBuf,
    pub buffer_pool_pages: usize,
    pub synchronous_commit: bool,
    pub checkpoint_timeout_secs: u64,
    pub max_wal_size_mb: u64,
    pub wal_segment_size: u64,
    pub autovacuum: bool,
    pub autovacuum_naptime_ms: u64,
    pub max_connections: usize,
}

/// PostgreSQL's default `max_connections`.
pub const DEFAULT_MAX_CONNECTIONS: usize = 100;

impl Default for Config {
    fn default() -> Config {
        Config {
            listen: "127.0.0.1:5433".into(),
            data_dir: PathBuf::from("./myriad-data"),
            buffer_pool_pages: common::limits::DEFAULT_BUFFER_POOL_PAGES,
            synchronous_commit: true,
            checkpoint_timeout_secs: 300,
            max_wal_size_mb: 1024,
            wal_segment_size: storage::xlog::DEFAULT_WAL_SEGMENT_SIZE,
            autovacuum: true,
            autovacuum_naptime_ms: 1000,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

impl Config {
    pub fn from_file(path: &Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("could not read {}: {e}", path.display()))?;
        toml::from_str(&text)
            .map_err(|e| format!("invalid configuration file {}: {e}", path.display()))
    }
}
