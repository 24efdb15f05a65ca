-- Concurrent dedup on load through the coordinator (test/citus/run.sh runs four clients of
-- load_families at once): every client offers, for each of 100 families, a member 1 bit from
-- the family's center (so within 2 bits of every other client's member), in the same order, with
-- a slow loader's pause between check and insert. Race-free loading keeps exactly one member per
-- family and no pair within 3 bits; without simhash_lock_neighbourhood this setup loads about
-- twice as many rows, most of them near-duplicates.
CREATE TABLE loads (id bigint PRIMARY KEY, fp bigint);
SELECT create_distributed_table('loads', 'id');
CREATE INDEX ON loads USING simhash (fp);
CREATE PROCEDURE load_families(client integer, families integer) LANGUAGE plpgsql AS $$
DECLARE new_fp bigint;
BEGIN
    FOR f IN 0 .. families - 1 LOOP
        new_fp := hashint8extended(f, 99) # (1::bigint << ((client * 11 + 5) % 64));
        PERFORM simhash_lock_neighbourhood(new_fp, 3, 'loads');
        IF NOT EXISTS (SELECT 1 FROM loads WHERE hamming(fp, new_fp) <= 3) THEN
            PERFORM pg_sleep(0.002);
            INSERT INTO loads VALUES (client * 1000000 + f, new_fp);
        END IF;
        COMMIT;  -- one row a transaction: a write to one shard
    END LOOP;
END $$;
