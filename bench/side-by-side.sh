# Sourced by the bench scripts that run a release Myriad and a throwaway PostgreSQL 15
# side by side (pgbench-bloat.sh, toast-1mb.sh): checks the tools, starts both servers
# in a temporary directory `$dir` on free ports `$myriad_port` and `$pg_port`, and stops
# and removes them on exit. `PG_SERVER_OPTS` adds to PostgreSQL's options (e.g.
# `-c fsync=off`).
bin=target/release/myriad
[[ -x $bin ]] || { echo "build first: cargo build --release -p myriad-server" >&2; exit 2; }
command -v pgbench >/dev/null || { echo "pgbench missing: apt-get install postgresql-client" >&2; exit 2; }
pg_bindir="${PG_BINDIR:-$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)}"
[[ -x $pg_bindir/postgres ]] || pg_bindir=/usr/lib/postgresql/15/bin
[[ -x $pg_bindir/postgres ]] || { echo "PostgreSQL 15 missing: apt-get install postgresql-15" >&2; exit 2; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
as_owner() { if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }

dir="$(mktemp -d)"
chmod 755 "$dir"
myriad_port="$(free_port)"
pg_port="$(free_port)"
"$bin" --listen "127.0.0.1:$myriad_port" --data-dir "$dir/myriad" > "$dir/myriad.log" 2>&1 &
myriad_pid=$!
mkdir "$dir/pg"
[[ $(id -u) == 0 ]] && chown postgres: "$dir/pg"
as_owner "$pg_bindir/initdb" -D "$dir/pg/data" -U postgres --auth=trust --locale=C \
    --encoding=UTF8 > "$dir/initdb.log" 2>&1
as_owner "$pg_bindir/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $pg_port -k $dir/pg ${PG_SERVER_OPTS:-}" start > /dev/null
cleanup() {
    kill "$myriad_pid" 2>/dev/null || true
    wait "$myriad_pid" 2>/dev/null || true
    as_owner "$pg_bindir/pg_ctl" -D "$dir/pg/data" -m immediate stop > /dev/null 2>&1 || true
    rm -rf "$dir"
}
trap cleanup EXIT
for _ in $(seq 50); do pg_isready -q -h 127.0.0.1 -p "$myriad_port" && break; sleep 0.2; done
