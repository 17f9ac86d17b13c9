//! The PostgreSQL v3 wire protocol, on the `pgwire` crate.
//!
//! This layer knows messages, not SQL. The layer above implements [`Backend`], which makes
//! one [`Session`] per connection: given a query string, the session runs every statement
//! (synchronously, on the connection's own thread: [`spawn_connection_thread`], which
//! owns the session), reports one [`StatementOutcome`] per statement and its
//! transaction status ([`TxStatus`], for ReadyForQuery). A statement whose rows go on
//! ([`Completed::more`]) has them sent in batches, each flushed before the next is
//! asked for ([`Session::fetch`]), and an Execute's rows likewise ([`ExecuteEnd::More`]).
//! This layer turns them into RowDescription / DataRow / CommandComplete / ErrorResponse /
//! NoticeResponse messages. The extended protocol's messages map one to one onto
//! [`Session::parse`], [`Session::bind`], [`Session::describe`], [`Session::execute`],
//! [`Session::close`] and [`Session::sync`] (`extended_message`); COPY's onto
//! [`Session::copy_data`], [`Session::copy_done`] and [`Session::copy_fail`]
//! (`copy_message`). Binary values: [`binary`].
//!
//! The crate's rules are in its README ("wire rule N"; research notes, clients.md §3
//! and §6): a connection's session lives on its own thread (1); one socket write per
//! query string and per Sync, one more per streamed batch (2); a connection holds one
//! batch of a result (3); notices go where PostgreSQL sends them (4); a malformed
//! message is 08P01, never a panic (5); the server presents itself as PostgreSQL 15,
//! with trust authentication (6).

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::{BufMut, BytesMut};
use common::value::TextContext;
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
    ClientInfo, ClientPortalStore, DefaultClient, PgWireConnectionState, PgWireServerHandlers,
};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::copy::{CopyData, CopyDone, CopyInResponse, CopyOutResponse};
use pgwire::messages::data::{
    DataRow, FieldDescription, NoData, ParameterDescription, RowDescription,
};
use pgwire::messages::extendedquery::{
    BindComplete, CloseComplete, ParseComplete, PortalSuspended,
};
use pgwire::messages::response::{
    CommandComplete, EmptyQueryResponse, ErrorResponse, GssEncResponse, NoticeResponse,
    ReadyForQuery, SslResponse, TransactionStatus,
};
use pgwire::messages::startup::SecretKey;
use pgwire::messages::{
    DecodeContext, PgWireBackendMessage, PgWireFrontendMessage, ProtocolVersion,
};
use pgwire::tokio::server::{PgWireMessageServerCodec, process_error, process_message};
use tokio_util::codec::Framed;

pub mod binary;
mod frame;

pub use common::session::SERVER_VERSION;

/// A result column as RowDescription describes it.
#[derive(Clone, Debug)]
pub struct Column {
    pub name: std::sync::Arc<str>,
    pub table_oid: u32,
    pub column_number: i16,
    pub type_oid: u32,
    pub type_size: i16,
    pub type_modifier: i32,
    /// The format its values are sent in: false text, true binary (from Bind).
    pub binary: bool,
}

/// A statement that ran to completion (or, for COPY FROM STDIN, started).
#[derive(Debug, Default)]
pub struct Completed {
    /// `Some` if the statement returns rows (RowDescription is sent even for zero rows).
    pub columns: Option<Vec<Column>>,
    pub rows: Vec<Vec<Value>>,
    pub tag: String,
    /// COPY FROM STDIN began, with this many columns: CopyInResponse is sent, the
    /// client's CopyData goes to [`Session::copy_data`] and the statement ends at
    /// [`Session::copy_done`] (or [`Session::copy_fail`]).
    pub copy_in: Option<usize>,
    /// COPY TO STDOUT: the number of columns and each line of data (CopyOutResponse,
    /// CopyData per line, CopyDone, then CommandComplete).
    pub copy_out: Option<(usize, Vec<Vec<u8>>)>,
    /// What the rows' text is shown in: the statement's session clock, zone and catalog
    /// (a later `SET TimeZone` in the same query string does not change them).
    pub text: TextContext,
    /// The statement's rows go on after `rows` (no tag yet): the connection sends what
    /// it has and asks [`Session::fetch`] for more until the statement ends, then
    /// [`Session::resume`] for the rest of the query string.
    pub more: bool,
    /// Notices the statement raised as it ran (not those of its start, which go
    /// before it): after its RowDescription, before its rows, as PostgreSQL sends them.
    pub raised: Vec<PgError>,
}

/// Rows of a query still running, for [`Session::fetch`].
#[derive(Debug)]
pub struct Fetched {
    pub rows: Vec<Vec<Value>>,
    /// COPY TO STDOUT: its lines instead of rows (CopyData each; CopyDone at the end).
    pub copy_lines: Option<Vec<Vec<u8>>>,
    pub text: TextContext,
    /// The rows go in binary (FETCH from a cursor declared BINARY), as the first did.
    pub binary: bool,
    /// Notices the statement raised making them: sent first.
    pub notices: Vec<PgError>,
    /// `None`: more rows follow. Else the statement ended, with its tag or its error.
    pub end: Option<Result<String, PgError>>,
}

/// What one statement of a query string did.
#[derive(Debug)]
pub struct StatementOutcome {
    pub notices: Vec<PgError>,
    pub result: Result<Completed, PgError>,
}

/// What Describe answers: a statement's parameter types (only for a statement) and the
/// columns it returns (`None`: NoData).
#[derive(Debug, Default)]
pub struct Description {
    pub params: Option<Vec<u32>>,
    pub columns: Option<Vec<Column>>,
}

/// A Bind message, for [`Session::bind`].
#[derive(Debug)]
pub struct BindRequest<'a> {
    pub portal: &'a str,
    pub statement: &'a str,
    pub param_formats: &'a [i16],
    pub params: Vec<Option<&'a [u8]>>,
    pub result_formats: &'a [i16],
}

/// How an Execute ended.
#[derive(Debug)]
pub enum ExecuteEnd {
    /// CommandComplete with this tag.
    Complete(String),
    /// The row limit was reached: PortalSuspended; a later Execute goes on.
    Suspended,
    /// A batch of rows, short of the limit: the connection sends them and calls
    /// [`Session::execute`] again with the rows left of the limit (the same Execute).
    More,
    /// The statement was empty: EmptyQueryResponse.
    Empty,
}

/// The rows of one Execute and how it ended.
#[derive(Debug)]
pub struct Executed {
    pub rows: Vec<Vec<Value>>,
    /// Per column: sent in binary (else text).
    pub binary: Vec<bool>,
    pub end: ExecuteEnd,
    /// What text columns are shown in (the session's at this Execute).
    pub text: TextContext,
    /// COPY TO STDOUT: its number of columns and lines, instead of rows. The first
    /// batch of an Execute starts with CopyOutResponse; CopyDone goes before its
    /// CommandComplete.
    pub copy_out: Option<(usize, Vec<Vec<u8>>)>,
}

/// What an Execute did: notices, then rows and an end, or an error.
#[derive(Debug)]
pub struct ExecuteOutcome {
    pub notices: Vec<PgError>,
    pub result: Result<Executed, PgError>,
}

/// Where a session's transaction stands, for ReadyForQuery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxStatus {
    /// No transaction block ('I').
    Idle,
    /// In a transaction block ('T').
    InBlock,
    /// In a failed transaction block: only ROLLBACK is accepted ('E').
    Failed,
}

/// One connection's session: its transaction and settings. Dropping it ends the
/// session (an open transaction is rolled back).
pub trait Session: 'static {
    /// Run every statement of a simple Query, stopping after the first error. Blocking:
    /// it runs on the connection's own thread.
    fn execute_simple(&mut self, sql: &str) -> Vec<StatementOutcome>;

    /// The transaction status ReadyForQuery reports.
    fn transaction_status(&self) -> TxStatus;

    /// The next rows of the statement whose outcome said `more` (at most `max_rows`).
    fn fetch(&mut self, _max_rows: usize) -> Fetched {
        Fetched {
            rows: Vec::new(),
            copy_lines: None,
            text: TextContext::detached(),
            binary: false,
            notices: Vec::new(),
            end: Some(Err(PgError::internal("no statement is running"))),
        }
    }

    /// Once a statement whose outcome said `more` has ended: the outcomes of the query
    /// string's remaining statements.
    fn resume(&mut self) -> Vec<StatementOutcome> {
        Vec::new()
    }

    /// Every statement of a simple Query, each one's rows all fetched: what a caller
    /// with no connection (a test, a fuzzer) reads.
    fn execute_all(&mut self, sql: &str) -> Vec<StatementOutcome> {
        let mut out = Vec::new();
        let mut next = self.execute_simple(sql);
        loop {
            let streaming = next
                .last()
                .is_some_and(|o| o.result.as_ref().is_ok_and(|c| c.more));
            out.append(&mut next);
            if !streaming {
                return out;
            }
            let Some(Ok(last)) = out.last_mut().map(|o| o.result.as_mut()) else {
                return out;
            };
            last.more = false;
            loop {
                let f = self.fetch(usize::MAX);
                let Some(Ok(last)) = out.last_mut().map(|o| o.result.as_mut()) else {
                    return out;
                };
                last.rows.extend(f.rows);
                if let (Some(lines), Some((_, all))) = (f.copy_lines, last.copy_out.as_mut()) {
                    all.extend(lines);
                }
                match f.end {
                    None => continue,
                    Some(Ok(tag)) => last.tag = tag,
                    Some(Err(e)) => {
                        out.push(StatementOutcome {
                            notices: vec![],
                            result: Err(e),
                        });
                        return out;
                    }
                }
                break;
            }
            next = self.resume();
        }
    }

    /// CopyData during COPY FROM STDIN. An error is kept and reported at CopyDone.
    fn copy_data(&mut self, data: &[u8]);

    /// CopyDone: the COPY's outcome, then the outcomes of the query string's remaining
    /// statements (the last may start another COPY).
    fn copy_done(&mut self) -> Vec<StatementOutcome>;

    /// CopyFail (or a message that does not belong in COPY): the COPY fails with
    /// `error`, which ends the query string.
    fn copy_fail(&mut self, error: PgError) -> Vec<StatementOutcome>;

    /// Parse: prepare `sql` (at most one statement) as statement `name` ("" is the
    /// unnamed one, which a new Parse replaces); `param_types` are OIDs, 0 where the
    /// server is to infer the type.
    fn parse(&mut self, name: &str, sql: &str, param_types: &[u32]) -> Result<(), PgError>;

    /// Bind: a portal from a prepared statement and parameter values.
    fn bind(&mut self, bind: BindRequest<'_>) -> Result<(), PgError>;

    /// Describe a statement (`portal` false) or a portal.
    fn describe(&mut self, portal: bool, name: &str) -> Result<Description, PgError>;

    /// Execute a portal, returning at most `max_rows` rows (0: all).
    fn execute(&mut self, portal: &str, max_rows: usize) -> ExecuteOutcome;

    /// Close a statement (`portal` false) or a portal; closing what does not exist is
    /// not an error.
    fn close(&mut self, portal: bool, name: &str);

    /// Sync: the end of an extended-protocol batch. Outside a transaction block, the
    /// batch's implicit transaction commits here (an error rolls it back).
    fn sync(&mut self) -> Result<(), PgError>;

    /// How long the client may leave the session idle before it is ended with FATAL
    /// 25P03 (`idle_in_transaction_session_timeout`, inside a transaction block); `None`:
    /// no limit.
    fn idle_timeout(&self) -> Option<std::time::Duration> {
        None
    }

    /// Reported settings whose values changed since the client was last told (name,
    /// value): sent as ParameterStatus right before ReadyForQuery, as PostgreSQL does.
    fn parameter_changes(&mut self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// The startup packet's parameters (`user`, `database`, `application_name`, and any
    /// setting a client sends there), once the connection is ready for queries.
    fn startup_parameters(&mut self, _params: &HashMap<String, String>) {}

    /// The process id and secret key BackendKeyData announces: what a CancelRequest for
    /// this session carries ([`Backend::cancel_request`]).
    fn backend_key(&self) -> (i32, i32) {
        (0, 0)
    }

    /// Why the connection may not start (FATAL, such as 53300 past `max_connections`).
    fn refusal(&self) -> Option<PgError> {
        None
    }

    /// The FATAL error that ends the connection once the session was asked to end
    /// (`pg_terminate_backend`): looked at after each message, and when
    /// [`Session::end_notify`] wakes the connection waiting for its client.
    fn terminating(&self) -> Option<PgError> {
        None
    }

    /// Notified when the session is asked to end.
    fn end_notify(&self) -> Option<Arc<tokio::sync::Notify>> {
        None
    }
}

/// What goes before ReadyForQuery: a ParameterStatus per changed setting; then the
/// ReadyForQuery itself, with the session's transaction status.
fn ready_messages<S: Session>(session: &mut S) -> Vec<PgWireBackendMessage> {
    let mut out: Vec<PgWireBackendMessage> = session
        .parameter_changes()
        .into_iter()
        .map(|(name, value)| {
            PgWireBackendMessage::ParameterStatus(pgwire::messages::startup::ParameterStatus::new(
                name, value,
            ))
        })
        .collect();
    out.push(ready_for_query(session.transaction_status()));
    out
}

/// The database, as the protocol layer sees it.
pub trait Backend: Send + Sync + 'static {
    type Session: Session;

    /// A session for a new connection.
    fn new_session(backend: &Arc<Self>) -> Self::Session;

    /// A CancelRequest for session `pid` with secret `key` (no reply is sent).
    fn cancel_request(&self, _pid: i32, _key: i32) {}
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
    /// Unused: `run_connection` answers every Query itself, with the session it owns.
    fn simple_query_handler(&self) -> Arc<impl SimpleQueryHandler> {
        Arc::new(NoQueries)
    }

    /// Unused by `run_connection`, which gives each connection its own (its session's
    /// key and refusal); pgwire's trait asks for one.
    fn startup_handler(&self) -> Arc<impl StartupHandler> {
        Arc::new(Startup {
            key: (0, 0),
            refusal: None,
        })
    }
}

/// A connection's startup: its session's BackendKeyData, or the FATAL error refusing it.
struct Startup {
    key: (i32, i32),
    refusal: Option<PgError>,
}

/// PostgreSQL 15's ParameterStatus values, as captured from a real server (wire rule 6).
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
            if let Some(e) = &self.refusal {
                return Err(wire_error(e));
            }
            let (pid, key) = self.key;
            client.set_pid_and_secret_key(pid, SecretKey::I32(key));
            finish_authentication(client, &Parameters).await?;
        }
        Ok(())
    }
}

/// pgwire's dispatcher asks for a simple-query handler; Query never reaches it
/// (`run_connection` answers it: [`query_message`]).
struct NoQueries;

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
    if let Some(w) = &e.context {
        f.push((b'W', w.to_string()));
    }
    f
}

fn row_description(columns: &[Column]) -> RowDescription {
    RowDescription::new(
        columns
            .iter()
            .map(|c| {
                FieldDescription::new(
                    c.name.to_string(),
                    c.table_oid as i32,
                    c.column_number,
                    c.type_oid,
                    c.type_size,
                    c.type_modifier,
                    c.binary as i16,
                )
            })
            .collect(),
    )
}

/// A DataRow: each column in text, or in binary where `binary` says so.
fn data_row(row: &[Value], binary: &[bool], text: &TextContext, buf: &mut BytesMut) -> DataRow {
    buf.clear();
    for (i, v) in row.iter().enumerate() {
        if binary.get(i).copied().unwrap_or(false) {
            binary::put_value(v, buf);
            continue;
        }
        match v.to_text(text) {
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
impl SimpleQueryHandler for NoQueries {
    async fn do_query<C>(&self, _client: &mut C, _query: &str) -> PgWireResult<Vec<Response>>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        Err(wire_error(&PgError::internal(
            "a Query reached pgwire's handler",
        )))
    }
}

/// A simple Query: every statement of its string, run on the connection's own thread
/// (`spawn_connection_thread`), which blocks only this connection and costs no hand-off
/// to another thread and back.
async fn query_message<S: Session, C>(
    client: &mut C,
    session: &mut S,
    query: &str,
) -> PgWireResult<()>
where
    C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send,
    PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
{
    client.set_state(PgWireConnectionState::QueryInProgress);
    if is_empty_query(query) {
        client
            .feed(PgWireBackendMessage::EmptyQueryResponse(
                EmptyQueryResponse::new(),
            ))
            .await?;
        return finish_query(client, session, Vec::new()).await;
    }
    let outcomes = session.execute_simple(query);
    finish_query(client, session, outcomes).await
}

/// Send what a query string's statements did (`outcomes`, then those of the statements
/// after each one whose rows stream), then ReadyForQuery; or stop after CopyInResponse,
/// when one starts COPY FROM STDIN.
async fn finish_query<S: Session, C>(
    client: &mut C,
    session: &mut S,
    mut outcomes: Vec<StatementOutcome>,
) -> PgWireResult<()>
where
    C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send,
    PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
{
    loop {
        // The session is to end: what its statements did goes out, but for the one
        // that was stopped, whose error is the FATAL one that ends the connection.
        if let Some(fatal) = session.terminating() {
            if outcomes.last().is_some_and(|o| o.result.is_err()) {
                outcomes.pop();
            }
            send_outcomes(client, outcomes).await?;
            return Err(wire_error(&fatal));
        }
        match send_outcomes(client, outcomes).await? {
            Sent::All => break,
            Sent::CopyIn => return Ok(()),
            Sent::More => {
                stream_rows(client, session).await?;
                outcomes = session.resume();
            }
        }
    }
    client.set_state(PgWireConnectionState::ReadyForQuery);
    let messages = ready_messages(session);
    send_all(client, messages).await?;
    Ok(())
}

/// Send `messages`, flushing once after the last.
async fn send_all<C>(client: &mut C, messages: Vec<PgWireBackendMessage>) -> PgWireResult<()>
where
    C: Sink<PgWireBackendMessage> + Unpin + Send,
    PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
{
    let n = messages.len();
    for (i, m) in messages.into_iter().enumerate() {
        if i + 1 == n {
            client.send(m).await?;
        } else {
            client.feed(m).await?;
        }
    }
    Ok(())
}

/// How [`send_outcomes`] left a query string.
enum Sent {
    /// Every statement's outcome went out.
    All,
    /// The last one started COPY FROM STDIN: CopyInResponse went out (flushed), the
    /// connection is in copy mode, and ReadyForQuery waits for the end of the data.
    CopyIn,
    /// The last one's rows go on ([`Completed::more`]): [`stream_rows`].
    More,
}

/// The rows of a running query after those its outcome carried, in batches: each
/// batch goes to the client (flushed) before the next is made, so the client has the
/// first rows while the rest are made, and a client that stops reading holds up only
/// its own query (wire rules 2 and 3). Ends with the statement's CommandComplete or
/// error.
async fn stream_rows<S: Session, C>(client: &mut C, session: &mut S) -> PgWireResult<()>
where
    C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send,
    PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
{
    let mut buf = BytesMut::new();
    loop {
        client.flush().await?;
        let f = session.fetch(STREAM_BATCH_ROWS);
        for n in &f.notices {
            client
                .feed(PgWireBackendMessage::NoticeResponse(NoticeResponse::new(
                    error_fields(n),
                )))
                .await?;
        }
        let copy = f.copy_lines.is_some();
        for line in f.copy_lines.into_iter().flatten() {
            client
                .feed(PgWireBackendMessage::CopyData(CopyData::new(line.into())))
                .await?;
        }
        let width = f.rows.first().map_or(0, Vec::len);
        let binary = vec![f.binary; width];
        for r in &f.rows {
            client
                .feed(PgWireBackendMessage::DataRow(data_row(
                    r, &binary, &f.text, &mut buf,
                )))
                .await?;
        }
        match f.end {
            None => {}
            Some(Ok(tag)) => {
                if copy {
                    client
                        .feed(PgWireBackendMessage::CopyDone(CopyDone::new()))
                        .await?;
                }
                client
                    .feed(PgWireBackendMessage::CommandComplete(CommandComplete::new(
                        tag,
                    )))
                    .await?;
                return Ok(());
            }
            Some(Err(e)) => {
                if session.terminating().is_none() {
                    client.feed(error_response(&e)).await?;
                }
                return Ok(());
            }
        }
    }
}

/// The rows a running query sends at most between two flushes (the session may send
/// fewer: it bounds a batch's bytes too).
pub const STREAM_BATCH_ROWS: usize = 1000;

/// Send what the statements of a query string did: each one's notices from before it
/// ran, then its RowDescription, the notices it raised running, its rows and its end
/// (wire rule 4), all fed, not flushed (wire rule 2).
async fn send_outcomes<C>(client: &mut C, outcomes: Vec<StatementOutcome>) -> PgWireResult<Sent>
where
    C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send,
    PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
{
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
                if let Some(columns) = done.copy_in {
                    client
                        .send(PgWireBackendMessage::CopyInResponse(CopyInResponse::new(
                            0,
                            columns as i16,
                            vec![0; columns],
                        )))
                        .await?;
                    client.set_state(PgWireConnectionState::CopyInProgress(false));
                    return Ok(Sent::CopyIn);
                }
                if let Some((columns, lines)) = done.copy_out {
                    client
                        .feed(PgWireBackendMessage::CopyOutResponse(CopyOutResponse::new(
                            0,
                            columns as i16,
                            vec![0; columns],
                        )))
                        .await?;
                    for line in lines {
                        client
                            .feed(PgWireBackendMessage::CopyData(CopyData::new(line.into())))
                            .await?;
                    }
                    if done.more {
                        return Ok(Sent::More);
                    }
                    client
                        .feed(PgWireBackendMessage::CopyDone(CopyDone::new()))
                        .await?;
                }
                if let Some(cols) = &done.columns {
                    client
                        .feed(PgWireBackendMessage::RowDescription(row_description(cols)))
                        .await?;
                }
                for n in &done.raised {
                    client
                        .feed(PgWireBackendMessage::NoticeResponse(NoticeResponse::new(
                            error_fields(n),
                        )))
                        .await?;
                }
                if let Some(cols) = &done.columns {
                    // Text, but for a cursor declared BINARY.
                    let binary: Vec<bool> = cols.iter().map(|c| c.binary).collect();
                    for r in &done.rows {
                        client
                            .feed(PgWireBackendMessage::DataRow(data_row(
                                r, &binary, &done.text, &mut buf,
                            )))
                            .await?;
                    }
                }
                if done.more {
                    return Ok(Sent::More);
                }
                client
                    .feed(PgWireBackendMessage::CommandComplete(CommandComplete::new(
                        done.tag,
                    )))
                    .await?;
            }
            Err(e) => {
                client.feed(error_response(&e)).await?;
                break;
            }
        }
    }
    Ok(Sent::All)
}

/// A message during COPY FROM STDIN: data, its end, or its failure (anything else
/// fails the COPY, as PostgreSQL does; Flush and Sync are ignored).
async fn copy_message<S: Session, C>(
    client: &mut C,
    session: &mut S,
    ty: u8,
    msg: PgWireFrontendMessage,
) -> PgWireResult<()>
where
    C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send,
    PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
{
    let outcomes = match msg {
        PgWireFrontendMessage::CopyData(d) => {
            session.copy_data(&d.data);
            return Ok(());
        }
        PgWireFrontendMessage::Flush(_) | PgWireFrontendMessage::Sync(_) => return Ok(()),
        PgWireFrontendMessage::CopyDone(_) => session.copy_done(),
        PgWireFrontendMessage::CopyFail(f) => session.copy_fail(PgError::new(
            common::error::SqlState::QUERY_CANCELED,
            format!("COPY from stdin failed: {}", f.message),
        )),
        _ => session.copy_fail(PgError::new(
            common::error::SqlState::PROTOCOL_VIOLATION,
            format!("unexpected message type 0x{ty:02X} during COPY from stdin"),
        )),
    };
    client.set_state(PgWireConnectionState::QueryInProgress);
    finish_query(client, session, outcomes).await
}

fn ready_for_query(status: TxStatus) -> PgWireBackendMessage {
    PgWireBackendMessage::ReadyForQuery(ReadyForQuery::new(match status {
        TxStatus::Idle => TransactionStatus::Idle,
        TxStatus::InBlock => TransactionStatus::Transaction,
        TxStatus::Failed => TransactionStatus::Error,
    }))
}

fn error_response(e: &PgError) -> PgWireBackendMessage {
    PgWireBackendMessage::ErrorResponse(ErrorResponse::new(error_fields(e)))
}

/// One extended-protocol message (Parse, Bind, Describe, Execute, Close, Sync, Flush),
/// answered here rather than by pgwire's handlers so that replies are only buffered:
/// the socket is written at Sync and Flush, once per batch, as PostgreSQL does (pgwire's
/// own handlers flush after almost every message). After an error the connection skips
/// to the next Sync (`AwaitingSync`, see `run_connection`).
async fn extended_message<S: Session, C>(
    client: &mut C,
    session: &mut S,
    msg: PgWireFrontendMessage,
) -> PgWireResult<()>
where
    C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send,
    PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
{
    use PgWireBackendMessage as B;
    let name = |n: &Option<String>| n.clone().unwrap_or_default();
    // Each message's reply, or the error that makes the connection skip to Sync.
    let reply: Result<Vec<PgWireBackendMessage>, PgError> = match msg {
        PgWireFrontendMessage::Parse(p) => session
            .parse(&name(&p.name), &p.query, &p.type_oids)
            .map(|()| vec![B::ParseComplete(ParseComplete::new())]),
        PgWireFrontendMessage::Bind(b) => {
            let portal = name(&b.portal_name);
            let statement = name(&b.statement_name);
            session
                .bind(BindRequest {
                    portal: &portal,
                    statement: &statement,
                    param_formats: &b.parameter_format_codes,
                    params: b.parameters.iter().map(|p| p.as_deref()).collect(),
                    result_formats: &b.result_column_format_codes,
                })
                .map(|()| vec![B::BindComplete(BindComplete::new())])
        }
        PgWireFrontendMessage::Describe(d) => session
            .describe(d.target_type == b'P', &name(&d.name))
            .map(|desc| {
                let params = desc
                    .params
                    .map(|p| B::ParameterDescription(ParameterDescription::new(p)));
                let columns = match desc.columns {
                    Some(cols) => B::RowDescription(row_description(&cols)),
                    None => B::NoData(NoData::new()),
                };
                params.into_iter().chain([columns]).collect()
            }),
        PgWireFrontendMessage::Execute(e) => {
            // The rows left of the limit (0: no limit); the rows come in batches, each
            // sent (flushed) before the next is made.
            let mut left = usize::try_from(e.max_rows).unwrap_or(0);
            let mut buf = BytesMut::new();
            let mut copying = false;
            loop {
                let outcome = session.execute(&name(&e.name), left);
                for n in &outcome.notices {
                    client
                        .feed(B::NoticeResponse(NoticeResponse::new(error_fields(n))))
                        .await?;
                }
                let done = match outcome.result {
                    Ok(done) => done,
                    Err(e) => break Err(e),
                };
                if let Some((columns, lines)) = done.copy_out {
                    if !copying {
                        copying = true;
                        client
                            .feed(B::CopyOutResponse(CopyOutResponse::new(
                                0,
                                columns as i16,
                                vec![0; columns],
                            )))
                            .await?;
                    }
                    for line in lines {
                        client.feed(B::CopyData(CopyData::new(line.into()))).await?;
                    }
                }
                for r in &done.rows {
                    client
                        .feed(B::DataRow(data_row(r, &done.binary, &done.text, &mut buf)))
                        .await?;
                }
                break Ok(vec![match done.end {
                    ExecuteEnd::Complete(tag) => {
                        if copying {
                            client.feed(B::CopyDone(CopyDone::new())).await?;
                        }
                        B::CommandComplete(CommandComplete::new(tag))
                    }
                    ExecuteEnd::Suspended => B::PortalSuspended(PortalSuspended::new()),
                    ExecuteEnd::Empty => B::EmptyQueryResponse(EmptyQueryResponse::new()),
                    ExecuteEnd::More => {
                        if left > 0 {
                            left -= done.rows.len().min(left - 1);
                        }
                        client.flush().await?;
                        continue;
                    }
                }]);
            }
        }
        PgWireFrontendMessage::Close(c) => {
            session.close(c.target_type == b'P', &name(&c.name));
            Ok(vec![B::CloseComplete(CloseComplete::new())])
        }
        PgWireFrontendMessage::Sync(_) => {
            let r = session.sync();
            if let Err(e) = r {
                client.feed(error_response(&e)).await?;
            }
            client.set_state(PgWireConnectionState::ReadyForQuery);
            let messages = ready_messages(session);
            send_all(client, messages).await?;
            return Ok(());
        }
        PgWireFrontendMessage::Flush(_) => {
            client.flush().await?;
            return Ok(());
        }
        _ => return Ok(()),
    };
    match reply {
        Ok(messages) => {
            for m in messages {
                client.feed(m).await?;
            }
        }
        Err(e) => {
            // The session is to end: its FATAL error goes instead (`run_connection`).
            let terminating = session.terminating().is_some();
            if terminating {
                return Ok(());
            }
            client.feed(error_response(&e)).await?;
            client.set_state(PgWireConnectionState::AwaitingSync);
        }
    }
    Ok(())
}

/// How long a client may take to finish startup, as pgwire's own default.
const STARTUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The write side of a connection, as the `Framed` that pgwire's handlers write to.
/// Reading is done by [`frame::FrameReader`] on the other half, so this side reads as
/// end-of-stream if anything ever tries.
struct WriteSide(tokio::net::tcp::OwnedWriteHalf);

impl tokio::io::AsyncRead for WriteSide {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        _buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

impl tokio::io::AsyncWrite for WriteSide {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

fn wire_error(e: &PgError) -> PgWireError {
    let mut info = ErrorInfo::new(
        e.severity.as_str().to_string(),
        e.code.0.to_string(),
        e.message.clone(),
    );
    info.detail = e.detail.clone();
    info.hint = e.hint.clone();
    PgWireError::UserError(Box::new(info))
}

/// A session thread's stack: room for the recursion of deeply nested statements (the
/// binder refuses deeper ones with 54001, `sql::binder::MAX_EXPR_DEPTH`). Only the pages
/// a session touches are backed by memory.
pub const SESSION_STACK_BYTES: usize = 64 << 20;

/// Serve one accepted connection on a thread of its own (wire rule 1), as PostgreSQL
/// gives each connection a backend process: a single-threaded runtime drives its socket, and its
/// statements run on the same thread, blocking only this connection. Compared with
/// running statements on a shared pool, a query costs no cross-thread wake-ups (measured:
/// they were most of the server's CPU per point query).
pub fn spawn_connection_thread<B: Backend>(
    socket: std::net::TcpStream,
    handlers: Arc<Handlers<B>>,
) -> std::io::Result<()> {
    socket.set_nonblocking(true)?;
    std::thread::Builder::new()
        .name("session".into())
        .stack_size(SESSION_STACK_BYTES)
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(r) => r,
                Err(e) => {
                    tracing::error!(error = %e, "could not start a session runtime");
                    return;
                }
            };
            runtime.block_on(async move {
                match tokio::net::TcpStream::from_std(socket) {
                    Ok(s) => serve_connection(s, handlers).await,
                    Err(e) => tracing::warn!(error = %e, "could not register a connection"),
                }
            });
        })?;
    Ok(())
}

/// Serve one accepted connection until it closes. Statements run inline, so call this
/// on a runtime that belongs to the connection ([`spawn_connection_thread`]).
///
/// The loop is pgwire's, with one difference: frames are read and checked by
/// [`frame::FrameReader`] and [`frame::check_body`] before pgwire decodes them, because
/// pgwire's decoders panic on truncated bodies. A framing error ends the connection with
/// a FATAL 08P01; a malformed body fails that message with an ERROR 08P01.
pub async fn serve_connection<B: Backend>(
    socket: tokio::net::TcpStream,
    handlers: Arc<Handlers<B>>,
) {
    if let Err(e) = run_connection(socket, &*handlers).await {
        tracing::debug!(error = %e, "connection ended with an error");
    }
}

async fn run_connection<B: Backend>(
    socket: tokio::net::TcpStream,
    handlers: &Handlers<B>,
) -> PgWireResult<()> {
    let addr = socket.peer_addr()?;
    socket.set_nodelay(true)?;
    let (read, write) = socket.into_split();
    let mut reader = frame::FrameReader::new(read);
    let mut client = Framed::new(
        WriteSide(write),
        PgWireMessageServerCodec::new(DefaultClient::new(addr, false)),
    );
    client.set_state(PgWireConnectionState::AwaitingStartup);

    // The connection's session: only this connection's thread ever touches it.
    let mut session = B::new_session(&handlers.backend);
    let startup = Arc::new(Startup {
        key: session.backend_key(),
        refusal: session.refusal(),
    });
    let end_notify = session.end_notify();
    let simple = Arc::new(NoQueries);
    let extended = handlers.extended_query_handler();
    let copy = handlers.copy_handler();
    let cancel = handlers.cancel_handler();

    // Hand one decoded message to pgwire's dispatcher; an error goes back as pgwire sends
    // it. Evaluates to true when the error was FATAL: the connection must end.
    macro_rules! dispatch {
        ($msg:expr, $extended:expr) => {{
            let res = process_message(
                $msg,
                &mut client,
                startup.clone(),
                simple.clone(),
                extended.clone(),
                copy.clone(),
                cancel.clone(),
            )
            .await;
            match res {
                Ok(()) => false,
                Err(e) => {
                    let fatal = e.is_fatal();
                    process_error(&mut client, e, $extended).await?;
                    fatal
                }
            }
        }};
    }

    // Startup: SSL and GSS requests are refused (no TLS), a cancel request closes the
    // connection, a startup packet authenticates (trust).
    let started = tokio::time::timeout(STARTUP_TIMEOUT, async {
        loop {
            let (kind, mut packet) = match reader.next_startup().await {
                Ok(Some(p)) => p,
                Ok(None) => return Ok(false),
                Err(e) => {
                    send_fatal(&mut client, &e).await;
                    return Ok(false);
                }
            };
            match kind {
                frame::StartupKind::SslRequest => {
                    client
                        .send(PgWireBackendMessage::SslResponse(SslResponse::Refuse))
                        .await?;
                }
                frame::StartupKind::GssEncRequest => {
                    client
                        .send(PgWireBackendMessage::GssEncResponse(GssEncResponse::Refuse))
                        .await?;
                }
                frame::StartupKind::Cancel => {
                    let word = |at: usize| {
                        i32::from_be_bytes([
                            packet[at],
                            packet[at + 1],
                            packet[at + 2],
                            packet[at + 3],
                        ])
                    };
                    handlers.backend.cancel_request(word(8), word(12));
                    return Ok(false);
                }
                frame::StartupKind::Startup => {
                    let mut ctx = DecodeContext::new(ProtocolVersion::default());
                    ctx.awaiting_frontend_ssl = false;
                    let Some(msg) = PgWireFrontendMessage::decode(&mut packet, &ctx)? else {
                        return Ok(false);
                    };
                    if dispatch!(msg, false) {
                        return Ok(false);
                    }
                    return Ok(matches!(
                        client.state(),
                        PgWireConnectionState::ReadyForQuery
                    ));
                }
            }
        }
    })
    .await;
    match started {
        Ok(Ok(true)) => {}
        Ok(Ok(false)) | Err(_) => return Ok(()),
        Ok(Err(e)) => return Err(e),
    }
    session.startup_parameters(client.metadata());

    let mut ctx = DecodeContext::new(client.protocol_version());
    ctx.awaiting_frontend_ssl = false;
    ctx.awaiting_frontend_startup = false;
    loop {
        // Asked to end (`pg_terminate_backend`) by now, or while waiting for the client.
        let terminating = session.terminating();
        if let Some(e) = terminating {
            send_fatal(&mut client, &e).await;
            return Ok(());
        }
        let idle_timeout = session.idle_timeout();
        let read = async {
            match idle_timeout {
                None => Some(reader.next_message().await),
                Some(t) => tokio::time::timeout(t, reader.next_message()).await.ok(),
            }
        };
        let ended = async {
            match &end_notify {
                Some(n) => n.notified().await,
                None => std::future::pending().await,
            }
        };
        let next = tokio::select! {
            next = read => next,
            () = ended => continue,
        };
        let Some(next) = next else {
            let e = PgError::fatal(
                common::error::SqlState::IDLE_IN_TRANSACTION_SESSION_TIMEOUT,
                "terminating connection due to idle-in-transaction timeout",
            );
            send_fatal(&mut client, &e).await;
            return Ok(());
        };
        let (ty, mut message) = match next {
            Ok(Some(m)) => m,
            Ok(None) => return Ok(()),
            Err(e) => {
                send_fatal(&mut client, &e).await;
                return Ok(());
            }
        };
        if ty == b'X' {
            return Ok(());
        }
        let in_copy = match client.state() {
            PgWireConnectionState::CopyInProgress(extended) => Some(extended),
            _ => None,
        };
        // An error in these skips to the next Sync; an error in Sync itself (as in
        // PostgreSQL) is followed by ReadyForQuery.
        let is_extended = in_copy.unwrap_or(matches!(ty, b'P' | b'B' | b'D' | b'E' | b'C' | b'H'));
        // After an error in an extended-protocol batch, PostgreSQL reads frames up to the
        // next Sync without looking inside them.
        if matches!(client.state(), PgWireConnectionState::AwaitingSync) && ty != b'S' {
            continue;
        }
        if let Err(e) = frame::check_body(ty, &message[5..]) {
            if e.severity == common::error::Severity::Fatal {
                send_fatal(&mut client, &e).await;
                return Ok(());
            }
            process_error(&mut client, wire_error(&e), is_extended).await?;
            continue;
        }
        let msg = match PgWireFrontendMessage::decode(&mut message, &ctx) {
            Ok(Some(m)) => m,
            Ok(None) | Err(_) => {
                let e = PgError::new(
                    common::error::SqlState::PROTOCOL_VIOLATION,
                    "invalid message format",
                );
                process_error(&mut client, wire_error(&e), is_extended).await?;
                continue;
            }
        };
        if in_copy.is_some() {
            copy_message(&mut client, &mut session, ty, msg).await?;
            continue;
        }
        if matches!(
            msg,
            PgWireFrontendMessage::Parse(_)
                | PgWireFrontendMessage::Bind(_)
                | PgWireFrontendMessage::Describe(_)
                | PgWireFrontendMessage::Execute(_)
                | PgWireFrontendMessage::Close(_)
                | PgWireFrontendMessage::Sync(_)
                | PgWireFrontendMessage::Flush(_)
        ) {
            extended_message(&mut client, &mut session, msg).await?;
            continue;
        }
        if let PgWireFrontendMessage::Query(q) = msg {
            if let Err(e) = query_message(&mut client, &mut session, &q.query).await {
                let fatal = e.is_fatal();
                process_error(&mut client, e, false).await?;
                if fatal {
                    return Ok(());
                }
            }
            continue;
        }
        if dispatch!(msg, is_extended) {
            return Ok(());
        }
    }
}

/// What [`read_client_stream`] made of one frame.
#[derive(Debug)]
pub enum ClientFrame {
    /// A startup-phase packet: SSLRequest (`b'S'`), GSSENCRequest (`b'G'`), CancelRequest
    /// (`b'X'`) or a StartupMessage that pgwire decoded (`b'0'`).
    Startup(u8),
    /// A typed message whose body passed [`frame::check_body`] and that pgwire decoded.
    Message(u8),
    /// The error the server sends for the frame: FATAL (the connection ends and nothing
    /// after it is read) or ERROR (that message fails and the session goes on).
    Error(PgError),
}

/// The fuzzing entry point for the frame decoder (`crates/fuzzing`): reads `bytes` as one
/// client's byte stream the way [`serve_connection`] reads a socket, with the same calls
/// in the same order: [`frame::FrameReader::next_startup`] until a StartupMessage (pgwire
/// decoding it), then [`frame::FrameReader::next_message`], [`frame::check_body`] and
/// pgwire's decoder on each frame, until the stream ends or a FATAL error. Nothing runs a
/// statement. Each frame's outcome is returned in order; an error is the PgError the
/// client would see (a pgwire decoding failure is the server's 08P01 `invalid message
/// format`).
pub fn read_client_stream(bytes: &[u8]) -> Vec<ClientFrame> {
    futures::executor::block_on(async {
        let mut out = Vec::new();
        let mut reader = frame::FrameReader::new(bytes);
        loop {
            let (kind, mut packet) = match reader.next_startup().await {
                Ok(Some(p)) => p,
                Ok(None) => return out,
                Err(e) => {
                    out.push(ClientFrame::Error(e));
                    return out;
                }
            };
            let tag = match kind {
                frame::StartupKind::SslRequest => b'S',
                frame::StartupKind::GssEncRequest => b'G',
                frame::StartupKind::Cancel => {
                    out.push(ClientFrame::Startup(b'X'));
                    return out;
                }
                frame::StartupKind::Startup => {
                    let mut ctx = DecodeContext::new(ProtocolVersion::default());
                    ctx.awaiting_frontend_ssl = false;
                    match PgWireFrontendMessage::decode(&mut packet, &ctx) {
                        Ok(Some(PgWireFrontendMessage::Startup(_))) => {}
                        // The server ends such a connection without a word.
                        _ => return out,
                    }
                    out.push(ClientFrame::Startup(b'0'));
                    break;
                }
            };
            out.push(ClientFrame::Startup(tag));
        }
        let mut ctx = DecodeContext::new(ProtocolVersion::default());
        ctx.awaiting_frontend_ssl = false;
        ctx.awaiting_frontend_startup = false;
        loop {
            let (ty, mut message) = match reader.next_message().await {
                Ok(Some(m)) => m,
                Ok(None) => return out,
                Err(e) => {
                    out.push(ClientFrame::Error(e));
                    return out;
                }
            };
            if let Err(e) = frame::check_body(ty, &message[5..]) {
                let fatal = e.severity == common::error::Severity::Fatal;
                out.push(ClientFrame::Error(e));
                if fatal {
                    return out;
                }
                continue;
            }
            out.push(match PgWireFrontendMessage::decode(&mut message, &ctx) {
                Ok(Some(_)) => ClientFrame::Message(ty),
                Ok(None) | Err(_) => ClientFrame::Error(PgError::new(
                    common::error::SqlState::PROTOCOL_VIOLATION,
                    "invalid message format",
                )),
            });
            if ty == b'X' {
                return out;
            }
        }
    })
}

/// Sends a FATAL error; the caller then closes the connection.
async fn send_fatal<S>(client: &mut Framed<WriteSide, PgWireMessageServerCodec<S>>, e: &PgError) {
    tracing::debug!(code = e.code.0, message = %e.message, "closing connection");
    let _ = client
        .send(PgWireBackendMessage::ErrorResponse(ErrorResponse::new(
            error_fields(e),
        )))
        .await;
}
