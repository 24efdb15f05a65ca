-- simhash_index_info and simhash_index_runs: what an index holds, through its life: after a build,
-- after inserts into the pending list, after VACUUM writes them out as a run, after deletes; and
-- who may look.
CREATE TABLE info_docs (id int, fp bigint);
INSERT INTO info_docs SELECT g, hashint8extended(g, 5) FROM generate_series(1, 50000) g;
CREATE INDEX info_docs_fp ON info_docs USING simhash (fp);
SELECT version, tables, runs, entries, dead_entries, pending_entries, merging_entries, merges, last_merge,
       pending_pages, retired_pages, free_pages, unaccounted_pages,
       total_pages = 1 + run_pages AS pages_add_up
FROM simhash_index_info('info_docs_fp');
SELECT run, entries, dead_entries, pages, tables, dirbits FROM simhash_index_runs('info_docs_fp');

INSERT INTO info_docs SELECT g, hashint8extended(g, 5) FROM generate_series(50001, 51000) g;
INSERT INTO info_docs VALUES (0, NULL);  -- indexed too: ordered scans return it last
SELECT runs, entries, pending_entries, pending_pages > 0 AS has_pending_pages FROM simhash_index_info('info_docs_fp');

VACUUM info_docs;  -- writes the pending list out as a second run
SELECT runs, entries, pending_entries, pending_pages, merges, last_merge IS NOT NULL AS merged,
       retired_pages > 0 AS pending_pages_retired
FROM simhash_index_info('info_docs_fp');
SELECT run, entries, tables FROM simhash_index_runs('info_docs_fp');

DELETE FROM info_docs WHERE id <= 5000;
VACUUM info_docs;  -- a tenth of the first run dead: marked in place, not rewritten
SELECT runs, entries, dead_entries, pending_entries FROM simhash_index_info('info_docs_fp');
SELECT run, entries, dead_entries FROM simhash_index_runs('info_docs_fp');
SELECT simhash_index_check('info_docs_fp');
DELETE FROM info_docs WHERE id <= 15000;
VACUUM info_docs;  -- now over a fifth: the run is rewritten without its dead entries
SELECT runs, entries, dead_entries FROM simhash_index_info('info_docs_fp');
SELECT run, entries, dead_entries FROM simhash_index_runs('info_docs_fp');
-- The rewritten run's old pages are recycled once no snapshot can read them: once a transaction
-- ID assigned after the rewrite is older than every snapshot.
SELECT txid_current() IS NOT NULL AS xid_assigned;
VACUUM info_docs;
SELECT retired_pages, free_pages >= 270 AS old_run_free, unaccounted_pages,
       total_pages = 1 + run_pages + pending_pages + retired_pages + free_pages AS pages_add_up
FROM simhash_index_info('info_docs_fp');
SELECT simhash_index_check('info_docs_fp');

SELECT simhash_index_info('info_docs'::regclass);
CREATE INDEX info_docs_btree ON info_docs (fp);
SELECT simhash_index_info('info_docs_btree');
SELECT * FROM simhash_index_runs('info_docs_btree');
-- No relation, and a partitioned index (which has no storage: its partitions' indexes do).
SELECT simhash_index_info(0);
SELECT simhash_index_check(0);
CREATE TABLE info_parted (fp bigint) PARTITION BY RANGE (fp);
CREATE TABLE info_parted_low PARTITION OF info_parted FOR VALUES FROM (MINVALUE) TO (0);
CREATE INDEX info_parted_fp ON info_parted USING simhash (fp);
SELECT simhash_index_info('info_parted_fp');
SELECT simhash_index_check('info_parted_fp');
SELECT * FROM simhash_index_runs('info_parted_fp');
SELECT entries FROM simhash_index_info('info_parted_low_fp_idx');
DROP TABLE info_parted;
CREATE ROLE regress_simhash_stranger;
SET ROLE regress_simhash_stranger;
SELECT entries FROM simhash_index_info('info_docs_fp');
SELECT count(*) FROM simhash_index_runs('info_docs_fp');
RESET ROLE;
GRANT pg_stat_scan_tables TO regress_simhash_stranger;
SET ROLE regress_simhash_stranger;
SELECT entries FROM simhash_index_info('info_docs_fp');
SELECT count(*) FROM simhash_index_runs('info_docs_fp');
RESET ROLE;
DROP ROLE regress_simhash_stranger;
DROP TABLE info_docs;
