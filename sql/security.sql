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
-- The trigger's arguments say what its check reads as the owner. A role that may create triggers
-- (TRIGGER privilege) but not read the table could add a 'mark' trigger copying any column of
-- the nearest row into its own: refused while such a role holds the privilege, on the table or
-- on a partitioned table above it.
SET ROLE regress_simhash_owner;
CREATE TABLE security_owner.secrets (id int PRIMARY KEY, fp bigint, secret text, dup_of text);
INSERT INTO security_owner.secrets VALUES (1, 0, 'swordfish', NULL);
GRANT INSERT, TRIGGER ON security_owner.secrets TO regress_simhash_intruder;
SET ROLE regress_simhash_intruder;
CREATE TRIGGER steal BEFORE INSERT ON security_owner.secrets
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '64', 'mark', 'dup_of', 'secret');
INSERT INTO security_owner.secrets (id, fp) VALUES (100, 0);
SET ROLE regress_simhash_owner;
INSERT INTO security_owner.secrets (id, fp) VALUES (101, 0);
GRANT TRIGGER ON security_owner.secrets TO PUBLIC;
REVOKE TRIGGER ON security_owner.secrets FROM regress_simhash_intruder;
INSERT INTO security_owner.secrets (id, fp) VALUES (101, 0);
REVOKE TRIGGER ON security_owner.secrets FROM PUBLIC;
-- With the privilege revoked the owner's own loads run (the owner may read every column).
INSERT INTO security_owner.secrets (id, fp) VALUES (101, 0) RETURNING id, dup_of;
-- 'mark' writes the nearest row's key into the loader's row, where the loader can read it back
-- (RETURNING, its own triggers, a constraint's "Failing row contains"): so a loader must be
-- allowed to read the key column, by the rule for error details above.
SET ROLE regress_simhash_intruder;
INSERT INTO security_owner.secrets (id, fp) VALUES (102, 0);
SET ROLE regress_simhash_owner;
DROP TRIGGER steal ON security_owner.secrets;
CREATE TRIGGER dedup BEFORE INSERT ON security_owner.secrets
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'mark', 'dup_of', 'id');
SET ROLE regress_simhash_intruder;
INSERT INTO security_owner.secrets (id, fp) VALUES (102, 1);
SET ROLE regress_simhash_owner;
GRANT SELECT (id, dup_of) ON security_owner.secrets TO regress_simhash_intruder;
SET ROLE regress_simhash_intruder;
INSERT INTO security_owner.secrets (id, fp) VALUES (102, 1) RETURNING id, dup_of;
-- Row security may hide the matched row from the loader: refused too.
SET ROLE regress_simhash_owner;
ALTER TABLE security_owner.secrets ENABLE ROW LEVEL SECURITY;
CREATE POLICY everything ON security_owner.secrets USING (true) WITH CHECK (true);
SET ROLE regress_simhash_intruder;
INSERT INTO security_owner.secrets (id, fp) VALUES (103, 1);
SET ROLE regress_simhash_owner;
DROP TABLE security_owner.secrets;
-- A loader that writes through a view needs no rights on the table's schema: the check is
-- planned and run as the owner.
RESET ROLE;
CREATE SCHEMA security_hidden AUTHORIZATION regress_simhash_owner;
SET ROLE regress_simhash_owner;
CREATE TABLE security_hidden.pages (id int, fp bigint);
CREATE TRIGGER dedup BEFORE INSERT ON security_hidden.pages
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip');
CREATE VIEW security_owner.pages_entry AS SELECT id, fp FROM security_hidden.pages;
GRANT INSERT ON security_owner.pages_entry TO regress_simhash_intruder;
SET ROLE regress_simhash_intruder;
INSERT INTO security_owner.pages_entry VALUES (1, 0), (2, 7), (3, 255);
SET ROLE regress_simhash_owner;
SELECT id, fp FROM security_hidden.pages ORDER BY id;
DROP SCHEMA security_hidden CASCADE;
-- Triggers of a partitioned table are cloned onto its partitions: a grant on the parent counts.
CREATE TABLE security_owner.parted (id int, fp bigint) PARTITION BY RANGE (id);
CREATE TABLE security_owner.parted_1 PARTITION OF security_owner.parted FOR VALUES FROM (0) TO (1000);
CREATE TRIGGER dedup BEFORE INSERT ON security_owner.parted
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'skip');
INSERT INTO security_owner.parted VALUES (1, 0), (2, 1);
GRANT TRIGGER ON security_owner.parted TO regress_simhash_intruder;
INSERT INTO security_owner.parted VALUES (3, 0);
REVOKE TRIGGER ON security_owner.parted FROM regress_simhash_intruder;
INSERT INTO security_owner.parted VALUES (3, 0), (4, 255);
SELECT id, fp FROM security_owner.parted ORDER BY id;
DROP TABLE security_owner.parted;
RESET ROLE;

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
-- The same for a trigger first used after row security was forced (its check is planned then).
CREATE TABLE security_owner.forced (id int, fp bigint, hidden boolean DEFAULT false);
ALTER TABLE security_owner.forced OWNER TO regress_simhash_owner;
SET ROLE regress_simhash_owner;
ALTER TABLE security_owner.forced ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
CREATE POLICY visible ON security_owner.forced FOR SELECT USING (NOT hidden);
CREATE POLICY loads ON security_owner.forced FOR INSERT WITH CHECK (true);
CREATE TRIGGER dedup BEFORE INSERT ON security_owner.forced
    FOR EACH ROW EXECUTE FUNCTION simhash_dedup('fp', '3', 'error', 'id');
INSERT INTO security_owner.forced VALUES (1, 0, true);
INSERT INTO security_owner.forced VALUES (2, 1);
CREATE INDEX ON security_owner.forced USING simhash (fp);
INSERT INTO security_owner.forced VALUES (2, 1);
RESET ROLE;
DROP TABLE security_owner.forced;
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
RESET enable_seqscan;
-- The distributed functions (PL/pgSQL) name the extension's schema in their bodies. After the
-- schema is renamed, a schema created under the old name must not get its functions run: they
-- refuse to run instead (the trigger and the index keep working, they find the schema by oid).
SELECT count(*) AS groups FROM fingerprints.simhash_groups_distributed('docs', 'id', 'fp', 3);
ALTER SCHEMA fingerprints RENAME TO simhash_ext;
CREATE SCHEMA fingerprints;
CREATE FUNCTION fingerprints.simhash_pair_groups(text, text DEFAULT NULL) RETURNS TABLE (id bigint, group_id bigint)
    LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'planted simhash_pair_groups called'; END $$;
CREATE FUNCTION fingerprints.simhash_distributed_relation(regclass, OUT schema_name name, OUT qualified_name text,
                                                          OUT distributed boolean)
    LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'planted simhash_distributed_relation called'; END $$;
\set VERBOSITY terse
SELECT * FROM simhash_ext.simhash_groups_distributed('docs', 'id', 'fp', 3);
SELECT * FROM simhash_ext.simhash_pairs_distributed('docs', 'id', 'fp', 3);
SELECT * FROM simhash_ext.minhash_pairs_distributed('docs', 'id', 'fp', 0.5);
\set VERBOSITY default
INSERT INTO docs (id, fp) VALUES (5, 1025);
SELECT id, dup_of FROM docs WHERE id = 5;
\c contrib_regression
DROP DATABASE simhash_security;

DROP SCHEMA security_owner CASCADE;
DROP SCHEMA intruder CASCADE;
DROP ROLE regress_simhash_owner;
DROP ROLE regress_simhash_intruder;
