//! ParameterStatus: a change to a reported setting (SET, RESET, SET LOCAL, a rollback
//! that undoes a SET) is announced right before the next ReadyForQuery, once; settings
//! that are not reported, or a SET to the same value, announce nothing.
//!
//! Every expectation was checked against PostgreSQL 15: run with
//! `MYRIAD_ORACLE_ADDR=127.0.0.1:PORT` and `--test-threads=1` (`common::raw::target`).

mod common;

use common::raw::{Conn, check, query, target};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reported_settings_are_announced_when_they_change() {
    let (_guard, addr) = target().await;
    let mut c = Conn::connect(addr).await;
    check(
        &mut c,
        &[
            (
                vec![query("set application_name = 'myapp'")],
                &[
                    "CommandComplete SET",
                    "ParameterStatus application_name=myapp",
                    "ReadyForQuery I",
                ],
            ),
            // The same value again: nothing to announce.
            (
                vec![query("set application_name = 'myapp'")],
                &["CommandComplete SET", "ReadyForQuery I"],
            ),
            // Not a reported setting.
            (
                vec![query("set lock_timeout = '2s'")],
                &["CommandComplete SET", "ReadyForQuery I"],
            ),
            (
                vec![query(
                    "select application_name from pg_stat_activity where pid = pg_backend_pid()",
                )],
                &[
                    "RowDescription application_name:25/0",
                    "DataRow myapp",
                    "CommandComplete SELECT 1",
                    "ReadyForQuery I",
                ],
            ),
            // A rolled-back SET is announced back.
            (
                vec![query("begin; set timezone = 'Europe/Berlin'")],
                &[
                    "CommandComplete BEGIN",
                    "CommandComplete SET",
                    "ParameterStatus TimeZone=Europe/Berlin",
                    "ReadyForQuery T",
                ],
            ),
            (
                vec![query("rollback")],
                &[
                    "CommandComplete ROLLBACK",
                    "ParameterStatus TimeZone=Etc/UTC",
                    "ReadyForQuery I",
                ],
            ),
            // SET LOCAL lapses at the end of its transaction.
            (
                vec![query("begin; set local application_name = 'inner'; commit")],
                &[
                    "CommandComplete BEGIN",
                    "CommandComplete SET",
                    "CommandComplete COMMIT",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![query("reset application_name")],
                &[
                    "CommandComplete RESET",
                    "ParameterStatus application_name=",
                    "ReadyForQuery I",
                ],
            ),
            // UTF8 under any spelling is no change.
            (
                vec![query("set client_encoding = 'utf-8'")],
                &["CommandComplete SET", "ReadyForQuery I"],
            ),
            (
                vec![query("set client_encoding = 'foo'")],
                &[
                    "Error 22023 invalid value for parameter \"client_encoding\": \"foo\"",
                    "ReadyForQuery I",
                ],
            ),
            (
                vec![query(
                    "set standard_conforming_strings = on; show standard_conforming_strings",
                )],
                &[
                    "CommandComplete SET",
                    "RowDescription standard_conforming_strings:25/0",
                    "DataRow on",
                    "CommandComplete SHOW",
                    "ReadyForQuery I",
                ],
            ),
        ],
    )
    .await;
}

/// Settings in the startup packet's `options` (libpq's PGOPTIONS): `-c name=value` and
/// `--name=value`, custom ones included, applied as the packet's own settings are
/// (source `client`, what RESET goes back to). Checked by hand on PostgreSQL 15.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn startup_options_set_settings() {
    let (server, _dir) = common::start().await;
    let url = format!(
        r"{} options='-c lock_timeout=3s --statement-timeout=1min -cmyapp.who=a\\ b'",
        common::url(&server)
    );
    let (c, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    let row = common::rows(
        &c,
        "select current_setting('lock_timeout'), current_setting('statement_timeout'), \
         current_setting('myapp.who'), source from pg_settings where name = 'lock_timeout'",
    )
    .await;
    assert_eq!(row, [["3s", "1min", "a b", "client"]]);
    common::exec(&c, "set lock_timeout = 5; reset lock_timeout").await;
    assert_eq!(common::value(&c, "show lock_timeout").await, "3s");
}
