-- Near-duplicate detection quality on real text, measured: precision, recall and F1 of
-- `hamming(simhash(a), simhash(b)) <= k` for k = 0..12 and of `minhash_jaccard(a, b) >= t`,
-- with the default features and the alternatives, on English and Chinese.
--
-- Corpus: the sections of the Debian FAQ in English (package debian-faq) and Simplified Chinese
-- (debian-faq-zh-cn): distinct documents on distinct topics. Each section gets generated
-- near-duplicates of the kinds crawlers meet; every pair of documents derived from the same
-- section is a true near-duplicate pair, every other pair is not.
--   mirror:  site header, footer with visitor counter, date and an ad added
--   counter: only the counter and date of a mirrored page changed (a copy of a mirror)
--   typos:   5% of the tokens (words; characters for Chinese) replaced
--   cut:     10% of the lines deleted
--   insert:  a related-links line inserted after every 8th line
--   heavy:   mirror + 10% of tokens replaced + 10% of lines deleted
-- Run by scripts/quality.sh with :faqdir holding debian-faq.en.txt and debian-faq.zh-cn.txt.
\set ON_ERROR_STOP on
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;

-- Deterministic pseudo-random numbers in [0, 1) from a key (no dependence on random()).
CREATE FUNCTION pg_temp.unit_hash(key text) RETURNS float8 LANGUAGE sql IMMUTABLE AS
$$ SELECT (hashtextextended(key, 7) & 2147483647)::float8 / 2147483648 $$;

-- Replace a fraction of tokens: words for English, characters for Chinese.
CREATE FUNCTION pg_temp.replace_tokens(body text, lang text, fraction float8, seed text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg(CASE WHEN pg_temp.unit_hash(seed || ':' || i) < fraction
                         THEN CASE WHEN lang = 'zh' THEN '改' ELSE 'edited' END ELSE tok END,
                    CASE WHEN lang = 'zh' THEN '' ELSE ' ' END ORDER BY i)
  FROM unnest(CASE WHEN lang = 'zh' THEN regexp_split_to_array(body, '') ELSE regexp_split_to_array(body, '\s+') END)
       WITH ORDINALITY AS t(tok, i)
$$;

CREATE FUNCTION pg_temp.drop_lines(body text, fraction float8, seed text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg(line, E'\n' ORDER BY i)
  FROM unnest(string_to_array(body, E'\n')) WITH ORDINALITY AS t(line, i)
  WHERE pg_temp.unit_hash(seed || ':' || i) >= fraction
$$;

CREATE FUNCTION pg_temp.insert_lines(body text, lang text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg(line || CASE WHEN i % 8 = 0 THEN E'\n' || CASE WHEN lang = 'zh' THEN '相关链接：更多精彩内容请访问我们的首页' ELSE 'Related links: more great content on our home page' END ELSE '' END,
                    E'\n' ORDER BY i)
  FROM unnest(string_to_array(body, E'\n')) WITH ORDINALITY AS t(line, i)
$$;

CREATE FUNCTION pg_temp.mirror(body text, lang text, visitors int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN lang = 'zh'
    THEN '首页 | 新闻 | 登录' || E'\n' || body || E'\n分享本页。访问量：' || visitors || '。更新于 2026-11-' || (visitors % 28 + 1) || '。广告：点击这里领取优惠券！'
    ELSE 'Home | News | Login' || E'\n' || body || E'\nShare this page. Visitors: ' || visitors || '. Last updated 2026-11-' || (visitors % 28 + 1) || '. Advertisement: try our cloud hosting today!'
  END
$$;

CREATE TEMP TABLE base AS
SELECT row_number() OVER (ORDER BY lang, section_no) AS base_id, lang, body
FROM (SELECT 'en' AS lang, substring(s FROM '^(\d+\.\d+)') AS section_no, s AS body
      FROM regexp_split_to_table(pg_read_file(:'faqdir' || '/debian-faq.en.txt'), '\n(?=\d+\.\d+\.[^0-9])') AS s
      UNION ALL
      SELECT 'zh', substring(s FROM '^(\d+\.\d+)'), s
      FROM regexp_split_to_table(pg_read_file(:'faqdir' || '/debian-faq.zh-cn.txt'), '\n(?=\d+\.\d+\.[^0-9])') AS s) AS sections
WHERE body ~ '^\d+\.\d+\.[^0-9]' AND length(body) >= 400;

CREATE TEMP TABLE corpus AS
SELECT base_id, lang, 'original' AS kind, body FROM base
UNION ALL SELECT base_id, lang, 'mirror', pg_temp.mirror(body, lang, 1000 + base_id::int) FROM base
UNION ALL SELECT base_id, lang, 'counter', pg_temp.mirror(body, lang, 1001 + base_id::int) FROM base
UNION ALL SELECT base_id, lang, 'typos', pg_temp.replace_tokens(body, lang, 0.05, 'typos' || base_id) FROM base
UNION ALL SELECT base_id, lang, 'cut', pg_temp.drop_lines(body, 0.10, 'cut' || base_id) FROM base
UNION ALL SELECT base_id, lang, 'insert', pg_temp.insert_lines(body, lang) FROM base
UNION ALL SELECT base_id, lang, 'heavy', pg_temp.mirror(pg_temp.drop_lines(pg_temp.replace_tokens(body, lang, 0.10, 'heavy' || base_id), 0.10, 'heavyc' || base_id), lang, 5000 + base_id::int) FROM base;
ALTER TABLE corpus ADD COLUMN doc_id serial;

SELECT lang, count(DISTINCT base_id) AS sections, count(*) AS documents,
       round(avg(length(body))) AS avg_chars,
       count(DISTINCT base_id) * 21 AS true_pairs,
       count(*) * (count(*) - 1) / 2 - count(DISTINCT base_id) * 21 AS false_pairs
FROM corpus GROUP BY lang ORDER BY lang;

-- Fingerprints under each feature configuration.
CREATE TEMP TABLE fingerprints AS
SELECT doc_id, base_id, lang, cfg, fp
FROM corpus,
LATERAL (VALUES ('word 3 (default)', simhash(body)),
                ('word 1', simhash(body, size => 1)),
                ('word 2', simhash(body, size => 2)),
                ('word 5', simhash(body, size => 5)),
                ('char 4', simhash(body, unit => 'char', size => 4)),
                ('tsvector english', CASE WHEN lang = 'en' THEN simhash(to_tsvector('english', body)) END)) AS f(cfg, fp)
WHERE fp IS NOT NULL;

CREATE TEMP TABLE simhash_pairs AS
SELECT a.lang, a.cfg, a.base_id = b.base_id AS truth, hamming(a.fp, b.fp)::int AS bits
FROM fingerprints a JOIN fingerprints b ON a.cfg = b.cfg AND a.lang = b.lang AND a.doc_id < b.doc_id;

CREATE TEMP TABLE simhash_quality AS
SELECT lang, cfg, k, tp, fp, fn,
       CASE WHEN tp + fp = 0 THEN 1 ELSE tp::float8 / (tp + fp) END AS precision,
       tp::float8 / nullif(tp + fn, 0) AS recall
FROM (SELECT lang, cfg, k,
             count(*) FILTER (WHERE truth AND bits <= k) AS tp,
             count(*) FILTER (WHERE NOT truth AND bits <= k) AS fp,
             count(*) FILTER (WHERE truth AND bits > k) AS fn
      FROM simhash_pairs, generate_series(0, 12) AS k GROUP BY lang, cfg, k) AS c;

\echo '== SimHash, default features (word 3-shingles; character 3-grams for Chinese): precision / recall / F1 by k'
SELECT k,
       max(round(precision::numeric, 3)) FILTER (WHERE lang = 'en') AS en_precision,
       max(round(recall::numeric, 3)) FILTER (WHERE lang = 'en') AS en_recall,
       max(round((2 * precision * recall / nullif(precision + recall, 0))::numeric, 3)) FILTER (WHERE lang = 'en') AS en_f1,
       max(round(precision::numeric, 3)) FILTER (WHERE lang = 'zh') AS zh_precision,
       max(round(recall::numeric, 3)) FILTER (WHERE lang = 'zh') AS zh_recall,
       max(round((2 * precision * recall / nullif(precision + recall, 0))::numeric, 3)) FILTER (WHERE lang = 'zh') AS zh_f1
FROM simhash_quality WHERE cfg = 'word 3 (default)' GROUP BY k ORDER BY k;

\echo '== SimHash, every feature configuration: the k with the best F1'
SELECT DISTINCT ON (lang, cfg) lang, cfg AS features, k AS best_k, round(precision::numeric, 3) AS precision,
       round(recall::numeric, 3) AS recall, round((2 * precision * recall / nullif(precision + recall, 0))::numeric, 3) AS f1
FROM simhash_quality ORDER BY lang, cfg, 2 * precision * recall / nullif(precision + recall, 0) DESC NULLS LAST, k;

\echo '== SimHash recall by kind of near-duplicate (default features): distance to the original'
SELECT c.lang, c.kind, round(avg(hamming(fa.fp, fb.fp)), 1) AS mean_bits, max(hamming(fa.fp, fb.fp)) AS max_bits,
       round(avg((hamming(fa.fp, fb.fp) <= 3)::int), 2) AS recall_k3, round(avg((hamming(fa.fp, fb.fp) <= 7)::int), 2) AS recall_k7
FROM corpus c JOIN corpus o ON o.base_id = c.base_id AND o.kind = 'original' AND c.kind <> 'original'
JOIN fingerprints fa ON fa.doc_id = c.doc_id AND fa.cfg = 'word 3 (default)'
JOIN fingerprints fb ON fb.doc_id = o.doc_id AND fb.cfg = 'word 3 (default)'
GROUP BY c.lang, c.kind ORDER BY c.lang, mean_bits;

\echo '== MinHash (128 slots, word 3-shingles): precision / recall / F1 by Jaccard threshold'
CREATE TEMP TABLE signatures AS SELECT doc_id, base_id, lang, minhash(body) AS sig FROM corpus;
CREATE TEMP TABLE minhash_pairs AS
SELECT a.lang, a.base_id = b.base_id AS truth, minhash_jaccard(a.sig, b.sig) AS j
FROM signatures a JOIN signatures b ON a.lang = b.lang AND a.doc_id < b.doc_id;
SELECT lang, t AS threshold, round(p::numeric, 3) AS precision, round(r::numeric, 3) AS recall,
       round((2 * p * r / nullif(p + r, 0))::numeric, 3) AS f1
FROM (SELECT lang, t,
             coalesce(count(*) FILTER (WHERE truth AND j >= t)::float8 / nullif(count(*) FILTER (WHERE j >= t), 0), 1) AS p,
             count(*) FILTER (WHERE truth AND j >= t)::float8 / count(*) FILTER (WHERE truth) AS r
      FROM minhash_pairs, unnest(ARRAY[0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]) AS t GROUP BY lang, t) AS q
ORDER BY lang, t;
