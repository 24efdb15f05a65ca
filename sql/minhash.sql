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

-- One-bit MinHash fingerprints: bit i is the low bit of slot i of the 64-slot, seed-0 signature
-- of the same shingles (default: word 1-shingles); no shingles give 0, as simhash() does.
CREATE FUNCTION pg_temp.low_bits(sig integer[]) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(bit_or((s & 1)::bigint << (i - 1)::int), 0) FROM unnest(sig) WITH ORDINALITY AS t(s, i) $$;
SELECT minhash64('The quick brown fox jumps over the lazy dog.') AS english,
       minhash64('我们在这里测试中文文本的指纹。') AS chinese,
       minhash64('The quick brown fox jumps over the lazy dog.', 'char', 4) AS english_char4;
SELECT doc, minhash64(doc, unit, size) = pg_temp.low_bits(minhash(doc, 64, 0, unit, size)) AS low_bits_of_minhash
FROM (VALUES ('The quick brown fox jumps over the lazy dog.', 'word', 1),
             ('Hello, WORLD! Ｆｕｌｌ width; ÉCOLE — 你好世界', 'word', 1),
             ('Hello, WORLD! Ｆｕｌｌ width; ÉCOLE — 你好世界', 'char', 5),
             ('to be or not to be', 'word', 3)) AS t(doc, unit, size);
SELECT minhash64('') AS empty, minhash64('?! --') AS no_tokens, minhash64(ARRAY[]::text[]) AS empty_array,
       minhash64(ARRAY[NULL]::text[]) AS only_nulls, minhash64(''::tsvector) AS empty_tsvector;
-- A set: repeats, order and NULL elements do not matter; the array and tsvector forms hash the
-- same features.
SELECT minhash64('b a b a c') = minhash64('a b c') AS repeats,
       minhash64(ARRAY['c', NULL, 'a', 'b', 'a']) = minhash64('a b c') AS array_form,
       minhash64(to_tsvector('simple', 'c a b a')) = minhash64('a b c') AS tsvector_form;
-- Near-duplicates sit close: one word of 21 changed (Jaccard 20/22: 2.9 bits on average, here
-- 0), an unrelated text about half of the bits away.
SELECT hamming(minhash64(a), minhash64(b)) AS edited_bits, hamming(minhash64(a), minhash64(c)) AS unrelated_bits
FROM (VALUES ('one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty twentyone',
              'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty changed',
              'We all scream for ice cream, and the ice cream truck comes around every afternoon at four.')) AS t(a, b, c);
-- Indexed like any fingerprint: hamming(fp, q) <= k uses the index and finds what a sequential
-- scan finds. Documents come in groups of ten that share 60 words, up to 12 of them replaced.
CREATE TABLE m64_docs AS
SELECT i AS id, minhash64(string_agg(CASE WHEN (i * 31 + w * 17) % 97 < i % 13 THEN 'other' || w ELSE 'w' || i / 10 || 'x' || w END, ' ' ORDER BY w)) AS fp
FROM generate_series(1, 2000) i, generate_series(1, 60) w GROUP BY i;
CREATE INDEX m64_docs_fp ON m64_docs USING simhash (fp);
ANALYZE m64_docs;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM m64_docs WHERE hamming(fp, 1234) <= 6;
CREATE TEMP TABLE m64_indexed AS
SELECT q.id AS query, d.id FROM m64_docs q CROSS JOIN LATERAL (SELECT id FROM m64_docs d WHERE hamming(d.fp, q.fp) <= 6) d WHERE q.id % 50 = 0;
RESET enable_seqscan;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT (SELECT count(*) FROM m64_indexed) AS indexed_rows,
       (SELECT count(*) FROM (SELECT q.id, d.id FROM m64_docs q JOIN m64_docs d ON hamming(d.fp, q.fp) <= 6 WHERE q.id % 50 = 0
                              EXCEPT SELECT * FROM m64_indexed) x) AS missing,
       (SELECT count(*) FROM (SELECT * FROM m64_indexed
                              EXCEPT SELECT q.id, d.id FROM m64_docs q JOIN m64_docs d ON hamming(d.fp, q.fp) <= 6 WHERE q.id % 50 = 0) x) AS extra;
RESET enable_indexscan;
RESET enable_bitmapscan;
DROP TABLE m64_docs;
SELECT minhash64(NULL::text) IS NULL AS null_doc, minhash64(NULL::text[]) IS NULL AS null_array;
\set VERBOSITY default
SELECT minhash64('abc', 'line', 1);
SELECT minhash64('abc', 'word', 65);
\set VERBOSITY terse
SELECT statement, pg_temp.sqlstate_of(statement) FROM (VALUES
    ($$SELECT minhash64('abc', 'line', 1)$$), ($$SELECT minhash64('abc', 'word', 0)$$)) AS t(statement);
