#!/usr/bin/env bash
# Runs one benchmark script of bench/ for each row count and data set; radius_bench.sh and
# topk_bench.sh call it. The script gets psql variables rows, data, queries and seq_queries,
# resultsdir and machine (bench/results.sh: where a script that writes CSV files puts them, and
# what to say it ran on), and the extra psql options given before "--".
#
# Usage: bench/each_size.sh SQL_FILE [PSQL_OPTION ...] -- [ROWS ...]   (ROWS default 1000000;
# DATA, default "uniform skewed", or text (bench_data.sql); QUERIES, default 20; SEQ_QUERIES, default 3;
# RESULTS_DIR, default bench/results/; PSQL)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/results.sh"
sql=$1
shift
options=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    options+=("$1")
    shift
done
[ $# -gt 0 ] && shift
for rows in "${@:-1000000}"; do
    for data in ${DATA:-uniform skewed}; do
        "${PSQL:-psql}" -X -q -v ON_ERROR_STOP=1 -v rows="$rows" -v data="$data" -v queries="${QUERIES:-20}" \
            -v seq_queries="${SEQ_QUERIES:-3}" -v resultsdir="$results_dir" -v machine="$machine" \
            "${options[@]}" -f "$here/$sql"
    done
done
