//! Acceptance: psql's describe commands (`\dt`, `\di`, `\ds`, `\dn`, with and without a
//! pattern, `\d` and `\d+` of tables and sequences, `\du`, `\dT`, `\df`, `\x`) against an
//! in-process Myriad, compared line by line with what PostgreSQL 15 printed for the same
//! script (`tests/psql/describe.sql`, expected output in `describe.out` beside it:
//! stdout, then stderr). psql sends its catalog queries unchanged: they go through
//! pg_class, pg_namespace, pg_am, pg_index, pg_attribute, pg_attrdef, pg_constraint,
//! pg_collation, pg_type, pg_sequence, pg_depend, pg_roles, pg_proc and the empty pg_policy,
//! pg_statistic_ext, pg_publication*, pg_inherits, pg_trigger and pg_auth_members, with
//! `OPERATOR(pg_catalog.~)`, `COLLATE`, regclass / regtype casts, arrays (`array(select
//! ...)`, `= any(...)`, subscripts), `pg_partition_ancestors` and the pg_get_* functions.
//! Left out because they differ by design: `\l` (Myriad has one database, no templates)
//! and `\dn+` (no access privileges).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_commands_print_what_postgres_prints() {
    let (server, _dir) = common::start().await;
    let port = server.local_addr().port().to_string();
    let repo = repo();
    let expected = std::fs::read_to_string(repo.join("tests/psql/describe.out"))
        .expect("tests/psql/describe.out");
    let out = tokio::task::spawn_blocking(move || {
        // The script's path as psql prints it in error lines: relative to the repository.
        Command::new("psql")
            .current_dir(&repo)
            .args([
                "-X",
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-d",
                "postgres",
            ])
            .args(["-f", "tests/psql/describe.sql"])
            .env_remove("PGCLIENTENCODING")
            .env_remove("PGOPTIONS")
            .output()
            .expect("psql runs (apt-get install postgresql-client)")
    })
    .await
    .expect("join");
    let got = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let (want, got): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), got.lines().collect());
    for (i, (w, g)) in want.iter().zip(&got).enumerate() {
        assert_eq!(
            w,
            g,
            "line {} differs; Myriad printed:\n{}",
            i + 1,
            got.join("\n")
        );
    }
    assert_eq!(want.len(), got.len(), "Myriad printed:\n{}", got.join("\n"));
}
