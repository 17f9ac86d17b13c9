#!/usr/bin/env bash
# Large values (issue 31, access rule 12): inserting and reading 1 MB values, on Myriad
# and on PostgreSQL 15 side by side. Starts a release Myriad and a throwaway PostgreSQL
# 15 (both fsyncing every commit, PostgreSQL with its default pglz compression, Myriad
# with lz4), loads one 1 MB incompressible value into `src` on each, then runs for
# DURATION seconds each, one client:
#   insert: INSERT INTO blobs (body) SELECT v FROM src   (a value read, and written out
#           of line)
#   read:   SELECT body FROM blobs WHERE id = random id    (a value read and sent whole)
# and prints each side's transactions per second. Issue 31's goal: Myriad within 1.5x
# PostgreSQL 15's time for both.
#
#   cargo build --release -p myriad-server && bench/toast-1mb.sh [DURATION]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
duration="${1:-20}"
source bench/side-by-side.sh

# One line of 1 MiB of printable bytes no compressor shrinks (a fixed seed: the same on
# both sides).
python3 -c '
import random
r = random.Random(31)
print("".join(chr(33 + r.randrange(90)) for _ in range(1 << 20)).replace("\\", "/"))
' > "$dir/value.txt"
echo 'INSERT INTO blobs (body) SELECT v FROM src;' > "$dir/insert.sql"
cat > "$dir/read.sql" <<'EOF'
\set id random(1, 50)
SELECT body FROM blobs WHERE id = :id;
EOF
for side in myriad pg; do
    port=$myriad_port
    [[ $side == pg ]] && port=$pg_port
    pg=(-h 127.0.0.1 -p "$port" -U postgres)
    psql -X -q "${pg[@]}" postgres -c "CREATE TABLE src (v text)" \
        -c "\\copy src FROM '$dir/value.txt'" \
        -c "CREATE TABLE blobs (id serial PRIMARY KEY, body text)"
    pgbench "${pg[@]}" -n -T "$duration" -f "$dir/insert.sql" postgres > "$dir/$side.insert"
    pgbench "${pg[@]}" -n -T "$duration" -f "$dir/read.sql" postgres > "$dir/$side.read"
    psql -X -At "${pg[@]}" postgres -c \
        "SELECT count(*), pg_size_pretty(pg_table_size('blobs')) FROM blobs" > "$dir/$side.size"
done
tps() { grep -h "^tps" "$1" | sed -E 's/^tps = ([0-9.]+).*/\1/'; }
echo "1 MiB incompressible values, one client, ${duration} s each, fsync on."
echo
echo "| workload | Myriad TPS | PostgreSQL 15 TPS | Myriad time / PostgreSQL time |"
echo "|---|---:|---:|---:|"
for w in insert read; do
    m=$(tps "$dir/myriad.$w")
    p=$(tps "$dir/pg.$w")
    echo "| $w | $m | $p | $(python3 -c "print(f'{$p / $m:.2f}')") |"
done
echo
echo "rows and pg_table_size('blobs'): Myriad $(cat "$dir/myriad.size"), PostgreSQL $(cat "$dir/pg.size")"
