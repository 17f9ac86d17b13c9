//! The extended query protocol, message by message: what each batch of Parse / Bind /
//! Describe / Execute / Close / Sync gets back, as PostgreSQL 15 answers it (parameter
//! types inferred from context, row limits, errors skipping to Sync, the implicit
//! transaction of a batch, the plan cache under DDL), and typed values through
//! `tokio_postgres` (binary parameters and results).
//!
//! Every expectation was checked against PostgreSQL 15: run these tests with
//! `MYRIAD_ORACLE_ADDR=127.0.0.1:PORT` (a PostgreSQL with trust authentication for user
//! postgres) and `--test-threads=1` (they share table names there) and they run against
//! it instead of an in-process Myriad.

mod common;

use common::raw::{Conn, bind, check, close, describe, execute, parse, query, sync, target};

const SETUP: &str = "drop table if exists ext_a; \
    create table ext_a(aid int4 primary key, abalance int4, filler varchar(20)); \
    insert into ext_a values (1, 10, 'a'), (2, 20, 'b'), (3, 30, NULL)";

fn setup_done() -> Vec<&'static str> {
    vec![
        "CommandComplete DROP TABLE",
        "CommandComplete CREATE TABLE",
        "CommandComplete INSERT 0 3",
        "ReadyForQuery I",
    ]
}

async fn setup(conn: &mut Conn) {
    conn.send(&query(SETUP)).await;
    let got = conn.until_ready().await;
    // DROP TABLE IF EXISTS may or may not say it skipped.
    let got: Vec<String> = got
        .into_iter()
        .filter(|m| !m.starts_with("Notice"))
        .collect();
    assert_eq!(got, setup_done());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parameter_types_are_inferred_from_their_context() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    setup(&mut c).await;
    let describe_unnamed = |sql: &str| vec![parse("", sql, &[]), describe(b'S', ""), sync()];
    check(
        &mut c,
        &[
            (
                describe_unnamed("SELECT abalance, filler FROM ext_a WHERE aid = $1"),
                &[
                    "ParseComplete",
                    "ParameterDescription 23",
                    "RowDescription abalance:23/0,filler:1043/0",
                    "ReadyForQuery I",
                ],
            ),
            (
                describe_unnamed("UPDATE ext_a SET abalance = abalance + $1 WHERE aid = $2"),
                &[
                    "ParseComplete",
                    "ParameterDescription 23,23",
                    "NoData",
                    "ReadyForQuery I",
                ],
            ),
            (
                describe_unnamed("INSERT INTO ext_a VALUES ($1, $2, $3)"),
                &[
                    "ParseComplete",
                    "ParameterDescription 23,23,1043",
                    "NoData",
                    "ReadyForQuery I",
                ],
            ),
            (
                describe_unnamed("SELECT $1"),
                &[
                    "ParseComplete",
                    "ParameterDescription 25",
                    "RowDescription ?column?:25/0",
                    "ReadyForQuery I",
                ],
            ),
            (
                describe_unnamed("SELECT $1 IS NULL"),
                &[
                    "Error 42P18 could not determine data type of parameter $1",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![
                    parse("", "SELECT $1::int4 + 1, $2::text || 'x'", &[23, 25]),
                    describe(b'S', ""),
                    bind("", "", &[], &[Some(b"41"), None], &[]),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "ParseComplete",
                    "ParameterDescription 23,25",
                    "RowDescription ?column?:23/0,?column?:25/0",
                    "BindComplete",
                    "DataRow 42|NULL",
                    "CommandComplete SELECT 1",
                    "ReadyForQuery I",
                ],
            ),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgbench_flights_and_row_limits() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    setup(&mut c).await;
    let flight = |sql: &str, params: &[Option<&[u8]>]| {
        vec![
            parse("", sql, &[]),
            bind("", "", &[], params, &[0]),
            describe(b'P', ""),
            execute("", 0),
            sync(),
        ]
    };
    check(
        &mut c,
        &[
            (
                flight("BEGIN;", &[]),
                &[
                    "ParseComplete",
                    "BindComplete",
                    "NoData",
                    "CommandComplete BEGIN",
                    "ReadyForQuery T",
                ],
            ),
            (
                flight(
                    "UPDATE ext_a SET abalance = abalance + $1 WHERE aid = $2;",
                    &[Some(b"-5"), Some(b"2")],
                ),
                &[
                    "ParseComplete",
                    "BindComplete",
                    "NoData",
                    "CommandComplete UPDATE 1",
                    "ReadyForQuery T",
                ],
            ),
            (
                flight("SELECT abalance FROM ext_a WHERE aid = $1;", &[Some(b"2")]),
                &[
                    "ParseComplete",
                    "BindComplete",
                    "RowDescription abalance:23/0",
                    "DataRow 15",
                    "CommandComplete SELECT 1",
                    "ReadyForQuery T",
                ],
            ),
            (
                flight("END;", &[]),
                &[
                    "ParseComplete",
                    "BindComplete",
                    "NoData",
                    "CommandComplete COMMIT",
                    "ReadyForQuery I",
                ],
            ),
            // A named statement, prepared once and bound twice.
            (
                vec![
                    parse("P_1", "SELECT filler FROM ext_a WHERE aid = $1", &[]),
                    sync(),
                ],
                &["ParseComplete", "ReadyForQuery I"],
            ),
            (
                vec![
                    bind("", "P_1", &[], &[Some(b"1")], &[0]),
                    describe(b'P', ""),
                    execute("", 0),
                    sync(),
                    bind("", "P_1", &[], &[Some(b"3")], &[0]),
                    describe(b'P', ""),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "BindComplete",
                    "RowDescription filler:1043/0",
                    "DataRow a",
                    "CommandComplete SELECT 1",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![],
                &[
                    "BindComplete",
                    "RowDescription filler:1043/0",
                    "DataRow NULL",
                    "CommandComplete SELECT 1",
                    "ReadyForQuery I",
                ],
            ),
            // Row limits: the portal is suspended and goes on where it stopped.
            (
                vec![
                    parse("", "SELECT aid FROM ext_a ORDER BY aid", &[]),
                    bind("", "", &[], &[], &[]),
                    execute("", 2),
                    execute("", 2),
                    execute("", 2),
                    sync(),
                ],
                &[
                    "ParseComplete",
                    "BindComplete",
                    "DataRow 1",
                    "DataRow 2",
                    "PortalSuspended",
                    "DataRow 3",
                    "CommandComplete SELECT 1",
                    "CommandComplete SELECT 0",
                    "ReadyForQuery I",
                ],
            ),
            // An empty statement.
            (
                vec![
                    parse("", "", &[]),
                    bind("", "", &[], &[], &[]),
                    describe(b'P', ""),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "ParseComplete",
                    "BindComplete",
                    "NoData",
                    "EmptyQueryResponse",
                    "ReadyForQuery I",
                ],
            ),
            // SHOW returns a row through the extended protocol too.
            (
                vec![
                    parse("", "SHOW lock_timeout", &[]),
                    describe(b'S', ""),
                    bind("", "", &[], &[], &[]),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "ParseComplete",
                    "ParameterDescription ",
                    "RowDescription lock_timeout:25/0",
                    "BindComplete",
                    "DataRow 0",
                    "CommandComplete SHOW",
                    "ReadyForQuery I",
                ],
            ),
            // Closing a statement: binding it afterwards fails.
            (
                vec![
                    close(b'S', "P_1"),
                    close(b'S', "never_prepared"),
                    bind("", "P_1", &[], &[Some(b"1")], &[]),
                    sync(),
                ],
                &[
                    "CloseComplete",
                    "CloseComplete",
                    "Error 26000 prepared statement \"P_1\" does not exist",
                    "ReadyForQuery I",
                ],
            ),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_parameters_and_results() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    setup(&mut c).await;
    check(
        &mut c,
        &[(
            vec![
                parse("", "SELECT aid, filler FROM ext_a WHERE aid = $1", &[]),
                bind("", "", &[1], &[Some(&[0, 0, 0, 2])], &[1, 0]),
                describe(b'P', ""),
                execute("", 0),
                sync(),
            ],
            &[
                "ParseComplete",
                "BindComplete",
                "RowDescription aid:23/1,filler:1043/0",
                "DataRow [00, 00, 00, 02]|b",
                "CommandComplete SELECT 1",
                "ReadyForQuery I",
            ],
        )],
    )
    .await;
}

/// `numeric` in PostgreSQL's binary format (`numeric_send`: int16 ndigits, weight,
/// sign, dscale, then base-10000 digits) both ways, its typmods and text form; a
/// parameter left open next to a numeric column becomes numeric; bad bytes are
/// `numeric_recv`'s errors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn numeric_binary_parameters_and_results() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    let setup = "drop table if exists ext_n; \
        create table ext_n(k numeric(6,2) primary key, v text); \
        insert into ext_n values (1.0, 'one'), (-2.5, 'minus'), (1234.5, 'big')";
    c.send(&query(setup)).await;
    c.until_ready().await;
    // 1234.50: ndigits 2, weight 0, positive, dscale 2, digits 1234 5000.
    let n_1234_50: &[u8] = &[0, 2, 0, 0, 0, 0, 0, 2, 0x04, 0xd2, 0x13, 0x88];
    // -0.0001: ndigits 1, weight -1, negative, dscale 4, digit 1.
    let n_neg_tiny: &[u8] = &[0, 1, 0xff, 0xff, 0x40, 0, 0, 4, 0, 1];
    let nan: &[u8] = &[0, 0, 0, 0, 0xc0, 0, 0, 0];
    let numeric_sql = "SELECT $1 * 2 AS d, $1::numeric(5,1) AS r, $1::text AS t";
    check(
        &mut c,
        &[
            (
                vec![
                    parse("n", numeric_sql, &[1700]),
                    describe(b'S', "n"),
                    bind("", "n", &[1], &[Some(n_1234_50)], &[1, 1, 0]),
                    execute("", 0),
                    bind("", "n", &[1], &[Some(n_neg_tiny)], &[1, 0, 0]),
                    execute("", 0),
                    bind("", "n", &[1], &[Some(nan)], &[1, 1, 1]),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "ParseComplete",
                    "ParameterDescription 1700",
                    "RowDescription d:1700/0,r:1700/0,t:25/0",
                    "BindComplete",
                    // 2469.00 and 1234.5 (rounded to numeric(5,1)).
                    "DataRow [00, 01, 00, 00, 00, 00, 00, 02, 09, a5]|[00, 02, 00, 00, 00, 00, 00, 01, 04, d2, 13, 88]|1234.50",
                    "CommandComplete SELECT 1",
                    "BindComplete",
                    "DataRow [00, 01, ff, ff, 40, 00, 00, 04, 00, 02]|0.0|-0.0001",
                    "CommandComplete SELECT 1",
                    "BindComplete",
                    "DataRow [00, 00, 00, 00, c0, 00, 00, 00]|[00, 00, 00, 00, c0, 00, 00, 00]|NaN",
                    "CommandComplete SELECT 1",
                    "ReadyForQuery I",
                ],
            ),
            // An open parameter compared with a numeric column is numeric: '1.00' finds
            // 1.0, the binary 1234.50 finds 1234.5.
            (
                vec![
                    parse("k", "SELECT k, v FROM ext_n WHERE k = $1", &[]),
                    describe(b'S', "k"),
                    bind("", "k", &[], &[Some(b"1.00")], &[]),
                    execute("", 0),
                    bind("", "k", &[1], &[Some(n_1234_50)], &[1, 0]),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "ParseComplete",
                    "ParameterDescription 1700",
                    "RowDescription k:1700/0,v:25/0",
                    "BindComplete",
                    "DataRow 1.00|one",
                    "CommandComplete SELECT 1",
                    "BindComplete",
                    "DataRow [00, 02, 00, 00, 00, 00, 00, 02, 04, d2, 13, 88]|big",
                    "CommandComplete SELECT 1",
                    "ReadyForQuery I",
                ],
            ),
            // Binary input into a numeric(6,2) column rounds as the column does. (Its
            // overflow is an error at Bind in PostgreSQL, whose planner folds the
            // parameter's cast, and at Execute in Myriad: not checked here.)
            (
                vec![
                    parse("ins", "INSERT INTO ext_n VALUES ($1, 'tiny') RETURNING k", &[]),
                    bind("", "ins", &[1], &[Some(n_neg_tiny)], &[]),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "ParseComplete",
                    "BindComplete",
                    "DataRow 0.00",
                    "CommandComplete INSERT 0 1",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![
                    bind("", "n", &[1], &[Some(&[0, 0, 0, 0, 0x12, 0x34, 0, 0])], &[]),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "Error 22P03 invalid sign in external \"numeric\" value [unnamed portal parameter $1]",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![
                    bind("", "n", &[1], &[Some(&[0, 1, 0, 0, 0, 0, 0, 0, 0x27, 0x10])], &[]),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "Error 22P03 invalid digit in external \"numeric\" value [unnamed portal parameter $1]",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![
                    bind("", "n", &[1], &[Some(&[0, 0, 0, 0, 0, 0, 0xff, 0xff])], &[]),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "Error 22P03 invalid scale in external \"numeric\" value [unnamed portal parameter $1]",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![
                    bind("", "n", &[1], &[Some(&[0, 0, 0, 0, 0, 0, 0, 0, 0])], &[]),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "Error 22P03 incorrect binary data format in bind parameter 1 [unnamed portal parameter $1]",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![
                    bind("", "n", &[1], &[Some(&[0, 2, 0, 0, 0, 0, 0, 0, 0, 1])], &[]),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "Error 08P01 insufficient data left in message [unnamed portal parameter $1]",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![
                    bind("", "n", &[0], &[Some(b"1e200000")], &[]),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "Error 22003 value overflows numeric format [unnamed portal parameter $1 = '...']",
                    "ReadyForQuery I",
                ],
            ),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_skip_to_sync_and_roll_back_the_batch() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    setup(&mut c).await;
    let insert = "INSERT INTO ext_a VALUES ($1, 0, 'x')";
    check(
        &mut c,
        &[
            (
                vec![
                    parse("", "SELECT * FROM nope WHERE a = $1", &[]),
                    bind("", "", &[], &[Some(b"1")], &[]),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "Error 42P01 relation \"nope\" does not exist",
                    "ReadyForQuery I",
                ],
            ),
            // The batch is one implicit transaction: the second insert's error undoes
            // the first.
            (
                vec![
                    parse("", insert, &[]),
                    bind("", "", &[], &[Some(b"10")], &[]),
                    execute("", 0),
                    parse("", insert, &[]),
                    bind("", "", &[], &[Some(b"1")], &[]),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "ParseComplete",
                    "BindComplete",
                    "CommandComplete INSERT 0 1",
                    "ParseComplete",
                    "BindComplete",
                    "Error 23505 duplicate key value violates unique constraint \"ext_a_pkey\"",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![query("select count(*) from ext_a")],
                &[
                    "RowDescription count:20/0",
                    "DataRow 3",
                    "CommandComplete SELECT 1",
                    "ReadyForQuery I",
                ],
            ),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_binds_get_postgres_errors() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    setup(&mut c).await;
    let by_aid = "SELECT aid FROM ext_a WHERE aid = $1";
    check(
        &mut c,
        &[
            (
                vec![
                    parse("", "SELECT aid FROM ext_a WHERE aid = $1 AND abalance = $2", &[]),
                    bind("", "", &[], &[Some(b"1")], &[]),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "ParseComplete",
                    "Error 08P01 bind message supplies 1 parameters, but prepared statement \"\" requires 2",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![
                    parse("", by_aid, &[]),
                    bind("", "", &[1], &[Some(&[0, 0, 0, 0, 0, 0, 0, 1])], &[]),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "ParseComplete",
                    "Error 22P03 incorrect binary data format in bind parameter 1 [unnamed portal parameter $1]",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![
                    parse("", by_aid, &[]),
                    bind("", "", &[], &[Some(b"abc")], &[]),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "ParseComplete",
                    "Error 22P02 invalid input syntax for type integer: \"abc\" [unnamed portal parameter $1 = '...']",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![parse("", by_aid, &[]), bind("", "", &[1, 2], &[Some(b"1")], &[]), sync()],
                &[
                    "ParseComplete",
                    "Error 08P01 bind message has 2 parameter formats but 1 parameters",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![parse("", by_aid, &[]), bind("", "", &[], &[Some(b"1")], &[1, 0]), sync()],
                &[
                    "ParseComplete",
                    "Error 08P01 bind message has 2 result formats but query has 1 columns",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![parse("", by_aid, &[]), bind("", "", &[3], &[Some(b"1")], &[]), sync()],
                &[
                    "ParseComplete",
                    "Error 22023 unsupported format code: 3 [unnamed portal parameter $1]",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![bind("", "nope", &[], &[], &[]), execute("", 0), sync()],
                &[
                    "Error 26000 prepared statement \"nope\" does not exist",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![execute("nope", 0), sync()],
                &["Error 34000 portal \"nope\" does not exist", "ReadyForQuery I"],
            ),
            (
                vec![parse("s1", "select 1", &[]), parse("s1", "select 1", &[]), sync()],
                &[
                    "ParseComplete",
                    "Error 42P05 prepared statement \"s1\" already exists",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![parse("", "select 1; select 2", &[]), sync()],
                &[
                    "Error 42601 cannot insert multiple commands into a prepared statement",
                    "ReadyForQuery I",
                ],
            ),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_statements_follow_ddl() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    setup(&mut c).await;
    let run_s = || {
        vec![
            bind("", "s", &[], &[Some(b"2")], &[]),
            execute("", 0),
            sync(),
        ]
    };
    check(
        &mut c,
        &[
            (
                vec![
                    parse("s", "SELECT * FROM ext_a WHERE aid = $1", &[]),
                    sync(),
                ],
                &["ParseComplete", "ReadyForQuery I"],
            ),
            (
                run_s(),
                &[
                    "BindComplete",
                    "DataRow 2|20|b",
                    "CommandComplete SELECT 1",
                    "ReadyForQuery I",
                ],
            ),
            // An index changes nothing the statement returns: it runs on.
            (
                vec![query("create index ext_a_bal on ext_a (abalance)")],
                &["CommandComplete CREATE INDEX", "ReadyForQuery I"],
            ),
            (
                run_s(),
                &[
                    "BindComplete",
                    "DataRow 2|20|b",
                    "CommandComplete SELECT 1",
                    "ReadyForQuery I",
                ],
            ),
            // The table is dropped: the statement's binding is gone with it.
            (
                vec![query("drop table ext_a")],
                &["CommandComplete DROP TABLE", "ReadyForQuery I"],
            ),
            (
                run_s(),
                &[
                    "Error 42P01 relation \"ext_a\" does not exist",
                    "ReadyForQuery I",
                ],
            ),
            // A new table of that name with other columns: never the old plan.
            (
                vec![query(
                    "create table ext_a (aid int4, note text); insert into ext_a values (2, 'new')",
                )],
                &[
                    "CommandComplete CREATE TABLE",
                    "CommandComplete INSERT 0 1",
                    "ReadyForQuery I",
                ],
            ),
            (
                run_s(),
                &[
                    "Error 0A000 cached plan must not change result type",
                    "ReadyForQuery I",
                ],
            ),
            // The same columns again: it runs against the new table.
            (
                vec![query(
                    "drop table ext_a; \
                     create table ext_a (aid int4, abalance int4, filler varchar(20)); \
                     insert into ext_a values (2, 7, 'again')",
                )],
                &[
                    "CommandComplete DROP TABLE",
                    "CommandComplete CREATE TABLE",
                    "CommandComplete INSERT 0 1",
                    "ReadyForQuery I",
                ],
            ),
            (
                run_s(),
                &[
                    "BindComplete",
                    "DataRow 2|7|again",
                    "CommandComplete SELECT 1",
                    "ReadyForQuery I",
                ],
            ),
        ],
    )
    .await;
}

/// A tokio-postgres client connected to `addr`, its connection driven in the background.
async fn driver(addr: std::net::SocketAddr) -> tokio_postgres::Client {
    let url = format!(
        "host={} port={} user=postgres dbname=postgres",
        addr.ip(),
        addr.port()
    );
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_values_through_a_driver() {
    let (_guard, addr) = target().await;
    let client = driver(addr).await;
    client
        .batch_execute(
            "drop table if exists ext_types; \
             create table ext_types (i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, \
             b bool, t text, v varchar(10), c char(3))",
        )
        .await
        .expect("setup");
    let insert = client
        .prepare("insert into ext_types values ($1, $2, $3, $4, $5, $6, $7, $8, $9)")
        .await
        .expect("prepare");
    let types: Vec<String> = insert
        .params()
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    assert_eq!(
        types,
        [
            "int2", "int4", "int8", "float4", "float8", "bool", "text", "varchar", "bpchar"
        ]
    );
    client
        .execute(
            &insert,
            &[
                &-2i16,
                &70_000i32,
                &(-1i64 << 40),
                &1.5f32,
                &-0.25f64,
                &true,
                &"héllo",
                &"short",
                &"ab",
            ],
        )
        .await
        .expect("insert");
    let none: Option<i32> = None;
    client
        .execute(
            "insert into ext_types (i4, t) values ($1, $2)",
            &[&none, &"second"],
        )
        .await
        .expect("insert nulls");
    let rows = client
        .query(
            "select * from ext_types where t = $1 or i4 > $2 order by t",
            &[&"second", &0i32],
        )
        .await
        .expect("select");
    assert_eq!(rows.len(), 2);
    let r = &rows[0];
    assert_eq!(r.get::<_, i16>(0), -2);
    assert_eq!(r.get::<_, i32>(1), 70_000);
    assert_eq!(r.get::<_, i64>(2), -1i64 << 40);
    assert_eq!(r.get::<_, f32>(3), 1.5);
    assert_eq!(r.get::<_, f64>(4), -0.25);
    assert!(r.get::<_, bool>(5));
    assert_eq!(r.get::<_, &str>(6), "héllo");
    assert_eq!(r.get::<_, &str>(7), "short");
    assert_eq!(r.get::<_, &str>(8), "ab ");
    let r = &rows[1];
    assert_eq!(r.get::<_, Option<i32>>(1), None);
    assert_eq!(r.get::<_, &str>(6), "second");
    // Too long for varchar(10): the assignment cast's error, from a parameter too.
    let e = client
        .execute("insert into ext_types (v) values ($1)", &[&"much too long"])
        .await
        .expect_err("too long");
    assert_eq!(common::sqlstate(&e), "22001");
    // Portals in a transaction, fetched a row at a time.
    let mut client = client;
    let tx = client.transaction().await.expect("begin");
    let stmt = tx
        .prepare("select i4 from ext_types order by t")
        .await
        .expect("prepare");
    let portal = tx.bind(&stmt, &[]).await.expect("bind");
    let first = tx.query_portal(&portal, 1).await.expect("fetch");
    let rest = tx.query_portal(&portal, 5).await.expect("fetch");
    assert_eq!(first.len(), 1);
    assert_eq!(rest.len(), 1);
    assert_eq!(first[0].get::<_, Option<i32>>(0), Some(70_000));
    tx.commit().await.expect("commit");
    client
        .batch_execute("drop table ext_types")
        .await
        .expect("teardown");
}

/// `CREATE ... IF NOT EXISTS` of what exists: a notice, and the statement's own tag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn if_not_exists_keeps_the_statements_tag() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    c.send(&query(
        "drop table if exists ine_t; create table ine_t (a int); create index ine_i on ine_t (a)",
    ))
    .await;
    c.until_ready().await;
    check(
        &mut c,
        &[
            (
                vec![query("create table if not exists ine_t (a int)")],
                &[
                    "Notice 42P07 relation \"ine_t\" already exists, skipping",
                    "CommandComplete CREATE TABLE",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![query("create index if not exists ine_i on ine_t (a)")],
                &[
                    "Notice 42P07 relation \"ine_i\" already exists, skipping",
                    "CommandComplete CREATE INDEX",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![query("alter table if exists ine_nosuch add unique (a)")],
                &[
                    "Notice 00000 relation \"ine_nosuch\" does not exist, skipping",
                    "CommandComplete ALTER TABLE",
                    "ReadyForQuery I",
                ],
            ),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parameters_inside_subqueries_and_set_operations() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    setup(&mut c).await;
    let sql = "SELECT aid FROM ext_a WHERE abalance >= (SELECT min(abalance) FROM ext_a \
               WHERE aid <> $1) AND EXISTS (SELECT 1 FROM ext_a b WHERE b.aid = ext_a.aid \
               AND b.abalance < $2) UNION SELECT $3 ORDER BY 1";
    let run = |p1: &'static [u8], p2: &'static [u8]| {
        vec![
            bind("", "sub", &[], &[Some(p1), Some(p2), Some(b"7")], &[]),
            execute("", 0),
            sync(),
        ]
    };
    check(
        &mut c,
        &[
            (
                vec![parse("sub", sql, &[]), describe(b'S', "sub"), sync()],
                &[
                    "ParseComplete",
                    "ParameterDescription 23,23,23",
                    "RowDescription aid:23/0",
                    "ReadyForQuery I",
                ],
            ),
            (
                run(b"1", b"25"),
                &[
                    "BindComplete",
                    "DataRow 2",
                    "DataRow 7",
                    "CommandComplete SELECT 2",
                    "ReadyForQuery I",
                ],
            ),
            (
                run(b"3", b"100"),
                &[
                    "BindComplete",
                    "DataRow 1",
                    "DataRow 2",
                    "DataRow 3",
                    "DataRow 7",
                    "CommandComplete SELECT 4",
                    "ReadyForQuery I",
                ],
            ),
        ],
    )
    .await;
}

/// Arrays and OIDs through a driver: binary parameters and results (`array_send` /
/// `array_recv`), NULL elements, an array column round trip.
#[tokio::test]
async fn arrays_and_oids_through_a_driver() {
    let (_guard, addr) = target().await;
    let client = driver(addr).await;
    let ints: Vec<i32> = vec![3, -1, 70_000];
    let texts: Vec<Option<String>> = vec![Some("a b".into()), None, Some("".into())];
    let row = client
        .query_one(
            "SELECT $1::int4[], $2::text[], array_length($1::int4[], 1), \
             'pg_class'::regclass::oid, 2 = ANY($1::int4[])",
            &[&ints, &texts],
        )
        .await
        .expect("query");
    assert_eq!(row.get::<_, Vec<i32>>(0), ints);
    assert_eq!(row.get::<_, Vec<Option<String>>>(1), texts);
    assert_eq!(row.get::<_, i32>(2), 3);
    assert_eq!(row.get::<_, u32>(3), 1259);
    assert!(!row.get::<_, bool>(4));
    client
        .batch_execute(
            "drop table if exists ext_arrays; create table ext_arrays (id int, v int8[])",
        )
        .await
        .expect("setup");
    let stored: Vec<i64> = vec![1 << 40, 0];
    client
        .execute("insert into ext_arrays values (1, $1)", &[&stored])
        .await
        .expect("insert");
    let row = client
        .query_one("select v, v::text from ext_arrays where id = 1", &[])
        .await
        .expect("select");
    assert_eq!(row.get::<_, Vec<i64>>(0), stored);
    assert_eq!(row.get::<_, String>(1), "{1099511627776,0}");
}

/// Every function `pg_proc` lists binds with its argument types and has its result
/// type: each is prepared (bound, not run) with NULLs of its argument types, a
/// polymorphic argument as `integer` (or `integer[]`), and the result column's type
/// compared. `pg_proc` is a table of what the binder does (`catalog::procs`); this keeps
/// the two the same.
#[tokio::test]
async fn pg_proc_lists_what_binds() {
    let (_guard, addr) = target().await;
    let client = driver(addr).await;
    let concrete = |t: u32| match t {
        2276 | 2283 | 2776 | 5077 => 23,
        2277 | 5078 => 1007,
        t => t,
    };
    let type_name = |t: u32| {
        ::common::DataType::from_oid(concrete(t), -1)
            .unwrap_or_else(|| panic!("type {t}"))
            .name()
    };
    let mut wrong = Vec::new();
    for p in catalog::procs::builtin_procs() {
        let args: Vec<String> = p
            .args
            .iter()
            .map(|&t| format!("NULL::{}", type_name(t)))
            .collect();
        let call = match p.name {
            "count" if args.is_empty() => "count(*)".to_string(),
            // SQL's keywords, called without parentheses.
            "current_user" | "session_user" => p.name.to_string(),
            _ => format!("{}({})", p.name, args.join(", ")),
        };
        let sql = if p.retset {
            format!("SELECT * FROM {call}")
        } else {
            format!("SELECT {call}")
        };
        match client.prepare(&sql).await {
            Ok(stmt) => {
                let got = stmt.columns()[0].type_().oid();
                if got != concrete(p.ret) {
                    wrong.push(format!("{sql}: type {got}, pg_proc says {}", p.ret));
                }
            }
            Err(e) => wrong.push(format!(
                "{sql}: {}",
                e.as_db_error().map_or("", |d| d.message())
            )),
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {}:\n{}",
        wrong.len(),
        catalog::procs::builtin_procs().len(),
        wrong.join("\n")
    );
    // SQL sees the same rows.
    let n: i64 = client
        .query_one("SELECT count(*) FROM pg_proc", &[])
        .await
        .expect("count")
        .get(0);
    assert_eq!(n as usize, catalog::procs::builtin_procs().len());
}

/// Parameters of a wider integer type than their column (`int4_col = $1` with $1 an
/// int8, as sysbench and JDBC's setLong bind them), run several times through one
/// prepared statement: the scan narrows each value to the column's type as it runs, and
/// a value beyond the column's range matches nothing, or limits nothing, as PostgreSQL's
/// cross-type comparisons do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wider_integer_parameters_against_narrower_keys() {
    use tokio_postgres::types::Type;
    let (_guard, addr) = target().await;
    let client = driver(addr).await;
    client
        .batch_execute(
            "drop table if exists ext_wide; \
             create table ext_wide (a int4 primary key, b int2, c int4); \
             create index ext_wide_bc on ext_wide (b, c); \
             insert into ext_wide select g, g % 3, g from generate_series(1, 30) g",
        )
        .await
        .expect("setup");
    let big = 5_000_000_000i64;
    let rows = |sql: &'static str, types: &'static [Type]| {
        let client = &client;
        async move {
            let stmt = client.prepare_typed(sql, types).await.expect("prepare");
            move |params: &[i64]| {
                let stmt = stmt.clone();
                let params: Vec<i64> = params.to_vec();
                async move {
                    let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params
                        .iter()
                        .map(|p| p as &(dyn tokio_postgres::types::ToSql + Sync))
                        .collect();
                    client
                        .query(&stmt, &refs)
                        .await
                        .expect("query")
                        .iter()
                        .map(|r| r.get::<_, i32>(0))
                        .collect::<Vec<i32>>()
                }
            }
        }
    };
    let eq = rows("select a from ext_wide where a = $1", &[Type::INT8]).await;
    assert_eq!(eq(&[7]).await, [7]);
    assert_eq!(eq(&[big]).await, Vec::<i32>::new());
    assert_eq!(eq(&[-big]).await, Vec::<i32>::new());
    assert_eq!(eq(&[8]).await, [8]);
    let gt = rows(
        "select a from ext_wide where a > $1 order by a",
        &[Type::INT8],
    )
    .await;
    assert_eq!(gt(&[27]).await, [28, 29, 30]);
    assert_eq!(gt(&[big]).await, Vec::<i32>::new());
    assert_eq!(gt(&[-big]).await.len(), 30);
    let lt = rows(
        "select a from ext_wide where a <= $1 order by a",
        &[Type::INT8],
    )
    .await;
    assert_eq!(lt(&[3]).await, [1, 2, 3]);
    assert_eq!(lt(&[big]).await.len(), 30);
    assert_eq!(lt(&[-big]).await, Vec::<i32>::new());
    let between = rows(
        "select a from ext_wide where a >= $1 and a < $2 order by a",
        &[Type::INT8, Type::INT8],
    )
    .await;
    assert_eq!(between(&[-big, 3]).await, [1, 2]);
    assert_eq!(between(&[29, big]).await, [29, 30]);
    assert_eq!(between(&[big, -big]).await, Vec::<i32>::new());
    // An equality on the first key column and a range on the second.
    let pair = rows(
        "select a from ext_wide where b = $1 and c > $2 order by a",
        &[Type::INT8, Type::INT8],
    )
    .await;
    assert_eq!(pair(&[2, 20]).await, [23, 26, 29]);
    assert_eq!(pair(&[2, -big]).await.len(), 10);
    assert_eq!(pair(&[70_000, 0]).await, Vec::<i32>::new());
    assert_eq!(pair(&[1, big]).await, Vec::<i32>::new());
    // UPDATE and DELETE find their rows the same way.
    let update = client
        .prepare_typed("update ext_wide set c = -c where a = $1", &[Type::INT8])
        .await
        .expect("prepare");
    assert_eq!(client.execute(&update, &[&3i64]).await.expect("update"), 1);
    assert_eq!(client.execute(&update, &[&big]).await.expect("update"), 0);
    let delete = client
        .prepare_typed("delete from ext_wide where a < $1", &[Type::INT8])
        .await
        .expect("prepare");
    assert_eq!(client.execute(&delete, &[&-big]).await.expect("delete"), 0);
    assert_eq!(client.execute(&delete, &[&3i64]).await.expect("delete"), 2);
    assert_eq!(client.execute(&delete, &[&big]).await.expect("delete"), 28);
}

/// A portal runs as its rows are asked for (issue 30): an Execute with a row limit
/// stops the query there, and the next goes on without running it again. Statements
/// run between two Executes see what the portal did so far (a sequence advanced by the
/// rows fetched, not by all of them), and the portal does not see their writes. Rows go
/// out before an error that stops a query, in both protocols.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn portals_run_only_as_far_as_their_rows_are_fetched() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    c.send(&query(
        "drop table if exists ext_lazy; drop sequence if exists ext_lazy_seq; \
         create table ext_lazy(a int); insert into ext_lazy values (1), (2), (3), (4), (5); \
         create sequence ext_lazy_seq",
    ))
    .await;
    c.until_ready().await;
    check(
        &mut c,
        &[
            (
                vec![query("BEGIN")],
                &["CommandComplete BEGIN", "ReadyForQuery T"],
            ),
            (
                vec![
                    parse(
                        "",
                        "SELECT nextval('ext_lazy_seq') FROM generate_series(1, 10)",
                        &[],
                    ),
                    bind("seq", "", &[], &[], &[]),
                    execute("seq", 2),
                    execute("seq", 2),
                    parse("", "SELECT a FROM ext_lazy", &[]),
                    bind("scan", "", &[], &[], &[]),
                    execute("scan", 2),
                    sync(),
                ],
                &[
                    "ParseComplete",
                    "BindComplete",
                    "DataRow 1",
                    "DataRow 2",
                    "PortalSuspended",
                    "DataRow 3",
                    "DataRow 4",
                    "PortalSuspended",
                    "ParseComplete",
                    "BindComplete",
                    "DataRow 1",
                    "DataRow 2",
                    "PortalSuspended",
                    "ReadyForQuery T",
                ],
            ),
            (
                vec![query(
                    "SELECT last_value FROM ext_lazy_seq; INSERT INTO ext_lazy VALUES (6)",
                )],
                &[
                    "RowDescription last_value:20/0",
                    "DataRow 4",
                    "CommandComplete SELECT 1",
                    "CommandComplete INSERT 0 1",
                    "ReadyForQuery T",
                ],
            ),
            (
                vec![execute("scan", 0), execute("seq", 1), sync()],
                &[
                    "DataRow 3",
                    "DataRow 4",
                    "DataRow 5",
                    "CommandComplete SELECT 3",
                    "DataRow 5",
                    "PortalSuspended",
                    "ReadyForQuery T",
                ],
            ),
            // Portals end with their transaction.
            (
                vec![query("COMMIT")],
                &["CommandComplete COMMIT", "ReadyForQuery I"],
            ),
            (
                vec![execute("seq", 1), sync()],
                &[
                    "Error 34000 portal \"seq\" does not exist",
                    "ReadyForQuery I",
                ],
            ),
            // The rows made before the error go out, then the error.
            (
                vec![query("SELECT 12 / (5 - g) FROM generate_series(1, 10) g")],
                &[
                    "RowDescription ?column?:23/0",
                    "DataRow 3",
                    "DataRow 4",
                    "DataRow 6",
                    "DataRow 12",
                    "Error 22012 division by zero",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![
                    parse("", "SELECT 12 / (5 - g) FROM generate_series(1, 10) g", &[]),
                    bind("", "", &[], &[], &[]),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "ParseComplete",
                    "BindComplete",
                    "DataRow 3",
                    "DataRow 4",
                    "DataRow 6",
                    "DataRow 12",
                    "Error 22012 division by zero",
                    "ReadyForQuery I",
                ],
            ),
        ],
    )
    .await;
}

/// A cursor through the extended protocol, as psycopg's server-side cursors use it:
/// DECLARE, then FETCH with Describe, whose RowDescription is the cursor's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cursors_fetch_through_the_extended_protocol() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    let run = |sql: &str| {
        vec![
            parse("", sql, &[]),
            bind("", "", &[], &[], &[]),
            describe(b'P', ""),
            execute("", 0),
            sync(),
        ]
    };
    check(
        &mut c,
        &[
            (vec![query("BEGIN")], &["CommandComplete BEGIN", "ReadyForQuery T"]),
            (
                run("DECLARE ext_cur CURSOR FOR SELECT g, g * 2 AS twice FROM generate_series(1, 5) g"),
                &[
                    "ParseComplete",
                    "BindComplete",
                    "NoData",
                    "CommandComplete DECLARE CURSOR",
                    "ReadyForQuery T",
                ],
            ),
            (
                run("FETCH FORWARD 2 FROM ext_cur"),
                &[
                    "ParseComplete",
                    "BindComplete",
                    "RowDescription g:23/0,twice:23/0",
                    "DataRow 1|2",
                    "DataRow 2|4",
                    "CommandComplete FETCH 2",
                    "ReadyForQuery T",
                ],
            ),
            (
                run("MOVE 2 ext_cur"),
                &[
                    "ParseComplete",
                    "BindComplete",
                    "NoData",
                    "CommandComplete MOVE 2",
                    "ReadyForQuery T",
                ],
            ),
            (
                run("FETCH ALL ext_cur"),
                &[
                    "ParseComplete",
                    "BindComplete",
                    "RowDescription g:23/0,twice:23/0",
                    "DataRow 5|10",
                    "CommandComplete FETCH 1",
                    "ReadyForQuery T",
                ],
            ),
            (vec![query("COMMIT")], &["CommandComplete COMMIT", "ReadyForQuery I"]),
        ],
    )
    .await;
}

/// A cursor is a portal: an Execute of its name fetches from it, up to the Execute's
/// row limit, as PostgreSQL's does; Close of its name closes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_execute_of_a_cursor_name_fetches_from_it() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    check(
        &mut c,
        &[
            (
                vec![query(
                    "BEGIN; DECLARE exec_cur CURSOR FOR SELECT g FROM generate_series(1, 5) g",
                )],
                &[
                    "CommandComplete BEGIN",
                    "CommandComplete DECLARE CURSOR",
                    "ReadyForQuery T",
                ],
            ),
            (
                vec![describe(b'P', "exec_cur"), execute("exec_cur", 2), sync()],
                &[
                    "RowDescription g:23/0",
                    "DataRow 1",
                    "DataRow 2",
                    "PortalSuspended",
                    "ReadyForQuery T",
                ],
            ),
            (
                vec![execute("exec_cur", 0), sync()],
                &[
                    "DataRow 3",
                    "DataRow 4",
                    "DataRow 5",
                    "CommandComplete SELECT 3",
                    "ReadyForQuery T",
                ],
            ),
            (
                vec![execute("exec_cur", 0), sync()],
                &["CommandComplete SELECT 0", "ReadyForQuery T"],
            ),
            (
                vec![query("FETCH ALL FROM exec_cur")],
                &[
                    "RowDescription g:23/0",
                    "CommandComplete FETCH 0",
                    "ReadyForQuery T",
                ],
            ),
            (
                vec![close(b'P', "exec_cur"), sync()],
                &["CloseComplete", "ReadyForQuery T"],
            ),
            (
                vec![query("COMMIT")],
                &["CommandComplete COMMIT", "ReadyForQuery I"],
            ),
        ],
    )
    .await;
    // Past a batch: 2,500 rows to a limit of 2,200, then the rest.
    c.send_all(&[query(
        "BEGIN; DECLARE long_cur CURSOR FOR SELECT g FROM generate_series(1, 2500) g",
    )])
    .await;
    c.until_ready().await;
    for (limit, rows, end) in [
        (2200, 2200, "PortalSuspended"),
        (0, 300, "CommandComplete SELECT 300"),
    ] {
        c.send_all(&[execute("long_cur", limit), sync()]).await;
        let got = c.until_ready().await;
        let data: Vec<&String> = got.iter().filter(|m| m.starts_with("DataRow")).collect();
        assert_eq!(data.len(), rows);
        assert_eq!(got[got.len() - 2], end);
    }
    c.send_all(&[query("COMMIT")]).await;
    c.until_ready().await;
}

/// FETCH ALL of a cursor with more rows than a batch: they stream from a store, in
/// binary for a cursor declared BINARY, every batch of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_all_streams_a_binary_cursors_rows_in_binary() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    c.send_all(&[query(
        "BEGIN; DECLARE bin_cur BINARY CURSOR FOR SELECT g FROM generate_series(1, 3000) g",
    )])
    .await;
    c.until_ready().await;
    c.send_all(&[query("FETCH 2 FROM bin_cur; FETCH ALL FROM bin_cur")])
        .await;
    let got = c.until_ready().await;
    let data: Vec<&String> = got.iter().filter(|m| m.starts_with("DataRow")).collect();
    assert_eq!(data.len(), 3000);
    assert_eq!(data[2], "DataRow [00, 00, 00, 03]");
    assert_eq!(data[2999], "DataRow [00, 00, 0b, b8]");
    assert!(
        got.contains(&"CommandComplete FETCH 2998".to_string()),
        "{:?}",
        &got[got.len() - 3..]
    );
    c.send_all(&[query("COMMIT")]).await;
    c.until_ready().await;
}

/// A WARNING a statement raises as it runs (pg_cancel_backend of no such process) goes
/// to the client in both protocols, as PostgreSQL sends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notices_raised_while_running_reach_the_client() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    let sql = "SELECT pg_cancel_backend(999999) AS c";
    check(
        &mut c,
        &[
            (
                vec![query(sql)],
                &[
                    "RowDescription c:16/0",
                    "Notice 01000 PID 999999 is not a PostgreSQL backend process",
                    "DataRow f",
                    "CommandComplete SELECT 1",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![
                    parse("", sql, &[]),
                    bind("", "", &[], &[], &[]),
                    execute("", 0),
                    sync(),
                ],
                &[
                    "ParseComplete",
                    "BindComplete",
                    "Notice 01000 PID 999999 is not a PostgreSQL backend process",
                    "DataRow f",
                    "CommandComplete SELECT 1",
                    "ReadyForQuery I",
                ],
            ),
        ],
    )
    .await;
}

/// COPY TO STDOUT through the extended protocol (tokio-postgres's `copy_out`): its
/// lines go as CopyData, whatever the Execute's row limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_to_stdout_through_the_extended_protocol() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    check(
        &mut c,
        &[(
            vec![
                parse(
                    "",
                    "COPY (SELECT g, 'v' || g FROM generate_series(1, 3) g) TO STDOUT WITH (FORMAT csv, HEADER)",
                    &[],
                ),
                bind("", "", &[], &[], &[]),
                execute("", 1),
                sync(),
            ],
            &[
                "ParseComplete",
                "BindComplete",
                "CopyOutResponse 0 2",
                "CopyData g,?column?\\n",
                "CopyData 1,v1\\n",
                "CopyData 2,v2\\n",
                "CopyData 3,v3\\n",
                "CopyDone",
                "CommandComplete COPY 3",
                "ReadyForQuery I",
            ],
        )],
    )
    .await;
}
