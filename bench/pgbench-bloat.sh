#!/usr/bin/env bash
# Bloat under steady updates (issues 4 and 31): does pgbench's tpcb-like workload grow its
# tables, on Myriad and on PostgreSQL 15 side by side? Starts a release Myriad and a
# throwaway PostgreSQL 15, both with autovacuum on (their defaults), runs `pgbench -i -s
# SCALE` on each, then the same fixed number of tpcb-like transactions (`-t`, not a
# duration, so the faster server is not penalised) in two steps, and prints each
# relation's size in 8 KiB blocks after each step, from `pg_relation_size`. Issue 31's
# goal: pgbench_accounts within 1.2x PostgreSQL 15's size after the same transactions.
#
#   cargo build --release -p myriad-server && bench/pgbench-bloat.sh [SCALE] [TRANSACTIONS]
#
# TRANSACTIONS (default 100,000) run as 10% then 90%, by 4 clients. PostgreSQL runs with
# fsync off (sizes do not depend on it); as root it runs as the `postgres` user.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scale="${1:-1}"
total="${2:-100000}"
PG_SERVER_OPTS="-c fsync=off"
source bench/side-by-side.sh

sizes() {
    psql -X -At -F ' ' -h 127.0.0.1 -p "$1" -U postgres postgres -c \
        "SELECT relname, pg_relation_size(oid) / 8192 FROM pg_class
         WHERE relname LIKE 'pgbench%' AND relkind IN ('r', 'i') ORDER BY relname"
}
first=$((total / 10))
second=$((total - first))
for side in myriad pg; do
    port=$myriad_port
    [[ $side == pg ]] && port=$pg_port
    pg=(-h 127.0.0.1 -p "$port" -U postgres)
    pgbench "${pg[@]}" -i -s "$scale" -q postgres > "$dir/$side.init" 2>&1
    sizes "$port" > "$dir/$side.s0"
    pgbench "${pg[@]}" -n -c 4 -j 2 -t $((first / 4)) postgres > "$dir/$side.run1"
    sizes "$port" > "$dir/$side.s1"
    pgbench "${pg[@]}" -n -c 4 -j 2 -t $((second / 4)) postgres > "$dir/$side.run2"
    sizes "$port" > "$dir/$side.s2"
done
echo "Scale $scale, $total tpcb-like transactions (4 clients); sizes in 8 KiB blocks."
echo
echo "| relation | Myriad after -i | after $first | after $total | PostgreSQL after -i | after $first | after $total | Myriad / PostgreSQL at $total |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
paste -d' ' "$dir/myriad.s0" "$dir/myriad.s1" "$dir/myriad.s2" "$dir/pg.s0" "$dir/pg.s1" "$dir/pg.s2" |
    awk '{printf "| %s | %d | %d | %d | %d | %d | %d | %.2f |\n", $1, $2, $4, $6, $8, $10, $12, ($12 > 0) ? $6 / $12 : 0}'
echo
for side in myriad pg; do
    echo "$side: $(grep -h "^tps" "$dir/$side.run1" "$dir/$side.run2" | tr '\n' ' ')"
    grep -h "failed transactions" "$dir/$side.run1" "$dir/$side.run2" | sed "s/^/$side: /"
done
