-- near_duplicates(): one call deduplicates the documents of a query; every duplicate is verified
-- against its keeper, groups never chain.
\set VERBOSITY default

CREATE TABLE nd_docs (id bigint PRIMARY KEY, body text);
INSERT INTO nd_docs VALUES
  (1, 'PostgreSQL is a powerful, open source object-relational database system with over 35 years of active development.'),
  -- a mirror: the same words, other case and punctuation (the same shingles)
  (2, 'POSTGRESQL IS A POWERFUL OPEN SOURCE OBJECT-RELATIONAL DATABASE SYSTEM WITH OVER 35 YEARS OF ACTIVE DEVELOPMENT!!!'),
  -- an edit: two words changed
  (3, 'PostgreSQL is a powerful, free and open source object-relational database system with 35 years of active development.'),
  (4, 'We all scream for ice cream, and the ice cream truck comes around every afternoon at four.'),
  -- a byte-identical copy of 4
  (5, 'We all scream for ice cream, and the ice cream truck comes around every afternoon at four.'),
  (6, 'An entirely different sentence about the weather on the coast, where it rains most of the year.'),
  (7, NULL);

-- Each duplicate with the smallest id of its group as its keeper, and their word 1-shingle Jaccard.
SELECT * FROM near_duplicates('SELECT id, body FROM nd_docs') ORDER BY id;
-- The similarity is the exact one: shingle_jaccard of the two documents.
SELECT n.id, n.keeper_id, n.similarity = shingle_jaccard(d.body, k.body, 'word', 1) AS exact
FROM near_duplicates('SELECT id, body FROM nd_docs') n JOIN nd_docs d ON d.id = n.id JOIN nd_docs k ON k.id = n.keeper_id
ORDER BY n.id;
-- Keep the first row in the query's order instead: "keep the newest" is an ORDER BY.
SELECT * FROM near_duplicates('SELECT id, body FROM nd_docs ORDER BY id DESC', keeper => 'first') ORDER BY id;
-- Stricter or looser: the threshold, another measure, other shingles.
SELECT * FROM near_duplicates('SELECT id, body FROM nd_docs', threshold => 0.9) ORDER BY id;
SELECT * FROM near_duplicates('SELECT id, body FROM nd_docs', threshold => 0.8, measure => 'containment') ORDER BY id;
SELECT * FROM near_duplicates('SELECT id, body FROM nd_docs', threshold => 0.5, unit => 'char', size => 5) ORDER BY id;
-- Removing the duplicates is one statement.
CREATE TABLE nd_copy AS SELECT * FROM nd_docs;
DELETE FROM nd_copy USING near_duplicates('SELECT id, body FROM nd_copy') d WHERE nd_copy.id = d.id;
SELECT id FROM nd_copy ORDER BY id;

-- Groups never chain: b is within the threshold of a and c of b, but c not of a. c is compared
-- with its candidate b's keeper, a, and keeps.
CREATE TABLE nd_chain (id int, body text);
INSERT INTO nd_chain
SELECT i, (SELECT string_agg('w' || w, ' ') FROM generate_series(i * 4, i * 4 + 19) w) FROM generate_series(0, 5) i;
SELECT a.id AS a, b.id AS b, round(shingle_jaccard(a.body, b.body, 'word', 1)::numeric, 3) AS jaccard,
       hamming(minhash64(a.body), minhash64(b.body)) AS bits
FROM nd_chain a JOIN nd_chain b ON a.id < b.id WHERE b.id - a.id <= 2 ORDER BY 1, 2;
SELECT * FROM near_duplicates('SELECT id, body FROM nd_chain', threshold => 0.6, radius => 64) ORDER BY id;
-- simhash_groups 'connected' joins the whole chain at the same distances.
SELECT count(DISTINCT group_id) AS connected_groups
FROM simhash_groups('SELECT id, minhash64(body) FROM nd_chain', 64, 'connected');

-- Stored fingerprints and signatures are used instead of computing them: the same groups from
-- minhash64 given as a column; MinHash signatures compared by their estimate (no text needed).
SELECT * FROM near_duplicates('SELECT id, body, minhash64(body) FROM nd_docs') ORDER BY id;
SELECT * FROM near_duplicates('SELECT id, minhash64(body), minhash(body, unit => ''word'', size => 1) FROM nd_docs', threshold => 0.5)
ORDER BY id;
SELECT * FROM near_duplicates('SELECT id, minhash(body, unit => ''word'', size => 1), body, minhash64(body) FROM nd_docs', threshold => 0.5)
ORDER BY id;

-- The same decisions as a reference written in SQL: candidate pairs within the radius by
-- simhash_pairs, read by (lower id, higher id); the lower one keeps unless decided, the higher one
-- joins the lower one's keeper when their exact Jaccard reaches the threshold. 3,000 documents
-- in 300 families of edits of one text (word 1 Jaccard 0.5 to 1 within a family) and their
-- copies.
CREATE TABLE nd_many AS
SELECT f * 10 + e AS id,
       (SELECT string_agg(CASE WHEN (w + e * 7) % 13 < e THEN 'x' || f || '_' || w || '_' || e ELSE 'f' || f || 'w' || w END, ' ')
        FROM generate_series(1, 40) w) AS body
FROM generate_series(1, 300) f, generate_series(0, 9) e;
UPDATE nd_many SET body = (SELECT body FROM nd_many m WHERE m.id = nd_many.id - 1) WHERE id % 10 = 9;
CREATE FUNCTION pg_temp.reference_duplicates(threshold float8, radius int)
RETURNS TABLE (id bigint, keeper_id bigint, similarity float8) LANGUAGE plpgsql AS $$
DECLARE
  p record; k bigint; s float8;
BEGIN
  CREATE TEMP TABLE ref_keeper (doc bigint PRIMARY KEY, keeper bigint) ON COMMIT DROP;
  FOR p IN SELECT id_a, id_b FROM simhash_pairs('SELECT id, minhash64(body) FROM nd_many', radius) ORDER BY id_a, id_b LOOP
    INSERT INTO ref_keeper VALUES (p.id_a, p.id_a) ON CONFLICT DO NOTHING;
    CONTINUE WHEN EXISTS (SELECT FROM ref_keeper WHERE doc = p.id_b);
    SELECT keeper INTO k FROM ref_keeper WHERE doc = p.id_a;
    s := shingle_jaccard((SELECT body FROM nd_many WHERE nd_many.id = k), (SELECT body FROM nd_many WHERE nd_many.id = p.id_b), 'word', 1);
    IF s >= threshold THEN
      INSERT INTO ref_keeper VALUES (p.id_b, k);
      id := p.id_b; keeper_id := k; similarity := s;
      RETURN NEXT;
    END IF;
  END LOOP;
  DROP TABLE ref_keeper;
END $$;
CREATE TABLE nd_reference AS SELECT * FROM pg_temp.reference_duplicates(0.65, 10);
SELECT count(*) AS duplicates, count(DISTINCT keeper_id) AS keepers, min(similarity) >= 0.65 AS all_verified FROM nd_reference;
-- Fingerprints given (every candidate compared), computed (sketches screen the candidates), and
-- both beyond memory: the same rows as the reference.
SELECT (SELECT count(*) FROM (SELECT * FROM near_duplicates('SELECT id, body, minhash64(body) FROM nd_many')
                              EXCEPT SELECT * FROM nd_reference) x) AS given_not_in_reference,
       (SELECT count(*) FROM (SELECT * FROM nd_reference
                              EXCEPT SELECT * FROM near_duplicates('SELECT id, body, minhash64(body) FROM nd_many')) x) AS reference_not_given,
       (SELECT count(*) FROM (SELECT * FROM near_duplicates('SELECT id, body FROM nd_many')
                              EXCEPT SELECT * FROM nd_reference) x) AS computed_not_in_reference,
       (SELECT count(*) FROM (SELECT * FROM nd_reference
                              EXCEPT SELECT * FROM near_duplicates('SELECT id, body FROM nd_many')) x) AS reference_not_computed,
       (SELECT count(*) FROM (SELECT * FROM near_duplicates('SELECT id, body FROM nd_many', memory_limit => '256kB')
                              EXCEPT SELECT * FROM nd_reference) x) AS spilled_not_in_reference,
       (SELECT count(*) FROM (SELECT * FROM nd_reference
                              EXCEPT SELECT * FROM near_duplicates('SELECT id, body FROM nd_many', memory_limit => '256kB')) x) AS reference_not_spilled;
-- No keeper is a duplicate, and every duplicate is within the threshold of its keeper (no chain).
SELECT count(*) FILTER (WHERE n.keeper_id IN (SELECT id FROM near_duplicates('SELECT id, body FROM nd_many'))) AS keepers_that_are_duplicates,
       count(*) FILTER (WHERE shingle_jaccard(d.body, k.body, 'word', 1) < 0.65) AS below_threshold
FROM near_duplicates('SELECT id, body FROM nd_many') n JOIN nd_many d ON d.id = n.id JOIN nd_many k ON k.id = n.keeper_id;

-- Texts without words are duplicates of each other (both shingle sets empty, similarity 1);
-- rows with a NULL document are left out with a notice; one row or none makes no pairs.
SELECT * FROM near_duplicates($$VALUES (1, ''), (2, '...'), (3, NULL::text), (4, 'words')$$) ORDER BY id;
-- Under containment too, a text without words duplicates only another one.
SELECT * FROM near_duplicates($$VALUES (1, 'hello world foo'), (2, ''), (3, '...')$$, measure => 'containment', radius => 64)
ORDER BY id;
SELECT * FROM near_duplicates('SELECT 1, ''alone''');
SELECT * FROM near_duplicates('SELECT id, body FROM nd_docs WHERE false');
SELECT * FROM near_duplicates($$VALUES (1, 'a b', NULL::bigint), (2, 'a b', 0::bigint)$$);
-- Ids of every integer width and their domains; varchar documents.
CREATE DOMAIN nd_id AS smallint;
SELECT * FROM near_duplicates($$VALUES (1::nd_id, 'same words here'::varchar), (2::nd_id, 'same words here!'::varchar)$$);
-- A query that modifies data: duplicates leave a staging table as they are found.
CREATE TABLE nd_staging AS SELECT * FROM nd_docs;
SELECT * FROM near_duplicates('DELETE FROM nd_staging WHERE id > 3 RETURNING id, body') ORDER BY id;
SELECT count(*) AS left_in_staging FROM nd_staging;

-- Refusals.
SELECT * FROM near_duplicates('SELECT id FROM nd_docs');
SELECT * FROM near_duplicates('SELECT id, body, body FROM nd_docs');
SELECT * FROM near_duplicates('SELECT id, id::numeric FROM nd_docs');
SELECT * FROM near_duplicates('SELECT body, body FROM nd_docs');
SELECT * FROM near_duplicates('SELECT id, minhash64(body) FROM nd_docs');
SELECT * FROM near_duplicates('SELECT 7, ''a'' UNION ALL SELECT 7, ''b''');
SELECT * FROM near_duplicates('SELECT NULL::int, ''a''');
SELECT * FROM near_duplicates('SELECT id, body FROM nd_docs', threshold => 1.5);
SELECT * FROM near_duplicates('SELECT id, body FROM nd_docs', threshold => 'NaN');
SELECT * FROM near_duplicates('SELECT id, body FROM nd_docs', radius => 65);
SELECT * FROM near_duplicates('SELECT id, body FROM nd_docs', measure => 'cosine');
SELECT * FROM near_duplicates('SELECT id, body FROM nd_docs', unit => 'line');
SELECT * FROM near_duplicates('SELECT id, body FROM nd_docs', size => 0);
SELECT * FROM near_duplicates('SELECT id, body FROM nd_docs', keeper => 'last');
SELECT * FROM near_duplicates('SELECT id, body FROM nd_docs', memory_limit => '1kB');
SELECT * FROM near_duplicates('SELECT id, minhash64(body), minhash(body) FROM nd_docs', measure => 'containment');
SELECT * FROM near_duplicates($$VALUES (1, 1::bigint, ARRAY[1, 2]), (2, 1::bigint, ARRAY[1, 2, 3])$$);
SELECT * FROM near_duplicates('SELECT id, body FROM nd_many', memory_limit => '64kB');
SELECT * FROM near_duplicates(NULL);
SELECT * FROM near_duplicates('SELECT id, body FROM nd_docs', threshold => NULL);
SELECT * FROM near_duplicates('SELECT id, body FROM nd_docs', keeper => NULL);

-- The SQLSTATE of each refusal above.
CREATE FUNCTION pg_temp.sqlstate_of(statement text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN EXECUTE statement; RETURN 'no error'; EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE; END $$;
SELECT statement, pg_temp.sqlstate_of(statement) FROM (VALUES
  ('SELECT near_duplicates(''SELECT id FROM nd_docs'')'),
  ('SELECT near_duplicates(''SELECT id, body, body FROM nd_docs'')'),
  ('SELECT near_duplicates(''SELECT 7, ''''a'''' UNION ALL SELECT 7, ''''b'''''')'),
  ('SELECT near_duplicates(''SELECT NULL::int, ''''a'''''')'),
  ('SELECT near_duplicates(''SELECT id, body FROM nd_docs'', threshold => 1.5)'),
  ('SELECT near_duplicates(''SELECT id, body FROM nd_docs'', radius => -1)'),
  ('SELECT near_duplicates(''SELECT id, body FROM nd_docs'', measure => ''cosine'')'),
  ('SELECT near_duplicates(''SELECT id, body FROM nd_docs'', keeper => ''last'')'),
  ('SELECT near_duplicates(''SELECT id, body FROM nd_many'', memory_limit => ''64kB'')'),
  ('SELECT near_duplicates(NULL)')) s(statement);

-- Cancelled in the middle of a run: the statement stops, nothing leaks.
SET statement_timeout = '200ms';
SELECT count(*) FROM near_duplicates('SELECT g, repeat(''word'' || g % 1000 || '' '', 100) FROM generate_series(1, 1000000) g');
RESET statement_timeout;
\set VERBOSITY terse
