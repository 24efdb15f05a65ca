-- Included by the load benchmarks (ingest_setup.sql, ingest_load.sql, ingest_dedup.sql,
-- dedup_unique.sql, dedup_documents.sql): pg_temp.load_batches(statement, first, total, batch)
-- runs `statement`, an INSERT of the rows whose numbers lie between $1 and $2, for rows first + 1
-- .. first + total in transactions of batch rows. It returns the rate (rows_per_s: the total rows
-- offered over the time taken) and the rows the INSERTs reported (inserted: a trigger or ON
-- CONFLICT may drop some), which `CALL ... \gset prefix_` takes.
CREATE PROCEDURE pg_temp.load_batches(statement text, first bigint, total bigint, batch bigint,
                                      INOUT rows_per_s numeric DEFAULT NULL, INOUT inserted bigint DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
    done bigint := 0;
    n bigint;
    t0 timestamptz := clock_timestamp();
BEGIN
    inserted := 0;
    WHILE done < total LOOP
        EXECUTE statement USING first + done + 1, first + LEAST(done + batch, total);
        GET DIAGNOSTICS n = ROW_COUNT;
        inserted := inserted + n;
        done := done + batch;
        COMMIT;
    END LOOP;
    rows_per_s := round(total / extract(epoch FROM clock_timestamp() - t0));
END $$;
-- The rows of bench/ingest_bench.sh's table: row g has id g and fingerprint :ingest_fp, an
-- expression of g: by default a uniform random one (bench/dedup_radius.sh also passes a skewed one).
-- :ingest_from, the rows' source, is by default the row numbers alone; a data set whose
-- fingerprints are stored (scale_bench.sql's text) passes a table with columns g and fp.
\if :{?ingest_fp}
\else
\set ingest_fp 'hashint8extended(g, 11)'
\endif
\if :{?ingest_from}
\else
\set ingest_from 'generate_series($1, $2) g'
\endif
\set ingest_rows 'INSERT INTO ingest_docs SELECT g, ' :ingest_fp ' FROM ' :ingest_from
