-- bench/ingest_bench.sh: :dedup_rows rows loaded in transactions of :batch_rows into the indexed
-- table, without and then with simhash_dedup('fp', '3', 'skip'); prints both rates.
CREATE TEMP TABLE ingest_rates (kind text, rows_per_s numeric);
\ir ingest_procedure.sql
SELECT clock_timestamp() AS t0 \gset
CALL pg_temp.load_batches(:'ingest_rows', :base, :dedup_rows, :batch_rows);
INSERT INTO ingest_rates SELECT 'plain', round(:dedup_rows / extract(epoch FROM clock_timestamp() - :'t0'::timestamptz));
CREATE TRIGGER ingest_dedup BEFORE INSERT ON ingest_docs FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip');
SELECT clock_timestamp() AS t0 \gset
CALL pg_temp.load_batches(:'ingest_rows', :base + :dedup_rows, :dedup_rows, :batch_rows);
INSERT INTO ingest_rates SELECT 'dedup', round(:dedup_rows / extract(epoch FROM clock_timestamp() - :'t0'::timestamptz));
SELECT format('%s base rows: load %s rows/s plain, %s rows/s through simhash_dedup (%s%%)', :base,
              p.rows_per_s, d.rows_per_s, round(100 * d.rows_per_s / p.rows_per_s))
FROM ingest_rates p, ingest_rates d WHERE p.kind = 'plain' AND d.kind = 'dedup';
