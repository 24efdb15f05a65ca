-- bench/ingest_bench.sh: pg_temp.ingest_load(first, total, batch) inserts rows first + 1 ..
-- first + total in transactions of batch rows (included by ingest_load.sql and ingest_dedup.sql).
CREATE PROCEDURE pg_temp.ingest_load(first bigint, total bigint, batch bigint) LANGUAGE plpgsql AS $$
DECLARE done bigint := 0;
BEGIN
    WHILE done < total LOOP
        INSERT INTO ingest_docs SELECT first + g, hashint8extended(first + g, 11)
        FROM generate_series(done + 1, LEAST(done + batch, total)) g;
        done := done + batch;
        COMMIT;
    END LOOP;
END $$;
