-- The demo: fingerprint real documents that Debian ships and find their near-duplicates.
-- Run by scripts/demo.sh with :docdir set to a directory holding the Chinese Debian FAQ as text.
\set ON_ERROR_STOP on
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
DROP TABLE IF EXISTS docs;
RESET client_min_messages;
CREATE TABLE docs (id serial PRIMARY KEY, source text NOT NULL, lang text NOT NULL, body text NOT NULL,
                   fp bigint, sig integer[]);

\echo '== Loading documents'
-- English: the copyright files of every installed package (many reuse license texts with small edits)
-- and the license texts themselves.
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
-- Typical near-duplicates of the web: mirrored copies with a counter, a date and an ad line changed.
INSERT INTO docs (source, lang, body)
SELECT source || ' (mirror copy)', lang,
       regexp_replace(body, '。', '，', 'g') || E'\n本文转载自 mirror.example.cn，2026-11-22 更新，阅读次数 4821。广告：点击这里领取优惠券！'
FROM docs WHERE lang = 'zh' AND id % 7 = 0;
INSERT INTO docs (source, lang, body)
SELECT source || ' (mirror copy)', lang,
       'Visitors: 10293 | Last updated 2026-11-22 | Sponsored: try our cloud hosting!' || E'\n' || body
FROM docs WHERE source IN ('/usr/share/common-licenses/GPL-3', '/usr/share/common-licenses/Apache-2.0');
SELECT lang, count(*) AS documents, pg_size_pretty(sum(octet_length(body))) AS text FROM docs GROUP BY lang ORDER BY lang;

\echo '== Fingerprinting: simhash(body) and minhash(body)'
\timing on
UPDATE docs SET fp = simhash(body), sig = minhash(body);
\timing off
SELECT id, left(source, 46) AS source, fp AS simhash, lpad(fp::bit(64)::text, 64) AS bits
FROM docs WHERE id IN (SELECT min(id) FROM docs GROUP BY lang UNION SELECT max(id) FROM docs) ORDER BY id;

\echo '== Distance between fingerprints: near-duplicates are a few bits apart, unrelated documents about 32'
SELECT CASE WHEN d <= 3 THEN '0-3' WHEN d <= 7 THEN '4-7' WHEN d <= 12 THEN '8-12' WHEN d <= 24 THEN '13-24'
            ELSE '25-64' END AS bits_apart, count(*) AS pairs
FROM (SELECT hamming(a.fp, b.fp) AS d FROM docs a JOIN docs b ON a.id < b.id) AS pairs
GROUP BY 1 ORDER BY min(d);
SELECT round(avg(hamming(a.fp, b.fp)), 1) AS mean_bits_between_all_pairs FROM docs a JOIN docs b ON a.id < b.id;

\echo '== Exact copies (0 bits apart) are common among package copyright files'
SELECT count(*) AS pairs_0_bits_apart, count(DISTINCT a.fp) AS distinct_texts_copied FROM docs a JOIN docs b ON a.id < b.id AND a.fp = b.fp;

\echo '== Near-duplicates that are not exact copies: 1 to 3 bits apart, with the MinHash Jaccard estimate'
SELECT DISTINCT ON (a.fp, b.fp) left(a.source, 44) AS document, left(b.source, 44) AS near_duplicate,
       hamming(a.fp, b.fp) AS bits, round(minhash_jaccard(a.sig, b.sig)::numeric, 2) AS jaccard
FROM docs a JOIN docs b ON a.id < b.id AND hamming(a.fp, b.fp) <= 3 AND a.fp <> b.fp
ORDER BY a.fp, b.fp, a.source, b.source LIMIT 30;

\echo '== The planted mirror copies: short Chinese sections with an appended ad line move more bits than long texts'
SELECT m.lang, count(*) AS mirror_copies,
       count(*) FILTER (WHERE hamming(m.fp, o.fp) <= 3) AS within_3_bits,
       count(*) FILTER (WHERE hamming(m.fp, o.fp) <= 7) AS within_7_bits,
       count(*) FILTER (WHERE hamming(m.fp, o.fp) <= 12) AS within_12_bits,
       max(hamming(m.fp, o.fp)) AS max_bits, round(min(minhash_jaccard(m.sig, o.sig))::numeric, 2) AS min_jaccard
FROM docs m JOIN docs o ON m.source = o.source || ' (mirror copy)'
GROUP BY m.lang ORDER BY m.lang;

\echo '== The same mirror copies with minhash64(body), one bit of each of 64 MinHash slots: edited copies sit closer'
SELECT lang, count(*) AS mirror_copies, count(*) FILTER (WHERE bits <= 3) AS within_3_bits,
       count(*) FILTER (WHERE bits <= 7) AS within_7_bits, count(*) FILTER (WHERE bits <= 12) AS within_12_bits,
       max(bits) AS max_bits
FROM (SELECT m.lang, hamming(minhash64(m.body), minhash64(o.body)) AS bits
      FROM docs m JOIN docs o ON m.source = o.source || ' (mirror copy)') AS mirrors
GROUP BY lang ORDER BY lang;

\echo '== The simhash index: hamming(fp, q) <= k is answered from it, exactly'
CREATE INDEX docs_fp_idx ON docs USING simhash (fp);
ANALYZE docs;
SELECT fp AS gpl3 FROM docs WHERE source = '/usr/share/common-licenses/GPL-3' \gset
EXPLAIN (COSTS OFF) SELECT id, source FROM docs WHERE hamming(fp, :gpl3) <= 3;
SELECT left(source, 60) AS within_3_bits_of_gpl3, hamming(fp, :gpl3) AS bits
FROM docs WHERE hamming(fp, :gpl3) <= 3 ORDER BY bits, source LIMIT 10;

\echo '== Groups (simhash_groups, leader method: every member within 3 bits of the row kept)'
CREATE TEMP TABLE groups AS SELECT * FROM simhash_groups('SELECT id, fp FROM docs', 3, 'leader');
SELECT count(*) AS documents, count(DISTINCT group_id) AS groups,
       count(*) FILTER (WHERE id <> group_id) AS duplicates_to_remove FROM groups;

\echo '== Keep one document per group; what was removed and why (first 25)'
CREATE TEMP TABLE removed AS
WITH deleted AS (DELETE FROM docs d USING groups g WHERE d.id = g.id AND g.id <> g.group_id
                 RETURNING d.id, d.source, d.fp, g.group_id)
SELECT * FROM deleted;
SELECT left(r.source, 44) AS removed, left(k.source, 44) AS near_duplicate_of_kept, hamming(r.fp, k.fp) AS bits
FROM removed r JOIN docs k ON k.id = r.group_id
ORDER BY hamming(r.fp, k.fp) DESC, r.source LIMIT 25;
SELECT (SELECT count(*) FROM removed) AS removed, count(*) AS kept, pg_size_pretty(sum(octet_length(body))) AS text_kept FROM docs;

\echo '== MinHash LSH on what is left: pairs with estimated Jaccard >= 0.5 (the short Chinese mirrors SimHash at 3 bits missed)'
SELECT left(a.source, 40) AS document, left(b.source, 40) AS near_duplicate, round(p.jaccard::numeric, 2) AS jaccard,
       hamming(a.fp, b.fp) AS simhash_bits
FROM minhash_pairs('SELECT id, sig FROM docs', 0.5) p JOIN docs a ON a.id = p.id_a JOIN docs b ON b.id = p.id_b
ORDER BY p.jaccard DESC, a.source LIMIT 15;
