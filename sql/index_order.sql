-- Ordered scans: ORDER BY fp <~> q and ORDER BY hamming(fp, q) read a simhash index nearest first
-- and return exactly what a sort returns (ties by heap position), with NULL fingerprints last, with
-- WHERE conditions, in LATERAL joins, across the runs and the pending list.
CREATE TABLE order_docs (id int, fp bigint, lang text);
-- uniform fingerprints, one in 97 NULL
INSERT INTO order_docs SELECT g, CASE WHEN g % 97 = 0 THEN NULL ELSE hashint8extended(g, 7) END,
                              CASE WHEN g % 3 = 0 THEN 'zh' ELSE 'en' END
FROM generate_series(1, 12000) g;
-- clusters: 40 near-duplicates around each of 5 centers, 1-9 bits away, many ties
INSERT INTO order_docs SELECT 100000 + c * 100 + i,
       hashint8extended(c, 9) # (1::bigint << (i % 64)) # (CASE WHEN i > 20 THEN 1::bigint << ((i * 7) % 64) ELSE 0 END)
                              # (CASE WHEN i > 30 THEN 1::bigint << ((i * 13) % 64) ELSE 0 END),
       'en'
FROM generate_series(1, 5) c, generate_series(1, 40) i;
-- skewed: the 12 low bits constant
INSERT INTO order_docs SELECT 200000 + g, (hashint8extended(g, 11) & ~4095::bigint) | 1365, 'en'
FROM generate_series(1, 3000) g;
CREATE INDEX order_docs_fp ON order_docs USING simhash (fp) WITH (pending_limit = 64);
-- rows after the build: runs written out of the pending list, and a pending list
INSERT INTO order_docs SELECT 300000 + g, CASE WHEN g % 50 = 0 THEN NULL ELSE hashint8extended(g, 13) END, 'en'
FROM generate_series(1, 10000) g;
INSERT INTO order_docs SELECT 400000 + i, hashint8extended(2, 9) # (3::bigint << i), 'en' FROM generate_series(0, 20) i;
ANALYZE order_docs;
SELECT runs > 1 AS several_runs, pending_entries > 0 AS pending FROM simhash_index_info('order_docs_fp');

-- Plans: both spellings are an ordered index scan, also under a filter, a condition of the index
-- and in LATERAL; a descending order is a sort.
EXPLAIN (COSTS OFF) SELECT id FROM order_docs ORDER BY fp <~> 42 LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM order_docs ORDER BY hamming(fp, 42) LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id, hamming(fp, 42) FROM order_docs WHERE lang = 'zh' ORDER BY hamming(fp, 42) LIMIT 5;
EXPLAIN (COSTS OFF) SELECT id FROM order_docs WHERE hamming(fp, 7) <= 20 ORDER BY fp <~> 42 LIMIT 5;
EXPLAIN (COSTS OFF) SELECT id FROM order_docs ORDER BY fp <~> 42 DESC LIMIT 10;
-- Two distances on the one column: the scan sorts each ring by the later distances too, so the
-- index returns the rows a sort would (first 1,000 rows tie on the first distance, half of them
-- closer to 7 than the other half), with a NULL later center, and under LIMIT.
CREATE TABLE order_two (id int, fp bigint);
INSERT INTO order_two SELECT g, CASE WHEN g % 2 = 0 THEN 8 ELSE 1 END FROM generate_series(1, 1000) g;
INSERT INTO order_two SELECT g, hashint8extended(g, 3) FROM generate_series(1001, 20000) g;
INSERT INTO order_two VALUES (0, NULL);
CREATE INDEX ON order_two USING simhash (fp);
ANALYZE order_two;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM order_two ORDER BY fp <~> 0, fp <~> 7 LIMIT 4;
SELECT fp <~> 0 AS d0, fp <~> 7 AS d7 FROM order_two ORDER BY fp <~> 0, fp <~> 7 LIMIT 4;
EXPLAIN (COSTS OFF) SELECT id, fp FROM order_two ORDER BY fp <~> 0, fp <~> 7, fp <~> 12345;
CREATE TEMP TABLE order_two_index AS
    SELECT row_number() OVER () AS n, id, fp <~> 0 AS d0, fp <~> 7 AS d7, fp <~> 12345 AS d3
    FROM (SELECT id, fp FROM order_two ORDER BY fp <~> 0, fp <~> 7, fp <~> 12345) s;
SELECT id, fp <~> 0 AS d0, fp <~> 8 AS d8 FROM order_two ORDER BY fp <~> 0, fp <~> 8 LIMIT 4;
SELECT id, fp <~> 0 AS d0 FROM order_two ORDER BY fp <~> 0, fp <~> NULL::bigint LIMIT 3;
RESET enable_seqscan;
SET enable_indexscan = off;
-- The same orders by a sort: only rows of equal distances may differ (they tie, in TID order).
SELECT count(*) AS rows, count(*) FILTER (WHERE (i.d0, i.d7, i.d3) IS DISTINCT FROM (s.d0, s.d7, s.d3)) AS out_of_order
FROM order_two_index i
JOIN (SELECT row_number() OVER () AS n, d0, d7, d3
      FROM (SELECT fp <~> 0 AS d0, fp <~> 7 AS d7, fp <~> 12345 AS d3 FROM order_two
            ORDER BY fp <~> 0, fp <~> 7, fp <~> 12345) x) s USING (n);
SELECT id, fp <~> 0 AS d0, fp <~> 8 AS d8 FROM order_two ORDER BY fp <~> 0, fp <~> 8, id LIMIT 4;
RESET enable_indexscan;
DROP TABLE order_two;
EXPLAIN (COSTS OFF) SELECT id FROM order_docs ORDER BY fp <~> 42;
EXPLAIN (COSTS OFF)
SELECT p.id, n.id FROM (VALUES (1), (2)) p(id),
LATERAL (SELECT d.id FROM order_docs d ORDER BY d.fp <~> hashint8extended(p.id, 9) LIMIT 3) n;

-- The truth is a sort without the index, ties by heap position (ctid), NULLs last; the index,
-- asked for the distance order alone, must give the same ids in the same order (dynamic SQL, so
-- each run is planned under its own settings).
CREATE FUNCTION order_ids(q bigint, n int, cond text, use_index boolean) RETURNS int[] LANGUAGE plpgsql AS $$
DECLARE result int[];
BEGIN
    EXECUTE format('SET LOCAL enable_seqscan = %s', NOT use_index);
    EXECUTE format('SET LOCAL enable_sort = %s', NOT use_index);
    EXECUTE format('SET LOCAL enable_indexscan = %s', use_index);
    EXECUTE format('SET LOCAL enable_bitmapscan = %s', NOT use_index);
    EXECUTE format('SELECT array_agg(id) FROM (SELECT id FROM order_docs WHERE %s ORDER BY fp <~> $1%s LIMIT $2) s',
                   cond, CASE WHEN use_index THEN '' ELSE ', ctid' END)
        INTO result USING q, n;
    RETURN result;
END $$;
CREATE FUNCTION order_uses_index(q bigint, n int, cond text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
    SET LOCAL enable_seqscan = off;
    SET LOCAL enable_sort = off;
    SET LOCAL enable_bitmapscan = off;
    FOR line IN EXECUTE format('EXPLAIN SELECT id FROM order_docs WHERE %s ORDER BY fp <~> %s LIMIT %s', cond, q, n) LOOP
        IF line LIKE '%Order By: (fp <~>%' THEN RETURN true; END IF;
    END LOOP;
    RETURN false;
END $$;

-- Queries: cluster centers and members (near neighbours, ties), random points (nearest ~10-18
-- bits away), skewed points, and 0; every LIMIT from 1 to all rows.
CREATE TABLE order_queries AS
SELECT hashint8extended(c, 9) AS q FROM generate_series(1, 5) c
UNION ALL SELECT hashint8extended(c, 9) # 5 FROM generate_series(1, 5) c
UNION ALL SELECT hashint8extended(g, 99) FROM generate_series(1, 8) g
UNION ALL SELECT (hashint8extended(g, 98) & ~4095::bigint) | 1365 FROM generate_series(1, 4) g
UNION ALL SELECT 0;
BEGIN;
SELECT count(*) AS queries,
       count(*) FILTER (WHERE order_uses_index(q, 10, 'true')) AS index_used,
       count(*) FILTER (WHERE order_ids(q, 1, 'true', true) IS NOT DISTINCT FROM order_ids(q, 1, 'true', false)) AS top1_exact,
       count(*) FILTER (WHERE order_ids(q, 10, 'true', true) IS NOT DISTINCT FROM order_ids(q, 10, 'true', false)) AS top10_exact,
       count(*) FILTER (WHERE order_ids(q, 250, 'true', true) IS NOT DISTINCT FROM order_ids(q, 250, 'true', false)) AS top250_exact
FROM order_queries;
-- With conditions: on another column, and a ball around another point (small and large).
SELECT count(*) AS queries,
       count(*) FILTER (WHERE order_ids(q, 7, $$lang = 'zh'$$, true) IS NOT DISTINCT FROM order_ids(q, 7, $$lang = 'zh'$$, false)) AS other_column,
       count(*) FILTER (WHERE order_ids(q, 7, 'hamming(fp, 7) <= 25', true) IS NOT DISTINCT FROM order_ids(q, 7, 'hamming(fp, 7) <= 25', false)) AS ball_25,
       count(*) FILTER (WHERE order_ids(q, 50, format('hamming(fp, %s) <= 6', q # 3), true)
                            IS NOT DISTINCT FROM order_ids(q, 50, format('hamming(fp, %s) <= 6', q # 3), false)) AS ball_6
FROM order_queries;
-- Every row, in order: the NULL fingerprints come last, by heap position.
SELECT order_ids(123456789, 100000, 'true', true) IS NOT DISTINCT FROM order_ids(123456789, 100000, 'true', false) AS all_rows_exact,
       cardinality(order_ids(123456789, 100000, 'true', true)) = (SELECT count(*) FROM order_docs) AS every_row,
       (order_ids(123456789, 100000, 'true', true))[(SELECT count(*) FROM order_docs WHERE fp IS NOT NULL) + 1:]
           = (SELECT array_agg(id ORDER BY ctid) FROM order_docs WHERE fp IS NULL) AS nulls_last_by_position;
COMMIT;

-- The distances the index returns are the ORDER BY values (no recheck): equal to hamming().
SELECT id, fp <~> hashint8extended(3, 9) AS d, hamming(fp, hashint8extended(3, 9)) AS h
FROM order_docs ORDER BY fp <~> hashint8extended(3, 9) LIMIT 8;

-- LATERAL: the 3 nearest of every probe row (the first 40 cluster members), against a sort.
CREATE TABLE order_probes AS SELECT id, fp FROM order_docs WHERE id BETWEEN 100101 AND 100140;
CREATE FUNCTION order_lateral(use_index boolean) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE result bigint;
BEGIN
    EXECUTE format('SET LOCAL enable_seqscan = %s', NOT use_index);
    EXECUTE format('SET LOCAL enable_sort = %s', NOT use_index);
    EXECUTE format('SET LOCAL enable_indexscan = %s', use_index);
    EXECUTE format('SELECT sum(hashint8(p.id::bigint * 1000003 + n.id * 31 + n.rank)) FROM order_probes p,
                    LATERAL (SELECT d.id, row_number() OVER () AS rank
                             FROM (SELECT d.id FROM order_docs d WHERE d.id <> p.id
                                   ORDER BY d.fp <~> p.fp%s LIMIT 3) d) n',
                   CASE WHEN use_index THEN '' ELSE ', d.ctid' END) INTO result;
    RETURN result;
END $$;
BEGIN;
SELECT order_lateral(true) = order_lateral(false) AS lateral_exact;
COMMIT;

-- A NULL ORDER BY argument (a parameter of a generic plan): every row, distances NULL.
SET plan_cache_mode = force_generic_plan;
SET enable_seqscan = off;
SET enable_sort = off;
PREPARE order_nearest(bigint, int) AS SELECT id, fp <~> $1 AS d FROM order_docs ORDER BY fp <~> $1 LIMIT $2;
EXPLAIN (COSTS OFF) EXECUTE order_nearest(NULL, 5);
DEALLOCATE order_nearest;
CREATE FUNCTION order_count(q bigint, OUT rows bigint, OUT distances bigint) LANGUAGE plpgsql AS $$
BEGIN
    SELECT count(*), count(d) INTO rows, distances
    FROM (SELECT id, fp <~> q AS d FROM order_docs ORDER BY fp <~> q LIMIT 100000) x;
END $$;
SELECT * FROM order_count(NULL);
SELECT * FROM order_count(1);
SELECT count(*) AS rows, count(fp) AS distances FROM order_docs;
RESET plan_cache_mode;
RESET enable_seqscan;
RESET enable_sort;

-- After deletes, VACUUM and more inserts: still exact, still every row once.
DELETE FROM order_docs WHERE id % 5 = 0;
VACUUM order_docs;
INSERT INTO order_docs SELECT 500000 + g, CASE WHEN g % 40 = 0 THEN NULL ELSE hashint8extended(g, 17) END, 'en'
FROM generate_series(1, 3000) g;
SELECT simhash_index_check('order_docs_fp');
BEGIN;
SELECT count(*) FILTER (WHERE order_ids(q, 25, 'true', true) IS NOT DISTINCT FROM order_ids(q, 25, 'true', false)) AS top25_exact
FROM order_queries;
SELECT order_ids(0, 100000, 'true', true) IS NOT DISTINCT FROM order_ids(0, 100000, 'true', false) AS all_rows_exact;
COMMIT;

-- An index-only scan with no condition (count(*) when scans are disabled) counts every row.
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) = (SELECT count(*) FROM order_docs WHERE id IS NOT NULL) AS count_exact FROM order_docs;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- <~> is the distance; its comparisons are plain integer ones (hamming() is the indexable form).
SELECT 5::bigint <~> 6::bigint AS d, pg_typeof(5::bigint <~> 6::bigint) AS type, 1::bigint <~> NULL AS null_d;
EXPLAIN (COSTS OFF) SELECT id FROM order_docs WHERE hamming(fp, 42) <= 3;

DROP TABLE order_docs, order_queries, order_probes;
DROP FUNCTION order_ids(bigint, int, text, boolean), order_uses_index(bigint, int, text), order_lateral(boolean),
    order_count(bigint);
