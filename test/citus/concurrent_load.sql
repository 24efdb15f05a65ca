-- Concurrent dedup on load through the coordinator (test/citus/run.sh runs four clients of
-- load_families at once): every client offers, for each of 100 families, a member 1 bit from
-- the family's center (so within 2 bits of every other client's member), in the same order, with
-- a slow loader's pause between check and insert. Race-free loading keeps exactly one member per
-- family and no pair within 3 bits; without simhash_lock_neighbourhood this setup loads about
-- twice as many rows, most of them near-duplicates. per_transaction rows are loaded a transaction:
-- with more than one, a transaction writes to shards on both workers and Citus commits it in two
-- phases while the coordinator's neighbourhood locks are held.
CREATE TABLE loads (id bigint PRIMARY KEY, fp bigint);
SELECT create_distributed_table('loads', 'id');
CREATE INDEX ON loads USING simhash (fp);
CREATE FUNCTION family_member(client integer, family integer) RETURNS bigint LANGUAGE sql IMMUTABLE
    RETURN hashint8extended(family, 99) # (1::bigint << ((client * 11 + 5) % 64));
-- Each transaction first takes the neighbourhood locks of all its rows at once, in one ascending
-- order (taken row by row, two loaders' keys interleave and they can deadlock), then checks and
-- inserts its rows one by one.
CREATE PROCEDURE load_families(client integer, families integer, per_transaction integer)
LANGUAGE plpgsql AS $$
DECLARE
    new_fp bigint;
    batch_end integer;
BEGIN
    FOR batch_start IN 0 .. families - 1 BY per_transaction LOOP
        batch_end := least(batch_start + per_transaction, families) - 1;
        PERFORM simhash_lock_neighbourhoods(
            ARRAY(SELECT family_member(client, f) FROM generate_series(batch_start, batch_end) f), 3, 'loads');
        FOR f IN batch_start .. batch_end LOOP
            new_fp := family_member(client, f);
            IF NOT EXISTS (SELECT 1 FROM loads WHERE hamming(fp, new_fp) <= 3) THEN
                PERFORM pg_sleep(0.002);
                INSERT INTO loads VALUES (client * 1000000 + f, new_fp);
            END IF;
        END LOOP;
        COMMIT;
    END LOOP;
END $$;
