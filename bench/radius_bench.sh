#!/usr/bin/env bash
# Every radius, uniform and skewed fingerprints: for each ROWS (default 1000000) and each data set
# (DATA, default "uniform skewed"; skewed = the 12 low bits constant; text = SimHash fingerprints
# of documents made of lines of real text, see bench_data.sql), the median execution time
# (EXPLAIN ANALYZE) of a k-radius count as the planner runs it and as a sequential scan,
# k = 0..MAX_RADIUS (default 24), with the planner's choice and the ratio, after one untimed pass
# of 200 k = 7 queries. QUERIES (default 20) per radius, SEQ_QUERIES (default 3) for the
# sequential scan. Numbers, not a test. BTREES=1 times the same queries through the four B-tree
# expression indexes of the pigeonhole baseline as well (BTREE_QUERIES per radius, default
# QUERIES), in a table of their own after the others. Each run also writes its medians to
# RESULTS_DIR/radius_bench_DATA_ROWS.csv (default bench/results/), which bench/plot.sh draws.
#
# Usage: bench/radius_bench.sh [ROWS ...]   (PGHOST, PGPORT, PGUSER, PGDATABASE; the database needs
# CREATE EXTENSION simhash, and pg_prewarm if the tables should be prewarmed)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/each_size.sh" radius_bench.sql -v max_radius="${MAX_RADIUS:-24}" -v btrees="${BTREES:-0}" \
    -v btree_queries="${BTREE_QUERIES:-${QUERIES:-20}}" -- "$@"
