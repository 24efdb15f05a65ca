-- Included by radius_bench.sql and topk_bench.sql: the fingerprint of generator value g with hash
-- seed `seed` in data set `data`:
--   uniform: random 64-bit values;
--   skewed:  the same with the 12 low bits constant, as from a biased generator;
--   text:    the default simhash() of a document of 8 lines drawn from the lines of the machine's
--            licence and copyright texts (/usr/share/common-licenses, /usr/share/doc/*/copyright;
--            32,768 of them, repeated if there are fewer): real fingerprints of real prose, with
--            the bit bias and correlations that real text has. Reading the files needs superuser.
-- A plain SQL function; `text` costs ~40 us a row, so the text data set's table rows (seed 21)
-- are kept in the unlogged table bench_text_fingerprints and computed only once (by a faster
-- PL/pgSQL loop): pg_temp.bench_table_rows(rows, data) gives rows g = 1..rows of a data set, adding
-- the text rows still missing first (pg_temp.bench_text_fill; bench/text_fingerprints.sh fills
-- it with parallel sessions).
-- pg_temp.bench_flip(data, fp, b...) flips the b-th bit (mod the number of bits that vary in data
-- set `data`) of fp for each b (a bit given twice flips back): queries and planted
-- near-duplicates built with it stay on the data's manifold (a skewed query with a constant bit
-- flipped would sit off every stored fingerprint and probe faster than any real query).
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
-- Document g of the text data set with hash seed `seed`: `lines` lines of bench_lines, drawn by hash.
-- Each line is a scalar subquery, an index lookup whatever the plan: written as a join, the
-- function's generic plan (`lines` unknown, so 1,000 rows assumed) can hash all 32,768 lines on
-- every call, 7 ms a document instead of 0.13 ms.
CREATE FUNCTION pg_temp.bench_document(g bigint, seed bigint, lines int) RETURNS text
    LANGUAGE sql STABLE
    AS $$ SELECT string_agg((SELECT b.line FROM pg_temp.bench_lines b
                             WHERE b.i = (hashint8extended(g * lines + j, seed) & 32767)::int), E'\n' ORDER BY j)
          FROM generate_series(0, lines - 1) j $$;
CREATE FUNCTION pg_temp.bench_fingerprint(g bigint, seed bigint, data text) RETURNS bigint
    LANGUAGE sql STABLE
    AS $$ SELECT CASE data
        WHEN 'skewed' THEN hashint8extended(g, seed) & ~4095::bigint
        WHEN 'text' THEN simhash(pg_temp.bench_document(g, seed, 8))
        ELSE hashint8extended(g, seed) END $$;

CREATE FUNCTION pg_temp.bench_flip(data text, fp bigint, VARIADIC bits bigint[]) RETURNS bigint
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT fp # coalesce((SELECT bit_xor(1::bigint << (CASE data WHEN 'skewed' THEN 12 + b % 52 ELSE b % 64 END)::int)
                                FROM unnest(bits) b), 0) $$;

CREATE UNLOGGED TABLE IF NOT EXISTS bench_text_fingerprints (g bigint, fp bigint);
-- The text data set's rows first..last, added to bench_text_fingerprints: the fingerprints
-- pg_temp.bench_fingerprint(g, 21, 'text') gives, of the same documents built in PL/pgSQL from the
-- lines held in an array (a subscript of an expanded array costs the same at any position; the
-- SQL function's eight index lookups a row cost ~40 us), inserted 10,000 at a time.
CREATE PROCEDURE pg_temp.bench_text_fill(first bigint, last bigint) LANGUAGE plpgsql AS $$
DECLARE
    lines text[] := ARRAY(SELECT line FROM pg_temp.bench_lines ORDER BY i);
    gs bigint[] := '{}';
    fps bigint[] := '{}';
    base bigint;
BEGIN
    FOR g IN first..last LOOP
        base := g::bigint * 8;
        gs := gs || g::bigint;
        fps := fps || simhash(
            lines[(hashint8extended(base + 0, 21) & 32767)::int + 1] || E'\n'
            || lines[(hashint8extended(base + 1, 21) & 32767)::int + 1] || E'\n'
            || lines[(hashint8extended(base + 2, 21) & 32767)::int + 1] || E'\n'
            || lines[(hashint8extended(base + 3, 21) & 32767)::int + 1] || E'\n'
            || lines[(hashint8extended(base + 4, 21) & 32767)::int + 1] || E'\n'
            || lines[(hashint8extended(base + 5, 21) & 32767)::int + 1] || E'\n'
            || lines[(hashint8extended(base + 6, 21) & 32767)::int + 1] || E'\n'
            || lines[(hashint8extended(base + 7, 21) & 32767)::int + 1]);
        IF cardinality(gs) >= 10000 OR g = last THEN
            INSERT INTO bench_text_fingerprints SELECT * FROM unnest(gs, fps);
            gs := '{}';
            fps := '{}';
        END IF;
    END LOOP;
END $$;
SELECT :'data' = 'text' AND :rows > 0 AS bench_text_fill \gset
\if :bench_text_fill
SELECT coalesce(max(g), 0) + 1 AS bench_text_first FROM bench_text_fingerprints \gset
CALL pg_temp.bench_text_fill(:bench_text_first, :rows);
SELECT coalesce(count(*) = max(g), true) AS bench_text_complete FROM bench_text_fingerprints \gset
\if :bench_text_complete
\else
DO $$ BEGIN RAISE EXCEPTION 'bench_text_fingerprints has gaps (an interrupted parallel fill): TRUNCATE it and run again'; END $$;
\endif
\endif
CREATE FUNCTION pg_temp.bench_table_rows(n bigint, data text) RETURNS TABLE (g bigint, fp bigint)
    LANGUAGE sql STABLE
    AS $$ SELECT s, pg_temp.bench_fingerprint(s, 21, data) FROM generate_series(1, n) s WHERE data <> 'text'
          UNION ALL
          SELECT t.g, t.fp FROM bench_text_fingerprints t WHERE data = 'text' AND t.g <= n $$;
