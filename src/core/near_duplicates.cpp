// Verified near-duplicates without chaining (near_duplicates.h).
#include "near_duplicates.h"

#include <cstring>
#include <string>
#include <vector>

#include "minhash.h"
#include "near_engine.h"

namespace simhash {

using namespace engine;

DuplicateMeasure parse_duplicate_measure(const char *name, size_t len) {
    if (len == 7 && std::memcmp(name, "jaccard", 7) == 0) return DuplicateMeasure::jaccard;
    if (len == 11 && std::memcmp(name, "containment", 11) == 0) return DuplicateMeasure::containment;
    throw InvalidArgument("measure must be 'jaccard' or 'containment', not " + quoted_option(name, len));
}

double duplicate_similarity(const SetOverlap &overlap, DuplicateMeasure measure) {
    return measure == DuplicateMeasure::jaccard ? overlap.jaccard() : overlap.smaller_containment();
}

void duplicate_sketch(const uint32_t *signature, uint8_t *sketch) {
    for (int i = 0; i < kDuplicateSketchSlots; i += 2)
        sketch[i / 2] = static_cast<uint8_t>(((signature[i] >> 1) & 0xF) | (((signature[i + 1] >> 1) & 0xF) << 4));
}

double sketch_jaccard(const uint8_t *a, const uint8_t *b) {
    int equal = 0;
    for (size_t i = 0; i < kDuplicateSketchBytes; ++i) {
        const uint8_t x = a[i] ^ b[i];
        equal += (x & 0x0F) == 0;
        equal += (x & 0xF0) == 0;
    }
    // E[equal / 64] = J + (1 - J) / 16.
    return (static_cast<double>(equal) / kDuplicateSketchSlots - 1.0 / 16) * 16 / 15;
}

bool rank_by_id(const int64_t *ids, size_t n, uint32_t *row_of_rank, int64_t *repeated) {
    if (n >= kUndecided) throw std::length_error("too many documents for one run (at most 4294967294)");
    std::iota(row_of_rank, row_of_rank + n, 0u);
    std::sort(row_of_rank, row_of_rank + n, [ids](uint32_t a, uint32_t b) { return ids[a] < ids[b]; });
    for (size_t r = 1; r < n; ++r)
        if (ids[row_of_rank[r]] == ids[row_of_rank[r - 1]]) {
            *repeated = ids[row_of_rank[r]];
            return true;
        }
    return false;
}

namespace {

// The comparisons of one run. The keeper a candidate is compared with changes seldom (pairs come
// by lower rank, and a keeper's duplicates follow it), so its side is computed once and kept.
class Verifier {
public:
    Verifier(const DuplicateDocuments &documents, const DuplicateRule &rule, StopPoll *poll)
        : documents_(documents), rule_(rule), poll_(poll) {}

    // The similarity of the keeper and the candidate; false when a callback failed.
    bool similarity(uint32_t keeper, uint32_t candidate, double *similarity, DuplicateStats *stats) {
        if (rule_.signature_slots > 0) return signature_similarity(keeper, candidate, similarity);
        if (keeper != keeper_ && !load_keeper(keeper)) return false;
        const char *data;
        size_t len;
        if (!documents_.text(documents_.context, candidate, &data, &len)) return false;
        if (len == keeper_text_.size() && std::memcmp(data, keeper_text_.data(), len) == 0) {
            ++stats->identical;
            *similarity = 1.0;
            return true;
        }
        ++stats->verified;
        const std::vector<uint64_t> hashes = distinct_shingles(data, len, rule_.shingles, poll_).sorted_hashes();
        *similarity = duplicate_similarity(set_overlap(keeper_hashes_, hashes), rule_.measure);
        return true;
    }

private:
    bool load_keeper(uint32_t keeper) {
        const char *data;
        size_t len;
        keeper_ = kUndecided;
        if (!documents_.text(documents_.context, keeper, &data, &len)) return false;
        keeper_text_.assign(data, len);
        keeper_hashes_ = distinct_shingles(data, len, rule_.shingles, poll_).sorted_hashes();
        keeper_ = keeper;
        return true;
    }

    bool signature_similarity(uint32_t keeper, uint32_t candidate, double *similarity) {
        const size_t slots = static_cast<size_t>(rule_.signature_slots);
        if (keeper != keeper_) {
            const uint32_t *values;
            keeper_ = kUndecided;
            if (!documents_.signature(documents_.context, keeper, &values)) return false;
            keeper_signature_.assign(values, values + slots);
            keeper_ = keeper;
        }
        const uint32_t *values;
        if (!documents_.signature(documents_.context, candidate, &values)) return false;
        *similarity = minhash_jaccard(keeper_signature_.data(), values, slots);
        return true;
    }

    const DuplicateDocuments &documents_;
    const DuplicateRule &rule_;
    StopPoll *poll_;
    uint32_t keeper_ = kUndecided;  // whose side is kept below
    std::string keeper_text_;
    std::vector<uint64_t> keeper_hashes_;
    std::vector<uint32_t> keeper_signature_;
};

// Duplicates found, handed to the caller in batches.
class DuplicateWriter {
public:
    DuplicateWriter(bool (*emit)(void *, const KeptDuplicate *, size_t), void *context)
        : emit_(emit), context_(context) {}
    void add(const KeptDuplicate &d) {
        buffer_[n_++] = d;
        if (n_ == kBatch) flush();
    }
    void flush() {
        if (n_ > 0 && emit_ && !emit_(context_, buffer_, n_)) throw StopRun();
        n_ = 0;
    }

private:
    static constexpr size_t kBatch = 1024;
    bool (*emit_)(void *, const KeptDuplicate *, size_t);
    void *context_;
    KeptDuplicate buffer_[kBatch];
    size_t n_ = 0;
};

bool stop_requested(void *context) {
    const RunControl *control = static_cast<const RunControl *>(context);
    return control->should_stop && control->should_stop(control->context);
}

}  // namespace

RunStatus assign_keepers(const CandidatePairs &pairs, const DuplicateDocuments &documents, const DuplicateRule &rule,
                         uint32_t *keeper, size_t n,
                         bool (*emit)(void *context, const KeptDuplicate *duplicates, size_t n), void *emit_context,
                         const RunControl &control, DuplicateStats *stats) {
    if (n >= kUndecided) throw std::length_error("too many documents for one run (at most 4294967294)");
    DuplicateStats local;
    DuplicateStats &s = stats ? *stats : local;
    s = DuplicateStats{};
    StopPoll poll(stop_requested, const_cast<RunControl *>(&control));
    try {
        Poller poller(control);
        poller.begin("verifying candidate pairs", pairs.total);
        Verifier verifier(documents, rule, &poll);
        std::unique_ptr<DuplicateWriter> writer(new DuplicateWriter(emit, emit_context));
        constexpr size_t kBatchPairs = 4096;
        std::vector<uint64_t> batch(kBatchPairs);
        for (;;) {
            size_t got = 0;
            if (!pairs.next(pairs.context, batch.data(), kBatchPairs, &got)) throw StopRun();
            if (got == 0) break;
            for (size_t i = 0; i < got; ++i) {
                const uint32_t lower = static_cast<uint32_t>(batch[i] >> 32);
                const uint32_t higher = static_cast<uint32_t>(batch[i]);
                if (lower >= n || higher >= n || lower >= higher)
                    throw std::invalid_argument("candidate pairs must be ranks (lower, higher) below the document count");
                ++s.pairs;
                poller.advance(s.pairs, 1);
                if (keeper[lower] == kUndecided) keeper[lower] = lower;
                if (keeper[higher] != kUndecided) {
                    ++s.decided;
                    continue;
                }
                const uint32_t k = keeper[lower];
                if (documents.sketches &&
                    !sketch_may_reach(sketch_jaccard(documents.sketches + size_t{k} * kDuplicateSketchBytes,
                                                     documents.sketches + size_t{higher} * kDuplicateSketchBytes),
                                      rule.threshold)) {
                    ++s.screened;
                    continue;
                }
                double similarity;
                if (!verifier.similarity(k, higher, &similarity, &s)) throw StopRun();
                if (similarity >= rule.threshold) {
                    keeper[higher] = k;
                    ++s.duplicates;
                    writer->add(KeptDuplicate{higher, k, similarity});
                }
            }
        }
        writer->flush();
        return RunStatus::done;
    } catch (const StopRun &) {
        return RunStatus::stopped;
    } catch (const Stopped &) {
        return RunStatus::stopped;
    }
}

}  // namespace simhash
