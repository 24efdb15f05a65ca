-- The quality of near_duplicates(), measured: its groups on the six sources of
-- bench/quality_corpus.sql, over eight hash seeds of the candidate fingerprints, with its defaults
-- and with the settings around them, against
--   - the best pipeline of bench/quality.sql: pairs of minhash64 fingerprints within 12 bits whose
--     word 1 MinHash signatures (128 slots) estimate a Jaccard similarity of 0.65 or more;
--   - an exhaustive verifier on the same candidates: every pair within the radius whose exact
--     shingle similarity reaches the threshold (all pairs, no groups).
-- A group (a keeper and its duplicates) says that all its members are near-duplicates of each
-- other: its pairs are scored against the truth (precision, recall and F1 of pairs, as for the
-- pair finders). Run by scripts/quality.sh with :textdir holding the corpus' texts.

\ir quality_corpus.sql

-- Candidate fingerprints: minhash64(body) (seed 0, what near_duplicates computes itself) and the
-- same construction with seven other MinHash seeds (the low bit of each of 64 slots).
CREATE FUNCTION pg_temp.low_bits(sig integer[]) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(bit_or((s & 1)::bigint << (i - 1)::int), 0) FROM unnest(sig) WITH ORDINALITY AS t(s, i) $$;
CREATE TEMP TABLE seeded AS
SELECT d.doc_id, s.seed,
       CASE WHEN s.seed = 0 THEN minhash64(d.body) ELSE pg_temp.low_bits(minhash(d.body, 64, s.seed, 'word', 1)) END AS fp
FROM docs d, generate_series(0, 7) s(seed);
CREATE INDEX ON seeded (seed, doc_id);
ANALYZE seeded;
CREATE TEMP TABLE signatures AS SELECT doc_id, minhash(body, unit => 'word', size => 1) AS sig FROM docs;
CREATE INDEX ON signatures (doc_id);
ANALYZE signatures;

-- The settings evaluated: the defaults (setting 1) and one change at a time around them.
CREATE TEMP TABLE settings (setting int, name text, threshold float8, radius int, measure text, unit text, size int);
INSERT INTO settings VALUES
  (1, 'defaults: jaccard word 1 >= 0.65, radius 10', 0.65, 10, 'jaccard', 'word', 1),
  (2, 'threshold 0.55', 0.55, 10, 'jaccard', 'word', 1),
  (3, 'threshold 0.6', 0.6, 10, 'jaccard', 'word', 1),
  (4, 'threshold 0.7', 0.7, 10, 'jaccard', 'word', 1),
  (5, 'threshold 0.8', 0.8, 10, 'jaccard', 'word', 1),
  (6, 'radius 8', 0.65, 8, 'jaccard', 'word', 1),
  (7, 'radius 12', 0.65, 12, 'jaccard', 'word', 1),
  (8, 'containment word 1 >= 0.8', 0.8, 10, 'containment', 'word', 1),
  (9, 'jaccard word 2 >= 0.5', 0.5, 10, 'jaccard', 'word', 2),
  (10, 'jaccard char 5 >= 0.5', 0.5, 10, 'jaccard', 'char', 5),
  (11, 'jaccard char 5 >= 0.8 (the copyright rule)', 0.8, 10, 'jaccard', 'char', 5);

-- Every setting, seed and source: the groups near_duplicates makes. With seed 0 near_duplicates
-- computes the fingerprints itself (and screens candidates by their sketches); the other seeds
-- hand it theirs. The defaults also run with seed 0's fingerprints handed over (`given`), which
-- shows what the screen changes.
CREATE TEMP TABLE grouped (setting int, seed int, given boolean, source text, id bigint, keeper_id bigint, ms float8);
DO $$
DECLARE s record; seed int; src text; given boolean; t0 timestamptz;
BEGIN
  FOR s IN SELECT * FROM settings ORDER BY setting LOOP
    FOR seed IN 0..7 LOOP
      FOR given IN SELECT g FROM (VALUES (false), (true)) v(g) WHERE (seed = 0 AND NOT g) OR (seed = 0 AND g AND s.setting = 1) OR (seed > 0 AND g) LOOP
        FOR src IN SELECT DISTINCT source FROM docs ORDER BY 1 LOOP
          t0 := clock_timestamp();
          INSERT INTO grouped
          SELECT s.setting, seed, given AND seed = 0, src, n.id, n.keeper_id, NULL
          FROM near_duplicates(CASE WHEN given
                                 THEN format('SELECT d.doc_id, d.body, f.fp FROM docs d JOIN seeded f USING (doc_id) WHERE d.source = %L AND f.seed = %s', src, seed)
                                 ELSE format('SELECT d.doc_id, d.body FROM docs d WHERE d.source = %L', src) END,
                               s.threshold, s.radius, s.measure, s.unit, s.size) n;
          INSERT INTO grouped VALUES (s.setting, seed, given AND seed = 0, src, NULL, NULL,
                                      extract(epoch FROM clock_timestamp() - t0) * 1000);
        END LOOP;
      END LOOP;
    END LOOP;
  END LOOP;
END $$;

-- The pairs a grouping asserts: every pair of members of a group, the keeper included.
CREATE TEMP TABLE group_pairs AS
WITH members AS (
  SELECT setting, seed, given, source, id, keeper_id FROM grouped WHERE id IS NOT NULL
  UNION ALL
  SELECT DISTINCT setting, seed, given, source, keeper_id, keeper_id FROM grouped WHERE id IS NOT NULL)
SELECT a.setting, a.seed, a.given, a.source, least(a.id, b.id)::int AS a, greatest(a.id, b.id)::int AS b
FROM members a JOIN members b
  ON a.setting = b.setting AND a.seed = b.seed AND a.given = b.given AND a.keeper_id = b.keeper_id AND a.id < b.id;

CREATE FUNCTION pg_temp.f1(tp numeric, fp numeric, t numeric) RETURNS numeric LANGUAGE sql IMMUTABLE AS
$$ SELECT round(2 * tp / nullif(2 * tp + fp + (t - tp), 0), 3) $$;

-- Scores of pair sets (method, seed, source): true and false pairs found.
CREATE TEMP TABLE scores (method text, ord int, seed int, source text, tp bigint, fp bigint);
INSERT INTO scores
SELECT 'near_duplicates, ' || s.name || CASE WHEN g.given THEN ', seed 0''s fingerprints handed over' ELSE '' END,
       s.setting * 2 + g.given::int, g.seed, g.source,
       count(*) FILTER (WHERE p.truth), count(*) FILTER (WHERE NOT p.truth)
FROM group_pairs g JOIN settings s USING (setting) JOIN pairs p ON p.a = g.a AND p.b = g.b
GROUP BY 1, 2, 3, 4;

-- Today's best pipeline of bench/quality.sql, and the exhaustive verifier on near_duplicates'
-- default candidates (radius 10, exact word 1 Jaccard >= 0.65 on every pair).
CREATE TEMP TABLE candidates AS
SELECT f.seed, d.source, least(p.id_a, p.id_b)::int AS a, greatest(p.id_a, p.id_b)::int AS b, p.distance
FROM (SELECT DISTINCT seed FROM seeded) f, (SELECT DISTINCT source FROM docs) d,
     LATERAL simhash_pairs(format('SELECT s.doc_id::bigint, s.fp FROM seeded s JOIN docs d USING (doc_id) WHERE s.seed = %s AND d.source = %L',
                                  f.seed, d.source), 12) p;
INSERT INTO scores
SELECT 'pairs: minhash64 within 12, word 1 MinHash estimate >= 0.65 (bench/quality.sql''s best)', 0, c.seed, c.source,
       count(*) FILTER (WHERE p.truth), count(*) FILTER (WHERE NOT p.truth)
FROM candidates c JOIN pairs p ON p.a = c.a AND p.b = c.b
JOIN signatures sa ON sa.doc_id = c.a JOIN signatures sb ON sb.doc_id = c.b
WHERE minhash_jaccard(sa.sig, sb.sig) >= 0.65 GROUP BY 3, 4;
INSERT INTO scores
SELECT 'pairs: minhash64 within 10, exact word 1 Jaccard >= 0.65 on every pair (exhaustive)', 1, c.seed, c.source,
       count(*) FILTER (WHERE p.truth), count(*) FILTER (WHERE NOT p.truth)
FROM candidates c JOIN pairs p ON p.a = c.a AND p.b = c.b
JOIN docs da ON da.doc_id = c.a JOIN docs db ON db.doc_id = c.b
WHERE c.distance <= 10 AND shingle_jaccard(da.body, db.body, 'word', 1) >= 0.65 GROUP BY 3, 4;

-- F1 per method, seed and source (sources without a pair found score 0), and overall.
CREATE TEMP TABLE f1s AS
WITH methods AS (SELECT DISTINCT method, ord, seed FROM scores),
per_source AS (
  SELECT m.method, m.ord, m.seed, t.source, coalesce(s.tp, 0) AS tp, coalesce(s.fp, 0) AS fp, t.t
  FROM methods m CROSS JOIN truths t LEFT JOIN scores s ON s.method = m.method AND s.seed = m.seed AND s.source = t.source)
SELECT method, ord, seed, source, pg_temp.f1(tp, fp, t) AS f1, tp, fp, t FROM per_source
UNION ALL
SELECT method, ord, seed, 'overall', pg_temp.f1(sum(tp), sum(fp), sum(t)), sum(tp), sum(fp), sum(t)
FROM per_source GROUP BY 1, 2, 3;

\echo '== near_duplicates: F1 of the pairs its groups assert, mean over 8 hash seeds of the candidate fingerprints (min..max), per source and overall'
SELECT method,
       max(x) FILTER (WHERE source = 'faq-en') AS faq_en, max(x) FILTER (WHERE source = 'faq-zh') AS faq_zh,
       max(x) FILTER (WHERE source = 'reference-zh') AS reference_zh, max(x) FILTER (WHERE source = 'copyright') AS copyright,
       max(x) FILTER (WHERE source = 'reference-en') AS reference_en, max(x) FILTER (WHERE source = 'python-docs') AS python_docs,
       max(x) FILTER (WHERE source = 'overall') AS overall
FROM (SELECT method, ord, source,
             round(avg(f1), 3) || CASE WHEN count(*) > 1 THEN ' (' || min(f1) || '..' || max(f1) || ')' ELSE '' END AS x
      FROM f1s GROUP BY 1, 2, 3) t
GROUP BY method, ord ORDER BY ord;

\echo '== The defaults against bench/quality.sql''s best pipeline, seed by seed: F1 difference per source (positive: near_duplicates is better)'
SELECT n.seed, n.source, n.f1 AS near_duplicates, b.f1 AS best_pipeline, n.f1 - b.f1 AS difference,
       e.f1 AS exhaustive_verifier, n.f1 - e.f1 AS against_exhaustive
FROM f1s n JOIN f1s b ON b.ord = 0 AND b.seed = n.seed AND b.source = n.source
JOIN f1s e ON e.ord = 1 AND e.seed = n.seed AND e.source = n.source
WHERE n.ord = 2 ORDER BY n.source, n.seed;

\echo '== The defaults: precision and recall of the asserted pairs, all seeds together'
SELECT source, sum(tp) AS true_pairs_found, sum(fp) AS false_pairs, round(sum(tp)::numeric / nullif(sum(tp + fp), 0), 3) AS precision,
       round(sum(tp)::numeric / sum(t), 3) AS recall
FROM f1s WHERE ord = 2 GROUP BY source ORDER BY source = 'overall', source;

\echo '== Time: near_duplicates over each source, all sources together (ms, mean over the seeds)'
SELECT s.name, g.seed = 0 AND NOT g.given AS fingerprints_computed, round(sum(g.ms)::numeric / count(DISTINCT g.seed)) AS ms
FROM grouped g JOIN settings s USING (setting) WHERE g.id IS NULL GROUP BY s.setting, s.name, 2 ORDER BY s.setting, 2 DESC;
