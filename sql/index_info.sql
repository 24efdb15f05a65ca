-- simhash_index_info: what an index holds, through its life: after a build, after inserts into the
-- pending list, after VACUUM merges them, after deletes; and who may look.
CREATE TABLE info_docs (id int, fp bigint);
INSERT INTO info_docs SELECT g, hashint8extended(g, 5) FROM generate_series(1, 50000) g;
CREATE INDEX info_docs_fp ON info_docs USING simhash (fp);
SELECT version, tables, entries, pending_entries, merging_entries, pending_pages, free_pages,
       data_pages > 0 AS has_data, ref_pages > 0 AS has_refs, directory_pages > 0 AS has_directories,
       total_pages = 1 + data_pages + ref_pages + directory_pages + map_pages + pending_pages + free_pages AS pages_add_up,
       table_pages = data_pages + ref_pages + directory_pages + map_pages AS all_reachable
FROM simhash_index_info('info_docs_fp');

INSERT INTO info_docs SELECT g, hashint8extended(g, 5) FROM generate_series(50001, 51000) g;
INSERT INTO info_docs VALUES (0, NULL);  -- a NULL fingerprint is not indexed
SELECT entries, pending_entries, pending_pages > 0 AS has_pending_pages FROM simhash_index_info('info_docs_fp');

VACUUM info_docs;  -- merges the pending list
SELECT entries, pending_entries, pending_pages FROM simhash_index_info('info_docs_fp');

DELETE FROM info_docs WHERE id <= 10000;
VACUUM info_docs;  -- the merge drops dead entries; the old tables' pages become free for reuse
SELECT entries, pending_entries, free_pages > 0 AS has_free_pages,
       total_pages = 1 + data_pages + ref_pages + directory_pages + map_pages + pending_pages + free_pages AS pages_add_up,
       table_pages = data_pages + ref_pages + directory_pages + map_pages AS all_reachable
FROM simhash_index_info('info_docs_fp');

SELECT simhash_index_info('info_docs'::regclass);
CREATE INDEX info_docs_btree ON info_docs (fp);
SELECT simhash_index_info('info_docs_btree');
CREATE ROLE regress_simhash_stranger;
SET ROLE regress_simhash_stranger;
SELECT entries FROM simhash_index_info('info_docs_fp');
RESET ROLE;
GRANT pg_stat_scan_tables TO regress_simhash_stranger;
SET ROLE regress_simhash_stranger;
SELECT entries FROM simhash_index_info('info_docs_fp');
RESET ROLE;
DROP ROLE regress_simhash_stranger;
DROP TABLE info_docs;
