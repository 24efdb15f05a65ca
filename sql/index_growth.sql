-- A live index: rows added in many small transactions and deleted, then VACUUM. The index stays
-- within 1.3x of a fresh build of the same rows, its freed pages are reused, it verifies, and it
-- answers like a sequential scan.
-- No autovacuum on the table: each round below changes a fifth of its rows, so an autovacuum
-- visit would ANALYZE it, and its snapshot, like any in the cluster, can hold back the recycling
-- whose page reuse the test counts (a 0.6 s snapshot in another session fails it).
CREATE TABLE growth (id int, fp bigint) WITH (autovacuum_enabled = off);
INSERT INTO growth SELECT g, hashint8extended(g, 3) FROM generate_series(1, 100000) g;
CREATE INDEX growth_fp ON growth USING simhash (fp) WITH (pending_limit = 64);
CREATE PROCEDURE pg_temp.add_rows(first int, n int, batch int) LANGUAGE plpgsql AS $$
BEGIN
    FOR b IN 0 .. n / batch - 1 LOOP
        INSERT INTO growth SELECT g, hashint8extended(g, 3) FROM generate_series(first + b * batch, first + (b + 1) * batch - 1) g;
        COMMIT;
    END LOOP;
END $$;
CREATE FUNCTION pg_temp.index_pages(idx regclass) RETURNS bigint LANGUAGE sql AS
    $$ SELECT pg_relation_size(idx) / current_setting('block_size')::int $$;

-- 10% more rows in 100 transactions, 10% of all rows deleted, VACUUM twice (the second recycles
-- what the first retired, once a newer transaction ID exists).
CALL pg_temp.add_rows(100001, 10000, 100);
SELECT runs > 1 AS several_runs, merges > 0 AS merged FROM simhash_index_info('growth_fp');
DELETE FROM growth WHERE id % 10 = 0;
VACUUM growth;
SELECT txid_current() IS NOT NULL AS xid_assigned;
VACUUM growth;
CREATE INDEX growth_fresh ON growth USING simhash (fp);
SELECT pg_temp.index_pages('growth_fp') <= 1.3 * pg_temp.index_pages('growth_fresh') AS within_1_3x_of_fresh,
       (SELECT entries + pending_entries FROM simhash_index_info('growth_fp')) = (SELECT count(*) FROM growth) AS entries_match;
DROP INDEX growth_fresh;
SELECT simhash_index_check('growth_fp');

-- Rounds of churn (10% of the rows replaced each time, VACUUM after each). Once a fifth of the
-- first run is dead, VACUUM rewrites it; its new copy needs room while the old one may still be
-- read, so the file grows to about twice a fresh build by the first rewrite and then stays there:
-- later rewrites reuse the pages earlier ones freed.
CREATE PROCEDURE pg_temp.churn(first int) LANGUAGE plpgsql AS $$
BEGIN
    CALL pg_temp.add_rows(first, 10000, 100);
    DELETE FROM growth WHERE id IN (SELECT id FROM growth ORDER BY hashint4(id + first) LIMIT 10000);
END $$;
CALL pg_temp.churn(110001);
VACUUM growth;
SELECT txid_current() IS NOT NULL AS xid_assigned;
CALL pg_temp.churn(120001);
VACUUM growth;
SELECT txid_current() IS NOT NULL AS xid_assigned;
SELECT pg_temp.index_pages('growth_fp') AS pages_before \gset
CALL pg_temp.churn(130001);
VACUUM growth;
SELECT txid_current() IS NOT NULL AS xid_assigned;
CALL pg_temp.churn(140001);
VACUUM growth;
SELECT txid_current() IS NOT NULL AS xid_assigned;
CALL pg_temp.churn(150001);
VACUUM growth;
CREATE INDEX growth_fresh ON growth USING simhash (fp);
SELECT pg_temp.index_pages('growth_fp') <= :pages_before * 1.1 AS freed_pages_reused,
       pg_temp.index_pages('growth_fp') <= 2.5 * pg_temp.index_pages('growth_fresh') AS within_2_5x_of_fresh;
DROP INDEX growth_fresh;
SELECT simhash_index_check('growth_fp');

-- Exact: equal to a sequential scan for every radius 0..8 around 50 stored fingerprints.
CREATE TEMP TABLE growth_truth AS
SELECT q.id AS qid, k, count(g.id) AS n
FROM growth q CROSS JOIN generate_series(0, 8) k LEFT JOIN growth g ON hamming(g.fp, q.fp) <= k
WHERE q.id % 2203 = 7 GROUP BY 1, 2;
SET enable_seqscan = off;
SELECT count(*) AS mismatches FROM growth_truth t
WHERE t.n <> (SELECT count(*) FROM growth g WHERE hamming(g.fp, (SELECT fp FROM growth WHERE id = t.qid)) <= t.k);
RESET enable_seqscan;
DROP TABLE growth;

-- A large load rolled back: its merges retire more sets of pages than the metapage holds while its
-- own snapshot keeps them from being recycled, so merges stop and its rows stay in runs (one of
-- them the library's, now mostly dead) and in the list being merged. The first VACUUM after it
-- (once a newer transaction ID exists, as on any busy server) recycles those sets before it
-- rewrites the runs a fifth dead: one run of the library's rows is left, none dead, and queries
-- read no dead entries.
CREATE TABLE aborted (id int, fp bigint) WITH (autovacuum_enabled = off);
INSERT INTO aborted SELECT g, hashint8extended(g, 3) FROM generate_series(1, 100000) g;
CREATE INDEX aborted_fp ON aborted USING simhash (fp) WITH (pending_limit = 64);
BEGIN;
INSERT INTO aborted SELECT g, hashint8extended(g, 3) FROM generate_series(100001, 1600000) g;
SELECT runs > 1 AS several_runs, merging_entries > 100000 AS merges_held_back FROM simhash_index_info('aborted_fp');
ROLLBACK;
SELECT txid_current() IS NOT NULL AS xid_assigned;
VACUUM aborted;
SELECT run, entries, dead_entries FROM simhash_index_runs('aborted_fp');
SELECT simhash_index_check('aborted_fp');
DROP TABLE aborted;
