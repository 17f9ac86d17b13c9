//! `tpch`: workload W8 of DESIGN.md §4, TPC-H, against Myriad and a throwaway PostgreSQL 15
//! side by side in one run (`docs/benchmarks.md` says how to run it).
//!
//! 1. The data of every table at the scale factor comes from the `tpchgen` crate (the
//!    generator behind `tpchgen-cli`, the same rows as the TPC's `dbgen`), written once as
//!    COPY text files.
//! 2. Each server is started fresh (the harness's [`servers`]), given `bench/tpch/schema.sql`
//!    (primary keys), loaded with COPY, then `bench/tpch/indexes.sql` (an index on each
//!    foreign-key column, ANALYZE).
//! 3. Each of the 22 queries (`bench/tpch/queries/qN.sql`, the specification's validation
//!    parameters; Q15 without its view) runs once to warm up, which gives the rows, then
//!    `--runs` times timed by psql's `\timing`; the median is reported. Every run has
//!    `statement_timeout` 600 s. PostgreSQL runs with `max_parallel_workers_per_gather = 0`
//!    (one core against one core, the reference) and, unless `--no-defaults`,
//!    again with its defaults.
//! 4. Rows are compared as sorted multisets, numbers rounded to 2 places.
//!
//! The report (markdown) goes to stdout and to `--out`. Exit status: 0 when every query
//! gave PostgreSQL's rows on Myriad, 1 when one did not (or failed), 2 for bad usage.

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
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;

use crate::servers::{Server, ServerKind, StartContext};

/// Myriad's buffer pool and PostgreSQL's shared_buffers: 128 MiB, PostgreSQL's default.
const BUFFER_POOL_PAGES: usize = 16_384;
/// The tables, in the order they are generated and loaded (referenced before referencing).
const TABLES: [&str; 8] = [
    "region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem",
];
/// Each query's `statement_timeout`, on both servers.
const STATEMENT_TIMEOUT_S: u64 = 600;

/// W8: TPC-H against Myriad and PostgreSQL 15.
#[derive(Parser, Debug)]
#[command(about, long_about = None)]
struct Args {
    /// Scale factor (0.1 in the standard run, 1 once per issue).
    #[arg(long, default_value_t = 0.1)]
    scale: f64,
    /// Timed runs of each query (after one to warm up); the median is reported.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// The Myriad binary (a release build).
    #[arg(long, default_value = "target/release/myriad")]
    myriad_bin: PathBuf,
    /// Only these queries (1-22), e.g. `--queries 1,6,14`.
    #[arg(long, value_delimiter = ',')]
    queries: Vec<usize>,
    /// Skip PostgreSQL's run with its default settings (parallel workers).
    #[arg(long)]
    no_defaults: bool,
    /// Where the markdown report is written as well.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Only write the data (COPY text files, one per table) into this directory and stop:
    /// for loading a server by hand to profile a query.
    #[arg(long)]
    generate_only: Option<PathBuf>,
}

/// One server's answer to one query.
#[derive(Clone, Debug, Default)]
struct Outcome {
    /// The rows, normalized ([`normalize`]); `None` if the query failed.
    rows: Option<Vec<String>>,
    /// Median of the timed runs, in milliseconds.
    median_ms: Option<f64>,
    /// What went wrong.
    error: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    procfs::install_signal_flag();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("tpch: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> Result<bool, String> {
    let root_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tpch");
    if let Some(dir) = &args.generate_only {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for (table, n) in generate(args.scale, dir)? {
            eprintln!("tpch: {table}: {n} rows");
        }
        return Ok(true);
    }
    let queries: Vec<usize> = if args.queries.is_empty() {
        (1..=22).collect()
    } else {
        args.queries.clone()
    };
    if let Some(q) = queries.iter().find(|q| !(1..=22).contains(*q)) {
        return Err(format!("there is no TPC-H query {q}"));
    }
    let myriad_bin = std::fs::canonicalize(&args.myriad_bin).map_err(|e| {
        format!(
            "{}: {e}: build it with `cargo build --release`",
            args.myriad_bin.display()
        )
    })?;
    let tools = tools::Tools::find()?;
    let tmp = tempfile::Builder::new()
        .prefix("myriad-tpch-")
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
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let counts = generate(args.scale, &data)?;
    eprintln!(
        "tpch: generated SF {} ({} lineitem rows) in {:.1} s",
        args.scale,
        counts
            .iter()
            .find(|(t, _)| *t == "lineitem")
            .map_or(0, |c| c.1),
        started.elapsed().as_secs_f64()
    );
    let texts: Vec<(usize, String)> = queries
        .iter()
        .map(|&q| {
            let path = root_dir.join("queries").join(format!("q{q}.sql"));
            std::fs::read_to_string(&path)
                .map(|t| (q, t.replace(":fraction", &fraction(args.scale))))
                .map_err(|e| format!("{}: {e}", path.display()))
        })
        .collect::<Result<_, _>>()?;

    let mut columns: Vec<(&str, Vec<Outcome>, Option<f64>)> = Vec::new();
    let series: Vec<(ServerKind, &str, Option<&str>)> = {
        let mut s = vec![
            (ServerKind::Myriad, "Myriad", None),
            (
                ServerKind::Postgres,
                "PostgreSQL 15, 1 core",
                Some("SET max_parallel_workers_per_gather = 0;"),
            ),
        ];
        if !args.no_defaults {
            s.push((ServerKind::Postgres, "PostgreSQL 15, defaults", Some("")));
        }
        s
    };
    let mut postgres: Option<Server> = None;
    let mut postgres_load = None;
    for (kind, label, setup) in &series {
        let reuse = *kind == ServerKind::Postgres && postgres.is_some();
        let mut fresh = None;
        let load_s = if reuse {
            postgres_load
        } else {
            let server = Server::start(*kind, &ctx, 0)?;
            let t = Instant::now();
            load(&ctx, &server, &root_dir, &data, tmp.path())?;
            let secs = t.elapsed().as_secs_f64();
            eprintln!("tpch: {label}: loaded in {secs:.1} s");
            if *kind == ServerKind::Postgres {
                postgres = Some(server);
                postgres_load = Some(secs);
            } else {
                fresh = Some(server);
            }
            Some(secs)
        };
        let server = fresh.as_ref().or(postgres.as_ref()).expect("started above");
        let mut outcomes = Vec::new();
        for (q, text) in &texts {
            if procfs::interrupted() {
                return Err("interrupted".into());
            }
            let o = run_query(
                &ctx,
                server,
                text,
                setup.unwrap_or(""),
                args.runs,
                tmp.path(),
            );
            eprintln!(
                "tpch: {label}: Q{q}: {}",
                match (&o.median_ms, &o.error) {
                    (Some(ms), _) => format!("{ms:.1} ms"),
                    (None, Some(e)) => e.clone(),
                    (None, None) => "?".into(),
                }
            );
            outcomes.push(o);
        }
        columns.push((label, outcomes, load_s));
        if let Some(mut s) = fresh {
            s.stop();
        }
    }
    let (report, all_match) = report(args, &queries, &columns);
    print!("{report}");
    if let Some(out) = &args.out {
        std::fs::write(out, &report).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    Ok(all_match)
}

/// Q11's FRACTION, 0.0001 / SF, as a decimal literal (`0.001` at SF 0.1).
fn fraction(scale: f64) -> String {
    let s = format!("{:.12}", 0.0001 / scale);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Write every table at `scale` as a COPY text file in `dir`; the row count of each.
fn generate(scale: f64, dir: &Path) -> Result<Vec<(&'static str, u64)>, String> {
    use tpchgen::generators as g;
    let mut counts = Vec::new();
    let mut write = |table: &'static str, lines: &mut dyn Iterator<Item = String>| {
        let path = dir.join(format!("{table}.tsv"));
        let file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut out = std::io::BufWriter::new(file);
        let mut n = 0u64;
        for line in lines {
            // TBL rows end in `|` and hold no tabs or backslashes: tab-separated COPY text.
            let row = line.strip_suffix('|').unwrap_or(&line).replace('|', "\t");
            writeln!(out, "{row}").map_err(|e| e.to_string())?;
            n += 1;
        }
        out.flush().map_err(|e| e.to_string())?;
        counts.push((table, n));
        Ok::<(), String>(())
    };
    // In load order (`TABLES`): each table's generator.
    macro_rules! tables {
        ($($table:literal => $generator:ident),* $(,)?) => {
            $(write(
                $table,
                &mut g::$generator::new(scale, 1, 1).iter().map(|r| r.to_string()),
            )?;)*
        };
    }
    tables!(
        "region" => RegionGenerator,
        "nation" => NationGenerator,
        "part" => PartGenerator,
        "supplier" => SupplierGenerator,
        "partsupp" => PartSuppGenerator,
        "customer" => CustomerGenerator,
        "orders" => OrderGenerator,
        "lineitem" => LineItemGenerator,
    );
    Ok(counts)
}

/// Schema, COPY of every table, then the foreign-key indexes and ANALYZE.
fn load(
    ctx: &StartContext,
    server: &Server,
    root: &Path,
    data: &Path,
    scratch: &Path,
) -> Result<(), String> {
    let mut script = std::fs::read_to_string(root.join("schema.sql")).map_err(|e| e.to_string())?;
    for table in TABLES {
        let _ = writeln!(
            script,
            "\\copy {table} from '{}'",
            data.join(format!("{table}.tsv")).display()
        );
    }
    script.push_str(&std::fs::read_to_string(root.join("indexes.sql")).map_err(|e| e.to_string())?);
    script.push_str("VACUUM;\n");
    let out = client::psql(
        &ctx.tools,
        server.port,
        &script,
        None,
        false,
        scratch,
        Duration::from_secs(4 * 3600),
    )
    .map_err(|_| "interrupted".to_string())?;
    if !out.success() {
        return Err(format!(
            "loading {} failed: {}",
            server.kind.label(),
            client::error_summary(&out)
        ));
    }
    Ok(())
}

/// One query on one server: a warm-up run whose rows are kept, then `runs` timed ones.
fn run_query(
    ctx: &StartContext,
    server: &Server,
    text: &str,
    setup: &str,
    runs: usize,
    scratch: &Path,
) -> Outcome {
    let mut script = format!(
        "SET statement_timeout = '{STATEMENT_TIMEOUT_S}s';\n{setup}\n\\timing on\n{text}\n\\o /dev/null\n"
    );
    for _ in 0..runs {
        script.push_str(text);
        script.push('\n');
    }
    let limit = Duration::from_secs(STATEMENT_TIMEOUT_S * (runs as u64 + 1) + 60);
    let out = match client::psql(
        &ctx.tools,
        server.port,
        &script,
        None,
        false,
        scratch,
        limit,
    ) {
        Ok(o) => o,
        Err(_) => {
            return Outcome {
                error: Some("interrupted".into()),
                ..Outcome::default()
            };
        }
    };
    if !out.success() {
        return Outcome {
            error: Some(client::error_summary(&out)),
            ..Outcome::default()
        };
    }
    let mut rows = Vec::new();
    let mut times = Vec::new();
    for line in out.stdout.lines() {
        if let Some(t) = line.strip_prefix("Time: ") {
            if let Some(ms) = t
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<f64>().ok())
            {
                times.push(ms);
            }
        } else if !line.is_empty() {
            rows.push(normalize(line));
        }
    }
    // The first time is the warm-up's.
    let mut timed: Vec<f64> = times.into_iter().skip(1).collect();
    timed.sort_by(|a, b| a.total_cmp(b));
    rows.sort();
    Outcome {
        rows: Some(rows),
        median_ms: timed.get(timed.len() / 2).copied(),
        error: None,
    }
}

/// A row as psql prints it unaligned (`|` between fields) with every number rounded to
/// 2 places and trailing blanks dropped (`char(n)` padding), so that the same answer
/// compares equal whatever scale each server gives an average.
fn normalize(line: &str) -> String {
    line.split('|')
        .map(|f| {
            let f = f.trim_end();
            round2(f).unwrap_or_else(|| f.to_string())
        })
        .collect::<Vec<_>>()
        .join("|")
}

/// `text` rounded to 2 decimal places (half away from zero), if it is a decimal number.
fn round2(text: &str) -> Option<String> {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if int.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let mut cents: Vec<u8> = int.bytes().map(|b| b - b'0').collect();
    let f: Vec<u8> = frac.bytes().map(|b| b - b'0').chain([0, 0]).collect();
    cents.extend_from_slice(&f[..2]);
    if f.get(2).is_some_and(|&d| d >= 5) {
        let mut i = cents.len();
        loop {
            if i == 0 {
                cents.insert(0, 1);
                break;
            }
            i -= 1;
            if cents[i] == 9 {
                cents[i] = 0;
            } else {
                cents[i] += 1;
                break;
            }
        }
    }
    let s: String = cents.iter().map(|d| char::from(b'0' + d)).collect();
    let (i, c) = s.split_at(s.len() - 2);
    let i = i.trim_start_matches('0');
    let i = if i.is_empty() { "0" } else { i };
    let zero = i == "0" && c == "00";
    Some(format!("{}{i}.{c}", if neg && !zero { "-" } else { "" }))
}

/// The markdown report, and whether Myriad gave PostgreSQL's rows for every query.
fn report(
    args: &Args,
    queries: &[usize],
    columns: &[(&str, Vec<Outcome>, Option<f64>)],
) -> (String, bool) {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "## W8: TPC-H at scale factor {} ({} timed runs, median, after one warm-up)\n",
        args.scale, args.runs
    );
    let _ = write!(md, "| Query |");
    for (label, _, _) in columns {
        let _ = write!(md, " {label} (ms) |");
    }
    let _ = writeln!(md, " Myriad / PostgreSQL 1 core | Rows |");
    let _ = write!(md, "|---|");
    for _ in columns {
        let _ = write!(md, "---:|");
    }
    let _ = writeln!(md, "---:|---|");
    let mut all_match = true;
    let mut ratios = Vec::new();
    for (i, q) in queries.iter().enumerate() {
        let _ = write!(md, "| Q{q} |");
        for (_, outcomes, _) in columns {
            let o = &outcomes[i];
            let _ = match (o.median_ms, &o.error) {
                (Some(ms), _) => write!(md, " {ms:.1} |"),
                (None, Some(e)) => write!(md, " failed: {} |", client::one_line(e, 80)),
                (None, None) => write!(md, " - |"),
            };
        }
        let (m, p) = (&columns[0].1[i], &columns[1].1[i]);
        match (m.median_ms, p.median_ms) {
            (Some(a), Some(b)) if b > 0.0 => {
                ratios.push(a / b);
                let _ = write!(md, " {:.2} |", a / b);
            }
            _ => {
                let _ = write!(md, " - |");
            }
        }
        let same = m.rows.is_some() && m.rows == p.rows;
        all_match &= same;
        let _ = writeln!(
            md,
            " {} |",
            match (&m.rows, &p.rows) {
                _ if same => format!("same ({})", m.rows.as_ref().map_or(0, Vec::len)),
                (Some(a), Some(b)) => format!("DIFFER ({} vs {})", a.len(), b.len()),
                _ => "-".into(),
            }
        );
    }
    if !ratios.is_empty() {
        let geo = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
        let _ = writeln!(
            md,
            "\nGeometric mean of Myriad / PostgreSQL 15 (1 core) over {} queries: {geo:.2}.",
            ratios.len()
        );
    }
    let _ = write!(md, "\nLoad (schema, COPY, indexes, ANALYZE, VACUUM):");
    for (label, _, load) in columns {
        if let Some(s) = load {
            let _ = write!(md, " {label} {s:.1} s;");
        }
    }
    md.push('\n');
    (md, all_match)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_to_two_places_half_away_from_zero() {
        for (text, want) in [
            ("1", Some("1.00")),
            ("25.5073", Some("25.51")),
            ("0.005", Some("0.01")),
            ("-0.004", Some("0.00")),
            ("-2.345", Some("-2.35")),
            ("99.995", Some("100.00")),
            ("1995", Some("1995.00")),
            ("Brand#12", None),
            ("1998-09-02", None),
            ("", None),
        ] {
            assert_eq!(round2(text).as_deref(), want, "{text}");
        }
        assert_eq!(
            normalize("A|F|37734107.00|25.52|x  "),
            "A|F|37734107.00|25.52|x"
        );
        assert_eq!(fraction(0.1), "0.001");
        assert_eq!(fraction(1.0), "0.0001");
    }
}
