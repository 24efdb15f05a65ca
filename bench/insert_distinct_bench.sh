#!/usr/bin/env bash
# Bulk near-dedup load against a plain load and the per-row trigger: for each library size BASE
# (default 10000000), STAGE_ROWS staged rows (default 1000000: 60% new, 30% near-duplicates of
# library rows, 10% near-duplicates of an earlier staged row, in that mix all along the load)
# loaded into a fresh copy of the library (BASE random fingerprints with a simhash index) three
# ways, each timed on its own copy (bench/insert_distinct.sql): a plain INSERT ... SELECT without
# any check, the simhash_dedup trigger at RADIUS, and simhash_insert_distinct at RADIUS with
# MEMORY_LIMIT (default 1GB: a million staged fingerprints in one chunk). Prints staged rows a
# second for each and the two dedup loads' rates as a share of the plain one. METHODS (default
# "plain trigger bulk") picks some.
#
# RADIUS defaults to 3 (as bench/dedup_documents.sh). DATA=fingerprints (the default): bare
# fingerprints, the near-duplicates 1-3 bits (library) and 2 bits (staged) away. DATA=skewed: the
# same with the 12 low bits of every fingerprint 0 (as bench/bench_data.sql's skewed set), the
# near-duplicates' bits flipped among the other 52. DATA=documents:
# documents of LINES (default 32) lines of the machine's licence texts (about 1.6 kB)
# fingerprinted with minhash64 in each load; the near-duplicates are documents with a word added,
# of 300,000 originals whose fingerprints the library holds besides its BASE random ones
# (superuser: reads the texts).
#
# LIBRARY=table loads into an existing table instead of a fresh copy for each method (a library
# of hundreds of millions of rows takes minutes to build): it must hold the bench's own library,
# id g and fp hashint8extended(g, 11) for g in 1..BASE (DATA=skewed: hashint8extended(g, 11) &
# ~4095), with a simhash index on fp. Each load then runs in a transaction that is rolled back, and
# VACUUM (INDEX_CLEANUP ON) takes the aborted rows' index entries out again before the next.
#
# Usage: bench/insert_distinct_bench.sh [BASE ...]   (PGHOST, PGPORT, PGUSER, PGDATABASE; the
# database needs CREATE EXTENSION simhash, and pg_prewarm to start from an index in shared
# buffers). Numbers, not a test: run it on a quiet machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
psql=(${PSQL:-psql} -X -q -v ON_ERROR_STOP=1)
data=${DATA:-fingerprints}
[[ $data == fingerprints || $data == skewed || $data == documents ]] ||
    { echo "DATA must be fingerprints, skewed or documents" >&2; exit 2; }
stage_rows=${STAGE_ROWS:-1000000}
radius=${RADIUS:-3}
memory_limit=${MEMORY_LIMIT:-1GB}
library=${LIBRARY:-}
[[ -z $library || $data != documents ]] || { echo "LIBRARY needs DATA=fingerprints or skewed" >&2; exit 2; }
[ $# -gt 0 ] || set -- 10000000
for base in "$@"; do
    if [[ $data == documents ]]; then
        # Staged row i: i % 10 in 0..5 a new document, 6..8 one of the originals with a word
        # added, 9 the new document of an earlier decade (up to 1,000 back) with a word added.
        "${psql[@]}" -v stage_rows="$stage_rows" -v lines="${LINES:-32}" <<SQL
SET client_min_messages = warning;
\set data text
\set rows 0
\ir $here/bench_data.sql
DROP TABLE IF EXISTS staging, staging_originals;
CREATE TABLE staging_originals AS
SELECT k, minhash64(pg_temp.bench_document(k, 29, :lines)) AS fp FROM generate_series(1, least(300000, :stage_rows)) k;
CREATE TABLE staging AS
SELECT i AS ord, 1000000000 + i AS id,
       CASE WHEN i % 10 < 6 THEN pg_temp.bench_document(i, 23, :lines)
            WHEN i % 10 < 9 THEN pg_temp.bench_document(1 + abs(hashint8extended(i, 13)) % least(300000, :stage_rows), 29, :lines) || ' revised'
            ELSE pg_temp.bench_document(greatest(0, i - 9 - 10 * (abs(hashint8extended(i, 17)) % 1000)), 23, :lines) || ' revised'
       END AS body
FROM generate_series(0, :stage_rows - 1) i;
VACUUM ANALYZE staging;
SQL
    else
        # Staged row i: i % 10 in 0..5 new, 6..8 a library row with 1-3 bits flipped, 9 the new
        # row of an earlier decade (up to 1,000 back, so often in an earlier chunk) with 2 bits
        # flipped. Skewed: every fingerprint's 12 low bits cleared (mask), bits flipped among the
        # 52 others (the lowest that varies: low).
        if [[ $data == skewed ]]; then mask=-4096 low=12; else mask=-1 low=0; fi
        "${psql[@]}" -v base="$base" -v stage_rows="$stage_rows" -v mask="$mask" -v low="$low" <<'SQL'
DROP TABLE IF EXISTS staging, staging_originals;
CREATE TABLE staging_originals (k bigint, fp bigint);
CREATE TABLE staging AS
SELECT i AS ord, :base + 1 + i AS id,
       CASE WHEN i % 10 < 6 THEN hashint8extended(i, 12) & :mask
            WHEN i % 10 < 9 THEN hashint8extended(1 + abs(hashint8extended(i, 13)) % :base, 11) & :mask
                                 # (1::bigint << (:low + abs(hashint8extended(i, 14)) % (64 - :low))::int)
                                 # CASE WHEN i % 10 >= 7 THEN 1::bigint << (:low + abs(hashint8extended(i, 15)) % (64 - :low))::int ELSE 0 END
                                 # CASE WHEN i % 10 = 8 THEN 1::bigint << (:low + abs(hashint8extended(i, 16)) % (64 - :low))::int ELSE 0 END
            ELSE hashint8extended(greatest(0, i - 9 - 10 * (abs(hashint8extended(i, 17)) % 1000)), 12) & :mask
                 # (3::bigint << (:low + abs(hashint8extended(i, 18)) % (63 - :low))::int)
       END AS fp
FROM generate_series(0, :stage_rows - 1) i;
VACUUM ANALYZE staging;
SQL
    fi
    echo "== $data: library of $base rows${library:+ (table $library)}, $stage_rows staged rows, radius $radius"
    declare -A rate=()
    for method in ${METHODS:-plain trigger bulk}; do
        line=$("${psql[@]}" -At -F ' ' -v base="$base" -v stage_rows="$stage_rows" -v radius="$radius" \
                   -v method="$method" -v memory_limit="$memory_limit" -v data="$data" -v library="$library" \
                   -f "$here/insert_distinct.sql")
        read -r _ seconds per_s inserted <<<"$line"
        rate[$method]=$per_s
        printf '%-8s %8s s %10s staged rows/s %9s inserted\n' "$method" "$seconds" "$per_s" "$inserted"
    done
    for method in trigger bulk; do
        [[ -n ${rate[plain]:-} && -n ${rate[$method]:-} ]] || continue
        awk -v m="$method" -v a="${rate[$method]}" -v p="${rate[plain]}" 'BEGIN { printf "%-8s %.0f%% of the plain load rate\n", m, 100 * a / p }'
    done
done
"${psql[@]}" -c "DROP TABLE IF EXISTS staging, staging_originals"
