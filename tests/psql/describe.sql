-- psql's describe commands over a small schema (\dt, \di, \ds, \dn, \d and \d+ of tables and
-- sequences, \du, \dT, \df, \x, \dconfig). The expected output
-- (describe.out beside this file) was captured from PostgreSQL 15 with
--   psql -X -f tests/psql/describe.sql > out 2> err; cat out err > describe.out
-- against a fresh database; crates/server/tests/psql.rs runs it against Myriad.
CREATE TABLE accounts (id int PRIMARY KEY, owner text NOT NULL, balance numeric(12,2) DEFAULT 0);
CREATE TABLE branches (id serial PRIMARY KEY, name varchar(40) UNIQUE);
CREATE TABLE audit (at timestamptz, note text);
CREATE INDEX accounts_owner ON accounts (owner);
CREATE SEQUENCE tickets;
CREATE TABLE ledger (id bigint GENERATED ALWAYS AS IDENTITY, acct int REFERENCES accounts, note text DEFAULT 'x', at date DEFAULT current_date);
CREATE TABLE orders (id int PRIMARY KEY, qty int CHECK (qty > 0), code varchar(8) CHECK (code <> ''), placed timestamp(6) NOT NULL, CONSTRAINT orders_sane CHECK (qty < 1000 OR placed IS NULL));
\dt
\di
\ds
\dn
\dt acc*
\di branches*
\dt nothing*
\d accounts
\d branches
\d audit
\d ledger
\d orders
\d tickets
\d branches_id_seq
\d ledger_id_seq
\d+ accounts
\du
\dT
\df
\df now
\df make_interval
\df sqrt
\x
SELECT 1 AS a, 'two' AS b;
\x
\dconfig lock_timeout
\dconfig+ search_path
-- A partition key of an expression; bounds of the wrong type point at the value.
CREATE TABLE pexp (a int, b text) PARTITION BY RANGE (lower(b));
CREATE TABLE pexp_a PARTITION OF pexp FOR VALUES FROM ('a') TO ('m');
\d+ pexp
\d pexp_a
CREATE TABLE pint (a int) PARTITION BY LIST (a);
CREATE TABLE pint_1 PARTITION OF pint FOR VALUES IN (1, 'y');
