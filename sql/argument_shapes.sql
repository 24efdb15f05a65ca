-- Array arguments have one dimension: a multi-dimensional array would be read in storage order as
-- if it were flat (2x2 weights as the weights of four features), so every function that takes
-- features, weights or fingerprints refuses one (2202E); MinHash signatures are refused as
-- malformed (22023), as before. The lock functions' scope is a table.
\set VERBOSITY default
SELECT simhash(ARRAY[['a', 'b'], ['c', 'd']]);
SELECT simhash(ARRAY['a', 'b', 'c', 'd'], ARRAY[[1, 2], [3, 4]]::float8[]);
SELECT simhash(ARRAY[['a', 'b'], ['c', 'd']], ARRAY[1, 2, 3, 4]::float8[]);
SELECT minhash(ARRAY[['a', 'b'], ['c', 'd']], 4);
SELECT minhash64(ARRAY[['a', 'b'], ['c', 'd']]);
SELECT simhash(ARRAY[[['a']]]);
\set VERBOSITY terse
SELECT minhash_jaccard('{{1,2},{3,4}}', '{{1,2},{3,4}}');
SELECT minhash_merge('{{1,2},{3,4}}', '{1,2,3,4}');
SELECT minhash_slots('{{1,2},{3,4}}');
SELECT minhash_band_key('{{1,2},{3,4}}', 2, 0);
SELECT * FROM simhash_unpack_pairs('{{1,2,3},{4,5,6}}');
SELECT count(*) FROM minhash_pairs($$SELECT 1::bigint, '{{1,2},{3,4}}'::integer[]$$);
-- One dimension whatever its lower bound, and empty arrays, are read as before.
SELECT simhash('[5:6]={a,b}'::text[]) = simhash(ARRAY['a', 'b']) AS any_lower_bound,
       simhash('[0:1]={a,b}'::text[], '[3:4]={1.5,2}'::float8[]) = simhash(ARRAY['a', 'b'], ARRAY[1.5, 2]) AS weights_too,
       minhash('[2:3]={a,b}'::text[], 4) = minhash(ARRAY['a', 'b'], 4) AS minhash_same,
       simhash('{}'::text[]) AS no_features, minhash64('{}'::text[]) AS no_features_64;

-- The lock functions take a fingerprints array of one dimension, and lock the neighbourhoods of a
-- table (or partitioned table): the locks of an index, a view or a sequence are no trigger's.
CREATE TABLE shape_docs (fp bigint);
CREATE INDEX shape_docs_fp ON shape_docs (fp);
CREATE VIEW shape_view AS SELECT fp FROM shape_docs;
CREATE MATERIALIZED VIEW shape_matview AS SELECT fp FROM shape_docs;
CREATE SEQUENCE shape_sequence;
CREATE TABLE shape_parted (fp bigint) PARTITION BY RANGE (fp);
CREATE TABLE shape_part PARTITION OF shape_parted FOR VALUES FROM (0) TO (100);
\set VERBOSITY default
SELECT simhash_lock_neighbourhoods(ARRAY[[1, 2], [3, 4]]::bigint[], 3, 'shape_docs');
SELECT simhash_lock_neighbourhoods(ARRAY[1, 2], 3, 'shape_docs_fp');
\set VERBOSITY terse
SELECT simhash_lock_neighbourhood(1, 3, 'shape_docs_fp');
SELECT simhash_lock_neighbourhood(1, 3, 'shape_view');
SELECT simhash_lock_neighbourhood(1, 3, 'shape_matview');
SELECT simhash_lock_neighbourhood(1, 3, 'shape_sequence');
SELECT simhash_lock_neighbourhood(1, 3, 'pg_class_oid_index');
BEGIN;
SELECT simhash_lock_neighbourhoods(ARRAY[1, NULL, 2], 3, 'shape_docs') AS table_scope,
       simhash_lock_neighbourhoods('[0:1]={1,2}'::bigint[], 3, 'shape_parted') AS partitioned_scope,
       simhash_lock_neighbourhood(1, 3, 'shape_part') AS partition_scope;
SELECT count(*) > 0 AS locks_held FROM pg_locks
WHERE locktype = 'advisory' AND classid IN ('shape_docs'::regclass::oid, 'shape_parted'::regclass::oid, 'shape_part'::regclass::oid)
  AND pid = pg_backend_pid();
COMMIT;
DROP VIEW shape_view;
DROP MATERIALIZED VIEW shape_matview;
DROP SEQUENCE shape_sequence;
DROP TABLE shape_docs, shape_parted;
