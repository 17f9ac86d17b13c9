//! EXPLAIN ANALYZE's timed lines, which no slt file can pin: `actual time=a..b` with
//! a <= b, and the Planning Time / Execution Time summary that the benchmark harness
//! reads from both servers; and EXPLAIN through the extended protocol (a parameter, the
//! `QUERY PLAN` column described before execution).

mod common;

use common::{connect, exec, rows, start};

/// `line` without its `  (cost=a..b rows=n width=w)`, which the planner's estimates
/// decide (tests/slt/explain_costs.slt pins some); panics if a node line has none.
fn without_costs(line: &str) -> String {
    match line.find("  (cost=") {
        Some(at) => {
            let end = at + line[at..].find(')').expect("closing parenthesis") + 1;
            let costs = &line[at + 8..end - 1];
            assert!(
                costs.contains("..") && costs.contains(" rows=") && costs.contains(" width="),
                "{line:?}"
            );
            format!("{}{}", &line[..at], &line[end..])
        }
        None => {
            let detail = line
                .trim_start()
                .split(':')
                .next()
                .is_some_and(|w| !w.contains("  ") && line.trim_start().contains(": "));
            assert!(detail, "a node line without costs: {line:?}");
            line.to_string()
        }
    }
}

/// The milliseconds in `... Time: 1.234 ms`.
fn summary_ms(line: &str, what: &str) -> f64 {
    line.strip_prefix(&format!("{what}: "))
        .and_then(|r| r.strip_suffix(" ms"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not a {what} line: {line:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_analyze_times_nodes_and_summarises() {
    let (server, _dir) = start().await;
    let c = connect(&server).await;
    exec(
        &c,
        "CREATE TABLE t (a int PRIMARY KEY, b int); \
         INSERT INTO t SELECT g, g % 7 FROM generate_series(1, 500) AS g",
    )
    .await;
    let lines: Vec<String> = rows(
        &c,
        "EXPLAIN ANALYZE SELECT b, count(*) FROM t WHERE a + 0 > 10 GROUP BY b",
    )
    .await
    .into_iter()
    .map(|r| r[0].clone())
    .map(|l| {
        if l.contains(" Time: ") {
            l
        } else {
            without_costs(&l)
        }
    })
    .collect();
    assert_eq!(lines.len(), 8, "{lines:#?}");
    // HashAggregate (actual time=x..y rows=7 loops=1), then its Group Key and memory, its
    // child (a condition no index serves: read in sequence), the child's Filter and
    // removed rows, and the summary.
    let lines: Vec<String> = lines
        .into_iter()
        .filter(|l| !l.starts_with("  Batches: 1  Memory Usage: "))
        .collect();
    for (line, prefix, rows) in [
        (&lines[0], "HashAggregate (actual time=", "rows=7 loops=1)"),
        (
            &lines[2],
            "  ->  Seq Scan on t (actual time=",
            "rows=490 loops=1)",
        ),
    ] {
        let rest = line
            .strip_prefix(prefix)
            .unwrap_or_else(|| panic!("{line:?}"));
        assert!(rest.ends_with(rows), "{line:?}");
        let times = rest.split(' ').next().unwrap();
        let (first, total) = times.split_once("..").unwrap();
        let (first, total): (f64, f64) = (first.parse().unwrap(), total.parse().unwrap());
        assert!(0.0 <= first && first <= total, "{line:?}");
    }
    assert_eq!(lines[1], "  Group Key: b");
    assert_eq!(lines[3], "        Filter: ((a + 0) > 10)");
    assert_eq!(lines[4], "        Rows Removed by Filter: 10");
    let planning = summary_ms(&lines[5], "Planning Time");
    let execution = summary_ms(&lines[6], "Execution Time");
    assert!(planning > 0.0 && execution > 0.0, "{lines:#?}");

    // An UPDATE's node and its scan are timed too, and the update happens.
    let lines: Vec<String> = rows(&c, "EXPLAIN ANALYZE UPDATE t SET b = 100 WHERE a = 3")
        .await
        .into_iter()
        .map(|r| r[0].clone())
        .map(|l| {
            if l.contains(" Time: ") {
                l
            } else {
                without_costs(&l)
            }
        })
        .collect();
    assert_eq!(lines.len(), 5, "{lines:#?}");
    assert!(
        lines[0].starts_with("Update on t (actual time=") && lines[0].ends_with("rows=0 loops=1)"),
        "{lines:#?}"
    );
    assert!(
        lines[1].starts_with("  ->  Index Scan using t_pkey on t (actual time=")
            && lines[1].ends_with("rows=1 loops=1)"),
        "{lines:#?}"
    );
    summary_ms(&lines[4], "Execution Time");
    assert_eq!(
        rows(&c, "SELECT b FROM t WHERE a = 3").await,
        vec![vec!["100".to_string()]]
    );

    // Plain EXPLAIN shows no summary unless asked; SUMMARY asks.
    let plain = rows(&c, "EXPLAIN SELECT * FROM t").await;
    assert_eq!(plain.len(), 1);
    assert_eq!(without_costs(&plain[0][0]), "Seq Scan on t");
    let summary = rows(&c, "EXPLAIN (SUMMARY) SELECT * FROM t").await;
    assert_eq!(summary.len(), 2);
    summary_ms(&summary[1][0], "Planning Time");

    // Extended protocol: a parameter, and the result column described up front.
    let stmt = c
        .prepare("EXPLAIN SELECT * FROM t WHERE a = $1")
        .await
        .expect("prepare");
    assert_eq!(stmt.columns().len(), 1);
    assert_eq!(stmt.columns()[0].name(), "QUERY PLAN");
    let got: Vec<String> = c
        .query(&stmt, &[&5i32])
        .await
        .expect("execute")
        .iter()
        .map(|r| without_costs(r.get(0)))
        .collect();
    assert_eq!(
        got,
        ["Index Scan using t_pkey on t", "  Index Cond: (a = 5)"]
    );
}

/// The kB of the first `prefix...NkB` line of `lines`.
fn memory_kb(lines: &[String], prefix: &str) -> u64 {
    let line = lines
        .iter()
        .find(|l| l.trim_start().starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} line in {lines:#?}"));
    line.rsplit(' ')
        .next()
        .and_then(|w| w.strip_suffix("kB"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no kB in {line:?}"))
}

/// Sorts, hash aggregates and hash joins account the memory they hold (against
/// `work_mem`, PostgreSQL's hash_mem for hash tables), and EXPLAIN ANALYZE shows it as
/// PostgreSQL does: more rows held, more memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sorts_and_hash_tables_account_their_memory() {
    let (server, _dir) = start().await;
    let c = connect(&server).await;
    exec(
        &c,
        "CREATE TABLE m (a int, b text); \
         INSERT INTO m SELECT g, 'row ' || g FROM generate_series(1, 20000) AS g; \
         ANALYZE m; SET enable_nestloop = off",
    )
    .await;
    let plan = |sql: String| {
        let c = &c;
        async move {
            rows(c, &format!("EXPLAIN ANALYZE {sql}"))
                .await
                .into_iter()
                .map(|r| r[0].clone())
                .collect::<Vec<String>>()
        }
    };
    let mut last = [0u64; 3];
    for n in [100, 20000] {
        let sort = plan(format!("SELECT * FROM m WHERE a <= {n} ORDER BY b")).await;
        let agg = plan(format!(
            "SELECT b, count(*) FROM m WHERE a <= {n} GROUP BY b"
        ))
        .await;
        let hash = plan(format!(
            "SELECT count(*) FROM m x JOIN m y ON x.a = y.a WHERE y.a <= {n}"
        ))
        .await;
        let now = [
            memory_kb(&sort, "Sort Method: quicksort  Memory: "),
            memory_kb(&agg, "Batches: 1  Memory Usage: "),
            memory_kb(&hash, "Buckets: "),
        ];
        for (i, (before, now)) in last.iter().zip(now).enumerate() {
            assert!(
                now > *before,
                "node {i}: {now} kB for {n} rows after {before} kB"
            );
        }
        last = now;
    }
    // 20,000 rows of about 60 bytes each: over a megabyte, under PostgreSQL's 4 MB
    // work_mem.
    assert!((1000..4096).contains(&last[0]), "{last:?}");
}

/// ORDER BY ... LIMIT keeps only the rows the LIMIT reads (PostgreSQL's top-N heapsort,
/// past twice the bound): the same rows as a full sort, in less memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn order_by_limit_keeps_only_the_rows_it_returns() {
    let (server, _dir) = start().await;
    let c = connect(&server).await;
    exec(
        &c,
        "CREATE TABLE s (a int, b int); \
         INSERT INTO s SELECT g, (g * 7919) % 10007 FROM generate_series(1, 20000) AS g",
    )
    .await;
    let plan = |sql: &'static str| {
        let c = &c;
        async move {
            rows(c, sql)
                .await
                .into_iter()
                .map(|r| r[0].clone())
                .collect::<Vec<String>>()
        }
    };
    let top = plan("EXPLAIN ANALYZE SELECT a, b FROM s ORDER BY b DESC, a LIMIT 10 OFFSET 5").await;
    let full = plan("EXPLAIN ANALYZE SELECT a, b FROM s ORDER BY b DESC, a").await;
    let top_kb = memory_kb(&top, "Sort Method: top-N heapsort  Memory: ");
    let full_kb = memory_kb(&full, "Sort Method: quicksort  Memory: ");
    assert!(top_kb * 20 < full_kb, "{top_kb} kB against {full_kb} kB");
    // The same rows, ties in the same order, as the whole sort's.
    let limited = rows(
        &c,
        "SELECT a, b FROM s ORDER BY b DESC, a LIMIT 10 OFFSET 5",
    )
    .await;
    let whole = rows(&c, "SELECT a, b FROM s ORDER BY b DESC, a").await;
    assert_eq!(limited, whole[5..15].to_vec());
    let ties = rows(&c, "SELECT a FROM s ORDER BY b % 3 LIMIT 30").await;
    let all_ties = rows(&c, "SELECT a FROM s ORDER BY b % 3").await;
    assert_eq!(ties, all_ties[..30].to_vec());
    // A small input is sorted whole.
    let small = plan("EXPLAIN ANALYZE SELECT a FROM s WHERE a <= 15 ORDER BY b LIMIT 10").await;
    memory_kb(&small, "Sort Method: quicksort  Memory: ");
}

/// A bitmap heap scan reads each heap page its bitmap names once: EXPLAIN ANALYZE counts
/// them (`Heap Blocks: exact=N`, as PostgreSQL's exact bitmaps). 200 rows spread one per
/// 100 over the table's pages touch at most its pages and at least one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bitmap_heap_scans_count_their_pages() {
    let (server, _dir) = start().await;
    let c = connect(&server).await;
    exec(
        &c,
        "CREATE TABLE hb (id int PRIMARY KEY, a int); \
         INSERT INTO hb SELECT g, g % 100 FROM generate_series(1, 20000) AS g; \
         CREATE INDEX ON hb (a); ANALYZE hb",
    )
    .await;
    let lines: Vec<String> = rows(&c, "EXPLAIN ANALYZE SELECT * FROM hb WHERE a = 5")
        .await
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert!(lines[0].starts_with("Bitmap Heap Scan on hb"), "{lines:#?}");
    assert!(lines[0].ends_with("rows=200 loops=1)"), "{lines:#?}");
    let blocks: u64 = lines
        .iter()
        .find_map(|l| l.trim().strip_prefix("Heap Blocks: exact="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no Heap Blocks line: {lines:#?}"));
    let pages: u64 = rows(&c, "SELECT relpages FROM pg_class WHERE relname = 'hb'").await[0][0]
        .parse()
        .unwrap();
    assert!(1 <= blocks && blocks <= pages, "{blocks} of {pages} pages");
}
