//! `myriad-bench`: the benchmark suite of issue 6. It runs the workloads of DESIGN.md §4
//! (W1–W7) and issue 3's primary-key lookup (S1) with the real `pgbench` (and `sysbench`) against Myriad, a throwaway PostgreSQL
//! 15 and the ceiling responder, side by side in one run, and writes results.csv, a markdown
//! report with ratios, and PNG charts. `docs/benchmarks.md` says how to run it.
//!
//! # Life of a run
//!
//! 1. [`tools::Tools::find`] locates initdb/postgres, pgbench/psql and (optionally)
//!    sysbench; a missing one ends the run with the Debian package to install.
//! 2. [`runner::Runner::start_servers`] starts each server ([`servers::Server::start`]) in a
//!    fresh directory under one temporary root, on a fresh port.
//! 3. [`runner::Runner::run`] walks workloads, points, series and modes; at each, every
//!    server runs in turn, repeated ([`runner`] has the order and the failure rules). A
//!    server's schema is set up before its first run that needs it.
//! 4. Each run reads the server's CPU time from /proc ([`procfs`]) before and after pgbench,
//!    and parses pgbench's summary ([`client::parse_pgbench`]).
//! 5. The runs of a point fold into medians ([`results::fold`]); [`report`] and [`charts`]
//!    write the outputs; the servers stop and the temporary root is deleted (also on Ctrl-C
//!    or a panic: Drop guards).
//!
//! Exit status: 0 when PostgreSQL and the ceiling produced numbers everywhere (Myriad's
//! points may be unsupported); 1 when a PostgreSQL or ceiling point failed (the harness is
//! broken); 2 for bad usage or missing programs; 130 when interrupted.

mod ceiling;
mod charts;
mod client;
mod procfs;
mod report;
mod results;
mod runner;
mod servers;
mod tools;
mod workloads;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Parser;

use crate::results::Status;
use crate::runner::{Runner, Settings};
use crate::servers::{ServerKind, StartContext};
use crate::workloads::{Profile, Workload};

/// Defaults of a standard run and of `--quick`.
const DURATION_S: u32 = 5;
const REPEATS: u32 = 3;
const SETUP_LIMIT_S: u64 = 900;
const QUICK_DURATION_S: u32 = 3;
const QUICK_REPEATS: u32 = 1;
const QUICK_SETUP_LIMIT_S: u64 = 120;
/// Myriad's buffer pool and PostgreSQL's shared_buffers: 128 MiB, PostgreSQL's default.
const BUFFER_POOL_PAGES: usize = 16_384;

/// Benchmark suite: DESIGN.md §4 workloads against Myriad, PostgreSQL 15 and a ceiling.
#[derive(Parser, Debug)]
#[command(about, long_about = None)]
struct Args {
    /// Workloads to run (W1 ... W7, S1); all of them when none is given
    workloads: Vec<String>,
    /// One short point per workload, smaller data, one run each: checks that the harness works
    #[arg(long)]
    quick: bool,
    /// W1 over its full partition list (0, 8, 64, 512, 1024, 4096, 8192)
    #[arg(long)]
    all_points: bool,
    /// Seconds per pgbench/sysbench run [default: 5; --quick: 3]
    #[arg(long, value_name = "SECS")]
    duration: Option<u32>,
    /// Runs per point and server; the median is reported [default: 3; --quick: 1]
    #[arg(long, value_name = "N")]
    repeats: Option<u32>,
    /// The myriad server binary [default: target/release/myriad; build it with
    /// `cargo build --release -p myriad-server`]
    #[arg(long, value_name = "PATH")]
    myriad_bin: Option<PathBuf>,
    /// Output directory [default: bench/results/YYYY-MM-DDTHH-MM-SSZ, UTC]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Myriad's buffer_pool_pages and PostgreSQL's shared_buffers, in 8 KiB pages
    #[arg(long, value_name = "PAGES", default_value_t = BUFFER_POOL_PAGES)]
    buffer_pool_pages: usize,
    /// Servers to run, comma-separated: myriad,postgres,ceiling [default: all three]
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    servers: Option<Vec<String>>,
    /// Seconds a server's setup of one point may take [default: 900; --quick: 120]
    #[arg(long, value_name = "SECS")]
    setup_limit: Option<u64>,
    /// Run servers and clients on these CPUs only, e.g. "0" or "0-1" (see docs/benchmarks.md:
    /// on a VM, waking an idle CPU can dominate single-client figures)
    #[arg(long, value_name = "LIST")]
    cpus: Option<String>,
    /// Only serve the ceiling responder on ADDR (e.g. 127.0.0.1:5499) until killed
    #[arg(long, value_name = "ADDR")]
    serve_ceiling: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(addr) = &args.serve_ceiling {
        return match ceiling::serve(addr) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("myriad-bench: {e}");
                ExitCode::from(2)
            }
        };
    }
    match run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("myriad-bench: {e}");
            ExitCode::from(2)
        }
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn run(args: Args) -> Result<ExitCode, String> {
    let workloads = if args.workloads.is_empty() {
        Workload::ALL.to_vec()
    } else {
        let mut w = Vec::new();
        for name in &args.workloads {
            let one = Workload::from_name(name)
                .ok_or_else(|| format!("unknown workload {name:?}: expected W1 ... W7 or S1"))?;
            if !w.contains(&one) {
                w.push(one);
            }
        }
        w.sort();
        w
    };
    let servers = match &args.servers {
        None => ServerKind::ALL.to_vec(),
        Some(names) => {
            let mut s = Vec::new();
            for n in names {
                s.push(ServerKind::from_name(n).ok_or_else(|| {
                    format!("unknown server {n:?}: expected myriad, postgres or ceiling")
                })?);
            }
            s.sort();
            s.dedup();
            s
        }
    };
    let profile = Profile {
        quick: args.quick,
        all_points: args.all_points,
    };
    let settings = Settings {
        profile,
        duration_s: args
            .duration
            .unwrap_or(if args.quick {
                QUICK_DURATION_S
            } else {
                DURATION_S
            })
            .max(1),
        repeats: args
            .repeats
            .unwrap_or(if args.quick { QUICK_REPEATS } else { REPEATS })
            .max(1),
        servers: servers.clone(),
        setup_limit: Duration::from_secs(args.setup_limit.unwrap_or(if args.quick {
            QUICK_SETUP_LIMIT_S
        } else {
            SETUP_LIMIT_S
        })),
    };

    let tools = tools::Tools::find()?;
    if !tools.is_postgres_15() {
        eprintln!(
            "myriad-bench: warning: DESIGN.md compares against PostgreSQL 15, found {}",
            tools.postgres_version
        );
    }
    let root = workspace_root();
    let myriad_bin = args
        .myriad_bin
        .clone()
        .unwrap_or_else(|| root.join("target/release/myriad"));
    if servers.contains(&ServerKind::Myriad) && !myriad_bin.is_file() {
        return Err(format!(
            "{} not found: build it with `cargo build --release -p myriad-server`, or pass \
             --myriad-bin PATH",
            myriad_bin.display()
        ));
    }
    // Servers run in their own directories: a relative path would not resolve there.
    let myriad_bin = std::path::absolute(&myriad_bin)
        .map_err(|e| format!("could not resolve {}: {e}", myriad_bin.display()))?;
    let harness_exe =
        std::env::current_exe().map_err(|e| format!("could not find this program's path: {e}"))?;
    let postgres_owner = tools::postgres_owner()?;

    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| root.join("bench/results").join(utc_stamp(now, true)));
    std::fs::create_dir_all(&out)
        .map_err(|e| format!("could not create {}: {e}", out.display()))?;

    // The temporary root holds every server directory; PostgreSQL's user must traverse it.
    let tmp = tempfile::Builder::new()
        .prefix("myriad-bench.")
        .tempdir()
        .map_err(|e| format!("could not create a temporary directory: {e}"))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("could not open up {}: {e}", tmp.path().display()))?;
    }
    procfs::install_signal_flag();
    if let Some(list) = &args.cpus {
        // Every server and client is a child of this process and inherits the mask.
        procfs::pin_to_cpus(&procfs::parse_cpu_list(list)?)?;
    }

    let info = report::RunInfo {
        when_utc: utc_stamp(now, false),
        command: std::iter::once("myriad-bench".to_string())
            .chain(std::env::args().skip(1))
            .collect::<Vec<_>>()
            .join(" "),
        machine: match &args.cpus {
            Some(list) => format!(
                "{}; servers and clients pinned to CPUs {list}",
                tools::machine_facts()
            ),
            None => tools::machine_facts(),
        },
        myriad: format!(
            "{}{}; buffer_pool_pages = {} ({} MiB); WAL with synchronous_commit on (its default)",
            myriad_bin.display(),
            git_commit(&root)
                .map(|c| format!(" (commit {c})"))
                .unwrap_or_default(),
            args.buffer_pool_pages,
            args.buffer_pool_pages * 8 / 1024
        ),
        postgres: format!(
            "{}; {}",
            tools.postgres_version,
            servers::postgres_settings(args.buffer_pool_pages).join(", ")
        ),
        clients: format!(
            "{}; sysbench: {}",
            tools.pgbench_version,
            tools
                .sysbench
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "not installed".into())
        ),
    };
    let ctx = StartContext {
        tools,
        myriad_bin,
        harness_exe,
        root: tmp.path().to_path_buf(),
        buffer_pool_pages: args.buffer_pool_pages,
        postgres_owner,
    };
    eprintln!(
        "myriad-bench: {} on {}; {} s per run, {} run(s) per point; results in {}",
        workloads
            .iter()
            .map(|w| w.name())
            .collect::<Vec<_>>()
            .join(" "),
        servers
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", "),
        settings.duration_s,
        settings.repeats,
        out.display()
    );
    let mut runner = Runner::new(ctx, settings, &workloads)?;
    let interrupted = runner
        .start_servers()
        .and_then(|()| runner.run(&workloads))
        .is_err();
    runner.shutdown();
    let never_started = runner.never_started();
    let rows = std::mem::take(&mut runner.rows);
    drop(runner);
    drop(tmp);

    std::fs::write(out.join("results.csv"), results::to_csv(&rows))
        .map_err(|e| format!("could not write results.csv: {e}"))?;
    let md = report::markdown(&rows, &info, &workloads);
    std::fs::write(out.join("results.md"), &md)
        .map_err(|e| format!("could not write results.md: {e}"))?;
    let charts = charts::write_all(&rows, &out)?;
    println!("{md}");
    eprintln!(
        "myriad-bench: wrote results.csv, results.md and {} chart(s) to {}",
        charts.len(),
        out.display()
    );
    if interrupted {
        eprintln!("myriad-bench: interrupted; the results above are partial");
        return Ok(ExitCode::from(130));
    }
    // Myriad may lack features and even crash (its points say so), but a server that never
    // started, or PostgreSQL or the ceiling failing a point, means the harness is broken.
    let mut broken: Vec<String> = never_started
        .iter()
        .map(|(k, e)| format!("{} never started: {e}", k.label()))
        .collect();
    broken.extend(
        rows.iter()
            .filter(|r| {
                r.server != ServerKind::Myriad
                    && matches!(r.status, Status::Failed | Status::Unsupported)
            })
            .map(|r| {
                format!(
                    "{} {}={} {} on {}: {}",
                    r.series,
                    r.parameter,
                    r.value,
                    r.mode.name(),
                    r.server.name(),
                    r.note
                )
            }),
    );
    if !broken.is_empty() {
        eprintln!(
            "myriad-bench: the harness is broken:\n  {}",
            broken.join("\n  ")
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// The checkout's commit, "+ local changes" when tracked files differ from it (the binary
/// may have been built from those).
fn git_commit(root: &Path) -> Option<String> {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .ok()
    };
    let head = git(&["rev-parse", "--short", "HEAD"]).filter(|o| o.status.success())?;
    let head = String::from_utf8_lossy(&head.stdout).trim().to_string();
    let clean = git(&["diff", "--quiet", "HEAD"]).is_some_and(|o| o.status.success());
    Some(if clean {
        head
    } else {
        format!("{head} + local changes")
    })
}

/// UTC time from Unix seconds: "2026-11-21T01-02-03Z" for a directory name, else
/// "2026-11-21 01:02 UTC".
fn utc_stamp(unix_s: u64, for_path: bool) -> String {
    let days = (unix_s / 86_400) as i64;
    let secs = unix_s % 86_400;
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (secs / 3600, secs % 3600 / 60, secs % 60);
    if for_path {
        format!("{y:04}-{m:02}-{d:02}T{hh:02}-{mm:02}-{ss:02}Z")
    } else {
        format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02} UTC")
    }
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_stamps() {
        assert_eq!(utc_stamp(0, true), "1970-01-01T00-00-00Z");
        // 2024-02-29 12:34:56 UTC
        assert_eq!(utc_stamp(1_709_210_096, false), "2024-02-29 12:34 UTC");
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn cli_parses() {
        let a = Args::try_parse_from([
            "myriad-bench",
            "--quick",
            "--servers",
            "postgres,ceiling",
            "W1",
            "W6",
        ])
        .unwrap();
        assert!(a.quick);
        assert_eq!(a.workloads, ["W1", "W6"]);
        assert_eq!(a.servers.unwrap(), ["postgres", "ceiling"]);
    }
}
