-- bench/ingest_bench.sh: :insert_rows new rows in transactions of :batch_rows; prints rows/s, WAL
-- bytes per row and index bytes per row after.
\ir ingest_procedure.sql
SELECT pg_current_wal_lsn() AS wal0 \gset
CALL pg_temp.load_batches(:'ingest_rows', :base, :insert_rows, :batch_rows) \gset load_
SELECT :load_rows_per_s,
       round(pg_wal_lsn_diff(pg_current_wal_lsn(), :'wal0') / :insert_rows),
       round((SELECT sum(pg_relation_size(indexrelid)) FROM pg_index WHERE indrelid = 'ingest_docs'::regclass)::numeric
             / (:base + :load_inserted), 1);
INSERT INTO ingest_done VALUES (true);
