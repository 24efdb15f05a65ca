-- bench/radius_bench.sh: one table of :rows fingerprints (:data = uniform, or skewed: the 12 low
-- bits constant, as from a biased generator), a simhash index, and for every radius 0..:max_radius
-- the median execution time (EXPLAIN ANALYZE, TIMING OFF) of `count(*) WHERE hamming(fp, q) <= k`
-- as the planner runs it and as a sequential scan, around stored fingerprints with 2 of their
-- varying bits flipped. With :btrees on, the same queries through the four B-tree expression
-- indexes of the pigeonhole baseline (bench/index_bench.sql), timed after the rest and printed as
-- a table of their own. With :resultsdir set (bench/each_size.sh sets it), every method's median
-- per radius also goes to :resultsdir/radius_bench_:data_:rows.csv.
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

-- The four-B-tree pigeonhole: one of the four 16-bit blocks lies within k / 4 bits of the
-- query's, then the full distance (bit_count, which the simhash index cannot serve).
CREATE FUNCTION pg_temp.radius_block_values(block bigint, within int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT '''{' || string_agg((block # m)::text, ',') || '}''::bigint[]'
    FROM generate_series(0, 65535) m WHERE bit_count(m::bit(16)) <= within $$;
CREATE FUNCTION pg_temp.radius_query(how text, q bigint, k int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE how
        WHEN 'btree x4' THEN format('SELECT count(*) FROM radius_docs WHERE (((fp >> 48) & 65535) = ANY(%s) OR ((fp >> 32) & 65535) = ANY(%s)'
                                    ' OR ((fp >> 16) & 65535) = ANY(%s) OR (fp & 65535) = ANY(%s)) AND bit_count((fp # %s::bigint)::bit(64)) <= %s',
                                    pg_temp.radius_block_values((q >> 48) & 65535, k / 4), pg_temp.radius_block_values((q >> 32) & 65535, k / 4),
                                    pg_temp.radius_block_values((q >> 16) & 65535, k / 4), pg_temp.radius_block_values(q & 65535, k / 4), q, k)
        ELSE format('SELECT count(*) FROM radius_docs WHERE hamming(fp, %s) <= %s', q, k) END $$;

CREATE OR REPLACE PROCEDURE pg_temp.radius_run(k int, how text, n int, max_rows bigint, data text) LANGUAGE plpgsql AS $$
DECLARE q bigint; plan text; line text; result json;
BEGIN
    IF how = 'seq scan' THEN
        SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL max_parallel_workers_per_gather = 0;
    ELSIF how = 'btree x4' THEN
        -- The B-trees as the baseline is meant to run, on one core like the sequential scan.
        SET LOCAL enable_seqscan = off; SET LOCAL max_parallel_workers_per_gather = 0;
    END IF;
    q := pg_temp.bench_flip(data, (SELECT fp FROM radius_docs WHERE id = 1), 0, 2);
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || pg_temp.radius_query(how, q, k) LOOP
        -- A bitmap plan's lines include "Bitmap Index Scan": test for it first.
        IF line ~ 'Bitmap' THEN plan := coalesce(plan, 'bitmap scan'); ELSIF line ~ 'Index Scan' THEN plan := coalesce(plan, 'index scan');
        ELSIF line ~ 'Seq Scan' THEN plan := coalesce(plan, 'seq scan'); END IF;
    END LOOP;
    FOR i IN 1 .. n LOOP
        q := pg_temp.bench_flip(data, (SELECT fp FROM radius_docs WHERE id = 1 + (i * 7919) % max_rows), i, i * 7);
        -- Literal values, planned each time (a cached generic plan would neither see the radius
        -- nor the planner settings); the server's execution time, without planning.
        EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || pg_temp.radius_query(how, q, k) INTO result;
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

\if :{?btrees}
\else
\set btrees 0
\endif
\if :btrees
\if :{?btree_queries}
\else
\set btree_queries :queries
\endif
CREATE INDEX radius_docs_b0 ON radius_docs (((fp >> 48) & 65535));
CREATE INDEX radius_docs_b1 ON radius_docs (((fp >> 32) & 65535));
CREATE INDEX radius_docs_b2 ON radius_docs (((fp >> 16) & 65535));
CREATE INDEX radius_docs_b3 ON radius_docs ((fp & 65535));
ANALYZE radius_docs;
SELECT pg_prewarm('radius_docs_b0') + pg_prewarm('radius_docs_b1') + pg_prewarm('radius_docs_b2') + pg_prewarm('radius_docs_b3') IS NOT NULL AS prewarmed
WHERE EXISTS (SELECT FROM pg_extension WHERE extname = 'pg_prewarm');
-- Untimed, as for the simhash index: the backend's first touch of the B-trees' pages.
CALL pg_temp.radius_run(7, 'btree x4', 20, :rows, :'data');
DELETE FROM radius_ms WHERE how = 'btree x4';
SELECT format('CALL pg_temp.radius_run(%s, %L, %s, %s, %L);', k, 'btree x4', :btree_queries, :rows, :'data')
FROM generate_series(0, :max_radius) k \gexec
SELECT :'data' AS data, :rows AS rows, b.k AS radius, b.plan AS four_btrees_plan,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY b.ms)::numeric, 3) AS four_btrees_median_ms,
       (SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY p.ms)::numeric, 3) FROM radius_ms p WHERE p.k = b.k AND p.how = 'planner') AS planner_median_ms
FROM radius_ms b WHERE b.how = 'btree x4' GROUP BY b.k, b.plan ORDER BY b.k;
\endif

\if :{?resultsdir}
\if :{?machine}
\else
\set machine ''
\endif
SELECT format('%s/radius_bench_%s_%s.csv', :'resultsdir', :'data', :rows) AS radius_csv \gset
\o :radius_csv
COPY (SELECT :'data' AS data, :rows AS rows, k AS radius, how AS method, plan, count(*) AS queries,
             round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 4) AS median_ms,
             round(min(ms)::numeric, 4) AS min_ms, round(max(ms)::numeric, 4) AS max_ms,
             current_setting('shared_buffers') AS shared_buffers, :'machine' AS machine
      FROM radius_ms GROUP BY k, how, plan ORDER BY how, k) TO STDOUT WITH (FORMAT csv, HEADER);
\o
\endif
DROP TABLE radius_docs, radius_ms;
