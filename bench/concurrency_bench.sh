#!/usr/bin/env bash
# Inserts while long scans run: 4 pgbench clients insert one row per transaction into a table of
# BASE_ROWS (default 1M) uniform random fingerprints with a simhash index, for SECONDS (default
# 20) with no other load, then again while a fifth session runs large-radius index scans
# (hamming(fp, q) <= SCAN_RADIUS, default 20, index forced) back to back, and once more while that
# session runs the same query as sequential scans (the control: it competes for CPU only). Prints
# inserts/s and the insert latency median / p99 / max of each phase, and how many scans ran and
# their median time. Scans that blocked inserts would show in the index phase's p99 and max
# beyond the control's.
#
# Usage: bench/concurrency_bench.sh   (PGHOST, PGPORT, PGUSER, PGDATABASE; the database needs
# CREATE EXTENSION simhash; pgbench from the server's bin directory or PGBENCH)
set -euo pipefail
psql=(${PSQL:-psql} -X -q -v ON_ERROR_STOP=1)
pgbench=${PGBENCH:-$(dirname "$(command -v "${PSQL:-psql}")")/pgbench}
[ -x "$pgbench" ] || pgbench=$(ls /usr/lib/postgresql/*/bin/pgbench | tail -1)
base=${BASE_ROWS:-1000000}
seconds=${SECONDS_PER_PHASE:-20}
radius=${SCAN_RADIUS:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"${psql[@]}" <<SQL
DROP TABLE IF EXISTS conc_docs, conc_scan_ms;
CREATE TABLE conc_docs (id bigserial, fp bigint);
INSERT INTO conc_docs (fp) SELECT hashint8extended(g, 7) FROM generate_series(1, $base) g;
CREATE INDEX conc_docs_fp ON conc_docs USING simhash (fp);
VACUUM ANALYZE conc_docs;
CREATE TABLE conc_scan_ms (ms float8);
SQL
cat > "$work/insert.sql" <<'SQL'
\set r random(1, 1000000000)
INSERT INTO conc_docs (fp) VALUES (hashint8extended(:r, 9));
SQL

phase() {  # $1 = label; prints one line
    local label=$1
    rm -f "$work"/log*
    (cd "$work" && "$pgbench" -n -f insert.sql -c 4 -j 2 -T "$seconds" --log --log-prefix=log >"$work/out" 2>&1)
    local tps
    tps=$(awk '/^tps = / {printf "%.0f", $3}' "$work/out")
    # pgbench log: client_id transaction_no time(us) script_no time_epoch time_us
    cat "$work"/log* | awk '{print $3 / 1000.0}' | sort -n >"$work/lat"
    local n p50 p99 max
    n=$(wc -l <"$work/lat")
    p50=$(awk -v n="$n" 'NR == int(n * 0.50) + 1 {print; exit}' "$work/lat")
    p99=$(awk -v n="$n" 'NR == int(n * 0.99) + 1 {print; exit}' "$work/lat")
    max=$(tail -1 "$work/lat")
    printf '%-24s %10s %10.3f %10.3f %10.1f' "$label" "$tps" "$p50" "$p99" "$max"
}

printf '%-24s %10s %10s %10s %10s %8s %12s\n' phase inserts_s p50_ms p99_ms max_ms scans scan_median_ms
phase "inserts alone"
printf '\n'
# The scanning session: radius-$radius scans back to back until the phase ends, through the index
# or, as the control that only competes for CPU, through sequential scans.
scan_phase() {  # $1 = label, $2 = planner settings
    "${psql[@]}" -c "TRUNCATE conc_scan_ms"
    "${psql[@]}" >/dev/null 2>&1 <<SQL &
$2
DO \$\$
DECLARE t0 timestamptz; n bigint; i int := 0; t_end timestamptz := clock_timestamp() + interval '$((seconds + 3)) seconds';
BEGIN
    LOOP
        i := i + 1;
        t0 := clock_timestamp();
        SELECT count(*) INTO n FROM conc_docs WHERE hamming(fp, hashint8extended(i, 11)) <= $radius;
        INSERT INTO conc_scan_ms VALUES (extract(epoch FROM clock_timestamp() - t0) * 1000);
        COMMIT;
        EXIT WHEN clock_timestamp() > t_end;
    END LOOP;
END \$\$;
SQL
    local scanner=$!
    sleep 2
    phase "$1"
    wait "$scanner" || true
    "${psql[@]}" -At -F ' ' -c "SELECT count(*), round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1) FROM conc_scan_ms" |
        awk '{printf " %8s %12s\n", $1, $2}'
}
scan_phase "+ k=$radius index scans" "SET enable_seqscan = off; SET enable_bitmapscan = off;"
scan_phase "+ k=$radius seq scans" "SET enable_indexscan = off; SET enable_bitmapscan = off; SET max_parallel_workers_per_gather = 0;"
"${psql[@]}" -c "DROP TABLE conc_docs, conc_scan_ms"
