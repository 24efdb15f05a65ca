-- bench/ingest_bench.sh: a table of :base rows (ingest_procedure.sql: uniform random fingerprints
-- unless :ingest_fp says otherwise) with the index kind :kind.
SET client_min_messages = warning;
DROP TABLE IF EXISTS ingest_docs, ingest_query_ms, ingest_done;
CREATE TABLE ingest_docs (id bigint, fp bigint);
\ir ingest_procedure.sql
CALL pg_temp.load_batches(:'ingest_rows', 0, :base, :base) \gset setup_
SELECT CASE :'kind'
    WHEN 'simhash' THEN 'CREATE INDEX ingest_sh ON ingest_docs USING simhash (fp)'
    ELSE 'CREATE INDEX ingest_b0 ON ingest_docs (((fp >> 48) & 65535));
          CREATE INDEX ingest_b1 ON ingest_docs (((fp >> 32) & 65535));
          CREATE INDEX ingest_b2 ON ingest_docs (((fp >> 16) & 65535));
          CREATE INDEX ingest_b3 ON ingest_docs ((fp & 65535))' END AS ddl \gset
:ddl;
VACUUM ANALYZE ingest_docs;
CREATE TABLE ingest_query_ms (ms float8);
CREATE TABLE ingest_done (done boolean);
CHECKPOINT;
