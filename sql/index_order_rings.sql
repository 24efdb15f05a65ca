-- Ordered scans on runs that are probed (larger than the runs a backend copies at once), where an
-- epoch's ball is searched one ring at a time: each ring probes the block values its pigeonhole
-- adds, keeps what lies beyond it for the later rings, and puts aside the refs whose key says they
-- are beyond it. The ids come in the order of a sort (ties by heap position) for every LIMIT, on
-- runs of four and of three tables, with several runs and a pending list, clusters with ties at
-- every distance, a second ORDER BY key, conditions, a filter the index does not see, and rescans.
SET client_min_messages = warning;
CREATE TABLE rings_docs (id int, fp bigint) WITH (autovacuum_enabled = off);
INSERT INTO rings_docs SELECT g, hashint8extended(g, 21) FROM generate_series(1, 300000) g;
-- Clusters: 6 centers, 20 members for each d = 1..12, each with d bits at random places (fewer
-- where two fall on the same bit): near neighbours with every pattern of bits across the blocks.
CREATE FUNCTION rings_mask(seed int, d int) RETURNS bigint LANGUAGE sql AS
$$ SELECT bit_or(1::bigint << (abs(hashint4(seed * 64 + j)) % 64)) FROM generate_series(1, d) j $$;
INSERT INTO rings_docs SELECT 1000000 + c * 1000 + d * 20 + k, hashint8extended(c, 23) # rings_mask(c * 10000 + d * 100 + k, d)
FROM generate_series(1, 6) c, generate_series(1, 12) d, generate_series(0, 19) k;
-- Skewed: the 12 low bits constant.
INSERT INTO rings_docs SELECT 2000000 + g, (hashint8extended(g, 25) & ~4095::bigint) | 1365 FROM generate_series(1, 30000) g;
CREATE TABLE rings_docs3 (id int, fp bigint) WITH (autovacuum_enabled = off);
INSERT INTO rings_docs3 SELECT * FROM rings_docs;
CREATE INDEX rings_docs_fp ON rings_docs USING simhash (fp) WITH (tables = 4, pending_limit = 1024);
CREATE INDEX rings_docs3_fp ON rings_docs3 USING simhash (fp) WITH (tables = 3, pending_limit = 1024);
-- More rows after the builds: runs written from the pending list (probed too: a backend copies a
-- run of more than 16,384 entries only once it has probed it many times) with the other number
-- of tables, so that the rings step by one run's tables and not by the other's, and a pending
-- list; members of the clusters among them.
ALTER INDEX rings_docs_fp SET (tables = 3);
ALTER INDEX rings_docs3_fp SET (tables = 4);
INSERT INTO rings_docs SELECT 3000000 + g, hashint8extended(g, 27) FROM generate_series(1, 150000) g;
INSERT INTO rings_docs SELECT 4000000 + c * 1000 + d * 20 + k, hashint8extended(c, 23) # rings_mask(-c * 10000 - d * 100 - k, d)
FROM generate_series(1, 6) c, generate_series(1, 12) d, generate_series(0, 19) k;
INSERT INTO rings_docs3 SELECT * FROM rings_docs WHERE id >= 3000000;
ANALYZE rings_docs, rings_docs3;
SELECT i.relname, count(*) > 1 AS several_runs, (array_agg(r.tables ORDER BY r.entries DESC))[1] AS largest_run_tables,
       array_agg(DISTINCT r.tables) AS tables, bool_and(r.entries > 16384) AS probed_runs,
       (SELECT pending_entries > 0 FROM simhash_index_info(i.relname::regclass)) AS pending
FROM (VALUES ('rings_docs_fp'::name), ('rings_docs3_fp')) i(relname), simhash_index_runs(i.relname::regclass) r
GROUP BY i.relname ORDER BY 1;

-- The truth: a sort of the distances, ties by heap position; the index, asked for the distance
-- order alone (later keys and conditions as given), must return the same ids.
CREATE FUNCTION rings_ids(tbl regclass, q bigint, n int, later text, cond text, use_index boolean) RETURNS int[]
LANGUAGE plpgsql AS $$
DECLARE result int[];
BEGIN
    EXECUTE format('SET LOCAL enable_seqscan = %s', NOT use_index);
    EXECUTE format('SET LOCAL enable_sort = %s', NOT use_index);
    EXECUTE format('SET LOCAL enable_indexscan = %s', use_index);
    SET LOCAL enable_bitmapscan = off;
    EXECUTE format('SELECT array_agg(id) FROM (SELECT id FROM %s WHERE %s ORDER BY fp <~> $1%s%s LIMIT $2) s',
                   tbl, cond, later, CASE WHEN use_index THEN '' ELSE ', ctid' END)
        INTO result USING q, n;
    RETURN result;
END $$;
-- For each center, how many of the LIMITs 1, 3, 10, 40, 150, 600 return the sort's first n ids.
CREATE FUNCTION rings_limits_exact(tbl regclass, q bigint, later text, cond text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE truth int[] := rings_ids(tbl, q, 600, later, cond, false); exact int := 0; n int;
BEGIN
    FOREACH n IN ARRAY ARRAY[1, 3, 10, 40, 150, 600] LOOP
        IF rings_ids(tbl, q, n, later, cond, true) IS NOT DISTINCT FROM truth[1:n] THEN exact := exact + 1; END IF;
    END LOOP;
    RETURN exact;
END $$;

-- Centers: stored fingerprints with bits flipped (the rest of the ten nearest lie 12-16 bits
-- away), cluster centers and members (ties at every distance), skewed points and random values.
CREATE TABLE rings_centers AS
SELECT fp # (1::bigint << 33) # (1::bigint << 7) AS q FROM rings_docs WHERE id IN (17, 150001, 299999)
UNION ALL SELECT fp # 1 FROM rings_docs WHERE id = 3000077
UNION ALL SELECT hashint8extended(c, 23) FROM generate_series(1, 5) c
UNION ALL SELECT hashint8extended(6, 23) # 7
UNION ALL SELECT (hashint8extended(g, 26) & ~4095::bigint) | 1365 FROM generate_series(1, 2) g
UNION ALL SELECT hashint8extended(g, 99) FROM generate_series(1, 3) g;

SET enable_bitmapscan = off;
BEGIN;
SELECT tbl, count(*) AS centers,
       sum(rings_limits_exact(tbl, q, '', 'true')) AS limits_exact, 6 * count(*) AS limits,
       sum(rings_limits_exact(tbl, q, ', fp <~> 0', 'true')) AS later_key_exact,
       sum(rings_limits_exact(tbl, q, '', format('hamming(fp, %s) <= 30', q # 255))) AS ball_30_exact,
       sum(rings_limits_exact(tbl, q, '', 'id % 3 = 0')) AS filtered_exact
FROM rings_centers, (VALUES ('rings_docs'::regclass), ('rings_docs3')) t(tbl)
GROUP BY tbl ORDER BY tbl::text;
-- A run probed by the first rings of an epoch and read in full by a later one (the probes a
-- ring would make pass simhash.max_probes): the read skips what the probes found, after the refs
-- they put aside.
SET LOCAL simhash.max_probes = 45;
SELECT 'max_probes 45' AS setting, count(*) AS centers,
       sum(rings_limits_exact('rings_docs', q, '', 'true')) AS limits_exact,
       sum(rings_limits_exact('rings_docs3', q, '', 'true')) AS limits_exact3
FROM rings_centers;
COMMIT;

-- Every row once: the first 20,000 nearest of a random point, as many ids as rows, none twice.
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids,
       bool_and(d >= prev) AS nondecreasing
FROM (SELECT id, fp <~> hashint8extended(5, 99) AS d, lag(fp <~> hashint8extended(5, 99), 1, 0) OVER () AS prev
      FROM (SELECT id, fp FROM rings_docs3 ORDER BY fp <~> hashint8extended(5, 99) LIMIT 20000) s) x;

-- Rescans: the 5 nearest of each of 30 rows (a LATERAL join rescans one index scan), against a sort.
CREATE FUNCTION rings_lateral(tbl regclass, use_index boolean) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE result bigint;
BEGIN
    EXECUTE format('SET LOCAL enable_seqscan = %s', NOT use_index);
    EXECUTE format('SET LOCAL enable_sort = %s', NOT use_index);
    EXECUTE format('SET LOCAL enable_indexscan = %s', use_index);
    EXECUTE format('SELECT sum(hashint8(p.id::bigint * 1000003 + n.id * 31 + n.rank)) FROM
                        (SELECT id, fp FROM %1$s WHERE id %% 10000 = 7) p,
                        LATERAL (SELECT d.id, row_number() OVER () AS rank
                                 FROM (SELECT d.id FROM %1$s d WHERE d.id <> p.id ORDER BY d.fp <~> p.fp%2$s LIMIT 5) d) n',
                   tbl, CASE WHEN use_index THEN '' ELSE ', d.ctid' END) INTO result;
    RETURN result;
END $$;
BEGIN;
SELECT rings_lateral('rings_docs', true) = rings_lateral('rings_docs', false) AS lateral_exact,
       rings_lateral('rings_docs3', true) = rings_lateral('rings_docs3', false) AS lateral3_exact;
COMMIT;
RESET enable_bitmapscan;
DROP TABLE rings_docs, rings_docs3, rings_centers;
DROP FUNCTION rings_ids, rings_limits_exact, rings_lateral, rings_mask;
