-- bench/near_duplicates_bench.sh: near_duplicates() over :rows documents of 32 lines (1.6 kB) of
-- the machine's licence and copyright texts (the text data set's lines, bench_data.sql), a tenth
-- of them edited copies of the document before them (one line replaced), against computing their
-- minhash64 fingerprints alone, in the same session and plan shape (a sequential scan, no parallel
-- workers, as near_duplicates reads its query in one backend). The documents are kept in the
-- unlogged table bench_nd_docs and made again only when their count changes.
SET client_min_messages = warning;
\set data text
\set rows_wanted :rows
\set rows 0
\ir bench_data.sql
\set rows :rows_wanted
CREATE UNLOGGED TABLE IF NOT EXISTS bench_nd_docs (id bigint PRIMARY KEY, body text NOT NULL);
SELECT count(*) <> :rows AS remake FROM bench_nd_docs \gset
\if :remake
TRUNCATE bench_nd_docs;
-- Document g, or for g = 10, 20, ... the document before it with its last line replaced.
INSERT INTO bench_nd_docs
SELECT g, CASE WHEN g % 10 = 0
               THEN regexp_replace(pg_temp.bench_document(g - 1, 23, 32), '\n[^\n]*$', '') || E'\n' ||
                    (SELECT line FROM pg_temp.bench_lines WHERE i = (hashint8extended(g, 29) & 32767)::int)
               ELSE pg_temp.bench_document(g, 23, 32) END
FROM generate_series(1, :rows) g;
VACUUM ANALYZE bench_nd_docs;
\endif
SET max_parallel_workers_per_gather = 0;
-- Warm the cache: both timed statements read the table from shared buffers or the OS cache alike.
SELECT count(*) FROM bench_nd_docs WHERE octet_length(body) > 0 \gset warm_
CREATE FUNCTION pg_temp.seconds(statement text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN EXECUTE statement; RETURN round(extract(epoch FROM clock_timestamp() - t0)::numeric, 1); END $$;
SELECT pg_temp.seconds('SELECT sum(minhash64(body)) FROM bench_nd_docs') AS minhash64_s \gset
SELECT clock_timestamp() AS t0 \gset
CREATE TEMP TABLE nd_result AS
SELECT * FROM near_duplicates('SELECT id, body FROM bench_nd_docs', memory_limit => :'memory_limit');
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz)::numeric, 1) AS near_duplicates_s \gset
SELECT format('%s documents (%s bytes on average), memory_limit %s: minhash64 alone %s s, near_duplicates %s s (%sx); '
              '%s duplicates found, %s of the %s planted edited copies',
              :rows, (SELECT avg(octet_length(body))::int FROM bench_nd_docs), :'memory_limit', :minhash64_s,
              :near_duplicates_s, round(:near_duplicates_s / :minhash64_s, 2), (SELECT count(*) FROM nd_result),
              (SELECT count(*) FROM nd_result WHERE id % 10 = 0 AND keeper_id = id - 1), :rows / 10);
