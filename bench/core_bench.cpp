// Core throughput on real text: simhash_text, minhash_text (128 slots) and minhash64_text, in MB/s on one core;
// then the batch functions' repeated-id check next to the join it guards (1M rows).
// Usage: core_bench FILE... (the files are concatenated into one corpus and hashed as documents
// of their original sizes). Prints one line per kernel. Not a test: numbers only.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../src/core/batch_pairs.h"
#include "../src/core/block_buckets.h"
#include "../src/core/hamming.h"
#include "../src/core/minhash.h"
#include "../src/core/near_pairs.h"
#include "../src/core/simhash.h"

namespace {
double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <typename Fn>
double best_mb_per_s(const std::vector<std::string> &docs, size_t bytes, int rounds, Fn fn) {
    double best = 0;
    for (int r = 0; r < rounds; ++r) {
        auto start = std::chrono::steady_clock::now();
        for (const auto &d : docs) fn(d);
        double mbs = bytes / 1e6 / seconds_since(start);
        if (mbs > best) best = mbs;
    }
    return best;
}
}  // namespace

int main(int argc, char **argv) {
    std::vector<std::string> docs;
    size_t bytes = 0;
    for (int i = 1; i < argc; ++i) {
        std::ifstream in(argv[i], std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        if (ss.str().empty()) continue;
        docs.push_back(ss.str());
        bytes += docs.back().size();
    }
    if (docs.empty()) {
        std::fprintf(stderr, "usage: %s FILE...\n", argv[0]);
        return 2;
    }
    volatile uint64_t sink = 0;
    std::printf("corpus: %zu documents, %.1f MB; popcount kernel: %s\n", docs.size(), bytes / 1e6,
                simhash::popcount_kernel_name());
    const int rounds = 5;
    // simhash(text) in SQL: word 2-shingles, each distinct one voting once.
    const simhash::ShingleOptions word2{simhash::ShingleUnit::kWord, 2};
    double shs = best_mb_per_s(docs, bytes, rounds, [&](const std::string &d) {
        simhash::StopPoll poll([](void *) -> bool { return false; }, nullptr);
        sink = sink + simhash::simhash_text(d.data(), d.size(), word2, simhash::ShingleWeighting::kSet, &poll);
    });
    std::printf("%-36s %8.1f MB/s\n", "simhash default (word 2, set), polled", shs);
    double shl = best_mb_per_s(docs, bytes, rounds, [&](const std::string &d) {
        sink = sink + simhash::simhash_text(d.data(), d.size(), word2, simhash::ShingleWeighting::kLog);
    });
    std::printf("%-36s %8.1f MB/s\n", "simhash (word 2, log)", shl);
    double sh = best_mb_per_s(docs, bytes, rounds, [&](const std::string &d) {
        sink = sink + simhash::simhash_text(d.data(), d.size());
    });
    std::printf("%-36s %8.1f MB/s\n", "simhash (word 3-shingles, count)", sh);
    // As the SQL functions run it: with a stop poll whose callback reads a flag.
    static volatile bool cancel_requested = false;
    double shp = best_mb_per_s(docs, bytes, rounds, [&](const std::string &d) {
        simhash::StopPoll poll([](void *) -> bool { return cancel_requested; }, nullptr);
        sink = sink + simhash::simhash_text(d.data(), d.size(), {}, &poll);
    });
    std::printf("%-36s %8.1f MB/s\n", "simhash (word 3-shingles), polled", shp);
    simhash::ShingleOptions chars{simhash::ShingleUnit::kChar, 5};
    double shc = best_mb_per_s(docs, bytes, rounds, [&](const std::string &d) {
        sink = sink + simhash::simhash_text(d.data(), d.size(), chars);
    });
    std::printf("%-36s %8.1f MB/s\n", "simhash (char 5-grams)", shc);
    simhash::MinhashFamily family(simhash::kDefaultMinhashSlots, 0);
    double mh = best_mb_per_s(docs, bytes, rounds, [&](const std::string &d) {
        sink = sink + simhash::minhash_text(d.data(), d.size(), family)[0];
    });
    std::printf("%-36s %8.1f MB/s\n", "minhash 128 slots (word 3-shingles)", mh);
    // minhash64(text) in SQL: word 1-shingles, 64 slots, one bit each, polled.
    const simhash::ShingleOptions word1{simhash::ShingleUnit::kWord, 1};
    double m64 = best_mb_per_s(docs, bytes, rounds, [&](const std::string &d) {
        simhash::StopPoll poll([](void *) -> bool { return cancel_requested; }, nullptr);
        sink = sink + simhash::minhash64_text(d.data(), d.size(), word1, &poll);
    });
    std::printf("%-36s %8.1f MB/s\n", "minhash64 default (word 1), polled", m64);

    // 1M rows of uniform fingerprints, ids 1..N in a shuffled order or spread over the int64 range.
    constexpr size_t kRows = 1000000;
    std::mt19937_64 rng(1);
    std::vector<simhash::IdFingerprint> rows(kRows);
    for (size_t i = 0; i < kRows; ++i) rows[i] = {static_cast<int64_t>(i + 1), rng()};
    std::shuffle(rows.begin(), rows.end(), rng);
    auto best_ms = [&](auto fn) {
        double best = 1e300;
        for (int r = 0; r < rounds; ++r) {
            auto start = std::chrono::steady_clock::now();
            fn();
            best = std::min(best, seconds_since(start) * 1e3);
        }
        return best;
    };
    int64_t repeated;
    std::printf("%-36s %8.1f ms\n", "repeated-id check, 1M serial ids",
                best_ms([&] { sink = sink + simhash::find_repeated_id(rows.data(), kRows, &repeated); }));
    std::vector<simhash::IdFingerprint> sparse = rows;
    for (auto &row : sparse) row.id = static_cast<int64_t>(rng());
    std::printf("%-36s %8.1f ms\n", "repeated-id check, 1M random ids",
                best_ms([&] { sink = sink + simhash::find_repeated_id(sparse.data(), kRows, &repeated); }));
    std::printf("%-36s %8.1f ms\n", "near_pairs, 1M rows, radius 3", best_ms([&] {
                    std::vector<simhash::IdFingerprint> copy = rows;
                    sink = sink + static_cast<int>(simhash::near_pairs(copy.data(), kRows, 3, simhash::RunControl{}));
                }));

    // A bulk load's own pairs within one chunk (simhash_insert_distinct, radius 3): random
    // fingerprints, plus one near-duplicate of an earlier row in ten.
    for (size_t n : {size_t{1000000}, size_t{4000000}}) {
        std::vector<uint64_t> chunk(n);
        for (size_t i = 0; i < n; ++i) chunk[i] = i % 10 == 9 ? chunk[rng() % i] ^ (uint64_t{3} << (rng() % 63)) : rng();
        std::vector<uint32_t> scratch(simhash::batch_pairs_bytes(n) / sizeof(uint32_t) + 1);
        size_t pairs = 0;
        const double ms = best_ms([&] {
            simhash::batch_pairs(chunk.data(), n, 3, nullptr, scratch.data(),
                                 [](uint32_t, uint32_t, void *context) { ++*static_cast<size_t *>(context); }, &pairs);
        });
        char label[64];
        std::snprintf(label, sizeof(label), "batch pairs, %zuM rows, radius 3", n / 1000000);
        std::printf("%-36s %8.1f ms\n", label, ms);
        sink = sink + static_cast<int>(pairs);
    }

    // The index probes' filters, in cache: a probe of a 10M-row run reads ~150 refs (key,
    // position) per table and ~150 fingerprints in table 0. ns per entry, chosen kernel vs scalar.
    std::printf("selection kernel: %s\n", simhash::select_kernel_name());
    constexpr size_t kProbe = 152, kCalls = 200000;
    std::vector<uint32_t> refs(2 * kProbe), hits(kProbe);
    std::vector<uint64_t> fps(kProbe);
    for (size_t i = 0; i < kProbe; ++i) {
        refs[2 * i] = static_cast<uint32_t>(rng());
        refs[2 * i + 1] = static_cast<uint32_t>(i);
        fps[i] = rng();
    }
    auto ns_per_entry = [&](auto fn) { return best_ms([&] { for (size_t c = 0; c < kCalls; ++c) fn(c); }) * 1e6 / (kCalls * kProbe); };
    std::printf("%-36s %8.2f ns/ref (scalar %.2f)\n", "probe filter, 152 refs",
                ns_per_entry([&](size_t c) { sink = sink + simhash::select_keys_within(refs.data(), 2, kProbe, 0, 0, static_cast<uint32_t>(c), 3, hits.data()); }),
                ns_per_entry([&](size_t c) { sink = sink + simhash::select_keys_within_scalar(refs.data(), 2, kProbe, 0, 0, static_cast<uint32_t>(c), 3, hits.data()); }));
    std::printf("%-36s %8.2f ns/fp (scalar %.2f)\n", "radius filter, 152 fingerprints",
                ns_per_entry([&](size_t c) { sink = sink + simhash::select_within_radius(fps.data(), kProbe, c, 3, hits.data()); }),
                ns_per_entry([&](size_t c) { sink = sink + simhash::select_within_radius_scalar(fps.data(), kProbe, c, 3, hits.data()); }));

    // The same filters out of cache, as a probe of a four-table run meets them: a range of 458
    // entries (30M rows) or 1,526 (100M) at a random place in 512 MB, ns per entry. What the
    // loops' prefetches ahead buy is here.
    {
        constexpr size_t kWords = size_t{1} << 27, kFar = 20000;
        std::vector<uint32_t> far_refs(kWords);
        std::vector<uint64_t> far_fps(kWords / 2);
        for (auto &w : far_refs) w = static_cast<uint32_t>(rng());
        for (auto &fp : far_fps) fp = rng();
        std::vector<uint32_t> far_hits(2048);
        for (size_t range : {size_t{458}, size_t{1526}}) {
            auto far_ns = [&](auto fn) {
                return best_ms([&] { for (size_t c = 0; c < kFar; ++c) fn(rng() % (kWords / 2 - 2048)); }) * 1e6 / (kFar * range);
            };
            char label[64];
            std::snprintf(label, sizeof label, "probe filter, %zu refs, far", range);
            std::printf("%-36s %8.2f ns/ref (scalar %.2f)\n", label,
                        far_ns([&](size_t at) { sink = sink + simhash::select_keys_within(far_refs.data() + 2 * at, 2, range, 0, 0, 7u, 3, far_hits.data()); }),
                        far_ns([&](size_t at) { sink = sink + simhash::select_keys_within_scalar(far_refs.data() + 2 * at, 2, range, 0, 0, 7u, 3, far_hits.data()); }));
            std::snprintf(label, sizeof label, "radius filter, %zu fps, far", range);
            std::printf("%-36s %8.2f ns/fp (scalar %.2f)\n", label,
                        far_ns([&](size_t at) { sink = sink + simhash::select_within_radius(far_fps.data() + at, range, 7u, 3, far_hits.data()); }),
                        far_ns([&](size_t at) { sink = sink + simhash::select_within_radius_scalar(far_fps.data() + at, range, 7u, 3, far_hits.data()); }));
        }
    }

    // The least a dedup-on-load check can cost with the runs' geometry: a radius-3 search of a
    // frozen in-memory copy (four sorted tables, 16-bit directories, no buffer manager) of n
    // random fingerprints, for random queries (most find nothing, as most loaded rows do). At
    // 11M the copy (~440 MB) is far out of cache, like a 10M-row run's pages.
    for (size_t n : {size_t{1200000}, size_t{11000000}}) {
        std::vector<uint64_t> stored(n);
        for (auto &fp : stored) fp = rng();
        std::vector<uint32_t> memory(simhash::block_buckets_frozen_bytes(16, n) / sizeof(uint32_t) + 1);
        simhash::BlockBuckets buckets;
        simhash::block_buckets_freeze(&buckets, memory.data(), 16, stored.data(), n);
        constexpr size_t kChecks = 200000;
        std::vector<uint64_t> queries(kChecks);
        for (auto &q : queries) q = rng();
        size_t found = 0;
        const double ms = best_ms([&] {
            for (uint64_t q : queries)
                found += simhash::block_buckets_search(&buckets, stored.data(), q, 3, [](uint32_t, void *) {}, nullptr);
        });
        char label[64];
        std::snprintf(label, sizeof(label), "radius-3 check, %zuM in memory", n / 1000000);
        std::printf("%-36s %8.0f ns/check\n", label, ms * 1e6 / kChecks);
        sink = sink + static_cast<int>(found);
    }
    return 0;
}
