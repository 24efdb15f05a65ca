-- Deduplication on load: the simhash_dedup() trigger (skip, error, mark), in batches and COPY,
-- radius boundaries, NULL fingerprints kept by nulls=keep, UPDATE, argument errors (at CREATE
-- TRIGGER and at the first firing), the lock keys. Verification, generated columns, NULLs refused
-- and a hostile search_path: sql/load_verify.sql. The race-freedom between concurrent loaders is
-- tested by the isolation spec specs/load_race.spec.

CREATE FUNCTION load_try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

CREATE TABLE load_pages (id bigserial PRIMARY KEY, fp bigint, dup_of bigint, note text);
CREATE INDEX load_pages_fp ON load_pages USING simhash (fp);
CREATE TRIGGER dedup BEFORE INSERT OR UPDATE OF fp ON load_pages
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip', 'nulls=keep');

-- skip: against stored rows. 7 is exactly 3 bits from 0 (a duplicate), 15 is 4 bits away (kept).
INSERT INTO load_pages (fp, note) VALUES (0, 'first');
INSERT INTO load_pages (fp, note) VALUES (7, '3 bits from 0') RETURNING id, fp;
INSERT INTO load_pages (fp, note) VALUES (15, '4 bits from 0') RETURNING id, fp;
-- 15 # 1 = 14 is 1 bit from 15 and 3 bits from 0: skipped.
INSERT INTO load_pages (fp, note) VALUES (14, 'near both') RETURNING id, fp;

-- skip within one INSERT ... SELECT: rows of the same statement see each other. The staging rows
-- come in id order; 1<<40 and (1<<40)+3 are 2 bits apart, so only the first is kept; -1 and
-- -1 # 7 (3 bits) likewise; 1<<20 | 1<<30 | 1<<50 | 1<<60 (4 bits from 0, 4+ from the rest) stays.
CREATE TABLE load_staging (seq int, fp bigint);
INSERT INTO load_staging VALUES
    (1, 1::bigint << 40), (2, (1::bigint << 40) + 3), (3, -1), (4, -1 # 7),
    (5, (1::bigint << 20) | (1::bigint << 30) | (1::bigint << 50) | (1::bigint << 60)),
    (6, 1), (7, NULL), (8, NULL);
INSERT INTO load_pages (fp, note) SELECT fp, 'staging ' || seq FROM load_staging ORDER BY seq
RETURNING fp, note;

-- COPY: same in-batch behaviour (COPY with a BEFORE ROW trigger inserts row by row).
COPY load_pages (fp, note) FROM STDIN;
-3670598878359251130	copy 1
-3670598878359251129	copy 2 (1 bit from copy 1: skipped)
-3670598878359251127	copy 3 (4 bits from copy 1, 3 from the skipped copy 2: kept)
1099511627776	copy 4 (1<<40: stored already)
-9223372036854775808	copy 5 (sign bit only: 1 bit from 0)
3647684041653542134	copy 6
\N	copy 7 (NULL)
\.
SELECT id, fp, note FROM load_pages ORDER BY id;

-- With nulls=keep, NULL fingerprints duplicate nothing (like UNIQUE): all three NULL rows above were kept.
SELECT count(*) AS null_rows FROM load_pages WHERE fp IS NULL;

-- The lock keys: any two fingerprints within the radius share a key (pigeonhole over radius + 1
-- blocks); at most radius + 1 keys per fingerprint, folded into 0..1023.
SELECT simhash_neighbourhood_keys(0, 3) AS keys_r3, simhash_neighbourhood_keys(0, 0) AS keys_r0,
       simhash_neighbourhood_keys(12345, 64) AS keys_r64, cardinality(simhash_neighbourhood_keys(-1, 63)) AS n_r63;
WITH pairs AS (
    SELECT r, a, a # ((1::bigint << (g % 64)) | (1::bigint << ((g * 7 + r) % 64)) | (1::bigint << ((g * 13 + 2 * r) % 64))
                      | CASE WHEN r >= 6 THEN (1::bigint << ((g * 29) % 64)) | (1::bigint << ((g * 31 + 5) % 64))
                             | (1::bigint << ((g * 37 + 9) % 64)) ELSE 0 END) AS b
    FROM generate_series(1, 5000) g, hashint8extended(g, 0) a, (VALUES (3), (6), (12)) v(r)
)
SELECT r, count(*) AS pairs, max(hamming(a, b)) AS max_bits,
       count(*) FILTER (WHERE NOT simhash_neighbourhood_keys(a, r) && simhash_neighbourhood_keys(b, r)) AS no_shared_key,
       max(cardinality(simhash_neighbourhood_keys(a, r))) AS max_keys
FROM pairs GROUP BY r ORDER BY r;
SELECT min(k) >= 0 AND max(k) < 1024 AS keys_in_range
FROM generate_series(1, 2000) g, unnest(simhash_neighbourhood_keys(hashint8extended(g, 0), g % 65)) k;

-- The locks are transaction-scoped advisory locks on (table oid, key).
BEGIN;
SELECT simhash_lock_neighbourhood(0, 3, 'load_pages');
SELECT classid = 'load_pages'::regclass::oid AS on_table, array_agg(objid::int ORDER BY objid) = simhash_neighbourhood_keys(0, 3) AS same_keys,
       min(objsubid) AS objsubid, bool_and(mode = 'ExclusiveLock') AS exclusive
FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() GROUP BY classid;
COMMIT;
SELECT count(*) AS left_after_commit FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
-- A batch's locks at once: the union of its fingerprints' keys (NULLs have none).
BEGIN;
SELECT simhash_lock_neighbourhoods(ARRAY[0, NULL, 7, hashint8extended(1, 0), hashint8extended(2, 0)], 3, 'load_pages');
SELECT array_agg(objid::int ORDER BY objid) = (
           SELECT array_agg(DISTINCT k ORDER BY k)
           FROM unnest(ARRAY[0, 7, hashint8extended(1, 0), hashint8extended(2, 0)]) fp,
                unnest(simhash_neighbourhood_keys(fp, 3)) k) AS union_of_keys,
       count(*) AS locks
FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND classid = 'load_pages'::regclass::oid;
COMMIT;
-- Keys a rolled-back savepoint locked are locked again when asked for; keys the transaction
-- locked before the savepoint stay locked after its rollback.
BEGIN;
SAVEPOINT before_locks;
SELECT simhash_lock_neighbourhood(0, 3, 'load_pages');
ROLLBACK TO SAVEPOINT before_locks;
SELECT count(*) AS locks_after_rollback FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
SELECT simhash_lock_neighbourhood(0, 3, 'load_pages');
SELECT count(*) AS locks_taken_again FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
SAVEPOINT inner_locks;
SELECT simhash_lock_neighbourhood(0, 3, 'load_pages'), simhash_lock_neighbourhood(7, 3, 'load_pages');
ROLLBACK TO SAVEPOINT inner_locks;
SELECT array_agg(objid::int ORDER BY objid) = simhash_neighbourhood_keys(0, 3) AS outer_keys_kept
FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
COMMIT;
-- Keys are held by the transaction, not by a cursor that took them: a later FETCH of that cursor
-- that fails (and takes the cursor's own locks with it) leaves them held, for a call and for a
-- row the trigger checked inside the cursor.
CREATE TABLE load_cursor_rows (fp bigint);
CREATE TRIGGER dedup BEFORE INSERT ON load_cursor_rows FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip');
BEGIN;
DECLARE lock_cursor CURSOR FOR
    SELECT CASE WHEN i = 1 THEN simhash_lock_neighbourhood(4242, 3, 'load_cursor_rows')::text ELSE (1 / (i - 2))::text END
    FROM generate_series(1, 2) i;
FETCH 1 FROM lock_cursor;
SAVEPOINT failing_fetch;
FETCH 1 FROM lock_cursor;
ROLLBACK TO SAVEPOINT failing_fetch;
RELEASE SAVEPOINT failing_fetch;
SELECT count(*) AS held_after_failed_fetch FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
INSERT INTO load_cursor_rows VALUES (4242);
SELECT count(*) AS held_after_insert FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
ROLLBACK;
CREATE FUNCTION load_insert_fp(bigint) RETURNS text LANGUAGE sql AS
    $$ INSERT INTO load_cursor_rows VALUES ($1) RETURNING 'inserted' $$;
BEGIN;
DECLARE insert_cursor CURSOR FOR
    SELECT CASE WHEN i = 1 THEN load_insert_fp(4242) ELSE (1 / (i - 2))::text END FROM generate_series(1, 2) i;
FETCH 1 FROM insert_cursor;
SAVEPOINT failing_fetch;
FETCH 1 FROM insert_cursor;
ROLLBACK TO SAVEPOINT failing_fetch;
RELEASE SAVEPOINT failing_fetch;
SELECT count(*) AS rows_kept FROM load_cursor_rows WHERE fp = 4242;
SELECT count(*) AS keys_held_for_them FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
ROLLBACK;
DROP FUNCTION load_insert_fp(bigint);
DROP TABLE load_cursor_rows;
-- The same through the trigger: a row inserted again after its savepoint's rollback holds its keys.
BEGIN;
SAVEPOINT before_insert;
INSERT INTO load_pages (fp, note) VALUES (hashint8extended(1, 0), 'rolled back');
ROLLBACK TO SAVEPOINT before_insert;
INSERT INTO load_pages (fp, note) VALUES (hashint8extended(1, 0), 'rolled back');
SELECT array_agg(objid::int ORDER BY objid) = simhash_neighbourhood_keys(hashint8extended(1, 0), 3) AS keys_after_rollback
FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
ROLLBACK;
BEGIN;
SELECT simhash_lock_neighbourhoods('{}', 3, 'load_pages'), simhash_lock_neighbourhoods('{NULL}', 3, 'load_pages');
SELECT count(*) AS locks_of_no_fingerprint FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
COMMIT;

-- The check query has this form and uses the simhash index (exact, no recheck).
PREPARE load_check(bigint, tid) AS
    SELECT ctid, fp FROM ONLY public.load_pages WHERE hamming(fp, $1) <= 3 AND ctid <> $2
    ORDER BY hamming(fp, $1), ctid LIMIT 1;
SET plan_cache_mode = force_generic_plan;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) EXECUTE load_check(7, '(0,0)');
EXECUTE load_check(7, '(0,0)');
RESET enable_seqscan;
RESET plan_cache_mode;
DEALLOCATE load_check;

-- UPDATE OF fp is checked too, against every row but itself; an unchanged fingerprint is not.
UPDATE load_pages SET fp = 3 WHERE note = '4 bits from 0' RETURNING fp;   -- 2 bits from 0: skipped
UPDATE load_pages SET fp = 15 # 16 WHERE note = '4 bits from 0' RETURNING fp; -- 1 bit from itself only
UPDATE load_pages SET note = note || '.' WHERE fp = 0 RETURNING note;

-- error: SQLSTATE 23505 with the existing row in the detail (optional key column).
DROP TRIGGER dedup ON load_pages;
CREATE TRIGGER dedup BEFORE INSERT OR UPDATE OF fp ON load_pages
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'error', 'id');
\set VERBOSITY default
INSERT INTO load_pages (fp) VALUES (7);
\set VERBOSITY terse
SELECT load_try('INSERT INTO load_pages (fp) VALUES (7)');
SELECT load_try('INSERT INTO load_pages (fp) VALUES (15)');  -- 4 bits from 0, but 1 bit from 31 (15 # 16)
SELECT load_try($$INSERT INTO load_pages (fp, note) SELECT fp, 'err' FROM (VALUES (1::bigint << 33), ((1::bigint << 33) + 1)) v(fp)$$);
SELECT count(*) AS rolled_back FROM load_pages WHERE note = 'err';
DROP TRIGGER dedup ON load_pages;
CREATE TRIGGER dedup BEFORE INSERT OR UPDATE OF fp ON load_pages
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '0', 'error');
\set VERBOSITY default
INSERT INTO load_pages (fp) VALUES (0);
\set VERBOSITY terse
INSERT INTO load_pages (fp, note) VALUES (1, 'radius 0: 1 bit is not a duplicate') RETURNING fp, note;

-- mark: keep the row, set dup_of to the key of the closest unmarked row within the radius.
DELETE FROM load_pages;
DROP TRIGGER dedup ON load_pages;
CREATE TRIGGER dedup BEFORE INSERT OR UPDATE OF fp ON load_pages
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'mark', 'dup_of', 'nulls=keep');
INSERT INTO load_pages (id, fp, note) VALUES (100, 0, 'original'), (101, 1, 'copy of 100'), (102, 3, 'copy of 100 (2 bits), 1 bit from 101'),
    (103, 255, 'unrelated'), (104, NULL, 'null'), (105, 127, '1 bit from 103'), (106, 1 # 256, 'marked 101 is closer, but 100 is unmarked');
INSERT INTO load_pages (id, fp, dup_of, note) VALUES (107, 6148914691236517205, 999, 'user value replaced (no duplicate)');
SELECT id, fp, dup_of, note FROM load_pages ORDER BY id;
-- mark with another key column, any type the key casts to.
ALTER TABLE load_pages ADD COLUMN dup_note text;
DROP TRIGGER dedup ON load_pages;
CREATE TRIGGER dedup BEFORE INSERT ON load_pages
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'mark', 'dup_note', 'note');
INSERT INTO load_pages (id, fp) VALUES (108, 254) RETURNING id, dup_note;

-- The check runs as the table owner: a loader with only INSERT privilege can load.
DROP TRIGGER dedup ON load_pages;
CREATE TRIGGER dedup BEFORE INSERT ON load_pages FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip');
CREATE ROLE regress_simhash_loader;
GRANT INSERT ON load_pages TO regress_simhash_loader;
SET ROLE regress_simhash_loader;
INSERT INTO load_pages (id, fp, note) VALUES (200, -6566953864026435689, 'by loader'), (201, -6566953864026435695, 'by loader (2 bits from 200)');
RESET ROLE;
SELECT id, fp FROM load_pages WHERE note LIKE 'by loader%';
DROP OWNED BY regress_simhash_loader;
DROP ROLE regress_simhash_loader;

-- Plans are cached per trigger and follow renames of the table.
ALTER TABLE load_pages RENAME TO load_pages2;
INSERT INTO load_pages2 (id, fp) VALUES (300, 1285040586020892459), (301, 1285040586020892458) RETURNING id;
ALTER TABLE load_pages2 RENAME TO load_pages;

-- A fingerprint computed by a BEFORE trigger that fires first (triggers fire in name order), with
-- the dedup trigger on INSERT OR UPDATE (no column list: it checks only when fp changed).
CREATE TABLE load_docs (id int PRIMARY KEY, body text, fp bigint);
CREATE FUNCTION load_docs_fp() RETURNS trigger LANGUAGE plpgsql SET search_path = public AS $$
BEGIN
    NEW.fp := simhash(NEW.body);
    RETURN NEW;
END $$;
CREATE TRIGGER a_fp BEFORE INSERT OR UPDATE OF body ON load_docs FOR EACH ROW EXECUTE FUNCTION load_docs_fp();
CREATE TRIGGER b_dedup BEFORE INSERT OR UPDATE ON load_docs FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip');
INSERT INTO load_docs (id, body) VALUES
    (1, 'the quick brown fox jumps over the lazy dog near the river bank today'),
    (2, 'the quick brown fox jumps over the lazy dog near the river bank today'),
    (3, 'an entirely different sentence about databases, indexes and fingerprints');
UPDATE load_docs SET body = 'the quick brown fox jumps over the lazy dog near the river bank today' WHERE id = 3;
SELECT id, left(body, 20) AS body FROM load_docs ORDER BY id;
DROP TABLE load_docs;
DROP FUNCTION load_docs_fp();

-- Argument and usage errors. The extension's event trigger checks a new trigger's arguments at
-- CREATE TRIGGER (at_create); a trigger created without that check (before the extension's update,
-- or with the event trigger disabled) is checked when it first fires, with the same error.
CREATE TABLE load_bad (id int, fp bigint, fptext text, mark bigint, fpgen bigint GENERATED ALWAYS AS (fp # 1) STORED,
                       marknn bigint NOT NULL DEFAULT 0, body varchar(100), num int);
CREATE FUNCTION load_bad_try(args text, timing text DEFAULT 'BEFORE INSERT', level text DEFAULT 'ROW',
                             OUT at_create text, OUT same_at_first_row boolean)
LANGUAGE plpgsql SET client_min_messages = warning AS $$
DECLARE
    create_trigger text := format('CREATE TRIGGER bad %s ON load_bad FOR EACH %s EXECUTE FUNCTION simhash_dedup(%s)',
                                  timing, level, args);
BEGIN
    EXECUTE 'DROP TRIGGER IF EXISTS bad ON load_bad';
    at_create := load_try(create_trigger);
    EXECUTE 'DROP TRIGGER IF EXISTS bad ON load_bad';
    ALTER EVENT TRIGGER simhash_dedup_check_arguments DISABLE;
    EXECUTE create_trigger;
    ALTER EVENT TRIGGER simhash_dedup_check_arguments ENABLE;
    DELETE FROM load_bad;
    same_at_first_row := load_try('INSERT INTO load_bad (id, fp, fptext, body) VALUES (1, 1, ''x'', ''y'')') = at_create;
END $$;
SELECT args, t.* FROM (VALUES
    (''), ($$'fp', '3'$$), ($$'fp', '65', 'skip'$$), ($$'fp', '-1', 'skip'$$), ($$'fp', 'three', 'skip'$$),
    ($$'fp', '3 ', 'skip'$$), ($$'fp', ' +3', 'skip'$$), ($$'fp', '3', 'drop'$$), ($$'nope', '3', 'skip'$$), ($$'fptext', '3', 'skip'$$),
    ($$'fpgen', '3', 'skip'$$),
    ($$'fp', '3', 'skip', 'extra'$$), ($$'fp', '3', 'mark'$$), ($$'fp', '3', 'mark', 'nope'$$),
    ($$'fp', '3', 'mark', 'mark'$$), ($$'fp', '3', 'mark', 'fp', 'id'$$), ($$'fp', '3', 'error', 'nope'$$),
    ($$'fp', '3', 'mark', 'mark', 'id', 'extra'$$), ($$'fp', '0', 'skip'$$), ($$'fp', '64', 'skip'$$),
    -- mark columns that could only fail at the first duplicate are refused up front
    ($$'fp', '3', 'mark', 'fpgen'$$), ($$'fp', '3', 'mark', 'mark', 'mark'$$), ($$'fp', '3', 'mark', 'marknn'$$),
    ($$'fp', '3', 'mark', 'mark', 'fptext'$$),
    -- options: name=value after the positional arguments
    ($$'fp', '3', 'skip', 'verify=fptext'$$), ($$'fp', '3', 'error', 'id', 'verify=body', 'threshold=0.5'$$),
    ($$'fp', '3', 'mark', 'mark', 'id', 'verify=fptext', 'measure=containment', 'unit=char', 'size=5', 'nulls=keep'$$),
    ($$'fp', '3', 'skip', 'nulls=error'$$), ($$'fp', '3', 'skip', 'verify=nope'$$), ($$'fp', '3', 'skip', 'verify=num'$$),
    ($$'fp', '3', 'skip', 'verify='$$), ($$'fp', '3', 'mark', 'fptext', 'id', 'verify=fptext'$$),
    ($$'fp', '3', 'skip', 'verify=fptext', 'threshold=0'$$), ($$'fp', '3', 'skip', 'verify=fptext', 'threshold=1.5'$$),
    ($$'fp', '3', 'skip', 'verify=fptext', 'threshold=NaN'$$), ($$'fp', '3', 'skip', 'verify=fptext', 'threshold= 0.5'$$),
    ($$'fp', '3', 'skip', 'verify=fptext', 'threshold=1'$$), ($$'fp', '3', 'skip', 'verify=fptext', 'measure=cosine'$$),
    ($$'fp', '3', 'skip', 'verify=fptext', 'unit=line'$$), ($$'fp', '3', 'skip', 'verify=fptext', 'size=0'$$),
    ($$'fp', '3', 'skip', 'verify=fptext', 'size=65'$$), ($$'fp', '3', 'skip', 'nulls=skip'$$),
    ($$'fp', '3', 'skip', 'threshold=0.5'$$), ($$'fp', '3', 'skip', 'size=3'$$), ($$'fp', '3', 'skip', 'verfy=fptext'$$),
    ($$'fp', '3', 'skip', 'nulls=keep', 'nulls=keep'$$), ($$'fp', '3', 'skip', 'nulls=keep', 'extra'$$),
    ($$'fp', '3', 'error', 'id', 'extra', 'nulls=keep'$$), ($$'fp', '3', 'verify=fptext'$$)) v(args),
    load_bad_try(args) t;
SELECT * FROM load_bad_try($$'fp', '3', 'skip'$$, 'AFTER INSERT');
SELECT * FROM load_bad_try($$'fp', '3', 'skip'$$, 'BEFORE INSERT', 'STATEMENT');
SELECT * FROM load_bad_try($$'fp', '3', 'skip'$$, 'BEFORE INSERT OR DELETE');
SELECT * FROM load_bad_try($$'fp', '3', 'skip'$$, 'BEFORE UPDATE');
SELECT load_try('SELECT simhash_dedup()');
SELECT load_try($$SELECT simhash_lock_neighbourhood(0, 65, 'load_bad')$$);
SELECT load_try('SELECT simhash_neighbourhood_keys(0, -1)');
SELECT load_try($$SELECT simhash_lock_neighbourhoods(ARRAY[0], 65, 'load_bad')$$);
SELECT load_try($$SELECT simhash_lock_neighbourhoods(ARRAY[0], 3, 12345)$$);
SELECT simhash_lock_neighbourhood(NULL, 3, 'load_bad') IS NULL AS strict;

-- The trigger scans a plain simhash index on the fingerprint column itself; with a partial index or
-- none it runs its check query instead. The same rows survive all three, for every action, at
-- radius 3 and 7 (also past the index's per-table block radius), including rows of one statement
-- that duplicate each other, UPDATEs that move a fingerprint and rows whose only match is themselves.
CREATE TABLE load_paths_input AS
-- every third row is 2 bits (odd ids) or 5 bits (even ids) from the row g / 3
SELECT g AS id, CASE WHEN g % 3 = 0 THEN hashint8extended(g / 3, 5) # (1::bigint << (g % 11)) # (1::bigint << (g % 13 + 20))
                     # CASE WHEN g % 2 = 0 THEN (1::bigint << (g % 7 + 40)) | (1::bigint << (g % 5 + 50)) | (1::bigint << (g % 3 + 58)) ELSE 0 END
                     ELSE hashint8extended(g, 5) END AS fp
FROM generate_series(1, 3000) g;
CREATE FUNCTION load_paths(index_ddl text, radius int, action text) RETURNS TABLE (kept bigint, marked bigint, digest text)
LANGUAGE plpgsql AS $$
BEGIN
    DROP TABLE IF EXISTS load_paths_t;
    CREATE TABLE load_paths_t (id bigint, fp bigint, dup_of bigint);
    IF index_ddl <> '' THEN EXECUTE index_ddl; END IF;
    EXECUTE format('CREATE TRIGGER d BEFORE INSERT OR UPDATE OF fp ON load_paths_t FOR EACH ROW EXECUTE FUNCTION simhash_dedup(%L, %L, %L%s)',
                   'fp', radius, action, CASE WHEN action = 'mark' THEN $a$, 'dup_of', 'id'$a$ ELSE '' END);
    IF action = 'error' THEN
        FOR i IN 1..3000 LOOP
            PERFORM load_try(format('INSERT INTO load_paths_t (id, fp) SELECT id, fp FROM load_paths_input WHERE id = %s', i));
        END LOOP;
    ELSE
        INSERT INTO load_paths_t (id, fp) SELECT id, fp FROM load_paths_input ORDER BY id;
    END IF;
    -- moving a fingerprint onto a near-duplicate of another row, and onto itself plus one bit
    PERFORM load_try('UPDATE load_paths_t SET fp = (SELECT fp FROM load_paths_t WHERE id = 2) # 1 WHERE id = 1');
    PERFORM load_try('UPDATE load_paths_t SET fp = fp # 1 WHERE id = 4');
    RETURN QUERY SELECT count(*), count(dup_of), md5(string_agg(id || ':' || fp || ':' || coalesce(dup_of, 0), ',' ORDER BY id))
    FROM load_paths_t;
END $$;
-- one transaction per table (each takes up to 1,024 advisory locks)
CREATE TABLE load_paths_answers (radius int, action text, ddl text, kept bigint, marked bigint, digest text);
SELECT format('INSERT INTO load_paths_answers SELECT %s, %L, %L, * FROM load_paths(%L, %s, %L)', radius, action, ddl, ddl, radius, action)
FROM (VALUES (3), (7)) r(radius), (VALUES ('skip'), ('mark'), ('error')) a(action),
     (VALUES ('CREATE INDEX ON load_paths_t USING simhash (fp)'),
             ('CREATE INDEX ON load_paths_t USING simhash (fp) WHERE id > 0'), ('')) i(ddl) \gexec
SELECT radius, action, count(*) AS paths, count(DISTINCT (kept, marked, digest)) AS answers, min(kept) AS kept,
       min(marked) AS marked
FROM load_paths_answers GROUP BY radius, action ORDER BY radius, action;
DROP TABLE load_paths_t, load_paths_input, load_paths_answers;
DROP FUNCTION load_paths(text, int, text);

DROP TABLE load_pages, load_staging, load_bad;
DROP FUNCTION load_try(text), load_bad_try(text, text, text);

-- A fingerprint column of a domain over bigint is a bigint column: checked through its index.
CREATE DOMAIN load_fingerprint AS bigint;
CREATE TABLE load_domain (id int, fp load_fingerprint);
CREATE INDEX ON load_domain USING simhash (fp);
CREATE TRIGGER dedup BEFORE INSERT ON load_domain FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip');
INSERT INTO load_domain VALUES (1, 0), (2, 7), (3, 255);
SELECT id, fp FROM load_domain ORDER BY id;
DROP TABLE load_domain;
DROP DOMAIN load_fingerprint;

-- Renaming a schema is no change of the table: the check must follow the table, not the old name.
CREATE SCHEMA load_ns;
CREATE TABLE load_ns.docs (id int, fp bigint);
CREATE TRIGGER dedup BEFORE INSERT ON load_ns.docs FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip');
INSERT INTO load_ns.docs VALUES (1, 5);
ALTER SCHEMA load_ns RENAME TO load_ns_archive;
CREATE SCHEMA load_ns;
CREATE TABLE load_ns.docs (id int, fp bigint);
INSERT INTO load_ns.docs VALUES (100, 1000);
INSERT INTO load_ns_archive.docs VALUES (2, 6), (3, 1001);
SELECT id, fp FROM load_ns_archive.docs ORDER BY id;
DROP SCHEMA load_ns, load_ns_archive CASCADE;

-- A mark column with a type modifier could hold a shortened or rounded key (another row's):
-- refused unless it is the key column's type.
CREATE TABLE load_typmod (code text PRIMARY KEY, fp bigint, dup_of varchar(3));
CREATE TRIGGER dedup BEFORE INSERT ON load_typmod FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'mark', 'dup_of', 'code');
ALTER TABLE load_typmod ALTER COLUMN dup_of TYPE text;
CREATE TRIGGER dedup BEFORE INSERT ON load_typmod FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'mark', 'dup_of', 'code');
INSERT INTO load_typmod VALUES ('abc', 1000000), ('abcdef', 0), ('x', 1);
SELECT code, fp, dup_of FROM load_typmod ORDER BY code;
DROP TABLE load_typmod;

-- An UPDATE that moves a row into another partition is refused (checked against the old partition,
-- and 'skip' in the new one would drop a row already deleted from the old); inserts and updates
-- within a partition are deduplicated per partition.
CREATE TABLE load_parted (id int, lang text, fp bigint) PARTITION BY LIST (lang);
CREATE TABLE load_parted_a PARTITION OF load_parted FOR VALUES IN ('a');
CREATE TABLE load_parted_b PARTITION OF load_parted FOR VALUES IN ('b');
CREATE INDEX ON load_parted USING simhash (fp);
CREATE TRIGGER dedup BEFORE INSERT OR UPDATE ON load_parted FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip');
INSERT INTO load_parted VALUES (1, 'a', 0), (2, 'a', 1000000000000), (5, 'b', 0);
UPDATE load_parted SET lang = 'b' WHERE id = 1;
UPDATE load_parted SET lang = 'b', fp = 1 WHERE id = 2;
UPDATE load_parted SET fp = 1 WHERE id = 2;
UPDATE load_parted SET fp = 255 WHERE id = 2;
SELECT tableoid::regclass AS partition, id, fp FROM load_parted ORDER BY id;
DROP TABLE load_parted;
