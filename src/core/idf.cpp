#include "idf.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace simhash {

namespace {

constexpr uint32_t kMagic = 0x46444953;  // "SIDF" in the first four bytes (little-endian)
constexpr uint16_t kFormatVersion = 1;
constexpr uint32_t kMaxDirectoryBits = 26;
constexpr size_t kNoLimit = ~size_t{0};

template <typename T>
T load(const unsigned char *p) {
    T value;
    std::memcpy(&value, p, sizeof(T));
    return value;
}

template <typename T>
void store(unsigned char *p, T value) {
    std::memcpy(p, &value, sizeof(T));
}

// About four hashes per bucket.
uint32_t directory_bits(size_t entries) {
    uint32_t bits = 0;
    while (bits < kMaxDirectoryBits && (size_t{4} << (bits + 1)) <= entries) ++bits;
    return bits;
}

uint64_t bucket_of(uint64_t hash, uint32_t bits) { return bits == 0 ? 0 : hash >> (64 - bits); }

size_t serialized_size(size_t entries, uint32_t bits) {
    return IdfDictionary::kHeaderBytes + entries * (sizeof(uint64_t) + sizeof(uint32_t)) +
           ((size_t{1} << bits) + 1) * sizeof(uint32_t);
}

[[noreturn]] void invalid(const std::string &what) { throw InvalidArgument("invalid IDF dictionary: " + what); }

}  // namespace

DocumentFrequencies::DocumentFrequencies(const ShingleOptions &options, size_t max_shingles)
    : options_(options), max_shingles_(std::max<size_t>(max_shingles, 2)), counts_(0, kNoLimit) {
    validate(options_);
}

void DocumentFrequencies::add_document(const char *text, size_t len, StopPoll *poll) {
    // The corpus table is far larger than the caches: a document's new shingles reach it through
    // prefetched batches too.
    auto counted = [](uint64_t) {};
    PrefetchingAdder<ShingleCounts, decltype(counted)> corpus(counts_, counted);
    distinct_shingles(text, len, options_, poll, [&](uint64_t hash) { corpus.add(hash); });
    corpus.flush();
    ++documents_;
    prune_if_full();
}

void DocumentFrequencies::add_counted(uint64_t hash, uint32_t df) { counts_.add_count(hash, df); }

void DocumentFrequencies::merge(const DocumentFrequencies &other) {
    if (other.options_.unit != options_.unit || other.options_.size != options_.size)
        throw InvalidArgument("cannot merge document frequencies of different shingles (unit or size differ)");
    documents_ += other.documents_;
    error_bound_ = other.error_bound_ > UINT32_MAX - error_bound_ ? UINT32_MAX : error_bound_ + other.error_bound_;
    other.counts_.for_each([&](uint64_t hash, uint32_t df) { add_counted(hash, df); });
    prune_if_full();
}

// Drops every shingle counted in at most c documents, c the smallest count that leaves at most
// half of max_shingles_: a shingle dropped had a true df of at most c + the bound before, so a
// later count of it is low by at most that much.
void DocumentFrequencies::prune_if_full() {
    if (counts_.distinct() <= max_shingles_) return;
    std::vector<uint32_t> dfs;
    dfs.reserve(counts_.distinct());
    counts_.for_each([&](uint64_t, uint32_t df) { dfs.push_back(df); });
    const size_t keep = max_shingles_ / 2;
    const auto cut = dfs.begin() + static_cast<std::ptrdiff_t>(dfs.size() - keep - 1);
    std::nth_element(dfs.begin(), cut, dfs.end());
    const uint32_t threshold = *cut;
    ShingleCounts kept(keep, kNoLimit);
    counts_.for_each([&](uint64_t hash, uint32_t df) {
        if (df > threshold) kept.add_count(hash, df);
    });
    counts_ = std::move(kept);
    error_bound_ = threshold > UINT32_MAX - error_bound_ ? UINT32_MAX : error_bound_ + threshold;
}

size_t DocumentFrequencies::dictionary_size(uint32_t min_df) const {
    size_t entries = 0;
    counts_.for_each([&](uint64_t, uint32_t df) { entries += df >= min_df; });
    return serialized_size(entries, directory_bits(entries));
}

void DocumentFrequencies::write_dictionary(uint32_t min_df, unsigned char *out) const {
    std::vector<std::pair<uint64_t, uint32_t>> entries;
    entries.reserve(counts_.distinct());
    counts_.for_each([&](uint64_t hash, uint32_t df) {
        if (df >= min_df) entries.emplace_back(hash, df);
    });
    std::sort(entries.begin(), entries.end());
    const size_t n = entries.size();
    const uint32_t bits = directory_bits(n);
    store<uint32_t>(out, kMagic);
    store<uint16_t>(out + 4, kFormatVersion);
    out[6] = static_cast<unsigned char>(options_.unit == ShingleUnit::kChar ? 1 : 0);
    out[7] = static_cast<unsigned char>(bits);
    store<uint32_t>(out + 8, static_cast<uint32_t>(options_.size));
    store<uint32_t>(out + 12, std::max<uint32_t>(min_df, 1));
    store<uint32_t>(out + 16, error_bound_);
    store<uint32_t>(out + 20, 0);
    store<uint64_t>(out + 24, documents_);
    store<uint64_t>(out + 32, n);
    unsigned char *hashes = out + IdfDictionary::kHeaderBytes;
    unsigned char *dfs = hashes + n * sizeof(uint64_t);
    unsigned char *buckets = dfs + n * sizeof(uint32_t);
    for (size_t i = 0; i < n; ++i) {
        store<uint64_t>(hashes + i * sizeof(uint64_t), entries[i].first);
        store<uint32_t>(dfs + i * sizeof(uint32_t), entries[i].second);
    }
    size_t i = 0;
    for (uint64_t b = 0; b <= (uint64_t{1} << bits); ++b) {
        while (i < n && bucket_of(entries[i].first, bits) < b) ++i;
        store<uint32_t>(buckets + b * sizeof(uint32_t), static_cast<uint32_t>(i));
    }
}

DocumentFrequencies DocumentFrequencies::from_dictionary(const IdfDictionary &dictionary, size_t max_shingles) {
    DocumentFrequencies frequencies(dictionary.options(), max_shingles);
    frequencies.documents_ = dictionary.documents();
    frequencies.error_bound_ = dictionary.error_bound();
    for (size_t i = 0; i < dictionary.shingles(); ++i) frequencies.add_counted(dictionary.hash_at(i), dictionary.df_at(i));
    frequencies.prune_if_full();
    return frequencies;
}

IdfDictionary::IdfDictionary(const unsigned char *data, size_t len, bool check_order) : data_(data) {
    if (len < kHeaderBytes || load<uint32_t>(data) != kMagic) invalid("not a dictionary made by simhash_idf()");
    if (load<uint16_t>(data + 4) != kFormatVersion)
        invalid("format version " + std::to_string(load<uint16_t>(data + 4)) + " is not supported");
    if (data[6] > 1) invalid("unknown shingle unit");
    options_.unit = data[6] == 1 ? ShingleUnit::kChar : ShingleUnit::kWord;
    dirbits_ = data[7];
    const uint32_t size = load<uint32_t>(data + 8);
    if (size < 1 || size > static_cast<uint32_t>(kMaxShingleSize)) invalid("shingle size out of range");
    options_.size = static_cast<int>(size);
    min_df_ = load<uint32_t>(data + 12);
    error_bound_ = load<uint32_t>(data + 16);
    documents_ = load<uint64_t>(data + 24);
    const uint64_t entries = load<uint64_t>(data + 32);
    if (documents_ < 1) invalid("no documents");
    // Counts are reported as bigint.
    if (documents_ > static_cast<uint64_t>(INT64_MAX)) invalid("its document count is out of range");
    // The writer's min_df is a small constant (shown by shingle_idf_info as an integer), and it
    // writes zeros after the error bound.
    if (min_df_ < 1 || min_df_ > static_cast<uint32_t>(INT32_MAX))
        invalid("its minimum document frequency is out of range");
    if (load<uint32_t>(data + 20) != 0) invalid("its reserved header bytes are not zero");
    if (dirbits_ > kMaxDirectoryBits || entries > len / (sizeof(uint64_t) + sizeof(uint32_t)) ||
        serialized_size(static_cast<size_t>(entries), dirbits_) != len)
        invalid("its length does not match its header");
    entries_ = static_cast<size_t>(entries);
    log_documents_ = std::log(static_cast<double>(documents_));
    hashes_ = data + kHeaderBytes;
    dfs_ = hashes_ + entries_ * sizeof(uint64_t);
    buckets_ = dfs_ + entries_ * sizeof(uint32_t);
    if (!check_order) return;
    for (size_t i = 0; i < entries_; ++i) {
        if (i > 0 && hash_at(i) <= hash_at(i - 1)) invalid("its shingles are not in ascending order");
        if (df_at(i) < min_df_ || df_at(i) > documents_) invalid("a document frequency is out of range");
    }
    for (uint64_t b = 0; b <= (uint64_t{1} << dirbits_); ++b) {
        const uint32_t begin = load<uint32_t>(buckets_ + b * sizeof(uint32_t));
        const bool first = b == 0, last = b == (uint64_t{1} << dirbits_);
        if ((first && begin != 0) || (last && begin != entries_) || begin > entries_ ||
            (!first && begin < load<uint32_t>(buckets_ + (b - 1) * sizeof(uint32_t))) ||
            (!last && begin < entries_ && bucket_of(hash_at(begin), dirbits_) < b) ||
            (!first && begin > 0 && bucket_of(hash_at(begin - 1), dirbits_) >= b))
            invalid("its bucket directory is inconsistent");
    }
}

uint64_t IdfDictionary::hash_at(size_t i) const { return load<uint64_t>(hashes_ + i * sizeof(uint64_t)); }
uint32_t IdfDictionary::df_at(size_t i) const { return load<uint32_t>(dfs_ + i * sizeof(uint32_t)); }

uint32_t IdfDictionary::df(uint64_t hash) const {
    const uint64_t b = bucket_of(hash, dirbits_);
    // Clamped, so that a dictionary whose order was not checked still reads only its own bytes.
    size_t begin = std::min<size_t>(load<uint32_t>(buckets_ + b * sizeof(uint32_t)), entries_);
    size_t end = std::min<size_t>(load<uint32_t>(buckets_ + (b + 1) * sizeof(uint32_t)), entries_);
    // Halving, not a walk: a bucket of simhash_idf()'s directory holds a few entries, but a
    // dictionary from elsewhere may put every hash in one (a valid, sorted dictionary with
    // directory bits 0, or hashes sharing their top bits).
    while (begin < end) {
        const size_t mid = begin + (end - begin) / 2;
        const uint64_t h = hash_at(mid);
        if (h == hash) return df_at(mid);
        if (h < hash)
            begin = mid + 1;
        else
            end = mid;
    }
    return 0;
}

double IdfDictionary::idf(uint64_t hash) const {
    const uint32_t stored = df(hash);
    return log_documents_ - std::log(static_cast<double>(stored == 0 ? 1 : stored));
}

uint64_t simhash_text_idf(const char *text, size_t len, const IdfDictionary &dictionary, ShingleWeighting weighting,
                          StopPoll *poll) {
    const ShingleCounts counts = count_shingles(text, len, dictionary.options(), poll);
    WeightedSimhashVote vote;
    counts.for_each([&](uint64_t hash, uint32_t tf) {
        vote.add(hash, shingle_vote(weighting, tf) * dictionary.idf(hash));
        tick(poll, 64);  // a lookup and a vote cost about as much as 64 bytes read
    });
    return vote.fingerprint();
}

}  // namespace simhash
