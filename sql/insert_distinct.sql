-- Bulk near-dedup load: simhash_insert_distinct keeps exactly the rows the simhash_dedup trigger
-- keeps on the same INSERT ... SELECT (uniform, skewed and clustered data, in one chunk and in
-- many), 'mark', radius 0 and 64, what a plain INSERT does with the target's defaults, triggers,
-- constraints and row security, a hostile search_path, and every argument error. Races with
-- concurrent loads: specs/insert_distinct_race.spec.

CREATE FUNCTION distinct_try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- A library and a load, for each data set: the load has new rows, rows within 1-3 bits of a
-- library row and rows within 2 bits of an earlier row of the load, in one interleaved order.
--   uniform:   random fingerprints
--   skewed:    the 12 low bits constant (many rows share block values)
--   clustered: the load's rows chained 1-2 bits apart, so that which ones survive depends on the
--              order (a row near a skipped row is kept, one near a kept row is not)
--   uniform wide, skewed wide: 60,000 rows into 300,000 (a batch large enough to be swept)
--   dense wide:   as uniform wide, but one library row in 50 has the same fingerprint (its top bit
--                 set), so that the load's rows near it find 6,000 library rows each
CREATE TABLE distinct_sets (data text, lib_rows int, load_rows int);
INSERT INTO distinct_sets VALUES ('uniform', 20000, 6000), ('skewed', 20000, 6000), ('clustered', 5000, 3000),
                                 ('uniform wide', 300000, 60000), ('skewed wide', 300000, 60000),
                                 ('dense wide', 300000, 60000);
CREATE FUNCTION distinct_fp(data text, seed bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN data LIKE 'skewed%' THEN hashint8extended(seed, 5) & ~4095::bigint
                WHEN data = 'dense wide' AND seed <= 300000 AND seed % 50 = 0 THEN hashint8extended(1, 5) | (1::bigint << 63)
                ELSE hashint8extended(seed, 5) END $$;
CREATE FUNCTION distinct_load(data text, lib_rows int, load_rows int)
RETURNS TABLE (ord int, id bigint, fp bigint) LANGUAGE sql IMMUTABLE AS $$
    WITH RECURSIVE chain(i, fp) AS (  -- clustered: each row 1 or 2 bits from the one before
        SELECT 0, hashint8extended(7, 5)
        UNION ALL
        SELECT i + 1, fp # (1::bigint << (abs(hashint8extended(i, 6)) % 64)::int)
                         # CASE WHEN i % 3 = 0 THEN 1::bigint << (abs(hashint8extended(i, 8)) % 64)::int ELSE 0 END
        FROM chain WHERE i + 1 < load_rows AND data = 'clustered')
    SELECT i, 1000000 + i, fp FROM chain WHERE data = 'clustered'
    UNION ALL
    SELECT i, 1000000 + i,
           CASE WHEN i % 10 < 6 THEN distinct_fp(data, 1000000 + i)
                WHEN i % 10 < 9 THEN distinct_fp(data, 1 + abs(hashint8extended(i, 9)) % lib_rows)
                                     # (1::bigint << (12 + abs(hashint8extended(i, 10)) % 52)::int)
                                     # CASE WHEN i % 10 >= 7 THEN 1::bigint << (12 + abs(hashint8extended(i, 11)) % 52)::int ELSE 0 END
                ELSE distinct_fp(data, 1000000 + greatest(0, i - 9 - 10 * (abs(hashint8extended(i, 12)) % 50)))
                     # (3::bigint << (12 + abs(hashint8extended(i, 13)) % 51)::int)
           END
    FROM generate_series(0, load_rows - 1) i WHERE data <> 'clustered' $$;

CREATE TABLE distinct_staging (data text, ord int, id bigint, fp bigint);
INSERT INTO distinct_staging SELECT s.data, l.* FROM distinct_sets s, distinct_load(s.data, s.lib_rows, s.load_rows) l;

-- For each data set and memory limit: a library loaded by the trigger and one by the function,
-- a seventh of its rows deleted (distinct_libraries), then the loads (distinct_loads).
-- distinct_compare does both: the deleted rows are still in the index, and no page is all-visible.
-- With a VACUUM between the two, the deleted rows are gone and every page is all-visible: the
-- function takes its candidates there from the visibility map instead of the heap.
CREATE TABLE distinct_results (data text, memory_limit text, inserted bigint, skipped bigint, marked bigint,
                               trigger_rows bigint, bulk_rows bigint, only_trigger bigint, only_bulk bigint);
CREATE PROCEDURE distinct_libraries(data text, lib_rows int, tables text DEFAULT 'auto')
LANGUAGE plpgsql AS $$
BEGIN
    DROP TABLE IF EXISTS lib_trigger, lib_bulk;
    CREATE TABLE lib_trigger (id bigint PRIMARY KEY, fp bigint);
    INSERT INTO lib_trigger SELECT g, distinct_fp(data, g) FROM generate_series(1, lib_rows) g;
    CREATE TABLE lib_bulk (LIKE lib_trigger INCLUDING ALL);
    INSERT INTO lib_bulk SELECT * FROM lib_trigger;
    EXECUTE format('CREATE INDEX ON lib_trigger USING simhash (fp) WITH (tables = %s)', tables);
    EXECUTE format('CREATE INDEX ON lib_bulk USING simhash (fp) WITH (tables = %s)', tables);
    -- Deleted rows stay in the index until VACUUM: near-duplicates of them only are kept.
    DELETE FROM lib_trigger WHERE id % 7 = 0;
    DELETE FROM lib_bulk WHERE id % 7 = 0;
END $$;
CREATE PROCEDURE distinct_loads(data text, lib_rows int, memory_limit text, tables text DEFAULT 'auto', label text DEFAULT '',
                                radius int DEFAULT 3)
LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
    EXECUTE format('CREATE TRIGGER dedup BEFORE INSERT ON lib_trigger FOR EACH ROW EXECUTE FUNCTION simhash_dedup(%L, %L, %L)',
                   'fp', radius, 'skip');
    EXECUTE format('INSERT INTO lib_trigger SELECT id, fp FROM distinct_staging WHERE data = %L ORDER BY ord', data);
    SELECT * INTO r FROM simhash_insert_distinct('lib_bulk',
        format('SELECT id, fp FROM distinct_staging WHERE data = %L ORDER BY ord', data), radius, memory_limit => memory_limit);
    INSERT INTO distinct_results VALUES (data || CASE WHEN tables = 'auto' THEN '' ELSE ' ' || lib_rows || ' rows, ' || tables || ' tables' END
                                         || CASE WHEN radius = 3 THEN '' ELSE ', radius ' || radius END || label,
        memory_limit, r.inserted, r.skipped, r.marked,
        (SELECT count(*) FROM lib_trigger), (SELECT count(*) FROM lib_bulk),
        (SELECT count(*) FROM (SELECT id FROM lib_trigger EXCEPT SELECT id FROM lib_bulk) x),
        (SELECT count(*) FROM (SELECT id FROM lib_bulk EXCEPT SELECT id FROM lib_trigger) x));
END $$;
CREATE PROCEDURE distinct_compare(data text, lib_rows int, memory_limit text, tables text DEFAULT 'auto', radius int DEFAULT 3)
LANGUAGE plpgsql AS $$
BEGIN
    CALL distinct_libraries(data, lib_rows, tables);
    CALL distinct_loads(data, lib_rows, memory_limit, tables, radius => radius);
END $$;
-- 64kB: chunks of a few hundred rows (earlier rows of the load are found through the index);
-- the default: the whole load in one or two chunks (found in memory).
CALL distinct_compare('uniform', 20000, '64kB');
CALL distinct_compare('uniform', 20000, NULL);
CALL distinct_compare('skewed', 20000, '64kB');
CALL distinct_compare('skewed', 20000, NULL);
CALL distinct_compare('clustered', 5000, '64kB');
CALL distinct_compare('clustered', 5000, NULL);
-- Libraries vacuumed before the loads: candidates on all-visible pages.
CALL distinct_libraries('uniform', 20000);
VACUUM lib_trigger, lib_bulk;
SELECT relallvisible = relpages AS all_visible FROM pg_class WHERE relname = 'lib_bulk';
CALL distinct_loads('uniform', 20000, '64kB', label => ', vacuumed');
CALL distinct_libraries('skewed', 20000);
VACUUM lib_trigger, lib_bulk;
CALL distinct_loads('skewed', 20000, NULL, label => ', vacuumed');
-- A library of 300,000 rows in four tables: its run's directory is the whole 16-bit block, where
-- the batch search of a large chunk sweeps two of the four tables (the ones keyed on blocks 0 and
-- 2), reading only the entries whose blocks 0-1 or 2-3 are within one bit of a row's; a small
-- chunk probes the four. A run that large is swept by the backend and a parallel worker, half of
-- the slots each; with max_parallel_maintenance_workers = 0, by the backend alone. With 'dense
-- wide' the worker's results overflow its shared memory (the rows near the common fingerprint
-- find 6,000 entries each, in the worker's half): the backend then sweeps every slot itself.
CALL distinct_compare('uniform', 300000, NULL, '4');
CALL distinct_compare('uniform wide', 300000, NULL, '4');
CALL distinct_compare('skewed wide', 300000, NULL, '4');
CALL distinct_libraries('skewed wide', 300000, '4');
VACUUM lib_trigger, lib_bulk;
CALL distinct_loads('skewed wide', 300000, NULL, '4', ', vacuumed');
CALL distinct_compare('dense wide', 300000, NULL, '4');
SET max_parallel_maintenance_workers = 0;
CALL distinct_libraries('uniform wide', 300000, '4');
CALL distinct_loads('uniform wide', 300000, NULL, '4', ', one process');
CALL distinct_libraries('skewed wide', 300000, '4');
CALL distinct_loads('skewed wide', 300000, NULL, '4', ', one process');
RESET max_parallel_maintenance_workers;
SELECT tables, dirbits FROM simhash_index_runs('lib_bulk_fp_idx') ORDER BY entries DESC LIMIT 1;
-- The same libraries in three tables (blocks of 22, 21 and 21 bits, as a run of 2^27 entries or
-- more has): a large chunk is swept by block value, each table the check probes read once, slot by
-- slot, each value's entries compared with the rows whose block is within the table's per-block
-- radius of it; by the backend and a parallel worker, or by the backend alone.
CALL distinct_compare('uniform wide', 300000, NULL, '3');
CALL distinct_compare('skewed wide', 300000, NULL, '3');
CALL distinct_compare('dense wide', 300000, NULL, '3');
CALL distinct_libraries('uniform wide', 300000, '3');
VACUUM lib_trigger, lib_bulk;
CALL distinct_loads('uniform wide', 300000, NULL, '3', ', vacuumed');
SET max_parallel_maintenance_workers = 0;
CALL distinct_libraries('skewed wide', 300000, '3');
CALL distinct_loads('skewed wide', 300000, NULL, '3', ', one process');
RESET max_parallel_maintenance_workers;
-- Radius 5, per-block radius 1 in two of four tables and in each of three: swept by value too.
CALL distinct_compare('uniform wide', 300000, NULL, '4', 5);
CALL distinct_compare('skewed wide', 300000, NULL, '3', 5);
SELECT tables, dirbits FROM simhash_index_runs('lib_bulk_fp_idx') ORDER BY entries DESC LIMIT 1;
-- Five tables (blocks of 13, 13, 13, 13 and 12 bits): tables 0-3 have 13-bit directories, table 4
-- a 12-bit one, so the sweep by value, and its halves in a parallel sweep, go over a different
-- number of slots in each table. Radius 3 probes tables 0-3 exactly; radius 5 every table, table
-- 0 within one bit.
CALL distinct_compare('uniform wide', 300000, NULL, '5');
CALL distinct_compare('skewed wide', 300000, NULL, '5', 5);
SELECT tables, dirbits FROM simhash_index_runs('lib_bulk_fp_idx') ORDER BY entries DESC LIMIT 1;
SELECT * FROM distinct_results ORDER BY data, memory_limit NULLS LAST;
-- Nothing within 3 bits of anything else among the rows the load added (the last data set).
SELECT count(*) AS near_pairs FROM lib_bulk a JOIN lib_bulk b ON hamming(a.fp, b.fp) <= 3 AND a.id < b.id
WHERE b.id >= 1000000;

-- 'mark' on a chunk large enough to be swept (by the backend and a parallel worker): every row of
-- the load goes in; a row is marked exactly when a row inserted before it (a library row, or a
-- lower id of the load) lies within 3 bits, its mark names such a row, and it names the row the
-- trigger's 'mark' names (the nearest, which needs every entry within the radius, not one a row).
-- For 60 new rows of the load, two library rows: one 3 bits away whose blocks 0-1 are within one
-- bit of the row's (found in table 0 only), and a nearer one, 2 bits away in blocks 0-1 (found in
-- table 2 only): the mark names the nearer.
-- The same with three tables: the check sweeps every table by block value.
CREATE PROCEDURE distinct_mark_load(tables int) LANGUAGE plpgsql AS $$
BEGIN
    CREATE TABLE lib_mark (id bigint PRIMARY KEY, fp bigint, dup_of bigint);
    INSERT INTO lib_mark SELECT g, distinct_fp('uniform wide', g), NULL FROM generate_series(1, 300000) g;
    INSERT INTO lib_mark
    SELECT 400000 + 2 * ord + k, CASE k WHEN 0 THEN fp # (1::bigint << 50) # (1::bigint << 20) # (1::bigint << 5)
                                        ELSE fp # (1::bigint << 60) # (1::bigint << 40) END, NULL
    FROM distinct_staging, generate_series(0, 1) k WHERE data = 'uniform wide' AND ord % 1000 = 0;
    CREATE TABLE lib_mark_trigger (LIKE lib_mark INCLUDING ALL);
    INSERT INTO lib_mark_trigger SELECT * FROM lib_mark;
    EXECUTE format('CREATE INDEX ON lib_mark USING simhash (fp) WITH (tables = %s)', tables);
    EXECUTE format('CREATE INDEX ON lib_mark_trigger USING simhash (fp) WITH (tables = %s)', tables);
    DELETE FROM lib_mark WHERE id % 7 = 0;
    DELETE FROM lib_mark_trigger WHERE id % 7 = 0;
    CREATE TRIGGER dedup BEFORE INSERT ON lib_mark_trigger FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'mark', 'dup_of');
    INSERT INTO lib_mark_trigger SELECT id, fp FROM distinct_staging WHERE data = 'uniform wide' ORDER BY ord;
END $$;
CREATE FUNCTION distinct_mark_check()
RETURNS TABLE (wrongly_marked bigint, bad_marks bigint, marked bigint, rows bigint, other_mark_than_trigger bigint,
               marked_nearer bigint) LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY
    SELECT count(*) FILTER (WHERE (b.dup_of IS NOT NULL) <> EXISTS (
               SELECT 1 FROM lib_mark a WHERE hamming(a.fp, b.fp) <= 3 AND a.id < b.id)),
           count(*) FILTER (WHERE b.dup_of IS NOT NULL AND NOT EXISTS (
               SELECT 1 FROM lib_mark a WHERE a.id = b.dup_of AND hamming(a.fp, b.fp) <= 3 AND a.id < b.id)),
           count(*) FILTER (WHERE b.dup_of IS NOT NULL),
           count(*), count(*) FILTER (WHERE b.dup_of IS DISTINCT FROM t.dup_of),
           count(*) FILTER (WHERE b.dup_of >= 400000 AND b.dup_of % 2 = 1)
    FROM lib_mark b JOIN lib_mark_trigger t USING (id) WHERE b.id >= 1000000;
END $$;
CALL distinct_mark_load(4);
SELECT * FROM simhash_insert_distinct('lib_mark',
    $$SELECT id, fp FROM distinct_staging WHERE data = 'uniform wide' ORDER BY ord$$, 3, 'mark', mark_column => 'dup_of');
SELECT * FROM distinct_mark_check();
DROP TABLE lib_mark, lib_mark_trigger;
CALL distinct_mark_load(3);
SELECT * FROM simhash_insert_distinct('lib_mark',
    $$SELECT id, fp FROM distinct_staging WHERE data = 'uniform wide' ORDER BY ord$$, 3, 'mark', mark_column => 'dup_of');
SELECT * FROM distinct_mark_check();
DROP TABLE lib_mark, lib_mark_trigger;

-- A pending list longer than a backend's copies hold (524,288 entries), as a long bulk load leaves
-- when merges cannot retire pages under its snapshot: a batch of 256 rows or more copies it once
-- for itself instead of reading it for each row. The rows kept are the trigger's.
CREATE TABLE lib_long (id bigint PRIMARY KEY, fp bigint);
CREATE INDEX lib_long_fp ON lib_long USING simhash (fp) WITH (pending_limit = 65536);
INSERT INTO lib_long SELECT g, distinct_fp('uniform', g) FROM generate_series(1, 600000) g;
CREATE TABLE lib_long_trigger (LIKE lib_long INCLUDING ALL);
INSERT INTO lib_long_trigger SELECT * FROM lib_long;
SELECT pending_entries, runs FROM simhash_index_info('lib_long_fp');
CREATE TRIGGER dedup BEFORE INSERT ON lib_long_trigger FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip');
INSERT INTO lib_long_trigger SELECT id, fp FROM distinct_staging WHERE data = 'uniform' ORDER BY ord;
SELECT * FROM simhash_insert_distinct('lib_long', $$SELECT id, fp FROM distinct_staging WHERE data = 'uniform' ORDER BY ord$$, 3);
SELECT (SELECT count(*) FROM lib_long) AS bulk_rows, (SELECT count(*) FROM lib_long_trigger) AS trigger_rows,
       (SELECT count(*) FROM (SELECT id FROM lib_long EXCEPT SELECT id FROM lib_long_trigger) x) AS only_bulk,
       (SELECT count(*) FROM (SELECT id FROM lib_long_trigger EXCEPT SELECT id FROM lib_long) x) AS only_trigger;
DROP TABLE lib_long, lib_long_trigger;

-- Small cases by hand. 7 is exactly 3 bits from 0, 15 is 4 bits from 0.
CREATE TABLE pages (id bigint PRIMARY KEY, fp bigint, dup_of bigint, note text DEFAULT 'default note',
                    loaded_at int DEFAULT 42);
CREATE INDEX pages_fp ON pages USING simhash (fp);
INSERT INTO pages (id, fp) VALUES (1, 0);
SELECT * FROM simhash_insert_distinct('pages', $$SELECT * FROM (VALUES (2::bigint, 7::bigint), (3, 15), (4, 14), (5, 15)) v(id, fp)$$, 3);
-- The source's columns go to the target's of the same names; the others get their defaults.
SELECT * FROM simhash_insert_distinct('pages', $$SELECT 6::bigint AS id, 'given' AS note, 6148914691236517205 AS fp$$, 3);
SELECT * FROM pages ORDER BY id;
-- Radius 0: only equal fingerprints are duplicates.
SELECT * FROM simhash_insert_distinct('pages', $$SELECT * FROM (VALUES (7::bigint, 0::bigint), (8, 1), (9, 1)) v(id, fp)$$, 0);
-- Radius 64: every fingerprint is a duplicate of every other.
SELECT * FROM simhash_insert_distinct('pages', $$SELECT * FROM (VALUES (10::bigint, -1::bigint)) v(id, fp)$$, 64);
-- An empty source inserts nothing.
SELECT * FROM simhash_insert_distinct('pages', $$SELECT 1::bigint AS id, 1::bigint AS fp WHERE false$$, 3);
SELECT id, fp FROM pages ORDER BY id;

-- A row whose first candidate is a deleted row is searched again in full: 0 is 1 bit from the
-- deleted 1 << 40 (in the pending list, searched first) and 2 bits from the stored
-- (1 << 60) | (1 << 44) (in a run, which VACUUM wrote out), so it is a duplicate.
CREATE TABLE pages_deleted (id bigint, fp bigint);
CREATE INDEX ON pages_deleted USING simhash (fp) WITH (tables = 4);
INSERT INTO pages_deleted VALUES (2, (1::bigint << 60) | (1::bigint << 44));
VACUUM pages_deleted;
INSERT INTO pages_deleted VALUES (1, 1::bigint << 40);
DELETE FROM pages_deleted WHERE id = 1;
SELECT * FROM simhash_insert_distinct('pages_deleted', $$SELECT 3::bigint AS id, 0::bigint AS fp$$, 2);
DROP TABLE pages_deleted;

-- 'mark': every row goes in; a near-duplicate gets the key of the row it duplicates: one not
-- marked itself first, then the nearest, the stored one where as near as one of the load. B =
-- 0x0F0F0F0F0F0F0F0F is far from every stored row; 21 is 1 bit from 20; 22 is 1 bit from the stored
-- 8 (fp 1) and 2 from the stored 1 (fp 0); 23 is 1 bit from 21 (marked) and 2 from 20: it gets 20.
SELECT * FROM simhash_insert_distinct('pages',
    $$SELECT * FROM (VALUES (20::bigint, 1085102592571150095::bigint), (21, 1085102592571150095 # 16),
                            (22, 3), (23, 1085102592571150095 # 48)) v(id, fp)$$, 3,
    'mark', mark_column => 'dup_of');
SELECT id, fp, dup_of FROM pages WHERE id >= 20 ORDER BY id;

-- The target's BEFORE triggers, CHECK constraints and unique indexes apply as to an INSERT; an
-- error rolls the whole load back.
CREATE FUNCTION pages_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.note := 'trigger saw ' || NEW.id; RETURN NEW; END $$;
CREATE TRIGGER pages_note BEFORE INSERT ON pages FOR EACH ROW EXECUTE FUNCTION pages_note();
SELECT * FROM simhash_insert_distinct('pages', $$SELECT * FROM (VALUES (30::bigint, 3689348814741910323::bigint)) v(id, fp)$$, 3);
SELECT id, note FROM pages WHERE id = 30;
DROP TRIGGER pages_note ON pages;
ALTER TABLE pages ADD CONSTRAINT small_ids CHECK (id < 1000);
SELECT count(*) FROM pages;
SELECT distinct_try($$SELECT simhash_insert_distinct('pages', 'SELECT * FROM (VALUES (31::bigint, 123456789::bigint), (1001, 987654321)) v(id, fp)', 3)$$);
SELECT distinct_try($$SELECT simhash_insert_distinct('pages', 'SELECT * FROM (VALUES (1::bigint, 987654321::bigint)) v(id, fp)', 3)$$);
SELECT count(*) FROM pages;
ALTER TABLE pages DROP CONSTRAINT small_ids;

-- Row security: the load's rows must pass the loader's WITH CHECK policies, as in an INSERT.
CREATE ROLE distinct_loader;
GRANT SELECT, INSERT ON pages TO distinct_loader;
GRANT SELECT ON distinct_staging TO distinct_loader;
ALTER TABLE pages ENABLE ROW LEVEL SECURITY;
CREATE POLICY small_ids ON pages FOR ALL TO distinct_loader USING (true) WITH CHECK (id < 100);
SET ROLE distinct_loader;
SELECT distinct_try($$SELECT simhash_insert_distinct('pages', 'SELECT * FROM (VALUES (40::bigint, 55555555555::bigint)) v(id, fp)', 3)$$);
SELECT distinct_try($$SELECT simhash_insert_distinct('pages', 'SELECT * FROM (VALUES (140::bigint, 66666666666::bigint)) v(id, fp)', 3)$$);
RESET ROLE;
ALTER TABLE pages DISABLE ROW LEVEL SECURITY;
REVOKE INSERT ON pages FROM distinct_loader;
SET ROLE distinct_loader;
SELECT distinct_try($$SELECT simhash_insert_distinct('pages', 'SELECT * FROM (VALUES (41::bigint, 77777777777::bigint)) v(id, fp)', 3)$$);
RESET ROLE;

-- A hostile search_path changes nothing in the SQL the function builds.
CREATE SCHEMA distinct_intruder;
CREATE FUNCTION distinct_intruder.simhash_insert_distinct_rows() RETURNS SETOF record LANGUAGE sql AS $$ SELECT 1 $$;
CREATE TABLE distinct_intruder.pages (id bigint, fp bigint);
CREATE TYPE distinct_intruder.int8 AS (x int);
SET search_path = distinct_intruder, public, pg_catalog;
SELECT * FROM public.simhash_insert_distinct('public.pages', $$SELECT * FROM (VALUES (50::bigint, 88888888888::bigint)) v(id, fp)$$, 3);
RESET search_path;
SELECT count(*) AS intruder_rows FROM distinct_intruder.pages;
SELECT id FROM pages WHERE id = 50;

-- REPEATABLE READ: the transaction's snapshot, looked at again under the latest.
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT * FROM simhash_insert_distinct('pages', $$SELECT * FROM (VALUES (60::bigint, 99999999999::bigint), (61, 99999999998)) v(id, fp)$$, 3);
COMMIT;

-- The locks: every key of the table, until the transaction ends.
BEGIN;
SELECT * FROM simhash_insert_distinct('pages', $$SELECT * FROM (VALUES (70::bigint, 1234567890123::bigint)) v(id, fp)$$, 3);
SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 'pages'::regclass AND objsubid = 21320
                                 AND pid = pg_backend_pid() AND granted;
COMMIT;

-- Argument errors.
CREATE TABLE two_fps (id bigint, a bigint, b bigint);
CREATE INDEX ON two_fps USING simhash (a);
CREATE INDEX ON two_fps USING simhash (b);
CREATE TABLE no_index (id bigint, fp bigint);
CREATE TABLE generated_fp (id bigint, body text, fp bigint GENERATED ALWAYS AS (simhash(body)) STORED);
CREATE INDEX ON generated_fp USING simhash (fp);
CREATE TABLE parted (id bigint, fp bigint) PARTITION BY RANGE (id);
CREATE VIEW pages_view AS SELECT * FROM pages;
SELECT distinct_try(stmt) FROM (VALUES
    ($$SELECT simhash_insert_distinct(NULL, 'SELECT 1', 3)$$),
    ($$SELECT simhash_insert_distinct('pages', NULL, 3)$$),
    ($$SELECT simhash_insert_distinct('pages', 'SELECT 1::bigint AS id, 1::bigint AS fp', NULL)$$),
    ($$SELECT simhash_insert_distinct('pages', 'SELECT 1::bigint AS id, 1::bigint AS fp', 65)$$),
    ($$SELECT simhash_insert_distinct('pages', 'SELECT 1::bigint AS id, 1::bigint AS fp', -1)$$),
    ($$SELECT simhash_insert_distinct('pages', 'SELECT 1::bigint AS id, 1::bigint AS fp', 3, 'error')$$),
    ($$SELECT simhash_insert_distinct('pages', 'SELECT 1::bigint AS id, 1::bigint AS fp', 3, 'mark')$$),
    ($$SELECT simhash_insert_distinct('pages', 'SELECT 1::bigint AS id, 1::bigint AS fp', 3, mark_column => 'dup_of')$$),
    ($$SELECT simhash_insert_distinct('pages', 'SELECT 1::bigint AS id, 1::bigint AS fp', 3, 'mark', mark_column => 'fp')$$),
    ($$SELECT simhash_insert_distinct('pages', 'SELECT 1::bigint AS fp', 3, 'mark', mark_column => 'dup_of')$$),
    ($$SELECT simhash_insert_distinct('pages', 'SELECT 1 AS id, 1::bigint AS fp', 3, 'mark', mark_column => 'dup_of')$$),
    ($$SELECT simhash_insert_distinct('pages', 'SELECT 1::bigint AS id, 1::bigint AS fp', 3, 'mark', mark_column => 'nope')$$),
    ($$SELECT simhash_insert_distinct('pages', 'SELECT 1::bigint AS id, 1::bigint AS fp', 3, memory_limit => 'lots')$$),
    ($$SELECT simhash_insert_distinct('pages', 'SELECT 1::bigint AS id', 3)$$),
    ($$SELECT simhash_insert_distinct('pages', 'SELECT 1::bigint AS id, 1 AS fp', 3)$$),
    ($$SELECT simhash_insert_distinct('pages', 'SELECT 1::bigint AS id, NULL::bigint AS fp', 3)$$),
    ($$SELECT simhash_insert_distinct('pages', 'SELECT 1::bigint AS id, 1::bigint AS fp, 2 AS extra', 3)$$),
    ($$SELECT simhash_insert_distinct('pages', 'SELECT 1::bigint AS id, 1::bigint AS fp, 2::bigint AS id', 3)$$),
    ($$SELECT simhash_insert_distinct('pages', 'CREATE TABLE x (a int)', 3)$$),
    ($$SELECT simhash_insert_distinct('pages', 'SELECT 1::bigint AS id, 1::bigint AS fp', 3, fingerprint => 'note')$$),
    ($$SELECT simhash_insert_distinct('pages', 'SELECT 1::bigint AS id, 1::bigint AS fp', 3, fingerprint => 'nope')$$),
    ($$SELECT simhash_insert_distinct('two_fps', 'SELECT 1::bigint AS id, 1::bigint AS a', 3)$$),
    ($$SELECT simhash_insert_distinct('no_index', 'SELECT 1::bigint AS id, 1::bigint AS fp', 3)$$),
    ($$SELECT simhash_insert_distinct('generated_fp', 'SELECT 1::bigint AS id, ''x'' AS body', 3)$$),
    ($$SELECT simhash_insert_distinct('parted', 'SELECT 1::bigint AS id, 1::bigint AS fp', 3)$$),
    ($$SELECT simhash_insert_distinct('pages_view', 'SELECT 1::bigint AS id, 1::bigint AS fp', 3)$$),
    ($$SELECT * FROM simhash_insert_distinct_rows() AS r(a int)$$)
) s(stmt);
-- With the fingerprint named, the other index of two_fps is not in the way.
SELECT * FROM simhash_insert_distinct('two_fps', 'SELECT 1::bigint AS id, 1::bigint AS a, 2::bigint AS b', 3, fingerprint => 'b');
SELECT count(*) FROM pages WHERE id = 1;  -- nothing was inserted by the failed calls

DROP TABLE distinct_results, distinct_staging, distinct_sets, lib_trigger, lib_bulk, pages, two_fps, no_index,
           generated_fp, parted CASCADE;
DROP SCHEMA distinct_intruder CASCADE;
DROP ROLE distinct_loader;
DROP PROCEDURE distinct_compare(text, int, text, text, int);
DROP PROCEDURE distinct_mark_load(int);
DROP FUNCTION distinct_load(text, int, int), distinct_fp(text, bigint), distinct_try(text), pages_note(), distinct_mark_check();
