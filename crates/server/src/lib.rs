//! The `myriad` server: listener, sessions, statement dispatch, configuration.
//!
//! # Life of a query
//!
//! 1. [`Server::start`] accepts a TCP connection and hands it to
//!    `wire::spawn_connection_thread`, whose loop runs the startup handshake (trust auth,
//!    ParameterStatus of a PostgreSQL 15 server).
//! 2. Each connection runs on a thread of its own (`wire::spawn_connection_thread`, a
//!    single-threaded runtime, as PostgreSQL has a process per connection). A `Query`
//!    message reaches `wire`'s query handler, which calls [`Database::execute_simple`]
//!    right there, blocking only that connection.
//! 3. `sql::parser::parse` parses the whole string into statements (a syntax error anywhere
//!    runs nothing, as in PostgreSQL).
//! 4. For each statement, [`Database`] takes the statement lock (see below), takes the
//!    current `catalog::CatalogSnapshot`, and `sql::Binder::bind` resolves names and types.
//! 5. `planner::plan` turns the bound statement into a plan (filters pushed into scans).
//! 6. `executor::execute` runs it: operators pull rows from `access::heapam::HeapScan`,
//!    which reads pages through `storage::bufmgr::BufferPool` from `storage::smgr`.
//! 7. The rows and command tag go back to `wire`, which encodes RowDescription, DataRow
//!    and CommandComplete and flushes once, with ReadyForQuery.
//!
//! Concurrency (temporary, until the transactions issue): one reader-writer lock over
//! statements: queries share it, anything that writes takes it alone. A panic in one
//! statement becomes an XX000 error for that session only.

pub mod config;

use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use catalog::Catalog;
use common::{PgError, PgResult, SqlState};
use parking_lot::RwLock;
use storage::bufmgr::BufferPool;
use storage::smgr::Smgr;
use storage::vfs::{OsVfs, Vfs};
use storage::xlog::{self, Wal, WalOptions};
use tokio::net::TcpListener;
use tokio::sync::watch;
use wire::{Backend, Column, Completed, StatementOutcome};

pub use config::Config;

/// One open data directory: catalog, storage, buffer pool, write-ahead log.
pub struct Database {
    catalog: Catalog,
    pool: BufferPool,
    /// Btree roots, cached for every index (nbtree rule 6).
    roots: access::nbtree::RootCache,
    wal: Arc<Wal>,
    /// The temporary statement lock (see the module docs).
    statement_lock: RwLock<()>,
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
        let smgr = Arc::new(Smgr::new(vfs.clone(), data_dir)?);
        let mut pool = BufferPool::new(smgr, config.buffer_pool_pages);
        // Replay hands catalog records to the catalog; checkpoints save its state
        // (storage wal rule 7).
        let (wal, recovery) = xlog::open_and_recover_with(
            vfs,
            data_dir,
            &mut pool,
            WalOptions {
                segment_size: config.wal_segment_size,
                synchronous_commit: config.synchronous_commit,
            },
            &mut |r| catalog.redo(&r.payload),
            &|| catalog.compact(),
        )?;
        catalog.attach_wal(wal.clone());
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
            statement_lock: RwLock::new(()),
        })
    }

    /// Write every dirty page and record a redo point in the log.
    pub fn checkpoint(&self) -> PgResult<()> {
        xlog::checkpoint_with(&self.pool, &self.wal, &|| self.catalog.compact())
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

    fn execute_one(
        &self,
        stmt: &sql::parser::Statement,
        sql_text: &str,
    ) -> PgResult<executor::StatementResult> {
        let _shared;
        let _exclusive;
        // Statements that only read share the lock.
        if matches!(stmt, sql::parser::Statement::Query(_)) {
            _shared = self.statement_lock.read();
        } else {
            _exclusive = self.statement_lock.write();
        }
        let snapshot = self.catalog.snapshot();
        let bound = sql::Binder::new(&snapshot, sql_text).bind(stmt)?;
        let planned = planner::plan(bound);
        let cx = executor::ExecContext {
            pool: &self.pool,
            catalog: &self.catalog,
            roots: &self.roots,
        };
        let result = executor::execute(planned, &cx);
        // Durable before the client hears of it (unless synchronous_commit is off). Until
        // transactions exist, every statement is its own transaction.
        if !matches!(stmt, sql::parser::Statement::Query(_)) {
            self.wal.commit()?;
        }
        result
    }
}

fn to_wire(r: executor::StatementResult) -> (Vec<PgError>, Completed) {
    let columns = r.columns.map(|cols| {
        cols.into_iter()
            .map(|c| Column {
                name: c.name,
                table_oid: c.table_oid,
                column_number: c.column_number,
                type_oid: c.ty.oid(),
                type_size: c.ty.typlen(),
                type_modifier: c.ty.typmod(),
            })
            .collect()
    });
    (
        r.notices,
        Completed {
            columns,
            rows: r.rows,
            tag: r.tag,
        },
    )
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

impl Backend for Database {
    fn execute_simple(&self, sql_text: &str) -> Vec<StatementOutcome> {
        let stmts = match sql::parser::parse(sql_text) {
            Ok(s) => s,
            Err(e) => {
                return vec![StatementOutcome {
                    notices: vec![],
                    result: Err(e),
                }];
            }
        };
        let mut out = Vec::with_capacity(stmts.len());
        for stmt in &stmts {
            let result =
                std::panic::catch_unwind(AssertUnwindSafe(|| self.execute_one(stmt, sql_text)))
                    .unwrap_or_else(|p| {
                        let msg = panic_message(p.as_ref());
                        tracing::error!(panic = %msg, statement = %stmt, "statement panicked");
                        Err(PgError::new(
                            SqlState::INTERNAL_ERROR,
                            format!("internal error: {msg}"),
                        ))
                    });
            match result {
                Ok(r) => {
                    let (notices, done) = to_wire(r);
                    out.push(StatementOutcome {
                        notices,
                        result: Ok(done),
                    });
                }
                Err(e) => {
                    out.push(StatementOutcome {
                        notices: vec![],
                        result: Err(e),
                    });
                    break;
                }
            }
        }
        out
    }
}

/// A running server.
pub struct Server {
    addr: SocketAddr,
    db: Arc<Database>,
    stop: watch::Sender<bool>,
    accept_task: tokio::task::JoinHandle<()>,
    checkpointer: Checkpointer,
}

/// The background checkpointer: a checkpoint every `checkpoint_timeout_secs`, or sooner
/// when `max_wal_size_mb` of WAL was written since the last one.
struct Checkpointer {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<()>,
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
        Ok(Server {
            addr,
            db,
            stop,
            accept_task,
            checkpointer,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stop accepting, then flush everything to disk. Statements already running finish
    /// first: the checkpoint waits for the statement lock.
    pub async fn shutdown(self) -> PgResult<()> {
        let _ = self.stop.send(true);
        let _ = self.accept_task.await;
        let db = self.db.clone();
        let checkpointer = self.checkpointer;
        tokio::task::spawn_blocking(move || {
            checkpointer.stop();
            db.shutdown_checkpoint()
        })
        .await
        .map_err(|e| PgError::internal(format!("checkpoint task failed: {e}")))??;
        tracing::info!("database shut down cleanly");
        Ok(())
    }
}
