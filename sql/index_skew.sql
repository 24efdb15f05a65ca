-- Skewed fingerprints: a run whose entries have low-entropy bits is written with its own bit
-- order (those bits spread over the blocks), at build, when the pending list is written out, in
-- merges and in VACUUM's rewrites, in memory and spilled; answers stay exactly a sequential
-- scan's at every radius, plain and ordered, and simhash_index_check verifies the order.
CREATE TABLE skew_docs (id int, fp bigint);
-- the 12 low bits constant (a biased generator), plus a few near-duplicates of one row
INSERT INTO skew_docs SELECT g, (hashint8extended(g, 31) & ~4095::bigint) | 2730 FROM generate_series(1, 30000) g;
INSERT INTO skew_docs SELECT 100000 + i, ((hashint8extended(7, 31) & ~4095::bigint) | 2730) # (1::bigint << (i * 5 % 64))
FROM generate_series(0, 12) i;
CREATE INDEX skew_docs_fp ON skew_docs USING simhash (fp) WITH (pending_limit = 64);
-- and a uniform table beside it: its run keeps the identity order
CREATE TABLE skew_uniform (id int, fp bigint);
INSERT INTO skew_uniform SELECT g, hashint8extended(g, 31) FROM generate_series(1, 30000) g;
CREATE INDEX skew_uniform_fp ON skew_uniform USING simhash (fp);
SELECT run, entries, permuted FROM simhash_index_runs('skew_docs_fp');
SELECT run, entries, permuted FROM simhash_index_runs('skew_uniform_fp');

-- Rows after the build: written out as runs of their own (also permuted) and a pending list.
INSERT INTO skew_docs SELECT 200000 + g, (hashint8extended(g, 37) & ~4095::bigint) | 2730 FROM generate_series(1, 12000) g;
SELECT count(*) > 1 AS several_runs, bool_and(permuted) AS all_permuted FROM simhash_index_runs('skew_docs_fp');
SELECT simhash_index_check('skew_docs_fp');

-- Every radius 0..24 around stored fingerprints and near them: the index (forced) and a
-- sequential scan return the same rows.
CREATE FUNCTION skew_ids(q bigint, k int, use_index boolean) RETURNS int[] LANGUAGE plpgsql AS $$
DECLARE result int[];
BEGIN
    EXECUTE format('SET LOCAL enable_seqscan = %s', NOT use_index);
    EXECUTE format('SET LOCAL enable_indexscan = %s', use_index);
    EXECUTE format('SET LOCAL enable_bitmapscan = %s', use_index);
    EXECUTE format('SELECT array_agg(id ORDER BY id) FROM skew_docs WHERE hamming(fp, %s) <= %s', q, k) INTO result;
    RETURN result;
END $$;
CREATE TABLE skew_queries AS
SELECT fp AS q FROM skew_docs WHERE id IN (7, 100003, 29999, 200017)
UNION ALL SELECT fp # 6 FROM skew_docs WHERE id IN (11, 200500)
UNION ALL SELECT hashint8extended(5, 99);
BEGIN;
SELECT count(*) AS cases, count(*) FILTER (WHERE skew_ids(q, k, true) IS NOT DISTINCT FROM skew_ids(q, k, false)) AS exact,
       sum(coalesce(cardinality(skew_ids(q, k, false)), 0)) AS rows_found
FROM skew_queries, generate_series(0, 24, 2) k;
COMMIT;

-- The planner's row estimate follows the bits that vary (52 here, from the index's largest run):
-- a ball holds far more of these fingerprints than of uniform ones (30,000 rows at radius 20:
-- ~1,900 for 52 bits, ~55 for 64).
CREATE FUNCTION skew_estimate(tbl text, k int) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
    EXECUTE format('EXPLAIN (FORMAT JSON) SELECT id FROM %I WHERE hamming(fp, 12345) <= %s', tbl, k) INTO plan;
    RETURN (plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
END $$;
ANALYZE skew_docs, skew_uniform;
SELECT skew_estimate('skew_docs', 20) BETWEEN 1000 AND 4000 AS skewed_estimate,
       skew_estimate('skew_uniform', 20) BETWEEN 30 AND 100 AS uniform_estimate;

-- Ordered scans over permuted runs.
BEGIN;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_sort = off;
SELECT count(*) AS queries,
       count(*) FILTER (WHERE (SELECT array_agg(id) FROM (SELECT id FROM skew_docs ORDER BY fp <~> q LIMIT 30) s)
                              IS NOT DISTINCT FROM
                              (SELECT array_agg(id) FROM (SELECT id FROM skew_docs
                                                           ORDER BY hamming_dist(fp, q) + 0, ctid LIMIT 30) s)) AS top30_exact
FROM skew_queries;
COMMIT;

-- VACUUM rewrites a run with a fifth dead (a new order from the survivors), and a spilled build
-- (maintenance_work_mem far below the entries) chooses its order from the entries in memory
-- when they spill.
DELETE FROM skew_docs WHERE id % 4 = 0;
VACUUM skew_docs;
SELECT simhash_index_check('skew_docs_fp');
SET maintenance_work_mem = '1MB';
REINDEX INDEX skew_docs_fp;
RESET maintenance_work_mem;
SELECT run, entries, permuted FROM simhash_index_runs('skew_docs_fp');
SELECT simhash_index_check('skew_docs_fp');
BEGIN;
SELECT count(*) AS cases, count(*) FILTER (WHERE skew_ids(q, k, true) IS NOT DISTINCT FROM skew_ids(q, k, false)) AS exact
FROM skew_queries, generate_series(0, 24, 3) k;
COMMIT;

DROP TABLE skew_docs, skew_uniform, skew_queries;
DROP FUNCTION skew_ids(bigint, int, boolean), skew_estimate(text, int);
