#!/usr/bin/env bash
# What a query costs a new session and a warm one, on existing tables with a simhash index on a
# bigint column fp: for each TABLE, ROUNDS (default 2) times,
#   - first query: the time of a session's first `count(*) WHERE hamming(fp, q) <= 3` (the
#     library loaded, the run cache and the buffer hints set up);
#   - cold / again: microseconds a query of a new session's first N (default 20000) k = 3
#     queries around random points, then of the same N again (their pages hinted by then);
#   - k = 3, k = 7, k = 10: microseconds a query of loops of N, N / 10 and N / 100 further
#     queries in that session;
#   - loop alone: the same loop with a condition that reads no row (PL/pgSQL and executor).
# The loops are static SQL in PL/pgSQL (one plan, reused). Run on a quiet machine with the
# indexes in shared buffers (pg_prewarm): numbers, not a test.
#
# Usage: bench/session_bench.sh TABLE ...   (PGHOST, PGPORT, PGUSER, PGDATABASE)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
psql=(${PSQL:-psql} -X -q -At -v ON_ERROR_STOP=1)
n=${N:-20000}
rounds=${ROUNDS:-2}
[ $# -gt 0 ] || { echo "usage: $0 TABLE ..." >&2; exit 2; }

# Milliseconds of each statement given, in one new session, one line.
timed() {
    local tbl=$1
    shift
    { printf '%s\n' "\\i '$here/query_loop.sql'" '\timing on' "$@"; } |
        "${psql[@]}" -v loop_table="$tbl" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | paste -sd' '
}

printf '%-16s %5s %13s %9s %9s %9s %9s %9s %10s\n' table round "first query" cold again "k = 3" "k = 7" "k = 10" "loop alone"
for tbl in "$@"; do
    for round in $(seq "$rounds"); do
        first=$(timed "$tbl" "SELECT count(*) FROM $tbl WHERE hamming(fp, hashint8extended($round, 7)) <= 3;")
        read -r cold again k3 k7 k10 none < <(timed "$tbl" \
            "SELECT pg_temp.bench_loop($n, 3, false);" "SELECT pg_temp.bench_loop($n, 3, false);" \
            "SELECT pg_temp.bench_loop($((n * 2)), 3, false);" "SELECT pg_temp.bench_loop($((n / 10)), 7, false);" \
            "SELECT pg_temp.bench_loop($((n / 100)), 10, false);" "SELECT pg_temp.bench_loop($n, 3, true);")
        # The k = 3 loop runs 2N queries, of which the first N are those measured before.
        awk -v t="$tbl" -v r="$round" -v f="$first" -v n="$n" -v c="$cold" -v a="$again" -v k3="$k3" -v k7="$k7" \
            -v k10="$k10" -v z="$none" 'BEGIN {
                printf "%-16s %5d %10.2f ms %6.1f us %6.1f us %6.1f us %6.1f us %6.0f us %7.1f us\n", t, r, f,
                       1000 * c / n, 1000 * a / n, 1000 * k3 / (2 * n), 1000 * k7 / (n / 10), 1000 * k10 / (n / 100), 1000 * z / n }'
    done
done
