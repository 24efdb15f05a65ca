// The batch engine's internals, shared by its parts (near_pairs.cpp: plans and pairs,
// near_groups.cpp: groups, minhash_lsh.cpp: MinHash LSH): the cost model, the stop/progress
// poller, radix sort, the collapse of identical fingerprints, permuted-table scans, the pair
// writer and union-find. Included only by those files; the API is near_pairs.h.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "blocks.h"
#include "hamming.h"
#include "near_pairs.h"

namespace simhash {
namespace engine {


// Thrown inside the core when a callback asks to stop; caught by the public entry points, which
// then return RunStatus::stopped. Never leaves the core.
struct StopRun {};

// Cost model units: roughly nanoseconds on one core (measured on the development machine).
constexpr double kCostPerRadixPass = 2.0;   // per element and pass (read, key, scatter)
constexpr double kCostPerTableScan = 1.5;   // per element: key and run detection
constexpr double kCostPerComparison = 0.6;  // per candidate pair (xor + popcount + compare)
constexpr int kRadixDigitBits = 11;
constexpr size_t kPollEvery = 1u << 16;       // work units between should_stop polls
constexpr uint64_t kProgressEvery = 1u << 24;  // work units between progress callbacks

inline double binomial(int n, int k) {
    if (k < 0 || k > n) return 0;
    double r = 1;
    for (int i = 1; i <= k; ++i) r = r * (n - k + i) / i;
    return r;
}

inline uint64_t exact_binomial(int n, int k) {
    if (k < 0 || k > n) return 0;
    unsigned __int128 r = 1;
    for (int i = 1; i <= k; ++i) r = r * (n - k + i) / i;  // exact: r is C(n - k + i, i)
    return static_cast<uint64_t>(r);
}

// The splitmix64 finalizer: a bijection of uint64 that spreads any set of keys evenly.
inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

inline void check_radius(int radius) {
    if (radius < 0 || radius > 64)
        throw std::invalid_argument("radius must be between 0 and 64");
}

// Polls the caller's callbacks: should_stop every kPollEvery units of work, progress (the phase
// and its step, e.g. table 3 of 10) every kProgressEvery units.
class Poller {
public:
    explicit Poller(const RunControl &control) : control_(control) {}
    void begin(const char *phase, uint64_t total) {
        phase_ = phase;
        total_ = total;
        done_ = 0;
        report();
    }
    void step(uint64_t done) { done_ = done; tick(); }
    // Moves the phase to `done` after `units` of work.
    void advance(uint64_t done, uint64_t units) {
        done_ = done;
        tick(units);
    }
    void tick(uint64_t units = 1) {
        since_poll_ += units;
        if (since_poll_ < kPollEvery) return;
        since_progress_ += since_poll_;
        since_poll_ = 0;
        if (control_.should_stop && control_.should_stop(control_.context)) throw StopRun();
        if (since_progress_ >= kProgressEvery) {
            since_progress_ = 0;
            report();
        }
    }

private:
    void report() {
        if (control_.progress && !control_.progress(control_.context, phase_, done_, total_))
            throw StopRun();
    }
    const RunControl &control_;
    const char *phase_ = "";
    uint64_t total_ = 0, done_ = 0, since_poll_ = 0, since_progress_ = 0;
};

// LSD radix sort of `a` (n elements) by key(a[i]) of key_bits bits; `scratch` has room for n.
// Stable. Returns the buffer holding the sorted elements (a or scratch).
template <typename T, typename KeyFn>
T *radix_sort(T *a, T *scratch, size_t n, int key_bits, KeyFn key, Poller *poller) {
    if (n < 2 || key_bits <= 0) return a;
    if (n < 512) {
        std::stable_sort(a, a + n, [&](const T &x, const T &y) { return key(x) < key(y); });
        return a;
    }
    const int passes = (key_bits + kRadixDigitBits - 1) / kRadixDigitBits;
    const int digit_bits = (key_bits + passes - 1) / passes;
    const size_t buckets = size_t{1} << digit_bits;
    const uint64_t digit_mask = buckets - 1;
    std::vector<size_t> count(buckets);
    T *src = a, *dst = scratch;
    for (int p = 0; p < passes; ++p) {
        const int shift = p * digit_bits;
        std::fill(count.begin(), count.end(), 0);
        for (size_t i = 0; i < n; ++i) ++count[(key(src[i]) >> shift) & digit_mask];
        if (std::find(count.begin(), count.end(), n) != count.end()) continue;  // one bucket
        size_t sum = 0;
        for (auto &c : count) {
            const size_t k = c;
            c = sum;
            sum += k;
        }
        for (size_t i = 0; i < n; ++i) dst[count[(key(src[i]) >> shift) & digit_mask]++] = src[i];
        std::swap(src, dst);
        if (poller) poller->tick(n);
    }
    return src;
}

// Rows sorted by fingerprint and grouped: distinct fingerprints with the range of their ids.
struct DistinctSet {
    std::vector<uint64_t> fingerprints;  // ascending, unique
    std::vector<uint32_t> offsets;       // ids of fingerprints[i]: rows[offsets[i] .. offsets[i+1])
};

// Sorts rows by fingerprint (stable) and fills `set`. Rows end up in `rows` again.
inline void collapse(IdFingerprint *rows, size_t n, DistinctSet &set, Poller &poller) {
    if (n >= std::numeric_limits<uint32_t>::max())
        throw std::length_error("too many rows for one batch (at most 4294967294)");
    {
        std::unique_ptr<IdFingerprint[]> scratch(new IdFingerprint[n >= 512 ? n : 1]);  // uninitialized
        poller.begin("sorting rows by fingerprint", n);
        IdFingerprint *sorted = radix_sort(rows, scratch.get(), n, 64,
                                           [](const IdFingerprint &r) { return r.fingerprint; }, &poller);
        if (sorted != rows) std::copy(sorted, sorted + n, rows);
    }
    size_t distinct = 0;
    for (size_t i = 0; i < n; ++i) distinct += i == 0 || rows[i].fingerprint != rows[i - 1].fingerprint;
    set.fingerprints.reserve(distinct);
    set.offsets.reserve(distinct + 1);
    for (size_t i = 0; i < n; ++i) {
        if (i == 0 || rows[i].fingerprint != rows[i - 1].fingerprint) {
            set.fingerprints.push_back(rows[i].fingerprint);
            set.offsets.push_back(static_cast<uint32_t>(i));
        }
    }
    set.offsets.push_back(static_cast<uint32_t>(n));
}

inline KeyPieces key_pieces(const NearPairsPlan &plan, size_t combination) {
    KeyPieces k;
    const uint64_t mask = combination_mask(plan, combination);
    for (int b = 0; b < plan.blocks; ++b) {
        if (!(mask >> b & 1)) continue;
        if (k.count > 0 && (mask >> (b - 1) & 1)) {
            k.width[k.count - 1] += plan.block_width[b];
        } else {
            k.shift[k.count] = plan.block_start[b];
            k.width[k.count] = plan.block_width[b];
            ++k.count;
        }
        k.bits += plan.block_width[b];
    }
    return k;
}

inline uint64_t low_bits(int width) { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }

inline uint64_t extract_key(const KeyPieces &k, uint64_t fp) {
    if (k.count == 1) return (fp >> k.shift[0]) & low_bits(k.width[0]);
    uint64_t key = 0;
    for (int i = 0; i < k.count; ++i) key = (key << k.width[i]) | ((fp >> k.shift[i]) & low_bits(k.width[i]));
    return key;
}

// Room for one permuted table and its radix-sort scratch (uninitialized, reused across tables).
struct TableBuffers {
    explicit TableBuffers(size_t u) : table(new uint64_t[u ? u : 1]), scratch(new uint64_t[u ? u : 1]) {}
    std::unique_ptr<uint64_t[]> table, scratch;
};

// Index of x in the ascending array fps[0..u) that contains it. Starts from the position x would
// have if fingerprints were uniform, then gallops: one or two probes on hashed fingerprints,
// O(log u) on any data (a plain binary search would miss the cache about log2(u) times).
inline size_t find_fingerprint(const uint64_t *fps, size_t u, uint64_t x) {
    const size_t guess = static_cast<size_t>((static_cast<unsigned __int128>(x) * u) >> 64);
    size_t lo, hi;  // x is in fps[lo, hi)
    size_t step = 1;
    if (fps[guess] < x) {
        lo = guess + 1;
        hi = lo + step;
        while (hi < u && fps[hi - 1] < x) {
            lo = hi;
            step *= 2;
            hi = lo + step;
        }
        hi = std::min(hi, u);
    } else {
        hi = guess + 1;
        lo = guess;
        while (lo > 0 && fps[lo] > x) {
            hi = lo;
            step *= 2;
            lo = hi > step ? hi - step : 0;
        }
    }
    return std::lower_bound(fps + lo, fps + hi, x) - fps;
}

// Calls on_pair(i, j, distance) for distinct fingerprints fps[i] != fps[j] within the plan's
// radius whose first matching combination is `combination` (each such pair once).
template <typename OnPair>
void combination_pairs(const uint64_t *fps, size_t u, const NearPairsPlan &plan, size_t combination,
                       TableBuffers &buffers, Poller &poller, OnPair on_pair) {
    const KeyPieces pieces = key_pieces(plan, combination);
    const FirstCombination first(plan, combination);
    std::copy(fps, fps + u, buffers.table.get());
    uint64_t *sorted = radix_sort(buffers.table.get(), buffers.scratch.get(), u, pieces.bits,
                                  [&](uint64_t fp) { return extract_key(pieces, fp); }, &poller);
    std::vector<uint32_t> matches;
    size_t start = 0;
    while (start < u) {
        const uint64_t key = extract_key(pieces, sorted[start]);
        size_t end = start + 1;
        while (end < u && extract_key(pieces, sorted[end]) == key) ++end;
        const size_t len = end - start;
        if (len > 1) {
            if (matches.size() < len) matches.resize(len);
            for (size_t i = start; i + 1 < end; ++i) {
                const uint64_t x = sorted[i];
                const size_t found = select_within_radius(sorted + i + 1, end - i - 1, x, plan.radius, matches.data());
                for (size_t f = 0; f < found; ++f) {
                    const uint64_t y = sorted[i + 1 + matches[f]];
                    if (!first.owns(x, y)) continue;
                    on_pair(find_fingerprint(fps, u, x), find_fingerprint(fps, u, y), hamming_distance(x, y));
                }
                poller.tick(end - i);
            }
        } else {
            poller.tick(1);
        }
        start = end;
    }
}

// Brute force over distinct fingerprints: every pair (i < j) within the radius.
template <typename OnPair>
void brute_force_pairs(const uint64_t *fps, size_t u, int radius, Poller &poller, OnPair on_pair) {
    std::vector<uint32_t> matches(u);
    for (size_t i = 0; i + 1 < u; ++i) {
        const size_t found = select_within_radius(fps + i + 1, u - i - 1, fps[i], radius, matches.data());
        for (size_t f = 0; f < found; ++f) {
            const size_t j = i + 1 + matches[f];
            on_pair(i, j, hamming_distance(fps[i], fps[j]));
        }
        poller.step(i);
        poller.tick(u - i);
    }
}

// Every pair of distinct fingerprints within the radius, once.
template <typename OnPair>
void distinct_pairs(const uint64_t *fps, size_t u, const NearPairsPlan &plan, Poller &poller,
                    OnPair on_pair) {
    if (plan.radius == 0 || u < 2) return;
    if (plan.brute_force) {
        poller.begin("comparing all fingerprints", static_cast<uint64_t>(u) * u / 2);
        brute_force_pairs(fps, u, plan.radius, poller, on_pair);
        return;
    }
    poller.begin("scanning permuted tables", plan.tables);
    TableBuffers buffers(u);
    for (size_t c = 0; c < plan.tables; ++c) {
        poller.step(c);
        combination_pairs(fps, u, plan, c, buffers, poller, on_pair);
    }
}

// Buffers pairs for the caller's sink.
class PairWriter {
public:
    explicit PairWriter(const RunControl &control) : control_(control) { buffer_.reserve(kBatch); }
    void add(int64_t a, int64_t b, int distance) {
        if (a > b) std::swap(a, b);
        buffer_.push_back(NearPair{a, b, distance});
        if (buffer_.size() == kBatch) flush();
    }
    void flush() {
        if (!buffer_.empty() && control_.emit && !control_.emit(control_.context, buffer_.data(), buffer_.size()))
            throw StopRun();
        buffer_.clear();
    }

private:
    static constexpr size_t kBatch = 4096;
    const RunControl &control_;
    std::vector<NearPair> buffer_;
};

// Emits the id pairs of two distinct fingerprints (or of one fingerprint with itself).
inline void expand(const IdFingerprint *rows, const DistinctSet &set, size_t x, size_t y, int distance,
            PairWriter &out, Poller &poller, bool connectivity_only) {
    const uint32_t xb = set.offsets[x], xe = set.offsets[x + 1];
    const uint32_t yb = set.offsets[y], ye = set.offsets[y + 1];
    if (connectivity_only) {
        if (x != y) out.add(rows[xb].id, rows[yb].id, distance);
        else
            for (uint32_t i = xb + 1; i < xe; ++i) out.add(rows[xb].id, rows[i].id, 0);
        poller.tick(xe - xb);
        return;
    }
    if (x == y) {
        for (uint32_t i = xb; i < xe; ++i)
            for (uint32_t j = i + 1; j < xe; ++j) out.add(rows[i].id, rows[j].id, 0);
        poller.tick(static_cast<uint64_t>(xe - xb) * (xe - xb) / 2);
        return;
    }
    for (uint32_t i = xb; i < xe; ++i)
        for (uint32_t j = yb; j < ye; ++j) out.add(rows[i].id, rows[j].id, distance);
    poller.tick(static_cast<uint64_t>(xe - xb) * (ye - yb));
}

// The blocks of blocks.h, numbered from the least significant end: plan block b is layout block
// blocks - 1 - b.
inline void fill_blocks(NearPairsPlan &plan, int blocks, int key_blocks) {
    plan.blocks = blocks;
    plan.key_blocks = key_blocks;
    const BlockLayout layout = block_layout(blocks);
    for (int b = 0; b < blocks; ++b) {
        plan.block_width[b] = layout.width[blocks - 1 - b];
        plan.block_start[b] = block_low_bit(layout, blocks - 1 - b);
    }
    plan.tables = static_cast<size_t>(exact_binomial(blocks, key_blocks));
}

inline double table_plan_cost(size_t u, int blocks, int key_blocks, double tables) {
    const double key_bits = 64.0 * key_blocks / blocks;
    const double passes = std::ceil(key_bits / kRadixDigitBits);
    const double per_table = u * (passes * kCostPerRadixPass + kCostPerTableScan) +
                             0.5 * static_cast<double>(u) * u * std::pow(2.0, -key_bits) * kCostPerComparison;
    return tables * per_table;
}


// Collapses the rows, emits the pairs of identical fingerprints (if asked), then runs
// body(set, poller, out) for the pairs of distinct fingerprints; a stop request ends the run.
template <typename Body>
RunStatus run_collapsed(IdFingerprint *rows, size_t n, bool identical_pairs, const RunControl &control,
                        Body body) {
    try {
        Poller poller(control);
        PairWriter out(control);
        DistinctSet set;
        collapse(rows, n, set, poller);
        const size_t u = set.fingerprints.size();
        if (identical_pairs) {
            poller.begin("pairing identical fingerprints", u);
            for (size_t x = 0; x < u; ++x) {
                if (set.offsets[x + 1] - set.offsets[x] > 1) expand(rows, set, x, x, 0, out, poller, control.connectivity_only);
                poller.step(x + 1);
            }
        }
        body(set, poller, [&](size_t x, size_t y, int d) { expand(rows, set, x, y, d, out, poller, control.connectivity_only); });
        out.flush();
        return RunStatus::done;
    } catch (const StopRun &) {
        return RunStatus::stopped;
    }
}


class UnionFind {
public:
    explicit UnionFind(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0u); }
    uint32_t find(uint32_t x) { return row_group_root(parent_.data(), x); }
    void unite(uint32_t a, uint32_t b) {
        a = find(a);
        b = find(b);
        if (a == b) return;
        if (a < b) std::swap(a, b);
        parent_[a] = b;  // the smaller index (smaller min id, see below) stays the root
    }

private:
    std::vector<uint32_t> parent_;
};

}  // namespace engine
}  // namespace simhash

#include "cpp_only.h"
