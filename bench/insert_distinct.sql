-- bench/insert_distinct_bench.sh, one library size and one way of loading: a fresh table of :base
-- random fingerprints with a simhash index (prewarmed), then :stage_rows staged rows loaded by
-- :method into it, timed:
--   plain    INSERT INTO lib SELECT id, fp FROM staging ORDER BY ord (no check)
--   trigger  the same INSERT through simhash_dedup('fp', :radius, 'skip')
--   bulk     simhash_insert_distinct('lib', 'SELECT id, fp FROM staging ORDER BY ord', :radius,
--            memory_limit => :'memory_limit')
-- With :data = 'documents' the staged rows are texts, fingerprinted (minhash64) in the load, and
-- the library holds the staging_originals fingerprints too. With a :library table (not empty) the
-- load goes into it, in a transaction rolled back after, its aborted entries vacuumed out of the
-- index. Prints method, seconds, staged rows a second, rows inserted.
SET client_min_messages = warning;
SELECT :'library' <> '' AS reuse, coalesce(nullif(:'library', ''), 'lib') AS lib \gset
\if :reuse
SELECT indexrelid::regclass AS lib_index FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
WHERE i.indrelid = :'lib'::regclass AND a.amname = 'simhash' LIMIT 1 \gset
\else
DROP TABLE IF EXISTS lib;
CREATE TABLE lib (id bigint, body text, fp bigint);
INSERT INTO lib (id, fp)
SELECT g, hashint8extended(g, 11) & CASE WHEN :'data' = 'skewed' THEN ~4095::bigint ELSE -1 END FROM generate_series(1, :base) g;
INSERT INTO lib (id, fp) SELECT :base + k, fp FROM staging_originals;
CREATE INDEX lib_fp ON lib USING simhash (fp);
VACUUM ANALYZE lib;
SELECT 'lib_fp' AS lib_index \gset
\endif
SELECT count(*) > 0 AS prewarm FROM pg_extension WHERE extname = 'pg_prewarm' \gset
\if :prewarm
SELECT pg_prewarm(:'lib_index') \gset
\endif
CHECKPOINT;
-- The library's pages reach the disk before the clock starts (with fsync off the checkpoint leaves
-- them to the kernel, whose write-back would otherwise run during the load).
\! sync
\if :reuse
BEGIN;
\endif
SELECT :'method' = 'trigger' AS with_trigger \gset
\if :with_trigger
CREATE TRIGGER lib_dedup BEFORE INSERT ON :lib FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', :'radius', 'skip');
\endif
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
SELECT CASE WHEN :'data' = 'documents' THEN 'id, body, minhash64(body) AS fp' ELSE 'id, fp' END AS source_columns \gset
SELECT CASE :'method'
    WHEN 'bulk' THEN format('SELECT inserted FROM simhash_insert_distinct(%L, %L, %s, memory_limit => %L)', :'lib',
                            format('SELECT %s FROM staging ORDER BY ord', :'source_columns'), :radius, :'memory_limit')
    ELSE format('WITH i AS (INSERT INTO %s (%s) SELECT %s FROM staging ORDER BY ord RETURNING 1) SELECT count(*) AS inserted FROM i', :'lib',
                CASE WHEN :'data' = 'documents' THEN 'id, body, fp' ELSE 'id, fp' END, :'source_columns')
    END AS load \gset
:load \gset
SELECT extract(epoch FROM clock_timestamp()) AS t1 \gset
SELECT :'method' AS method, round((:t1 - :t0)::numeric, 2) AS seconds,
       round(:stage_rows / (:t1 - :t0)) AS staged_rows_per_s, :inserted AS inserted;
\if :reuse
ROLLBACK;
VACUUM (INDEX_CLEANUP ON) :lib;
\else
DROP TABLE lib;
\endif
