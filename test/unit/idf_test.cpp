// Document frequencies, the IDF dictionary format and IDF-weighted SimHash.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/feature_hash.h"
#include "core/idf.h"
#include "core/shingle_counts.h"
#include "core/simhash.h"

using simhash::DocumentFrequencies;
using simhash::IdfDictionary;
using simhash::ShingleOptions;
using simhash::ShingleUnit;
using simhash::ShingleWeighting;

namespace {

ShingleOptions words(int size = 1) {
    ShingleOptions options;
    options.unit = ShingleUnit::kWord;
    options.size = size;
    return options;
}

std::vector<unsigned char> dictionary_of(const DocumentFrequencies &frequencies, uint32_t min_df) {
    std::vector<unsigned char> bytes(frequencies.dictionary_size(min_df));
    frequencies.write_dictionary(min_df, bytes.data());
    return bytes;
}

// A corpus of n documents over a Zipf-like vocabulary: word w appears in about n / (w + 1) of them.
std::vector<std::string> zipf_corpus(int n, int vocabulary) {
    std::vector<std::string> docs;
    for (int d = 0; d < n; ++d) {
        std::string doc;
        for (int w = 0; w < vocabulary; ++w)
            if ((static_cast<uint64_t>(d) * 2654435761u + static_cast<uint64_t>(w) * 40503u) % static_cast<uint64_t>(w + 1) == 0)
                doc += "w" + std::to_string(w) + " ";
        docs.push_back(doc);
    }
    return docs;
}

// The true document frequencies of a corpus, by feature hash.
std::map<uint64_t, uint32_t> true_dfs(const std::vector<std::string> &docs, const ShingleOptions &options) {
    std::map<uint64_t, uint32_t> dfs;
    for (const std::string &doc : docs)
        for (uint64_t hash : simhash::count_shingles(doc.data(), doc.size(), options).sorted_hashes()) ++dfs[hash];
    return dfs;
}

}  // namespace

TEST(DocumentFrequencies, CountsEachShingleOncePerDocument) {
    DocumentFrequencies frequencies(words());
    for (const char *doc : {"the quick brown fox", "the lazy dog the end", "the quick cat", "a b c"})
        frequencies.add_document(doc, std::strlen(doc));
    EXPECT_EQ(frequencies.documents(), 4u);
    EXPECT_EQ(frequencies.error_bound(), 0u);
    const std::vector<unsigned char> bytes = dictionary_of(frequencies, 2);
    const IdfDictionary idf(bytes.data(), bytes.size(), true);
    EXPECT_EQ(idf.documents(), 4u);
    EXPECT_EQ(idf.shingles(), 2u);  // "the" (3 documents) and "quick" (2); singletons are left out
    EXPECT_EQ(idf.df(simhash::feature_hash("the", 3)), 3u);
    EXPECT_EQ(idf.df(simhash::feature_hash("quick", 5)), 2u);
    EXPECT_EQ(idf.df(simhash::feature_hash("fox", 3)), 0u);
    EXPECT_DOUBLE_EQ(idf.idf(simhash::feature_hash("the", 3)), std::log(4.0 / 3.0));
    EXPECT_DOUBLE_EQ(idf.idf(simhash::feature_hash("fox", 3)), std::log(4.0));
    EXPECT_DOUBLE_EQ(idf.idf(simhash::feature_hash("never seen", 10)), std::log(4.0));
}

TEST(DocumentFrequencies, DictionaryHoldsExactCountsOfALargeCorpus) {
    const std::vector<std::string> docs = zipf_corpus(400, 3000);
    DocumentFrequencies frequencies(words());
    for (const std::string &doc : docs) frequencies.add_document(doc.data(), doc.size());
    const std::vector<unsigned char> bytes = dictionary_of(frequencies, 1);
    const IdfDictionary idf(bytes.data(), bytes.size(), true);
    const std::map<uint64_t, uint32_t> expected = true_dfs(docs, words());
    ASSERT_EQ(idf.shingles(), expected.size());
    size_t i = 0;
    for (const auto &[hash, df] : expected) {
        EXPECT_EQ(idf.hash_at(i), hash);
        EXPECT_EQ(idf.df_at(i), df);
        EXPECT_EQ(idf.df(hash), df);
        ++i;
    }
    EXPECT_EQ(idf.df(12345), 0u);
}

TEST(DocumentFrequencies, MergeEqualsOnePass) {
    const std::vector<std::string> docs = zipf_corpus(300, 500);
    DocumentFrequencies all(words()), first(words()), second(words());
    for (size_t d = 0; d < docs.size(); ++d) {
        all.add_document(docs[d].data(), docs[d].size());
        (d % 3 == 0 ? first : second).add_document(docs[d].data(), docs[d].size());
    }
    first.merge(second);
    EXPECT_EQ(dictionary_of(first, 2), dictionary_of(all, 2));
    // A state travels between parallel workers as a dictionary with min_df = 1.
    const std::vector<unsigned char> state = dictionary_of(all, 1);
    const DocumentFrequencies restored = DocumentFrequencies::from_dictionary(IdfDictionary(state.data(), state.size()));
    EXPECT_EQ(dictionary_of(restored, 2), dictionary_of(all, 2));
    DocumentFrequencies pairs(words(2));
    EXPECT_THROW(first.merge(pairs), simhash::InvalidArgument);
}

TEST(DocumentFrequencies, PrunedCountsStayWithinTheErrorBound) {
    const std::vector<std::string> docs = zipf_corpus(2000, 2000);
    const std::map<uint64_t, uint32_t> expected = true_dfs(docs, words());
    DocumentFrequencies frequencies(words(), 256);
    for (const std::string &doc : docs) frequencies.add_document(doc.data(), doc.size());
    EXPECT_GT(frequencies.error_bound(), 0u);
    EXPECT_LE(frequencies.shingles(), 256u + 2000u);
    const std::vector<unsigned char> bytes = dictionary_of(frequencies, 1);
    const IdfDictionary idf(bytes.data(), bytes.size(), true);
    EXPECT_EQ(idf.error_bound(), frequencies.error_bound());
    size_t kept_frequent = 0;
    for (const auto &[hash, df] : expected) {
        const uint32_t stored = idf.df(hash);
        EXPECT_LE(stored, df);
        if (stored > 0) {
            EXPECT_GE(stored + idf.error_bound(), df);
        }
        if (df > idf.error_bound()) {
            EXPECT_GT(stored, 0u) << "a shingle in " << df << " documents was dropped";
            ++kept_frequent;
        }
    }
    EXPECT_GT(kept_frequent, 10u);
}

TEST(IdfDictionary, RefusesMalformedBytes) {
    DocumentFrequencies frequencies(words());
    for (const char *doc : {"a b c d", "a b e f", "a c g h", "b d i j"}) frequencies.add_document(doc, std::strlen(doc));
    const std::vector<unsigned char> good = dictionary_of(frequencies, 1);
    EXPECT_NO_THROW(IdfDictionary(good.data(), good.size(), true));
    auto refused = [&](std::vector<unsigned char> bytes, bool check_order) {
        EXPECT_THROW(IdfDictionary(bytes.data(), bytes.size(), check_order), simhash::InvalidArgument);
    };
    refused(std::vector<unsigned char>(good.begin(), good.begin() + 10), false);  // shorter than a header
    refused(std::vector<unsigned char>(good.begin(), good.end() - 1), false);     // truncated
    std::vector<unsigned char> bytes = good;
    bytes[0] ^= 1;  // magic
    refused(bytes, false);
    bytes = good;
    bytes[4] = 9;  // format version
    refused(bytes, false);
    bytes = good;
    bytes[8] = 0;  // size 0
    refused(bytes, false);
    bytes = good;
    std::swap_ranges(bytes.begin() + 40, bytes.begin() + 48, bytes.begin() + 48);  // two hashes out of order
    EXPECT_NO_THROW(IdfDictionary(bytes.data(), bytes.size(), false));              // O(1) check: reads in bounds
    refused(bytes, true);
    bytes = good;
    bytes[bytes.size() - 4] = 0;  // the directory's end no longer points at the last entry
    refused(bytes, true);
}

TEST(IdfDictionary, RefusesOutOfRangeCounts) {
    DocumentFrequencies frequencies(words());
    for (const char *doc : {"a b", "a c"}) frequencies.add_document(doc, std::strlen(doc));
    std::vector<unsigned char> bytes = dictionary_of(frequencies, 1);
    const uint64_t too_many_documents = uint64_t{1} << 63;  // shown as bigint
    std::memcpy(bytes.data() + 24, &too_many_documents, sizeof(too_many_documents));
    EXPECT_THROW(IdfDictionary(bytes.data(), bytes.size(), false), simhash::InvalidArgument);
    bytes = dictionary_of(frequencies, 1);
    const uint32_t zero_min_df = 0;
    std::memcpy(bytes.data() + 12, &zero_min_df, sizeof(zero_min_df));
    EXPECT_THROW(IdfDictionary(bytes.data(), bytes.size(), false), simhash::InvalidArgument);
    // min_df is shown as an integer and may exceed the document count (no shingle reached it);
    // the bytes after the error bound are zero.
    bytes = dictionary_of(frequencies, 1);
    const uint32_t min_df_beyond_int = uint32_t{1} << 31, min_df_beyond_documents = 1000;
    std::memcpy(bytes.data() + 12, &min_df_beyond_int, sizeof(min_df_beyond_int));
    EXPECT_THROW(IdfDictionary(bytes.data(), bytes.size(), false), simhash::InvalidArgument);
    std::memcpy(bytes.data() + 12, &min_df_beyond_documents, sizeof(min_df_beyond_documents));
    EXPECT_THROW(IdfDictionary(bytes.data(), bytes.size(), true), simhash::InvalidArgument);  // its entries' dfs are below it
    const std::vector<unsigned char> empty = dictionary_of(frequencies, 1000);
    EXPECT_NO_THROW(IdfDictionary(empty.data(), empty.size(), true));
    EXPECT_EQ(IdfDictionary(empty.data(), empty.size(), true).min_df(), 1000u);
    bytes = dictionary_of(frequencies, 1);
    bytes[21] = 1;
    EXPECT_THROW(IdfDictionary(bytes.data(), bytes.size(), false), simhash::InvalidArgument);
}

// A dictionary from elsewhere may be valid with a directory of one bucket (every hash in it): a
// lookup must still find each entry, by halving rather than a walk of the whole bucket.
TEST(IdfDictionary, LooksUpThroughAOneBucketDirectory) {
    DocumentFrequencies frequencies(words());
    const std::vector<std::string> docs = zipf_corpus(200, 3000);
    for (const std::string &doc : docs) frequencies.add_document(doc.data(), doc.size());
    const std::vector<unsigned char> built = dictionary_of(frequencies, 1);
    const IdfDictionary reference(built.data(), built.size(), true);
    const size_t n = reference.shingles();
    ASSERT_GT(n, 500u);
    // Same header with 0 directory bits, same entries, the directory [0, n].
    std::vector<unsigned char> one_bucket(built.begin(), built.begin() + IdfDictionary::kHeaderBytes + n * 12);
    one_bucket[7] = 0;
    for (uint32_t offset : {uint32_t{0}, static_cast<uint32_t>(n)}) {
        unsigned char raw[4];
        std::memcpy(raw, &offset, sizeof(raw));
        one_bucket.insert(one_bucket.end(), raw, raw + 4);
    }
    const IdfDictionary dictionary(one_bucket.data(), one_bucket.size(), true);
    for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(dictionary.df(reference.hash_at(i)), reference.df_at(i)) << "entry " << i;
        ASSERT_EQ(dictionary.df(reference.hash_at(i) + 1), reference.df(reference.hash_at(i) + 1));
    }
    EXPECT_EQ(dictionary.df(0), reference.df(0));
    EXPECT_EQ(dictionary.df(UINT64_MAX), reference.df(UINT64_MAX));
}

TEST(SimhashTextIdf, WeighsEachShingleByItsIdf) {
    const std::vector<std::string> docs = zipf_corpus(200, 300);
    DocumentFrequencies frequencies(words());
    for (const std::string &doc : docs) frequencies.add_document(doc.data(), doc.size());
    const std::vector<unsigned char> bytes = dictionary_of(frequencies, 2);
    const IdfDictionary idf(bytes.data(), bytes.size());
    const std::string doc = docs[7] + docs[7] + " w1 w1 w1 unseen";
    for (ShingleWeighting weighting : {ShingleWeighting::kSet, ShingleWeighting::kLog, ShingleWeighting::kCount}) {
        simhash::WeightedSimhashVote vote;
        simhash::count_shingles(doc.data(), doc.size(), words()).for_each([&](uint64_t hash, uint32_t tf) {
            const double tf_weight = weighting == ShingleWeighting::kSet   ? 1.0
                                     : weighting == ShingleWeighting::kLog ? 1.0 + std::log(static_cast<double>(tf))
                                                                           : static_cast<double>(tf);
            const uint32_t df = idf.df(hash);
            vote.add(hash, tf_weight * std::log(200.0 / (df == 0 ? 1 : df)));
        });
        EXPECT_EQ(simhash::simhash_text_idf(doc.data(), doc.size(), idf, weighting), vote.fingerprint());
    }
}

TEST(SimhashTextIdf, EqualWeightsGiveTheSetFingerprint) {
    // Every shingle in one document: all weights are ln N, so the votes are set votes scaled. An
    // odd number of shingles, so that no bit's vote ties (a tie of real-valued votes is decided by
    // rounding, of unit votes by the rule "strictly positive").
    DocumentFrequencies frequencies(words(2));
    const std::string docs[] = {"alpha beta gamma delta", "one two three four five", "x y z"};
    for (const std::string &doc : docs) frequencies.add_document(doc.data(), doc.size());
    const std::vector<unsigned char> bytes = dictionary_of(frequencies, 2);
    const IdfDictionary idf(bytes.data(), bytes.size());
    EXPECT_EQ(idf.shingles(), 0u);
    const std::string doc = "alpha beta gamma and more words here now";
    EXPECT_EQ(simhash::simhash_text_idf(doc.data(), doc.size(), idf, ShingleWeighting::kSet),
              simhash::simhash_text(doc.data(), doc.size(), words(2), ShingleWeighting::kSet));
}
