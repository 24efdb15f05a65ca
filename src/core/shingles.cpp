#include "shingles.h"

namespace simhash {

namespace detail {
const AsciiTable kAscii;
}

std::string quoted_option(const char *value, size_t len) {
    constexpr size_t kShown = 64;
    if (len <= kShown) return "\"" + std::string(value, len) + "\"";
    size_t cut = kShown;
    while (cut > 0 && (static_cast<unsigned char>(value[cut - 1]) & 0x80) != 0) --cut;
    return "\"" + std::string(value, cut) + "...\" (" + std::to_string(len) + " bytes)";
}

ShingleUnit parse_shingle_unit(const char *name, size_t len) {
    if (len == 4 && std::memcmp(name, "word", 4) == 0) return ShingleUnit::kWord;
    if (len == 4 && std::memcmp(name, "char", 4) == 0) return ShingleUnit::kChar;
    throw InvalidArgument("shingle unit " + quoted_option(name, len) +
                          " is not recognized: use 'word' (word n-grams, one token per CJK "
                          "character) or 'char' (character n-grams)");
}

void validate(const ShingleOptions &options) {
    if (options.size < 1 || options.size > kMaxShingleSize)
        throw InvalidArgument("shingle size must be between 1 and " + std::to_string(kMaxShingleSize) +
                              ", not " + std::to_string(options.size));
}

std::vector<std::string> shingles(const char *text, size_t len, const ShingleOptions &options) {
    std::vector<std::string> out;
    for_each_shingle(text, len, options,
                     [&](const char *data, size_t n) { out.emplace_back(data, n); });
    return out;
}

}  // namespace simhash
