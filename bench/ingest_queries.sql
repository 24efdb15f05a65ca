-- bench/ingest_bench.sh: k = 3 queries until ingest_done has a row; one duration per query.
-- The B-tree variant uses the four-block pigeonhole (some 16-bit block equal), the simhash
-- variant the index.
DO $$
DECLARE t0 timestamptz; q bigint; n bigint; i int := 0; btree boolean;
BEGIN
    btree := NOT EXISTS (SELECT FROM pg_indexes WHERE indexname = 'ingest_sh');
    LOOP
        i := i + 1;
        IF i % 20 = 0 THEN
            EXIT WHEN EXISTS (SELECT FROM ingest_done);
        END IF;
        q := hashint8extended((i * 7919) % 1000000 + 1, 11);
        t0 := clock_timestamp();
        IF btree THEN
            SELECT count(*) INTO n FROM ingest_docs
            WHERE (((fp >> 48) & 65535) = ((q >> 48) & 65535) OR ((fp >> 32) & 65535) = ((q >> 32) & 65535)
                   OR ((fp >> 16) & 65535) = ((q >> 16) & 65535) OR (fp & 65535) = (q & 65535))
              AND hamming(fp, q)::integer <= 3;
        ELSE
            SELECT count(*) INTO n FROM ingest_docs WHERE hamming(fp, q) <= 3;
        END IF;
        INSERT INTO ingest_query_ms VALUES (extract(epoch FROM clock_timestamp() - t0) * 1000);
        COMMIT;
        PERFORM pg_sleep(0.005);
    END LOOP;
END $$;
