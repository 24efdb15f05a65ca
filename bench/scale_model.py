#!/usr/bin/env python3
"""Per-query work of the index at sizes beyond what this machine holds, from the model the index's
own cost estimate uses (simhash_estimate_scan): table t is probed with every value of its block
within block_probe_radius(r, m, t) bits of the query's, and each probe reads the directory slot's
range, N / 2^dirbits_t entries (uniform fingerprints; each table's directory at most its block). Runs hold at most MAX_RUN entries, so larger
tables are several runs, each probed. Time is projected for an index in memory: FIXED_US a query,
PROBE_US a probe and NS_PER_CANDIDATE a candidate, fitted to the k = 10 medians of 100M-row indexes
of 3 and 4 tables in shared buffers (docs/performance.md#how-many-tables); it matches the measured
medians within 2x from 3M to 100M rows, and says nothing of pages read from disk.

Usage: bench/scale_model.py [ROWS ...]   Prints a Markdown table. Numbers from a model, not a run.
"""
import math
import sys

MAX_RUN = 2_200_000_000      # SIMHASH_MAX_MAP_PAGES map pages of table-0 page numbers
MAX_DIRBITS = 22
NS_PER_CANDIDATE = 5.0
PROBE_US = 0.5
FIXED_US = 10.0
BYTES_PER_ROW = {4: 38.3, 3: 30.3}
RADII = (3, 7, 10)


def tables_for(entries):
    return 3 if entries >= 1 << 27 else 4


def block_widths(m):
    base, extra = divmod(64, m)
    return [base + (1 if t < extra else 0) for t in range(m)]


def dirbits_for(m, entries):
    """Each table's directory bits: log2(entries / 4), at most MAX_DIRBITS and the table's block."""
    bits = 1
    while bits < MAX_DIRBITS and (1 << bits) < entries // 4:
        bits += 1
    return [min(bits, w) for w in block_widths(m)]


def block_probe_radius(r, m, t):
    return r // m - (1 if t > r % m else 0)


def ball(bits, radius):
    return sum(math.comb(bits, j) for j in range(0, max(radius, -1) + 1))


def run_work(entries, r):
    m = tables_for(entries)
    d = dirbits_for(m, entries)
    balls = [ball(w, block_probe_radius(r, m, t)) for t, w in enumerate(block_widths(m))]
    return m, d, sum(balls), sum(b * entries / 2 ** d[t] for t, b in enumerate(balls))


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [3_000_000, 30_000_000, 300_000_000, 1_000_000_000, 10_000_000_000]
    header = "| rows | runs | tables | dirbits | entries a slot | " + " | ".join(
        f"k = {r}: probes, candidates, ms" for r in RADII) + " | index |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for n in sizes:
        runs = math.ceil(n / MAX_RUN)
        per_run = n / runs
        cells = []
        for r in RADII:
            m, d, probes, cand = run_work(int(per_run), r)
            probes *= runs
            cand *= runs
            ms = (FIXED_US + probes * PROBE_US + cand * NS_PER_CANDIDATE / 1000) / 1000
            cells.append(f"{probes:,}, {cand:,.0f}, {ms:.3g}")
        m, d, _, _ = run_work(int(per_run), 0)
        gb = n * BYTES_PER_ROW[m] / 1e9
        dirbits = " / ".join(str(b) for b in sorted(set(d), reverse=True))
        per_slot = " / ".join(f"{per_run / 2 ** b:,.0f}" for b in sorted(set(d), reverse=True))
        print(f"| {n:,} | {runs} | {m} | {dirbits} | {per_slot} | " + " | ".join(cells) + f" | {gb:,.1f} GB |")


if __name__ == "__main__":
    main()
