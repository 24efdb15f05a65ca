// Batch near-duplicate joins: every pair of rows whose 64-bit fingerprints are within a Hamming
// radius, groups over those pairs, and MinHash LSH pairs. Pure C++17; the caller (the SQL glue)
// hands in plain arrays and receives pairs through a C-style sink, and may stop a run through a
// callback that is polled, never by unwinding through these frames.
//
// Algorithm (pigeonhole permuted tables, Manku et al. 2007, batch form):
//  1. Rows (16 bytes: id, fingerprint) are sorted by fingerprint and identical fingerprints
//     collapsed into distinct fingerprints, each with its list of ids. Identical fingerprints are
//     the distance-0 pairs; everything else works on distinct fingerprints, so a fingerprint shared
//     by many rows costs one entry, not a quadratic equal-key group.
//  2. The 64 bits are cut into m contiguous blocks. Two fingerprints within r bits differ in at
//     most r blocks, so with m = r + t at least t blocks are equal. For each of the C(m, t)
//     combinations of t blocks (the "key"), the distinct fingerprints are radix-sorted by their key
//     and only fingerprints with equal keys are compared.
//  3. A pair is reported only by the combination made of the t lowest-numbered blocks on which the
//     two fingerprints agree (the first in lexicographic order). No memory of reported pairs is
//     needed, and the tables can be processed in any order or apart (near_pairs_pass).
//  4. (m, t) comes from a cost model (plan_near_pairs): per table, a radix sort of U distinct
//     fingerprints plus U^2 / 2^(k+1) expected comparisons for k key bits (uniform fingerprints);
//     brute force (U^2 / 2 comparisons) is chosen when it is cheaper, as for large radii or tiny
//     inputs. Planted near-duplicates only add their own output pairs.
//
// Memory: the caller's rows (16 bytes each) are sorted in place; the core adds a 16-byte scratch
// row per row while sorting, then 12 bytes per distinct fingerprint (fingerprint + id offset) and
// 16 bytes per distinct fingerprint for one table and its radix scratch: at most
// kBytesPerRowInMemory (48) bytes per row at peak, plus a fixed pair buffer. near_pairs_pass runs
// one combination over a subset of the rows (a key range), so a caller with less memory can
// stream the input once per (combination, key range) and still get every pair exactly once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "stop_poll.h"

namespace simhash {

struct IdFingerprint {
    int64_t id;
    uint64_t fingerprint;
};
static_assert(sizeof(IdFingerprint) == 16, "rows are 16 bytes");

// Peak bytes per input row of near_pairs() (rows + sort scratch + distinct set + one table).
constexpr size_t kBytesPerRowInMemory = 48;

struct NearPair {
    int64_t a;  // a < b
    int64_t b;
    int32_t distance;
};

// A run's link to its caller. Every callback is optional.
struct RunControl {
    void *context = nullptr;
    // Receives a batch of pairs; returns false to stop the run.
    bool (*emit)(void *context, const NearPair *pairs, size_t n) = nullptr;
    // Polled every few thousand comparisons; returns true to stop the run (e.g. a query cancel).
    bool (*should_stop)(void *context) = nullptr;
    // Called at most every ~1M units of work: phase name, units done, units in the phase.
    // Returns false to stop the run.
    bool (*progress)(void *context, const char *phase, uint64_t done, uint64_t total) = nullptr;
    // Emit only enough pairs for connectivity: the rows of one fingerprint as a chain to its first
    // row, and one pair (first row to first row) per pair of distinct fingerprints. Keeps a
    // fingerprint shared by g rows at g - 1 pairs instead of g(g - 1)/2 (for grouping).
    bool connectivity_only = false;
};

// stopped: a callback asked to stop. over_memory_limit: the run would need more memory than
// its limit (near_groups), and returned before allocating it. partition_too_large: an input
// larger than memory does not cut into partitions that fit (near_partitioned.h).
enum class RunStatus { done, stopped, over_memory_limit, partition_too_large };

struct NearPairsPlan {
    int radius = 0;
    bool brute_force = false;  // compare every pair of distinct fingerprints
    int blocks = 0;            // m
    int key_blocks = 0;        // t
    int block_start[64] = {};  // bit offset of each block (block 0 holds the lowest bits)
    int block_width[64] = {};
    size_t tables = 0;         // C(m, t) combinations of key blocks (see combination_mask)
    double estimated_cost = 0; // model units (~nanoseconds)
};
// Trivially destructible, so the SQL glue may keep one in a frame that PostgreSQL errors unwind.
static_assert(std::is_trivially_destructible<NearPairsPlan>::value, "plans own no memory");

// The blocks (bitmask) of combination c, 0 <= c < plan.tables: the c-th t-subset of the m blocks
// in colexicographic order. Which combination reports a pair does not depend on this order.
uint64_t combination_mask(const NearPairsPlan &plan, size_t combination);

// The cheapest exact plan for `distinct` distinct fingerprints and a radius in 0..64 (throws
// std::invalid_argument otherwise). max_tables caps C(m, t) (the partitioned caller rescans its
// input once per table and passes a small cap).
NearPairsPlan plan_near_pairs(size_t distinct, int radius, size_t max_tables = 4096);
// The cheapest plan made of tables, with at most max_tables of them, even where comparing all
// pairs would be cheaper (a caller that partitions its input by table keys cannot compare all
// pairs): brute_force is set only when no layout has that few tables.
NearPairsPlan plan_table_layout(size_t distinct, int radius, size_t max_tables);
// A plan with explicit m and t (m = radius + t, m <= 64); for tests.
NearPairsPlan plan_with_blocks(int radius, int blocks, int key_blocks);

// Key of a fingerprint in one combination of a plan: the combination's blocks, concatenated.
uint64_t combination_key(const NearPairsPlan &plan, size_t combination, uint64_t fingerprint);
int combination_key_bits(const NearPairsPlan &plan, size_t combination);

// One combination of a plan, for callers that partition rows by its key themselves (a distributed
// join co-locates rows of equal key on one node and joins them there): the key of a fingerprint,
// and whether this combination reports a pair, so that running every combination over any
// partitioning by key reports each pair exactly once, as near_pairs_pass does.
struct KeyPieces {  // contiguous pieces of a combination's key: (shift, width) from the lowest block up
    int count = 0;
    int shift[64];
    int width[64];
    int bits = 0;
};

// True for a pair when the combination is made of the lowest-numbered blocks on which the two
// fingerprints agree.
class FirstCombination {
public:
    FirstCombination(const NearPairsPlan &plan, size_t combination);
    bool owns(uint64_t x, uint64_t y) const;

private:
    uint8_t block_of_bit_[64];
    uint64_t before_;
};

class CombinationFilter {
public:
    // Throws std::invalid_argument for a brute-force plan or a combination it does not have.
    CombinationFilter(const NearPairsPlan &plan, size_t combination);
    uint64_t key(uint64_t fingerprint) const;
    // The keys are equal, the distance is within the plan's radius, and this combination is the
    // first on which they match.
    bool reports(uint64_t x, uint64_t y) const;

private:
    int radius_;
    KeyPieces pieces_;
    FirstCombination first_;
};
static_assert(std::is_trivially_destructible<CombinationFilter>::value, "a filter owns no memory");

// Ids --------------------------------------------------------------------------------------
// Pairs and groups are reported by id, so every batch function needs unique ids: the joins
// below take them as given (two rows with one id would make a pair of an id with itself), and
// the caller checks its input first.

// Finds an id that occurs more than once: returns true and sets *repeated (when several repeat,
// any one of them), or returns false when all n ids are distinct. Uses a bitmap over the ids'
// range when that takes at most 2 bytes a row (serial keys), else hashes of the ids in buckets
// checked one at a time with a small hash set: at most kBytesPerRowRepeatedIdCheck bytes a row
// (8 for the hashes, the rest for the set of one bucket, about a thousandth of them).
constexpr size_t kBytesPerRowRepeatedIdCheck = 10;
bool find_repeated_id(const IdFingerprint *rows, size_t n, int64_t *repeated);
bool find_repeated_id(const int64_t *ids, size_t n, int64_t *repeated);

// Pairs -------------------------------------------------------------------------------------

// The fraction of pairs of independent uniform 64-bit fingerprints within `radius` bits
// (sum over d <= radius of C(64, d) / 2^64): unrelated documents pair up at this rate, so
// fraction * n(n - 1)/2 is the output a radius produces by chance alone.
double chance_pair_fraction(int radius);

// All unordered pairs of rows whose fingerprints are within `radius` bits, each exactly once,
// ids ordered (a < b) within a pair. Reorders `rows`. Ids must be unique (find_repeated_id).
// Throws std::invalid_argument for a radius outside 0..64 and std::length_error for more than
// 2^32 - 1 rows.
RunStatus near_pairs(IdFingerprint *rows, size_t n, int radius, const RunControl &control);
RunStatus near_pairs(IdFingerprint *rows, size_t n, const NearPairsPlan &plan,
                     const RunControl &control);

// One combination of a (non brute-force) plan over `rows`, which must contain every input row
// whose key in that combination lies in the caller's key range: the pairs found are those whose
// first matching combination is this one (identical fingerprints belong to combination 0).
// Running every combination over key ranges that cover the key space yields each pair once.
RunStatus near_pairs_pass(IdFingerprint *rows, size_t n, const NearPairsPlan &plan,
                          size_t combination, const RunControl &control);

// Groups. group[i] is the group id of rows[i] (rows are not reordered here; ids must be
// unique). Only control.should_stop and control.progress are used.
//  connected: connected components of the within-radius graph; group id = smallest id in it.
//  leader: ids in ascending order; the smallest unassigned id leads a new group and takes every
//          unassigned row within radius of it (every member is within radius of its leader).
// Peak memory, counting the caller's rows and group array (24 bytes a row): connected, about
// kBytesPerRowGroups bytes a row (row copy, sort scratch, distinct set, ranks, union-find, one
// permuted table). Leader also keeps, for each pair of distinct fingerprints within the radius,
// the later one in the earlier one's list: leader_groups_memory(n, pairs). It enumerates the
// pairs once when the limit leaves 12 bytes a pair (they are kept while counted, then listed),
// else twice (counted, then listed); when even the lists exceed memory_limit it returns
// RunStatus::over_memory_limit with *memory_needed set, before allocating them. It refuses as
// soon as that is certain, without counting further: at radius 64 every pair of distinct
// fingerprints is within the radius, so before enumerating any (*memory_needed exact); otherwise
// when the pairs counted so far already need more than the limit (*memory_needed is then what
// they need, a lower bound, and *memory_needed_exact false).
constexpr size_t kBytesPerRowGroups = 96;
constexpr size_t kBytesPerRowLeaderGroups = kBytesPerRowGroups + 8;  // plus list offsets
constexpr size_t kBytesPerLeaderPair = 4;
size_t leader_groups_memory(size_t n, uint64_t pairs);
enum class GroupMethod { connected, leader };
RunStatus near_groups(const IdFingerprint *rows, size_t n, int radius, GroupMethod method,
                      int64_t *group, const RunControl &control, size_t memory_limit = SIZE_MAX,
                      size_t *memory_needed = nullptr, bool *memory_needed_exact = nullptr);

// Connected components of a graph given by its edges (edges[i].id, edges[i].fingerprint read as
// an id), e.g. pairs computed elsewhere: writes every id that is in an edge once, ascending, to
// ids (room for 2n), and the smallest id of its component to groups (room for 2n); returns how
// many ids. Ids in no edge are in no group.
size_t edge_components(const IdFingerprint *edges, size_t n, int64_t *ids, int64_t *groups);

// Union-find over row numbers held by the caller in plain arrays (a partitioned run keeps only
// these, 12 bytes a row): parent[i] == i marks a root, and every set's root is its row with the
// smallest id. unite_rows_by_pairs merges the sets of each pair's rows (pair ids are row numbers).
uint32_t row_group_root(uint32_t *parent, uint32_t row);
void unite_rows_by_pairs(uint32_t *parent, const int64_t *ids, const NearPair *pairs, size_t n);

// MinHash LSH ------------------------------------------------------------------------------

struct LshParameters {
    int bands = 0;
    int rows = 0;  // slots per band; bands * rows <= slots
    double false_positive = 0, false_negative = 0;
};

// Bands and rows minimising w_fp * FP + w_fn * FN, where FP = integral over s in [0, threshold] of
// P(candidate | s) = 1 - (1 - s^rows)^bands, FN = integral over [threshold, 1] of 1 - P (as
// datasketch's _optimal_param). About slots * ln(slots) candidates are weighed (0.4 s at 8192
// slots): `poll`, if given, is ticked for each and may stop the search.
LshParameters lsh_parameters(double threshold, int slots, double false_positive_weight = 0.5,
                             double false_negative_weight = 0.5, StopPoll *poll = nullptr);
double lsh_candidate_probability(double similarity, int bands, int rows);

struct JaccardPair {
    int64_t a;  // a < b
    int64_t b;
    double jaccard;
};

// Pairs of signatures (n rows of `slots` uint32 each, row i's id ids[i]) sharing at least one
// band and whose estimated Jaccard (fraction of equal slots) is >= threshold, each once: by the
// first band they share. With a band range [first_band, first_band + band_count) only the pairs
// whose first shared band is in the range are reported, so a caller can run one band at a time
// over partitions of rows with equal band_hash (every pair is then reported once overall).
RunStatus minhash_pairs(const int64_t *ids, const uint32_t *signatures, size_t n, int slots,
                        double threshold, LshParameters parameters,
                        bool (*emit)(void *context, const JaccardPair *pairs, size_t n),
                        const RunControl &control, int first_band = 0, int band_count = -1);

// Whether band `band` (of `rows` slots) reports the pair of signatures a and b in an LSH join
// partitioned by band hash (each partition holding every row of its hashes): the band is equal in
// both, no earlier band is (that band reports it), and the estimated Jaccard, set in *jaccard, is
// at least threshold. Exactly what minhash_pairs reports for that band.
bool minhash_band_reports(const uint32_t *a, const uint32_t *b, int slots, int rows, int band, double threshold,
                          double *jaccard);

// The bucket hash of one band of a signature (equal bands have equal hashes).
uint64_t minhash_band_hash(const uint32_t *signature, int band, int rows);

// Lock keys of a fingerprint's neighbourhood (deduplication on load): the 64 bits are cut into
// radius + 1 contiguous blocks (64 / m bits, the first 64 % m one bit longer); two fingerprints
// within `radius` bits agree exactly on at least one block (pigeonhole), so they share the key
// hash(block number, block value) % nkeys of that block. Radius 64 (or more) gives the single key 0.
// Writes the keys, sorted ascending and distinct, to `keys` (room for 65) and returns how many.
int neighbourhood_lock_keys(uint64_t fingerprint, int radius, uint32_t nkeys, uint32_t *keys);

}  // namespace simhash

#include "cpp_only.h"
