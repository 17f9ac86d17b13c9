//! COPY FROM STDIN and COPY TO STDOUT on the wire: the copy sub-protocol, text and CSV
//! data split across CopyData messages, errors naming the line (and rolling the COPY
//! back), CopyFail, what pgbench -i sends (`freeze on` after TRUNCATE in its
//! transaction), and statements after a COPY in the same query string.
//!
//! Every expectation was checked against PostgreSQL 15: run with
//! `MYRIAD_ORACLE_ADDR=127.0.0.1:PORT` and `--test-threads=1` (`common::raw::target`).

mod common;

use common::raw::{Conn, check, copy_data, copy_done, copy_fail, query, target};

async fn setup(conn: &mut Conn) {
    conn.send(&query(
        "drop table if exists cp_t; \
         create table cp_t (id int4 primary key, name text, note varchar(5) default 'dflt')",
    ))
    .await;
    let got: Vec<String> = conn
        .until_ready()
        .await
        .into_iter()
        .filter(|m| !m.starts_with("Notice"))
        .collect();
    assert_eq!(
        got,
        [
            "CommandComplete DROP TABLE",
            "CommandComplete CREATE TABLE",
            "ReadyForQuery I"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_in_and_out() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    setup(&mut c).await;
    check(
        &mut c,
        &[
            // Rows split across messages as they come; `\.` ends the data.
            (
                vec![query("copy cp_t from stdin")],
                &["CopyInResponse 0 3"],
            ),
            (
                vec![
                    copy_data(b"1\tone\tx\n2\t"),
                    copy_data(b"t\\\\w\\to\t\\N\n3\t\tz"),
                    copy_data(b"\n\\.\n"),
                    copy_done(),
                ],
                &["CommandComplete COPY 3", "ReadyForQuery I"],
            ),
            // CSV with a header, a column list (the others get their defaults), quotes.
            (
                vec![query(
                    "copy cp_t (name, id) from stdin with (format csv, header true)",
                )],
                &["CopyInResponse 0 2"],
            ),
            (
                vec![
                    copy_data(b"name,id\n\"a,\"\"b\"\"\",4\n,5\n\"\",6\n"),
                    copy_done(),
                ],
                &["CommandComplete COPY 3", "ReadyForQuery I"],
            ),
            (
                vec![query("copy cp_t to stdout")],
                &[
                    "CopyOutResponse 0 3",
                    "CopyData 1\\tone\\tx\\n",
                    "CopyData 2\\tt\\\\\\\\w\\\\to\\t\\\\N\\n",
                    "CopyData 3\\t\\tz\\n",
                    "CopyData 4\\ta,\\\"b\\\"\\tdflt\\n",
                    "CopyData 5\\t\\\\N\\tdflt\\n",
                    "CopyData 6\\t\\tdflt\\n",
                    "CopyDone",
                    "CommandComplete COPY 6",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![query(
                    "copy (select id, name from cp_t where id >= 4 order by id) to stdout (format csv, header)",
                )],
                &[
                    "CopyOutResponse 0 2",
                    "CopyData id,name\\n",
                    "CopyData 4,\\\"a,\\\"\\\"b\\\"\\\"\\\"\\n",
                    "CopyData 5,\\n",
                    "CopyData 6,\\\"\\\"\\n",
                    "CopyDone",
                    "CommandComplete COPY 3",
                    "ReadyForQuery I",
                ],
            ),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_errors_name_the_line_and_undo_the_copy() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    setup(&mut c).await;
    let copy = || vec![query("copy cp_t (id, name) from stdin")];
    check(
        &mut c,
        &[
            (copy(), &["CopyInResponse 0 2"]),
            (
                vec![copy_data(b"1\ta\n2\n"), copy_done()],
                &[
                    "Error 22P04 missing data for column \"name\" [COPY cp_t, line 2: \"2\"]",
                    "ReadyForQuery I",
                ],
            ),
            (copy(), &["CopyInResponse 0 2"]),
            (
                vec![copy_data(b"1\ta\nx\tb\n"), copy_done()],
                &[
                    "Error 22P02 invalid input syntax for type integer: \"x\" [COPY cp_t, line 2, column id: \"x\"]",
                    "ReadyForQuery I",
                ],
            ),
            (copy(), &["CopyInResponse 0 2"]),
            (
                vec![copy_data(b"1\ta\textra\n"), copy_done()],
                &[
                    "Error 22P04 extra data after last expected column [COPY cp_t, line 1: \"1\ta\textra\"]",
                    "ReadyForQuery I",
                ],
            ),
            (copy(), &["CopyInResponse 0 2"]),
            (
                vec![copy_data(b"7\ta\n7\tb\n"), copy_done()],
                &[
                    "Error 23505 duplicate key value violates unique constraint \"cp_t_pkey\" [COPY cp_t, line 2]",
                    "ReadyForQuery I",
                ],
            ),
            (copy(), &["CopyInResponse 0 2"]),
            (
                vec![copy_data(b"8\ta\n"), copy_fail("client gave up")],
                &[
                    "Error 57014 COPY from stdin failed: client gave up [COPY cp_t, line 2]",
                    "ReadyForQuery I",
                ],
            ),
            // Nothing of the failed COPYs stayed.
            (
                vec![query("select count(*) from cp_t")],
                &[
                    "RowDescription count:20/0",
                    "DataRow 0",
                    "CommandComplete SELECT 1",
                    "ReadyForQuery I",
                ],
            ),
            // FREEZE needs a table this transaction truncated; the error comes once the
            // copy has begun.
            (
                vec![query("copy cp_t from stdin with (freeze on)")],
                &["CopyInResponse 0 3"],
            ),
            (
                vec![copy_data(b"9	a	
"), copy_done()],
                &[
                    "Error 55000 cannot perform COPY FREEZE because the table was not created or truncated in the current subtransaction",
                    "ReadyForQuery I",
                ],
            ),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgbench_init_copy_in_its_transaction() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    setup(&mut c).await;
    check(
        &mut c,
        &[
            (
                vec![query("begin"), query("truncate table cp_t")],
                &["CommandComplete BEGIN", "ReadyForQuery T"],
            ),
            (vec![], &["CommandComplete TRUNCATE TABLE", "ReadyForQuery T"]),
            (
                vec![query("copy cp_t from stdin with (freeze on)")],
                &["CopyInResponse 0 3"],
            ),
            (
                vec![
                    copy_data(b"1\t1\t\n"),
                    copy_data(b"2\t1\t\n"),
                    copy_data(b"\\.\n"),
                    copy_done(),
                ],
                &["CommandComplete COPY 2", "ReadyForQuery T"],
            ),
            (
                vec![query("commit")],
                &["CommandComplete COMMIT", "ReadyForQuery I"],
            ),
            // A COPY in the middle of a query string: the statements after it run once
            // its data is in.
            (
                vec![query(
                    "insert into cp_t values (3, 'x'); copy cp_t from stdin; select count(*) from cp_t",
                )],
                &["CommandComplete INSERT 0 1", "CopyInResponse 0 3"],
            ),
            (
                vec![copy_data(b"4\ty\tz\n"), copy_done()],
                &[
                    "CommandComplete COPY 1",
                    "RowDescription count:20/0",
                    "DataRow 4",
                    "CommandComplete SELECT 1",
                    "ReadyForQuery I",
                ],
            ),
        ],
    )
    .await;
}

/// COPY keeps a partial index as INSERT does: a row gets an entry only where the
/// predicate holds, so a unique partial index refuses a duplicate among those rows only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_keeps_partial_indexes() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    conn_ok(
        &mut c,
        "drop table if exists cp_p; create table cp_p (id int4, live bool); \
         create unique index cp_p_live on cp_p (id) where live",
    )
    .await;
    let copy = || vec![query("copy cp_p from stdin")];
    check(
        &mut c,
        &[
            (copy(), &["CopyInResponse 0 2"]),
            (
                vec![copy_data(b"1\tt\n1\tf\n1\tf\n2\tt\n"), copy_done()],
                &["CommandComplete COPY 4", "ReadyForQuery I"],
            ),
            (copy(), &["CopyInResponse 0 2"]),
            (
                vec![copy_data(b"3\tf\n1\tt\n"), copy_done()],
                &[
                    "Error 23505 duplicate key value violates unique constraint \"cp_p_live\" [COPY cp_p, line 2]",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![query(
                    "set enable_seqscan = off; select count(*) from cp_p where live and id = 1",
                )],
                &[
                    "CommandComplete SET",
                    "RowDescription count:20/0",
                    "DataRow 1",
                    "CommandComplete SELECT 1",
                    "ReadyForQuery I",
                ],
            ),
        ],
    )
    .await;
}

async fn conn_ok(conn: &mut Conn, sql: &str) {
    conn.send(&query(sql)).await;
    let got = conn.until_ready().await;
    assert!(
        got.iter().all(|m| !m.starts_with("Error")),
        "{sql}: {got:?}"
    );
}
