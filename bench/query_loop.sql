-- bench/session_bench.sh, bench/scale_bench.sql: pg_temp.bench_loop(count, k, reads_none,
-- centers) runs `count` queries `count(*) WHERE hamming(fp, q) <= k` on the table :loop_table as
-- static SQL in PL/pgSQL (one plan, reused), q the i-th of `centers`, or without them
-- hashint8extended(i, 99), a random point; with reads_none the same loop with a condition that
-- reads no row (PL/pgSQL and the executor alone). Returns microseconds a query. format() writes
-- the table's name into the function's body.
SELECT format($f$
CREATE FUNCTION pg_temp.bench_loop(count int, k int, reads_none boolean, centers bigint[] DEFAULT NULL)
RETURNS float8 LANGUAGE plpgsql AS $body$
DECLARE
    q bigint;
    c bigint;
    started timestamptz := clock_timestamp();
BEGIN
    FOR i IN 1 .. count LOOP
        IF centers IS NULL THEN
            q := hashint8extended(i, 99);
        ELSE
            q := centers[i];
        END IF;
        IF reads_none THEN
            SELECT count(*) INTO c FROM %1$s WHERE hamming(fp, q) <= k AND false;
        ELSE
            SELECT count(*) INTO c FROM %1$s WHERE hamming(fp, q) <= k;
        END IF;
    END LOOP;
    RETURN 1e6 * extract(epoch FROM clock_timestamp() - started) / count;
END $body$$f$, :'loop_table'::regclass) \gexec
