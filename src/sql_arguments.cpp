#include "sql_arguments.h"

#include <cstring>

#include "core/minhash.h"

extern "C" {
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/memutils.h"
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

bool is_ascii(const char *data, size_t len) {
    for (size_t i = 0; i < len; ++i)
        if (IS_HIGHBIT_SET(data[i])) return false;
    return true;
}

// A character the database accepts can lack a Unicode mapping (WIN1252's 0x81, unassigned EUC
// codes): it reads as U+FFFD, as an invalid UTF-8 sequence does, instead of failing the call. The
// text is cut once into pieces that end on character boundaries; each piece is converted by the
// conversion's no-error form, which stops before such a character, and goes on after it. A stop
// short of the piece's end is always such a character (the output has room for the largest
// growth), and each character of the text is looked at a bounded number of times.
Utf8Bytes utf8_bytes(const char *data, int len) {
    const int encoding = GetDatabaseEncoding();
    if (encoding == PG_UTF8 || encoding == PG_SQL_ASCII || len == 0) return {data, static_cast<size_t>(len)};
    const Oid proc = FindDefaultConversionProc(encoding, PG_UTF8);
    if (!OidIsValid(proc)) {
        // MULE_INTERNAL: PostgreSQL converts it to a few encodings, not to UTF-8. Its ASCII is
        // ASCII; any other character would have to be guessed.
        if (is_ascii(data, static_cast<size_t>(len))) return {data, static_cast<size_t>(len)};
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("text in database encoding %s cannot be read as Unicode", pg_encoding_to_char(encoding)),
                        errdetail("PostgreSQL has no conversion from %s to UTF8; in this database only ASCII text "
                                  "can be fingerprinted or shingled.",
                                  pg_encoding_to_char(encoding)),
                        errhint("Keep the documents in a database whose encoding is UTF8.")));
    }
    constexpr int kPieceBytes = 1 << 20;
    static constexpr unsigned char kReplacement[] = {0xEF, 0xBF, 0xBD};  // U+FFFD
    Size capacity = static_cast<Size>(len) + static_cast<Size>(len) / 4 + 16;
    char *out = static_cast<char *>(MemoryContextAllocHuge(CurrentMemoryContext, capacity));
    Size used = 0;
    const char *src = data;
    int left = len;
    while (left > 0) {
        CHECK_FOR_INTERRUPTS();
        int piece = pg_mbcliplen(src, left, Min(left, kPieceBytes));
        left -= piece;
        while (piece > 0) {
            const Size room = static_cast<Size>(piece) * MAX_CONVERSION_GROWTH + 1;
            if (used + room + sizeof(kReplacement) > capacity) {
                capacity = Max(capacity + capacity / 2, used + room + sizeof(kReplacement));
                out = static_cast<char *>(repalloc_huge(out, capacity));
            }
            const int converted = pg_do_encoding_conversion_buf(
                proc, encoding, PG_UTF8, reinterpret_cast<unsigned char *>(const_cast<char *>(src)), piece,
                reinterpret_cast<unsigned char *>(out + used), static_cast<int>(room), true);
            used += std::strlen(out + used);
            src += converted;
            piece -= converted;
            if (piece > 0) {  // a character without a Unicode mapping
                std::memcpy(out + used, kReplacement, sizeof(kReplacement));
                used += sizeof(kReplacement);
                const int skip = Min(pg_encoding_mblen(encoding, src), piece);
                src += skip;
                piece -= skip;
            }
        }
    }
    return {out, used};
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

void one_dimensional(ArrayType *array, const char *function_name, const char *argument_name) {
    if (ARR_NDIM(array) > 1)
        ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
                        errmsg("%s: %s must be a one-dimensional array, not %d-dimensional", function_name,
                               argument_name, ARR_NDIM(array)),
                        errhint("Pass a one-dimensional array; ARRAY(SELECT unnest(a)) flattens one in storage "
                                "order.")));
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
