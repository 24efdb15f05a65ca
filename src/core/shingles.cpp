#include "shingles.h"

namespace simhash {

namespace detail {
const AsciiTable kAscii;
}

ShingleUnit parse_shingle_unit(const char *name, size_t len) {
    if (len == 4 && std::memcmp(name, "word", 4) == 0) return ShingleUnit::kWord;
    if (len == 4 && std::memcmp(name, "char", 4) == 0) return ShingleUnit::kChar;
    throw InvalidArgument("shingle unit \"" + std::string(name, len) +
                          "\" is not recognized: use 'word' (word n-grams, one token per CJK "
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
