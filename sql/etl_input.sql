-- The batch functions' input query: ids must be unique, and the query may modify data.
\set VERBOSITY default

-- 3000 rows with serial ids; fingerprints in groups of three identical ones (many pairs).
CREATE TABLE etl_in (id bigint PRIMARY KEY, fp bigint, sig integer[]);
INSERT INTO etl_in SELECT g, hashint8extended(g / 3, 0), minhash(ARRAY['w' || g / 3, 'x' || g / 3], 16)
FROM generate_series(1, 3000) g;

-- A repeated id is refused by every function, in memory and beyond memory_limit (spilled:
-- serial ids are checked with a bitmap, sparse ones with an external sort), before any work.
SELECT * FROM simhash_pairs('SELECT 7::bigint, 42::bigint UNION ALL SELECT 7, 42 UNION ALL SELECT 8, 43');
SELECT * FROM simhash_pairs('SELECT id % 2999, fp FROM etl_in', 3);
SELECT * FROM simhash_pairs('SELECT id % 2999, fp FROM etl_in', 3, memory_limit => '64kB');
SELECT * FROM simhash_pairs('SELECT id % 2999 * 1000003, fp FROM etl_in', 3);
SELECT * FROM simhash_pairs('SELECT id % 2999 * 1000003, fp FROM etl_in', 3, memory_limit => '64kB');
SELECT * FROM simhash_groups('SELECT 7::bigint, 42::bigint UNION ALL SELECT 7, 43 UNION ALL SELECT 8, 42');
SELECT * FROM simhash_groups('SELECT id % 2999, fp FROM etl_in', 3, 'leader');
SELECT * FROM simhash_groups('SELECT id % 2999, fp FROM etl_in', 3, 'connected', memory_limit => '128kB');
SELECT * FROM simhash_groups('SELECT id % 2999 * 1000003, fp FROM etl_in', 3, 'connected', memory_limit => '128kB');
SELECT * FROM minhash_pairs('SELECT 7::bigint, ARRAY[1, 2, 3] UNION ALL SELECT 7, ARRAY[1, 2, 3]');
SELECT * FROM minhash_pairs('SELECT id % 2999, sig FROM etl_in', 0.5);
SELECT * FROM minhash_pairs('SELECT id % 2999, sig FROM etl_in', 0.5, memory_limit => '64kB');
SELECT * FROM minhash_pairs('SELECT id % 2999 * 1000003, sig FROM etl_in', 0.5, memory_limit => '64kB');
-- Integer ids of every width, the ends of the bigint range.
SELECT * FROM simhash_pairs('SELECT 5::smallint, 1::bigint UNION ALL SELECT 5::smallint, 2::bigint');
SELECT * FROM simhash_pairs('SELECT -9223372036854775807 - 1, 1::bigint UNION ALL SELECT 9223372036854775807, 1
                             UNION ALL SELECT -9223372036854775807 - 1, 3');
SELECT * FROM simhash_pairs('SELECT -9223372036854775807 - 1, 1::bigint UNION ALL SELECT 9223372036854775807, 1');
-- A row without a fingerprint takes no part, so its id does not count.
SELECT * FROM simhash_pairs('SELECT 7::bigint, NULL::bigint UNION ALL SELECT 7, 42 UNION ALL SELECT 8, 43');
-- Unique ids: the same data is accepted everywhere (the pairs of each group of three).
SELECT (SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM etl_in', 3)) AS in_memory,
       (SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM etl_in', 3, memory_limit => '64kB')) AS spilled,
       (SELECT count(*) FROM simhash_pairs('SELECT id * 1000003 % 2999000997, fp FROM etl_in', 3,
                                           memory_limit => '64kB')) AS spilled_sparse_ids,
       (SELECT count(DISTINCT group_id) FROM simhash_groups('SELECT id, fp FROM etl_in', 3, 'connected', memory_limit => '128kB')) AS groups,
       (SELECT count(*) FROM minhash_pairs('SELECT id * 1000003 % 2999000997, sig FROM etl_in', 0.5,
                                           memory_limit => '64kB')) AS minhash_spilled;

-- Data-modifying queries: the functions are VOLATILE and run the query as a volatile function
-- does (a new snapshot, writes allowed), so rows can leave a staging table as they are compared.
CREATE TABLE etl_staging AS SELECT id, fp FROM etl_in WHERE id <= 30;
SELECT * FROM simhash_pairs('DELETE FROM etl_staging WHERE id > 24 RETURNING id, fp', 0) ORDER BY id_a, id_b;
SELECT count(*) AS left_after_delete, max(id) FROM etl_staging;
SELECT * FROM simhash_groups('WITH d AS (DELETE FROM etl_staging WHERE id > 18 RETURNING id, fp) SELECT * FROM d', 0, 'connected')
ORDER BY id;
SELECT count(*) AS left_after_with_delete, max(id) FROM etl_staging;
-- Claiming a batch (UPDATE ... RETURNING), and SELECT ... FOR UPDATE.
ALTER TABLE etl_staging ADD COLUMN claimed boolean NOT NULL DEFAULT false;
SELECT count(*) AS claimed_pairs FROM simhash_pairs('UPDATE etl_staging SET claimed = true WHERE id <= 9 RETURNING id, fp', 0);
SELECT count(*) FILTER (WHERE claimed) AS claimed, count(*) AS rows FROM etl_staging;
SELECT count(*) AS locked_pairs FROM simhash_pairs('SELECT id, fp FROM etl_staging WHERE claimed FOR UPDATE', 0);
-- MinHash signatures out of a staging table.
CREATE TABLE etl_sig_staging AS SELECT id, sig FROM etl_in WHERE id <= 12;
SELECT * FROM minhash_pairs('DELETE FROM etl_sig_staging RETURNING id, sig', 0.9) ORDER BY id_a, id_b;
SELECT count(*) AS signatures_left FROM etl_sig_staging;
-- Move staging rows into a loaded table and group them in one statement; then keep the leaders.
CREATE TABLE etl_loaded (id bigint PRIMARY KEY, fp bigint, claimed boolean);
CREATE TABLE etl_moved_groups AS SELECT * FROM simhash_groups(
    'WITH moved AS (DELETE FROM etl_staging RETURNING *) INSERT INTO etl_loaded SELECT * FROM moved RETURNING id, fp',
    3, 'leader');
SELECT (SELECT count(*) FROM etl_staging) AS staging, (SELECT count(*) FROM etl_loaded) AS loaded,
       (SELECT count(*) FROM etl_moved_groups) AS grouped;
DELETE FROM etl_loaded l USING etl_moved_groups g WHERE l.id = g.id AND g.id <> g.group_id;
SELECT array_agg(id ORDER BY id) AS leaders_kept FROM etl_loaded;
-- An error after the query ran (a repeated id) rolls its changes back with the statement.
INSERT INTO etl_staging VALUES (100, 1, false), (101, 2, false);
SELECT * FROM simhash_pairs('DELETE FROM etl_staging RETURNING 5::bigint, fp', 3);
SELECT count(*) AS still_staged FROM etl_staging;
-- A read-only transaction refuses the write, as it would any other.
BEGIN READ ONLY;
SELECT * FROM simhash_pairs('DELETE FROM etl_staging RETURNING id, fp', 3);
ROLLBACK;
-- A data-modifying statement without RETURNING returns no rows.
SELECT * FROM simhash_pairs('DELETE FROM etl_staging');
SELECT count(*) AS not_deleted FROM etl_staging;

\set VERBOSITY terse
DROP TABLE etl_in, etl_staging, etl_sig_staging, etl_loaded, etl_moved_groups;
