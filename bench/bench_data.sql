-- Included by radius_bench.sql and topk_bench.sql: the fingerprint of generator value g with hash
-- seed `seed` in data set `data`:
--   uniform: random 64-bit values;
--   skewed:  the same with the 12 low bits constant, as from a biased generator;
--   text:    the default simhash() of a document of 8 lines drawn from the lines of the machine's
--            licence and copyright texts (/usr/share/common-licenses, /usr/share/doc/*/copyright;
--            32,768 of them, repeated if there are fewer): real fingerprints of real prose, with
--            the bit bias and correlations that real text has. Reading the files needs superuser.
-- A plain SQL function; `text` costs ~40 us a row (10M rows: several minutes).
SELECT :'data' = 'text' AS bench_text_data \gset
\if :bench_text_data
CREATE TEMP TABLE bench_lines (i int PRIMARY KEY, line text);
WITH files AS (
    SELECT '/usr/share/common-licenses/' || f AS path FROM pg_ls_dir('/usr/share/common-licenses') f
    UNION ALL SELECT '/usr/share/doc/' || d || '/copyright' FROM pg_ls_dir('/usr/share/doc') d),
lines AS (
    SELECT DISTINCT btrim(l) AS line
    FROM files, regexp_split_to_table(pg_read_file(path), E'\n') l
    WHERE (pg_stat_file(path, true)).size > 0 AND NOT (pg_stat_file(path, true)).isdir AND length(btrim(l)) >= 20),
numbered AS (SELECT row_number() OVER (ORDER BY md5(line), line) - 1 AS n, line FROM lines)
INSERT INTO bench_lines
SELECT k, line FROM generate_series(0, 32767) k JOIN numbered ON n = k % (SELECT count(*) FROM numbered);
ANALYZE bench_lines;
\else
CREATE TEMP TABLE bench_lines (i int PRIMARY KEY, line text);
\endif
CREATE FUNCTION pg_temp.bench_fingerprint(g bigint, seed bigint, data text) RETURNS bigint
    LANGUAGE sql STABLE
    AS $$ SELECT CASE data
        WHEN 'skewed' THEN hashint8extended(g, seed) & ~4095::bigint
        WHEN 'text' THEN (SELECT simhash(string_agg(b.line, E'\n' ORDER BY j))
                          FROM generate_series(0, 7) j
                          JOIN pg_temp.bench_lines b ON b.i = (hashint8extended(g * 8 + j, seed) & 32767))
        ELSE hashint8extended(g, seed) END $$;
