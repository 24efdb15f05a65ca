-- bench/dedup_radius.sh (radius `unique`): the exact-duplicate guard PostgreSQL has without this
-- extension, for comparison with simhash_dedup at radius 0. :dedup_rows rows loaded in
-- transactions of :batch_rows into the table with its simhash index; then a UNIQUE B-tree on fp
-- (fingerprints stored twice are thinned to one row first: skewed data can repeat one), :dedup_rows
-- more rows loaded plainly, and :dedup_rows more through INSERT ... ON CONFLICT (fp) DO NOTHING,
-- each of the two after a checkpoint; prints the three rates.
CREATE TEMP TABLE ingest_rates (kind text, rows_per_s numeric);
\ir ingest_procedure.sql
\set conflict_rows :ingest_rows ' ON CONFLICT (fp) DO NOTHING'
SELECT clock_timestamp() AS t0 \gset
CALL pg_temp.load_batches(:'ingest_rows', :base, :dedup_rows, :batch_rows);
INSERT INTO ingest_rates SELECT 'plain', round(:dedup_rows / extract(epoch FROM clock_timestamp() - :'t0'::timestamptz));
DELETE FROM ingest_docs d USING (SELECT fp, min(id) AS kept FROM ingest_docs GROUP BY fp HAVING count(*) > 1) k
WHERE d.fp = k.fp AND d.id <> k.kept;
CREATE UNIQUE INDEX ingest_unique ON ingest_docs (fp);
SELECT count(*) AS have_prewarm FROM pg_extension WHERE extname = 'pg_prewarm' \gset
\if :have_prewarm
SELECT pg_prewarm('ingest_unique') AS prewarmed \gset
\endif
CHECKPOINT;
SELECT clock_timestamp() AS t0 \gset
CALL pg_temp.load_batches(:'ingest_rows', :base + :dedup_rows, :dedup_rows, :batch_rows);
INSERT INTO ingest_rates SELECT 'btree', round(:dedup_rows / extract(epoch FROM clock_timestamp() - :'t0'::timestamptz));
-- Each B-tree load starts after a checkpoint: the first change of each leaf page after one logs
-- the whole page, and the second load would otherwise find the pages the first one logged.
CHECKPOINT;
SELECT clock_timestamp() AS t0 \gset
CALL pg_temp.load_batches(:'conflict_rows', :base + 2 * :dedup_rows, :dedup_rows, :batch_rows);
INSERT INTO ingest_rates SELECT 'conflict', round(:dedup_rows / extract(epoch FROM clock_timestamp() - :'t0'::timestamptz));
SELECT format('%s base rows: load %s rows/s plain; with a UNIQUE B-tree on fp %s rows/s plain (%s%%), '
              '%s rows/s through ON CONFLICT (fp) DO NOTHING (%s%%, %s us a row)',
              :base, p.rows_per_s, b.rows_per_s, round(100 * b.rows_per_s / p.rows_per_s), c.rows_per_s,
              round(100 * c.rows_per_s / p.rows_per_s), round(1e6 / c.rows_per_s, 1))
FROM ingest_rates p, ingest_rates b, ingest_rates c WHERE p.kind = 'plain' AND b.kind = 'btree' AND c.kind = 'conflict';
