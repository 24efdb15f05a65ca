-- Very large documents: a 540 MB text is fingerprinted in bounded memory (the shingle window
-- keeps only the tokens a future shingle can use), with the same result as a short text whose
-- shingles have the same relative frequencies.
SELECT simhash(repeat('lorem ipsum dolor ', 30000000)) = simhash(repeat('lorem ipsum dolor ', 3)) AS same_as_short;
SELECT (minhash(repeat('lorem ipsum dolor ', 6000000), slots => 4)) = minhash('lorem ipsum dolor lorem ipsum dolor', slots => 4) AS same_set;
-- A single 200 MB "word" is one token.
SELECT simhash(repeat('a', 200000000)) = simhash(simhash_shingles(repeat('a', 200000000))) AS one_token;
