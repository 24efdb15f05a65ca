#!/usr/bin/env bash
# Benchmarks (numbers, not tests): core throughput, then SQL throughput against md5 in the same
# run, then the index benchmark when present. Same setup as the demo; leaves nothing running.
source "$(dirname "$0")/common.sh"
install_packages
build_and_install
echo "==> core (one core, best of 5)"
make -C "$REPO_ROOT" -s bench-core
start_cluster
echo "==> SQL (one backend, best of 5, same rows)"
bash "$REPO_ROOT/bench/sql_bench.sh" 2>/dev/null
if [ -x "$REPO_ROOT/bench/index_bench.sh" ]; then
    echo "==> index"
    bash "$REPO_ROOT/bench/index_bench.sh"
fi
