//! The markdown report: the goals of issue 6 (and issue 3's, for S1) with where Myriad
//! stands, one table per workload with Myriad / PostgreSQL and Myriad / ceiling ratios,
//! buffer accesses per transaction where a series measures them, each series' "N vs
//! baseline" ratios, and the notes of every point that did not produce numbers.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::results::{Row, Status};
use crate::servers::ServerKind;
use crate::workloads::{Mode, Profile, Workload};

/// Facts about the run printed at the top of the report.
pub struct RunInfo {
    pub when_utc: String,
    pub command: String,
    pub machine: String,
    pub myriad: String,
    pub postgres: String,
    pub clients: String,
}

pub fn markdown(rows: &[Row], info: &RunInfo, workloads: &[Workload]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Myriad benchmark results\n");
    let _ = writeln!(out, "- Run: {} — `{}`", info.when_utc, info.command);
    let _ = writeln!(out, "- Machine: {}", info.machine);
    let _ = writeln!(out, "- Myriad: {}", info.myriad);
    let _ = writeln!(out, "- PostgreSQL: {}", info.postgres);
    let _ = writeln!(out, "- Clients: {}", info.clients);
    let _ = writeln!(
        out,
        "\nTPS and latency are medians over the runs of a point; CPU is the server's CPU time per \
         transaction (µs). Ratios compare TPS.\n"
    );

    let _ = writeln!(out, "## Goals (issue 6; S1: issue 3)\n");
    let _ = writeln!(
        out,
        "| Workload | Goal | Myriad | PostgreSQL 15 (reference) | Myriad status |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|");
    for g in goals(rows) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            g.workload, g.goal, g.myriad, g.postgres, g.verdict
        );
    }

    for &w in workloads {
        let wrows: Vec<&Row> = rows.iter().filter(|r| r.workload == w.name()).collect();
        if wrows.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n## {} {}\n", w.name(), w.title());
        let standard = Profile {
            quick: false,
            all_points: false,
        };
        let titles: Vec<String> = w
            .series(w.points(standard)[0], standard)
            .iter()
            .filter(|s| wrows.iter().any(|r| r.series == s.id))
            .map(|s| format!("`{}` {}", s.id, s.title))
            .collect();
        let _ = writeln!(out, "Series: {}.\n", titles.join("; "));
        let _ = writeln!(
            out,
            "| series | {} | mode | Myriad tps | PostgreSQL tps | ceiling tps | Myriad / PostgreSQL | Myriad / ceiling | PostgreSQL / ceiling | CPU µs/txn Myriad | CPU µs/txn PostgreSQL | CPU µs/txn ceiling | latency ms Myriad | latency ms PostgreSQL | planning ms Myriad | planning ms PostgreSQL |",
            w.parameter()
        );
        let _ = writeln!(
            out,
            "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
        for (series, value, mode) in points(&wrows) {
            let get = |k: ServerKind| {
                wrows
                    .iter()
                    .find(|r| {
                        r.series == series && r.value == value && r.mode == mode && r.server == k
                    })
                    .copied()
            };
            let (m, p, c) = (
                get(ServerKind::Myriad),
                get(ServerKind::Postgres),
                get(ServerKind::Ceiling),
            );
            let _ = writeln!(
                out,
                "| {series} | {value} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                mode.name(),
                tps_cell(m),
                tps_cell(p),
                tps_cell(c),
                ratio_cell(m, p),
                ratio_cell(m, c),
                ratio_cell(p, c),
                figure_cell(m, |r| r.cpu_us_per_txn, 1),
                figure_cell(p, |r| r.cpu_us_per_txn, 1),
                figure_cell(c, |r| r.cpu_us_per_txn, 1),
                figure_cell(m, |r| r.latency_ms, 3),
                figure_cell(p, |r| r.latency_ms, 3),
                figure_cell(m, |r| r.planning_ms, 3),
                figure_cell(p, |r| r.planning_ms, 3),
            );
        }
        buffers_table(&mut out, &wrows, w.parameter());
        let baseline = baseline_ratios(&wrows);
        if !baseline.is_empty() {
            let _ = writeln!(
                out,
                "\nN vs baseline ({} = {}):\n",
                w.parameter(),
                baseline[0].baseline
            );
            let _ = writeln!(
                out,
                "| series | mode | server | {} | tps / baseline | CPU / baseline |",
                w.parameter()
            );
            let _ = writeln!(out, "|---|---|---|---:|---:|---:|");
            for b in baseline {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} |",
                    b.series,
                    b.mode.name(),
                    b.server.name(),
                    b.value,
                    opt_ratio(b.tps),
                    opt_ratio(b.cpu)
                );
            }
        }
    }

    let not_ok: Vec<&Row> = rows
        .iter()
        .filter(|r| r.status != Status::Ok || !r.note.is_empty())
        .collect();
    if !not_ok.is_empty() {
        let _ = writeln!(out, "\n## Notes: points without numbers, and why\n");
        let _ = writeln!(out, "| series | point | mode | server | status | note |");
        let _ = writeln!(out, "|---|---|---|---|---|---|");
        for r in not_ok {
            let _ = writeln!(
                out,
                "| {} | {}={} | {} | {} | {} | {} |",
                r.series,
                r.parameter,
                r.value,
                r.mode.name(),
                r.server.name(),
                r.status.name(),
                r.note.replace('|', "\\|")
            );
        }
    }
    out
}

/// How each server's buffer figures were measured (see [`crate::workloads::BufferProbe`]).
pub const BUFFERS_METHOD: &str = "Myriad: `myriad_stat_buffers` hits + reads before and after \
`pgbench -t` (simple mode), over its transactions; btree height inferred as accesses − 1 heap \
page. PostgreSQL: the top plan node's `Buffers: shared hit + read` of `EXPLAIN (ANALYZE, \
BUFFERS)`, median of the lookups after the first of one session; btree height from \
pageinspect's `bt_metap` (root level + 1)";

/// Buffer accesses per transaction and btree heights, for the simple-mode points of the
/// workload that measured them.
fn buffers_table(out: &mut String, rows: &[&Row], parameter: &str) {
    if rows.iter().all(|r| r.buffers_per_txn.is_none()) {
        return;
    }
    let _ = writeln!(
        out,
        "\nBuffer accesses per transaction (simple mode). {BUFFERS_METHOD}.\n"
    );
    let _ = writeln!(
        out,
        "| series | {parameter} | accesses/txn Myriad | accesses/txn PostgreSQL | btree height Myriad | btree height PostgreSQL |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|");
    for (series, value, mode) in points(rows) {
        if mode != Mode::Simple {
            continue;
        }
        let get = |k: ServerKind| {
            rows.iter()
                .find(|r| r.series == series && r.value == value && r.mode == mode && r.server == k)
                .copied()
        };
        let (m, p) = (get(ServerKind::Myriad), get(ServerKind::Postgres));
        let accesses = |r: Option<&Row>| match r {
            Some(r) if r.status != Status::Ok => r.status.name().to_string(),
            r => figure_cell(r, |r| r.buffers_per_txn, 2),
        };
        let height = |r: Option<&Row>| {
            r.and_then(|r| r.btree_height)
                .map(|h| h.to_string())
                .unwrap_or_else(|| "—".into())
        };
        let _ = writeln!(
            out,
            "| {series} | {value} | {} | {} | {} | {} |",
            accesses(m),
            accesses(p),
            height(m),
            height(p)
        );
    }
}

/// (series, value, mode) in first-seen order.
fn points(rows: &[&Row]) -> Vec<(&'static str, u32, Mode)> {
    let mut seen = BTreeSet::new();
    let mut all = Vec::new();
    for r in rows {
        if seen.insert((r.series, r.value, r.mode)) {
            all.push((r.series, r.value, r.mode));
        }
    }
    all
}

fn tps_cell(r: Option<&Row>) -> String {
    match r {
        None => "—".into(),
        Some(r) if r.status != Status::Ok => r.status.name().into(),
        Some(r) => r.tps.map(format_tps).unwrap_or_else(|| "—".into()),
    }
}

pub fn format_tps(t: f64) -> String {
    if t >= 100.0 {
        format!("{t:.0}")
    } else {
        format!("{t:.1}")
    }
}

fn ratio_cell(a: Option<&Row>, b: Option<&Row>) -> String {
    let tps = |r: Option<&Row>| r.filter(|r| r.status == Status::Ok).and_then(|r| r.tps);
    match (tps(a), tps(b)) {
        (Some(x), Some(y)) if y > 0.0 => format_ratio(x / y),
        _ => "—".into(),
    }
}

/// A figure with `decimals` places, none from 1000 up (digits there are noise).
fn figure_cell(r: Option<&Row>, f: impl Fn(&Row) -> Option<f64>, decimals: usize) -> String {
    r.and_then(f)
        .map(|v| {
            if v >= 1000.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.decimals$}")
            }
        })
        .unwrap_or_else(|| "—".into())
}

pub fn format_ratio(x: f64) -> String {
    if x >= 10.0 {
        format!("{x:.0}×")
    } else {
        format!("{x:.2}×")
    }
}

fn opt_ratio(x: Option<f64>) -> String {
    x.map(format_ratio).unwrap_or_else(|| "—".into())
}

/// One "N vs baseline" line: a server's figure at `value` over its figure at the series'
/// first point.
#[derive(Debug, PartialEq)]
pub struct Baseline {
    pub series: &'static str,
    pub mode: Mode,
    pub server: ServerKind,
    pub baseline: u32,
    pub value: u32,
    pub tps: Option<f64>,
    pub cpu: Option<f64>,
}

/// For each (series, mode, server) measured at two or more points: every later point over
/// the first. Needs ok rows at both.
pub fn baseline_ratios(rows: &[&Row]) -> Vec<Baseline> {
    let mut out = Vec::new();
    let mut keys = Vec::new();
    for r in rows {
        let key = (r.series, r.mode, r.server);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    for (series, mode, server) in keys {
        let of: Vec<&&Row> = rows
            .iter()
            .filter(|r| r.series == series && r.mode == mode && r.server == server)
            .collect();
        let Some(base) = of.first() else { continue };
        if of.len() < 2 || base.status != Status::Ok {
            continue;
        }
        for r in &of[1..] {
            if r.status != Status::Ok {
                continue;
            }
            let div = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) if b > 0.0 => Some(a / b),
                _ => None,
            };
            out.push(Baseline {
                series,
                mode,
                server,
                baseline: base.value,
                value: r.value,
                tps: div(r.tps, base.tps),
                cpu: div(r.cpu_us_per_txn, base.cpu_us_per_txn),
            });
        }
    }
    out
}

/// One goal of issue 6, evaluated on this run.
pub struct GoalResult {
    pub workload: &'static str,
    pub goal: &'static str,
    pub myriad: String,
    pub postgres: String,
    pub verdict: String,
}

/// A measured figure, or why there is none.
#[derive(Clone, Debug, PartialEq)]
enum Measure {
    Value(f64),
    /// The point ran and produced no numbers (status, e.g. "unsupported").
    NotOk(&'static str),
    /// The point was not part of this run, or the figure is not measured there.
    NotRun,
}

impl Measure {
    fn div(self, other: Measure) -> Measure {
        match (self, other) {
            (Measure::Value(a), Measure::Value(b)) if b > 0.0 => Measure::Value(a / b),
            (Measure::Value(_), Measure::Value(_)) => Measure::NotRun,
            (Measure::NotOk(s), _) | (_, Measure::NotOk(s)) => Measure::NotOk(s),
            _ => Measure::NotRun,
        }
    }
}

fn figure(
    rows: &[Row],
    series: &str,
    value: u32,
    mode: Mode,
    server: ServerKind,
    f: fn(&Row) -> Option<f64>,
) -> Measure {
    match rows
        .iter()
        .find(|r| r.series == series && r.value == value && r.mode == mode && r.server == server)
    {
        None => Measure::NotRun,
        Some(r) if r.status != Status::Ok => Measure::NotOk(r.status.name()),
        Some(r) => f(r).map(Measure::Value).unwrap_or(Measure::NotRun),
    }
}

fn tps(r: &Row) -> Option<f64> {
    r.tps
}
fn cpu(r: &Row) -> Option<f64> {
    r.cpu_us_per_txn
}
fn planning(r: &Row) -> Option<f64> {
    r.planning_ms
}
fn execution(r: &Row) -> Option<f64> {
    r.execution_ms
}
fn heap_fetches(r: &Row) -> Option<f64> {
    r.heap_fetches.map(|h| h as f64)
}
fn buffers(r: &Row) -> Option<f64> {
    r.buffers_per_txn
}

/// One comparison inside a goal.
struct Check {
    label: String,
    measure: Measure,
    /// "≥ 0.6", "≤ 1.1", "= 0"
    bound: (&'static str, f64),
}

impl Check {
    fn passes(&self) -> Option<bool> {
        let Measure::Value(v) = self.measure else {
            return None;
        };
        let (op, b) = self.bound;
        Some(match op {
            "≥" => v >= b,
            "≤" => v <= b,
            _ => v == b,
        })
    }

    fn show(&self) -> String {
        let (op, b) = self.bound;
        let v = match &self.measure {
            Measure::Value(v) => format!("{v:.2}"),
            Measure::NotOk(s) => (*s).to_string(),
            Measure::NotRun => "not run".into(),
        };
        format!("{}: {v} ({op} {b})", self.label)
    }
}

fn verdict(checks: &[Check]) -> String {
    if checks.is_empty() || checks.iter().all(|c| c.measure == Measure::NotRun) {
        return "not run".into();
    }
    if let Some(Measure::NotOk(s)) = checks
        .iter()
        .map(|c| &c.measure)
        .find(|m| matches!(m, Measure::NotOk(_)))
    {
        return (*s).to_string();
    }
    let results: Vec<Option<bool>> = checks.iter().map(Check::passes).collect();
    if results.contains(&Some(false)) {
        "not met".into()
    } else if results.iter().all(|r| *r == Some(true)) {
        "met".into()
    } else {
        "partly run".into()
    }
}

fn show(checks: &[Check]) -> String {
    if checks.is_empty() {
        return "—".into();
    }
    if checks.iter().all(|c| c.measure == Measure::NotRun) {
        return "not run".into();
    }
    checks
        .iter()
        .map(Check::show)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The goals table of issue 6. Each goal is a list of checks for Myriad, and the same
/// checks for PostgreSQL where they mean something (ratios to itself do not).
pub fn goals(rows: &[Row]) -> Vec<GoalResult> {
    use Mode::{Prepared, Simple};
    use ServerKind::{Ceiling, Myriad, Postgres};
    let f = |s, v, m, k, get| figure(rows, s, v, m, k, get);
    let mut all = Vec::new();
    let mut push = |workload, goal, mine: Vec<Check>, reference: Vec<Check>| {
        all.push(GoalResult {
            workload,
            goal,
            verdict: verdict(&mine),
            myriad: show(&mine),
            postgres: show(&reference),
        });
    };

    // W6 pgbench -S, 1 client.
    let of_ceiling = |k: ServerKind| {
        vec![
            Check {
                label: "prepared / ceiling".into(),
                measure: f("W6sel", 1, Prepared, k, tps).div(f("W6sel", 1, Prepared, Ceiling, tps)),
                bound: ("≥", 0.6),
            },
            Check {
                label: "simple / ceiling".into(),
                measure: f("W6sel", 1, Simple, k, tps).div(f("W6sel", 1, Simple, Ceiling, tps)),
                bound: ("≥", 0.45),
            },
        ]
    };
    let mut mine = of_ceiling(Myriad);
    for m in [Prepared, Simple] {
        mine.push(Check {
            label: format!("{} / PostgreSQL", m.name()),
            measure: f("W6sel", 1, m, Myriad, tps).div(f("W6sel", 1, m, Postgres, tps)),
            bound: ("≥", 3.0),
        });
    }
    push(
        "W6 pgbench -S, 1 client",
        "prepared ≥ 60% of the ceiling; simple ≥ 45%; both ≥ 3× PostgreSQL 15",
        mine,
        of_ceiling(Postgres),
    );

    // W6 tpcb-like.
    let mut mine = Vec::new();
    for c in [1, 2, 8] {
        for m in [Simple, Prepared] {
            mine.push(Check {
                label: format!("{c} clients {} / PostgreSQL", m.name()),
                measure: f("W6tpcb", c, m, Myriad, tps).div(f("W6tpcb", c, m, Postgres, tps)),
                bound: ("≥", 1.0),
            });
        }
    }
    push(
        "W6 tpcb-like, 1/2/8 clients",
        "≥ PostgreSQL 15 TPS at equal durability",
        mine,
        Vec::new(),
    );

    // W1r.
    let flat_cpu = |k| {
        [Simple, Prepared]
            .into_iter()
            .map(|m| Check {
                label: format!("{} CPU 8192 / 0", m.name()),
                measure: f("W1r", 8192, m, k, cpu).div(f("W1r", 0, m, k, cpu)),
                bound: ("≤", 1.1),
            })
            .collect::<Vec<_>>()
    };
    push(
        "W1r random key",
        "CPU per transaction at 8192 partitions ≤ 1.1× that at 0, simple and prepared",
        flat_cpu(Myriad),
        flat_cpu(Postgres),
    );

    // W2.
    let indexes = |k| {
        let mut c: Vec<Check> = [Simple, Prepared]
            .into_iter()
            .map(|m| Check {
                label: format!("{} tps 60 / 1", m.name()),
                measure: f("W2", 60, m, k, tps).div(f("W2", 1, m, k, tps)),
                bound: ("≥", 0.9),
            })
            .collect();
        c.push(Check {
            label: "planning 60 / 1".into(),
            measure: f("W2", 60, Simple, k, planning).div(f("W2", 1, Simple, k, planning)),
            bound: ("≤", 1.1),
        });
        c
    };
    push(
        "W2 many indexes",
        "TPS with 60 indexes ≥ 90% of 1 index; Planning Time flat",
        indexes(Myriad),
        indexes(Postgres),
    );

    // W3 join.
    let mut mine = Vec::new();
    for p in [100, 1000] {
        for m in [Simple, Prepared] {
            mine.push(Check {
                label: format!("{p} partitions {} / PostgreSQL", m.name()),
                measure: f("W3j", p, m, Myriad, tps).div(f("W3j", p, m, Postgres, tps)),
                bound: ("≥", 10.0),
            });
        }
    }
    push(
        "W3 partitioned pgbench join",
        "≥ 10× PostgreSQL 15 at 100 and 1000 partitions",
        mine,
        Vec::new(),
    );

    // W4.
    let mut mine: Vec<Check> = [Simple, Prepared]
        .into_iter()
        .map(|m| Check {
            label: format!("10 dimensions {} / PostgreSQL", m.name()),
            measure: f("W4", 10, m, Myriad, tps).div(f("W4", 10, m, Postgres, tps)),
            bound: ("≥", 10.0),
        })
        .collect();
    let plan100 = |k| Check {
        label: "planning ms at 100".into(),
        measure: f("W4", 100, Simple, k, planning),
        bound: ("≤", 2.0),
    };
    mine.push(plan100(Myriad));
    push(
        "W4 star join",
        "10 dimensions ≥ 10× PostgreSQL 15; 100 dimensions plans in ≤ 2 ms",
        mine,
        vec![plan100(Postgres)],
    );
    let mut mine: Vec<Check> = [(Simple, 10.0), (Prepared, 3.0)]
        .into_iter()
        .map(|(m, bound)| Check {
            label: format!("10 dimensions {} / PostgreSQL", m.name()),
            measure: f("W4c", 10, m, Myriad, tps).div(f("W4c", 10, m, Postgres, tps)),
            bound: ("≥", bound),
        })
        .collect();
    let plan100c = |k| Check {
        label: "planning ms at 100".into(),
        measure: f("W4c", 100, Simple, k, planning),
        bound: ("≤", 2.0),
    };
    mine.push(plan100c(Myriad));
    push(
        "W4 as a comma list, fact table last",
        "10 dimensions ≥ 10× PostgreSQL 15 simple, ≥ 3× prepared; 100 dimensions plans in ≤ 2 ms",
        mine,
        vec![plan100c(Postgres)],
    );

    // W5.
    let ios = |k| {
        vec![
            Check {
                label: "unvacuumed execution index-only / index".into(),
                measure: f("W5ios", 0, Simple, k, execution)
                    .div(f("W5is", 0, Simple, k, execution)),
                bound: ("≤", 1.1),
            },
            Check {
                label: "vacuumed heap fetches".into(),
                measure: f("W5ios", 1, Simple, k, heap_fetches),
                bound: ("=", 0.0),
            },
        ]
    };
    push(
        "W5 index-only scan",
        "unvacuumed ≤ 1.1× index scan; vacuumed 0 heap fetches",
        ios(Myriad),
        ios(Postgres),
    );

    // W7.
    let cold = |k| {
        vec![
            Check {
                label: "planning cold / warm at 1000".into(),
                measure: f("W7cold", 1000, Simple, k, planning)
                    .div(f("W7warm", 1000, Simple, k, planning)),
                bound: ("≤", 1.2),
            },
            // The same, the warm statements each after an idle pause: what is left is the
            // new session's own work, not the machine's caches and clock after idling.
            Check {
                label: "planning cold / warm after an idle pause at 1000".into(),
                measure: f("W7cold", 1000, Simple, k, planning)
                    .div(f("W7idle", 1000, Simple, k, planning)),
                bound: ("≤", 1.2),
            },
        ]
    };
    push(
        "W7 cold session",
        "first query at 1000 partitions ≤ 1.2× a warm one",
        cold(Myriad),
        cold(Postgres),
    );

    // S1 (issue 3): figures to report, not bounds to meet.
    all.push(pk_lookup_goal(rows));
    all
}

/// Issue 3's benchmark: "buffer accesses per lookup equal tree height (report it), and
/// single-client TPS over the wire against PostgreSQL 15 on the same table". It sets no
/// bound, so the verdict is "reported" once Myriad has figures. The point is the one run
/// (1M rows, or `--quick`'s smaller table).
fn pk_lookup_goal(rows: &[Row]) -> GoalResult {
    use ServerKind::{Myriad, Postgres};
    let point = rows.iter().find(|r| r.series == "S1").map(|r| r.value);
    let describe = |k: ServerKind| -> String {
        let Some(value) = point else {
            return "not run".into();
        };
        let simple = |get| figure(rows, "S1", value, Mode::Simple, k, get);
        let mut parts = Vec::new();
        match simple(buffers) {
            Measure::Value(v) => parts.push(format!("{v:.2} accesses/lookup")),
            Measure::NotOk(s) => return s.into(),
            Measure::NotRun => parts.push("no accesses figure".into()),
        }
        if let Some(h) = rows
            .iter()
            .find(|r| r.series == "S1" && r.server == k && r.mode == Mode::Simple)
            .and_then(|r| r.btree_height)
        {
            parts.push(format!("btree height {h}"));
        }
        if k == Myriad
            && let Measure::Value(v) =
                simple(tps).div(figure(rows, "S1", value, Mode::Simple, Postgres, tps))
        {
            parts.push(format!("simple TPS / PostgreSQL: {v:.2}"));
        }
        if value != 1_000_000 {
            parts.push(format!("{value} rows"));
        }
        parts.join("; ")
    };
    let myriad = describe(Myriad);
    let verdict = match point.map(|v| figure(rows, "S1", v, Mode::Simple, Myriad, buffers)) {
        Some(Measure::Value(_)) => "reported".to_string(),
        Some(Measure::NotOk(s)) => s.to_string(),
        _ => "not run".to_string(),
    };
    GoalResult {
        workload: "S1 point lookup by primary key, 1M rows",
        goal: "buffer accesses per lookup equal tree height (report it), and single-client TPS \
               against PostgreSQL 15 on the same table (issue 3)",
        myriad,
        postgres: describe(Postgres),
        verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(
        series: &'static str,
        value: u32,
        mode: Mode,
        server: ServerKind,
        tps: Option<f64>,
        status: Status,
    ) -> Row {
        Row {
            workload: "W6",
            series,
            parameter: "clients",
            value,
            mode,
            server,
            clients: value,
            tps,
            cpu_us_per_txn: tps.map(|t| 1e6 / t),
            latency_ms: None,
            planning_ms: None,
            execution_ms: None,
            heap_fetches: None,
            buffers_per_txn: None,
            btree_height: None,
            runs: 1,
            status,
            note: String::new(),
        }
    }

    #[test]
    fn ratios_and_baselines() {
        let rows = [
            row(
                "W6sel",
                1,
                Mode::Simple,
                ServerKind::Postgres,
                Some(1000.0),
                Status::Ok,
            ),
            row(
                "W6sel",
                2,
                Mode::Simple,
                ServerKind::Postgres,
                Some(1500.0),
                Status::Ok,
            ),
            row(
                "W6sel",
                8,
                Mode::Simple,
                ServerKind::Postgres,
                Some(500.0),
                Status::Ok,
            ),
            row(
                "W6sel",
                1,
                Mode::Simple,
                ServerKind::Myriad,
                None,
                Status::Unsupported,
            ),
            row(
                "W6sel",
                2,
                Mode::Simple,
                ServerKind::Myriad,
                None,
                Status::Unsupported,
            ),
        ];
        let refs: Vec<&Row> = rows.iter().collect();
        let b = baseline_ratios(&refs);
        assert_eq!(b.len(), 2, "{b:?}");
        assert_eq!((b[0].value, b[0].tps), (2, Some(1.5)));
        assert_eq!((b[1].value, b[1].tps), (8, Some(0.5)));
        assert_eq!(b[1].cpu, Some(2.0));
        assert_eq!(ratio_cell(Some(&rows[0]), Some(&rows[1])), "0.67×");
        assert_eq!(ratio_cell(Some(&rows[3]), Some(&rows[0])), "—");
        assert_eq!(tps_cell(Some(&rows[3])), "unsupported");
        assert_eq!(format_ratio(12.34), "12×");
    }

    #[test]
    fn goals_say_unsupported_met_or_not_run() {
        let mut rows = vec![
            row(
                "W6sel",
                1,
                Mode::Prepared,
                ServerKind::Myriad,
                Some(60_000.0),
                Status::Ok,
            ),
            row(
                "W6sel",
                1,
                Mode::Prepared,
                ServerKind::Postgres,
                Some(10_000.0),
                Status::Ok,
            ),
            row(
                "W6sel",
                1,
                Mode::Prepared,
                ServerKind::Ceiling,
                Some(80_000.0),
                Status::Ok,
            ),
            row(
                "W6sel",
                1,
                Mode::Simple,
                ServerKind::Myriad,
                Some(30_000.0),
                Status::Ok,
            ),
            row(
                "W6sel",
                1,
                Mode::Simple,
                ServerKind::Postgres,
                Some(8_000.0),
                Status::Ok,
            ),
            row(
                "W6sel",
                1,
                Mode::Simple,
                ServerKind::Ceiling,
                Some(60_000.0),
                Status::Ok,
            ),
        ];
        let g = goals(&rows);
        assert_eq!(g[0].verdict, "met", "{}", g[0].myriad);
        assert!(
            g[0].postgres.contains("prepared / ceiling: 0.12 (≥ 0.6)"),
            "{}",
            g[0].postgres
        );
        assert_eq!(g[1].verdict, "not run");
        rows[3].status = Status::Unsupported;
        rows[3].tps = None;
        assert_eq!(goals(&rows)[0].verdict, "unsupported");
        rows[3] = row(
            "W6sel",
            1,
            Mode::Simple,
            ServerKind::Myriad,
            Some(9_000.0),
            Status::Ok,
        );
        assert_eq!(goals(&rows)[0].verdict, "not met");
    }

    #[test]
    fn pk_lookup_reports_buffers_heights_and_the_ratio() {
        let s1 = |server, tps, buffers: Option<f64>, height| Row {
            workload: "S1",
            series: "S1",
            parameter: "rows",
            value: 1_000_000,
            buffers_per_txn: buffers,
            btree_height: height,
            ..row("S1", 1_000_000, Mode::Simple, server, tps, Status::Ok)
        };
        let mut rows = vec![
            s1(ServerKind::Myriad, Some(4000.0), Some(4.0), Some(3)),
            s1(ServerKind::Postgres, Some(5000.0), Some(4.0), Some(3)),
            s1(ServerKind::Ceiling, Some(40_000.0), None, None),
        ];
        let g = pk_lookup_goal(&rows);
        assert_eq!(g.verdict, "reported");
        assert_eq!(
            g.myriad,
            "4.00 accesses/lookup; btree height 3; simple TPS / PostgreSQL: 0.80"
        );
        assert_eq!(g.postgres, "4.00 accesses/lookup; btree height 3");
        let refs: Vec<&Row> = rows.iter().collect();
        let mut md = String::new();
        buffers_table(&mut md, &refs, "rows");
        assert!(
            md.contains("| S1 | 1000000 | 4.00 | 4.00 | 3 | 3 |"),
            "{md}"
        );
        rows[0] = s1(ServerKind::Myriad, None, None, None);
        rows[0].status = Status::Unsupported;
        let g = pk_lookup_goal(&rows);
        assert_eq!(
            (g.verdict.as_str(), g.myriad.as_str()),
            ("unsupported", "unsupported")
        );
        assert_eq!(pk_lookup_goal(&[]).verdict, "not run");
    }

    #[test]
    fn markdown_has_goals_tables_and_notes() {
        let mut rows = vec![
            row(
                "W6sel",
                1,
                Mode::Simple,
                ServerKind::Postgres,
                Some(8_000.0),
                Status::Ok,
            ),
            row(
                "W6sel",
                1,
                Mode::Simple,
                ServerKind::Ceiling,
                Some(60_000.0),
                Status::Ok,
            ),
            row(
                "W6sel",
                1,
                Mode::Simple,
                ServerKind::Myriad,
                None,
                Status::Unsupported,
            ),
        ];
        rows[2].note = "setup: ERROR: a | b".into();
        let info = RunInfo {
            when_utc: "2026-01-01 00:00 UTC".into(),
            command: "myriad-bench --quick".into(),
            machine: "2 CPUs".into(),
            myriad: "m".into(),
            postgres: "p".into(),
            clients: "c".into(),
        };
        let md = markdown(&rows, &info, &[Workload::W6]);
        assert!(md.contains("## Goals (issue 6; S1: issue 3)"));
        assert!(
            md.contains("| W6sel | 1 | simple | unsupported | 8000 | 60000 | — | — | 0.13× |"),
            "{md}"
        );
        assert!(md.contains("setup: ERROR: a \\| b"));
    }
}
