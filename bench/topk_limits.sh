#!/usr/bin/env bash
# Nearest-neighbour scans by LIMIT on existing tables: for each TABLE:ROWS, the median time of
# `ORDER BY fp <~> q LIMIT n` for n = 1, 10, 100 (bench/topk_limits.sql; QUERIES, default 100;
# ROUNDS, default 3). The tables hold hashint8extended(id, 11) for id 1 .. ROWS, e.g.
#   CREATE TABLE lib10 AS SELECT g AS id, hashint8extended(g, 11) AS fp FROM generate_series(1, 10000000) g;
#   CREATE INDEX ON lib10 USING simhash (fp);
# Numbers, not a test.
#
# Usage: bench/topk_limits.sh TABLE:ROWS ...   (PGHOST, PGPORT, PGUSER, PGDATABASE)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for spec in "$@"; do
    "${PSQL:-psql}" -X -q -v ON_ERROR_STOP=1 -v data=uniform -v tbl="${spec%%:*}" -v rows="${spec##*:}" \
        -v queries="${QUERIES:-100}" -v rounds="${ROUNDS:-3}" -f "$here/topk_limits.sql"
done
