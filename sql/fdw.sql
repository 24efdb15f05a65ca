-- postgres_fdw: with the extension named in the server's options, Hamming searches and top-k are
-- sent to the remote server (here a loopback to this database) instead of filtering its rows here.
CREATE EXTENSION postgres_fdw;
CREATE TABLE fdw_remote_docs (id bigint, fp bigint);
INSERT INTO fdw_remote_docs SELECT g, hashint8extended(g, 7) FROM generate_series(1, 20000) g;
CREATE INDEX ON fdw_remote_docs USING simhash (fp);
ANALYZE fdw_remote_docs;
DO $$
BEGIN
    EXECUTE format('CREATE SERVER fdw_loopback FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host %L, port %L, dbname %L)',
                   split_part(current_setting('unix_socket_directories'), ',', 1), current_setting('port'), current_database());
END $$;
CREATE USER MAPPING FOR CURRENT_USER SERVER fdw_loopback;
CREATE FOREIGN TABLE fdw_docs (id bigint, fp bigint) SERVER fdw_loopback OPTIONS (table_name 'fdw_remote_docs');

-- Without the option the rows come back and are filtered here.
EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM fdw_docs WHERE hamming(fp, 12345) <= 3;
ALTER SERVER fdw_loopback OPTIONS (ADD extensions 'simhash');
-- With it, the condition and the ordered top-k are in the remote query.
EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM fdw_docs WHERE hamming(fp, 12345) <= 3;
EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM fdw_docs ORDER BY fp <~> 12345 LIMIT 3;
-- The remote query is one the remote index answers.
EXPLAIN (COSTS OFF) SELECT id FROM public.fdw_remote_docs WHERE (public.hamming_within(fp, 12345::bigint, 3));
-- Same answers as the table itself.
SELECT (SELECT array_agg(id ORDER BY id) FROM fdw_docs WHERE hamming(fp, hashint8extended(5, 7) # 3) <= 3) =
       (SELECT array_agg(id ORDER BY id) FROM fdw_remote_docs WHERE hamming(fp, hashint8extended(5, 7) # 3) <= 3) AS same_rows,
       (SELECT array_agg(fp <~> 12345 ORDER BY fp <~> 12345) FROM (SELECT fp FROM fdw_docs ORDER BY fp <~> 12345 LIMIT 5) t) =
       (SELECT array_agg(fp <~> 12345 ORDER BY fp <~> 12345) FROM (SELECT fp FROM fdw_remote_docs ORDER BY fp <~> 12345 LIMIT 5) t) AS same_nearest;

DROP FOREIGN TABLE fdw_docs;
DROP USER MAPPING FOR CURRENT_USER SERVER fdw_loopback;
DROP SERVER fdw_loopback;
DROP TABLE fdw_remote_docs;
DROP EXTENSION postgres_fdw;
