-- Included by the load benchmarks (ingest_load.sql, ingest_dedup.sql, dedup_documents.sql):
-- pg_temp.load_batches(statement, first, total, batch) runs `statement`, an INSERT of the rows whose
-- numbers lie between $1 and $2, for rows first + 1 .. first + total in transactions of batch rows.
CREATE PROCEDURE pg_temp.load_batches(statement text, first bigint, total bigint, batch bigint) LANGUAGE plpgsql AS $$
DECLARE done bigint := 0;
BEGIN
    WHILE done < total LOOP
        EXECUTE statement USING first + done + 1, first + LEAST(done + batch, total);
        done := done + batch;
        COMMIT;
    END LOOP;
END $$;
-- The rows of bench/ingest_bench.sh's table: row g has id g and fingerprint :ingest_fp, an
-- expression of g: by default a uniform random one (bench/dedup_radius.sh also passes a skewed one).
\if :{?ingest_fp}
\else
\set ingest_fp 'hashint8extended(g, 11)'
\endif
\set ingest_rows 'INSERT INTO ingest_docs SELECT g, ' :ingest_fp ' FROM generate_series($1, $2) g'
