-- Near-duplicate detection quality on real text, measured: precision, recall and F1 of SimHash
-- and one-bit MinHash fingerprints (`hamming(a, b) <= k`, k = 0..16) under every feature set and
-- vote weighting, over eight hash seeds for the main ones, of MinHash
-- (`minhash_jaccard >= t` on every pair, and LSH through `minhash_pairs`), of an exact Jaccard
-- detector, and of the verified hybrid (SimHash candidates at a generous radius, kept when their
-- exact Jaccard or MinHash estimate passes a threshold, also timed as an application runs it), per
-- source and overall.
--
-- The corpus (six sources of text that Debian ships, and the truth) is bench/quality_corpus.sql.
-- Run by scripts/quality.sh, which lays the texts out in :textdir.

\ir quality_corpus.sql

\echo '== Corpus'
SELECT d.source, count(*) AS documents, round(avg(length(body))) AS avg_chars, t.t AS true_pairs,
       (SELECT count(*) FROM pairs p WHERE p.source = d.source) - t.t AS false_pairs,
       t.content_t AS true_by_content
FROM docs d JOIN truths t USING (source) GROUP BY d.source, t.t, t.content_t ORDER BY d.source;

-- SimHash configurations: every unit/size with each vote weighting, and IDF weights computed
-- from the source's own documents (weight of a shingle in a document: (1 + ln tf) * ln(N / df),
-- the dictionary built by simhash_idf, the fingerprint by simhash(body, idf)).
-- One-bit MinHash fingerprints (minhash64) of every unit/size. seed: 0 for the functions as they
-- are; 1..7 for the same construction with other hashes (below), to show how much of a
-- difference between two feature sets is the luck of one hash.
CREATE TEMP TABLE configs (cfg int, name text, unit text, size int, weighting text, seed int DEFAULT 0);
INSERT INTO configs (cfg, name, unit, size, weighting)
SELECT row_number() OVER (), name, unit, size, weighting FROM (
  SELECT unit || ' ' || size || ', ' || w AS name, unit, size, w AS weighting
  FROM (VALUES ('word', 1), ('word', 2), ('word', 3), ('char', 3), ('char', 4), ('char', 5)) u(unit, size),
       (VALUES ('count'), ('set'), ('log')) w(w)
  UNION ALL
  SELECT unit || ' ' || size || ', log x idf', unit, size, 'idf'
  FROM (VALUES ('word', 1), ('word', 2), ('char', 4)) u(unit, size)
  UNION ALL
  -- Mixed features: word 1-grams with word 2-grams or character 4-grams, each distinct one voting.
  SELECT 'word 1 + ' || unit || ' ' || size || ', set', unit, size, 'mix'
  FROM (VALUES ('word', 2), ('char', 4)) u(unit, size)
  UNION ALL
  -- Digits folded: every run of ASCII digits read as "0" (counters, dates and prices change
  -- between copies of a page), then distinct shingles voting once.
  SELECT unit || ' ' || size || ', set, digits folded', unit, size, 'digits'
  FROM (VALUES ('word', 1), ('word', 2), ('char', 4)) u(unit, size)
  UNION ALL
  SELECT 'minhash64 ' || unit || ' ' || size, unit, size, 'minhash64'
  FROM (VALUES ('word', 1), ('word', 2), ('word', 3), ('char', 3), ('char', 4), ('char', 5)) u(unit, size)) c;
-- Seeds 1..7 of the default SimHash (word 2, set), the textbook SimHash (char 4, set) and the
-- default minhash64 (word 1). A SimHash seed appends a salt to every shingle before it is
-- hashed; a minhash64 seed is minhash()'s seed (the low bit of each of its 64 slots).
INSERT INTO configs
SELECT (SELECT max(cfg) FROM configs) + row_number() OVER (ORDER BY c.cfg, s), c.name, c.unit, c.size, c.weighting, s
FROM configs c, generate_series(1, 7) s
WHERE c.name IN ('word 2, set', 'char 4, set', 'minhash64 word 1');
CREATE FUNCTION pg_temp.low_bits(sig integer[]) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(bit_or((s & 1)::bigint << (i - 1)::int), 0) FROM unnest(sig) WITH ORDINALITY AS t(s, i) $$;

-- IDF dictionaries per source and configuration (simhash_idf), then simhash(body, idf).
CREATE TEMP TABLE idf_dicts AS
SELECT d.source, c.cfg, simhash_idf(d.body, c.unit, c.size) AS idf
FROM docs d, configs c WHERE c.weighting = 'idf' GROUP BY 1, 2;

CREATE TEMP TABLE fingerprints AS
SELECT d.doc_id, c.cfg, simhash(d.body, c.unit, c.size, c.weighting) AS fp
FROM docs d, configs c WHERE c.weighting NOT IN ('idf', 'mix', 'digits', 'minhash64') AND c.seed = 0
UNION ALL
SELECT d.doc_id, c.cfg, simhash(ARRAY(SELECT DISTINCT s || chr(1) || c.seed FROM unnest(simhash_shingles(d.body, c.unit, c.size)) s))
FROM docs d, configs c WHERE c.weighting = 'set' AND c.seed > 0
UNION ALL
SELECT d.doc_id, c.cfg, CASE WHEN c.seed = 0 THEN minhash64(d.body, c.unit, c.size)
                             ELSE pg_temp.low_bits(minhash(d.body, 64, c.seed, c.unit, c.size)) END
FROM docs d, configs c WHERE c.weighting = 'minhash64'
UNION ALL
SELECT d.doc_id, c.cfg, simhash(regexp_replace(d.body, '[0-9]+', '0', 'g'), c.unit, c.size, 'set')
FROM docs d, configs c WHERE c.weighting = 'digits'
UNION ALL
SELECT d.doc_id, c.cfg, simhash(ARRAY(SELECT DISTINCT unnest(simhash_shingles(d.body, 'word', 1) || simhash_shingles(d.body, c.unit, c.size))))
FROM docs d, configs c WHERE c.weighting = 'mix'
UNION ALL
SELECT d.doc_id, i.cfg, simhash(d.body, i.idf)
FROM docs d JOIN idf_dicts i USING (source);
CREATE TEMP TABLE doc_fingerprints AS
SELECT doc_id, array_agg(fp ORDER BY cfg) AS fps FROM fingerprints GROUP BY doc_id;
-- Temporary tables are never analyzed automatically; the joins below need their sizes.
ANALYZE fingerprints;
ANALYZE doc_fingerprints;

-- Distance histograms: one pass over the pairs for every configuration.
CREATE TEMP TABLE simhash_hist AS
SELECT p.source, c.cfg, p.truth, p.content_truth, hamming(a.fps[c.cfg], b.fps[c.cfg]) AS bits, count(*) AS n
FROM pairs p JOIN doc_fingerprints a ON a.doc_id = p.a JOIN doc_fingerprints b ON b.doc_id = p.b,
     configs c
GROUP BY 1, 2, 3, 4, 5;

CREATE TEMP TABLE simhash_quality AS
SELECT h.source, h.cfg, k,
       coalesce(sum(n) FILTER (WHERE truth AND bits <= k), 0) AS tp,
       coalesce(sum(n) FILTER (WHERE NOT truth AND bits <= k), 0) AS fp,
       coalesce(sum(n) FILTER (WHERE content_truth AND bits <= k), 0) AS content_tp,
       coalesce(sum(n) FILTER (WHERE NOT content_truth AND bits <= k), 0) AS content_fp
FROM simhash_hist h, generate_series(0, 16) AS k GROUP BY 1, 2, 3;

CREATE FUNCTION pg_temp.f1(tp numeric, fp numeric, t numeric) RETURNS numeric LANGUAGE sql IMMUTABLE AS
$$ SELECT round(2 * tp / nullif(2 * tp + fp + (t - tp), 0), 3) $$;

-- With :resultsdir set (scripts/quality.sh sets it), precision, recall and F1 of every
-- configuration and seed at every k, per source and overall (derived truth), into
-- :resultsdir/quality_f1_by_k.csv, which bench/plot.sh draws.
\if :{?resultsdir}
SELECT :'resultsdir' || '/quality_f1_by_k.csv' AS quality_csv \gset
\o :quality_csv
COPY (
    WITH per_source AS (
        SELECT c.name AS features, c.seed, q.source, q.k, t.t AS true_pairs, q.tp, q.fp
        FROM simhash_quality q JOIN truths t USING (source) JOIN configs c USING (cfg)),
    both_ AS (
        SELECT * FROM per_source
        UNION ALL
        SELECT features, seed, 'overall', k, sum(true_pairs), sum(tp), sum(fp) FROM per_source GROUP BY features, seed, k)
    SELECT features, seed, source, k, true_pairs, tp, fp,
           round(tp / nullif(tp + fp, 0), 3) AS precision, round(tp / nullif(true_pairs, 0), 3) AS recall,
           pg_temp.f1(tp, fp, true_pairs) AS f1
    FROM both_ ORDER BY features, seed, source, k) TO STDOUT WITH (FORMAT csv, HEADER);
\o
\endif

-- Best F1 per source over k = 0..16, and overall (all sources, one k) at the best k and the best
-- k <= 8, of every configuration, under the derived truth or the content rule.
CREATE FUNCTION pg_temp.simhash_summary(by_content boolean)
RETURNS TABLE (features text, faq_en numeric, faq_zh numeric, reference_zh numeric, copyright numeric,
               reference_en numeric, python_docs numeric,
               overall numeric, at_k int, overall_k_le_8 numeric) LANGUAGE sql AS $$
    WITH q AS (
      SELECT q.source, q.cfg, q.k,
             CASE WHEN by_content THEN q.content_tp ELSE q.tp END AS tp,
             CASE WHEN by_content THEN q.content_fp ELSE q.fp END AS fp,
             CASE WHEN by_content THEN t.content_t ELSE t.t END AS t
      FROM simhash_quality q JOIN truths t USING (source)),
    overall AS (SELECT cfg, k, pg_temp.f1(sum(tp), sum(fp), sum(t)) AS f FROM q GROUP BY cfg, k)
    SELECT c.name,
           max(pg_temp.f1(q.tp, q.fp, q.t)) FILTER (WHERE q.source = 'faq-en'),
           max(pg_temp.f1(q.tp, q.fp, q.t)) FILTER (WHERE q.source = 'faq-zh'),
           max(pg_temp.f1(q.tp, q.fp, q.t)) FILTER (WHERE q.source = 'reference-zh'),
           max(pg_temp.f1(q.tp, q.fp, q.t)) FILTER (WHERE q.source = 'copyright'),
           max(pg_temp.f1(q.tp, q.fp, q.t)) FILTER (WHERE q.source = 'reference-en'),
           max(pg_temp.f1(q.tp, q.fp, q.t)) FILTER (WHERE q.source = 'python-docs'),
           (SELECT max(o.f) FROM overall o WHERE o.cfg = c.cfg),
           (SELECT o.k FROM overall o WHERE o.cfg = c.cfg ORDER BY o.f DESC, o.k LIMIT 1),
           (SELECT max(o.f) FROM overall o WHERE o.cfg = c.cfg AND o.k <= 8)
    FROM q JOIN configs c USING (cfg) WHERE c.seed = 0
    GROUP BY c.cfg, c.name ORDER BY 8 DESC, 1
$$;

\echo '== SimHash: best F1 per source (k = 0..16), and overall at the best k and the best k <= 8'
SELECT * FROM pg_temp.simhash_summary(false);

\echo '== The same under one rule for every source: a pair is true when its character 5-gram Jaccard is >= 0.8'
SELECT * FROM pg_temp.simhash_summary(true);

-- One hash is one draw: over eight seeds, the mean and range of each best F1 (derived truth).
\echo '== Over 8 hash seeds (seed 0 is the function as shipped): best F1 per source and overall at k <= 8, mean (min..max)'
WITH q AS (SELECT q.source, q.cfg, q.k, q.tp, q.fp, t.t FROM simhash_quality q JOIN truths t USING (source)),
per_source AS (SELECT cfg, source, max(pg_temp.f1(tp, fp, t)) AS f FROM q GROUP BY 1, 2),
overall AS (SELECT cfg, 'overall, k <= 8' AS source, max(f) AS f
            FROM (SELECT cfg, k, pg_temp.f1(sum(tp), sum(fp), sum(t)) AS f FROM q WHERE k <= 8 GROUP BY 1, 2) o GROUP BY 1),
both_ AS (SELECT * FROM per_source UNION ALL SELECT * FROM overall)
SELECT c.name AS features, b.source, count(*) AS seeds,
       round(avg(b.f), 3) AS mean_f1, min(b.f) AS min_f1, max(b.f) AS max_f1,
       max(b.f) FILTER (WHERE c.seed = 0) AS seed_0
FROM both_ b JOIN configs c USING (cfg)
WHERE c.name IN (SELECT name FROM configs WHERE seed > 0)
GROUP BY c.name, b.source ORDER BY b.source, mean_f1 DESC;

\echo '== SimHash, the default (word 2, set) against 0.2.0''s default (word 3, count), the textbook SimHash and minhash64 (word 1): overall precision / recall / F1 by k'
SELECT k,
       round(sum(tp) FILTER (WHERE c.name = 'word 2, set') / nullif(sum(tp + fp) FILTER (WHERE c.name = 'word 2, set'), 0), 3) AS precision,
       round(sum(tp) FILTER (WHERE c.name = 'word 2, set') / sum(t.t) FILTER (WHERE c.name = 'word 2, set'), 3) AS recall,
       pg_temp.f1(sum(tp) FILTER (WHERE c.name = 'word 2, set'), sum(fp) FILTER (WHERE c.name = 'word 2, set'), sum(t.t) FILTER (WHERE c.name = 'word 2, set')) AS f1,
       pg_temp.f1(sum(tp) FILTER (WHERE c.name = 'word 3, count'), sum(fp) FILTER (WHERE c.name = 'word 3, count'), sum(t.t) FILTER (WHERE c.name = 'word 3, count')) AS f1_0_2_0,
       pg_temp.f1(sum(tp) FILTER (WHERE c.name = 'char 4, set'), sum(fp) FILTER (WHERE c.name = 'char 4, set'), sum(t.t) FILTER (WHERE c.name = 'char 4, set')) AS f1_textbook_char_4_set,
       round(sum(tp) FILTER (WHERE c.name = 'minhash64 word 1') / nullif(sum(tp + fp) FILTER (WHERE c.name = 'minhash64 word 1'), 0), 3) AS minhash64_precision,
       round(sum(tp) FILTER (WHERE c.name = 'minhash64 word 1') / sum(t.t) FILTER (WHERE c.name = 'minhash64 word 1'), 3) AS minhash64_recall,
       pg_temp.f1(sum(tp) FILTER (WHERE c.name = 'minhash64 word 1'), sum(fp) FILTER (WHERE c.name = 'minhash64 word 1'), sum(t.t) FILTER (WHERE c.name = 'minhash64 word 1')) AS minhash64_f1
FROM simhash_quality q JOIN truths t USING (source) JOIN configs c USING (cfg)
WHERE k IN (3, 6, 8, 10, 12, 14, 16) AND c.seed = 0 GROUP BY k ORDER BY k;

\echo '== Mean distance from the original by kind of near-duplicate: SimHash default (word 2, set) and minhash64 (word 1)'
SELECT d.source, d.kind,
       round(avg(hamming(fa.fp, fo.fp)) FILTER (WHERE c.name = 'word 2, set'), 1) AS simhash_mean_bits,
       round(avg((hamming(fa.fp, fo.fp) <= 8)::int) FILTER (WHERE c.name = 'word 2, set'), 2) AS simhash_within_8,
       round(avg(hamming(fa.fp, fo.fp)) FILTER (WHERE c.name = 'minhash64 word 1'), 1) AS minhash64_mean_bits,
       round(avg((hamming(fa.fp, fo.fp) <= 8)::int) FILTER (WHERE c.name = 'minhash64 word 1'), 2) AS minhash64_within_8
FROM docs d JOIN docs o ON o.source = d.source AND o.base_id = d.base_id AND o.kind = 'original' AND d.kind <> 'original'
JOIN fingerprints fa ON fa.doc_id = d.doc_id JOIN fingerprints fo ON fo.doc_id = o.doc_id AND fo.cfg = fa.cfg
JOIN configs c ON c.cfg = fa.cfg AND c.name IN ('word 2, set', 'minhash64 word 1') AND c.seed = 0
GROUP BY 1, 2 ORDER BY 1, 3;

-- SimHash's distance, predicted. With distinct shingles voting once, bit i of two fingerprints
-- differs with probability theta / pi, theta the angle between their shingle sets (cos theta =
-- |A n B| / sqrt(|A| |B|), the product of the two containments' square roots), and each bit takes
-- its own hash bit of every shingle, so a pair's distance is Binomial(64, theta / pi): the
-- features alone fix the recall of hamming <= k, whatever the hash. Precision is at most 1, so
-- no SimHash of these features reaches an F1 above 2R / (1 + R) at k <= 8, R its recall at k = 8.
CREATE TEMP TABLE binomial64 AS
SELECT i, (factorial(64) / (factorial(i) * factorial(64 - i)))::float8 AS c FROM generate_series(0, 64) i;
CREATE FUNCTION pg_temp.within_k(p float8, k int) RETURNS float8 LANGUAGE sql STABLE AS $$
    SELECT sum(c * p ^ i * (1 - p) ^ (64 - i)) FROM binomial64 WHERE i <= k
$$;
CREATE TEMP TABLE true_pair_angles AS
SELECT c.cfg, c.name, p.source, p.a, p.b, hamming(fa.fp, fb.fp) AS bits,
       acos(least(1, sqrt(shingle_containment(da.body, db.body, c.unit, c.size)
                          * shingle_containment(db.body, da.body, c.unit, c.size)))) / pi() AS p_bit
FROM pairs p JOIN docs da ON da.doc_id = p.a JOIN docs db ON db.doc_id = p.b
JOIN configs c ON c.weighting = 'set' AND c.seed = 0
JOIN fingerprints fa ON fa.doc_id = p.a AND fa.cfg = c.cfg JOIN fingerprints fb ON fb.doc_id = p.b AND fb.cfg = c.cfg
WHERE p.truth;
-- One-bit MinHash: each bit differs with probability (1 - J) / 2, J the exact Jaccard similarity
-- of the two shingle sets.
INSERT INTO true_pair_angles
SELECT c.cfg, c.name, p.source, p.a, p.b, hamming(fa.fp, fb.fp),
       (1 - shingle_jaccard(da.body, db.body, c.unit, c.size)) / 2
FROM pairs p JOIN docs da ON da.doc_id = p.a JOIN docs db ON db.doc_id = p.b
JOIN configs c ON c.weighting = 'minhash64' AND c.seed = 0
JOIN fingerprints fa ON fa.doc_id = p.a AND fa.cfg = c.cfg JOIN fingerprints fb ON fb.doc_id = p.b AND fb.cfg = c.cfg
WHERE p.truth;
-- Real-valued votes (IDF weights) follow the same law with theta the angle between the two weight
-- vectors: each document's weight of each distinct shingle, (1 + ln tf) * ln(N / df) from its
-- source's dictionary, as simhash(body, idf) votes.
CREATE TEMP TABLE idf_weights AS
SELECT t.doc_id, t.cfg, t.shingle, (1 + ln(t.tf)) * shingle_idf_weight(i.idf, t.shingle) AS w
FROM (SELECT d.doc_id, d.source, c.cfg, s.shingle, count(*) AS tf
      FROM docs d JOIN configs c ON c.weighting = 'idf', unnest(simhash_shingles(d.body, c.unit, c.size)) s(shingle)
      GROUP BY 1, 2, 3, 4) t
JOIN idf_dicts i ON i.source = t.source AND i.cfg = t.cfg;
CREATE INDEX ON idf_weights (doc_id, cfg);
ANALYZE idf_weights;
INSERT INTO true_pair_angles
SELECT c.cfg, c.name, p.source, p.a, p.b, hamming(fa.fp, fb.fp),
       CASE WHEN v.norms > 0 THEN acos(least(1, greatest(-1, v.dot / sqrt(v.norms)))) / pi() ELSE 0.5 END
FROM pairs p JOIN configs c ON c.weighting = 'idf'
JOIN fingerprints fa ON fa.doc_id = p.a AND fa.cfg = c.cfg JOIN fingerprints fb ON fb.doc_id = p.b AND fb.cfg = c.cfg
CROSS JOIN LATERAL (
    SELECT coalesce((SELECT sum(wa.w * wb.w) FROM idf_weights wa JOIN idf_weights wb USING (shingle)
                     WHERE wa.doc_id = p.a AND wa.cfg = c.cfg AND wb.doc_id = p.b AND wb.cfg = c.cfg), 0) AS dot,
           coalesce((SELECT sum(w * w) FROM idf_weights WHERE doc_id = p.a AND cfg = c.cfg), 0)
           * coalesce((SELECT sum(w * w) FROM idf_weights WHERE doc_id = p.b AND cfg = c.cfg), 0) AS norms) v
WHERE p.truth;

\echo '== Distance predicted from the shingles (Binomial(64, p): SimHash p = theta / pi, minhash64 p = (1 - J) / 2) against measured, true pairs of all sources'
SELECT name AS features, true_pairs, predicted_mean_bits, measured_mean_bits,
       round(recall_k8::numeric, 3) AS predicted_recall_k8, measured_recall_k8,
       predicted_recall_k14, measured_recall_k14,
       round((2 * recall_k8 / (1 + recall_k8))::numeric, 3) AS f1_bound_k_le_8, share_p_bit_le_0_11
FROM (SELECT cfg, name, count(*) AS true_pairs,
             round(avg(64 * p_bit)::numeric, 1) AS predicted_mean_bits, round(avg(bits), 1) AS measured_mean_bits,
             avg(pg_temp.within_k(p_bit, 8)) AS recall_k8,
             round(avg((bits <= 8)::int), 3) AS measured_recall_k8,
             round(avg(pg_temp.within_k(p_bit, 14))::numeric, 3) AS predicted_recall_k14,
             round(avg((bits <= 14)::int), 3) AS measured_recall_k14,
             round(avg((p_bit <= 0.11)::int), 3) AS share_p_bit_le_0_11
      FROM true_pair_angles GROUP BY cfg, name) per_config
ORDER BY f1_bound_k_le_8 DESC;

\echo '== Distance of two documents by the share of their shingles in common: SimHash (equal sizes: cos theta = 2J / (1 + J)) and minhash64'
SELECT j AS jaccard, round((2 * j / (1 + j))::numeric, 3) AS cos_theta,
       round((64 * acos(2 * j / (1 + j)) / pi())::numeric, 1) AS mean_bits,
       round(pg_temp.within_k(acos(2 * j / (1 + j)) / pi(), 3)::numeric, 3) AS within_3,
       round(pg_temp.within_k(acos(2 * j / (1 + j)) / pi(), 8)::numeric, 3) AS within_8,
       round(pg_temp.within_k(acos(2 * j / (1 + j)) / pi(), 12)::numeric, 3) AS within_12,
       round(pg_temp.within_k(acos(2 * j / (1 + j)) / pi(), 16)::numeric, 3) AS within_16,
       round((32 * (1 - j))::numeric, 1) AS minhash64_mean_bits,
       round(pg_temp.within_k((1 - j) / 2, 3)::numeric, 3) AS minhash64_within_3,
       round(pg_temp.within_k((1 - j) / 2, 8)::numeric, 3) AS minhash64_within_8,
       round(pg_temp.within_k((1 - j) / 2, 12)::numeric, 3) AS minhash64_within_12
FROM unnest(ARRAY[0.98, 0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.3]::float8[]) AS j;

-- MinHash (128 slots) and the exact Jaccard of the same shingles. The exact detector is
-- computed for pairs whose estimate is at least 0.1: with 128 slots, a pair of exact Jaccard
-- 0.3 or more estimates under 0.1 with a probability below 10^-6, and no threshold below 0.3
-- is the best for any source.
CREATE TEMP TABLE minhash_configs (mcfg int, unit text, size int);
INSERT INTO minhash_configs VALUES (1, 'word', 1), (2, 'word', 2), (3, 'word', 3), (4, 'char', 5);
CREATE TEMP TABLE signatures AS
SELECT d.doc_id, m.mcfg, minhash(d.body, unit => m.unit, size => m.size) AS sig FROM docs d, minhash_configs m;
ANALYZE signatures;
CREATE TEMP TABLE jaccard_hist AS
SELECT p.source, a.mcfg, 'minhash' AS method, p.truth, floor(minhash_jaccard(a.sig, b.sig) * 20) / 20 AS j, count(*) AS n
FROM pairs p JOIN signatures a ON a.doc_id = p.a JOIN signatures b ON b.doc_id = p.b AND b.mcfg = a.mcfg
GROUP BY 1, 2, 3, 4, 5;
INSERT INTO jaccard_hist
SELECT p.source, a.mcfg, 'exact', p.truth, floor(shingle_jaccard(da.body, db.body, m.unit, m.size) * 20) / 20, count(*)
FROM pairs p JOIN signatures a ON a.doc_id = p.a JOIN signatures b ON b.doc_id = p.b AND b.mcfg = a.mcfg
JOIN minhash_configs m ON m.mcfg = a.mcfg JOIN docs da ON da.doc_id = p.a JOIN docs db ON db.doc_id = p.b
WHERE minhash_jaccard(a.sig, b.sig) >= 0.1 AND m.mcfg IN (2, 3)
GROUP BY 1, 2, 3, 4, 5;
CREATE TEMP TABLE jaccard_quality AS
SELECT h.source, h.mcfg, h.method, th,
       coalesce(sum(n) FILTER (WHERE truth AND j >= th), 0) AS tp, coalesce(sum(n) FILTER (WHERE NOT truth AND j >= th), 0) AS fp
FROM jaccard_hist h, generate_series(0.1, 0.95, 0.05) AS th GROUP BY 1, 2, 3, 4;

\echo '== MinHash (128 slots) and the exact Jaccard detector: best F1 per source (threshold 0.10..0.95), and overall with one threshold'
SELECT m.unit || ' ' || m.size AS shingles, q.method,
       max(pg_temp.f1(q.tp, q.fp, t.t)) FILTER (WHERE q.source = 'faq-en') AS faq_en,
       max(pg_temp.f1(q.tp, q.fp, t.t)) FILTER (WHERE q.source = 'faq-zh') AS faq_zh,
       max(pg_temp.f1(q.tp, q.fp, t.t)) FILTER (WHERE q.source = 'reference-zh') AS reference_zh,
       max(pg_temp.f1(q.tp, q.fp, t.t)) FILTER (WHERE q.source = 'copyright') AS copyright,
       max(pg_temp.f1(q.tp, q.fp, t.t)) FILTER (WHERE q.source = 'reference-en') AS reference_en,
       max(pg_temp.f1(q.tp, q.fp, t.t)) FILTER (WHERE q.source = 'python-docs') AS python_docs,
       (SELECT max(f) FROM (SELECT pg_temp.f1(sum(tp), sum(fp), sum(t2.t)) AS f FROM jaccard_quality q2 JOIN truths t2 USING (source) WHERE q2.mcfg = q.mcfg AND q2.method = q.method GROUP BY th) o) AS overall
FROM jaccard_quality q JOIN truths t USING (source) JOIN minhash_configs m USING (mcfg)
GROUP BY q.mcfg, m.unit, m.size, q.method ORDER BY q.mcfg, q.method DESC;

\echo '== Verified hybrid: pairs whose default SimHash fingerprints are within k bits, kept when shingle_jaccard (word 3) >= t; overall'
CREATE TEMP TABLE hybrid_candidates AS
SELECT p.source, p.truth, hamming(fa.fp, fb.fp) AS bits, shingle_jaccard(da.body, db.body) AS j
FROM pairs p JOIN fingerprints fa ON fa.doc_id = p.a JOIN fingerprints fb ON fb.doc_id = p.b AND fb.cfg = fa.cfg
JOIN configs c ON c.cfg = fa.cfg AND c.name = 'word 2, set' AND c.seed = 0
JOIN docs da ON da.doc_id = p.a JOIN docs db ON db.doc_id = p.b
WHERE hamming(fa.fp, fb.fp) <= 20;
SELECT k.k AS candidates_within, th.th AS jaccard_at_least,
       count(*) FILTER (WHERE bits <= k.k) AS verified_pairs,
       round(count(*) FILTER (WHERE bits <= k.k) * 100.0 / (SELECT count(*) FROM pairs), 2) AS pct_of_all_pairs,
       round(count(*) FILTER (WHERE bits <= k.k AND truth AND j >= th.th)::numeric / nullif(count(*) FILTER (WHERE bits <= k.k AND j >= th.th), 0), 3) AS precision,
       round(count(*) FILTER (WHERE bits <= k.k AND truth AND j >= th.th)::numeric / (SELECT sum(t) FROM truths), 3) AS recall,
       pg_temp.f1(count(*) FILTER (WHERE bits <= k.k AND truth AND j >= th.th), count(*) FILTER (WHERE bits <= k.k AND NOT truth AND j >= th.th), (SELECT sum(t) FROM truths)) AS f1
FROM hybrid_candidates h, (VALUES (12), (16), (20)) k(k), (VALUES (0.2), (0.3), (0.4), (0.5)) th(th)
GROUP BY k.k, th.th ORDER BY 1, 2;

-- Timed pair finders, as an application runs them: every pair each method reports, and its time
-- per source, by family; one summary for both families.
CREATE TEMP TABLE timed_pairs (family text, ord int, method text, a int, b int, ms float8);
CREATE INDEX ON signatures (doc_id, mcfg);
CREATE FUNCTION pg_temp.timed_quality(which text)
RETURNS TABLE (method text, reported_pairs bigint, "precision" numeric, recall numeric, f1 numeric, ms_all_sources numeric)
LANGUAGE sql AS $$
    SELECT l.method,
           count(p.a),
           round(count(p.a) FILTER (WHERE p.truth)::numeric / nullif(count(p.a), 0), 3),
           round(count(p.a) FILTER (WHERE p.truth)::numeric / (SELECT sum(t) FROM truths), 3),
           pg_temp.f1(count(p.a) FILTER (WHERE p.truth), count(p.a) FILTER (WHERE NOT p.truth), (SELECT sum(t) FROM truths)),
           round((SELECT sum(ms) FROM timed_pairs m WHERE m.family = which AND m.method = l.method)::numeric)
    FROM timed_pairs l LEFT JOIN pairs p ON p.a = l.a AND p.b = l.b
    WHERE l.family = which AND l.a IS NOT NULL GROUP BY l.ord, l.method ORDER BY l.ord
$$;

\echo '== The verified hybrid as an application runs it, timed: simhash_pairs over each source''s default SimHash or minhash64 fingerprints, each candidate kept when its exact shingle_jaccard (word 3) or the MinHash estimate of the stored signatures (word 3 or word 1, 128 slots) passes; and each fingerprint alone; overall'
DO $$
DECLARE r record; src text; t0 timestamptz;
BEGIN
  -- verify: 'exact' (shingle_jaccard, word 3) or 'minhash' (the stored signatures of minhash_configs' mcfg)
  FOR r IN SELECT * FROM (VALUES (1, 'simhash alone, k = 14', 14, NULL::float8, NULL, NULL, 'word 2, set'),
                                 (2, 'k = 12, exact jaccard >= 0.3', 12, 0.3, 'exact', NULL, 'word 2, set'),
                                 (3, 'k = 16, exact jaccard >= 0.4', 16, 0.4, 'exact', NULL, 'word 2, set'),
                                 (4, 'k = 20, exact jaccard >= 0.4', 20, 0.4, 'exact', NULL, 'word 2, set'),
                                 (5, 'k = 16, minhash estimate >= 0.4', 16, 0.4, 'minhash', 3, 'word 2, set'),
                                 (6, 'k = 20, minhash estimate >= 0.4', 20, 0.4, 'minhash', 3, 'word 2, set'),
                                 (7, 'minhash64 alone, k = 8', 8, NULL, NULL, NULL, 'minhash64 word 1'),
                                 (8, 'minhash64 alone, k = 10', 10, NULL, NULL, NULL, 'minhash64 word 1'),
                                 (9, 'minhash64 k = 12, minhash estimate >= 0.4', 12, 0.4, 'minhash', 3, 'minhash64 word 1'),
                                 (10, 'minhash64 k = 12, word 1 minhash estimate >= 0.65', 12, 0.65, 'minhash', 1, 'minhash64 word 1'),
                                 (11, 'minhash64 k = 16, word 1 minhash estimate >= 0.65', 16, 0.65, 'minhash', 1, 'minhash64 word 1')) m(ord, method, k, th, verify, mcfg, features) LOOP
    FOR src IN SELECT DISTINCT source FROM docs ORDER BY 1 LOOP
      t0 := clock_timestamp();
      INSERT INTO timed_pairs
      SELECT 'hybrid', r.ord, r.method, least(p.id_a, p.id_b), greatest(p.id_a, p.id_b), NULL
      FROM simhash_pairs(format('SELECT f.doc_id::bigint, f.fp FROM fingerprints f JOIN docs d USING (doc_id) JOIN configs c USING (cfg)
                                 WHERE c.name = %L AND c.seed = 0 AND d.source = %L', r.features, src), r.k) p
      WHERE CASE r.verify
              WHEN 'exact' THEN shingle_jaccard((SELECT body FROM docs WHERE doc_id = p.id_a),
                                                (SELECT body FROM docs WHERE doc_id = p.id_b)) >= r.th
              WHEN 'minhash' THEN minhash_jaccard((SELECT sig FROM signatures WHERE doc_id = p.id_a AND mcfg = r.mcfg),
                                                  (SELECT sig FROM signatures WHERE doc_id = p.id_b AND mcfg = r.mcfg)) >= r.th
              ELSE true END;
      INSERT INTO timed_pairs VALUES ('hybrid', r.ord, r.method, NULL, NULL, extract(epoch FROM clock_timestamp() - t0) * 1000);
    END LOOP;
  END LOOP;
END $$;
SELECT * FROM pg_temp.timed_quality('hybrid');

\echo '== MinHash LSH alone: minhash_pairs over word 3 signatures (128 slots) of each source, bands and rows chosen for the threshold; overall'
DO $$
DECLARE th numeric; src text; t0 timestamptz;
BEGIN
  FOREACH th IN ARRAY ARRAY[0.3, 0.4, 0.5, 0.6, 0.8] LOOP
    FOR src IN SELECT DISTINCT source FROM docs ORDER BY 1 LOOP
      t0 := clock_timestamp();
      INSERT INTO timed_pairs
      SELECT 'lsh', (th * 10)::int, 'threshold ' || th, least(p.id_a, p.id_b), greatest(p.id_a, p.id_b), NULL
      FROM minhash_pairs(format('SELECT g.doc_id::bigint, g.sig FROM signatures g JOIN docs d USING (doc_id) WHERE g.mcfg = 3 AND d.source = %L', src), th::float8) p;
      INSERT INTO timed_pairs VALUES ('lsh', (th * 10)::int, 'threshold ' || th, NULL, NULL, extract(epoch FROM clock_timestamp() - t0) * 1000);
    END LOOP;
  END LOOP;
END $$;
SELECT * FROM pg_temp.timed_quality('lsh');
