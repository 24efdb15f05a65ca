# shellcheck shell=bash disable=SC2034
# Sourced by the benchmarks that write their figures as CSV files beside the tables they print
# (each_size.sh, ingest_bench.sh): sets results_dir (RESULTS_DIR, default bench/results/, created)
# and machine, a line saying what the figures were measured on, which goes into every row of those
# files so that a plot drawn from them later can name it (the client's machine: the benchmarks run
# psql on the database server's machine).
results_dir=${RESULTS_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/results}
mkdir -p "$results_dir"
results_dir=$(cd "$results_dir" && pwd)
machine="$(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)), $(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
