-- Every radius from -1 to 65, every query form, with and without the index: no planner error (the
-- selectivity of radii near 64 once summed to more than 1), the same rows as a sequential scan,
-- and a plan choice that is monotone in the radius (index up to some radius, a scan from there on).
CREATE TABLE radius_docs (id int, fp bigint);
INSERT INTO radius_docs SELECT g, hashint8extended(g, 0) FROM generate_series(1, 20000) g;
-- near-duplicates of one center at every distance
INSERT INTO radius_docs SELECT 100000 + d, 1234567 # ~(-1::bigint << d) FROM generate_series(0, 63) d;
ANALYZE radius_docs;

-- Row counts by every spelling of the condition; NULL counts would mean an error.
CREATE FUNCTION radius_counts(q bigint, k int) RETURNS int[] LANGUAGE plpgsql AS $$
DECLARE result int[] := '{}'; n int; form text;
BEGIN
    FOREACH form IN ARRAY ARRAY[
        'hamming(fp, $1) <= $2', 'hamming(fp, $1) < $2 + 1', '$2 >= hamming(fp, $1)', 'hamming($1, fp) <= $2',
        'hamming_within(fp, $1, $2)', 'fp <@ hamming_ball($1, $2)', format('hamming(fp, $1) <= %s', k),
        format('hamming(fp, $1) < %s', k + 1), format('fp <@ %L::hamming_ball', format('(%s,%s)', q, k))]
    LOOP
        EXECUTE format('SELECT count(*) FROM radius_docs WHERE %s', form) INTO n USING q, k;
        result := result || n;
    END LOOP;
    RETURN result;
END $$;

-- The truth: popcount of the XOR, computed without the extension.
CREATE TABLE radius_distances AS
SELECT length(replace((fp # 1234567)::bit(64)::text, '0', '')) AS d FROM radius_docs;
CREATE FUNCTION radius_truth(q bigint, k int) RETURNS int LANGUAGE sql AS $$
    SELECT count(*)::int FROM radius_distances WHERE d <= k
$$;

-- Without an index.
SELECT count(*) AS radii, count(*) FILTER (WHERE counts = array_fill(truth, ARRAY[9])) AS all_forms_exact,
       min(truth) AS fewest, max(truth) AS most
FROM generate_series(-1, 65) k, LATERAL (SELECT radius_counts(1234567, k) AS counts, radius_truth(1234567, k) AS truth) x;

-- With the index, forced.
CREATE INDEX radius_docs_fp ON radius_docs USING simhash (fp);
SET enable_seqscan = off;
SELECT count(*) AS radii, count(*) FILTER (WHERE counts = array_fill(truth, ARRAY[9])) AS all_forms_exact
FROM generate_series(-1, 65) k, LATERAL (SELECT radius_counts(1234567, k) AS counts, radius_truth(1234567, k) AS truth) x;
RESET enable_seqscan;

-- The planner's choice: does the plan of `hamming(fp, q) <= k` read the index?
CREATE FUNCTION radius_uses_index(k int) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
    FOR line IN EXECUTE format('EXPLAIN SELECT id FROM radius_docs WHERE hamming(fp, 1234567) <= %s', k) LOOP
        IF line LIKE '%radius_docs_fp%' THEN RETURN true; END IF;
    END LOOP;
    RETURN false;
END $$;
WITH plans AS (SELECT k, radius_uses_index(k) AS uses_index FROM generate_series(0, 64) k)
SELECT bool_and(uses_index) FILTER (WHERE k <= 12) AS index_up_to_12,
       NOT bool_or(uses_index) FILTER (WHERE k >= 40) AS scan_from_40,
       (SELECT bool_and(a.uses_index OR NOT b.uses_index) FROM plans a JOIN plans b ON b.k = a.k + 1) AS monotone
FROM plans;

-- Index scans are counted as for the built-in indexes (pg_stat_user_indexes.idx_scan), so the
-- usual "unused index" query does not call this one unused.
-- The backend's counts not yet flushed include earlier transactions' (they are flushed at most
-- once a second), so the two scans are what the counts grow by within one transaction.
SET enable_seqscan = off;
BEGIN;
SELECT pg_stat_get_xact_numscans('radius_docs_fp'::regclass) AS scans_before,
       pg_stat_get_xact_tuples_returned('radius_docs_fp'::regclass) AS read_before \gset
SET LOCAL enable_bitmapscan = off;
SELECT count(*) FROM radius_docs WHERE hamming(fp, 1234567) <= 3;
SET LOCAL enable_bitmapscan = on;
SET LOCAL enable_indexscan = off;
SELECT count(*) FROM radius_docs WHERE hamming(fp, 1234567) <= 3;
SELECT pg_stat_get_xact_numscans('radius_docs_fp'::regclass) - :scans_before AS scans,
       pg_stat_get_xact_tuples_returned('radius_docs_fp'::regclass) - :read_before AS tuples_read;
COMMIT;
RESET enable_seqscan;
SELECT pg_stat_force_next_flush();
SELECT idx_scan >= 2 AS scans_counted, idx_tup_read >= 8 AS tuples_counted
FROM pg_stat_user_indexes WHERE indexrelid = 'radius_docs_fp'::regclass;

-- Radii near 64 plan without error in every form.
EXPLAIN (COSTS OFF) SELECT id FROM radius_docs WHERE hamming(fp, 1) <= 61;
EXPLAIN (COSTS OFF) SELECT id FROM radius_docs WHERE hamming(fp, 1) < 64;
EXPLAIN (COSTS OFF) SELECT id FROM radius_docs WHERE fp <@ '(0,61)';

DROP TABLE radius_docs, radius_distances;
DROP FUNCTION radius_counts(bigint, int), radius_truth(bigint, int), radius_uses_index(int);
