#include "hamming.h"

namespace simhash {

int popcount_portable(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return static_cast<int>((x * 0x0101010101010101ull) >> 56);
}

namespace {

#if defined(__x86_64__)
__attribute__((target("popcnt"))) int popcount_hardware(uint64_t x) {
    return __builtin_popcountll(x);
}

bool cpu_has_popcnt() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("popcnt");
}

PopcountFunction choose_popcount() { return cpu_has_popcnt() ? popcount_hardware : popcount_portable; }
#else
int popcount_builtin(uint64_t x) { return __builtin_popcountll(x); }
PopcountFunction choose_popcount() { return popcount_builtin; }
#endif

}  // namespace

PopcountFunction popcount64 = choose_popcount();

double hamming_ball_size(int bits, int radius) {
    double term = 1.0, sum = 0.0;
    for (int i = 0; i <= radius && i <= bits; ++i) {
        sum += term;
        term = term * (bits - i) / (i + 1);
    }
    return sum;
}

const char *popcount_kernel_name() {
#if defined(__x86_64__)
    return popcount64 == popcount_hardware ? "popcnt" : "portable";
#else
    return "builtin";
#endif
}

// target_clones: the dynamic loader picks the POPCNT build on CPUs that have it, once.
// The fingerprints of an index page or a batch are usually not in the CPU caches: the loop asks
// for the cache lines kPrefetchAhead fingerprints ahead, so their loads overlap instead of each
// line's miss stalling the loop in turn (a prefetch past the end is harmless: it never faults).
constexpr size_t kPrefetchAhead = 64;  // 512 bytes, 8 cache lines

__attribute__((target_clones("popcnt", "default"))) size_t select_within_radius(
    const uint64_t *fingerprints, size_t n, uint64_t query, int radius, uint32_t *matches) {
    size_t found = 0;
    for (size_t line = 0; line < kPrefetchAhead && line < n; line += 8) __builtin_prefetch(fingerprints + line);
    for (size_t i = 0; i < n; ++i) {
        if ((i & 7) == 0) __builtin_prefetch(fingerprints + i + kPrefetchAhead);
        matches[found] = static_cast<uint32_t>(i);
        found += __builtin_popcountll(fingerprints[i] ^ query) <= radius;
    }
    return found;
}

__attribute__((target_clones("popcnt", "default"))) size_t select_keys_within(
    const uint32_t *keys, size_t stride, size_t n, uint32_t lead, uint32_t lead_mask, uint32_t query, int budget,
    uint32_t *matches) {
    size_t found = 0;
    for (size_t i = 0; i < n; ++i) {
        const uint32_t key = keys[i * stride];
        matches[found] = static_cast<uint32_t>(i);
        found += ((key ^ lead) & lead_mask) == 0 && __builtin_popcount(key ^ query) <= budget;
    }
    return found;
}

}  // namespace simhash
