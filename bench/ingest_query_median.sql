-- bench/query_after_ingest.sh: pg_temp.k_median(queries, radius, seed) runs `queries` counts
-- within `radius` of fingerprints no row is near (hashint8extended of seed + 1 .. seed + queries)
-- and returns the median execution time (EXPLAIN ANALYZE, TIMING OFF) in ms. Each round uses new
-- query fingerprints, so that no round finds the lines of an earlier one in the CPU caches.
CREATE FUNCTION pg_temp.k_median(queries int, radius int, seed bigint) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE ms float8[] := '{}'; plan json;
BEGIN
    FOR i IN 1..queries LOOP
        EXECUTE format('EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) SELECT count(*) FROM ingest_docs WHERE hamming(fp, %s) <= %s',
                       hashint8extended(seed + i, 3), radius) INTO plan;
        ms := ms || (plan->0->>'Execution Time')::float8;
    END LOOP;
    RETURN (SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY x)::numeric, 4) FROM unnest(ms) x);
END $$;
-- :label, then one median per round of :queries queries, all in this one session (its backend
-- caches the run directories and copies small runs as a long-lived connection would).
SELECT :'label' AS state, string_agg(pg_temp.k_median(:queries, :radius, s * 1000000000::bigint)::text, ' ' ORDER BY s)
       AS medians_ms_per_round
FROM generate_series(1, :rounds) s;
