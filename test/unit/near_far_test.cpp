// Near-duplicates are close, unrelated documents far apart: on real text, the licenses every Debian
// system ships in /usr/share/common-licenses. Distances are printed ("[ MEASURE  ]" lines).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/hamming.h"
#include "core/simhash.h"
#include "test_util.h"

namespace {

const std::string kLicenses = "/usr/share/common-licenses/";

uint64_t fp(const std::string &text, const simhash::ShingleOptions &options = {}) {
    return simhash::simhash_text(text.data(), text.size(), options);
}

std::vector<std::string> split(const std::string &text, const std::string &sep) {
    std::vector<std::string> parts;
    size_t from = 0;
    for (size_t at; (at = text.find(sep, from)) != std::string::npos; from = at + sep.size())
        parts.push_back(text.substr(from, at - from));
    parts.push_back(text.substr(from));
    return parts;
}

std::string join(const std::vector<std::string> &parts, const std::string &sep) {
    std::string out;
    for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
    return out;
}

// Replaces `fraction` of the whitespace-separated words by random lowercase words.
std::string replace_words(const std::string &text, double fraction, std::mt19937_64 &rng) {
    std::string out = text;
    std::vector<std::pair<size_t, size_t>> words;  // [begin, end)
    for (size_t i = 0; i < out.size();) {
        while (i < out.size() && std::isspace(static_cast<unsigned char>(out[i]))) ++i;
        const size_t b = i;
        while (i < out.size() && !std::isspace(static_cast<unsigned char>(out[i]))) ++i;
        if (i > b) words.emplace_back(b, i);
    }
    const size_t n = static_cast<size_t>(words.size() * fraction);
    std::vector<size_t> chosen;
    for (size_t k = 0; k < n; ++k) chosen.push_back(rng() % words.size());
    std::sort(chosen.begin(), chosen.end());
    chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
    for (auto it = chosen.rbegin(); it != chosen.rend(); ++it) {
        std::string w;
        for (size_t len = 3 + rng() % 6; len > 0; --len) w += static_cast<char>('a' + rng() % 26);
        out.replace(words[*it].first, words[*it].second - words[*it].first, w);
    }
    return out;
}

// Deletes the paragraph at `index` (paragraphs are separated by blank lines).
std::string delete_paragraph(const std::string &text, size_t index) {
    std::vector<std::string> paragraphs = split(text, "\n\n");
    if (index < paragraphs.size()) paragraphs.erase(paragraphs.begin() + index);
    return join(paragraphs, "\n\n");
}

// Boilerplate a web page or a mirror might wrap around a document.
std::string add_noise(const std::string &text) {
    const std::string head =
        "Downloaded from https://mirror.example.org/licenses/gpl-3.0.txt on 2024-06-01 12:34:56 UTC\n"
        "Visitors today: 18342 | Page views: 99120\n"
        "ADVERTISEMENT: Buy cheap hosting now, 50% off, use code SAVE50!\n\n";
    const std::string middle = "\n\n[ Sponsored ] Learn PostgreSQL in 30 days. Click here.\n\n";
    const std::string tail = "\n\nLast modified: Saturday, 1 June 2024 | Copyright 2024 Example Mirror Ltd.\n"
                             "Share on Twitter | Facebook | Email\n";
    const size_t mid = text.find("\n\n", text.size() / 2);
    std::string out = head + text.substr(0, mid) + middle + text.substr(mid) + tail;
    return out;
}

// Re-wraps every paragraph to 60 columns and upper-cases the first line: no token changes.
std::string reformat(const std::string &text) {
    std::vector<std::string> paragraphs = split(text, "\n\n");
    for (auto &p : paragraphs) {
        std::istringstream in(p);
        std::string word, line, out;
        while (in >> word) {
            if (!line.empty() && line.size() + 1 + word.size() > 60) {
                out += line + "\n";
                line.clear();
            }
            line += (line.empty() ? "" : " ") + word;
        }
        p = out + line;
    }
    std::string out = join(paragraphs, "\n\n\n");
    for (size_t i = 0; i < out.size() && out[i] != '\n'; ++i)
        out[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[i])));
    return out;
}

}  // namespace

TEST(NearFar, EditedCopiesOfGpl3AreWithinAFewBits) {
    const std::string original = test_util::read_file(kLicenses + "GPL-3");
    if (original.empty()) GTEST_SKIP() << kLicenses << "GPL-3 is missing";
    std::mt19937_64 rng(12345);
    const size_t paragraphs = split(original, "\n\n").size();

    struct Edit {
        const char *name;
        std::string text;
        int max_bits;
    };
    std::vector<Edit> edits = {
        {"reformatted (re-wrapped, upper case)", reformat(original), 0},
        {"1% of words replaced", replace_words(original, 0.01, rng), 6},
        {"one paragraph deleted", delete_paragraph(original, paragraphs / 3), 6},
        {"ads, counters and dates inserted", add_noise(original), 6},
        // Not a light edit any more: 1% of words, a paragraph and the boilerplate at once.
        {"all three edits", add_noise(delete_paragraph(replace_words(original, 0.01, rng), paragraphs / 2)), 12},
    };
    const uint64_t base_word = fp(original);
    const uint64_t base_char = fp(original, {simhash::ShingleUnit::kChar, 5});
    for (const auto &e : edits) {
        ASSERT_NE(e.text, original);
        const int d_word = simhash::hamming_distance(base_word, fp(e.text));
        const int d_char = simhash::hamming_distance(base_char, fp(e.text, {simhash::ShingleUnit::kChar, 5}));
        std::printf("[ MEASURE  ] GPL-3 vs %-38s word-3: %2d bits, char-5: %2d bits\n", e.name, d_word, d_char);
        EXPECT_LE(d_word, e.max_bits) << e.name;
        EXPECT_LE(d_char, e.max_bits) << e.name;
    }
}

TEST(NearFar, ReplacingOnePercentOfWordsOverManySeeds) {
    // The distance after a random edit is itself random: with word 3-shingles, replacing 1% of the
    // words changes about 3% of the shingles, which flips about 4 bits on average (and more than 6
    // bits for a few percent of edits). Check the mean over 50 edits, not just one lucky edit.
    const std::string original = test_util::read_file(kLicenses + "GPL-3");
    if (original.empty()) GTEST_SKIP() << kLicenses << "GPL-3 is missing";
    const uint64_t base = fp(original);
    int histogram[65] = {};
    double sum = 0;
    int worst = 0;
    const int trials = 50;
    for (int seed = 0; seed < trials; ++seed) {
        std::mt19937_64 rng(1000 + seed);
        const int d = simhash::hamming_distance(base, fp(replace_words(original, 0.01, rng)));
        ++histogram[d];
        sum += d;
        worst = std::max(worst, d);
    }
    std::printf("[ MEASURE  ] GPL-3, 1%% of words replaced, %d seeds: mean %.2f bits, max %d; histogram", trials,
                sum / trials, worst);
    for (int d = 0; d <= worst; ++d) std::printf(" %d:%d", d, histogram[d]);
    std::printf("\n");
    EXPECT_LE(sum / trials, 6.0);
    EXPECT_LE(worst, 12);
}

TEST(NearFar, UnrelatedLicensesAreFarApart) {
    const char *names[] = {"GPL-3", "GPL-2", "Apache-2.0", "LGPL-2.1", "MPL-2.0", "Artistic", "BSD"};
    struct Doc {
        std::string name;
        uint64_t word3, char5;
    };
    std::vector<Doc> docs;
    for (const char *name : names) {
        const std::string text = test_util::read_file(kLicenses + name);
        if (text.empty()) {
            std::printf("[ MEASURE  ] %s%s is missing, skipped\n", kLicenses.c_str(), name);
            continue;
        }
        docs.push_back({name, fp(text), fp(text, {simhash::ShingleUnit::kChar, 5})});
    }
    if (docs.size() < 3) GTEST_SKIP() << "fewer than 3 licenses in " << kLicenses;
    double sum = 0, sum_char = 0;
    int pairs = 0, closest = 64;
    for (size_t i = 0; i < docs.size(); ++i) {
        for (size_t j = i + 1; j < docs.size(); ++j) {
            const int d = simhash::hamming_distance(docs[i].word3, docs[j].word3);
            const int dc = simhash::hamming_distance(docs[i].char5, docs[j].char5);
            std::printf("[ MEASURE  ] %-10s vs %-10s word-3: %2d bits, char-5: %2d bits\n", docs[i].name.c_str(),
                        docs[j].name.c_str(), d, dc);
            sum += d;
            sum_char += dc;
            ++pairs;
            closest = std::min(closest, d);
        }
    }
    const double mean = sum / pairs;
    std::printf("[ MEASURE  ] mean over %d pairs: word-3 %.1f bits (closest pair %d), char-5 %.1f bits\n", pairs,
                mean, closest, sum_char / pairs);
    EXPECT_GE(mean, 22.0);
    EXPECT_LE(mean, 42.0);
    // Even the closest unrelated pair is far beyond the near-duplicate radius.
    EXPECT_GT(closest, 10);
}
