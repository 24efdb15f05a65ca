#!/usr/bin/env bash
# The client driver tests: psycopg 3, psycopg 2, asyncpg, node-postgres and PgJDBC, each binding
# its parameters as it does by default, against a running server where the extension is installed.
# Connects through the libpq variables PGHOST, PGPORT and PGUSER (PGDATABASE: where to create the
# test database), creates a fresh database with the extension (SIMHASH_CLIENTS_DB, default
# simhash_clients), runs every driver's test in it (each in a schema of its own) and ends with
# the line "clients: N passed, M failed" (N, M: drivers); exits non-zero when one failed.
# Needs the Debian packages that scripts/test.sh installs, `npm ci` done in test/clients/node,
# and, for JDBC, the server listening on 127.0.0.1 (PGHOST may be a socket directory for the rest).
# SIMHASH_PG_BIN: the directory of the psql to use (default: psql on PATH).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PSQL=${SIMHASH_PG_BIN:+$SIMHASH_PG_BIN/}psql
# Debian's python3 (the drivers are Debian packages in its dist-packages), whatever python3 is first on PATH.
PYTHON=${SIMHASH_CLIENTS_PYTHON:-/usr/bin/python3}
DB=${SIMHASH_CLIENTS_DB:-simhash_clients}
ADMIN_DB=${PGDATABASE:-postgres}
LIMIT=600  # seconds per driver

"$PSQL" -X -q -v ON_ERROR_STOP=1 -d "$ADMIN_DB" \
    -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" || exit 1
"$PSQL" -X -q -v ON_ERROR_STOP=1 -d "$DB" -c "CREATE EXTENSION simhash" || exit 1
export PGDATABASE=$DB

passed=0
failed=()
run_driver() {  # name, directory, command...
    local name=$1 dir=$2
    shift 2
    echo "==> clients: $name"
    if (cd "$HERE/$dir" && timeout "$LIMIT" "$@"); then
        passed=$((passed + 1))
    else
        echo "==> clients: $name FAILED"
        failed+=("$name")
    fi
}

run_driver psycopg3 python "$PYTHON" -m unittest -v test_psycopg3
run_driver psycopg2 python "$PYTHON" -m unittest -v test_psycopg2
run_driver asyncpg python "$PYTHON" -m unittest -v test_asyncpg
run_driver node-postgres node node --test simhash.test.js
run_driver jdbc java java -ea -cp /usr/share/java/postgresql.jar SimhashJdbcTest.java

if [ ${#failed[@]} -eq 0 ]; then
    "$PSQL" -X -q -d "$ADMIN_DB" -c "DROP DATABASE $DB" || true
else
    echo "failed: ${failed[*]} (database $DB kept)"
fi
echo "clients: $passed passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
