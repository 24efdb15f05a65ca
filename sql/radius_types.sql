-- A radius and a query fingerprint of any integer type reach the index: drivers bind small
-- integers as int2 (psycopg 3) and longs as int8 (JDBC setLong, Go int64); so does a double
-- precision radius (a Python float, JDBC setDouble), compared exactly (<= 3.7 is <= 3). Every form
-- returns what a sequential scan of the same comparison returns, including radii that do not fit
-- a hamming distance. A numeric radius (a decimal, or a Python int beyond int8) is numeric's own
-- comparison: exact, but not indexed.
CREATE TABLE rt_docs (id int, fp bigint);
INSERT INTO rt_docs SELECT g, hashint8extended(g, 3) FROM generate_series(1, 20000) g;
INSERT INTO rt_docs SELECT 100000 + d, 987654321 # ~(-1::bigint << d) FROM generate_series(0, 64) d;
CREATE INDEX rt_docs_fp ON rt_docs USING simhash (fp);
ANALYZE rt_docs;

-- Which scan answers, and how many rows.
CREATE FUNCTION rt_plan(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('enable_indexscan', 'on', true);
    PERFORM set_config('enable_bitmapscan', 'on', true);
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        IF line LIKE '%rt_docs_fp%' THEN RETURN 'index'; END IF;
    END LOOP;
    RETURN 'no index';
END $$;
CREATE FUNCTION rt_count(query text, use_index boolean) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    PERFORM set_config('enable_seqscan', (NOT use_index)::text, true);
    PERFORM set_config('enable_indexscan', use_index::text, true);
    PERFORM set_config('enable_bitmapscan', use_index::text, true);
    EXECUTE query INTO n;
    RETURN n;
END $$;

-- Literal radii of every type, in every comparison form that is a ball.
SELECT k, replace(format(form, 'id', 'k'), 'SELECT id FROM rt_docs WHERE ', '') AS form, rt_plan(format(form, 'id', k)) AS plan,
       rt_count(format(form, 'count(*)', k), true) AS by_index,
       rt_count(format(form, 'count(*)', k), false) AS by_scan
FROM (VALUES ('3::smallint'), ('3'), ('3::bigint'), ('3::numeric'), ('3.5'), ('3::float8'), ('3.7::float8')) r(k),
     (VALUES ('SELECT %s FROM rt_docs WHERE hamming(fp, 987654321) <= %s'),
             ('SELECT %s FROM rt_docs WHERE hamming(fp, 987654321) < %s'),
             ('SELECT %s FROM rt_docs WHERE %2$s >= hamming(fp, 987654321)'),
             ('SELECT %s FROM rt_docs WHERE %2$s > hamming(fp, 987654321)')) f(form)
ORDER BY k, form;

-- The comparison is rewritten to hamming_within(), never left to a built-in integer operator.
EXPLAIN (COSTS OFF) SELECT id FROM rt_docs WHERE hamming(fp, 987654321) <= 3::smallint;
EXPLAIN (COSTS OFF) SELECT id FROM rt_docs WHERE hamming(fp, 987654321) < 3::bigint;
EXPLAIN (COSTS OFF) SELECT id FROM rt_docs WHERE hamming(fp, 987654321) <= 3.7::float8;
EXPLAIN (COSTS OFF) SELECT id FROM rt_docs WHERE 3.0::float8 > hamming(fp, 987654321);
-- A numeric radius: numeric's operator, as EXPLAIN shows; cast the radius to integer to index it.
EXPLAIN (COSTS OFF) SELECT id FROM rt_docs WHERE 3.5 >= hamming(fp, 987654321);
EXPLAIN (COSTS OFF) SELECT id FROM rt_docs WHERE hamming(fp, 987654321) <= 3.5::integer;

-- The extension's operators leave every other integer and numeric comparison as it was (an
-- operator for (hamming_distance, numeric) would make integer < numeric ambiguous).
SELECT 1 < 1.5 AS int_numeric, 2::smallint < 3::bigint AS int2_int8, 5 <= 2::bigint AS int4_int8,
       7::bigint > 3::smallint AS int8_int2, 1.5 > 1 AS numeric_int, '4' < 5::smallint AS unknown_int2;
-- Nor do the double precision ones: an integer, smallint, bigint, numeric, real or unknown
-- compared with a float8 is PostgreSQL's float8 comparison, as before.
SELECT 1 < 1.5::float8 AS int_float8, 2::smallint <= 2.5::float8 AS int2_float8, 3::bigint >= 2.5::float8 AS int8_float8,
       4.5::float8 > 4 AS float8_int, 1.5::numeric < 2::float8 AS numeric_float8, 1::real < 2 AS real_int,
       '4' < 5.5::float8 AS unknown_float8, 2147483647 < 'Infinity'::float8 AS int_infinity;
EXPLAIN (COSTS OFF, VERBOSE) SELECT 1 FROM rt_docs WHERE id < 1.5::float8 AND id::smallint <= 2.5::float8;

-- Radii that do not fit: the same rows as the plain comparison (the distance cast to integer
-- first, which no operator of the extension sees).
SELECT k, op, rt_count(format('SELECT count(*) FROM rt_docs WHERE hamming(fp, 987654321) %s %s', op, k), true) AS by_index,
       rt_count(format('SELECT count(*) FROM rt_docs WHERE hamming(fp, 987654321)::integer::numeric %s %s', op, k), false) AS truth
FROM (VALUES ('9000000000000000000::bigint'), ('(-9000000000000000000)::bigint'), ('9223372036854775807::bigint'),
             ('(-9223372036854775808)::bigint'), ('(-32768)::smallint'), ('32767::smallint'), ('65::bigint'),
             ('64::bigint'), ('0::bigint'), ('(-1)::bigint'), ('NULL::bigint'), ('NULL::smallint'),
             ('1.5::numeric'), ('2.9999999999999999999::numeric'), ('''NaN''::numeric'),
             ('2.5::float8'), ('2.9999999::float8'), ('(-0.5)::float8'), ('64.5::float8'), ('1e300::float8'),
             ('''Infinity''::float8'), ('''-Infinity''::float8'), ('NULL::float8')) r(k),
     (VALUES ('<='), ('<')) o(op)
ORDER BY k, op;

-- A NaN radius is refused, by the index and by a scan alike (PostgreSQL's float order would put
-- it above every distance).
SELECT count(*) FROM rt_docs WHERE hamming(fp, 987654321) <= 'NaN'::float8;
SELECT rt_count('SELECT count(*) FROM rt_docs WHERE hamming(fp, 987654321) < ''NaN''::float8', false);
SELECT 'NaN'::float8 >= hamming(1, 2);

-- Typed parameters in a generic plan (what a driver's prepared statement gets): radius and query
-- fingerprint of each integer type, and a double precision radius.
SET plan_cache_mode = force_generic_plan;
PREPARE rt_int2(bigint, smallint) AS SELECT count(*) FROM rt_docs WHERE hamming(fp, $1) <= $2;
PREPARE rt_int8(bigint, bigint) AS SELECT count(*) FROM rt_docs WHERE hamming(fp, $1) < $2;
PREPARE rt_query_int4(integer, integer) AS SELECT count(*) FROM rt_docs WHERE hamming(fp, $1) <= $2;
PREPARE rt_query_int2(smallint, smallint) AS SELECT count(*) FROM rt_docs WHERE hamming($1, fp) <= $2;
PREPARE rt_float8(bigint, float8) AS SELECT count(*) FROM rt_docs WHERE hamming(fp, $1) <= $2;
PREPARE rt_float8_below(bigint, float8) AS SELECT count(*) FROM rt_docs WHERE $2 > hamming(fp, $1);
EXPLAIN (COSTS OFF) EXECUTE rt_int2(987654321, 3);
EXPLAIN (COSTS OFF) EXECUTE rt_int8(987654321, 4);
EXPLAIN (COSTS OFF) EXECUTE rt_query_int4(7, 40);
EXPLAIN (COSTS OFF) EXECUTE rt_query_int2(7, 40);
EXPLAIN (COSTS OFF) EXECUTE rt_float8(987654321, 3.7);
EXPLAIN (COSTS OFF) EXECUTE rt_float8_below(987654321, 4.0);
SET enable_seqscan = off;
EXECUTE rt_int2(987654321, 3);
EXECUTE rt_int8(987654321, 4);
EXECUTE rt_int8(987654321, 9000000000000000000);
EXECUTE rt_query_int4(7, 40);
EXECUTE rt_query_int2(7, 40);
EXECUTE rt_float8(987654321, 3.7);
EXECUTE rt_float8_below(987654321, 4.0);
EXECUTE rt_float8(987654321, 'Infinity');
EXECUTE rt_float8(987654321, 'NaN');
RESET enable_seqscan;
RESET plan_cache_mode;
SELECT count(*) FILTER (WHERE hamming(fp, 987654321)::integer <= 3) AS r3,
       count(*) FILTER (WHERE hamming(fp, 987654321)::integer <= 40) AS r40_of_987654321,
       count(*) FILTER (WHERE hamming(fp, 7)::integer <= 40) AS r40_of_7,
       count(*) AS everything
FROM rt_docs;

DEALLOCATE ALL;
DROP TABLE rt_docs;
DROP FUNCTION rt_plan(text), rt_count(text, boolean);
