// Table layouts for radius-3 queries, measured in memory before one is built into the index:
// what a query costs over N random fingerprints with
//   rotations4  four tables keyed on 16-bit blocks (the index's runs below 2^27 entries): 4 probes
//               of N / 2^16 entries;
//   rotations3  three tables keyed on blocks of 22, 21 and 21 bits (its runs from 2^27 on): the
//               first block within one bit (23 probes), the others exact, N / 2^21-22 entries each;
//   triangles   six blocks of 11, 11, 11, 11, 10 and 10 bits and a table keyed on each pair of
//               blocks within 0-2 and within 3-5 (two triangles, six tables): within 3 bits three
//               blocks are clean and two of them share a triangle, so 6 exact probes of N / 2^20-22
//               entries reach every row.
// Each table holds the full fingerprints sorted by key, with a directory on the whole key (no
// references to a table 0, no buffer manager: the least a probe can cost). A query's probes are
// located first (directory lines asked for, then the ranges' first lines), then scanned with the
// extension's radius filter, as the index stages its probes. Queries are stored fingerprints with
// two bits flipped (each finds its row), and random points (most find nothing).
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

#include "../src/core/hamming.h"

namespace {

struct Block {
    int shift;  // of the block's lowest bit
    int bits;
};

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
    // The probes of a radius-3 query: (table, key value) pairs.
    void (*probes)(const Layout &, uint64_t, std::vector<Probe> *);
};

void exact_probes(const Layout &l, uint64_t q, std::vector<Probe> *out) {
    for (const Table &t : l.tables) out->push_back({&t, t.key(q), 0, 0});
}

// Table 0 within one bit, the others exact (r = 3 = 3 * 1 + 0: the refined pigeonhole).
void first_within_one_probes(const Layout &l, uint64_t q, std::vector<Probe> *out) {
    const Table &t0 = l.tables[0];
    const uint32_t v = t0.key(q);
    out->push_back({&t0, v, 0, 0});
    for (int b = 0; b < t0.bits; ++b) out->push_back({&t0, v ^ (uint32_t{1} << b), 0, 0});
    for (size_t t = 1; t < l.tables.size(); ++t) out->push_back({&l.tables[t], l.tables[t].key(q), 0, 0});
}

Layout make_layout(const std::string &name) {
    Layout l;
    l.name = name;
    if (name == "rotations4") {
        for (int t = 0; t < 4; ++t) l.tables.push_back({{48 - 16 * t, 16}, {0, 0}, 0, {}, {}});
        l.probes = exact_probes;
    } else if (name == "rotations3") {
        l.tables.push_back({{42, 22}, {0, 0}, 0, {}, {}});
        l.tables.push_back({{21, 21}, {0, 0}, 0, {}, {}});
        l.tables.push_back({{0, 21}, {0, 0}, 0, {}, {}});
        l.probes = first_within_one_probes;
    } else {
        const Block b[6] = {{53, 11}, {42, 11}, {31, 11}, {20, 11}, {10, 10}, {0, 10}};
        for (int tri = 0; tri < 2; ++tri)
            for (int i = 0; i < 3; ++i)
                for (int j = i + 1; j < 3; ++j) l.tables.push_back({b[3 * tri + i], b[3 * tri + j], 0, {}, {}});
        l.probes = exact_probes;
    }
    return l;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// ns a query (the best of three rounds) and the queries that found a row.
double time_queries(const Layout &l, const std::vector<uint64_t> &queries, size_t *found) {
    std::vector<Probe> probes;
    std::vector<uint32_t> hits(1 << 20);
    double best = 1e300;
    for (int round = 0; round < 3; ++round) {
        size_t total = 0;
        const auto start = std::chrono::steady_clock::now();
        for (uint64_t q : queries) {
            probes.clear();
            l.probes(l, q, &probes);
            for (const Probe &p : probes) __builtin_prefetch(&p.table->start[p.value]);
            for (Probe &p : probes) {
                p.begin = p.table->start[p.value];
                p.end = p.table->start[p.value + 1];
                __builtin_prefetch(&p.table->fps[p.begin]);
            }
            size_t rows = 0;
            for (const Probe &p : probes) {
                if (p.end - p.begin > hits.size()) hits.resize(p.end - p.begin);
                rows += simhash::select_within_radius(p.table->fps.data() + p.begin, p.end - p.begin, q, 3, hits.data());
            }
            total += rows > 0;
        }
        best = std::min(best, seconds_since(start) * 1e9 / queries.size());
        *found = total;
    }
    return best;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s N...\n", argv[0]);
        return 2;
    }
    std::printf("radius filter kernel: %s\n", simhash::select_kernel_name());
    std::printf("%-12s %12s %8s %10s %14s %14s %10s\n", "layout", "rows", "probes", "entries", "near, ns", "random, ns",
                "build, s");
    for (int a = 1; a < argc; ++a) {
        const size_t n = std::strtoull(argv[a], nullptr, 10);
        std::mt19937_64 rng(n);
        std::vector<uint64_t> fps(n);
        for (auto &fp : fps) fp = rng();
        constexpr size_t kQueries = 200000;
        std::vector<uint64_t> near(kQueries), random(kQueries);
        for (size_t i = 0; i < kQueries; ++i) {
            const int b1 = static_cast<int>(rng() % 64), b2 = static_cast<int>((b1 + 1 + rng() % 63) % 64);
            near[i] = fps[rng() % n] ^ (uint64_t{1} << b1) ^ (uint64_t{1} << b2);
            random[i] = rng();
        }
        for (const char *name : {"rotations4", "rotations3", "triangles"}) {
            Layout l = make_layout(name);
            const auto started = std::chrono::steady_clock::now();
            for (Table &t : l.tables) build_table(&t, fps);
            const double build = seconds_since(started);
            std::vector<Probe> probes;
            l.probes(l, 0, &probes);
            double entries = 0;
            for (const Probe &p : probes) entries += static_cast<double>(n) / (size_t{1} << p.table->bits);
            size_t found_near = 0, found_random = 0;
            const double near_ns = time_queries(l, near, &found_near);
            const double random_ns = time_queries(l, random, &found_random);
            if (found_near < kQueries) std::fprintf(stderr, "%s: %zu of %zu near queries found a row\n", name, found_near, kQueries);
            std::printf("%-12s %12zu %8zu %10.0f %14.0f %14.0f %10.1f\n", name, n, probes.size(), entries, near_ns,
                        random_ns, build);
            std::fflush(stdout);
        }
    }
    return 0;
}
