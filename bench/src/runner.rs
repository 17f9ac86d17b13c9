//! The run loop: for each workload, point, series and mode, every server in turn, repeated.
//!
//! Order (so that drift on a shared machine hits every server alike): at one point, for each
//! series and mode, repetition r runs the servers in an order rotated by r, then the next
//! repetition. A server's setup for a point runs lazily before its first run there, and is
//! kept while later series and points share its schema key.
//!
//! Failure handling, per (series, point, mode, server):
//! - the setup or the run answered with an error: `unsupported`, with the first error line;
//!   that server skips the remaining repetitions, and other series needing the same schema
//!   are `unsupported` at once (remembered across restarts);
//! - the setup ran past its limit: `unsupported` ("did not finish"), and the server is
//!   replaced by a fresh one (it may still be busy);
//! - the server died, or a client hung past its limit: `failed`, with the server's last log
//!   lines, and a fresh server is started for the next run;
//! - a missing sysbench: `skipped`.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::client::{self, Captured, ExplainFigures, Interrupted, RunFigures};
use crate::procfs;
use crate::results::{self, Outcome, Row, Status};
use crate::servers::{Server, ServerKind, StartContext};
use crate::workloads::{
    BufferProbe, Driver, ExplainSession, MYRIAD_BUFFER_ACCESSES_SQL, Mode, Profile, Script, Series,
    SetupStep, Sizes, Workload,
};

/// Extra time a run may take beyond its duration (connection, a slow last transaction).
const RUN_GRACE: Duration = Duration::from_secs(60);
/// Limit for one EXPLAIN probe session.
const EXPLAIN_LIMIT: Duration = Duration::from_secs(120);
/// Warm EXPLAIN probe: statements in one session; the first is dropped, the median of the
/// rest reported.
const EXPLAIN_WARM_STATEMENTS: usize = 11;
/// Cold EXPLAIN probe: fresh sessions, the first statement of each; median reported.
const EXPLAIN_COLD_SESSIONS: usize = 5;
/// `ExplainSession::WarmAfterPause`: the idle time before each statement, longer than a
/// new psql session takes to start and connect.
const EXPLAIN_PAUSE_SECONDS: &str = "0.05";
/// Limit for the counted `pgbench -t` run of a buffer probe.
const BUFFER_PROBE_LIMIT: Duration = Duration::from_secs(120);
/// Marks the btree height in the PostgreSQL buffer probe's output.
const BTREE_HEIGHT_PREFIX: &str = "btree_height=";
/// Starts that may fail before a server kind is given up for the rest of the run.
const START_FAILURES_MAX: u32 = 2;

pub struct Settings {
    pub profile: Profile,
    pub duration_s: u32,
    pub repeats: u32,
    pub servers: Vec<ServerKind>,
    pub setup_limit: Duration,
}

/// What one server kind has now.
#[derive(Default)]
struct Slot {
    server: Option<Server>,
    starts: u32,
    start_failures: u32,
    last_start_error: String,
    /// Schema slot -> key set up on the running server.
    schemas: HashMap<&'static str, String>,
    /// Schema keys whose setup failed, with the note; kept across restarts.
    unsupported: HashMap<String, String>,
}

pub struct Runner {
    ctx: StartContext,
    settings: Settings,
    sizes: Sizes,
    slots: BTreeMap<ServerKind, Slot>,
    scratch: PathBuf,
    ticks_per_sec: u64,
    cpus: u32,
    progress: Progress,
    pub rows: Vec<Row>,
}

impl Runner {
    pub fn new(
        ctx: StartContext,
        settings: Settings,
        workloads: &[Workload],
    ) -> Result<Runner, String> {
        let scratch = ctx.root.join("clients");
        std::fs::create_dir_all(&scratch)
            .map_err(|e| format!("could not create {}: {e}", scratch.display()))?;
        let runs: usize = workloads
            .iter()
            .flat_map(|w| w.points(settings.profile).into_iter().map(move |v| (w, v)))
            .flat_map(|(w, v)| w.series(v, settings.profile))
            .map(|s| s.modes.len())
            .sum::<usize>()
            * settings.repeats as usize
            * settings.servers.len();
        let slots = settings
            .servers
            .iter()
            .map(|&k| (k, Slot::default()))
            .collect();
        Ok(Runner {
            sizes: Sizes::for_profile(settings.profile),
            progress: Progress::new(runs, f64::from(settings.duration_s) + 1.0),
            ticks_per_sec: procfs::clock_ticks_per_sec(),
            cpus: std::thread::available_parallelism()
                .map(|n| n.get() as u32)
                .unwrap_or(1),
            ctx,
            settings,
            slots,
            scratch,
            rows: Vec::new(),
        })
    }

    /// Starts every server up front, so that a broken setup shows at once.
    pub fn start_servers(&mut self) -> Result<(), Interrupted> {
        let kinds: Vec<ServerKind> = self.slots.keys().copied().collect();
        for k in kinds {
            if let Err(e) = self.ensure_server(k)? {
                self.progress.note(&format!("{}: {e}", k.label()));
            }
        }
        Ok(())
    }

    pub fn run(&mut self, workloads: &[Workload]) -> Result<(), Interrupted> {
        for &w in workloads {
            self.progress
                .note(&format!("== {} {}", w.name(), w.title()));
            for value in w.points(self.settings.profile) {
                for series in w.series(value, self.settings.profile) {
                    for &mode in &series.modes {
                        self.run_point(w, value, &series, mode)?;
                    }
                }
            }
            self.cleanup(w)?;
        }
        self.progress.finish();
        Ok(())
    }

    fn run_point(
        &mut self,
        w: Workload,
        value: u32,
        s: &Series,
        mode: Mode,
    ) -> Result<(), Interrupted> {
        let kinds = self.settings.servers.clone();
        let repeats = self.settings.repeats as usize;
        let mut outcomes: BTreeMap<ServerKind, Vec<Outcome>> =
            kinds.iter().map(|&k| (k, Vec::new())).collect();
        for rep in 0..repeats {
            for i in 0..kinds.len() {
                let k = kinds[(i + rep) % kinds.len()];
                let done = &outcomes[&k];
                if matches!(done.last(), Some(Outcome::NotOk(..))) {
                    self.progress.skip(1);
                    continue;
                }
                self.progress.run(&format!(
                    "{} {}={value} {} · {} · run {}/{repeats}",
                    s.id,
                    w.parameter(),
                    mode.name(),
                    k.name(),
                    rep + 1
                ));
                let o = self.run_once(k, w, value, s, mode)?;
                if let Outcome::NotOk(status, note) = &o {
                    self.progress.note(&format!(
                        "  {} {} on {}: {}: {note}",
                        s.id,
                        mode.name(),
                        k.name(),
                        status.name()
                    ));
                }
                outcomes.get_mut(&k).expect("every kind has a list").push(o);
            }
        }
        for &k in &kinds {
            let (status, mut note, runs, tps, cpu, latency) = results::fold(&outcomes[&k]);
            let mut figures = ExplainFigures::default();
            if let Some(explain) = &s.explain
                && mode == Mode::Simple
                && k.is_database()
                && runs > 0
            {
                match self.explain(k, s, &explain.sql, explain.session)? {
                    Ok(f) => figures = f,
                    Err(e) => {
                        if !note.is_empty() {
                            note.push_str("; ");
                        }
                        note.push_str(&format!("no EXPLAIN figures: {e}"));
                    }
                }
            }
            let mut buffers = BufferFigures::default();
            if let Some(probe) = &s.buffers
                && mode == Mode::Simple
                && k.is_database()
                && runs > 0
            {
                match self.buffer_probe(k, s, probe)? {
                    Ok(b) => buffers = b,
                    Err(e) => {
                        if !note.is_empty() {
                            note.push_str("; ");
                        }
                        note.push_str(&format!("no buffer figures: {e}"));
                    }
                }
            }
            self.rows.push(Row {
                workload: w.name(),
                series: s.id,
                parameter: w.parameter(),
                value,
                mode,
                server: k,
                clients: s.clients,
                tps,
                cpu_us_per_txn: cpu,
                latency_ms: latency,
                planning_ms: figures.planning_ms,
                execution_ms: figures.execution_ms,
                heap_fetches: figures.heap_fetches,
                buffers_per_txn: buffers.per_txn,
                btree_height: buffers.btree_height,
                runs,
                status,
                note,
            });
        }
        Ok(())
    }

    /// One run of a series on one server, setting up its schema first when needed.
    fn run_once(
        &mut self,
        k: ServerKind,
        w: Workload,
        value: u32,
        s: &Series,
        mode: Mode,
    ) -> Result<Outcome, Interrupted> {
        if matches!(s.driver, Driver::Sysbench { .. }) && self.ctx.tools.sysbench.is_none() {
            return Ok(Outcome::NotOk(
                Status::Skipped,
                "sysbench not installed (Debian package sysbench)".into(),
            ));
        }
        if k.is_database()
            && let Some(note) = self.slots[&k].unsupported.get(&s.schema.key)
        {
            return Ok(Outcome::NotOk(Status::Unsupported, note.clone()));
        }
        let port = match self.ensure_server(k)? {
            Ok(port) => port,
            Err(e) => return Ok(Outcome::NotOk(Status::Failed, e)),
        };
        if k.is_database()
            && let Some(o) = self.ensure_schema(k, w, value, s)?
        {
            return Ok(o);
        }
        let limit = Duration::from_secs(u64::from(self.settings.duration_s)) + RUN_GRACE;
        let before = self.server(k).and_then(Server::cpu_ticks);
        let captured = match &s.driver {
            Driver::Pgbench { .. } => {
                let duration = ["-T".to_string(), self.settings.duration_s.to_string()];
                let mut cmd = match self.pgbench_command(s, port, mode, &duration) {
                    Ok(cmd) => cmd,
                    Err(e) => return Ok(Outcome::NotOk(Status::Failed, e)),
                };
                client::run_captured(&mut cmd, &self.scratch, limit)?
            }
            Driver::Sysbench { test, table_rows } => {
                let mut cmd = self.sysbench_command(test, port, *table_rows);
                cmd.arg(format!("--threads={}", s.clients))
                    .arg(format!("--time={}", self.settings.duration_s));
                if mode == Mode::Simple {
                    cmd.arg("--db-ps-mode=disable");
                }
                cmd.arg("run");
                client::run_captured(&mut cmd, &self.scratch, limit)?
            }
        };
        let after = self.server(k).and_then(Server::cpu_ticks);
        if let Some(o) = self.check_server(k, &captured, "run") {
            return Ok(o);
        }
        let figures: Option<RunFigures> = match s.driver {
            Driver::Pgbench { .. } => client::parse_pgbench(&captured.stdout),
            Driver::Sysbench { .. } => client::parse_sysbench(&captured.stdout),
        };
        match figures {
            Some(f) if captured.success() && f.transactions > 0 => {
                let cpu_us_per_txn = match (before, after) {
                    (Some(b), Some(a)) if a >= b => Some(
                        (a - b) as f64 * 1e6 / self.ticks_per_sec as f64 / f.transactions as f64,
                    ),
                    _ => None,
                };
                Ok(Outcome::Ok {
                    tps: f.tps,
                    cpu_us_per_txn,
                    latency_ms: f.latency_ms,
                })
            }
            _ => Ok(Outcome::NotOk(
                Status::Unsupported,
                client::error_summary(&captured),
            )),
        }
    }

    /// pgbench running series `s` against `port` in `mode`, for as long as `length` says
    /// (`-T SECS` or `-t COUNT`). Err when the script file cannot be written.
    fn pgbench_command(
        &self,
        s: &Series,
        port: u16,
        mode: Mode,
        length: &[String],
    ) -> Result<Command, String> {
        let Driver::Pgbench {
            script,
            reconnect,
            vars,
        } = &s.driver
        else {
            return Err(format!("series {} is not run by pgbench", s.id));
        };
        let mut cmd = client::libpq_command(&self.ctx.tools.pgbench, s.pgoptions);
        cmd.args(["-n", "-h", "127.0.0.1", "-U", "postgres", "-M", mode.name()])
            .arg("-p")
            .arg(port.to_string())
            .args(length)
            .arg("-c")
            .arg(s.clients.to_string())
            .arg("-j")
            .arg(s.clients.min(self.cpus).to_string());
        if *reconnect {
            cmd.arg("-C");
        }
        for (name, value) in vars {
            cmd.arg("-D").arg(format!("{name}={value}"));
        }
        match script {
            Script::Custom(text) => {
                let file = self.scratch.join("workload.sql");
                std::fs::write(&file, text)
                    .map_err(|e| format!("could not write {}: {e}", file.display()))?;
                cmd.arg("-f").arg(file);
            }
            Script::Builtin(name) => {
                cmd.arg("-b").arg(name);
            }
        }
        cmd.arg("postgres");
        Ok(cmd)
    }

    /// After a client finished: did the server die, or the client hang? Then the point is
    /// failed and the server replaced.
    fn check_server(&mut self, k: ServerKind, captured: &Captured, what: &str) -> Option<Outcome> {
        let slot = self.slots.get_mut(&k).expect("slot per kind");
        let server = slot.server.as_mut()?;
        let note = if !server.alive() {
            format!(
                "server died during the {what}; last log lines: {}",
                server.log_tail()
            )
        } else if captured.timed_out {
            format!("the {what} did not finish within its limit; server replaced")
        } else {
            return None;
        };
        if let Some(server) = slot.server.take() {
            server.discard();
        }
        slot.schemas.clear();
        Some(Outcome::NotOk(Status::Failed, note))
    }

    fn server(&self, k: ServerKind) -> Option<&Server> {
        self.slots.get(&k)?.server.as_ref()
    }

    /// The server of kind `k`, started if needed; Err(note) if it will not start.
    fn ensure_server(&mut self, k: ServerKind) -> Result<Result<u16, String>, Interrupted> {
        let slot = self.slots.get_mut(&k).expect("slot per kind");
        if let Some(s) = &slot.server {
            return Ok(Ok(s.port));
        }
        if slot.start_failures >= START_FAILURES_MAX {
            return Ok(Err(format!("would not start: {}", slot.last_start_error)));
        }
        slot.starts += 1;
        self.progress
            .note(&format!("starting {} (start {})", k.label(), slot.starts));
        match Server::start(k, &self.ctx, slot.starts) {
            Ok(s) => {
                let port = s.port;
                slot.server = Some(s);
                slot.schemas.clear();
                Ok(Ok(port))
            }
            Err(e) => {
                if procfs::interrupted() {
                    return Err(Interrupted);
                }
                slot.start_failures += 1;
                slot.last_start_error = e.clone();
                Ok(Err(e))
            }
        }
    }

    /// Sets up the schema a series needs on server `k`, unless it is there already.
    /// `Some(outcome)` when the setup did not succeed.
    fn ensure_schema(
        &mut self,
        k: ServerKind,
        w: Workload,
        value: u32,
        s: &Series,
    ) -> Result<Option<Outcome>, Interrupted> {
        let slot = &self.slots[&k];
        if slot.schemas.get(s.schema.slot) == Some(&s.schema.key) {
            return Ok(None);
        }
        if let Some(note) = slot.unsupported.get(&s.schema.key) {
            return Ok(Some(Outcome::NotOk(Status::Unsupported, note.clone())));
        }
        let Some(port) = slot.server.as_ref().map(|s| s.port) else {
            return Ok(Some(Outcome::NotOk(
                Status::Failed,
                "server not running".into(),
            )));
        };
        self.progress
            .note(&format!("  setting up {} on {}", s.schema.key, k.name()));
        let started = Instant::now();
        let limit = self.settings.setup_limit;
        for step in w.setup(value, s.schema.slot, self.sizes) {
            let left = limit
                .saturating_sub(started.elapsed())
                .max(Duration::from_secs(1));
            let (captured, optional) = match &step {
                SetupStep::Sql(sql) => (
                    client::psql(&self.ctx.tools, port, sql, None, false, &self.scratch, left)?,
                    false,
                ),
                SetupStep::OptionalSql(sql) => (
                    client::psql(&self.ctx.tools, port, sql, None, true, &self.scratch, left)?,
                    true,
                ),
                SetupStep::PgbenchInit { scale, partitions } => {
                    let mut cmd = client::libpq_command(&self.ctx.tools.pgbench, None);
                    cmd.args(["-i", "-q", "-h", "127.0.0.1", "-U", "postgres"])
                        .arg("-p")
                        .arg(port.to_string())
                        .arg("-s")
                        .arg(scale.to_string());
                    if *partitions > 0 {
                        cmd.arg("--partitions").arg(partitions.to_string());
                    }
                    cmd.arg("postgres");
                    (client::run_captured(&mut cmd, &self.scratch, left)?, false)
                }
                SetupStep::SysbenchPrepare { table_rows } => {
                    let mut cleanup = self.sysbench_command("oltp_read_write", port, *table_rows);
                    cleanup.arg("cleanup");
                    client::run_captured(&mut cleanup, &self.scratch, left)?;
                    let mut prepare = self.sysbench_command("oltp_read_write", port, *table_rows);
                    prepare.arg("prepare");
                    (
                        client::run_captured(&mut prepare, &self.scratch, left)?,
                        false,
                    )
                }
            };
            if let Some(o) = self.check_server(k, &captured, "setup") {
                let died = matches!(&o, Outcome::NotOk(_, n) if n.starts_with("server died"));
                if captured.timed_out && !died {
                    // Too slow is a capability gap, not a crash: remember it, do not retry.
                    let note = format!(
                        "setup did not finish within {} s; server replaced",
                        limit.as_secs()
                    );
                    let slot = self.slots.get_mut(&k).expect("slot per kind");
                    slot.unsupported.insert(s.schema.key.clone(), note.clone());
                    return Ok(Some(Outcome::NotOk(Status::Unsupported, note)));
                }
                return Ok(Some(o));
            }
            if !optional && !captured.success() {
                let note = format!("setup: {}", client::error_summary(&captured));
                let slot = self.slots.get_mut(&k).expect("slot per kind");
                slot.schemas.remove(s.schema.slot);
                slot.unsupported.insert(s.schema.key.clone(), note.clone());
                return Ok(Some(Outcome::NotOk(Status::Unsupported, note)));
            }
        }
        self.progress.note(&format!(
            "  set up {} on {} in {}",
            s.schema.key,
            k.name(),
            format_duration(started.elapsed().as_secs_f64())
        ));
        let slot = self.slots.get_mut(&k).expect("slot per kind");
        slot.schemas.insert(s.schema.slot, s.schema.key.clone());
        Ok(None)
    }

    fn sysbench_command(&self, test: &str, port: u16, table_rows: u32) -> Command {
        let program = self
            .ctx
            .tools
            .sysbench
            .clone()
            .unwrap_or_else(|| PathBuf::from("sysbench"));
        let mut cmd = client::libpq_command(&program, None);
        cmd.arg(test)
            .args([
                "--db-driver=pgsql",
                "--pgsql-host=127.0.0.1",
                "--pgsql-user=postgres",
                "--pgsql-db=postgres",
            ])
            .arg(format!("--pgsql-port={port}"))
            .arg("--tables=1")
            .arg(format!("--table-size={table_rows}"));
        cmd
    }

    /// EXPLAIN ANALYZE figures (medians) of the statements `session` names.
    fn explain(
        &mut self,
        k: ServerKind,
        s: &Series,
        sql: &str,
        session: ExplainSession,
    ) -> Result<Result<ExplainFigures, String>, Interrupted> {
        let Some(port) = self.server(k).map(|s| s.port) else {
            return Ok(Err("server not running".into()));
        };
        let mut all = Vec::new();
        if session == ExplainSession::Cold {
            for _ in 0..EXPLAIN_COLD_SESSIONS {
                let c = client::psql(
                    &self.ctx.tools,
                    port,
                    sql,
                    s.pgoptions,
                    false,
                    &self.scratch,
                    EXPLAIN_LIMIT,
                )?;
                if !c.success() {
                    return Ok(Err(client::error_summary(&c)));
                }
                all.extend(client::parse_explains(&c.stdout).into_iter().take(1));
            }
        } else {
            let text = match session {
                // psql runs the shell's sleep between them: the server is idle meanwhile.
                ExplainSession::WarmAfterPause => {
                    format!("\\! sleep {EXPLAIN_PAUSE_SECONDS}\n{sql}\n")
                        .repeat(EXPLAIN_WARM_STATEMENTS)
                }
                _ => format!("{sql}\n").repeat(EXPLAIN_WARM_STATEMENTS),
            };
            let c = client::psql(
                &self.ctx.tools,
                port,
                &text,
                s.pgoptions,
                false,
                &self.scratch,
                EXPLAIN_LIMIT,
            )?;
            if !c.success() {
                return Ok(Err(client::error_summary(&c)));
            }
            all.extend(client::parse_explains(&c.stdout).into_iter().skip(1));
        }
        if all.is_empty() {
            return Ok(Err("EXPLAIN printed no timing".into()));
        }
        let med = |f: &dyn Fn(&ExplainFigures) -> Option<f64>| -> Option<f64> {
            let v: Vec<f64> = all.iter().filter_map(f).collect();
            results::median(&v)
        };
        Ok(Ok(ExplainFigures {
            planning_ms: med(&|e| e.planning_ms),
            execution_ms: med(&|e| e.execution_ms),
            heap_fetches: med(&|e| e.heap_fetches.map(|h| h as f64)).map(|h| h.round() as u64),
            // Series that report buffers have a buffer probe of their own.
            buffers: None,
        }))
    }

    /// Buffer accesses per transaction of series `s` on server `k`, each server the way it
    /// can report them ([`BufferProbe`] has the methods).
    fn buffer_probe(
        &mut self,
        k: ServerKind,
        s: &Series,
        probe: &BufferProbe,
    ) -> Result<Result<BufferFigures, String>, Interrupted> {
        let Some(port) = self.server(k).map(|s| s.port) else {
            return Ok(Err("server not running".into()));
        };
        match k {
            ServerKind::Myriad => self.counted_buffer_accesses(k, s, probe, port),
            ServerKind::Postgres => self.explained_buffer_accesses(s, probe, port),
            ServerKind::Ceiling => Ok(Err("the ceiling has no buffers".into())),
        }
    }

    /// Myriad: the buffer pool's counters before and after `pgbench -t`, simple mode.
    fn counted_buffer_accesses(
        &mut self,
        k: ServerKind,
        s: &Series,
        probe: &BufferProbe,
        port: u16,
    ) -> Result<Result<BufferFigures, String>, Interrupted> {
        let before = match self.myriad_buffer_accesses(port)? {
            Ok(n) => n,
            Err(e) => return Ok(Err(e)),
        };
        let count = ["-t".to_string(), probe.lookups.to_string()];
        let mut cmd = match self.pgbench_command(s, port, Mode::Simple, &count) {
            Ok(cmd) => cmd,
            Err(e) => return Ok(Err(e)),
        };
        let captured = client::run_captured(&mut cmd, &self.scratch, BUFFER_PROBE_LIMIT)?;
        if let Some(Outcome::NotOk(_, note)) = self.check_server(k, &captured, "buffer probe") {
            return Ok(Err(note));
        }
        let transactions = match client::parse_pgbench(&captured.stdout) {
            Some(f) if captured.success() && f.transactions > 0 => f.transactions,
            _ => return Ok(Err(client::error_summary(&captured))),
        };
        let after = match self.myriad_buffer_accesses(port)? {
            Ok(n) => n,
            Err(e) => return Ok(Err(e)),
        };
        let per_txn = after.saturating_sub(before) as f64 / transactions as f64;
        Ok(Ok(BufferFigures {
            per_txn: Some(per_txn),
            btree_height: height_from_accesses(per_txn),
        }))
    }

    /// Myriad's buffer hits + reads so far.
    fn myriad_buffer_accesses(&mut self, port: u16) -> Result<Result<u64, String>, Interrupted> {
        let c = client::psql(
            &self.ctx.tools,
            port,
            MYRIAD_BUFFER_ACCESSES_SQL,
            None,
            false,
            &self.scratch,
            EXPLAIN_LIMIT,
        )?;
        if !c.success() {
            return Ok(Err(client::error_summary(&c)));
        }
        Ok(c.stdout.trim().parse().map_err(|_| {
            format!(
                "myriad_stat_buffers answered {:?}, not a count",
                client::one_line(&c.stdout, client::ERROR_SUMMARY_CHARS_MAX)
            )
        }))
    }

    /// PostgreSQL: `EXPLAIN (ANALYZE, BUFFERS)` of the probe's statements in one session,
    /// the median of all but the first; the btree height from pageinspect's `bt_metap`
    /// (left out if the extension cannot be created).
    fn explained_buffer_accesses(
        &mut self,
        s: &Series,
        probe: &BufferProbe,
        port: u16,
    ) -> Result<Result<BufferFigures, String>, Interrupted> {
        let mut sql = format!(
            "CREATE EXTENSION IF NOT EXISTS pageinspect;\n\
             SELECT '{BTREE_HEIGHT_PREFIX}' || (level + 1) FROM bt_metap('{}');\n",
            probe.index
        );
        for statement in &probe.explain_sql {
            sql.push_str(statement);
            sql.push('\n');
        }
        // Errors do not stop the session: pageinspect is optional.
        let c = client::psql(
            &self.ctx.tools,
            port,
            &sql,
            s.pgoptions,
            true,
            &self.scratch,
            EXPLAIN_LIMIT,
        )?;
        let buffers: Vec<f64> = client::parse_explains(&c.stdout)
            .into_iter()
            .skip(1)
            .filter_map(|e| e.buffers.map(|b| b as f64))
            .collect();
        let Some(per_txn) = results::median(&buffers) else {
            return Ok(Err(format!(
                "EXPLAIN (ANALYZE, BUFFERS) printed no Buffers line: {}",
                client::error_summary(&c)
            )));
        };
        let btree_height = c
            .stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix(BTREE_HEIGHT_PREFIX))
            .and_then(|h| h.parse().ok());
        Ok(Ok(BufferFigures {
            per_txn: Some(per_txn),
            btree_height,
        }))
    }

    /// Drops the workload's tables on every running database server.
    fn cleanup(&mut self, w: Workload) -> Result<(), Interrupted> {
        let sql = w.cleanup_sql();
        for (&k, slot) in &mut self.slots {
            let Some(server) = &slot.server else { continue };
            if k.is_database() {
                client::psql(
                    &self.ctx.tools,
                    server.port,
                    &sql,
                    None,
                    true,
                    &self.scratch,
                    self.settings.setup_limit,
                )?;
            }
            slot.schemas.clear();
        }
        Ok(())
    }

    /// Server kinds that were tried and never started, with the last error.
    pub fn never_started(&self) -> Vec<(ServerKind, String)> {
        self.slots
            .iter()
            .filter(|(_, s)| s.starts > 0 && s.start_failures == s.starts)
            .map(|(&k, s)| (k, s.last_start_error.clone()))
            .collect()
    }

    /// Stops every server (Drop would too; this makes the order explicit).
    pub fn shutdown(&mut self) {
        for slot in self.slots.values_mut() {
            if let Some(s) = slot.server.take() {
                s.discard();
            }
        }
    }
}

/// What a buffer probe measured.
#[derive(Clone, Debug, Default, PartialEq)]
struct BufferFigures {
    per_txn: Option<f64>,
    btree_height: Option<u32>,
}

/// Myriad's btree height from its buffer accesses per primary-key lookup: the accesses are
/// the root-to-leaf path plus one heap page (no metapage: the root is cached, lesson L5).
/// `None` unless the accesses are a whole number (within [`WHOLE_ACCESSES_SLACK`]): anything
/// else means a lookup touches more than one path, and there is no height to read off.
fn height_from_accesses(per_lookup: f64) -> Option<u32> {
    let whole = per_lookup.round();
    ((per_lookup - whole).abs() <= WHOLE_ACCESSES_SLACK && whole >= 2.0).then(|| whole as u32 - 1)
}

/// How far from a whole number Myriad's accesses per lookup may be and still give a height.
const WHOLE_ACCESSES_SLACK: f64 = 0.01;

/// The progress display on stderr: which workload, point and server, and about how long is
/// left (runs left times the run duration: an upper bound while servers skip unsupported
/// points). On a terminal the status line is rewritten in place; otherwise one line per run.
struct Progress {
    tty: bool,
    total: usize,
    done: usize,
    started: Instant,
    seconds_per_run: f64,
}

impl Progress {
    fn new(total: usize, seconds_per_run: f64) -> Progress {
        // SAFETY: isatty has no preconditions.
        let tty = unsafe { libc::isatty(2) } == 1;
        Progress {
            tty,
            total,
            done: 0,
            started: Instant::now(),
            seconds_per_run,
        }
    }

    fn run(&mut self, what: &str) {
        self.done += 1;
        let left = (self.total.saturating_sub(self.done) as f64 + 1.0) * self.seconds_per_run;
        let line = format!(
            "[{}/{}] {what} · {} elapsed, ≤ {} left",
            self.done,
            self.total,
            format_duration(self.started.elapsed().as_secs_f64()),
            format_duration(left)
        );
        if self.tty {
            eprint!("\r\x1b[K{line}");
        } else {
            eprintln!("{line}");
        }
    }

    fn skip(&mut self, n: usize) {
        self.done += n;
    }

    fn note(&mut self, message: &str) {
        if self.tty {
            eprint!("\r\x1b[K");
        }
        eprintln!("{message}");
    }

    fn finish(&mut self) {
        if self.tty {
            eprint!("\r\x1b[K");
        }
        eprintln!(
            "done in {}",
            format_duration(self.started.elapsed().as_secs_f64())
        );
    }
}

/// "42s", "3m05s", "1h02m".
pub fn format_duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heights_from_whole_accesses_only() {
        assert_eq!(height_from_accesses(4.0), Some(3));
        assert_eq!(height_from_accesses(2.0), Some(1));
        assert_eq!(height_from_accesses(4.0049), Some(3));
        assert_eq!(height_from_accesses(4.5), None);
        assert_eq!(height_from_accesses(1.0), None);
        assert_eq!(height_from_accesses(0.0), None);
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(format_duration(42.4), "42s");
        assert_eq!(format_duration(185.0), "3m05s");
        assert_eq!(format_duration(3720.0), "1h02m");
        assert_eq!(format_duration(-1.0), "0s");
    }
}
