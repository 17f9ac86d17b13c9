//! Configuration: command-line options over an optional TOML file over defaults.
//!
//! ```toml
//! # myriad.toml
//! listen = "127.0.0.1:5433"       # address and port to listen on
//! data_dir = "./myriad-data"      # created on first start
//! buffer_pool_pages = 2048        # 8 KiB pages held in memory (16 MiB)
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub listen: String,
    pub data_dir: PathBuf,
    pub buffer_pool_pages: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            listen: "127.0.0.1:5433".into(),
            data_dir: PathBuf::from("./myriad-data"),
            buffer_pool_pages: common::limits::DEFAULT_BUFFER_POOL_PAGES,
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
