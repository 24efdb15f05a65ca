#!/usr/bin/env bash
# Draws the plots of docs/performance.md and docs/quality.md as SVG files, from the CSV files the
# benchmarks write (bench/results.sh):
#   latency_by_radius_DATA.svg  radius_bench_DATA_ROWS.csv (DATA uniform and skewed; ROWS, default
#                               10000000): median time of a k-radius count against k, for the
#                               simhash index as the planner runs it, the four B-trees
#                               (BTREES=1 bench/radius_bench.sh) and the sequential scan, log scale;
#   ingest.svg                  ingest_bench_BASE.csv (every base size there is): rows/s and WAL
#                               bytes a row of the sustained ingest against the table's size;
#   quality_f1_by_k.svg and     quality_f1_by_k.csv (scripts/quality.sh): F1 against k of the main
#   quality_f1_by_k_by_source.svg  fingerprints, all sources together and per source.
# A plot whose CSV files are missing is left out (and said so). Installs gnuplot-nox (and python3,
# which reads the CSV files: gnuplot cannot read quoted fields that contain commas) with apt-get if
# missing.
#
# Usage: bench/plot.sh [DATA_DIR]   (default docs/images/data, the files the docs' plots come from;
# OUT_DIR, default docs/images; ROWS)
set -euo pipefail
source "$(cd "$(dirname "$0")/.." && pwd)/scripts/common.sh"
data_dir=$(cd "${1:-$REPO_ROOT/docs/images/data}" && pwd)
out_dir=${OUT_DIR:-$REPO_ROOT/docs/images}
rows=${ROWS:-10000000}
mkdir -p "$out_dir"

missing=()
command -v gnuplot >/dev/null || missing+=(gnuplot-nox)
command -v python3 >/dev/null || missing+=(python3)
if [ ${#missing[@]} -gt 0 ]; then
    echo "==> apt-get install ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

work=$(mktemp -d /tmp/simhash-plot.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The CSV files, reshaped into one whitespace-separated file per curve for gnuplot, and
# work/PLOT.gp per plot that can be drawn: its titles as gnuplot variables.
python3 - "$data_dir" "$work" "$rows" <<'PYTHON'
import csv, glob, os, re, sys

data_dir, work, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])

def read(path):
    with open(path, newline='') as f:
        return list(csv.DictReader(f))

def short(n):
    n = int(n)
    for unit, div in (('G', 10**9), ('M', 10**6), ('k', 10**3)):
        if n >= div and n % div == 0:
            return f'{n // div}{unit}'
    return f'{n:,}'

def quote(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n') + '"'

def write(name, lines):
    with open(os.path.join(work, name), 'w') as f:
        f.writelines(' '.join(str(v) for v in line) + '\n' for line in lines)

def settings(name, **values):
    with open(os.path.join(work, name + '.gp'), 'w') as f:
        for key, value in values.items():
            f.write(f'{key} = {quote(value)}\n')

# Latency against radius. The planner's curve is split by the plan it chose at each radius.
for data in ('uniform', 'skewed'):
    path = os.path.join(data_dir, f'radius_bench_{data}_{rows}.csv')
    if not os.path.exists(path):
        print(f'bench/plot.sh: no {path}: latency_by_radius_{data}.svg left out')
        continue
    table = read(path)
    for method, curve in (('planner', 'planner'), ('btree x4', 'btrees'), ('seq scan', 'seq')):
        points = sorted((int(r['radius']), r['median_ms'], r['plan']) for r in table if r['method'] == method)
        write(f'radius_{data}_{curve}.dat', [(k, ms) for k, ms, _ in points])
        if method == 'planner':
            # A legend entry only for the plans the planner chose.
            planner_points = ''
            for plan, style in (('index scan', 'pt 7 ps 0.8'), ('bitmap scan', 'pt 6 ps 1.0 lw 2'),
                                ('seq scan', 'pt 2 ps 1.0 lw 2')):
                name = f'radius_{data}_planner_{plan.split()[0]}.dat'
                write(name, [(k, ms) for k, ms, p in points if p == plan])
                if any(p == plan for _, _, p in points):
                    planner_points += (f', "{os.path.join(work, name)}" using 1:2 with points {style} lc rgb "#1f77b4"'
                                       f' title "  {plan}"')
    queries = {r['method']: r['queries'] for r in table}
    settings(f'latency_by_radius_{data}', planner_points=planner_points,
             title=f'count(*) WHERE hamming(fp, q) <= k over {short(rows)} {data} fingerprints',
             subtitle=f"{table[0]['machine']}, shared_buffers {table[0]['shared_buffers']}\n"
                      f"median of {queries.get('planner', '?')} (index), {queries.get('btree x4', '-')} (B-trees) and "
                      f"{queries.get('seq scan', '?')} (sequential scan) queries a radius")

# Ingest against the table's size.
paths = glob.glob(os.path.join(data_dir, 'ingest_bench_*.csv'))
if paths:
    table = sorted((r for p in paths for r in read(p)), key=lambda r: int(r['base_rows']))
    for index in ('simhash', 'btree4'):
        write(f'ingest_{index}.dat', [(r['base_rows'], r['rows_per_s'], r['wal_bytes_per_row'])
                                      for r in table if r['index'] == index])
    first = table[0]
    sizes = sorted({int(r['base_rows']) for r in table})
    settings('ingest',
             title=f"Sustained ingest of {short(first['inserted_rows'])} uniform fingerprints in transactions of "
                   f"{int(first['batch_rows']):,}, k = 3 queries alongside",
             subtitle=f"{first['machine']}, shared_buffers {first['shared_buffers']}, max_wal_size {first['max_wal_size']}, "
                      f"full_page_writes {first['full_page_writes']}",
             xtics='(' + ', '.join(f'"{short(s)}" {s}' for s in sizes) + ')',
             xrange=f'[{sizes[0] / 2}:{sizes[-1] * 2}]')
else:
    print(f'bench/plot.sh: no ingest_bench_*.csv in {data_dir}: ingest.svg left out')

# F1 against k. The three fingerprints computed with eight hash seeds get the seeds' range as a band.
path = os.path.join(data_dir, 'quality_f1_by_k.csv')
if os.path.exists(path):
    table = read(path)
    main = ('minhash64 word 1', 'word 2, set', 'char 4, set', 'word 1, log x idf')
    sources = sorted({r['source'] for r in table} - {'overall'})
    for n, features in enumerate(main):
        for source in ['overall'] + sources:
            rows_of = [r for r in table if r['features'] == features and r['source'] == source]
            by_k = {}
            for r in rows_of:
                by_k.setdefault(int(r['k']), {})[int(r['seed'])] = float(r['f1'])
            write(f'f1_{n}_{source}.dat', [(k, f[0], min(f.values()), max(f.values()), len(f)) for k, f in sorted(by_k.items())])
    with open(os.path.join(work, 'sources.txt'), 'w') as f:
        f.write(' '.join(sources) + '\n')
    settings('quality_f1_by_k', title='F1 of hamming(a, b) <= k against k: the six sources of bench/quality_corpus.sql together')
else:
    print(f'bench/plot.sh: no {path}: quality_f1_by_k.svg left out')
PYTHON

# Common to every plot: SVG of a fixed size (the same file for the same data), plain text labels.
cat >"$work/common.gp" <<'GNUPLOT'
set terminal svg size 900,600 font "sans,13" noenhanced background "white"
set grid lc rgb "#dddddd"
set key box
set datafile missing NaN
GNUPLOT

for data in uniform skewed; do
    [ -f "$work/latency_by_radius_$data.gp" ] || continue
    gnuplot <<GNUPLOT
load "$work/common.gp"
load "$work/latency_by_radius_$data.gp"
set output "$out_dir/latency_by_radius_$data.svg"
set title title . "\n" . subtitle font "sans,12"
set xlabel "radius k (bits)"
set ylabel "median execution time (ms, log scale)"
set logscale y
set format y "%g"
set xrange [-0.5:24.5]
set xtics 0, 2, 24
set key bottom right font ",11"
plot "$work/radius_${data}_seq.dat" using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb "#7f7f7f" title "sequential scan, one core", \
     "$work/radius_${data}_btrees.dat" using 1:2 with linespoints lw 2 pt 5 ps 0.6 lc rgb "#d62728" title "four B-trees on the 16-bit blocks, one core", \
     "$work/radius_${data}_planner.dat" using 1:2 with lines lw 2 lc rgb "#1f77b4" title "simhash index, as the planner runs it:" @planner_points
GNUPLOT
    echo "wrote $out_dir/latency_by_radius_$data.svg"
done

if [ -f "$work/ingest.gp" ]; then
    gnuplot <<GNUPLOT
load "$work/common.gp"
load "$work/ingest.gp"
set output "$out_dir/ingest.svg"
set multiplot layout 1, 2 title title . "\n" . subtitle font "sans,12"
set logscale x
set xrange @xrange
set xtics @xtics
set xlabel "rows in the table before the ingest (log scale)"
set key top left
set offsets 0, 0, graph 0.3, 0
set title "inserted rows a second"
set ylabel "rows/s"
set yrange [0:*]
set format y "%.0s%c"
plot "$work/ingest_simhash.dat" using 1:2 with linespoints lw 2 pt 7 lc rgb "#1f77b4" title "simhash index", \
     "$work/ingest_btree4.dat" using 1:2 with linespoints lw 2 pt 5 lc rgb "#d62728" title "four B-trees"
set title "WAL written a row"
set ylabel "WAL bytes a row"
set format y "%g"
plot "$work/ingest_simhash.dat" using 1:3 with linespoints lw 2 pt 7 lc rgb "#1f77b4" title "simhash index", \
     "$work/ingest_btree4.dat" using 1:3 with linespoints lw 2 pt 5 lc rgb "#d62728" title "four B-trees"
unset multiplot
GNUPLOT
    echo "wrote $out_dir/ingest.svg"
fi

if [ -f "$work/quality_f1_by_k.gp" ]; then
    # The four curves of one panel, all sources together or one source.
    f1_curves() {
        local source=$1 band=$2
        local colours=('#2ca02c' '#1f77b4' '#ff7f0e' '#9467bd')
        local titles=('minhash64 (word 1)' 'simhash default (word 2, set)' 'simhash char 4, set' 'simhash word 1, log x IDF')
        local plot=()
        for n in 0 1 2 3; do
            # Columns: k, seed 0's F1, the lowest and highest F1 over the seeds, how many seeds.
            [ "$band" = 1 ] && [ "$n" -lt 3 ] && plot+=("\"$work/f1_${n}_$source.dat\" using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb \"${colours[$n]}\" notitle")
            plot+=("\"$work/f1_${n}_$source.dat\" using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb \"${colours[$n]}\" title \"${titles[$n]}\"")
        done
        local IFS=,
        echo "plot ${plot[*]}"
    }
    gnuplot <<GNUPLOT
load "$work/common.gp"
load "$work/quality_f1_by_k.gp"
set output "$out_dir/quality_f1_by_k.svg"
set title title . "\nseed 0 (the functions as shipped); shaded: the range over 8 hash seeds" font "sans,12"
set xlabel "k (bits)"
set ylabel "F1 (derived truth)"
set xrange [0:16]
set xtics 0, 2, 16
set yrange [0:1]
set key bottom right
$(f1_curves overall 1)
GNUPLOT
    echo "wrote $out_dir/quality_f1_by_k.svg"
    read -r -a sources <"$work/sources.txt"
    {
        echo "load \"$work/common.gp\""
        echo "set terminal svg size 1200,760 font \"sans,12\" noenhanced background \"white\""
        echo "set output \"$out_dir/quality_f1_by_k_by_source.svg\""
        echo "set multiplot layout 2, 3 title \"F1 of hamming(a, b) <= k against k, per source (seed 0, derived truth)\""
        echo "set xrange [0:16]; set xtics 0, 4, 16; set yrange [0:1]; set xlabel \"k (bits)\"; set ylabel \"F1\""
        first=1
        for source in "${sources[@]}"; do
            echo "set title \"$source\""
            if [ "$first" = 1 ]; then echo "set key top left font \",10\""; first=0; else echo "unset key"; fi
            f1_curves "$source" 0
        done
        echo "unset multiplot"
    } | gnuplot
    echo "wrote $out_dir/quality_f1_by_k_by_source.svg"
fi
