#include "core/block_buckets.h"

#include "core/blocks.h"
#include "core/hamming.h"

namespace simhash {

namespace {

constexpr uint32_t kEmpty = UINT32_MAX;
constexpr int kMinBucketBits = 8;
constexpr int kMaxBucketBits = 16;

constexpr BlockLayout kLayout = block_layout(kBucketBlocks);
static_assert(kLayout.width[0] == kBucketBlockBits && kLayout.width[kBucketBlocks - 1] == kBucketBlockBits,
              "the buckets' blocks are the index's default blocks");

inline uint32_t block_of_key(uint64_t key, int t) { return static_cast<uint32_t>(block_value(key, kLayout, t)); }
inline uint64_t key_of(const BlockBuckets *b, uint64_t fp) { return b->order ? b->order->key(fp) : fp; }

inline uint32_t bucket_of(uint32_t block, int bits) { return (block * 0x9E3779B1u) >> (32 - bits); }

struct Probe {
    const BlockBuckets *b;
    const uint64_t *fingerprints;
    uint64_t query;
    int radius;
    int block_radius;
    uint32_t query_block[kBucketBlocks];
    BucketVisit visit;
    void *context;
    size_t visited;
};

// Entries of table t whose block equals `value`: verified, and reported only by the first table
// whose block is within the block radius, so each comes back once.
void walk(Probe *p, int t, uint32_t value) {
    const BlockBuckets *b = p->b;
    for (uint32_t e = b->heads[(static_cast<size_t>(t) << b->bucket_bits) + bucket_of(value, b->bucket_bits)];
         e != kEmpty; e = b->next[static_cast<size_t>(t) * b->capacity + e]) {
        const uint64_t fp = p->fingerprints[e];
        if (hamming_distance(fp, p->query) > p->radius) continue;
        const uint64_t key = key_of(b, fp);
        if (block_of_key(key, t) != value) continue;
        bool earlier = false;
        for (int u = 0; u < t && !earlier; ++u)
            earlier = popcount64(block_of_key(key, u) ^ p->query_block[u]) <= p->block_radius;
        if (earlier) continue;
        p->visit(e, p->context);
        p->visited++;
    }
}


}  // namespace

size_t block_buckets_bytes(int bucket_bits, size_t capacity) {
    return sizeof(uint32_t) * kBucketBlocks * ((size_t{1} << bucket_bits) + capacity);
}

int block_buckets_bits_for(size_t entries) {
    int bits = kMinBucketBits;
    while (bits < kMaxBucketBits && (size_t{1} << bits) < entries) ++bits;
    return bits;
}

void block_buckets_init(BlockBuckets *b, void *memory, int bucket_bits, size_t capacity, const BitPermuter *order) {
    b->order = order;
    b->bucket_bits = bucket_bits;
    b->capacity = capacity;
    b->n = 0;
    b->heads = static_cast<uint32_t *>(memory);
    b->next = b->heads + (static_cast<size_t>(kBucketBlocks) << bucket_bits);
    for (size_t i = 0; i < (static_cast<size_t>(kBucketBlocks) << bucket_bits); ++i) b->heads[i] = kEmpty;
}

void block_buckets_link(BlockBuckets *b, const uint64_t *fingerprints, size_t n) {
    for (size_t e = b->n; e < n; ++e) {
        const uint64_t key = key_of(b, fingerprints[e]);
        for (int t = 0; t < kBucketBlocks; ++t) {
            uint32_t *head = &b->heads[(static_cast<size_t>(t) << b->bucket_bits) +
                                       bucket_of(block_of_key(key, t), b->bucket_bits)];
            b->next[static_cast<size_t>(t) * b->capacity + e] = *head;
            *head = static_cast<uint32_t>(e);
        }
    }
    if (n > b->n) b->n = n;
}

size_t block_buckets_search(const BlockBuckets *b, const uint64_t *fingerprints, uint64_t query, int radius,
                            BucketVisit visit, void *context) {
    if (radius < 0 || b->n == 0) return 0;
    if (radius > 64) radius = 64;
    const int block_radius = radius / kBucketBlocks;
    // A probe costs a bucket lookup plus its chain (n / buckets entries on average); a scan one
    // POPCNT per entry.
    const double chain = 1.0 + static_cast<double>(b->n) / static_cast<double>(size_t{1} << b->bucket_bits);
    const double probe_cost = 2.0 * kBucketBlocks * hamming_ball_size(kBucketBlockBits, block_radius) * chain;
    if (block_radius >= kBucketBlockBits || probe_cost >= static_cast<double>(b->n)) {
        size_t visited = 0;
        uint32_t hits[1024];
        for (size_t start = 0; start < b->n; start += 1024) {
            const size_t count = b->n - start < 1024 ? b->n - start : 1024;
            const size_t nhits = select_within_radius(fingerprints + start, count, query, radius, hits);
            for (size_t h = 0; h < nhits; ++h) visit(static_cast<uint32_t>(start + hits[h]), context);
            visited += nhits;
        }
        return visited;
    }
    Probe p{b, fingerprints, query, radius, block_radius, {}, visit, context, 0};
    const uint64_t query_key = key_of(b, query);
    for (int t = 0; t < kBucketBlocks; ++t) p.query_block[t] = block_of_key(query_key, t);
    for (int t = 0; t < kBucketBlocks; ++t)
        for_each_value_within(p.query_block[t], kBucketBlockBits, block_radius, [&](uint32_t value) { walk(&p, t, value); });
    return p.visited;
}

}  // namespace simhash
