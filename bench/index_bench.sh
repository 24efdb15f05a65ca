#!/usr/bin/env bash
# Usage: bench/index_bench.sh [ROWS ...]   (default: 1000000)
# Connection through the usual libpq variables (PGHOST, PGPORT, PGUSER, PGDATABASE); PSQL selects
# the psql binary. The database needs `CREATE EXTENSION simhash`. Prints one table per row count.
# Env: QUERIES (per radius, default 200), SEQ_QUERIES (seq scan queries per radius, default 20),
# INSERT_ROWS (insert throughput, default 400000). Size shared_buffers to hold table and indexes
# (the script prewarms them with pg_prewarm when available).
# FULL=1 adds, for each row count, the every-radius sweep (0..24, uniform and skewed:
# bench/radius_bench.sh) and exact top-10 (planted and random queries: bench/topk_bench.sh),
# each against a sequential scan, so one run gives every table of the README's Performance section.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
psql=${PSQL:-psql}
for rows in "${@:-1000000}"; do
    "$psql" -X -q -v rows="$rows" -v queries="${QUERIES:-200}" -v seq_queries="${SEQ_QUERIES:-20}" -v insert_rows="${INSERT_ROWS:-400000}" \
        -f "$here/index_bench.sql" | grep -v '^ *run *$\|^ *count *$\|^-------\|^ *[0-9]* *$\|^(1 row)\|^ *run *| *run\|^ *|\|^-*+-*$\|^(. rows)$' || true
    if [ "${FULL:-0}" = 1 ]; then
        PSQL="$psql" bash "$here/radius_bench.sh" "$rows"
        PSQL="$psql" bash "$here/topk_bench.sh" "$rows"
    fi
done
