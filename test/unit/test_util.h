// Helpers shared by the core unit tests.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/shingles.h"

namespace test_util {

inline std::vector<std::string> shingles(const std::string &text,
                                         simhash::ShingleUnit unit = simhash::ShingleUnit::kWord,
                                         int size = 3) {
    return simhash::shingles(text.data(), text.size(), simhash::ShingleOptions{unit, size});
}

inline std::vector<std::string> words(const std::string &text, int size) {
    return shingles(text, simhash::ShingleUnit::kWord, size);
}

inline std::vector<std::string> chars(const std::string &text, int size) {
    return shingles(text, simhash::ShingleUnit::kChar, size);
}

// Whole file as bytes; empty if it cannot be read.
inline std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace test_util
