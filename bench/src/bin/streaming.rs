//! `streaming`: time to first row and cancel latency (issue 30), against Myriad and a
//! throwaway PostgreSQL 15 side by side in one run (`docs/benchmarks.md` says how to run it).
//!
//! 1. Each server is started fresh (the harness's [`servers`]) and given
//!    `stream_t (g int, t text)` with `--rows` rows (`INSERT ... SELECT` from
//!    `generate_series`), then `VACUUM ANALYZE stream_t` (so PostgreSQL's first scan does
//!    not set hint bits and write pages).
//! 2. **Time to first row.** `SELECT * FROM stream_t` as a simple Query, once to warm up,
//!    then `--runs` times on the same connection, timed from writing the Query message to
//!    reading the first DataRow, and to reading ReadyForQuery (total). Rows are read and
//!    dropped as they arrive, so the client never holds the result. Goal: Myriad's median
//!    within [`FIRST_ROW_RATIO_GOAL`] × PostgreSQL's.
//! 3. **Cancel latency.** `--runs` times: a fresh connection starts [`CANCEL_SQL`], which
//!    runs for minutes on both servers; after [`CANCEL_DELAY`] a second connection sends
//!    the CancelRequest (the pid and secret key of the first one's BackendKeyData), timed
//!    from opening that connection to reading the first connection's ErrorResponse with
//!    SQLSTATE 57014. Goal: every cancel within [`CANCEL_GOAL`].
//!
//! The client is the few messages of the v3 protocol this needs ([`Conn`]): startup as
//! `postgres` to database `postgres` with trust authentication, simple Query, and the
//! CancelRequest packet. Medians of an even number of runs are the mean of the middle two.
//!
//! The report (markdown) goes to stdout and to `--out`. Exit status: 0 when every
//! measurement gave a number on both servers (goals met or not), 1 when one failed, 2 for
//! bad usage or a server that did not start.

#[allow(dead_code)]
#[path = "../client.rs"]
mod client;
#[allow(dead_code)]
#[path = "../procfs.rs"]
mod procfs;
#[allow(dead_code)]
#[path = "../servers.rs"]
mod servers;
#[allow(dead_code)]
#[path = "../tools.rs"]
mod tools;

use std::fmt::Write as _;
use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;

use crate::servers::{Server, ServerKind, StartContext};

/// Myriad's buffer pool and PostgreSQL's shared_buffers: 128 MiB, PostgreSQL's default.
const BUFFER_POOL_PAGES: usize = 16_384;
/// The statement whose first row is timed.
const SCAN_SQL: &str = "SELECT * FROM stream_t";
/// The statement that is canceled: a cross join of `stream_t` with 100,000 generated rows,
/// minutes of work on both servers even at a few hundred thousand rows. The generated rows
/// are the inner side on both, so what a server keeps in memory is 100,000 integers; a
/// self-join of `stream_t` would have Myriad materialize the whole table. PostgreSQL runs it
/// with its defaults: a parallel plan (two workers) with JIT compilation, so its error comes
/// only once the workers have stopped, which can wait for a worker's compilation.
const CANCEL_SQL: &str = "SELECT count(*) FROM stream_t a, generate_series(1, 100000) b";
/// How long [`CANCEL_SQL`] runs before it is canceled.
const CANCEL_DELAY: Duration = Duration::from_millis(300);
/// `statement_timeout` of the connection that runs [`CANCEL_SQL`]: it ends the statement
/// (as a failed run) when the cancel does not.
const CANCEL_STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);
/// Issue 30's goals.
const FIRST_ROW_RATIO_GOAL: f64 = 2.0;
const CANCEL_GOAL: Duration = Duration::from_millis(100);
/// The longest the client waits for the next message (loading 10 million rows into a debug
/// build included); past it the measurement fails rather than hangs.
const READ_GAP_LIMIT: Duration = Duration::from_secs(1800);
/// A message longer than this is taken for a broken stream.
const MESSAGE_BYTES_MAX: usize = 1 << 30;
/// The v3 protocol's StartupMessage version and the CancelRequest code.
const PROTOCOL_VERSION_3: i32 = 196_608;
const CANCEL_REQUEST_CODE: i32 = 80_877_102;
const QUERY_CANCELED: &str = "57014";

/// Time to first row and cancel latency (issue 30) against Myriad and PostgreSQL 15.
#[derive(Parser, Debug)]
#[command(about, long_about = None)]
struct Args {
    /// Rows in `stream_t`.
    #[arg(long, default_value_t = 10_000_000)]
    rows: u64,
    /// Timed runs of each measurement; medians (and maxima) are reported.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// The Myriad binary (a release build).
    #[arg(long, default_value = "target/release/myriad")]
    myriad_bin: PathBuf,
    /// Where the markdown report is written as well.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// One server's figures; a measurement that failed has its reason instead.
struct Figures {
    label: &'static str,
    load: Result<Duration, String>,
    /// (first row, total) of each timed run.
    first_row: Result<Vec<(Duration, Duration)>, String>,
    cancel: Result<Vec<Duration>, String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    procfs::install_signal_flag();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("streaming: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> Result<bool, String> {
    if args.runs == 0 || args.rows == 0 {
        return Err("--runs and --rows must be at least 1".into());
    }
    let myriad_bin = std::fs::canonicalize(&args.myriad_bin).map_err(|e| {
        format!(
            "{}: {e}: build it with `cargo build --release`",
            args.myriad_bin.display()
        )
    })?;
    let tools = tools::Tools::find()?;
    let tmp = tempfile::Builder::new()
        .prefix("myriad-streaming-")
        .tempdir()
        .map_err(|e| format!("could not make a temporary directory: {e}"))?;
    let ctx = StartContext {
        tools,
        myriad_bin,
        harness_exe: std::env::current_exe().map_err(|e| e.to_string())?,
        root: tmp.path().to_path_buf(),
        buffer_pool_pages: BUFFER_POOL_PAGES,
        postgres_owner: tools::postgres_owner()?,
    };
    let mut all = Vec::new();
    for kind in [ServerKind::Myriad, ServerKind::Postgres] {
        let mut server = Server::start(kind, &ctx, 0)?;
        let figures = measure(args, &server);
        server.stop();
        all.push(figures);
        if procfs::interrupted() {
            return Err("interrupted".into());
        }
    }
    let report = report(args, &ctx, &all);
    print!("{report}");
    if let Some(out) = &args.out {
        std::fs::write(out, &report).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    Ok(all
        .iter()
        .all(|f| f.load.is_ok() && f.first_row.is_ok() && f.cancel.is_ok()))
}

/// Loads `stream_t` into `server` and takes both measurements.
fn measure(args: &Args, server: &Server) -> Figures {
    let label = server.kind.label();
    let say = |what: &str| eprintln!("streaming: {label}: {what}");
    let load = load(server.port, args.rows);
    match &load {
        Ok(d) => say(&format!(
            "loaded {} rows in {:.1} s",
            args.rows,
            d.as_secs_f64()
        )),
        Err(e) => say(&format!("load failed: {e}")),
    }
    if let Err(e) = &load {
        let skipped = format!("not measured: the load failed ({e})");
        return Figures {
            label,
            first_row: Err(skipped.clone()),
            cancel: Err(skipped),
            load,
        };
    }
    let first_row = first_row_runs(server.port, args.rows, args.runs, &say);
    let cancel = (|| {
        let mut runs = Vec::new();
        for i in 0..args.runs {
            if procfs::interrupted() {
                return Err("interrupted".to_string());
            }
            let d = cancel_once(server.port)?;
            say(&format!("cancel {}/{}: {:.2} ms", i + 1, args.runs, ms(d)));
            runs.push(d);
        }
        Ok(runs)
    })();
    if let Err(e) = &cancel {
        say(&format!("cancel failed: {e}"));
    }
    Figures {
        label,
        load,
        first_row,
        cancel,
    }
}

/// Creates and fills `stream_t`; the time it took.
fn load(port: u16, rows: u64) -> Result<Duration, String> {
    let mut conn = Conn::connect(port)?;
    let started = Instant::now();
    conn.execute("CREATE TABLE stream_t (g int, t text)")?;
    conn.execute(&format!(
        "INSERT INTO stream_t SELECT g, 'row ' || g FROM generate_series(1, {rows}) g"
    ))?;
    conn.execute("VACUUM ANALYZE stream_t")?;
    Ok(started.elapsed())
}

/// One warm-up scan, then `runs` timed ones on the same connection.
fn first_row_runs(
    port: u16,
    rows: u64,
    runs: usize,
    say: &dyn Fn(&str),
) -> Result<Vec<(Duration, Duration)>, String> {
    let mut conn = Conn::connect(port)?;
    let mut timed = Vec::new();
    for i in 0..=runs {
        if procfs::interrupted() {
            return Err("interrupted".into());
        }
        let (first, total) = conn.scan(SCAN_SQL, rows)?;
        if i == 0 {
            say(&format!(
                "warm-up scan: first row {:.2} ms, total {:.1} ms",
                ms(first),
                ms(total)
            ));
        } else {
            say(&format!(
                "scan {i}/{runs}: first row {:.2} ms, total {:.1} ms",
                ms(first),
                ms(total)
            ));
            timed.push((first, total));
        }
    }
    Ok(timed)
}

/// Starts [`CANCEL_SQL`] on a fresh connection, cancels it after [`CANCEL_DELAY`]; the time
/// from sending the CancelRequest to reading the statement's 57014 error.
fn cancel_once(port: u16) -> Result<Duration, String> {
    let mut conn = Conn::connect(port)?;
    conn.execute(&format!(
        "SET statement_timeout = '{}s'",
        CANCEL_STATEMENT_TIMEOUT.as_secs()
    ))?;
    let (pid, key) = conn
        .backend_key
        .ok_or("the server sent no BackendKeyData, so it cannot be sent a cancel")?;
    let started = Instant::now();
    conn.send_query(CANCEL_SQL)?;
    std::thread::sleep(CANCEL_DELAY);
    let sent = Instant::now();
    send_cancel(port, pid, key)?;
    let mut canceled = None;
    let mut error = None;
    loop {
        match conn.read_message()? {
            b'E' => {
                let (code, message) = parse_error(&conn.body);
                if code == QUERY_CANCELED && !message.contains("timeout") && canceled.is_none() {
                    canceled = Some(sent.elapsed());
                } else {
                    error.get_or_insert(format!("{code}: {message}"));
                }
            }
            b'C' => {
                error.get_or_insert(format!(
                    "the statement finished in {:.0} ms, before it could be canceled",
                    ms(started.elapsed())
                ));
            }
            b'Z' => break,
            _ => {}
        }
    }
    match (canceled, error) {
        (Some(d), None) => Ok(d),
        (_, Some(e)) => Err(e),
        (None, None) => Err("the statement ended without an error or a result".into()),
    }
}

/// Sends a CancelRequest for backend `pid` on a new connection, which the server closes.
fn send_cancel(port: u16, pid: i32, key: i32) -> Result<(), String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))
        .map_err(|e| format!("could not connect to send a cancel: {e}"))?;
    let _ = stream.set_nodelay(true);
    let mut packet = Vec::with_capacity(16);
    for word in [16, CANCEL_REQUEST_CODE, pid, key] {
        packet.extend_from_slice(&word.to_be_bytes());
    }
    stream
        .write_all(&packet)
        .map_err(|e| format!("could not send a cancel: {e}"))
}

/// A v3 protocol connection as `postgres` to database `postgres` (trust authentication).
struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    /// (process id, secret key) from BackendKeyData.
    backend_key: Option<(i32, i32)>,
    /// The body of the last message read.
    body: Vec<u8>,
}

impl Conn {
    /// Connects and reads up to the first ReadyForQuery.
    fn connect(port: u16) -> Result<Conn, String> {
        let stream = TcpStream::connect(("127.0.0.1", port))
            .map_err(|e| format!("could not connect to port {port}: {e}"))?;
        let _ = stream.set_nodelay(true);
        stream
            .set_read_timeout(Some(READ_GAP_LIMIT))
            .map_err(|e| e.to_string())?;
        let writer = stream.try_clone().map_err(|e| e.to_string())?;
        let mut conn = Conn {
            reader: BufReader::with_capacity(1 << 16, stream),
            writer,
            backend_key: None,
            body: Vec::new(),
        };
        let mut params = Vec::new();
        params.extend_from_slice(&PROTOCOL_VERSION_3.to_be_bytes());
        for text in ["user", "postgres", "database", "postgres", ""] {
            params.extend_from_slice(text.as_bytes());
            params.push(0);
        }
        let mut startup = Vec::with_capacity(params.len() + 4);
        startup.extend_from_slice(&(params.len() as i32 + 4).to_be_bytes());
        startup.extend_from_slice(&params);
        conn.write(&startup)?;
        loop {
            match conn.read_message()? {
                b'R' => match be_i32(&conn.body, 0) {
                    Some(0) => {}
                    other => {
                        return Err(format!(
                            "the server asks for authentication {other:?}; trust is expected"
                        ));
                    }
                },
                b'K' => {
                    conn.backend_key = be_i32(&conn.body, 0).zip(be_i32(&conn.body, 4));
                }
                b'E' => {
                    let (code, message) = parse_error(&conn.body);
                    return Err(format!("could not connect: {code}: {message}"));
                }
                b'Z' => return Ok(conn),
                _ => {}
            }
        }
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.writer
            .write_all(bytes)
            .map_err(|e| format!("could not write to the server: {e}"))
    }

    /// Writes a Query message.
    fn send_query(&mut self, sql: &str) -> Result<(), String> {
        let mut message = Vec::with_capacity(sql.len() + 6);
        message.push(b'Q');
        message.extend_from_slice(&(sql.len() as i32 + 5).to_be_bytes());
        message.extend_from_slice(sql.as_bytes());
        message.push(0);
        self.write(&message)
    }

    /// Reads one message into `body`; its type byte.
    fn read_message(&mut self) -> Result<u8, String> {
        let mut header = [0u8; 5];
        self.reader
            .read_exact(&mut header)
            .map_err(|e| format!("could not read from the server: {e}"))?;
        let len = i32::from_be_bytes([header[1], header[2], header[3], header[4]]);
        let body_len = usize::try_from(len)
            .ok()
            .and_then(|l| l.checked_sub(4))
            .filter(|&l| l <= MESSAGE_BYTES_MAX)
            .ok_or_else(|| format!("bad message length {len} (type {:?})", header[0] as char))?;
        self.body.resize(body_len, 0);
        self.reader
            .read_exact(&mut self.body)
            .map_err(|e| format!("could not read from the server: {e}"))?;
        Ok(header[0])
    }

    /// Runs `sql` to ReadyForQuery; the first error, if any.
    fn execute(&mut self, sql: &str) -> Result<(), String> {
        self.send_query(sql)?;
        let mut error = None;
        loop {
            match self.read_message()? {
                b'E' => {
                    let (code, message) = parse_error(&self.body);
                    error.get_or_insert(format!("{code}: {message} [in: {sql}]"));
                }
                b'Z' => return error.map_or(Ok(()), Err),
                _ => {}
            }
        }
    }

    /// Runs `sql`, dropping its rows as they come, and checks that there were `rows`; the
    /// time from writing the Query to the first DataRow and to ReadyForQuery.
    fn scan(&mut self, sql: &str, rows: u64) -> Result<(Duration, Duration), String> {
        let started = Instant::now();
        self.send_query(sql)?;
        let mut first = None;
        let mut seen = 0u64;
        let mut error = None;
        loop {
            match self.read_message()? {
                b'D' => {
                    first.get_or_insert_with(|| started.elapsed());
                    seen += 1;
                }
                b'E' => {
                    let (code, message) = parse_error(&self.body);
                    error.get_or_insert(format!("{code}: {message}"));
                }
                b'Z' => break,
                _ => {}
            }
        }
        let total = started.elapsed();
        if let Some(e) = error {
            return Err(e);
        }
        match first {
            Some(first) if seen == rows => Ok((first, total)),
            _ => Err(format!("{sql} returned {seen} rows, not {rows}")),
        }
    }
}

fn be_i32(bytes: &[u8], at: usize) -> Option<i32> {
    let b = bytes.get(at..at + 4)?;
    Some(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// SQLSTATE and message of an ErrorResponse body (fields: a type byte, a C string; a zero
/// byte ends them).
fn parse_error(body: &[u8]) -> (String, String) {
    let (mut code, mut message) = (String::new(), String::new());
    let mut rest = body;
    while let Some((&kind, tail)) = rest.split_first() {
        if kind == 0 {
            break;
        }
        let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        let text = String::from_utf8_lossy(&tail[..end]).into_owned();
        match kind {
            b'C' => code = text,
            b'M' => message = text,
            _ => {}
        }
        rest = tail.get(end + 1..).unwrap_or(&[]);
    }
    (code, message)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The median (the mean of the middle two of an even count) and the maximum.
fn median_max(values: &[Duration]) -> (Duration, Duration) {
    let mut sorted = values.to_vec();
    sorted.sort();
    let n = sorted.len();
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    };
    (median, sorted[n - 1])
}

/// The markdown report.
fn report(args: &Args, ctx: &StartContext, all: &[Figures]) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "## Time to first row and cancel latency (issue 30)\n\n\
         `stream_t (g int, t text)`, {} rows; {} timed runs of each measurement. \
         Myriad: `{}`; {}. {}.\n",
        args.rows,
        args.runs,
        display_path(&ctx.myriad_bin),
        ctx.tools.postgres_version,
        tools::machine_facts()
    );
    first_row_table(&mut md, all);
    cancel_table(&mut md, all);
    let loads: Vec<String> = all
        .iter()
        .map(|f| match &f.load {
            Ok(d) => format!("{} {:.1} s", f.label, d.as_secs_f64()),
            Err(_) => format!("{} failed", f.label),
        })
        .collect();
    let _ = writeln!(
        md,
        "\nLoad (CREATE, INSERT ... SELECT, VACUUM ANALYZE): {}.",
        loads.join("; ")
    );
    md
}

fn first_row_table(md: &mut String, all: &[Figures]) {
    let _ = writeln!(
        md,
        "### Time to first row\n\n\
         `{SCAN_SQL}` as a simple Query, from writing it to the first DataRow, and to \
         ReadyForQuery (total); after one warm-up run on the same connection.\n\n\
         | Server | First row, median (ms) | First row, max (ms) | Total, median (ms) | Total, max (ms) | First row / PostgreSQL's | Goal | Met |\n\
         |---|---:|---:|---:|---:|---:|---|---|"
    );
    let postgres_first = all
        .iter()
        .find(|f| f.label == ServerKind::Postgres.label())
        .and_then(|f| f.first_row.as_ref().ok())
        .map(|runs| median_max(&runs.iter().map(|r| r.0).collect::<Vec<_>>()).0);
    for f in all {
        let runs = match &f.first_row {
            Ok(runs) => runs,
            Err(e) => {
                let _ = writeln!(
                    md,
                    "| {} | failed: {} | | | | | | |",
                    f.label,
                    client::one_line(e, 120)
                );
                continue;
            }
        };
        let (first_median, first_max) = median_max(&runs.iter().map(|r| r.0).collect::<Vec<_>>());
        let (total_median, total_max) = median_max(&runs.iter().map(|r| r.1).collect::<Vec<_>>());
        let (ratio, goal, met) = match postgres_first {
            Some(p) if f.label == ServerKind::Myriad.label() && !p.is_zero() => {
                let r = first_median.as_secs_f64() / p.as_secs_f64();
                (
                    format!("{r:.2}"),
                    format!("≤ {FIRST_ROW_RATIO_GOAL}×"),
                    if r <= FIRST_ROW_RATIO_GOAL {
                        "yes"
                    } else {
                        "no"
                    },
                )
            }
            _ => ("-".into(), "-".into(), "-"),
        };
        let _ = writeln!(
            md,
            "| {} | {:.2} | {:.2} | {:.1} | {:.1} | {ratio} | {goal} | {met} |",
            f.label,
            ms(first_median),
            ms(first_max),
            ms(total_median),
            ms(total_max)
        );
    }
}

fn cancel_table(md: &mut String, all: &[Figures]) {
    let _ = writeln!(
        md,
        "\n### Cancel latency\n\n\
         `{CANCEL_SQL}` on a fresh connection, canceled after {} ms by a CancelRequest on a \
         second one; from opening that connection to the first one's ErrorResponse 57014. \
         Met: every run within the goal. PostgreSQL has its default settings (a parallel \
         plan with JIT compilation at these sizes: its error waits for the workers to stop).\n\n\
         | Server | Median (ms) | Max (ms) | Goal | Met |\n\
         |---|---:|---:|---|---|",
        CANCEL_DELAY.as_millis()
    );
    for f in all {
        let goal = format!("≤ {} ms", CANCEL_GOAL.as_millis());
        let _ = match &f.cancel {
            Ok(runs) => {
                let (median, max) = median_max(runs);
                writeln!(
                    md,
                    "| {} | {:.2} | {:.2} | {goal} | {} |",
                    f.label,
                    ms(median),
                    ms(max),
                    if max <= CANCEL_GOAL { "yes" } else { "no" }
                )
            }
            Err(e) => writeln!(
                md,
                "| {} | failed: {} | | {goal} | no |",
                f.label,
                client::one_line(e, 120)
            ),
        };
    }
}

/// `path` relative to the working directory when it is below it.
fn display_path(path: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_fields_are_found() {
        let body = b"SERROR\0VERROR\0C57014\0Mcanceling statement due to user request\0\0";
        assert_eq!(
            parse_error(body),
            (
                "57014".to_string(),
                "canceling statement due to user request".to_string()
            )
        );
        assert_eq!(parse_error(b"Cxx"), ("xx".to_string(), String::new()));
        assert_eq!(parse_error(b""), (String::new(), String::new()));
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        let d = Duration::from_millis;
        assert_eq!(median_max(&[d(3), d(1), d(2)]), (d(2), d(3)));
        assert_eq!(
            median_max(&[d(4), d(1)]),
            (Duration::from_micros(2500), d(4))
        );
    }
}
