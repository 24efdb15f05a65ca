-- Deduplication on load, verified: simhash_dedup's verify= option acts only on stored rows within
-- the radius whose text is as similar as the threshold asks (every such row is tried, nearest
-- first, until one verifies); GENERATED fingerprint and text columns (INSERT, COPY, INSERT ...
-- SELECT, UPDATE); NULL fingerprints and texts refused (23502) or kept (nulls=keep); the
-- lock-then-check recipe with the same verification; the event trigger that checks arguments at
-- CREATE TRIGGER, on partitioned tables and under a hostile search_path.

CREATE FUNCTION verify_try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- Texts (word 1-shingles): B shares 7 of 9 words with A (Jaccard 0.78), C 3 of 13 (0.23); D is
-- the first four words of A (Jaccard 0.5, containment of the smaller set 1).
\set a 'the quick brown fox jumps over the lazy dog'
\set b 'the quick brown fox jumps over the lazy cat'
\set c 'a slow red fox walks under the sleepy old dog'
\set d 'the quick brown fox'
SELECT round(shingle_jaccard(:'a', :'b', 'word', 1)::numeric, 3) AS a_b, round(shingle_jaccard(:'a', :'c', 'word', 1)::numeric, 3) AS a_c,
       round(shingle_jaccard(:'b', :'c', 'word', 1)::numeric, 3) AS b_c, round(shingle_jaccard(:'a', :'d', 'word', 1)::numeric, 3) AS a_d,
       shingle_containment(:'d', :'a', 'word', 1) AS d_in_a;

-- Fingerprints set by hand, so that every row is a candidate of every other (radius 3): the text decides.
CREATE TABLE verify_docs (id int PRIMARY KEY, body text, fp bigint, dup_of int);
CREATE INDEX ON verify_docs USING simhash (fp);

-- skip: C is within the radius of A but not verified, so it stays; B is verified against A and is
-- dropped, though C is the nearer candidate (fingerprint 0, distance 0; A is 3 bits away).
CREATE TRIGGER dedup BEFORE INSERT OR UPDATE ON verify_docs
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip', 'verify=body');
INSERT INTO verify_docs (id, body, fp) VALUES (1, :'a', 7) RETURNING id;
INSERT INTO verify_docs (id, body, fp) VALUES (2, :'c', 0) RETURNING id;
INSERT INTO verify_docs (id, body, fp) VALUES (3, :'b', 0) RETURNING id;
-- rows of one statement see each other: the second copy of D is dropped, the first kept (Jaccard 0.5 with A)
INSERT INTO verify_docs (id, body, fp) VALUES (4, :'d', 1), (5, :'d', 2) RETURNING id;
-- an UPDATE that changes the text but not the fingerprint is checked: C's row taking B's text now
-- duplicates A and is skipped (the row keeps its old text); one that changes neither is not checked
UPDATE verify_docs SET body = :'b' WHERE id = 2 RETURNING id;
UPDATE verify_docs SET dup_of = 0 WHERE id = 2 RETURNING id, dup_of;
SELECT id, fp, body FROM verify_docs ORDER BY id;

-- error: the detail names the verified row (A, key 1), not the nearer unverified C.
DROP TRIGGER dedup ON verify_docs;
CREATE TRIGGER dedup BEFORE INSERT OR UPDATE ON verify_docs
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'error', 'id', 'verify=body');
\set VERBOSITY default
INSERT INTO verify_docs (id, body, fp) VALUES (6, :'b', 0);
\set VERBOSITY terse
INSERT INTO verify_docs (id, body, fp) VALUES (6, 'entirely different words', 0) RETURNING id;
SELECT verify_try($$INSERT INTO verify_docs (id, body, fp) VALUES (7, 'a slow red fox walks under the sleepy old cat', 0)$$);

-- mark: the nearest verified row, preferring rows not marked themselves; an unverified candidate
-- is not pointed at (NULL).
DELETE FROM verify_docs;
DROP TRIGGER dedup ON verify_docs;
CREATE TRIGGER dedup BEFORE INSERT OR UPDATE ON verify_docs
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'mark', 'dup_of', 'id', 'verify=body');
INSERT INTO verify_docs (id, body, fp) VALUES (10, :'a', 7), (11, :'c', 0), (12, :'b', 0), (13, :'b', 1), (14, :'d', 0),
    (15, 'the quick brown fox jumps over the lazy dog', 15);
SELECT id, fp, dup_of FROM verify_docs ORDER BY id;

-- measure=containment: D is contained in A; unit=char, size=3 compares character 3-shingles.
DELETE FROM verify_docs;
DROP TRIGGER dedup ON verify_docs;
CREATE TRIGGER dedup BEFORE INSERT ON verify_docs
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'mark', 'dup_of', 'id', 'verify=body', 'measure=containment');
INSERT INTO verify_docs (id, body, fp) VALUES (20, :'a', 0), (21, :'d', 0), (22, :'c', 0);
SELECT id, dup_of FROM verify_docs ORDER BY id;
DELETE FROM verify_docs;
DROP TRIGGER dedup ON verify_docs;
CREATE TRIGGER dedup BEFORE INSERT ON verify_docs
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'mark', 'dup_of', 'id', 'verify=body', 'unit=char', 'size=3', 'threshold=0.9');
INSERT INTO verify_docs (id, body, fp) VALUES (30, 'colour', 0), (31, 'color', 0), (32, 'colour!', 0);
SELECT id, dup_of, round(shingle_jaccard(body, 'colour', 'char', 3)::numeric, 3) AS jaccard_with_30 FROM verify_docs ORDER BY id;

-- Without a simhash index (every row runs the check query) and with a partial one the same rows
-- survive, for every action.
CREATE FUNCTION verify_paths(index_ddl text, action text) RETURNS TABLE (id int, dup_of int)
LANGUAGE plpgsql SET client_min_messages = warning AS $$
BEGIN
    DROP TABLE IF EXISTS verify_paths_t;
    CREATE TABLE verify_paths_t (id int, body text, fp bigint, dup_of int);
    IF index_ddl <> '' THEN EXECUTE index_ddl; END IF;
    EXECUTE format('CREATE TRIGGER d BEFORE INSERT ON verify_paths_t FOR EACH ROW EXECUTE FUNCTION simhash_dedup(%s)',
                   CASE action WHEN 'mark' THEN $a$'fp', '3', 'mark', 'dup_of', 'id', 'verify=body'$a$
                               ELSE format($a$'fp', '3', %L, 'verify=body'$a$, action) END);
    FOR i IN 1..8 LOOP
        PERFORM verify_try(format('INSERT INTO verify_paths_t VALUES (%s, %L, %s)', i,
            (ARRAY['the quick brown fox jumps over the lazy dog', 'a slow red fox walks under the sleepy old dog',
                   'the quick brown fox jumps over the lazy cat', 'the quick brown fox', 'a slow red fox walks under the sleepy old cat',
                   'the quick brown fox', 'entirely unrelated words here', 'the quick brown fox jumps over a lazy dog'])[i],
            (ARRAY[7, 0, 0, 1, 2, 3, 0, 15])[i]));
    END LOOP;
    RETURN QUERY SELECT t.id, t.dup_of FROM verify_paths_t t ORDER BY t.id;
END $$;
SELECT action, ddl, array_agg(p.id ORDER BY p.id) AS kept, array_agg(p.dup_of ORDER BY p.id) AS marks
FROM (VALUES ('skip'), ('error'), ('mark')) a(action),
     (VALUES ('CREATE INDEX ON verify_paths_t USING simhash (fp)'),
             ('CREATE INDEX ON verify_paths_t USING simhash (fp) WHERE id > 0'), ('')) i(ddl),
     verify_paths(ddl, action) p
GROUP BY action, ddl ORDER BY action, ddl;
DROP TABLE verify_paths_t;
DROP FUNCTION verify_paths(text, text);

-- NULLs. A row without a fingerprint is refused (23502) unless the trigger keeps it (nulls=keep);
-- with verification so is a row without text. A stored row without text verifies nothing.
DELETE FROM verify_docs;
DROP TRIGGER dedup ON verify_docs;
CREATE TRIGGER dedup BEFORE INSERT OR UPDATE ON verify_docs FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip');
\set VERBOSITY default
INSERT INTO verify_docs (id, body, fp) VALUES (40, :'a', NULL);
\set VERBOSITY terse
DROP TRIGGER dedup ON verify_docs;
CREATE TRIGGER dedup BEFORE INSERT OR UPDATE ON verify_docs FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip', 'verify=body');
\set VERBOSITY default
INSERT INTO verify_docs (id, body, fp) VALUES (41, NULL, 0);
\set VERBOSITY terse
SELECT verify_try($$INSERT INTO verify_docs (id, body, fp) VALUES (42, 'x', NULL)$$);
DROP TRIGGER dedup ON verify_docs;
CREATE TRIGGER dedup BEFORE INSERT OR UPDATE ON verify_docs
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'mark', 'dup_of', 'id', 'verify=body', 'nulls=keep');
INSERT INTO verify_docs (id, body, fp, dup_of) VALUES (43, NULL, 0, 99), (44, :'a', NULL, 99), (45, :'a', 0, 99), (46, :'a', 1, 99);
-- an UPDATE that leaves a NULL fingerprint NULL is not checked, also under nulls=error
DROP TRIGGER dedup ON verify_docs;
CREATE TRIGGER dedup BEFORE INSERT OR UPDATE ON verify_docs FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip');
UPDATE verify_docs SET body = body || '.' WHERE id = 44 RETURNING id;
SELECT verify_try($$UPDATE verify_docs SET fp = NULL WHERE id = 45$$);
SELECT id, fp, body IS NULL AS no_text, dup_of FROM verify_docs ORDER BY id;
DROP TABLE verify_docs;

-- A GENERATED fingerprint column: the trigger computes it for the new row (PostgreSQL computes it
-- only after BEFORE triggers). The recommended setup: minhash64(body), radius 10, verified.
CREATE TABLE verify_gen (id int PRIMARY KEY, body text, fp bigint GENERATED ALWAYS AS (minhash64(body)) STORED, dup_of int);
CREATE INDEX ON verify_gen USING simhash (fp);
CREATE TRIGGER dedup BEFORE INSERT OR UPDATE ON verify_gen
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '10', 'skip', 'verify=body');
\set doc1 'PostgreSQL is a powerful open source object relational database system with over 35 years of active development that has earned it a strong reputation for reliability feature robustness and performance'
\set doc2 'The simhash extension finds near duplicate documents inside the database with fingerprints compared by their Hamming distance and an index that answers radius queries exactly'
INSERT INTO verify_gen (id, body) VALUES (1, :'doc1'), (2, :'doc1' || ' today'), (3, :'doc2') RETURNING id, fp = minhash64(body) AS fp_computed;
-- INSERT ... SELECT: near-duplicates of stored rows and of each other are dropped
CREATE TABLE verify_staging (seq int, body text);
INSERT INTO verify_staging VALUES (1, :'doc2' || ' now'), (2, 'a third document about something else entirely, with words of its own'),
    (3, 'a third document about something else entirely, with words of its own!'), (4, NULL);
SELECT verify_try('INSERT INTO verify_gen (id, body) SELECT 10 + seq, body FROM verify_staging ORDER BY seq');
DELETE FROM verify_staging WHERE body IS NULL;
INSERT INTO verify_gen (id, body) SELECT 10 + seq, body FROM verify_staging ORDER BY seq RETURNING id;
COPY verify_gen (id, body) FROM STDIN;
20	PostgreSQL is a powerful open source object relational database system with over 35 years of active development that has earned it a strong reputation for reliability feature robustness and performance
21	yet another text, which nothing in the table resembles at all
\.
-- UPDATE: the fingerprint is computed from the new row. Row 21 taking doc1's text duplicates row 1
-- and is skipped; row 12 taking a text of its own is updated, with its new fingerprint.
UPDATE verify_gen SET body = :'doc1' WHERE id = 21 RETURNING id;
UPDATE verify_gen SET body = 'completely rewritten: the row now holds other words' WHERE id = 12 RETURNING id, fp = minhash64(body) AS fp_computed;
SELECT id, left(body, 30) AS body, fp = minhash64(body) AS fp_ok FROM verify_gen ORDER BY id;
-- 'error' and 'mark' on a generated fingerprint
DROP TRIGGER dedup ON verify_gen;
CREATE TRIGGER dedup BEFORE INSERT OR UPDATE ON verify_gen
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '10', 'error', 'id', 'verify=body');
SELECT verify_try(format('INSERT INTO verify_gen (id, body) VALUES (30, %L)', :'doc2' || ' again'));
DROP TRIGGER dedup ON verify_gen;
CREATE TRIGGER dedup BEFORE INSERT OR UPDATE ON verify_gen
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '10', 'mark', 'dup_of', 'id', 'verify=body');
INSERT INTO verify_gen (id, body) VALUES (31, :'doc2' || ' again'), (32, 'one more new text') RETURNING id, dup_of;
-- A NULL text gives a NULL fingerprint: refused.
SELECT verify_try('INSERT INTO verify_gen (id, body) VALUES (33, NULL)');
DROP TABLE verify_gen, verify_staging;

-- A generated text column verified: the fingerprint and the verified text both come from the
-- markup stripped of its tags.
CREATE TABLE verify_html (id int, html text,
                          plain text GENERATED ALWAYS AS (regexp_replace(html, '<[^>]*>', ' ', 'g')) STORED,
                          fp bigint GENERATED ALWAYS AS (minhash64(regexp_replace(html, '<[^>]*>', ' ', 'g'))) STORED);
CREATE INDEX ON verify_html USING simhash (fp);
CREATE TRIGGER dedup BEFORE INSERT OR UPDATE ON verify_html
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '10', 'skip', 'verify=plain');
INSERT INTO verify_html (id, html) VALUES
    (1, '<p>the quick brown fox jumps over the lazy dog near the river bank</p>'),
    (2, '<div><b>the quick brown fox</b> jumps over the lazy dog near the river bank</div>'),
    (3, '<p>an unrelated paragraph</p>') RETURNING id, plain;
DROP TABLE verify_html;

-- Lock-then-check, verified the same way: the locks of the new row's neighbourhood, then an insert
-- that looks for a verified near-duplicate under a new snapshot (READ COMMITTED).
CREATE TABLE verify_recipe (id bigserial PRIMARY KEY, body text, fp bigint GENERATED ALWAYS AS (minhash64(body)) STORED);
CREATE INDEX ON verify_recipe USING simhash (fp);
INSERT INTO verify_recipe (body) VALUES (:'a'), (:'c');
CREATE FUNCTION verify_recipe_load(new_body text) RETURNS bigint LANGUAGE sql AS $$
    SELECT simhash_lock_neighbourhood(minhash64(new_body), 10, 'verify_recipe');
    INSERT INTO verify_recipe (body) SELECT new_body
    WHERE NOT EXISTS (SELECT FROM verify_recipe WHERE hamming(fp, minhash64(new_body)) <= 10
                                                  AND shingle_jaccard(new_body, body, 'word', 1) >= 0.65)
    RETURNING id;
$$;
SELECT verify_recipe_load(:'a') AS copy_of_a, verify_recipe_load(:'b') AS near_a, verify_recipe_load('something else') AS new_text;
SELECT id, body FROM verify_recipe ORDER BY id;
DROP FUNCTION verify_recipe_load(text);
DROP TABLE verify_recipe;

-- The event trigger is the extension's; on a partitioned table the trigger is checked against the
-- partitioned table (its clones on the partitions are not reported).
SELECT evtname, evtevent, evttags, evtenabled, evtfoid::regproc AS function,
       EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_event_trigger'::regclass AND d.objid = e.oid AND d.deptype = 'e'
                                      AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'simhash')) AS member
FROM pg_event_trigger e WHERE evtname LIKE 'simhash%';
CREATE TABLE verify_parted (id int, lang text, body text, fp bigint GENERATED ALWAYS AS (minhash64(body)) STORED) PARTITION BY LIST (lang);
CREATE TABLE verify_parted_en PARTITION OF verify_parted FOR VALUES IN ('en');
CREATE INDEX ON verify_parted USING simhash (fp);
SELECT verify_try($$CREATE TRIGGER dedup BEFORE INSERT ON verify_parted FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '10', 'skip', 'verify=nope')$$);
SELECT verify_try($$CREATE TRIGGER dedup BEFORE INSERT ON verify_parted FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '10', 'skip', 'verify=body')$$);
CREATE TABLE verify_parted_de PARTITION OF verify_parted FOR VALUES IN ('de');
INSERT INTO verify_parted (id, lang, body) VALUES (1, 'en', :'a'), (2, 'en', :'a'), (3, 'de', :'a'), (4, 'de', :'b'), (5, 'de', :'c')
RETURNING id, lang;
SELECT tgrelid::regclass AS partition, tgname FROM pg_trigger WHERE tgname = 'dedup' ORDER BY 1::text;
DROP TABLE verify_parted;

-- A hostile search_path: objects named like the catalog's and the extension's, ahead of them.
-- Nothing the trigger, its check or the event trigger runs resolves through it, so none of them
-- runs (each would raise a WARNING) and every answer stays the same.
CREATE SCHEMA hostile;
CREATE FUNCTION hostile.pg_event_trigger_ddl_commands(OUT classid oid, OUT objid oid) RETURNS SETOF record LANGUAGE plpgsql AS $$
BEGIN RAISE WARNING 'hostile pg_event_trigger_ddl_commands ran'; END $$;
CREATE FUNCTION hostile.hamming(bigint, bigint) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN RAISE WARNING 'hostile hamming ran'; RETURN 0; END $$;
CREATE FUNCTION hostile.shingle_jaccard(text, text, text, int) RETURNS float8 LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN RAISE WARNING 'hostile shingle_jaccard ran'; RETURN 1; END $$;
CREATE FUNCTION hostile.tid_ne(tid, tid) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN RAISE WARNING 'hostile <> ran'; RETURN true; END $$;
CREATE OPERATOR hostile.<> (LEFTARG = tid, RIGHTARG = tid, FUNCTION = hostile.tid_ne);
CREATE FUNCTION hostile.oid_eq(oid, oid) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN RAISE WARNING 'hostile = ran'; RETURN true; END $$;
CREATE OPERATOR hostile.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = hostile.oid_eq);
CREATE TABLE verify_hostile (id int PRIMARY KEY, body text, fp bigint GENERATED ALWAYS AS (minhash64(body)) STORED, dup_of int);
CREATE INDEX ON verify_hostile USING simhash (fp);
SET search_path = hostile, pg_catalog, public;
SELECT verify_try($$CREATE TRIGGER dedup BEFORE INSERT ON verify_hostile FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '10', 'skip', 'verify=nope')$$);
SELECT verify_try($$CREATE TRIGGER dedup BEFORE INSERT ON verify_hostile FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '10', 'sikp')$$);
CREATE TRIGGER dedup BEFORE INSERT ON verify_hostile FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '10', 'mark', 'dup_of', 'id', 'verify=body');
INSERT INTO verify_hostile (id, body) VALUES (1, :'a'), (2, :'a'), (3, :'c'), (4, :'b') RETURNING id, dup_of;
DROP TRIGGER dedup ON verify_hostile;
CREATE TRIGGER dedup BEFORE INSERT ON verify_hostile FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '10', 'skip', 'verify=body');
INSERT INTO verify_hostile (id, body) VALUES (5, :'a'), (6, 'new words') RETURNING id;
RESET search_path;
DROP TABLE verify_hostile;
DROP SCHEMA hostile CASCADE;
DROP FUNCTION verify_try(text);
