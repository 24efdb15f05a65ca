#include "core/batch_pairs.h"

#include <cstring>

#include "core/counting_sort.h"
#include "core/hamming.h"

namespace simhash {

namespace {

constexpr int kBlocks = 4;
constexpr int kBlockBits = 16;
constexpr size_t kValues = size_t{1} << kBlockBits;

// Block t of a key, block 0 the most significant bits (the index's layout for four tables).
inline uint32_t block_of(uint64_t key, int t) {
    return static_cast<uint32_t>((key >> (64 - kBlockBits * (t + 1))) & (kValues - 1));
}

struct Scratch {
    uint64_t *keys;    // n
    uint32_t *sorted;  // n
    uint32_t *starts;  // kValues + 1
};

Scratch lay_out(void *memory, size_t n) {
    Scratch s;
    s.keys = static_cast<uint64_t *>(memory);
    s.sorted = reinterpret_cast<uint32_t *>(s.keys + n);
    s.starts = s.sorted + n;
    return s;
}

void compute_keys(const uint64_t *fingerprints, size_t n, const BitPermuter *order, uint64_t *keys) {
    if (order == nullptr) {
        std::memcpy(keys, fingerprints, n * sizeof(uint64_t));
        return;
    }
    for (size_t i = 0; i < n; ++i) keys[i] = order->key(fingerprints[i]);
}

// Counting sort of the rows by block t (stable: rows ascending within a value); starts[v] is
// where value v's rows begin, starts[kValues] = n.
void sort_by_block(const Scratch &s, size_t n, int t) {
    counting_sort(
        n, kValues, s.starts, [&](size_t i) { return block_of(s.keys[i], t); },
        [&](size_t i, uint32_t at) { s.sorted[at] = static_cast<uint32_t>(i); });
}

}  // namespace

size_t batch_pairs_bytes(size_t n) {
    return n * (sizeof(uint64_t) + sizeof(uint32_t)) + (kValues + 1) * sizeof(uint32_t);
}

double batch_pairs_comparisons(const uint64_t *fingerprints, size_t n, const BitPermuter *order, void *scratch) {
    const Scratch s = lay_out(scratch, n);
    compute_keys(fingerprints, n, order, s.keys);
    double comparisons = 0;
    for (int t = 0; t < kBlocks; ++t) {
        std::memset(s.starts, 0, kValues * sizeof(uint32_t));
        for (size_t i = 0; i < n; ++i) s.starts[block_of(s.keys[i], t)]++;
        for (size_t v = 0; v < kValues; ++v) {
            const double g = s.starts[v];
            comparisons += g * (g - 1) / 2;
        }
    }
    return comparisons;
}

void batch_pairs(const uint64_t *fingerprints, size_t n, int radius, const BitPermuter *order, void *scratch,
                 BatchPairVisit visit, void *context) {
    if (n < 2 || radius < 0 || radius > kBatchPairsMaxRadius) return;  // the caller checks the radius
    const Scratch s = lay_out(scratch, n);
    compute_keys(fingerprints, n, order, s.keys);
    for (int t = 0; t < kBlocks; ++t) {
        sort_by_block(s, n, t);
        for (size_t v = 0; v < kValues; ++v) {
            const uint32_t begin = s.starts[v], end = s.starts[v + 1];
            for (uint32_t a = begin; a + 1 < end; ++a) {
                const uint32_t i = s.sorted[a];
                const uint64_t ki = s.keys[i];
                for (uint32_t b = a + 1; b < end; ++b) {
                    const uint32_t j = s.sorted[b];
                    const uint64_t kj = s.keys[j];
                    if (hamming_distance(ki, kj) > radius) continue;
                    bool earlier = false;  // reported by an earlier block the two share
                    for (int u = 0; u < t && !earlier; ++u) earlier = block_of(ki, u) == block_of(kj, u);
                    if (!earlier) visit(i, j, context);
                }
            }
        }
    }
}

}  // namespace simhash
