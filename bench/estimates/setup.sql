-- Issue 27's named query set for row estimates: one uniform and one skewed table of
-- 20,000 rows each (below ANALYZE's 30,000-row sample, so both servers keep the same
-- statistics), analyzed.
CREATE TABLE est_u (id int PRIMARY KEY, a int, b int, t text);
INSERT INTO est_u SELECT i, i % 100, i % 1000, 'v' || (i % 50) FROM generate_series(1, 20000) i;
CREATE INDEX est_u_a ON est_u (a);
CREATE TABLE est_s (id int PRIMARY KEY, k int, v int, w int);
INSERT INTO est_s SELECT i, CASE WHEN i % 10 < 6 THEN 1 WHEN i % 10 < 8 THEN 2 ELSE i END, i % 7, CASE WHEN i % 20 = 0 THEN NULL ELSE i % 40 END FROM generate_series(1, 20000) i;
CREATE INDEX est_s_k ON est_s (k);
CREATE TABLE est_d (id int PRIMARY KEY, d date);
INSERT INTO est_d SELECT i, date '1992-01-01' + (i % 2400) FROM generate_series(1, 20000) i;
ANALYZE est_u;
ANALYZE est_s;
ANALYZE est_d;
