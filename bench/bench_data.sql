-- Included by radius_bench.sql and topk_bench.sql: the fingerprint of generator value g with hash
-- seed `seed` in data set `data`: uniform, or skewed (the 12 low bits constant, as from a biased
-- generator). A plain SQL function, inlined where it is called.
CREATE FUNCTION pg_temp.bench_fingerprint(g bigint, seed bigint, data text) RETURNS bigint
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT CASE data WHEN 'skewed' THEN hashint8extended(g, seed) & ~4095::bigint ELSE hashint8extended(g, seed) END $$;
