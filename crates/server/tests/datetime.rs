//! The date/time types through a driver: binary parameters and results (PostgreSQL's
//! integer formats), `now()` evaluated per transaction even in a prepared statement whose
//! binding is cached, the TimeZone setting seen by binary and text results, and tables
//! with date/time columns and indexes surviving a restart.

mod common;

use std::error::Error;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::BytesMut;
use myriad_server::Server;
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};

/// A value's binary wire bytes, sent and read as they are.
#[derive(Debug, PartialEq)]
struct Raw(Vec<u8>);

impl<'a> FromSql<'a> for Raw {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Raw, Box<dyn Error + Sync + Send>> {
        Ok(Raw(raw.to_vec()))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

impl ToSql for Raw {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        out.extend_from_slice(&self.0);
        Ok(IsNull::No)
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

fn interval_bytes(micros: i64, days: i32, months: i32) -> Raw {
    let mut b = micros.to_be_bytes().to_vec();
    b.extend_from_slice(&days.to_be_bytes());
    b.extend_from_slice(&months.to_be_bytes());
    Raw(b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_parameters_and_results() {
    let (server, _dir) = common::start().await;
    let c = common::connect(&server).await;
    let stmt = c
        .prepare("select $1::date, $2::timestamp, $3::timestamptz, $4::interval")
        .await
        .expect("prepare");
    let types: Vec<&str> = stmt.params().iter().map(|t| t.name()).collect();
    assert_eq!(types, ["date", "timestamp", "timestamptz", "interval"]);
    let cols: Vec<&str> = stmt.columns().iter().map(|c| c.type_().name()).collect();
    assert_eq!(cols, ["date", "timestamp", "timestamptz", "interval"]);
    // 2024-02-29 is day 8825 after 2000-01-01.
    let date = Raw(8825i32.to_be_bytes().to_vec());
    let ts = Raw((8825i64 * 86_400_000_000 + 1).to_be_bytes().to_vec());
    let tstz = Raw(i64::MAX.to_be_bytes().to_vec());
    let iv = interval_bytes(-5_000_000, 3, 14);
    let row = c
        .query_one(&stmt, &[&date, &ts, &tstz, &iv])
        .await
        .expect("query");
    assert_eq!(row.get::<_, Raw>(0), date);
    assert_eq!(row.get::<_, Raw>(1), ts);
    assert_eq!(row.get::<_, Raw>(2), tstz);
    assert_eq!(row.get::<_, Raw>(3), iv);
    let text = common::value(
        &c,
        "select (date '2024-02-29')::text || ' ' || '1 year 2 mons 3 days -00:00:05'::interval",
    )
    .await;
    assert_eq!(text, "2024-02-29 1 year 2 mons 3 days -00:00:05");

    // std's SystemTime maps to both timestamp types.
    let t = UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456);
    let row = c
        .query_one("select $1::timestamptz, $1::timestamptz::text", &[&t])
        .await
        .expect("systemtime");
    assert_eq!(row.get::<_, SystemTime>(0), t);
    assert_eq!(row.get::<_, String>(1), "2023-11-14 22:13:20.123456+00");

    // Out of range or wrong-sized binary input fails as PostgreSQL's receive functions do.
    let far = Raw((i64::MAX - 1).to_be_bytes().to_vec());
    let e = c
        .query_one("select $1::timestamp", &[&far])
        .await
        .expect_err("out of range");
    assert_eq!(common::sqlstate(&e), "22008");
    let short = Raw(vec![0, 0, 1]);
    let e = c
        .query_one("select $1::date", &[&short])
        .await
        .expect_err("too short");
    assert_eq!(common::sqlstate(&e), "08P01");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn now_is_the_transaction_start_even_in_a_prepared_statement() {
    let (server, _dir) = common::start().await;
    let c = common::connect(&server).await;
    let stmt = c
        .prepare("select now(), clock_timestamp()")
        .await
        .expect("prepare");
    common::exec(&c, "begin").await;
    let a = c.query_one(&stmt, &[]).await.expect("first");
    tokio::time::sleep(Duration::from_millis(5)).await;
    let b = c.query_one(&stmt, &[]).await.expect("second");
    common::exec(&c, "commit").await;
    let (now_a, clock_a) = (a.get::<_, SystemTime>(0), a.get::<_, SystemTime>(1));
    let (now_b, clock_b) = (b.get::<_, SystemTime>(0), b.get::<_, SystemTime>(1));
    assert_eq!(now_a, now_b, "now() is fixed within a transaction");
    assert!(clock_b > clock_a, "clock_timestamp() moves");
    assert!(now_a <= clock_a);
    tokio::time::sleep(Duration::from_millis(5)).await;
    let c2 = c.query_one(&stmt, &[]).await.expect("next transaction");
    assert!(
        c2.get::<_, SystemTime>(0) > now_b,
        "a new transaction has a new now()"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_zone_setting_per_session() {
    let (server, _dir) = common::start().await;
    let a = common::connect(&server).await;
    let b = common::connect(&server).await;
    assert_eq!(common::value(&a, "show timezone").await, "Etc/UTC");
    common::exec(&a, "set time zone 'Asia/Tokyo'").await;
    let q = "select timestamptz '2024-01-01 00:00+00'::text";
    assert_eq!(common::value(&a, q).await, "2024-01-01 09:00:00+09");
    assert_eq!(common::value(&b, q).await, "2024-01-01 00:00:00+00");
    // The instant is the same whatever the zone: binary results carry no zone.
    let ra = a
        .query_one("select timestamptz '2024-01-01 09:00'", &[])
        .await
        .expect("a");
    let rb = b
        .query_one("select timestamptz '2024-01-01 00:00'", &[])
        .await
        .expect("b");
    assert_eq!(ra.get::<_, SystemTime>(0), rb.get::<_, SystemTime>(0));
    // Each statement of a query string prints in the zone it ran under.
    let msgs = b
        .simple_query(
            "select timestamptz '2024-01-01 00:00+00'; set timezone = 'Asia/Tokyo'; \
             select timestamptz '2024-01-01 00:00+00'",
        )
        .await
        .expect("query string");
    let shown: Vec<&str> = msgs
        .iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0),
            _ => None,
        })
        .collect();
    assert_eq!(shown, ["2024-01-01 00:00:00+00", "2024-01-01 09:00:00+09"]);
    let e = a
        .batch_execute("set DateStyle = 'German'")
        .await
        .expect_err("unsupported");
    assert_eq!(common::sqlstate(&e), "0A000");
    let e = a
        .batch_execute("set IntervalStyle = 'iso_8601'")
        .await
        .expect_err("unsupported");
    assert_eq!(common::sqlstate(&e), "0A000");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datetime_tables_survive_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = common::tiny_pool_config(dir.path());
    let query = "select d, ts, tz, iv from dt where d >= '2024-01-03' order by d";
    let before;
    {
        let server = Server::start(&config).await.expect("start");
        let c = common::connect(&server).await;
        common::exec(
            &c,
            "create table dt (id int primary key, d date, ts timestamp, tz timestamptz, iv interval); \
             create index dt_d on dt (d); \
             create index dt_tz on dt (tz)",
        )
        .await;
        for i in 0..500 {
            common::exec(
                &c,
                &format!(
                    "insert into dt values ({i}, date '2024-01-01' + {i}, \
                     timestamp '2024-01-01 12:00' + interval '1 hour' * {i}, \
                     timestamptz '2024-01-01 00:00+00' - interval '1 day' * {i}, \
                     interval '1 mon 1 day 00:00:01' * {i})"
                ),
            )
            .await;
        }
        before = common::rows(&c, query).await;
        drop(c);
        server.shutdown().await.expect("shutdown");
    }
    let server = Server::start(&config).await.expect("restart");
    let c = common::connect(&server).await;
    let after = common::rows(&c, query).await;
    assert_eq!(before.len(), 498);
    assert_eq!(before, after);
    assert_eq!(
        after[0],
        [
            "2024-01-03",
            "2024-01-01 14:00:00",
            "2023-12-30 00:00:00+00",
            "2 mons 2 days 00:00:02"
        ]
    );
    let types = c
        .query_one("select * from dt where id = 0", &[])
        .await
        .expect("typed");
    let names: Vec<&str> = types.columns().iter().map(|c| c.type_().name()).collect();
    assert_eq!(
        names,
        ["int4", "date", "timestamp", "timestamptz", "interval"]
    );
    assert_eq!(
        common::value(&c, "select count(*) from dt where tz < '2023-01-01'").await,
        "134"
    );
    server.shutdown().await.expect("shutdown");
}
