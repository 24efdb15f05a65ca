// Charikar SimHash, 64 bits: every feature hash votes +weight on each of its 1 bits and -weight on
// each of its 0 bits; fingerprint bit i is 1 when the vote on bit i is strictly positive.
#pragma once

#include <cstddef>
#include <cstdint>

#include "shingles.h"

namespace simhash {

// Unit-weight votes, counted in eight 64-bit words of byte-wide lanes: each feature costs eight
// table loads and adds instead of 64 compare-and-increment steps. Lanes are flushed into exact
// 64-bit counters before a byte can overflow.
class SimhashVote {
public:
    void add(uint64_t hash) {
        for (int b = 0; b < 8; ++b) lanes_[b] += kSpreadBits[(hash >> (8 * b)) & 0xFF];
        if (++pending_ == kMaxPending) flush();
    }
    uint64_t count() const { return total_ + pending_; }
    uint64_t fingerprint();

private:
    static constexpr uint32_t kMaxPending = 255;
    static const uint64_t kSpreadBits[256];  // byte j of kSpreadBits[v] is bit j of v
    void flush();

    uint64_t lanes_[8] = {};
    uint64_t ones_[64] = {};
    uint32_t pending_ = 0;
    uint64_t total_ = 0;
};

// Real-valued weights (TF-IDF, term frequencies). With every weight 1 it gives the same
// fingerprint as SimhashVote. A bit whose vote is a tie up to rounding (|vote| at most
// kTieTolerance of the summed |weights|) is 0, as a tie of unit votes is: real weights tie
// exactly more often than one would think (ln 3 + ln 200/3 = ln 200), and rounding would decide
// such a bit by the order in which the features were added.
class WeightedSimhashVote {
public:
    static constexpr double kTieTolerance = 1e-9;
    // A state for parallel aggregation: the 64 votes, then the summed |weights|.
    static constexpr int kStateDoubles = 65;

    void add(uint64_t hash, double weight) {
        for (int i = 0; i < 64; ++i) {
            const double sign = static_cast<double>(static_cast<int>((hash >> i) & 1) * 2 - 1);
            votes_[i] += sign * weight;
        }
        magnitude_ += weight < 0 ? -weight : weight;
    }
    void merge(const WeightedSimhashVote &other) {
        for (int i = 0; i < 64; ++i) votes_[i] += other.votes_[i];
        magnitude_ += other.magnitude_;
    }
    void save(double *state) const;
    void load(const double *state);
    // False once a vote has overflowed to an infinity (or, adding opposite infinities, to NaN):
    // the fingerprint would then be wrong, and no later addition can bring it back.
    bool finite() const;
    uint64_t fingerprint() const;

private:
    double votes_[64] = {};
    double magnitude_ = 0.0;
};

// How much each shingle of a text votes:
//   count: once per occurrence (a shingle repeated n times votes n times);
//   set:   once per distinct shingle (textbook SimHash over the set of shingles);
//   log:   1 + ln(n) for a shingle that occurs n times (sublinear term frequency).
// set and log count the distinct shingles in memory (shingle_counts.h), so a text with more than
// kMaxDistinctShingles distinct shingles throws TooManyShingles.
enum class ShingleWeighting { kCount, kSet, kLog };

// The vote of a shingle that occurs tf times: 1, 1 + ln tf, or tf.
double shingle_vote(ShingleWeighting weighting, uint32_t tf);

// Parses "count" / "set" / "log"; throws InvalidArgument otherwise.
ShingleWeighting parse_shingle_weighting(const char *name, size_t len);

// SimHash of a text's shingles (see shingles.h for the exact features), each voting once per
// occurrence. No shingles: 0. With a poll, throws Stopped when it asks to stop.
uint64_t simhash_text(const char *text, size_t len, const ShingleOptions &options = {},
                      StopPoll *poll = nullptr);

// The same with the votes of the given weighting.
uint64_t simhash_text(const char *text, size_t len, const ShingleOptions &options,
                      ShingleWeighting weighting, StopPoll *poll = nullptr);

}  // namespace simhash

#include "cpp_only.h"
