#include "core/block_buckets.h"

#include <algorithm>

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

inline uint64_t rotate_left(uint64_t x, int bits) { return bits % 64 == 0 ? x : (x << (bits % 64)) | (x >> (64 - bits % 64)); }

// A frozen table's stored key: the 32 bits of the key that follow the directory prefix of block t
// (the block's low bits first, then the next blocks' bits, wrapping around). They never overlap the
// prefix, so popcount(prefix difference) + popcount(key difference) <= the distance.
inline uint32_t frozen_key(uint64_t key, int t, int prefix_bits) {
    return static_cast<uint32_t>(rotate_left(key, kLayout.shift[t] + prefix_bits) >> 32);
}
inline uint32_t frozen_prefix(uint64_t key, int t, int prefix_bits) {
    return block_of_key(key, t) >> (kBucketBlockBits - prefix_bits);
}

struct Probe {
    const BlockBuckets *b;
    const uint64_t *fingerprints;
    uint64_t query;
    int radius;
    int block_radius[kBucketBlocks];  // block_probe_radius of each table; -1: not probed
    uint32_t query_block[kBucketBlocks];
    BucketVisit visit;
    void *context;
    size_t visited;
};

// Reports entry e, within the radius and found through table t (`key`: its bits in the buckets'
// order), unless an earlier table's block is within that table's block radius: each comes back once.
void report_once(Probe *p, int t, uint32_t e, uint64_t key) {
    for (int u = 0; u < t; ++u)
        if (popcount64(block_of_key(key, u) ^ p->query_block[u]) <= p->block_radius[u]) return;
    p->visit(e, p->context);
    p->visited++;
}

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
        report_once(p, t, e, key);
    }
}

// The frozen entries of table t whose block equals `value`, as walk() reports them.
void walk_frozen(Probe *p, uint64_t query_key, int t, uint32_t value) {
    const BlockBuckets *b = p->b;
    const int prefix_bits = b->bucket_bits;
    const int low_bits = kBucketBlockBits - prefix_bits;
    const uint32_t prefix = value >> low_bits;
    // The value's bits below the prefix lead the key of every entry of this block value.
    const uint32_t low_lead = low_bits == 0 ? 0 : (value & ((uint32_t{1} << low_bits) - 1)) << (32 - low_bits);
    const uint32_t low_mask = low_bits == 0 ? 0 : ~uint32_t{0} << (32 - low_bits);
    const uint32_t query_rest = frozen_key(query_key, t, prefix_bits);
    const int budget = p->radius - popcount64(prefix ^ frozen_prefix(query_key, t, prefix_bits));
    if (budget < 0) return;
    const size_t slots = (size_t{1} << prefix_bits) + 1;
    const uint32_t *offsets = b->offsets + static_cast<size_t>(t) * slots;
    const uint32_t *keys = b->keys + static_cast<size_t>(t) * b->n;
    const uint32_t *positions = b->positions + static_cast<size_t>(t) * b->n;
    uint32_t hits[256];
    for (uint32_t begin = offsets[prefix]; begin < offsets[prefix + 1]; begin += 256) {
        const uint32_t count = std::min<uint32_t>(offsets[prefix + 1] - begin, 256);
        const size_t nhits = select_keys_within(keys + begin, 1, count, low_lead, low_mask, query_rest, budget, hits);
        for (size_t h = 0; h < nhits; ++h) {
            const uint32_t e = positions[begin + hits[h]];
            const uint64_t fp = p->fingerprints[e];
            if (hamming_distance(fp, p->query) > p->radius) continue;
            report_once(p, t, e, key_of(b, fp));
        }
    }
}

}  // namespace

void block_buckets_prefetch(const BlockBuckets *b, uint64_t query, int radius) {
    if (b->n == 0 || radius < 0 || radius / kBucketBlocks > 0) return;
    const uint64_t key = key_of(b, query);
    for (int t = 0; t < kBucketBlocks && block_probe_radius(radius, kBucketBlocks, t) >= 0; ++t) {
        const uint32_t block = block_of_key(key, t);
        if (b->frozen)
            __builtin_prefetch(b->offsets + static_cast<size_t>(t) * ((size_t{1} << b->bucket_bits) + 1) +
                               (block >> (kBucketBlockBits - b->bucket_bits)));
        else
            __builtin_prefetch(b->heads + (static_cast<size_t>(t) << b->bucket_bits) + bucket_of(block, b->bucket_bits));
    }
}

void block_buckets_prefetch_entries(const BlockBuckets *b, const uint64_t *fingerprints, uint64_t query, int radius) {
    if (b->n == 0 || radius < 0 || radius / kBucketBlocks > 0) return;
    const uint64_t key = key_of(b, query);
    const int low_bits = kBucketBlockBits - b->bucket_bits;
    const size_t slots = (size_t{1} << b->bucket_bits) + 1;
    for (int t = 0; t < kBucketBlocks && block_probe_radius(radius, kBucketBlocks, t) >= 0; ++t) {
        const uint32_t block = block_of_key(key, t);
        if (b->frozen) {
            __builtin_prefetch(b->keys + static_cast<size_t>(t) * b->n + b->offsets[static_cast<size_t>(t) * slots + (block >> low_bits)]);
        } else {
            const uint32_t e = b->heads[(static_cast<size_t>(t) << b->bucket_bits) + bucket_of(block, b->bucket_bits)];
            if (e == kEmpty) continue;
            __builtin_prefetch(fingerprints + e);
            __builtin_prefetch(b->next + static_cast<size_t>(t) * b->capacity + e);
        }
    }
}

size_t block_buckets_frozen_bytes(int bucket_bits, size_t n) {
    return sizeof(uint32_t) * kBucketBlocks * ((size_t{1} << bucket_bits) + 1 + 2 * n);
}

void block_buckets_freeze(BlockBuckets *b, void *memory, int bucket_bits, const uint64_t *fingerprints, size_t n,
                          const BitPermuter *order) {
    *b = BlockBuckets{};
    b->order = order;
    b->bucket_bits = bucket_bits;
    b->n = n;
    b->frozen = true;
    const size_t slots = (size_t{1} << bucket_bits) + 1;
    b->offsets = static_cast<uint32_t *>(memory);
    b->keys = b->offsets + kBucketBlocks * slots;
    b->positions = b->keys + kBucketBlocks * n;
    for (size_t i = 0; i < kBucketBlocks * slots; ++i) b->offsets[i] = 0;
    // Counting sort per table: count each prefix into the slot after it, sum, then place.
    for (size_t e = 0; e < n; ++e) {
        const uint64_t key = key_of(b, fingerprints[e]);
        for (int t = 0; t < kBucketBlocks; ++t) b->offsets[t * slots + frozen_prefix(key, t, bucket_bits) + 1]++;
    }
    for (int t = 0; t < kBucketBlocks; ++t)
        for (size_t s = 1; s < slots; ++s) b->offsets[t * slots + s] += b->offsets[t * slots + s - 1];
    // Placing advances each prefix's start; the starts are restored afterwards.
    for (size_t e = 0; e < n; ++e) {
        const uint64_t key = key_of(b, fingerprints[e]);
        for (int t = 0; t < kBucketBlocks; ++t) {
            const uint32_t at = b->offsets[t * slots + frozen_prefix(key, t, bucket_bits)]++;
            b->keys[t * n + at] = frozen_key(key, t, bucket_bits);
            b->positions[t * n + at] = static_cast<uint32_t>(e);
        }
    }
    for (int t = 0; t < kBucketBlocks; ++t) {
        for (size_t s = slots - 1; s > 0; --s) b->offsets[t * slots + s] = b->offsets[t * slots + s - 1];
        b->offsets[t * slots] = 0;
    }
}

size_t block_buckets_bytes(int bucket_bits, size_t capacity) {
    return sizeof(uint32_t) * kBucketBlocks * ((size_t{1} << bucket_bits) + capacity);
}

int block_buckets_bits_for(size_t entries) {
    int bits = kMinBucketBits;
    while (bits < kMaxBucketBits && (size_t{1} << bits) < entries) ++bits;
    return bits;
}

void block_buckets_init(BlockBuckets *b, void *memory, int bucket_bits, size_t capacity, const BitPermuter *order) {
    *b = BlockBuckets{};
    b->order = order;
    b->bucket_bits = bucket_bits;
    b->capacity = capacity;
    b->n = 0;
    b->heads = static_cast<uint32_t *>(memory);
    b->next = b->heads + (static_cast<size_t>(kBucketBlocks) << bucket_bits);
    for (size_t i = 0; i < (static_cast<size_t>(kBucketBlocks) << bucket_bits); ++i) b->heads[i] = kEmpty;
}

void block_buckets_link(BlockBuckets *b, const uint64_t *fingerprints, size_t n) {
    if (b->frozen) return;
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
    Probe p{b, fingerprints, query, radius, {}, {}, visit, context, 0};
    // A probe costs a bucket lookup plus its chain (n / buckets entries on average); a scan one
    // POPCNT per entry.
    double probes = 0;
    for (int t = 0; t < kBucketBlocks; ++t) {
        p.block_radius[t] = block_probe_radius(radius, kBucketBlocks, t);
        probes += hamming_ball_size(kBucketBlockBits, p.block_radius[t]);
    }
    const double chain = 1.0 + static_cast<double>(b->n) / static_cast<double>(size_t{1} << b->bucket_bits);
    if (p.block_radius[0] >= kBucketBlockBits || 2.0 * probes * chain >= static_cast<double>(b->n)) {
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
    const uint64_t query_key = key_of(b, query);
    for (int t = 0; t < kBucketBlocks; ++t) p.query_block[t] = block_of_key(query_key, t);
    if (b->frozen && p.block_radius[0] == 0) {
        // One probe per table: the four key ranges are requested together (their directory lines
        // were, by block_buckets_prefetch or here), each a cache miss otherwise taken in turn.
        block_buckets_prefetch(b, query, radius);
        block_buckets_prefetch_entries(b, fingerprints, query, radius);
    }
    for (int t = 0; t < kBucketBlocks && p.block_radius[t] >= 0; ++t) {
        if (b->frozen)
            for_each_value_within(p.query_block[t], kBucketBlockBits, p.block_radius[t],
                                  [&](uint32_t value) { walk_frozen(&p, query_key, t, value); });
        else
            for_each_value_within(p.query_block[t], kBucketBlockBits, p.block_radius[t],
                                  [&](uint32_t value) { walk(&p, t, value); });
    }
    return p.visited;
}

}  // namespace simhash
