#!/usr/bin/env bash
# The whole test suite on a fresh Debian bookworm machine: installs the packages, checks the
# release metadata (META.json, versions, `make dist`), builds the Debian package, checks it with
# lintian and installs it, checks the installed module's exported symbols, runs the core unit tests
# (GoogleTest/CTest), the pg_regress suite and isolation specs against a throwaway cluster, the
# client driver tests (test/clients: psycopg 3, psycopg 2, asyncpg, node-postgres, JDBC) against
# the same cluster, and the TAP tests (each starts clusters of its own), and the Citus suite
# (test/citus) when Citus is installed. Leaves nothing running.
#
# Every suite runs against the extension as the Debian package installs it: the package is built
# with the project's Makefile (debian/rules), so the module is the one `make` builds, and building
# from source as well would only add a build. The unit tests build the core alone (`make unit`).
# Where there is no package to build, the extension is built and installed from source instead:
# with SIMHASH_PG_BIN (another PostgreSQL installation, which a Debian package cannot go into) or
# in a release archive (`make dist` leaves debian/ out).
source "$(dirname "$0")/common.sh"

if [ -z "${SIMHASH_PG_BIN:-}" ] && [ -d "$REPO_ROOT/debian" ]; then
    FROM_PACKAGE=yes
    DEBIAN_PACKAGES+=("${PACKAGING_PACKAGES[@]}")
else
    FROM_PACKAGE=no
fi
DEBIAN_PACKAGES+=("${CLIENT_PACKAGES[@]}" python3)
install_packages

echo "==> release metadata"
bash "$REPO_ROOT/scripts/check_release_metadata.sh"

if [ "$FROM_PACKAGE" = yes ]; then
    build_and_install_package
else
    echo "==> no Debian package for this installation or tree: the extension is built from source"
    build_and_install
fi

echo "==> exported symbols"
bash "$REPO_ROOT/scripts/check_exports.sh" "$("$PG_BIN/pg_config" --pkglibdir)/simhash.so"

echo "==> node-postgres for the client tests"
(
    cd "$REPO_ROOT/test/clients/node"
    if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
)

echo "==> core unit tests"
make -C "$REPO_ROOT" -s unit

start_cluster
echo "==> pg_regress and isolation tests"
if ! make -C "$REPO_ROOT" -s installcheck PG_CONFIG="$PG_BIN/pg_config"; then
    # head reads the files itself: no pipe whose SIGPIPE would turn the exit status into 141
    head -n 200 "$REPO_ROOT/regression.diffs" "$REPO_ROOT/output_iso/regression.diffs" 2>/dev/null || true
    exit 1
fi
echo "==> client driver tests"
SIMHASH_PG_BIN="$PG_BIN" bash "$REPO_ROOT/test/clients/run.sh"
stop_cluster

if compgen -G "$REPO_ROOT/test/t/*.pl" >/dev/null; then
    echo "==> TAP tests"
    # PostgreSQL::Test::Cluster runs initdb, which refuses root: run them as the cluster user in a
    # scratch copy it owns.
    TAP_DIR=$(mktemp -d /tmp/simhash-tap.XXXXXX)
    trap 'rm -rf "$TAP_DIR"' EXIT
    cp -r "$REPO_ROOT/." "$TAP_DIR/"
    chown -R "$CLUSTER_USER" "$TAP_DIR"
    if ! as_cluster_user make -C "$TAP_DIR" -s tap PG_CONFIG="$PG_BIN/pg_config" \
        PROVE_FLAGS="--timer"; then
        # The scratch copy goes when this script exits: print the clusters' logs (their ends) and
        # keep a copy, so that a failure seen once in CI can be read afterwards.
        kept=$(mktemp -d /tmp/simhash-tap-logs.XXXXXX)
        cp -r "$TAP_DIR/tmp_check/log/." "$kept/" 2>/dev/null || true
        for log in "$kept"/*.log; do
            [ -f "$log" ] || continue
            echo "==> last lines of $(basename "$log")"
            tail -n 60 "$log"
        done
        echo "==> TAP tests failed; their logs are kept in $kept"
        exit 1
    fi
fi
# Citus (coordinator + 2 workers on this machine): run when Citus is installed, else skipped with a
# message saying how to include it.
bash "$REPO_ROOT/test/citus/run.sh"
echo "==> all tests passed"
