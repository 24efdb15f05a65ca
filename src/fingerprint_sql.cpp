// SQL wrappers for the fingerprint functions: simhash(), minhash(), their feature-array and
// tsvector forms, the simhash_agg aggregate and the MinHash signature helpers. The kernels live
// in src/core; this file only moves data between PostgreSQL values and the core.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/feature_hash.h"
#include "core/minhash.h"
#include "core/simhash.h"
#include "guard.h"

extern "C" {
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "tsearch/ts_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
}

namespace {

// Vote accumulators may live in a function frame while PostgreSQL calls that can raise errors run,
// because they own nothing that needs destruction.
static_assert(std::is_trivially_destructible<simhash::SimhashVote>::value, "");
static_assert(std::is_trivially_destructible<simhash::WeightedSimhashVote>::value, "");

// The bytes of a string in UTF-8, whatever the database encoding, so that a document gets the
// same fingerprint in every database. SQL_ASCII declares no encoding: its bytes are read as
// UTF-8 (invalid sequences act as separators).
struct Utf8Bytes {
    const char *data;
    size_t len;
};

Utf8Bytes utf8_bytes(const char *data, int len) {
    const int encoding = GetDatabaseEncoding();
    if (encoding == PG_UTF8 || encoding == PG_SQL_ASCII || len == 0)
        return {data, static_cast<size_t>(len)};
    char *converted = pg_server_to_any(data, len, PG_UTF8);
    if (converted == data) return {data, static_cast<size_t>(len)};
    return {converted, std::strlen(converted)};
}

Utf8Bytes utf8_text(text *t) { return utf8_bytes(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)); }

simhash::ShingleOptions shingle_options(text *unit, int32 size) {
    simhash::ShingleOptions options;
    options.unit = simhash::parse_shingle_unit(VARDATA_ANY(unit), VARSIZE_ANY_EXHDR(unit));
    options.size = size;
    simhash::validate(options);
    return options;
}

ArrayType *new_int4_array(int n) {
    const size_t nbytes = ARR_OVERHEAD_NONULLS(1) + sizeof(int32) * n;
    ArrayType *array = static_cast<ArrayType *>(palloc0(nbytes));
    SET_VARSIZE(array, nbytes);
    array->ndim = 1;
    array->dataoffset = 0;
    array->elemtype = INT4OID;
    ARR_DIMS(array)[0] = n;
    ARR_LBOUND(array)[0] = 1;
    return array;
}

// A MinHash signature argument: a one-dimensional int4 array without NULLs.
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

void check_same_slots(int a, int b) {
    if (a != b)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("MinHash signatures have different numbers of slots (%d and %d)", a, b),
                        errhint("Compare only signatures made by minhash() with the same slots and "
                                "seed.")));
}

int32 minhash_slots_argument(int32 slots) {
    if (slots < 1 || slots > simhash::kMaxMinhashSlots)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("slots must be between 1 and %d, not %d", simhash::kMaxMinhashSlots,
                               slots)));
    return slots;
}

// Pure C++ (no PostgreSQL calls): builds the hash family and writes the text's signature.
void text_minhash_into(Utf8Bytes doc, int slots, uint64_t seed,
                       const simhash::ShingleOptions &options, uint32_t *out) {
    simhash::MinhashFamily family(slots, seed);
    simhash::MinhashSketch sketch(family);
    simhash::for_each_shingle(doc.data, doc.len, options, [&](const char *data, size_t n) {
        sketch.add(simhash::feature_hash(data, n));
    });
    sketch.write_signature(out);
}

// Pure C++: the signature of a set of feature hashes.
void hashes_minhash_into(const uint64_t *hashes, size_t n, int slots, uint64_t seed, uint32_t *out) {
    simhash::MinhashFamily family(slots, seed);
    simhash::MinhashSketch sketch(family);
    for (size_t i = 0; i < n; ++i) sketch.add(hashes[i]);
    sketch.write_signature(out);
}

// Feature hashes of the non-NULL elements of a text[] (palloc'd; *n set to their number).
uint64_t *text_array_hashes(ArrayType *features, bool *nulls_out[], int *n_out) {
    Datum *elements;
    bool *nulls;
    int n;
    deconstruct_array(features, TEXTOID, -1, false, TYPALIGN_INT, &elements, &nulls, &n);
    uint64_t *hashes = static_cast<uint64_t *>(palloc(sizeof(uint64_t) * (n > 0 ? n : 1)));
    for (int i = 0; i < n; ++i) {
        if (nulls[i]) continue;
        Utf8Bytes b = utf8_text(DatumGetTextPP(elements[i]));
        hashes[i] = simhash::feature_hash(b.data, b.len);
    }
    *nulls_out = nulls;
    *n_out = n;
    return hashes;
}

// Feature hashes and weights (number of positions, at least 1) of a tsvector's lexemes.
uint64_t *tsvector_hashes(TSVector vector, double *weights) {
    WordEntry *entries = ARRPTR(vector);
    uint64_t *hashes = static_cast<uint64_t *>(palloc(sizeof(uint64_t) * (vector->size > 0 ? vector->size : 1)));
    for (int i = 0; i < vector->size; ++i) {
        Utf8Bytes b = utf8_bytes(STRPTR(vector) + entries[i].pos, entries[i].len);
        hashes[i] = simhash::feature_hash(b.data, b.len);
        if (weights) weights[i] = entries[i].haspos ? POSDATALEN(vector, &entries[i]) : 1;
    }
    return hashes;
}

}  // namespace

SIMHASH_FUNCTION(simhash_text) {
    text *doc = PG_GETARG_TEXT_PP(0);
    simhash::ShingleOptions options = shingle_options(PG_GETARG_TEXT_PP(1), PG_GETARG_INT32(2));
    Utf8Bytes bytes = utf8_text(doc);
    PG_RETURN_INT64(static_cast<int64>(simhash::simhash_text(bytes.data, bytes.len, options)));
}

// Pure C++: the shingles of a text, packed into caller-provided memory. With out == nullptr it
// only counts them and their bytes, so the caller can allocate exactly.
static void pack_shingles(Utf8Bytes doc, const simhash::ShingleOptions &options, size_t *count,
                   size_t *bytes, char *out, uint32_t *lengths) {
    size_t n = 0, total = 0;
    simhash::for_each_shingle(doc.data, doc.len, options, [&](const char *data, size_t len) {
        if (out) {
            std::memcpy(out + total, data, len);
            lengths[n] = static_cast<uint32_t>(len);
        }
        ++n;
        total += len;
    });
    *count = n;
    *bytes = total;
}

SIMHASH_FUNCTION(simhash_shingles) {
    text *doc = PG_GETARG_TEXT_PP(0);
    simhash::ShingleOptions options = shingle_options(PG_GETARG_TEXT_PP(1), PG_GETARG_INT32(2));
    Utf8Bytes bytes = utf8_text(doc);
    size_t count, total;
    pack_shingles(bytes, options, &count, &total, nullptr, nullptr);
    char *packed = static_cast<char *>(palloc_extended(total + 1, MCXT_ALLOC_HUGE));
    uint32_t *lengths = static_cast<uint32_t *>(palloc_extended(sizeof(uint32_t) * (count + 1), MCXT_ALLOC_HUGE));
    pack_shingles(bytes, options, &count, &total, packed, lengths);
    Datum *elements = static_cast<Datum *>(palloc_extended(sizeof(Datum) * (count + 1), MCXT_ALLOC_HUGE));
    const bool convert = GetDatabaseEncoding() != PG_UTF8 && GetDatabaseEncoding() != PG_SQL_ASCII;
    const char *p = packed;
    for (size_t i = 0; i < count; ++i) {
        const int len = static_cast<int>(lengths[i]);
        elements[i] = PointerGetDatum(convert ? cstring_to_text(pg_any_to_server(p, len, PG_UTF8))
                                              : cstring_to_text_with_len(p, len));
        p += len;
    }
    PG_RETURN_ARRAYTYPE_P(construct_array(elements, static_cast<int>(count), TEXTOID, -1, false,
                                          TYPALIGN_INT));
}

SIMHASH_FUNCTION(simhash_tsvector) {
    TSVector vector = PG_GETARG_TSVECTOR(0);
    double *weights = static_cast<double *>(palloc(sizeof(double) * (vector->size > 0 ? vector->size : 1)));
    uint64_t *hashes = tsvector_hashes(vector, weights);
    simhash::WeightedSimhashVote vote;
    for (int i = 0; i < vector->size; ++i) vote.add(hashes[i], weights[i]);
    PG_RETURN_INT64(static_cast<int64>(vote.fingerprint()));
}

SIMHASH_FUNCTION(simhash_features) {
    bool *nulls;
    int n;
    uint64_t *hashes = text_array_hashes(PG_GETARG_ARRAYTYPE_P(0), &nulls, &n);
    simhash::SimhashVote vote;
    for (int i = 0; i < n; ++i)
        if (!nulls[i]) vote.add(hashes[i]);
    PG_RETURN_INT64(static_cast<int64>(vote.fingerprint()));
}

SIMHASH_FUNCTION(simhash_weighted_features) {
    ArrayType *features = PG_GETARG_ARRAYTYPE_P(0);
    ArrayType *weight_array = PG_GETARG_ARRAYTYPE_P(1);
    bool *nulls;
    int n;
    uint64_t *hashes = text_array_hashes(features, &nulls, &n);
    Datum *weights;
    bool *weight_nulls;
    int n_weights;
    deconstruct_array(weight_array, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
                      &weights, &weight_nulls, &n_weights);
    if (n_weights != n)
        ereport(ERROR, (errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
                        errmsg("features and weights have different lengths (%d and %d)", n, n_weights),
                        errhint("Pass one weight per feature.")));
    simhash::WeightedSimhashVote vote;
    for (int i = 0; i < n; ++i) {
        if (nulls[i]) continue;
        if (weight_nulls[i])
            ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                            errmsg("weight %d is NULL", i + 1),
                            errhint("Give every non-NULL feature a weight.")));
        const double w = DatumGetFloat8(weights[i]);
        if (!std::isfinite(w))
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("weight %d is not a finite number", i + 1)));
        vote.add(hashes[i], w);
    }
    PG_RETURN_INT64(static_cast<int64>(vote.fingerprint()));
}

// simhash_agg(feature text [, weight float8]): transition state is a WeightedSimhashVote in the
// aggregate's memory context; serialized as its 64 votes for parallel aggregation.
namespace {
simhash::WeightedSimhashVote *agg_state(FunctionCallInfo fcinfo) {
    MemoryContext aggcontext;
    if (!AggCheckCallContext(fcinfo, &aggcontext))
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("simhash_agg transition function called outside an aggregate")));
    if (!PG_ARGISNULL(0)) return reinterpret_cast<simhash::WeightedSimhashVote *>(PG_GETARG_POINTER(0));
    void *memory = MemoryContextAllocZero(aggcontext, sizeof(simhash::WeightedSimhashVote));
    return new (memory) simhash::WeightedSimhashVote();
}

Datum agg_add(FunctionCallInfo fcinfo, bool weighted) {
    simhash::WeightedSimhashVote *state = agg_state(fcinfo);
    if (PG_ARGISNULL(1) || (weighted && PG_ARGISNULL(2))) PG_RETURN_POINTER(state);
    double weight = 1.0;
    if (weighted) {
        weight = PG_GETARG_FLOAT8(2);
        if (!std::isfinite(weight))
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("simhash_agg weight is not a finite number")));
    }
    Utf8Bytes b = utf8_text(PG_GETARG_TEXT_PP(1));
    state->add(simhash::feature_hash(b.data, b.len), weight);
    PG_RETURN_POINTER(state);
}
}  // namespace

SIMHASH_FUNCTION(simhash_agg_transfn) { return agg_add(fcinfo, false); }
SIMHASH_FUNCTION(simhash_agg_weighted_transfn) { return agg_add(fcinfo, true); }

SIMHASH_FUNCTION(simhash_agg_combinefn) {
    if (PG_ARGISNULL(1)) {
        if (PG_ARGISNULL(0)) PG_RETURN_NULL();
        PG_RETURN_POINTER(PG_GETARG_POINTER(0));
    }
    simhash::WeightedSimhashVote *state = agg_state(fcinfo);
    state->merge(reinterpret_cast<simhash::WeightedSimhashVote *>(PG_GETARG_POINTER(1))->votes());
    PG_RETURN_POINTER(state);
}

SIMHASH_FUNCTION(simhash_agg_serialfn) {
    auto *state = reinterpret_cast<simhash::WeightedSimhashVote *>(PG_GETARG_POINTER(0));
    bytea *out = static_cast<bytea *>(palloc(VARHDRSZ + 64 * sizeof(double)));
    SET_VARSIZE(out, VARHDRSZ + 64 * sizeof(double));
    std::memcpy(VARDATA(out), state->votes(), 64 * sizeof(double));
    PG_RETURN_BYTEA_P(out);
}

SIMHASH_FUNCTION(simhash_agg_deserialfn) {
    bytea *in = PG_GETARG_BYTEA_PP(0);
    if (VARSIZE_ANY_EXHDR(in) != 64 * sizeof(double))
        ereport(ERROR, (errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
                        errmsg("invalid simhash_agg state")));
    MemoryContext aggcontext;
    if (!AggCheckCallContext(fcinfo, &aggcontext))
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("simhash_agg deserialization called outside an aggregate")));
    void *memory = MemoryContextAllocZero(aggcontext, sizeof(simhash::WeightedSimhashVote));
    auto *state = new (memory) simhash::WeightedSimhashVote();
    std::memcpy(state->votes(), VARDATA_ANY(in), 64 * sizeof(double));
    PG_RETURN_POINTER(state);
}

SIMHASH_FUNCTION(simhash_agg_finalfn) {
    if (PG_ARGISNULL(0)) PG_RETURN_NULL();
    auto *state = reinterpret_cast<simhash::WeightedSimhashVote *>(PG_GETARG_POINTER(0));
    PG_RETURN_INT64(static_cast<int64>(state->fingerprint()));
}

SIMHASH_FUNCTION(minhash_text) {
    text *doc = PG_GETARG_TEXT_PP(0);
    const int32 slots = minhash_slots_argument(PG_GETARG_INT32(1));
    const uint64_t seed = static_cast<uint64_t>(PG_GETARG_INT64(2));
    simhash::ShingleOptions options = shingle_options(PG_GETARG_TEXT_PP(3), PG_GETARG_INT32(4));
    Utf8Bytes bytes = utf8_text(doc);
    ArrayType *result = new_int4_array(slots);
    text_minhash_into(bytes, slots, seed, options, reinterpret_cast<uint32_t *>(ARR_DATA_PTR(result)));
    PG_RETURN_ARRAYTYPE_P(result);
}

SIMHASH_FUNCTION(minhash_features) {
    bool *nulls;
    int n;
    uint64_t *hashes = text_array_hashes(PG_GETARG_ARRAYTYPE_P(0), &nulls, &n);
    const int32 slots = minhash_slots_argument(PG_GETARG_INT32(1));
    const uint64_t seed = static_cast<uint64_t>(PG_GETARG_INT64(2));
    int kept = 0;
    for (int i = 0; i < n; ++i)
        if (!nulls[i]) hashes[kept++] = hashes[i];
    ArrayType *result = new_int4_array(slots);
    hashes_minhash_into(hashes, kept, slots, seed, reinterpret_cast<uint32_t *>(ARR_DATA_PTR(result)));
    PG_RETURN_ARRAYTYPE_P(result);
}

SIMHASH_FUNCTION(minhash_tsvector) {
    TSVector vector = PG_GETARG_TSVECTOR(0);
    const int32 slots = minhash_slots_argument(PG_GETARG_INT32(1));
    const uint64_t seed = static_cast<uint64_t>(PG_GETARG_INT64(2));
    uint64_t *hashes = tsvector_hashes(vector, nullptr);
    ArrayType *result = new_int4_array(slots);
    hashes_minhash_into(hashes, vector->size, slots, seed,
                        reinterpret_cast<uint32_t *>(ARR_DATA_PTR(result)));
    PG_RETURN_ARRAYTYPE_P(result);
}

SIMHASH_FUNCTION(minhash_jaccard) {
    int slots_a, slots_b;
    const uint32_t *a = signature_slots(PG_GETARG_ARRAYTYPE_P(0), "first argument", &slots_a);
    const uint32_t *b = signature_slots(PG_GETARG_ARRAYTYPE_P(1), "second argument", &slots_b);
    check_same_slots(slots_a, slots_b);
    PG_RETURN_FLOAT8(simhash::minhash_jaccard(a, b, slots_a));
}

SIMHASH_FUNCTION(minhash_merge) {
    int slots_a, slots_b;
    const uint32_t *a = signature_slots(PG_GETARG_ARRAYTYPE_P(0), "first argument", &slots_a);
    const uint32_t *b = signature_slots(PG_GETARG_ARRAYTYPE_P(1), "second argument", &slots_b);
    check_same_slots(slots_a, slots_b);
    ArrayType *result = new_int4_array(slots_a);
    simhash::minhash_merge(a, b, slots_a, reinterpret_cast<uint32_t *>(ARR_DATA_PTR(result)));
    PG_RETURN_ARRAYTYPE_P(result);
}
