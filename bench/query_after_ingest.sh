#!/usr/bin/env bash
# Whether queries pay for recent inserts: the k = RADIUS (default 3) median right after a build of
# BASE uniform random fingerprints (default 10000000), then after INSERT_ROWS more (default 1000000,
# in transactions of 5,000, as bench/ingest_bench.sh loads them) with the insert buffer (pending
# list) filled to within a few entries of its limit. ROUNDS (default 10) rounds of QUERIES (default
# 1000) queries each in one session; the index is prewarmed first (pg_prewarm). Prints the runs and
# the per-round medians of both states. Numbers, not a test.
#
# Usage: bench/query_after_ingest.sh   (PGHOST, PGPORT, PGUSER, PGDATABASE; the database needs
# CREATE EXTENSION simhash and CREATE EXTENSION pg_prewarm)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
psql=(${PSQL:-psql} -X -q -v ON_ERROR_STOP=1)
base=${BASE:-10000000}
insert_rows=${INSERT_ROWS:-1000000}
measure=(-v radius="${RADIUS:-3}" -v rounds="${ROUNDS:-10}" -v queries="${QUERIES:-1000}" -f "$here/ingest_query_median.sql")

# Prints the index's runs and pending entries under a label, prewarms it, and measures.
describe_and_measure() {
    "${psql[@]}" -At -c "SELECT '$1: ' || runs || ' run(s) (' ||
                                (SELECT string_agg(entries::text, ' + ' ORDER BY run) FROM simhash_index_runs('ingest_sh')) ||
                                '), ' || pending_entries || ' pending entries; prewarmed ' || pg_prewarm('ingest_sh') || ' pages'
                         FROM simhash_index_info('ingest_sh')"
    "${psql[@]}" -At -F ': ' -v label="$1" "${measure[@]}"
}

"${psql[@]}" -v base="$base" -v kind=simhash -f "$here/ingest_setup.sql"
describe_and_measure "fresh build"
"${psql[@]}" -v base="$base" -v insert_rows="$insert_rows" -v batch_rows=5000 -f "$here/ingest_load.sql" >/dev/null
# Fill the pending list up to 100 entries below its limit: the default pending_limit (256 kB) is
# 32 pages of 582 entries.
"${psql[@]}" -At -c "INSERT INTO ingest_docs SELECT g, hashint8extended(g, 11)
    FROM generate_series($base + $insert_rows + 1, $base + $insert_rows +
         (SELECT greatest(0, 32 * 582 - 100 - pending_entries) FROM simhash_index_info('ingest_sh'))) g"
describe_and_measure "after ingest"
"${psql[@]}" -c "DROP TABLE IF EXISTS ingest_docs, ingest_query_ms, ingest_done"
