//! Acceptance: the real `pgbench` (Debian's postgresql-client, which `.ci/run` installs)
//! against an in-process Myriad, unmodified and without a flag changed. `pgbench -i -s 2`
//! (client-side COPY FREEZE, VACUUM ANALYZE, primary keys), then each builtin script in
//! each query mode with 4 clients for 10 s: no failed or aborted transaction. After the
//! tpcb-like runs the money adds up: sum(abalance) = sum(tbalance) = sum(bbalance) =
//! sum(delta). Then `-I dtGvpf` (server-side generate_series, foreign keys) and a
//! tpcb-like run that the foreign keys check.
//!
//! Nothing here measures speed (bench/ does); a run only has to finish cleanly.

mod common;

use std::process::Command;

use common::{connect, start, value};
use myriad_server::Server;

const SECONDS: &str = "10";

fn pgbench(server: &Server, args: &[&str]) -> String {
    let addr = server.local_addr();
    let out = Command::new("pgbench")
        .args(["-h", &addr.ip().to_string(), "-p", &addr.port().to_string()])
        .args(["-U", "postgres"])
        .args(args)
        .arg("postgres")
        .output()
        .expect("pgbench runs (apt-get install postgresql-client)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "pgbench {args:?} failed:\n{text}");
    assert!(
        !text.contains("error") && !text.contains("aborted"),
        "pgbench {args:?}:\n{text}"
    );
    text
}

fn run(server: &Server, script: &str, mode: &str, vacuum_first: bool) {
    let mut args = vec![
        "-c", "4", "-j", "2", "-T", SECONDS, "-b", script, "-M", mode,
    ];
    if !vacuum_first {
        // -n: no VACUUM and no TRUNCATE of pgbench_history, which must keep every run's
        // rows for the sums to agree.
        args.push("-n");
    }
    let text = pgbench(server, &args);
    assert!(
        text.contains("number of failed transactions: 0 (0.000%)"),
        "{script} -M {mode}:\n{text}"
    );
    let processed = text
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: "))
        .and_then(|n| n.trim().parse::<u64>().ok())
        .unwrap_or(0);
    assert!(processed > 0, "{script} -M {mode} ran nothing:\n{text}");
}

async fn sums(server: &Server) -> [String; 4] {
    let c = connect(server).await;
    [
        value(&c, "SELECT sum(abalance) FROM pgbench_accounts").await,
        value(&c, "SELECT sum(tbalance) FROM pgbench_tellers").await,
        value(&c, "SELECT sum(bbalance) FROM pgbench_branches").await,
        value(&c, "SELECT sum(delta) FROM pgbench_history").await,
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn pgbench_initialises_and_runs_every_builtin_script_in_every_mode() {
    let (server, _dir) = start().await;
    let server = std::sync::Arc::new(server);
    let s = server.clone();
    let init = tokio::task::spawn_blocking(move || pgbench(&s, &["-i", "-s", "2"]))
        .await
        .expect("join");
    assert!(init.contains("done in"), "{init}");
    let c = connect(&server).await;
    assert_eq!(
        value(&c, "SELECT count(*) FROM pgbench_accounts").await,
        "200000"
    );
    for (script, mode, vacuum_first) in [
        ("tpcb-like", "simple", true),
        ("tpcb-like", "extended", false),
        ("tpcb-like", "prepared", false),
    ] {
        let s = server.clone();
        tokio::task::spawn_blocking(move || run(&s, script, mode, vacuum_first))
            .await
            .expect("join");
    }
    let [a, t, b, h] = sums(&server).await;
    assert_eq!((&a, &t, &b), (&h, &h, &h), "balances and history agree");
    for script in ["simple-update", "select-only"] {
        for mode in ["simple", "extended", "prepared"] {
            let s = server.clone();
            tokio::task::spawn_blocking(move || run(&s, script, mode, false))
                .await
                .expect("join");
        }
    }
    // simple-update moves accounts and history only.
    let [a, _, _, h] = sums(&server).await;
    assert_eq!(a, h);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn pgbench_server_side_generation_with_foreign_keys() {
    let (server, _dir) = start().await;
    let server = std::sync::Arc::new(server);
    let s = server.clone();
    tokio::task::spawn_blocking(move || {
        pgbench(&s, &["-i", "-s", "1", "-I", "dtGvpf"]);
        run(&s, "tpcb-like", "prepared", false);
    })
    .await
    .expect("join");
    let [a, t, b, h] = sums(&server).await;
    assert_eq!((&a, &t, &b), (&h, &h, &h));
    let c = connect(&server).await;
    // The foreign keys are there and enforced.
    let e = c
        .simple_query("INSERT INTO pgbench_history (tid, bid, aid, delta) VALUES (1, 99, 1, 0)")
        .await
        .expect_err("bid 99 is not a branch");
    assert_eq!(common::sqlstate(&e), "23503");
    let e = c
        .simple_query("DELETE FROM pgbench_branches")
        .await
        .expect_err("branches are referenced");
    assert_eq!(common::sqlstate(&e), "23503");
}
