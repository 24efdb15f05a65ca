-- Benchmark of the simhash index against a sequential scan and the do-it-yourself pigeonhole of four
-- B-tree expression indexes on the 16-bit blocks, on the same data. Run through bench/index_bench.sh
-- (psql variables: rows, queries, seq_queries). Single process: parallel query and parallel index
-- builds are off, so every number is one core.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET max_parallel_maintenance_workers = 0;
SET maintenance_work_mem = '1GB';
SET jit = off;

DROP TABLE IF EXISTS bench_docs, bench_queries, bench_results, bench_truth, bench_facts;
CREATE TABLE bench_facts (method text, fact text, value double precision);
CREATE TABLE bench_results (method text, k int, qid int, ms double precision, rows bigint);

-- 98% uniform random fingerprints; 2% in near-duplicate clusters of 20 around a center, members at
-- 1..8 flipped bits.
CREATE TABLE bench_docs (id bigint, fp bigint);
INSERT INTO bench_docs SELECT g, hashtextextended('u' || g, 1) FROM generate_series(1, (:rows * 0.98)::bigint) g;
INSERT INTO bench_docs
    SELECT 1000000000 + c * 100 + m,
           hashtextextended('c' || c, 2) # coalesce((SELECT bit_or(1::bigint << ((c * 7 + m * 13 + j * 9) % 64)::int)
                                                     FROM generate_series(1, 1 + m % 8) j), 0)
    FROM generate_series(1, (:rows * 0.02 / 20)::bigint) c, generate_series(1, 20) m;
VACUUM ANALYZE bench_docs;

-- Queries: half cluster centers (near-duplicates exist), half random rows of the table.
CREATE TABLE bench_queries (qid int, fp bigint);
INSERT INTO bench_queries SELECT c, hashtextextended('c' || (c * 37), 2) FROM generate_series(1, :queries / 2) c;
INSERT INTO bench_queries SELECT :queries / 2 + g, hashtextextended('u' || (g * 7919 % (:rows * 0.98)::bigint + 1), 1)
    FROM generate_series(1, :queries / 2) g;

CREATE FUNCTION pg_temp.elapsed_ms(sql text) RETURNS double precision LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
    EXECUTE sql;
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;

-- Builds (one after the other, same table).
INSERT INTO bench_facts SELECT 'btree x4', 'build_ms',
    pg_temp.elapsed_ms('CREATE INDEX bench_b0 ON bench_docs (((fp >> 48) & 65535))') +
    pg_temp.elapsed_ms('CREATE INDEX bench_b1 ON bench_docs (((fp >> 32) & 65535))') +
    pg_temp.elapsed_ms('CREATE INDEX bench_b2 ON bench_docs (((fp >> 16) & 65535))') +
    pg_temp.elapsed_ms('CREATE INDEX bench_b3 ON bench_docs ((fp & 65535))');
INSERT INTO bench_facts SELECT 'simhash', 'build_ms', pg_temp.elapsed_ms('CREATE INDEX bench_sh ON bench_docs USING simhash (fp)');
INSERT INTO bench_facts SELECT 'btree x4', 'bytes_per_row',
    (pg_relation_size('bench_b0') + pg_relation_size('bench_b1') + pg_relation_size('bench_b2') + pg_relation_size('bench_b3'))::float8 / :rows;
INSERT INTO bench_facts SELECT 'simhash', 'bytes_per_row', pg_relation_size('bench_sh')::float8 / :rows;
ANALYZE bench_docs;

-- The four-B-tree pigeonhole: some 16-bit block within floor(k/4) bits, then the full distance.
CREATE FUNCTION pg_temp.variants(v bigint, rb int) RETURNS text LANGUAGE sql AS $$
    SELECT '''{' || string_agg(x::text, ',') || '}''::bigint[]' FROM (
        SELECT v AS x UNION ALL SELECT v # (1::bigint << i) FROM generate_series(0, 15) i WHERE rb >= 1
        UNION ALL SELECT v # (1::bigint << i) # (1::bigint << j) FROM generate_series(0, 15) i, generate_series(0, 15) j
            WHERE rb >= 2 AND i < j) s $$;
CREATE FUNCTION pg_temp.query_text(method text, q bigint, k int) RETURNS text LANGUAGE sql AS $$
    SELECT CASE method
        WHEN 'seq scan' THEN format('SELECT id FROM bench_docs WHERE bit_count((fp # %s::bigint)::bit(64)) <= %s', q, k)
        WHEN 'simhash' THEN format('SELECT id FROM bench_docs WHERE hamming(fp, %s) <= %s', q, k)
        ELSE format('SELECT id FROM bench_docs WHERE (((fp >> 48) & 65535) = ANY(%s) OR ((fp >> 32) & 65535) = ANY(%s)'
                    ' OR ((fp >> 16) & 65535) = ANY(%s) OR (fp & 65535) = ANY(%s)) AND bit_count((fp # %s::bigint)::bit(64)) <= %s',
                    pg_temp.variants((q >> 48) & 65535, k / 4), pg_temp.variants((q >> 32) & 65535, k / 4),
                    pg_temp.variants((q >> 16) & 65535, k / 4), pg_temp.variants(q & 65535, k / 4), q, k)
    END $$;

CREATE FUNCTION pg_temp.run(method text, k int, nqueries int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    q record;
    plan json;
BEGIN
    PERFORM set_config('enable_seqscan', (method = 'seq scan')::text, true);
    PERFORM set_config('enable_indexscan', (method <> 'seq scan')::text, true);
    PERFORM set_config('enable_bitmapscan', (method <> 'seq scan')::text, true);
    FOR q IN SELECT * FROM bench_queries WHERE qid <= nqueries OR qid > (SELECT max(qid) FROM bench_queries) - nqueries
             ORDER BY qid LOOP
        EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || pg_temp.query_text(method, q.fp, k) INTO plan;
        INSERT INTO bench_results VALUES (method, k, q.qid, (plan -> 0 ->> 'Execution Time')::float8,
                                          (plan -> 0 -> 'Plan' ->> 'Actual Rows')::bigint);
    END LOOP;
END $$;

-- Warm the caches (index builds write around shared buffers), then measure. Steady state: the
-- table and all indexes in shared buffers (size shared_buffers accordingly).
DO $$ BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_prewarm;
    PERFORM pg_prewarm(c) FROM unnest(ARRAY['bench_docs', 'bench_sh', 'bench_b0', 'bench_b1', 'bench_b2', 'bench_b3']::regclass[]) c;
EXCEPTION WHEN undefined_file OR feature_not_supported THEN
    RAISE WARNING 'pg_prewarm unavailable: first reads of index pages come from the OS cache';
END $$;
SELECT count(*) FROM bench_docs;
-- One untimed pass of every index query: a backend's first touch of a shared buffer costs a minor
-- page fault (about 0.2 ms per query here), which is not what a long-lived connection sees.
SELECT pg_temp.run('simhash', 7, :queries), pg_temp.run('btree x4', 7, :queries);
TRUNCATE bench_results;
SELECT pg_temp.run(m, k, n) FROM (VALUES ('simhash', :queries), ('btree x4', :queries), ('seq scan', :seq_queries)) v(m, n),
    (VALUES (3), (7)) r(k);

-- Exact answers for recall: the full distance for every query in one pass.
CREATE TABLE bench_truth AS
    SELECT q.qid, d.id, bit_count((d.fp # q.fp)::bit(64)) AS dist
    FROM bench_queries q JOIN bench_docs d ON hamming_within(d.fp, q.fp, 7);
INSERT INTO bench_facts
    SELECT r.method, 'recall_k' || r.k, sum(r.rows)::float8 / nullif(sum(t.n), 0)
    FROM bench_results r JOIN (SELECT qid, k, count(dist) FILTER (WHERE dist <= k) AS n
                               FROM bench_queries CROSS JOIN (VALUES (3), (7)) r(k)
                               LEFT JOIN bench_truth USING (qid) GROUP BY qid, k) t USING (qid, k)
    GROUP BY r.method, r.k;

-- Insert throughput: :insert_rows rows in one INSERT into the indexed table (simhash alone, then the
-- four B-trees alone). With the default pending_limit (4 MB, about 298k entries) 400k rows include
-- one merge of the pending list into the tables (a rewrite of the whole index).
DROP INDEX bench_b0, bench_b1, bench_b2, bench_b3;
INSERT INTO bench_facts SELECT 'simhash', 'insert_rows_per_s', :insert_rows / pg_temp.elapsed_ms(
    'INSERT INTO bench_docs SELECT 2000000000 + g, hashtextextended(''i'' || g, 3) FROM generate_series(1, ' || :insert_rows || ') g') * 1000;
DELETE FROM bench_docs WHERE id > 2000000000;
DROP INDEX bench_sh;
CREATE INDEX bench_b0 ON bench_docs (((fp >> 48) & 65535));
CREATE INDEX bench_b1 ON bench_docs (((fp >> 32) & 65535));
CREATE INDEX bench_b2 ON bench_docs (((fp >> 16) & 65535));
CREATE INDEX bench_b3 ON bench_docs ((fp & 65535));
INSERT INTO bench_facts SELECT 'btree x4', 'insert_rows_per_s', :insert_rows / pg_temp.elapsed_ms(
    'INSERT INTO bench_docs SELECT 2000000000 + g, hashtextextended(''i'' || g, 3) FROM generate_series(1, ' || :insert_rows || ') g') * 1000;
INSERT INTO bench_facts SELECT 'seq scan', 'insert_rows_per_s', NULL;

\echo
\echo Rows: :rows   queries per radius: :queries (seq scan: :seq_queries)   times: EXPLAIN ANALYZE execution time, ms   inserts: :insert_rows rows
SELECT m.method,
       (SELECT round(value::numeric, 0) FROM bench_facts WHERE method = m.method AND fact = 'build_ms') AS build_ms,
       (SELECT round(value::numeric, 1) FROM bench_facts WHERE method = m.method AND fact = 'bytes_per_row') AS bytes_per_row,
       (SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3) FROM bench_results WHERE method = m.method AND k = 3) AS k3_median_ms,
       (SELECT round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 3) FROM bench_results WHERE method = m.method AND k = 3) AS k3_p99_ms,
       (SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3) FROM bench_results WHERE method = m.method AND k = 7) AS k7_median_ms,
       (SELECT round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 3) FROM bench_results WHERE method = m.method AND k = 7) AS k7_p99_ms,
       (SELECT round(value::numeric, 0) FROM bench_facts WHERE method = m.method AND fact = 'insert_rows_per_s') AS insert_rows_per_s,
       (SELECT round(value::numeric, 4) FROM bench_facts WHERE method = m.method AND fact = 'recall_k3') AS recall_k3,
       (SELECT round(value::numeric, 4) FROM bench_facts WHERE method = m.method AND fact = 'recall_k7') AS recall_k7
FROM (VALUES (1, 'seq scan'), (2, 'btree x4'), (3, 'simhash')) m(o, method) ORDER BY m.o;
DROP TABLE bench_docs, bench_queries, bench_results, bench_truth, bench_facts;
