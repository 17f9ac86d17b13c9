//! The PostgreSQL v3 wire protocol, on the `pgwire` crate.
//!
//! This layer knows messages, not SQL. The layer above implements [`Backend`]: given a
//! query string it runs every statement (synchronously, on a blocking thread, never on the
//! async runtime's core threads) and reports one [`StatementOutcome`] per statement. This
//! layer turns them into RowDescription / DataRow / CommandComplete / ErrorResponse /
//! NoticeResponse messages.
//!
//! Rules kept here (research notes, clients.md §3 and §6):
//! - One socket write per Query: every message is `feed`-ed into the connection's buffer
//!   and only ReadyForQuery flushes, as PostgreSQL does.
//! - ParameterStatus reports a PostgreSQL 15 version (`server_version` decides which
//!   catalog queries psql sends and whether pgbench uses COPY FREEZE) and PostgreSQL's
//!   defaults (`DateStyle = ISO, MDY`), not pgwire's.
//! - Authentication is trust: the server listens on loopback by default.
//! - A malformed message ends that connection (pgwire's decoder), never the server.

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::{BufMut, BytesMut};
use common::{PgError, Value};
use futures::{Sink, SinkExt};
use pgwire::api::auth::{
    ServerParameterProvider, StartupHandler, finish_authentication, protocol_negotiation,
    save_startup_parameters_to_metadata,
};
use pgwire::api::query::SimpleQueryHandler;
use pgwire::api::results::Response;
use pgwire::api::store::PortalStore;
use pgwire::api::{
    ClientInfo, ClientPortalStore, PgWireConnectionState, PgWireServerHandlers,
    PidSecretKeyGenerator, RandomPidSecretKeyGenerator,
};
use pgwire::error::{PgWireError, PgWireResult};
use pgwire::messages::data::{DataRow, FieldDescription, RowDescription};
use pgwire::messages::response::{
    CommandComplete, EmptyQueryResponse, ErrorResponse, NoticeResponse, ReadyForQuery,
    TransactionStatus,
};
use pgwire::messages::simplequery::Query;
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage};

/// The PostgreSQL version Myriad reports: clients pick their SQL by it.
pub const SERVER_VERSION: &str = concat!("15.0 (Myriad ", env!("CARGO_PKG_VERSION"), ")");

/// A result column as RowDescription describes it.
#[derive(Clone, Debug)]
pub struct Column {
    pub name: String,
    pub table_oid: u32,
    pub column_number: i16,
    pub type_oid: u32,
    pub type_size: i16,
    pub type_modifier: i32,
}

/// A statement that ran to completion.
#[derive(Debug, Default)]
pub struct Completed {
    /// `Some` if the statement returns rows (RowDescription is sent even for zero rows).
    pub columns: Option<Vec<Column>>,
    pub rows: Vec<Vec<Value>>,
    pub tag: String,
}

/// What one statement of a query string did.
#[derive(Debug)]
pub struct StatementOutcome {
    pub notices: Vec<PgError>,
    pub result: Result<Completed, PgError>,
}

/// The database, as the protocol layer sees it.
pub trait Backend: Send + Sync + 'static {
    /// Run every statement of a simple Query, stopping after the first error. Blocking:
    /// the caller runs it on a blocking thread.
    fn execute_simple(&self, sql: &str) -> Vec<StatementOutcome>;
}

/// The pgwire handlers for one server: shared by all its connections.
pub struct Handlers<B: Backend> {
    backend: Arc<B>,
}

impl<B: Backend> Handlers<B> {
    pub fn new(backend: Arc<B>) -> Arc<Handlers<B>> {
        Arc::new(Handlers { backend })
    }
}

impl<B: Backend> PgWireServerHandlers for Handlers<B> {
    fn simple_query_handler(&self) -> Arc<impl SimpleQueryHandler> {
        Arc::new(QueryHandler {
            backend: self.backend.clone(),
        })
    }

    fn startup_handler(&self) -> Arc<impl StartupHandler> {
        Arc::new(Startup)
    }
}

struct Startup;

/// PostgreSQL 15's ParameterStatus values, as captured from a real server.
struct Parameters;

impl ServerParameterProvider for Parameters {
    fn server_parameters<C: ClientInfo>(&self, client: &C) -> Option<HashMap<String, String>> {
        let meta = client.metadata();
        let mut p = HashMap::new();
        let mut set = |k: &str, v: &str| {
            p.insert(k.to_string(), v.to_string());
        };
        set("server_version", SERVER_VERSION);
        set("server_encoding", "UTF8");
        set("client_encoding", "UTF8");
        set("DateStyle", "ISO, MDY");
        set("IntervalStyle", "postgres");
        set("integer_datetimes", "on");
        set("standard_conforming_strings", "on");
        set("TimeZone", "Etc/UTC");
        set("is_superuser", "on");
        set("default_transaction_read_only", "off");
        set("in_hot_standby", "off");
        set(
            "application_name",
            meta.get("application_name")
                .map(String::as_str)
                .unwrap_or(""),
        );
        set(
            "session_authorization",
            meta.get("user").map(String::as_str).unwrap_or("postgres"),
        );
        Some(p)
    }
}

#[async_trait]
impl StartupHandler for Startup {
    async fn on_startup<C>(
        &self,
        client: &mut C,
        message: PgWireFrontendMessage,
    ) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        if let PgWireFrontendMessage::Startup(ref startup) = message {
            protocol_negotiation(client, startup).await?;
            save_startup_parameters_to_metadata(client, startup);
            let (pid, key) = PIDS.generate(client);
            client.set_pid_and_secret_key(pid, key);
            finish_authentication(client, &Parameters).await?;
        }
        Ok(())
    }
}

static PIDS: std::sync::LazyLock<RandomPidSecretKeyGenerator> =
    std::sync::LazyLock::new(RandomPidSecretKeyGenerator::default);

struct QueryHandler<B: Backend> {
    backend: Arc<B>,
}

/// PostgreSQL's ErrorResponse / NoticeResponse fields for an error.
fn error_fields(e: &PgError) -> Vec<(u8, String)> {
    let sev = e.severity.as_str().to_string();
    let mut f = vec![
        (b'S', sev.clone()),
        (b'V', sev),
        (b'C', e.code.0.to_string()),
        (b'M', e.message.clone()),
    ];
    if let Some(d) = &e.detail {
        f.push((b'D', d.clone()));
    }
    if let Some(h) = &e.hint {
        f.push((b'H', h.clone()));
    }
    if let Some(p) = e.position {
        f.push((b'P', p.to_string()));
    }
    f
}

fn row_description(columns: &[Column]) -> RowDescription {
    RowDescription::new(
        columns
            .iter()
            .map(|c| {
                FieldDescription::new(
                    c.name.clone(),
                    c.table_oid as i32,
                    c.column_number,
                    c.type_oid,
                    c.type_size,
                    c.type_modifier,
                    0,
                )
            })
            .collect(),
    )
}

/// A DataRow in text format.
fn data_row(row: &[Value], buf: &mut BytesMut) -> DataRow {
    buf.clear();
    for v in row {
        match v.to_text() {
            None => buf.put_i32(-1),
            Some(s) => {
                buf.put_i32(s.len() as i32);
                buf.put_slice(s.as_bytes());
            }
        }
    }
    DataRow::new(buf.split(), row.len() as i16)
}

fn is_empty_query(q: &str) -> bool {
    q.trim_matches(|c: char| c.is_whitespace() || c == ';')
        .is_empty()
}

#[async_trait]
impl<B: Backend> SimpleQueryHandler for QueryHandler<B> {
    async fn on_query<C>(&self, client: &mut C, query: Query) -> PgWireResult<()>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        client.set_state(PgWireConnectionState::QueryInProgress);
        if is_empty_query(&query.query) {
            client
                .feed(PgWireBackendMessage::EmptyQueryResponse(
                    EmptyQueryResponse::new(),
                ))
                .await?;
        } else {
            let backend = self.backend.clone();
            let sql = query.query;
            let outcomes =
                match tokio::task::spawn_blocking(move || backend.execute_simple(&sql)).await {
                    Ok(o) => o,
                    Err(e) => vec![StatementOutcome {
                        notices: vec![],
                        result: Err(PgError::internal(format!(
                            "statement execution failed: {e}"
                        ))),
                    }],
                };
            let mut buf = BytesMut::new();
            for o in outcomes {
                for n in &o.notices {
                    client
                        .feed(PgWireBackendMessage::NoticeResponse(NoticeResponse::new(
                            error_fields(n),
                        )))
                        .await?;
                }
                match o.result {
                    Ok(done) => {
                        if let Some(cols) = &done.columns {
                            client
                                .feed(PgWireBackendMessage::RowDescription(row_description(cols)))
                                .await?;
                            for r in &done.rows {
                                client
                                    .feed(PgWireBackendMessage::DataRow(data_row(r, &mut buf)))
                                    .await?;
                            }
                        }
                        client
                            .feed(PgWireBackendMessage::CommandComplete(CommandComplete::new(
                                done.tag,
                            )))
                            .await?;
                    }
                    Err(e) => {
                        client
                            .feed(PgWireBackendMessage::ErrorResponse(ErrorResponse::new(
                                error_fields(&e),
                            )))
                            .await?;
                        break;
                    }
                }
            }
        }
        client.set_state(PgWireConnectionState::ReadyForQuery);
        client
            .send(PgWireBackendMessage::ReadyForQuery(ReadyForQuery::new(
                TransactionStatus::Idle,
            )))
            .await?;
        Ok(())
    }

    async fn do_query<C>(&self, _client: &mut C, _query: &str) -> PgWireResult<Vec<Response>>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        // `on_query` above answers every Query itself.
        Ok(Vec::new())
    }
}

/// Serve one accepted connection until it closes.
pub async fn serve_connection<B: Backend>(
    socket: tokio::net::TcpStream,
    handlers: Arc<Handlers<B>>,
) {
    if let Err(e) = pgwire::tokio::process_socket(socket, None, handlers).await {
        tracing::debug!(error = %e, "connection ended with an error");
    }
}
