-- bench/ingest_bench.sh, bench/dedup_radius.sh: :dedup_rows rows loaded in transactions of
-- :batch_rows into the indexed table without the trigger, then :checked_rows other rows (default
-- :dedup_rows) through simhash_dedup('fp', :dedup_radius, 'skip') (default radius 3), their
-- fingerprints :checked_fp (an expression of the row number g, default :ingest_fp); prints both
-- rates and how many checked rows the trigger skipped.
\if :{?dedup_radius}
\else
\set dedup_radius 3
\endif
\if :{?checked_rows}
\else
\set checked_rows :dedup_rows
\endif
\ir ingest_procedure.sql
\if :{?checked_fp}
\else
\set checked_fp :ingest_fp
\endif
\set checked_insert 'INSERT INTO ingest_docs SELECT g, ' :checked_fp ' FROM ' :ingest_from
CALL pg_temp.load_batches(:'ingest_rows', :base, :dedup_rows, :batch_rows) \gset plain_
CREATE TRIGGER ingest_dedup BEFORE INSERT ON ingest_docs FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', :'dedup_radius', 'skip');
CALL pg_temp.load_batches(:'checked_insert', :base + :dedup_rows, :checked_rows, :batch_rows) \gset dedup_
SELECT format('%s base rows: load %s rows/s plain, %s rows/s through simhash_dedup at radius %s (%s%%, %s us a row; %s of %s rows skipped)',
              :base, :plain_rows_per_s, :dedup_rows_per_s, :dedup_radius, round(100.0 * :dedup_rows_per_s / :plain_rows_per_s),
              round(1e6 / :dedup_rows_per_s, 1), :checked_rows - :dedup_inserted, :checked_rows);
