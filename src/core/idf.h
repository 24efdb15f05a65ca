// IDF weights learned from a corpus: how many documents contain each shingle (its document
// frequency, df), kept as a compact dictionary that fingerprints then read, so that shingles every
// page shares (navigation, licence boilerplate, a site's footer) vote less than the words that
// tell pages apart. The seeds weight SimHash features by TF-IDF; this is that weighting, with the
// document frequencies taken from the table itself.
//
// A shingle's weight in a document is tf_weight(tf) * ln(N / df): N documents were counted, df of
// them contain the shingle, and tf_weight is the document's own vote (ShingleWeighting: 1, 1 + ln
// tf, or tf). A shingle the dictionary does not hold (seen in fewer than min_df documents, or
// never) gets df = 1, the weight of a shingle found in one document.
#pragma once

#include <cstddef>
#include <cstdint>

#include "shingle_counts.h"
#include "shingles.h"
#include "simhash.h"
#include "stop_poll.h"

namespace simhash {

// Distinct shingles counted before the rarest are dropped: a table of at most 2^22 slots (48 MB).
constexpr size_t kMaxCountedShingles = size_t{1} << 21;

// Document frequencies over a stream of documents. Memory is bounded: when more than max_shingles
// distinct shingles are counted, the rarest are dropped so that at most half remain, as lossy
// counting does (Manku and Motwani, "Approximate Frequency Counts over Data Streams", VLDB 2002).
// A shingle then reads at most error_bound() below its true df, and every shingle whose true df
// exceeds error_bound() is kept. Below the limit the counts are exact (error_bound() = 0).
class DocumentFrequencies {
public:
    explicit DocumentFrequencies(const ShingleOptions &options, size_t max_shingles = kMaxCountedShingles);

    // Counts one document: each of its distinct shingles once. With a poll, throws Stopped when
    // it asks to stop (the document is then not counted).
    void add_document(const char *text, size_t len, StopPoll *poll = nullptr);
    // Adds another counter's documents (parallel aggregation). Throws InvalidArgument when the
    // two count different shingles (unit or size).
    void merge(const DocumentFrequencies &other);

    const ShingleOptions &options() const { return options_; }
    uint64_t documents() const { return documents_; }
    uint32_t error_bound() const { return error_bound_; }
    size_t shingles() const { return counts_.distinct(); }

    // The serialized dictionary of the shingles counted in at least min_df documents (see
    // IdfDictionary): dictionary_size() bytes, written by write_dictionary().
    size_t dictionary_size(uint32_t min_df) const;
    void write_dictionary(uint32_t min_df, unsigned char *out) const;

    // A counter holding a dictionary's counts (a state serialized with min_df = 1, for parallel
    // aggregation).
    static DocumentFrequencies from_dictionary(const class IdfDictionary &dictionary,
                                               size_t max_shingles = kMaxCountedShingles);

private:
    void add_counted(uint64_t hash, uint32_t df);
    void prune_if_full();

    ShingleOptions options_;
    size_t max_shingles_;
    uint64_t documents_ = 0;
    uint32_t error_bound_ = 0;
    ShingleCounts counts_;
};

// A serialized dictionary, read in place. Layout (native byte order, 8-byte fields 8-aligned from
// the start):
//   header   magic "SIDF", format version, unit, directory bits, size, min_df, error bound,
//            documents N, entries n (kHeaderBytes)
//   hashes   n ascending feature hashes (uint64)
//   dfs      n document frequencies (uint32), in the order of the hashes
//   buckets  2^dirbits + 1 offsets (uint32): the hashes whose top dirbits bits are b lie in
//            [buckets[b], buckets[b + 1]), about four per bucket, so a lookup reads three lines
class IdfDictionary {
public:
    static constexpr size_t kHeaderBytes = 40;

    // Checks the header and the length in O(1) (what every use needs to stay in bounds); with
    // check_order, also that the hashes ascend and the buckets point at them, which input from
    // outside must pass. Throws InvalidArgument naming the problem.
    IdfDictionary(const unsigned char *data, size_t len, bool check_order = false);

    ShingleOptions options() const { return options_; }
    uint64_t documents() const { return documents_; }
    size_t shingles() const { return entries_; }
    uint32_t min_df() const { return min_df_; }
    uint32_t error_bound() const { return error_bound_; }

    // The document frequency stored for a feature hash; 0 when the dictionary does not hold it.
    uint32_t df(uint64_t hash) const;
    // ln(N / df), with df = 1 for a shingle the dictionary does not hold.
    double idf(uint64_t hash) const;

    // Entry i (ascending hashes), for merging and tests.
    uint64_t hash_at(size_t i) const;
    uint32_t df_at(size_t i) const;

private:
    const unsigned char *data_;
    ShingleOptions options_;
    uint32_t dirbits_ = 0;
    uint32_t min_df_ = 0;
    uint32_t error_bound_ = 0;
    uint64_t documents_ = 0;
    size_t entries_ = 0;
    double log_documents_ = 0.0;
    const unsigned char *hashes_;
    const unsigned char *dfs_;
    const unsigned char *buckets_;
};

// SimHash of a text's shingles (the dictionary's unit and size) with IDF weights: each distinct
// shingle votes tf_weight * idf, tf_weight being 1 (set), 1 + ln tf (log) or tf (count). Throws
// TooManyShingles past kMaxDistinctShingles, Stopped when the poll asks to stop.
uint64_t simhash_text_idf(const char *text, size_t len, const IdfDictionary &dictionary, ShingleWeighting weighting,
                          StopPoll *poll = nullptr);

}  // namespace simhash

#include "cpp_only.h"
