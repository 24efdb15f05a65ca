// hamming(), hamming_within(), hamming_ball and its containment operator.
#include <cerrno>
#include <cinttypes>
#include <cstdlib>
#include <cstring>

#include <cmath>

#include "core/hamming.h"
#include "guard.h"
#include "hamming_ball.h"

extern "C" {
#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/syscache.h"
}

namespace {
bool ball_contains(const HammingBall *ball, int64 fingerprint) {
    return simhash::hamming_distance(static_cast<uint64_t>(fingerprint),
                                     static_cast<uint64_t>(ball->center)) <= ball->radius;
}
}  // namespace

Datum make_hamming_ball_datum(int64 center, int32 radius) {
    HammingBall *ball = static_cast<HammingBall *>(palloc0(sizeof(HammingBall)));
    ball->center = center;
    ball->radius = radius;
    return PointerGetDatum(ball);
}

double hamming_ball_fraction(int32 radius, int bits) {
    bits = Max(1, Min(bits, 64));
    if (radius < 0) return 0.0;
    if (radius >= bits) return 1.0;
    // Rounding can carry the sum past 2^bits for radii near it; a selectivity above 1 is an error.
    return Min(simhash::hamming_ball_size(bits, radius) / ldexp(1.0, bits), 1.0);
}

SIMHASH_FUNCTION(simhash_hamming) {
    PG_RETURN_INT32(simhash::hamming_distance(static_cast<uint64_t>(PG_GETARG_INT64(0)),
                                              static_cast<uint64_t>(PG_GETARG_INT64(1))));
}

SIMHASH_FUNCTION(simhash_hamming_within) {
    const int distance = simhash::hamming_distance(static_cast<uint64_t>(PG_GETARG_INT64(0)),
                                                   static_cast<uint64_t>(PG_GETARG_INT64(1)));
    PG_RETURN_BOOL(distance <= PG_GETARG_INT32(2));
}

// hamming(a, b) < k is hamming_within(a, b, k - 1); saturates instead of overflowing.
SIMHASH_FUNCTION(simhash_hamming_radius_below) {
    PG_RETURN_INT32(hamming_radius_below_int4(PG_GETARG_INT32(0)));
}

int32 hamming_radius_from_int8(int64 k, bool below) {
    if (below) k = k == PG_INT64_MIN ? k : k - 1;
    return static_cast<int32>(Max(Min(k, static_cast<int64>(64)), static_cast<int64>(-1)));
}

int32 hamming_radius_from_float8(double k, bool below) {
    const double r = below ? std::ceil(k) - 1 : std::floor(k);
    return r < -1 ? -1 : r > 64 ? 64 : static_cast<int32>(r);
}

// hamming_radius_at_most(k) / hamming_radius_below(k) for a bigint k: what the planner support
// puts in hamming_within() when k is not a constant.
SIMHASH_FUNCTION(simhash_radius_at_most_int8) { PG_RETURN_INT32(hamming_radius_from_int8(PG_GETARG_INT64(0), false)); }
SIMHASH_FUNCTION(simhash_radius_below_int8) { PG_RETURN_INT32(hamming_radius_from_int8(PG_GETARG_INT64(0), true)); }

namespace {
// A double precision radius (a driver's float, 10.0): no number of bits is NaN, and PostgreSQL's
// own float order, where NaN is above everything, would make `hamming(a, b) <= 'NaN'` match every
// row. Refused, by the comparisons and by the radius conversions the planner puts in their place.
double float8_radius(FunctionCallInfo fcinfo, int arg) {
    const double k = PG_GETARG_FLOAT8(arg);
    if (std::isnan(k))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("a Hamming radius must be a number, not NaN"),
                        errhint("Bind the radius as an integer.")));
    return k;
}
}  // namespace

SIMHASH_FUNCTION(simhash_radius_at_most_float8) { PG_RETURN_INT32(hamming_radius_from_float8(float8_radius(fcinfo, 0), false)); }
SIMHASH_FUNCTION(simhash_radius_below_float8) { PG_RETURN_INT32(hamming_radius_from_float8(float8_radius(fcinfo, 0), true)); }

// hamming_distance compared with a double precision radius, exactly (an int4 is exact as a
// double): d < k, d <= k, d > k, d >= k, and the same with k on the left.
SIMHASH_FUNCTION(simhash_distance_lt_float8) { PG_RETURN_BOOL(PG_GETARG_INT32(0) < float8_radius(fcinfo, 1)); }
SIMHASH_FUNCTION(simhash_distance_le_float8) { PG_RETURN_BOOL(PG_GETARG_INT32(0) <= float8_radius(fcinfo, 1)); }
SIMHASH_FUNCTION(simhash_distance_gt_float8) { PG_RETURN_BOOL(PG_GETARG_INT32(0) > float8_radius(fcinfo, 1)); }
SIMHASH_FUNCTION(simhash_distance_ge_float8) { PG_RETURN_BOOL(PG_GETARG_INT32(0) >= float8_radius(fcinfo, 1)); }
SIMHASH_FUNCTION(simhash_float8_lt_distance) { PG_RETURN_BOOL(float8_radius(fcinfo, 0) < PG_GETARG_INT32(1)); }
SIMHASH_FUNCTION(simhash_float8_le_distance) { PG_RETURN_BOOL(float8_radius(fcinfo, 0) <= PG_GETARG_INT32(1)); }
SIMHASH_FUNCTION(simhash_float8_gt_distance) { PG_RETURN_BOOL(float8_radius(fcinfo, 0) > PG_GETARG_INT32(1)); }
SIMHASH_FUNCTION(simhash_float8_ge_distance) { PG_RETURN_BOOL(float8_radius(fcinfo, 0) >= PG_GETARG_INT32(1)); }
SIMHASH_FUNCTION(hamming_ball_make) {
    PG_RETURN_DATUM(make_hamming_ball_datum(PG_GETARG_INT64(0), PG_GETARG_INT32(1)));
}

namespace {

// The whitespace PostgreSQL's own composite and range input skips around fields.
const char *skip_space(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v') ++p;
    return p;
}

}  // namespace

SIMHASH_FUNCTION(hamming_ball_in) {
    const char *input = PG_GETARG_CSTRING(0);
    const char *p = skip_space(input);
    bool ok = *p++ == '(';
    char *end = nullptr;
    errno = 0;
    long long center = ok ? std::strtoll(p, &end, 10) : 0;
    ok = ok && end != p;
    bool out_of_range = ok && errno == ERANGE;  // as int8in and int4in report it: 22003
    if (ok) p = skip_space(end);
    ok = ok && *p++ == ',';
    long radius = 0;
    if (ok) {
        errno = 0;
        radius = std::strtol(p, &end, 10);
        ok = end != p;
        out_of_range = out_of_range || (ok && (errno == ERANGE || radius < PG_INT32_MIN || radius > PG_INT32_MAX));
        p = skip_space(end);
    }
    ok = ok && *p++ == ')';
    if (ok) p = skip_space(p);
    if (ok && *p == '\0' && out_of_range)
        ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                        errmsg("value out of range for type hamming_ball: \"%s\"", input),
                        errdetail("The center must be a bigint and the radius an integer.")));
    if (!ok || *p != '\0')
        ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                        errmsg("invalid input syntax for type hamming_ball: \"%s\"", input),
                        errhint("Write a ball as '(center,radius)', for example '(-42,3)'.")));
    PG_RETURN_DATUM(make_hamming_ball_datum(center, static_cast<int32>(radius)));
}

// Two balls are equal when written the same: same center and radius.
SIMHASH_FUNCTION(hamming_ball_eq) {
    const HammingBall *a = PG_GETARG_HAMMING_BALL(0);
    const HammingBall *b = PG_GETARG_HAMMING_BALL(1);
    PG_RETURN_BOOL(a->center == b->center && a->radius == b->radius);
}

SIMHASH_FUNCTION(hamming_ball_ne) {
    const HammingBall *a = PG_GETARG_HAMMING_BALL(0);
    const HammingBall *b = PG_GETARG_HAMMING_BALL(1);
    PG_RETURN_BOOL(a->center != b->center || a->radius != b->radius);
}

SIMHASH_FUNCTION(hamming_ball_out) {
    const HammingBall *ball = PG_GETARG_HAMMING_BALL(0);
    PG_RETURN_CSTRING(psprintf("(" INT64_FORMAT ",%d)", ball->center, ball->radius));
}

SIMHASH_FUNCTION(hamming_ball_recv) {
    StringInfo buffer = reinterpret_cast<StringInfo>(PG_GETARG_POINTER(0));
    const int64 center = pq_getmsgint64(buffer);
    const int32 radius = static_cast<int32>(pq_getmsgint(buffer, 4));
    PG_RETURN_DATUM(make_hamming_ball_datum(center, radius));
}

SIMHASH_FUNCTION(hamming_ball_send) {
    const HammingBall *ball = PG_GETARG_HAMMING_BALL(0);
    StringInfoData buffer;
    pq_begintypsend(&buffer);
    pq_sendint64(&buffer, ball->center);
    pq_sendint32(&buffer, ball->radius);
    PG_RETURN_BYTEA_P(pq_endtypsend(&buffer));
}

SIMHASH_FUNCTION(hamming_ball_center) { PG_RETURN_INT64(PG_GETARG_HAMMING_BALL(0)->center); }
SIMHASH_FUNCTION(hamming_ball_radius) { PG_RETURN_INT32(PG_GETARG_HAMMING_BALL(0)->radius); }

SIMHASH_FUNCTION(hamming_ball_contains) {
    PG_RETURN_BOOL(ball_contains(PG_GETARG_HAMMING_BALL(1), PG_GETARG_INT64(0)));
}

SIMHASH_FUNCTION(hamming_ball_contains_commuted) {
    PG_RETURN_BOOL(ball_contains(PG_GETARG_HAMMING_BALL(0), PG_GETARG_INT64(1)));
}

bool hamming_ball_type(Oid type) {
    if (!OidIsValid(type)) return false;
    HeapTuple tuple = SearchSysCache1(TYPEOID, ObjectIdGetDatum(type));
    if (!HeapTupleIsValid(tuple)) return false;
    const Oid input = reinterpret_cast<Form_pg_type>(GETSTRUCT(tuple))->typinput;
    ReleaseSysCache(tuple);
    FmgrInfo info;
    fmgr_info(input, &info);
    return info.fn_addr == hamming_ball_in;
}
