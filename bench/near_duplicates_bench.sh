#!/usr/bin/env bash
# near_duplicates() over documents, against computing their minhash64 fingerprints alone: for each
# ROWS (default 1M), documents of 32 lines (1.6 kB) of the machine's licence and copyright texts,
# a tenth of them edited copies of the document before them. Prints one line per size: both times,
# their ratio, and the duplicates found. The documents stay in the unlogged table bench_nd_docs
# (about 1.7 GB a million) and are made again only for another size.
#
# Usage: bench/near_duplicates_bench.sh [ROWS ...]   (MEMORY_LIMIT, default 1GB; PGHOST, PGPORT,
# PGUSER, PGDATABASE; superuser, to read the machine's licence texts; the database needs CREATE
# EXTENSION simhash). Numbers, not a test: run it on a quiet machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for rows in "${@:-1000000}"; do
    "${PSQL:-psql}" -X -q -At -v ON_ERROR_STOP=1 -v rows="$rows" -v memory_limit="${MEMORY_LIMIT:-1GB}" \
        -f "$here/near_duplicates_bench.sql"
done
