#!/usr/bin/env bash
# Sustained ingest into an indexed table: for each base size, INSERT_ROWS new rows (default 1M) in
# transactions of BATCH_ROWS (default 5000) into a table of BASE uniform random fingerprints, once
# with a simhash index and once with the four B-tree expression indexes of the pigeonhole baseline.
# Reports rows/s, WAL bytes per inserted row (pg_current_wal_lsn before and after; whatever
# full_page_writes the server has, printed), index bytes per row after, and the median / p99 of a
# k = 3 query run by a second session while the ingest goes on. Then dedup on load: DEDUP_ROWS
# (default 100000) rows through simhash_dedup(fp, 3, 'skip') vs the same load without the trigger.
#
# Each base size's ingest rows also go to RESULTS_DIR/ingest_bench_BASE.csv (default
# bench/results/), which bench/plot.sh draws.
#
# Usage: bench/ingest_bench.sh [BASE_ROWS ...]   (default: 1000000 10000000)
# Connection through PGHOST, PGPORT, PGUSER, PGDATABASE; the database needs CREATE EXTENSION
# simhash. Numbers, not a test: run it on a quiet machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/results.sh"
psql=(${PSQL:-psql} -X -q -v ON_ERROR_STOP=1)
insert_rows=${INSERT_ROWS:-1000000}
batch_rows=${BATCH_ROWS:-5000}
dedup_rows=${DEDUP_ROWS:-100000}

"${psql[@]}" -At -c "SELECT 'full_page_writes = ' || current_setting('full_page_writes') || ', shared_buffers = ' || current_setting('shared_buffers') || ', max_wal_size = ' || current_setting('max_wal_size')"
settings=$("${psql[@]}" -At -F , -c "SELECT current_setting('full_page_writes'), current_setting('shared_buffers'), current_setting('max_wal_size')")
printf '%-10s %-9s %12s %10s %14s %12s %10s %10s\n' base index rows_per_s wal_B_row idx_B_row_after queries k3_median k3_p99
[ $# -gt 0 ] || set -- 1000000 10000000
for base in "$@"; do
    csv="$results_dir/ingest_bench_$base.csv"
    echo 'base_rows,index,inserted_rows,batch_rows,rows_per_s,wal_bytes_per_row,index_bytes_per_row_after,k3_queries,k3_median_ms,k3_p99_ms,full_page_writes,shared_buffers,max_wal_size,machine' >"$csv"
    for kind in simhash btree4; do
        "${psql[@]}" -v base="$base" -v kind="$kind" -f "$here/ingest_setup.sql"
        # The querying session: k = 3 around fingerprints of stored rows until the ingest is done.
        "${psql[@]}" -v base="$base" -f "$here/ingest_queries.sql" &
        queries_pid=$!
        result=$("${psql[@]}" -At -F ' ' -v base="$base" -v insert_rows="$insert_rows" -v batch_rows="$batch_rows" \
            -f "$here/ingest_load.sql")
        wait "$queries_pid"
        stats=$("${psql[@]}" -At -F ' ' -c "SELECT count(*), round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3),
            round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 3) FROM ingest_query_ms")
        read -r rows_per_s wal_per_row idx_per_row <<<"$result"
        read -r nq median p99 <<<"$stats"
        printf '%-10s %-9s %12s %10s %14s %12s %10s %10s\n' "$base" "$kind" "$rows_per_s" "$wal_per_row" "$idx_per_row" "$nq" "$median" "$p99"
        echo "$base,$kind,$insert_rows,$batch_rows,$rows_per_s,$wal_per_row,$idx_per_row,$nq,$median,$p99,$settings,\"$machine\"" >>"$csv"
    done
    # Dedup on load against the same base, with the simhash index.
    "${psql[@]}" -v base="$base" -v kind=simhash -f "$here/ingest_setup.sql"
    "${psql[@]}" -At -F ' ' -v base="$base" -v dedup_rows="$dedup_rows" -v batch_rows="$batch_rows" -f "$here/ingest_dedup.sql"
done
"${psql[@]}" -c "DROP TABLE IF EXISTS ingest_docs, ingest_query_ms, ingest_done"
