#!/usr/bin/env bash
# Issue 4's bloat check: does pgbench's tpcb-like workload grow its tables? Starts a release
# Myriad (autovacuum on, its default) on a fresh data directory, runs `pgbench -i -s SCALE`,
# then 10,000 tpcb-like transactions, then 90,000 more, and prints each relation's size in
# 8 KiB blocks after each step. The goal: every table the workload updates (accounts,
# tellers, branches) at most 2x its size after 10k transactions once 100k have run
# (pgbench_history only grows: it gets one row per transaction).
#
#   cargo build --release -p myriad-server && bench/pgbench-bloat.sh [SCALE]
#
# Relations are named by creation order on a fresh directory (pgbench 15 -i creates
# history, tellers, accounts, branches, then the primary keys of branches, tellers,
# accounts): Myriad has no pg_class yet to ask.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scale="${1:-1}"
bin=target/release/myriad
[[ -x $bin ]] || { echo "build first: cargo build --release -p myriad-server" >&2; exit 2; }
command -v pgbench >/dev/null || { echo "pgbench missing: apt-get install postgresql-client" >&2; exit 2; }

dir="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$bin" --listen "127.0.0.1:$port" --data-dir "$dir/data" > "$dir/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 50); do pg_isready -q -h 127.0.0.1 -p "$port" && break; sleep 0.2; done

pg=(-h 127.0.0.1 -p "$port" -U postgres)
names=(pgbench_history pgbench_tellers pgbench_accounts pgbench_branches
       pgbench_branches_pkey pgbench_tellers_pkey pgbench_accounts_pkey)
sizes() {
    local i=0
    for f in $(ls "$dir/data/base" | sort -n); do
        echo "${names[$i]:-rel$f} $(( $(stat -c %s "$dir/data/base/$f") / 8192 ))"
        i=$((i + 1))
    done
}
pgbench "${pg[@]}" -i -s "$scale" -q postgres > "$dir/init.out" 2>&1
sizes > "$dir/s0"
pgbench "${pg[@]}" -n -c 4 -j 2 -t 2500 postgres > "$dir/run1.out"
sizes > "$dir/s1"
pgbench "${pg[@]}" -n -c 4 -j 2 -t 22500 postgres > "$dir/run2.out"
sizes > "$dir/s2"
echo "| relation | after -i | after 10k | after 100k | 100k / 10k |"
echo "|---|---:|---:|---:|---:|"
paste -d' ' "$dir/s0" "$dir/s1" "$dir/s2" | awk '{printf "| %s | %d | %d | %d | %.2f |\n", $1, $2, $4, $6, ($4 > 0) ? $6 / $4 : 0}'
grep -h "failed transactions\|^tps" "$dir/run1.out" "$dir/run2.out"
