#!/usr/bin/env bash
# The size sweep: for each ROWS (default 3000000 30000000 300000000) and each data set (DATA,
# default "uniform skewed text"; bench_data.sql), a fresh table and simhash index and, in one run
# per size (bench/scale_bench.sql): build time, index bytes a row, the largest run's tables and
# directory bits, the median of QUERIES (default 40) queries at every radius 0..MAX_RADIUS
# (default 12) and of top-10 queries, the shared-buffer hit rate of their page reads, the cost
# simhash_dedup(fp, 3, 'skip') adds to a row (DEDUP_ROWS, default 20000, loaded with it and as many
# without, in DEDUP_ROUNDS rounds, default 5, the best of each; transactions of BATCH_ROWS, default
# 1000) and the rate and WAL bytes a row of INSERT_ROWS (default 1000000) new rows in
# transactions of BATCH_ROWS, and loops of LOOP_QUERIES (default 40000) k = 3 queries (a
# tenth as many at k = 7, a hundredth at k = 10) in the best of LOOP_ROUNDS (default 3) rounds,
# steadier than the medians on a machine whose speed wanders. Then one table of every metric by
# size, per data set, from the table scale_bench_results (which keeps the sizes already measured:
# run sizes one at a time and the table grows), also written to RESULTS_DIR/scale_bench.csv
# (default bench/results/).
# TABLES (default auto) is the index's tables option.
#
# 300M rows take ~13 GB of heap and ~10 GB of index; the text data set computes its fingerprints
# once (bench/text_fingerprints.sh fills them with parallel sessions, ~4 us a row; the dedup check
# and the ingest read the documents after the table's: fill ROWS + 1040000 of them). The session
# runs with maintenance_work_mem = MAINTENANCE_WORK_MEM (default 6GB: a 300M-row build sorts in
# place in memory, 16 bytes a row, 4.8 GB, and more does not help it; with 12GB beside 12GB of
# shared buffers, the sweep's B-tree build on the 300M-row ingest table, a leader and a parallel
# worker sorting 5.6 GB each, ran a 24 GiB machine out of memory).
#
# Usage: bench/scale_bench.sh [ROWS ...]   (PGHOST, PGPORT, PGUSER, PGDATABASE; the database needs
# CREATE EXTENSION simhash, and pg_prewarm to prewarm the index). Numbers, not a test.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/results.sh"
psql=(${PSQL:-psql} -X -q -v ON_ERROR_STOP=1)
export PGOPTIONS="${PGOPTIONS:-} -c maintenance_work_mem=${MAINTENANCE_WORK_MEM:-6GB}"
[ $# -gt 0 ] || set -- 3000000 30000000 300000000
for rows in "$@"; do
    for data in ${DATA:-uniform skewed text}; do
        echo "== $data, $rows rows"
        "${psql[@]}" -v rows="$rows" -v data="$data" -v queries="${QUERIES:-40}" -v max_radius="${MAX_RADIUS:-12}" \
            -v tables="${TABLES:-auto}" -v dedup_rows="${DEDUP_ROWS:-20000}" -v batch_rows="${BATCH_ROWS:-1000}" \
            -v insert_rows="${INSERT_ROWS:-1000000}" -v loop_queries="${LOOP_QUERIES:-40000}" \
            -v loop_rounds="${LOOP_ROUNDS:-3}" -v dedup_rounds="${DEDUP_ROUNDS:-5}" -f "$here/scale_bench.sql"
    done
done
# Every metric by size (columns), one table per data set.
for data in ${DATA:-uniform skewed text}; do
    "${psql[@]}" -v data="$data" <<'SQL'
SELECT format('SELECT metric AS %I, %s FROM scale_bench_results WHERE data = %L GROUP BY metric
                ORDER BY regexp_replace(metric, ''\d+$'', ''''), substring(metric FROM ''\d+$'')::int NULLS FIRST',
              :'data', string_agg(format('max(value) FILTER (WHERE rows = %s) AS %I', rows, rows::text || ' rows'), ', ' ORDER BY rows),
              :'data')
FROM (SELECT DISTINCT rows FROM scale_bench_results WHERE data = :'data') r
HAVING count(*) > 0 \gexec
SQL
done
"${psql[@]}" -c "COPY (SELECT rows, data, metric, value, measured, current_setting('shared_buffers') AS shared_buffers, '$machine' AS machine
                       FROM scale_bench_results ORDER BY data, rows, metric) TO STDOUT WITH (FORMAT csv, HEADER)" >"$results_dir/scale_bench.csv"
echo "written: $results_dir/scale_bench.csv"
