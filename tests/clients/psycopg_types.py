"""psycopg 3 against a server: typed parameters and results of every supported type, in
text and binary, a transaction block, executemany, COPY FROM STDIN, and server-side
(named) cursors read in batches and scrolled. Usage:
psycopg_types.py PORT. Passes against PostgreSQL 15 and Myriad alike (crates/server/tests/clients.rs)."""

import datetime
import decimal
import sys
import uuid

import psycopg

port = int(sys.argv[1])
url = f"host=127.0.0.1 port={port} user=postgres dbname=postgres"
with psycopg.connect(url, autocommit=True) as conn:
    cur = conn.cursor()
    cur.execute("DROP TABLE IF EXISTS psy_t")
    cur.execute(
        "CREATE TABLE psy_t (id serial PRIMARY KEY, i2 smallint, i4 int, i8 bigint, f4 real,"
        " f8 double precision, n numeric(10,2), b boolean, t text, vc varchar(10), d date,"
        " ts timestamp, tz timestamptz, iv interval, u uuid, by bytea)"
    )
    row = (
        1, 2, 3, 1.5, 2.25, decimal.Decimal("12.34"), True, "héllo", "vc",
        datetime.date(2024, 2, 29),
        datetime.datetime(2024, 1, 2, 3, 4, 5, 123456),
        datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc),
        datetime.timedelta(days=1, seconds=3661),
        uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
        b"\x00\xffbytes\\",
    )
    cur.execute(
        "INSERT INTO psy_t (i2, i4, i8, f4, f8, n, b, t, vc, d, ts, tz, iv, u, by)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
        row,
    )
    assert cur.fetchone() == (1,)
    for binary in (False, True):
        cur = conn.cursor(binary=binary)
        cur.execute(
            "SELECT i2, i4, i8, f4, f8, n, b, t, vc, d, ts, tz, iv, u, by FROM psy_t WHERE id = %s",
            (1,),
        )
        got = cur.fetchone()
        # bytea comes back as bytes in binary, as a memoryview-compatible value in text.
        got = got[:-1] + (bytes(got[-1]),)
        assert got == row, (binary, got, row)
        assert [d.name for d in cur.description] == [
            "i2", "i4", "i8", "f4", "f8", "n", "b", "t", "vc", "d", "ts", "tz", "iv", "u", "by"
        ]
    cur.execute("SELECT %s::int + 1, %s || 'x', %s::text IS NULL", (41, "a", None))
    assert cur.fetchone() == (42, "ax", True)
    with conn.transaction():
        cur.execute("INSERT INTO psy_t (i4) VALUES (%s)", (7,))
    try:
        with conn.transaction():
            cur.execute("INSERT INTO psy_t (i4) VALUES (%s)", (8,))
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    cur.executemany("INSERT INTO psy_t (i4) VALUES (%s)", [(i,) for i in range(5)])
    cur.execute("SELECT count(*), max(id) FROM psy_t")
    # The rolled-back insert used id 3: sequences are not transactional.
    assert cur.fetchone() == (7, 8)
    with cur.copy("COPY psy_t (i4, t) FROM STDIN") as copy:
        for i in range(3):
            copy.write_row((i, f"c{i}"))
    cur.execute("SELECT count(*) FROM psy_t WHERE t LIKE 'c%%'")
    assert cur.fetchone() == (3,)
    try:
        cur.execute("INSERT INTO psy_t (id) VALUES (1)")
        raise AssertionError("duplicate key accepted")
    except psycopg.errors.UniqueViolation:
        pass
    cur.execute("DROP TABLE psy_t")

# Server-side cursors: DECLARE, then FETCH in batches of itersize; scroll moves them.
with psycopg.connect(url) as conn:
    with conn.cursor(name="psy_named") as named:
        named.itersize = 100
        named.execute("SELECT g, g * 2 FROM generate_series(1, 1000) g WHERE g > %s", (10,))
        total = sum(a for a, _ in named)
        assert total == sum(range(11, 1001)), total
    with conn.cursor(name="psy_scroll", scrollable=True) as named:
        named.execute("SELECT g FROM generate_series(1, 10) g")
        assert named.fetchmany(3) == [(1,), (2,), (3,)]
        named.scroll(-2)
        assert named.fetchone() == (2,)
        named.scroll(7, mode="absolute")
        assert named.fetchall() == [(8,), (9,), (10,)]
    conn.commit()
print("ok")
