-- A document gets the same fingerprint in a non-UTF8 database: text is converted to UTF-8 first.
SELECT simhash('Crème brûlée à la façon de Noël') AS utf8_fp,
       simhash_shingles('Crème BRÛLÉE à la façon') AS utf8_shingles \gset
CREATE DATABASE simhash_latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
\c simhash_latin1
SET client_encoding = 'UTF8';
CREATE EXTENSION simhash;
SELECT simhash('Crème brûlée à la façon de Noël') = :utf8_fp AS same_fingerprint,
       simhash_shingles('Crème BRÛLÉE à la façon') AS latin1_shingles,
       simhash_shingles('Crème BRÛLÉE à la façon')::text = :'utf8_shingles' AS same_shingles;
SELECT minhash('Crème brûlée', slots => 4) AS latin1_minhash;
-- Case folding can leave the database encoding: MICRO SIGN folds to GREEK SMALL LETTER MU, which
-- LATIN1 cannot hold. simhash() hashes it all the same; listing the shingle is refused, saying why.
SELECT simhash('5 µg') <> 0 AS hashed;
SELECT simhash_shingles('5 µg', 'char', 1);
\c contrib_regression
SELECT minhash('Crème brûlée', slots => 4) AS utf8_minhash;
DROP DATABASE simhash_latin1;
