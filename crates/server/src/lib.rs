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
//!    runs nothing, as in PostgreSQL).
//! 4. For each statement, the session starts a transaction if none is open and takes a
//!    snapshot; [`Database`] takes the statement lock (see below) and the current
//!    `catalog::CatalogSnapshot`, and `sql::Binder::bind` resolves names and types.
//! 5. `planner::plan` turns the bound statement into a plan (filters pushed into scans).
//! 6. `executor::execute` runs it: operators pull rows from `access::heapam::HeapScan`,
//!    which reads pages through `storage::bufmgr::BufferPool` from `storage::smgr`.
//! 7. The rows and command tag go back to `wire`, which encodes RowDescription, DataRow
//!    and CommandComplete and flushes once, with ReadyForQuery.
//!
//! Transactions: each connection has a [`session::Session`] holding its `txn::Tx`. A
//! statement outside a transaction block runs in an implicit transaction (one per query
//! string, as PostgreSQL); BEGIN ... COMMIT spans statements. Reads and writes run
//! concurrently: versions and snapshots (MVCC) keep them apart, and writers of one row
//! wait for each other through its `t_xmax`. DDL still runs alone: it takes the
//! statement lock exclusively (queries and DML share it) until relation locks exist.
//! A panic in one statement becomes an XX000 error for that session only.

pub mod config;
pub mod session;

use std::net::SocketAddr;
use std::sync::Arc;

use catalog::Catalog;
use common::{PgError, PgResult};
use parking_lot::RwLock;
use storage::bufmgr::BufferPool;
use storage::smgr::Smgr;
use storage::vfs::{OsVfs, Vfs};
use storage::xlog::{self, Wal, WalOptions};
use tokio::net::TcpListener;
use tokio::sync::watch;
use wire::Backend;

pub use config::Config;

/// One open data directory: catalog, storage, buffer pool, write-ahead log.
pub struct Database {
    catalog: Catalog,
    pool: BufferPool,
    /// Btree roots, cached for every index (nbtree rule 6).
    roots: access::nbtree::RootCache,
    wal: Arc<Wal>,
    txns: Arc<txn::TxnManager>,
    /// DDL takes it exclusively, everything else shared (see the module docs).
    statement_lock: RwLock<()>,
    /// Session ids (what pg_backend_pid() and pg_locks call a pid).
    next_backend: std::sync::atomic::AtomicU32,
    /// Rows changed per table since its last VACUUM (autovacuum's trigger).
    activity: parking_lot::Mutex<std::collections::HashMap<common::Oid, TableActivity>>,
}

/// What autovacuum knows of a table.
#[derive(Clone, Copy, Debug, Default)]
struct TableActivity {
    /// Rows inserted, updated or deleted since the last VACUUM.
    changes: u64,
    /// Versions the last VACUUM left (live rows, roughly).
    tuples_after_vacuum: u64,
}

/// Autovacuum vacuums a table once its changes exceed this plus a fraction of its size
/// (PostgreSQL's `autovacuum_vacuum_threshold` and `autovacuum_vacuum_scale_factor`).
const AUTOVACUUM_THRESHOLD: u64 = 50;
const AUTOVACUUM_SCALE_PERCENT: u64 = 20;

/// What upper layers save at each checkpoint (storage wal rule 7).
fn save_state(catalog: &Catalog, txns: &txn::TxnManager) -> PgResult<()> {
    catalog.compact()?;
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
                xlog::RecordKind::Xact => txns.redo(r),
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
            statement_lock: RwLock::new(()),
            next_backend: std::sync::atomic::AtomicU32::new(1),
            activity: parking_lot::Mutex::new(std::collections::HashMap::new()),
        })
    }

    /// Write every dirty page and record a redo point in the log.
    pub fn checkpoint(&self) -> PgResult<()> {
        xlog::checkpoint_with(&self.pool, &self.wal, &|| {
            save_state(&self.catalog, &self.txns)
        })
    }

    /// The transaction manager.
    pub fn txns(&self) -> &Arc<txn::TxnManager> {
        &self.txns
    }

    /// A clean shutdown: a checkpoint (which also saves the catalog) after the running
    /// statements.
    pub fn shutdown_checkpoint(&self) -> PgResult<()> {
        let _guard = self.statement_lock.write();
        self.checkpoint()
    }

    /// The write-ahead log.
    pub fn wal(&self) -> &Arc<Wal> {
        &self.wal
    }

    /// VACUUM `table` (every table if `None`), outside any transaction.
    fn vacuum(&self, table: Option<&sqlparser::ast::ObjectName>) -> PgResult<()> {
        let catalog = self.catalog.snapshot();
        let tables: Vec<_> = match table {
            Some(name) => {
                let ident = name
                    .0
                    .last()
                    .and_then(|p| p.as_ident())
                    .map(sql::binder::ident_name)
                    .unwrap_or_default();
                let t = catalog.table(&ident).ok_or_else(|| {
                    PgError::new(
                        common::SqlState::UNDEFINED_TABLE,
                        format!("relation \"{ident}\" does not exist"),
                    )
                })?;
                vec![t.clone()]
            }
            None => catalog.tables().cloned().collect(),
        };
        let _shared = self.statement_lock.read();
        for t in tables {
            self.vacuum_one(&t)?;
        }
        Ok(())
    }

    fn vacuum_one(&self, t: &catalog::TableDesc) -> PgResult<()> {
        let changes_before = self.activity.lock().get(&t.oid).map_or(0, |a| a.changes);
        let stats = executor::vacuum::vacuum_table(&self.pool, &self.roots, &self.txns, t)?;
        tracing::debug!(table = %t.name, ?stats, "vacuumed");
        let mut activity = self.activity.lock();
        let a = activity.entry(t.oid).or_default();
        a.changes = a.changes.saturating_sub(changes_before);
        a.tuples_after_vacuum = stats.tuples_remaining;
        Ok(())
    }

    /// Count rows a statement changed (autovacuum's trigger). One uncontended mutex per
    /// writing statement; sharding it is the fix if it ever shows in a profile.
    pub(crate) fn note_changes(&self, table: common::Oid, rows: u64) {
        if rows > 0 {
            self.activity.lock().entry(table).or_default().changes += rows;
        }
    }

    /// One round of autovacuum: VACUUM every table whose changes passed its threshold.
    /// Returns how many tables it vacuumed.
    pub fn autovacuum_round(&self) -> PgResult<usize> {
        let due: Vec<common::Oid> = self
            .activity
            .lock()
            .iter()
            .filter(|(_, a)| {
                a.changes
                    > AUTOVACUUM_THRESHOLD + a.tuples_after_vacuum * AUTOVACUUM_SCALE_PERCENT / 100
            })
            .map(|(oid, _)| *oid)
            .collect();
        let mut n = 0;
        for oid in due {
            let _shared = self.statement_lock.read();
            let Some(t) = self.catalog.snapshot().table_by_oid(oid).cloned() else {
                self.activity.lock().remove(&oid);
                continue;
            };
            self.vacuum_one(&t)?;
            n += 1;
        }
        Ok(n)
    }

    /// Bind, plan and run one statement in `tx`, seeing `snapshot`.
    fn execute_one(
        &self,
        stmt: &sql::parser::Statement,
        sql_text: &str,
        tx: &txn::Tx,
        snapshot: &txn::Snapshot,
    ) -> PgResult<executor::StatementResult> {
        let _shared;
        let _exclusive;
        if session::is_ddl(stmt) {
            _exclusive = self.statement_lock.write();
        } else {
            _shared = self.statement_lock.read();
        }
        let catalog = self.catalog.snapshot();
        let bound = sql::Binder::new(&catalog, sql_text).bind(stmt)?;
        let planned = planner::plan(bound);
        let cx = executor::ExecContext {
            pool: &self.pool,
            catalog: &self.catalog,
            roots: &self.roots,
            tx,
            snapshot,
        };
        let r = executor::execute(planned, &cx)?;
        if let Some((table, rows)) = r.changed {
            self.note_changes(table, rows);
        }
        Ok(r)
    }
}

impl Backend for Database {
    type Session = session::Session;

    fn new_session(db: &Arc<Database>) -> session::Session {
        session::Session::new(db.clone())
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
                let mut last = Instant::now();
                while !stopping.load(Ordering::Acquire) {
                    std::thread::sleep(nap.min(Duration::from_millis(100)));
                    if last.elapsed() < nap {
                        continue;
                    }
                    last = Instant::now();
                    if let Err(e) = db.autovacuum_round() {
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

    /// Stop accepting, then flush everything to disk. Statements already running finish
    /// first: the checkpoint waits for the statement lock.
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
