-- bench/radius_bench.sh: one table of :rows fingerprints (:data = uniform, or skewed: the 12 low
-- bits constant, as from a biased generator), a simhash index, and for every radius 0..:max_radius
-- the median execution time (EXPLAIN ANALYZE, TIMING OFF) of `count(*) WHERE hamming(fp, q) <= k`
-- as the planner runs it and as a sequential scan, around stored fingerprints with 2 of their
-- varying bits flipped.
SET client_min_messages = warning;
\ir bench_data.sql
DROP TABLE IF EXISTS radius_docs, radius_ms;
CREATE TABLE radius_docs (id bigint, fp bigint);
INSERT INTO radius_docs SELECT g, fp FROM pg_temp.bench_table_rows(:rows, :'data');
CREATE INDEX radius_docs_fp ON radius_docs USING simhash (fp);
CREATE INDEX radius_docs_id ON radius_docs (id);  -- each query's center is looked up by id
VACUUM ANALYZE radius_docs;
SELECT pg_prewarm('radius_docs') IS NOT NULL AND pg_prewarm('radius_docs_fp') IS NOT NULL AS prewarmed
WHERE EXISTS (SELECT FROM pg_extension WHERE extname = 'pg_prewarm');
CREATE TABLE radius_ms (k int, how text, plan text, ms float8);
-- An untimed pass first: a backend loads the directory pages of the index as its probes first
-- touch them (a new connection's first queries are the slower ones, see the README's
-- Troubleshooting), and the radii below, timed in order, would otherwise share that cost unevenly.
DO $$
BEGIN
    FOR i IN 1 .. 200 LOOP
        PERFORM count(*) FROM radius_docs WHERE hamming(fp, ('x' || md5(i::text))::bit(64)::bigint) <= 7;
    END LOOP;
END $$;

CREATE OR REPLACE PROCEDURE pg_temp.radius_run(k int, how text, n int, max_rows bigint, data text) LANGUAGE plpgsql AS $$
DECLARE q bigint; plan text; line text; result json;
BEGIN
    IF how = 'seq scan' THEN
        SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL max_parallel_workers_per_gather = 0;
    END IF;
    q := pg_temp.bench_flip(data, (SELECT fp FROM radius_docs WHERE id = 1), 0, 2);
    FOR line IN EXECUTE format('EXPLAIN (COSTS OFF) SELECT count(*) FROM radius_docs WHERE hamming(fp, %s) <= %s', q, k) LOOP
        -- A bitmap plan's lines include "Bitmap Index Scan": test for it first.
        IF line ~ 'Bitmap' THEN plan := coalesce(plan, 'bitmap scan'); ELSIF line ~ 'Index Scan' THEN plan := coalesce(plan, 'index scan');
        ELSIF line ~ 'Seq Scan' THEN plan := coalesce(plan, 'seq scan'); END IF;
    END LOOP;
    FOR i IN 1 .. n LOOP
        q := pg_temp.bench_flip(data, (SELECT fp FROM radius_docs WHERE id = 1 + (i * 7919) % max_rows), i, i * 7);
        -- Literal values, planned each time (a cached generic plan would neither see the radius
        -- nor the planner settings); the server's execution time, without planning.
        EXECUTE format('EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) SELECT count(*) FROM radius_docs WHERE hamming(fp, %s) <= %s',
                       q, k) INTO result;
        INSERT INTO radius_ms VALUES (k, how, plan, (result -> 0 ->> 'Execution Time')::float8);
    END LOOP;
END $$;

SELECT format('CALL pg_temp.radius_run(%s, %L, %s, %s, %L); CALL pg_temp.radius_run(%s, %L, %s, %s, %L);',
              k, 'planner', :queries, :rows, :'data', k, 'seq scan', :seq_queries, :rows, :'data')
FROM generate_series(0, :max_radius) k \gexec

SELECT :'data' AS data, :rows AS rows, p.k AS radius, p.plan AS planner_choice,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY p.ms)::numeric, 3) AS median_ms,
       (SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY s.ms)::numeric, 1) FROM radius_ms s WHERE s.k = p.k AND s.how = 'seq scan') AS seq_scan_ms,
       round(((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY s.ms) FROM radius_ms s WHERE s.k = p.k AND s.how = 'seq scan')
              / greatest(percentile_cont(0.5) WITHIN GROUP (ORDER BY p.ms), 0.001))::numeric, 1) AS times_faster
FROM radius_ms p WHERE p.how = 'planner' GROUP BY p.k, p.plan ORDER BY p.k;
SELECT runs, entries FROM simhash_index_info('radius_docs_fp');
DROP TABLE radius_docs, radius_ms;
