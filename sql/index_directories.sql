-- A run of 3 tables as runs from 8.4M entries on have them: blocks of 22, 21 and 21 bits, each
-- table's directory as wide as its block (22 bits for table 0, 21 for tables 1 and 2), so that a
-- probe of table 0 reads one block value's entries, not two. Probes, top-K, the batch search's
-- sweep by block value (by the backend and a parallel worker, over 2^22 slots of table 0 and 2^21
-- of the others) and simhash_index_check must each read every table at its own width.
SET client_min_messages = warning;
CREATE TABLE dir_docs (id bigint, fp bigint) WITH (autovacuum_enabled = off);
INSERT INTO dir_docs SELECT g, hashint8extended(g, 21) FROM generate_series(1, 9000000) g;
-- Clusters: 4 centers, each with fingerprints at every distance 1..12 (the low d bits flipped),
-- so that table 0's neighbouring block values hold rows near the same center.
INSERT INTO dir_docs
SELECT 20000000 + c * 100 + d, hashint8extended(c, 23) # ((1::bigint << d) - 1)
FROM generate_series(1, 4) c, generate_series(1, 12) d;
CREATE INDEX dir_docs_fp ON dir_docs USING simhash (fp) WITH (tables = 3);
SELECT run, entries, tables, dirbits FROM simhash_index_runs('dir_docs_fp');

-- Row counts within each radius of a few centers: through the index, and from one sequential
-- pass a center over the distances (bit_count of the XOR, without the extension).
CREATE FUNCTION dir_check(centers bigint[], radii int[]) RETURNS text LANGUAGE plpgsql AS $$
DECLARE q bigint; k int; by_index bigint; truth bigint[]; bad text := '';
BEGIN
    FOREACH q IN ARRAY centers LOOP
        SET LOCAL enable_seqscan = on; SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;
        SELECT array_agg(within ORDER BY d) INTO truth FROM (
            SELECT d, (sum(count(s.d)) OVER (ORDER BY d))::bigint AS within
            FROM (SELECT bit_count((fp # q)::bit(64))::int AS d FROM dir_docs) s
                 RIGHT JOIN generate_series(0, 64) d USING (d)
            GROUP BY d) h;
        SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = on; SET LOCAL enable_bitmapscan = on;
        FOREACH k IN ARRAY radii LOOP
            SELECT count(*) INTO by_index FROM dir_docs WHERE hamming(fp, q) <= k;
            IF by_index <> truth[k + 1] THEN bad := bad || format(' %s@%s: %s vs %s', q, k, by_index, truth[k + 1]); END IF;
        END LOOP;
    END LOOP;
    RETURN coalesce(nullif(bad, ''), 'ok');
END $$;
-- Centers: stored fingerprints with bits flipped in each block (bit 63 and bit 42 are in block
-- 0, bit 42 its lowest; bit 41 in block 1; bit 5 in block 2), two cluster centers, a random value.
SELECT dir_check(ARRAY[(SELECT fp # (1::bigint << 42) FROM dir_docs WHERE id = 1),
                       (SELECT fp # (1::bigint << 63) # (1::bigint << 41) FROM dir_docs WHERE id = 4444444),
                       (SELECT fp # 32 # (1::bigint << 42) FROM dir_docs WHERE id = 8999999),
                       hashint8extended(1, 23), hashint8extended(4, 23) # (1::bigint << 42),
                       hashint8extended(77, 5)],
                 ARRAY[0, 1, 2, 3, 4, 5, 6, 7, 9]);
-- Top-10 nearest through the index, in the order of a sort of the distances.
SET enable_seqscan = off;
SELECT array_agg(hamming(fp, hashint8extended(2, 23) # (1::bigint << 42))) AS top10
FROM (SELECT fp FROM dir_docs ORDER BY fp <~> (hashint8extended(2, 23) # (1::bigint << 42)) LIMIT 10) s;
RESET enable_seqscan;
SELECT simhash_index_check('dir_docs_fp');

-- The batch search of a chunk of 400,000 rows sweeps the run by block value (each center wants
-- 23 + 1 + 1 block values at radius 3, more than the tables have slots). Every 25th row of the
-- chunk is a stored fingerprint with two bits flipped (in any of the blocks), the others are new:
-- exactly those rows are skipped.
CREATE TABLE dir_load (id bigint, fp bigint);
INSERT INTO dir_load
SELECT 30000000 + g,
       CASE WHEN g % 25 = 0
            THEN hashint8extended(g * 20 + 7, 21) # (1::bigint << (g % 64)) # (1::bigint << ((g / 64 * 7 + 3) % 64))
            ELSE hashint8extended(g, 29) END
FROM generate_series(1, 400000) g;
SELECT inserted, skipped FROM simhash_insert_distinct('dir_docs', 'SELECT id, fp FROM dir_load ORDER BY id', 3,
                                                      memory_limit => '256MB');
SELECT (l.id - 30000000) % 25 = 0 AS near_copy, d.id IS NOT NULL AS inserted, count(*)
FROM dir_load l LEFT JOIN dir_docs d USING (id) GROUP BY 1, 2 ORDER BY 1, 2;

DROP TABLE dir_docs, dir_load;
DROP FUNCTION dir_check;
