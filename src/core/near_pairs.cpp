#include "near_pairs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>

#include "blocks.h"
#include "hamming.h"
#include "minhash.h"

namespace simhash {

namespace {

// Thrown inside the core when a callback asks to stop; caught by the public entry points, which
// then return RunStatus::stopped. Never leaves the core.
struct StopRun {};

// Cost model units: roughly nanoseconds on one core (measured on the development machine).
constexpr double kCostPerRadixPass = 2.0;   // per element and pass (read, key, scatter)
constexpr double kCostPerTableScan = 1.5;   // per element: key and run detection
constexpr double kCostPerComparison = 0.6;  // per candidate pair (xor + popcount + compare)
constexpr int kRadixDigitBits = 11;
constexpr size_t kPollEvery = 1u << 16;       // work units between should_stop polls
constexpr uint64_t kProgressEvery = 1u << 24;  // work units between progress callbacks

double binomial(int n, int k) {
    if (k < 0 || k > n) return 0;
    double r = 1;
    for (int i = 1; i <= k; ++i) r = r * (n - k + i) / i;
    return r;
}

uint64_t exact_binomial(int n, int k) {
    if (k < 0 || k > n) return 0;
    unsigned __int128 r = 1;
    for (int i = 1; i <= k; ++i) r = r * (n - k + i) / i;  // exact: r is C(n - k + i, i)
    return static_cast<uint64_t>(r);
}

// The splitmix64 finalizer: a bijection of uint64 that spreads any set of keys evenly.
inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

void check_radius(int radius) {
    if (radius < 0 || radius > 64)
        throw std::invalid_argument("radius must be between 0 and 64");
}

// Polls the caller's callbacks: should_stop every kPollEvery units of work, progress (the phase
// and its step, e.g. table 3 of 10) every kProgressEvery units.
class Poller {
public:
    explicit Poller(const RunControl &control) : control_(control) {}
    void begin(const char *phase, uint64_t total) {
        phase_ = phase;
        total_ = total;
        done_ = 0;
        report();
    }
    void step(uint64_t done) { done_ = done; tick(); }
    void tick(uint64_t units = 1) {
        since_poll_ += units;
        if (since_poll_ < kPollEvery) return;
        since_progress_ += since_poll_;
        since_poll_ = 0;
        if (control_.should_stop && control_.should_stop(control_.context)) throw StopRun();
        if (since_progress_ >= kProgressEvery) {
            since_progress_ = 0;
            report();
        }
    }

private:
    void report() {
        if (control_.progress && !control_.progress(control_.context, phase_, done_, total_))
            throw StopRun();
    }
    const RunControl &control_;
    const char *phase_ = "";
    uint64_t total_ = 0, done_ = 0, since_poll_ = 0, since_progress_ = 0;
};

// LSD radix sort of `a` (n elements) by key(a[i]) of key_bits bits; `scratch` has room for n.
// Stable. Returns the buffer holding the sorted elements (a or scratch).
template <typename T, typename KeyFn>
T *radix_sort(T *a, T *scratch, size_t n, int key_bits, KeyFn key, Poller *poller) {
    if (n < 2 || key_bits <= 0) return a;
    if (n < 512) {
        std::stable_sort(a, a + n, [&](const T &x, const T &y) { return key(x) < key(y); });
        return a;
    }
    const int passes = (key_bits + kRadixDigitBits - 1) / kRadixDigitBits;
    const int digit_bits = (key_bits + passes - 1) / passes;
    const size_t buckets = size_t{1} << digit_bits;
    const uint64_t digit_mask = buckets - 1;
    std::vector<size_t> count(buckets);
    T *src = a, *dst = scratch;
    for (int p = 0; p < passes; ++p) {
        const int shift = p * digit_bits;
        std::fill(count.begin(), count.end(), 0);
        for (size_t i = 0; i < n; ++i) ++count[(key(src[i]) >> shift) & digit_mask];
        if (std::find(count.begin(), count.end(), n) != count.end()) continue;  // one bucket
        size_t sum = 0;
        for (auto &c : count) {
            const size_t k = c;
            c = sum;
            sum += k;
        }
        for (size_t i = 0; i < n; ++i) dst[count[(key(src[i]) >> shift) & digit_mask]++] = src[i];
        std::swap(src, dst);
        if (poller) poller->tick(n);
    }
    return src;
}

// Rows sorted by fingerprint and grouped: distinct fingerprints with the range of their ids.
struct DistinctSet {
    std::vector<uint64_t> fingerprints;  // ascending, unique
    std::vector<uint32_t> offsets;       // ids of fingerprints[i]: rows[offsets[i] .. offsets[i+1])
};

// Sorts rows by fingerprint (stable) and fills `set`. Rows end up in `rows` again.
void collapse(IdFingerprint *rows, size_t n, DistinctSet &set, Poller &poller) {
    if (n >= std::numeric_limits<uint32_t>::max())
        throw std::length_error("too many rows for one batch (at most 4294967294)");
    {
        std::unique_ptr<IdFingerprint[]> scratch(new IdFingerprint[n >= 512 ? n : 1]);  // uninitialized
        poller.begin("sorting rows by fingerprint", n);
        IdFingerprint *sorted = radix_sort(rows, scratch.get(), n, 64,
                                           [](const IdFingerprint &r) { return r.fingerprint; }, &poller);
        if (sorted != rows) std::copy(sorted, sorted + n, rows);
    }
    size_t distinct = 0;
    for (size_t i = 0; i < n; ++i) distinct += i == 0 || rows[i].fingerprint != rows[i - 1].fingerprint;
    set.fingerprints.reserve(distinct);
    set.offsets.reserve(distinct + 1);
    for (size_t i = 0; i < n; ++i) {
        if (i == 0 || rows[i].fingerprint != rows[i - 1].fingerprint) {
            set.fingerprints.push_back(rows[i].fingerprint);
            set.offsets.push_back(static_cast<uint32_t>(i));
        }
    }
    set.offsets.push_back(static_cast<uint32_t>(n));
}

KeyPieces key_pieces(const NearPairsPlan &plan, size_t combination) {
    KeyPieces k;
    const uint64_t mask = combination_mask(plan, combination);
    for (int b = 0; b < plan.blocks; ++b) {
        if (!(mask >> b & 1)) continue;
        if (k.count > 0 && (mask >> (b - 1) & 1)) {
            k.width[k.count - 1] += plan.block_width[b];
        } else {
            k.shift[k.count] = plan.block_start[b];
            k.width[k.count] = plan.block_width[b];
            ++k.count;
        }
        k.bits += plan.block_width[b];
    }
    return k;
}

inline uint64_t low_bits(int width) { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }

inline uint64_t extract_key(const KeyPieces &k, uint64_t fp) {
    if (k.count == 1) return (fp >> k.shift[0]) & low_bits(k.width[0]);
    uint64_t key = 0;
    for (int i = 0; i < k.count; ++i) key = (key << k.width[i]) | ((fp >> k.shift[i]) & low_bits(k.width[i]));
    return key;
}

// Room for one permuted table and its radix-sort scratch (uninitialized, reused across tables).
struct TableBuffers {
    explicit TableBuffers(size_t u) : table(new uint64_t[u ? u : 1]), scratch(new uint64_t[u ? u : 1]) {}
    std::unique_ptr<uint64_t[]> table, scratch;
};

// Index of x in the ascending array fps[0..u) that contains it. Starts from the position x would
// have if fingerprints were uniform, then gallops: one or two probes on hashed fingerprints,
// O(log u) on any data (a plain binary search would miss the cache about log2(u) times).
inline size_t find_fingerprint(const uint64_t *fps, size_t u, uint64_t x) {
    const size_t guess = static_cast<size_t>((static_cast<unsigned __int128>(x) * u) >> 64);
    size_t lo, hi;  // x is in fps[lo, hi)
    size_t step = 1;
    if (fps[guess] < x) {
        lo = guess + 1;
        hi = lo + step;
        while (hi < u && fps[hi - 1] < x) {
            lo = hi;
            step *= 2;
            hi = lo + step;
        }
        hi = std::min(hi, u);
    } else {
        hi = guess + 1;
        lo = guess;
        while (lo > 0 && fps[lo] > x) {
            hi = lo;
            step *= 2;
            lo = hi > step ? hi - step : 0;
        }
    }
    return std::lower_bound(fps + lo, fps + hi, x) - fps;
}

// Calls on_pair(i, j, distance) for distinct fingerprints fps[i] != fps[j] within the plan's
// radius whose first matching combination is `combination` (each such pair once).
template <typename OnPair>
void combination_pairs(const uint64_t *fps, size_t u, const NearPairsPlan &plan, size_t combination,
                       TableBuffers &buffers, Poller &poller, OnPair on_pair) {
    const KeyPieces pieces = key_pieces(plan, combination);
    const FirstCombination first(plan, combination);
    std::copy(fps, fps + u, buffers.table.get());
    uint64_t *sorted = radix_sort(buffers.table.get(), buffers.scratch.get(), u, pieces.bits,
                                  [&](uint64_t fp) { return extract_key(pieces, fp); }, &poller);
    std::vector<uint32_t> matches;
    size_t start = 0;
    while (start < u) {
        const uint64_t key = extract_key(pieces, sorted[start]);
        size_t end = start + 1;
        while (end < u && extract_key(pieces, sorted[end]) == key) ++end;
        const size_t len = end - start;
        if (len > 1) {
            if (matches.size() < len) matches.resize(len);
            for (size_t i = start; i + 1 < end; ++i) {
                const uint64_t x = sorted[i];
                const size_t found = select_within_radius(sorted + i + 1, end - i - 1, x, plan.radius, matches.data());
                for (size_t f = 0; f < found; ++f) {
                    const uint64_t y = sorted[i + 1 + matches[f]];
                    if (!first.owns(x, y)) continue;
                    on_pair(find_fingerprint(fps, u, x), find_fingerprint(fps, u, y), hamming_distance(x, y));
                }
                poller.tick(end - i);
            }
        } else {
            poller.tick(1);
        }
        start = end;
    }
}

// Brute force over distinct fingerprints: every pair (i < j) within the radius.
template <typename OnPair>
void brute_force_pairs(const uint64_t *fps, size_t u, int radius, Poller &poller, OnPair on_pair) {
    std::vector<uint32_t> matches(u);
    for (size_t i = 0; i + 1 < u; ++i) {
        const size_t found = select_within_radius(fps + i + 1, u - i - 1, fps[i], radius, matches.data());
        for (size_t f = 0; f < found; ++f) {
            const size_t j = i + 1 + matches[f];
            on_pair(i, j, hamming_distance(fps[i], fps[j]));
        }
        poller.step(i);
        poller.tick(u - i);
    }
}

// Every pair of distinct fingerprints within the radius, once.
template <typename OnPair>
void distinct_pairs(const uint64_t *fps, size_t u, const NearPairsPlan &plan, Poller &poller,
                    OnPair on_pair) {
    if (plan.radius == 0 || u < 2) return;
    if (plan.brute_force) {
        poller.begin("comparing all fingerprints", static_cast<uint64_t>(u) * u / 2);
        brute_force_pairs(fps, u, plan.radius, poller, on_pair);
        return;
    }
    poller.begin("scanning permuted tables", plan.tables);
    TableBuffers buffers(u);
    for (size_t c = 0; c < plan.tables; ++c) {
        poller.step(c);
        combination_pairs(fps, u, plan, c, buffers, poller, on_pair);
    }
}

// Buffers pairs for the caller's sink.
class PairWriter {
public:
    explicit PairWriter(const RunControl &control) : control_(control) { buffer_.reserve(kBatch); }
    void add(int64_t a, int64_t b, int distance) {
        if (a > b) std::swap(a, b);
        buffer_.push_back(NearPair{a, b, distance});
        if (buffer_.size() == kBatch) flush();
    }
    void flush() {
        if (!buffer_.empty() && control_.emit && !control_.emit(control_.context, buffer_.data(), buffer_.size()))
            throw StopRun();
        buffer_.clear();
    }

private:
    static constexpr size_t kBatch = 4096;
    const RunControl &control_;
    std::vector<NearPair> buffer_;
};

// Emits the id pairs of two distinct fingerprints (or of one fingerprint with itself).
void expand(const IdFingerprint *rows, const DistinctSet &set, size_t x, size_t y, int distance,
            PairWriter &out, Poller &poller, bool connectivity_only) {
    const uint32_t xb = set.offsets[x], xe = set.offsets[x + 1];
    const uint32_t yb = set.offsets[y], ye = set.offsets[y + 1];
    if (connectivity_only) {
        if (x != y) out.add(rows[xb].id, rows[yb].id, distance);
        else
            for (uint32_t i = xb + 1; i < xe; ++i) out.add(rows[xb].id, rows[i].id, 0);
        poller.tick(xe - xb);
        return;
    }
    if (x == y) {
        for (uint32_t i = xb; i < xe; ++i)
            for (uint32_t j = i + 1; j < xe; ++j) out.add(rows[i].id, rows[j].id, 0);
        poller.tick(static_cast<uint64_t>(xe - xb) * (xe - xb) / 2);
        return;
    }
    for (uint32_t i = xb; i < xe; ++i)
        for (uint32_t j = yb; j < ye; ++j) out.add(rows[i].id, rows[j].id, distance);
    poller.tick(static_cast<uint64_t>(xe - xb) * (ye - yb));
}

// The blocks of blocks.h, numbered from the least significant end: plan block b is layout block
// blocks - 1 - b.
void fill_blocks(NearPairsPlan &plan, int blocks, int key_blocks) {
    plan.blocks = blocks;
    plan.key_blocks = key_blocks;
    const BlockLayout layout = block_layout(blocks);
    for (int b = 0; b < blocks; ++b) {
        plan.block_width[b] = layout.width[blocks - 1 - b];
        plan.block_start[b] = block_low_bit(layout, blocks - 1 - b);
    }
    plan.tables = static_cast<size_t>(exact_binomial(blocks, key_blocks));
}

double table_plan_cost(size_t u, int blocks, int key_blocks, double tables) {
    const double key_bits = 64.0 * key_blocks / blocks;
    const double passes = std::ceil(key_bits / kRadixDigitBits);
    const double per_table = u * (passes * kCostPerRadixPass + kCostPerTableScan) +
                             0.5 * static_cast<double>(u) * u * std::pow(2.0, -key_bits) * kCostPerComparison;
    return tables * per_table;
}

}  // namespace

FirstCombination::FirstCombination(const NearPairsPlan &plan, size_t combination) {
    for (int b = 0; b < plan.blocks; ++b)
        for (int i = 0; i < plan.block_width[b]; ++i) block_of_bit_[plan.block_start[b] + i] = static_cast<uint8_t>(b);
    const uint64_t mask = combination_mask(plan, combination);
    const int highest = 63 - __builtin_clzll(mask);
    before_ = low_bits(highest) & ~mask;
}

bool FirstCombination::owns(uint64_t x, uint64_t y) const {
    uint64_t diff = x ^ y, differing_blocks = 0;
    while (diff) {
        differing_blocks |= uint64_t{1} << block_of_bit_[__builtin_ctzll(diff)];
        diff &= diff - 1;
    }
    // A block below the combination's highest one, outside it, on which x and y agree would
    // make an earlier combination match.
    return (before_ & ~differing_blocks) == 0;
}

CombinationFilter::CombinationFilter(const NearPairsPlan &plan, size_t combination)
    : radius_(plan.radius),
      pieces_((plan.brute_force || combination >= plan.tables)
                  ? throw std::invalid_argument("the plan has no such combination of blocks")
                  : key_pieces(plan, combination)),
      first_(plan, combination) {}

uint64_t CombinationFilter::key(uint64_t fingerprint) const { return extract_key(pieces_, fingerprint); }

bool CombinationFilter::reports(uint64_t x, uint64_t y) const {
    return extract_key(pieces_, x) == extract_key(pieces_, y) && popcount64(x ^ y) <= radius_ && first_.owns(x, y);
}


namespace {
constexpr int kRepeatedIdBucketBits = 10;

// id_at(i) is the i-th id. Ids as unsigned offsets from the smallest id: exact for any int64 range.
template <typename IdAt>
bool find_repeated(size_t n, IdAt id_at, int64_t *repeated) {
    if (n < 2) return false;
    int64_t low = id_at(0), high = low;
    for (size_t i = 1; i < n; ++i) {
        low = std::min(low, id_at(i));
        high = std::max(high, id_at(i));
    }
    const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
    auto offset = [&](size_t i) { return static_cast<uint64_t>(id_at(i)) - static_cast<uint64_t>(low); };
    if (range < static_cast<uint64_t>(n) * 16) {
        // Serial keys: one bit per possible id, in cache for millions of rows.
        std::vector<uint64_t> seen(range / 64 + 1, 0);
        for (size_t i = 0; i < n; ++i) {
            const uint64_t k = offset(i), bit = uint64_t{1} << (k & 63);
            if (seen[k >> 6] & bit) {
                *repeated = id_at(i);
                return true;
            }
            seen[k >> 6] |= bit;
        }
        return false;
    }
    // Sparse ids: bucketed by the top bits of a bijective hash (equal ids have equal hashes, and
    // any set of ids spreads evenly) into a few hundred buckets, then each bucket checked with a
    // small hash set that stays in cache: two passes over the ids and one over the hashes.
    int bits = 0;
    while (bits < kRepeatedIdBucketBits && (n >> bits) > 4096) ++bits;
    auto bucket = [bits](uint64_t hash) { return bits ? static_cast<size_t>(hash >> (64 - bits)) : 0; };
    std::vector<size_t> start((size_t{1} << bits) + 1, 0);
    for (size_t i = 0; i < n; ++i) ++start[bucket(mix64(offset(i))) + 1];
    size_t largest = 0;
    for (size_t b = 0; b + 1 < start.size(); ++b) {
        largest = std::max(largest, start[b + 1]);
        start[b + 1] += start[b];
    }
    std::unique_ptr<uint64_t[]> hashes(new uint64_t[n]);
    {
        std::vector<size_t> next(start.begin(), start.end() - 1);
        for (size_t i = 0; i < n; ++i) {
            const uint64_t hash = mix64(offset(i));
            hashes[next[bucket(hash)]++] = hash;
        }
    }
    // Open addressing by the hash's low bits; 0 marks an empty slot (a hash of 0 is tracked apart).
    size_t slots = 16;
    while (slots < 2 * largest) slots *= 2;
    std::vector<uint64_t> set(slots);
    uint64_t twice = 0;
    bool found = false;
    for (size_t b = 0; b + 1 < start.size() && !found; ++b) {
        std::fill(set.begin(), set.end(), 0);
        bool zero_seen = false;
        for (size_t i = start[b]; i < start[b + 1] && !found; ++i) {
            const uint64_t hash = hashes[i];
            if (hash == 0) {
                found = zero_seen;
                zero_seen = true;
                continue;
            }
            size_t slot = hash & (slots - 1);
            while (set[slot] != 0 && set[slot] != hash) slot = (slot + 1) & (slots - 1);
            found = set[slot] == hash;
            set[slot] = hash;
            if (found) twice = hash;
        }
    }
    if (!found) return false;
    for (size_t i = 0;; ++i)  // the id behind the hash
        if (mix64(offset(i)) == twice) {
            *repeated = id_at(i);
            return true;
        }
}
}  // namespace

bool find_repeated_id(const IdFingerprint *rows, size_t n, int64_t *repeated) {
    return find_repeated(n, [rows](size_t i) { return rows[i].id; }, repeated);
}

bool find_repeated_id(const int64_t *ids, size_t n, int64_t *repeated) {
    return find_repeated(n, [ids](size_t i) { return ids[i]; }, repeated);
}

double chance_pair_fraction(int radius) {
    check_radius(radius);
    double within = 0;
    for (int d = 0; d <= radius; ++d) within += binomial(64, d);
    return std::ldexp(within, -64);
}

NearPairsPlan plan_with_blocks(int radius, int blocks, int key_blocks) {
    check_radius(radius);
    if (key_blocks < 1 || blocks != radius + key_blocks || blocks > 64)
        throw std::invalid_argument("a plan needs blocks = radius + key_blocks <= 64, key_blocks >= 1");
    NearPairsPlan plan;
    plan.radius = radius;
    fill_blocks(plan, blocks, key_blocks);
    return plan;
}

namespace {
NearPairsPlan cheapest_plan(size_t distinct, int radius, size_t max_tables, bool brute_force_allowed) {
    check_radius(radius);
    NearPairsPlan plan;
    plan.radius = radius;
    const double u = static_cast<double>(distinct);
    plan.brute_force = true;
    plan.estimated_cost = brute_force_allowed ? 0.5 * u * u * kCostPerComparison
                                              : std::numeric_limits<double>::infinity();
    if (radius == 0) {  // identical fingerprints only: no tables
        plan.brute_force = false;
        plan.estimated_cost = 0;
        fill_blocks(plan, 1, 1);
        return plan;
    }
    int best_m = 0, best_t = 0;
    for (int t = 1; radius + t <= 64; ++t) {
        const int m = radius + t;
        const double tables = binomial(m, t);
        if (tables > static_cast<double>(max_tables)) {
            if (t > 1) break;  // C(m, t) grows with t for t <= m / 2
            continue;
        }
        const double cost = table_plan_cost(distinct, m, t, tables);
        if (cost < plan.estimated_cost) {
            plan.estimated_cost = cost;
            best_m = m;
            best_t = t;
        }
    }
    if (best_m != 0) {
        plan.brute_force = false;
        fill_blocks(plan, best_m, best_t);
    } else {
        plan.estimated_cost = 0.5 * u * u * kCostPerComparison;
    }
    return plan;
}
}  // namespace

NearPairsPlan plan_near_pairs(size_t distinct, int radius, size_t max_tables) {
    return cheapest_plan(distinct, radius, max_tables, true);
}

NearPairsPlan plan_table_layout(size_t distinct, int radius, size_t max_tables) {
    return cheapest_plan(distinct, radius, max_tables, false);
}

uint64_t combination_mask(const NearPairsPlan &plan, size_t combination) {
    if (combination >= plan.tables) throw std::out_of_range("no such combination in the plan");
    // Combinatorial number system: c = C(a_t, t) + ... + C(a_1, 1) with a_t > ... > a_1 >= 0.
    uint64_t rest = combination, mask = 0;
    int a = plan.blocks;
    for (int k = plan.key_blocks; k >= 1; --k) {
        do --a; while (exact_binomial(a, k) > rest);
        mask |= uint64_t{1} << a;
        rest -= exact_binomial(a, k);
    }
    return mask;
}

uint64_t combination_key(const NearPairsPlan &plan, size_t combination, uint64_t fingerprint) {
    const KeyPieces pieces = key_pieces(plan, combination);
    return extract_key(pieces, fingerprint);
}

int combination_key_bits(const NearPairsPlan &plan, size_t combination) {
    return key_pieces(plan, combination).bits;
}

namespace {
// Collapses the rows, emits the pairs of identical fingerprints (if asked), then runs
// body(set, poller, out) for the pairs of distinct fingerprints; a stop request ends the run.
template <typename Body>
RunStatus run_collapsed(IdFingerprint *rows, size_t n, bool identical_pairs, const RunControl &control,
                        Body body) {
    try {
        Poller poller(control);
        PairWriter out(control);
        DistinctSet set;
        collapse(rows, n, set, poller);
        const size_t u = set.fingerprints.size();
        if (identical_pairs) {
            poller.begin("pairing identical fingerprints", u);
            for (size_t x = 0; x < u; ++x) {
                if (set.offsets[x + 1] - set.offsets[x] > 1) expand(rows, set, x, x, 0, out, poller, control.connectivity_only);
                poller.step(x + 1);
            }
        }
        body(set, poller, [&](size_t x, size_t y, int d) { expand(rows, set, x, y, d, out, poller, control.connectivity_only); });
        out.flush();
        return RunStatus::done;
    } catch (const StopRun &) {
        return RunStatus::stopped;
    }
}
}  // namespace

RunStatus near_pairs(IdFingerprint *rows, size_t n, int radius, const RunControl &control) {
    check_radius(radius);
    return run_collapsed(rows, n, true, control, [&](const DistinctSet &set, Poller &poller, auto on_pair) {
        const size_t u = set.fingerprints.size();
        distinct_pairs(set.fingerprints.data(), u, plan_near_pairs(u, radius), poller, on_pair);
    });
}

RunStatus near_pairs(IdFingerprint *rows, size_t n, const NearPairsPlan &plan, const RunControl &control) {
    check_radius(plan.radius);
    return run_collapsed(rows, n, true, control, [&](const DistinctSet &set, Poller &poller, auto on_pair) {
        distinct_pairs(set.fingerprints.data(), set.fingerprints.size(), plan, poller, on_pair);
    });
}

RunStatus near_pairs_pass(IdFingerprint *rows, size_t n, const NearPairsPlan &plan,
                          size_t combination, const RunControl &control) {
    check_radius(plan.radius);
    if (plan.brute_force || combination >= plan.tables)
        throw std::invalid_argument("near_pairs_pass needs a table plan and one of its combinations");
    // Identical fingerprints match on every block: they belong to combination 0.
    return run_collapsed(rows, n, combination == 0, control, [&](const DistinctSet &set, Poller &poller, auto on_pair) {
        if (plan.radius == 0) return;
        const size_t u = set.fingerprints.size();
        poller.begin("scanning a permuted table", u);
        TableBuffers buffers(u);
        combination_pairs(set.fingerprints.data(), u, plan, combination, buffers, poller, on_pair);
    });
}

// Groups --------------------------------------------------------------------------------------

namespace {

class UnionFind {
public:
    explicit UnionFind(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0u); }
    uint32_t find(uint32_t x) {
        while (parent_[x] != x) {
            parent_[x] = parent_[parent_[x]];
            x = parent_[x];
        }
        return x;
    }
    void unite(uint32_t a, uint32_t b) {
        a = find(a);
        b = find(b);
        if (a == b) return;
        if (a < b) std::swap(a, b);
        parent_[a] = b;  // the smaller index (smaller min id, see below) stays the root
    }

private:
    std::vector<uint32_t> parent_;
};

}  // namespace

size_t edge_components(const IdFingerprint *edges, size_t n, int64_t *ids, int64_t *groups) {
    if (n > (size_t{UINT32_MAX} - 1) / 2) throw std::length_error("edge_components takes at most 2^31 - 1 edges");
    for (size_t i = 0; i < n; ++i) {
        ids[2 * i] = edges[i].id;
        ids[2 * i + 1] = static_cast<int64_t>(edges[i].fingerprint);
    }
    std::sort(ids, ids + 2 * n);
    const size_t m = static_cast<size_t>(std::unique(ids, ids + 2 * n) - ids);
    auto index_of = [&](int64_t id) { return static_cast<uint32_t>(std::lower_bound(ids, ids + m, id) - ids); };
    UnionFind components(m);
    for (size_t i = 0; i < n; ++i) components.unite(index_of(edges[i].id), index_of(static_cast<int64_t>(edges[i].fingerprint)));
    // The root of a component is its smallest index, so its smallest id.
    for (size_t i = 0; i < m; ++i) groups[i] = ids[components.find(static_cast<uint32_t>(i))];
    return m;
}

size_t leader_groups_memory(size_t n, uint64_t pairs) {
    return n * kBytesPerRowLeaderGroups + static_cast<size_t>(pairs) * kBytesPerLeaderPair;
}

RunStatus near_groups(const IdFingerprint *rows, size_t n, int radius, GroupMethod method,
                      int64_t *group, const RunControl &control, size_t memory_limit, size_t *memory_needed) {
    check_radius(radius);
    if (n >= std::numeric_limits<uint32_t>::max())
        throw std::length_error("too many rows for one batch (at most 4294967294)");
    try {
        Poller poller(control);
        // Sort (fingerprint, row index) and collapse; rows of a distinct fingerprint share a group
        // in both methods (distance 0).
        std::vector<IdFingerprint> sorted(n);
        for (size_t i = 0; i < n; ++i) sorted[i] = IdFingerprint{static_cast<int64_t>(i), rows[i].fingerprint};
        DistinctSet set;
        collapse(sorted.data(), n, set, poller);
        const size_t u = set.fingerprints.size();
        // Smallest id of each distinct fingerprint; renumber distinct fingerprints by it so that
        // "smaller index" means "smaller smallest id".
        std::vector<int64_t> min_id(u);
        for (size_t x = 0; x < u; ++x) {
            int64_t m = rows[sorted[set.offsets[x]].id].id;
            for (uint32_t i = set.offsets[x] + 1; i < set.offsets[x + 1]; ++i) m = std::min(m, rows[sorted[i].id].id);
            min_id[x] = m;
        }
        std::vector<uint32_t> order(u), rank(u);
        std::iota(order.begin(), order.end(), 0u);
        std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return min_id[a] < min_id[b]; });
        for (size_t k = 0; k < u; ++k) rank[order[k]] = static_cast<uint32_t>(k);

        const NearPairsPlan plan = plan_near_pairs(u, radius);
        std::vector<int64_t> distinct_group(u);
        if (method == GroupMethod::connected) {
            UnionFind sets(u);
            distinct_pairs(set.fingerprints.data(), u, plan, poller,
                           [&](size_t x, size_t y, int) { sets.unite(rank[x], rank[y]); });
            for (size_t x = 0; x < u; ++x) distinct_group[x] = min_id[order[sets.find(rank[x])]];
        } else {
            // Greedy leaders in ascending rank (smallest id) order. When rank k leads, every
            // earlier rank is already assigned, so it only claims later ranks: each pair is kept
            // once, as the later rank in the earlier rank's list (4 bytes), the lists allocated
            // once at their exact size. The enumeration counts the lists' lengths and, while the
            // memory limit has room for a pair twice over (8 bytes now, 4 in the lists), keeps
            // the pairs in chunks (no reallocation peaks). When it could not keep them all, a
            // second enumeration fills the lists; the run is refused before that when even the
            // lists do not fit.
            std::vector<size_t> first(u + 1, 0);  // then: first[k] is where rank k's list ends
            const size_t fixed = leader_groups_memory(n, 0);
            const uint64_t keepable =
                memory_limit > fixed ? (memory_limit - fixed) / (sizeof(uint64_t) + kBytesPerLeaderPair) : 0;
            constexpr size_t kChunkPairs = 4096;
            std::vector<std::unique_ptr<uint64_t[]>> chunks;  // (earlier rank << 32) | later rank
            bool all_kept = true;
            uint64_t pairs = 0;
            distinct_pairs(set.fingerprints.data(), u, plan, poller, [&](size_t x, size_t y, int) {
                const uint64_t earlier = std::min(rank[x], rank[y]), later = std::max(rank[x], rank[y]);
                ++first[earlier + 1];
                if (all_kept) {
                    const size_t slot = pairs % kChunkPairs;
                    if (slot == 0 && pairs + kChunkPairs > keepable) {
                        chunks.clear();  // no room: the second enumeration fills the lists
                        all_kept = false;
                    } else {
                        if (slot == 0) chunks.emplace_back(new uint64_t[kChunkPairs]);
                        chunks.back()[slot] = earlier << 32 | later;
                    }
                }
                ++pairs;
            });
            for (size_t k = 0; k < u; ++k) first[k + 1] += first[k];
            const size_t needed = leader_groups_memory(n, pairs);
            if (needed > memory_limit) {
                if (memory_needed) *memory_needed = needed;
                return RunStatus::over_memory_limit;
            }
            std::vector<uint32_t> later(pairs);
            auto place = [&](uint64_t earlier, uint64_t later_rank) {
                later[first[earlier]++] = static_cast<uint32_t>(later_rank);
            };
            if (all_kept) {
                for (uint64_t i = 0; i < pairs; ++i) {
                    const uint64_t pair = chunks[i / kChunkPairs][i % kChunkPairs];
                    place(pair >> 32, pair & 0xFFFFFFFFu);
                }
                chunks.clear();
            } else {
                distinct_pairs(set.fingerprints.data(), u, plan, poller, [&](size_t x, size_t y, int) {
                    place(std::min(rank[x], rank[y]), std::max(rank[x], rank[y]));
                });
            }
            constexpr int64_t kUnassigned = std::numeric_limits<int64_t>::min();
            for (auto &g : distinct_group) g = kUnassigned;
            poller.begin("choosing leaders", u);
            for (size_t k = 0; k < u; ++k) {
                poller.step(k);
                int64_t &own = distinct_group[order[k]];
                if (own != kUnassigned) continue;
                own = min_id[order[k]];
                for (size_t e = k == 0 ? 0 : first[k - 1]; e < first[k]; ++e) {
                    int64_t &member = distinct_group[order[later[e]]];
                    if (member == kUnassigned) member = own;
                }
            }
        }
        for (size_t x = 0; x < u; ++x)
            for (uint32_t i = set.offsets[x]; i < set.offsets[x + 1]; ++i) group[sorted[i].id] = distinct_group[x];
        return RunStatus::done;
    } catch (const StopRun &) {
        return RunStatus::stopped;
    }
}

// MinHash LSH ---------------------------------------------------------------------------------

double lsh_candidate_probability(double s, int bands, int rows) {
    return 1.0 - std::pow(1.0 - std::pow(s, rows), bands);
}

namespace {
// Simpson's rule with 64 intervals.
template <typename F>
double integrate(F f, double a, double b) {
    constexpr int kIntervals = 64;
    const double h = (b - a) / kIntervals;
    double sum = f(a) + f(b);
    for (int i = 1; i < kIntervals; ++i) sum += f(a + i * h) * (i % 2 ? 4 : 2);
    return sum * h / 3;
}
}  // namespace

LshParameters lsh_parameters(double threshold, int slots, double false_positive_weight,
                             double false_negative_weight) {
    if (!(threshold > 0.0 && threshold <= 1.0)) throw std::invalid_argument("threshold must be in (0, 1]");
    if (slots < 1) throw std::invalid_argument("signatures need at least one slot");
    LshParameters best;
    double best_error = std::numeric_limits<double>::infinity();
    for (int b = 1; b <= slots; ++b) {
        for (int r = 1; r <= slots / b; ++r) {
            const double fp = integrate([&](double s) { return lsh_candidate_probability(s, b, r); }, 0.0, threshold);
            const double fn = integrate([&](double s) { return 1.0 - lsh_candidate_probability(s, b, r); }, threshold, 1.0);
            const double error = false_positive_weight * fp + false_negative_weight * fn;
            if (error < best_error) {
                best_error = error;
                best = LshParameters{b, r, fp, fn};
            }
        }
    }
    return best;
}


bool minhash_band_reports(const uint32_t *a, const uint32_t *b, int slots, int rows, int band, double threshold,
                          double *jaccard) {
    if (slots < 1 || rows < 1 || band < 0 || static_cast<long>(band + 1) * rows > slots)
        throw std::invalid_argument("the band lies outside the signature");
    auto band_equal = [&](int e) {
        return std::memcmp(a + static_cast<size_t>(e) * rows, b + static_cast<size_t>(e) * rows, sizeof(uint32_t) * rows) == 0;
    };
    if (!band_equal(band)) return false;
    for (int e = 0; e < band; ++e)
        if (band_equal(e)) return false;  // reported by an earlier band
    *jaccard = minhash_jaccard(a, b, static_cast<size_t>(slots));
    return *jaccard >= threshold;
}

uint64_t minhash_band_hash(const uint32_t *signature, int band, int rows) {
    const uint32_t *x = signature + static_cast<size_t>(band) * rows;
    uint64_t h = 0x9e3779b97f4a7c15ull * (band + 1);
    for (int k = 0; k < rows; ++k) h = mix64(h ^ x[k]);
    return h;
}

RunStatus minhash_pairs(const int64_t *ids, const uint32_t *signatures, size_t n, int slots,
                        double threshold, LshParameters p,
                        bool (*emit)(void *context, const JaccardPair *pairs, size_t n),
                        const RunControl &control, int first_band, int band_count) {
    if (slots < 1) throw std::invalid_argument("signatures need at least one slot");
    if (p.bands < 1 || p.rows < 1 || static_cast<long>(p.bands) * p.rows > slots)
        throw std::invalid_argument("bands and rows must be positive with bands * rows <= slots");
    const int end_band = band_count < 0 ? p.bands : first_band + band_count;
    if (first_band < 0 || end_band > p.bands || first_band > end_band)
        throw std::invalid_argument("band range outside the bands");
    if (n >= std::numeric_limits<uint32_t>::max())
        throw std::length_error("too many rows for one batch (at most 4294967294)");
    try {
        Poller poller(control);
        std::vector<JaccardPair> buffer;
        buffer.reserve(4096);
        auto flush = [&] {
            if (!buffer.empty() && emit && !emit(control.context, buffer.data(), buffer.size())) throw StopRun();
            buffer.clear();
        };
        const size_t width = static_cast<size_t>(slots);
        auto band_equal = [&](size_t i, size_t j, int band) {
            const uint32_t *x = signatures + i * width + static_cast<size_t>(band) * p.rows;
            const uint32_t *y = signatures + j * width + static_cast<size_t>(band) * p.rows;
            return std::memcmp(x, y, sizeof(uint32_t) * p.rows) == 0;
        };
        std::vector<std::pair<uint64_t, uint32_t>> buckets(n);
        poller.begin("bucketing MinHash bands", p.bands);
        for (int band = first_band; band < end_band; ++band) {
            poller.step(band);
            for (size_t i = 0; i < n; ++i)
                buckets[i] = {minhash_band_hash(signatures + i * width, band, p.rows), static_cast<uint32_t>(i)};
            std::sort(buckets.begin(), buckets.end());
            size_t start = 0;
            while (start < n) {
                size_t end = start + 1;
                while (end < n && buckets[end].first == buckets[start].first) ++end;
                for (size_t a = start; a + 1 < end; ++a) {
                    for (size_t b = a + 1; b < end; ++b) {
                        const size_t i = buckets[a].second, j = buckets[b].second;
                        poller.tick();
                        if (!band_equal(i, j, band)) continue;  // hash collision
                        bool earlier = false;
                        for (int e = 0; e < band && !earlier; ++e) earlier = band_equal(i, j, e);
                        if (earlier) continue;  // reported by an earlier band
                        const double jaccard = minhash_jaccard(signatures + i * width, signatures + j * width, width);
                        if (jaccard < threshold) continue;
                        int64_t x = ids[i], y = ids[j];
                        if (x > y) std::swap(x, y);
                        buffer.push_back(JaccardPair{x, y, jaccard});
                        if (buffer.size() == 4096) flush();
                    }
                }
                poller.tick(end - start);
                start = end;
            }
        }
        flush();
        return RunStatus::done;
    } catch (const StopRun &) {
        return RunStatus::stopped;
    }
}

int neighbourhood_lock_keys(uint64_t fingerprint, int radius, uint32_t nkeys, uint32_t *keys) {
    if (radius >= 64) {
        keys[0] = 0;
        return 1;
    }
    if (radius < 0) radius = 0;
    const int m = radius + 1;
    const BlockLayout layout = block_layout(m);
    int n = 0;
    for (int i = 0; i < m; ++i) {
        const uint64_t value = block_value(fingerprint, layout, i);
        const uint64_t h = mix64(value + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(i + 1) +
                                 (static_cast<uint64_t>(m) << 56));
        keys[n++] = static_cast<uint32_t>(h % nkeys);
    }
    std::sort(keys, keys + n);
    return static_cast<int>(std::unique(keys, keys + n) - keys);
}

}  // namespace simhash
