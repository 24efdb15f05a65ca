-- The demo: deduplicate real documents that Debian ships in one call, then find near-duplicates
-- of a document through the index, and keep near-duplicates out as rows arrive.
-- Run by scripts/demo.sh with :docdir set to a directory holding the Chinese Debian FAQ as text.
\set ON_ERROR_STOP on
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
DROP TABLE IF EXISTS docs, pages;
RESET client_min_messages;
CREATE TABLE docs (id serial PRIMARY KEY, source text NOT NULL, lang text NOT NULL, body text NOT NULL);

\echo '== Loading documents'
-- English: the copyright files of every installed package (many reuse licence texts with small
-- edits) and the licence texts themselves.
INSERT INTO docs (source, lang, body)
SELECT f, 'en', pg_read_file(f)
FROM (SELECT '/usr/share/doc/' || d || '/copyright' AS f FROM pg_ls_dir('/usr/share/doc') AS d
      UNION ALL SELECT '/usr/share/common-licenses/' || l FROM pg_ls_dir('/usr/share/common-licenses') AS l) AS files
WHERE (pg_stat_file(f, true)).size BETWEEN 300 AND 500000 AND NOT (pg_stat_file(f, true)).isdir
ORDER BY f;
-- Chinese: the sections of the Debian FAQ in Simplified Chinese (package debian-faq-zh-cn).
INSERT INTO docs (source, lang, body)
SELECT 'debian-faq.zh-cn §' || substring(section FROM '^(\d+\.\d+)'), 'zh', section
FROM regexp_split_to_table(pg_read_file(:'docdir' || '/debian-faq.zh-cn.txt'), '\n(?=\d+\.\d+\.[^0-9])') AS section
WHERE section ~ '^\d+\.\d+\.[^0-9]' AND length(section) > 300;
-- Near-duplicates as crawlers meet them: mirrored copies with a counter, a date and an ad line
-- added, punctuation changed.
INSERT INTO docs (source, lang, body)
SELECT source || ' (mirror copy)', lang,
       regexp_replace(body, '。', '，', 'g') || E'\n本文转载自 mirror.example.cn，2026-11-22 更新，阅读次数 4821。广告：点击这里领取优惠券！'
FROM docs WHERE lang = 'zh' AND id % 7 = 0;
INSERT INTO docs (source, lang, body)
SELECT source || ' (mirror copy)', lang,
       'Visitors: 10293 | Last updated 2026-11-22 | Sponsored: try our cloud hosting!' || E'\n' || body
FROM docs WHERE source IN ('/usr/share/common-licenses/GPL-3', '/usr/share/common-licenses/Apache-2.0');
SELECT lang, count(*) AS documents, pg_size_pretty(sum(octet_length(body))) AS text FROM docs GROUP BY lang ORDER BY lang;

\echo '== One call: every document that duplicates another, with the document it duplicates (its keeper)'
\echo '   near_duplicates(''SELECT id, body FROM docs''): minhash64 fingerprints within 10 bits are candidates;'
\echo '   each is kept only when its word Jaccard similarity with its keeper, computed exactly, is 0.65 or more.'
\timing on
CREATE TEMP TABLE dups AS SELECT * FROM near_duplicates('SELECT id, body FROM docs');
\timing off
SELECT count(*) AS documents, (SELECT count(*) FROM dups) AS duplicates,
       (SELECT count(DISTINCT keeper_id) FROM dups) AS groups_with_duplicates FROM docs;

\echo '== The largest groups: the keeper (smallest id) and how many documents duplicate it'
SELECT left(k.source, 50) AS keeper, count(*) AS duplicates, round(min(d.similarity)::numeric, 2) AS least_similar,
       string_agg(left(regexp_replace(m.source, '^/usr/share/doc/|/copyright$', '', 'g'), 24), ', ' ORDER BY m.id) AS members
FROM dups d JOIN docs k ON k.id = d.keeper_id JOIN docs m ON m.id = d.id
GROUP BY k.id, k.source ORDER BY count(*) DESC, k.source LIMIT 8;

\echo '== The planted mirror copies: each found in its original''s group'
SELECT m.lang, count(*) AS mirror_copies, count(d.id) AS found,
       count(d.id) FILTER (WHERE d.keeper_id = coalesce(od.keeper_id, o.id)) AS in_the_originals_group,
       round(min(d.similarity)::numeric, 2) AS least_similar_to_keeper
FROM docs m JOIN docs o ON m.source = o.source || ' (mirror copy)' LEFT JOIN dups d ON d.id = m.id
LEFT JOIN dups od ON od.id = o.id
GROUP BY m.lang ORDER BY m.lang;

\echo '== Groups never chain: every duplicate is within the threshold of its keeper, checked here from the texts'
SELECT count(*) AS duplicates, min(round(shingle_jaccard(m.body, k.body, 'word', 1)::numeric, 3)) AS least_jaccard_with_keeper
FROM dups d JOIN docs m ON m.id = d.id JOIN docs k ON k.id = d.keeper_id;

\echo '== Keep one document of each group: one statement'
DELETE FROM docs USING near_duplicates('SELECT id, body FROM docs') d WHERE docs.id = d.id;
SELECT count(*) AS documents_kept, pg_size_pretty(sum(octet_length(body))) AS text_kept FROM docs;

\echo '== The index: near-duplicates of one document, hamming(fp, q) <= 10 answered from a simhash index'
ALTER TABLE docs ADD COLUMN fp bigint;
UPDATE docs SET fp = minhash64(body);
CREATE INDEX docs_fp_idx ON docs USING simhash (fp);
ANALYZE docs;
-- The query: a section of the Chinese FAQ as another site would show it, with a line added.
SELECT minhash64(body || E'\n本文转载自 news.example.cn。') AS q
FROM docs WHERE lang = 'zh' ORDER BY length(body) DESC LIMIT 1 \gset
EXPLAIN (COSTS OFF) SELECT id, source FROM docs WHERE hamming(fp, :q) <= 10;
SELECT id, left(source, 40) AS within_10_bits, hamming(fp, :q) AS bits
FROM docs WHERE hamming(fp, :q) <= 10 ORDER BY bits, id;

\echo '== Dedup on load: a trigger verifies each new row against the stored ones and skips near-duplicates'
CREATE TABLE pages (id bigserial PRIMARY KEY, body text NOT NULL,
                    fp bigint GENERATED ALWAYS AS (minhash64(body)) STORED);
CREATE INDEX pages_fp_idx ON pages USING simhash (fp);
CREATE TRIGGER pages_dedup BEFORE INSERT ON pages
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '10', 'skip', 'verify=body');
INSERT INTO pages (body) SELECT body FROM docs WHERE lang = 'zh' ORDER BY id;
WITH arriving(body) AS (
    SELECT body || E'\n本文转载自 mirror.example.cn，阅读次数 17。' FROM docs WHERE lang = 'zh' ORDER BY id LIMIT 5)
INSERT INTO pages (body) SELECT body FROM arriving UNION ALL SELECT '一篇全新的文章：关于数据库中的近重复文档检测。'
RETURNING id, left(body, 30) AS inserted;
SELECT count(*) AS pages_stored FROM pages;
