#include "sql_arguments.h"

#include <cstring>

#include "core/minhash.h"

extern "C" {
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
}

int radius_argument(FunctionCallInfo fcinfo, int arg) {
    if (PG_ARGISNULL(arg))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("radius must not be NULL")));
    const int32 radius = PG_GETARG_INT32(arg);
    if (radius < 0 || radius > 64)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("radius must be between 0 and 64, not %d", radius)));
    return radius;
}

double threshold_argument(FunctionCallInfo fcinfo, int arg) {
    if (PG_ARGISNULL(arg))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("threshold must not be NULL")));
    const double threshold = PG_GETARG_FLOAT8(arg);
    if (!(threshold > 0.0 && threshold <= 1.0))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("threshold must be greater than 0 and at most 1, not %g", threshold)));
    return threshold;
}

int32 minhash_slots_argument(int32 slots) {
    if (slots < 1 || slots > simhash::kMaxMinhashSlots)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("slots must be between 1 and %d, not %d", simhash::kMaxMinhashSlots, slots)));
    return slots;
}

Utf8Bytes utf8_bytes(const char *data, int len) {
    const int encoding = GetDatabaseEncoding();
    if (encoding == PG_UTF8 || encoding == PG_SQL_ASCII || len == 0) return {data, static_cast<size_t>(len)};
    char *converted = pg_server_to_any(data, len, PG_UTF8);
    if (converted == data) return {data, static_cast<size_t>(len)};
    return {converted, std::strlen(converted)};
}

simhash::ShingleOptions shingle_options(text *unit, int32 size) {
    simhash::ShingleOptions options;
    options.unit = simhash::parse_shingle_unit(VARDATA_ANY(unit), VARSIZE_ANY_EXHDR(unit));
    options.size = size;
    simhash::validate(options);
    return options;
}

MemoryContext aggregate_context(FunctionCallInfo fcinfo, const char *caller) {
    MemoryContext aggcontext;
    if (!AggCheckCallContext(fcinfo, &aggcontext))
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("%s called outside an aggregate", caller)));
    return aggcontext;
}

simhash::ShingleWeighting weighting_argument(FunctionCallInfo fcinfo, int arg, simhash::ShingleWeighting omitted) {
    if (PG_NARGS() <= arg) return omitted;
    text *name = PG_GETARG_TEXT_PP(arg);
    return simhash::parse_shingle_weighting(VARDATA_ANY(name), VARSIZE_ANY_EXHDR(name));
}

const uint32_t *signature_slots(ArrayType *signature, const char *argument_name, int *slots) {
    if (ARR_ELEMTYPE(signature) != INT4OID || ARR_NDIM(signature) != 1 ||
        array_contains_nulls(signature) || ARR_DIMS(signature)[0] < 1)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s is not a MinHash signature", argument_name),
                        errdetail("A signature is a one-dimensional integer[] without NULLs, as made "
                                  "by minhash().")));
    *slots = ARR_DIMS(signature)[0];
    return reinterpret_cast<const uint32_t *>(ARR_DATA_PTR(signature));
}
