//! Writes the seed corpora of the fuzz targets into `fuzz/corpus/<target>/seed-*`, made
//! by the code itself where the inputs are Myriad's own bytes (pages, log records) and by
//! hand where they are a client's (protocol messages as psql and pgbench send them):
//!
//! ```sh
//! cargo run -p myriad-fuzzing --example make_seeds
//! ```
//!
//! Files named `seed-*` are replaced; anything else in the corpus (inputs fuzzing found
//! and `cargo fuzz cmin` kept) is left alone.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use access::nbtree::{BTree, RootCache};
use access::{heapam, tuple};
use bytes::BytesMut;
use common::ids::ItemPointer;
use common::{DataType, Value};
use myriad_fuzzing::pages::{Env, page_image};
use myriad_fuzzing::wal::encode_records;
use storage::xlog::{MIN_WAL_SEGMENT_SIZE, WalReader};

fn corpus(target: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    std::fs::create_dir_all(&dir).expect("create the corpus directory");
    for entry in std::fs::read_dir(&dir).expect("list the corpus") {
        let path = entry.expect("a corpus entry").path();
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("seed-"))
        {
            std::fs::remove_file(&path).expect("remove an old seed");
        }
    }
    dir
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(dir.join(format!("seed-{name}")), bytes).expect("write a seed");
}

fn main() {
    wire_frames();
    bind_params();
    sql_front_end();
    wal_record();
    heap_page();
    btree_page();
}

/// A typed message: type byte, length, body.
fn msg(ty: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![ty];
    m.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
    m.extend_from_slice(body);
    m
}

fn cstr(s: &str) -> Vec<u8> {
    let mut b = s.as_bytes().to_vec();
    b.push(0);
    b
}

/// A StartupMessage (protocol 3.0) with these parameters.
fn startup(params: &[(&str, &str)]) -> Vec<u8> {
    let mut body = 196_608i32.to_be_bytes().to_vec();
    for (k, v) in params {
        body.extend(cstr(k));
        body.extend(cstr(v));
    }
    body.push(0);
    let mut m = (body.len() as i32 + 4).to_be_bytes().to_vec();
    m.extend(body);
    m
}

fn parse(name: &str, sql: &str, types: &[u32]) -> Vec<u8> {
    let mut b = cstr(name);
    b.extend(cstr(sql));
    b.extend((types.len() as u16).to_be_bytes());
    for t in types {
        b.extend(t.to_be_bytes());
    }
    msg(b'P', &b)
}

fn bind(
    portal: &str,
    stmt: &str,
    formats: &[u16],
    params: &[Option<&[u8]>],
    results: &[u16],
) -> Vec<u8> {
    let mut b = cstr(portal);
    b.extend(cstr(stmt));
    b.extend((formats.len() as u16).to_be_bytes());
    for f in formats {
        b.extend(f.to_be_bytes());
    }
    b.extend((params.len() as u16).to_be_bytes());
    for p in params {
        match p {
            None => b.extend((-1i32).to_be_bytes()),
            Some(v) => {
                b.extend((v.len() as i32).to_be_bytes());
                b.extend(*v);
            }
        }
    }
    b.extend((results.len() as u16).to_be_bytes());
    for f in results {
        b.extend(f.to_be_bytes());
    }
    msg(b'B', &b)
}

fn describe(kind: u8, name: &str) -> Vec<u8> {
    let mut b = vec![kind];
    b.extend(cstr(name));
    msg(b'D', &b)
}

fn execute(portal: &str, max_rows: i32) -> Vec<u8> {
    let mut b = cstr(portal);
    b.extend(max_rows.to_be_bytes());
    msg(b'E', &b)
}

fn wire_frames() {
    let dir = corpus("wire_frames");
    let psql = startup(&[
        ("user", "postgres"),
        ("database", "postgres"),
        ("application_name", "psql"),
        ("client_encoding", "UTF8"),
    ]);
    let ssl = [0, 0, 0, 8, 4, 210, 22, 47];
    let gss = [0, 0, 0, 8, 4, 210, 22, 48];
    let terminate = msg(b'X', b"");
    let sync = msg(b'S', b"");
    let query = |q: &str| msg(b'Q', &cstr(q));
    let streams: Vec<(&str, Vec<Vec<u8>>)> = vec![
        (
            "psql",
            vec![
                ssl.to_vec(),
                psql.clone(),
                query("SELECT 1;"),
                query("BEGIN; SELECT * FROM t WHERE a = 1; COMMIT;"),
                terminate.clone(),
            ],
        ),
        (
            "gss-then-startup",
            vec![
                gss.to_vec(),
                startup(&[("user", "u"), ("options", "-c search_path=public")]),
            ],
        ),
        (
            "cancel",
            vec![vec![0, 0, 0, 16, 4, 210, 22, 46, 0, 0, 0, 7, 0, 0, 0, 9]],
        ),
        (
            "pgbench-extended",
            vec![
                startup(&[
                    ("user", "postgres"),
                    ("database", "bench"),
                    ("application_name", "pgbench"),
                ]),
                parse(
                    "",
                    "SELECT abalance FROM pgbench_accounts WHERE aid = $1;",
                    &[],
                ),
                bind("", "", &[0], &[Some(b"42")], &[]),
                describe(b'P', ""),
                execute("", 0),
                sync.clone(),
                terminate.clone(),
            ],
        ),
        (
            "pgbench-prepared",
            vec![
                startup(&[("user", "postgres"), ("database", "bench")]),
                parse(
                    "P0_1",
                    "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;",
                    &[23, 23],
                ),
                describe(b'S', "P0_1"),
                sync.clone(),
                bind(
                    "",
                    "P0_1",
                    &[1],
                    &[Some(&5i32.to_be_bytes()), Some(&7i32.to_be_bytes())],
                    &[1],
                ),
                execute("", 0),
                msg(b'C', &[b'S', b'P', b'0', b'_', b'1', 0]),
                msg(b'H', b""),
                sync.clone(),
            ],
        ),
        (
            "copy-in",
            vec![
                psql.clone(),
                query("COPY t (a, b) FROM STDIN"),
                msg(b'd', b"1\tone\n2\ttwo\n"),
                msg(b'd', b"\\.\n"),
                msg(b'c', b""),
                msg(b'f', &cstr("client gave up")),
            ],
        ),
        (
            "null-params",
            vec![
                psql.clone(),
                parse("s", "SELECT $1::int, $2::text", &[0, 25]),
                bind("p", "s", &[], &[None, Some(b"x")], &[0, 1]),
                execute("p", 1),
                execute("p", 0),
                msg(b'C', &[b'P', b'p', 0]),
                sync,
            ],
        ),
        (
            "function-call",
            vec![psql.clone(), msg(b'F', &[0, 0, 0, 1, 0, 0, 0, 0, 0, 0])],
        ),
        (
            "truncated-bind",
            vec![psql, msg(b'B', &[0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff])],
        ),
    ];
    for (name, messages) in streams {
        write(&dir, name, &messages.concat());
    }
}

fn bind_params() {
    let dir = corpus("bind_params");
    // Selectors as `myriad_fuzzing::wire::bind_params` reads them: the index into its
    // type table, 0x40 for the array type, 0x80 for binary.
    let values: Vec<(u8, Value)> = vec![
        (0, Value::Bool(true)),
        (1, Value::Int2(-7)),
        (2, Value::Int4(42)),
        (3, Value::Int8(1 << 40)),
        (4, Value::Float4(1.5)),
        (5, Value::Float8(-2.25e100)),
        (6, Value::Text("héllo".into())),
        (
            10,
            Value::parse(
                "2024-02-29",
                &DataType::Date,
                &common::value::TextContext::detached(),
            )
            .expect("a date"),
        ),
        (
            11,
            Value::parse(
                "2024-02-29 12:34:56.789",
                &DataType::Timestamp(None),
                &common::value::TextContext::detached(),
            )
            .expect("a timestamp"),
        ),
        (
            13,
            Value::parse(
                "2024-02-29 12:34:56+02",
                &DataType::TimestampTz(None),
                &common::value::TextContext::detached(),
            )
            .expect("a timestamptz"),
        ),
        (
            14,
            Value::parse(
                "1 year 2 mons 3 days 04:05:06.5",
                &DataType::Interval,
                &common::value::TextContext::detached(),
            )
            .expect("an interval"),
        ),
        (
            15,
            Value::parse(
                "-12345.678900",
                &DataType::Numeric(None),
                &common::value::TextContext::detached(),
            )
            .expect("a numeric"),
        ),
        (
            15,
            Value::parse(
                "NaN",
                &DataType::Numeric(None),
                &common::value::TextContext::detached(),
            )
            .expect("NaN"),
        ),
        (
            17,
            Value::parse(
                "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
                &DataType::Uuid,
                &common::value::TextContext::detached(),
            )
            .expect("a uuid"),
        ),
        (18, Value::Bytea(vec![0, 1, 0xff])),
        (19, Value::Oid(4_000_000_000)),
    ];
    let int4_array = DataType::Int4.array().expect("int4[]");
    let text_array = DataType::Text.array().expect("text[]");
    let arrays = [
        (
            0x40 | 2,
            Value::parse(
                "{{1,2},{3,NULL}}",
                &int4_array,
                &common::value::TextContext::detached(),
            )
            .expect("an int4[]"),
        ),
        (
            0x40 | 6,
            Value::parse(
                "[0:1]={\"a b\",\"\\\"q\\\"\"}",
                &text_array,
                &common::value::TextContext::detached(),
            )
            .expect("a text[]"),
        ),
    ];
    for (i, (selector, v)) in values.iter().chain(arrays.iter()).enumerate() {
        let mut buf = BytesMut::new();
        wire::binary::put_value(v, &mut buf);
        let mut binary = vec![selector | 0x80];
        binary.extend_from_slice(&buf[4..]);
        write(&dir, &format!("{i:02}-binary"), &binary);
        if let Some(text) = v.to_text(&common::value::TextContext::detached()) {
            let mut t = vec![*selector];
            t.extend_from_slice(text.as_bytes());
            write(&dir, &format!("{i:02}-text"), &t);
        }
    }
}

/// Statements of `tests/slt/`, a few from each file, spread over it.
fn sql_front_end() {
    const PER_FILE: usize = 10;
    let dir = corpus("sql_front_end");
    let slt = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/slt");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&slt)
        .expect("tests/slt")
        .map(|e| e.expect("an slt entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "slt"))
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read an slt file");
        let statements = slt_statements(&text);
        let stem = file
            .file_stem()
            .expect("a file name")
            .to_string_lossy()
            .into_owned();
        let step = statements.len().div_ceil(PER_FILE).max(1);
        for (i, s) in statements.iter().step_by(step).enumerate() {
            write(&dir, &format!("{stem}-{i}"), s.as_bytes());
        }
    }
    for (name, sql) in [
        (
            "pgbench-update",
            "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;",
        ),
        (
            "pgbench-select",
            "SELECT abalance FROM pgbench_accounts WHERE aid = $1;",
        ),
        (
            "pgbench-insert",
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP);",
        ),
        (
            "sysbench-range",
            "SELECT c FROM sbtest1 WHERE id BETWEEN $1 AND $2 ORDER BY c",
        ),
        (
            "sysbench-sum",
            "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 10 AND 110",
        ),
        (
            "prepare",
            "PREPARE q (int, text) AS SELECT * FROM t WHERE a = $1 AND b = $2",
        ),
        (
            "join",
            "SELECT t.a, u.name, count(*) FROM t JOIN u ON u.t_a = t.a LEFT JOIN v ON v.u_id = u.id \
             WHERE t.c > 1.5 AND t.f < now() GROUP BY 1, 2 HAVING count(*) > 1 ORDER BY 1 DESC LIMIT 5",
        ),
        (
            "subqueries",
            "SELECT a FROM t WHERE a IN (SELECT t_a FROM u) AND EXISTS (SELECT 1 FROM v WHERE v.t_a = t.a) \
             UNION ALL SELECT x FROM unnest(ARRAY[1,2]) AS x",
        ),
        (
            "alter",
            "ALTER TABLE u ADD COLUMN z int DEFAULT 3, ADD CHECK (z > 0)",
        ),
    ] {
        write(&dir, name, sql.as_bytes());
    }
}

/// The SQL of each `statement` and `query` record of an slt file.
fn slt_statements(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if !(line.starts_with("statement ") || line.starts_with("query ")) {
            continue;
        }
        let mut sql = Vec::new();
        for l in lines.by_ref() {
            if l.trim().is_empty() || l == "----" {
                break;
            }
            sql.push(l);
        }
        if !sql.is_empty() {
            out.push(sql.join("\n"));
        }
    }
    out
}

/// Records a server logs for a small workload: catalog changes, transaction records,
/// relation files and page changes (full images and deltas), read back from its WAL.
fn wal_record() {
    use wire::Session as _;
    let dir = corpus("wal_record");
    let data = tempfile::tempdir().expect("a temporary directory");
    let config = server::Config {
        data_dir: data.path().to_path_buf(),
        buffer_pool_pages: 64,
        wal_segment_size: MIN_WAL_SEGMENT_SIZE,
        autovacuum: false,
        ..server::Config::default()
    };
    let db = Arc::new(server::Database::open(&config).expect("open a data directory"));
    let mut session = server::session::Session::new(db.clone());
    let workload = [
        (
            "create",
            "CREATE TABLE w (id int PRIMARY KEY, name text, n numeric)",
        ),
        (
            "insert",
            "INSERT INTO w SELECT g, 'row ' || g, g * 1.5 FROM generate_series(1, 40) g",
        ),
        ("update", "UPDATE w SET name = 'changed' WHERE id % 3 = 0"),
        ("index", "CREATE INDEX w_name ON w (name)"),
        ("delete", "DELETE FROM w WHERE id > 30"),
        // VACUUM marks pages in the visibility and free space maps, and cuts the empty
        // pages at the end (a truncation record).
        (
            "grow",
            "INSERT INTO w SELECT g, repeat('x', 500), 0 FROM generate_series(1000, 1100) g",
        ),
        ("shrink", "DELETE FROM w WHERE id >= 1000"),
        ("vacuum", "VACUUM w"),
        ("sequence", "CREATE SEQUENCE s; SELECT nextval('s')"),
        (
            "rollback",
            "BEGIN; INSERT INTO w VALUES (100, 'gone', 0); ROLLBACK",
        ),
        ("alter", "ALTER TABLE w ADD COLUMN extra int DEFAULT 7"),
        ("drop", "DROP TABLE w"),
    ];
    let mut position = MIN_WAL_SEGMENT_SIZE;
    let mut all = Vec::new();
    for (name, sql) in workload {
        for outcome in session.execute_all(sql) {
            if let Err(e) = outcome.result {
                panic!("{sql}: {}", e.message);
            }
        }
        db.wal()
            .flush(db.wal().insert_lsn())
            .expect("flush the log");
        // A reader caches the segment it read: a new one sees what was added since.
        let mut reader = WalReader::new(db.wal(), position);
        let mut step = Vec::new();
        while let Some(r) = reader.next_record().expect("read the log") {
            step.push((r.kind, r.payload));
        }
        position = reader.position();
        write(
            &dir,
            name,
            &encode_records(step.iter().map(|(k, p)| (*k, p.as_slice()))),
        );
        all.extend(step);
    }
    // The whole workload from an empty directory, as recovery would replay it (the
    // records of its first statements: an input holds at most 64).
    write(
        &dir,
        "from-start",
        &encode_records(all.iter().take(64).map(|(k, p)| (*k, p.as_slice()))),
    );
    drop(session);
}

/// The pages of relation 16384 of `env`, in page image form, concatenated.
fn relation_images(env: &Env, rel: u32) -> Vec<u8> {
    let n = env.pool.smgr().nblocks(rel).expect("nblocks");
    let mut out = Vec::new();
    for block in 0..n {
        let buf = env.pool.read_buffer(rel, block).expect("read a page");
        out.extend(page_image(&buf.read()));
    }
    out
}

const REL: u32 = 16384;

fn heap_page() {
    let dir = corpus("heap_page");
    let types = [DataType::Int4, DataType::Text];
    let row = |i: i32| {
        tuple::encode(&[Value::Int4(i), Value::Text(format!("row {i}"))], &types).expect("encode")
    };
    // Committed inserts, a delete, an update (two versions), a lock, and NULLs.
    let env = Env::new().expect("env");
    env.pool.create_relation(REL).expect("create");
    let tx = env.tx();
    let xid = tx.xid().expect("xid");
    let mut tids = Vec::new();
    for i in 0..6 {
        tids.push(heapam::heap_insert(&env.pool, REL, &row(i), xid, 0, 100).expect("insert"));
    }
    let nulls = tuple::encode(&[Value::Int4(9), Value::Null], &types).expect("encode");
    heapam::heap_insert(&env.pool, REL, &nulls, xid, 0, 100).expect("insert");
    tx.commit().expect("commit");
    let tx = env.tx();
    let xid = tx.xid().expect("xid");
    heapam::heap_delete(&env.pool, REL, tids[1], xid, &tx).expect("delete");
    heapam::heap_update(&env.pool, REL, tids[2], &row(22), xid, &tx, false, true).expect("update");
    heapam::heap_lock(
        &env.pool,
        REL,
        tids[3],
        xid,
        &tx,
        common::RowLockMode::Share,
    )
    .expect("lock");
    write(&dir, "mixed-in-progress", &relation_images(&env, REL));
    tx.commit().expect("commit");
    write(&dir, "mixed-committed", &relation_images(&env, REL));

    // Every type in one row, and a page that grew to two blocks.
    let env = Env::new().expect("env");
    env.pool.create_relation(REL).expect("create");
    let tx = env.tx();
    let xid = tx.xid().expect("xid");
    let every = [
        (Value::Bool(true), DataType::Bool),
        (Value::Int8(-5), DataType::Int8),
        (Value::Float8(0.25), DataType::Float8),
        (Value::Bpchar("ab ".into()), DataType::Bpchar(Some(3))),
        (
            Value::parse(
                "2001-02-03",
                &DataType::Date,
                &common::value::TextContext::detached(),
            )
            .expect("date"),
            DataType::Date,
        ),
        (
            Value::parse(
                "1.5",
                &DataType::Numeric(None),
                &common::value::TextContext::detached(),
            )
            .expect("numeric"),
            DataType::Numeric(None),
        ),
        (Value::Bytea(vec![1, 2, 3]), DataType::Bytea),
        (
            Value::parse(
                "{1,2,3}",
                &DataType::Int4.array().expect("int4[]"),
                &common::value::TextContext::detached(),
            )
            .expect("array"),
            DataType::Int4.array().expect("int4[]"),
        ),
    ];
    let (values, types): (Vec<Value>, Vec<DataType>) = every.into_iter().unzip();
    let t = tuple::encode(&values, &types).expect("encode");
    heapam::heap_insert(&env.pool, REL, &t, xid, 0, 100).expect("insert");
    for i in 0..400 {
        heapam::heap_insert(&env.pool, REL, &row(i), xid, 0, 100).expect("insert");
    }
    tx.commit().expect("commit");
    write(&dir, "two-blocks", &relation_images(&env, REL));
}

fn btree_page() {
    let dir = corpus("btree_page");
    let tid = |i: u32| ItemPointer {
        block: i / 100,
        offset: (i % 100 + 1) as u16,
    };
    // A one-page tree of integers, a tree of three levels' worth of text keys cut to its
    // first pages, and a two-column tree, each built by inserts (splits included).
    let env = Env::new().expect("env");
    let cache = RootCache::new();
    env.pool.create_relation(REL).expect("create");
    let tree = BTree::new(&env.pool, &cache, REL);
    tree.create(1).expect("create");
    for i in 0..50 {
        tree.insert(&[Value::Int4(i * 7 % 50)], tid(i as u32))
            .expect("insert");
    }
    write(&dir, "int4-one-leaf", &relation_images(&env, REL));

    let env = Env::new().expect("env");
    let cache = RootCache::new();
    env.pool.create_relation(REL).expect("create");
    let tree = BTree::new(&env.pool, &cache, REL);
    tree.create(1).expect("create");
    for i in 0..700u32 {
        tree.insert(&[Value::Text(format!("key {:05}", i * 37 % 700))], tid(i))
            .expect("insert");
    }
    let images = relation_images(&env, REL);
    write(&dir, "text-split", &images);

    let env = Env::new().expect("env");
    let cache = RootCache::new();
    env.pool.create_relation(REL).expect("create");
    let tree = BTree::new(&env.pool, &cache, REL);
    let entries = (0..300u32).map(|i| {
        (
            vec![
                Value::Int8(i as i64 / 3),
                Value::parse(
                    "2.5",
                    &DataType::Numeric(None),
                    &common::value::TextContext::detached(),
                )
                .expect("numeric"),
            ],
            tid(i),
        )
    });
    tree.build(2, entries).expect("build");
    write(&dir, "two-columns-built", &relation_images(&env, REL));
}
