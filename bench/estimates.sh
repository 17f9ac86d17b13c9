#!/usr/bin/env bash
# Estimated rows on Myriad against PostgreSQL 15 (issue 27: within 2x on a named query
# set). Starts a throwaway PostgreSQL 15 cluster and a release Myriad, loads
# bench/estimates/setup.sql into both, EXPLAINs each line of bench/estimates/queries.sql
# and compares the top node's estimated rows. Prints one line per query and exits 1 if a
# ratio passes 2 (either way).
#
#   cargo build --release --bin myriad && bench/estimates.sh
#   MYRIAD_BIN=target/debug/myriad bench/estimates.sh      # as scripts/test runs it
#
# PostgreSQL runs with hash and merge joins off (Myriad has nested loops only; the join's
# row estimate does not depend on its method, but its plan shape does not matter here).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin="${MYRIAD_BIN:-target/release/myriad}"
[[ -x $bin ]] || { echo "build first: cargo build --release --bin myriad" >&2; exit 2; }
pg_bindir="${PG_BINDIR:-/usr/lib/postgresql/15/bin}"
as_owner() { if [[ "$(id -u)" == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

dir="$(mktemp -d)"; chmod 755 "$dir"
[[ "$(id -u)" == 0 ]] && chown postgres: "$dir"
pg_port="$(free_port)"; my_port="$(free_port)"
cleanup() {
    as_owner "$pg_bindir/pg_ctl" -D "$dir/pg" -m immediate -w stop >/dev/null 2>&1 || true
    kill "${my_pid:-0}" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
as_owner "$pg_bindir/initdb" -D "$dir/pg" --locale=C -E UTF8 -A trust >/dev/null
as_owner "$pg_bindir/pg_ctl" -D "$dir/pg" -o "-p $pg_port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c autovacuum=off" -l "$dir/pg.log" -w start >/dev/null
printf 'autovacuum = false\n' > "$dir/myriad.toml"
"$bin" --listen "127.0.0.1:$my_port" --data-dir "$dir/my" --config "$dir/myriad.toml" > "$dir/my.log" 2>&1 &
my_pid=$!
for _ in $(seq 100); do "$pg_bindir/pg_isready" -q -h 127.0.0.1 -p "$my_port" && break; sleep 0.2; done

pg=("$pg_bindir/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -X -q -A -t -v ON_ERROR_STOP=1)
my=("$pg_bindir/psql" -h 127.0.0.1 -p "$my_port" -U postgres -d postgres -X -q -A -t -v ON_ERROR_STOP=1)
"${pg[@]}" -f bench/estimates/setup.sql
"${my[@]}" -f bench/estimates/setup.sql

# The top node's rows= of an EXPLAIN.
top_rows() { sed -n '1s/.*rows=\([0-9]*\).*/\1/p'; }
worst=1; fail=0
printf '%-70s %10s %10s %7s\n' query postgres myriad ratio
while IFS= read -r q; do
    [[ -z "$q" || "$q" == --* ]] && continue
    p="$("${pg[@]}" -c "SET enable_hashjoin = off; SET enable_mergejoin = off; EXPLAIN $q" | top_rows)"
    m="$("${my[@]}" -c "EXPLAIN $q" | top_rows)"
    ratio="$(python3 -c "p,m=$p,$m; print(f'{max(p,m)/max(min(p,m),1):.2f}')")"
    flag=""
    if python3 -c "import sys; sys.exit(0 if $ratio > 2 else 1)"; then flag=" <-- over 2x"; fail=1; fi
    printf '%-70s %10s %10s %7s%s\n' "${q:0:70}" "$p" "$m" "$ratio" "$flag"
done < bench/estimates/queries.sql
exit "$fail"
