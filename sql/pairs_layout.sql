-- The building blocks of a pairs join partitioned by table key (simhash_pairs_distributed runs
-- them on Citus): joining the rows of equal key in every table and keeping the pairs a table
-- reports gives exactly simhash_pairs, here on one node.
CREATE TABLE layout_docs (id bigint, fp bigint);
INSERT INTO layout_docs SELECT g, hashint8extended(g, 5) FROM generate_series(1, 3000) g;
-- Clusters of 4 rows 1-4 bits apart, identical fingerprints, NULLs.
INSERT INTO layout_docs
SELECT 10000 + 4 * c + j, hashint8extended(c, 5) # (CASE WHEN j > 0 THEN 1::bigint << (j * 9) ELSE 0 END)
                                                 # (CASE WHEN j > 2 THEN 7::bigint << 40 ELSE 0 END)
FROM generate_series(1, 200) c, generate_series(0, 3) j;
INSERT INTO layout_docs SELECT 20000 + g, hashint8extended(g, 5) FROM generate_series(1, 5) g;
INSERT INTO layout_docs VALUES (30000, NULL);

CREATE FUNCTION layout_pairs(radius integer, blocks integer, key_blocks integer, tables integer)
RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
LANGUAGE sql AS $$
    WITH layout AS (SELECT blocks, key_blocks, tables),
    keyed AS (
        SELECT t, simhash_pairs_key(d.fp, radius, l.blocks, l.key_blocks, t) AS key, d.id, d.fp
        FROM layout_docs d, layout l, generate_series(0, l.tables - 1) t WHERE d.fp IS NOT NULL)
    SELECT a.id, b.id, hamming_dist(a.fp, b.fp)
    FROM keyed a JOIN keyed b ON a.t = b.t AND a.key = b.key AND a.id < b.id, layout l
    WHERE simhash_pairs_reports(a.fp, b.fp, radius, l.blocks, l.key_blocks, a.t)
$$;

-- The same with the rows of each key grouped and compared by simhash_pairs_agg (what
-- simhash_pairs_distributed runs on each worker).
CREATE FUNCTION layout_pairs_agg(radius integer, blocks integer, key_blocks integer, tables integer)
RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
LANGUAGE sql AS $$
    SELECT g.p[3 * i + 1], g.p[3 * i + 2], g.p[3 * i + 3]::integer
    FROM (SELECT simhash_pairs_agg(d.id, d.fp, radius, blocks, key_blocks, t) AS p
          FROM layout_docs d, generate_series(0, tables - 1) t WHERE d.fp IS NOT NULL
          GROUP BY t, simhash_pairs_key(d.fp, radius, blocks, key_blocks, t)) g,
         generate_series(0, array_length(g.p, 1) / 3 - 1) i
    WHERE g.p IS NOT NULL
$$;

-- The layouts simhash_pairs_layout picks, and layouts with keys of several blocks.
CREATE TABLE layouts AS
SELECT r, l.* FROM (VALUES (0, 16), (1, 16), (3, 4), (6, 16), (9, 16)) v(r, m), LATERAL simhash_pairs_layout(3805, r, m) l
UNION ALL VALUES (3, 5, 2, 10), (4, 7, 3, 35), (6, 8, 2, 28);
SELECT r, blocks, key_blocks, tables,
       (SELECT count(*) FROM layout_pairs(r, blocks, key_blocks, tables)) AS pairs,
       (SELECT count(*) FROM (SELECT id_a, id_b FROM layout_pairs(r, blocks, key_blocks, tables) GROUP BY 1, 2 HAVING count(*) > 1) x) AS repeated,
       (SELECT count(*) FROM ((SELECT * FROM layout_pairs(r, blocks, key_blocks, tables) EXCEPT SELECT * FROM simhash_pairs('SELECT id, fp FROM layout_docs', r))
                              UNION ALL
                              (SELECT * FROM simhash_pairs('SELECT id, fp FROM layout_docs', r) EXCEPT SELECT * FROM layout_pairs(r, blocks, key_blocks, tables))) d) AS different,
       (SELECT count(*) FROM layout_pairs_agg(r, blocks, key_blocks, tables)) AS pairs_agg,
       (SELECT count(*) FROM ((SELECT * FROM layout_pairs_agg(r, blocks, key_blocks, tables) EXCEPT SELECT * FROM simhash_pairs('SELECT id, fp FROM layout_docs', r))
                              UNION ALL
                              (SELECT * FROM simhash_pairs('SELECT id, fp FROM layout_docs', r) EXCEPT SELECT * FROM layout_pairs_agg(r, blocks, key_blocks, tables))) d) AS different_agg
FROM layouts ORDER BY r, key_blocks;

-- A table's key and report are those of the layout: equal keys are needed, and of the tables whose
-- keys agree only the first reports.
SELECT t, simhash_pairs_key(0, 3, 4, 1, t) AS key_of_0, simhash_pairs_key(-1, 3, 4, 1, t) AS key_of_all_ones,
       simhash_pairs_reports(0, 1, 3, 4, 1, t) AS one_low_bit, simhash_pairs_reports(0, 1::bigint << 63, 3, 4, 1, t) AS one_high_bit
FROM generate_series(0, 3) t;
SELECT simhash_pairs_reports(0, 15, 3, 4, 1, 3) AS four_bits_apart, simhash_pairs_key(NULL, 3, 4, 1, 0) IS NULL AS null_key;

-- simhash_pairs_distributed on a table that is not distributed is simhash_pairs.
SELECT count(*) FROM simhash_pairs_distributed('layout_docs', 'id', 'fp', 3);
-- Whatever the caller's search_path: functions named like the ones it calls, in a schema searched
-- first, are not called.
CREATE SCHEMA layout_hostile;
CREATE FUNCTION layout_hostile.simhash_pairs(text, integer, text DEFAULT NULL) RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
    LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hostile simhash_pairs called'; END $$;
CREATE FUNCTION layout_hostile.to_regclass(text) RETURNS regclass LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hostile to_regclass called'; END $$;
SET search_path = layout_hostile, public;
SELECT count(*) FROM public.simhash_pairs_distributed('public.layout_docs', 'id', 'fp', 3);
RESET search_path;
DROP SCHEMA layout_hostile CASCADE;

-- simhash_pairs_distributed_into commits as it goes, so it cannot pin its search_path; called from
-- a DO block or a procedure, whose transaction goes on after the call, it leaves the caller's
-- search_path as it was, also when the call fails and the caller catches the error.
CREATE SCHEMA layout_caller;
CREATE TABLE layout_caller.layout_seen (n bigint);
CREATE TABLE layout_result (id_a bigint, id_b bigint, distance integer);
SET search_path = layout_caller, public;
DO $$
BEGIN
    CALL simhash_pairs_distributed_into('layout_docs', 'id', 'fp', 'layout_result', 3);
    INSERT INTO layout_seen SELECT count(*) FROM layout_result;
    RAISE NOTICE 'after the call: search_path %, % pairs', current_setting('search_path'), (SELECT n FROM layout_seen);
END $$;
CREATE PROCEDURE layout_caller.layout_twice() LANGUAGE plpgsql AS $$
BEGIN
    CALL simhash_pairs_distributed_into('layout_docs', 'id', 'fp', 'layout_result', 3);
    CALL simhash_pairs_distributed_into('layout_docs', 'id', 'fp', 'layout_result', 3);
    RAISE NOTICE 'in a procedure: search_path %, % rows', current_setting('search_path'), (SELECT count(*) FROM layout_result);
END $$;
CALL layout_twice();
DO $$
BEGIN
    BEGIN
        CALL simhash_pairs_distributed_into('layout_docs', 'id', 'fp', NULL, 3);
    EXCEPTION WHEN null_value_not_allowed THEN
        RAISE NOTICE 'caught %: %, search_path %', SQLSTATE, SQLERRM, current_setting('search_path');
    END;
    BEGIN  -- a block with an exception handler runs in a subtransaction, where it cannot commit
        CALL simhash_pairs_distributed_into('layout_docs', 'id', 'fp', 'layout_result', 3);
    EXCEPTION WHEN invalid_transaction_termination THEN
        RAISE NOTICE 'caught %: %, search_path %', SQLSTATE, SQLERRM, current_setting('search_path');
    END;
    PERFORM count(*) FROM layout_seen;
END $$;
-- Its own statements name every operator with its schema: operators planted in a schema searched
-- before pg_catalog, of the exact argument types, are not called.
CREATE FUNCTION layout_caller.planted(oid, oid) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'planted = called'; END $$;
CREATE FUNCTION layout_caller.planted(name, name) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'planted = called'; END $$;
CREATE FUNCTION layout_caller.planted(text, text) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'planted <> called'; END $$;
CREATE OPERATOR layout_caller.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = layout_caller.planted);
CREATE OPERATOR layout_caller.= (LEFTARG = name, RIGHTARG = name, FUNCTION = layout_caller.planted);
CREATE OPERATOR layout_caller.<> (LEFTARG = text, RIGHTARG = text, FUNCTION = layout_caller.planted);
TRUNCATE layout_result;
SET search_path = layout_caller, pg_catalog, public;
CALL simhash_pairs_distributed_into('layout_docs', 'id', 'fp', 'layout_result', 3);
SHOW search_path;
RESET search_path;
SELECT count(*) AS pairs_under_planted_operators FROM layout_result;
SET client_min_messages = warning;
DROP SCHEMA layout_caller CASCADE;
RESET client_min_messages;
DROP TABLE layout_result;

-- A row with a fingerprint and a NULL id is refused, on a table that is not distributed too, in
-- words of the table and columns the caller named (simhash_pairs would speak of its query).
CREATE TABLE layout_nullids (id bigint, fp bigint, signature integer[]);
INSERT INTO layout_nullids VALUES (1, 5, '{1,2}'), (2, 4, '{1,2}'), (NULL, 7, '{1,2}'), (NULL, NULL, NULL);
\set SHOW_CONTEXT never
SELECT * FROM simhash_pairs_distributed('layout_nullids', 'id', 'fp', 3);
SELECT * FROM simhash_groups_distributed('layout_nullids', 'id', 'fp', 3);
SELECT * FROM minhash_pairs_distributed('layout_nullids', 'id', 'signature', 0.5);
\set SHOW_CONTEXT errors
-- Rows without a fingerprint (or signature) need no id.
UPDATE layout_nullids SET fp = NULL, signature = NULL WHERE id IS NULL;
SELECT * FROM simhash_pairs_distributed('layout_nullids', 'id', 'fp', 3);
SELECT * FROM minhash_pairs_distributed('layout_nullids', 'id', 'signature', 0.5);
DROP TABLE layout_nullids;

-- Groups from pairs computed elsewhere: the connected components simhash_groups finds, for every
-- row that has a near-duplicate.
WITH g AS (SELECT * FROM simhash_pair_groups('SELECT id_a, id_b FROM simhash_pairs(''SELECT id, fp FROM layout_docs'', 6)')),
     s AS (SELECT * FROM simhash_groups('SELECT id, fp FROM layout_docs', 6, 'connected')
           WHERE group_id IN (SELECT group_id FROM simhash_groups('SELECT id, fp FROM layout_docs', 6, 'connected') GROUP BY 1 HAVING count(*) > 1))
SELECT (SELECT count(*) FROM g) AS grouped_rows, (SELECT count(DISTINCT group_id) FROM g) AS groups,
       (SELECT count(*) FROM ((SELECT * FROM g EXCEPT SELECT * FROM s) UNION ALL (SELECT * FROM s EXCEPT SELECT * FROM g)) d) AS different;
SELECT * FROM simhash_pair_groups('SELECT 5::bigint, 3::bigint UNION ALL SELECT 3, 9 UNION ALL SELECT 20, 11 UNION ALL SELECT 11, 20') ORDER BY id;
SELECT * FROM simhash_pair_groups('SELECT id_a, id_b FROM simhash_pairs(''SELECT id, fp FROM layout_docs'', 6)', '64kB');
-- Its input is pairs of ids: a pair without its second id is an error, and the message names the pair columns.
SELECT * FROM simhash_pair_groups('SELECT 5::bigint, NULL::bigint');
SELECT * FROM simhash_pair_groups('SELECT 5::bigint, 3::numeric');
-- Both columns are ids: each may be smallint, integer or bigint.
SELECT * FROM simhash_pair_groups('SELECT 5::integer, 3::integer UNION ALL SELECT 3, 9::smallint UNION ALL SELECT 20::smallint, -2147483648') ORDER BY id;
SELECT * FROM simhash_pair_groups('SELECT 7::smallint, 8::smallint') ORDER BY id;
-- Columns of a domain over the expected type are read as that type.
CREATE DOMAIN layout_fingerprint AS bigint;
CREATE DOMAIN layout_id AS integer;
SELECT * FROM simhash_pairs('SELECT i::layout_id, (CASE WHEN i < 3 THEN 7 ELSE 255 END)::layout_fingerprint FROM generate_series(1, 4) i', 1);
SELECT * FROM simhash_pair_groups('SELECT 5::layout_id, 3::layout_fingerprint');
DROP DOMAIN layout_fingerprint, layout_id;
SELECT * FROM simhash_groups_distributed('layout_docs', 'id', 'fp', 3) ORDER BY id LIMIT 4;

-- MinHash LSH partitioned by band: grouping the rows of every band by its hash and keeping what
-- minhash_pairs_agg reports gives exactly minhash_pairs.
CREATE TABLE layout_sigs AS
SELECT id, minhash(ARRAY(SELECT 'w' || ((id / 4) * 100 + k) FROM generate_series(1, 40 - (id % 4) * 3) k), 64) AS signature
FROM generate_series(1, 400) id;
CREATE FUNCTION layout_minhash_pairs(threshold float8, bands integer, band_rows integer)
RETURNS TABLE (id_a bigint, id_b bigint, jaccard float8)
LANGUAGE sql AS $$
    SELECT g.p[3 * i + 1], g.p[3 * i + 2], g.p[3 * i + 3]::float8 / 64
    FROM (SELECT minhash_pairs_agg(s.id, s.signature, threshold, band_rows, b) AS p
          FROM layout_sigs s, generate_series(0, bands - 1) b
          GROUP BY b, minhash_band_key(s.signature, band_rows, b)) g,
         generate_series(0, array_length(g.p, 1) / 3 - 1) i
    WHERE g.p IS NOT NULL
$$;
SELECT t, l.*, (SELECT count(*) FROM layout_minhash_pairs(t, l.bands, l.rows)) AS pairs,
       (SELECT count(*) FROM ((SELECT * FROM layout_minhash_pairs(t, l.bands, l.rows) EXCEPT SELECT * FROM minhash_pairs('SELECT id::bigint, signature FROM layout_sigs', t))
                              UNION ALL
                              (SELECT * FROM minhash_pairs('SELECT id::bigint, signature FROM layout_sigs', t) EXCEPT SELECT * FROM layout_minhash_pairs(t, l.bands, l.rows))) d) AS different
FROM (VALUES (0.5), (0.8)) v(t), LATERAL minhash_lsh_parameters(t, 64) l ORDER BY t;
SELECT count(*) FROM minhash_pairs_distributed('layout_sigs', 'id', 'signature', 0.5);
SELECT minhash_band_key('{1,2,3}', 2, 1);
SELECT minhash_pairs_agg(id, signature, 0.5, 4, (id % 2)::integer) FROM layout_sigs;
-- The last band number, whose end (band + 1) * rows does not fit in an integer.
SELECT minhash_band_key('{1,2,3}', 1, 2147483647);
SELECT minhash_pairs_agg(id, signature, 0.5, 1, 2147483647) FROM layout_sigs;
SELECT * FROM minhash_lsh_parameters(0, 64);
-- minhash() makes at most 8192 slots; the search over (bands, rows) grows with the slots.
SELECT * FROM minhash_lsh_parameters(0.5, 8192);
SELECT * FROM minhash_lsh_parameters(0.5, 8193);
SELECT count(*) FROM minhash_pairs('SELECT g::bigint, array_fill(g % 2, ARRAY[8193]) FROM generate_series(1, 4) g', 0.5);
SELECT count(*) FROM minhash_pairs('SELECT g::bigint, array_fill(g % 2, ARRAY[8193]) FROM generate_series(1, 4) g', 0.5,
                                   bands => 64, "rows" => 128);
-- The aggregates check what minhash_pairs checks: the threshold, and ids (a row never pairs with itself).
SELECT minhash_pairs_agg(id, signature, -5, 4, 0) FROM layout_sigs;
SELECT minhash_pairs_agg(id, signature, 'NaN', 4, 0) FROM layout_sigs;
SELECT minhash_pairs_agg(1, signature, 0.5, 4, 0) FROM layout_sigs;
SELECT * FROM minhash_pairs_distributed('layout_sigs', 'id', 'signature', 0.5, 4);
DROP FUNCTION layout_minhash_pairs(float8, integer, integer);
DROP TABLE layout_sigs;

-- Errors.
SELECT simhash_pairs_key(1, 3, 5, 1, 0);
SELECT simhash_pairs_key(1, 3, 4, 1, 4);
SELECT simhash_pairs_key(1, 3, NULL, 1, 0);
SELECT simhash_pairs_reports(1, 2, 65, 66, 1, 0);
SELECT * FROM simhash_pairs_layout(-1, 3);
SELECT * FROM simhash_pairs_layout(100, 70);
SELECT * FROM simhash_pairs_layout(100, 3, 0);
SELECT * FROM simhash_pairs_layout(1000000, 30, 4);
SELECT * FROM simhash_pairs_distributed('layout_docs', 'id', NULL, 3);
SELECT simhash_pairs_agg(id, fp, 3, 4, 1, (id % 2)::integer) FROM layout_docs;
SELECT simhash_pairs_agg(s.id, s.fp, 3, 4, 1, 0) FROM (VALUES (1::bigint, 5::bigint), (1, 5)) s(id, fp);
-- Also when the rows of the repeated id are far apart (each would pair with id 2 alone).
SELECT simhash_pairs_agg(s.id, s.fp, 3, 4, 1, 0) FROM (VALUES (1::bigint, 0::bigint), (1, 15), (2, 3)) s(id, fp);

DROP FUNCTION layout_pairs(integer, integer, integer, integer);
DROP FUNCTION layout_pairs_agg(integer, integer, integer, integer);
DROP TABLE layout_docs, layouts;
