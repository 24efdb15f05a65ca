#!/usr/bin/env bash
# Development tool (not run by scripts/test.sh or CI, which have only Debian's PostgreSQL 15):
# builds the extension against another PostgreSQL installation, fails on any compiler warning,
# installs it there, checks its exported symbols and runs the pg_regress suite and isolation specs
# on a throwaway cluster of that installation; with --tap also the TAP tests (the installation
# must have been configured with --enable-tap-tests).
#
#   scripts/check_versions.sh [--tap] PREFIX|PG_CONFIG ...
#   e.g. scripts/check_versions.sh /tmp/pg16-inst /tmp/pg17-inst /tmp/pg18-inst/bin/pg_config
#
# A PostgreSQL source tree (REL_16_STABLE etc.; from git it also needs bison and flex) builds into
# such a prefix with
#   ./configure --prefix=/tmp/pg16-inst --enable-tap-tests --without-icu --without-readline \
#       --without-zlib && make -j2 && make install
# plus the contrib module that pg_regress test fdw uses: make -C contrib/postgres_fdw install.
# Each installation is built in a scratch copy of the work tree, so the tree's own objects (built
# for PostgreSQL 15) are left alone. Regression differences are kept in
# /tmp/simhash-check-<major>.diffs, the logs of failed TAP tests in
# /tmp/simhash-check-<major>-tap-logs.*. The summary at the end has one line per installation.
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUN_TAP=no
TARGETS=()
for arg in "$@"; do
    case "$arg" in
        --tap) RUN_TAP=yes ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
        *) TARGETS+=("$arg") ;;
    esac
done
[ ${#TARGETS[@]} -gt 0 ] || { sed -n '2,19p' "$0" >&2; exit 2; }

summary=()
status=0
for target in "${TARGETS[@]}"; do
    if [ -d "$target" ]; then pg_config=$target/bin/pg_config; else pg_config=$target; fi
    [ -x "$pg_config" ] || { echo "check_versions: no pg_config at $pg_config" >&2; exit 2; }
    version=$("$pg_config" --version)
    major=$(echo "$version" | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
    bindir=$("$pg_config" --bindir)
    echo "==> $version ($pg_config)"

    work=$(mktemp -d /tmp/simhash-check-$major.XXXXXX)
    # Sources only: no objects, module or test results of another build.
    (cd "$REPO_ROOT" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) \
        | tar -xf - -C "$work"

    result="PostgreSQL $major:"
    log=$work/build.log
    if ! make -C "$work" -s -j2 PG_CONFIG="$pg_config" >"$log" 2>&1; then
        cat "$log"
        summary+=("$result build FAILED")
        status=1
        rm -rf "$work"
        continue
    fi
    warnings=$(grep -c 'warning:' "$log" || true)
    if [ "$warnings" -gt 0 ]; then
        cat "$log"
        result+=" $warnings compiler warnings (FAILED),"
        status=1
    else
        result+=" compiled cleanly,"
    fi
    make -C "$work" -s install PG_CONFIG="$pg_config" >/dev/null

    if bash "$REPO_ROOT/scripts/check_exports.sh" "$work/simhash.so"; then
        result+=" exports ok,"
    else
        result+=" exports FAILED,"
        status=1
    fi

    # A cluster of that installation (common.sh: own port and socket directory, non-root user).
    regress=$(
        export SIMHASH_PG_BIN=$bindir
        # shellcheck source=common.sh
        source "$REPO_ROOT/scripts/common.sh"
        start_cluster >&2
        if make -C "$work" -s -k installcheck PG_CONFIG="$pg_config" >"$work/regress.log" 2>&1; then
            echo "regression and isolation suites passed"
        else
            cat "$work/regression.diffs" "$work/output_iso/regression.diffs" 2>/dev/null \
                >"/tmp/simhash-check-$major.diffs" || true
            failed=$(grep -E '^(not ok|test .*FAILED|.*\.\.\. FAILED)' "$work/regress.log" \
                | sed -E 's/^(not ok +[0-9]+ +- +|test +)//; s/ +(\.\.\. )?FAILED.*//; s/ .*//' | tr '\n' ' ' || true)
            echo "regression FAILED: ${failed}(diffs in /tmp/simhash-check-$major.diffs)"
        fi
        stop_cluster
    ) || true
    cat "$work/regress.log" >&2 || true
    case "$regress" in *FAILED*) status=1 ;; esac
    result+=" $regress"

    if [ "$RUN_TAP" = yes ]; then
        cluster_user=postgres
        [ "$(id -u)" -eq 0 ] || cluster_user=$(id -un)
        chown -R "$cluster_user" "$work"
        run_as=()
        [ "$(id -un)" = "$cluster_user" ] || run_as=(runuser -u "$cluster_user" --)
        if "${run_as[@]}" make -C "$work" -s tap PG_CONFIG="$pg_config" PROVE_FLAGS="--timer"; then
            result+=", TAP tests passed"
        else
            # The scratch copy is removed below: keep the clusters' logs for reading.
            kept=$(mktemp -d "/tmp/simhash-check-$major-tap-logs.XXXXXX")
            cp -r "$work/tmp_check/log/." "$kept/" 2>/dev/null || true
            result+=", TAP tests FAILED (logs in $kept)"
            status=1
        fi
    fi
    summary+=("$result")
    rm -rf "$work"
done

echo "==> summary"
printf '%s\n' "${summary[@]}"
exit $status
