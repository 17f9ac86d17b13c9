//! Results: one [`Outcome`] per run, folded into one [`Row`] per (series, point, mode,
//! server) with medians; results.csv.

use std::fmt::Write;

use crate::servers::ServerKind;
use crate::workloads::Mode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Ok,
    /// The server answered the setup or the run with an error (a feature it lacks), or the
    /// setup did not finish within its limit.
    Unsupported,
    /// The server died, a client hung, or the server would not start.
    Failed,
    /// Not run: a tool is missing.
    Skipped,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Unsupported => "unsupported",
            Status::Failed => "failed",
            Status::Skipped => "skipped",
        }
    }
}

/// One run on one server.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Ok {
        tps: f64,
        cpu_us_per_txn: Option<f64>,
        latency_ms: Option<f64>,
    },
    /// Not ok; the note says why (first error line, log tail, missing tool).
    NotOk(Status, String),
}

/// One line of results.csv.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub workload: &'static str,
    /// The series id: "W1r", "W6sel", ...
    pub series: &'static str,
    pub parameter: &'static str,
    pub value: u32,
    pub mode: Mode,
    pub server: ServerKind,
    pub clients: u32,
    pub tps: Option<f64>,
    pub cpu_us_per_txn: Option<f64>,
    pub latency_ms: Option<f64>,
    pub planning_ms: Option<f64>,
    pub execution_ms: Option<f64>,
    pub heap_fetches: Option<u64>,
    /// Buffer accesses (hits + reads) per transaction, where the series measures them
    /// ([`crate::workloads::BufferProbe`] says how, per server).
    pub buffers_per_txn: Option<f64>,
    /// Height of the btree the series looks up (levels, root to leaf, 1 = the root is a
    /// leaf): PostgreSQL's from `bt_metap`, Myriad's inferred from its buffer accesses.
    pub btree_height: Option<u32>,
    /// Runs that produced numbers (the medians are over these).
    pub runs: usize,
    pub status: Status,
    pub note: String,
}

/// The median of the values (mean of the middle two for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    })
}

/// Folds the runs of one (series, point, mode, server): medians over the ok runs; the
/// status and note of the first run that was not ok, if any (a point that failed once is
/// reported, not hidden by its other runs).
pub fn fold(
    outcomes: &[Outcome],
) -> (Status, String, usize, Option<f64>, Option<f64>, Option<f64>) {
    let mut tps = Vec::new();
    let mut cpu = Vec::new();
    let mut latency = Vec::new();
    let mut first_bad = None;
    for o in outcomes {
        match o {
            Outcome::Ok {
                tps: t,
                cpu_us_per_txn,
                latency_ms,
            } => {
                tps.push(*t);
                cpu.extend(cpu_us_per_txn);
                latency.extend(latency_ms);
            }
            Outcome::NotOk(status, note) => {
                if first_bad.is_none() {
                    first_bad = Some((*status, note.clone()));
                }
            }
        }
    }
    let (status, note) = first_bad.unwrap_or((Status::Ok, String::new()));
    (
        status,
        note,
        tps.len(),
        median(&tps),
        median(&cpu),
        median(&latency),
    )
}

pub const CSV_HEADER: &str = "workload,series,parameter,value,mode,server,clients,tps,cpu_us_per_txn,\
latency_ms,planning_ms,execution_ms,heap_fetches,buffers_per_txn,btree_height,runs,status,note";

pub fn to_csv(rows: &[Row]) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for r in rows {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.workload,
            r.series,
            r.parameter,
            r.value,
            r.mode.name(),
            r.server.name(),
            r.clients,
            num(r.tps, 1),
            num(r.cpu_us_per_txn, 1),
            num(r.latency_ms, 3),
            num(r.planning_ms, 3),
            num(r.execution_ms, 3),
            r.heap_fetches.map(|h| h.to_string()).unwrap_or_default(),
            num(r.buffers_per_txn, 2),
            r.btree_height.map(|h| h.to_string()).unwrap_or_default(),
            r.runs,
            r.status.name(),
            csv_field(&r.note),
        );
    }
    out
}

fn num(v: Option<f64>, decimals: usize) -> String {
    v.map(|x| format!("{x:.decimals$}")).unwrap_or_default()
}

/// Quotes a field when it holds a comma, quote or newline (RFC 4180).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[7.0]), Some(7.0));
    }

    #[test]
    fn fold_takes_medians_of_ok_runs_and_keeps_the_first_failure() {
        let ok = |tps| Outcome::Ok {
            tps,
            cpu_us_per_txn: Some(tps / 10.0),
            latency_ms: None,
        };
        let (status, note, runs, tps, cpu, latency) = fold(&[
            ok(100.0),
            Outcome::NotOk(Status::Failed, "server died".into()),
            ok(300.0),
            ok(200.0),
        ]);
        assert_eq!(
            (status, note.as_str(), runs),
            (Status::Failed, "server died", 3)
        );
        assert_eq!((tps, cpu, latency), (Some(200.0), Some(20.0), None));
        let (status, _, runs, tps, ..) = fold(&[Outcome::NotOk(Status::Unsupported, "x".into())]);
        assert_eq!((status, runs, tps), (Status::Unsupported, 0, None));
    }

    #[test]
    fn csv_quotes_notes() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("ERROR: a, \"b\""), "\"ERROR: a, \"\"b\"\"\"");
        let row = Row {
            workload: "W1",
            series: "W1r",
            parameter: "partitions",
            value: 64,
            mode: Mode::Prepared,
            server: ServerKind::Postgres,
            clients: 1,
            tps: Some(6123.456),
            cpu_us_per_txn: Some(150.04),
            latency_ms: Some(0.163),
            planning_ms: None,
            execution_ms: None,
            heap_fetches: None,
            buffers_per_txn: Some(4.0),
            btree_height: Some(3),
            runs: 3,
            status: Status::Ok,
            note: String::new(),
        };
        let csv = to_csv(&[row]);
        assert_eq!(
            csv.lines().nth(1),
            Some("W1,W1r,partitions,64,prepared,postgres,1,6123.5,150.0,0.163,,,,4.00,3,3,ok,")
        );
    }
}
