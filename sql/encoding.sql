-- A document gets the same fingerprint in a non-UTF8 database: text is converted to UTF-8 first.
SELECT simhash('Crème brûlée à la façon de Noël') AS utf8_fp,
       minhash64('Crème brûlée à la façon de Noël') AS utf8_minhash64,
       simhash_shingles('Crème BRÛLÉE à la façon') AS utf8_shingles \gset
CREATE DATABASE simhash_latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
\c simhash_latin1
SET client_encoding = 'UTF8';
CREATE EXTENSION simhash;
SELECT simhash('Crème brûlée à la façon de Noël') = :utf8_fp AS same_fingerprint,
       minhash64('Crème brûlée à la façon de Noël') = :utf8_minhash64 AS same_minhash64,
       simhash_shingles('Crème BRÛLÉE à la façon') AS latin1_shingles,
       simhash_shingles('Crème BRÛLÉE à la façon')::text = :'utf8_shingles' AS same_shingles;
SELECT minhash('Crème brûlée', slots => 4) AS latin1_minhash;
-- near_duplicates compares the UTF-8 text too: case folds as in UTF-8, so 2 has the words of 1.
SELECT * FROM near_duplicates($$VALUES (1, 'Crème brûlée à la façon de Noël'), (2, 'CRÈME BRÛLÉE À LA FAÇON DE NOËL!'),
                                       (3, 'Crème brûlée, façon de Noël')$$);
-- Case folding can leave the database encoding: MICRO SIGN folds to GREEK SMALL LETTER MU, which
-- LATIN1 cannot hold. simhash() hashes it all the same; listing the shingle is refused, saying why.
SELECT simhash('5 µg') <> 0 AS hashed;
SELECT simhash_shingles('5 µg', 'char', 1);
\c contrib_regression
SELECT minhash('Crème brûlée', slots => 4) AS utf8_minhash;
DROP DATABASE simhash_latin1;

-- A character the database accepts without a Unicode mapping (WIN1252's 0x81) reads as U+FFFD, as
-- an invalid UTF-8 sequence does, instead of failing the call.
SELECT simhash('caf' || U&'\FFFD' || ' au lait, café au lait') AS replaced_fp,
       minhash('caf' || U&'\FFFD' || ' au lait, café au lait', slots => 4)::text AS replaced_minhash,
       minhash64('caf' || U&'\FFFD' || ' au lait, café au lait') AS replaced_minhash64 \gset
CREATE DATABASE simhash_win1252 ENCODING 'WIN1252' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
\c simhash_win1252
SET client_encoding = 'UTF8';
CREATE EXTENSION simhash;
CREATE TABLE unmapped AS SELECT convert_from('\x63616681206175206c6169742c20636166e9206175206c616974'::bytea, 'WIN1252') AS body;
SELECT simhash(body) = :replaced_fp AS same_as_replacement_char,
       minhash(body, slots => 4)::text = :'replaced_minhash' AS same_minhash,
       minhash64(body) = :replaced_minhash64 AS same_minhash64,
       simhash_shingles(body, 'char', 3) AS shingles,
       shingle_jaccard(body, body) AS self_jaccard
FROM unmapped;
\c contrib_regression
DROP DATABASE simhash_win1252;

-- MULE_INTERNAL has no conversion to UTF-8: ASCII text is read as it is, other text is refused.
SELECT simhash('plain ascii text') AS ascii_fp, minhash64('plain ascii text') AS ascii_minhash64, simhash_shingles('plain ascii text', 'char', 4)::text AS ascii_shingles \gset
CREATE DATABASE simhash_mule ENCODING 'MULE_INTERNAL' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
\c simhash_mule
CREATE EXTENSION simhash;
SELECT simhash('plain ascii text') = :ascii_fp AS same_fp, minhash64('plain ascii text') = :ascii_minhash64 AS same_minhash64,
       simhash_shingles('plain ascii text', 'char', 4)::text = :'ascii_shingles' AS same_shingles,
       simhash('') AS empty;
\set VERBOSITY default
SELECT simhash(convert_from('\x63616681e9'::bytea, 'MULE_INTERNAL'));  -- "café", é as MULE's LATIN1
\set VERBOSITY terse
\c contrib_regression
DROP DATABASE simhash_mule;

-- An error message quotes a long argument by its first bytes, cut on a character boundary, and
-- its length.
DO $$
BEGIN
    PERFORM simhash('x', 'x' || repeat('ワ', 300), 2);
EXCEPTION WHEN invalid_parameter_value THEN
    RAISE NOTICE 'message of % bytes: %', octet_length(SQLERRM), left(SQLERRM, 40);
END $$;
