-- simhash on a Citus cluster (a coordinator and two workers): the extension and the index on every
-- shard, Hamming searches pushed down to the shards' indexes (plain and prepared), top-k across
-- shards, batch pairs computed on the workers equal to the single-node join, and a shard move that
-- keeps the index.
SET citus.next_shard_id TO 4200000;
SET citus.shard_count TO 4;
CREATE EXTENSION simhash;
SELECT success, result FROM run_command_on_workers($$SELECT extversion FROM pg_extension WHERE extname = 'simhash'$$);

-- 40,000 uniform fingerprints, 500 clusters of 4 near-duplicates (1-4 bits apart), NULLs.
CREATE TABLE docs (id bigint PRIMARY KEY, fp bigint);
SELECT create_distributed_table('docs', 'id');
INSERT INTO docs SELECT g, hashint8extended(g, 7) FROM generate_series(1, 40000) g;
INSERT INTO docs
SELECT 100000 + 4 * c + j,
       hashint8extended(c, 7) # (1::bigint << (c % 61)) # (CASE WHEN j > 0 THEN 1::bigint << (j * 5) ELSE 0 END)
                              # (CASE WHEN j > 1 THEN 1::bigint << (j * 7 + 1) ELSE 0 END)
FROM generate_series(1, 500) c, generate_series(0, 3) j;
INSERT INTO docs SELECT 200000 + g, NULL FROM generate_series(1, 10) g;
CREATE INDEX docs_fp ON docs USING simhash (fp);
ANALYZE docs;
-- A local copy on the coordinator: the reference answers. Citus joins no distributed table with
-- a local one, so the comparisons run one query at a time.
CREATE TABLE docs_local AS SELECT * FROM docs;
ANALYZE docs_local;
CREATE FUNCTION compare_searches(radius integer) RETURNS TABLE (centers integer, different integer, rows_found bigint)
LANGUAGE plpgsql AS $$
DECLARE q integer; d bigint; l bigint;
BEGIN
    centers := 0; different := 0; rows_found := 0;
    FOR q IN 1..20 LOOP
        SELECT count(*) INTO d FROM docs WHERE hamming(fp, hashint8extended(q * 31, 7)) <= radius;
        SELECT count(*) INTO l FROM docs_local WHERE hamming(fp, hashint8extended(q * 31, 7)) <= radius;
        centers := centers + 1;
        different := different + (d <> l)::integer;
        rows_found := rows_found + l;
    END LOOP;
    RETURN NEXT;
END $$;
CREATE FUNCTION nearest_distances(tab regclass, q bigint) RETURNS integer[] LANGUAGE plpgsql AS $$
DECLARE result integer[];
BEGIN
    EXECUTE format('SELECT array_agg(d ORDER BY d) FROM (SELECT fp <~> $1 AS d FROM %s ORDER BY fp <~> $1 LIMIT 10) t', tab)
        INTO result USING q;
    RETURN result;
END $$;

-- Every shard has the index.
SELECT success, result FROM run_command_on_shards('docs', $$SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = '%s'::regclass AND a.amname = 'simhash'$$);

-- The search is pushed down to every shard, where the index answers it.
CREATE FUNCTION plan_lines(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
        RETURN NEXT regexp_replace(regexp_replace(line, 'port=\d+', 'port=N'), 'dbname=\S+', 'dbname=D');
    END LOOP;
END $$;
SET citus.explain_all_tasks = on;
SELECT plan_lines('SELECT id FROM docs WHERE hamming(fp, hashint8extended(7, 7)) <= 3');
SELECT plan_lines('SELECT id FROM docs ORDER BY fp <~> hashint8extended(7, 7) LIMIT 3');
SELECT plan_lines('SELECT id FROM docs WHERE fp <@ hamming_ball(hashint8extended(7, 7), 5)') LIMIT 6;
RESET citus.explain_all_tasks;

-- Exact: the same rows as the local table, at several radii and centers.
SELECT r, c.* FROM generate_series(0, 16, 4) r, compare_searches(r) c ORDER BY r;
SELECT array_agg(id ORDER BY id) FROM docs WHERE hamming(fp, hashint8extended(42, 7)) <= 6;
SELECT array_agg(id ORDER BY id) FROM docs_local WHERE hamming(fp, hashint8extended(42, 7)) <= 6;

-- Prepared statements: custom plans for five executions, then a generic plan.
PREPARE near(bigint, integer) AS SELECT count(*) FROM docs WHERE hamming(fp, $1) <= $2;
SELECT array_agg((SELECT count(*) FROM docs_local WHERE hamming(fp, hashint8extended(c, 7) # (1::bigint << c)) <= 9) ORDER BY c) AS local_counts
FROM generate_series(1, 7) c;
EXECUTE near(hashint8extended(1, 7) # (1::bigint << 1), 9);
EXECUTE near(hashint8extended(2, 7) # (1::bigint << 2), 9);
EXECUTE near(hashint8extended(3, 7) # (1::bigint << 3), 9);
EXECUTE near(hashint8extended(4, 7) # (1::bigint << 4), 9);
EXECUTE near(hashint8extended(5, 7) # (1::bigint << 5), 9);
EXECUTE near(hashint8extended(6, 7) # (1::bigint << 6), 9);
EXECUTE near(hashint8extended(7, 7) # (1::bigint << 7), 9);
SELECT plan_lines('EXECUTE near(hashint8extended(8, 7), 3)');

-- Top-k across shards: every shard returns its nearest, the coordinator merges them.
SELECT nearest_distances('docs', q) AS distributed, nearest_distances('docs_local', q) AS local
FROM (VALUES (hashint8extended(11, 7) # 1), (hashint8extended(123456, 3))) v(q);

-- Batch pairs on the workers: equal to simhash_pairs over the same rows, at every radius tried.
SELECT r,
       (SELECT count(*) FROM simhash_pairs_distributed('docs', 'id', 'fp', r)) AS pairs,
       (SELECT count(*) FROM ((SELECT * FROM simhash_pairs_distributed('docs', 'id', 'fp', r)
                               EXCEPT SELECT * FROM simhash_pairs('SELECT id, fp FROM docs_local WHERE fp IS NOT NULL', r))
                              UNION ALL
                              (SELECT * FROM simhash_pairs('SELECT id, fp FROM docs_local WHERE fp IS NOT NULL', r)
                               EXCEPT SELECT * FROM simhash_pairs_distributed('docs', 'id', 'fp', r))) d) AS different
FROM (VALUES (0), (3), (8)) v(r);
-- Groups of near-duplicates from the pairs computed on the workers: the groups simhash_groups
-- finds on the local copy, for every row with a near-duplicate.
CREATE TABLE local_groups AS SELECT * FROM simhash_groups('SELECT id, fp FROM docs_local WHERE fp IS NOT NULL', 3, 'connected');
DELETE FROM local_groups WHERE group_id IN (SELECT group_id FROM local_groups GROUP BY 1 HAVING count(*) = 1);
CREATE TABLE distributed_groups AS SELECT * FROM simhash_groups_distributed('docs', 'id', 'fp', 3);
SELECT (SELECT count(*) FROM distributed_groups) AS grouped_rows, (SELECT count(DISTINCT group_id) FROM distributed_groups) AS groups,
       (SELECT count(*) FROM ((SELECT * FROM distributed_groups EXCEPT SELECT * FROM local_groups)
                              UNION ALL (SELECT * FROM local_groups EXCEPT SELECT * FROM distributed_groups)) d) AS different;
DROP TABLE local_groups, distributed_groups;
-- MinHash LSH on the workers: equal to minhash_pairs over the same signatures.
CREATE TABLE sigs (id bigint PRIMARY KEY, signature integer[]);
SELECT create_distributed_table('sigs', 'id');
INSERT INTO sigs
SELECT id, minhash(ARRAY(SELECT 'w' || ((id / 4) * 100 + k) FROM generate_series(1, 40 - (id % 4) * 3) k), 64)
FROM generate_series(1, 2000) id;
CREATE TABLE sigs_local AS SELECT * FROM sigs;
SELECT t, (SELECT count(*) FROM minhash_pairs_distributed('sigs', 'id', 'signature', t)) AS pairs,
       (SELECT count(*) FROM ((SELECT * FROM minhash_pairs_distributed('sigs', 'id', 'signature', t)
                               EXCEPT SELECT * FROM minhash_pairs('SELECT id, signature FROM sigs_local', t))
                              UNION ALL
                              (SELECT * FROM minhash_pairs('SELECT id, signature FROM sigs_local', t)
                               EXCEPT SELECT * FROM minhash_pairs_distributed('sigs', 'id', 'signature', t))) d) AS different
FROM (VALUES (0.5), (0.8)) v(t);
DROP TABLE sigs, sigs_local;
-- Ids must be unique, as simhash_pairs and minhash_pairs require.
CREATE TABLE dupids (k bigint, id bigint, fp bigint, s integer[]);
SELECT create_distributed_table('dupids', 'k');
INSERT INTO dupids VALUES (1, 7, 100, '{1,2}'), (2, 7, 101, '{1,2}'), (3, 8, 5, '{3,4}');
SELECT * FROM simhash_pairs_distributed('dupids', 'id', 'fp', 3);
SELECT * FROM minhash_pairs_distributed('dupids', 'id', 's', 0.5);
DROP TABLE dupids;
-- A NULL id is refused (its pairs could not be reported), as simhash_pairs and minhash_pairs
-- refuse it; so are ids that are not integers (numeric ids would be rounded into each other),
-- signatures of different lengths, and arguments out of range.
CREATE TABLE nullids (k bigint, id bigint, fp bigint, s integer[]);
SELECT create_distributed_table('nullids', 'k');
INSERT INTO nullids VALUES (1, NULL, 100, '{1,2,3,4}'), (2, NULL, 101, '{1,2,3,4}'), (3, 5, 100, '{1,2,3,4}');
SELECT * FROM simhash_pairs_distributed('nullids', 'id', 'fp', 3);
SELECT * FROM minhash_pairs_distributed('nullids', 'id', 's', 0.5);
SELECT * FROM simhash_groups_distributed('nullids', 'id', 'fp', 3);
DROP TABLE nullids;
CREATE TABLE numericids (k bigint, id numeric, fp bigint, s integer[], fp_text text);
SELECT create_distributed_table('numericids', 'k');
INSERT INTO numericids VALUES (1, 2.5, 1, '{1,2}', '1'), (2, 3, 1, '{1,2,3}', '1');
SELECT * FROM simhash_pairs_distributed('numericids', 'id', 'fp', 3);
ALTER TABLE numericids ALTER COLUMN id TYPE bigint USING ceil(id);
SELECT * FROM simhash_pairs_distributed('numericids', 'id', 'fp_text', 3);
SELECT * FROM simhash_pairs_distributed('numericids', 'id', 'no_such_column', 3);
SELECT * FROM minhash_pairs_distributed('numericids', 'id', 's', 0.5);
DROP TABLE numericids;
SELECT * FROM simhash_pairs_distributed('docs', 'id', 'fp', -1);
SELECT * FROM simhash_pairs_distributed('docs', 'id', 'fp', 65);
SELECT * FROM simhash_pairs_distributed('docs', 'id', 'fp', 3, 0);
SELECT * FROM simhash_pairs_distributed('docs', 'id', 'fp', 64, 100000);
SELECT * FROM simhash_groups_distributed('docs', 'id', 'fp', NULL);
SELECT * FROM minhash_pairs_distributed('docs', 'id', 'fp', 1.5);
-- Each pair once, ids ordered.
SELECT count(*) AS pairs, count(DISTINCT (id_a, id_b)) AS distinct_pairs, bool_and(id_a < id_b) AS ordered
FROM simhash_pairs_distributed('docs', 'id', 'fp', 3);
-- The layout it used, and a layout it cannot make.
SELECT * FROM simhash_pairs_layout(40000, 3);
SELECT * FROM simhash_pairs_layout(40000, 40, 16);
-- A table that is not distributed runs the single-node join.
SELECT count(*) FROM simhash_pairs_distributed('docs_local', 'id', 'fp', 3);
-- The same pairs written into a table, one transaction per permuted table (the workers hold one
-- table's staged rows at a time); equal to simhash_pairs over the same rows.
CREATE TABLE pairs_result (id_a bigint, id_b bigint, distance integer);
CALL simhash_pairs_distributed_into('docs', 'id', 'fp', 'pairs_result', 8);
SELECT (SELECT count(*) FROM pairs_result) AS pairs,
       (SELECT count(*) FROM ((SELECT * FROM pairs_result
                               EXCEPT SELECT * FROM simhash_pairs('SELECT id, fp FROM docs_local WHERE fp IS NOT NULL', 8))
                              UNION ALL
                              (SELECT * FROM simhash_pairs('SELECT id, fp FROM docs_local WHERE fp IS NOT NULL', 8)
                               EXCEPT SELECT * FROM pairs_result)) d) AS different;
-- It commits, so it refuses to run inside a transaction block; a local table runs simhash_pairs.
BEGIN;
CALL simhash_pairs_distributed_into('docs', 'id', 'fp', 'pairs_result', 3);
ROLLBACK;
TRUNCATE pairs_result;
CALL simhash_pairs_distributed_into('docs_local', 'id', 'fp', 'pairs_result', 3);
SELECT count(*) AS local_pairs FROM pairs_result;
TRUNCATE pairs_result;
-- Whatever the caller's search_path: objects named like the ones it uses, in a schema searched
-- first, are never called.
CREATE SCHEMA hostile;
CREATE FUNCTION hostile.count(bigint) RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hostile count called'; END $$;
CREATE FUNCTION hostile.format(text, name, name) RETURNS text LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hostile format called'; END $$;
CREATE FUNCTION hostile.int8eq(bigint, bigint) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hostile = called'; END $$;
CREATE OPERATOR hostile.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = hostile.int8eq);
CREATE FUNCTION hostile.simhash_pairs_key(bigint, integer, integer, integer, integer) RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hostile key called'; END $$;
SET search_path = hostile, public;
SELECT count(*) FROM public.simhash_pairs_distributed('public.docs', 'id', 'fp', 3);
CALL public.simhash_pairs_distributed_into('public.docs', 'id', 'fp', 'public.pairs_result', 3);
SELECT pg_catalog.count(*) AS pairs_under_hostile_path FROM public.pairs_result;
SHOW search_path;
RESET search_path;
-- Called from a DO block, whose transaction goes on after the procedure's last COMMIT, it leaves
-- the caller's search_path as it was.
TRUNCATE pairs_result;
DO $$
BEGIN
    CALL simhash_pairs_distributed_into('docs', 'id', 'fp', 'pairs_result', 3);
    RAISE NOTICE 'after the call: search_path %, % pairs', current_setting('search_path'), (SELECT count(*) FROM pairs_result);
END $$;
DROP TABLE pairs_result;
-- The workers run the pairs queries with their own search_path, where Citus sends pg_catalog's
-- names unqualified: a function of exact argument types there (array_length of bigint[] and of
-- integer[], beating pg_catalog's array_length(anyarray, integer)) is never called.
CREATE FUNCTION public.array_length(bigint[], integer) RETURNS integer LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'planted array_length(bigint[]) called'; END $$;
CREATE FUNCTION public.array_length(integer[], integer) RETURNS integer LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'planted array_length(integer[]) called'; END $$;
CREATE TABLE sigs2 (id bigint PRIMARY KEY, signature integer[]);
SELECT create_distributed_table('sigs2', 'id');
INSERT INTO sigs2 SELECT id, minhash(ARRAY['a' || id / 2, 'b' || id / 2, 'c'], 16) FROM generate_series(1, 200) id;
SELECT count(*) AS pairs FROM simhash_pairs_distributed('docs', 'id', 'fp', 3);
SELECT count(*) AS minhash_pairs FROM minhash_pairs_distributed('sigs2', 'id', 'signature', 0.5);
DROP FUNCTION public.array_length(bigint[], integer), public.array_length(integer[], integer);
DROP TABLE sigs2;
-- A procedure's variables are typed when it is first compiled in a session, on the caller's
-- search_path: a type named like one of them, in a schema searched first, is not used.
\c
CREATE FUNCTION hostile.alarm() RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hostile domain checked'; END $$;
CREATE DOMAIN hostile.text AS pg_catalog.text CHECK (hostile.alarm());
CREATE TABLE pairs_result (id_a bigint, id_b bigint, distance integer);
SET search_path = hostile, pg_catalog, public;
CALL public.simhash_pairs_distributed_into('public.docs', 'id', 'fp', 'public.pairs_result', 2);
RESET search_path;
SELECT count(*) AS pairs_at_2 FROM pairs_result;
DROP TABLE pairs_result;
DROP DOMAIN hostile.text;
DROP FUNCTION hostile.alarm();

-- Dedup on load through the coordinator: its neighbourhood locks, then a check that reaches every
-- shard. A row 2 bits from a stored row on another shard is not inserted; an unrelated row is.
CREATE FUNCTION load_unless_near(new_id bigint, new_fp bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    PERFORM simhash_lock_neighbourhood(new_fp, 3, 'docs');
    IF EXISTS (SELECT 1 FROM docs WHERE hamming(fp, new_fp) <= 3) THEN
        RETURN false;
    END IF;
    INSERT INTO docs VALUES (new_id, new_fp);
    RETURN true;
END $$;
SELECT get_shard_id_for_distribution_column('docs', 5) <> get_shard_id_for_distribution_column('docs', 300001) AS other_shard,
       load_unless_near(300001, hashint8extended(5, 7) # 3) AS near_loaded,
       load_unless_near(300002, 123456789) AS unrelated_loaded;
SELECT count(*) FROM docs WHERE id IN (300001, 300002);
DELETE FROM docs WHERE id IN (300001, 300002);

-- A shard moved to the other worker keeps its index and its answers.
SELECT citus_move_shard_placement(p.shardid, p.nodename, p.nodeport, o.nodename, o.nodeport, shard_transfer_mode => 'block_writes') IS NOT NULL AS moved
FROM pg_dist_shard s JOIN pg_dist_shard_placement p USING (shardid)
JOIN pg_dist_node o ON o.nodeport <> p.nodeport AND o.noderole = 'primary' AND o.groupid <> 0
WHERE s.logicalrelid = 'docs'::regclass ORDER BY s.shardid LIMIT 1;
SELECT success, result FROM run_command_on_shards('docs', $$SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = '%s'::regclass AND a.amname = 'simhash'$$);
SELECT * FROM compare_searches(8);

DROP TABLE docs, docs_local;
DROP SCHEMA hostile CASCADE;
