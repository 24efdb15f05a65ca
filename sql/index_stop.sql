-- A tuple scan returns what it has once a structure it read from pages gave matches, and searches
-- the next structures only when asked for more rows: LIMIT 1, EXISTS and the dedup trigger stop
-- early. Every row must still come back exactly once, also when the scan is resumed after other
-- scans of the same index ran in between, after a rescan, and when rows were added meanwhile.
CREATE TABLE stop (id int, fp bigint) WITH (autovacuum_enabled = off);
INSERT INTO stop SELECT g, hashint8extended(g, 9) FROM generate_series(1, 40000) g;
INSERT INTO stop SELECT 100000 + g, 1::bigint << g FROM generate_series(0, 9) g;       -- 1 bit from 0
CREATE INDEX stop_fp ON stop USING simhash (fp);
INSERT INTO stop SELECT g, hashint8extended(g, 9) FROM generate_series(40001, 60000) g;
INSERT INTO stop SELECT 200000 + g, 3::bigint << (10 + g) FROM generate_series(0, 4) g; -- 2 bits
INSERT INTO stop SELECT g, hashint8extended(g, 9) FROM generate_series(60001, 80000) g;
INSERT INTO stop SELECT 300000 + g, 7::bigint << (20 + g) FROM generate_series(0, 4) g; -- 3 bits
-- Runs of more than 16,384 entries, read from their pages by this session's first queries (see
-- index_copies), and a pending list.
SELECT run, entries FROM simhash_index_runs('stop_fp');
SELECT pending_entries FROM simhash_index_info('stop_fp');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
-- 20 rows within 3 bits of 0, spread over the first run, a later run and the pending list.
SELECT count(*), min(id), max(id) FROM stop WHERE hamming(fp, 0) <= 3;

-- A cursor fetching in steps, with scans of the same index and an insert between the steps: the
-- rows it returns are the 20, each once (the inserted near-duplicate came after its snapshot).
CREATE FUNCTION pg_temp.fetch_in_steps() RETURNS TABLE (step int, id int) LANGUAGE plpgsql AS $$
DECLARE
    c CURSOR FOR SELECT s.id FROM stop s WHERE hamming(s.fp, 0) <= 3;
    row_id int;
    n int := 0;
BEGIN
    OPEN c;
    LOOP
        FETCH c INTO row_id;
        EXIT WHEN NOT FOUND;
        n := n + 1;
        step := n;
        id := row_id;
        RETURN NEXT;
        IF n IN (1, 11) THEN
            PERFORM count(*) FROM stop s WHERE hamming(s.fp, hashint8extended(n, 9)) <= 3;
            PERFORM 1 FROM stop s WHERE hamming(s.fp, -1) <= 5 LIMIT 1;
            INSERT INTO stop VALUES (400000 + n, 1::bigint << 40);
        END IF;
    END LOOP;
    CLOSE c;
END $$;
CREATE TEMP TABLE fetched AS SELECT * FROM pg_temp.fetch_in_steps();
SELECT count(*) AS fetched, count(DISTINCT id) AS distinct_ids,
       count(*) FILTER (WHERE id IN (SELECT s.id FROM stop s WHERE hamming(s.fp, 0) <= 3 AND s.id < 400000))
           AS of_the_20
FROM fetched;
SELECT count(*) AS inserted_meanwhile FROM stop WHERE hamming(fp, 0) <= 3 AND id >= 400000;

-- Rescans: one scan per outer row, each stopping at its first row; and EXISTS.
SELECT c.center, (SELECT s.id FROM stop s WHERE hamming(s.fp, c.center) <= 3 LIMIT 1) IS NOT NULL AS has_one,
       EXISTS (SELECT FROM stop s WHERE hamming(s.fp, c.center) <= 3) AS exists_one
FROM (VALUES (0::bigint), (6148914691236517205), (hashint8extended(12345, 9) # 5), (hashint8extended(77777, 9))) c(center);

-- LIMIT 1 reads fewer index pages than the full count, since it stops after the first run (each
-- query runs twice, and the second run is compared: this session caches a run's directory pages).
CREATE FUNCTION pg_temp.index_hits(query text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE before bigint;
BEGIN
    EXECUTE query;
    before := pg_stat_get_xact_blocks_hit('stop_fp'::regclass);
    EXECUTE query;
    RETURN pg_stat_get_xact_blocks_hit('stop_fp'::regclass) - before;
END $$;
SELECT pg_temp.index_hits('SELECT 1 FROM stop WHERE hamming(fp, 0) <= 3 LIMIT 1')
     < pg_temp.index_hits('SELECT count(*) FROM stop WHERE hamming(fp, 0) <= 3') AS limit_1_reads_less;

-- Every radius, index against sequential scan.
CREATE TEMP TABLE stop_truth AS
SELECT k, count(*) FILTER (WHERE hamming(fp, 0) <= k) AS n FROM stop, generate_series(0, 8) k GROUP BY k;
SELECT count(*) AS mismatches FROM stop_truth t WHERE t.n <> (SELECT count(*) FROM stop WHERE hamming(fp, 0) <= t.k);
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT simhash_index_check('stop_fp');
DROP TABLE stop;
