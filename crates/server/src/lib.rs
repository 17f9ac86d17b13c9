//! The `myriad` server: listener, sessions, statement dispatch, configuration.
//!
//! # Life of a query
//!
//! 1. [`Server::start`] accepts a TCP connection and hands it to
//!    `wire::spawn_connection_thread`, whose loop runs the startup handshake (trust auth,
//!    ParameterStatus of a PostgreSQL 15 server).
//! 2. Each connection runs on a thread of its own (`wire::spawn_connection_thread`, a
//!    single-threaded runtime, as PostgreSQL has a process per connection). A `Query`
//!    message reaches `wire`'s query handler, which calls the connection's
//!    [`session::Session`] right there, blocking only that connection.
//! 3. `sql::parser::parse` parses the whole string into statements (a syntax error anywhere
//!    runs nothing, as in PostgreSQL), through the database's parse cache: a string of a
//!    shape seen before, literals aside, is not parsed again (sql rule 1).
//! 4. For each statement, the session starts a transaction if none is open, takes a
//!    snapshot and makes the statement's session context
//!    (`Session::set_statement_context`: its clock, zone and catalog, passed down
//!    explicitly, never kept per thread); [`Database`] takes the transaction's
//!    `catalog::CatalogSnapshot`, `sql::Binder::bind` resolves names and types, and the
//!    relation locks the statement needs are taken (see below).
//! 5. `planner::plan` turns the bound statement into a plan (filters pushed into scans);
//!    a utility statement (DDL, TRUNCATE, LOCK, COPY FROM) has none and goes around the
//!    planner to `executor::commands::execute`, as PostgreSQL's ProcessUtility.
//! 6. `executor::execute` runs the plan, with the session in its `ExecContext`: operators pull
//!    rows from `access::heapam::HeapScan`, which reads pages through
//!    `storage::bufmgr::BufferPool` from `storage::smgr`.
//! 7. A query's plan becomes a portal, whose rows go back to `wire` a batch at a time
//!    (server rule 2); `wire` encodes RowDescription, DataRow (text in the statement's
//!    context) and CommandComplete, flushing once with ReadyForQuery, or once per batch
//!    of a longer result (wire rule 2).
//!
//! The crate's rules are in its README ("server rule N").
//!
//! The extended protocol (Parse / Bind / Execute / Sync) takes the same path from step
//! 4, with a prepared statement's cached binding: a query or DML runs its cached generic
//! plan (made once, with the parameters in place, and again only after DDL on what it
//! reads) with each execution's values, once `plan_cache_mode` chooses it (in `auto`,
//! after five custom plans, while it is the cheaper), and then nothing is bound, copied
//! or planned per execution (`planner::CachedPlan`); COPY FROM STDIN binds and locks,
//! then loads the data as it arrives (`copy`).
//!
//! Transactions: each connection has a [`session::Session`] holding its `txn::Tx`. A
//! statement outside a transaction block runs in an implicit transaction (one per query
//! string, as PostgreSQL); BEGIN ... COMMIT spans statements. Reads and writes run
//! concurrently: versions and snapshots (MVCC) keep them apart, and writers of one row
//! wait for each other through its `t_xmax` and the writer's transaction lock.
//!
//! Relation locks (`txn::lock`): every statement takes PostgreSQL's mode on each table
//! it touches ([`relation_locks`]), held to transaction end: queries AccessShare, DML
//! RowExclusive, CREATE INDEX Share, DROP AccessExclusive, LOCK TABLE what it names,
//! VACUUM ShareUpdateExclusive, ALTER SEQUENCE ShareRowExclusive on the sequence (and
//! AccessShare on a new OWNED BY table), DROP SEQUENCE ... CASCADE AccessExclusive on
//! the tables whose DEFAULTs it removes, and TRUNCATE ... RESTART IDENTITY
//! AccessExclusive on the sequences it restarts (the sequence functions lock theirs
//! RowExclusive as they run: `executor::sequence::lock`). These locks are also what
//! lets DDL of many transactions run at once (`catalog`, "Transactions"): two
//! transactions change one table's descriptor only when their modes allow both.
//! Indexes are not locked on their own: every change to an
//! index's existence locks its table in a mode that conflicts with every user of the
//! table, so the table lock covers them, and a statement's locking cost does not grow
//! with the number of indexes. A statement binds names first, then locks; if the
//! catalog changed meanwhile (a DDL it may have waited for), it binds again. Once
//! planned, it locks the partitions its plan keeps after pruning and checks the catalog
//! once more (planner rule 18). A READ COMMITTED statement that waited for any of these
//! locks takes its snapshot after them, so it sees what the holder committed, as
//! PostgreSQL's execution snapshot does.
//!
//! A panic in one statement becomes an XX000 error for that session only.

pub mod config;
mod copy;
mod cursor;
mod extended;
pub mod session;
pub mod settings;
mod stream;

use std::net::SocketAddr;
use std::sync::Arc;

use catalog::Catalog;
use common::{PgError, PgResult};
use executor::session::SessionSettings;
use storage::bufmgr::BufferPool;
use storage::smgr::Smgr;
use storage::vfs::{OsVfs, Vfs};
use storage::xlog::{self, Wal, WalOptions};
use tokio::net::TcpListener;
use tokio::sync::watch;
use wire::Backend;

pub use config::Config;

/// One open data directory: catalog, storage, buffer pool, write-ahead log.
/// Query string shapes whose parse is kept (sql rule 1), each of at most 1 KB of text.
const PARSE_CACHE_SHAPES: usize = 512;

pub struct Database {
    catalog: Catalog,
    pool: BufferPool,
    /// Btree roots, cached for every index (nbtree rule 6).
    roots: access::nbtree::RootCache,
    wal: Arc<Wal>,
    txns: Arc<txn::TxnManager>,
    /// Session ids (what pg_backend_pid() and pg_locks call a pid).
    next_backend: std::sync::atomic::AtomicU32,
    /// The running state of every sequence used since startup.
    sequences: access::sequence::Sequences,
    /// Plans made since startup (`Database::plan`).
    plans_made: std::sync::atomic::AtomicU64,
    /// Query strings parsed, by shape (sql rule 1).
    pub(crate) parses: sql::parse_cache::ParseCache,
    /// Sessions at once; the next client gets 53300 (`max_connections`, server rule 6).
    max_connections: usize,
    /// `postmaster.pid`, locked while this database is open ([`lock_data_dir`]).
    _lock: std::fs::File,
}

/// Hold the data directory for this process, as PostgreSQL's `postmaster.pid` does: a
/// second server opening it would replay and checkpoint under the first, and the two
/// would overwrite each other's log and control file. The file is locked (an `flock`),
/// so the lock goes with the process however it ends, and holds the process id for the
/// message a second server gives.
fn lock_data_dir(dir: &std::path::Path) -> PgResult<std::fs::File> {
    use std::io::{Read, Seek, Write};
    let path = dir.join("postmaster.pid");
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| {
            PgError::io(
                format!("could not open lock file \"{}\"", path.display()),
                e,
            )
        })?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut held = String::new();
            let _ = file.read_to_string(&mut held);
            let pid = held.lines().next().unwrap_or("").trim().to_string();
            return Err(PgError::new(
                common::SqlState::LOCK_FILE_EXISTS,
                "lock file \"postmaster.pid\" already exists",
            )
            .with_hint(format!(
                "Is another postmaster (PID {pid}) running in data directory \"{}\"?",
                dir.display()
            )));
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(PgError::io(
                format!("could not lock file \"{}\"", path.display()),
                e,
            ));
        }
    }
    let written = file
        .set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| writeln!(file, "{}\n{}", std::process::id(), dir.display()));
    written.map_err(|e| {
        PgError::io(
            format!("could not write lock file \"{}\"", path.display()),
            e,
        )
    })?;
    Ok(file)
}

/// What a statement reads of the session running it (`Session::parts`), for
/// [`Database::execute_one`], which adds the catalog the statement is bound against to
/// make the executor's `Session`.
pub(crate) struct SessionParts<'a> {
    pub db: &'a Arc<Database>,
    pub info: &'a common::session::SessionInfo,
    pub settings: &'a Arc<session::SettingsHook>,
    pub sequence_memory: &'a std::rc::Rc<std::cell::RefCell<executor::session::SequenceMemory>>,
    /// The transaction is read-only.
    pub read_only: bool,
    /// What the session's temporary files hold (`temp_file_limit`).
    pub temp: &'a Arc<storage::tempfile::TempBudget>,
    /// Notices its statements raise as they run (`executor::session::Session::notices`).
    pub notices: &'a std::rc::Rc<std::cell::RefCell<Vec<PgError>>>,
    /// The session's cursors and portals, whose queries read on.
    pub cursors: &'a cursor::Cursors,
    pub portals: &'a std::collections::HashMap<String, extended::Portal>,
}

impl SessionParts<'_> {
    /// PostgreSQL's CheckTableNotInUse: DDL that changes a table (but for renames) may
    /// not run while a cursor or a suspended portal of the same session reads it
    /// (55006); a held cursor's rows read nothing (server rule 4).
    fn check_not_in_use(&self, stmt: &sql::bound::BoundStatement) -> PgResult<()> {
        use sql::bound::{BoundStatement as B, ColumnDrop, ConstraintDrop};
        let alter = "ALTER TABLE";
        let (what, tables): (&str, Vec<&catalog::TableDesc>) = match stmt {
            B::DropTables { tables, .. } => ("DROP TABLE", tables.iter().map(|t| &**t).collect()),
            B::Truncate { tables, .. } => ("TRUNCATE", tables.iter().map(|t| &**t).collect()),
            B::CreateIndex { table, .. } => ("CREATE INDEX", vec![table]),
            B::ChangeTable {
                change:
                    catalog::TableChange::Rename(_)
                    | catalog::TableChange::RenameColumn { .. }
                    | catalog::TableChange::RenameIndex { .. },
                ..
            } => return Ok(()),
            B::AddColumn { table, .. }
            | B::ChangeTable { table, .. }
            | B::AddKey { table, .. }
            | B::AddForeignKey { table, .. }
            | B::AddCheck { table, .. }
            | B::DropColumn(ColumnDrop { table, .. })
            | B::DropConstraint(
                ConstraintDrop::Check { table, .. }
                | ConstraintDrop::ForeignKey { table, .. }
                | ConstraintDrop::Key { table, .. },
            ) => (alter, vec![table]),
            _ => return Ok(()),
        };
        for t in tables {
            let reads = self.cursors.values().any(|c| c.reads_table(t.oid))
                || self.portals.values().any(|p| p.reads_table(t.oid));
            if reads {
                return Err(PgError::new(
                    common::SqlState::OBJECT_IN_USE,
                    format!(
                        "cannot {what} \"{}\" because it is being used by active queries in this session",
                        t.name
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Autovacuum vacuums a table once its dead rows exceed this plus a fraction of its
/// size (PostgreSQL's `autovacuum_vacuum_threshold` and `autovacuum_vacuum_scale_factor`).
const AUTOVACUUM_THRESHOLD: f64 = 50.0;
const AUTOVACUUM_SCALE: f64 = 0.2;
/// ... or once the rows inserted since its last VACUUM exceed this plus a fraction of its
/// size (`autovacuum_vacuum_insert_threshold`, `..._scale_factor`): a VACUUM then marks
/// their pages all-visible.
const AUTOVACUUM_INSERT_THRESHOLD: f64 = 1000.0;
const AUTOVACUUM_INSERT_SCALE: f64 = 0.2;
/// Autovacuum analyzes a table once its changes since the last ANALYZE exceed this plus
/// a fraction of its size (`autovacuum_analyze_threshold`, `..._scale_factor`).
const AUTOANALYZE_THRESHOLD: f64 = 50.0;
const AUTOANALYZE_SCALE: f64 = 0.1;
/// Autovacuum runs VACUUM (FREEZE) on a table whose oldest unfrozen id (`frozen_xid`,
/// unknown counting as 0) is more than this many ids old, whatever its changes and its
/// `autovacuum_enabled` (PostgreSQL's `autovacuum_freeze_max_age`, whose VACUUM
/// prevents wraparound): Myriad's ids never wrap, but the commit log is truncated only
/// below every table's `frozen_xid` (txn rule 11).
pub const AUTOVACUUM_FREEZE_MAX_AGE: u64 = 200_000_000;

/// What one round of autovacuum did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AutovacuumRound {
    /// Tables vacuumed (with FREEZE, or not).
    pub vacuumed: usize,
    /// Of those, vacuumed with FREEZE because their oldest id was too old.
    pub frozen: usize,
    /// Tables analyzed.
    pub analyzed: usize,
}

/// What upper layers save at each checkpoint (storage wal rule 7).
fn save_state(catalog: &Catalog, txns: &txn::TxnManager) -> PgResult<()> {
    catalog.checkpoint()?;
    txns.checkpoint()
}

impl Database {
    /// Open (creating if needed) the data directory, replaying the write-ahead log from
    /// the last checkpoint if the server did not shut down cleanly.
    pub fn open(config: &Config) -> PgResult<Database> {
        let data_dir = &config.data_dir;
        let vfs: Arc<dyn Vfs> = Arc::new(OsVfs);
        vfs.create_dir_all(data_dir).map_err(|e| {
            PgError::io(
                format!("could not create directory \"{}\"", data_dir.display()),
                e,
            )
        })?;
        // Nothing is read before the directory is this process's alone.
        let lock = lock_data_dir(data_dir)?;
        let catalog = Catalog::open(vfs.clone(), data_dir)?;
        let txns = Arc::new(txn::TxnManager::open(vfs.clone(), data_dir)?);
        let smgr = Arc::new(Smgr::new(vfs.clone(), data_dir)?);
        let mut pool = BufferPool::new(smgr, config.buffer_pool_pages);
        // Replay hands catalog and transaction records to their owners; checkpoints save
        // their state (storage wal rule 7).
        let (wal, recovery) = xlog::open_and_recover_with(
            vfs,
            data_dir,
            &mut pool,
            WalOptions {
                segment_size: config.wal_segment_size,
                synchronous_commit: config.synchronous_commit,
            },
            &mut |r| match r.kind {
                xlog::RecordKind::Xact => {
                    txns.redo(r)?;
                    // A commit record also commits the catalog changes logged before it.
                    catalog.redo_transaction(&r.payload)
                }
                _ => catalog.redo(&r.payload),
            },
            &|| save_state(&catalog, &txns),
        )?;
        catalog.attach_wal(wal.clone());
        txns.attach_wal(wal.clone());
        if recovery.records > 0 {
            tracing::info!(
                records = recovery.records,
                pages = recovery.pages_applied,
                "crash recovery done"
            );
        }
        Ok(Database {
            catalog,
            pool,
            roots: access::nbtree::RootCache::new(),
            wal,
            txns,
            next_backend: std::sync::atomic::AtomicU32::new(1),
            sequences: access::sequence::Sequences::new(),
            plans_made: std::sync::atomic::AtomicU64::new(0),
            parses: sql::parse_cache::ParseCache::new(PARSE_CACHE_SHAPES),
            max_connections: config.max_connections,
            _lock: lock,
        })
    }

    /// Write every dirty page and record a redo point in the log.
    pub fn checkpoint(&self) -> PgResult<()> {
        xlog::checkpoint_with(&self.pool, &self.wal, &|| {
            save_state(&self.catalog, &self.txns)
        })
    }

    /// Plan a bound statement, counting the plans made (a prepared statement's generic
    /// plan is made once and reused while its catalog dependencies hold). `xmin`: the
    /// statement's snapshot's (`PlanContext::snapshot_xmin`).
    fn plan(
        &self,
        catalog: &catalog::CatalogSnapshot,
        settings: &planner::PlannerSettings,
        bound: sql::bound::BoundStatement,
        xmin: u64,
    ) -> PgResult<planner::PlannedStatement> {
        self.plans_made
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let sizes = executor::PoolSizes(&self.pool);
        planner::plan(
            &planner::PlanContext {
                snapshot_xmin: xmin,
                catalog,
                sizes: &sizes,
                settings,
                subplans: None,
            },
            bound,
        )
    }

    /// `stmt`'s estimated cost (`planner::cache::plan_cost`), with what planning it costs
    /// if `planning`.
    fn plan_cost(
        &self,
        catalog: &catalog::CatalogSnapshot,
        settings: &planner::PlannerSettings,
        stmt: &planner::PlannedStatement,
        planning: bool,
    ) -> f64 {
        let sizes = executor::PoolSizes(&self.pool);
        let cx = planner::PlanContext {
            snapshot_xmin: u64::MAX,
            catalog,
            sizes: &sizes,
            settings,
            subplans: Some(stmt.subplans().costs()),
        };
        planner::cache::plan_cost(&cx, stmt, planning)
    }

    /// How many plans have been made since startup.
    pub fn plans_made(&self) -> u64 {
        self.plans_made.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The committed catalog (tools and tests; a session reads its transaction's view).
    pub fn committed_catalog(&self) -> Arc<catalog::CatalogSnapshot> {
        self.catalog.committed()
    }

    /// The transaction manager.
    /// The server's temporary file space (storage temp rules).
    pub fn temp_space(&self) -> &Arc<storage::tempfile::TempSpace> {
        self.pool.smgr().temp()
    }

    pub fn txns(&self) -> &Arc<txn::TxnManager> {
        &self.txns
    }

    /// A clean shutdown: the sequences' running state, then a checkpoint (which also
    /// saves the catalog and the commit log).
    pub fn shutdown_checkpoint(&self) -> PgResult<()> {
        self.sequences.save(&self.pool)?;
        self.checkpoint()
    }

    /// The write-ahead log.
    pub fn wal(&self) -> &Arc<Wal> {
        &self.wal
    }

    /// VACUUM and/or ANALYZE the tables `v` names (every table if none). Each table is
    /// locked ShareUpdateExclusive (it runs beside reads and writes, not beside DDL or
    /// another VACUUM); `hold` keeps the locks to transaction end (ANALYZE in a
    /// transaction), else each is released when its table is done. Returns the notices
    /// (VERBOSE's INFO, SKIP_LOCKED's warnings).
    fn maintain(
        &self,
        v: &sql::parser::Vacuum,
        tx: &txn::Tx,
        hold: bool,
        default_target: u32,
    ) -> PgResult<Vec<PgError>> {
        use common::SqlState;
        if v.vacuum && !v.analyze && v.tables.iter().any(|(_, cols)| !cols.is_empty()) {
            return Err(PgError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "ANALYZE option must be specified when a column list is provided",
            ));
        }
        let catalog = self.catalog.snapshot(tx);
        let mut targets = Vec::with_capacity(v.tables.len());
        for (name, cols) in &v.tables {
            let ident = name
                .0
                .last()
                .and_then(|p| p.as_ident())
                .map(sql::binder::ident_name)
                .unwrap_or_default();
            let t = catalog.table(&ident).ok_or_else(|| {
                PgError::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("relation \"{ident}\" does not exist"),
                )
            })?;
            targets.push((t.clone(), &cols[..]));
            // A partitioned table's rows are its partitions' (partition rule 1): they
            // are vacuumed and analyzed in its place, as PostgreSQL recurses.
            for d in catalog.descendants(t.oid) {
                if d.partition_key.is_none() {
                    targets.push((d, &cols[..]));
                }
            }
        }
        if v.tables.is_empty() {
            // Every table; a partitioned one only for ANALYZE (its statistics as a
            // whole: VACUUM has nothing of its own to do, its partitions are listed).
            let mut all: Vec<_> = catalog
                .tables()
                .filter(|t| v.analyze || t.partition_key.is_none())
                .cloned()
                .collect();
            all.sort_by_key(|t| t.oid);
            targets.extend(all.into_iter().map(|t| (t, &[][..])));
        }
        if v.full {
            return Err(PgError::unsupported("VACUUM FULL"));
        }
        let mut notices = Vec::new();
        for (t, cols) in targets {
            let mut seen: Vec<String> = Vec::with_capacity(cols.len());
            let mut columns = Vec::with_capacity(cols.len());
            for c in cols {
                let c = sql::binder::ident_name(c);
                let Some(i) = t.column_index(&c) else {
                    return Err(PgError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("column \"{c}\" of relation \"{}\" does not exist", t.name),
                    ));
                };
                if seen.contains(&c) {
                    return Err(PgError::new(
                        SqlState::DUPLICATE_COLUMN,
                        format!(
                            "column \"{c}\" of relation \"{}\" appears more than once",
                            t.name
                        ),
                    ));
                }
                seen.push(c);
                columns.push(i);
            }
            let res = self.maintain_one(&t, &columns, v, tx, default_target, &mut notices);
            if !hold {
                tx.release_locks();
            }
            res?;
        }
        Ok(notices)
    }

    /// VACUUM and/or ANALYZE one table under its lock (skipped with a warning if
    /// SKIP_LOCKED and the lock is taken).
    fn maintain_one(
        &self,
        t: &catalog::TableDesc,
        columns: &[usize],
        v: &sql::parser::Vacuum,
        tx: &txn::Tx,
        default_target: u32,
        notices: &mut Vec<PgError>,
    ) -> PgResult<()> {
        let what = if v.vacuum { "vacuum" } else { "analyze" };
        if !self.lock_for_maintenance(t, tx, v.skip_locked)? {
            notices.push(PgError::warning(
                common::SqlState::LOCK_NOT_AVAILABLE,
                format!("skipping {what} of \"{}\" --- lock not available", t.name),
            ));
            return Ok(());
        }
        // Dropped while we waited: nothing to do. A partitioned table has no rows of its
        // own to vacuum (its partitions follow it in the list); ANALYZE keeps statistics
        // of it as a whole.
        let Some(t) = self.catalog.snapshot(tx).table_by_oid(t.oid).cloned() else {
            return Ok(());
        };
        if v.vacuum && t.partition_key.is_none() {
            if v.verbose {
                notices.push(PgError::info(format!("vacuuming \"public.{}\"", t.name)));
            }
            let s = self.vacuum_one(&t, tx, false, v.freeze)?;
            if v.verbose {
                notices.push(PgError::info(format!(
                    "finished vacuuming \"public.{}\": index scans: {}\n\
                     pages: {} removed, {} remain, {} scanned ({:.2}% of total)\n\
                     tuples: {} removed, {} remain",
                    t.name,
                    usize::from(s.index_entries_removed > 0),
                    s.pages_removed,
                    s.pages - s.pages_removed,
                    s.pages_scanned,
                    match s.pages {
                        0 => 100.0,
                        n => s.pages_scanned as f64 * 100.0 / n as f64,
                    },
                    s.tuples_removed,
                    s.tuples_remaining
                )));
            }
        }
        if v.analyze {
            if v.verbose {
                notices.push(PgError::info(format!("analyzing \"public.{}\"", t.name)));
            }
            let s = self.analyze_one(&t, columns, default_target, tx, false)?;
            if v.verbose {
                notices.push(PgError::info(format!(
                    "\"{}\": scanned {} of {} pages, containing {} live rows and {} dead \
                     rows; {} rows in sample, {} estimated total rows",
                    t.name,
                    s.pages_scanned,
                    s.pages,
                    s.live_rows,
                    s.dead_rows,
                    s.sample_rows,
                    s.estimated_rows
                )));
            }
        }
        Ok(())
    }

    /// Take VACUUM's and ANALYZE's lock on `t`; false if `nowait` and it is taken.
    fn lock_for_maintenance(
        &self,
        t: &catalog::TableDesc,
        tx: &txn::Tx,
        nowait: bool,
    ) -> PgResult<bool> {
        use txn::lock::{LockError, LockMode, LockTag};
        match tx.lock(
            LockTag::Relation(t.oid),
            LockMode::ShareUpdateExclusive,
            nowait,
        ) {
            Ok(()) => Ok(true),
            Err(LockError::NotAvailable) if nowait => Ok(false),
            Err(e) => Err(e.to_pg(&format!("relation \"{}\"", t.name))),
        }
    }

    /// Autovacuum: lock `t` for VACUUM (or ANALYZE) without waiting, and vacuum (or
    /// analyze) it if it still exists; false if the lock is taken. The caller releases
    /// the lock.
    fn maintain_locked(
        &self,
        t: &catalog::TableDesc,
        tx: &txn::Tx,
        vacuum: bool,
        freeze: bool,
    ) -> PgResult<bool> {
        if !self.lock_for_maintenance(t, tx, true)? {
            return Ok(false);
        }
        // Dropped while we waited (or partitioned, with no rows of its own): nothing
        // to do.
        let Some(t) = self.catalog.snapshot(tx).table_by_oid(t.oid).cloned() else {
            return Ok(true);
        };
        if t.partition_key.is_some() {
            return Ok(true);
        }
        if vacuum {
            self.vacuum_one(&t, tx, true, freeze)?;
        } else {
            self.analyze_one(
                &t,
                &[],
                executor::commands::analyze::DEFAULT_STATISTICS_TARGET,
                tx,
                true,
            )?;
        }
        Ok(true)
    }

    /// VACUUM `t` (by autovacuum if `auto`), and record what it found.
    fn vacuum_one(
        &self,
        t: &catalog::TableDesc,
        tx: &txn::Tx,
        auto: bool,
        freeze: bool,
    ) -> PgResult<executor::commands::vacuum::VacuumStats> {
        let counts = self.txns.rel_stats();
        let inserted_before = counts.get(t.oid).ins_since_vacuum;
        let stats = tx.counting(|| {
            executor::commands::vacuum::vacuum_table(&self.pool, &self.roots, tx, t, freeze)
        })?;
        tracing::debug!(table = %t.name, ?stats, "vacuumed");
        // As PostgreSQL's VACUUM, record the table's size and rows (the versions left),
        // keeping what ANALYZE found of its columns. The rows on the pages it skipped
        // (all-visible) are estimated at the density the last count found, as
        // PostgreSQL's `vac_estimate_reltuples`.
        let old = self.catalog.committed().stats(t.oid).cloned();
        let unscanned = stats.pages - stats.pages_scanned;
        // The empty pages it cut at the end were read, marked and then removed.
        let pages = stats.pages - stats.pages_removed;
        let all_visible = u64::from(stats.pages_all_visible).saturating_sub(stats.pages_removed);
        let estimate = |counted: u64| -> f64 {
            let counted = counted as f64;
            match &old {
                _ if unscanned == 0 => counted,
                Some(o) if stats.pages_scanned == 0 => o.reltuples.max(0.0),
                Some(o) if o.relpages > 0 && o.reltuples >= 0.0 => {
                    counted + o.reltuples / f64::from(o.relpages) * unscanned as f64
                }
                _ => counted * stats.pages as f64 / stats.pages_scanned.max(1) as f64,
            }
        };
        let reltuples = estimate(stats.tuples_remaining);
        let live = estimate(stats.live_tuples).round() as u64;
        self.catalog.set_stats(
            t.oid,
            catalog::RelStats {
                reltuples,
                relpages: u32::try_from(pages).unwrap_or(u32::MAX),
                relallvisible: u32::try_from(all_visible).unwrap_or(u32::MAX),
                // A VACUUM that skipped pages not all-frozen learnt nothing new of the
                // ids left: what the last one found still bounds them (txn rule 11).
                frozen_xid: stats
                    .frozen_xid
                    .unwrap_or_else(|| old.as_ref().map_or(0, |o| o.frozen_xid)),
                columns: old.as_ref().map(|o| o.columns.clone()).unwrap_or_default(),
            },
        )?;
        self.truncate_clog()?;
        counts.report_vacuum(
            t.oid,
            auto,
            std::time::SystemTime::now(),
            (live, stats.dead_tuples),
            inserted_before,
        );
        Ok(stats)
    }

    /// Truncate the commit log below the least `frozen_xid` of every table with storage
    /// (txn rule 11): no tuple anywhere holds an older id unfrozen. A table no VACUUM
    /// has read whole yet (0) keeps the log whole.
    fn truncate_clog(&self) -> PgResult<()> {
        let catalog = self.catalog.committed();
        let below = catalog
            .tables()
            .filter(|t| t.partition_key.is_none())
            .map(|t| catalog.stats(t.oid).map_or(0, |s| s.frozen_xid))
            .min();
        if let Some(below) = below.filter(|&b| b > 0) {
            let removed = self.txns.truncate_clog(below)?;
            if removed > 0 {
                tracing::debug!(below, removed, "commit log truncated");
            }
        }
        Ok(())
    }

    /// ANALYZE `t` (by autovacuum if `auto`): the columns at positions `columns` (every
    /// column if empty), each with its own statistics target or `default_target`.
    /// Statistics of the columns not analyzed stay as they were.
    fn analyze_one(
        &self,
        t: &catalog::TableDesc,
        columns: &[usize],
        default_target: u32,
        tx: &txn::Tx,
        auto: bool,
    ) -> PgResult<executor::commands::analyze::AnalyzeStats> {
        let targets: Vec<u32> = t
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if c.dropped || !(columns.is_empty() || columns.contains(&i)) {
                    0
                } else {
                    c.stat_target.map_or(default_target, u32::from)
                }
            })
            .collect();
        let counts = self.txns.rel_stats();
        let changed_before = counts.get(t.oid).mod_since_analyze;
        let stats = tx.counting(|| {
            if t.partition_key.is_some() {
                // Sampled from its leaves (locked with it by `maintain`'s list).
                let leaves: Vec<_> = self
                    .catalog
                    .snapshot(tx)
                    .descendants(t.oid)
                    .into_iter()
                    .filter(|l| l.partition_key.is_none())
                    .collect();
                executor::commands::analyze::analyze_partitioned(
                    &self.pool, tx, t, &leaves, &targets,
                )
            } else {
                executor::commands::analyze::analyze_table(&self.pool, tx, t, &targets)
            }
        })?;
        tracing::debug!(table = %t.name, pages = stats.pages_scanned, rows = stats.sample_rows, "analyzed");
        let mut rel = stats.rel.clone();
        // Keep what an earlier ANALYZE found of the columns not analyzed now (when the
        // sample was empty, PostgreSQL leaves every column's statistics as they were).
        if let Some(old) = self.catalog.snapshot(tx).stats(t.oid) {
            // What the last VACUUM found of the table's ids (ANALYZE reads none).
            rel.frozen_xid = old.frozen_xid;
            let mut cols: Vec<catalog::ColumnStats> = rel.columns.to_vec();
            let analyzed = |attnum: u16| {
                stats.sample_rows > 0 && targets.get(attnum as usize - 1).is_some_and(|x| *x > 0)
            };
            cols.extend(old.columns.iter().filter(|c| !analyzed(c.attnum)).cloned());
            cols.sort_by_key(|c| c.attnum);
            rel.columns = cols.into();
        }
        self.catalog.set_stats_by(tx, t.oid, rel)?;
        // The dead rows on the pages read, scaled as the live ones are. A partitioned
        // table's rows are its partitions': PostgreSQL counts none of its own.
        let (live, dead) = match (t.partition_key.is_some(), stats.live_rows) {
            (true, _) => (0.0, 0.0),
            (false, 0) => (stats.estimated_rows, stats.dead_rows as f64),
            (false, n) => (
                stats.estimated_rows,
                stats.dead_rows as f64 * stats.estimated_rows / n as f64,
            ),
        };
        counts.report_analyze(
            t.oid,
            auto,
            std::time::SystemTime::now(),
            (live, dead),
            changed_before,
        );
        Ok(stats)
    }

    /// One round of autovacuum, run as session `tx`: VACUUM every table whose changes
    /// passed its threshold, then ANALYZE every table whose changes since its last
    /// ANALYZE passed that threshold (with `default_statistics_target`'s default),
    /// skipping those whose lock is taken (a DDL never queues behind autovacuum).
    pub fn autovacuum_round(&self, tx: &txn::Tx) -> PgResult<AutovacuumRound> {
        let counts = self.txns.rel_stats();
        let catalog = self.catalog.committed();
        // Counts of relations dropped since go (tables' and indexes' alike).
        let files: std::collections::HashSet<common::RelId> = catalog
            .tables()
            .flat_map(|t| std::iter::once(t.rel).chain(t.indexes.iter().map(|i| i.rel)))
            .collect();
        counts.retain(
            |oid| catalog.table_by_oid(oid).is_some() || catalog.index_by_oid(oid).is_some(),
            |file| files.contains(&file),
        );
        let (mut vacuum_due, mut analyze_due) = (Vec::new(), Vec::new());
        for (oid, c) in counts.all() {
            let Some(t) = catalog.table_by_oid(oid) else {
                continue;
            };
            // PostgreSQL 15's autovacuum leaves partitioned tables alone.
            if t.partition_key.is_some() {
                continue;
            }
            // `pg_class.reltuples` as the last VACUUM or ANALYZE set it (0 before).
            let reltuples = catalog.stats(oid).map_or(0.0, |s| s.reltuples.max(0.0));
            if c.dead_tuples as f64 > AUTOVACUUM_THRESHOLD + AUTOVACUUM_SCALE * reltuples
                || c.ins_since_vacuum as f64
                    > AUTOVACUUM_INSERT_THRESHOLD + AUTOVACUUM_INSERT_SCALE * reltuples
            {
                vacuum_due.push(oid);
            }
            if c.mod_since_analyze as f64 > AUTOANALYZE_THRESHOLD + AUTOANALYZE_SCALE * reltuples {
                analyze_due.push(oid);
            }
        }
        // Tables holding ids too old to let the commit log be truncated: frozen, in
        // place of a plain VACUUM.
        let next = self.txns.next_xid();
        let freeze_due: Vec<common::Oid> = catalog
            .tables()
            .filter(|t| t.partition_key.is_none())
            .filter(|t| {
                let frozen = catalog.stats(t.oid).map_or(0, |s| s.frozen_xid);
                next.saturating_sub(frozen) > AUTOVACUUM_FREEZE_MAX_AGE
            })
            .map(|t| t.oid)
            .collect();
        vacuum_due.retain(|oid| !freeze_due.contains(oid));
        drop(catalog);
        let mut round = AutovacuumRound::default();
        for (oids, vacuum, freeze) in [
            (freeze_due, true, true),
            (vacuum_due, true, false),
            (analyze_due, false, false),
        ] {
            for oid in oids {
                let Some(t) = self.catalog.committed().table_by_oid(oid).cloned() else {
                    continue;
                };
                if !t.options.autovacuum_enabled && !freeze {
                    continue;
                }
                let res = self.maintain_locked(&t, tx, vacuum, freeze);
                tx.release_locks();
                if res? {
                    if vacuum {
                        round.vacuumed += 1;
                        round.frozen += usize::from(freeze);
                    } else {
                        round.analyzed += 1;
                    }
                }
            }
        }
        Ok(round)
    }

    /// Commit `tx` with its catalog changes; then the storage of what it dropped goes.
    pub(crate) fn commit(&self, tx: &txn::Tx) -> PgResult<()> {
        let (res, files) = self.catalog.commit(tx);
        self.remove_storage(&files);
        res
    }

    /// Roll `tx` back with its catalog changes; the storage of what it created goes.
    pub(crate) fn abort(&self, tx: &txn::Tx) -> PgResult<()> {
        let files = self.catalog.abort(tx);
        let res = tx.abort();
        self.remove_storage(&files);
        res
    }

    /// ROLLBACK TO the savepoint `name` of `tx`: catalog changes made since go first,
    /// with the storage of what they created.
    pub(crate) fn rollback_to(&self, tx: &txn::Tx, name: &str) -> PgResult<usize> {
        let level = tx.savepoint_level(name)?;
        let files = self.catalog.rollback_to(tx, level);
        self.remove_storage(&files);
        tx.rollback_to(name)
    }

    /// RELEASE the savepoint `name` of `tx`.
    pub(crate) fn release(&self, tx: &txn::Tx, name: &str) -> PgResult<()> {
        tx.release(name)?;
        self.catalog.release(tx, tx.depth());
        Ok(())
    }

    /// Files left to remove when a transaction ended. A failure leaves an orphan file
    /// (nothing names it; its OID is never handed out again): logged, not the client's
    /// error, since the transaction has ended either way.
    fn remove_storage(&self, files: &[catalog::RelFile]) {
        if files.is_empty() {
            return;
        }
        if let Err(e) = executor::remove_storage(&self.pool, &self.roots, &self.sequences, files) {
            tracing::warn!(error = %e.message, "could not remove a relation's storage");
        }
    }

    /// Does the table an ALTER TABLE names exist, for transaction `tx` of `session`?
    pub(crate) fn alter_target_exists(
        &self,
        a: &sqlparser::ast::AlterTable,
        sql: &str,
        tx: &txn::Tx,
        session: &common::session::SessionInfo,
    ) -> bool {
        let catalog = self.catalog.snapshot(tx);
        sql::Binder::new(&catalog, sql, session).table_exists(&a.name)
    }

    /// The executor's view of a session's statement in `tx` that sees `catalog`.
    pub(crate) fn exec_session<'a>(
        &'a self,
        parts: &SessionParts<'a>,
        tx: &'a txn::Tx,
        catalog: Arc<catalog::CatalogSnapshot>,
    ) -> executor::session::Session<'a> {
        executor::session::Session {
            info: parts.info,
            catalog,
            settings: &**parts.settings,
            sequence_memory: parts.sequence_memory,
            read_only: parts.read_only,
            pool: &self.pool,
            sequences: &self.sequences,
            tx,
            live_catalog: &self.catalog,
            temp: parts.temp,
            notices: parts.notices,
        }
    }

    /// What the executor needs to run in `tx`, seeing `snapshot`, for `session`.
    pub(crate) fn exec_context<'a>(
        &'a self,
        tx: &'a txn::Tx,
        snapshot: &'a txn::Snapshot,
        session: &'a executor::session::Session<'a>,
    ) -> executor::ExecContext<'a> {
        executor::ExecContext {
            session,
            pool: &self.pool,
            catalog: &self.catalog,
            roots: &self.roots,
            tx,
            snapshot,
            sequences: &self.sequences,
            subqueries: Default::default(),
            partition_keys: Default::default(),
            params: Default::default(),
        }
    }

    /// A transaction handle for background work (autovacuum), with a session id of its
    /// own.
    pub fn background_tx(&self) -> txn::Tx {
        let pid = self
            .next_backend
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        txn::Tx::new(self.txns.clone(), pid)
    }

    /// Before DETACH ... FINALIZE (or CONCURRENTLY's second transaction) takes its
    /// locks: wait until every transaction that held a lock on the parent when this
    /// looked has ended (partition rule 6, lock rule 16). Those may have planned with
    /// the partition still in its parent's directory; any later one cannot have. Holding
    /// no lock on the partition meanwhile, this wait is in no cycle of lock waits.
    fn await_detach(
        &self,
        cmd: &sql::parser::Command,
        sql_text: &str,
        tx: &txn::Tx,
        session: &SessionParts<'_>,
    ) -> PgResult<()> {
        let catalog = self.catalog.snapshot(tx);
        let bound = sql::Binder::new(&catalog, sql_text, session.info).bind_command(cmd)?;
        if let sql::bound::BoundStatement::DetachPartition {
            parent,
            step: sql::bound::DetachStep::Finish,
            ..
        } = &bound
        {
            tx.wait_for_lockers(parent.oid)
                .map_err(|e| e.to_pg(&format!("relation \"{}\"", parent.name)))?;
        }
        Ok(())
    }

    /// Bind, plan and run one statement of `session` in `tx`; `prepared` carries a
    /// portal's parameters and the statement as its Bind found it bound. The statement's
    /// snapshot is the one `tx` started it with, or under READ COMMITTED, if it waited
    /// for a lock, one taken after its locks (as PostgreSQL's execution snapshot is).
    fn execute_one(
        &self,
        cmd: &sql::parser::Command,
        sql_text: &str,
        tx: &std::rc::Rc<txn::Tx>,
        session: &SessionParts<'_>,
        mut prepared: Option<&mut extended::BoundParams<'_>>,
    ) -> PgResult<executor::StatementResult> {
        let started = std::time::Instant::now();
        let waits = tx.lock_waits();
        let mut catalog = self.catalog.snapshot(tx);
        let bind = |catalog: &catalog::CatalogSnapshot,
                    prepared: &Option<&mut extended::BoundParams<'_>>|
         -> PgResult<Binding> {
            let binder = sql::Binder::new(catalog, sql_text, session.info);
            let (bound, deps) = match (prepared, cmd) {
                (Some(p), sql::parser::Command::Sql(stmt)) => p.rebind(binder, stmt)?,
                _ => {
                    let bound = binder.bind_command(cmd)?;
                    (bound, binder.dependencies())
                }
            };
            Ok(Binding::Fresh(Box::new(bound), deps))
        };
        // A prepared statement's cached binding, while what it read is unchanged; else
        // a fresh binding.
        let mut binding = match prepared
            .as_deref_mut()
            .and_then(|p| p.bound.take())
            .filter(|c| c.holds_for(&catalog))
        {
            Some(cached) => Binding::Cached(cached),
            None => bind(&catalog, &prepared)?,
        };
        // Lock the relations the binding names; if DDL changed one since the binding
        // (perhaps the one waited for), bind again against what it left, and lock again
        // (server rule 1).
        let lock_bound =
            |catalog: &mut Arc<catalog::CatalogSnapshot>, binding: &mut Binding| -> PgResult<()> {
                loop {
                    let mut wanted = Vec::new();
                    relation_locks(binding.statement(), catalog, &mut wanted);
                    for w in &wanted {
                        tx.lock(txn::lock::LockTag::Relation(w.oid), w.mode, w.nowait)
                            .map_err(|e| e.to_pg(&format!("relation \"{}\"", w.name)))?;
                    }
                    let now = self.catalog.snapshot(tx);
                    if now.version == catalog.version || binding.holds_for(&now) {
                        return Ok(());
                    }
                    *catalog = now;
                    *binding = bind(catalog, &prepared)?;
                }
            };
        lock_bound(&mut catalog, &mut binding)?;
        let first = tx
            .snapshot()
            .ok_or_else(|| PgError::internal("a statement without a snapshot"))?;
        let statement_snapshot = || {
            // Waited for a lock: what its holder committed is seen (READ COMMITTED; the
            // transaction's snapshot under REPEATABLE READ).
            if tx.lock_waits() != waits {
                tx.start_statement()
            } else {
                first.clone()
            }
        };
        if binding.statement().is_utility() {
            // DDL and the like go around the planner (ProcessUtility).
            let (bound, _) = binding.take_statement();
            session.check_not_in_use(&bound)?;
            let session = self.exec_session(session, tx, catalog);
            let snapshot = statement_snapshot();
            let cx = self.exec_context(tx, &snapshot, &session);
            let r = executor::commands::execute(bound, &cx)?;
            return Ok(r);
        }
        let settings = session.settings.planner();
        loop {
            let exec_session = self.exec_session(session, tx, catalog.clone());
            // The generic plan, or a custom plan with this execution's values (planner
            // rule 7: plan_cache_mode, PostgreSQL's choice in auto).
            let entry = match &binding {
                Binding::Cached(c) => Some(c.clone()),
                Binding::Fresh(..) => None,
            };
            let generic = match (&entry, prepared.as_deref()) {
                (Some(c), Some(p)) => {
                    let make = || {
                        let g = self.plan(
                            &exec_session.catalog,
                            &settings,
                            c.bound.clone(),
                            first.xmin,
                        )?;
                        let cost = self.plan_cost(&exec_session.catalog, &settings, &g, false);
                        Ok((g, cost))
                    };
                    c.generic_for(
                        exec_session.settings.plan_cache_mode(),
                        !p.values.is_empty(),
                        make,
                    )?
                    .map(|plan| (plan, p))
                }
                _ => None,
            };
            let (generic, params) = match generic {
                Some((plan, p)) => (
                    Some(plan),
                    executor::env::Params {
                        values: p.values,
                        types: p.types,
                    },
                ),
                None => (None, Default::default()),
            };
            let custom = match generic {
                Some(_) => None,
                None => {
                    let (mut bound, cached) = binding.take_statement();
                    if let Some(p) = prepared.as_deref() {
                        bound.substitute_params(p.values, p.types)?;
                    }
                    let mut planned =
                        self.plan(&exec_session.catalog, &settings, bound, first.xmin)?;
                    // Planning counts against statement_timeout: a statement whose
                    // planning used it up stops before it runs (EXPLAIN included).
                    tx.check_statement_timeout()?;
                    // A prepared statement's custom plan: its cost, for the choice.
                    if let Some(c) = cached.filter(|c| c.plannable()) {
                        c.note_custom(self.plan_cost(
                            &exec_session.catalog,
                            &settings,
                            &planned,
                            true,
                        ));
                    }
                    if let planner::PlannedStatement::Explain { planning, .. } = &mut planned {
                        // Binding (with its catalog lookups) and planning: PostgreSQL's
                        // Planning Time counts its planner, which is where it opens
                        // indexes and partitions.
                        *planning = started.elapsed();
                    }
                    Some(planned)
                }
            };
            let Some(stmt) = generic.or(custom.as_ref()) else {
                return Err(PgError::internal("a statement without a plan"));
            };
            // Executor rule 7: the partitions the plan keeps (pruned by this execution's
            // values), locked before the snapshot; then the plan must still hold for the
            // catalog, or the statement is bound and planned again (planner rule 18).
            let pre = executor::ExecContext {
                params,
                ..self.exec_context(tx, &first, &exec_session)
            };
            if executor::exec::lock_partitions(stmt, &pre)? > 0 {
                let now = self.catalog.snapshot(tx);
                if now.version != catalog.version && !binding.holds_for(&now) {
                    catalog = now;
                    binding = bind(&catalog, &prepared)?;
                    lock_bound(&mut catalog, &mut binding)?;
                    continue;
                }
            }
            let snapshot = statement_snapshot();
            let cx = executor::ExecContext {
                snapshot: &snapshot,
                ..pre
            };
            // EXPLAIN EXECUTE: the plan chosen, explained (and run under ANALYZE).
            let explain = prepared.as_deref().and_then(|p| p.explain);
            // A query becomes a portal, whose rows are fetched as the client takes
            // them (executor rule 8).
            // COPY TO STDOUT too: its rows become lines as they are fetched.
            let shape = match (stmt, explain) {
                (planner::PlannedStatement::Query { columns, .. }, None) => {
                    Some((columns.clone(), None))
                }
                (
                    planner::PlannedStatement::CopyTo {
                        columns, format, ..
                    },
                    None,
                ) => Some((columns.clone(), Some(format.clone()))),
                _ => None,
            };
            if let Some((columns, copy_format)) = shape {
                let plan = match (custom, entry) {
                    (Some(planned), _) => executor::portal::PlanOf::Own(Box::new(planned)),
                    (None, Some(c)) => executor::portal::PlanOf::Generic(c),
                    (None, None) => return Err(PgError::internal("a statement without a plan")),
                };
                let sources = executor::portal::Sources {
                    shared: session.db.clone(),
                    tx: tx.clone(),
                    info: session.info.clone(),
                    catalog: catalog.clone(),
                    settings: session.settings.clone(),
                    sequence_memory: session.sequence_memory.clone(),
                    read_only: session.read_only,
                    temp: session.temp.clone(),
                    notices: session.notices.clone(),
                };
                let portal = executor::portal::Portal::open(
                    sources,
                    snapshot.clone(),
                    plan,
                    params.values.to_vec(),
                    params.types.to_vec(),
                )?;
                let Some(format) = copy_format else {
                    return Ok(executor::StatementResult {
                        columns: Some(columns),
                        portal: Some(portal),
                        ..Default::default()
                    });
                };
                let mut header = Vec::new();
                if format.header {
                    let names: Vec<Option<&str>> = columns.iter().map(|c| Some(&*c.name)).collect();
                    header.push(executor::commands::copy::format_line(&format, &names));
                }
                return Ok(executor::StatementResult {
                    copy_out: Some((columns.len(), header)),
                    copy_format: Some(format),
                    portal: Some(portal),
                    ..Default::default()
                });
            }
            let r = match (custom, generic, explain) {
                (Some(planned), _, Some(options)) => executor::execute(
                    planner::PlannedStatement::Explain {
                        options,
                        inner: Box::new(planned),
                        planning: started.elapsed(),
                    },
                    &cx,
                )?,
                (None, Some(plan), Some(options)) => executor::execute(
                    planner::PlannedStatement::Explain {
                        options,
                        inner: Box::new(plan.clone()),
                        planning: started.elapsed(),
                    },
                    &cx,
                )?,
                (Some(planned), _, None) => executor::execute(planned, &cx)?,
                (None, Some(plan), None) => executor::execute_plan(plan, &cx)?,
                (None, None, _) => return Err(PgError::internal("a statement without a plan")),
            };
            return Ok(r);
        }
    }
}

/// A statement as `Database::execute_one` found it bound.
enum Binding {
    /// A prepared statement's plan cache entry, current for the catalog.
    Cached(Arc<planner::CachedPlan>),
    /// Bound now, with what the binding read.
    Fresh(Box<sql::bound::BoundStatement>, catalog::Dependencies),
}

impl Binding {
    fn statement(&self) -> &sql::bound::BoundStatement {
        match self {
            Binding::Cached(c) => &c.bound,
            Binding::Fresh(b, _) => b,
        }
    }

    /// The statement to plan, and the cache entry it came from: a fresh binding's
    /// statement is taken (a binding planned once is bound again before it is planned
    /// again).
    fn take_statement(&mut self) -> (sql::bound::BoundStatement, Option<Arc<planner::CachedPlan>>) {
        match self {
            Binding::Cached(c) => (c.bound.clone(), Some(c.clone())),
            Binding::Fresh(b, _) => (
                std::mem::replace(
                    &mut **b,
                    sql::bound::BoundStatement::Nothing {
                        tag: "",
                        notices: Vec::new(),
                    },
                ),
                None,
            ),
        }
    }

    /// Would `catalog` bind it the same way?
    fn holds_for(&self, catalog: &catalog::CatalogSnapshot) -> bool {
        match self {
            Binding::Cached(c) => c.holds_for(catalog),
            Binding::Fresh(_, deps) => deps.hold_in(catalog),
        }
    }
}

/// A relation lock a statement needs.
struct WantedLock<'a> {
    oid: common::Oid,
    name: &'a str,
    mode: txn::lock::LockMode,
    nowait: bool,
}

/// The relation locks `b` needs, in the order to take them: PostgreSQL's modes for each
/// statement kind (see the module docs).
fn relation_locks<'a>(
    b: &'a sql::bound::BoundStatement,
    catalog: &'a catalog::CatalogSnapshot,
    out: &mut Vec<WantedLock<'a>>,
) {
    use sql::bound::BoundStatement as B;
    use txn::lock::LockMode as M;
    fn add<'a>(out: &mut Vec<WantedLock<'a>>, t: &'a catalog::TableDesc, mode: M) {
        out.push(WantedLock {
            oid: t.oid,
            name: &t.name,
            mode,
            nowait: false,
        })
    }
    match b {
        B::Query(q) | B::CopyTo { query: q, .. } => {
            scanned_tables(&q.plan, false, &mut |t, locked| {
                add(out, t, if locked { M::RowShare } else { M::AccessShare })
            })
        }
        B::CopyFrom(c) => {
            add(out, &c.table, M::RowExclusive);
            c.fks.tables().for_each(|t| add(out, t, M::RowShare));
        }
        B::Insert(i) => {
            add(out, &i.table, M::RowExclusive);
            scanned_tables(&i.source, false, &mut |t, _| add(out, t, M::AccessShare));
            i.fks.tables().for_each(|t| add(out, t, M::RowShare));
        }
        B::Update(u) => {
            add(out, &u.table, M::RowExclusive);
            u.fks.tables().for_each(|t| add(out, t, M::RowShare));
        }
        B::Delete(d) => {
            add(out, &d.table, M::RowExclusive);
            d.fks.tables().for_each(|t| add(out, t, M::RowShare));
        }
        B::Nothing { .. } => {}
        // ALTER TABLE ONLY: the parent alone changes.
        B::ChangeTable {
            table, only: true, ..
        } => add(out, table, M::AccessExclusive),
        B::AddKey { table, .. }
        | B::AddColumn { table, .. }
        | B::ChangeTable { table, .. }
        | B::AddCheck { table, .. }
        | B::DropConstraint(sql::bound::ConstraintDrop::Check { table, .. }) => {
            add(out, table, M::AccessExclusive);
            // An ALTER of a partitioned table changes its partitions alike.
            for t in catalog.descendants_ref(table.oid) {
                add(out, t, M::AccessExclusive);
            }
        }
        // PostgreSQL's COMMENT takes ShareUpdateExclusive on the relation: a comment is
        // no change to what readers and writers of the table see.
        B::Comment(c) => add(out, &c.table, M::ShareUpdateExclusive),
        B::AddForeignKey {
            table, referenced, ..
        } => {
            add(out, table, M::ShareRowExclusive);
            // A partitioned table's rows are its partitions': none is written while
            // they are checked.
            for t in catalog.descendants_ref(table.oid) {
                add(out, t, M::ShareRowExclusive);
            }
            add(out, referenced, M::ShareRowExclusive);
        }
        B::DropConstraint(sql::bound::ConstraintDrop::ForeignKey {
            table, referenced, ..
        }) => {
            add(out, table, M::AccessExclusive);
            if let Some(r) = referenced {
                add(out, r, M::AccessExclusive);
            }
        }
        B::DropConstraint(sql::bound::ConstraintDrop::Key {
            table, dependents, ..
        })
        | B::DropColumn(sql::bound::ColumnDrop {
            table, dependents, ..
        }) => {
            add(out, table, M::AccessExclusive);
            for (t, _) in dependents {
                add(out, t, M::AccessExclusive);
            }
            for t in catalog.descendants_ref(table.oid) {
                add(out, t, M::AccessExclusive);
            }
        }
        B::Truncate { tables, restart } => {
            for t in tables {
                add(out, t, M::AccessExclusive);
                // TRUNCATE of a partitioned table empties its partitions.
                for t in catalog.descendants_ref(t.oid) {
                    add(out, t, M::AccessExclusive);
                }
            }
            // RESTART IDENTITY gives the sequences new storage, as ALTER SEQUENCE
            // RESTART does; PostgreSQL locks them so too.
            for s in restart {
                out.push(WantedLock {
                    oid: s.oid,
                    name: &s.name,
                    mode: M::AccessExclusive,
                    nowait: false,
                });
            }
        }
        // ATTACH: the parent ShareUpdateExclusive (PostgreSQL 12+: its readers and
        // writers go on beside it), the table attached and the DEFAULT partition whose
        // rows are checked AccessExclusive (partition rule 5).
        B::AttachPartition { table, of } => {
            add(out, &of.parent, M::ShareUpdateExclusive);
            add(out, table, M::AccessExclusive);
            if let Some(d) = catalog
                .partitions(of.parent.oid)
                .and_then(|p| p.default_partition())
                .and_then(|d| catalog.table_by_oid(d))
            {
                add(out, d, M::AccessExclusive);
            }
        }
        // DETACH CONCURRENTLY: ShareUpdateExclusive on the parent, readers and writers
        // going on beside it; on the partition too to mark it, AccessExclusive to finish
        // (partition rule 6).
        B::DetachPartition {
            parent,
            table,
            step,
        } => {
            use sql::bound::DetachStep;
            let (on_parent, on_table) = match step {
                DetachStep::Whole => (M::AccessExclusive, M::AccessExclusive),
                DetachStep::Mark => (M::ShareUpdateExclusive, M::ShareUpdateExclusive),
                DetachStep::Finish => (M::ShareUpdateExclusive, M::AccessExclusive),
            };
            add(out, parent, on_parent);
            add(out, table, on_table);
        }
        B::CreateTable {
            referenced,
            partition_of,
            ..
        } => {
            for t in referenced {
                add(out, t, M::ShareRowExclusive);
            }
            // PostgreSQL's lock for a new partition: no other partition of the parent
            // comes or goes while its bound is checked against theirs.
            if let Some(of) = partition_of {
                add(out, &of.parent, M::AccessExclusive);
            }
        }
        // OWNED BY locks its table AccessShare (so it is not dropped meanwhile).
        B::Sequence(sql::bound::SequenceDdl::Create { owned_by, .. }) => {
            if let Some(t) = owned_by.and_then(|(t, _)| catalog.table_by_oid(t)) {
                add(out, t, M::AccessShare);
            }
        }
        B::Sequence(sql::bound::SequenceDdl::Alter { seq, owned_by, .. }) => {
            out.push(WantedLock {
                oid: seq.oid,
                name: &seq.name,
                mode: M::ShareRowExclusive,
                nowait: false,
            });
            let new_owner = owned_by.filter(|o| Some(*o) != seq.owned_by);
            if let Some(t) = new_owner.and_then(|(t, _)| catalog.table_by_oid(t)) {
                add(out, t, M::AccessShare);
            }
        }
        B::Explain { inner, .. } => relation_locks(inner, catalog, out),
        B::Sequence(sql::bound::SequenceDdl::Drop { sequences, .. }) => {
            for d in sequences {
                out.push(WantedLock {
                    oid: d.sequence.oid,
                    name: &d.sequence.name,
                    mode: M::AccessExclusive,
                    nowait: false,
                });
                // CASCADE removes DEFAULTs from tables: their descriptors change.
                for t in d
                    .defaults
                    .iter()
                    .filter_map(|&(t, _)| catalog.table_by_oid(t))
                {
                    add(out, t, M::AccessExclusive);
                }
            }
        }
        B::DropTables {
            tables,
            foreign_keys,
            partition_parents,
            ..
        } => {
            for t in partition_parents.iter().chain(tables) {
                add(out, t, M::AccessExclusive);
            }
            for (t, _) in foreign_keys {
                add(out, t, M::AccessExclusive);
            }
        }
        B::CreateIndex { table, .. } => {
            add(out, table, M::Share);
            // A partitioned index is made on every partition.
            for t in catalog.descendants_ref(table.oid) {
                add(out, t, M::Share);
            }
        }
        B::DropIndexes { indexes, .. } => {
            for (t, i) in indexes {
                add(out, t, M::AccessExclusive);
                out.push(WantedLock {
                    oid: i.oid,
                    name: &i.name,
                    mode: M::AccessExclusive,
                    nowait: false,
                });
                for t in catalog.descendants_ref(t.oid) {
                    add(out, t, M::AccessExclusive);
                }
            }
        }
        B::Lock {
            tables,
            mode,
            nowait,
        } => {
            use sqlparser::ast::LockTableMode as L;
            let mode = match mode {
                L::AccessShare => M::AccessShare,
                L::RowShare => M::RowShare,
                L::RowExclusive => M::RowExclusive,
                L::ShareUpdateExclusive => M::ShareUpdateExclusive,
                L::Share => M::Share,
                L::ShareRowExclusive => M::ShareRowExclusive,
                L::Exclusive => M::Exclusive,
                L::AccessExclusive => M::AccessExclusive,
            };
            for t in tables {
                out.push(WantedLock {
                    oid: t.oid,
                    name: &t.name,
                    mode,
                    nowait: *nowait,
                });
            }
        }
    }
}

/// Calls `f` for every table a plan scans (system views are not tables), saying whether
/// its rows are locked (FOR UPDATE/SHARE: RowShare instead of AccessShare).
fn scanned_tables<'a>(
    p: &'a sql::bound::LogicalPlan,
    locked: bool,
    f: &mut dyn FnMut(&'a catalog::TableDesc, bool),
) {
    use sql::bound::LogicalPlan as L;
    match p {
        // A sequence is locked as a table is (DROP SEQUENCE waits for readers).
        L::Scan { table } | L::Sequence { table, .. } => f(table, locked),
        L::SystemView { .. } | L::Values { .. } | L::GenerateSeries { .. } | L::Unnest { .. } => {}
        L::Filter { input, .. }
        | L::Project { input, .. }
        | L::Aggregate { input, .. }
        | L::Sort { input, .. }
        | L::Distinct { input }
        | L::Limit { input, .. } => scanned_tables(input, locked, f),
        L::LockRows { input, .. } => scanned_tables(input, true, f),
        L::Join { left, right, .. } | L::SetOp { left, right, .. } => {
            scanned_tables(left, locked, f);
            scanned_tables(right, locked, f);
        }
    }
}

impl executor::portal::Shared for Database {
    fn pool(&self) -> &BufferPool {
        &self.pool
    }
    fn catalog(&self) -> &Catalog {
        &self.catalog
    }
    fn roots(&self) -> &access::nbtree::RootCache {
        &self.roots
    }
    fn sequences(&self) -> &access::sequence::Sequences {
        &self.sequences
    }
}

impl Backend for Database {
    type Session = session::Session;

    fn new_session(db: &Arc<Database>) -> session::Session {
        session::Session::new(db.clone())
    }

    /// A CancelRequest: cancel session `pid`'s statement if `key` is its own; else
    /// nothing (the client is told nothing either way, as in PostgreSQL).
    fn cancel_request(&self, pid: i32, key: i32) {
        let sent = u32::try_from(pid).is_ok_and(|pid| {
            self.txns
                .signal_backend(pid, txn::activity::Signal::Cancel, Some(key))
        });
        tracing::debug!(pid, sent, "cancel request");
    }
}

/// A running server.
pub struct Server {
    addr: SocketAddr,
    db: Arc<Database>,
    stop: watch::Sender<bool>,
    accept_task: tokio::task::JoinHandle<()>,
    checkpointer: Checkpointer,
    autovacuum: Option<Autovacuum>,
}

/// The background checkpointer: a checkpoint every `checkpoint_timeout_secs`, or sooner
/// when `max_wal_size_mb` of WAL was written since the last one.
struct Checkpointer {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

/// The autovacuum worker: every `autovacuum_naptime_ms`, VACUUM the tables whose
/// changed rows passed their threshold (`Database::autovacuum_round`).
struct Autovacuum {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Autovacuum {
    fn start(db: Arc<Database>, config: &Config) -> Option<Autovacuum> {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::time::{Duration, Instant};
        if !config.autovacuum {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let nap = Duration::from_millis(config.autovacuum_naptime_ms.max(10));
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("autovacuum".into())
            .spawn(move || {
                let tx = db.background_tx();
                let mut last = Instant::now();
                while !stopping.load(Ordering::Acquire) {
                    std::thread::sleep(nap.min(Duration::from_millis(100)));
                    if last.elapsed() < nap {
                        continue;
                    }
                    last = Instant::now();
                    if let Err(e) = db.autovacuum_round(&tx) {
                        tracing::error!(error = %e.message, "autovacuum failed");
                    }
                }
            })
            .expect("spawn the autovacuum thread");
        Some(Autovacuum { stop, thread })
    }

    fn stop(self) {
        self.stop.store(true, std::sync::atomic::Ordering::Release);
        let _ = self.thread.join();
    }
}

impl Checkpointer {
    fn start(db: Arc<Database>, config: &Config) -> Checkpointer {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::time::{Duration, Instant};
        let stop = Arc::new(AtomicBool::new(false));
        let timeout = Duration::from_secs(config.checkpoint_timeout_secs.max(1));
        let max_wal = config.max_wal_size_mb.max(1) << 20;
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("checkpointer".into())
            .spawn(move || {
                let mut last = Instant::now();
                while !stopping.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(100));
                    let wal = db.wal();
                    let written = wal.insert_lsn().saturating_sub(wal.redo_lsn());
                    if last.elapsed() < timeout && written < max_wal {
                        continue;
                    }
                    last = Instant::now();
                    if let Err(e) = db.checkpoint() {
                        tracing::error!(error = %e.message, "checkpoint failed");
                    }
                }
            })
            .expect("spawn the checkpointer thread");
        Checkpointer { stop, thread }
    }

    fn stop(self) {
        self.stop.store(true, std::sync::atomic::Ordering::Release);
        let _ = self.thread.join();
    }
}

impl Server {
    /// Open the data directory and start accepting connections.
    pub async fn start(config: &Config) -> PgResult<Server> {
        let db = Arc::new(Database::open(config)?);
        let listener = TcpListener::bind(&config.listen)
            .await
            .map_err(|e| PgError::io(format!("could not listen on {}", config.listen), e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| PgError::io("local address", e))?;
        let (stop, mut stopped) = watch::channel(false);
        let handlers = wire::Handlers::new(db.clone());
        let accept_task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = stopped.changed() => break,
                    accepted = listener.accept() => match accepted {
                        Ok((socket, peer)) => {
                            tracing::debug!(%peer, "connection accepted");
                            let started = socket
                                .into_std()
                                .and_then(|s| wire::spawn_connection_thread(s, handlers.clone()));
                            if let Err(e) = started {
                                tracing::warn!(%peer, error = %e, "could not start a session");
                            }
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "accept failed");
                            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                        }
                    },
                }
            }
        });
        tracing::info!(%addr, data_dir = %config.data_dir.display(), "myriad is ready to accept connections");
        let checkpointer = Checkpointer::start(db.clone(), config);
        let autovacuum = Autovacuum::start(db.clone(), config);
        Ok(Server {
            addr,
            db,
            stop,
            accept_task,
            checkpointer,
            autovacuum,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The open database (for tests that drive background work by hand).
    pub fn database(&self) -> &Arc<Database> {
        &self.db
    }

    /// Stop accepting, then flush everything to disk.
    pub async fn shutdown(self) -> PgResult<()> {
        let _ = self.stop.send(true);
        let _ = self.accept_task.await;
        let db = self.db.clone();
        let checkpointer = self.checkpointer;
        let autovacuum = self.autovacuum;
        tokio::task::spawn_blocking(move || {
            if let Some(a) = autovacuum {
                a.stop();
            }
            checkpointer.stop();
            db.shutdown_checkpoint()
        })
        .await
        .map_err(|e| PgError::internal(format!("checkpoint task failed: {e}")))??;
        tracing::info!("database shut down cleanly");
        Ok(())
    }
}
