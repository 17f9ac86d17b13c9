//! Helpers shared by the integration tests that run an in-process server and talk to it
//! over the wire with `tokio_postgres`. (Each test file is its own crate and uses some.)

#![allow(dead_code)]

use myriad_server::{AutovacuumRound, Config, Server};
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

/// The process's peak resident memory, in kB (`VmHWM` in /proc/self/status): what the
/// memory tests bound, each a test binary of its own.
pub fn peak_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

/// A server on a fresh data directory and a free port; keep the directory alive.
pub async fn start() -> (Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = Config {
        listen: "127.0.0.1:0".into(),
        data_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    (Server::start(&config).await.expect("server starts"), dir)
}

/// A server whose autovacuum does not run on its own: the test drives rounds with
/// [`autovacuum_round`]. Keep the directory alive.
pub async fn start_without_autovacuum() -> (Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = Config {
        listen: "127.0.0.1:0".into(),
        data_dir: dir.path().to_path_buf(),
        autovacuum: false,
        ..Config::default()
    };
    (Server::start(&config).await.expect("server starts"), dir)
}

/// One autovacuum round on `server`, run as the launcher runs it.
pub async fn autovacuum_round(server: &Server) -> AutovacuumRound {
    let db = server.database().clone();
    tokio::task::spawn_blocking(move || db.autovacuum_round(&db.background_tx()).expect("round"))
        .await
        .expect("join")
}

/// A server configuration on `dir` with a 16-page buffer pool, so that pages are evicted
/// (written) long before a shutdown: for the tests that restart a server on its data.
pub fn tiny_pool_config(dir: &std::path::Path) -> Config {
    Config {
        listen: "127.0.0.1:0".into(),
        data_dir: dir.to_path_buf(),
        buffer_pool_pages: 16,
        ..Config::default()
    }
}

/// The connection string for `server`.
pub fn url(server: &Server) -> String {
    let addr = server.local_addr();
    format!(
        "host={} port={} user=postgres dbname=postgres",
        addr.ip(),
        addr.port()
    )
}

pub async fn connect(server: &Server) -> Client {
    let (client, connection) = tokio_postgres::connect(&url(server), NoTls)
        .await
        .expect("connect");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

/// Runs `sql` (one or more statements), panicking on an error.
pub async fn exec(c: &Client, sql: &str) {
    c.batch_execute(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// The first column of the first row a query returns.
pub async fn value(c: &Client, sql: &str) -> String {
    let rows = c
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows.iter()
        .find_map(|m| match m {
            SimpleQueryMessage::Row(r) => r.get(0).map(str::to_owned),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{sql}: no row"))
}

/// Every row a query returns, as text (`NULL` for NULL).
pub async fn rows(c: &Client, sql: &str) -> Vec<Vec<String>> {
    let msgs = c
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    msgs.iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(
                (0..r.len())
                    .map(|i| r.get(i).unwrap_or("NULL").to_owned())
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

/// EXPLAIN ANALYZE's lines for `query` (costs and times left out).
pub async fn analyzed(c: &Client, query: &str) -> Vec<String> {
    rows(
        c,
        &format!("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) {query}"),
    )
    .await
    .concat()
}

/// The SQLSTATE of a server error, or the client error's text.
pub fn sqlstate(e: &tokio_postgres::Error) -> String {
    e.as_db_error()
        .map(|d| d.code().code().to_string())
        .unwrap_or_else(|| e.to_string())
}

/// The protocol byte by byte, for tests that need what a driver would not send (or
/// would hide): building frontend messages and reading backend messages as short
/// summaries.
pub mod raw {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    /// Generous: a healthy server answers in milliseconds; this only catches hangs.
    pub const RAW_WAIT: Duration = Duration::from_secs(10);

    pub fn startup_message() -> Vec<u8> {
        let mut body = Vec::new();
        body.extend_from_slice(&196_608i32.to_be_bytes()); // protocol 3.0
        for s in ["user", "postgres", "database", "postgres"] {
            body.extend_from_slice(s.as_bytes());
            body.push(0);
        }
        body.push(0);
        let mut msg = ((body.len() + 4) as i32).to_be_bytes().to_vec();
        msg.extend_from_slice(&body);
        msg
    }

    /// A frontend message: type byte, length, body.
    pub fn msg(ty: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![ty];
        m.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    fn cstr(out: &mut Vec<u8>, s: &str) {
        out.extend_from_slice(s.as_bytes());
        out.push(0);
    }

    pub fn query(sql: &str) -> Vec<u8> {
        let mut b = Vec::new();
        cstr(&mut b, sql);
        msg(b'Q', &b)
    }

    pub fn parse(name: &str, sql: &str, oids: &[u32]) -> Vec<u8> {
        let mut b = Vec::new();
        cstr(&mut b, name);
        cstr(&mut b, sql);
        b.extend_from_slice(&(oids.len() as i16).to_be_bytes());
        for o in oids {
            b.extend_from_slice(&o.to_be_bytes());
        }
        msg(b'P', &b)
    }

    pub fn bind(
        portal: &str,
        stmt: &str,
        formats: &[i16],
        params: &[Option<&[u8]>],
        result_formats: &[i16],
    ) -> Vec<u8> {
        let mut b = Vec::new();
        cstr(&mut b, portal);
        cstr(&mut b, stmt);
        b.extend_from_slice(&(formats.len() as i16).to_be_bytes());
        for f in formats {
            b.extend_from_slice(&f.to_be_bytes());
        }
        b.extend_from_slice(&(params.len() as i16).to_be_bytes());
        for p in params {
            match p {
                None => b.extend_from_slice(&(-1i32).to_be_bytes()),
                Some(v) => {
                    b.extend_from_slice(&(v.len() as i32).to_be_bytes());
                    b.extend_from_slice(v);
                }
            }
        }
        b.extend_from_slice(&(result_formats.len() as i16).to_be_bytes());
        for f in result_formats {
            b.extend_from_slice(&f.to_be_bytes());
        }
        msg(b'B', &b)
    }

    /// Describe a statement (`b'S'`) or portal (`b'P'`).
    pub fn describe(kind: u8, name: &str) -> Vec<u8> {
        let mut b = vec![kind];
        cstr(&mut b, name);
        msg(b'D', &b)
    }

    pub fn execute(portal: &str, max_rows: i32) -> Vec<u8> {
        let mut b = Vec::new();
        cstr(&mut b, portal);
        b.extend_from_slice(&max_rows.to_be_bytes());
        msg(b'E', &b)
    }

    pub fn close(kind: u8, name: &str) -> Vec<u8> {
        let mut b = vec![kind];
        cstr(&mut b, name);
        msg(b'C', &b)
    }

    pub fn sync() -> Vec<u8> {
        msg(b'S', &[])
    }

    pub fn copy_data(data: &[u8]) -> Vec<u8> {
        msg(b'd', data)
    }

    pub fn copy_done() -> Vec<u8> {
        msg(b'c', &[])
    }

    pub fn copy_fail(message: &str) -> Vec<u8> {
        let mut b = Vec::new();
        cstr(&mut b, message);
        msg(b'f', &b)
    }

    /// A backend message as a short line: `ParseComplete`, `Error 42P01 relation "t"
    /// does not exist`, `DataRow 1|NULL|x` (text columns), `CommandComplete SELECT 1`,
    /// `ReadyForQuery I`, ...
    pub fn summary(ty: u8, body: &[u8]) -> String {
        let cstrs = |b: &[u8]| -> Vec<String> {
            b.split(|c| *c == 0)
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        };
        match ty {
            b'1' => "ParseComplete".into(),
            b'2' => "BindComplete".into(),
            b'3' => "CloseComplete".into(),
            b'n' => "NoData".into(),
            b's' => "PortalSuspended".into(),
            b'I' => "EmptyQueryResponse".into(),
            b'Z' => format!("ReadyForQuery {}", body[0] as char),
            b'C' => format!("CommandComplete {}", cstrs(body)[0]),
            b'E' | b'N' => {
                let (mut code, mut message, mut context) = (String::new(), String::new(), None);
                for f in cstrs(body) {
                    match f.as_bytes().first() {
                        Some(b'C') => code = f[1..].to_string(),
                        Some(b'M') => message = f[1..].to_string(),
                        Some(b'W') => context = Some(f[1..].to_string()),
                        _ => {}
                    }
                }
                let kind = if ty == b'E' { "Error" } else { "Notice" };
                match context {
                    Some(w) => format!("{kind} {code} {message} [{w}]"),
                    None => format!("{kind} {code} {message}"),
                }
            }
            b'G' | b'H' => {
                let n = i16::from_be_bytes([body[1], body[2]]);
                let kind = if ty == b'G' {
                    "CopyInResponse"
                } else {
                    "CopyOutResponse"
                };
                format!("{kind} {} {n}", body[0])
            }
            b'd' => format!("CopyData {}", String::from_utf8_lossy(body).escape_debug()),
            b'S' => {
                let f = cstrs(body);
                format!("ParameterStatus {}={}", f[0], f[1])
            }
            b'c' => "CopyDone".into(),
            b't' => {
                let n = i16::from_be_bytes([body[0], body[1]]) as usize;
                let oids: Vec<String> = (0..n)
                    .map(|i| {
                        let at = 2 + 4 * i;
                        u32::from_be_bytes(body[at..at + 4].try_into().unwrap()).to_string()
                    })
                    .collect();
                format!("ParameterDescription {}", oids.join(","))
            }
            b'T' => {
                let n = i16::from_be_bytes([body[0], body[1]]) as usize;
                let mut at = 2;
                let mut cols = Vec::new();
                for _ in 0..n {
                    let end = at + body[at..].iter().position(|c| *c == 0).unwrap();
                    let name = String::from_utf8_lossy(&body[at..end]).into_owned();
                    at = end + 1;
                    let oid = u32::from_be_bytes(body[at + 6..at + 10].try_into().unwrap());
                    let format = i16::from_be_bytes([body[at + 16], body[at + 17]]);
                    at += 18;
                    cols.push(format!("{name}:{oid}/{format}"));
                }
                format!("RowDescription {}", cols.join(","))
            }
            b'D' => {
                let n = i16::from_be_bytes([body[0], body[1]]) as usize;
                let mut at = 2;
                let mut vals = Vec::new();
                for _ in 0..n {
                    let len = i32::from_be_bytes(body[at..at + 4].try_into().unwrap());
                    at += 4;
                    if len < 0 {
                        vals.push("NULL".to_string());
                    } else {
                        let v = &body[at..at + len as usize];
                        at += len as usize;
                        vals.push(match std::str::from_utf8(v) {
                            Ok(s) if !s.contains('\0') => s.to_string(),
                            _ => format!("{v:02x?}"),
                        });
                    }
                }
                format!("DataRow {}", vals.join("|"))
            }
            other => format!("{} ({} bytes)", other as char, body.len()),
        }
    }

    /// A connection past startup.
    pub struct Conn {
        stream: TcpStream,
        buf: Vec<u8>,
        /// Startup is over: ParameterStatus is news from now on.
        started: bool,
    }

    impl Conn {
        pub async fn connect(addr: std::net::SocketAddr) -> Conn {
            let stream = TcpStream::connect(addr).await.expect("connect");
            let mut c = Conn {
                stream,
                buf: Vec::new(),
                started: false,
            };
            c.send(&startup_message()).await;
            c.until_ready().await;
            c.started = true;
            c
        }

        pub async fn send(&mut self, bytes: &[u8]) {
            self.stream.write_all(bytes).await.expect("send");
        }

        /// Send a batch of messages in one write.
        pub async fn send_all(&mut self, msgs: &[Vec<u8>]) {
            self.send(&msgs.concat()).await;
        }

        /// The next backend message, or `None` if the server closed the connection.
        pub async fn next(&mut self) -> Option<(u8, Vec<u8>)> {
            loop {
                if self.buf.len() >= 5 {
                    let len = u32::from_be_bytes(self.buf[1..5].try_into().unwrap()) as usize;
                    if self.buf.len() > len {
                        let body = self.buf[5..1 + len].to_vec();
                        let ty = self.buf[0];
                        self.buf.drain(..1 + len);
                        return Some((ty, body));
                    }
                }
                let mut chunk = [0u8; 8192];
                let n = tokio::time::timeout(RAW_WAIT, self.stream.read(&mut chunk))
                    .await
                    .expect("the server answers")
                    .ok()?;
                if n == 0 {
                    return None;
                }
                self.buf.extend_from_slice(&chunk[..n]);
            }
        }

        /// Every message up to and including the next ReadyForQuery (or CopyInResponse,
        /// after which the server waits for data), summarised (startup's R, S and K
        /// messages are left out).
        pub async fn until_ready(&mut self) -> Vec<String> {
            let mut out = Vec::new();
            while let Some((ty, body)) = self.next().await {
                if !self.started && matches!(ty, b'R' | b'S' | b'K') {
                    continue;
                }
                out.push(summary(ty, &body));
                if ty == b'Z' || ty == b'G' {
                    break;
                }
            }
            out
        }
    }

    /// Where protocol scenarios run: a PostgreSQL named by `MYRIAD_ORACLE_ADDR`
    /// (`host:port`, trust authentication for user postgres; run the tests with
    /// `--test-threads=1` there, they share table names), to check their expectations
    /// against PostgreSQL 15; else a fresh in-process Myriad, kept alive by the guard.
    pub async fn target() -> (
        Option<(myriad_server::Server, tempfile::TempDir)>,
        std::net::SocketAddr,
    ) {
        if let Ok(addr) = std::env::var("MYRIAD_ORACLE_ADDR") {
            return (None, addr.parse().expect("MYRIAD_ORACLE_ADDR is host:port"));
        }
        let (server, dir) = super::start().await;
        let addr = server.local_addr();
        (Some((server, dir)), addr)
    }

    /// Sends each batch and compares what comes back up to ReadyForQuery.
    pub async fn check(conn: &mut Conn, cases: &[(Vec<Vec<u8>>, &[&str])]) {
        let mut failures = Vec::new();
        for (i, (batch, want)) in cases.iter().enumerate() {
            conn.send_all(batch).await;
            let got = conn.until_ready().await;
            if got != *want {
                failures.push(format!("case {i}:\n  got  {got:?}\n  want {want:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    /// Sends `bytes` on a fresh connection, half-closes it and returns what the server
    /// sent back before closing its side. `Err` only when the server neither answers nor
    /// closes within [`RAW_WAIT`] after the client's FIN.
    pub async fn send_raw(addr: std::net::SocketAddr, bytes: Vec<u8>) -> Result<Vec<u8>, String> {
        let mut stream = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect failed: {e}"))?;
        let mut received = Vec::new();
        // The server may close (or reset) mid-write: that is its right.
        if stream.write_all(&bytes).await.is_err() {
            let _ = stream.read_to_end(&mut received).await;
            return Ok(received);
        }
        let _ = stream.shutdown().await;
        let mut chunk = [0u8; 4096];
        let read_all = async {
            loop {
                match stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => received.extend_from_slice(&chunk[..n]),
                }
            }
        };
        tokio::time::timeout(RAW_WAIT, read_all)
            .await
            .map_err(|_| "server kept the connection open after the client's FIN".to_string())?;
        Ok(received)
    }

    /// The (severity, SQLSTATE) of every ErrorResponse in a stream of backend messages.
    pub fn error_responses(mut bytes: &[u8]) -> Vec<(String, String)> {
        let mut errors = Vec::new();
        while bytes.len() >= 5 {
            let ty = bytes[0];
            let len = u32::from_be_bytes(bytes[1..5].try_into().unwrap()) as usize;
            let Some(body) = bytes.get(5..1 + len) else {
                break;
            };
            if ty == b'E' {
                let (mut severity, mut code) = (String::new(), String::new());
                for field in body.split(|b| *b == 0) {
                    match field.first() {
                        Some(b'S') => severity = String::from_utf8_lossy(&field[1..]).into(),
                        Some(b'C') => code = String::from_utf8_lossy(&field[1..]).into(),
                        _ => {}
                    }
                }
                errors.push((severity, code));
            }
            bytes = &bytes[1 + len..];
        }
        errors
    }
}
