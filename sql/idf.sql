-- IDF weights from the table: the simhash_idf aggregate, the shingle_idf dictionary, and
-- simhash(doc, idf) against the same weights computed in SQL.

CREATE TABLE idf_docs (id int, topic text, body text);
-- 600 documents: a shared footer in every one, topic words in a third each, and words of their own.
INSERT INTO idf_docs
SELECT g, 'topic' || (g % 3),
       format('page %s about topic%s: %s %s %s. subscribe now, all rights reserved', g, g % 3,
              'w' || (g * 7 % 101), 'w' || (g * 13 % 211), 'rare' || g)
FROM generate_series(1, 600) g;
INSERT INTO idf_docs VALUES (601, 'none', NULL);

-- N counts documents (not NULLs); shingles in a single document are left out; counts are exact.
SELECT (shingle_idf_info(simhash_idf(body))).* FROM idf_docs;
SELECT (shingle_idf_info(simhash_idf(body, 'char', 4))).* FROM idf_docs;

-- Every weight is ln(N / df), df counted in SQL; df = 1 for shingles the dictionary does not hold.
CREATE TABLE idf_dict AS SELECT simhash_idf(body) AS idf FROM idf_docs;
WITH df AS (
  SELECT s, count(*) AS df
  FROM idf_docs, LATERAL (SELECT DISTINCT unnest(simhash_shingles(body, 'word', 1))) AS t(s)
  GROUP BY s)
SELECT count(*) AS shingles,
       count(*) FILTER (WHERE abs(shingle_idf_weight(d.idf, s) - ln(600.0 / df)) > 1e-12) AS wrong_weights
FROM df, idf_dict d;
SELECT shingle_idf_weight(idf, 'subscribe') AS footer, shingle_idf_weight(idf, 'topic1') AS topic,
       shingle_idf_weight(idf, 'rare7') = ln(600) AS single_document,
       shingle_idf_weight(idf, 'never seen') = ln(600) AS unknown
FROM idf_dict;

-- simhash(doc, idf) is SimHash with (1 + ln tf) * ln(N / df) votes, as the SQL recipe computes them.
WITH tf AS (
  SELECT id, s, count(*) AS n
  FROM idf_docs, unnest(simhash_shingles(body, 'word', 1)) AS s
  GROUP BY id, s),
recipe AS (
  SELECT id, simhash(array_agg(s), array_agg((1 + ln(n)) * shingle_idf_weight(d.idf, s))) AS fp
  FROM tf, idf_dict d GROUP BY id)
SELECT count(*) AS documents, count(*) FILTER (WHERE r.fp <> simhash(i.body, d.idf)) AS different
FROM recipe r JOIN idf_docs i USING (id), idf_dict d;
-- The weighting argument: 'log' is the default; 'set' and 'count' scale ln(N / df) by 1 and tf.
SELECT simhash(body, idf) = simhash(body, idf, 'log') AS log_default,
       simhash(body, idf, 'set') = simhash(ARRAY(SELECT DISTINCT unnest(simhash_shingles(body, 'word', 1))),
                                           ARRAY(SELECT shingle_idf_weight(idf, s) FROM (SELECT DISTINCT unnest(simhash_shingles(body, 'word', 1))) t(s))) AS set_votes
FROM idf_docs, idf_dict WHERE id = 5;
-- IDF weighting moves pages that share only the footer apart (mean distance of consecutive
-- pages, which share no topic) and keeps an edited copy close.
SELECT round(avg(hamming(simhash(a.body, d.idf), simhash(b.body, d.idf)))) AS idf_unrelated,
       round(avg(hamming(simhash(a.body, 'word', 1, 'log'), simhash(b.body, 'word', 1, 'log')))) AS plain_unrelated,
       round(avg(hamming(simhash(a.body, d.idf), simhash(a.body || ' extra', d.idf)))) AS idf_edited
FROM idf_docs a JOIN idf_docs b ON b.id = a.id + 1, idf_dict d WHERE a.id < 600;

-- A dictionary stored in a table (TOASTed) gives what the in-memory one gives, row after row,
-- also when rows take different dictionaries.
SELECT pg_column_size(idf) > 2000 AS toasted FROM idf_dict;
CREATE TABLE idf_topics AS SELECT topic, simhash_idf(body) AS idf FROM idf_docs GROUP BY topic;
SELECT t.topic, (shingle_idf_info(t.idf)).documents, s.same, s.n
FROM idf_topics t,
     LATERAL (SELECT count(*) FILTER (WHERE simhash(i.body, t.idf) = simhash(i.body, (SELECT simhash_idf(body) FROM idf_docs x WHERE x.topic = t.topic))) AS same,
                     count(*) AS n
              FROM idf_docs i WHERE i.topic = t.topic) s
ORDER BY 1;
-- In one scan, rows alternating between two stored dictionaries.
SELECT count(*) FILTER (WHERE simhash(i.body, t.idf) = simhash(i.body, CASE WHEN i.topic = 'topic0' THEN (SELECT idf FROM idf_topics WHERE topic = 'topic0') ELSE (SELECT idf FROM idf_topics WHERE topic = 'topic1') END)) AS same,
       count(*) AS n
FROM idf_docs i JOIN idf_topics t USING (topic) WHERE i.topic IN ('topic0', 'topic1');
SELECT count(*) FILTER (WHERE simhash(i.body, d.idf) = simhash(i.body, (SELECT simhash_idf(body) FROM idf_docs))) AS same
FROM idf_docs i, idf_dict d WHERE i.body IS NOT NULL;

-- Text and binary forms round-trip (pg_dump, COPY).
SELECT idf::text::shingle_idf::text = idf::text AS text_round_trip FROM idf_dict;
CREATE TABLE idf_copy (idf shingle_idf);
DO $$
DECLARE file text := current_setting('data_directory') || '/simhash_idf_regress.bin';  -- overwritten by the next run
BEGIN
    EXECUTE format('COPY idf_dict TO %L WITH (FORMAT binary)', file);
    EXECUTE format('COPY idf_copy FROM %L WITH (FORMAT binary)', file);
END $$;
SELECT c.idf::text = d.idf::text AS binary_round_trip FROM idf_copy c, idf_dict d;

-- Parallel aggregation (partial states merged by the combine function) gives the same dictionary.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT simhash_idf(body) FROM idf_docs;
SELECT simhash_idf(body)::text = (SELECT idf::text FROM idf_dict) AS parallel_same FROM idf_docs;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;

-- No documents: NULL, as aggregates over no input give; and simhash(doc, NULL) is NULL.
SELECT simhash_idf(body) IS NULL AS no_rows FROM idf_docs WHERE false;
SELECT simhash_idf(body) IS NULL AS only_nulls FROM idf_docs WHERE body IS NULL;
SELECT simhash('some text', NULL::shingle_idf) IS NULL AS null_dictionary;
-- The text forms of simhash() still resolve as before.
SELECT simhash('the quick brown fox', 'word') = simhash('the quick brown fox', 'word', 2) AS text_form;

-- A dictionary of one document weighs every shingle ln(1 / 1) = 0: refused, since every
-- fingerprint made with it would be 0. Over more documents, a document whose shingles are all in
-- every one of them (here the shared footer alone) has nothing to tell it apart: 0, as an empty
-- document.
SELECT simhash(body, (SELECT simhash_idf(body) FROM idf_docs WHERE id = 1)) FROM idf_docs WHERE id = 1;
SELECT simhash('anything', simhash_idf(d)) FROM (VALUES ('one document'), (NULL)) v(d);
SELECT shingle_idf_weight(simhash_idf(d), 'one') FROM (VALUES ('one document')) v(d);
SELECT simhash('shared words', simhash_idf(d)) AS all_weights_zero, simhash('', simhash_idf(d)) AS empty,
       simhash('shared words and more', simhash_idf(d)) <> 0 AS with_a_rarer_word
FROM (VALUES ('shared words'), ('shared words')) v(d);

-- Errors.
SELECT simhash_idf(body, 'word', NULL) FROM idf_docs;
SELECT simhash_idf(body, 'syllable', 1) FROM idf_docs;
SELECT simhash_idf(body, CASE WHEN id < 300 THEN 'word' ELSE 'char' END, 2) FROM idf_docs;
SELECT simhash('text', idf, 'tfidf') FROM idf_dict;
SELECT '\x00'::shingle_idf;
SELECT 'not hex'::shingle_idf;
-- A dictionary whose entries are out of order is refused on input.
SELECT overlay(idf::text::bytea PLACING substring(idf::text::bytea FROM 49 FOR 8) FROM 41 FOR 8)::text::shingle_idf
FROM idf_dict;

DROP TABLE idf_docs, idf_dict, idf_topics, idf_copy;
