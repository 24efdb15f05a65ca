-- The README's Getting started example, verbatim: the first thing a user runs must show
-- near-duplicates found.
CREATE TABLE docs (id bigserial PRIMARY KEY, body text NOT NULL, fp bigint);
INSERT INTO docs (body) VALUES
  ('PostgreSQL is a powerful, open source object-relational database system with over 35 years of '
   'active development that has earned it a strong reputation for reliability, feature robustness, '
   'and performance. There is a wealth of information to be found describing how to install and use '
   'PostgreSQL through the official documentation. Read 311 times.'),
  -- a mirror: the same words, shouted, with other punctuation
  ('POSTGRESQL IS A POWERFUL OPEN SOURCE OBJECT-RELATIONAL DATABASE SYSTEM WITH OVER 35 YEARS OF '
   'ACTIVE DEVELOPMENT THAT HAS EARNED IT A STRONG REPUTATION FOR RELIABILITY; FEATURE ROBUSTNESS; '
   'AND PERFORMANCE!!! THERE IS A WEALTH OF INFORMATION TO BE FOUND DESCRIBING HOW TO INSTALL AND USE '
   'POSTGRESQL THROUGH THE OFFICIAL DOCUMENTATION... READ 311 TIMES'),
  -- the same page a day later: its counter moved
  ('PostgreSQL is a powerful, open source object-relational database system with over 35 years of '
   'active development that has earned it a strong reputation for reliability, feature robustness, '
   'and performance. There is a wealth of information to be found describing how to install and use '
   'PostgreSQL through the official documentation. Read 428 times.'),
  ('We all scream for ice cream, and the ice cream truck comes around every afternoon at four.');
UPDATE docs SET fp = simhash(body);

-- Copies: within 3 bits.
SELECT a.id, b.id, hamming(a.fp, b.fp) AS bits
FROM docs a JOIN docs b ON a.id < b.id
WHERE hamming(a.fp, b.fp) <= 3;

-- Edited copies sit further apart: a radius of 8-12 finds them (see "Choosing k").
SELECT a.id, b.id, hamming(a.fp, b.fp) AS bits
FROM docs a JOIN docs b ON a.id < b.id
WHERE hamming(a.fp, b.fp) <= 10
ORDER BY bits, a.id, b.id;

-- Unrelated documents differ in about half the bits.
SELECT hamming(a.fp, b.fp) AS unrelated_bits FROM docs a, docs b WHERE a.id = 1 AND b.id = 4;

-- One-bit MinHash fingerprints put edited copies closer.
SELECT a.id, b.id, hamming(minhash64(a.body), minhash64(b.body)) AS bits
FROM docs a JOIN docs b ON a.id < b.id
WHERE hamming(minhash64(a.body), minhash64(b.body)) <= 10
ORDER BY bits, a.id, b.id;

DROP TABLE docs;
