-- Builds and VACUUM merges larger than maintenance_work_mem go through tuplesort (spilling to
-- disk); the index stays exact.
SET client_min_messages = warning;
SET jit = off;
CREATE TABLE sdocs (id int, fp bigint);
INSERT INTO sdocs SELECT g, hashtextextended('s' || g, 5) FROM generate_series(1, 100000) g;
INSERT INTO sdocs SELECT 200000 + g, 77 # (1::bigint << (g % 64)) # (1::bigint << ((g * 7) % 64))
    FROM generate_series(1, 500) g;
CREATE TABLE sprobes (qid int, fp bigint);
INSERT INTO sprobes SELECT g, hashtextextended('s' || (g * 101), 5) FROM generate_series(1, 20) g;
INSERT INTO sprobes VALUES (0, 77);

CREATE FUNCTION spill_counts(scan text) RETURNS TABLE (k int, total bigint) LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('enable_seqscan', (scan = 'seq')::text, true);
    PERFORM set_config('enable_indexscan', (scan <> 'seq')::text, true);
    PERFORM set_config('enable_bitmapscan', 'false', true);
    RETURN QUERY EXECUTE 'SELECT r.k, count(d.id) FROM sprobes p CROSS JOIN generate_series(0, 10) r(k)
        LEFT JOIN sdocs d ON hamming(d.fp, p.fp) <= r.k GROUP BY r.k ORDER BY r.k';
END $$;

SET maintenance_work_mem = '1MB';
CREATE INDEX sdocs_fp ON sdocs USING simhash (fp);
-- A spilled run is taken to be large (four tables); in memory these rows would get six.
SELECT run, entries, tables FROM simhash_index_runs('sdocs_fp');
SELECT simhash_index_check('sdocs_fp');
SELECT count(*) AS differences FROM (
    (SELECT * FROM spill_counts('seq') EXCEPT SELECT * FROM spill_counts('index'))
    UNION ALL (SELECT * FROM spill_counts('index') EXCEPT SELECT * FROM spill_counts('seq'))) x;
SELECT * FROM spill_counts('index');
DELETE FROM sdocs WHERE id % 4 = 1;
INSERT INTO sdocs SELECT 300000 + g, hashtextextended('t' || g, 5) FROM generate_series(1, 3000) g;
VACUUM sdocs;
SELECT simhash_index_check('sdocs_fp');
SELECT count(*) AS differences FROM (
    (SELECT * FROM spill_counts('seq') EXCEPT SELECT * FROM spill_counts('index'))
    UNION ALL (SELECT * FROM spill_counts('index') EXCEPT SELECT * FROM spill_counts('seq'))) x;
RESET maintenance_work_mem;
DROP TABLE sdocs, sprobes;
DROP FUNCTION spill_counts(text);
