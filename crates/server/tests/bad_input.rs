//! Fuzz-ish robustness: random bytes on raw connections and random SQL token soups must
//! never take the server down, hang it, or surface as an internal error (XX000).
//!
//! Seeded: the seed is printed; set `MYRIAD_FUZZ_SEED=<n>` to replay a failure.

use std::sync::Mutex;
use std::time::Duration;

mod common;

use common::connect;
use common::raw::{error_responses, send_raw, startup_message};
use myriad_server::{Config, Server};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio_postgres::SimpleQueryMessage;

/// Raw connections (garbage, and startup + random messages).
const RAW_CONNECTIONS: usize = 2000;
/// Raw connections in flight at once.
const RAW_PARALLEL: usize = 32;
/// Token-soup statements.
const SOUPS: usize = 3000;
/// Generous: a healthy server answers in milliseconds; this only catches hangs.
const QUERY_WAIT: Duration = Duration::from_secs(10);

/// Every panic in this process (the server runs in it), as "location: message".
static PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Records panics (still printing them): a panic is a bug even where the server survives
/// it, e.g. a protocol decoder panicking on a malformed message kills only its connection.
fn record_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(install_panic_recorder);
}

fn install_panic_recorder() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let location = info.location().map(|l| l.to_string()).unwrap_or_default();
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        PANICS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(format!("{location}: {message}"));
        default_hook(info);
    }));
}

fn panic_count() -> usize {
    PANICS.lock().unwrap_or_else(|e| e.into_inner()).len()
}

fn seed() -> u64 {
    let seed = match std::env::var("MYRIAD_FUZZ_SEED") {
        Ok(s) => s.trim().parse().expect("MYRIAD_FUZZ_SEED must be a u64"),
        Err(_) => rand::random(),
    };
    eprintln!("fuzz seed: {seed} (replay with MYRIAD_FUZZ_SEED={seed})");
    seed
}

// ---------------------------------------------------------------- raw protocol bytes

fn random_bytes(rng: &mut StdRng, max: usize) -> Vec<u8> {
    let n = rng.random_range(0..=max);
    let mut v = vec![0u8; n];
    rng.fill(&mut v[..]);
    v
}

/// A length field: honest, off by a little, tiny, negative or huge.
fn random_length(rng: &mut StdRng, honest: usize) -> i32 {
    match rng.random_range(0..8) {
        0..=2 => honest as i32,
        3 => honest as i32 + rng.random_range(-4..=4),
        4 => rng.random_range(0..4),
        5 => -rng.random_range(1..=i32::MAX),
        6 => rng.random_range(0x3fff_0000..=i32::MAX),
        _ => rng.random(),
    }
}

/// Bytes sent before (or instead of) a startup message.
fn garbage_before_startup(rng: &mut StdRng) -> Vec<u8> {
    let mut out = Vec::new();
    match rng.random_range(0..6) {
        0 => out = random_bytes(rng, 256),
        1 => {
            // A length and a request code: SSL, GSSENC, cancel, protocol 2.0/3.9/junk.
            let code: i32 = match rng.random_range(0..6) {
                0 => 80_877_103,
                1 => 80_877_104,
                2 => 80_877_102,
                3 => 0x0002_0000,
                4 => 0x0003_0009,
                _ => rng.random(),
            };
            let tail = random_bytes(rng, 64);
            out.extend_from_slice(&random_length(rng, 8 + tail.len()).to_be_bytes());
            out.extend_from_slice(&code.to_be_bytes());
            out.extend_from_slice(&tail);
        }
        2 => {
            // A startup message with random parameters (unterminated, odd names, huge).
            let mut body = 196_608i32.to_be_bytes().to_vec();
            for _ in 0..rng.random_range(0..6) {
                let max = if rng.random_bool(0.1) { 20_000 } else { 16 };
                let word = random_bytes(rng, max);
                body.extend_from_slice(&word);
                if rng.random_bool(0.8) {
                    body.push(0);
                }
            }
            out.extend_from_slice(&random_length(rng, body.len() + 4).to_be_bytes());
            out.extend_from_slice(&body);
        }
        3 => {
            // A truncated valid startup message.
            let msg = startup_message();
            let cut = rng.random_range(0..msg.len());
            out.extend_from_slice(&msg[..cut]);
        }
        4 => {
            // A frontend message where a startup message belongs.
            out.push(b'Q');
            out.extend_from_slice(&13i32.to_be_bytes());
            out.extend_from_slice(b"SELECT 1\0");
        }
        _ => {
            // SSLRequest, then (after the server's 'N') anything.
            out.extend_from_slice(&8i32.to_be_bytes());
            out.extend_from_slice(&80_877_103i32.to_be_bytes());
            out.extend_from_slice(&random_bytes(rng, 64));
        }
    }
    out
}

const FRONTEND_TYPES: &[u8] = b"QPBEDSHCXpdcfFX";

/// A valid startup message, then random frontend messages.
fn startup_then_messages(rng: &mut StdRng) -> Vec<u8> {
    let mut out = startup_message();
    for _ in 0..rng.random_range(1..6) {
        let ty = if rng.random_bool(0.9) {
            FRONTEND_TYPES[rng.random_range(0..FRONTEND_TYPES.len())]
        } else {
            rng.random()
        };
        let body = match rng.random_range(0..4) {
            0 => random_bytes(rng, 64),
            // A plausible NUL-terminated query string.
            1 => {
                let mut b = b"SELECT 1".to_vec();
                b.extend(random_bytes(rng, 8));
                b.push(0);
                b
            }
            // Random int16/int32 fields as Bind/Parse/Execute have.
            2 => {
                let mut b = vec![0u8, 0u8]; // empty portal/statement name pieces
                for _ in 0..rng.random_range(0..6) {
                    if rng.random_bool(0.5) {
                        b.extend_from_slice(&rng.random::<i16>().to_be_bytes());
                    } else {
                        b.extend_from_slice(&rng.random::<i32>().to_be_bytes());
                    }
                }
                b
            }
            _ => random_bytes(rng, 4096),
        };
        out.push(ty);
        out.extend_from_slice(&random_length(rng, body.len() + 4).to_be_bytes());
        out.extend_from_slice(&body);
    }
    out
}

fn show_bytes(bytes: &[u8]) -> String {
    let shown: Vec<u8> = bytes.iter().copied().take(120).collect();
    format!("raw bytes ({} in all) {shown:02x?}", bytes.len())
}

async fn raw_connections(server: &Server, rng: &mut StdRng) -> Vec<String> {
    let addr = server.local_addr();
    let mut failures = Vec::new();
    let mut done = 0;
    let mut panics_reported = 0;
    while done < RAW_CONNECTIONS {
        let mut batch = Vec::new();
        for _ in 0..RAW_PARALLEL.min(RAW_CONNECTIONS - done) {
            let bytes = if rng.random_bool(0.4) {
                garbage_before_startup(rng)
            } else {
                startup_then_messages(rng)
            };
            batch.push((bytes.clone(), tokio::spawn(send_raw(addr, bytes))));
        }
        done += batch.len();
        let panics_before = panic_count();
        let mut sent = Vec::new();
        for (bytes, task) in batch {
            if let Err(e) = task.await.expect("raw task") {
                failures.push(format!("{}: {e}", show_bytes(&bytes)));
            }
            sent.push(bytes);
        }
        if panic_count() > panics_before && panics_reported < 5 {
            // Replay the batch one connection at a time to find the input that panicked
            // (once a connection is closed its handler has finished).
            for bytes in sent {
                let before = panic_count();
                let _ = send_raw(addr, bytes.clone()).await;
                let panics = PANICS.lock().unwrap_or_else(|e| e.into_inner());
                if panics.len() > before {
                    failures.push(format!(
                        "server panicked ({}) on {}",
                        panics[before],
                        show_bytes(&bytes)
                    ));
                    panics_reported += 1;
                    break;
                }
            }
        }
        if failures.len() > 20 {
            break;
        }
    }
    failures
}

// ---------------------------------------------------------------- SQL token soup

const SCHEMA: &str = "
    DROP TABLE IF EXISTS t;
    DROP TABLE IF EXISTS u;
    CREATE TABLE t (id int PRIMARY KEY, name text, score float8, ok boolean, m numeric(8,3));
    CREATE TABLE u (k int, v varchar(5), s int2, b bigint, PRIMARY KEY (k, s));
    CREATE INDEX t_m ON t (m);
    INSERT INTO t VALUES (1, 'a', 1.5, true, 1.25), (2, 'b', NULL, false, 'NaN'), (3, NULL, -0.0, NULL, NULL);
    INSERT INTO u VALUES (1, 'x', 1, 9223372036854775807), (2, NULL, -32768, -9223372036854775808)";

const KEYWORDS: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "INSERT",
    "INTO",
    "VALUES",
    "UPDATE",
    "SET",
    "DELETE",
    "CREATE",
    "TABLE",
    "DROP",
    "IF",
    "EXISTS",
    "GROUP",
    "BY",
    "ORDER",
    "HAVING",
    "LIMIT",
    "OFFSET",
    "DISTINCT",
    "AS",
    "AND",
    "OR",
    "NOT",
    "NULL",
    "IS",
    "IN",
    "BETWEEN",
    "LIKE",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "CAST",
    "JOIN",
    "ON",
    "LEFT",
    "INNER",
    "CROSS",
    "PRIMARY",
    "KEY",
    "UNIQUE",
    "DEFAULT",
    "ASC",
    "DESC",
    "NULLS",
    "FIRST",
    "LAST",
    "ALL",
    "TRUE",
    "FALSE",
    "int",
    "int2",
    "int8",
    "bigint",
    "smallint",
    "text",
    "varchar(2)",
    "float8",
    "real",
    "boolean",
    "char(1)",
    "numeric",
    "numeric(5,2)",
    "decimal(1000,999)",
    "numeric(0)",
    "count(*)",
    "count(",
    "sum(",
    "avg(",
    "min(",
    "max(",
    "abs(",
    "upper(",
    "lower(",
    "length(",
    "substr(",
    "COALESCE(",
    "round(",
    "trunc(",
    "sqrt(",
    "power(",
    "mod(",
    "div(",
    "ln(",
    "log(",
    "exp(",
    "ceil(",
    "scale(",
];
const IDENTIFIERS: &[&str] = &[
    "t",
    "u",
    "id",
    "name",
    "score",
    "ok",
    "k",
    "v",
    "s",
    "b",
    "t.id",
    "u.k",
    "x",
    "\"t\"",
    "\"Id\"",
    "\"\"",
    "\"unterminated",
    "nosuch",
    "*",
    "t.*",
];
const LITERALS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "32767",
    "32768",
    "-32768",
    "2147483647",
    "2147483648",
    "-2147483648",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "99999999999999999999999999999999999999999",
    "1.5",
    "-0.0",
    "1.50",
    "1e1000",
    "1e-1000",
    "1e131072",
    "'NaN'::numeric",
    "'-Infinity'::numeric",
    "0.5::numeric(1,0)",
    "12345.678::numeric(3,1)",
    "1e308",
    "1e309",
    "1e-400",
    ".5",
    "5.",
    "0.1e",
    "0x1F",
    "'abc'",
    "''",
    "'it''s'",
    "'unbalanced",
    "'NaN'",
    "'Infinity'",
    "'-Infinity'",
    "'1e400'",
    "'2147483648'",
    "'true'",
    "'t'",
    "'yes'",
    "E'\\n'",
    "$$dollar$$",
    "NULL",
    "'x'::int",
    "'9'::int2",
    "1::boolean",
    "'1.5'::int",
    "'1e99999999'",
    "'1.2.3'",
];
const OPERATORS: &[&str] = &[
    "+", "-", "*", "/", "%", "=", "<>", "!=", "<", ">", "<=", ">=", "||", "::", "(", ")", "(", ")",
    ",", ";", ".", "^", "~", "@", "&", "|", "#", "--", "/*", "[", "]",
];

fn token(rng: &mut StdRng) -> String {
    let pick = |rng: &mut StdRng, list: &[&str]| list[rng.random_range(0..list.len())].to_string();
    match rng.random_range(0..100) {
        0..=29 => pick(rng, KEYWORDS),
        30..=49 => pick(rng, IDENTIFIERS),
        50..=74 => pick(rng, LITERALS),
        75..=96 => pick(rng, OPERATORS),
        97 => format!("'{}'", "y".repeat(rng.random_range(1000..200_000))),
        98 => "9".repeat(rng.random_range(20..5000)),
        _ => "(".repeat(rng.random_range(10..2000)),
    }
}

fn soup(rng: &mut StdRng, len: usize) -> String {
    (0..len).map(|_| token(rng)).collect::<Vec<_>>().join(" ")
}

const COLUMNS_T: &[&str] = &["id", "name", "score", "ok", "t.id", "m"];
const COLUMNS_U: &[&str] = &["k", "v", "s", "b", "u.k"];
const FUNCTIONS: &[&str] = &[
    "count", "sum", "avg", "min", "max", "abs", "upper", "lower", "length", "substr", "COALESCE",
    "round", "trunc", "sqrt", "power", "mod", "div", "ln", "log", "exp", "ceil", "floor", "sign",
    "scale",
];
const BINARY: &[&str] = &[
    "+", "-", "*", "/", "%", "=", "<>", "<", ">=", "||", "AND", "OR", "LIKE",
];
const TYPES: &[&str] = &[
    "int",
    "int2",
    "int8",
    "text",
    "varchar(2)",
    "char(3)",
    "float8",
    "real",
    "boolean",
    "numeric",
    "numeric(4,2)",
];

/// A random expression that is often well-formed, sometimes with a soup token thrown in.
fn expr(rng: &mut StdRng, columns: &[&str], depth: u32) -> String {
    let pick = |rng: &mut StdRng, list: &[&str]| list[rng.random_range(0..list.len())].to_string();
    if depth == 0 || rng.random_bool(0.3) {
        return match rng.random_range(0..10) {
            0..=3 if !columns.is_empty() => pick(rng, columns),
            4 => token(rng),
            _ => pick(rng, LITERALS),
        };
    }
    let d = depth - 1;
    match rng.random_range(0..12) {
        0..=3 => format!(
            "{} {} {}",
            expr(rng, columns, d),
            pick(rng, BINARY),
            expr(rng, columns, d)
        ),
        4 => format!("-{}", expr(rng, columns, d)),
        5 => {
            let args: Vec<String> = (0..rng.random_range(0..4))
                .map(|_| expr(rng, columns, d))
                .collect();
            format!("{}({})", pick(rng, FUNCTIONS), args.join(", "))
        }
        6 => format!("CAST({} AS {})", expr(rng, columns, d), pick(rng, TYPES)),
        7 => format!("({})::{}", expr(rng, columns, d), pick(rng, TYPES)),
        8 => format!(
            "CASE WHEN {} THEN {} ELSE {} END",
            expr(rng, columns, d),
            expr(rng, columns, d),
            expr(rng, columns, d)
        ),
        9 => format!(
            "{} IS {}NULL",
            expr(rng, columns, d),
            if rng.random_bool(0.5) { "NOT " } else { "" }
        ),
        10 => format!(
            "{} BETWEEN {} AND {}",
            expr(rng, columns, d),
            expr(rng, columns, d),
            expr(rng, columns, d)
        ),
        _ => format!(
            "{} IN ({}, {})",
            expr(rng, columns, d),
            expr(rng, columns, d),
            expr(rng, columns, d)
        ),
    }
}

/// A statement: pure soup, or soup and expressions inside a statement skeleton (to get
/// past the parser and the binder into the executor).
fn statement(rng: &mut StdRng) -> String {
    let soup_expr = |rng: &mut StdRng| {
        let n = rng.random_range(1..6);
        soup(rng, n)
    };
    let both: Vec<&str> = COLUMNS_T.iter().chain(COLUMNS_U).copied().collect();
    match rng.random_range(0..16) {
        0..=2 => {
            let n = rng.random_range(1..14);
            soup(rng, n)
        }
        3 => format!("SELECT {}", soup_expr(rng)),
        4 => format!("SELECT {} FROM t WHERE {}", soup_expr(rng), soup_expr(rng)),
        5 => format!(
            "UPDATE u SET b = {} WHERE {}",
            soup_expr(rng),
            soup_expr(rng)
        ),
        6 => format!("SELECT {}", expr(rng, &[], 4)),
        7 => format!(
            "SELECT {}, {} FROM t WHERE {}",
            expr(rng, COLUMNS_T, 3),
            expr(rng, COLUMNS_T, 3),
            expr(rng, COLUMNS_T, 3)
        ),
        8 => format!(
            "SELECT {}, count(*), sum({}) FROM t, u GROUP BY 1 HAVING {} ORDER BY 1 NULLS FIRST",
            expr(rng, &both, 3),
            expr(rng, &both, 2),
            expr(rng, &both, 2)
        ),
        9 => format!(
            "SELECT * FROM t {} JOIN u ON {} ORDER BY {} LIMIT {}",
            if rng.random_bool(0.5) {
                "LEFT"
            } else {
                "INNER"
            },
            expr(rng, &both, 3),
            expr(rng, &both, 2),
            expr(rng, &[], 2)
        ),
        10 => format!(
            "INSERT INTO t VALUES ({}, {}, {}, {}, {})",
            expr(rng, &[], 2),
            expr(rng, &[], 2),
            expr(rng, &[], 2),
            expr(rng, &[], 2),
            expr(rng, &[], 2)
        ),
        11 => format!(
            "INSERT INTO u (k, v, s, b) VALUES ({}, {}, {}, {}), ({}, {}, {}, {})",
            expr(rng, &[], 2),
            expr(rng, &[], 2),
            expr(rng, &[], 2),
            expr(rng, &[], 2),
            expr(rng, &[], 2),
            expr(rng, &[], 2),
            expr(rng, &[], 2),
            expr(rng, &[], 2)
        ),
        12 => format!(
            "UPDATE u SET b = {}, s = {} WHERE {}",
            expr(rng, COLUMNS_U, 3),
            expr(rng, COLUMNS_U, 2),
            expr(rng, COLUMNS_U, 2)
        ),
        13 => format!(
            "UPDATE t SET name = {}, score = {} WHERE {}",
            expr(rng, COLUMNS_T, 3),
            expr(rng, COLUMNS_T, 3),
            expr(rng, COLUMNS_T, 2)
        ),
        14 => format!("DELETE FROM u WHERE {}", expr(rng, COLUMNS_U, 3)),
        _ => format!(
            "SELECT DISTINCT {} FROM (SELECT {} AS c FROM u) AS sub ORDER BY 1 LIMIT {} OFFSET {}",
            expr(rng, &["c"], 2),
            expr(rng, COLUMNS_U, 3),
            expr(rng, &[], 1),
            expr(rng, &[], 1)
        ),
    }
}

fn abbreviate(sql: &str) -> String {
    if sql.len() <= 300 {
        sql.to_string()
    } else {
        let head: String = sql.chars().take(150).collect();
        let tail: String = sql
            .chars()
            .rev()
            .take(100)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        format!("{head} …({} bytes)… {tail}", sql.len())
    }
}

async fn token_soups(server: &Server, rng: &mut StdRng) -> Vec<String> {
    let mut failures = Vec::new();
    let mut client = connect(server).await;
    client.batch_execute(SCHEMA).await.expect("schema");
    let mut errors = 0usize;
    for i in 0..SOUPS {
        // The soup may drop or fill the tables: start over now and then.
        if i % 250 == 249 {
            client.batch_execute(SCHEMA).await.expect("schema reset");
        }
        let sql = statement(rng);
        match tokio::time::timeout(QUERY_WAIT, client.simple_query(&sql)).await {
            Err(_) => {
                failures.push(format!(
                    "no answer within {QUERY_WAIT:?}: {}",
                    abbreviate(&sql)
                ));
                break; // the statement may still hold its locks
            }
            Ok(Ok(_)) => {}
            Ok(Err(e)) => match e.code() {
                Some(code) if code.code() == "XX000" => {
                    let msg = e
                        .as_db_error()
                        .map(|d| d.message().to_owned())
                        .unwrap_or_default();
                    failures.push(format!("XX000 ({msg}): {}", abbreviate(&sql)));
                }
                Some(_) => errors += 1,
                None => {
                    failures.push(format!("connection lost ({e}): {}", abbreviate(&sql)));
                    client = connect(server).await;
                }
            },
        }
    }
    eprintln!(
        "token soup: {SOUPS} statements, {errors} ordinary errors, {} failures",
        failures.len()
    );
    failures
}

async fn select_one(server: &Server) -> Result<(), String> {
    let client = connect(server).await;
    let messages = tokio::time::timeout(QUERY_WAIT, client.simple_query("SELECT 1"))
        .await
        .map_err(|_| "SELECT 1 did not answer".to_string())?
        .map_err(|e| format!("SELECT 1 failed: {e}"))?;
    let value = messages.iter().find_map(|m| match m {
        SimpleQueryMessage::Row(row) => row.get(0).map(str::to_owned),
        _ => None,
    });
    if value.as_deref() == Some("1") {
        Ok(())
    } else {
        Err(format!("SELECT 1 returned {value:?}"))
    }
}

/// The tests of this file count the process's panics: one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Minimal inputs the fuzzing found (each once panicked pgwire 0.42.1's decoder), each on
/// its own connection after a valid startup, with the error severity PostgreSQL gives:
/// a malformed body fails the message (ERROR), broken framing ends the connection (FATAL).
const MALFORMED_AFTER_STARTUP: &[(&str, &str, &[u8])] = &[
    // Execute: portal "" then no max-rows int32 -> "advance out of bounds" in get_i32.
    ("Execute without max-rows", "ERROR", &[b'E', 0, 0, 0, 5, 0]),
    // Parse: name "", query "", 1 parameter type, no oid -> get_u32 out of bounds.
    (
        "Parse with a missing type oid",
        "ERROR",
        &[b'P', 0, 0, 0, 8, 0, 0, 0, 1],
    ),
    // Bind: portal "", statement "", no format count -> get_i16 out of bounds.
    (
        "Bind without format count",
        "ERROR",
        &[b'B', 0, 0, 0, 6, 0, 0],
    ),
    // Bind: 0 formats, 1 parameter of length i32::MAX in a 14-byte message -> split_to.
    (
        "Bind with an oversized parameter length",
        "ERROR",
        &[b'B', 0, 0, 0, 14, 0, 0, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff],
    ),
    // CopyData with length 0: `len - 4` underflows (copy.rs:37).
    ("CopyData with length 0", "FATAL", &[b'd', 0, 0, 0, 0]),
    // PasswordMessage with length 0: `full_len - 4` underflows (startup.rs:286).
    (
        "PasswordMessage with length 0",
        "FATAL",
        &[b'p', 0, 0, 0, 0],
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn minimal_malformed_messages() {
    let _serial = SERIAL.lock().await;
    record_panics();
    let dir = tempfile::tempdir().expect("temp data dir");
    let config = small_config(dir.path());
    let server = Server::start(&config).await.expect("server starts");
    let mut failures = Vec::new();
    for (what, severity, message) in MALFORMED_AFTER_STARTUP {
        let mut bytes = startup_message();
        bytes.extend_from_slice(message);
        let before = panic_count();
        match send_raw(server.local_addr(), bytes).await {
            Err(e) => failures.push(format!("{what}: {e}")),
            Ok(reply) => {
                let errors = error_responses(&reply);
                let want = vec![(severity.to_string(), "08P01".to_string())];
                if errors != want {
                    failures.push(format!("{what}: got errors {errors:?}, want {want:?}"));
                }
            }
        }
        if panic_count() > before {
            let panics = PANICS.lock().unwrap_or_else(|e| e.into_inner());
            failures.push(format!(
                "{what} {message:02x?}: server panicked: {}",
                panics[before]
            ));
        }
    }
    if let Err(e) = select_one(&server).await {
        failures.push(e);
    }
    server.shutdown().await.expect("clean shutdown");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_bytes_and_token_soups() {
    let _serial = SERIAL.lock().await;
    record_panics();
    let seed = seed();
    let mut rng = StdRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().expect("temp data dir");
    let config = small_config(dir.path());
    let server = Server::start(&config).await.expect("server starts");

    let mut failures = raw_connections(&server, &mut rng).await;
    if let Err(e) = select_one(&server).await {
        failures.push(format!("after the raw connections: {e}"));
    }
    let panics_before_soup = panic_count();
    failures.extend(token_soups(&server, &mut rng).await);
    // Statement panics already show as XX000; count them so a panic elsewhere is not missed.
    let soup_panics = panic_count() - panics_before_soup;
    if soup_panics > 0 {
        failures.push(format!(
            "{soup_panics} panics during the token soups (see XX000 above and stderr)"
        ));
    }
    if let Err(e) = select_one(&server).await {
        failures.push(format!("after everything: {e}"));
    }
    server.shutdown().await.expect("clean shutdown");
    assert!(
        failures.is_empty(),
        "seed {seed} (replay with MYRIAD_FUZZ_SEED={seed}): {} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Long chains of operators (PostgreSQL accepts them; a left-deep tree of them once
/// overflowed a session's stack and took the whole server down at 1,000 ANDs) and a long
/// IN list: up to `MAX_EXPR_DEPTH` they run, past it they are 54001 for their session
/// alone, and the server goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_and_wide_expressions_never_exhaust_the_stack() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("temp data dir");
    let config = small_config(dir.path());
    let server = Server::start(&config).await.expect("server starts");
    let client = connect(&server).await;
    client
        .batch_execute(
            "CREATE TABLE deep (a int); INSERT INTO deep SELECT g FROM generate_series(1, 100) g",
        )
        .await
        .expect("setup");
    let depth = sql::binder::MAX_EXPR_DEPTH - 1;
    let ands = |n: usize| {
        format!(
            "SELECT count(*) FROM deep WHERE {}",
            (0..n)
                .map(|i| format!("a <> {}", i + 1000))
                .collect::<Vec<_>>()
                .join(" AND ")
        )
    };
    let ors = |n: usize| {
        format!(
            "EXPLAIN SELECT count(*) FROM deep WHERE {}",
            (0..n)
                .map(|i| format!("a = {i}"))
                .collect::<Vec<_>>()
                .join(" OR ")
        )
    };
    let sum = |n: usize| format!("SELECT {} FROM deep LIMIT 1", vec!["a"; n].join(" + "));
    for q in [ands(depth), ors(depth), sum(depth)] {
        client
            .simple_query(&q)
            .await
            .unwrap_or_else(|e| panic!("{} terms: {e}", depth));
    }
    for q in [ands(5000), ors(20_000), sum(100_000)] {
        let e = client.simple_query(&q).await.expect_err("too deep");
        let db = e.as_db_error().expect("an error response");
        assert_eq!(db.code().code(), "54001", "{}", db.message());
        assert_eq!(db.message(), "stack depth limit exceeded");
    }
    let in_list = format!(
        "SELECT count(*) FROM deep WHERE a IN ({})",
        (0..10_000)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let rows = client.simple_query(&in_list).await.expect("a long IN list");
    let count = rows.iter().find_map(|m| match m {
        SimpleQueryMessage::Row(r) => r.get(0).map(str::to_owned),
        _ => None,
    });
    assert_eq!(count.as_deref(), Some("100"));
    select_one(&server).await.expect("the server goes on");
    server.shutdown().await.expect("clean shutdown");
}

/// A second server on a data directory another holds refuses to start, before it
/// reads anything (PostgreSQL's `postmaster.pid`), and the first goes on; once the
/// first is gone the directory opens again.
#[tokio::test]
async fn a_second_server_on_one_data_directory_refuses_to_start() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().expect("temp data dir");
    let config = small_config(dir.path());
    let server = Server::start(&config).await.expect("server starts");
    let e = match Server::start(&config).await {
        Ok(_) => panic!("a second server started on the same data directory"),
        Err(e) => e,
    };
    assert_eq!(e.code.0, "F0001", "{e:?}");
    assert_eq!(e.message, "lock file \"postmaster.pid\" already exists");
    let pid = std::process::id().to_string();
    assert!(
        e.hint.as_deref().is_some_and(|h| h.contains(&pid)),
        "the hint names the holder: {e:?}"
    );
    select_one(&server).await.expect("the first server goes on");
    server.shutdown().await.expect("clean shutdown");
    let again = Server::start(&config)
        .await
        .expect("the directory opens again");
    select_one(&again).await.expect("it serves");
    again.shutdown().await.expect("clean shutdown");
}

/// A server on `dir` with a 64-page buffer pool, on a free port.
fn small_config(dir: &std::path::Path) -> Config {
    Config {
        listen: "127.0.0.1:0".into(),
        data_dir: dir.to_path_buf(),
        buffer_pool_pages: 64,
        ..Config::default()
    }
}
