// Golden values. THESE ARE A COMPATIBILITY PROMISE: users store fingerprints and signatures in
// tables and compare new documents against them, so the same text must give the same value on every
// machine and in every release. If one of these tests fails, the change breaks users' stored
// fingerprints: do not update the constants; keep the old behaviour (or ship it under a new,
// versioned function and say so in the release notes).
//
// The constants were computed once with the code of the first release (UCD 15.0.0 tables, XXH3
// 64-bit seed 0 feature hashes, SplitMix64-derived MinHash parameters) and pasted here as literals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/feature_hash.h"
#include "core/minhash.h"
#include "core/simhash.h"

using simhash::ShingleOptions;
using simhash::ShingleUnit;

namespace {

const char *const kEnglish = "The quick brown fox jumps over the lazy dog.";
// 我们在这里测试中文文本的指纹。
const char *const kChinese =
    "\xE6\x88\x91\xE4\xBB\xAC\xE5\x9C\xA8\xE8\xBF\x99\xE9\x87\x8C\xE6\xB5\x8B\xE8\xAF\x95\xE4\xB8\xAD"
    "\xE6\x96\x87\xE6\x96\x87\xE6\x9C\xAC\xE7\x9A\x84\xE6\x8C\x87\xE7\xBA\xB9\xE3\x80\x82";
// PostgreSQL 扩展 simhash 支持中文和 English 混合文本 2024!
const char *const kMixed =
    "PostgreSQL \xE6\x89\xA9\xE5\xB1\x95 simhash \xE6\x94\xAF\xE6\x8C\x81\xE4\xB8\xAD\xE6\x96\x87\xE5\x92\x8C"
    " English \xE6\xB7\xB7\xE5\x90\x88\xE6\x96\x87\xE6\x9C\xAC 2024!";
const char *const kEmpty = "";
const char *const kShort = "hello";

const ShingleOptions kOptions[4] = {
    {},                      // default: word 3-shingles
    {ShingleUnit::kChar, 5},
    {ShingleUnit::kWord, 1},
    {ShingleUnit::kChar, 2},
};

struct SimhashGolden {
    const char *text;
    uint64_t fingerprint[4];  // one per kOptions entry
};

const SimhashGolden kSimhashGolden[] = {
    {kEnglish, {0x5CC1C8EFC0C9B905ull, 0x0F231859FB18CE61ull, 0x8212868318D29267ull, 0x026774A223414592ull}},
    {kChinese, {0x24C4624881700DE4ull, 0xCF0DA03E2D690138ull, 0x4B35048602522C52ull, 0x9DE6BD54B1DCCF83ull}},
    {kMixed, {0x0DD13CD555F73560ull, 0x346383396EC5512Bull, 0x0D3400ACC368F462ull, 0x89D3D4E215807A80ull}},
    {kEmpty, {0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull}},
    {kShort, {0x9555E8555C62DCFDull, 0x9555E8555C62DCFDull, 0x9555E8555C62DCFDull, 0x800E09C819820081ull}},
};

// Weighted votes (0.3.0; simhash(text) in SQL is word 2-shingles with set votes).
const char *const kRepeats = "to be or not to be that is the question to be or not";

struct WeightedGolden {
    const char *text;
    uint64_t word2_set, word2_log, char4_set;
};

const WeightedGolden kWeightedGolden[] = {
    {kEnglish, 0x12BF80024A210544ull, 0x12BF80024A210544ull, 0x89F2A50454209714ull},
    {kChinese, 0x0D7207E8D0929104ull, 0x0D7207E8D0929104ull, 0x170F8D77086B5DF7ull},
    {kMixed, 0x2212DDF062D2507Cull, 0x2212DDF062D2507Cull, 0x20F9742A265FE302ull},
    {kEmpty, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull},
    {kShort, 0x9555E8555C62DCFDull, 0x9555E8555C62DCFDull, 0xC0862568446F0001ull},
    {kRepeats, 0xE0034EDE5D3C21EFull, 0x62634AD64C3D28C7ull, 0x1085A4003E02EA67ull},
};

struct MinhashGolden {
    const char *text;
    uint64_t seed;
    uint32_t first8[8];  // slots 0..7 of a 128-slot signature, default shingle options
};

const MinhashGolden kMinhashGolden[] = {
    {kEnglish, 0, {0x85E72BEAu, 0x279EA0A5u, 0x1F216344u, 0x0E67B560u, 0x1494ADDAu, 0x76DA9896u, 0x06DAB882u, 0x30A8529Eu}},
    {kChinese, 0, {0x02C6F98Au, 0x0323B3ECu, 0x067C9CE4u, 0x08ED13BDu, 0x179FE0EFu, 0x0E6475E3u, 0x067D9063u, 0x0719641Fu}},
    {kMixed, 0, {0x1890A7E7u, 0x01D75FBFu, 0x221430B7u, 0x07359508u, 0x00115C6Bu, 0x119FEE8Cu, 0x0443ADD7u, 0x18730C07u}},
    {kEmpty, 0, {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}},
    {kShort, 0, {0x3C80E2FFu, 0xD00902E2u, 0xEE5CBD87u, 0x7CB9D635u, 0x77D02568u, 0x9A925BC4u, 0x824A232Du, 0xB46657A5u}},
    {kEnglish, 42, {0x281B7D44u, 0x2C222893u, 0x1DB3E786u, 0x03ACB8BBu, 0x075ABF22u, 0x027A4A0Cu, 0x0A2FF1BAu, 0x20EE2CFDu}},
    {kChinese, 42, {0x12CB0CB5u, 0x239DE880u, 0x19AD5A3Bu, 0x16CF26D1u, 0x20311487u, 0x1954FF60u, 0x0B5C6EEFu, 0x0CD324F9u}},
    {kMixed, 42, {0x0D0A50BDu, 0x16DBB823u, 0x2D83AEDDu, 0x231204FBu, 0x045CD8EEu, 0x055F3913u, 0x07F68AD0u, 0x047A9158u}},
    {kEmpty, 42, {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}},
    {kShort, 42, {0x0C61C00Cu, 0xFC560565u, 0x8706563Au, 0x277E970Au, 0x78F6CA5Fu, 0x573F52D2u, 0xCA14C825u, 0x30815F98u}},
};

// One-bit MinHash fingerprints (0.3.0; minhash64(text) in SQL is word 1-shingles).
struct Minhash64Golden {
    const char *text;
    uint64_t word1, char4;
};

const Minhash64Golden kMinhash64Golden[] = {
    {kEnglish, 0x69D9F08379082962ull, 0x7DDA2FEF2DE5A4E4ull},
    {kChinese, 0x591FDE9D7C8866ECull, 0xC3CBA260B158767Aull},
    {kMixed, 0x25A804076C98D7C0ull, 0x3D857A37E4999081ull},
    {kEmpty, 0x0000000000000000ull, 0x0000000000000000ull},
    {kShort, 0x3A3C7A99B9F41ACDull, 0x76F420608D8CA3D0ull},
    {kRepeats, 0x3143CCB95399102Dull, 0x338D236F7140DCB0ull},
};

}  // namespace

TEST(Golden, FeatureHashIsXxh3Seed0) {
    // A one-shingle text's SimHash is the XXH3 hash of that shingle, so this pins the hash too.
    EXPECT_EQ(simhash::feature_hash("hello", 5), 0x9555E8555C62DCFDull);
    EXPECT_EQ(simhash::feature_hash("hello", 5), XXH3_64bits_withSeed("hello", 5, 0));
}

TEST(Golden, SimhashText) {
    for (const auto &g : kSimhashGolden) {
        for (int o = 0; o < 4; ++o) {
            EXPECT_EQ(simhash::simhash_text(g.text, std::strlen(g.text), kOptions[o]), g.fingerprint[o])
                << "text \"" << g.text << "\", options #" << o << std::hex << std::uppercase
                << ": got 0x" << simhash::simhash_text(g.text, std::strlen(g.text), kOptions[o]);
        }
    }
}

TEST(Golden, SimhashTextWeighted) {
    const ShingleOptions word2{ShingleUnit::kWord, 2}, char4{ShingleUnit::kChar, 4};
    using simhash::ShingleWeighting;
    for (const auto &g : kWeightedGolden) {
        const size_t len = std::strlen(g.text);
        EXPECT_EQ(simhash::simhash_text(g.text, len, word2, ShingleWeighting::kSet), g.word2_set) << g.text;
        EXPECT_EQ(simhash::simhash_text(g.text, len, word2, ShingleWeighting::kLog), g.word2_log) << g.text;
        EXPECT_EQ(simhash::simhash_text(g.text, len, char4, ShingleWeighting::kSet), g.char4_set) << g.text;
        // 'count' is the streaming SimHash of every occurrence, the golden values above.
        EXPECT_EQ(simhash::simhash_text(g.text, len, {}, ShingleWeighting::kCount),
                  simhash::simhash_text(g.text, len, {}));
    }
}

TEST(Golden, MinhashTextFirstEightSlots) {
    for (const auto &g : kMinhashGolden) {
        simhash::MinhashFamily family(128, g.seed);
        const std::vector<uint32_t> sig = simhash::minhash_text(g.text, std::strlen(g.text), family);
        ASSERT_EQ(sig.size(), 128u);
        for (int i = 0; i < 8; ++i)
            EXPECT_EQ(sig[i], g.first8[i]) << "text \"" << g.text << "\", seed " << g.seed << ", slot " << i;
    }
}

TEST(Golden, Minhash64Text) {
    const ShingleOptions word1{ShingleUnit::kWord, 1}, char4{ShingleUnit::kChar, 4};
    for (const auto &g : kMinhash64Golden) {
        const size_t len = std::strlen(g.text);
        simhash::StopPoll poll;
        EXPECT_EQ(simhash::minhash64_text(g.text, len, word1, &poll), g.word1) << g.text;
        EXPECT_EQ(simhash::minhash64_text(g.text, len, char4), g.char4) << g.text;
    }
    // Its low 8 bits are the low bits of the MinHash golden slots 0..7 (seed 0, word 3-shingles):
    // the two functions share one family and one definition of a slot.
    for (const auto &g : kMinhashGolden) {
        if (g.seed != 0 || *g.text == '\0') continue;
        const uint64_t fp = simhash::minhash64_text(g.text, std::strlen(g.text), {});
        for (int i = 0; i < 8; ++i) EXPECT_EQ((fp >> i) & 1, g.first8[i] & 1) << g.text << ", bit " << i;
    }
}

TEST(Golden, UnchangedWithAStopPollThatNeverStops) {
    // The SQL functions always pass a poll; it must not change a single value.
    for (const auto &g : kSimhashGolden)
        for (int o = 0; o < 4; ++o) {
            simhash::StopPoll poll;
            EXPECT_EQ(simhash::simhash_text(g.text, std::strlen(g.text), kOptions[o], &poll), g.fingerprint[o]);
        }
    for (const auto &g : kMinhashGolden) {
        simhash::MinhashFamily family(128, g.seed);
        simhash::StopPoll poll;
        const auto sig = simhash::minhash_text(g.text, std::strlen(g.text), family, {}, &poll);
        EXPECT_TRUE(std::equal(g.first8, g.first8 + 8, sig.begin())) << "text \"" << g.text << "\"";
    }
}

TEST(Golden, SignatureDoesNotDependOnSlotCount) {
    // Slot i depends only on the seed and i: a 16-slot signature is a prefix of the 128-slot one.
    simhash::MinhashFamily f16(16, 42), f128(128, 42);
    const auto s16 = simhash::minhash_text(kEnglish, std::strlen(kEnglish), f16);
    const auto s128 = simhash::minhash_text(kEnglish, std::strlen(kEnglish), f128);
    EXPECT_TRUE(std::equal(s16.begin(), s16.end(), s128.begin()));
}
