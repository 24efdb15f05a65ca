-- bench/dedup_radius.sh (radius `unique`): the exact-duplicate guard PostgreSQL has without this
-- extension, for comparison with simhash_dedup at radius 0. :dedup_rows rows loaded in
-- transactions of :batch_rows into the table with its simhash index; then a UNIQUE B-tree on fp
-- (fingerprints stored twice are thinned to one row first: skewed data can repeat one), :dedup_rows
-- more rows loaded plainly, and :dedup_rows more through INSERT ... ON CONFLICT (fp) DO NOTHING,
-- each of the two after a checkpoint; prints the three rates. :prewarm (1 or 0): whether
-- pg_prewarm is there to start from the B-tree in shared buffers.
\ir ingest_procedure.sql
\set conflict_rows :ingest_rows ' ON CONFLICT (fp) DO NOTHING'
CALL pg_temp.load_batches(:'ingest_rows', :base, :dedup_rows, :batch_rows) \gset plain_
DELETE FROM ingest_docs d USING (SELECT fp, min(id) AS kept FROM ingest_docs GROUP BY fp HAVING count(*) > 1) k
WHERE d.fp = k.fp AND d.id <> k.kept;
CREATE UNIQUE INDEX ingest_unique ON ingest_docs (fp);
\if :prewarm
SELECT pg_prewarm('ingest_unique') AS prewarmed \gset
\endif
-- Each B-tree load starts after a checkpoint: the first change of each leaf page after one logs
-- the whole page, and the second load would otherwise find the pages the first one logged.
CHECKPOINT;
CALL pg_temp.load_batches(:'ingest_rows', :base + :dedup_rows, :dedup_rows, :batch_rows) \gset btree_
CHECKPOINT;
CALL pg_temp.load_batches(:'conflict_rows', :base + 2 * :dedup_rows, :dedup_rows, :batch_rows) \gset conflict_
SELECT format('%s base rows: load %s rows/s plain; with a UNIQUE B-tree on fp %s rows/s plain (%s%%), '
              '%s rows/s through ON CONFLICT (fp) DO NOTHING (%s%%, %s us a row)',
              :base, :plain_rows_per_s, :btree_rows_per_s, round(100.0 * :btree_rows_per_s / :plain_rows_per_s),
              :conflict_rows_per_s, round(100.0 * :conflict_rows_per_s / :plain_rows_per_s),
              round(1e6 / :conflict_rows_per_s, 1));
