#!/usr/bin/env bash
# SQL-level throughput in one run on the same rows: SELECT simhash(body), minhash(body) and
# minhash64(body) against SELECT md5(body), and the IDF aggregate and simhash(body, idf), over real text (package copyright files and license texts, replicated to
# ~100 MB). Prints MB/s and the ratio to md5 (best of 5 runs each). Needs a running server with the
# extension installed (PGHOST/PGPORT/PGUSER), e.g. inside scripts/bench.sh.
set -euo pipefail
REPEAT=${REPEAT:-8}
psql -X -q -v ON_ERROR_STOP=1 <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
DROP TABLE IF EXISTS bench_docs;
CREATE TABLE bench_docs AS
SELECT r, f, pg_read_file(f) AS body
FROM (SELECT '/usr/share/doc/' || d || '/copyright' AS f FROM pg_ls_dir('/usr/share/doc') d
      UNION ALL SELECT '/usr/share/common-licenses/' || l FROM pg_ls_dir('/usr/share/common-licenses') l) s,
     generate_series(1, $REPEAT) r
WHERE (pg_stat_file(f, true)).size > 0 AND NOT (pg_stat_file(f, true)).isdir;
-- Uncompressed out-of-line storage, as long crawled pages mostly are once TOAST gives up on them.
ALTER TABLE bench_docs ALTER COLUMN body SET STORAGE EXTERNAL;
VACUUM ANALYZE bench_docs;
SQL
psql -X -q -t -A -v ON_ERROR_STOP=1 <<'SQL'
CREATE OR REPLACE FUNCTION pg_temp.best_ms(q text, runs int DEFAULT 5) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE best float8 := 'Infinity'; t0 timestamptz; i int;
BEGIN
  FOR i IN 1..runs LOOP
    t0 := clock_timestamp();
    EXECUTE q;
    best := least(best, extract(epoch FROM clock_timestamp() - t0) * 1000);
  END LOOP;
  RETURN best;
END $$;
SELECT format('rows: %s, text: %s MB', count(*), round(sum(octet_length(body)) / 1e6, 1)) FROM bench_docs;
-- The IDF dictionary of the rows' words, stored (and so TOASTed) like a user's would be.
CREATE TEMP TABLE bench_idf AS SELECT simhash_idf(body) AS idf FROM bench_docs;
WITH m AS (SELECT sum(octet_length(body)) / 1e6 AS mb FROM bench_docs),
     t AS (SELECT pg_temp.best_ms('SELECT sum(length(md5(body))) FROM bench_docs') AS md5,
                  pg_temp.best_ms('SELECT sum(simhash(body)) FROM bench_docs') AS simhash,
                  pg_temp.best_ms('SELECT sum(simhash(body, unit => ''char'', size => 5)) FROM bench_docs') AS simhash_char,
                  pg_temp.best_ms('SELECT sum((minhash(body))[1]) FROM bench_docs') AS minhash,
                  pg_temp.best_ms('SELECT sum(minhash64(body)) FROM bench_docs') AS minhash64,
                  pg_temp.best_ms('SELECT simhash_idf(body) FROM bench_docs', 3) AS idf_build,
                  pg_temp.best_ms('SELECT sum(simhash(body, (SELECT idf FROM bench_idf))) FROM bench_docs') AS simhash_idf)
SELECT format(E'%-34s %8s %10s %12s\n', 'query', 'ms', 'MB/s', 'x md5') ||
       format(E'%-34s %8s %10s %12s\n', 'md5(body)', round(md5::numeric, 1), round((mb / md5 * 1000)::numeric, 1), '1.00') ||
       format(E'%-34s %8s %10s %12s\n', 'simhash(body)', round(simhash::numeric, 1), round((mb / simhash * 1000)::numeric, 1), round((simhash / md5)::numeric, 2)) ||
       format(E'%-34s %8s %10s %12s\n', 'simhash(body, char, 5)', round(simhash_char::numeric, 1), round((mb / simhash_char * 1000)::numeric, 1), round((simhash_char / md5)::numeric, 2)) ||
       format(E'%-34s %8s %10s %12s\n', 'minhash(body) 128 slots', round(minhash::numeric, 1), round((mb / minhash * 1000)::numeric, 1), round((minhash / md5)::numeric, 2)) ||
       format(E'%-34s %8s %10s %12s\n', 'minhash64(body)', round(minhash64::numeric, 1), round((mb / minhash64 * 1000)::numeric, 1), round((minhash64 / md5)::numeric, 2)) ||
       format(E'%-34s %8s %10s %12s\n', 'simhash_idf(body) (aggregate)', round(idf_build::numeric, 1), round((mb / idf_build * 1000)::numeric, 1), round((idf_build / md5)::numeric, 2)) ||
       format(E'%-34s %8s %10s %12s', 'simhash(body, idf)', round(simhash_idf::numeric, 1), round((mb / simhash_idf * 1000)::numeric, 1), round((simhash_idf / md5)::numeric, 2))
FROM m, t;
DROP TABLE bench_docs;
SQL
