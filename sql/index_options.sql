-- simhash index options, errors, amvalidate and the verification function.
SET client_min_messages = warning;
CREATE TABLE odocs (id int, fp bigint, t text);
INSERT INTO odocs SELECT g, hashtextextended('o' || g, 3), 'x' FROM generate_series(1, 1000) g;

-- Invalid options.
CREATE INDEX ON odocs USING simhash (fp) WITH (tables = 1);
CREATE INDEX ON odocs USING simhash (fp) WITH (tables = 9);
CREATE INDEX ON odocs USING simhash (fp) WITH (tables = 'four');
CREATE INDEX ON odocs USING simhash (fp) WITH (tables = '4 x');
-- The value is stored and shown as written: only "auto" and a plain number are taken, and the
-- hint says how to write what was meant.
CREATE INDEX ON odocs USING simhash (fp) WITH (tables = ' 4');
CREATE INDEX ON odocs USING simhash (fp) WITH (tables = 'AUTO');
CREATE INDEX ON odocs USING simhash (fp) WITH (tables = ' Auto ');
CREATE INDEX ON odocs USING simhash (fp) WITH (tables = '04');
CREATE INDEX ON odocs USING simhash (fp) WITH (tables = '+4');
CREATE INDEX ON odocs USING simhash (fp) WITH (tables = 4.0);
CREATE INDEX ON odocs USING simhash (fp) WITH (tables = 'auto4');
CREATE INDEX odocs_plain ON odocs USING simhash (fp) WITH (tables = '4');
ALTER INDEX odocs_plain SET (tables = AUTO);
SELECT reloptions FROM pg_class WHERE relname = 'odocs_plain';
ALTER INDEX odocs_plain SET (tables = 'Auto');
-- A value an earlier release stored as given still reads as it did (the update to 0.4.0 rewrites
-- them; here one is planted in the catalog).
UPDATE pg_class SET reloptions = '{"tables= 3 "}' WHERE relname = 'odocs_plain';
REINDEX INDEX odocs_plain;
SELECT (simhash_index_info('odocs_plain')).tables;
DROP INDEX odocs_plain;
CREATE INDEX ON odocs USING simhash (fp) WITH (pending_limit = 10);
CREATE INDEX ON odocs USING simhash (fp) WITH (blocks = 4);
-- Unsupported shapes.
CREATE INDEX ON odocs USING simhash (t);
CREATE INDEX ON odocs USING simhash (fp, id);
CREATE UNIQUE INDEX ON odocs USING simhash (fp);

CREATE INDEX odocs_fp ON odocs USING simhash (fp) WITH (tables = 5, pending_limit = 128);
SELECT reloptions FROM pg_class WHERE relname = 'odocs_fp';
ALTER INDEX odocs_fp SET (pending_limit = 256);
ALTER INDEX odocs_fp SET (pending_limit = 1);
SELECT simhash_index_check('odocs_fp');

-- Query values: NULL ball => no rows; negative radius => no rows.
SELECT count(*) FROM odocs WHERE fp <@ NULL::hamming_ball;
SELECT count(*) FROM odocs WHERE hamming(fp, NULL) <= 3;
SELECT count(*) FROM odocs WHERE hamming(fp, 0) <= -5;
SELECT count(*) FROM odocs WHERE hamming(fp, 0) <= NULL;

-- amvalidate, and the catalog entries.
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'bigint_hamming_ops'
    AND opcmethod = (SELECT oid FROM pg_am WHERE amname = 'simhash');
SELECT amname, amtype FROM pg_am WHERE amname = 'simhash';
SELECT opcname, opcdefault, opcintype::regtype FROM pg_opclass
    WHERE opcmethod = (SELECT oid FROM pg_am WHERE amname = 'simhash');
SELECT amopstrategy, amopopr::regoperator FROM pg_amop
    WHERE amopmethod = (SELECT oid FROM pg_am WHERE amname = 'simhash');

-- Operator classes with other members are refused when they are created (a scan reads operator
-- 1's argument as a ball: an index of such a class crashed the planner).
CREATE OPERATOR CLASS bad_ops FOR TYPE bigint USING simhash AS OPERATOR 3 <@ (bigint, hamming_ball);
CREATE OPERATOR CLASS bad_ops FOR TYPE bigint USING simhash AS OPERATOR 1 = (bigint, bigint);
CREATE OPERATOR CLASS bad_ops FOR TYPE bigint USING simhash AS OPERATOR 1 < (bigint, bigint);
CREATE OPERATOR CLASS bad_ops FOR TYPE bigint USING simhash AS OPERATOR 2 <@ (bigint, hamming_ball);
CREATE OPERATOR CLASS bad_ops FOR TYPE bigint USING simhash AS OPERATOR 2 = (bigint, bigint);
SELECT count(*) AS bad_classes FROM pg_opclass WHERE opcname = 'bad_ops';
-- A class for another type passes (its members are bigint's), and amvalidate says so; an index of
-- it is refused.
CREATE OPERATOR CLASS int_ops FOR TYPE integer USING simhash AS OPERATOR 1 <@ (bigint, hamming_ball);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'int_ops';
CREATE TEMP TABLE int_docs (n integer);
CREATE INDEX ON int_docs USING simhash (n int_ops);
DROP OPERATOR FAMILY int_ops USING simhash;
-- A correct class in another schema validates (the ball type is recognised wherever it lives).
CREATE SCHEMA other_ops;
CREATE OPERATOR CLASS other_ops.copy_ops FOR TYPE bigint USING simhash AS
    OPERATOR 1 <@ (bigint, hamming_ball), OPERATOR 2 <~> (bigint, bigint) FOR ORDER BY integer_ops;
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'copy_ops';
DROP SCHEMA other_ops CASCADE;

-- The verification function rejects other relations.
CREATE INDEX odocs_id ON odocs (id);
SELECT simhash_index_check('odocs_id');
SELECT simhash_index_check('odocs');
SELECT simhash_index_check(NULL);

-- Index access method properties.
SELECT p.name, pg_indexam_has_property(a.oid, p.name) FROM pg_am a,
    unnest(ARRAY['can_order', 'can_unique', 'can_multi_col', 'can_exclude', 'can_include']) p(name)
    WHERE a.amname = 'simhash';
SELECT p.name, pg_index_has_property('odocs_fp'::regclass, p.name) FROM
    unnest(ARRAY['clusterable', 'index_scan', 'bitmap_scan', 'backward_scan']) p(name);
SELECT p.name, pg_index_column_has_property('odocs_fp'::regclass, 1, p.name) FROM
    unnest(ARRAY['orderable', 'distance_orderable', 'returnable', 'search_array', 'search_nulls']) p(name);

-- tables = auto (the default) chooses each run's tables from its number of entries; a count fixes
-- them for the runs written from then on; runs of different geometry answer together, exactly.
CREATE INDEX odocs_auto ON odocs USING simhash (fp) WITH (tables = AUTO);
SELECT run, entries, tables FROM simhash_index_runs('odocs_auto');
ALTER INDEX odocs_auto SET (tables = 3);
SELECT reloptions FROM pg_class WHERE relname = 'odocs_auto';
INSERT INTO odocs SELECT g, hashtextextended('o' || g, 3), 'x' FROM generate_series(1001, 3000) g;
VACUUM odocs;
SELECT run, entries, tables FROM simhash_index_runs('odocs_auto');
ALTER INDEX odocs_auto RESET (tables);
DROP INDEX odocs_fp;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT k, count(*) FILTER (WHERE hamming(o.fp, q.fp) <= k) AS rows_within,
       bool_and((SELECT count(*) FROM odocs i WHERE hamming(i.fp, q.fp) <= k) =
                (SELECT count(*) FROM odocs s WHERE hamming(s.fp + 0, q.fp) <= k)) AS index_equals_filter
FROM (SELECT fp # 5 AS fp FROM odocs WHERE id IN (7, 1500, 2999)) q, generate_series(0, 24, 4) k, odocs o
GROUP BY k ORDER BY k;
EXPLAIN (COSTS OFF) SELECT count(*) FROM odocs WHERE hamming(fp, 0) <= 4;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT simhash_index_check('odocs_auto');

DROP TABLE odocs;
