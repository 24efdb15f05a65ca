-- Each backend keeps copies of the pending list and of small runs (with buckets over them) and
-- brings them up to date from the metapage. A copy must never answer with an entry VACUUM has
-- removed: here the heap TIDs of removed rows are reused by new rows of other fingerprints, in the
-- same session that made the copies, first for a run, then for the pending list.
CREATE TABLE copies (id int, fp bigint) WITH (autovacuum_enabled = off);
INSERT INTO copies SELECT g, g FROM generate_series(1, 100) g;   -- one heap page
CREATE INDEX copies_fp ON copies USING simhash (fp);               -- one run of 100 entries
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT array_agg(fp ORDER BY fp) AS within_1_of_0 FROM copies WHERE hamming(fp, 0) <= 1;

-- The run's 7 entries within 1 bit of 0 die; their TIDs go to 7 new rows far from 0.
CREATE TEMP TABLE freed AS SELECT ctid AS tid FROM copies WHERE hamming(fp, 0) <= 1;
DELETE FROM copies WHERE hamming(fp, 0) <= 1;
VACUUM (INDEX_CLEANUP ON) copies;
INSERT INTO copies SELECT 1000 + g, -1 FROM generate_series(1, 7) g;
SELECT count(*) AS reused_tids FROM copies WHERE ctid IN (SELECT tid FROM freed) AND fp = -1;
SELECT runs, dead_entries, pending_entries FROM simhash_index_info('copies_fp');
SELECT count(*) AS within_1_of_0 FROM copies WHERE hamming(fp, 0) <= 1;
SELECT count(*) AS all_ones FROM copies WHERE hamming(fp, -1) <= 0;

-- The same for the pending list, which holds the 7 new rows now.
TRUNCATE freed;
INSERT INTO freed SELECT ctid FROM copies WHERE fp = -1;
DELETE FROM copies WHERE fp = -1;
VACUUM (INDEX_CLEANUP ON) copies;
INSERT INTO copies SELECT 2000 + g, 1::bigint << (40 + g) FROM generate_series(1, 7) g;
SELECT count(*) AS reused_tids FROM copies WHERE ctid IN (SELECT tid FROM freed) AND id > 2000;
SELECT count(*) AS all_ones FROM copies WHERE hamming(fp, -1) <= 0;
SELECT count(*) AS within_1_of_0 FROM copies WHERE hamming(fp, 0) <= 1;

-- Appends after a copy was made are found (the copy reads only what was appended).
INSERT INTO copies VALUES (3000, 1::bigint << 62);
SELECT count(*) AS within_1_of_0 FROM copies WHERE hamming(fp, 0) <= 1;
-- And every answer equals a sequential scan's, at every radius.
CREATE TEMP TABLE copies_truth AS
SELECT k, count(*) FILTER (WHERE hamming(fp, 0) <= k) AS n FROM copies, generate_series(0, 64) k GROUP BY k;
SELECT count(*) AS mismatches FROM copies_truth t
WHERE t.n <> (SELECT count(*) FROM copies WHERE hamming(fp, 0) <= t.k);
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT simhash_index_check('copies_fp');
DROP TABLE copies;

-- A run of more than 16,384 entries is copied only once this backend has probed it about
-- entries / 32 times (625 here), so that a backend asking a few questions does not copy it first;
-- its answers are the same from its pages (queries 1 .. 624) and from the copy (625 on).
CREATE TABLE copies_big (id int, fp bigint) WITH (autovacuum_enabled = off);
INSERT INTO copies_big SELECT g, hashint8extended(g, 5) FROM generate_series(1, 20000) g;
CREATE INDEX copies_big_fp ON copies_big USING simhash (fp);
SELECT runs, pending_entries FROM simhash_index_info('copies_big_fp');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
CREATE FUNCTION pg_temp.copies_big_mismatches() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    found bigint;
    mismatches bigint := 0;
BEGIN
    FOR q IN 1 .. 800 LOOP
        -- row q is 1 bit away; no other row is within 3 bits of it
        SELECT count(*) INTO found FROM copies_big WHERE hamming(fp, hashint8extended(q, 5) # 2) <= 3;
        mismatches := mismatches + (found <> 1)::int;
    END LOOP;
    RETURN mismatches;
END $$;
SELECT pg_temp.copies_big_mismatches() AS mismatches;
SELECT count(*) AS near_row_7 FROM copies_big WHERE hamming(fp, hashint8extended(7, 5) # 2) <= 3;
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE copies_big;

-- A copy takes the room the cache made for it, not more: a pending list of 263,000 entries is
-- copied in about 34 bytes an entry (its growth used to double past the room counted, to 64).
CREATE TABLE copies_list (fp bigint) WITH (autovacuum_enabled = off);
CREATE INDEX copies_list_fp ON copies_list USING simhash (fp) WITH (pending_limit = 8192);
INSERT INTO copies_list SELECT hashint8extended(g, 5) FROM generate_series(1, 263000) g;
SELECT pending_entries, runs FROM simhash_index_info('copies_list_fp');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM copies_list WHERE hamming(fp, hashint8extended(7, 5) # 3) <= 3;
RESET enable_seqscan;
RESET enable_bitmapscan;
-- The largest copy of the session is this list's (the others hold at most 20,000 entries).
SELECT max(total_bytes) / 263000 BETWEEN 28 AND 40 AS bytes_per_entry_in_room
FROM pg_backend_memory_contexts WHERE name = 'simhash index copy';
DROP TABLE copies_list;
