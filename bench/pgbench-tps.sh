#!/usr/bin/env bash
# pgbench tpcb-like TPS on Myriad and PostgreSQL 15 side by side (issue 31: at least 0.9x
# PostgreSQL's at 1 client; the goal, 1x at 1 and 8). Starts a release Myriad and a
# throwaway PostgreSQL 15 (bench/side-by-side.sh: both fsync every commit), both reached
# over TCP on 127.0.0.1: a Unix-domain socket would spare PostgreSQL the loopback TCP
# work Myriad pays. Each of RUNS rounds loads `pgbench -i -s SCALE` afresh on each server
# and runs `pgbench -n -c CLIENTS -T DURATION` (simple protocol) on Myriad, then on
# PostgreSQL, alternating so the machine's drift falls on both; prints every run and the
# ratio of the means.
#
#   cargo build --release -p myriad-server && bench/pgbench-tps.sh [RUNS] [DURATION] [CLIENTS] [SCALE]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs="${1:-4}"
duration="${2:-20}"
clients="${3:-1}"
scale="${4:-10}"
jobs=$(( clients < $(nproc) ? clients : $(nproc) ))
source bench/side-by-side.sh

tps() {
    local port=$1
    local pg=(-h 127.0.0.1 -p "$port" -U postgres)
    pgbench "${pg[@]}" -i -q -s "$scale" postgres > "$dir/init.log" 2>&1
    pgbench "${pg[@]}" -n -c "$clients" -j "$jobs" -T "$duration" postgres 2> /dev/null |
        grep "^tps" | sed -E 's/^tps = ([0-9.]+).*/\1/'
}
echo "pgbench tpcb-like, scale $scale, $clients client(s), ${duration} s a run, both over TCP."
echo
echo "| run | Myriad TPS | PostgreSQL 15 TPS |"
echo "|---:|---:|---:|"
m_all=()
p_all=()
for r in $(seq "$runs"); do
    m=$(tps "$myriad_port")
    p=$(tps "$pg_port")
    m_all+=("$m")
    p_all+=("$p")
    printf '| %d | %.0f | %.0f |\n' "$r" "$m" "$p"
done
python3 - "${m_all[*]}" "${p_all[*]}" <<'PY'
import sys
m = [float(x) for x in sys.argv[1].split()]
p = [float(x) for x in sys.argv[2].split()]
mm, pm = sum(m) / len(m), sum(p) / len(p)
print(f"\nmeans: Myriad {mm:.0f}, PostgreSQL {pm:.0f}; Myriad / PostgreSQL {mm / pm:.2f}")
PY
