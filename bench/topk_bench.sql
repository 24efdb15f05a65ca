-- bench/topk_bench.sh: one table of :rows fingerprints (:data = uniform, or skewed: the 12 low
-- bits constant), a simhash index, and the median execution time (EXPLAIN ANALYZE, TIMING OFF) of
-- `ORDER BY fp <~> q LIMIT :k` as the planner runs it and as a sequential scan with a top-N sort,
-- for planted queries (the center of one of 1,000 clusters of 20 near-duplicates, one bit
-- flipped) and random queries (new fingerprints from the data's generator, whose nearest rows are
-- ~12-16 bits away at 1M-10M rows).
SET client_min_messages = warning;
\ir bench_data.sql
DROP TABLE IF EXISTS topk_docs, topk_ms;
CREATE TABLE topk_docs (id bigint, fp bigint);
INSERT INTO topk_docs SELECT g, fp FROM pg_temp.bench_table_rows(:rows, :'data');
-- 1,000 planted clusters: 20 near-duplicates 1-5 bits from a center, flipping bits that vary in
-- the data set
INSERT INTO topk_docs
SELECT -(c * 100 + i),
       pg_temp.bench_flip(:'data', pg_temp.bench_fingerprint(c, 23, :'data'),
                          VARIADIC ARRAY[c + i]::bigint[]
                                   || CASE WHEN i > 5 THEN ARRAY[c + 3 * i]::bigint[] ELSE '{}' END
                                   || CASE WHEN i > 10 THEN ARRAY[c + 5 * i, c + 5 * i + 1, c + 5 * i + 2]::bigint[] ELSE '{}' END)
FROM generate_series(1, 1000) c, generate_series(1, 20) i;
CREATE INDEX topk_docs_fp ON topk_docs USING simhash (fp);
VACUUM ANALYZE topk_docs;
SELECT pg_prewarm('topk_docs') IS NOT NULL AND pg_prewarm('topk_docs_fp') IS NOT NULL AS prewarmed
WHERE EXISTS (SELECT FROM pg_extension WHERE extname = 'pg_prewarm');
CREATE TABLE topk_ms (query text, how text, plan text, ms float8, nearest int);

CREATE OR REPLACE PROCEDURE pg_temp.topk_run(query text, how text, n int, k int, data text) LANGUAGE plpgsql AS $$
DECLARE q bigint; plan text; line text; result json; nearest int;
BEGIN
    IF how = 'seq scan + sort' THEN
        SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL max_parallel_workers_per_gather = 0;
    END IF;
    FOR i IN 1 .. n LOOP
        IF query = 'planted' THEN  -- a cluster's center with one bit flipped
            q := pg_temp.bench_flip(data, pg_temp.bench_fingerprint(i, 23, data), i * 7);
        ELSE  -- a new fingerprint from the data's generator
            q := pg_temp.bench_fingerprint(i, 777, data);
        END IF;
        IF i = 1 THEN
            FOR line IN EXECUTE format('EXPLAIN (COSTS OFF) SELECT id FROM topk_docs ORDER BY fp <~> %s LIMIT %s', q, k) LOOP
                IF line ~ 'Index Scan' THEN plan := 'index scan'; ELSIF line ~ 'Seq Scan' THEN plan := coalesce(plan, 'seq scan'); END IF;
            END LOOP;
        END IF;
        EXECUTE format('EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) SELECT id FROM topk_docs ORDER BY fp <~> %s LIMIT %s', q, k)
            INTO result;
        EXECUTE format('SELECT min(fp <~> %s) FROM (SELECT fp FROM topk_docs ORDER BY fp <~> %s LIMIT 1) s', q, q) INTO nearest;
        INSERT INTO topk_ms VALUES (query, how, plan, (result -> 0 ->> 'Execution Time')::float8, nearest);
    END LOOP;
END $$;

SELECT format('CALL pg_temp.topk_run(%L, %L, %s, %s, %L); CALL pg_temp.topk_run(%L, %L, %s, %s, %L);',
              query, 'planner', :queries, :k, :'data', query, 'seq scan + sort', :seq_queries, :k, :'data')
FROM unnest(ARRAY['planted', 'random']) query \gexec

SELECT :'data' AS data, :rows AS rows, :k AS k, p.query, p.plan AS planner_choice,
       round(avg(p.nearest), 1) AS avg_nearest_bits,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY p.ms)::numeric, 3) AS median_ms,
       (SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY s.ms)::numeric, 1) FROM topk_ms s
        WHERE s.query = p.query AND s.how <> 'planner') AS seq_sort_ms,
       round(((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY s.ms) FROM topk_ms s WHERE s.query = p.query AND s.how <> 'planner')
              / greatest(percentile_cont(0.5) WITHIN GROUP (ORDER BY p.ms), 0.001))::numeric, 1) AS times_faster
FROM topk_ms p WHERE p.how = 'planner' GROUP BY p.query, p.plan ORDER BY p.query;
DROP TABLE topk_docs, topk_ms;
