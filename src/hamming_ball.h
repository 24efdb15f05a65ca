// hamming_ball: the set of 64-bit fingerprints within `radius` bits of `center`. It is the right
// operand of the index's search operator `fp <@ hamming_ball(q, k)`. The radius keeps integer
// semantics so that every rewritten `hamming(fp, q) <= k` stays exact: a negative radius is the
// empty set, a radius of 64 or more is every fingerprint.
#pragma once

#include "compat.h"

struct HammingBall {
    int64 center;
    int32 radius;
    int32 reserved;  // zero; keeps the type 16 bytes and 8-aligned
};

#define DatumGetHammingBall(d) (reinterpret_cast<HammingBall *>(DatumGetPointer(d)))
#define PG_GETARG_HAMMING_BALL(n) DatumGetHammingBall(PG_GETARG_DATUM(n))

// Strategy number of `<@` (bigint, hamming_ball) in the index operator class.
#define HAMMING_WITHIN_STRATEGY 1
#define HAMMING_DISTANCE_STRATEGY 2  // fp <~> q, ordering (ORDER BY)

Datum make_hamming_ball_datum(int64 center, int32 radius);

// Whether `type` is this extension's hamming_ball: its input function is hamming_ball_in of this
// library. Found without names, so wherever the extension's schema is and whatever it is called.
// (hamming_sql.cpp)
bool hamming_ball_type(Oid type);

// Fraction of uniformly random fingerprints within `radius` bits of a point: P(Binomial(64, 1/2)
// <= radius). The planner's selectivity for a radius query.
// With `bits` < 64: the fraction among fingerprints that vary in only that many bits (skewed
// data; see varying_bits in planner_support.cpp).
double hamming_ball_fraction(int32 radius, int bits = 64);

// The radius of a ball expression known at plan time: a constant ball, or hamming_ball(q, k) with a
// constant k whatever q is (a parameter, a subquery's value). False when it is not known; -1 for a
// NULL ball or radius, which holds nothing. (planner_support.cpp)
bool hamming_ball_plan_radius(const struct Node *ball, int32 *radius);

// k - 1 without overflow: `d < k` is `d <= hamming_radius_below_int4(k)`.
inline int32 hamming_radius_below_int4(int32 k) { return k == PG_INT32_MIN ? k : k - 1; }

// The int4 radius r for which, over distances 0..64, `d <= k` (below = false) or `d < k`
// (below = true) holds exactly when `d <= r`, for a bigint radius k: clamped to -1..64.
int32 hamming_radius_from_int8(int64 k, bool below);

// The same for a double precision radius k that is not NaN: floor(k) for `d <= k` (`<= 3.7` is
// `<= 3`), ceil(k) - 1 for `d < k` (`< 3.7` is `<= 3`, `< 3` is `<= 2`), clamped to -1..64
// (infinities included).
int32 hamming_radius_from_float8(double k, bool below);
