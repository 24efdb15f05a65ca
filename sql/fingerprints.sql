-- simhash(): golden values, options, equivalences, NULL and empty input, errors.
-- The golden values are a compatibility promise: users store fingerprints.

SELECT doc, simhash(doc)
FROM (VALUES ('the cat sat on the mat'), ('the cat sat on a mat'), ('we all scream for ice cream'),
             ('近重复文档检测是搜索引擎的重要问题'), ('SimHash 算法 by Charikar, 2002'), ('x'), (''),
             ('  ...!!!  ')) AS t(doc);

-- simhash(doc) of 0.2.0 and older (word 3-shingles, every occurrence voting) stays reachable, with
-- the same values as then, so fingerprints stored earlier can still be compared.
SELECT doc, simhash(doc, 'word', 3, 'count')
FROM (VALUES ('the cat sat on the mat'), ('the cat sat on a mat'), ('we all scream for ice cream'),
             ('近重复文档检测是搜索引擎的重要问题'), ('SimHash 算法 by Charikar, 2002'), ('x'), (''),
             ('  ...!!!  ')) AS t(doc);

-- Options by name; the defaults are unit => 'word', size => 2, weighting 'set'.
SELECT simhash('The quick brown fox jumps over the lazy dog') = simhash('The quick brown fox jumps over the lazy dog', 'word', 2) AS defaults,
       simhash('The quick brown fox jumps over the lazy dog') = simhash('The quick brown fox jumps over the lazy dog', 'word', 2, 'set') AS set_votes;
SELECT simhash('The quick brown fox jumps over the lazy dog', size => 1) AS word1,
       simhash('The quick brown fox jumps over the lazy dog', unit => 'char', size => 4) AS char4;

-- The exact features: normalized, space-joined token n-grams (CJK: one token per character).
SELECT simhash_shingles('Hello, WORLD! Ｆｕｌｌ width; ÉCOLE — 你好世界');
SELECT simhash_shingles('Hello, WORLD!', unit => 'char', size => 3);
SELECT simhash_shingles('one two', size => 3) AS shorter_than_one_shingle, simhash_shingles('') AS empty;
-- simhash(doc) is the SimHash of the set of those shingles; with 'count' votes, of all of them.
SELECT simhash(d) = simhash(ARRAY(SELECT DISTINCT unnest(simhash_shingles(d)))) AS set_of_shingles,
       simhash(d, 'word', 2, 'count') = simhash(simhash_shingles(d)) AS every_shingle
FROM (VALUES ('the cat sat on the mat'), ('近重复文档检测是搜索引擎的重要问题'), ('a'), ('to be or not to be, to be')) AS t(d);

-- Votes: a repeated shingle votes once ('set'), 1 + ln(count) times ('log') or count times.
SELECT simhash('to be to be') = simhash('to be to be to be to be') AS set_ignores_repeats,
       simhash(d, 'word', 2, 'log') = simhash(f, ARRAY(SELECT 1 + ln(n) FROM unnest(n_of) n)) AS log_weights,
       simhash(d, 'word', 2, 'count') = simhash(simhash_shingles(d)) AS count_weights
FROM (VALUES ('to be or not to be that is the question to be')) AS t(d),
LATERAL (SELECT array_agg(s ORDER BY s) AS f, array_agg(c ORDER BY s) AS n_of
         FROM (SELECT s, count(*) AS c FROM unnest(simhash_shingles(d)) s GROUP BY s) g) AS x;

-- Case, punctuation and whitespace do not matter; words do.
SELECT simhash('The Cat, sat on the MAT!') = simhash('the cat sat on the mat') AS normalized,
       hamming(simhash('the cat sat on the mat'), simhash('the cat sat on a mat')) AS one_word_edit;

-- Exact set similarity of two documents' shingles (word 3-shingles by default, as minhash()).
SELECT shingle_jaccard('the cat sat on the mat', 'the cat sat on a mat') AS jaccard_word3,
       shingle_jaccard('the cat sat on the mat', 'the cat sat on a mat', 'word', 1) AS jaccard_word1,
       shingle_containment('the cat sat', 'yesterday the cat sat on the mat') AS contained,
       shingle_containment('yesterday the cat sat on the mat', 'the cat sat') AS containing,
       shingle_jaccard('', '...') AS both_empty, shingle_containment('', 'abc') AS empty_contained,
       shingle_jaccard('abc', '') AS one_empty;
-- minhash_jaccard estimates it.
SELECT abs(minhash_jaccard(minhash(a, slots => 1024), minhash(b, slots => 1024)) - shingle_jaccard(a, b)) < 0.05 AS estimated
FROM (SELECT string_agg('w' || (g % 97), ' ') AS a, string_agg('w' || (g % 89), ' ') AS b FROM generate_series(1, 2000) g) t;

-- NULL in, NULL out; empty text and text without tokens give 0.
SELECT simhash(NULL::text) IS NULL AS null_doc, simhash('abc', NULL, 3) IS NULL AS null_unit,
       simhash('') AS empty, simhash(' ,.;') AS separators_only;

-- Feature arrays: weight 1 each; NULL elements skipped; weights.
SELECT simhash(ARRAY['apple', 'banana', 'cherry']) AS unweighted,
       simhash(ARRAY['apple', 'banana', 'cherry'], ARRAY[1, 1, 1]::float8[]) AS weights_one,
       simhash(ARRAY['apple', NULL, 'banana', 'cherry']) AS with_null,
       simhash(ARRAY['apple', 'banana', 'cherry'], ARRAY[5, 0.5, 0.25]) AS weighted,
       simhash(ARRAY[]::text[]) AS no_features;

-- tsvector: text search configurations apply (stemming, stop words); weights are positions.
SELECT simhash(to_tsvector('english', 'The cats were running quickly')) =
       simhash(to_tsvector('english', 'A cat runs quick')) AS stemmed_equal,
       simhash(to_tsvector('english', 'The cats were running quickly')) AS english,
       simhash(strip(to_tsvector('english', 'cats cats dogs'))) AS stripped;

-- simhash_agg over a group equals simhash() of the array of the same features.
CREATE TABLE features (doc int, feature text, weight float8);
INSERT INTO features VALUES (1, 'apple', 5), (1, 'banana', 0.5), (1, 'cherry', 0.25),
                            (2, 'apple', 1), (2, NULL, 1), (2, 'pear', 2);
SELECT doc, simhash_agg(feature) AS unweighted, simhash_agg(feature, weight) AS weighted
FROM features GROUP BY doc ORDER BY doc;
SELECT simhash_agg(feature, weight) = simhash(ARRAY['apple', 'banana', 'cherry'], ARRAY[5, 0.5, 0.25]) AS agg_matches
FROM features WHERE doc = 1;
SELECT simhash_agg(feature) IS NULL AS no_rows FROM features WHERE false;
-- A group without a feature that counts (NULL features, NULL weights) gives NULL, as every
-- aggregate over no input does; a feature of weight 0 counts (and votes for no bit).
SELECT doc, simhash_agg(feature) AS unweighted, simhash_agg(feature, weight) AS weighted
FROM (VALUES (1, NULL::text, 1::float8), (1, NULL, NULL), (2, 'apple', NULL), (3, 'apple', 0)) AS t(doc, feature, weight)
GROUP BY doc ORDER BY doc;

-- The same through parallel plans: partial aggregates in the workers, then the serial, deserial
-- and combine functions.
CREATE TABLE parallel_features (doc int, feature text, weight float8) WITH (parallel_workers = 2);
INSERT INTO parallel_features
SELECT g % 3, CASE WHEN g % 3 = 0 THEN NULL ELSE 'feature ' || g % 7 END, g % 5
FROM generate_series(1, 30000) g;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT simhash_agg(feature) FROM parallel_features WHERE doc = 0;
SELECT simhash_agg(feature) AS unweighted, simhash_agg(feature, weight) AS weighted
FROM parallel_features WHERE doc = 0;
SELECT simhash_agg(feature) AS unweighted, simhash_agg(feature, weight) AS weighted
FROM parallel_features WHERE doc = 1;
-- Votes that overflow in a worker or when the workers' votes are combined.
SELECT simhash_agg('same feature', 1e308) FROM parallel_features;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
-- The same rows in a plain plan give the same answers.
SELECT simhash_agg(feature) AS unweighted, simhash_agg(feature, weight) AS weighted
FROM parallel_features WHERE doc = 1;

-- Errors: each says what to do.
\set VERBOSITY default
SELECT simhash('abc', size => 0);
SELECT simhash('abc', size => 65);
SELECT simhash('abc', unit => 'words');
SELECT simhash_shingles('abc', unit => 'token');
SELECT simhash('abc', 'word', 2, 'tf');
SELECT shingle_jaccard('abc', 'abd', size => 0);
-- set and log votes count a document's distinct shingles in memory, up to 8,388,608 of them.
SELECT simhash(string_agg(md5(g::text), ''), 'char', 8, 'set') FROM generate_series(1, 270000) g;
SELECT simhash(ARRAY['a', 'b'], ARRAY[1.0]);
SELECT simhash(ARRAY['a', 'b'], ARRAY[1.0, NULL]);
SELECT simhash(ARRAY['a', 'b'], ARRAY[1.0, 'NaN']);
SELECT simhash(ARRAY['a', 'b'], ARRAY[1.0, 'Infinity']);
SELECT simhash_agg(feature, 'NaN') FROM features;
-- Finite weights whose sum on a bit overflows double precision.
SELECT simhash(ARRAY['a', 'a'], ARRAY[1e308, 1e308]);
SELECT simhash_agg(feature, 1e308) FROM features;
\set VERBOSITY terse

-- Deterministic: the same input, the same fingerprint, whatever the row or the plan.
SELECT count(DISTINCT simhash('determinism ' || (g % 3))) FROM generate_series(1, 300) g;

-- The SQLSTATE of each error above.
CREATE FUNCTION pg_temp.sqlstate_of(statement text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN EXECUTE statement; RETURN 'no error'; EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE; END $$;
SELECT statement, pg_temp.sqlstate_of(statement) FROM (VALUES
    ($$SELECT simhash('abc', size => 0)$$), ($$SELECT simhash('abc', unit => 'words')$$),
    ($$SELECT simhash('abc', 'word', 2, 'tf')$$),
    ($$SELECT simhash(string_agg(md5(g::text), ''), 'char', 8, 'set') FROM generate_series(1, 270000) g$$),
    ($$SELECT simhash(ARRAY['a', 'b'], ARRAY[1.0])$$), ($$SELECT simhash(ARRAY['a', 'b'], ARRAY[1.0, NULL])$$),
    ($$SELECT simhash(ARRAY['a', 'b'], ARRAY[1.0, 'NaN'])$$), ($$SELECT simhash_agg(feature, 'NaN') FROM features$$),
    ($$SELECT simhash(ARRAY['a', 'a'], ARRAY[1e308, 1e308])$$), ($$SELECT simhash_agg(feature, 1e308) FROM features$$)) AS t(statement);
