-- The table every client test builds, in a schema of its own that the test creates and puts first
-- on search_path (the extension stays where it is, usually public): 20,000 pseudo-random
-- fingerprints plus two planted clusters of near-duplicates. Row 100000 + d (d = 0..12) is
-- d bits from the query fingerprint -7046029254386353131 (needs int8), row 200000 + d is d bits
-- from the query fingerprint 1000 (fits int2): the low d bits are flipped, so two rows of one
-- cluster are |d1 - d2| bits apart and simhash_pairs(..., 3) finds 2 x (12 + 11 + 10) = 66 pairs.
CREATE TABLE docs (id integer PRIMARY KEY, fp bigint NOT NULL);
INSERT INTO docs SELECT g, hashint8extended(g, 0) FROM generate_series(1, 20000) g;
INSERT INTO docs SELECT c.base + d, c.fp # ((1::bigint << d) - 1)
FROM (VALUES (100000, -7046029254386353131), (200000, 1000)) c(base, fp), generate_series(0, 12) d;
CREATE INDEX docs_fp_idx ON docs USING simhash (fp);
ANALYZE docs;
