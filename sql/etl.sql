-- Batch deduplication: simhash_pairs, simhash_groups, minhash_pairs; exactness against brute force.

-- Deterministic data: uniform fingerprints (hashint8extended), planted clusters whose members are
-- 0..12 bits from their center (nested masks, so members are also 0..12 bits from each other),
-- exact duplicates, a NULL fingerprint (skipped), and structured fingerprints.
CREATE TABLE etl_fp (id bigint PRIMARY KEY, fp bigint);
INSERT INTO etl_fp SELECT g, hashint8extended(g, 0) FROM generate_series(1, 1200) g;
INSERT INTO etl_fp
SELECT 100000 + c * 10 + j, hashint8extended(c, 0) # ((((1::bigint << ((c * 7 + j * 5) % 13)) - 1)) << (c % 50))
FROM generate_series(1, 200) c, generate_series(1, 3) j;
INSERT INTO etl_fp SELECT 200000 + g, hashint8extended(g, 0) FROM generate_series(1, 1200, 37) g;
INSERT INTO etl_fp VALUES (300000, NULL);
-- Structured fingerprints (32-bit hashes, sign-extended: the high 32 bits are all equal), which
-- make large groups of equal permuted-table keys.
INSERT INTO etl_fp SELECT 400000 + g, hashint8(g) FROM generate_series(1, 500) g;

CREATE TEMP TABLE brute AS
SELECT a.id AS id_a, b.id AS id_b, hamming(a.fp, b.fp)::integer AS distance
FROM etl_fp a JOIN etl_fp b ON a.id < b.id AND hamming(a.fp, b.fp) <= 12;
SELECT distance, count(*) FROM brute GROUP BY 1 ORDER BY 1;

-- Exact equality with the self-join for every radius 0..12, in memory and partitioned.
SELECT k, (SELECT count(*) FROM brute WHERE distance <= k) AS expected,
       (SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM etl_fp', k)) AS found,
       (SELECT count(*) FROM (SELECT * FROM simhash_pairs('SELECT id, fp FROM etl_fp', k)
                              EXCEPT ALL SELECT * FROM brute WHERE distance <= k) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM brute WHERE distance <= k
                              EXCEPT ALL SELECT * FROM simhash_pairs('SELECT id, fp FROM etl_fp', k)) x) AS missing,
       (SELECT count(*) FROM (SELECT * FROM simhash_pairs('SELECT id, fp FROM etl_fp', k, memory_limit => '64kB')
                              EXCEPT ALL SELECT * FROM brute WHERE distance <= k) x) AS partitioned_extra,
       (SELECT count(*) FROM (SELECT * FROM brute WHERE distance <= k
                              EXCEPT ALL SELECT * FROM simhash_pairs('SELECT id, fp FROM etl_fp', k, memory_limit => '64kB')) x) AS partitioned_missing
FROM generate_series(0, 12) k;

-- Large radii fall back to comparing all pairs, still exact; radius 64 pairs everything.
SELECT count(*) = (SELECT count(*) FROM etl_fp a JOIN etl_fp b ON a.id < b.id AND hamming(a.fp, b.fp) <= 40
                   WHERE a.id % 5 = 0 AND b.id % 5 = 0) AS radius_40_exact
FROM simhash_pairs('SELECT id, fp FROM etl_fp WHERE id % 5 = 0', 40);
SELECT count(*) AS all_pairs FROM simhash_pairs('SELECT id, fp FROM etl_fp WHERE id <= 100', 64);

-- Integer ids of any width, an empty input (repeated ids and data-modifying queries: etl_input).
SELECT * FROM simhash_pairs('SELECT id::integer, fp FROM etl_fp WHERE id IN (1, 200001)', 0);
SELECT * FROM simhash_pairs('SELECT id, fp FROM etl_fp WHERE false');

-- Groups: connected components against a recursive-CTE reference; group id = smallest id.
WITH RECURSIVE edges AS (SELECT id_a AS a, id_b AS b FROM brute WHERE distance <= 3
                         UNION ALL SELECT id_b, id_a FROM brute WHERE distance <= 3),
reach(id, root) AS (SELECT id, id FROM etl_fp WHERE fp IS NOT NULL
                    UNION SELECT e.b, r.root FROM reach r JOIN edges e ON e.a = r.id),
reference AS (SELECT id, min(root) AS group_id FROM reach GROUP BY id)
SELECT (SELECT count(*) FROM reference) AS rows,
       (SELECT count(*) FROM (SELECT * FROM simhash_groups('SELECT id, fp FROM etl_fp', 3, 'connected')
                              EXCEPT SELECT * FROM reference) x) AS differing,
       (SELECT count(DISTINCT group_id) FROM reference) AS groups;

-- Beyond the in-memory limit (about 96 bytes a row) connected groups are partitioned: 12 bytes a
-- row in memory, pairs of row numbers from the partitioned join. Same groups.
SELECT k, (SELECT count(*) FROM (
    SELECT * FROM simhash_groups('SELECT id, fp FROM etl_fp', k, 'connected', memory_limit => '128kB')
    EXCEPT SELECT * FROM simhash_groups('SELECT id, fp FROM etl_fp', k, 'connected')) x) AS differing,
    (SELECT count(*) FROM simhash_groups('SELECT id, fp FROM etl_fp', k, 'connected', memory_limit => '128kB')) AS rows
FROM unnest(ARRAY[0, 3, 8, 12]) k;

-- Leader groups: every member within the radius of its leader, leaders lead themselves.
SELECT count(*) AS rows, count(DISTINCT g.group_id) AS groups,
       count(*) FILTER (WHERE hamming(m.fp, l.fp) > 3) AS too_far,
       count(*) FILTER (WHERE l.id = g.id AND g.group_id <> g.id) AS leader_elsewhere
FROM simhash_groups('SELECT id, fp FROM etl_fp', 3, 'leader') g
JOIN etl_fp m ON m.id = g.id JOIN etl_fp l ON l.id = g.group_id;

-- A chain 0 -- 3 bits -- 6 bits: transitive groups join the ends, leader groups do not.
SELECT * FROM simhash_groups('VALUES (1::bigint, 0::bigint), (2, 7), (3, 63)', 3, 'connected') ORDER BY id;
SELECT * FROM simhash_groups('VALUES (1::bigint, 0::bigint), (2, 7), (3, 63)', 3, 'leader') ORDER BY id;

-- Composing with SQL: keep one row per group, INSERT ... SELECT, CREATE TABLE AS.
CREATE TABLE etl_docs AS SELECT id, fp, 'document ' || id AS body FROM etl_fp;
DELETE FROM etl_docs d USING simhash_groups('SELECT id, fp FROM etl_docs', 3, 'connected') g
WHERE d.id = g.id AND g.id <> g.group_id;
SELECT count(*) AS kept, count(*) FILTER (WHERE fp IS NULL) AS kept_without_fingerprint FROM etl_docs;
SELECT count(*) AS near_pairs_left FROM simhash_pairs('SELECT id, fp FROM etl_docs', 3);
CREATE TABLE etl_clean (id bigint, fp bigint);
INSERT INTO etl_clean SELECT f.id, f.fp FROM etl_fp f
JOIN simhash_groups('SELECT id, fp FROM etl_fp', 3, 'leader') g ON g.id = f.id AND g.group_id = f.id;
SELECT count(*) AS leaders_inserted FROM etl_clean;
CREATE TABLE etl_pairs AS SELECT * FROM simhash_pairs('SELECT id, fp FROM etl_fp', 2);
SELECT count(*) = (SELECT count(*) FROM brute WHERE distance <= 2) AS create_table_as FROM etl_pairs;
SELECT * FROM etl_pairs ORDER BY id_a, id_b LIMIT 5;

-- MinHash LSH on planted pairs: documents of 40 words; copies with 1 word changed (Jaccard 39/41).
CREATE TABLE etl_text AS
SELECT d AS id, string_agg('w' || (hashint4(d * 1000 + w) & 65535), ' ') AS body
FROM generate_series(1, 300) d, generate_series(1, 40) w GROUP BY d;
INSERT INTO etl_text SELECT id + 1000, regexp_replace(body, '^w[0-9]+', 'changed') FROM etl_text WHERE id % 3 = 0;
CREATE TABLE etl_sig AS SELECT id, minhash(body, size => 1) AS sig FROM etl_text;
SELECT count(*) AS pairs, count(*) FILTER (WHERE id_b = id_a + 1000) AS planted_found,
       (SELECT count(*) FROM etl_text WHERE id > 1000) AS planted,
       bool_and(jaccard >= 0.8) AS verified
FROM minhash_pairs('SELECT id, sig FROM etl_sig', 0.8);
-- Nothing beyond the brute-force estimate; explicit bands and rows.
SELECT count(*) AS not_in_brute_force FROM (
    SELECT id_a, id_b FROM minhash_pairs('SELECT id, sig FROM etl_sig', 0.8)
    EXCEPT SELECT a.id, b.id FROM etl_sig a JOIN etl_sig b ON a.id < b.id AND minhash_jaccard(a.sig, b.sig) >= 0.8) x;
SELECT count(*) AS with_explicit_bands FROM minhash_pairs('SELECT id, sig FROM etl_sig', 0.8, bands => 16, "rows" => 8);
SELECT * FROM minhash_pairs('SELECT id, sig FROM etl_sig WHERE false');
-- Beyond the memory limit (4 bytes a slot plus 24 a row) signatures are partitioned per band by
-- band hash through temporary files: the same pairs.
SELECT (SELECT count(*) FROM minhash_pairs('SELECT id, sig FROM etl_sig', 0.8, memory_limit => '64kB')) AS partitioned,
       (SELECT count(*) FROM (SELECT * FROM minhash_pairs('SELECT id, sig FROM etl_sig', 0.8, memory_limit => '64kB')
                              EXCEPT SELECT * FROM minhash_pairs('SELECT id, sig FROM etl_sig', 0.8)) x) AS differing,
       (SELECT count(*) FROM minhash_pairs('SELECT id, sig FROM etl_sig', 0.5, memory_limit => '64kB')) =
       (SELECT count(*) FROM minhash_pairs('SELECT id, sig FROM etl_sig', 0.5)) AS same_at_half;

-- Progress notices: every simhash.progress_seconds (default 10 s), 0 turns them off.
SHOW simhash.progress_seconds;
SET simhash.progress_seconds = 0;
SELECT count(*) AS quiet FROM simhash_pairs('SELECT id, fp FROM etl_fp', 3);
RESET simhash.progress_seconds;

-- Cancellation inside the core: a brute-force run (radius 30) stopped by statement_timeout
-- (without the bound on temporary files, which would refuse it before it starts: etl_limits).
SET simhash.temp_file_limit = -1;
SET statement_timeout = '300ms';
SELECT count(*) FROM simhash_pairs('SELECT g::bigint, hashint8extended(g, 0) FROM generate_series(1, 100000) g', 30);
RESET statement_timeout;
RESET simhash.temp_file_limit;
SELECT count(*) AS still_working FROM simhash_pairs('SELECT id, fp FROM etl_fp', 1);

-- Errors.
\set VERBOSITY default
SELECT * FROM simhash_pairs('SELECT id, fp FROM etl_fp', -1);
SELECT * FROM simhash_pairs('SELECT id, fp FROM etl_fp', 65);
SELECT * FROM simhash_pairs('SELECT id, fp FROM etl_fp', NULL);
SELECT * FROM simhash_pairs(NULL, 3);
SELECT * FROM simhash_pairs('SELECT id FROM etl_fp');
SELECT * FROM simhash_pairs('SELECT id::text, fp FROM etl_fp');
SELECT * FROM simhash_pairs('SELECT id, fp::numeric FROM etl_fp');
SELECT * FROM simhash_pairs('SELECT NULL::bigint, 1::bigint');
SELECT * FROM simhash_pairs('SELEKT 1');
SELECT * FROM simhash_pairs('CREATE TABLE nope ()');
SELECT * FROM simhash_pairs('SELECT id, fp FROM etl_fp', 3, memory_limit => 'lots');
SELECT * FROM simhash_pairs('SELECT id, fp FROM etl_fp', 20, memory_limit => '64kB');
SELECT * FROM simhash_groups('SELECT id, fp FROM etl_fp', 3, 'nearest');
SELECT * FROM simhash_groups('SELECT id, fp FROM etl_fp', 3, 'leader', memory_limit => '64kB');
SELECT * FROM simhash_groups('SELECT g::bigint, hashint8extended(g, 0) FROM generate_series(1, 5000) g', 3, 'connected', memory_limit => '64kB');
SELECT * FROM minhash_pairs('SELECT id, sig FROM etl_sig', 0);
SELECT * FROM minhash_pairs('SELECT id, sig FROM etl_sig', 1.5);
SELECT * FROM minhash_pairs('SELECT id, sig FROM etl_sig', 0.8, bands => 4);
SELECT * FROM minhash_pairs('SELECT id, sig FROM etl_sig', 0.8, bands => 20, "rows" => 7);
SELECT * FROM minhash_pairs('SELECT id, fp FROM etl_fp');
SELECT * FROM minhash_pairs('SELECT 1::bigint, ARRAY[1,2,3] UNION ALL SELECT 2, ARRAY[1,2]');
SELECT * FROM minhash_pairs('SELECT 1::bigint, ARRAY[[1,2],[3,4]]');
SELECT * FROM minhash_pairs('SELECT 1::bigint, ARRAY[1,NULL]');
SELECT * FROM minhash_pairs('SELECT g::bigint, minhash(''same text'') FROM generate_series(1, 300) g', 0.8, memory_limit => '64kB');
\set VERBOSITY terse

DROP TABLE etl_fp, etl_docs, etl_clean, etl_pairs, etl_text, etl_sig;
