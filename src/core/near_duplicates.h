// Verified near-duplicates without chaining: the core of near_duplicates().
//
// Documents are numbered by rank (the order in which they may keep: smallest id first, or the
// query's order). Candidate pairs come from a fingerprint join (near_pairs.h) and arrive sorted
// by (lower rank, higher rank). One pass over them decides every document:
//  - the lower document of a pair, if still undecided, becomes a keeper;
//  - the higher one, if still undecided, is compared with the lower one's keeper (the lower one
//    itself when it keeps, its keeper when it is a duplicate), and becomes that keeper's
//    duplicate when their similarity reaches the threshold.
// So every duplicate is verified against its own keeper, never only against another member: a
// chain of small edits cannot join documents that share little (a keeper's duplicates are all
// within the threshold of it). Candidates reached through a duplicate (the member's own
// candidate pairs) are compared with the member's keeper, so a keeper also collects documents
// its fingerprint missed but a copy of it found.
//
// Verification is exact: the two documents' sets of shingles (shingles.h) are compared, by their
// Jaccard similarity or their overlap |A ∩ B| / min(|A|, |B|) ("containment": one is mostly
// inside the other), or, when the caller gives MinHash signatures instead, by the fraction of
// equal slots. A sketch of 64 four-bit MinHash slots per document may screen the candidates first:
// a pair whose sketch estimate is below the threshold by kSketchMargin or more is not verified
// (a pair at the threshold is screened out with probability below 1e-6). Byte-identical texts
// have similarity 1 without being shingled.
#pragma once

#include <cstddef>
#include <cstdint>

#include "near_pairs.h"
#include "shingle_counts.h"
#include "shingles.h"
#include "stop_poll.h"

namespace simhash {

enum class DuplicateMeasure { jaccard, containment };

// Parses "jaccard" / "containment"; throws InvalidArgument otherwise.
DuplicateMeasure parse_duplicate_measure(const char *name, size_t len);

// The similarity of two shingle sets under a measure: Jaccard, or the overlap coefficient
// |A ∩ B| / min(|A|, |B|); under both an empty set is similar (1) only to another empty set.
double duplicate_similarity(const SetOverlap &overlap, DuplicateMeasure measure);

// Sketches: 64 MinHash slots of 4 bits each (bits 1..4 of each slot; bit 0 is minhash64's).
constexpr int kDuplicateSketchSlots = 64;
constexpr size_t kDuplicateSketchBytes = kDuplicateSketchSlots / 2;
// How far below the threshold a sketch estimate may be before the pair is left unverified: the
// estimate's standard deviation is at most 0.065 (64 slots, a 1/16 chance that two different
// slots agree on 4 bits), so a pair at the threshold falls 0.3 below with probability < 1e-6.
constexpr double kSketchMargin = 0.3;

// The sketch of a signature of at least kDuplicateSketchSlots slots (its first 64).
void duplicate_sketch(const uint32_t *signature, uint8_t *sketch);
// An estimate of the Jaccard similarity of two sketched sets: the fraction of equal 4-bit slots,
// corrected for the 1/16 chance that different slots agree.
double sketch_jaccard(const uint8_t *a, const uint8_t *b);
// Whether a pair with this sketch estimate is worth verifying against `threshold`.
inline bool sketch_may_reach(double estimate, double threshold) { return estimate >= threshold - kSketchMargin; }

// How documents are compared.
struct DuplicateRule {
    DuplicateMeasure measure = DuplicateMeasure::jaccard;
    ShingleOptions shingles{ShingleUnit::kWord, 1};
    double threshold = 0.65;  // in [0, 1]
    // > 0: compare the callers' MinHash signatures of this many slots (the estimated Jaccard
    // similarity), not texts.
    int signature_slots = 0;
};

// The documents, by rank. A callback returns false to stop the run (the caller keeps its error).
struct DuplicateDocuments {
    void *context = nullptr;
    // The UTF-8 text of a rank; *data stays valid until the next call.
    bool (*text)(void *context, uint32_t rank, const char **data, size_t *len) = nullptr;
    // The signature of a rank (rule.signature_slots values); valid until the next call.
    bool (*signature)(void *context, uint32_t rank, const uint32_t **slots) = nullptr;
    // kDuplicateSketchBytes for every rank, or nullptr: every candidate is verified.
    const uint8_t *sketches = nullptr;
};

// Candidate pairs of ranks, packed (lower << 32) | higher, in ascending order, a batch at a time:
// next() fills up to `capacity` and sets *n (0 at the end); false stops the run.
struct CandidatePairs {
    void *context = nullptr;
    bool (*next)(void *context, uint64_t *pairs, size_t capacity, size_t *n) = nullptr;
    uint64_t total = 0;  // how many, for progress
};

constexpr uint32_t kUndecided = UINT32_MAX;

// Ranks by id: row_of_rank[r] is the row (index into ids) of the r-th smallest id. Returns true and
// sets *repeated when an id occurs more than once (the ranks are then incomplete). n < 2^32.
bool rank_by_id(const int64_t *ids, size_t n, uint32_t *row_of_rank, int64_t *repeated);

// A duplicate and its keeper (ranks), with their similarity.
struct KeptDuplicate {
    uint32_t member;
    uint32_t keeper;
    double similarity;
};

// What a run did, for tests and benchmarks.
struct DuplicateStats {
    uint64_t pairs = 0;      // candidate pairs read
    uint64_t decided = 0;    // skipped: the higher document was decided already
    uint64_t screened = 0;   // left unverified by the sketches
    uint64_t identical = 0;  // byte-identical texts
    uint64_t verified = 0;   // similarities computed
    uint64_t duplicates = 0;
};

// Decides every document of n ranks (n < kUndecided) from the candidate pairs: on return
// keeper[r] is r for a document that keeps, the rank of its keeper for a duplicate, and
// kUndecided for a document in no pair (it keeps too). `keeper` must hold kUndecided on entry.
// Each duplicate goes to emit (batched) as it is found; emit returns false to stop. Only
// control.should_stop and control.progress are used. Throws TooManyShingles for a document with
// more distinct shingles than a ShingleSet takes.
RunStatus assign_keepers(const CandidatePairs &pairs, const DuplicateDocuments &documents, const DuplicateRule &rule,
                         uint32_t *keeper, size_t n,
                         bool (*emit)(void *context, const KeptDuplicate *duplicates, size_t n), void *emit_context,
                         const RunControl &control, DuplicateStats *stats = nullptr);

}  // namespace simhash

#include "cpp_only.h"
