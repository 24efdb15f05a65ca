#!/usr/bin/env bash
# Exact top-k nearest (ORDER BY fp <~> q LIMIT k, default 10): for each ROWS (default 1000000) and
# each data set (DATA, default "uniform skewed"), the median execution time of the ordered index
# scan the planner picks and of a sequential scan with a top-N sort, for planted and random
# queries (QUERIES, default 20; SEQ_QUERIES, default 3), and the ratio. Numbers, not a test.
#
# Usage: bench/topk_bench.sh [ROWS ...]   (PGHOST, PGPORT, PGUSER, PGDATABASE; the database needs
# CREATE EXTENSION simhash, and pg_prewarm if the tables should be prewarmed)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/each_size.sh" topk_bench.sql -v k="${K:-10}" -- "$@"
