// MinHash LSH: band parameters, the banded pairs join and the per-band report of a partitioned
// join (near_pairs.h has the API).
#include "near_pairs.h"

#include "minhash.h"
#include "near_engine.h"

namespace simhash {

using namespace engine;

namespace {
// Band `band` (rows slots from band * rows) is equal in a and b, no earlier band is, and the
// fraction of equal slots, set in *jaccard, is at least threshold: the pair is this band's to report.
bool band_reports(const uint32_t *a, const uint32_t *b, size_t slots, int rows, int band, double threshold,
                  double *jaccard) {
    auto band_equal = [&](int e) {
        const size_t offset = static_cast<size_t>(e) * rows;
        return std::memcmp(a + offset, b + offset, sizeof(uint32_t) * rows) == 0;
    };
    if (!band_equal(band)) return false;  // a hash collision of the band
    for (int e = 0; e < band; ++e)
        if (band_equal(e)) return false;  // reported by an earlier band
    *jaccard = minhash_jaccard(a, b, slots);
    return *jaccard >= threshold;
}
}  // namespace

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

// A candidate (bands, rows) costs two integrals of 65 points, about 5 us: its units, so that the
// poll is asked about every 20 ms.
constexpr uint64_t kUnitsPerCandidate = 64;

LshParameters lsh_parameters(double threshold, int slots, double false_positive_weight,
                             double false_negative_weight, StopPoll *poll) {
    if (!(threshold > 0.0 && threshold <= 1.0)) throw std::invalid_argument("threshold must be in (0, 1]");
    if (slots < 1) throw std::invalid_argument("signatures need at least one slot");
    LshParameters best;
    double best_error = std::numeric_limits<double>::infinity();
    for (int b = 1; b <= slots; ++b) {
        for (int r = 1; r <= slots / b; ++r) {
            tick(poll, kUnitsPerCandidate);
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
    if (slots < 1 || rows < 1 || band < 0 || (static_cast<long>(band) + 1) * rows > slots)
        throw std::invalid_argument("the band lies outside the signature");
    return band_reports(a, b, static_cast<size_t>(slots), rows, band, threshold, jaccard);
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
                        double jaccard;
                        if (!band_reports(signatures + i * width, signatures + j * width, width, p.rows, band,
                                          threshold, &jaccard))
                            continue;
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

}  // namespace simhash
