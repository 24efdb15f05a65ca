-- bench/dedup_documents.sh: dedup on load of documents. :load_rows documents of :lines lines each,
-- drawn from the machine's licence and copyright texts (the text data set's lines, bench_data.sql),
-- are fingerprinted with :fingerprint(body) as they are inserted, in transactions of :batch_rows,
-- into a table of :base rows with a simhash index: once plain, then the same number of other
-- documents through simhash_dedup('fp', '3', 'skip'). The base rows carry uniform random
-- fingerprints and no body: minhash64 fingerprints of unrelated documents are uniform (simhash
-- ones are not, so with simhash the new rows probe a base of another distribution), and the base
-- rows' bodies do not enter the cost of a load. Prints both rates and the rows skipped.
SET client_min_messages = warning;
\set data text
\set rows 0
\ir bench_data.sql
DROP TABLE IF EXISTS dedup_docs, dedup_staging;
-- Twice :load_rows documents, read by both loads from a staging table as an ETL job reads them.
CREATE UNLOGGED TABLE dedup_staging AS
SELECT g AS id, pg_temp.bench_document(g, 23, :lines) AS body FROM generate_series(1, 2 * :load_rows) g;
CREATE INDEX ON dedup_staging (id);
VACUUM ANALYZE dedup_staging;
CREATE TABLE dedup_docs (id bigint, body text, fp bigint);
INSERT INTO dedup_docs SELECT g, NULL, hashint8extended(g, 11) FROM generate_series(1, :base) g;
CREATE INDEX dedup_docs_fp ON dedup_docs USING simhash (fp);
VACUUM ANALYZE dedup_docs;
CHECKPOINT;
\ir ingest_procedure.sql
SELECT format('INSERT INTO dedup_docs SELECT %s + id, body, %I(body) FROM dedup_staging WHERE id BETWEEN $1 AND $2',
              :base, :'fingerprint') AS load_statement \gset
SELECT avg(octet_length(body))::int AS mean_bytes FROM dedup_staging \gset
CALL pg_temp.load_batches(:'load_statement', 0, :load_rows, :batch_rows) \gset plain_
CREATE TRIGGER dedup_docs_dedup BEFORE INSERT ON dedup_docs FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip');
CALL pg_temp.load_batches(:'load_statement', :load_rows, :load_rows, :batch_rows) \gset dedup_
SELECT format('%s base rows, documents of %s lines (%s bytes on average) fingerprinted with %s: load %s rows/s plain, '
              '%s rows/s through simhash_dedup (%s%%), %s rows skipped',
              :base, :lines, :mean_bytes, :'fingerprint', :plain_rows_per_s, :dedup_rows_per_s,
              round(100.0 * :dedup_rows_per_s / :plain_rows_per_s), :load_rows - :dedup_inserted);
DROP TABLE dedup_docs, dedup_staging;
