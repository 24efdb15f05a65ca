-- Very large documents: a 540 MB text is fingerprinted in bounded memory (the shingle window
-- keeps only the tokens a future shingle can use), with the same result as a short text whose
-- shingles have the same relative frequencies.
SELECT simhash(repeat('lorem ipsum dolor ', 30000000)) = simhash(repeat('lorem ipsum dolor ', 3)) AS same_as_short;
SELECT (minhash(repeat('lorem ipsum dolor ', 6000000), slots => 4)) = minhash('lorem ipsum dolor lorem ipsum dolor', slots => 4) AS same_set;
-- A single 200 MB "word" is one token.
SELECT simhash(repeat('a', 200000000)) = simhash(simhash_shingles(repeat('a', 200000000))) AS one_token;

-- Cancelling: work on one document polls for interrupts, so a statement timeout stops it within
-- a fraction of a millisecond instead of after the whole document. Each statement passes the
-- function's result to setval(): sequences are not transactional, so `returned` keeps the value
-- of any call that returned before the cancel was raised. The documents are built from a table
-- at run time (constant arguments would be folded at plan time).
CREATE TEMP TABLE copies (n int);
INSERT INTO copies VALUES (30000000);
CREATE TEMP TABLE feature_sets AS
SELECT array_agg(g::text) AS features, array_to_tsvector(array_agg(to_hex(g))) AS lexemes
FROM generate_series(1, 150000) g;
-- 6.9 MB of numbers, no shingle repeated (a signature skips the slot updates of a repeat).
CREATE TEMP TABLE distinct_words AS SELECT string_agg(g::text, ' ') AS body FROM generate_series(1, 1000000) g;
CREATE SEQUENCE returned;
SET statement_timeout = '100ms';
-- 540 MB, default options.
SELECT setval('returned', 1 + 0 * simhash(repeat('lorem ipsum dolor ', n))) FROM copies;
-- 36 MB of character 64-grams.
SELECT setval('returned', 1 + 0 * simhash(repeat('lorem ipsum dolor ', n / 15), unit => 'char', size => 64)) FROM copies;
-- 6.9 MB, 8192 slots.
SELECT setval('returned', cardinality(minhash(body, slots => 8192))) FROM distinct_words;
-- 540 MB, one-bit MinHash.
SELECT setval('returned', 1 + 0 * minhash64(repeat('lorem ipsum dolor ', n))) FROM copies;
-- 150,000 features or lexemes, 8192 slots.
SELECT setval('returned', cardinality(minhash(features, slots => 8192))) FROM feature_sets;
SELECT setval('returned', cardinality(minhash(lexemes, slots => 8192))) FROM feature_sets;
-- 5 MB in 64-word shingles: 345 MB of text[].
SELECT setval('returned', cardinality(simhash_shingles(repeat('lorem ipsum dolor ', n / 100), size => 64))) FROM copies;
-- The LSH banding search for the longest signatures (about 0.4 s).
SELECT setval('returned', (minhash_lsh_parameters(0.5, 8192)).bands) FROM copies;
RESET statement_timeout;
SELECT last_value, is_called AS any_returned FROM returned;

-- simhash_shingles refuses a result beyond 1 GB, the largest array PostgreSQL can hold, as soon
-- as its count gets there (instead of building several gigabytes of copies first).
\set VERBOSITY default
SELECT simhash_shingles(repeat('abcd efgh ', n / 15), size => 64) FROM copies;
\set VERBOSITY terse
CREATE FUNCTION pg_temp.sqlstate_of(statement text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN EXECUTE statement; RETURN 'no error'; EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE; END $$;
SELECT pg_temp.sqlstate_of($$SELECT simhash_shingles(repeat('abcd efgh ', n / 15), size => 64) FROM copies$$);
-- Within the limit the array is built in place; it holds exactly the shingles simhash() hashes.
SELECT cardinality(s) AS shingles, pg_column_size(s) AS bytes, simhash(s) = simhash(repeat('lorem ipsum dolor ', n / 3000), size => 64) AS same
FROM (SELECT simhash_shingles(repeat('lorem ipsum dolor ', n / 3000), size => 64) AS s, n FROM copies) t;
