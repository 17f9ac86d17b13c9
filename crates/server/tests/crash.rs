//! Crash harness: the real `myriad` binary under concurrent writers, killed with SIGKILL at
//! random moments, restarted, and checked:
//! (a) every statement the client saw succeed is there (items inserted, counter increments,
//!     rows given ids by a SERIAL column, tables and indexes created or dropped: the
//!     catalog's WAL records), and the SERIAL's sequence never hands out an id again;
//!     a table created by a transaction still open at the kill is not there, and its
//!     OIDs (file names) are not handed out again;
//! (b) invariants hold: every row reads back intact (and acknowledged ones through the
//!     primary key's index), a counter is never above the number of
//!     increments attempted (until transactions exist, a single-statement write is the unit
//!     of atomicity, so the pgbench-style "sum of balances" check waits for that issue);
//! (c) the server starts every time.
//!
//! The server runs with a tiny buffer pool (pages are evicted, so written behind the WAL),
//! 64 KiB WAL segments and frequent checkpoints, so a kill lands in every phase.
//! `MYRIAD_CRASH_CYCLES=200 cargo test -p myriad-server --test crash` runs more cycles;
//! `MYRIAD_FUZZ_SEED` replays a seed's kill timings and operation mix (the kills land
//! where the scheduler puts them, so a replay is only likelier to fail the same way);
//! `MYRIAD_CRASH_KEEP=1` keeps the data directory, the server log and a copy of the
//! data directory as the last kill left it.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

const DEFAULT_CYCLES: u32 = 4;
const WRITERS: u64 = 4;
const COUNTERS: i64 = 8;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// What the clients know: per item, whether its INSERT was acknowledged; per counter,
/// increments acknowledged and attempted.
#[derive(Default)]
struct Model {
    items: BTreeMap<i64, bool>,
    counters: BTreeMap<i64, (i64, i64)>,
    /// Ids a SERIAL column handed out in acknowledged INSERTs: each row is there, and
    /// the sequence goes on after the largest (it never repeats a value).
    events: std::collections::BTreeSet<i64>,
}

fn payload(id: i64) -> String {
    // Long enough that rows cross pages, distinct per id so corruption shows.
    format!("{id:x}-").repeat(1 + (id % 37) as usize)
}

struct Running {
    child: Child,
    port: u16,
}

/// A failing test must not leave its server running.
impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(dir: &Path) -> Running {
    let port = free_port();
    let config = dir.join("myriad.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:{port}\"\n\
             data_dir = \"{}\"\n\
             buffer_pool_pages = 24\n\
             checkpoint_timeout_secs = 1\n\
             max_wal_size_mb = 1\n\
             wal_segment_size = 65536\n",
            dir.join("data").display()
        ),
    )
    .expect("write config");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("server.log"))
        .expect("log file");
    let child = Command::new(env!("CARGO_BIN_EXE_myriad"))
        .arg("--config")
        .arg(&config)
        .stdout(Stdio::from(log.try_clone().expect("log")))
        .stderr(Stdio::from(log))
        .spawn()
        .expect("spawn myriad");
    Running { child, port }
}

async fn connect(port: u16) -> Option<Client> {
    let url = format!("host=127.0.0.1 port={port} user=postgres dbname=postgres");
    let (client, conn) = tokio_postgres::connect(&url, NoTls).await.ok()?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Some(client)
}

/// Waits for the server to accept connections; panics with its log if it does not.
async fn wait_ready(server: &mut Running, dir: &Path) -> Client {
    let started = Instant::now();
    loop {
        if let Some(c) = connect(server.port).await {
            return c;
        }
        if let Ok(Some(status)) = server.child.try_wait() {
            panic!(
                "server exited during startup ({status}); log:\n{}",
                log_tail(dir)
            );
        }
        if started.elapsed() > Duration::from_secs(60) {
            panic!("server did not start in 60 s; log:\n{}", log_tail(dir));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn log_tail(dir: &Path) -> String {
    let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

async fn rows(client: &Client, sql: &str) -> Vec<Vec<Option<String>>> {
    client
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => {
                Some((0..r.len()).map(|i| r.get(i).map(str::to_owned)).collect())
            }
            _ => None,
        })
        .collect()
}

async fn writer(port: u16, id: u64, seed: u64, model: Arc<Mutex<Model>>, next_item: i64) {
    let Some(client) = connect(port).await else {
        return;
    };
    let mut rng = StdRng::seed_from_u64(seed ^ id.wrapping_mul(0x9e37_79b9));
    let mut item = next_item + id as i64 * 1_000_000;
    loop {
        if rng.random_bool(0.15) {
            let r = client
                .query_one(
                    "INSERT INTO events (writer) VALUES ($1) RETURNING id",
                    &[&(id as i32)],
                )
                .await;
            let Ok(row) = r else {
                return;
            };
            model.lock().unwrap().events.insert(row.get(0));
        } else if rng.random_bool(0.6) {
            item += 1;
            model.lock().unwrap().items.insert(item, false);
            let sql = format!("INSERT INTO items VALUES ({item}, '{}')", payload(item));
            if client.simple_query(&sql).await.is_err() {
                return;
            }
            model.lock().unwrap().items.insert(item, true);
        } else {
            let k = rng.random_range(0..COUNTERS);
            model.lock().unwrap().counters.entry(k).or_default().1 += 1;
            let sql = format!("UPDATE counters SET n = n + 1 WHERE id = {k}");
            if client.simple_query(&sql).await.is_err() {
                return;
            }
            model.lock().unwrap().counters.entry(k).or_default().0 += 1;
        }
    }
}

/// Checks the restarted server against the model, then makes the model match what
/// survived (an unacknowledged write may or may not have).
async fn verify(client: &Client, model: &mut Model, cycle: u32) {
    let found: BTreeMap<i64, String> = rows(client, "SELECT id, payload FROM items")
        .await
        .into_iter()
        .map(|r| {
            (
                r[0].as_deref().unwrap().parse().unwrap(),
                r[1].clone().unwrap(),
            )
        })
        .collect();
    for (id, p) in &found {
        assert_eq!(p, &payload(*id), "cycle {cycle}: item {id} is corrupt");
        assert!(
            model.items.contains_key(id),
            "cycle {cycle}: item {id} was never inserted"
        );
    }
    for (id, acked) in &model.items {
        if *acked {
            assert!(
                found.contains_key(id),
                "cycle {cycle}: acknowledged item {id} is lost"
            );
        }
    }
    // Acknowledged rows are reachable through the primary key's btree too (sampled).
    let step = (model.items.len() / 100).max(1);
    for (id, _) in model
        .items
        .iter()
        .filter(|(_, acked)| **acked)
        .step_by(step)
    {
        let r = rows(
            client,
            &format!("SELECT payload FROM items WHERE id = {id}"),
        )
        .await;
        assert_eq!(
            r,
            vec![vec![Some(payload(*id))]],
            "cycle {cycle}: item {id} not found through the index"
        );
    }
    model.items = found.keys().map(|id| (*id, true)).collect();
    let events: std::collections::BTreeSet<i64> = rows(client, "SELECT id FROM events")
        .await
        .into_iter()
        .map(|r| r[0].as_deref().unwrap().parse().unwrap())
        .collect();
    if let Some(lost) = model.events.difference(&events).next() {
        panic!("cycle {cycle}: acknowledged event {lost} is lost");
    }
    let next: i64 = rows(client, "SELECT nextval('events_id_seq')").await[0][0]
        .as_deref()
        .unwrap()
        .parse()
        .unwrap();
    if let Some(max) = events.last() {
        assert!(
            next > *max,
            "cycle {cycle}: the sequence hands out {next} again (largest id {max})"
        );
    }
    model.events = events;
    let counters = rows(client, "SELECT id, n FROM counters ORDER BY id").await;
    assert_eq!(counters.len(), COUNTERS as usize, "cycle {cycle}: counters");
    for r in counters {
        let id: i64 = r[0].as_deref().unwrap().parse().unwrap();
        let n: i64 = r[1].as_deref().unwrap().parse().unwrap();
        let (acked, attempted) = model.counters.get(&id).copied().unwrap_or_default();
        assert!(
            acked <= n && n <= attempted,
            "cycle {cycle}: counter {id} is {n}, but {acked} increments were acknowledged of {attempted} attempted"
        );
        model.counters.insert(id, (n, n));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_under_writers_loses_nothing_acknowledged() {
    let cycles: u32 = std::env::var("MYRIAD_CRASH_CYCLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_CYCLES);
    let seed: u64 = match std::env::var("MYRIAD_FUZZ_SEED") {
        Ok(s) => s.trim().parse().expect("MYRIAD_FUZZ_SEED must be a u64"),
        Err(_) => rand::random(),
    };
    eprintln!("crash seed: {seed} (replay with MYRIAD_FUZZ_SEED={seed})");
    let mut rng = StdRng::seed_from_u64(seed);
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().to_owned();
    // MYRIAD_CRASH_KEEP keeps the data directory and server.log for a post-mortem, and
    // a copy of the data directory as the last crash left it (data.crashed).
    let keep = std::env::var_os("MYRIAD_CRASH_KEEP").is_some();
    let _tmp = if keep {
        eprintln!("crash data directory kept: {}", tmp.keep().display());
        None
    } else {
        Some(tmp)
    };
    let mut model = Model::default();

    let mut server = start(&dir);
    {
        let client = wait_ready(&mut server, &dir).await;
        client
            .batch_execute(
                "CREATE TABLE items (id bigint PRIMARY KEY, payload text NOT NULL);
                 CREATE TABLE counters (id int PRIMARY KEY, n bigint NOT NULL);
                 CREATE TABLE events (id bigserial PRIMARY KEY, writer int NOT NULL)",
            )
            .await
            .expect("create tables");
        for k in 0..COUNTERS {
            client
                .batch_execute(&format!("INSERT INTO counters VALUES ({k}, 0)"))
                .await
                .expect("insert counter");
            model.counters.insert(k, (0, 0));
        }
    }

    // Tables created (and some dropped) by acknowledged DDL: they must survive as well.
    let mut ddl_tables = std::collections::BTreeSet::new();
    for cycle in 0..cycles {
        {
            let ddl = connect(server.port).await.expect("connect for DDL");
            // One transaction, implicit (a query string) or explicit.
            let (begin, commit) = if cycle % 2 == 1 {
                ("BEGIN;", "; COMMIT")
            } else {
                ("", "")
            };
            ddl.batch_execute(&format!(
                "{begin} CREATE TABLE ddl_{cycle} (a int PRIMARY KEY, b int);
                 INSERT INTO ddl_{cycle} VALUES ({cycle}, {cycle});
                 CREATE INDEX ON ddl_{cycle} (b){commit}"
            ))
            .await
            .expect("DDL");
            ddl_tables.insert(cycle);
            if cycle >= 2 && cycle % 2 == 0 {
                ddl.batch_execute(&format!("DROP TABLE ddl_{}", cycle - 2))
                    .await
                    .expect("DROP TABLE");
                ddl_tables.remove(&(cycle - 2));
            }
        }
        // A transaction that creates a table and is still open when the kill comes:
        // neither the table nor its OIDs may come back.
        let open_tx = connect(server.port).await.expect("connect for DDL");
        open_tx
            .batch_execute(&format!(
                "BEGIN; CREATE TABLE open_{cycle} (a int PRIMARY KEY);
                 INSERT INTO open_{cycle} VALUES (1)"
            ))
            .await
            .expect("uncommitted DDL");
        let shared = Arc::new(Mutex::new(std::mem::take(&mut model)));
        let next_item = (cycle as i64 + 1) * 10_000;
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                tokio::spawn(writer(
                    server.port,
                    w,
                    seed + cycle as u64,
                    shared.clone(),
                    next_item,
                ))
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(rng.random_range(100..1500))).await;
        server.child.kill().expect("kill -9");
        let _ = server.child.wait();
        for w in writers {
            w.await.expect("writer task");
        }
        drop(open_tx);
        model = Arc::try_unwrap(shared)
            .ok()
            .expect("writers are done")
            .into_inner()
            .unwrap();

        drop(server);
        if keep {
            // The data directory as the crash left it, before recovery changes it.
            let crashed = dir.join("data.crashed");
            let _ = std::fs::remove_dir_all(&crashed);
            let copied = Command::new("cp")
                .arg("-a")
                .arg(dir.join("data"))
                .arg(&crashed)
                .status();
            assert!(copied.is_ok_and(|s| s.success()), "copy the data directory");
        }
        server = start(&dir);
        let client = wait_ready(&mut server, &dir).await;
        verify(&client, &mut model, cycle).await;
        for t in 0..=cycle {
            let sql = format!("SELECT a FROM ddl_{t} WHERE b = {t}");
            match client.simple_query(&sql).await {
                Ok(_) if ddl_tables.contains(&t) => {
                    assert_eq!(rows(&client, &sql).await, vec![vec![Some(t.to_string())]]);
                }
                Ok(_) => panic!("cycle {cycle}: dropped table ddl_{t} is back"),
                Err(e) => assert!(
                    !ddl_tables.contains(&t),
                    "cycle {cycle}: table ddl_{t} is lost: {e}"
                ),
            }
        }
        let e = client
            .simple_query(&format!("SELECT * FROM open_{cycle}"))
            .await
            .expect_err("an uncommitted CREATE TABLE is back");
        assert_eq!(
            e.code(),
            Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE)
        );
        // The files it left behind are nobody's: new relations do not collide with them.
        client
            .batch_execute(&format!(
                "CREATE TABLE open_{cycle} (a int PRIMARY KEY); DROP TABLE open_{cycle}"
            ))
            .await
            .expect("create after an uncommitted CREATE");
    }
    let acked = model.items.len();
    drop(server);
    eprintln!("{cycles} crash cycles, {acked} items survived");
    assert!(acked > 0, "the writers never got anything done");
}
