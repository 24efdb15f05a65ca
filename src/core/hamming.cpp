#include "hamming.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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

// The fingerprints of an index page or a batch are usually not in the CPU caches: the loops ask
// for the cache lines kPrefetchAhead fingerprints ahead, so their loads overlap instead of each
// line's miss stalling the loop in turn. They stop at the end of the n given: a probe reads a
// few dozen entries in a small index, and lines past them would only crowd the reads in flight.
constexpr size_t kPrefetchAhead = 128;  // 1 kB, 16 cache lines
// The keys of a ref page's range: a probe of a four-table run of 100M entries reads about 1,500
// refs (12 kB) from one place, and its loop waited on their loads.
constexpr size_t kKeysAhead = 256;  // 1 kB of keys, 2 kB of refs

// The line of the fingerprint kPrefetchAhead after i, if it is one of the n given.
inline void prefetch_fingerprints_ahead(const uint64_t *fingerprints, size_t i, size_t n) {
    if (i + kPrefetchAhead < n) __builtin_prefetch(fingerprints + i + kPrefetchAhead);
}
// The lines of the 16 keys kKeysAhead after i, if they are among the n given: one line at stride
// 1, two at stride 2 (the refs' (key, position) pairs).
inline void prefetch_keys_ahead(const uint32_t *keys, size_t stride, size_t i, size_t n) {
    if (i + kKeysAhead >= n) return;
    const uint32_t *ahead = keys + (i + kKeysAhead) * stride;
    __builtin_prefetch(ahead);
    if (stride == 2) __builtin_prefetch(ahead + 16);
}

// target_clones: the dynamic loader picks the POPCNT build on CPUs that have it, once.
__attribute__((target_clones("popcnt", "default"))) size_t select_within_radius_scalar(
    const uint64_t *fingerprints, size_t n, uint64_t query, int radius, uint32_t *matches) {
    size_t found = 0;
    for (size_t line = 0; line < kPrefetchAhead && line < n; line += 8) __builtin_prefetch(fingerprints + line);
    for (size_t i = 0; i < n; ++i) {
        if ((i & 7) == 0) prefetch_fingerprints_ahead(fingerprints, i, n);
        matches[found] = static_cast<uint32_t>(i);
        found += __builtin_popcountll(fingerprints[i] ^ query) <= radius;
    }
    return found;
}

__attribute__((target_clones("popcnt", "default"))) size_t select_keys_within_scalar(
    const uint32_t *keys, size_t stride, size_t n, uint32_t lead, uint32_t lead_mask, uint32_t query, int budget,
    uint32_t *matches) {
    size_t found = 0;
    for (size_t i = 0; i < n; ++i) {
        if ((i & 15) == 0) prefetch_keys_ahead(keys, stride, i, n);  // as the vector loop does
        const uint32_t key = keys[i * stride];
        matches[found] = static_cast<uint32_t>(i);
        found += ((key ^ lead) & lead_mask) == 0 && __builtin_popcount(key ^ query) <= budget;
    }
    return found;
}

namespace {

#if defined(__x86_64__)
// AVX-512 with per-lane popcounts (VPOPCNTDQ): 8 fingerprints or 16 keys an instruction. The
// selected indexes are compressed in a register and stored whole (a compressing store to memory
// is microcoded and slow on some CPUs): in the main loops found <= i and i + lanes <= n, so the
// store stays within the n slots the caller provides; the tails store only the selected lanes.
#define SIMHASH_AVX512_KERNEL __attribute__((target("popcnt,avx512f,avx512vl,avx512vpopcntdq")))

SIMHASH_AVX512_KERNEL size_t select_within_radius_avx512(const uint64_t *fingerprints, size_t n, uint64_t query,
                                                         int radius, uint32_t *matches) {
    const __m512i q = _mm512_set1_epi64(static_cast<long long>(query));
    const __m512i r = _mm512_set1_epi64(radius);
    __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i step = _mm256_set1_epi32(8);
    size_t found = 0;
    for (size_t line = 0; line < kPrefetchAhead && line < n; line += 8) __builtin_prefetch(fingerprints + line);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        prefetch_fingerprints_ahead(fingerprints, i, n);
        const __m512i distance = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_loadu_si512(fingerprints + i), q));
        const __mmask8 within = _mm512_cmple_epi64_mask(distance, r);
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(matches + found), _mm256_maskz_compress_epi32(within, index));
        found += static_cast<size_t>(__builtin_popcount(within));
        index = _mm256_add_epi32(index, step);
    }
    if (i < n) {
        const __mmask8 tail = static_cast<__mmask8>((1u << (n - i)) - 1);
        const __m512i distance = _mm512_popcnt_epi64(_mm512_xor_si512(_mm512_maskz_loadu_epi64(tail, fingerprints + i), q));
        const __mmask8 within = _mm512_mask_cmple_epi64_mask(tail, distance, r);
        const int count = __builtin_popcount(within);
        _mm256_mask_storeu_epi32(matches + found, static_cast<__mmask8>((1u << count) - 1),
                                 _mm256_maskz_compress_epi32(within, index));
        found += static_cast<size_t>(count);
    }
    return found;
}

// The 16 keys of keys[0], keys[stride], ...: one load for stride 1, two loads and a permutation
// for stride 2 (the refs' (key, position) pairs). `lanes`: how many keys are valid (1..16).
SIMHASH_AVX512_KERNEL inline __m512i load_keys(const uint32_t *keys, size_t stride, unsigned lanes) {
    if (stride == 1) return _mm512_maskz_loadu_epi32(static_cast<__mmask16>((1u << lanes) - 1), keys);
    const unsigned words = 2 * lanes;  // 2..32
    const __mmask16 low = static_cast<__mmask16>(words >= 16 ? 0xFFFFu : (1u << words) - 1);
    const __mmask16 high = static_cast<__mmask16>(words <= 16 ? 0u : words >= 32 ? 0xFFFFu : (1u << (words - 16)) - 1);
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_epi32(_mm512_maskz_loadu_epi32(low, keys), even,
                                     _mm512_maskz_loadu_epi32(high, keys + 16));
}

SIMHASH_AVX512_KERNEL size_t select_keys_within_avx512(const uint32_t *keys, size_t stride, size_t n, uint32_t lead,
                                                       uint32_t lead_mask, uint32_t query, int budget,
                                                       uint32_t *matches) {
    const __m512i vlead = _mm512_set1_epi32(static_cast<int>(lead));
    const __m512i vmask = _mm512_set1_epi32(static_cast<int>(lead_mask));
    const __m512i vquery = _mm512_set1_epi32(static_cast<int>(query));
    const __m512i vbudget = _mm512_set1_epi32(budget);
    __m512i index = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i step = _mm512_set1_epi32(16);
    size_t found = 0;
    for (size_t i = 0; i < n; i += 16) {
        prefetch_keys_ahead(keys, stride, i, n);
        const unsigned lanes = static_cast<unsigned>(n - i < 16 ? n - i : 16);
        const __m512i key = load_keys(keys + i * stride, stride, lanes);
        const __mmask16 valid = static_cast<__mmask16>(lanes == 16 ? 0xFFFFu : (1u << lanes) - 1);
        const __mmask16 led = _mm512_mask_testn_epi32_mask(valid, _mm512_xor_si512(key, vlead), vmask);
        const __mmask16 within =
            _mm512_mask_cmple_epi32_mask(led, _mm512_popcnt_epi32(_mm512_xor_si512(key, vquery)), vbudget);
        const __m512i selected = _mm512_maskz_compress_epi32(within, index);
        const int count = __builtin_popcount(within);
        if (lanes == 16)
            _mm512_storeu_si512(matches + found, selected);
        else
            _mm512_mask_storeu_epi32(matches + found, static_cast<__mmask16>((1u << count) - 1), selected);
        found += static_cast<size_t>(count);
        index = _mm512_add_epi32(index, step);
    }
    return found;
}

bool cpu_has_avx512_popcount() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512vpopcntdq");
}
const bool use_avx512 = cpu_has_avx512_popcount();
#else
constexpr bool use_avx512 = false;
#endif

}  // namespace

const char *select_kernel_name() { return use_avx512 ? "avx512" : "scalar"; }

size_t select_within_radius(const uint64_t *fingerprints, size_t n, uint64_t query, int radius, uint32_t *matches) {
#if defined(__x86_64__)
    if (use_avx512) return select_within_radius_avx512(fingerprints, n, query, radius, matches);
#endif
    return select_within_radius_scalar(fingerprints, n, query, radius, matches);
}

size_t select_keys_within(const uint32_t *keys, size_t stride, size_t n, uint32_t lead, uint32_t lead_mask,
                          uint32_t query, int budget, uint32_t *matches) {
#if defined(__x86_64__)
    if (use_avx512 && (stride == 1 || stride == 2))
        return select_keys_within_avx512(keys, stride, n, lead, lead_mask, query, budget, matches);
#endif
    return select_keys_within_scalar(keys, stride, n, lead, lead_mask, query, budget, matches);
}

}  // namespace simhash
