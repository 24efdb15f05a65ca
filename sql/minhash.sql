-- minhash(): signatures, Jaccard estimates, merging, errors.

SELECT array_length(minhash('the cat sat on the mat'), 1) AS default_slots,
       array_length(minhash('the cat sat on the mat', slots => 16), 1) AS sixteen;

-- Golden values (compatibility promise): the first slots with the default seed and seed 42.
SELECT (minhash('the cat sat on the mat'))[1:6] AS seed0,
       (minhash('the cat sat on the mat', seed => 42))[1:6] AS seed42,
       (minhash('近重复文档检测是搜索引擎的重要问题', slots => 4)) AS chinese;

-- Identical sets give 1, disjoint sets nearly 0; a known Jaccard of 9/11 = 0.818 is estimated.
SELECT minhash_jaccard(minhash('a b c d e f g h i j', size => 1), minhash('j i h g f e d c b a', size => 1)) AS same_set,
       minhash_jaccard(minhash('a b c d e f g h i j', size => 1), minhash('k l m n o p q r s t', size => 1)) AS disjoint,
       round(minhash_jaccard(minhash('a b c d e f g h i j', size => 1), minhash('a b c d e f g h i k', size => 1))::numeric, 3) AS nine_of_eleven;

-- Feature arrays and tsvectors are sets: order and duplicates do not matter.
SELECT minhash(ARRAY['x', 'y', 'z']) = minhash(ARRAY['z', 'y', 'x', 'x', NULL]) AS set_semantics,
       minhash(to_tsvector('english', 'cats running')) = minhash(to_tsvector('english', 'running cat')) AS tsvector_set;

-- Empty set: every slot is 0xFFFFFFFF (-1 as integer).
SELECT minhash('', slots => 4) AS empty, minhash(ARRAY[]::text[], slots => 4) AS empty_array;

-- Merging: the signature of a union is the element-wise minimum.
SELECT minhash_merge(minhash(ARRAY['a', 'b', 'c']), minhash(ARRAY['c', 'd'])) = minhash(ARRAY['a', 'b', 'c', 'd']) AS merge_is_union;

-- NULL in, NULL out.
SELECT minhash(NULL::text) IS NULL AS null_doc, minhash_jaccard(NULL, minhash('a')) IS NULL AS null_sig;

-- Errors.
\set VERBOSITY default
SELECT minhash('abc', slots => 0);
SELECT minhash('abc', slots => 8193);
SELECT minhash('abc', size => 0);
SELECT minhash_jaccard(minhash('abc', slots => 64), minhash('abc', slots => 128));
SELECT minhash_jaccard(ARRAY[1, NULL, 3], ARRAY[1, 2, 3]);
SELECT minhash_jaccard(ARRAY[[1, 2], [3, 4]], ARRAY[1, 2, 3, 4]);
SELECT minhash_jaccard(ARRAY[]::int[], ARRAY[]::int[]);
SELECT minhash_merge(ARRAY[1, 2], ARRAY[1, 2, 3]);
\set VERBOSITY terse

-- The SQLSTATE of each error above.
CREATE FUNCTION pg_temp.sqlstate_of(statement text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN EXECUTE statement; RETURN 'no error'; EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE; END $$;
SELECT statement, pg_temp.sqlstate_of(statement) FROM (VALUES
    ($$SELECT minhash('abc', slots => 0)$$), ($$SELECT minhash('abc', size => 0)$$),
    ($$SELECT minhash_jaccard(minhash('abc', slots => 64), minhash('abc', slots => 128))$$),
    ($$SELECT minhash_jaccard(ARRAY[1, NULL, 3], ARRAY[1, 2, 3])$$)) AS t(statement);
