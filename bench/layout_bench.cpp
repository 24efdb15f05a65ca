// Table layouts for radius-3 (and radius-7) queries, measured in memory before one is built into
// the index:
// what a query costs over N random fingerprints with
//   rotations4  four tables keyed on 16-bit blocks (the index's runs below 2^27 entries): 4 probes
//               of N / 2^16 entries;
//   rotations3  three tables keyed on blocks of 22, 21 and 21 bits (its runs from 2^27 on): the
//               first block within one bit (23 probes), the others exact, N / 2^21-22 entries each;
//   triangles   six blocks of 11, 11, 11, 11, 10 and 10 bits and a table keyed on each pair of
//               blocks within 0-2 and within 3-5 (two triangles, six tables): within 3 bits three
//               blocks are clean and two of them share a triangle, so 6 exact probes of N / 2^20-22
//               entries reach every row (core/triangles.h).
// Each table holds the full fingerprints sorted by key, with a directory on the whole key (no
// references to a table 0, no buffer manager: the least a probe can cost). A query's probes are
// located first (directory lines asked for, then the ranges' first lines), then scanned with the
// extension's radius filter, as the index stages its probes. Queries are stored fingerprints with
// two bits flipped (each finds its row) and random points (most find nothing), and at radius 7
// stored fingerprints with seven bits flipped: what a larger radius costs each layout (and a
// check that its probes reach every row at the radius's edge).
//
// Usage: layout_bench N... (e.g. 3000000 30000000 300000000; 300M needs 15 GB for triangles).
// Prints ns a query for each layout and size. Numbers, not a test.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "../src/core/blocks.h"
#include "../src/core/hamming.h"
#include "../src/core/triangles.h"

namespace {

struct Block {
    int shift;  // of the block's lowest bit
    int bits;
};

// Block i of the project's layout of `count` blocks (core/blocks.h).
Block layout_block(int count, int i) {
    const simhash::BlockLayout layout = simhash::block_layout(count);
    return {simhash::block_low_bit(layout, i), layout.width[i]};
}

uint32_t block_value(uint64_t fp, Block b) { return static_cast<uint32_t>((fp >> b.shift) & ((uint64_t{1} << b.bits) - 1)); }

// A table keyed on one block, or on the concatenation of two.
struct Table {
    Block high, low;  // low.bits == 0: keyed on `high` alone
    int bits;
    std::vector<uint32_t> start;  // 2^bits + 1
    std::vector<uint64_t> fps;

    uint32_t key(uint64_t fp) const {
        return low.bits == 0 ? block_value(fp, high) : (block_value(fp, high) << low.bits) | block_value(fp, low);
    }
};

void build_table(Table *t, const std::vector<uint64_t> &fps) {
    t->bits = t->high.bits + t->low.bits;
    const size_t values = size_t{1} << t->bits;
    t->start.assign(values + 1, 0);
    for (uint64_t fp : fps) ++t->start[t->key(fp) + 1];
    for (size_t v = 0; v < values; ++v) t->start[v + 1] += t->start[v];
    std::vector<uint32_t> at(t->start.begin(), t->start.end() - 1);
    t->fps.resize(fps.size());
    for (uint64_t fp : fps) t->fps[at[t->key(fp)]++] = fp;
}

struct Probe {
    const Table *table;
    uint32_t value;
    uint32_t begin, end;
};

struct Layout {
    std::string name;
    std::vector<Table> tables;
    bool pairs;  // tables keyed on pairs of blocks (triangles), else on one block each (rotations)
};

// Each table's radius for a query of radius r: rotations by the refined pigeonhole
// (core/blocks.h), triangles by the least pair share (core/triangles.h).
std::vector<int> table_radii(const Layout &l, int r) {
    const int m = static_cast<int>(l.tables.size());
    if (l.pairs) return std::vector<int>(m, simhash::triangle_table_radius(r));
    std::vector<int> radii(m);
    for (int t = 0; t < m; ++t) radii[t] = simhash::block_probe_radius(r, m, t);
    return radii;
}

void query_probes(const Layout &l, const std::vector<int> &radii, uint64_t q, std::vector<Probe> *out) {
    for (size_t t = 0; t < l.tables.size(); ++t) {
        const Table &table = l.tables[t];
        if (radii[t] >= 0)
            simhash::for_each_value_within(table.key(q), table.bits, radii[t], [&](uint32_t v) { out->push_back({&table, v, 0, 0}); });
    }
}

Layout make_layout(const std::string &name) {
    Layout l;
    l.name = name;
    l.pairs = name == "triangles";
    const int count = name == "rotations4" ? 4 : name == "rotations3" ? 3 : simhash::kTriangleBlocks;
    if (!l.pairs) {
        for (int t = 0; t < count; ++t) l.tables.push_back({layout_block(count, t), {0, 0}, 0, {}, {}});
    } else {
        for (const simhash::BlockPair &p : simhash::kTrianglePairs)
            l.tables.push_back({layout_block(count, p.first), layout_block(count, p.second), 0, {}, {}});
    }
    return l;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// ns a query of radius r (the best of three rounds) and the queries that found a row.
double time_queries(const Layout &l, const std::vector<uint64_t> &queries, int r, size_t *found) {
    const std::vector<int> radii = table_radii(l, r);
    std::vector<Probe> probes;
    std::vector<uint32_t> hits(1 << 20);
    double best = 1e300;
    for (int round = 0; round < 3; ++round) {
        size_t total = 0;
        const auto start = std::chrono::steady_clock::now();
        for (uint64_t q : queries) {
            probes.clear();
            query_probes(l, radii, q, &probes);
            for (const Probe &p : probes) __builtin_prefetch(&p.table->start[p.value]);
            for (Probe &p : probes) {
                p.begin = p.table->start[p.value];
                p.end = p.table->start[p.value + 1];
                __builtin_prefetch(&p.table->fps[p.begin]);
            }
            size_t rows = 0;
            for (const Probe &p : probes) {
                if (p.end - p.begin > hits.size()) hits.resize(p.end - p.begin);
                rows += simhash::select_within_radius(p.table->fps.data() + p.begin, p.end - p.begin, q, r, hits.data());
            }
            total += rows > 0;
        }
        best = std::min(best, seconds_since(start) * 1e9 / queries.size());
        *found = total;
    }
    return best;
}

// A query's probes and the entries they read, on average, at radius r.
void probe_counts(const Layout &l, size_t n, int r, size_t *probes_out, double *entries) {
    std::vector<Probe> probes;
    query_probes(l, table_radii(l, r), 0, &probes);
    *entries = 0;
    for (const Probe &p : probes) *entries += static_cast<double>(n) / (size_t{1} << p.table->bits);
    *probes_out = probes.size();
}

// `count` stored fingerprints with `flips` bits flipped (each within that radius of its row).
std::vector<uint64_t> near_queries(const std::vector<uint64_t> &fps, size_t count, int flips, std::mt19937_64 &rng) {
    std::vector<uint64_t> queries(count);
    for (auto &q : queries) {
        q = fps[rng() % fps.size()];
        uint64_t mask = 0;
        while (__builtin_popcountll(mask) < flips) mask |= uint64_t{1} << (rng() % 64);
        q ^= mask;
    }
    return queries;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s N...\n", argv[0]);
        return 2;
    }
    std::printf("radius filter kernel: %s; ns a query, best of 3 rounds\n", simhash::select_kernel_name());
    std::printf("%-11s %10s | %6s %7s %8s %8s | %6s %8s %9s | %7s\n", "layout", "rows", "k=3: probes", "entries", "near",
                "random", "k=7: probes", "entries", "near", "build, s");
    for (int a = 1; a < argc; ++a) {
        const size_t n = std::strtoull(argv[a], nullptr, 10);
        std::mt19937_64 rng(n);
        std::vector<uint64_t> fps(n);
        for (auto &fp : fps) fp = rng();
        // Around stored rows (two bits flipped for k = 3, seven for k = 7) and random points.
        const std::vector<uint64_t> near3 = near_queries(fps, 200000, 2, rng), near7 = near_queries(fps, 20000, 7, rng);
        std::vector<uint64_t> random(200000);
        for (auto &q : random) q = rng();
        for (const char *name : {"rotations4", "rotations3", "triangles"}) {
            Layout l = make_layout(name);
            const auto started = std::chrono::steady_clock::now();
            for (Table &t : l.tables) build_table(&t, fps);
            const double build = seconds_since(started);
            size_t probes3, probes7, found_near3, found_random, found_near7;
            double entries3, entries7;
            probe_counts(l, n, 3, &probes3, &entries3);
            probe_counts(l, n, 7, &probes7, &entries7);
            const double near3_ns = time_queries(l, near3, 3, &found_near3);
            const double random_ns = time_queries(l, random, 3, &found_random);
            const double near7_ns = time_queries(l, near7, 7, &found_near7);
            if (found_near3 < near3.size() || found_near7 < near7.size())
                std::fprintf(stderr, "%s: a query missed its row (k = 3: %zu of %zu found, k = 7: %zu of %zu)\n", name,
                             found_near3, near3.size(), found_near7, near7.size());
            std::printf("%-11s %10zu | %11zu %7.0f %8.0f %8.0f | %11zu %8.0f %9.0f | %7.1f\n", name, n, probes3, entries3,
                        near3_ns, random_ns, probes7, entries7, near7_ns, build);
            std::fflush(stdout);
        }
    }
    return 0;
}
