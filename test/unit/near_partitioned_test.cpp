// Partitioned batch joins over an in-memory SpillStore: equal to the in-memory engine and to brute
// force, refusals when partitions cannot fit, and every file closed whichever way a run ends.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/minhash.h"
#include "core/near_partitioned.h"
#include "near_test_rows.h"

namespace simhash {
namespace {

using near_test::brute_force;
using near_test::make_rows;
using near_test::reference_connected;
using near_test::Triple;

// Files in memory. fail_at: the call (counted over write, read, rewind and create) that fails,
// 0 for none; stop_at_partition: progress call after which the run is asked to stop.
class MemoryStore {
public:
    struct File {
        std::vector<unsigned char> bytes;
        size_t position = 0;
    };

    SpillStore store() {
        SpillStore s;
        s.context = this;
        s.create = [](void *c) { return static_cast<MemoryStore *>(c)->create(); };
        s.write = [](void *c, SpillFile *f, const void *data, size_t bytes) {
            MemoryStore *m = static_cast<MemoryStore *>(c);
            if (m->fails()) return false;
            const unsigned char *p = static_cast<const unsigned char *>(data);
            file(f)->bytes.insert(file(f)->bytes.end(), p, p + bytes);
            ++m->writes;
            return true;
        };
        s.read = [](void *c, SpillFile *f, void *data, size_t bytes, size_t *done) {
            if (static_cast<MemoryStore *>(c)->fails()) return false;
            File *x = file(f);
            *done = std::min(bytes, x->bytes.size() - x->position);
            if (*done) std::memcpy(data, x->bytes.data() + x->position, *done);
            x->position += *done;
            return true;
        };
        s.rewind = [](void *c, SpillFile *f) {
            if (static_cast<MemoryStore *>(c)->fails()) return false;
            file(f)->position = 0;
            return true;
        };
        s.close = [](void *c, SpillFile *f) { static_cast<MemoryStore *>(c)->close(f); };
        return s;
    }

    // An input file the caller owns (not counted as the run's).
    SpillFile *input(const void *data, size_t bytes) {
        inputs.push_back(std::make_unique<File>());
        const unsigned char *p = static_cast<const unsigned char *>(data);
        inputs.back()->bytes.assign(p, p + bytes);
        return reinterpret_cast<SpillFile *>(inputs.back().get());
    }

    size_t open() const { return open_files.size(); }

    size_t calls = 0, fail_at = 0, created = 0, most_open = 0, writes = 0;

private:
    static File *file(SpillFile *f) { return reinterpret_cast<File *>(f); }
    bool fails() { return ++calls == fail_at; }
    SpillFile *create() {
        if (fails()) return nullptr;
        open_files.push_back(std::make_unique<File>());
        ++created;
        most_open = std::max(most_open, open_files.size());
        return reinterpret_cast<SpillFile *>(open_files.back().get());
    }
    void close(SpillFile *f) {
        auto it = std::find_if(open_files.begin(), open_files.end(), [&](auto &p) { return p.get() == file(f); });
        ASSERT_NE(it, open_files.end()) << "closed a file the run did not create, or closed it twice";
        open_files.erase(it);
    }
    std::vector<std::unique_ptr<File>> open_files, inputs;
};

bool collect(void *context, const NearPair *pairs, size_t n) {
    auto *out = static_cast<std::vector<Triple> *>(context);
    for (size_t i = 0; i < n; ++i) out->emplace_back(pairs[i].a, pairs[i].b, pairs[i].distance);
    return true;
}

struct PairsRun {
    RunStatus status;
    std::vector<Triple> pairs;  // sorted
    PartitionOverflow overflow;
};

PairsRun run_pairs(MemoryStore &memory, std::vector<IdFingerprint> rows, int radius, size_t capacity,
                   RunControl control = RunControl{}) {
    PairsRun run;
    std::vector<IdFingerprint> buffer(capacity);
    PartitionedRows input;
    input.file = memory.input(rows.data(), rows.size() * sizeof(IdFingerprint));
    input.n = rows.size();
    input.buffer = buffer.data();
    input.capacity = capacity;
    if (!control.emit) {
        control.context = &run.pairs;
        control.emit = collect;
    }
    run.status = near_pairs_partitioned(input, partitioned_plan(rows.size(), radius), memory.store(), control,
                                        &run.overflow);
    std::sort(run.pairs.begin(), run.pairs.end());
    return run;
}

TEST(NearPartitioned, PairsEqualBruteForceAtEveryPartitionedRadius) {
    const auto rows = make_rows(3000, 5);
    for (int radius : {0, 1, 3, 7, 10, 15}) {
        MemoryStore memory;
        const PairsRun run = run_pairs(memory, rows, radius, 400);
        ASSERT_EQ(run.status, RunStatus::done) << radius;
        EXPECT_EQ(run.pairs, brute_force(rows, radius)) << radius;
        EXPECT_EQ(memory.open(), 0u) << radius;
        EXPECT_GT(memory.created, 1u) << "the input was cut into partitions";
    }
}

TEST(NearPartitioned, PlansStopAtSixteenTables) {
    EXPECT_FALSE(partitioned_plan(1000000, 15).brute_force);
    EXPECT_LE(partitioned_plan(1000000, 15).tables, kMaxPartitionedTables);
    EXPECT_TRUE(partitioned_plan(1000000, 16).brute_force);
    EXPECT_EQ(largest_partitioned_radius(1000000, 40), 15);
    EXPECT_EQ(largest_partitioned_radius(1000000, 7), 7);
}

TEST(NearPartitioned, PartitionBitsAimAtHalfTheBuffer) {
    EXPECT_EQ(partition_bits(100, 1000), 0);
    EXPECT_EQ(partition_bits(1000, 1000), 1);
    EXPECT_EQ(partition_bits(4000, 1000), 3);
    EXPECT_EQ(partition_bits(size_t{1} << 40, 10), kMaxPartitionBits);
}

TEST(NearPartitioned, WritesAreBufferedNotOneCallARow) {
    const auto rows = make_rows(20000, 9);
    MemoryStore memory;
    const PairsRun run = run_pairs(memory, rows, 3, 4000);
    ASSERT_EQ(run.status, RunStatus::done);
    const NearPairsPlan plan = partitioned_plan(rows.size(), 3);
    // One table writes 20,000 rows; buffered, a few hundred calls at most per table.
    EXPECT_LT(memory.writes, plan.tables * 500) << memory.writes;
}

TEST(NearPartitioned, GroupsEqualTheConnectedComponents) {
    auto rows = make_rows(3000, 17);
    for (int i = 0; i < 150; ++i) rows.push_back({90000 + i, rows[7].fingerprint});  // a large duplicate group
    for (int radius : {0, 3, 8}) {
        MemoryStore memory;
        std::vector<IdFingerprint> buffer(600);
        PartitionedRows input;
        input.file = memory.input(rows.data(), rows.size() * sizeof(IdFingerprint));
        input.n = rows.size();
        input.buffer = buffer.data();
        input.capacity = buffer.size();
        std::vector<int64_t> ids(rows.size());
        std::vector<uint32_t> parent(rows.size());
        PartitionOverflow overflow;
        ASSERT_EQ(near_groups_partitioned(input, partitioned_plan(rows.size(), radius), memory.store(), RunControl{},
                                          ids.data(), parent.data(), &overflow),
                  RunStatus::done)
            << radius;
        std::map<int64_t, int64_t> groups;
        for (size_t k = 0; k < rows.size(); ++k) {
            EXPECT_EQ(ids[k], rows[k].id);
            groups[ids[k]] = ids[row_group_root(parent.data(), static_cast<uint32_t>(k))];
        }
        EXPECT_EQ(groups, reference_connected(rows, radius)) << radius;
        EXPECT_EQ(memory.open(), 0u);
    }
}

TEST(NearPartitioned, RefusesWhenTheRowsCannotSpreadOverEnoughPartitions) {
    // Radius 15 keys are 4 bits: 16 partitions at most, so 2,000 rows put 125 or more in one.
    const auto rows = make_rows(2000, 3);
    MemoryStore memory;
    const PairsRun run = run_pairs(memory, rows, 15, 100);
    ASSERT_EQ(run.status, RunStatus::partition_too_large);
    EXPECT_TRUE(run.overflow.whatever_the_data);
    EXPECT_EQ(run.overflow.largest, 125u);
    EXPECT_EQ(run.overflow.partitions, 16u);
    EXPECT_EQ(run.overflow.cut_bits, 4);
    EXPECT_EQ(memory.created, 0u) << "refused before writing anything";
}

TEST(NearPartitioned, RefusesASkewedPartitionAndClosesItsFiles) {
    std::vector<IdFingerprint> rows;
    std::mt19937_64 rng(4);
    for (int i = 0; i < 2000; ++i) rows.push_back({i, rng()});
    for (int i = 0; i < 700; ++i) rows.push_back({10000 + i, 0x1234567890abcdefull});  // one fingerprint, 700 rows
    MemoryStore memory;
    const PairsRun run = run_pairs(memory, rows, 3, 600);
    ASSERT_EQ(run.status, RunStatus::partition_too_large);
    EXPECT_FALSE(run.overflow.whatever_the_data);
    EXPECT_GE(run.overflow.largest, 700u);
    EXPECT_EQ(run.overflow.table, 1u);
    EXPECT_EQ(run.overflow.tables, partitioned_plan(rows.size(), 3).tables);
    EXPECT_EQ(memory.open(), 0u);
}

TEST(NearPartitioned, AFailingStoreStopsTheRunAndEveryFileIsClosed) {
    const auto rows = make_rows(3000, 21);
    MemoryStore counting;
    ASSERT_EQ(run_pairs(counting, rows, 3, 400).status, RunStatus::done);
    const size_t calls = counting.calls;
    std::set<RunStatus> seen;
    // Fail each store call in turn (a sample across the run: creates, writes, rewinds, reads).
    for (size_t fail_at = 1; fail_at <= calls; fail_at += std::max<size_t>(calls / 97, 1)) {
        MemoryStore memory;
        memory.fail_at = fail_at;
        const PairsRun run = run_pairs(memory, rows, 3, 400);
        EXPECT_EQ(run.status, RunStatus::stopped) << fail_at;
        EXPECT_EQ(memory.open(), 0u) << fail_at;
    }
}

TEST(NearPartitioned, StopsWhenAskedAndClosesEveryFile) {
    const auto rows = make_rows(3000, 22);
    int partitions = 0;
    RunControl control;
    control.context = &partitions;
    control.emit = [](void *, const NearPair *, size_t) { return true; };
    control.progress = [](void *c, const char *phase, uint64_t, uint64_t) {
        if (std::string(phase) == "cutting rows into partitions of permuted tables") return true;
        EXPECT_STREQ(phase, "joining partitions of permuted tables");
        return ++*static_cast<int *>(c) < 5;
    };
    MemoryStore memory;
    const PairsRun run = run_pairs(memory, rows, 3, 400, control);
    EXPECT_EQ(run.status, RunStatus::stopped);
    EXPECT_EQ(partitions, 5);
    EXPECT_EQ(memory.open(), 0u);
}

// MinHash ------------------------------------------------------------------------------------

bool collect_jaccard(void *context, const JaccardPair *pairs, size_t n) {
    auto *out = static_cast<std::vector<std::tuple<int64_t, int64_t, double>> *>(context);
    for (size_t i = 0; i < n; ++i) out->emplace_back(pairs[i].a, pairs[i].b, pairs[i].jaccard);
    return true;
}

// The input file of n signature records and the partition buffers of `capacity` signatures.
struct SignatureBuffers {
    SignatureBuffers(MemoryStore &memory, const std::vector<unsigned char> &records, size_t n, int slots,
                     size_t capacity)
        : ids(capacity), signatures(capacity * slots) {
        input.file = memory.input(records.data(), records.size());
        input.n = n;
        input.slots = slots;
        input.ids = ids.data();
        input.signatures = signatures.data();
        input.capacity = capacity;
    }
    std::vector<int64_t> ids;
    std::vector<uint32_t> signatures;
    PartitionedSignatures input;
};

TEST(NearPartitioned, MinhashPairsEqualTheInMemoryJoin) {
    const int slots = 63;  // odd: records of 260 bytes, ids not 8-byte aligned in the file
    MinhashFamily family(slots, 0);
    std::mt19937_64 rng(12);
    std::vector<int64_t> ids;
    std::vector<uint32_t> signatures;
    std::vector<unsigned char> records;
    for (int d = 0; d < 1500; ++d) {
        std::vector<uint64_t> features(100);
        for (auto &f : features) f = rng();
        for (int copy = 0; copy < (d % 3 == 0 ? 2 : 1); ++copy) {
            if (copy) features[rng() % 100] = rng();
            MinhashSketch sketch(family);
            for (auto f : features) sketch.add(f);
            const auto signature = sketch.signature();
            const int64_t id = 3 * d + copy;
            ids.push_back(id);
            signatures.insert(signatures.end(), signature.begin(), signature.end());
            const unsigned char *p = reinterpret_cast<const unsigned char *>(&id);
            records.insert(records.end(), p, p + sizeof(id));
            p = reinterpret_cast<const unsigned char *>(signature.data());
            records.insert(records.end(), p, p + sizeof(uint32_t) * slots);
        }
    }
    const size_t n = ids.size();
    for (double threshold : {0.5, 0.8}) {
        const LshParameters parameters = lsh_parameters(threshold, slots);
        std::vector<std::tuple<int64_t, int64_t, double>> expected, got;
        RunControl control;
        control.context = &expected;
        ASSERT_EQ(minhash_pairs(ids.data(), signatures.data(), n, slots, threshold, parameters, collect_jaccard,
                                control),
                  RunStatus::done);
        MemoryStore memory;
        SignatureBuffers buffers(memory, records, n, slots, 300);
        const PartitionedSignatures input = buffers.input;
        control.context = &got;
        PartitionOverflow overflow;
        ASSERT_EQ(minhash_pairs_partitioned(input, threshold, parameters, collect_jaccard, memory.store(), control,
                                            &overflow),
                  RunStatus::done);
        std::sort(expected.begin(), expected.end());
        std::sort(got.begin(), got.end());
        EXPECT_FALSE(expected.empty());
        EXPECT_EQ(got, expected) << threshold;
        EXPECT_EQ(memory.open(), 0u);
        EXPECT_GT(memory.created, static_cast<size_t>(parameters.bands));
    }
}

TEST(NearPartitioned, MinhashRefusesManyIdenticalSignatures) {
    const int slots = 16;
    std::vector<unsigned char> records;
    std::mt19937_64 rng(2);
    for (int64_t id = 0; id < 1000; ++id) {
        uint32_t signature[slots];
        for (auto &s : signature) s = id < 400 ? 7u : static_cast<uint32_t>(rng());
        const unsigned char *p = reinterpret_cast<const unsigned char *>(&id);
        records.insert(records.end(), p, p + sizeof(id));
        p = reinterpret_cast<const unsigned char *>(signature);
        records.insert(records.end(), p, p + sizeof(signature));
    }
    MemoryStore memory;
    SignatureBuffers buffers(memory, records, 1000, slots, 300);
    const PartitionedSignatures input = buffers.input;
    PartitionOverflow overflow;
    ASSERT_EQ(minhash_pairs_partitioned(input, 0.8, LshParameters{4, 4}, collect_jaccard, memory.store(), RunControl{},
                                        &overflow),
              RunStatus::partition_too_large);
    EXPECT_FALSE(overflow.whatever_the_data);
    EXPECT_GE(overflow.largest, 400u);
    EXPECT_EQ(overflow.table, 1u);
    EXPECT_EQ(overflow.tables, 4u);
    EXPECT_EQ(overflow.key_bits, 64);
    EXPECT_EQ(memory.open(), 0u);
}

}  // namespace
}  // namespace simhash
