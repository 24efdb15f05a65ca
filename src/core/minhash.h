// MinHash signatures (Broder) with a true 2-universal hash family and no overflow.
//
// Slot i hashes a feature x with h_i(x) = (a_i * x + b_i) mod p, p = 2^61 - 1 (a Mersenne prime),
// 1 <= a_i < p, 0 <= b_i < p, and keeps the minimum over the set's features. x is the low 32 bits
// of the feature's XXH3 hash (as datasketch uses 32-bit feature hashes). The parameters come from
// SplitMix64 seeded with the user's seed: for each slot in order, a_i = 1 + next() mod (p - 1),
// then b_i = next() mod p. A signature slot is the top 32 bits of the 61-bit minimum (bits 29..60);
// an empty feature set gives 0xFFFFFFFF in every slot. The products are computed exactly in 64-bit
// lanes (a_i is split into 32 + 29 bits), so the arithmetic is the textbook family, not
// numpy-style wrapped int64 arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "shingles.h"

namespace simhash {

constexpr uint64_t kMersenne61 = (uint64_t{1} << 61) - 1;
constexpr int kMaxMinhashSlots = 8192;
constexpr int kDefaultMinhashSlots = 128;

class MinhashFamily {
public:
    MinhashFamily(int slots, uint64_t seed);
    int slots() const { return slots_; }
    uint64_t a(int i) const { return (static_cast<uint64_t>(a_high_[i]) << 32) | a_low_[i]; }
    uint64_t b(int i) const { return b_[i]; }

    // mins[i] = min(mins[i], h_i(x)) for every slot. mins has slots() entries, initialized with
    // initial_minimum().
    void update(uint32_t x, uint64_t *mins) const;
    static constexpr uint64_t initial_minimum() { return kMersenne61; }

private:
    int slots_;
    std::vector<uint32_t> a_low_;   // low 32 bits of a_i
    std::vector<uint32_t> a_high_;  // high 29 bits of a_i
    std::vector<uint64_t> b_;
};

// h(x) = (a * x + b) mod (2^61 - 1) with 128-bit arithmetic: the reference the fast path is
// tested against.
uint64_t universal_hash_reference(uint64_t a, uint64_t b, uint32_t x);

// Signature of a text's shingles (see shingles.h for the exact features). With a poll, throws
// Stopped when it asks to stop.
std::vector<uint32_t> minhash_text(const char *text, size_t len, const MinhashFamily &family,
                                   const ShingleOptions &options = {}, StopPoll *poll = nullptr);

// Accumulates a signature from feature hashes.
class MinhashSketch {
public:
    explicit MinhashSketch(const MinhashFamily &family)
        : family_(family), mins_(family.slots(), MinhashFamily::initial_minimum()) {}
    void add(uint64_t feature_hash) { family_.update(static_cast<uint32_t>(feature_hash), mins_.data()); }
    // add() for every hash, ticking the poll with one unit per slot updated.
    void add_all(const uint64_t *feature_hashes, size_t n, StopPoll *poll = nullptr);
    // The shingles of a text (see shingles.h), ticking the poll as add_all does.
    void add_text(const char *text, size_t len, const ShingleOptions &options, StopPoll *poll = nullptr);
    // Writes slots() values: the top 32 bits (bits 29..60) of each 61-bit minimum. Keeping the
    // top bits preserves order, so the element-wise unsigned minimum of two signatures is exactly
    // the signature of the union of the two sets (signatures are mergeable).
    void write_signature(uint32_t *out) const;
    std::vector<uint32_t> signature() const;
    // True until a feature has been added: every slot's value is below initial_minimum() after one.
    bool empty() const { return mins_[0] == MinhashFamily::initial_minimum(); }

private:
    const MinhashFamily &family_;
    std::vector<uint64_t> mins_;
};

// One-bit MinHash: a 64-bit fingerprint compared by Hamming distance, like a SimHash (b-bit
// minwise hashing with b = 1, Li and König, WWW 2010). Bit i is the lowest bit of slot i of the
// 64-slot signature with seed 0 (bit 29 of the slot's 61-bit minimum); a set with no features
// gives 0, as SimHash does. Two sets of Jaccard similarity J share a slot's minimum with
// probability J, and two different minima agree on a bit with probability 1/2, so each bit of
// their fingerprints differs with probability (1 - J) / 2 and the distance is Binomial(64,
// (1 - J) / 2): 32 (1 - J) bits on average. SimHash's per-bit probability, theta / pi, grows like
// the square root of 1 - J near J = 1; this one grows like 1 - J, which puts near-duplicates
// closer (J = 0.9: 3.2 bits on average against SimHash's 6.6).
constexpr int kMinhash64Slots = 64;
uint64_t minhash64_from_signature(const uint32_t *signature);
uint64_t minhash64_text(const char *text, size_t len, const ShingleOptions &options = {},
                        StopPoll *poll = nullptr);
// minhash64_text that also writes the kMinhash64Slots-slot signature its bits come from (every
// slot 0xFFFFFFFF for a text with no shingles), for callers that compare the slots too.
uint64_t minhash64_text(const char *text, size_t len, const ShingleOptions &options, StopPoll *poll,
                        uint32_t *signature);
uint64_t minhash64_hashes(const uint64_t *feature_hashes, size_t n, StopPoll *poll = nullptr);

// Element-wise unsigned minimum: the signature of the union of the two sets.
void minhash_merge(const uint32_t *a, const uint32_t *b, size_t slots, uint32_t *out);

// Fraction of equal slots: an unbiased estimate of the Jaccard similarity of the two sets.
double minhash_jaccard(const uint32_t *a, const uint32_t *b, size_t slots);

}  // namespace simhash

#include "cpp_only.h"
