// The shingle window keeps only the tokens a future shingle can use and compacts its buffer with
// memmove (ShingleWindow::make_room). On texts of a few MB, for_each_shingle must hand out exactly
// what a naive reference gives: tokenize the whole text into a vector, then join windows of tokens.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/shingles.h"

using simhash::ShingleOptions;
using simhash::ShingleUnit;

namespace {

std::string utf8(uint32_t cp) {
    char buf[4];
    return std::string(buf, simhash::encode_utf8(cp, buf));
}

// Reference: the definition of shingles.h, steps 1-5, written the slow and obvious way. Only the
// per-code-point decoding and classification (the Unicode tables) are shared with the library.
std::vector<std::string> reference_tokens(const std::string &text, ShingleUnit unit) {
    std::vector<std::string> tokens;
    const unsigned char *p = reinterpret_cast<const unsigned char *>(text.data());
    const unsigned char *end = p + text.size();
    std::string word;
    bool pending_space = false;
    while (p < end) {
        uint32_t cp = simhash::decode_utf8(p, end);
        simhash::TokenClass cls = simhash::normalize_code_point(cp);
        if (unit == ShingleUnit::kWord) {
            if (cls == simhash::kMark) cls = word.empty() ? simhash::kSeparator : simhash::kWord;
            if (cls == simhash::kWord) {
                word += utf8(cp);
                continue;
            }
            if (!word.empty()) tokens.push_back(std::move(word));
            word.clear();
            if (cls == simhash::kIdeograph) tokens.push_back(utf8(cp));
        } else {
            if (cls == simhash::kMark && (pending_space || tokens.empty())) cls = simhash::kSeparator;
            if (cls == simhash::kSeparator) {
                pending_space = !tokens.empty();
                continue;
            }
            if (pending_space) tokens.push_back(" ");
            pending_space = false;
            tokens.push_back(utf8(cp));
        }
    }
    if (!word.empty()) tokens.push_back(std::move(word));
    return tokens;
}

std::vector<std::string> reference_shingles(const std::string &text, ShingleUnit unit, int size) {
    const std::vector<std::string> tokens = reference_tokens(text, unit);
    const char *joiner = unit == ShingleUnit::kWord ? " " : "";
    std::vector<std::string> out;
    auto join = [&](size_t from, size_t to) {
        std::string s;
        for (size_t i = from; i < to; ++i) {
            if (i > from) s += joiner;
            s += tokens[i];
        }
        return s;
    };
    if (tokens.empty()) return out;
    if (tokens.size() < static_cast<size_t>(size)) {
        out.push_back(join(0, tokens.size()));
        return out;
    }
    for (size_t i = 0; i + size <= tokens.size(); ++i) out.push_back(join(i, i + size));
    return out;
}

void expect_same_as_reference(const std::string &text, ShingleUnit unit, int size) {
    SCOPED_TRACE(std::string(unit == ShingleUnit::kWord ? "word" : "char") + " size " +
                 std::to_string(size));
    const std::vector<std::string> expected = reference_shingles(text, unit, size);
    size_t n = 0, mismatches = 0;
    simhash::for_each_shingle(text.data(), text.size(), ShingleOptions{unit, size},
                              [&](const char *data, size_t len) {
                                  if (n >= expected.size() || expected[n].size() != len ||
                                      expected[n].compare(0, len, data, len) != 0) {
                                      if (mismatches++ < 3)
                                          ADD_FAILURE() << "shingle " << n << ": got \""
                                                        << std::string(data, len).substr(0, 200)
                                                        << "\", expected \""
                                                        << (n < expected.size() ? expected[n].substr(0, 200)
                                                                                : std::string("<none>"))
                                                        << "\"";
                                  }
                                  ++n;
                              });
    EXPECT_EQ(n, expected.size());
    EXPECT_EQ(mismatches, 0u);
}

const uint32_t kLatinExtra[] = {0xE9, 0xC9, 0xDF, 0x3A3, 0x3C2, 0x416, 0x212A, 0xFF21, 0x301, 0x663};
const uint32_t kSeparators[] = {' ', ' ', ' ', ',', '.', '\n', '\t', 0x2014, 0x1F600, 0x3002, 0xFF0C, 0xA0};

// Random words: mostly ASCII, some non-ASCII letters, marks and digits, random separator runs,
// a few invalid bytes and, now and then, a very long word (longer than the 4096-byte ASCII chunk
// and than the initial 16 KB buffer) so the window has to grow as well as compact.
std::string random_words(size_t bytes, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string s;
    s.reserve(bytes + 64);
    while (s.size() < bytes) {
        size_t len = 1 + rng() % 12;
        if (rng() % 5000 == 0) len = 5000 + rng() % 40000;
        for (size_t i = 0; i < len; ++i) {
            const uint64_t r = rng() % 100;
            if (r < 80) s += static_cast<char>((rng() % 2 ? 'a' : 'A') + rng() % 26);
            else if (r < 88) s += static_cast<char>('0' + rng() % 10);
            else s += utf8(kLatinExtra[rng() % (sizeof kLatinExtra / sizeof kLatinExtra[0])]);
        }
        const size_t seps = 1 + (rng() % 8 == 0 ? rng() % 6 : 0);
        for (size_t i = 0; i < seps; ++i) {
            if (rng() % 200 == 0) s += static_cast<char>(0x80 | rng() % 0x80);  // invalid byte
            else s += utf8(kSeparators[rng() % (sizeof kSeparators / sizeof kSeparators[0])]);
        }
    }
    return s;
}

// Random CJK: Han ideographs with kana, CJK punctuation, and now and then a Latin word or digits.
std::string random_cjk(size_t bytes, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string s;
    s.reserve(bytes + 64);
    while (s.size() < bytes) {
        const uint64_t r = rng() % 100;
        if (r < 70) s += utf8(0x4E00 + rng() % 0x5000);
        else if (r < 80) s += utf8(0x3041 + rng() % 0x50);  // hiragana
        else if (r < 85) s += utf8(0x30A1 + rng() % 0x50);  // katakana
        else if (r < 92) s += utf8(rng() % 2 ? 0x3002 : 0xFF0C);
        else if (r < 96) s += "Latin" + std::to_string(rng() % 1000);
        else if (r < 98) s += ' ';
        else s += utf8(0x20000 + rng() % 0x100);  // CJK extension B, 4-byte UTF-8
    }
    return s;
}

}  // namespace

TEST(ShingleWindow, ReferenceAgreesOnSmallTexts) {
    // Sanity check of the reference itself against the documented examples.
    EXPECT_EQ(reference_shingles("Hello, World! HELLO", ShingleUnit::kWord, 2),
              (std::vector<std::string>{"hello world", "world hello"}));
    EXPECT_EQ(reference_shingles(" ab, c ", ShingleUnit::kChar, 3),
              (std::vector<std::string>{"ab ", "b c"}));
    EXPECT_EQ(reference_shingles("ab", ShingleUnit::kChar, 3), (std::vector<std::string>{"ab"}));
}

TEST(ShingleWindow, LongRandomWordsMatchReference) {
    const std::string text = random_words(3u << 20, 1);
    for (ShingleUnit unit : {ShingleUnit::kWord, ShingleUnit::kChar})
        for (int size = 1; size <= 8; ++size) expect_same_as_reference(text, unit, size);
}

TEST(ShingleWindow, LongRandomCjkMatchReference) {
    const std::string text = random_cjk(3u << 20, 2);
    for (ShingleUnit unit : {ShingleUnit::kWord, ShingleUnit::kChar})
        for (int size = 1; size <= 8; ++size) expect_same_as_reference(text, unit, size);
}

TEST(ShingleWindow, LargestSizesMatchReference) {
    const std::string words = random_words(1u << 20, 3);
    const std::string cjk = random_cjk(1u << 20, 4);
    for (ShingleUnit unit : {ShingleUnit::kWord, ShingleUnit::kChar})
        for (int size : {31, 63, 64}) {
            expect_same_as_reference(words, unit, size);
            expect_same_as_reference(cjk, unit, size);
        }
}

TEST(ShingleWindow, OneHugeTokenAndFewTokens) {
    // A single 5 MB word; a 5 MB word between short ones (fewer tokens than the shingle size).
    const std::string huge(5u << 20, 'q');
    for (int size : {1, 2, 3, 8}) {
        expect_same_as_reference(huge, ShingleUnit::kWord, size);
        expect_same_as_reference("a b " + huge + " c", ShingleUnit::kWord, size);
    }
    expect_same_as_reference(std::string(1u << 20, 'z') + " \xE4\xB8\xAD", ShingleUnit::kChar, 8);
}

TEST(ShingleWindow, CodePointsAndTokensAcrossStretchBoundaries) {
    // The text is read in stretches of kPollStretchBytes; a multi-byte code point, a mark or a
    // word that straddles the end of a stretch is read as if there were no boundary.
    const size_t boundary = simhash::kPollStretchBytes;
    const std::string pieces[] = {"\xF0\xA0\x80\x80", "\xE4\xB8\xAD", "e\xCC\x81t\xC3\xA9",
                                  "word", "\xD0\x96x"};
    for (const std::string &piece : pieces)
        for (size_t shift = 0; shift < 5; ++shift) {
            std::string text(boundary - shift, 'a');
            for (size_t i = 7; i < text.size(); i += 8) text[i] = ' ';
            text += piece + " tail " + piece;
            SCOPED_TRACE(shift);
            for (ShingleUnit unit : {ShingleUnit::kWord, ShingleUnit::kChar})
                for (int size : {1, 2, 5}) expect_same_as_reference(text, unit, size);
        }
}
