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
CREATE TEMP TABLE ingest_rates (kind text, rows_per_s numeric);
\ir ingest_procedure.sql
\if :{?checked_fp}
\else
\set checked_fp :ingest_fp
\endif
\set checked_insert 'INSERT INTO ingest_docs SELECT g, ' :checked_fp ' FROM generate_series($1, $2) g'
SELECT clock_timestamp() AS t0 \gset
CALL pg_temp.load_batches(:'ingest_rows', :base, :dedup_rows, :batch_rows);
INSERT INTO ingest_rates SELECT 'plain', round(:dedup_rows / extract(epoch FROM clock_timestamp() - :'t0'::timestamptz));
CREATE TRIGGER ingest_dedup BEFORE INSERT ON ingest_docs FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', :'dedup_radius', 'skip');
SELECT clock_timestamp() AS t0 \gset
CALL pg_temp.load_batches(:'checked_insert', :base + :dedup_rows, :checked_rows, :batch_rows);
INSERT INTO ingest_rates SELECT 'dedup', round(:checked_rows / extract(epoch FROM clock_timestamp() - :'t0'::timestamptz));
SELECT format('%s base rows: load %s rows/s plain, %s rows/s through simhash_dedup at radius %s (%s%%, %s us a row; %s of %s rows skipped)',
              :base, p.rows_per_s, d.rows_per_s, :dedup_radius, round(100 * d.rows_per_s / p.rows_per_s),
              round(1e6 / d.rows_per_s, 1),
              :checked_rows - (SELECT count(*) FROM ingest_docs WHERE id > :base + :dedup_rows), :checked_rows)
FROM ingest_rates p, ingest_rates d WHERE p.kind = 'plain' AND d.kind = 'dedup';
