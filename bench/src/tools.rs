//! The external programs the harness drives, and where they come from.
//!
//! PostgreSQL's binaries are taken from one directory: `$PG_BINDIR`, else Debian's
//! `/usr/lib/postgresql/15/bin`, else `pg_config --bindir`. `pgbench` and `psql` are used from
//! there (not through Debian's `/usr/bin` wrapper) when present, else from `PATH`. `sysbench`
//! is optional: without it the sysbench points are recorded as skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where PostgreSQL 15 lives on Debian.
const DEBIAN_PG15_BINDIR: &str = "/usr/lib/postgresql/15/bin";

#[derive(Clone, Debug)]
pub struct Tools {
    pub initdb: PathBuf,
    pub postgres: PathBuf,
    pub pgbench: PathBuf,
    pub psql: PathBuf,
    pub sysbench: Option<PathBuf>,
    /// `postgres --version`, e.g. "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)".
    pub postgres_version: String,
    pub pgbench_version: String,
}

impl Tools {
    /// Finds every program, or says which Debian package provides the missing ones.
    pub fn find() -> Result<Tools, String> {
        let bindir = pg_bindir();
        let in_bindir = |name: &str| {
            bindir
                .as_ref()
                .map(|d| d.join(name))
                .filter(|p| is_executable(p))
        };
        let mut missing = Vec::new();
        let initdb = in_bindir("initdb");
        let postgres = in_bindir("postgres");
        if initdb.is_none() || postgres.is_none() {
            missing.push(
                "PostgreSQL 15 server (initdb, postgres): install the Debian package postgresql-15 \
                 (apt-get install postgresql-15), or set PG_BINDIR",
            );
        }
        let pgbench = in_bindir("pgbench").or_else(|| on_path("pgbench"));
        let psql = in_bindir("psql").or_else(|| on_path("psql"));
        if pgbench.is_none() || psql.is_none() {
            missing.push(
                "pgbench and psql: install the Debian package postgresql-client-15 \
                 (apt-get install postgresql-client-15)",
            );
        }
        let (Some(initdb), Some(postgres), Some(pgbench), Some(psql)) =
            (initdb, postgres, pgbench, psql)
        else {
            return Err(format!("missing programs:\n  {}", missing.join("\n  ")));
        };
        let postgres_version = version_of(&postgres)?;
        let pgbench_version = version_of(&pgbench)?;
        Ok(Tools {
            initdb,
            postgres,
            pgbench,
            psql,
            sysbench: on_path("sysbench"),
            postgres_version,
            pgbench_version,
        })
    }

    /// Is the server PostgreSQL 15, the version DESIGN.md compares against?
    pub fn is_postgres_15(&self) -> bool {
        self.postgres_version.contains(" 15.")
    }
}

fn pg_bindir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PG_BINDIR") {
        return Some(PathBuf::from(dir));
    }
    if Path::new(DEBIAN_PG15_BINDIR).join("postgres").exists() {
        return Some(PathBuf::from(DEBIAN_PG15_BINDIR));
    }
    let out = Command::new("pg_config").arg("--bindir").output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

fn version_of(program: &Path) -> Result<String, String> {
    let out = Command::new(program)
        .arg("--version")
        .output()
        .map_err(|e| format!("could not run {}: {e}", program.display()))?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The uid and gid to run PostgreSQL as: `None` unless we are root (PostgreSQL refuses to
/// run as root), then the `postgres` user that Debian's postgresql-15 package creates.
pub fn postgres_owner() -> Result<Option<(u32, u32)>, String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let passwd = std::fs::read_to_string("/etc/passwd")
        .map_err(|e| format!("could not read /etc/passwd: {e}"))?;
    parse_passwd_user(&passwd, "postgres")
        .map(Some)
        .ok_or_else(|| {
            "running as root, PostgreSQL must run as the `postgres` user, which does not exist: \
         install the Debian package postgresql-15 (it creates the user)"
                .to_string()
        })
}

/// The uid and gid of `user` in `/etc/passwd` text.
pub fn parse_passwd_user(passwd: &str, user: &str) -> Option<(u32, u32)> {
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        if fields.len() >= 4 && fields[0] == user {
            Some((fields[2].parse().ok()?, fields[3].parse().ok()?))
        } else {
            None
        }
    })
}

/// The machine the numbers come from: CPU count, model and memory.
pub fn machine_facts() -> String {
    // Online CPUs, not this process's affinity (which --cpus narrows).
    // SAFETY: sysconf has no preconditions.
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(0);
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, m)| m.trim().to_string())
        .unwrap_or_else(|| "unknown CPU".into());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_gib = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|l| l.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map(|kb| kb / 1024.0 / 1024.0)
        .unwrap_or(0.0);
    format!("{cpus} CPUs ({model}), {mem_gib:.1} GiB memory")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_user_in_passwd() {
        let passwd = "root:x:0:0:root:/root:/bin/bash\n\
                      postgres:x:104:110:PostgreSQL administrator,,,:/var/lib/postgresql:/bin/bash\n";
        assert_eq!(parse_passwd_user(passwd, "postgres"), Some((104, 110)));
        assert_eq!(parse_passwd_user(passwd, "nobody"), None);
        assert_eq!(
            parse_passwd_user("postgres:x:oops:1:::\n", "postgres"),
            None
        );
    }
}
