-- One query per line: each is EXPLAINed on both servers and the top node's estimated
-- rows compared (bench/estimates.sh).
SELECT * FROM est_u WHERE a = 5
SELECT * FROM est_u WHERE a < 10
SELECT * FROM est_u WHERE a BETWEEN 10 AND 20
SELECT * FROM est_u WHERE a <> 5
SELECT * FROM est_u WHERE b = 7
SELECT * FROM est_u WHERE b > 990
SELECT * FROM est_u WHERE t = 'v3'
SELECT * FROM est_u WHERE t LIKE 'v1%'
SELECT * FROM est_u WHERE t < 'v2'
SELECT * FROM est_u WHERE a IN (1, 2, 3)
SELECT * FROM est_u WHERE a NOT IN (1, 2, 3)
SELECT * FROM est_u WHERE a = 5 OR b = 7
SELECT * FROM est_u WHERE NOT (a = 5)
SELECT * FROM est_u WHERE a = 5 AND b = 5
SELECT * FROM est_u WHERE id > 19000
SELECT * FROM est_s WHERE k = 1
SELECT * FROM est_s WHERE k = 2
SELECT * FROM est_s WHERE k = 15009
SELECT * FROM est_s WHERE k > 19000
SELECT * FROM est_s WHERE k < 3
SELECT * FROM est_s WHERE k = 1 AND v = 3
SELECT * FROM est_s WHERE w IS NULL
SELECT * FROM est_s WHERE w IS NOT NULL
SELECT * FROM est_s WHERE w = 7
SELECT * FROM est_s WHERE w > 30
SELECT * FROM est_u u JOIN est_s s ON u.id = s.id
SELECT * FROM est_u u JOIN est_s s ON u.id = s.id WHERE u.a = 5
SELECT * FROM est_u u JOIN est_s s ON u.a = s.v
SELECT * FROM est_u u JOIN est_s s ON u.b = s.w WHERE s.k = 1
SELECT * FROM est_u u JOIN est_s s ON u.id = s.k WHERE u.a = 1
SELECT * FROM est_s a JOIN est_s b ON a.k = b.k
SELECT * FROM est_s a JOIN est_s b ON a.k = b.k WHERE a.v = 1
SELECT * FROM est_u u JOIN est_s s ON u.a = s.w
SELECT * FROM est_s a JOIN est_s b ON a.v = b.w
SELECT * FROM est_u u LEFT JOIN est_s s ON u.b = s.k
SELECT a, count(*) FROM est_u GROUP BY a
SELECT DISTINCT v FROM est_s
SELECT a, b, count(*) FROM est_u GROUP BY a, b
SELECT b, t, count(*) FROM est_u GROUP BY b, t
SELECT b, count(*) FROM est_u WHERE a < 10 GROUP BY b
SELECT v, w, count(*) FROM est_s GROUP BY v, w
SELECT * FROM est_d WHERE d >= date '1993-10-01' AND d < date '1993-10-01' + interval '3 month'
SELECT * FROM est_d WHERE d < timestamp '1993-01-01 00:00:00'
