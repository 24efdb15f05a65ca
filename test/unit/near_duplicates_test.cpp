// Verified keepers without chaining (core/near_duplicates.h).
#include "core/near_duplicates.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/minhash.h"

namespace {

using simhash::CandidatePairs;
using simhash::DuplicateDocuments;
using simhash::DuplicateMeasure;
using simhash::DuplicateRule;
using simhash::DuplicateStats;
using simhash::KeptDuplicate;
using simhash::kUndecided;
using simhash::RunControl;
using simhash::RunStatus;

// Documents and candidate pairs held in memory, as the SQL glue hands them over.
struct Fixture {
    std::vector<std::string> texts;
    std::vector<std::vector<uint32_t>> signatures;
    std::vector<uint64_t> pairs;  // (lower << 32) | higher, ascending
    size_t next_pair = 0;
    std::vector<KeptDuplicate> found;
    size_t text_calls = 0;
    bool fail_text = false;
    size_t stop_emit_after = SIZE_MAX;

    void add_pair(uint32_t a, uint32_t b) {
        pairs.push_back(uint64_t{std::min(a, b)} << 32 | std::max(a, b));
        std::sort(pairs.begin(), pairs.end());
    }

    static bool next(void *context, uint64_t *out, size_t capacity, size_t *n) {
        Fixture *f = static_cast<Fixture *>(context);
        *n = std::min(capacity, f->pairs.size() - f->next_pair);
        std::copy_n(f->pairs.begin() + static_cast<long>(f->next_pair), *n, out);
        f->next_pair += *n;
        return true;
    }
    static bool text(void *context, uint32_t rank, const char **data, size_t *len) {
        Fixture *f = static_cast<Fixture *>(context);
        ++f->text_calls;
        if (f->fail_text) return false;
        *data = f->texts[rank].data();
        *len = f->texts[rank].size();
        return true;
    }
    static bool signature(void *context, uint32_t rank, const uint32_t **slots) {
        *slots = static_cast<Fixture *>(context)->signatures[rank].data();
        return true;
    }
    static bool emit(void *context, const KeptDuplicate *d, size_t n) {
        Fixture *f = static_cast<Fixture *>(context);
        f->found.insert(f->found.end(), d, d + n);
        return f->found.size() < f->stop_emit_after;
    }

    RunStatus run(const DuplicateRule &rule, std::vector<uint32_t> *keeper, const uint8_t *sketches = nullptr,
                  DuplicateStats *stats = nullptr, const RunControl &control = RunControl{}) {
        CandidatePairs source{this, next, pairs.size()};
        DuplicateDocuments documents{this, text, signature, sketches};
        keeper->assign(texts.empty() ? signatures.size() : texts.size(), kUndecided);
        next_pair = 0;
        found.clear();
        return simhash::assign_keepers(source, documents, rule, keeper->data(), keeper->size(), emit, this, control,
                                       stats);
    }
};

DuplicateRule word_jaccard(double threshold) {
    DuplicateRule rule;
    rule.threshold = threshold;
    return rule;
}

TEST(NearDuplicates, SimilarityMeasures) {
    simhash::SetOverlap o;
    o.a = 4;
    o.b = 8;
    o.common = 4;
    EXPECT_DOUBLE_EQ(simhash::duplicate_similarity(o, DuplicateMeasure::jaccard), 0.5);
    EXPECT_DOUBLE_EQ(simhash::duplicate_similarity(o, DuplicateMeasure::containment), 1.0);
    o.a = 0;
    o.common = 0;
    EXPECT_DOUBLE_EQ(simhash::duplicate_similarity(o, DuplicateMeasure::containment), 0.0);
    o.b = 0;
    EXPECT_DOUBLE_EQ(simhash::duplicate_similarity(o, DuplicateMeasure::jaccard), 1.0);
    EXPECT_DOUBLE_EQ(simhash::duplicate_similarity(o, DuplicateMeasure::containment), 1.0);
    EXPECT_EQ(simhash::parse_duplicate_measure("containment", 11), DuplicateMeasure::containment);
    EXPECT_THROW(simhash::parse_duplicate_measure("cosine", 6), simhash::InvalidArgument);
}

TEST(NearDuplicates, SketchEstimatesJaccard) {
    // Two word sets of Jaccard 0.5 and their sketches: the estimate is within the margin.
    std::string a, b;
    for (int i = 0; i < 300; ++i) a += "w" + std::to_string(i) + " ";
    for (int i = 100; i < 400; ++i) b += "w" + std::to_string(i) + " ";
    uint32_t sa[64], sb[64];
    simhash::minhash64_text(a.data(), a.size(), {simhash::ShingleUnit::kWord, 1}, nullptr, sa);
    simhash::minhash64_text(b.data(), b.size(), {simhash::ShingleUnit::kWord, 1}, nullptr, sb);
    uint8_t ka[simhash::kDuplicateSketchBytes], kb[simhash::kDuplicateSketchBytes];
    simhash::duplicate_sketch(sa, ka);
    simhash::duplicate_sketch(sb, kb);
    EXPECT_DOUBLE_EQ(simhash::sketch_jaccard(ka, ka), 1.0);
    const double estimate = simhash::sketch_jaccard(ka, kb);
    EXPECT_NEAR(estimate, 0.5, 0.25);
    EXPECT_TRUE(simhash::sketch_may_reach(estimate, 0.65));
    // The fingerprint is the low bit of the same slots.
    EXPECT_EQ(simhash::minhash64_text(a.data(), a.size(), {simhash::ShingleUnit::kWord, 1}, nullptr, sa),
              simhash::minhash64_text(a.data(), a.size(), {simhash::ShingleUnit::kWord, 1}));
    // A text without shingles: every slot is the empty set's, the fingerprint 0.
    EXPECT_EQ(simhash::minhash64_text("", 0, {simhash::ShingleUnit::kWord, 1}, nullptr, sa), 0u);
    EXPECT_EQ(sa[0], 0xFFFFFFFFu);
}

TEST(NearDuplicates, GroupsNeverChain) {
    // 0 ~ 1 and 1 ~ 2, but 0 and 2 share little: 2 is compared with 1's keeper (0) and keeps.
    Fixture f;
    f.texts = {"a b c d e f g h", "a b c d e f g h i j", "c d e f g h i j k l m n"};
    f.add_pair(0, 1);
    f.add_pair(1, 2);
    std::vector<uint32_t> keeper;
    DuplicateStats stats;
    ASSERT_EQ(f.run(word_jaccard(0.7), &keeper, nullptr, &stats), RunStatus::done);
    EXPECT_EQ(keeper, (std::vector<uint32_t>{0, 0, kUndecided}));
    ASSERT_EQ(f.found.size(), 1u);
    EXPECT_EQ(f.found[0].member, 1u);
    EXPECT_EQ(f.found[0].keeper, 0u);
    EXPECT_DOUBLE_EQ(f.found[0].similarity, 0.8);
    EXPECT_EQ(stats.pairs, 2u);
    EXPECT_EQ(stats.verified, 2u);
    EXPECT_EQ(stats.duplicates, 1u);
}

TEST(NearDuplicates, MembersBringTheirCandidatesToTheirKeeper) {
    // 0 ~ 2 is no candidate pair, but 2 is a candidate of 0's duplicate 1: it is compared with 0.
    Fixture f;
    f.texts = {"a b c d e f g h i j", "a b c d e f g h i j k", "a b c d e f g h i x"};
    f.add_pair(0, 1);
    f.add_pair(1, 2);
    std::vector<uint32_t> keeper;
    ASSERT_EQ(f.run(word_jaccard(0.8), &keeper), RunStatus::done);
    EXPECT_EQ(keeper, (std::vector<uint32_t>{0, 0, 0}));
    ASSERT_EQ(f.found.size(), 2u);
    EXPECT_EQ(f.found[1].member, 2u);
    EXPECT_EQ(f.found[1].keeper, 0u);
    EXPECT_NEAR(f.found[1].similarity, 9.0 / 11.0, 1e-12);
}

TEST(NearDuplicates, ThresholdIsInclusiveAndDecidedRowsAreSkipped) {
    // Jaccard exactly 0.5 is a duplicate at 0.5; rank 2 is claimed by 0 before 1 could.
    Fixture f;
    f.texts = {"a b", "a b c d", "a b c"};
    f.add_pair(0, 1);
    f.add_pair(0, 2);
    f.add_pair(1, 2);
    std::vector<uint32_t> keeper;
    DuplicateStats stats;
    ASSERT_EQ(f.run(word_jaccard(0.5), &keeper, nullptr, &stats), RunStatus::done);
    EXPECT_EQ(keeper, (std::vector<uint32_t>{0, 0, 0}));
    EXPECT_EQ(stats.decided, 1u);
    EXPECT_DOUBLE_EQ(f.found[0].similarity, 0.5);
}

TEST(NearDuplicates, ContainmentFindsExcerpts) {
    Fixture f;
    f.texts = {"a b c d e f g h i j k l", "c d e f"};
    f.add_pair(0, 1);
    std::vector<uint32_t> keeper;
    DuplicateRule rule = word_jaccard(0.9);
    ASSERT_EQ(f.run(rule, &keeper), RunStatus::done);
    EXPECT_EQ(keeper[1], kUndecided);
    rule.measure = DuplicateMeasure::containment;
    ASSERT_EQ(f.run(rule, &keeper), RunStatus::done);
    EXPECT_EQ(keeper[1], 0u);
    EXPECT_DOUBLE_EQ(f.found[0].similarity, 1.0);
}

TEST(NearDuplicates, IdenticalTextsAreNotShingled) {
    Fixture f;
    f.texts = {"same text", "same text", ""};
    f.texts.push_back("");
    f.add_pair(0, 1);
    f.add_pair(2, 3);
    std::vector<uint32_t> keeper;
    DuplicateStats stats;
    ASSERT_EQ(f.run(word_jaccard(1.0), &keeper, nullptr, &stats), RunStatus::done);
    EXPECT_EQ(keeper, (std::vector<uint32_t>{0, 0, 2, 2}));
    EXPECT_EQ(stats.identical, 2u);
    EXPECT_EQ(stats.verified, 0u);
}

TEST(NearDuplicates, SketchesScreenDissimilarPairs) {
    Fixture f;
    f.texts = {"alpha beta gamma delta epsilon zeta eta theta", "one two three four five six seven eight"};
    f.add_pair(0, 1);
    std::vector<uint8_t> sketches(2 * simhash::kDuplicateSketchBytes);
    for (int r = 0; r < 2; ++r) {
        uint32_t signature[64];
        simhash::minhash64_text(f.texts[r].data(), f.texts[r].size(), {simhash::ShingleUnit::kWord, 1}, nullptr,
                                signature);
        simhash::duplicate_sketch(signature, sketches.data() + r * simhash::kDuplicateSketchBytes);
    }
    std::vector<uint32_t> keeper;
    DuplicateStats stats;
    ASSERT_EQ(f.run(word_jaccard(0.65), &keeper, sketches.data(), &stats), RunStatus::done);
    EXPECT_EQ(stats.screened, 1u);
    EXPECT_EQ(stats.verified, 0u);
    EXPECT_EQ(f.text_calls, 0u);
    EXPECT_EQ(keeper[1], kUndecided);
}

TEST(NearDuplicates, StoredSignatures) {
    Fixture f;
    f.signatures = {{1, 2, 3, 4}, {1, 2, 3, 9}, {5, 6, 7, 8}};
    f.add_pair(0, 1);
    f.add_pair(0, 2);
    DuplicateRule rule = word_jaccard(0.75);
    rule.signature_slots = 4;
    std::vector<uint32_t> keeper;
    ASSERT_EQ(f.run(rule, &keeper), RunStatus::done);
    EXPECT_EQ(keeper, (std::vector<uint32_t>{0, 0, kUndecided}));
    EXPECT_DOUBLE_EQ(f.found[0].similarity, 0.75);
}

TEST(NearDuplicates, CallbacksStopTheRun) {
    Fixture f;
    f.texts = {"a b", "a b", "a b"};
    f.add_pair(0, 1);
    f.add_pair(0, 2);
    std::vector<uint32_t> keeper;
    f.fail_text = true;
    EXPECT_EQ(f.run(word_jaccard(0.5), &keeper), RunStatus::stopped);
    f.fail_text = false;
    f.stop_emit_after = 1;  // the writer hands over its batch at the end: the stop comes there
    EXPECT_EQ(f.run(word_jaccard(0.5), &keeper), RunStatus::stopped);
    RunControl control;
    int polls = 0;
    control.context = &polls;
    control.should_stop = [](void *context) { return ++*static_cast<int *>(context) > 0; };
    f.stop_emit_after = SIZE_MAX;
    for (uint32_t i = 3; i < 70000; ++i) f.texts.push_back("a b");
    f.pairs.clear();
    for (uint32_t i = 1; i < 70000; ++i) f.pairs.push_back(uint64_t{0} << 32 | i);
    EXPECT_EQ(f.run(word_jaccard(0.5), &keeper, nullptr, nullptr, control), RunStatus::stopped);
    EXPECT_GT(polls, 0);
}

TEST(NearDuplicates, RanksById) {
    const int64_t ids[] = {30, -5, 12, INT64_MIN, 7};
    uint32_t rows[5];
    int64_t repeated = 0;
    ASSERT_FALSE(simhash::rank_by_id(ids, 5, rows, &repeated));
    EXPECT_EQ(std::vector<uint32_t>(rows, rows + 5), (std::vector<uint32_t>{3, 1, 4, 2, 0}));
    const int64_t twice[] = {4, 9, 4};
    ASSERT_TRUE(simhash::rank_by_id(twice, 3, rows, &repeated));
    EXPECT_EQ(repeated, 4);
}

TEST(NearDuplicates, RefusesPairsThatAreNotRanks) {
    Fixture f;
    f.texts = {"a", "b"};
    f.pairs = {uint64_t{1} << 32 | 0};
    std::vector<uint32_t> keeper;
    EXPECT_THROW(f.run(word_jaccard(0.5), &keeper), std::invalid_argument);
    f.pairs = {uint64_t{0} << 32 | 5};
    EXPECT_THROW(f.run(word_jaccard(0.5), &keeper), std::invalid_argument);
}

}  // namespace
