#!/usr/bin/env bash
# Fills bench_text_fingerprints (see bench_data.sql) with the text data set's rows 1..ROWS in JOBS
# parallel sessions (default: the number of cores), in chunks of CHUNK rows (default 1M), each its own
# transaction. The text fingerprints cost ~4 us a row in one session (pg_temp.bench_text_fill):
# 300M rows take about ten minutes on two cores. radius_bench.sh, topk_bench.sh and
# scale_bench.sh with DATA=text then read them.
#
# Usage: bench/text_fingerprints.sh ROWS [JOBS]   (PGHOST, PGPORT, PGUSER, PGDATABASE; superuser,
# to read the machine's licence texts)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rows=$1
jobs=${2:-$(nproc)}
chunk=${CHUNK:-1000000}
psql_run() { PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning" "${PSQL:-psql}" -X -q -v ON_ERROR_STOP=1 "$@"; }
psql_run -v data=text -v rows=0 -f "$here/bench_data.sql"
have=$(psql_run -At -c "SELECT coalesce(max(g), 0) FROM bench_text_fingerprints")
for ((job = 0; job < jobs; job++)); do
    {
        echo "SET client_min_messages = warning;"
        echo "\\set data text"
        echo "\\set rows 0"
        echo "\\ir $here/bench_data.sql"
        for ((start = have + 1 + job * chunk; start <= rows; start += jobs * chunk)); do
            end=$((start + chunk - 1 < rows ? start + chunk - 1 : rows))
            echo "CALL pg_temp.bench_text_fill($start, $end);"
        done
    } | psql_run -f - &
done
wait
psql_run -At -c "SELECT format('bench_text_fingerprints: %s rows, 1..%s', count(*), max(g)) FROM bench_text_fingerprints"
