-- hamming(): exact bit counts, the hamming_distance domain, the planner rewrite, hamming_ball.

SELECT a, b, hamming(a, b)
FROM (VALUES (0::bigint, 0::bigint), (0, 1), (-1, 0), (-1, 9223372036854775807),
             (-9223372036854775808, 9223372036854775807), (6148914691236517205, -6148914691236517206),
             (1234567890123, 1234567890124)) AS t(a, b);
SELECT hamming(NULL, 1) IS NULL AS null_in;

-- The domain behaves as an integer everywhere; clients receive an int4.
SELECT pg_typeof(hamming(1, 2)), hamming(1, 2) + 1 AS plus, hamming(1, 3) * 2 AS times,
       hamming(7, 0)::int AS cast_int, hamming(1, 3) = 1 AS eq, hamming(1, 3) <> 2 AS ne,
       hamming(1, 3) <= 1.5 AS numeric_cmp, hamming(1, 3) <= 2::int8 AS int8_cmp, hamming(1, 3) <= '1' AS unknown_cmp;
SELECT x, hamming(x, 0) FROM generate_series(0, 4) x ORDER BY hamming(x, 0) DESC, x;

-- Every comparison, both operand orders, agrees with integer comparison.
SELECT k,
       hamming(7, 0) < k AS lt, hamming(7, 0) <= k AS le, hamming(7, 0) > k AS gt, hamming(7, 0) >= k AS ge,
       k > hamming(7, 0) AS c_lt, k >= hamming(7, 0) AS c_le, k < hamming(7, 0) AS c_gt, k <= hamming(7, 0) AS c_ge,
       hamming_within(7, 0, k) AS within
FROM (VALUES (-2147483648), (-1), (0), (2), (3), (4), (64), (2147483647)) AS t(k);

-- The planner rewrites comparisons with a radius into hamming_within() (indexable).
CREATE TABLE fps (id int, fp bigint);
INSERT INTO fps SELECT g, hashint8(g::bigint)::bigint << 32 | hashint8(-g::bigint)::bigint & 4294967295 FROM generate_series(1, 200) g;
EXPLAIN (COSTS OFF) SELECT id FROM fps WHERE hamming(fp, 42) <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM fps WHERE hamming(fp, 42) < 3;
EXPLAIN (COSTS OFF) SELECT id FROM fps WHERE 3 >= hamming(42, fp);
EXPLAIN (COSTS OFF) SELECT id FROM fps WHERE 3 > hamming(fp, 42);
EXPLAIN (COSTS OFF) SELECT id FROM fps WHERE hamming(fp, 42) > 3;
PREPARE q(bigint, hamming_distance) AS SELECT id FROM fps WHERE hamming(fp, $1) < $2;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE q(42, 3);
PREPARE untyped AS SELECT count(*) FROM fps WHERE hamming(fp, $1) <= $2;
EXPLAIN (COSTS OFF) EXECUTE untyped(42, 3);
RESET plan_cache_mode;
-- Rewritten or not, results equal those of plain integer comparisons.
SELECT k, (SELECT count(*) FROM fps WHERE hamming(fp, 42) <= k) AS le,
          (SELECT count(*) FROM fps WHERE hamming(fp, 42)::int <= k) AS int_le,
          (SELECT count(*) FROM fps WHERE hamming(fp, 42) < k) AS lt,
          (SELECT count(*) FROM fps WHERE hamming(fp, 42)::int < k) AS int_lt
FROM (VALUES (-1), (0), (20), (28), (32), (64), (100)) AS t(k);

-- hamming_ball: I/O and containment.
SELECT '(-42,3)'::hamming_ball AS ball, hamming_ball(-1, 64) AS everything, center('(5,2)'::hamming_ball), radius('(5,2)'::hamming_ball),
       ' (7,1) '::hamming_ball AS outer_spaces;
-- Whitespace around every field, as composite and range input accept it; = and <>.
SELECT E'( 7 ,\t1 )\n'::hamming_ball AS inner_spaces, E'(\n-3\r,\f2\x0b)'::hamming_ball AS all_kinds,
       '(7,1)'::hamming_ball = ' ( 7 , 1 ) ' AS equal, '(7,1)'::hamming_ball = '(7,2)' AS other_radius,
       '(7,1)'::hamming_ball <> '(8,1)' AS not_equal, hamming_ball(7, 1) = '(7,1)' AS made_equals_typed;
SELECT '( 7 1)'::hamming_ball;
SELECT '(7,1) x'::hamming_ball;
SELECT 3::bigint <@ hamming_ball(0, 2) AS inside, 7::bigint <@ hamming_ball(0, 2) AS outside,
       hamming_ball(0, 2) @> 3::bigint AS commuted, 0::bigint <@ hamming_ball(0, -1) AS negative_radius_is_empty;
\set VERBOSITY default
SELECT 'nonsense'::hamming_ball;
SELECT '(1,2'::hamming_ball;
SELECT '(99999999999999999999,2)'::hamming_ball;
\set VERBOSITY terse

-- The SQLSTATE of each error above.
CREATE FUNCTION pg_temp.sqlstate_of(statement text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN EXECUTE statement; RETURN 'no error'; EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE; END $$;
SELECT statement, pg_temp.sqlstate_of(statement) FROM (VALUES
    ($$SELECT 'nonsense'::hamming_ball$$), ($$SELECT '(99999999999999999999,2)'::hamming_ball$$)) AS t(statement);
