#include "core/value_groups.h"

#include "core/counting_sort.h"

namespace simhash {

namespace {

size_t round_up8(size_t bytes) { return (bytes + 7) & ~size_t{7}; }

void set_bit(uint64_t *bitmap, uint32_t i) { bitmap[i >> 6] |= uint64_t{1} << (i & 63); }

}  // namespace

size_t value_groups_bytes(int bits, size_t n) {
    return round_up8(sizeof(uint32_t) * ((size_t{1} << bits) + 1)) + round_up8(sizeof(uint32_t) * n);
}

void value_groups_build(ValueGroups *groups, void *memory, int bits, const uint32_t *blocks, size_t n) {
    char *p = static_cast<char *>(memory);
    groups->bits = bits;
    groups->first = reinterpret_cast<uint32_t *>(p);
    p += round_up8(sizeof(uint32_t) * ((size_t{1} << bits) + 1));
    groups->members = reinterpret_cast<uint32_t *>(p);
    groups->n = n;
    counting_sort(
        n, size_t{1} << bits, groups->first, [&](size_t i) { return blocks[i]; },
        [&](size_t i, uint32_t at) { groups->members[at] = static_cast<uint32_t>(i); });
}

size_t value_groups_gather(const ValueGroups *groups, uint32_t value, int radius, uint32_t *out) {
    const uint32_t *first = groups->first;
    size_t n = 0;
    auto take = [&](uint32_t v) {
        for (uint32_t k = first[v]; k < first[v + 1]; ++k) out[n++] = k;
    };
    take(value);
    if (radius >= 1)
        for (int b = 0; b < groups->bits; ++b) take(value ^ (uint32_t{1} << b));
    return n;
}

void value_groups_mark(const ValueGroups *groups, int radius, int shift, uint64_t *bitmap) {
    const uint32_t *first = groups->first;
    const uint32_t values = uint32_t{1} << groups->bits;
    for (uint32_t v = 0; v < values; ++v) {
        if (first[v + 1] == first[v]) continue;
        set_bit(bitmap, v >> shift);
        if (radius >= 1)
            for (int b = 0; b < groups->bits; ++b) set_bit(bitmap, (v ^ (uint32_t{1} << b)) >> shift);
    }
}

}  // namespace simhash
