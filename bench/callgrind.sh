#!/usr/bin/env bash
# Instructions the Myriad server executes per query, counted by callgrind: repeatable
# whatever else the machine does, so a change to the hot path shows as a number, not as
# noise (issue 27 keeps S1 and W2 within 5% of their count before it).
#
#   bench/callgrind.sh [MYRIAD_BIN]        # default target/release/myriad
#
# Points: W2 (`SELECT * FROM synth_table WHERE col5 = 42` on an empty 60-column table
# with 1 and with 60 single-column indexes) and S1 (a random primary-key lookup in a table
# of S1_ROWS rows), each with pgbench's simple and prepared protocols. For each, the
# server's counters are zeroed (`callgrind_control -z`), pgbench runs QUERIES
# transactions on one connection, and the counters are dumped: instructions / QUERIES,
# connection start-up included (a few hundred per query at the default 2000).
#
# Needs valgrind (callgrind_control), PostgreSQL 15's pgbench and psql. Environment:
#   QUERIES   transactions per point (default 2000)
#   S1_ROWS   rows of S1's table (default 100000)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${1:-$root/target/release/myriad}"
queries="${QUERIES:-2000}"
s1_rows="${S1_ROWS:-100000}"
pg_bindir="${PG_BINDIR:-/usr/lib/postgresql/15/bin}"
[[ -x "$bin" ]] || { echo "callgrind: no server binary at $bin" >&2; exit 2; }
command -v callgrind_control >/dev/null || { echo "callgrind: install valgrind" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/myriad-callgrind.XXXXXX")"
port=$((20000 + RANDOM % 20000))
# No autovacuum: background work would be counted with the queries'.
printf 'autovacuum = false\n' >"$work/myriad.toml"
valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
    "$bin" --listen "127.0.0.1:$port" --data-dir "$work/data" --config "$work/myriad.toml" \
    >"$work/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$work"' EXIT

conn=(-h 127.0.0.1 -p "$port" -U postgres)
for _ in $(seq 1 600); do
    "$pg_bindir/psql" "${conn[@]}" -d postgres -qAtc 'SELECT 1' >/dev/null 2>&1 && break
    sleep 0.5
done
psql() { "$pg_bindir/psql" "${conn[@]}" -d postgres -qAt -v ON_ERROR_STOP=1 "$@"; }

# Dirty pages written now, not by the background checkpointer during a measurement
# (servers from before CHECKPOINT existed skip it).
checkpoint() { psql -c CHECKPOINT 2>/dev/null || true; }

# The instructions of one pgbench run of `script` in `mode`, per transaction.
measure() {
    local script="$1" mode="$2"
    callgrind_control -z "$server" >/dev/null 2>&1
    "$pg_bindir/pgbench" "${conn[@]}" -n -f "$script" -M "$mode" -t "$queries" \
        --random-seed=26 postgres \
        >"$work/pgbench.log" 2>&1
    rm -f "$work"/cg.out.*
    callgrind_control -d "$server" >/dev/null 2>&1
    local dump
    dump="$(ls -t "$work"/cg.out.* | head -n 1)"
    awk -v n="$queries" '/^summary:/ { printf "%d", $2 / n }' "$dump"
}

w2_schema() {
    local k="$1" sql="CREATE TABLE synth_table ("
    psql -c "DROP TABLE IF EXISTS synth_table" 2>/dev/null
    sql+="$(seq -s ', ' -f 'col%g int' 1 60));"
    for i in $(seq 1 "$k"); do sql+=" CREATE INDEX ON synth_table (col$i);"; done
    psql -c "$sql"
    checkpoint
}

echo 'SELECT * FROM synth_table WHERE col5 = 42;' >"$work/w2.sql"
printf '\\set id random(1, %d)\nSELECT * FROM pk1m WHERE id = :id;\n' "$s1_rows" >"$work/s1.sql"

echo "| Point | simple | prepared |"
echo "|---|---:|---:|"
for k in 1 60; do
    w2_schema "$k"
    echo "| W2, $k indexes | $(measure "$work/w2.sql" simple) | $(measure "$work/w2.sql" prepared) |"
done
# Loaded, vacuumed (hint bits set) and checkpointed: the lookups write nothing.
psql -c "DROP TABLE synth_table; CREATE TABLE pk1m (id int PRIMARY KEY, filler text);
         INSERT INTO pk1m SELECT n, 'row ' || n FROM generate_series(1, $s1_rows) AS n;" \
    -c "VACUUM pk1m"
checkpoint
echo "| S1, $s1_rows rows | $(measure "$work/s1.sql" simple) | $(measure "$work/s1.sql" prepared) |"
