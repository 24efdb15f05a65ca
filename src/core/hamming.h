// Hamming distance between 64-bit fingerprints. Debian's PostgreSQL builds extensions with -O2 and
// no -mpopcnt, where __builtin_popcountll is a slow library call; the POPCNT instruction is
// chosen once, when the library is loaded, if the CPU has it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace simhash {

using PopcountFunction = int (*)(uint64_t);
extern PopcountFunction popcount64;

// Name of the kernel chosen at load time ("popcnt" or "portable"), for diagnostics.
const char *popcount_kernel_name();

inline int hamming_distance(uint64_t a, uint64_t b) { return popcount64(a ^ b); }

// Writes the indexes of the fingerprints within `radius` bits of `query` to `matches` (room for n)
// and returns how many there are. The hot loop of index scans and batch joins.
size_t select_within_radius(const uint64_t *fingerprints, size_t n, uint64_t query, int radius,
                            uint32_t *matches);

// Writes the indexes i of the 32-bit keys keys[i * stride] (i < n) that agree with `lead` on the
// bits of `lead_mask` and lie within `budget` bits of `query` to `matches` (room for n), and returns
// how many there are. The filter of an index probe: a run's refs (key, position) and the sorted
// keys of a run's copy keep 32 bits of each entry beyond the probed prefix.
size_t select_keys_within(const uint32_t *keys, size_t stride, size_t n, uint32_t lead, uint32_t lead_mask,
                          uint32_t query, int budget, uint32_t *matches);

// The kernels behind the two selections: "avx512" (AVX-512 with VPOPCNTDQ: 8 fingerprints or 16
// keys an instruction) where the CPU has it, else "scalar"; chosen once, when the library loads.
const char *select_kernel_name();

// The scalar kernels, whatever the CPU (the unit tests hold both kernels to the same definition).
size_t select_within_radius_scalar(const uint64_t *fingerprints, size_t n, uint64_t query, int radius,
                                   uint32_t *matches);
size_t select_keys_within_scalar(const uint32_t *keys, size_t stride, size_t n, uint32_t lead, uint32_t lead_mask,
                                 uint32_t query, int budget, uint32_t *matches);

int popcount_portable(uint64_t x);

// How many `bits`-bit values lie within `radius` bits of a given one: sum_{i <= radius} C(bits, i),
// accumulated in doubles (exact up to 2^53; estimates beyond). 0 for a negative radius.
double hamming_ball_size(int bits, int radius);

}  // namespace simhash

#include "cpp_only.h"
