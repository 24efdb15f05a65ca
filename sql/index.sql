-- simhash index: results equal a sequential scan for every radius, query form and index state.
SET client_min_messages = warning;
SET jit = off;

-- Deterministic data: random fingerprints, clusters planted at distances 0..8 around five centers
-- (three copies per distance, different bits), exact duplicates, 0, -1, their neighbours, NULLs.
CREATE FUNCTION pseudo_fp(seed text) RETURNS bigint LANGUAGE sql IMMUTABLE
    AS $$ SELECT hashtextextended(seed, 42) $$;
CREATE FUNCTION flip(c bigint, d int, seed int) RETURNS bigint LANGUAGE sql IMMUTABLE
    AS $$ SELECT c # coalesce((SELECT bit_or(1::bigint << ((seed * 11 + j * 9) % 64))
                                 FROM generate_series(0, d - 1) j), 0) $$;
CREATE TABLE docs (id int PRIMARY KEY, fp bigint);
INSERT INTO docs SELECT g, pseudo_fp('doc' || g) FROM generate_series(1, 20000) g;
INSERT INTO docs SELECT 100000 + c * 100 + d * 10 + copy, flip(pseudo_fp('center' || c), d, copy)
    FROM generate_series(1, 5) c, generate_series(0, 8) d, generate_series(1, 3) copy;
INSERT INTO docs SELECT 200000 + id, fp FROM docs WHERE id <= 50 OR id > 100000;
INSERT INTO docs SELECT 210000 + id, fp FROM docs WHERE id <= 10;
INSERT INTO docs VALUES (300001, 0), (300002, -1), (300003, 1), (300004, -2), (300005, 3),
    (300006, 0), (300007, -1), (300008, NULL), (300009, NULL);

CREATE TABLE probes (qid int PRIMARY KEY, fp bigint);
INSERT INTO probes SELECT c, pseudo_fp('center' || c) FROM generate_series(1, 5) c;
INSERT INTO probes VALUES (6, 0), (7, -1), (8, pseudo_fp('doc7')), (9, pseudo_fp('absent')),
    (10, flip(pseudo_fp('center1'), 5, 9)), (11, NULL);
CREATE TABLE radii (k int);
INSERT INTO radii SELECT generate_series(0, 12) UNION ALL VALUES (-1);
-- Large radii (the index reads a whole table; the planner would rather scan): two probes.
CREATE TABLE big_radii (k int);
INSERT INTO big_radii VALUES (20), (24), (64), (100);

-- All (probe, radius, id) answers of one query form under one scan type, planned afresh.
CREATE FUNCTION answers(scan text, form text, tab text DEFAULT 'docs')
RETURNS TABLE (qid int, k int, id int) LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('enable_seqscan', (scan = 'seq')::text, true);
    PERFORM set_config('enable_indexscan', (scan = 'index')::text, true);
    PERFORM set_config('enable_bitmapscan', (scan = 'bitmap')::text, true);
    PERFORM set_config('enable_hashjoin', 'off', true);
    PERFORM set_config('enable_mergejoin', 'off', true);
    RETURN QUERY EXECUTE format(
        'SELECT p.qid, r.k, d.id FROM probes p CROSS JOIN radii r JOIN %I d ON %s
         UNION ALL
         SELECT p.qid, r.k, d.id FROM probes p CROSS JOIN big_radii r JOIN %I d ON %s WHERE p.qid IN (1, 7)',
        tab, form, tab, form);
END $$;

-- Compares every form and scan type with the sequential scan; 0 differences expected.
CREATE FUNCTION compare(tab text DEFAULT 'docs') RETURNS TABLE (form text, scan text, rows bigint, missing bigint, extra bigint)
LANGUAGE plpgsql AS $$
DECLARE
    f text;
    s text;
BEGIN
    CREATE TEMP TABLE truth AS SELECT * FROM answers('seq', 'bit_count((d.fp # p.fp)::bit(64)) <= r.k', tab);
    FOREACH f IN ARRAY ARRAY['hamming(d.fp, p.fp) <= r.k', 'hamming(p.fp, d.fp) < r.k + 1',
                             'r.k >= hamming(d.fp, p.fp)', 'hamming_within(d.fp, p.fp, r.k)',
                             'd.fp <@ hamming_ball(p.fp, r.k)'] LOOP
        FOREACH s IN ARRAY ARRAY['index', 'bitmap'] LOOP
            CREATE TEMP TABLE got AS SELECT * FROM answers(s, f, tab);
            form := f; scan := s;
            SELECT count(*) INTO rows FROM got;
            SELECT count(*) INTO missing FROM (SELECT * FROM truth EXCEPT ALL SELECT * FROM got) x;
            SELECT count(*) INTO extra FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM truth) x;
            RETURN NEXT;
            DROP TABLE got;
        END LOOP;
    END LOOP;
    DROP TABLE truth;
END $$;

-- The join plans use the index (parameterized nested loop).
CREATE FUNCTION uses_index(tab text DEFAULT 'docs') RETURNS TABLE (scan text, plan_uses_index bool) LANGUAGE plpgsql AS $$
DECLARE
    s text;
    line text;
BEGIN
    FOREACH s IN ARRAY ARRAY['index', 'bitmap'] LOOP
        PERFORM set_config('enable_seqscan', 'off', true);
        PERFORM set_config('enable_indexscan', (s = 'index')::text, true);
        PERFORM set_config('enable_bitmapscan', (s = 'bitmap')::text, true);
        PERFORM set_config('enable_hashjoin', 'off', true);
        PERFORM set_config('enable_mergejoin', 'off', true);
        scan := s; plan_uses_index := false;
        FOR line IN EXECUTE format('EXPLAIN (COSTS OFF) SELECT * FROM probes p CROSS JOIN radii r JOIN %I d ON hamming(d.fp, p.fp) <= r.k', tab) LOOP
            plan_uses_index := plan_uses_index OR line ~ 'Index Cond: \(fp <@ hamming_ball\(p\.fp, r\.k\)\)';
        END LOOP;
        RETURN NEXT;
    END LOOP;
END $$;

SELECT count(*) AS seq_answers FROM answers('seq', 'hamming(d.fp, p.fp) <= r.k');

-- Freshly built index, default options.
CREATE INDEX docs_fp ON docs USING simhash (fp);
SELECT simhash_index_check('docs_fp');
SELECT * FROM uses_index();
SELECT * FROM compare();
-- Probing every table even for large per-block radii (simhash.max_probes), and never probing.
SET simhash.max_probes = 100000000;
SELECT * FROM compare() WHERE missing + extra > 0;
SET simhash.max_probes = 0;
SELECT * FROM compare() WHERE missing + extra > 0;
SET simhash.max_probes = 100000000;

-- Other table counts: uneven blocks (3: 22/21/21 bits), long blocks (2), short blocks (8).
DROP INDEX docs_fp;
CREATE INDEX docs_fp3 ON docs USING simhash (fp) WITH (tables = 3);
SELECT simhash_index_check('docs_fp3');
SELECT * FROM compare() WHERE missing + extra > 0;
DROP INDEX docs_fp3;
-- (32-bit blocks: at most 2 flipped bits per probe, else millions of probes)
SET simhash.max_probes = 5000;
CREATE INDEX docs_fp2 ON docs USING simhash (fp) WITH (tables = 2);
SELECT simhash_index_check('docs_fp2');
SELECT * FROM compare() WHERE missing + extra > 0;
DROP INDEX docs_fp2;
CREATE INDEX docs_fp8 ON docs USING simhash (fp) WITH (tables = 8);
SELECT simhash_index_check('docs_fp8');
SELECT * FROM compare() WHERE missing + extra > 0;
DROP INDEX docs_fp8;
RESET simhash.max_probes;

-- Inserts go to the pending list; a small pending_limit makes inserts merge it.
CREATE INDEX docs_fp ON docs USING simhash (fp) WITH (pending_limit = 64);
INSERT INTO docs SELECT 400000 + g, flip(pseudo_fp('center' || (g % 5 + 1)), g % 9, g) FROM generate_series(1, 300) g;
INSERT INTO docs SELECT 500000 + g, pseudo_fp('late' || g) FROM generate_series(1, 12000) g;
INSERT INTO docs VALUES (600001, 0), (600002, NULL);
SELECT simhash_index_check('docs_fp');
SELECT * FROM compare() WHERE missing + extra > 0;
SELECT count(*) AS answers FROM answers('index', 'hamming(d.fp, p.fp) <= r.k');

-- DELETE + VACUUM removes entries; UPDATE adds new versions.
DELETE FROM docs WHERE id % 3 = 0;
SELECT * FROM compare() WHERE missing + extra > 0;
VACUUM docs;
SELECT simhash_index_check('docs_fp');
SELECT * FROM compare() WHERE missing + extra > 0;
UPDATE docs SET fp = flip(fp, 2, id) WHERE id % 7 = 1;
UPDATE docs SET fp = NULL WHERE id % 11 = 2;
SELECT * FROM compare() WHERE missing + extra > 0;
VACUUM docs;
SELECT simhash_index_check('docs_fp');
SELECT * FROM compare() WHERE missing + extra > 0;
-- Space is reused: a second round of churn does not grow the index much.
SELECT pg_relation_size('docs_fp') AS size_before \gset
UPDATE docs SET fp = flip(fp, 1, id) WHERE id % 5 = 1;
VACUUM docs;
UPDATE docs SET fp = flip(fp, 1, id) WHERE id % 5 = 1;
VACUUM docs;
SELECT pg_relation_size('docs_fp') <= 2 * :size_before AS space_reused;
SELECT simhash_index_check('docs_fp');
SELECT * FROM compare() WHERE missing + extra > 0;
VACUUM FULL docs;
SELECT simhash_index_check('docs_fp');
SELECT * FROM compare() WHERE missing + extra > 0;
REINDEX INDEX docs_fp;
SELECT simhash_index_check('docs_fp');
SELECT * FROM compare() WHERE missing + extra > 0;
DROP INDEX docs_fp;
CREATE INDEX CONCURRENTLY docs_fp ON docs USING simhash (fp);
SELECT simhash_index_check('docs_fp');
SELECT * FROM compare() WHERE missing + extra > 0;
REINDEX INDEX CONCURRENTLY docs_fp;
SELECT simhash_index_check('docs_fp');
SELECT * FROM compare() WHERE missing + extra > 0;
SELECT count(*) AS answers FROM answers('index', 'hamming(d.fp, p.fp) <= r.k');

-- An UNLOGGED table (ambuildempty), built empty and filled by inserts, then merged by VACUUM.
CREATE UNLOGGED TABLE udocs (id int, fp bigint);
CREATE INDEX udocs_fp ON udocs USING simhash (fp);
INSERT INTO udocs SELECT id, fp FROM docs;
SELECT simhash_index_check('udocs_fp');
SELECT * FROM uses_index('udocs');
SELECT * FROM compare('udocs') WHERE missing + extra > 0;
VACUUM udocs;
SELECT simhash_index_check('udocs_fp');
SELECT * FROM compare('udocs') WHERE missing + extra > 0;
TRUNCATE udocs;
SELECT count(*) FROM udocs WHERE hamming(fp, 0) <= 64;
DROP TABLE udocs;

-- Index on an empty table, then a NULL-only table.
CREATE TABLE empty_docs (id int, fp bigint);
CREATE INDEX ON empty_docs USING simhash (fp);
SET enable_seqscan = off;
SELECT count(*) FROM empty_docs WHERE hamming(fp, 0) <= 64;
INSERT INTO empty_docs VALUES (1, NULL);
SELECT count(*) FROM empty_docs WHERE hamming(fp, 0) <= 64;
VACUUM empty_docs;
SELECT count(*) FROM empty_docs WHERE fp <@ hamming_ball(0, 64);
RESET enable_seqscan;
DROP TABLE empty_docs;
-- Later tests (readme) make a docs table of their own.
DROP TABLE docs;
