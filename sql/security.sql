-- What runs as whom, and what a role can see or block: the dedup trigger's check runs as the table
-- owner, so nothing a loader controls (its search_path, functions and operators of its own) may
-- take part in it; error details show stored values only to those who may read them; the lock
-- helper and the index check need rights on the table.

CREATE ROLE regress_simhash_owner;
CREATE ROLE regress_simhash_intruder;
CREATE SCHEMA security_owner AUTHORIZATION regress_simhash_owner;
CREATE SCHEMA intruder AUTHORIZATION regress_simhash_intruder;
GRANT USAGE ON SCHEMA security_owner TO regress_simhash_intruder;

SET ROLE regress_simhash_owner;
CREATE TABLE security_owner.pages (id int PRIMARY KEY, fp bigint, note text);
CREATE INDEX ON security_owner.pages USING simhash (fp);
CREATE TRIGGER dedup BEFORE INSERT ON security_owner.pages
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'error', 'id');
GRANT INSERT ON security_owner.pages TO regress_simhash_intruder;
INSERT INTO security_owner.pages VALUES (1, 0, 'stored by the owner');
RESET ROLE;
-- The table owner may do anything to its own table; an owner who can grant roles is what makes a
-- hijacked check dangerous.
ALTER ROLE regress_simhash_owner CREATEROLE;

-- The intruder (INSERT only) shadows hamming(bigint, bigint) in a schema it puts first on its
-- search_path, which it opens to everybody (the owner included). Its function would report who
-- runs it, try to give the intruder CREATEROLE with the owner's rights, and claim every pair is
-- 64 bits apart.
SET ROLE regress_simhash_intruder;
GRANT USAGE ON SCHEMA intruder TO PUBLIC;
CREATE FUNCTION intruder.hamming(bigint, bigint) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN
    RAISE NOTICE 'intruder code runs as %', current_user;
    ALTER ROLE regress_simhash_intruder CREATEROLE;
    RETURN 64;
END $$;
SET search_path = intruder, public;
-- 7 is 3 bits from the stored 0: still a near-duplicate, and no intruder code ran.
INSERT INTO security_owner.pages VALUES (2, 7, 'near-duplicate');
INSERT INTO security_owner.pages VALUES (3, 255, 'far from 0');
DROP FUNCTION intruder.hamming(bigint, bigint);

-- The same with the comparison operator: a <= of its own for (hamming_distance, integer) that is
-- never true would silently turn deduplication off.
CREATE FUNCTION intruder.never(public.hamming_distance, integer) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    RAISE NOTICE 'intruder operator runs as %', current_user;
    RETURN false;
END $$;
CREATE OPERATOR intruder.<= (LEFTARG = public.hamming_distance, RIGHTARG = integer, FUNCTION = intruder.never);
-- pg_catalog placed after the intruder's schema: even tid <> could be shadowed.
CREATE FUNCTION intruder.tid_never(tid, tid) RETURNS boolean LANGUAGE sql AS 'SELECT false';
CREATE OPERATOR intruder.<> (LEFTARG = tid, RIGHTARG = tid, FUNCTION = intruder.tid_never);
SET search_path = intruder, public, pg_catalog;
INSERT INTO security_owner.pages VALUES (4, 1, 'near-duplicate');
RESET search_path;
RESET ROLE;
SELECT id, fp, note FROM security_owner.pages ORDER BY id;
SELECT rolsuper, rolcreaterole FROM pg_roles WHERE rolname = 'regress_simhash_intruder';

-- A session without the extension's schema on its search_path (pg_restore, logical replication
-- apply, a hardened application) loads and deduplicates all the same.
SET search_path = '';
INSERT INTO security_owner.pages VALUES (5, 3, 'near-duplicate');
INSERT INTO security_owner.pages VALUES (6, 65280, 'far');
RESET search_path;

-- Error details show the stored row's fingerprint and key only to a user who may read them, as
-- PostgreSQL does for unique violations.
SET ROLE regress_simhash_intruder;
INSERT INTO security_owner.pages VALUES (7, 1, 'near-duplicate');
RESET ROLE;
GRANT SELECT (fp) ON security_owner.pages TO regress_simhash_intruder;
SET ROLE regress_simhash_intruder;
INSERT INTO security_owner.pages VALUES (7, 1, 'near-duplicate (can read fp, not id)');
RESET ROLE;
GRANT SELECT (fp, id) ON security_owner.pages TO regress_simhash_intruder;
SET ROLE regress_simhash_intruder;
INSERT INTO security_owner.pages VALUES (7, 1, 'near-duplicate (can read fp and id)');
RESET ROLE;
-- Row security hides the details even from a user with SELECT.
ALTER TABLE security_owner.pages ENABLE ROW LEVEL SECURITY;
SET ROLE regress_simhash_intruder;
INSERT INTO security_owner.pages VALUES (7, 1, 'near-duplicate (row security)');
RESET ROLE;
ALTER TABLE security_owner.pages DISABLE ROW LEVEL SECURITY;
-- The check sees every row whatever row security says, even forced on the owner (as foreign-key
-- checks do): with a policy that shows the owner nothing, a near-duplicate is still refused,
-- through the index scan the trigger makes itself and through its check query (no index).
ALTER TABLE security_owner.pages ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
CREATE POLICY nothing ON security_owner.pages USING (false) WITH CHECK (true);
SET ROLE regress_simhash_owner;
SELECT count(*) AS rows_the_owner_sees FROM security_owner.pages;
INSERT INTO security_owner.pages VALUES (8, 1, 'near-duplicate (forced row security)') RETURNING id;
DROP INDEX security_owner.pages_fp_idx;
INSERT INTO security_owner.pages VALUES (8, 1, 'near-duplicate (forced row security, no index)') RETURNING id;
CREATE INDEX pages_fp_idx ON security_owner.pages USING simhash (fp);
RESET ROLE;
DROP POLICY nothing ON security_owner.pages;
ALTER TABLE security_owner.pages DISABLE ROW LEVEL SECURITY, NO FORCE ROW LEVEL SECURITY;

-- Taking a table's neighbourhood locks stalls its loaders: it needs INSERT or UPDATE on it.
CREATE TABLE security_owner.private (fp bigint);
SET ROLE regress_simhash_intruder;
SELECT simhash_lock_neighbourhood(0, 3, 'security_owner.private');
SELECT simhash_lock_neighbourhoods(ARRAY[0, 7], 3, 'security_owner.private');
BEGIN;
SELECT simhash_lock_neighbourhood(0, 3, 'security_owner.pages');
ROLLBACK;
RESET ROLE;

-- The index check reads every fingerprint and (without concurrently) blocks writes: table owner only.
SET ROLE regress_simhash_intruder;
SELECT simhash_index_check('security_owner.pages_fp_idx');
SELECT simhash_index_check('security_owner.pages_fp_idx', concurrently => true);
RESET ROLE;
SET ROLE regress_simhash_owner;
SELECT simhash_index_check('security_owner.pages_fp_idx');
SELECT simhash_index_check('security_owner.pages_fp_idx', concurrently => true);
RESET ROLE;

-- The extension in a schema of its own, not on anybody's search_path: the trigger and index
-- search reach it through qualified names only.
CREATE DATABASE simhash_security;
\c simhash_security
CREATE SCHEMA fingerprints;
CREATE EXTENSION simhash SCHEMA fingerprints;
SET search_path = public;
CREATE TABLE docs (id int PRIMARY KEY, fp bigint, dup_of int);
CREATE INDEX ON docs USING simhash (fp);
CREATE TRIGGER dedup BEFORE INSERT ON docs
    FOR EACH ROW EXECUTE FUNCTION fingerprints.simhash_dedup('fp', '2', 'mark', 'dup_of');
INSERT INTO docs (id, fp) VALUES (1, 1024), (2, 1027), (3, 1031), (4, -1);
SELECT id, fp, dup_of FROM docs ORDER BY id;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fingerprints.hamming(fp, 1024) OPERATOR(fingerprints.<=) 2;
SELECT id FROM docs WHERE fingerprints.hamming(fp, 1024) OPERATOR(fingerprints.<=) 2 ORDER BY id;
\c contrib_regression
DROP DATABASE simhash_security;

DROP SCHEMA security_owner CASCADE;
DROP SCHEMA intruder CASCADE;
DROP ROLE regress_simhash_owner;
DROP ROLE regress_simhash_intruder;
