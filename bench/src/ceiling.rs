//! The ceiling: a responder that speaks just enough of the PostgreSQL v3 protocol to answer
//! every query at once, doing no database work. Its throughput is what the client and the
//! loopback allow; a server's throughput is reported as a fraction of it.
//!
//! What it answers (enough for psql, pgbench in every `-M` mode, and sysbench):
//!
//! - startup: SSLRequest and GSSENCRequest get `N`; a v3 StartupMessage gets
//!   AuthenticationOk, the ParameterStatus values of a PostgreSQL 15 server, BackendKeyData
//!   and ReadyForQuery. CancelRequest closes the connection.
//! - simple Query: each `;`-separated statement (quotes are not parsed: the ceiling does not
//!   need to be exact) gets a reply shaped by its first keyword: SELECT, WITH, VALUES, SHOW
//!   and EXPLAIN return one row with one int4 column holding 1 (so pgbench's
//!   `select count(*) from pgbench_branches` reads scale 1); pgbench's partition probe
//!   (mentions `pg_partitioned_table`) returns its one row `(1, NULL, 0)`; INSERT, UPDATE and
//!   DELETE report one row; BEGIN/COMMIT/ROLLBACK move the transaction status that
//!   ReadyForQuery reports; anything else completes with its keyword as the tag. COPY is
//!   refused (0A000): the ceiling has no setup.
//! - extended protocol: Parse, Bind, Describe (statement or portal), Execute, Close, Sync,
//!   Flush; named and unnamed statements and portals; binary result format when asked.
//!
//! **One socket write per Query or Sync** (or Flush), as PostgreSQL does: replies are
//! appended to a buffer that is written when the client waits for them. One thread per
//! connection, blocking I/O: the simplest thing that is fast.
//!
//! Bytes from the socket are never trusted: a malformed or oversized message closes that
//! connection and nothing else.

use std::collections::HashMap;
use std::io::{BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};

/// The largest message accepted (PostgreSQL's own limit for most messages is 1 GiB; the
/// clients used here send a few KiB at most).
const MESSAGE_BYTES_MAX: usize = 64 << 20;
/// Read buffer per connection.
const READ_BUFFER_BYTES: usize = 64 << 10;

const PROTOCOL_V3: i32 = 196_608;
const SSL_REQUEST: i32 = 80_877_103;
const GSSENC_REQUEST: i32 = 80_877_104;
const CANCEL_REQUEST: i32 = 80_877_102;

/// Type OIDs the replies use.
const INT4_OID: i32 = 23;
const INT8_OID: i32 = 20;
const CHAR_OID: i32 = 18;
const TEXT_OID: i32 = 25;

/// Listens on `addr` and serves until killed.
pub fn serve(addr: &str) -> Result<(), String> {
    let listener =
        TcpListener::bind(addr).map_err(|e| format!("could not listen on {addr}: {e}"))?;
    eprintln!("ceiling: listening on {addr}");
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        std::thread::spawn(move || {
            let _ = Connection::new(stream).and_then(|mut c| c.run());
        });
    }
    Ok(())
}

/// How a statement is answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reply {
    /// One row, one int4 column holding 1.
    OneRow,
    /// pgbench's partition probe: `(1::int4, NULL::"char", 0::int8)`.
    PartitionProbe,
    /// No rows; the tag.
    Command(&'static str),
    /// Transaction control: the tag and the status ReadyForQuery reports afterwards.
    Transaction(&'static str, u8),
    /// Refused with 0A000.
    Refused,
    EmptyQuery,
}

/// The reply for a statement, from its first keyword.
fn classify(sql: &str) -> Reply {
    let sql = sql.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
    let keyword: String = sql
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_lowercase();
    match keyword.as_str() {
        "" => Reply::EmptyQuery,
        "select" | "with" | "values" | "show" | "explain" | "table" => {
            if sql.contains("pg_partitioned_table") {
                Reply::PartitionProbe
            } else {
                Reply::OneRow
            }
        }
        "insert" => Reply::Command("INSERT 0 1"),
        "update" => Reply::Command("UPDATE 1"),
        "delete" => Reply::Command("DELETE 1"),
        "begin" | "start" => Reply::Transaction("BEGIN", b'T'),
        "commit" | "end" => Reply::Transaction("COMMIT", b'I'),
        "rollback" | "abort" => Reply::Transaction("ROLLBACK", b'I'),
        "copy" => Reply::Refused,
        "set" => Reply::Command("SET"),
        "create" => Reply::Command("CREATE TABLE"),
        "drop" => Reply::Command("DROP TABLE"),
        "vacuum" => Reply::Command("VACUUM"),
        "analyze" => Reply::Command("ANALYZE"),
        "truncate" => Reply::Command("TRUNCATE TABLE"),
        "alter" => Reply::Command("ALTER TABLE"),
        _ => Reply::Command("OK"),
    }
}

struct Statement {
    reply: Reply,
    /// Parameter types from Parse (0 = unspecified), for Describe.
    param_types: Vec<i32>,
}

struct Portal {
    reply: Reply,
    /// Result columns in binary?
    binary: bool,
}

struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    out: Vec<u8>,
    /// 'I' idle, 'T' in a transaction.
    tx_status: u8,
    statements: HashMap<String, Statement>,
    portals: HashMap<String, Portal>,
    /// After an error in the extended protocol, messages are skipped until Sync.
    skipping_to_sync: bool,
}

/// Why a connection ends: the client left, or sent something we cannot read.
type Closed = ();

impl Connection {
    fn new(stream: TcpStream) -> Result<Connection, Closed> {
        stream.set_nodelay(true).map_err(drop)?;
        let writer = stream.try_clone().map_err(drop)?;
        Ok(Connection {
            reader: BufReader::with_capacity(READ_BUFFER_BYTES, stream),
            writer,
            out: Vec::with_capacity(4096),
            tx_status: b'I',
            statements: HashMap::new(),
            portals: HashMap::new(),
            skipping_to_sync: false,
        })
    }

    fn run(&mut self) -> Result<(), Closed> {
        self.startup()?;
        loop {
            let (tag, body) = self.read_message()?;
            self.handle(tag, &body)?;
        }
    }

    fn startup(&mut self) -> Result<(), Closed> {
        loop {
            let len = self.read_i32()?;
            let len = usize::try_from(len).map_err(drop)?;
            if !(8..=MESSAGE_BYTES_MAX).contains(&len) {
                return Err(());
            }
            let mut body = vec![0; len - 4];
            self.reader.read_exact(&mut body).map_err(drop)?;
            let code = i32::from_be_bytes([body[0], body[1], body[2], body[3]]);
            match code {
                SSL_REQUEST | GSSENC_REQUEST => {
                    self.writer.write_all(b"N").map_err(drop)?;
                }
                CANCEL_REQUEST => return Err(()),
                c if c >> 16 == PROTOCOL_V3 >> 16 => break,
                _ => return Err(()),
            }
        }
        let mut auth_ok = Vec::new();
        auth_ok.extend_from_slice(&0i32.to_be_bytes());
        self.message(b'R', &auth_ok);
        for (name, value) in [
            ("application_name", ""),
            ("client_encoding", "UTF8"),
            ("DateStyle", "ISO, MDY"),
            ("default_transaction_read_only", "off"),
            ("in_hot_standby", "off"),
            ("integer_datetimes", "on"),
            ("IntervalStyle", "postgres"),
            ("is_superuser", "on"),
            ("server_encoding", "UTF8"),
            ("server_version", "15.0 (myriad-bench ceiling)"),
            ("session_authorization", "postgres"),
            ("standard_conforming_strings", "on"),
            ("TimeZone", "UTC"),
        ] {
            let mut body = Vec::new();
            put_cstr(&mut body, name);
            put_cstr(&mut body, value);
            self.message(b'S', &body);
        }
        let mut key = Vec::new();
        key.extend_from_slice(&(std::process::id() as i32).to_be_bytes());
        key.extend_from_slice(&0x5eed_i32.to_be_bytes());
        self.message(b'K', &key);
        self.ready_for_query();
        self.flush()
    }

    fn read_i32(&mut self) -> Result<i32, Closed> {
        let mut b = [0u8; 4];
        self.reader.read_exact(&mut b).map_err(drop)?;
        Ok(i32::from_be_bytes(b))
    }

    fn read_message(&mut self) -> Result<(u8, Vec<u8>), Closed> {
        let mut tag = [0u8; 1];
        self.reader.read_exact(&mut tag).map_err(drop)?;
        let len = usize::try_from(self.read_i32()?).map_err(drop)?;
        if !(4..=MESSAGE_BYTES_MAX).contains(&len) {
            return Err(());
        }
        let mut body = vec![0; len - 4];
        self.reader.read_exact(&mut body).map_err(drop)?;
        Ok((tag[0], body))
    }

    fn handle(&mut self, tag: u8, body: &[u8]) -> Result<(), Closed> {
        let mut r = Cursor { bytes: body, at: 0 };
        if self.skipping_to_sync && tag != b'S' {
            return Ok(());
        }
        match tag {
            b'Q' => {
                let sql = r.cstr()?;
                let statements: Vec<&str> =
                    sql.split(';').filter(|s| !s.trim().is_empty()).collect();
                if statements.is_empty() {
                    self.message(b'I', &[]);
                }
                for s in statements {
                    let reply = classify(s);
                    if reply == Reply::Refused {
                        self.refuse();
                        break;
                    }
                    self.describe(reply, false);
                    self.execute(reply, false);
                }
                self.skipping_to_sync = false;
                self.ready_for_query();
                self.flush()?;
            }
            b'P' => {
                let name = r.cstr()?.to_string();
                let sql = r.cstr()?;
                let reply = classify(sql);
                let n = r.i16()?;
                let mut param_types = Vec::new();
                for _ in 0..n {
                    param_types.push(r.i32()?);
                }
                // Parameters named in the text but not typed by Parse, e.g. pgbench's $1.
                let used = highest_param(sql);
                while param_types.len() < used {
                    param_types.push(0);
                }
                self.statements
                    .insert(name, Statement { reply, param_types });
                self.message(b'1', &[]);
            }
            b'B' => {
                let portal = r.cstr()?.to_string();
                let statement = r.cstr()?;
                let Some(s) = self.statements.get(statement) else {
                    self.error("26000", "prepared statement does not exist");
                    return Ok(());
                };
                let reply = s.reply;
                let n_formats = r.i16()?;
                for _ in 0..n_formats {
                    r.i16()?;
                }
                let n_params = r.i16()?;
                for _ in 0..n_params {
                    let len = r.i32()?;
                    if len > 0 {
                        r.take(len as usize)?;
                    }
                }
                let n_results = r.i16()?;
                let mut binary = false;
                for _ in 0..n_results {
                    binary |= r.i16()? == 1;
                }
                self.portals.insert(portal, Portal { reply, binary });
                self.message(b'2', &[]);
            }
            b'D' => {
                let kind = r.u8()?;
                let name = r.cstr()?;
                if kind == b'S' {
                    let Some(s) = self.statements.get(name) else {
                        self.error("26000", "prepared statement does not exist");
                        return Ok(());
                    };
                    let reply = s.reply;
                    let mut desc = Vec::new();
                    desc.extend_from_slice(&(s.param_types.len() as i16).to_be_bytes());
                    for &t in &s.param_types {
                        let t = if t == 0 { TEXT_OID } else { t };
                        desc.extend_from_slice(&t.to_be_bytes());
                    }
                    self.message(b't', &desc);
                    if !self.describe(reply, false) {
                        self.message(b'n', &[]);
                    }
                } else {
                    let Some(p) = self.portals.get(name) else {
                        self.error("34000", "portal does not exist");
                        return Ok(());
                    };
                    let (reply, binary) = (p.reply, p.binary);
                    if !self.describe(reply, binary) {
                        self.message(b'n', &[]);
                    }
                }
            }
            b'E' => {
                let name = r.cstr()?;
                let Some(p) = self.portals.get(name) else {
                    self.error("34000", "portal does not exist");
                    return Ok(());
                };
                let (reply, binary) = (p.reply, p.binary);
                if reply == Reply::Refused {
                    self.refuse();
                    self.skipping_to_sync = true;
                } else {
                    self.execute(reply, binary);
                }
            }
            b'C' => {
                let kind = r.u8()?;
                let name = r.cstr()?;
                if kind == b'S' {
                    self.statements.remove(name);
                } else {
                    self.portals.remove(name);
                }
                self.message(b'3', &[]);
            }
            b'S' => {
                self.skipping_to_sync = false;
                self.portals.remove("");
                self.ready_for_query();
                self.flush()?;
            }
            b'H' => self.flush()?,
            b'X' => return Err(()),
            _ => {
                self.error("08P01", "message type not supported by the ceiling");
                self.flush()?;
            }
        }
        Ok(())
    }

    /// RowDescription for statements that return rows; false for the others (the extended
    /// protocol then sends NoData, a simple Query nothing).
    fn describe(&mut self, reply: Reply, binary: bool) -> bool {
        let columns: &[(&str, i32, i16)] = match reply {
            Reply::OneRow => &[("?column?", INT4_OID, 4)],
            Reply::PartitionProbe => &[
                ("n", INT4_OID, 4),
                ("partstrat", CHAR_OID, 1),
                ("count", INT8_OID, 8),
            ],
            _ => &[],
        };
        if columns.is_empty() {
            return false;
        }
        let mut body = Vec::new();
        body.extend_from_slice(&(columns.len() as i16).to_be_bytes());
        for &(name, oid, len) in columns {
            put_cstr(&mut body, name);
            body.extend_from_slice(&0i32.to_be_bytes()); // table oid
            body.extend_from_slice(&0i16.to_be_bytes()); // column number
            body.extend_from_slice(&oid.to_be_bytes());
            body.extend_from_slice(&len.to_be_bytes());
            body.extend_from_slice(&(-1i32).to_be_bytes()); // typmod
            body.extend_from_slice(&i16::from(binary).to_be_bytes());
        }
        self.message(b'T', &body);
        true
    }

    fn execute(&mut self, reply: Reply, binary: bool) {
        match reply {
            Reply::OneRow => {
                let mut row = Vec::new();
                row.extend_from_slice(&1i16.to_be_bytes());
                if binary {
                    row.extend_from_slice(&4i32.to_be_bytes());
                    row.extend_from_slice(&1i32.to_be_bytes());
                } else {
                    row.extend_from_slice(&1i32.to_be_bytes());
                    row.push(b'1');
                }
                self.message(b'D', &row);
                self.complete("SELECT 1");
            }
            Reply::PartitionProbe => {
                let mut row = Vec::new();
                row.extend_from_slice(&3i16.to_be_bytes());
                if binary {
                    row.extend_from_slice(&4i32.to_be_bytes());
                    row.extend_from_slice(&1i32.to_be_bytes());
                    row.extend_from_slice(&(-1i32).to_be_bytes());
                    row.extend_from_slice(&8i32.to_be_bytes());
                    row.extend_from_slice(&0i64.to_be_bytes());
                } else {
                    row.extend_from_slice(&1i32.to_be_bytes());
                    row.push(b'1');
                    row.extend_from_slice(&(-1i32).to_be_bytes());
                    row.extend_from_slice(&1i32.to_be_bytes());
                    row.push(b'0');
                }
                self.message(b'D', &row);
                self.complete("SELECT 1");
            }
            Reply::Command(tag) => self.complete(tag),
            Reply::Transaction(tag, status) => {
                self.tx_status = status;
                self.complete(tag);
            }
            Reply::EmptyQuery => self.message(b'I', &[]),
            Reply::Refused => self.refuse(),
        }
    }

    fn complete(&mut self, tag: &str) {
        let mut body = Vec::with_capacity(tag.len() + 1);
        put_cstr(&mut body, tag);
        self.message(b'C', &body);
    }

    fn refuse(&mut self) {
        self.error(
            "0A000",
            "the ceiling answers queries but does no database work (no COPY)",
        );
    }

    fn error(&mut self, code: &str, message: &str) {
        let mut body = Vec::new();
        for (field, value) in [
            (b'S', "ERROR"),
            (b'V', "ERROR"),
            (b'C', code),
            (b'M', message),
        ] {
            body.push(field);
            put_cstr(&mut body, value);
        }
        body.push(0);
        self.message(b'E', &body);
        self.skipping_to_sync = true;
    }

    fn ready_for_query(&mut self) {
        let status = self.tx_status;
        self.message(b'Z', &[status]);
    }

    fn message(&mut self, tag: u8, body: &[u8]) {
        self.out.push(tag);
        self.out
            .extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        self.out.extend_from_slice(body);
    }

    /// The one write per Query, Sync or Flush.
    fn flush(&mut self) -> Result<(), Closed> {
        if !self.out.is_empty() {
            self.writer.write_all(&self.out).map_err(drop)?;
            self.out.clear();
        }
        Ok(())
    }
}

fn put_cstr(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
    out.push(0);
}

/// The highest `$n` in a statement's text.
fn highest_param(sql: &str) -> usize {
    let bytes = sql.as_bytes();
    let mut highest = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'$' {
            let start = i + 1;
            let mut end = start;
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
            if let Ok(n) = sql[start..end].parse::<usize>() {
                highest = highest.max(n);
            }
            i = end.max(i + 1);
        } else {
            i += 1;
        }
    }
    highest
}

/// Reads fields from a message body; running off the end closes the connection.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Closed> {
        let end = self.at.checked_add(n).ok_or(())?;
        let s = self.bytes.get(self.at..end).ok_or(())?;
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, Closed> {
        Ok(self.take(1)?[0])
    }
    fn i16(&mut self) -> Result<i16, Closed> {
        let b = self.take(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }
    fn i32(&mut self) -> Result<i32, Closed> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn cstr(&mut self) -> Result<&'a str, Closed> {
        let rest = self.bytes.get(self.at..).ok_or(())?;
        let nul = rest.iter().position(|&b| b == 0).ok_or(())?;
        let s = std::str::from_utf8(&rest[..nul]).map_err(drop)?;
        self.at += nul + 1;
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_by_first_keyword() {
        assert_eq!(
            classify("SELECT abalance FROM pgbench_accounts WHERE aid = $1;"),
            Reply::OneRow
        );
        assert_eq!(
            classify("  select count(*) from pgbench_branches"),
            Reply::OneRow
        );
        assert_eq!(
            classify(
                "select o.n, p.partstrat from pg_catalog.pg_class c left join pg_catalog.pg_partitioned_table p on true"
            ),
            Reply::PartitionProbe
        );
        assert_eq!(classify("UPDATE t SET a = 1"), Reply::Command("UPDATE 1"));
        assert_eq!(classify("BEGIN;"), Reply::Transaction("BEGIN", b'T'));
        assert_eq!(classify("END;"), Reply::Transaction("COMMIT", b'I'));
        assert_eq!(classify("copy t from stdin"), Reply::Refused);
        assert_eq!(classify("   "), Reply::EmptyQuery);
    }

    #[test]
    fn finds_the_highest_parameter() {
        assert_eq!(highest_param("select $1, $12 + $3"), 12);
        assert_eq!(highest_param("select '$' || 1"), 0);
        assert_eq!(highest_param("select 1"), 0);
    }

    #[test]
    fn cursor_rejects_truncated_bodies() {
        let mut c = Cursor {
            bytes: b"abc",
            at: 0,
        };
        assert!(c.cstr().is_err());
        let mut c = Cursor {
            bytes: &[0, 1],
            at: 0,
        };
        assert!(c.i32().is_err());
        let mut c = Cursor {
            bytes: b"a\0",
            at: 0,
        };
        assert_eq!(c.cstr(), Ok("a"));
        assert!(c.u8().is_err());
    }

    /// A real round trip over loopback: startup, a simple Query, and a prepared statement.
    #[test]
    fn answers_simple_and_extended_queries() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (s, _) = listener.accept().unwrap();
            let _ = Connection::new(s).and_then(|mut c| c.run());
        });
        let mut s = TcpStream::connect(addr).unwrap();
        let mut startup = Vec::new();
        startup.extend_from_slice(&PROTOCOL_V3.to_be_bytes());
        put_cstr(&mut startup, "user");
        put_cstr(&mut startup, "postgres");
        startup.push(0);
        let mut msg = ((startup.len() + 4) as i32).to_be_bytes().to_vec();
        msg.extend_from_slice(&startup);
        s.write_all(&msg).unwrap();
        assert_eq!(read_until_ready(&mut s).last(), Some(&(b'Z', vec![b'I'])));

        let send = |s: &mut TcpStream, tag: u8, body: &[u8]| {
            let mut m = vec![tag];
            m.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
            m.extend_from_slice(body);
            s.write_all(&m).unwrap();
        };
        let mut q = Vec::new();
        put_cstr(&mut q, "BEGIN; select 1;");
        send(&mut s, b'Q', &q);
        let tags: Vec<u8> = read_until_ready(&mut s).iter().map(|m| m.0).collect();
        assert_eq!(tags, b"CTDCZ");

        let mut parse = Vec::new();
        put_cstr(&mut parse, "P_0");
        put_cstr(
            &mut parse,
            "SELECT abalance FROM pgbench_accounts WHERE aid = $1;",
        );
        parse.extend_from_slice(&0i16.to_be_bytes());
        send(&mut s, b'P', &parse);
        send(&mut s, b'S', &[]);
        let tags: Vec<u8> = read_until_ready(&mut s).iter().map(|m| m.0).collect();
        assert_eq!(tags, b"1Z");

        let mut bind = Vec::new();
        put_cstr(&mut bind, "");
        put_cstr(&mut bind, "P_0");
        bind.extend_from_slice(&0i16.to_be_bytes());
        bind.extend_from_slice(&1i16.to_be_bytes());
        bind.extend_from_slice(&2i32.to_be_bytes());
        bind.extend_from_slice(b"42");
        bind.extend_from_slice(&1i16.to_be_bytes());
        bind.extend_from_slice(&1i16.to_be_bytes());
        send(&mut s, b'B', &bind);
        send(&mut s, b'D', b"P\0");
        send(&mut s, b'E', b"\0\0\0\0\0");
        send(&mut s, b'S', &[]);
        let replies = read_until_ready(&mut s);
        let tags: Vec<u8> = replies.iter().map(|m| m.0).collect();
        assert_eq!(tags, b"2TDCZ");
        assert_eq!(replies[4].1, vec![b'T'], "still in the transaction");
        // Binary int4 1.
        assert_eq!(replies[2].1, vec![0, 1, 0, 0, 0, 4, 0, 0, 0, 1]);
    }

    fn read_until_ready(s: &mut TcpStream) -> Vec<(u8, Vec<u8>)> {
        let mut all = Vec::new();
        loop {
            let mut head = [0u8; 5];
            s.read_exact(&mut head).unwrap();
            let len = i32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
            let mut body = vec![0; len - 4];
            s.read_exact(&mut body).unwrap();
            let done = head[0] == b'Z';
            all.push((head[0], body));
            if done {
                return all;
            }
        }
    }
}
