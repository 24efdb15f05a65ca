-- Runs whose directories are wider than 16 bits: blocks of 21-22 bits (3 tables) and 32 bits (2
-- tables) with directories of log2(entries / 4) bits, as large runs have them. On uniform,
-- skewed (12 constant low bits) and clustered fingerprints (near-duplicates at every distance of
-- a few centers): the same rows as the truth at every radius, top-K in the order of a sort,
-- simhash_index_check, and the same after VACUUM and after a merge writes a run of its own.
SET client_min_messages = warning;
-- No autovacuum: its VACUUM would write the pending list out at a moment of its own.
CREATE TABLE wide_docs (id int, fp bigint) WITH (autovacuum_enabled = off);
INSERT INTO wide_docs SELECT g, hashint8extended(g, 7) FROM generate_series(1, 600000) g;
-- Clusters: 8 centers, each with 64 fingerprints at every distance 1..64 along a random bit order.
INSERT INTO wide_docs
SELECT 1000000 + c * 100 + d, hashint8extended(c, 99) # ~(-1::bigint << d)
FROM generate_series(1, 8) c, generate_series(1, 63) d;
CREATE TABLE wide_skewed (id int, fp bigint) WITH (autovacuum_enabled = off);
INSERT INTO wide_skewed SELECT g, hashint8extended(g, 8) & ~4095::bigint FROM generate_series(1, 600000) g;
ANALYZE wide_docs, wide_skewed;

-- Row counts within each radius of a few centers, through the index (forced, one query a radius)
-- and from one sequential pass a center over the distances (bit_count of the XOR, without the
-- extension); 'ok' when every count agrees.
CREATE FUNCTION wide_check(tbl regclass, centers bigint[], radii int[]) RETURNS text LANGUAGE plpgsql AS $$
DECLARE q bigint; k int; by_index bigint; truth bigint[]; bad text := '';
BEGIN
    FOREACH q IN ARRAY centers LOOP
        SET LOCAL enable_seqscan = on; SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;
        -- truth[d + 1]: rows within d bits
        EXECUTE format('SELECT array_agg(within ORDER BY d) FROM (
                            SELECT d, (sum(count(s.d)) OVER (ORDER BY d))::bigint AS within
                            FROM (SELECT bit_count((fp # $1)::bit(64))::int AS d FROM %s) s
                                 RIGHT JOIN generate_series(0, 64) d USING (d)
                            GROUP BY d) h', tbl) INTO truth USING q;
        SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = on; SET LOCAL enable_bitmapscan = on;
        FOREACH k IN ARRAY radii LOOP
            EXECUTE format('SELECT count(*) FROM %s WHERE hamming(fp, $1) <= $2', tbl) INTO by_index USING q, k;
            IF by_index <> truth[k + 1] THEN bad := bad || format(' %s@%s: %s vs %s', q, k, by_index, truth[k + 1]); END IF;
        END LOOP;
    END LOOP;
    RETURN coalesce(nullif(bad, ''), 'ok');
END $$;

-- Top-10 nearest through the index against a sort of the distances.
CREATE FUNCTION wide_topk(tbl regclass, q bigint) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE by_index int[]; sorted int[];
BEGIN
    SET LOCAL enable_seqscan = off;
    EXECUTE format('SELECT array_agg(d) FROM (SELECT hamming(fp, $1) AS d FROM %s ORDER BY fp <~> $1 LIMIT 10) s', tbl)
        INTO by_index USING q;
    SET LOCAL enable_seqscan = on; SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;
    EXECUTE format('SELECT array_agg(d) FROM (SELECT bit_count((fp # $1)::bit(64))::int AS d FROM %s ORDER BY 1 LIMIT 10) s', tbl)
        INTO sorted USING q;
    RETURN by_index = sorted;
END $$;

-- Centers: stored fingerprints, the same with bits flipped, cluster centers, and random values.
CREATE TABLE wide_centers AS
SELECT array_agg(c) AS uniform FROM (
    SELECT fp # (1::bigint << 40) AS c FROM wide_docs WHERE id IN (1, 77777)
    UNION ALL SELECT fp # 7 FROM wide_docs WHERE id = 500000
    UNION ALL SELECT hashint8extended(c, 99) FROM generate_series(1, 2) c
    UNION ALL SELECT hashint8extended(123, 5)) s;
SELECT array_agg(fp # (1::bigint << 50) # (1::bigint << 20)) AS skewed FROM wide_skewed WHERE id IN (3, 300000) \gset

-- 3 tables: 22 + 21 + 21 bits, an 18-bit directory.
CREATE INDEX wide_docs_fp ON wide_docs USING simhash (fp) WITH (tables = 3);
SELECT run, entries, tables, dirbits FROM simhash_index_runs('wide_docs_fp');
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM wide_docs WHERE hamming(fp, 42) <= 3;
RESET enable_seqscan;
SELECT wide_check('wide_docs', uniform, ARRAY[0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 24]) FROM wide_centers;
SELECT bool_and(wide_topk('wide_docs', c)) AS top10_sorted FROM wide_centers, unnest(uniform) c;
SELECT simhash_index_check('wide_docs_fp');

-- 2 tables: 32-bit blocks, the same directory.
DROP INDEX wide_docs_fp;
CREATE INDEX wide_docs_fp2 ON wide_docs USING simhash (fp) WITH (tables = 2);
SELECT run, entries, tables, dirbits FROM simhash_index_runs('wide_docs_fp2');
SELECT wide_check('wide_docs', uniform, ARRAY[0, 1, 2, 3, 4, 5, 7, 9]) FROM wide_centers;
SELECT simhash_index_check('wide_docs_fp2');
DROP INDEX wide_docs_fp2;

-- 5 tables (blocks of 13, 13, 13, 13 and 12 bits) and 7 (10 bits, then 9): a table's directory is
-- as wide as its own block, so tables of the longer blocks have a bit more directory than the
-- others (dirbits shows table 0's), and the probes and the check read each table at its own
-- width (the batch sweep by block value: insert_distinct).
CREATE INDEX wide_docs_fp5 ON wide_docs USING simhash (fp) WITH (tables = 5);
SELECT run, entries, tables, dirbits FROM simhash_index_runs('wide_docs_fp5');
SELECT wide_check('wide_docs', uniform, ARRAY[0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12]) FROM wide_centers;
SELECT bool_and(wide_topk('wide_docs', c)) AS top10_sorted FROM wide_centers, unnest(uniform) c;
SELECT simhash_index_check('wide_docs_fp5');
DROP INDEX wide_docs_fp5;
CREATE INDEX wide_docs_fp7 ON wide_docs USING simhash (fp) WITH (tables = 7);
SELECT run, entries, tables, dirbits FROM simhash_index_runs('wide_docs_fp7');
SELECT wide_check('wide_docs', uniform, ARRAY[0, 1, 2, 3, 5, 7, 9]) FROM wide_centers;
SELECT simhash_index_check('wide_docs_fp7');
DROP INDEX wide_docs_fp7;

-- Skewed: the key order moves the constant bits apart; 3 tables.
CREATE INDEX wide_skewed_fp ON wide_skewed USING simhash (fp) WITH (tables = 3);
SELECT run, entries, tables, dirbits FROM simhash_index_runs('wide_skewed_fp');
SELECT wide_check('wide_skewed', :'skewed'::bigint[], ARRAY[0, 1, 2, 3, 5, 7, 10]);
SELECT bool_and(wide_topk('wide_skewed', c)) AS top10_sorted FROM unnest(:'skewed'::bigint[]) c;
SELECT simhash_index_check('wide_skewed_fp');

-- VACUUM after deleting a third of the rows (it rewrites the run, whose dead share is over the
-- rewrite threshold): counts follow, and the index verifies.
CREATE INDEX wide_docs_fp ON wide_docs USING simhash (fp) WITH (tables = 3, pending_limit = 16384);
DELETE FROM wide_docs WHERE id % 3 = 0;
-- VACUUM removes the deleted rows only once no snapshot can see them: an autovacuum ANALYZE of
-- another table holds one while it runs. Wait (up to a minute) until no other backend holds one.
DO $$
BEGIN
    FOR i IN 1 .. 1200 LOOP
        PERFORM pg_stat_clear_snapshot();
        EXIT WHEN NOT EXISTS (SELECT FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_xmin IS NOT NULL);
        PERFORM pg_sleep(0.05);
    END LOOP;
END $$;
VACUUM wide_docs;
SELECT entries + pending_entries = (SELECT count(*) FROM wide_docs) AS entries_match FROM simhash_index_info('wide_docs_fp');
SELECT wide_check('wide_docs', uniform, ARRAY[0, 3, 7, 12]) FROM wide_centers;
SELECT simhash_index_check('wide_docs_fp');

-- A run written by a merge (through Generic WAL): a million rows inserted after the build stay in
-- the pending list (16 MB) until VACUUM writes them out as a run with an 18-bit directory.
INSERT INTO wide_docs SELECT g, hashint8extended(g, 17) FROM generate_series(2000001, 3000000) g;
VACUUM wide_docs;
SELECT run, entries, tables, dirbits FROM simhash_index_runs('wide_docs_fp') ORDER BY run;
SELECT wide_check('wide_docs', uniform || ARRAY[hashint8extended(2300000, 17), hashint8extended(2999999, 17) # 3],
                  ARRAY[0, 2, 3, 6, 9]) FROM wide_centers;
SELECT simhash_index_check('wide_docs_fp');

DROP TABLE wide_docs, wide_skewed, wide_centers;

-- A run of 3 tables as runs from 8.4M entries on have them: blocks of 22, 21 and 21 bits, each
-- table's directory as wide as its block (22 bits for table 0, 21 for tables 1 and 2), so that a
-- probe of table 0 reads one block value's entries, not two. Probes, top-K, the batch search's
-- sweep by block value (by the backend and a parallel worker, over 2^22 slots of table 0 and 2^21
-- of the others) and simhash_index_check must each read every table at its own width.
CREATE TABLE dir_docs (id bigint, fp bigint) WITH (autovacuum_enabled = off);
INSERT INTO dir_docs SELECT g, hashint8extended(g, 21) FROM generate_series(1, 9000000) g;
-- Clusters: 4 centers, each with fingerprints at every distance 1..12 (the low d bits flipped),
-- so that table 0's neighbouring block values hold rows near the same center.
INSERT INTO dir_docs
SELECT 20000000 + c * 100 + d, hashint8extended(c, 23) # ((1::bigint << d) - 1)
FROM generate_series(1, 4) c, generate_series(1, 12) d;
CREATE INDEX dir_docs_fp ON dir_docs USING simhash (fp) WITH (tables = 3);
SELECT run, entries, tables, dirbits FROM simhash_index_runs('dir_docs_fp');

-- Centers: stored fingerprints with bits flipped in each block (bit 63 and bit 42 are in block
-- 0, bit 42 its lowest; bit 41 in block 1; bit 5 in block 2), two cluster centers, a random value.
SELECT wide_check('dir_docs', ARRAY[(SELECT fp # (1::bigint << 42) FROM dir_docs WHERE id = 1),
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

DROP FUNCTION wide_check, wide_topk;
