#include "simhash.h"

#include <cfloat>
#include <cmath>

#include <cstring>
#include <string>

#include "feature_hash.h"
#include "shingle_counts.h"

namespace simhash {

namespace {
struct SpreadTable {
    uint64_t v[256];
    constexpr SpreadTable() : v() {
        for (int x = 0; x < 256; ++x) {
            uint64_t spread = 0;
            for (int j = 0; j < 8; ++j) spread |= static_cast<uint64_t>((x >> j) & 1) << (8 * j);
            v[x] = spread;
        }
    }
};
constexpr SpreadTable kSpread;
}  // namespace

const uint64_t SimhashVote::kSpreadBits[256] = {
#define S(i) kSpread.v[i]
#define S8(i) S(i), S(i + 1), S(i + 2), S(i + 3), S(i + 4), S(i + 5), S(i + 6), S(i + 7)
#define S64(i) S8(i), S8(i + 8), S8(i + 16), S8(i + 24), S8(i + 32), S8(i + 40), S8(i + 48), S8(i + 56)
    S64(0), S64(64), S64(128), S64(192)
#undef S64
#undef S8
#undef S
};

void SimhashVote::flush() {
    for (int b = 0; b < 8; ++b) {
        for (int j = 0; j < 8; ++j) ones_[8 * b + j] += (lanes_[b] >> (8 * j)) & 0xFF;
        lanes_[b] = 0;
    }
    total_ += pending_;
    pending_ = 0;
}

uint64_t SimhashVote::fingerprint() {
    flush();
    uint64_t fp = 0;
    // Vote on bit i = ones - zeros = 2 * ones - total; ties give 0.
    for (int i = 0; i < 64; ++i) fp |= static_cast<uint64_t>(2 * ones_[i] > total_) << i;
    return fp;
}

uint64_t WeightedSimhashVote::fingerprint() const {
    // Summed |weights| may overflow where the votes do not (opposite weights cancel in a vote).
    const double tie = kTieTolerance * (std::isfinite(magnitude_) ? magnitude_ : DBL_MAX);
    uint64_t fp = 0;
    for (int i = 0; i < 64; ++i) fp |= static_cast<uint64_t>(votes_[i] > tie) << i;
    return fp;
}

void WeightedSimhashVote::save(double *state) const {
    std::memcpy(state, votes_, sizeof(votes_));
    state[64] = magnitude_;
}

void WeightedSimhashVote::load(const double *state) {
    std::memcpy(votes_, state, sizeof(votes_));
    magnitude_ = state[64];
}

bool WeightedSimhashVote::finite() const {
    for (double vote : votes_)
        if (!std::isfinite(vote)) return false;
    return true;
}

uint64_t simhash_text(const char *text, size_t len, const ShingleOptions &options, StopPoll *poll) {
    SimhashVote vote;
    for_each_shingle(
        text, len, options, [&](const char *data, size_t n) { vote.add(feature_hash(data, n)); }, poll);
    return vote.fingerprint();
}

double shingle_vote(ShingleWeighting weighting, uint32_t tf) {
    switch (weighting) {
        case ShingleWeighting::kSet:
            return 1.0;
        case ShingleWeighting::kLog:
            return 1.0 + std::log(static_cast<double>(tf));
        case ShingleWeighting::kCount:
            break;
    }
    return static_cast<double>(tf);
}

ShingleWeighting parse_shingle_weighting(const char *name, size_t len) {
    if (len == 5 && std::memcmp(name, "count", 5) == 0) return ShingleWeighting::kCount;
    if (len == 3 && std::memcmp(name, "set", 3) == 0) return ShingleWeighting::kSet;
    if (len == 3 && std::memcmp(name, "log", 3) == 0) return ShingleWeighting::kLog;
    throw InvalidArgument("shingle weighting " + quoted_option(name, len) +
                          " is not recognized: use 'set' (each distinct shingle votes once), "
                          "'log' (1 + ln of its count) or 'count' (every occurrence votes)");
}

uint64_t simhash_text(const char *text, size_t len, const ShingleOptions &options,
                      ShingleWeighting weighting, StopPoll *poll) {
    if (weighting == ShingleWeighting::kCount) return simhash_text(text, len, options, poll);
    if (weighting == ShingleWeighting::kSet) {
        // Each shingle votes when it is first seen: no walk over the table afterwards.
        SimhashVote vote;
        distinct_shingles(text, len, options, poll, [&](uint64_t hash) { vote.add(hash); });
        return vote.fingerprint();
    }
    const ShingleCounts counts = count_shingles(text, len, options, poll);
    WeightedSimhashVote vote;
    counts.for_each([&](uint64_t hash, uint32_t n) { vote.add(hash, shingle_vote(ShingleWeighting::kLog, n)); });
    return vote.fingerprint();
}

}  // namespace simhash
