#!/usr/bin/env bash
# The Citus suite: starts a coordinator and two workers on this machine (throwaway clusters of the
# cluster user, like scripts/test.sh's), registers the workers, and runs the pg_regress tests of
# test/citus/sql against the coordinator, then four concurrent loaders. Skipped, saying so, when
# Citus is not installed (it is not a Debian package). Leaves nothing
# running. Called by scripts/test.sh after the extension is installed.
# The development machine builds Citus 13.0.5 with ../shared/tools/install-citus.sh.
source "$(dirname "$0")/../../scripts/common.sh"

if [ ! -f "$("$PG_BIN/pg_config" --pkglibdir)/citus.so" ]; then
    echo "==> Citus tests SKIPPED: Citus is not installed for PostgreSQL $PG_MAJOR (it is not a Debian package:"
    echo "    build Citus 13 from its source release, see README.md, then run this command again to include them)"
    exit 0
fi
echo "==> Citus tests (coordinator + 2 workers)"
CITUS_DIR=$(mktemp -d /tmp/simhash-citus.XXXXXX)
chown "$CLUSTER_USER" "$CITUS_DIR"
NODES=(coordinator worker1 worker2)
PORTS=()
stop_citus() {
    for node in "${NODES[@]}"; do
        [ -d "$CITUS_DIR/$node" ] && as_cluster_user "$PG_BIN/pg_ctl" -D "$CITUS_DIR/$node" -m fast -w stop >/dev/null 2>&1
    done
    rm -rf "$CITUS_DIR"
}
trap stop_citus EXIT
port=${SIMHASH_CITUS_PORT:-57432}
for node in "${NODES[@]}"; do
    while (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null || [ -e /tmp/.s.PGSQL.$port ]; do port=$((port + 1)); done
    PORTS+=("$port")
    as_cluster_user "$PG_BIN/initdb" -D "$CITUS_DIR/$node" -U "$CLUSTER_USER" -E UTF8 --locale=C.UTF-8 -A trust >/dev/null
    as_cluster_user "$PG_BIN/pg_ctl" -D "$CITUS_DIR/$node" -l "$CITUS_DIR/$node.log" -w \
        -o "-p $port -k $CITUS_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c shared_preload_libraries=citus -c wal_level=logical -c max_wal_senders=10 -c max_replication_slots=10" \
        start >/dev/null
    port=$((port + 1))
done
psql_on() { local p=$1; shift; as_cluster_user psql -X -q -v ON_ERROR_STOP=1 -h "$CITUS_DIR" -p "$p" "$@"; }
for p in "${PORTS[@]}"; do
    psql_on "$p" -d postgres -c "CREATE DATABASE simhash_citus"
    psql_on "$p" -d simhash_citus -c "CREATE EXTENSION citus"
done
psql_on "${PORTS[0]}" -d simhash_citus -At \
    -c "SELECT citus_set_coordinator_host('127.0.0.1', ${PORTS[0]})" \
    -c "SELECT citus_add_node('127.0.0.1', ${PORTS[1]})" \
    -c "SELECT citus_add_node('127.0.0.1', ${PORTS[2]})" >/dev/null

REGRESS_OUT="$CITUS_DIR/results"
mkdir -p "$REGRESS_OUT" && chown "$CLUSTER_USER" "$REGRESS_OUT"
PG_REGRESS="$(dirname "$("$PG_BIN/pg_config" --pgxs)")/../test/regress/pg_regress"
tests=$(cd "$REPO_ROOT/test/citus/sql" && ls *.sql | sed 's/\.sql$//')
status=0
as_cluster_user "$PG_REGRESS" --use-existing --dbname=simhash_citus --host="$CITUS_DIR" --port="${PORTS[0]}" \
    --inputdir="$REPO_ROOT/test/citus" --outputdir="$REGRESS_OUT" $tests || status=$?
# Results and diffs where pg_regress would leave them in a PGXS tree (test/citus/results).
rm -rf "$REPO_ROOT/test/citus/results" "$REPO_ROOT/test/citus/regression.diffs"
cp -r "$REGRESS_OUT/results" "$REPO_ROOT/test/citus/" 2>/dev/null || true
cp "$REGRESS_OUT/regression.diffs" "$REPO_ROOT/test/citus/" 2>/dev/null || true
if [ "$status" -ne 0 ]; then
    head -n 200 "$REPO_ROOT/test/citus/regression.diffs" 2>/dev/null || true
    exit 1
fi

echo "==> Citus: four concurrent loaders through the coordinator (test/citus/concurrent_load.sql)"
psql_on "${PORTS[0]}" -d simhash_citus -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS simhash" -f "$REPO_ROOT/test/citus/concurrent_load.sql" >/dev/null
# load_round PER_TRANSACTION: four loaders at once, then the table must hold one row a family.
load_round() {
    local loaders=()
    for client in 1 2 3 4; do
        psql_on "${PORTS[0]}" -d simhash_citus -c "CALL load_families($client, 100, $1)" &
        loaders+=($!)
    done
    for pid in "${loaders[@]}"; do wait "$pid"; done
    local result
    result=$(psql_on "${PORTS[0]}" -d simhash_citus -At -c "SELECT (SELECT count(*) FROM loads) || ' rows, ' || (SELECT count(*) FROM simhash_pairs_distributed('loads', 'id', 'fp', 3)) || ' near pairs'")
    echo "    $1 row(s) a transaction: $result (expected: 100 rows, 0 near pairs)"
    [ "$result" = "100 rows, 0 near pairs" ] || { echo "concurrent loaders inserted near-duplicates" >&2; exit 1; }
}
load_round 1
# Ten rows a transaction: a transaction that inserts rows on both workers commits in two phases. The
# coordinator records every prepared transaction in pg_dist_transaction (kept here: recovery off).
psql_on "${PORTS[0]}" -d simhash_citus -c "TRUNCATE loads" \
    -c "ALTER SYSTEM SET citus.recover_2pc_interval = -1" -c "SELECT pg_reload_conf()" >/dev/null
prepared() { psql_on "${PORTS[0]}" -d simhash_citus -At -c "SELECT count(*) FROM pg_dist_transaction"; }
before=$(prepared)
load_round 10
after=$(prepared)
# (Two records for a transaction that wrote on both workers; one that only skipped rows has none.)
echo "    transactions prepared on workers: $((after - before)) (expected: some; none would mean no two-phase commit was tested)"
[ $((after - before)) -ge 2 ] || { echo "the batched loads did not commit in two phases" >&2; exit 1; }

echo "==> Citus: simhash_insert_distinct refuses a distributed table on the coordinator, saying why"
refusal=$(psql_on "${PORTS[0]}" -d simhash_citus -At \
    -c "SELECT * FROM simhash_insert_distinct('loads', 'SELECT 1::bigint AS fp', 3)" 2>&1 || true)
echo "    $refusal" | grep ERROR | head -1
expected='ERROR:  simhash_insert_distinct: "loads" is a Citus table'
[ "$(echo "$refusal" | grep ERROR | head -1)" = "$expected" ] || { echo "expected: $expected" >&2; exit 1; }

echo "==> Citus: a worker refuses the neighbourhood locks of a distributed table, not of its own tables"
# With a hostile search_path whose <> and = say "no" (an unqualified query would let the lock through).
psql_on "${PORTS[1]}" -d simhash_citus -c "SET citus.enable_ddl_propagation = off" -c "CREATE SCHEMA hostile" \
    -c "CREATE FUNCTION hostile.no(integer, integer) RETURNS boolean LANGUAGE sql AS 'SELECT false'" \
    -c "CREATE FUNCTION hostile.no(regclass, regclass) RETURNS boolean LANGUAGE sql AS 'SELECT false'" \
    -c "CREATE OPERATOR hostile.<> (LEFTARG = integer, RIGHTARG = integer, FUNCTION = hostile.no)" \
    -c "CREATE OPERATOR hostile.= (LEFTARG = regclass, RIGHTARG = regclass, FUNCTION = hostile.no)" >/dev/null
refusal=$(psql_on "${PORTS[1]}" -d simhash_citus -At -c "SET search_path = hostile, pg_catalog, public" \
    -c "SELECT simhash_lock_neighbourhoods(ARRAY[0], 3, 'public.loads')" 2>&1 || true)
echo "    $refusal" | head -1
expected="ERROR:  simhash_lock_neighbourhoods: the neighbourhood locks of distributed table loads are taken on the Citus coordinator"
[ "$(echo "$refusal" | head -1)" = "$expected" ] || { echo "expected: $expected" >&2; exit 1; }
local_lock=$(psql_on "${PORTS[1]}" -d simhash_citus -At -c "CREATE TABLE worker_local (fp bigint)" \
    -c "SELECT 'locked ' || count(*) FROM (SELECT simhash_lock_neighbourhood(0, 3, 'worker_local')) l" -c "DROP TABLE worker_local")
echo "    worker-local table: $local_lock"
[ "$local_lock" = "locked 1" ] || { echo "a worker's own table should take its locks" >&2; exit 1; }
