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

int popcount_portable(uint64_t x);

// How many `bits`-bit values lie within `radius` bits of a given one: sum_{i <= radius} C(bits, i),
// accumulated in doubles (exact up to 2^53; estimates beyond). 0 for a negative radius.
double hamming_ball_size(int bits, int radius);

}  // namespace simhash

#include "cpp_only.h"
