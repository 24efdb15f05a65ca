-- bench/topk_limits.sh: `ORDER BY fp <~> q LIMIT n` on an existing table (:tbl, columns id and fp,
-- a simhash index on fp) for n = 1, 10 and 100: the median execution time (EXPLAIN ANALYZE,
-- TIMING OFF) of :queries queries around stored fingerprints with two bits flipped (bench_data.sql's
-- bench_flip, as the size sweep flips its centers), in :rounds rounds after an untimed one. The
-- table's fingerprints must be hashint8extended(id, 11) for ids 1 .. :rows (the centers are
-- computed, not read).
SET client_min_messages = warning;
\ir bench_data.sql
CREATE FUNCTION pg_temp.topk_median(tbl regclass, nrows bigint, n int, lim int) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE q bigint; plan json; ms float8[] := '{}';
BEGIN
    FOR i IN 1 .. n LOOP
        q := pg_temp.bench_flip('uniform', pg_temp.bench_fingerprint((i::bigint * 7919 * 104729) % nrows + 1, 11, 'uniform'), i, i * 7);
        EXECUTE format('EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) SELECT id FROM %s ORDER BY fp <~> %s LIMIT %s', tbl, q, lim)
            INTO plan;
        ms := ms || (plan -> 0 ->> 'Execution Time')::float8;
    END LOOP;
    RETURN (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(ms) x);
END $$;
SELECT pg_temp.topk_median(:'tbl', :rows, :queries, 10) IS NOT NULL AS warmed_up;
SELECT :'tbl' AS tbl, lim AS "limit",
       string_agg(round(pg_temp.topk_median(:'tbl', :rows, :queries, lim)::numeric, 3)::text, ' ' ORDER BY round) AS median_ms_by_round
FROM unnest(ARRAY[1, 10, 100]) lim, generate_series(1, :rounds) round
GROUP BY lim ORDER BY lim;
