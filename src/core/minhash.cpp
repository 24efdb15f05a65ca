#include "minhash.h"

#include <cstring>
#include <string>

#include "feature_hash.h"
#include "shingle_counts.h"

namespace simhash {

namespace {
uint64_t splitmix64(uint64_t &state) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Compiled three times: AVX-512 or AVX2 lanes where the CPU has them (chosen once by the loader
// through an ifunc), SSE2
// otherwise. Every operation is exact 64-bit integer arithmetic, so both give identical results.
__attribute__((target_clones("avx512f", "avx2", "default"))) void update_slots(
    const uint32_t *a_low, const uint32_t *a_high, const uint64_t *b, int slots, uint32_t x,
    uint64_t *mins) {
    const uint64_t p = kMersenne61;
    const uint64_t low29 = (uint64_t{1} << 29) - 1;
    for (int i = 0; i < slots; ++i) {
        const uint64_t lo = static_cast<uint64_t>(a_low[i]) * x;   // < 2^64
        const uint64_t hi = static_cast<uint64_t>(a_high[i]) * x;  // < 2^61, weighs 2^32
        // hi * 2^32 mod p: bits above 2^61 wrap around to bit 0 because 2^61 = 1 (mod p).
        uint64_t s = (hi >> 29) + ((hi & low29) << 32) + (lo & p) + (lo >> 61) + b[i];  // < 2^63
        s = (s & p) + (s >> 61);
        s = s >= p ? s - p : s;
        mins[i] = s < mins[i] ? s : mins[i];
    }
}
}  // namespace

MinhashFamily::MinhashFamily(int slots, uint64_t seed) : slots_(slots) {
    if (slots < 1 || slots > kMaxMinhashSlots)
        throw InvalidArgument("slots must be between 1 and " + std::to_string(kMaxMinhashSlots));
    a_low_.resize(slots);
    a_high_.resize(slots);
    b_.resize(slots);
    uint64_t state = seed;
    for (int i = 0; i < slots; ++i) {
        const uint64_t a = 1 + splitmix64(state) % (kMersenne61 - 1);
        b_[i] = splitmix64(state) % kMersenne61;
        a_low_[i] = static_cast<uint32_t>(a);
        a_high_[i] = static_cast<uint32_t>(a >> 32);
    }
}

void MinhashFamily::update(uint32_t x, uint64_t *mins) const {
    update_slots(a_low_.data(), a_high_.data(), b_.data(), slots_, x, mins);
}

uint64_t universal_hash_reference(uint64_t a, uint64_t b, uint32_t x) {
    unsigned __int128 v = static_cast<unsigned __int128>(a) * x + b;
    return static_cast<uint64_t>(v % kMersenne61);
}

void MinhashSketch::write_signature(uint32_t *out) const {
    for (size_t i = 0; i < mins_.size(); ++i) out[i] = static_cast<uint32_t>(mins_[i] >> 29);
}

std::vector<uint32_t> MinhashSketch::signature() const {
    std::vector<uint32_t> sig(mins_.size());
    write_signature(sig.data());
    return sig;
}

void minhash_merge(const uint32_t *a, const uint32_t *b, size_t slots, uint32_t *out) {
    for (size_t i = 0; i < slots; ++i) out[i] = a[i] < b[i] ? a[i] : b[i];
}

namespace {
// Remembers recently added feature hashes in a direct-mapped table, so that a repeated shingle
// (a frequent word, a repeated line) skips the update of every slot. A minimum is unchanged by
// adding the same feature again, so skipping a repeat never changes a signature; a repeat the
// table has forgotten is only added again. The table is sized for the features expected (up to
// kMaxSlots) and only that part is cleared: a short document does not pay for a long one's table.
class RecentFeatures {
public:
    explicit RecentFeatures(size_t expected) {
        while (slots_ < expected && slots_ < kMaxSlots) slots_ *= 2;
        std::memset(table_, 0, slots_ * sizeof(uint64_t));
    }
    // True when hash was added since its slot last changed; otherwise remembers it.
    bool seen(uint64_t hash) {
        uint64_t &slot = table_[hash & (slots_ - 1)];
        if (slot == hash && hash != 0) return true;
        slot = hash;
        return false;
    }

private:
    static constexpr size_t kMaxSlots = 2048;
    size_t slots_ = 16;
    uint64_t table_[kMaxSlots];  // the first slots_ entries are in use
};
}  // namespace

void MinhashSketch::add_all(const uint64_t *feature_hashes, size_t n, StopPoll *poll) {
    RecentFeatures recent(n);
    for (size_t i = 0; i < n; ++i) {
        if (!recent.seen(feature_hashes[i])) add(feature_hashes[i]);
        tick(poll, static_cast<uint64_t>(family_.slots()));
    }
}

void MinhashSketch::add_text(const char *text, size_t len, const ShingleOptions &options,
                             StopPoll *poll) {
    RecentFeatures recent(expected_distinct_shingles(len, options));
    for_each_shingle(
        text, len, options,
        [&](const char *data, size_t n) {
            const uint64_t hash = feature_hash(data, n);
            if (!recent.seen(hash)) add(hash);
            tick(poll, static_cast<uint64_t>(family_.slots()));
        },
        poll);
}

std::vector<uint32_t> minhash_text(const char *text, size_t len, const MinhashFamily &family,
                                   const ShingleOptions &options, StopPoll *poll) {
    MinhashSketch sketch(family);
    sketch.add_text(text, len, options, poll);
    return sketch.signature();
}

namespace {
// The family of every one-bit MinHash fingerprint: built once, never changed.
const MinhashFamily &minhash64_family() {
    static const MinhashFamily family(kMinhash64Slots, 0);
    return family;
}

uint64_t minhash64_of(const MinhashSketch &sketch) {
    if (sketch.empty()) return 0;
    uint32_t signature[kMinhash64Slots];
    sketch.write_signature(signature);
    return minhash64_from_signature(signature);
}
}  // namespace

uint64_t minhash64_from_signature(const uint32_t *signature) {
    uint64_t fingerprint = 0;
    for (int i = 0; i < kMinhash64Slots; ++i) fingerprint |= static_cast<uint64_t>(signature[i] & 1) << i;
    return fingerprint;
}

uint64_t minhash64_text(const char *text, size_t len, const ShingleOptions &options, StopPoll *poll) {
    MinhashSketch sketch(minhash64_family());
    sketch.add_text(text, len, options, poll);
    return minhash64_of(sketch);
}

uint64_t minhash64_text(const char *text, size_t len, const ShingleOptions &options, StopPoll *poll,
                        uint32_t *signature) {
    MinhashSketch sketch(minhash64_family());
    sketch.add_text(text, len, options, poll);
    sketch.write_signature(signature);
    return sketch.empty() ? 0 : minhash64_from_signature(signature);
}

uint64_t minhash64_hashes(const uint64_t *feature_hashes, size_t n, StopPoll *poll) {
    MinhashSketch sketch(minhash64_family());
    sketch.add_all(feature_hashes, n, poll);
    return minhash64_of(sketch);
}

double minhash_jaccard(const uint32_t *a, const uint32_t *b, size_t slots) {
    size_t equal = 0;
    for (size_t i = 0; i < slots; ++i) equal += a[i] == b[i];
    return slots == 0 ? 0.0 : static_cast<double>(equal) / static_cast<double>(slots);
}

}  // namespace simhash
