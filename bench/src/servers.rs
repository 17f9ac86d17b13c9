//! The three servers under test, as child processes the harness owns.
//!
//! - **Myriad**: the `myriad` binary with a generated TOML config (listen address, data
//!   directory, `buffer_pool_pages`).
//! - **PostgreSQL 15**: a throwaway cluster made by `initdb` in a fresh directory and started
//!   by running `postgres` directly (not `pg_ctl`), so the child is the postmaster and its
//!   CPU time can be read. As root it runs as the `postgres` user (uid/gid set at spawn, the
//!   directory chowned to it). Settings: `fsync`, `synchronous_commit` and
//!   `full_page_writes` on; `shared_buffers` equal to Myriad's buffer pool;
//!   `max_locks_per_transaction` = [`PG_MAX_LOCKS_PER_TRANSACTION`]; autovacuum off (see
//!   `docs/benchmarks.md`); TCP on 127.0.0.1 only, unix socket in its own directory.
//! - **The ceiling**: this binary's own responder ([`crate::ceiling`]) in a child process,
//!   so that its CPU time is read the same way.
//!
//! Every start uses a fresh directory and a fresh port. Each server runs in its own process
//! group, so a Ctrl-C in the terminal reaches only the harness (and pgbench), which then
//! stops the servers in order; [`Server`]'s Drop stops it on every path out, panics
//! included.

use std::fs::File;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::client;
use crate::procfs;
use crate::tools::Tools;

/// Locks PostgreSQL can hold per transaction (times max_connections, in shared memory):
/// enough for a statement touching all 10,000 partitions of W7 and their indexes.
pub const PG_MAX_LOCKS_PER_TRANSACTION: u32 = 1024;
/// PostgreSQL's connection limit: pgbench uses at most 8 clients plus a setup connection.
const PG_MAX_CONNECTIONS: u32 = 100;
/// How long a server may take to accept its first query.
const READY_LIMIT: Duration = Duration::from_secs(60);
/// How long a graceful stop may take before the server is killed.
const STOP_LIMIT: Duration = Duration::from_secs(15);
/// Fresh ports tried before a start is reported as failed (another process may take the
/// port between our probe and the server's bind).
const START_ATTEMPTS: u32 = 3;
/// How long a CPU reading waits for PostgreSQL's backends to go.
const QUIET_LIMIT: Duration = Duration::from_secs(5);
/// Log lines kept in a failure note.
pub const LOG_TAIL_LINES: usize = 5;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ServerKind {
    Myriad,
    Postgres,
    Ceiling,
}

impl ServerKind {
    pub const ALL: [ServerKind; 3] = [
        ServerKind::Myriad,
        ServerKind::Postgres,
        ServerKind::Ceiling,
    ];

    /// The name used on the command line and in results.csv.
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Myriad => "myriad",
            ServerKind::Postgres => "postgres",
            ServerKind::Ceiling => "ceiling",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            ServerKind::Myriad => "Myriad",
            ServerKind::Postgres => "PostgreSQL 15",
            ServerKind::Ceiling => "ceiling",
        }
    }

    pub fn from_name(name: &str) -> Option<ServerKind> {
        ServerKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Does it hold data (setup runs, EXPLAIN means something)? The ceiling does not.
    pub fn is_database(self) -> bool {
        self != ServerKind::Ceiling
    }
}

/// What every start needs.
pub struct StartContext {
    pub tools: Tools,
    pub myriad_bin: PathBuf,
    /// This program, which serves the ceiling with `--serve-ceiling`.
    pub harness_exe: PathBuf,
    /// The run's temporary directory; each start makes a subdirectory.
    pub root: PathBuf,
    pub buffer_pool_pages: usize,
    /// uid/gid for PostgreSQL when running as root.
    pub postgres_owner: Option<(u32, u32)>,
}

/// A running server. Dropping it stops it.
pub struct Server {
    pub kind: ServerKind,
    pub port: u16,
    child: Option<Child>,
    dir: PathBuf,
    log: PathBuf,
}

impl Server {
    /// Starts a fresh instance (fresh directory, fresh port) and waits until it answers a
    /// query. `generation` numbers the starts of one kind, naming the directory.
    pub fn start(kind: ServerKind, ctx: &StartContext, generation: u32) -> Result<Server, String> {
        let dir = ctx.root.join(format!("{}-{generation}", kind.name()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("could not create {}: {e}", dir.display()))?;
        if kind == ServerKind::Postgres {
            init_postgres(ctx, &dir)?;
        }
        let mut last_error = String::new();
        for attempt in 0..START_ATTEMPTS {
            let port = free_port()?;
            let log = dir.join(format!("server-{attempt}.log"));
            let child = spawn(kind, ctx, &dir, port, &log)?;
            let mut server = Server {
                kind,
                port,
                child: Some(child),
                dir: dir.clone(),
                log,
            };
            match server.wait_ready(ctx) {
                Ok(()) => return Ok(server),
                Err(e) => {
                    last_error = e;
                    server.stop();
                    if procfs::interrupted() {
                        break;
                    }
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        Err(format!("{} did not start: {last_error}", kind.label()))
    }

    fn wait_ready(&mut self, ctx: &StartContext) -> Result<(), String> {
        let start = Instant::now();
        let scratch = self.dir.clone();
        loop {
            if !self.alive() {
                return Err(format!("it exited; last log lines: {}", self.log_tail()));
            }
            if procfs::interrupted() {
                return Err("interrupted".into());
            }
            let probe = client::psql(
                &ctx.tools,
                self.port,
                "select 1;",
                None,
                false,
                &scratch,
                Duration::from_secs(5),
            );
            if probe.is_ok_and(|c| c.success()) {
                return Ok(());
            }
            if start.elapsed() > READY_LIMIT {
                return Err(format!(
                    "no answer after {} s; last log lines: {}",
                    READY_LIMIT.as_secs(),
                    self.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Is the server process still running?
    pub fn alive(&mut self) -> bool {
        match &mut self.child {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// CPU ticks used so far by the server's processes ([`procfs::tree_cpu_ticks`]). For
    /// PostgreSQL, first waits (at most [`QUIET_LIMIT`]) until its client backends have
    /// exited and been reaped, so that their time is in the postmaster's cutime (see
    /// [`procfs`]).
    pub fn cpu_ticks(&self) -> Option<u64> {
        let pid = self.pid()?;
        if self.kind == ServerKind::Postgres {
            let start = Instant::now();
            while !postgres_quiet(pid) && start.elapsed() < QUIET_LIMIT {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        procfs::tree_cpu_ticks(pid)
    }

    /// The last [`LOG_TAIL_LINES`] non-empty lines of the server's log, joined by " | ".
    pub fn log_tail(&self) -> String {
        let text = strip_ansi(&String::from_utf8_lossy(
            &std::fs::read(&self.log).unwrap_or_default(),
        ));
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = &lines[lines.len().saturating_sub(LOG_TAIL_LINES)..];
        if tail.is_empty() {
            "(log empty)".into()
        } else {
            client::one_line(&tail.join(" | "), 600)
        }
    }

    /// Stops the server: gracefully (PostgreSQL fast shutdown, Myriad's SIGTERM), then by
    /// SIGKILL to its whole process group after [`STOP_LIMIT`]. The ceiling is just killed.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pid = child.id();
        if matches!(child.try_wait(), Ok(None)) {
            let graceful = match self.kind {
                ServerKind::Postgres => Some(libc::SIGINT),
                ServerKind::Myriad => Some(libc::SIGTERM),
                ServerKind::Ceiling => None,
            };
            if let Some(signal) = graceful {
                procfs::send_signal(pid, signal);
                let start = Instant::now();
                while matches!(child.try_wait(), Ok(None)) && start.elapsed() < STOP_LIMIT {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
        if matches!(child.try_wait(), Ok(None)) {
            // Not yet reaped, so the group id is still ours.
            procfs::send_signal_group(pid, libc::SIGKILL);
            let _ = child.kill();
        }
        let _ = child.wait();
    }

    /// Stops the server and deletes its directory.
    pub fn discard(mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Only background processes are left: no client backend (clients connect over TCP to
/// 127.0.0.1, which the process title shows: "postgres: postgres postgres 127.0.0.1(40312)
/// idle"), and no child on its way out: a zombie, or an exiting process, whose command line
/// reads empty once its memory is gone while its times are not yet in the postmaster's.
fn postgres_quiet(postmaster: u32) -> bool {
    procfs::children(postmaster).iter().all(|c| {
        let title = procfs::cmdline(c.pid);
        c.state != 'Z' && !title.is_empty() && !title.contains("127.0.0.1(")
    })
}

/// Drops terminal escape sequences (ESC [ ... letter) that colored logs carry.
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A port on 127.0.0.1 that nothing listens on right now.
fn free_port() -> Result<u16, String> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| format!("could not find a free port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("could not find a free port: {e}"))
}

fn spawn(
    kind: ServerKind,
    ctx: &StartContext,
    dir: &Path,
    port: u16,
    log: &Path,
) -> Result<Child, String> {
    let log_file =
        File::create(log).map_err(|e| format!("could not create {}: {e}", log.display()))?;
    let log_err = log_file
        .try_clone()
        .map_err(|e| format!("could not open {}: {e}", log.display()))?;
    let mut cmd = match kind {
        ServerKind::Myriad => {
            let config = dir.join("myriad.toml");
            let text = format!(
                "listen = \"127.0.0.1:{port}\"\ndata_dir = \"{}\"\nbuffer_pool_pages = {}\n",
                dir.join("data").display(),
                ctx.buffer_pool_pages
            );
            std::fs::write(&config, text)
                .map_err(|e| format!("could not write {}: {e}", config.display()))?;
            let mut cmd = Command::new(&ctx.myriad_bin);
            cmd.arg("--config").arg(&config).env("NO_COLOR", "1");
            cmd
        }
        ServerKind::Postgres => {
            let mut cmd = Command::new(&ctx.tools.postgres);
            cmd.arg("-D").arg(dir.join("data"));
            cmd.arg("-p").arg(port.to_string());
            cmd.arg("-k").arg(dir);
            for setting in postgres_settings(ctx.buffer_pool_pages) {
                cmd.arg("-c").arg(setting);
            }
            as_owner(&mut cmd, ctx);
            cmd
        }
        ServerKind::Ceiling => {
            let mut cmd = Command::new(&ctx.harness_exe);
            cmd.arg("--serve-ceiling").arg(format!("127.0.0.1:{port}"));
            cmd
        }
    };
    cmd.current_dir(dir)
        .stdin(Stdio::null())
        .stdout(log_file)
        .stderr(log_err)
        .process_group(0);
    cmd.spawn().map_err(|e| {
        format!(
            "could not start {}: {e}",
            cmd.get_program().to_string_lossy()
        )
    })
}

/// PostgreSQL's `-c` settings (see the module docs).
pub fn postgres_settings(buffer_pool_pages: usize) -> Vec<String> {
    vec![
        "listen_addresses=127.0.0.1".into(),
        "fsync=on".into(),
        "synchronous_commit=on".into(),
        "full_page_writes=on".into(),
        format!("shared_buffers={}kB", buffer_pool_pages * 8),
        format!("max_locks_per_transaction={PG_MAX_LOCKS_PER_TRANSACTION}"),
        format!("max_connections={PG_MAX_CONNECTIONS}"),
        "autovacuum=off".into(),
    ]
}

fn as_owner(cmd: &mut Command, ctx: &StartContext) {
    if let Some((uid, gid)) = ctx.postgres_owner {
        cmd.uid(uid).gid(gid);
    }
}

/// `initdb` into `dir/data` (trust auth, C locale, UTF8; no fsync of the new files: the
/// cluster is thrown away, and the server's own fsync setting is what is measured).
fn init_postgres(ctx: &StartContext, dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755));
    if let Some((uid, gid)) = ctx.postgres_owner {
        std::os::unix::fs::chown(dir, Some(uid), Some(gid))
            .map_err(|e| format!("could not give {} to the postgres user: {e}", dir.display()))?;
    }
    let mut cmd = Command::new(&ctx.tools.initdb);
    cmd.arg("-D")
        .arg(dir.join("data"))
        .args([
            "-U",
            "postgres",
            "--auth=trust",
            "--locale=C",
            "--encoding=UTF8",
            "--no-sync",
        ])
        .current_dir(dir);
    as_owner(&mut cmd, ctx);
    let out = client::run_captured(&mut cmd, dir, Duration::from_secs(120))
        .map_err(|_| "interrupted".to_string())?;
    if !out.success() {
        return Err(format!("initdb failed: {}", client::error_summary(&out)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colors_from_logs() {
        assert_eq!(
            strip_ansi("\x1b[2m2026\x1b[0m \x1b[32m INFO\x1b[0m ready"),
            "2026  INFO ready"
        );
        assert_eq!(strip_ansi("plain [text]"), "plain [text]");
    }

    #[test]
    fn postgres_gets_equal_buffers_and_durability() {
        let s = postgres_settings(16_384);
        assert!(s.contains(&"shared_buffers=131072kB".to_string()));
        assert!(s.contains(&"fsync=on".to_string()));
        assert!(s.contains(&"synchronous_commit=on".to_string()));
    }
}
