// Text features: Unicode-aware normalization, tokenization and shingling of UTF-8 text.
//
// The exact definition (it fixes every fingerprint, so it never changes within a version):
//  1. The input is decoded as UTF-8. Each byte that does not start a valid, shortest-form UTF-8
//     sequence of a scalar value is read as U+FFFD (which is a separator), one byte at a time.
//  2. Each code point is normalized: Unicode simple case folding (CaseFolding.txt, status C and S,
//     UCD 15.0.0), then fullwidth ASCII variants U+FF01..U+FF5E become their ASCII counterparts.
//  3. Each normalized code point has a class: ideograph (letters of the Han, Hiragana, Katakana and
//     Bopomofo scripts), word (other letters and numbers), mark (combining marks: they continue the
//     word or character before them, and are separators where there is none, e.g. the emoji
//     variation selector after a symbol) or separator (everything else: spaces, punctuation,
//     symbols, emoji, controls, unassigned).
//  4. unit = word: a token is a maximal run of word code points, or a single ideograph. Tokens are
//     joined by one U+0020 space; a shingle is `size` consecutive tokens (so CJK text yields character
//     n-grams and alphabetic text word n-grams, and mixed text both).
//     unit = char: separator runs between non-separators collapse to one U+0020 space and leading and
//     trailing separators are dropped; a token is one code point of that stream, and a shingle is
//     `size` consecutive code points.
//  5. A text with at least one but fewer than `size` tokens has one shingle: all its tokens. A text
//     with no tokens (empty, or only separators) has no shingles.
// Shingles are handed out as UTF-8 byte ranges, in text order, duplicates included.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "stop_poll.h"
#include "unicode_tables.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace simhash {

enum class ShingleUnit { kWord, kChar };

constexpr int kMaxShingleSize = 64;

struct ShingleOptions {
    ShingleUnit unit = ShingleUnit::kWord;
    int size = 3;
};

// Thrown for caller mistakes (bad options, mismatched inputs); the SQL layer reports it as
// invalid_parameter_value.
class InvalidArgument : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// An option value as an error message quotes it: whole up to 64 bytes, else its first bytes up to
// the last ASCII byte among them (a character boundary in every PostgreSQL server encoding) and
// the length, so that a mistaken argument of a gigabyte does not make a message of a gigabyte.
std::string quoted_option(const char *value, size_t len);

// Parses "word" / "char"; throws InvalidArgument otherwise.
ShingleUnit parse_shingle_unit(const char *name, size_t len);
void validate(const ShingleOptions &options);

enum TokenClass : uint32_t { kSeparator = 0, kWord = 1, kIdeograph = 2, kMark = 3 };

constexpr uint32_t kReplacementCharacter = 0xFFFD;

// Decodes one code point at p (p < end) and advances p. Invalid input yields U+FFFD and advances
// one byte, so every byte of the input is consumed exactly once.
inline uint32_t decode_utf8(const unsigned char *&p, const unsigned char *end) {
    const unsigned char b0 = p[0];
    const size_t avail = static_cast<size_t>(end - p);
    if (b0 < 0x80) {
        ++p;
        return b0;
    }
    if (b0 >= 0xC2 && b0 <= 0xDF && avail >= 2 && (p[1] & 0xC0) == 0x80) {
        uint32_t c = ((b0 & 0x1Fu) << 6) | (p[1] & 0x3Fu);
        p += 2;
        return c;
    }
    if (b0 >= 0xE0 && b0 <= 0xEF && avail >= 3 && (p[1] & 0xC0) == 0x80 && (p[2] & 0xC0) == 0x80) {
        uint32_t c = ((b0 & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
        if (c >= 0x800 && (c < 0xD800 || c > 0xDFFF)) {  // no overlong forms, no surrogates
            p += 3;
            return c;
        }
    } else if (b0 >= 0xF0 && b0 <= 0xF4 && avail >= 4 && (p[1] & 0xC0) == 0x80 &&
               (p[2] & 0xC0) == 0x80 && (p[3] & 0xC0) == 0x80) {
        uint32_t c = ((b0 & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) |
                     (p[3] & 0x3Fu);
        if (c >= 0x10000 && c <= 0x10FFFF) {
            p += 4;
            return c;
        }
    }
    ++p;
    return kReplacementCharacter;
}

inline uint16_t unicode_properties(uint32_t cp) {
    using namespace unicode_tables;
    return kStage2[kStage1[cp >> kBlockShift]][cp & kBlockMask];
}

// Normalizes a code point in place and returns its class.
inline TokenClass normalize_code_point(uint32_t &cp) {
    const uint16_t props = unicode_properties(cp);
    cp = static_cast<uint32_t>(static_cast<int32_t>(cp) + unicode_tables::kFoldDelta[props >> 2]);
    return static_cast<TokenClass>(props & 3u);
}

inline size_t encode_utf8(uint32_t cp, char *out) {
    if (cp < 0x80) {
        out[0] = static_cast<char>(cp);
        return 1;
    }
    if (cp < 0x800) {
        out[0] = static_cast<char>(0xC0 | (cp >> 6));
        out[1] = static_cast<char>(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = static_cast<char>(0xE0 | (cp >> 12));
        out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out[2] = static_cast<char>(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = static_cast<char>(0xF0 | (cp >> 18));
    out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[3] = static_cast<char>(0x80 | (cp & 0x3F));
    return 4;
}

namespace detail {

// ASCII fast path: class and normalized byte of every byte below 0x80, derived from the same tables.
struct AsciiTable {
    uint8_t token_class[128];
    char folded[128];
    AsciiTable() {
        for (uint32_t c = 0; c < 128; ++c) {
            uint32_t cp = c;
            token_class[c] = static_cast<uint8_t>(normalize_code_point(cp));
            folded[c] = static_cast<char>(cp);
        }
    }
};
extern const AsciiTable kAscii;

// The ASCII word characters are exactly [0-9A-Za-z] and folding maps A-Z to a-z, as the tables
// say (a unit test compares every byte with kAscii).
constexpr size_t kWordBlock = 16;
#if defined(__SSE2__)
// Writes the 16 bytes at p folded to out and returns how many of them, from the first, are ASCII
// word characters (16 when all are). One comparison per class instead of a table lookup and a
// loop branch per byte: the branch that ends a word of unpredictable length is taken once.
inline size_t fold_ascii_word_block(const unsigned char *p, char *out) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
    // x - lo < n unsigned, as a signed comparison of (x - lo - 128) with (n - 128).
    auto in_range = [&](int lo, int n) {
        return _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8(static_cast<char>(-lo - 128))),
                              _mm_set1_epi8(static_cast<char>(n - 128)));
    };
    const __m128i upper = in_range('A', 26);
    const __m128i word = _mm_or_si128(_mm_or_si128(upper, in_range('a', 26)), in_range('0', 10));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out), _mm_add_epi8(v, _mm_and_si128(upper, _mm_set1_epi8(0x20))));
    const unsigned not_word = ~static_cast<unsigned>(_mm_movemask_epi8(word)) & 0xFFFFu;
    return not_word == 0 ? kWordBlock : static_cast<size_t>(__builtin_ctz(not_word));
}
#else
inline size_t fold_ascii_word_block(const unsigned char *p, char *out) {
    size_t n = 0;
    while (n < kWordBlock && p[n] < 0x80 && kAscii.token_class[p[n]] == kWord) {
        out[n] = kAscii.folded[p[n]];
        ++n;
    }
    return n;
}
#endif

// Reads the code point at p (p < end), advances p, normalizes the code point and returns its class.
inline TokenClass next_code_point(const unsigned char *&p, const unsigned char *end, uint32_t &cp) {
    if (*p < 0x80) {
        cp = static_cast<unsigned char>(kAscii.folded[*p]);
        return static_cast<TokenClass>(kAscii.token_class[*p++]);
    }
    cp = decode_utf8(p, end);
    return normalize_code_point(cp);
}

// Normalized text of the current window of tokens. Only the tokens that can still be part of a
// shingle are kept, so memory stays bounded whatever the text length.
class ShingleWindow {
public:
    explicit ShingleWindow(int size) : size_(size) { buffer_.resize(kInitialBytes); }

    // Room for at least n more bytes at tail().
    char *reserve(size_t n) {
        if (used_ + n > buffer_.size()) make_room(n);
        return buffer_.data() + used_;
    }
    void commit(size_t n) { used_ += n; }
    size_t used() const { return used_; }
    void begin_token(bool with_space) {
        if (with_space) {
            *reserve(1) = ' ';
            commit(1);
        }
        starts_[seen_ % kMaxShingleSize] = used_;
    }
    // Ends the token begun last; returns true when a full shingle ends here.
    bool end_token() { return ++seen_ >= static_cast<uint64_t>(size_); }
    uint64_t tokens_seen() const { return seen_; }
    // The shingle of the last `size` tokens (or all tokens, if fewer were seen).
    const char *shingle_begin() const {
        uint64_t first = seen_ >= static_cast<uint64_t>(size_) ? seen_ - size_ : 0;
        return buffer_.data() + starts_[first % kMaxShingleSize];
    }
    const char *tail() const { return buffer_.data() + used_; }

private:
    static constexpr size_t kInitialBytes = 1 << 14;

    void make_room(size_t n) {
        // Drop text that no future shingle can include: everything before the start of the
        // newest size-1 tokens (the next shingle begins there at the earliest).
        // The open token (if any) has index seen_, so the next shingle starts at token
        // seen_ + 1 - size. Slots not yet written for this text hold older, smaller offsets,
        // which only keeps more than needed.
        uint64_t keep_from_token = seen_ + 1 >= static_cast<uint64_t>(size_) ? seen_ + 1 - size_ : 0;
        size_t keep_from = seen_ == 0 ? 0 : starts_[keep_from_token % kMaxShingleSize];
        if (keep_from > 0 && keep_from >= used_ / 2) {
            std::memmove(buffer_.data(), buffer_.data() + keep_from, used_ - keep_from);
            used_ -= keep_from;
            for (size_t &s : starts_) s = s >= keep_from ? s - keep_from : 0;
            if (used_ + n <= buffer_.size()) return;
        }
        size_t grown = buffer_.size() * 2;
        while (grown < used_ + n) grown *= 2;
        buffer_.resize(grown);
    }

    int size_;
    std::vector<char> buffer_;
    size_t used_ = 0;
    uint64_t seen_ = 0;
    size_t starts_[kMaxShingleSize] = {};
};

}  // namespace detail

// The text is read in stretches of this many bytes (a fraction of a millisecond of work); the
// stop poll is ticked after each.
constexpr size_t kPollStretchBytes = size_t{1} << 16;

// The end of the stretch of input that starts at p.
inline const unsigned char *stretch_end(const unsigned char *p, const unsigned char *end) {
    return static_cast<size_t>(end - p) > kPollStretchBytes ? p + kPollStretchBytes : end;
}

// Calls emit(const char *data, size_t len) for every shingle of the text, in order. With a poll,
// ticks it with every stretch of input read (so even one huge token can be stopped) and throws
// Stopped when it asks to stop; emit may tick the same poll with work of its own.
template <typename Emit>
void for_each_shingle(const char *text, size_t len, const ShingleOptions &options, Emit &&emit,
                      StopPoll *poll = nullptr) {
    validate(options);
    detail::ShingleWindow window(options.size);
    const unsigned char *p = reinterpret_cast<const unsigned char *>(text);
    const unsigned char *const end = p + len;
    const auto &ascii = detail::kAscii;

    auto finish_token = [&]() {
        if (window.end_token()) emit(window.shingle_begin(), window.tail() - window.shingle_begin());
    };

    if (options.unit == ShingleUnit::kWord) {
        bool in_word = false;
        // An ideograph is a token of its own, kept open for the marks that follow it (a dakuten,
        // a variation selector) and finished by the next code point that is not one.
        bool in_ideograph = false;
        auto finish_ideograph = [&]() {
            if (!in_ideograph) return;
            finish_token();
            in_ideograph = false;
        };
        while (p < end) {
            const unsigned char *const stretch_begin = p, *const stretch_stop = stretch_end(p, end);
            while (p < stretch_stop) {
                // Fast path: a run of ASCII word characters inside or at the start of a word.
                if (*p < 0x80 && ascii.token_class[*p] == kWord) {
                    finish_ideograph();
                    if (!in_word) {
                        window.begin_token(window.tokens_seen() > 0);
                        in_word = true;
                    }
                    size_t room = static_cast<size_t>(end - p);
                    if (room > 4096) room = 4096;
                    char *out = window.reserve(room);
                    const unsigned char *stop = p + room;
                    char *o = out;
                    // Whole blocks while they fit before stop (a block writes all 16 bytes);
                    // the text's last bytes one at a time.
                    size_t n = detail::kWordBlock;
                    while (n == detail::kWordBlock && static_cast<size_t>(stop - p) >= detail::kWordBlock) {
                        n = detail::fold_ascii_word_block(p, o);
                        p += n;
                        o += n;
                    }
                    if (n == detail::kWordBlock)
                        while (p < stop && *p < 0x80 && ascii.token_class[*p] == kWord) *o++ = ascii.folded[*p++];
                    window.commit(static_cast<size_t>(o - out));
                    continue;
                }
                uint32_t cp;
                TokenClass cls = detail::next_code_point(p, end, cp);
                if (cls == kMark) {  // continues the word or ideograph before it; else a separator
                    if (in_word || in_ideograph) {
                        window.commit(encode_utf8(cp, window.reserve(4)));
                        continue;
                    }
                    cls = kSeparator;
                }
                finish_ideograph();
                if (cls == kWord) {
                    if (!in_word) {
                        window.begin_token(window.tokens_seen() > 0);
                        in_word = true;
                    }
                    window.commit(encode_utf8(cp, window.reserve(4)));
                    continue;
                }
                if (in_word) {
                    finish_token();
                    in_word = false;
                }
                if (cls == kIdeograph) {
                    window.begin_token(window.tokens_seen() > 0);
                    window.commit(encode_utf8(cp, window.reserve(4)));
                    in_ideograph = true;
                }
            }
            tick(poll, static_cast<uint64_t>(p - stretch_begin));
        }
        if (in_word || in_ideograph) finish_token();
    } else {
        bool pending_space = false;
        while (p < end) {
            const unsigned char *const stretch_begin = p, *const stretch_stop = stretch_end(p, end);
            while (p < stretch_stop) {
                uint32_t cp;
                TokenClass cls = detail::next_code_point(p, end, cp);
                // A mark continues the character before it; after a separator or at the start it is one.
                if (cls == kMark && (pending_space || window.tokens_seen() == 0)) cls = kSeparator;
                if (cls == kSeparator) {
                    pending_space = window.tokens_seen() > 0;
                    continue;
                }
                if (pending_space) {
                    window.begin_token(false);
                    *window.reserve(1) = ' ';
                    window.commit(1);
                    finish_token();
                    pending_space = false;
                }
                window.begin_token(false);
                window.commit(encode_utf8(cp, window.reserve(4)));
                finish_token();
            }
            tick(poll, static_cast<uint64_t>(p - stretch_begin));
        }
    }
    // Fewer tokens than the shingle size: the whole (short) text is one shingle.
    const uint64_t seen = window.tokens_seen();
    if (seen > 0 && seen < static_cast<uint64_t>(options.size))
        emit(window.shingle_begin(), window.tail() - window.shingle_begin());
}

// All shingles as strings (for inspection and tests; the fingerprint functions stream instead).
std::vector<std::string> shingles(const char *text, size_t len, const ShingleOptions &options);

}  // namespace simhash

#include "cpp_only.h"
