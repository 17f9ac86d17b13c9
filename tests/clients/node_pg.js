// node-postgres against a server: typed parameters and results, named prepared
// statements, a rolled-back block, an error's SQLSTATE. Usage: node node_pg.js PORT.
// Passes against PostgreSQL 15 and Myriad alike (crates/server/tests/clients.rs).
const { Client } = require('pg');
const assert = require('assert');

(async () => {
  const port = parseInt(process.argv[2], 10);
  const c = new Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
  await c.connect();
  await c.query('DROP TABLE IF EXISTS np_t');
  await c.query('CREATE TABLE np_t (id serial PRIMARY KEY, i4 int, i8 bigint, f8 double precision,'
    + ' n numeric(10,2), b boolean, t text, d date, tz timestamptz, u uuid, by bytea)');
  const tz = new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 678));
  const u = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
  const by = Buffer.from([0, 255, 98, 92]);
  const r = await c.query('INSERT INTO np_t (i4, i8, f8, n, b, t, d, tz, u, by)'
    + ' VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id',
    [42, '9007199254740993', 2.5, '12.34', true, 'héllo', '2024-02-29', tz, u.toUpperCase(), by]);
  assert.strictEqual(r.rows[0].id, 1);
  const s = await c.query({
    text: 'SELECT i4, i8, f8, n, b, t, d::text AS d, tz, u, by FROM np_t WHERE id = $1',
    values: [1],
  });
  const row = s.rows[0];
  assert.deepStrictEqual(s.fields.map((f) => f.name), ['i4', 'i8', 'f8', 'n', 'b', 't', 'd', 'tz', 'u', 'by']);
  assert.strictEqual(row.i4, 42);
  assert.strictEqual(row.i8, '9007199254740993');
  assert.strictEqual(row.f8, 2.5);
  assert.strictEqual(row.n, '12.34');
  assert.strictEqual(row.b, true);
  assert.strictEqual(row.t, 'héllo');
  assert.strictEqual(row.d, '2024-02-29');
  assert.strictEqual(row.tz.getTime(), tz.getTime());
  assert.strictEqual(row.u, u);
  assert.ok(row.by.equals(by));
  for (const v of [1, 2]) {
    const p = await c.query({ name: 'ins', text: 'INSERT INTO np_t (i4) VALUES ($1) RETURNING id', values: [v] });
    assert.strictEqual(p.rows[0].id, v + 1);
  }
  await c.query('BEGIN');
  await c.query('INSERT INTO np_t (i4) VALUES (99)');
  await c.query('ROLLBACK');
  const n = await c.query('SELECT count(*)::int AS n FROM np_t');
  assert.strictEqual(n.rows[0].n, 3);
  await assert.rejects(c.query('SELECT * FROM np_nosuch'), (e) => e.code === '42P01');
  await c.query('DROP TABLE np_t');
  await c.end();
  console.log('ok');
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
