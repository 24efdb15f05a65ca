#!/usr/bin/env bash
# Checks the dynamic symbols the built module exports: exactly Pg_magic_func, _PG_init, the
# parallel workers' entry points (named in CreateParallelContext calls in src/), and for every C
# function that an install or upgrade script (simhash--*.sql) binds, its link symbol and its
# pg_finfo_ record. Anything else exported (a libstdc++ template instantiation, xxHash, a core
# or glue function) or an entry point missing fails the check.
# Usage: scripts/check_exports.sh [path/to/simhash.so]   (default: the one built in the repository)
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SO=${1:-$REPO_ROOT/simhash.so}
[ -f "$SO" ] || { echo "check_exports: $SO not found (build first)" >&2; exit 1; }

# Link symbols of the LANGUAGE C functions: `AS 'MODULE_PATHNAME', 'symbol'`, or the function's own
# (unquoted, so lower-cased) name when the symbol is omitted.
wanted=$(perl -0777 -ne '
    while (/CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+(?:\w+\.)?(\w+)\s*\((?:(?!CREATE\s).)*?\bAS\s+\x27MODULE_PATHNAME\x27(?:\s*,\s*\x27(\w+)\x27)?/gsi) {
        my $symbol = defined $2 ? $2 : lc $1;
        print "$symbol\npg_finfo_$symbol\n";
    }' "$REPO_ROOT"/simhash--*.sql | sort -u)
workers=$(grep -rhoP 'CreateParallelContext\("simhash", "\K\w+' "$REPO_ROOT"/src || true)
wanted=$(printf '%s\n' "$wanted" $workers Pg_magic_func _PG_init | sort -u)

exported=$(nm -D --defined-only "$SO" | awk '{print $NF}' | sort -u)

missing=$(comm -23 <(printf '%s\n' "$wanted") <(printf '%s\n' "$exported"))
extra=$(comm -13 <(printf '%s\n' "$wanted") <(printf '%s\n' "$exported"))

status=0
if [ -n "$missing" ]; then
    echo "check_exports: entry points named in simhash--*.sql but not exported by $SO:" >&2
    printf '  %s\n' $missing >&2
    status=1
fi
if [ -n "$extra" ]; then
    echo "check_exports: symbols exported by $SO that PostgreSQL never looks up" \
        "(hide them: -fvisibility=hidden, src/exports.map, or bind them in simhash--*.sql):" >&2
    printf '%s\n' "$extra" | sed 's/^/  /' >&2
    status=1
fi
[ $status -eq 0 ] && echo "check_exports: $(printf '%s\n' "$exported" | wc -l) exported symbols, all expected"
exit $status
