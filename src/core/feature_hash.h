// The hash of one feature (a shingle, a lexeme, a caller-supplied string): XXH3 64-bit, seed 0,
// over the feature's bytes. xxHash is compiled into each object with XXH_INLINE_ALL, so the
// extension exports none of its symbols and cannot clash with another library's copy.
#pragma once

#include <cstddef>
#include <cstdint>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace simhash {

inline uint64_t feature_hash(const void *data, size_t len) { return XXH3_64bits(data, len); }

}  // namespace simhash

#include "cpp_only.h"
