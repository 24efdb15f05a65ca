-- The evaluation corpus of bench/quality.sql and bench/dedup_quality.sql: documents from six
-- sources of text that Debian ships (scripts/quality.sh installs them and lays them out in
-- :textdir), every pair of documents within a source, and whether it is a near-duplicate.
--   faq-en        sections of the Debian FAQ in English (debian-faq)
--   faq-zh        sections of the Debian FAQ in Simplified Chinese (debian-faq-zh-cn)
--   reference-zh  every second section of the Debian Reference in Simplified Chinese
--                 (debian-reference-zh-cn), 400 to 6,000 characters
--   copyright     the copyright files (/usr/share/doc/*/copyright) of the packages listed in
--                 bench/quality_copyright_packages.txt, one of each identical text, 400 to 20,000
--                 characters: licence texts with natural near-duplicates
--   reference-en  every second section of the Debian Reference in English (debian-reference-en)
--                 as plain text and as HTML: natural near-duplicates, one rendering of another
--   python-docs   pages of the Python 3.11 documentation (python3.11-doc) as reST source and as
--                 HTML: natural near-duplicates whose markup differs
-- Truth. faq-en, faq-zh, reference-zh: each section gets generated near-duplicates of the kinds
-- crawlers meet, and every pair of documents derived from the same section is a true pair, every
-- other pair is not:
--   mirror:  site header, footer with visitor counter, date and an ad added
--   counter: only the counter and date of a mirrored page changed (a copy of a mirror)
--   typos:   5% of the tokens (words; characters for Chinese) replaced
--   cut:     10% of the lines deleted
--   insert:  a related-links line inserted after every 8th line
--   heavy:   mirror + 10% of tokens replaced + 10% of lines deleted
-- reference-en, python-docs: the two renderings of one section or page are a true pair, every
-- other pair is not.
-- copyright: no generated edits; a pair is true when the exact Jaccard similarity of the two
-- texts' sets of character 5-grams is at least 0.8.
-- Makes the temporary tables docs (doc_id, source, lang, base_id, kind, body), pairs (source, a,
-- b, truth, content_truth: every pair a < b of one source) and truths (true pairs per source).
-- The session of an evaluation script.
\set ON_ERROR_STOP on
\pset footer off
SET client_min_messages = warning;
SET work_mem = '256MB';
CREATE EXTENSION IF NOT EXISTS simhash;

-- Deterministic pseudo-random numbers in [0, 1) from a key (no dependence on random()).
CREATE FUNCTION pg_temp.unit_hash(key text) RETURNS float8 LANGUAGE sql IMMUTABLE AS
$$ SELECT (hashtextextended(key, 7) & 2147483647)::float8 / 2147483648 $$;

-- Replace a fraction of tokens: words for English, characters for Chinese. Whitespace is kept as
-- it was, so that an edited document keeps its lines (the heavy edit then cuts lines from it).
CREATE FUNCTION pg_temp.replace_tokens(body text, lang text, fraction float8, seed text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg(CASE WHEN m[1] !~ '^\s' AND pg_temp.unit_hash(seed || ':' || i) < fraction
                         THEN CASE WHEN lang = 'zh' THEN '改' ELSE 'edited' END ELSE m[1] END || m[2], '' ORDER BY i)
  FROM regexp_matches(body, CASE WHEN lang = 'zh' THEN '(.)()' ELSE '(\S+)(\s*)' END, 'g') WITH ORDINALITY AS t(m, i)
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

-- The text of an HTML page as a reader sees it: scripts and styles dropped, a line break before
-- each block element, tags removed, leading spaces of lines and runs of blank lines dropped, the
-- common entities decoded.
CREATE FUNCTION pg_temp.html_text(html text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT regexp_replace(regexp_replace(
           replace(replace(replace(replace(replace(replace(replace(
             regexp_replace(regexp_replace(regexp_replace(html, '<(script|style)[^>]*>.*?</\1>', '', 'gis'),
                                           '<(h[1-6]|p|div|br|li|tr|pre|dt|dd|table)[ />]', E'\n\\&', 'gi'),
                            '<[^>]*>', '', 'g'),
             '&lt;', '<'), '&gt;', '>'), '&quot;', '"'), '&#39;', ''''), '&nbsp;', ' '), '&#160;', ' '), '&amp;', '&'),
           '\n[ \t]+', E'\n', 'g'),
         '\n{3,}', E'\n\n', 'g')
$$;

CREATE TEMP TABLE sections AS
SELECT source, lang, row_number() OVER (PARTITION BY source ORDER BY ord) AS n, body FROM (
  SELECT 'faq-en' AS source, 'en' AS lang, ord, s AS body
  FROM regexp_split_to_table(pg_read_file(:'textdir' || '/faq.en.txt'), '\n(?=\d+\.\d+\.[^0-9])') WITH ORDINALITY AS t(s, ord)
  WHERE s ~ '^\d+\.\d+\.[^0-9]' AND length(s) >= 400
  UNION ALL
  SELECT 'faq-zh', 'zh', ord, s
  FROM regexp_split_to_table(pg_read_file(:'textdir' || '/faq.zh.txt'), '\n(?=\d+\.\d+\.[^0-9])') WITH ORDINALITY AS t(s, ord)
  WHERE s ~ '^\d+\.\d+\.[^0-9]' AND length(s) >= 400
  UNION ALL
  SELECT 'reference-zh', 'zh', ord, s
  FROM regexp_split_to_table(pg_read_file(:'textdir' || '/reference.zh.txt'), '\n(?=\d+\.\d+\.\d+\.)') WITH ORDINALITY AS t(s, ord)
  WHERE s ~ '^\d+\.\d+\.\d+\.' AND length(s) BETWEEN 400 AND 6000) AS s;

CREATE TEMP TABLE copyright AS
SELECT DISTINCT ON (md5(body)) name, body
FROM (SELECT f AS name, pg_read_file(:'textdir' || '/copyright/' || f) AS body FROM pg_ls_dir(:'textdir' || '/copyright') AS f) t
WHERE length(body) BETWEEN 400 AND 20000 ORDER BY md5(body), name;

-- Natural near-duplicates: the same text published through two toolchains.
--   reference-en: every second section of the Debian Reference in English, as plain text
--     (debian-reference.en.txt) and as HTML (the chapter pages, read as text); a section's
--     number is its key, and the HTML's longest piece of that number is the section (the
--     shorter ones are table-of-contents lines);
--   python-docs: pages of the Python 3.11 documentation, the reST source (_sources/*.rst.txt)
--     and the HTML that Sphinx made of it (the main content, read as text); pages of 1 to 20 kB
--     of source whose two renderings are within a factor of two in length (the others include
--     generated or included text).
CREATE TEMP TABLE renderings AS
WITH ref_html AS (
  SELECT DISTINCT ON (sec) sec, s FROM (
    SELECT substring(s from '^(\d+\.\d+\.\d+\.)') AS sec, s
    FROM (SELECT string_agg(pg_temp.html_text(pg_read_file(:'textdir' || '/reference-html/' || f)), E'\n' ORDER BY f) AS t
          FROM pg_ls_dir(:'textdir' || '/reference-html') f) h,
         regexp_split_to_table(h.t, '\n(?=\d+\.\d+\.\d+\.\D)') s
    WHERE s ~ '^\d+\.\d+\.\d+\.\D') x
  ORDER BY sec, length(s) DESC),
ref_text AS (
  SELECT substring(s from '^(\d+\.\d+\.\d+\.)') AS sec, ord, s
  FROM regexp_split_to_table(pg_read_file(:'textdir' || '/reference.en.txt'), '\n(?=\d+\.\d+\.\d+\.\D)') WITH ORDINALITY AS t(s, ord)
  WHERE s ~ '^\d+\.\d+\.\d+\.\D' AND length(s) BETWEEN 400 AND 6000),
ref AS (
  SELECT row_number() OVER (ORDER BY t.ord) AS n, t.s AS text_body, h.s AS html_body
  FROM ref_text t JOIN ref_html h USING (sec)
  WHERE length(h.s) BETWEEN length(t.s) / 2 AND length(t.s) * 2),
py AS (
  SELECT f, pg_read_file(:'textdir' || '/python/' || f) AS rst,
         pg_temp.html_text(substring(pg_read_file(:'textdir' || '/python/' || regexp_replace(f, '\.rst\.txt$', '.html'))
                                     from 'role="main">(.*)<div class="sphinxsidebar"')) AS html
  FROM pg_ls_dir(:'textdir' || '/python') f WHERE f LIKE '%.rst.txt')
SELECT 'reference-en' AS source, n AS base_id, 'text' AS kind, text_body AS body FROM ref WHERE n % 2 = 0
UNION ALL SELECT 'reference-en', n, 'html', html_body FROM ref WHERE n % 2 = 0
UNION ALL
SELECT 'python-docs', n, kind, body FROM (
  SELECT row_number() OVER (ORDER BY f) AS n, rst, html FROM py
  WHERE length(rst) BETWEEN 1000 AND 20000 AND length(html) BETWEEN length(rst) / 2 AND length(rst) * 2) p,
  LATERAL (VALUES ('rst', p.rst), ('html', p.html)) v(kind, body);

CREATE TEMP TABLE docs AS
WITH base AS (SELECT source, lang, n AS base_id, body FROM sections WHERE source <> 'reference-zh' OR n % 2 = 0)
SELECT source, lang, base_id, 'original' AS kind, body FROM base
UNION ALL SELECT source, lang, base_id, 'mirror', pg_temp.mirror(body, lang, 1000 + base_id::int) FROM base
UNION ALL SELECT source, lang, base_id, 'counter', pg_temp.mirror(body, lang, 1001 + base_id::int) FROM base
UNION ALL SELECT source, lang, base_id, 'typos', pg_temp.replace_tokens(body, lang, 0.05, 'typos' || base_id) FROM base
UNION ALL SELECT source, lang, base_id, 'cut', pg_temp.drop_lines(body, 0.10, 'cut' || base_id) FROM base
UNION ALL SELECT source, lang, base_id, 'insert', pg_temp.insert_lines(body, lang) FROM base
UNION ALL SELECT source, lang, base_id, 'heavy', pg_temp.mirror(pg_temp.drop_lines(pg_temp.replace_tokens(body, lang, 0.10, 'heavy' || base_id), 0.10, 'heavyc' || base_id), lang, 5000 + base_id::int) FROM base
UNION ALL SELECT 'copyright', 'en', row_number() OVER (ORDER BY name), 'original', body FROM copyright
UNION ALL SELECT source, 'en', base_id, kind, body FROM renderings;
ALTER TABLE docs ADD COLUMN doc_id serial PRIMARY KEY;

-- content_truth: the second rule, the copyright files' rule applied to every source (a pair is
-- true when its character 5-gram Jaccard is at least 0.8, whatever it was derived from): the
-- SimHash summary is printed under both rules.
CREATE TEMP TABLE pairs AS
SELECT source, a, b, CASE WHEN source = 'copyright' THEN content_truth ELSE derived END AS truth, content_truth
FROM (SELECT a.source, a.doc_id AS a, b.doc_id AS b, a.base_id = b.base_id AS derived,
             shingle_jaccard(a.body, b.body, 'char', 5) >= 0.8 AS content_truth
      FROM docs a JOIN docs b ON a.source = b.source AND a.doc_id < b.doc_id) p;
ANALYZE docs;
ANALYZE pairs;
CREATE TEMP TABLE truths AS
SELECT source, count(*) FILTER (WHERE truth) AS t, count(*) FILTER (WHERE content_truth) AS content_t
FROM pairs GROUP BY source;

