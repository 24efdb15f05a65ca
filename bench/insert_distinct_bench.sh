#!/usr/bin/env bash
# Bulk near-dedup load against a plain load and the per-row trigger: for each library size BASE
# (default 10000000), STAGE_ROWS staged rows (default 1000000: 60% new random fingerprints, 30%
# within 1-3 bits of a library row, 10% within 2 bits of an earlier staged row, in that mix all
# along the load) loaded into a fresh copy of the library (BASE random fingerprints with a simhash
# index) three ways, each timed on its own copy (bench/insert_distinct.sql): a plain INSERT ...
# SELECT without any check, the simhash_dedup trigger at RADIUS (default 3), and
# simhash_insert_distinct at RADIUS. Prints staged rows a second for each and the two dedup
# loads' rates as a share of the plain one. METHODS (default "plain trigger bulk") picks some.
#
# Usage: bench/insert_distinct_bench.sh [BASE ...]   (PGHOST, PGPORT, PGUSER, PGDATABASE; the
# database needs CREATE EXTENSION simhash, and pg_prewarm to start from an index in shared
# buffers). Numbers, not a test: run it on a quiet machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
psql=(${PSQL:-psql} -X -q -v ON_ERROR_STOP=1)
stage_rows=${STAGE_ROWS:-1000000}
radius=${RADIUS:-3}
[ $# -gt 0 ] || set -- 10000000
for base in "$@"; do
    # Staged row i (ord i): i % 10 in 0..5 new, 6..8 a library row with 1-3 bits flipped, 9 the new
    # row of an earlier decade (up to 1,000 decades back, so often in an earlier chunk) with 2 bits
    # flipped.
    "${psql[@]}" -v base="$base" -v stage_rows="$stage_rows" <<'SQL'
DROP TABLE IF EXISTS staging;
CREATE TABLE staging AS
SELECT i AS ord, :base + 1 + i AS id,
       CASE WHEN i % 10 < 6 THEN hashint8extended(i, 12)
            WHEN i % 10 < 9 THEN hashint8extended(1 + abs(hashint8extended(i, 13)) % :base, 11)
                                 # (1::bigint << (abs(hashint8extended(i, 14)) % 64)::int)
                                 # CASE WHEN i % 10 >= 7 THEN 1::bigint << (abs(hashint8extended(i, 15)) % 64)::int ELSE 0 END
                                 # CASE WHEN i % 10 = 8 THEN 1::bigint << (abs(hashint8extended(i, 16)) % 64)::int ELSE 0 END
            ELSE hashint8extended(greatest(0, i - 9 - 10 * (abs(hashint8extended(i, 17)) % 1000)), 12)
                 # (3::bigint << (abs(hashint8extended(i, 18)) % 63)::int)
       END AS fp
FROM generate_series(0, :stage_rows - 1) i;
VACUUM ANALYZE staging;
SQL
    echo "== library of $base rows, $stage_rows staged rows, radius $radius"
    declare -A rate=()
    for method in ${METHODS:-plain trigger bulk}; do
        line=$("${psql[@]}" -At -F ' ' -v base="$base" -v stage_rows="$stage_rows" -v radius="$radius" \
                   -v method="$method" -f "$here/insert_distinct.sql")
        read -r _ seconds per_s inserted <<<"$line"
        rate[$method]=$per_s
        printf '%-8s %8s s %10s staged rows/s %9s inserted\n' "$method" "$seconds" "$per_s" "$inserted"
    done
    for method in trigger bulk; do
        [[ -n ${rate[plain]:-} && -n ${rate[$method]:-} ]] || continue
        awk -v m="$method" -v a="${rate[$method]}" -v p="${rate[plain]}" 'BEGIN { printf "%-8s %.0f%% of the plain load rate\n", m, 100 * a / p }'
    done
done
"${psql[@]}" -c "DROP TABLE IF EXISTS staging"
