-- Every query form reaches the simhash index (EXPLAIN (COSTS OFF)), and the planner prefers a
-- sequential scan for large radii.
SET client_min_messages = warning;
SET jit = off;
CREATE TABLE pdocs (id int PRIMARY KEY, fp bigint);
INSERT INTO pdocs SELECT g, hashtextextended('p' || g, 7) FROM generate_series(1, 50000) g;
INSERT INTO pdocs SELECT 100000 + g, 1234567 # (1::bigint << g) FROM generate_series(0, 63) g;
CREATE INDEX pdocs_fp ON pdocs USING simhash (fp);
CREATE TABLE probes_p (fp bigint);
INSERT INTO probes_p VALUES (1234567), (0), (hashtextextended('p17', 7));
ANALYZE pdocs, probes_p;

EXPLAIN (COSTS OFF) SELECT id FROM pdocs WHERE hamming(fp, 1234567) <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM pdocs WHERE hamming(fp, 1234567) < 4;
EXPLAIN (COSTS OFF) SELECT id FROM pdocs WHERE 3 >= hamming(fp, 1234567);
EXPLAIN (COSTS OFF) SELECT id FROM pdocs WHERE hamming(1234567, fp) <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM pdocs WHERE hamming_within(fp, 1234567, 3);
EXPLAIN (COSTS OFF) SELECT id FROM pdocs WHERE fp <@ hamming_ball(1234567, 3);
EXPLAIN (COSTS OFF) SELECT id FROM pdocs WHERE fp <@ '(1234567,3)';
EXPLAIN (COSTS OFF) SELECT id FROM pdocs WHERE hamming(fp, 1234567) <= 7;
SELECT count(*) FROM pdocs WHERE hamming(fp, 1234567) <= 3;
SELECT count(*) FROM pdocs WHERE hamming(1234567, fp) < 2;

-- Prepared statements, generic plans, typed and untyped parameters.
SET plan_cache_mode = force_generic_plan;
PREPARE q1(bigint, int) AS SELECT min(id), max(id), count(*) FROM pdocs WHERE hamming(fp, $1) <= $2;
EXPLAIN (COSTS OFF) EXECUTE q1(1234567, 3);
EXECUTE q1(1234567, 1);
PREPARE q2 AS SELECT count(*) FROM pdocs WHERE hamming(fp, $1) <= $2;
EXPLAIN (COSTS OFF) EXECUTE q2(1234567, 3);
EXECUTE q2(1234567, 3);
EXECUTE q2(1234567, NULL);
EXECUTE q2(NULL, 3);
EXECUTE q2(1234567, -1);
PREPARE q3(bigint) AS SELECT count(*) FROM pdocs WHERE hamming($1, fp) < $2;
EXPLAIN (COSTS OFF) EXECUTE q3(1234567, 4);
EXECUTE q3(1234567, 4);
RESET plan_cache_mode;

-- A view and a LANGUAGE sql function.
CREATE VIEW pdocs_near AS SELECT id, fp FROM pdocs WHERE hamming(fp, 1234567) <= 3;
EXPLAIN (COSTS OFF) SELECT count(*) FROM pdocs_near;
SELECT count(*) FROM pdocs_near;
CREATE FUNCTION near_p(q bigint, k int) RETURNS SETOF int LANGUAGE sql STABLE
    AS $$ SELECT id FROM pdocs WHERE hamming(fp, q) <= k $$;
EXPLAIN (COSTS OFF) SELECT * FROM near_p(1234567, 3);
SELECT count(*) FROM near_p(1234567, 3);

-- A join as a parameterized nested loop.
SET enable_hashjoin = off;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT p.fp, d.id FROM probes_p p JOIN pdocs d ON hamming(d.fp, p.fp) <= 3;
SELECT count(*) FROM probes_p p JOIN pdocs d ON hamming(d.fp, p.fp) <= 3;
RESET enable_hashjoin;
RESET enable_mergejoin;

CREATE FUNCTION pg_temp.plan_rows(query text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO plan;
    RETURN (plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
END $$;

-- Large radii: reading table 0 of the index stays cheaper than a sequential scan until the heap
-- rows to fetch dominate (sql/index_radius.sql checks the choice is monotone in the radius).
EXPLAIN (COSTS OFF) SELECT id FROM pdocs WHERE hamming(fp, 1234567) <= 24;
EXPLAIN (COSTS OFF) SELECT id FROM pdocs WHERE hamming(fp, 1234567) <= 40;
EXPLAIN (COSTS OFF) SELECT id FROM pdocs WHERE hamming(fp, 1234567) <= 64;
-- The same radii around a fingerprint known only at run time (a generic plan's parameter, a
-- subquery's value): the radius is still a constant, and the estimates (rows of the plan) follow
-- it as for a constant center.
SET plan_cache_mode = force_generic_plan;
PREPARE near3(bigint) AS SELECT id FROM pdocs WHERE hamming(fp, $1) <= 3;
PREPARE near40(bigint) AS SELECT id FROM pdocs WHERE hamming(fp, $1) <= 40;
EXPLAIN (COSTS OFF) EXECUTE near3(1234567);
EXPLAIN (COSTS OFF) EXECUTE near40(1234567);
RESET plan_cache_mode;
SELECT radius, const_rows > 0 AND const_rows = param_rows AS same_estimate
FROM (VALUES (3), (12), (24), (40)) r(radius),
     LATERAL (SELECT pg_temp.plan_rows(format('SELECT id FROM pdocs WHERE hamming(fp, 99) <= %s', radius)) AS const_rows,
                     pg_temp.plan_rows(format('SELECT id FROM pdocs WHERE fp <@ hamming_ball((SELECT fp FROM pdocs WHERE id = 17), %s)', radius)) AS param_rows) e;

-- A bitmap scan hands its TIDs over in batches sorted by heap block, bounded by work_mem: with
-- 64kB, many batches (and a lossy bitmap) still give exactly the rows of a sequential scan.
CREATE FUNCTION pg_temp.ids_within(k int, how text) RETURNS TABLE (n bigint, id_sum bigint) LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('enable_seqscan', (how = 'seq')::text, true);
    PERFORM set_config('enable_bitmapscan', (how = 'bitmap')::text, true);
    PERFORM set_config('enable_indexscan', 'false', true);
    RETURN QUERY SELECT count(*), sum(d.id) FROM pdocs d WHERE hamming(d.fp, 1234567) <= k;
END $$;
SET work_mem = '64kB';
SET enable_seqscan = off;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM pdocs WHERE hamming(fp, 1234567) <= 28;
RESET enable_seqscan;
RESET enable_indexscan;
SELECT k, b.n AS rows_found, b.n = s.n AND b.id_sum = s.id_sum AS bitmap_equals_seq
FROM unnest(ARRAY[3, 20, 24, 28, 32]) k, LATERAL pg_temp.ids_within(k, 'bitmap') b, LATERAL pg_temp.ids_within(k, 'seq') s;
RESET work_mem;

DROP FUNCTION near_p(bigint, int);
DROP VIEW pdocs_near;
DROP TABLE pdocs, probes_p;
