#!/usr/bin/env bash
# All pairs within RADIUS bits (default 3) among N fingerprints (uniform random 64-bit values plus
# planted near-duplicates: every 10th row starts a cluster and the next row is 0-2 bits from it),
# through simhash_pairs, next to plain-SQL self-joins in the same run (and the self-join through the
# simhash index where its access method is installed). Prints a table; not a test.
# Needs a running server with the extension installed (PGHOST/PGPORT/PGUSER).
#   SIZES="1000000 10000000"  row counts for simhash_pairs
#   JOIN_N=20000              rows for the nested-loop self-join (it is O(N^2))
#   BLOCK_JOIN_MAX=1000000    largest N for the 4-block equality self-join (pigeonhole in SQL)
#   MEMORY_LIMIT=1GB          simhash_pairs memory_limit (48 bytes a row keep 10M rows in memory)
#   SPILL_LIMIT=64MB          memory_limit of a second, partitioned run (the default maintenance_work_mem)
set -euo pipefail
SIZES=${SIZES:-"1000000 10000000"}
RADIUS=${RADIUS:-3}
JOIN_N=${JOIN_N:-20000}
BLOCK_JOIN_MAX=${BLOCK_JOIN_MAX:-1000000}
MEMORY_LIMIT=${MEMORY_LIMIT:-1GB}
SPILL_LIMIT=${SPILL_LIMIT:-64MB}   # a second simhash_pairs run that must partition through temp files
PSQL="psql -X -q -t -A -v ON_ERROR_STOP=1"

$PSQL <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
SQL

# make_table NAME N: uniform fingerprints, and every row g with g % 10 = 1 a near copy of row g - 1.
make_table() {
    $PSQL <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS $1;
CREATE UNLOGGED TABLE $1 (id bigint, fp bigint);
INSERT INTO $1
SELECT g, CASE WHEN g % 10 = 1
               THEN hashint8extended(g - 1, 1) # ((g % 3 > 0)::int::bigint << (g % 61)) # ((g % 3 > 1)::int::bigint << (g % 59 + 2))
               ELSE hashint8extended(g, 1) END
FROM generate_series(1, $2) g;
VACUUM ANALYZE $1;
SQL
}

# seconds QUERY: wall time of one run (best of REPEAT, default 1).
seconds() {
    $PSQL <<SQL
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '256MB';
DO \$\$
DECLARE best float8 := 'Infinity'; t0 timestamptz; n bigint;
BEGIN
  FOR i IN 1..${REPEAT:-1} LOOP
    t0 := clock_timestamp();
    EXECUTE \$q\$$1\$q\$ INTO n;
    best := least(best, extract(epoch FROM clock_timestamp() - t0));
  END LOOP;
  RAISE INFO '% %', round(best::numeric, 2), n;
END \$\$;
SQL
}

printf '%-12s %-48s %10s %12s\n' rows method seconds pairs
row() { printf '%-12s %-48s %10s %12s\n' "$1" "$2" "$3" "$4"; }
run() {  # run ROWS LABEL QUERY
    local out
    out=$(seconds "$3" 2>&1 | sed -n 's/.*INFO:  //p')
    row "$1" "$2" "${out% *}" "${out#* }"
}

make_table bench_pairs_small "$JOIN_N"
run "$JOIN_N" "simhash_pairs (radius $RADIUS)" \
    "SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM bench_pairs_small', $RADIUS)"
run "$JOIN_N" "self-join ON a.id < b.id AND hamming <= $RADIUS" \
    "SELECT count(*) FROM bench_pairs_small a JOIN bench_pairs_small b ON a.id < b.id AND hamming(a.fp, b.fp) <= $RADIUS"

# The pigeonhole in plain SQL: 4 hash joins on equal 16-bit blocks, verified, deduplicated.
block_join() {
    local t=$1 parts="" b
    for b in 0 1 2 3; do
        [ -n "$parts" ] && parts="$parts UNION "
        parts="${parts}SELECT a.id AS x, c.id AS y FROM $t a JOIN $t c ON ((a.fp >> $((16 * b))) & 65535) = ((c.fp >> $((16 * b))) & 65535) AND a.id < c.id WHERE hamming(a.fp, c.fp) <= $RADIUS"
    done
    echo "SELECT count(*) FROM ($parts) s"
}

for n in $SIZES; do
    make_table bench_pairs "$n"
    run "$n" "simhash_pairs (radius $RADIUS)" \
        "SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM bench_pairs', $RADIUS, memory_limit => '$MEMORY_LIMIT')"
    run "$n" "simhash_pairs (radius 0: read, sort, no tables)" \
        "SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM bench_pairs', 0, memory_limit => '$MEMORY_LIMIT')"
    run "$n" "simhash_pairs (radius $RADIUS, memory_limit $SPILL_LIMIT)" \
        "SELECT count(*) FROM simhash_pairs('SELECT id, fp FROM bench_pairs', $RADIUS, memory_limit => '$SPILL_LIMIT')"
    if [ "$n" -le "$BLOCK_JOIN_MAX" ]; then
        run "$n" "4-block equality self-join (SQL pigeonhole)" "$(block_join bench_pairs)"
        # The self-join through the simhash index (one probe per row), where the index access
        # method is installed (built in another branch; not run where it is missing).
        if [ "$($PSQL -c "SELECT count(*) FROM pg_am WHERE amname = 'simhash'")" = 1 ]; then
            $PSQL -c "CREATE INDEX bench_pairs_fp ON bench_pairs USING simhash (fp)"
            run "$n" "self-join through the simhash index" \
                "SELECT count(*) FROM bench_pairs a JOIN bench_pairs b ON hamming(a.fp, b.fp) <= $RADIUS AND a.id < b.id"
        fi
    fi
done
$PSQL -c "DROP TABLE IF EXISTS bench_pairs, bench_pairs_small"
