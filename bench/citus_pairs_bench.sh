#!/usr/bin/env bash
# All pairs within RADIUS bits (default 3) among N uniform random fingerprints plus 1% planted
# near-duplicates, on a Citus cluster: simhash_pairs_distributed over the distributed table
# (repartitioned on the workers) against simhash_pairs over a local copy on the coordinator (one
# node), in the same run. Prints seconds, pairs, and the bytes that crossed the loopback interface
# during each (the cluster's nodes talk over 127.0.0.1; on one host this measures overhead and
# correctness, not speed-up).
# simhash_pairs_distributed_into (one transaction per permuted table, into a table) is run too.
# Usage: PGHOST=... PGPORT=<coordinator> bench/citus_pairs_bench.sh [ROWS ...]   (default 1000000)
#   RADIUS=3, MAX_TABLES=16 (the distributed layouts' cap), METHODS="distributed distributed_into single_node",
#   SINGLE_NODE_MEMORY=1GB (simhash_pairs memory_limit; 48 bytes a row keep the rows in memory)
set -euo pipefail
radius=${RADIUS:-3}
max_tables=${MAX_TABLES:-16}
methods=${METHODS:-"distributed distributed_into single_node"}
single_node_memory=${SINGLE_NODE_MEMORY:-1GB}
psql=(psql -X -q -At -v ON_ERROR_STOP=1)
# Bytes received on the loopback interface: every byte one node sends another (on lo each is also
# counted once as sent).
lo_bytes() { awk '/^ *lo:/ { printf "%.0f\n", $2 }' /proc/net/dev; }
printf '%-10s %-26s %10s %10s %16s\n' rows method seconds pairs loopback_bytes
for rows in "${@:-1000000}"; do
    "${psql[@]}" <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
DROP TABLE IF EXISTS bench_docs, bench_docs_local, bench_pairs;
CREATE TABLE bench_pairs (id_a bigint, id_b bigint, distance integer);
CREATE TABLE bench_docs (id bigint PRIMARY KEY, fp bigint);
SELECT create_distributed_table('bench_docs', 'id');
INSERT INTO bench_docs SELECT g, hashint8extended(g, 7) FROM generate_series(1, $rows) g;
INSERT INTO bench_docs SELECT $rows + g, hashint8extended(g, 7) # (1::bigint << (g % 64)) FROM generate_series(1, $rows / 100) g;
CREATE TABLE bench_docs_local AS SELECT * FROM bench_docs;
VACUUM ANALYZE bench_docs_local;
SQL
    for method in $methods; do
        case "$method" in
            distributed) query="SELECT count(*) FROM simhash_pairs_distributed('bench_docs', 'id', 'fp', $radius, $max_tables)" ;;
            distributed_into) query="CALL simhash_pairs_distributed_into('bench_docs', 'id', 'fp', 'bench_pairs', $radius, $max_tables)" ;;
            *) query="SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM bench_docs_local', $radius, memory_limit => '$single_node_memory')" ;;
        esac
        "${psql[@]}" -c "TRUNCATE bench_pairs"
        before=$(lo_bytes)
        start=$(date +%s.%N)
        pairs=$("${psql[@]}" -c "SET client_min_messages = warning" -c "$query")
        [ "$method" = distributed_into ] && pairs=$("${psql[@]}" -c "SELECT count(*) FROM bench_pairs")
        end=$(date +%s.%N)
        after=$(lo_bytes)
        printf '%-10s %-26s %10.2f %10s %16s\n' "$rows" "$method" "$(echo "$end - $start" | bc)" "$pairs" "$((after - before))"
    done
done
"${psql[@]}" -c "DROP TABLE IF EXISTS bench_docs, bench_docs_local, bench_pairs"
