-- Every SQL example of README.md, verbatim (the tables it assumes are made first, marked as such),
-- so that what a newcomer runs stays true.

-- Install: check the install.
SELECT extversion FROM pg_extension WHERE extname = 'simhash';   -- 0.4.0
SELECT hamming(minhash64('the quick brown fox'), minhash64('the quick brown fox!'));  -- 0

-- Quick start.
CREATE TABLE docs (id bigserial PRIMARY KEY, body text NOT NULL,
                   fp bigint GENERATED ALWAYS AS (minhash64(body)) STORED);
INSERT INTO docs (body)
SELECT string_agg(CASE WHEN g % 100 = 0 AND w = 7 THEN 'edited'
                       ELSE md5((g - (g % 100 = 0)::int) || ':' || w) END, ' ' ORDER BY w)
FROM generate_series(1, 10000) g, generate_series(1, 30) w GROUP BY g ORDER BY g;
CREATE INDEX docs_fp_idx ON docs USING simhash (fp);
ANALYZE docs;

-- Near-duplicates of document 99: within 10 bits of its fingerprint.
SELECT id, hamming(fp, (SELECT fp FROM docs WHERE id = 99)) AS bits
FROM docs WHERE hamming(fp, (SELECT fp FROM docs WHERE id = 99)) <= 10;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE hamming(fp, (SELECT fp FROM docs WHERE id = 99)) <= 10;
SELECT * FROM near_duplicates('SELECT id, body FROM docs') ORDER BY id LIMIT 3;

-- Deduplicate a table (the table it assumes: pages with an id, a body and a fetch time).
CREATE TABLE pages (id bigserial PRIMARY KEY, body text NOT NULL, fp bigint, fetched_at timestamptz);
INSERT INTO pages (body, fetched_at) SELECT body, '2026-11-01'::timestamptz - id * interval '1 minute' FROM docs;
UPDATE pages SET fp = minhash64(body);
-- Every duplicate, its keeper and their similarity.
SELECT count(*) AS duplicates, min(similarity) >= 0.65 AS all_verified FROM (
SELECT * FROM near_duplicates('SELECT id, body FROM pages')
) d;
-- Keep the oldest page instead of the smallest id: the first row of the query keeps.
SELECT * FROM (
SELECT * FROM near_duplicates('SELECT id, body FROM pages ORDER BY fetched_at', keeper => 'first')
) d ORDER BY id LIMIT 2;
-- Stored fingerprints (or MinHash signatures) are used instead of computing them.
SELECT count(*) AS duplicates FROM (
SELECT * FROM near_duplicates('SELECT id, body, fp FROM pages')
) d;
-- Keep one page of each group: delete the others.
DELETE FROM pages USING near_duplicates('SELECT id, body FROM pages') d WHERE pages.id = d.id;
SELECT count(*) AS pages_kept FROM pages;
DROP TABLE pages;

-- Dedup on load (the table it assumes: staging, rows arriving with a fetch time).
CREATE TABLE staging (url text, body text, fetched_at timestamptz);
INSERT INTO staging SELECT 'https://example.com/' || id, body, '2026-11-01'::timestamptz + id * interval '1 minute' FROM docs WHERE id <= 500;
INSERT INTO staging SELECT url || '?mirror', body || ' Visitors: 77', fetched_at + interval '1 day' FROM staging;
CREATE TABLE pages (id bigserial PRIMARY KEY, url text, body text NOT NULL,
                    fp bigint GENERATED ALWAYS AS (minhash64(body)) STORED);
CREATE INDEX pages_fp_idx ON pages USING simhash (fp);          -- the check uses it
CREATE TRIGGER pages_dedup BEFORE INSERT OR UPDATE ON pages
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '10', 'skip', 'verify=body');

-- Near-duplicates of stored rows, and of rows of the same load, are skipped.
INSERT INTO pages (url, body) SELECT url, body FROM staging ORDER BY fetched_at;
SELECT count(*) AS offered, (SELECT count(*) FROM pages) AS stored,
       (SELECT count(*) FROM pages WHERE url LIKE '%?mirror') AS mirrors_stored FROM staging;

-- A large batch goes faster in one call (the table it assumes: library, fp a plain column with a
-- simhash index); it keeps the rows the trigger kept above (without its verification).
CREATE TABLE library (id bigserial PRIMARY KEY, url text, body text NOT NULL, fp bigint NOT NULL);
CREATE INDEX library_fp_idx ON library USING simhash (fp);
SELECT * FROM simhash_insert_distinct('library',
    'SELECT url, body, minhash64(body) AS fp FROM staging ORDER BY fetched_at', 10, memory_limit => '1GB');
SELECT (SELECT count(*) FROM library) AS stored, (SELECT count(*) FROM library WHERE url LIKE '%?mirror') AS mirrors_stored;

DROP TABLE pages, staging, docs, library;
