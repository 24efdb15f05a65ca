// Tokenizer edge cases: exact shingles for the definition documented in src/core/shingles.h.
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <string>
#include <vector>

#include "core/shingles.h"
#include "core/simhash.h"
#include "test_util.h"

using simhash::ShingleOptions;
using simhash::ShingleUnit;
using test_util::chars;
using test_util::words;
using V = std::vector<std::string>;

namespace {

std::string repeat_words(int n) {
    std::string s;
    for (int i = 0; i < n; ++i) {
        if (i) s += ' ';
        s += "w" + std::to_string(i);
    }
    return s;
}

}  // namespace

TEST(Tokenizer, AsciiPunctuationAndCase) {
    EXPECT_EQ(words("Hello, World! HELLO", 3), (V{"hello world hello"}));
    EXPECT_EQ(words("Hello, World! HELLO", 2), (V{"hello world", "world hello"}));
    EXPECT_EQ(words("Hello, World! HELLO", 1), (V{"hello", "world", "hello"}));
    // Apostrophes, hyphens, underscores, dots and slashes are separators.
    EXPECT_EQ(words("don't well-known snake_case e.g. a/b", 1),
              (V{"don", "t", "well", "known", "snake", "case", "e", "g", "a", "b"}));
    // Tabs, newlines, CR and other controls separate too; runs of separators count once.
    EXPECT_EQ(words("\t one\r\n\n two \x01three\x7f", 2), (V{"one two", "two three"}));
}

TEST(Tokenizer, DigitsAreWordCharacters) {
    EXPECT_EQ(words("abc123 4.5 $100 1+1=2 v2", 1),
              (V{"abc123", "4", "5", "100", "1", "1", "2", "v2"}));
}

TEST(Tokenizer, UnicodeCaseFolding) {
    // Latin with precomposed accents.
    EXPECT_EQ(words("\xC3\x89" "COLE", 1), (V{"\xC3\xA9" "cole"}));  // ÉCOLE -> école
    // Simple case folding only: ß stays ß (full folding would give "ss"), capital ẞ folds to ß.
    EXPECT_EQ(words("STRA\xC3\x9F" "E \xE1\xBA\x9E", 1), (V{"stra\xC3\x9F" "e", "\xC3\x9F"}));
    // Greek: capital sigma and final sigma both fold to σ.
    EXPECT_EQ(words("\xCE\xA3\xCE\x9F\xCE\xA6\xCE\x9F\xCE\xA3 \xCF\x83\xCE\xBF\xCF\x86\xCE\xBF\xCF\x82", 1),
              (V{"\xCF\x83\xCE\xBF\xCF\x86\xCE\xBF\xCF\x83", "\xCF\x83\xCE\xBF\xCF\x86\xCE\xBF\xCF\x83"}));
    // Kelvin sign U+212A -> k, Ohm sign U+2126 -> ω, Angstrom sign U+212B -> å.
    EXPECT_EQ(words("300\xE2\x84\xAA" " \xE2\x84\xA6 \xE2\x84\xAB", 1),
              (V{"300k", "\xCF\x89", "\xC3\xA5"}));
    // Cyrillic.
    EXPECT_EQ(words("\xD0\x9C\xD0\x9E\xD0\xA1\xD0\x9A\xD0\x92\xD0\x90", 1),
              (V{"\xD0\xBC\xD0\xBE\xD1\x81\xD0\xBA\xD0\xB2\xD0\xB0"}));  // МОСКВА -> москва
    // Turkish dotted capital I has no simple (C/S) folding: it stays U+0130.
    EXPECT_EQ(words("\xC4\xB0stanbul", 1), (V{"\xC4\xB0stanbul"}));
    // Outside the BMP: Deseret capital long I U+10400 folds to U+10428.
    EXPECT_EQ(words("\xF0\x90\x90\x80", 1), (V{"\xF0\x90\x90\xA8"}));
}

TEST(Tokenizer, FullwidthAscii) {
    // ＡＢＣ１２３ -> abc123 (fullwidth capitals fold, then map to ASCII); ， and ！ are separators.
    EXPECT_EQ(words("\xEF\xBC\xA1\xEF\xBC\xA2\xEF\xBC\xA3 \xEF\xBD\x84\xEF\xBD\x85\xEF\xBD\x86"
                    "\xEF\xBC\x8C\xEF\xBC\x91\xEF\xBC\x92\xEF\xBC\x93\xEF\xBC\x81",
                    1),
              (V{"abc", "def", "123"}));
    // Fullwidth and ASCII spellings give the same shingles, hence the same fingerprint.
    const std::string wide = "\xEF\xBC\xB0\xEF\xBD\x99\xEF\xBD\x94\xEF\xBD\x88\xEF\xBD\x8F\xEF\xBD\x8E";
    EXPECT_EQ(words(wide, 1), (V{"python"}));
    EXPECT_EQ(simhash::simhash_text(wide.data(), wide.size()), simhash::simhash_text("Python", 6));
}

TEST(Tokenizer, CjkIsOneTokenPerCharacterInWordMode) {
    // 中文分词
    const std::string zh = "\xE4\xB8\xAD\xE6\x96\x87\xE5\x88\x86\xE8\xAF\x8D";
    EXPECT_EQ(words(zh, 1), (V{"\xE4\xB8\xAD", "\xE6\x96\x87", "\xE5\x88\x86", "\xE8\xAF\x8D"}));
    EXPECT_EQ(words(zh, 2), (V{"\xE4\xB8\xAD \xE6\x96\x87", "\xE6\x96\x87 \xE5\x88\x86",
                               "\xE5\x88\x86 \xE8\xAF\x8D"}));
    // CJK punctuation (，。) is a separator but does not change the token sequence.
    EXPECT_EQ(words("\xE4\xB8\xAD\xEF\xBC\x8C\xE6\x96\x87\xE3\x80\x82\xE5\x88\x86\xE8\xAF\x8D", 2),
              words(zh, 2));
}

TEST(Tokenizer, MixedCjkAndLatin) {
    // 我爱Python编程 -> 我 | 爱 | python | 编 | 程
    EXPECT_EQ(words("\xE6\x88\x91\xE7\x88\xB1Python\xE7\xBC\x96\xE7\xA8\x8B", 2),
              (V{"\xE6\x88\x91 \xE7\x88\xB1", "\xE7\x88\xB1 python", "python \xE7\xBC\x96",
                 "\xE7\xBC\x96 \xE7\xA8\x8B"}));
    // An ideograph ends a Latin word: abc中def -> abc | 中 | def
    EXPECT_EQ(words("abc\xE4\xB8\xAD" "def", 1), (V{"abc", "\xE4\xB8\xAD", "def"}));
}

TEST(Tokenizer, HiraganaAndKatakana) {
    // ひらがな カタカナ: every kana is its own token.
    EXPECT_EQ(words("\xE3\x81\xB2\xE3\x82\x89\xE3\x81\x8C\xE3\x81\xAA \xE3\x82\xAB\xE3\x82\xBF"
                    "\xE3\x82\xAB\xE3\x83\x8A",
                    1),
              (V{"\xE3\x81\xB2", "\xE3\x82\x89", "\xE3\x81\x8C", "\xE3\x81\xAA", "\xE3\x82\xAB",
                 "\xE3\x82\xBF", "\xE3\x82\xAB", "\xE3\x83\x8A"}));
    // 東京タワー: kanji and katakana, trigrams across scripts.
    EXPECT_EQ(words("\xE6\x9D\xB1\xE4\xBA\xAC\xE3\x82\xBF\xE3\x83\xAF", 3),
              (V{"\xE6\x9D\xB1 \xE4\xBA\xAC \xE3\x82\xBF", "\xE4\xBA\xAC \xE3\x82\xBF \xE3\x83\xAF"}));
    // Halfwidth katakana ｶﾀ are Katakana letters too.
    EXPECT_EQ(words("\xEF\xBD\xB6\xEF\xBE\x80", 1), (V{"\xEF\xBD\xB6", "\xEF\xBE\x80"}));
}

TEST(Tokenizer, OtherScriptsAreWordScripts) {
    // Hangul is not an ideograph script: Korean words are space-separated runs.
    EXPECT_EQ(words("\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4 \xED\x85\x8D\xEC\x8A\xA4\xED\x8A\xB8", 1),
              (V{"\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4", "\xED\x85\x8D\xEC\x8A\xA4\xED\x8A\xB8"}));
    // Thai has no spaces between words and no dictionary segmentation here: a run is one token.
    EXPECT_EQ(words("\xE0\xB8\xA0\xE0\xB8\xB2\xE0\xB8\xA9\xE0\xB8\xB2\xE0\xB9\x84\xE0\xB8\x97\xE0\xB8\xA2", 1),
              (V{"\xE0\xB8\xA0\xE0\xB8\xB2\xE0\xB8\xA9\xE0\xB8\xB2\xE0\xB9\x84\xE0\xB8\x97\xE0\xB8\xA2"}));
    // Bopomofo letters are ideograph-class tokens; the Han iteration mark 々 too (人々々: 3 tokens).
    EXPECT_EQ(words("\xE3\x84\x85\xE3\x84\x86 \xE4\xBA\xBA\xE3\x80\x85\xE3\x80\x85", 1),
              (V{"\xE3\x84\x85", "\xE3\x84\x86", "\xE4\xBA\xBA", "\xE3\x80\x85", "\xE3\x80\x85"}));
    // The katakana prolonged sound mark U+30FC has Script=Common: it is a word character, not an
    // ideograph, so カー gives カ | ー and a run ーー is one token.
    EXPECT_EQ(words("\xE3\x82\xAB\xE3\x83\xBC \xE3\x83\xBC\xE3\x83\xBC", 1),
              (V{"\xE3\x82\xAB", "\xE3\x83\xBC", "\xE3\x83\xBC\xE3\x83\xBC"}));
}

TEST(Tokenizer, CombiningMarksStayInsideWords) {
    // e + U+0301 COMBINING ACUTE ACCENT is one word with the letters around it.
    EXPECT_EQ(words("E\xCC\x81" "COLE caf" "e\xCC\x81", 1), (V{"e\xCC\x81" "cole", "cafe\xCC\x81"}));
    // A combining mark with no word before it is a separator (nothing to combine with).
    EXPECT_EQ(words("a \xCC\x81", 1), (V{"a"}));
    // After an ideograph the mark continues the ideograph's token, as it continues a word: a
    // decomposed (NFD) dakuten keeps ga (U+30AB U+3099) apart from ka, and a variation selector
    // stays with its ideograph.
    EXPECT_EQ(words("\xE4\xB8\xAD\xCC\x81" "a", 1), (V{"\xE4\xB8\xAD\xCC\x81", "a"}));
    EXPECT_EQ(words("\xE3\x82\xAB\xE3\x82\x99\xE3\x83\xA9\xE3\x82\xB9", 1),
              (V{"\xE3\x82\xAB\xE3\x82\x99", "\xE3\x83\xA9", "\xE3\x82\xB9"}));
    EXPECT_NE(words("\xE3\x82\xAB\xE3\x82\x99\xE3\x83\xA9\xE3\x82\xB9", 2),
              words("\xE3\x82\xAB\xE3\x83\xA9\xE3\x82\xB9", 2));
    EXPECT_EQ(words("\xE8\x91\x9B\xF3\xA0\x84\x80\xE5\x9F\x8E", 1),
              (V{"\xE8\x91\x9B\xF3\xA0\x84\x80", "\xE5\x9F\x8E"}));
    // An ideograph's token ends at the next code point that is no mark, an ASCII letter included.
    EXPECT_EQ(words("\xE4\xB8\xAD" "ab" "\xE4\xB8\xAD", 1), (V{"\xE4\xB8\xAD", "ab", "\xE4\xB8\xAD"}));
    // Devanagari vowel signs (Mc/Mn) stay in the word: हिन्दी
    EXPECT_EQ(words("\xE0\xA4\xB9\xE0\xA4\xBF\xE0\xA4\xA8\xE0\xA5\x8D\xE0\xA4\xA6\xE0\xA5\x80", 1),
              (V{"\xE0\xA4\xB9\xE0\xA4\xBF\xE0\xA4\xA8\xE0\xA5\x8D\xE0\xA4\xA6\xE0\xA5\x80"}));
}

TEST(Tokenizer, EmojiAndSymbolsAreSeparators) {
    EXPECT_EQ(words("good\xF0\x9F\x98\x80" "day", 1), (V{"good", "day"}));       // 😀
    EXPECT_EQ(words("a\xE2\x86\x92" "b\xE2\x82\xAC" "c\xC2\xA9" "d", 1),           // → € ©
              (V{"a", "b", "c", "d"}));
    // Emoji ZWJ sequences (ZWJ is a format control, Cf) and skin-tone modifiers (Sk) separate: 👩‍💻 👍🏽
    EXPECT_EQ(words("x \xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB y\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD" "z", 1),
              (V{"x", "y", "z"}));
    // Variation selectors (Mn) and enclosing keycaps (Me) are marks: they continue a word but are
    // separators after a symbol. So ❤️ (U+2764 U+FE0F) leaves nothing, while the keycap 1️⃣ is the
    // word "1" U+FE0F U+20E3. Pinned because fingerprints depend on it.
    EXPECT_EQ(words("x \xE2\x9D\xA4\xEF\xB8\x8F y 1\xEF\xB8\x8F\xE2\x83\xA3", 1),
              (V{"x", "y", "1\xEF\xB8\x8F\xE2\x83\xA3"}));
    // A mark at the very start or after a space is a separator in both units.
    EXPECT_EQ(words("\xCC\x81" "a \xCC\x81" "b", 1), (V{"a", "b"}));
    EXPECT_EQ(chars("\xCC\x81" "a \xCC\x81" "b", 1), (V{"a", " ", "b"}));
    EXPECT_EQ(chars("e\xCC\x81", 2), (V{"e\xCC\x81"}));
    // No-break space, em space and ideographic space separate words.
    EXPECT_EQ(words("a\xC2\xA0" "b\xE2\x80\x83" "c\xE3\x80\x80" "d", 1), (V{"a", "b", "c", "d"}));
}

TEST(Tokenizer, InvalidUtf8IsASeparatorOneByteAtATime) {
    EXPECT_EQ(words("ab\x80" "cd", 1), (V{"ab", "cd"}));                  // lone continuation byte
    EXPECT_EQ(words("ab\xE4\xB8" "cd", 1), (V{"ab", "cd"}));              // truncated 中
    EXPECT_EQ(words("ab\xE4\xB8", 1), (V{"ab"}));                         // truncated at the end
    EXPECT_EQ(words("ab\xC3", 1), (V{"ab"}));                             // lead byte at the end
    EXPECT_EQ(words("a\xC0\xAF" "b", 1), (V{"a", "b"}));                  // overlong '/'
    EXPECT_EQ(words("a\xC1\xBF" "b", 1), (V{"a", "b"}));                  // overlong (C1)
    EXPECT_EQ(words("a\xE0\x80\xAF" "b", 1), (V{"a", "b"}));              // overlong 3-byte
    EXPECT_EQ(words("a\xF0\x80\x80\xAF" "b", 1), (V{"a", "b"}));          // overlong 4-byte
    EXPECT_EQ(words("a\xED\xA0\x80" "b", 1), (V{"a", "b"}));              // surrogate U+D800
    EXPECT_EQ(words("a\xED\xBF\xBF" "b", 1), (V{"a", "b"}));              // surrogate U+DFFF
    EXPECT_EQ(words("a\xF4\x90\x80\x80" "b", 1), (V{"a", "b"}));          // > U+10FFFF
    EXPECT_EQ(words("a\xF5\x80\x80\x80" "b\xFF" "c\xFE" "d", 1), (V{"a", "b", "c", "d"}));
    // One byte at a time: after a bad lead byte, decoding restarts at the very next byte, so a
    // valid sequence right behind it is still read (中 survives, and so does é).
    EXPECT_EQ(words("\xE4\xE4\xB8\xAD", 1), (V{"\xE4\xB8\xAD"}));
    EXPECT_EQ(words("x\xF0\xC3\xA9" "x", 1), (V{"x", "\xC3\xA9" "x"}));
    // The separator does not swallow a following ASCII letter.
    EXPECT_EQ(words("\xF0\x9F\x98" "x", 1), (V{"x"}));
    // In char mode each invalid byte is a separator: runs collapse to one space.
    EXPECT_EQ(chars("a\x80" "b", 3), (V{"a b"}));
    EXPECT_EQ(chars("a\xED\xA0\x80\xFF" "b", 3), (V{"a b"}));
    EXPECT_EQ(chars("\x80\x80" "ab\x80", 1), (V{"a", "b"}));
    // Invalid bytes alone: no tokens.
    EXPECT_EQ(words("\x80\xFF\xC0\xAF\xED\xA0\x80", 1), V{});
    EXPECT_EQ(chars("\x80\xFF\xC0\xAF\xED\xA0\x80", 1), V{});
}

TEST(Tokenizer, EmbeddedNulIsASeparator) {
    const std::string s("ab\0cd", 5);
    EXPECT_EQ(words(s, 1), (V{"ab", "cd"}));
    EXPECT_EQ(chars(s, 5), (V{"ab cd"}));
}

TEST(Tokenizer, EmptyAndSeparatorOnlyTextHaveNoShingles) {
    for (int size : {1, 3, 64}) {
        for (ShingleUnit unit : {ShingleUnit::kWord, ShingleUnit::kChar}) {
            EXPECT_EQ(test_util::shingles("", unit, size), V{});
            EXPECT_EQ(test_util::shingles(" \t\n,.;!?-- \xF0\x9F\x98\x80 \xE3\x80\x82 ", unit, size), V{});
        }
    }
    EXPECT_EQ(simhash::simhash_text("", 0), 0u);
    EXPECT_EQ(simhash::simhash_text(" ... ", 5), 0u);
}

TEST(Tokenizer, TextShorterThanOneShingleIsOneShingle) {
    EXPECT_EQ(words("Hello, world!", 3), (V{"hello world"}));
    EXPECT_EQ(words("hello", 3), (V{"hello"}));
    EXPECT_EQ(words("\xE4\xB8\xAD\xE6\x96\x87", 3), (V{"\xE4\xB8\xAD \xE6\x96\x87"}));
    EXPECT_EQ(chars(" ab ", 5), (V{"ab"}));
    EXPECT_EQ(chars("a, b", 5), (V{"a b"}));
    EXPECT_EQ(words(repeat_words(10), 64), (V{repeat_words(10)}));
    // Exactly `size` tokens: one shingle, the same as the short-text rule gives.
    EXPECT_EQ(words("a b c", 3), (V{"a b c"}));
    EXPECT_EQ(chars("abc", 3), (V{"abc"}));
}

TEST(Tokenizer, CharUnitCollapsesSeparatorsAndDropsLeadingAndTrailing) {
    EXPECT_EQ(chars("  Hello,   World!  ", 3),
              (V{"hel", "ell", "llo", "lo ", "o w", " wo", "wor", "orl", "rld"}));
    EXPECT_EQ(chars("\n\tA-B\n", 1), (V{"a", " ", "b"}));
    // CJK in char mode: one code point per token, no spaces between ideographs.
    EXPECT_EQ(chars("\xE4\xB8\xAD\xE6\x96\x87\xEF\xBC\x8C\xE5\x88\x86\xE8\xAF\x8D", 2),
              (V{"\xE4\xB8\xAD\xE6\x96\x87", "\xE6\x96\x87 ", " \xE5\x88\x86", "\xE5\x88\x86\xE8\xAF\x8D"}));
    // Folding applies in char mode too; combining marks are tokens of their own.
    EXPECT_EQ(chars("E\xCC\x81", 1), (V{"e", "\xCC\x81"}));
    EXPECT_EQ(chars("\xEF\xBC\xA1\xE2\x84\xAA", 2), (V{"ak"}));
}

TEST(Tokenizer, SizeOneAndSizeSixtyFour) {
    EXPECT_EQ(words("one two  three", 1), (V{"one", "two", "three"}));
    EXPECT_EQ(chars("ab c", 1), (V{"a", "b", " ", "c"}));
    // 70 words, size 64: 7 shingles, each of 64 words.
    const std::string text = repeat_words(70);
    const V got = words(text, 64);
    ASSERT_EQ(got.size(), 7u);
    for (int i = 0; i < 7; ++i) {
        std::string expected;
        for (int j = i; j < i + 64; ++j) {
            if (j > i) expected += ' ';
            expected += "w" + std::to_string(j);
        }
        EXPECT_EQ(got[i], expected) << "shingle " << i;
    }
    // 64 characters, size 64: exactly one shingle; 65 characters: two.
    EXPECT_EQ(chars(std::string(64, 'x'), 64), (V{std::string(64, 'x')}));
    EXPECT_EQ(chars(std::string(65, 'x'), 64), (V{std::string(64, 'x'), std::string(64, 'x')}));
}

TEST(Tokenizer, DuplicatesAreKeptInOrder) {
    EXPECT_EQ(words("a b a b a", 2), (V{"a b", "b a", "a b", "b a"}));
}

// A mistaken option value of any length makes a short message, cut on a character boundary.
TEST(Tokenizer, QuotedOptionIsBounded) {
    EXPECT_EQ(simhash::quoted_option("wordy", 5), "\"wordy\"");
    const std::string ascii(1000000, 'w');
    EXPECT_EQ(simhash::quoted_option(ascii.data(), ascii.size()), "\"" + std::string(64, 'w') + "...\" (1000000 bytes)");
    std::string mixed = std::string(62, 'a') + "\xE3\x83\xAF" + std::string(100, 'b');  // ワ across byte 64
    EXPECT_EQ(simhash::quoted_option(mixed.data(), mixed.size()), "\"" + std::string(62, 'a') + "...\" (165 bytes)");
    try {
        simhash::parse_shingle_unit(ascii.data(), ascii.size());
        FAIL() << "no exception";
    } catch (const simhash::InvalidArgument &e) {
        EXPECT_LT(std::strlen(e.what()), 300u);
    }
}

TEST(Tokenizer, InvalidOptionsThrow) {
    EXPECT_THROW(words("abc", 0), simhash::InvalidArgument);
    EXPECT_THROW(words("abc", 65), simhash::InvalidArgument);
    EXPECT_THROW(chars("abc", -1), simhash::InvalidArgument);
    EXPECT_THROW(words("", 0), simhash::InvalidArgument);  // validated even with nothing to do
    EXPECT_THROW(simhash::simhash_text("abc", 3, ShingleOptions{ShingleUnit::kWord, 65}),
                 simhash::InvalidArgument);
    EXPECT_THROW(simhash::parse_shingle_unit("words", 5), simhash::InvalidArgument);
    EXPECT_THROW(simhash::parse_shingle_unit("WORD", 4), simhash::InvalidArgument);
    EXPECT_THROW(simhash::parse_shingle_unit("", 0), simhash::InvalidArgument);
    EXPECT_THROW(simhash::parse_shingle_unit("wor", 3), simhash::InvalidArgument);
    EXPECT_EQ(simhash::parse_shingle_unit("word", 4), ShingleUnit::kWord);
    EXPECT_EQ(simhash::parse_shingle_unit("char", 4), ShingleUnit::kChar);
    // Only the first len bytes count.
    EXPECT_EQ(simhash::parse_shingle_unit("chars", 4), ShingleUnit::kChar);
    try {
        simhash::parse_shingle_unit("words", 5);
        FAIL() << "no exception";
    } catch (const simhash::InvalidArgument &e) {
        EXPECT_NE(std::string(e.what()).find("words"), std::string::npos) << e.what();
    }
}

TEST(Tokenizer, WordBlockAgreesWithTheTablesOnEveryByte) {
    const auto &ascii = simhash::detail::kAscii;
    for (int b = 0; b < 256; ++b) {
        const bool is_word = b < 0x80 && ascii.token_class[b] == simhash::kWord;
        for (size_t at = 0; at < simhash::detail::kWordBlock; ++at) {
            unsigned char block[simhash::detail::kWordBlock];
            for (size_t i = 0; i < sizeof(block); ++i) block[i] = "aZ09zA"[i % 6];
            block[at] = static_cast<unsigned char>(b);
            char out[simhash::detail::kWordBlock];
            const size_t n = simhash::detail::fold_ascii_word_block(block, out);
            ASSERT_EQ(n, is_word ? simhash::detail::kWordBlock : at) << "byte " << b << " at " << at;
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], ascii.folded[block[i]]) << "byte " << b << " at " << i;
        }
    }
}

TEST(Tokenizer, WordsOfEveryLengthAroundBlockAndChunkEdges) {
    // Reference for ASCII text: tokens are the maximal runs of [0-9A-Za-z], lowercased.
    auto reference = [](const std::string &text) {
        V tokens;
        std::string token;
        for (char c : text) {
            if (std::isalnum(static_cast<unsigned char>(c))) {
                token += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            } else if (!token.empty()) {
                tokens.push_back(token);
                token.clear();
            }
        }
        if (!token.empty()) tokens.push_back(token);
        return tokens;
    };
    uint64_t state = 12345;
    auto next = [&] { return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
    const char alphabet[] = "abcXYZ0189";
    for (size_t total : {15u, 16u, 17u, 33u, 4095u, 4096u, 4097u, 9000u}) {
        std::string text;
        while (text.size() < total) {
            const size_t length = next() % 3 == 0 ? next() % 40 : next() % 8 + 1;
            for (size_t i = 0; i < length && text.size() < total; ++i) text += alphabet[next() % 10];
            if (text.size() < total) text += " ,.-_/\n"[next() % 7];
        }
        EXPECT_EQ(words(text, 1), reference(text)) << "length " << total;
    }
    // One word longer than a 4096-byte stretch, ending exactly at the end of the text.
    const std::string long_word(5000, 'Q');
    EXPECT_EQ(words("x " + long_word, 1), (V{"x", std::string(5000, 'q')}));
}
