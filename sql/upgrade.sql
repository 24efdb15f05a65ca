-- Upgrading: an installation of the oldest release updated to the current one has exactly the
-- catalog of a fresh installation (every function with its definition, volatility, parallel safety,
-- support function and privileges; operators; types; operator classes and their members; access
-- method; comments). Run in a database of its own, since other tests' objects depend on the
-- extension.
CREATE DATABASE simhash_upgrade;
\c simhash_upgrade
SET client_min_messages = warning;

-- One row per extension member: its identity and a text that changes whenever anything a user
-- relies on changes.
CREATE SCHEMA snapshot;
CREATE VIEW snapshot.members AS
SELECT (pg_identify_object(d.classid, d.objid, 0)).type AS kind,
       pg_describe_object(d.classid, d.objid, 0) AS object,
       CASE d.classid
         WHEN 'pg_proc'::regclass THEN
           (SELECT CASE WHEN p.prokind = 'a'
                        THEN format('aggregate %s: %s', p.oid::regprocedure,
                                    (SELECT row(a.aggtransfn, a.aggfinalfn, a.aggcombinefn, a.aggserialfn,
                                                a.aggdeserialfn, a.aggtranstype::regtype, a.agginitval)::text
                                     FROM pg_aggregate a WHERE a.aggfnoid = p.oid))
                        ELSE pg_get_functiondef(p.oid) END
                   || ' acl=' || coalesce(p.proacl::text, 'default')
            FROM pg_proc p WHERE p.oid = d.objid)
         WHEN 'pg_operator'::regclass THEN
           (SELECT row(o.oprcode::regprocedure, o.oprresult::regtype, o.oprcom::regoperator,
                       o.oprnegate::regoperator, o.oprrest, o.oprjoin, o.oprcanhash, o.oprcanmerge)::text
            FROM pg_operator o WHERE o.oid = d.objid)
         WHEN 'pg_type'::regclass THEN
           (SELECT row(t.typtype, t.typlen, t.typalign, t.typstorage, t.typbasetype::regtype, t.typinput,
                       t.typoutput, t.typreceive, t.typsend, t.typnotnull, t.typdefault)::text
            FROM pg_type t WHERE t.oid = d.objid)
         WHEN 'pg_opclass'::regclass THEN
           (SELECT row(c.opcdefault, c.opcintype::regtype, c.opckeytype::regtype)::text ||
                   (SELECT string_agg(format('op %s %s %s', a.amopstrategy, a.amopopr::regoperator, a.amoppurpose),
                                      ', ' ORDER BY a.amopstrategy)
                    FROM pg_amop a WHERE a.amopfamily = c.opcfamily) ||
                   coalesce((SELECT string_agg(format('proc %s %s', p.amprocnum, p.amproc::regprocedure),
                                               ', ' ORDER BY p.amprocnum)
                             FROM pg_amproc p WHERE p.amprocfamily = c.opcfamily), '')
            FROM pg_opclass c WHERE c.oid = d.objid)
         WHEN 'pg_am'::regclass THEN
           (SELECT row(a.amhandler, a.amtype)::text FROM pg_am a WHERE a.oid = d.objid)
         WHEN 'pg_class'::regclass THEN
           (SELECT format('%s (%s) acl=%s', c.relkind,
                          (SELECT string_agg(format('%I %s%s', a.attname, format_type(a.atttypid, a.atttypmod),
                                                    CASE WHEN a.attnotnull THEN ' not null' ELSE '' END), ', ' ORDER BY a.attnum)
                           FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
                          coalesce(c.relacl::text, 'default'))
            FROM pg_class c WHERE c.oid = d.objid)
         ELSE ''
       END AS definition,
       obj_description(d.objid, d.classid::regclass::name) AS comment
FROM pg_depend d
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'simhash');

CREATE EXTENSION simhash VERSION '0.1.0';
ALTER EXTENSION simhash UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'simhash';
CREATE TABLE snapshot.updated AS SELECT * FROM snapshot.members;

DROP EXTENSION simhash;
CREATE EXTENSION simhash;
SELECT extversion FROM pg_extension WHERE extname = 'simhash';
CREATE TABLE snapshot.fresh AS SELECT * FROM snapshot.members;

-- The comparison covers every kind of member (and is not vacuous). Implicit array types and the
-- table's row type, members from PostgreSQL 17 on, are compared but not counted.
SELECT kind, count(*) FROM snapshot.fresh
WHERE object NOT LIKE '%[]' AND NOT (kind = 'type' AND ('table ' || substr(object, 6)) IN (SELECT object FROM snapshot.fresh))
GROUP BY 1 ORDER BY 1;

-- Nothing differs.
(SELECT 'only when updated' AS side, * FROM snapshot.updated EXCEPT SELECT 'only when updated', * FROM snapshot.fresh)
UNION ALL
(SELECT 'only when fresh', * FROM snapshot.fresh EXCEPT SELECT 'only when fresh', * FROM snapshot.updated)
ORDER BY 3, 1;

-- From 0.2.0: simhash(text) changed its votes, so the update says what to recompute and names
-- every index, generated column, default, CHECK constraint and materialized view built on
-- simhash(text, ...), directly or through an SQL function whose body PostgreSQL tracks (a plain
-- view computes anew and is not named); the old fingerprints stay reachable with explicit options.
DROP EXTENSION simhash;
CREATE EXTENSION simhash VERSION '0.2.0';
CREATE TABLE pages (body text, fp bigint GENERATED ALWAYS AS (simhash(body)) STORED,
                    fp_default bigint DEFAULT simhash('boilerplate'), fp_checked bigint,
                    CONSTRAINT pages_fp_checked CHECK (fp_checked = simhash(body, 'char', 3)));
CREATE INDEX pages_fp_expression ON pages (simhash(body, 'char', 4));
CREATE INDEX pages_fp_simhash ON pages USING simhash (simhash(body));
CREATE FUNCTION page_fingerprint(body text) RETURNS bigint LANGUAGE sql IMMUTABLE
    BEGIN ATOMIC SELECT simhash(body); END;
CREATE FUNCTION page_fingerprint_twice(body text) RETURNS bigint LANGUAGE sql IMMUTABLE
    RETURN page_fingerprint(body);
CREATE INDEX pages_fp_through_functions ON pages (page_fingerprint_twice(body));
INSERT INTO pages (body, fp_checked) VALUES ('the cat sat on the mat', simhash('the cat sat on the mat', 'char', 3));
CREATE MATERIALIZED VIEW page_fps AS SELECT simhash(body) AS fp FROM pages;
CREATE VIEW page_fps_now AS SELECT simhash(body) AS fp FROM pages;
-- The update script runs as a superuser with the extension's schema first on its search_path,
-- a schema others (a database owner) may create in: operators planted there that match its
-- catalog query's argument types exactly must not be chosen over pg_catalog's.
CREATE FUNCTION public.planted_eq_class(oid, regclass) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    RAISE WARNING 'planted operator ran as %', current_user;
    RETURN $1 OPERATOR(pg_catalog.=) $2::oid;
END $$;
CREATE FUNCTION public.planted_eq_procedure(oid, regprocedure) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    RAISE WARNING 'planted operator ran as %', current_user;
    RETURN $1 OPERATOR(pg_catalog.=) $2::oid;
END $$;
CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = regclass, FUNCTION = public.planted_eq_class);
CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = regprocedure, FUNCTION = public.planted_eq_procedure);
SET client_min_messages = notice;
\set VERBOSITY default
ALTER EXTENSION simhash UPDATE TO '0.3.0';
\set VERBOSITY terse
SET client_min_messages = warning;
SELECT fp = simhash(body, 'word', 3, 'count') AS stored_is_old, fp = simhash(body) AS stored_is_new FROM pages;
-- The update recorded the indexes it named: simhash_index_check says that one needs REINDEX
-- (its keys are the old fingerprints, so the rows' new ones are missing from it), until REINDEX.
\set VERBOSITY default
SELECT simhash_index_check('pages_fp_simhash');
SELECT simhash_index_check('pages_fp_simhash', concurrently => true);
REINDEX INDEX pages_fp_simhash;
SELECT simhash_index_check('pages_fp_simhash');
\set VERBOSITY terse
SELECT index_oid::regclass, reason FROM simhash_reindex_needed ORDER BY 1;
-- The REINDEX, in the session that updated, computed the new keys: the update made every session
-- read the index's expression anew, with the defaults of the new simhash(text).
SET enable_seqscan = off;
SELECT count(*) AS found_by_new_fingerprint FROM pages WHERE simhash(body) <@ hamming_ball(simhash('the cat sat on the mat'), 0);
RESET enable_seqscan;
DROP MATERIALIZED VIEW page_fps;
DROP VIEW page_fps_now;
DROP TABLE pages;
DROP FUNCTION page_fingerprint_twice(text), page_fingerprint(text);
DROP OPERATOR public.= (oid, regclass);
DROP OPERATOR public.= (oid, regprocedure);
DROP FUNCTION public.planted_eq_class(oid, regclass), public.planted_eq_procedure(oid, regprocedure);

-- From 0.3.0: the tables option of an index stored in another spelling (releases before 0.4.0
-- took " 4 " and "AUTO" as given; the option now takes only "auto" and plain numbers, so a dump
-- would not restore them) is rewritten in the form that reads the same, on partitioned indexes too.
DROP EXTENSION simhash;
SET client_min_messages = error;
CREATE EXTENSION simhash VERSION '0.3.0';
SET client_min_messages = warning;
CREATE TABLE spelled (fp bigint) PARTITION BY RANGE (fp);
CREATE TABLE spelled_low PARTITION OF spelled FOR VALUES FROM (0) TO (100);
CREATE INDEX spelled_fp ON spelled USING simhash (fp) WITH (tables = 4, pending_limit = 128);
CREATE INDEX spelled_low_auto ON spelled_low USING simhash (fp);
-- (Planted in the catalog: this release's module takes neither spelling.)
UPDATE pg_class SET reloptions = '{"tables= 4 ",pending_limit=128}' WHERE relname IN ('spelled_fp', 'spelled_low_fp_idx');
UPDATE pg_class SET reloptions = '{"tables=AUTO"}' WHERE relname = 'spelled_low_auto';
ALTER EXTENSION simhash UPDATE;
SELECT relname, reloptions FROM pg_class WHERE relname LIKE 'spelled%' AND relkind IN ('i', 'I') ORDER BY 1;
DROP TABLE spelled;

\c contrib_regression
DROP DATABASE simhash_upgrade;
