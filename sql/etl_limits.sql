-- The batch functions' limits: memory (memory_limit) and temporary files (temp_file_limit,
-- simhash.temp_file_limit). Every refusal says which limit is short, what would do, and what else helps.
\set VERBOSITY default
CREATE TABLE etl_lim (id bigint PRIMARY KEY, fp bigint);
INSERT INTO etl_lim SELECT g, hashint8extended(g, 0) FROM generate_series(1, 25000) g;

-- 'leader' keeps, for each pair of distinct fingerprints within the radius, 4 bytes, and counts
-- them against memory_limit before allocating them. 10000 rows at radius 64 (every pair) need
-- 192MB: refused with 64MB.
SELECT count(*) FROM simhash_groups('SELECT id, fp FROM etl_lim WHERE id <= 10000', 64, 'leader', memory_limit => '64MB');
-- The amount asked for is enough, a kB less is not; the groups are those of an unbounded run.
SELECT count(*) FROM simhash_groups('SELECT id, fp FROM etl_lim WHERE id <= 2000', 64, 'leader', memory_limit => '8011kB');
SELECT count(*) AS rows, count(*) FILTER (WHERE group_id = 1) AS in_group_1
FROM simhash_groups('SELECT id, fp FROM etl_lim WHERE id <= 2000', 64, 'leader', memory_limit => '8012kB');
SELECT (SELECT count(*) FROM (
    SELECT * FROM simhash_groups('SELECT id, fp FROM etl_lim WHERE id <= 2000', 12, 'leader', memory_limit => '256kB')
    EXCEPT SELECT * FROM simhash_groups('SELECT id, fp FROM etl_lim WHERE id <= 2000', 12, 'leader', memory_limit => '1GB')) x)
    AS differing;
-- Rows beyond the limit are counted, so the refusal can say how much they need.
SELECT count(*) FROM simhash_groups('SELECT id, fp FROM etl_lim', 3, 'leader', memory_limit => '1MB');
-- The refusal comes as soon as it is certain. At radius 64 every pair is within the radius, so
-- 200,000 rows need 2e10 pairs' room, and are refused before any is counted (counting them took
-- minutes); below 64, counting stops at the first pair that does not fit (some 9.4M pairs of
-- 25,000 rows are within 24 bits: here it stops at 136,433), and the refusal says "at least".
SET statement_timeout = '60s';
SELECT count(*) FROM simhash_groups('SELECT g::bigint, hashint8extended(g, 0) FROM generate_series(1, 200000) g', 64, 'leader', memory_limit => '64MB');
SELECT count(*) FROM simhash_groups('SELECT id, fp FROM etl_lim', 24, 'leader', memory_limit => '3MB');
RESET statement_timeout;

-- The input's buffers grow with the rows read, up to the limit: a limit far above the machine's
-- memory costs a small input nothing, and 25,000 signatures (buffers doubled twice) pair as they
-- do spilled.
SELECT * FROM minhash_pairs($$VALUES (1::bigint, ARRAY[1, 2, 3, 4]), (2, ARRAY[1, 2, 3, 4])$$, 0.5, NULL, NULL, '1TB');
SELECT count(*) FROM minhash_pairs($$VALUES (1::bigint, array_fill(1, ARRAY[1000000])), (2, array_fill(1, ARRAY[1000000]))$$,
                                   0.5, 1, 1, '1TB') AS wide_signatures;
SELECT count(*) FROM simhash_pairs($$VALUES (1::bigint, 1::bigint), (2, 3)$$, 3, memory_limit => '1TB');
SELECT (SELECT count(*) FROM minhash_pairs('SELECT g::bigint, ARRAY[g % 12000, 1, 2, 3] FROM generate_series(1, 25000) g', 0.9)) AS in_memory,
       (SELECT count(*) FROM minhash_pairs('SELECT g::bigint, ARRAY[g % 12000, 1, 2, 3] FROM generate_series(1, 25000) g', 0.9,
                                           memory_limit => '64kB')) AS spilled;

-- Partitioned runs beyond memory_limit: at radius 15 each permuted table's key has 4 bits, so
-- at most 16 partitions; 25000 rows need partitions of 1563 rows, and 64kB holds 1365.
SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM etl_lim', 15, memory_limit => '64kB');
SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM etl_lim', 15, memory_limit => '147kB');
-- Skewed fingerprints: 32-bit hashes sign-extended (the high 32 bits are all equal), and one
-- fingerprint shared by 5000 rows, fill one partition however many there are.
SELECT count(*) FROM simhash_pairs('SELECT id, hashint8(id)::bigint FROM etl_lim', 3, memory_limit => '64kB');
SELECT count(*) FROM simhash_pairs('SELECT id, 42::bigint FROM etl_lim WHERE id <= 5000', 1, memory_limit => '64kB');
SELECT count(*) FROM simhash_groups('SELECT id, 42::bigint FROM etl_lim WHERE id <= 5000', 1, 'connected', memory_limit => '128kB');
SELECT count(*) FROM minhash_pairs('SELECT id, minhash(''same text'', 16) FROM etl_lim WHERE id <= 2000', 0.8,
                                   memory_limit => '64kB');

-- Temporary files. simhash.temp_file_limit bounds them when temp_file_limit is -1 (no limit).
SHOW simhash.temp_file_limit;
SHOW temp_file_limit;
-- Before a run, simhash_pairs estimates the pairs uniform fingerprints make by chance at the
-- radius (binomial tail times N(N - 1)/2, 30 bytes each in the result's file) and the files of
-- a partitioned run (16 bytes a row for the spilled rows, 16 for one table's partitions).
-- 2M rows at radius 20: about 3.7e9 pairs, 104GB.
SELECT count(*) FROM simhash_pairs('SELECT g::bigint, hashint8extended(g, 0) FROM generate_series(1, 2000000) g', 20,
                                   memory_limit => '1GB');
SET simhash.temp_file_limit = '512kB';
SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM etl_lim WHERE id <= 500', 30);
-- Partitioned, 25000 rows take 782kB of files; joined in memory, none.
SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM etl_lim', 3, memory_limit => '64kB');
SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM etl_lim', 3, memory_limit => '1172kB');
SET simhash.temp_file_limit = '1MB';
-- Results beyond the estimate (duplicates) are counted as they arrive, for both pair functions.
SELECT count(*) FROM simhash_pairs('SELECT id, 42::bigint FROM etl_lim WHERE id <= 3000', 0);
SELECT count(*) FROM minhash_pairs('SELECT id, minhash(''same text'', 16) FROM etl_lim WHERE id <= 3000', 0.8);
-- -1 lifts the bound.
SET simhash.temp_file_limit = -1;
SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM etl_lim WHERE id <= 500', 30);
SELECT count(*) FROM simhash_pairs('SELECT id, 42::bigint FROM etl_lim WHERE id <= 3000', 0);
-- PostgreSQL's temp_file_limit, when set, is the bound instead (and PostgreSQL enforces it).
SET simhash.temp_file_limit = '1kB';
SET temp_file_limit = '1MB';
SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM etl_lim WHERE id <= 500', 30);
SET temp_file_limit = '100MB';
SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM etl_lim WHERE id <= 500', 30);
RESET temp_file_limit;
RESET simhash.temp_file_limit;
-- PostgreSQL's temp_file_limit also stops a partitioned run while it writes its partitions (the
-- 25000 rows take 391kB spilled, 391kB renumbered, then 391kB a table; 10000 signatures of 16
-- slots 703kB spilled, then 703kB a band); the run closes its files and the next one starts clean.
SET temp_file_limit = '900kB';
SELECT count(*) FROM simhash_groups('SELECT id, fp FROM etl_lim', 3, 'connected', memory_limit => '512kB');
SELECT count(*) FROM minhash_pairs('SELECT id, minhash(''text '' || id, 16) FROM etl_lim WHERE id <= 10000', 0.8,
                                   memory_limit => '64kB');
RESET temp_file_limit;
SELECT count(*) AS rows, count(DISTINCT group_id) AS groups
FROM simhash_groups('SELECT id, fp FROM etl_lim', 12, 'connected', memory_limit => '512kB');
SELECT count(*) AS differences FROM (
    (SELECT * FROM simhash_groups('SELECT id, fp FROM etl_lim', 12, 'connected', memory_limit => '512kB')
     EXCEPT SELECT * FROM simhash_groups('SELECT id, fp FROM etl_lim', 12, 'connected'))
    UNION ALL
    (SELECT * FROM simhash_groups('SELECT id, fp FROM etl_lim', 12, 'connected')
     EXCEPT SELECT * FROM simhash_groups('SELECT id, fp FROM etl_lim', 12, 'connected', memory_limit => '512kB'))) d;

\set VERBOSITY terse
DROP TABLE etl_lim;
