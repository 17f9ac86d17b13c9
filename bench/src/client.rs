//! Driving the clients: `psql` for setup SQL and EXPLAIN probes, `pgbench` and `sysbench` for
//! runs, each under a wall-clock limit, with their output parsed into figures.
//!
//! Every client connects to 127.0.0.1 as user `postgres`, database `postgres`, with
//! `sslmode=disable` (the same for every server: one round trip less per connection) and no
//! other libpq environment that could point it elsewhere.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::procfs;
use crate::tools::Tools;

/// The user pressed Ctrl-C (or the harness got SIGTERM/SIGHUP): stop everything.
#[derive(Debug)]
pub struct Interrupted;

/// How often a wait loop looks at its child and at the signal flag.
const POLL_INTERVAL: Duration = Duration::from_millis(10);

/// What a finished (or killed) client printed.
#[derive(Debug)]
pub struct Captured {
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
}

impl Captured {
    pub fn success(&self) -> bool {
        !self.timed_out && self.status.is_some_and(|s| s.success())
    }
}

/// Kills its child when dropped, unless it has already been waited for.
pub struct ChildGuard(pub Option<Child>);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Some(child) = &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Runs `cmd` to completion or until `limit`, output captured through files in `scratch`
/// (no pipe to fill up and block the child).
pub fn run_captured(
    cmd: &mut Command,
    scratch: &Path,
    limit: Duration,
) -> Result<Captured, Interrupted> {
    let out_path = scratch.join("client.stdout");
    let err_path = scratch.join("client.stderr");
    let (Ok(out), Ok(err)) = (File::create(&out_path), File::create(&err_path)) else {
        return Ok(Captured {
            status: None,
            stdout: String::new(),
            stderr: format!("could not create output files in {}", scratch.display()),
            timed_out: false,
        });
    };
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    let child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Ok(Captured {
                status: None,
                stdout: String::new(),
                stderr: format!("could not start {:?}: {e}", cmd.get_program()),
                timed_out: false,
            });
        }
    };
    let mut guard = ChildGuard(Some(child));
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        let child = guard.0.as_mut().expect("child present until waited for");
        match child.try_wait() {
            Ok(Some(status)) => {
                guard.0 = None;
                break Some(status);
            }
            Ok(None) => {}
            Err(_) => break None,
        }
        if procfs::interrupted() {
            return Err(Interrupted);
        }
        if start.elapsed() > limit {
            timed_out = true;
            break None; // the guard kills it
        }
        std::thread::sleep(POLL_INTERVAL);
    };
    drop(guard);
    let read =
        |p: &PathBuf| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    Ok(Captured {
        status,
        stdout: read(&out_path),
        stderr: read(&err_path),
        timed_out,
    })
}

/// A libpq client command aimed at `port` (see the module docs).
pub fn libpq_command(program: &Path, pgoptions: Option<&str>) -> Command {
    let mut cmd = Command::new(program);
    for var in [
        "PGHOST",
        "PGHOSTADDR",
        "PGPORT",
        "PGUSER",
        "PGDATABASE",
        "PGSERVICE",
        "PGPASSWORD",
        "PGOPTIONS",
        "PGSSLMODE",
        "PGAPPNAME",
        "PGTZ",
        "PGCLIENTENCODING",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("PGSSLMODE", "disable")
        .env("PGCONNECT_TIMEOUT", "10");
    if let Some(o) = pgoptions {
        cmd.env("PGOPTIONS", o);
    }
    cmd
}

/// Runs SQL through `psql -f`, stopping at the first error unless `keep_going`.
/// Output is unaligned, tuples only (`-A -t`), so EXPLAIN lines come out bare.
pub fn psql(
    tools: &Tools,
    port: u16,
    sql: &str,
    pgoptions: Option<&str>,
    keep_going: bool,
    scratch: &Path,
    limit: Duration,
) -> Result<Captured, Interrupted> {
    let file = scratch.join("script.sql");
    if let Err(e) = std::fs::write(&file, sql) {
        return Ok(Captured {
            status: None,
            stdout: String::new(),
            stderr: format!("could not write {}: {e}", file.display()),
            timed_out: false,
        });
    }
    let mut cmd = libpq_command(&tools.psql, pgoptions);
    cmd.args([
        "-X",
        "-q",
        "-A",
        "-t",
        "-b",
        "-h",
        "127.0.0.1",
        "-U",
        "postgres",
        "-d",
        "postgres",
    ])
    .arg("-p")
    .arg(port.to_string())
    .arg("-v")
    .arg(if keep_going {
        "ON_ERROR_STOP=0"
    } else {
        "ON_ERROR_STOP=1"
    })
    .arg("-f")
    .arg(&file);
    run_captured(&mut cmd, scratch, limit)
}

/// The first line that says what went wrong, with the statement it was about when the
/// client printed one; one line, at most [`ERROR_SUMMARY_CHARS_MAX`] characters.
pub fn error_summary(captured: &Captured) -> String {
    if captured.timed_out {
        return "did not finish in time".into();
    }
    let text = format!("{}\n{}", captured.stderr, captured.stdout);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let first = lines
        .iter()
        .find(|l| l.contains("ERROR") || l.contains("FATAL"))
        .or_else(|| lines.iter().find(|l| l.to_lowercase().contains("error")))
        .or_else(|| lines.first())
        .map(|l| strip_client_prefix(l))
        .unwrap_or_else(|| match captured.status {
            Some(s) => format!("client exited with {s} and printed nothing"),
            None => "client could not be run".into(),
        });
    let statement = lines.iter().find_map(|l| {
        l.split_once("STATEMENT:")
            .or_else(|| l.split_once("Query was:"))
            .map(|(_, s)| s.trim())
    });
    let summary = match statement {
        Some(s) if !first.contains(s) => format!("{first} [in: {s}]"),
        _ => first,
    };
    one_line(&summary, ERROR_SUMMARY_CHARS_MAX)
}

/// Error notes stay readable in a table cell.
pub const ERROR_SUMMARY_CHARS_MAX: usize = 200;

/// Drops the `psql:FILE:LINE: ` and `pgbench: error: ` prefixes clients put before a message.
fn strip_client_prefix(line: &str) -> String {
    let mut l = line;
    if l.starts_with("psql:") {
        // psql:/path/script.sql:12: ERROR:  ...
        if let Some(i) = l.find(": ERROR") {
            l = &l[i + 2..];
        }
    }
    for prefix in ["pgbench: error: ", "pgbench: fatal: "] {
        if let Some(rest) = l.strip_prefix(prefix) {
            l = rest;
        }
    }
    l.to_string()
}

/// Collapses whitespace and cuts to `max` characters.
pub fn one_line(text: &str, max: usize) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= max {
        joined
    } else {
        let cut: String = joined.chars().take(max - 1).collect();
        format!("{cut}…")
    }
}

/// What a pgbench or sysbench run reports.
#[derive(Clone, Debug, PartialEq)]
pub struct RunFigures {
    pub tps: f64,
    pub transactions: u64,
    pub latency_ms: Option<f64>,
}

/// Parses pgbench's summary ("number of transactions actually processed: N",
/// "latency average = X ms", "tps = X (...)").
pub fn parse_pgbench(stdout: &str) -> Option<RunFigures> {
    let mut tps = None;
    let mut transactions = None;
    let mut latency_ms = None;
    for line in stdout.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("tps = ") {
            tps = first_number(rest);
        } else if let Some(rest) = line.strip_prefix("number of transactions actually processed:") {
            // "3699" or "3699/4000" with -t
            transactions = rest
                .trim()
                .split('/')
                .next()
                .and_then(|n| n.trim().parse().ok());
        } else if let Some(rest) = line.strip_prefix("latency average =") {
            latency_ms = first_number(rest);
        }
    }
    Some(RunFigures {
        tps: tps?,
        transactions: transactions?,
        latency_ms,
    })
}

/// Parses sysbench 1.0's report ("transactions: N (X per sec.)", "avg: X" under
/// "Latency (ms):").
pub fn parse_sysbench(stdout: &str) -> Option<RunFigures> {
    let mut tps = None;
    let mut transactions = None;
    let mut latency_ms = None;
    let mut in_latency = false;
    for line in stdout.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("transactions:") {
            let (count, rate) = rest.split_once('(')?;
            transactions = count.trim().parse().ok();
            tps = first_number(rate);
        } else if line.starts_with("Latency (ms):") {
            in_latency = true;
        } else if in_latency && let Some(rest) = line.strip_prefix("avg:") {
            latency_ms = first_number(rest);
        }
    }
    Some(RunFigures {
        tps: tps?,
        transactions: transactions?,
        latency_ms,
    })
}

fn first_number(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// Figures from one `EXPLAIN ANALYZE` output.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExplainFigures {
    pub planning_ms: Option<f64>,
    pub execution_ms: Option<f64>,
    /// Sum of "Heap Fetches" over the plan's index-only scans; `None` without one.
    pub heap_fetches: Option<u64>,
    /// Buffer accesses of the execution (`EXPLAIN (ANALYZE, BUFFERS)`): the top plan node's
    /// `Buffers:` line, which counts its children's too; `None` without one.
    pub buffers: Option<u64>,
}

/// Splits psql output holding several `EXPLAIN ANALYZE` results into one entry each; an
/// entry ends at its "Execution Time" line.
pub fn parse_explains(output: &str) -> Vec<ExplainFigures> {
    let mut all = Vec::new();
    let mut current = ExplainFigures::default();
    // Past the plan, in the "Planning:" section, whose Buffers line is the planner's.
    let mut in_planning = false;
    for line in output.lines() {
        let line = line.trim();
        if line == "Planning:" {
            in_planning = true;
        } else if let Some(rest) = line.strip_prefix("Buffers:") {
            if !in_planning && current.buffers.is_none() {
                current.buffers = buffer_accesses(rest);
            }
        } else if let Some(rest) = line.strip_prefix("Planning Time:") {
            current.planning_ms = first_number(rest);
        } else if let Some(rest) = line.strip_prefix("Heap Fetches:") {
            let n: u64 = rest.trim().parse().unwrap_or(0);
            current.heap_fetches = Some(current.heap_fetches.unwrap_or(0) + n);
        } else if let Some(rest) = line.strip_prefix("Execution Time:") {
            current.execution_ms = first_number(rest);
            all.push(std::mem::take(&mut current));
            in_planning = false;
        }
    }
    all
}

/// Buffer accesses in the text after `Buffers:`: hits plus reads of shared and local
/// buffers ("shared hit=3 read=1 dirtied=1, temp read=5 written=5" is 4; temp files are not
/// buffers). `None` when the line has no count this understands.
pub fn buffer_accesses(text: &str) -> Option<u64> {
    let mut total = None;
    for group in text.split(',') {
        let mut words = group.split_whitespace();
        if !matches!(words.next(), Some("shared" | "local")) {
            continue;
        }
        for word in words {
            if let Some((name, count)) = word.split_once('=')
                && matches!(name, "hit" | "read")
            {
                let n: u64 = count.parse().ok()?;
                total = Some(total.unwrap_or(0) + n);
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    const PGBENCH_OK: &str = "pgbench (15.18 (Debian 15.18-0+deb12u1))
transaction type: /tmp/x/script.sql
scaling factor: 1
query mode: prepared
number of clients: 1
number of threads: 1
maximum number of tries: 1
duration: 3 s
number of transactions actually processed: 17905
number of failed transactions: 0 (0.000%)
latency average = 0.167 ms
initial connection time = 2.741 ms
tps = 5968.701117 (without initial connection time)
";

    #[test]
    fn parses_pgbench_summary() {
        let f = parse_pgbench(PGBENCH_OK).unwrap();
        assert_eq!(f.transactions, 17905);
        assert_eq!(f.latency_ms, Some(0.167));
        assert!((f.tps - 5968.701117).abs() < 1e-9);
    }

    #[test]
    fn parses_pgbench_with_reconnects_and_fixed_count() {
        let out = "number of transactions actually processed: 100/100\n\
                   latency average = 3.100 ms\n\
                   average connection time = 2.000 ms\n\
                   tps = 322.58 (including reconnection times)\n";
        let f = parse_pgbench(out).unwrap();
        assert_eq!((f.transactions, f.tps), (100, 322.58));
    }

    #[test]
    fn pgbench_without_a_summary_is_none() {
        assert_eq!(parse_pgbench("pgbench: error: connection refused\n"), None);
        assert_eq!(parse_pgbench(""), None);
    }

    #[test]
    fn parses_sysbench_report() {
        let out = "SQL statistics:
    queries performed:
        read:                            22050
    transactions:                        22050  (2204.67 per sec.)
    queries:                             22050  (2204.67 per sec.)
Latency (ms):
         min:                                    0.30
         avg:                                    0.45
         max:                                    5.01
";
        let f = parse_sysbench(out).unwrap();
        assert_eq!(
            f,
            RunFigures {
                tps: 2204.67,
                transactions: 22050,
                latency_ms: Some(0.45)
            }
        );
    }

    #[test]
    fn parses_several_explain_outputs() {
        let out = "Aggregate  (cost=1.1..1.2 rows=1 width=8) (actual time=1.0..1.0 rows=1 loops=1)
  ->  Index Only Scan using foo_pkey on foo  (actual rows=10000 loops=1)
        Index Cond: (a <= 10000)
        Heap Fetches: 37
Planning Time: 0.081 ms
Execution Time: 1.502 ms
Seq Scan on synth_table  (actual time=0.001..0.001 rows=0 loops=1)
  Filter: (col5 = 42)
Planning Time: 0.216 ms
Execution Time: 0.010 ms
";
        let all = parse_explains(out);
        assert_eq!(
            all,
            vec![
                ExplainFigures {
                    planning_ms: Some(0.081),
                    execution_ms: Some(1.502),
                    heap_fetches: Some(37),
                    buffers: None,
                },
                ExplainFigures {
                    planning_ms: Some(0.216),
                    execution_ms: Some(0.010),
                    heap_fetches: None,
                    buffers: None,
                },
            ]
        );
    }

    #[test]
    fn parses_buffers_of_the_top_node_not_the_planner() {
        // psql -A -t output of two EXPLAIN (ANALYZE, BUFFERS), PostgreSQL 15: the first
        // statement of a session also plans with catalog lookups and reads the metapage.
        let out = "Index Scan using pk1m_pkey on pk1m  (cost=0.42..8.44 rows=1 width=15) (actual time=0.030..0.031 rows=1 loops=1)
  Index Cond: (id = 104730)
  Buffers: shared hit=4 read=1
Planning:
  Buffers: shared hit=68 read=2
Planning Time: 0.412 ms
Execution Time: 0.052 ms
Index Scan using pk1m_pkey on pk1m  (cost=0.42..8.44 rows=1 width=15) (actual time=0.011..0.012 rows=1 loops=1)
  Index Cond: (id = 209459)
  Buffers: shared hit=4
Planning Time: 0.040 ms
Execution Time: 0.020 ms
Nested Loop  (actual time=0.1..0.2 rows=1 loops=1)
  Buffers: shared hit=7, temp read=3 written=3
  ->  Index Scan using a_pkey on a  (actual rows=1 loops=1)
        Buffers: shared hit=3
Planning Time: 0.050 ms
Execution Time: 0.300 ms
Result  (actual time=0.001..0.001 rows=1 loops=1)
Planning Time: 0.010 ms
Execution Time: 0.002 ms
";
        let buffers: Vec<Option<u64>> = parse_explains(out).iter().map(|e| e.buffers).collect();
        assert_eq!(buffers, [Some(5), Some(4), Some(7), None]);
    }

    #[test]
    fn buffer_accesses_are_hits_plus_reads() {
        assert_eq!(buffer_accesses(" shared hit=4"), Some(4));
        assert_eq!(buffer_accesses(" shared read=4"), Some(4));
        assert_eq!(
            buffer_accesses(" shared hit=3 read=1 dirtied=1 written=2"),
            Some(4)
        );
        assert_eq!(
            buffer_accesses(" shared hit=3, local hit=2 read=1, temp read=5 written=5"),
            Some(6)
        );
        assert_eq!(buffer_accesses(" temp read=5 written=5"), None);
        assert_eq!(buffer_accesses(" shared hit=x"), None);
        assert_eq!(buffer_accesses(""), None);
    }

    fn captured(stdout: &str, stderr: &str) -> Captured {
        Captured {
            status: None,
            stdout: stdout.into(),
            stderr: stderr.into(),
            timed_out: false,
        }
    }

    #[test]
    fn error_summary_finds_the_error_and_its_statement() {
        let c = captured(
            "",
            "psql:/tmp/b/script.sql:2: ERROR:  syntax error at or near \"partition\"\n\
             LINE 1: create table ht (a int, b int) partition by hash (b);\n\
             psql:/tmp/b/script.sql:2: STATEMENT:  create table ht (a int, b int) partition by hash (b);\n",
        );
        assert_eq!(
            error_summary(&c),
            "ERROR: syntax error at or near \"partition\" [in: create table ht (a int, b int) partition by hash (b);]"
        );
        let c = captured(
            "pgbench (15.18)\n",
            "pgbench: error: client 0 script 0 aborted in command 1 query 0: ERROR:  relation \"ht\" does not exist\n",
        );
        assert_eq!(
            error_summary(&c),
            "client 0 script 0 aborted in command 1 query 0: ERROR: relation \"ht\" does not exist"
        );
        let c = captured(
            "",
            "pgbench: error: query failed: ERROR:  x\npgbench: detail: Query was: copy a from stdin\n",
        );
        assert_eq!(
            error_summary(&c),
            "query failed: ERROR: x [in: copy a from stdin]"
        );
    }

    #[test]
    fn long_errors_are_cut() {
        let long = "x".repeat(500);
        let s = one_line(&long, 10);
        assert_eq!(s.chars().count(), 10);
        assert!(s.ends_with('…'));
    }
}
