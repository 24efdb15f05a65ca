-- bench/scale_bench.sh: one size of the size sweep. A table of :rows fingerprints of data set
-- :data (bench_data.sql: uniform, skewed or text) with a simhash index (tables = :tables), then
-- into scale_bench_results (kept across sizes, for the sweep's table):
--   build_s, build_us_per_row, index_bytes_per_row, runs, tables (of the largest run), dirbits
--   median_ms_k<r> for r = 0..:max_radius: `count(*) WHERE hamming(fp, q) <= r` as the planner runs
--     it (EXPLAIN ANALYZE execution time, :queries queries each, around stored fingerprints with
--     two of their varying bits flipped), after an untimed pass of 200 k = 7 queries
--   top10_median_ms: `ORDER BY fp <~> q LIMIT 10` around the same kind of centers
--   buffer_hit_pct: shared-buffer hits among the pages (index and heap) those queries read
--   loop_us_k3, loop_us_k7, loop_us_k10, loop_alone_us: microseconds a query of loops of
--     :loop_queries k = 3 queries, a tenth as many at k = 7 and a hundredth at k = 10
--     (query_loop.sql, as bench/session_bench.sh runs them), around the same kind of
--     centers, and of the same loop with a condition that reads no row; the best of
--     :loop_rounds rounds each. A median of :queries queries of 10-100 us, or the dedup check's
--     difference of two loads, lands in whichever state a noisy machine is in; the loops repeat,
--     and the loop alone says how fast the machine ran them
--   dedup_us_per_row: what simhash_dedup(fp, 3, 'skip') adds to a row of a load in transactions
--     of :batch_rows: :dedup_rounds rounds, each a plain load of :dedup_rows / :dedup_rounds new
--     rows and a load of as many through the trigger, the best rate of each (ingest_dedup.sql)
--   ingest_rows_per_s, ingest_wal_bytes_per_row: :insert_rows new rows in
--     transactions of :batch_rows into the indexed table, after the rest
SET client_min_messages = warning;
\ir bench_data.sql
CREATE TABLE IF NOT EXISTS scale_bench_results (rows bigint, data text, metric text, value numeric,
                                                measured timestamptz DEFAULT now());
DELETE FROM scale_bench_results WHERE rows = :rows AND data = :'data';
SELECT format($f$CREATE FUNCTION pg_temp.record(metric text, value numeric) RETURNS void LANGUAGE sql
                 AS $b$ INSERT INTO scale_bench_results (rows, data, metric, value) VALUES (%s, %L, metric, value) $b$$f$,
              :rows, :'data') \gexec

-- Only the table at the end is printed.
\o /dev/null
DROP TABLE IF EXISTS ingest_docs, scale_ms;
CREATE TABLE ingest_docs (id bigint, fp bigint);
INSERT INTO ingest_docs SELECT g, fp FROM pg_temp.bench_table_rows(:rows, :'data');
VACUUM ANALYZE ingest_docs;
CHECKPOINT;

SELECT clock_timestamp() AS build_start \gset
SELECT format('CREATE INDEX ingest_sh ON ingest_docs USING simhash (fp) WITH (tables = %s)', :'tables') \gexec
SELECT extract(epoch FROM clock_timestamp() - :'build_start') AS build_s \gset
-- The id lookups that pick the query centers.
CREATE INDEX ingest_id ON ingest_docs (id);
ANALYZE ingest_docs;
SELECT pg_temp.record('build_s', round(:build_s::numeric, 1)),
       pg_temp.record('build_us_per_row', round(1e6 * :build_s::numeric / :rows, 3)),
       pg_temp.record('index_bytes_per_row', round(pg_relation_size('ingest_sh')::numeric / :rows, 2));
SELECT pg_temp.record('runs', count(*)), pg_temp.record('tables', (array_agg(tables ORDER BY entries DESC))[1]),
       pg_temp.record('dirbits', (array_agg(dirbits ORDER BY entries DESC))[1])
FROM simhash_index_runs('ingest_sh');
SELECT pg_prewarm('ingest_sh') IS NOT NULL AS prewarmed WHERE EXISTS (SELECT FROM pg_extension WHERE extname = 'pg_prewarm');

-- Untimed: the backend copies the directory pages its probes touch.
DO $$
BEGIN
    FOR i IN 1 .. 200 LOOP
        PERFORM count(*) FROM ingest_docs WHERE hamming(fp, ('x' || md5(i::text))::bit(64)::bigint) <= 7;
    END LOOP;
END $$;
CREATE TEMP TABLE scale_ms (what text, ms float8, hit bigint, read bigint);
CREATE PROCEDURE pg_temp.scale_run(what text, n int, rows bigint, data text) LANGUAGE plpgsql AS $$
DECLARE q bigint; result json;
BEGIN
    FOR i IN 1 .. n LOOP
        q := pg_temp.bench_flip(data, (SELECT fp FROM ingest_docs WHERE id = 1 + (i * 7919 + length(what) * 104729) % rows), i, i * 7);
        EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, BUFFERS, FORMAT JSON) ' ||
                CASE WHEN what = 'top10' THEN format('SELECT id FROM ingest_docs ORDER BY fp <~> %s LIMIT 10', q)
                     ELSE format('SELECT count(*) FROM ingest_docs WHERE hamming(fp, %s) <= %s', q, substr(what, 2)) END
            INTO result;
        INSERT INTO scale_ms VALUES (what, (result -> 0 ->> 'Execution Time')::float8,
                                     (result -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint,
                                     (result -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint);
    END LOOP;
END $$;
SELECT format('CALL pg_temp.scale_run(%L, %s, %s, %L)', 'k' || k, :queries, :rows, :'data') FROM generate_series(0, :max_radius) k \gexec
CALL pg_temp.scale_run('top10', :queries, :rows, :'data');
SELECT pg_temp.record(CASE WHEN what = 'top10' THEN 'top10_median_ms' ELSE 'median_ms_' || what END,
                      round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 4))
FROM scale_ms GROUP BY what;
SELECT pg_temp.record('buffer_hit_pct', round(100.0 * sum(hit) / nullif(sum(hit) + sum(read), 0), 2)) FROM scale_ms;

-- The loops' centers, looked up once (a lookup in the loop would be most of a k = 3 query).
CREATE TEMP TABLE scale_centers AS SELECT ARRAY(SELECT pg_temp.bench_flip(:'data', fp, i, i * 7) FROM generate_series(1, :loop_queries) i
                                                JOIN ingest_docs ON id = 1 + (i * 7919 + 31) % :rows ORDER BY i) AS centers;
\set loop_table ingest_docs
\ir query_loop.sql
CREATE TEMP TABLE scale_loops (metric text, us float8);
SELECT format('INSERT INTO scale_loops SELECT %L, pg_temp.bench_loop(%s, %s, %L, centers) FROM scale_centers', metric, count, k, reads_none)
FROM generate_series(1, :loop_rounds) round,
     (VALUES ('loop_us_k3', :loop_queries, 3, false), ('loop_us_k7', :loop_queries / 10, 7, false),
             ('loop_us_k10', :loop_queries / 100, 10, false), ('loop_alone_us', :loop_queries, 3, true)) l(metric, count, k, reads_none)
ORDER BY round, metric \gexec
SELECT pg_temp.record(metric, round(min(us)::numeric, 2)) FROM scale_loops GROUP BY metric;

-- New rows from the data set's own generator, numbered after the table's: for text, the stored
-- fingerprints of the documents after the table's (bench_text_fingerprints holds them once
-- text_fingerprints.sh has filled rows + 2 dedup_rows + insert_rows), copied first so that a
-- batch reads them by a primary-key range as the other data sets compute theirs.
SELECT :'data' = 'text' AS scale_text \gset
\if :scale_text
CREATE TEMP TABLE scale_new_rows (g bigint PRIMARY KEY, fp bigint NOT NULL);
INSERT INTO scale_new_rows SELECT g, fp FROM bench_text_fingerprints
WHERE g > :rows AND g <= :rows + 2 * :dedup_rows + :insert_rows ORDER BY g;
SELECT count(*) = 2 * :dedup_rows + :insert_rows AS scale_text_rows FROM scale_new_rows \gset
\if :scale_text_rows
\else
SELECT format('DO $d$ BEGIN RAISE EXCEPTION %L; END $d$',
              format('bench_text_fingerprints lacks rows after %s: run bench/text_fingerprints.sh %s',
                     :rows, :rows + 2 * :dedup_rows + :insert_rows)) \gexec
\endif
ANALYZE scale_new_rows;
\set ingest_fp 'fp'
\set ingest_from 'scale_new_rows WHERE g BETWEEN $1 AND $2'
\else
SELECT CASE :'data' WHEN 'skewed' THEN 'hashint8extended(g, 11) & ~4095::bigint' ELSE 'hashint8extended(g, 11)' END AS ingest_fp \gset
\endif
\set base :rows
\ir ingest_dedup.sql
SELECT pg_temp.record('dedup_us_per_row', round(1e6 / :dedup_rows_per_s - 1e6 / :plain_rows_per_s, 2));
CHECKPOINT;
SELECT pg_current_wal_lsn() AS wal0 \gset
CALL pg_temp.load_batches(:'ingest_rows', :rows + :dedup_rows + :dedup_rows, :insert_rows, :batch_rows) \gset load_
SELECT pg_temp.record('ingest_rows_per_s', :load_rows_per_s),
       pg_temp.record('ingest_wal_bytes_per_row', round(pg_wal_lsn_diff(pg_current_wal_lsn(), :'wal0') / :insert_rows));

\o
SELECT metric, value FROM scale_bench_results WHERE rows = :rows AND data = :'data'
ORDER BY regexp_replace(metric, '\d+$', ''), substring(metric FROM '\d+$')::int NULLS FIRST;
DROP TABLE ingest_docs, scale_ms, scale_centers, scale_loops;
