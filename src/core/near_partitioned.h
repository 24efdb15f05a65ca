// Batch joins of inputs larger than memory. The rows wait in a temporary file; for each permuted
// table of a plan (simhash) or each band (MinHash) they are cut by the top bits of the table's key
// or the band's hash into partitions, temporary files each small enough to join in memory, and
// every partition is joined with the in-memory engine (near_pairs_pass, minhash_pairs over one
// band). Rows that must meet share a key, hence a partition, and each pair is reported by its
// first matching table or band only: every pair comes out exactly once. Cost per table or band:
// one read and one write of the rows.
//
// Temporary files come from the caller through SpillStore (the SQL glue backs it with
// PostgreSQL's BufFile, the unit tests with memory), so this code never touches the database and
// the caller keeps control of where files go and how large they may grow. Memory: the caller
// hands in the partition buffer (it counts it against its limit); the run adds write buffers of
// kPartitionWriteBufferBytes in all and the in-memory engine's own per-row scratch inside the
// partition's budget (kBytesPerRowInMemory a row for simhash, minhash_bytes_per_row for MinHash).
#pragma once

#include <cstddef>
#include <cstdint>

#include "near_pairs.h"

namespace simhash {

// A file of the store: opaque here, the store's own type.
struct SpillFile;

// Temporary files written, rewound, then read from the start. A callback that fails returns false
// (create: nullptr) after keeping its reason; the run then returns RunStatus::stopped, having
// closed every file it created. Input files stay the caller's to close.
struct SpillStore {
    void *context = nullptr;
    SpillFile *(*create)(void *context) = nullptr;
    bool (*write)(void *context, SpillFile *file, const void *data, size_t bytes) = nullptr;
    // Reads up to `bytes`; *done is how many were read, fewer only at the end of the file.
    bool (*read)(void *context, SpillFile *file, void *data, size_t bytes, size_t *done) = nullptr;
    bool (*rewind)(void *context, SpillFile *file) = nullptr;
    void (*close)(void *context, SpillFile *file) = nullptr;
};

constexpr int kMaxPartitionBits = 12;           // at most 4096 partitions per table or band
constexpr size_t kMaxPartitionedTables = 16;    // the input is read once per table
constexpr size_t kPartitionWriteBufferBytes = 256 * 1024;

// Key bits to cut n rows by so that a partition holds about half of the `capacity` rows that fit
// (keys are not perfectly uniform), at most kMaxPartitionBits.
int partition_bits(size_t n, size_t capacity);

// The permuted tables a partitioned simhash run uses: plan_table_layout with at most
// kMaxPartitionedTables tables. brute_force is set when the radius needs more tables than that
// (then largest_partitioned_radius tells the largest radius that does not).
NearPairsPlan partitioned_plan(size_t n, int radius);
int largest_partitioned_radius(size_t n, int radius);

// Why a partitioned run was refused (RunStatus::partition_too_large): one partition would hold
// more rows than the buffer.
struct PartitionOverflow {
    bool whatever_the_data = false;  // found before reading: n rows cannot spread over that many partitions
    size_t largest = 0;              // rows in the fullest partition (at least, when whatever_the_data)
    size_t partitions = 0;           // partitions the rows could spread over
    int cut_bits = 0;                // top bits of the key that cut them
    int key_bits = 0;                // bits in the key (64 for a band hash)
    size_t table = 0, tables = 0;    // the table or band (from 1) and how many there are
};

// The input of a partitioned simhash run: `n` rows (IdFingerprint records) in `file`, and the
// caller's buffer of `capacity` rows (one partition at a time; also the read buffer).
struct PartitionedRows {
    SpillFile *file = nullptr;
    size_t n = 0;
    IdFingerprint *buffer = nullptr;
    size_t capacity = 0;
};

// Every pair within plan.radius (plan from partitioned_plan, not brute force), each once, through
// control.emit; control.progress is told of each partition ("joining partitions of permuted
// tables"). Ids must be unique.
RunStatus near_pairs_partitioned(const PartitionedRows &input, const NearPairsPlan &plan, const SpillStore &store,
                                 const RunControl &control, PartitionOverflow *overflow);

// Connected groups of an input larger than memory, keeping kBytesPerRowPartitionedGroups a row:
// the caller's arrays ids[n] and parent[n] (a union-find over row numbers). The rows are renumbered
// into a new file of (row number, fingerprint), joined as near_pairs_partitioned does with only
// the pairs needed for connectivity, and each pair unites two sets. Afterwards ids[k] is the id of
// the k-th input row and ids[row_group_root(parent, k)] its group (the smallest id in it).
// control.emit is not used. Refuses (std::length_error) n >= 2^32 - 1.
constexpr size_t kBytesPerRowPartitionedGroups = sizeof(int64_t) + sizeof(uint32_t);
RunStatus near_groups_partitioned(const PartitionedRows &input, const NearPairsPlan &plan, const SpillStore &store,
                                  const RunControl &control, int64_t *ids, uint32_t *parent,
                                  PartitionOverflow *overflow);

// Bytes a signature of `slots` slots takes in a MinHash join in memory: the signature, its id and
// its bucket entry.
constexpr size_t minhash_bytes_per_row(int slots) {
    return sizeof(uint32_t) * static_cast<size_t>(slots) + sizeof(int64_t) + 16;
}

// The input of a partitioned MinHash run: `n` records of (int64 id, `slots` uint32) in `file`, and
// the caller's buffers for one partition: ids (capacity) and signatures (capacity * slots).
struct PartitionedSignatures {
    SpillFile *file = nullptr;
    size_t n = 0;
    int slots = 0;
    int64_t *ids = nullptr;
    uint32_t *signatures = nullptr;
    size_t capacity = 0;
};

// The pairs minhash_pairs reports, for an input larger than memory: each band's signatures are cut
// by the top bits of the band hash; progress per partition ("joining partitions of MinHash bands").
RunStatus minhash_pairs_partitioned(const PartitionedSignatures &input, double threshold, LshParameters parameters,
                                    bool (*emit)(void *context, const JaccardPair *pairs, size_t n),
                                    const SpillStore &store, const RunControl &control,
                                    PartitionOverflow *overflow);

}  // namespace simhash
