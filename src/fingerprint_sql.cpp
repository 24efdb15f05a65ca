// SQL wrappers for the fingerprint functions: simhash(), minhash(), their feature-array and
// tsvector forms, the simhash_agg aggregate and the MinHash signature helpers. The kernels live
// in src/core; this file only moves data between PostgreSQL values and the core.
//
// Cancelling: work on one document can take seconds (a 1 GB text, 8192 MinHash slots), so the
// core gets interrupt_poll() and stops within milliseconds of a cancel or statement timeout (the
// guard then raises it). Loops of this file that read PostgreSQL values own no C++ objects and
// call CHECK_FOR_INTERRUPTS() themselves.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/feature_hash.h"
#include "core/minhash.h"
#include "core/shingle_counts.h"
#include "core/simhash.h"
#include "sql_arguments.h"

extern "C" {
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
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
static_assert(std::is_trivially_destructible<simhash::StopPoll>::value, "");

// Elements of an array argument read between two CHECK_FOR_INTERRUPTS().
constexpr int kElementsBetweenInterruptChecks = 4096;

// A one-dimensional array of n elements without NULLs, with room for data_bytes of element data,
// which the caller must write in full: it is not zeroed, so that the pages of a large array are
// first touched while the (interruptible) caller fills them, not in one long memset.
ArrayType *new_array(Oid element_type, int n, size_t data_bytes) {
    const size_t nbytes = ARR_OVERHEAD_NONULLS(1) + data_bytes;
    ArrayType *array = static_cast<ArrayType *>(palloc(nbytes));
    std::memset(array, 0, ARR_OVERHEAD_NONULLS(1));
    SET_VARSIZE(array, nbytes);
    array->ndim = 1;
    array->dataoffset = 0;
    array->elemtype = element_type;
    ARR_DIMS(array)[0] = n;
    ARR_LBOUND(array)[0] = 1;
    return array;
}

// Zeroed: a signature is at most 32 KB.
ArrayType *new_int4_array(int n) {
    ArrayType *array = new_array(INT4OID, n, sizeof(int32) * n);
    std::memset(ARR_DATA_PTR(array), 0, sizeof(int32) * n);
    return array;
}

void check_same_slots(int a, int b) {
    if (a != b)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("MinHash signatures have different numbers of slots (%d and %d)", a, b),
                        errhint("Compare only signatures made by minhash() with the same slots and "
                                "seed.")));
}

// Pure C++ (no PostgreSQL calls): builds the hash family and writes the text's signature.
// Throws simhash::Stopped when the poll asks to stop.
void text_minhash_into(Utf8Bytes doc, int slots, uint64_t seed,
                       const simhash::ShingleOptions &options, simhash::StopPoll *poll, uint32_t *out) {
    simhash::MinhashFamily family(slots, seed);
    simhash::MinhashSketch sketch(family);
    sketch.add_text(doc.data, doc.len, options, poll);
    sketch.write_signature(out);
}

// Pure C++: the signature of a set of feature hashes. Throws simhash::Stopped when the poll asks
// to stop.
void hashes_minhash_into(const uint64_t *hashes, size_t n, int slots, uint64_t seed,
                         simhash::StopPoll *poll, uint32_t *out) {
    simhash::MinhashFamily family(slots, seed);
    simhash::MinhashSketch sketch(family);
    sketch.add_all(hashes, n, poll);
    sketch.write_signature(out);
}

// Feature hashes of the elements of a one-dimensional text[] (palloc'd; *n set to their number;
// those of NULL elements, which *nulls_out marks, are not set).
uint64_t *text_array_hashes(ArrayType *features, const char *function_name, bool *nulls_out[], int *n_out) {
    Datum *elements;
    bool *nulls;
    int n;
    one_dimensional(features, function_name, "features");
    deconstruct_array(features, TEXTOID, -1, false, TYPALIGN_INT, &elements, &nulls, &n);
    uint64_t *hashes = static_cast<uint64_t *>(palloc(sizeof(uint64_t) * (n > 0 ? n : 1)));
    for (int i = 0; i < n; ++i) {
        if (i % kElementsBetweenInterruptChecks == 0) CHECK_FOR_INTERRUPTS();
        if (nulls[i]) continue;
        Utf8Bytes b = utf8_text(DatumGetTextPP(elements[i]));
        hashes[i] = simhash::feature_hash(b.data, b.len);
    }
    *nulls_out = nulls;
    *n_out = n;
    return hashes;
}

// Feature hashes of the non-NULL elements of a text[], in order (palloc'd; *n set to their number):
// the set MinHash hashes.
uint64_t *non_null_feature_hashes(ArrayType *features, const char *function_name, int *n_out) {
    bool *nulls;
    int n;
    uint64_t *hashes = text_array_hashes(features, function_name, &nulls, &n);
    int kept = 0;
    for (int i = 0; i < n; ++i)
        if (!nulls[i]) hashes[kept++] = hashes[i];
    *n_out = kept;
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

// simhash(doc, unit, size) of extension version 0.2.0 and older: every occurrence votes. Kept
// under its symbol so that a database whose extension has not been updated yet keeps computing
// the fingerprints it stored.
SIMHASH_FUNCTION(simhash_text) {
    text *doc = PG_GETARG_TEXT_PP(0);
    simhash::ShingleOptions options = shingle_options(PG_GETARG_TEXT_PP(1), PG_GETARG_INT32(2));
    Utf8Bytes bytes = utf8_text(doc);
    simhash::StopPoll poll = simhash_pg::interrupt_poll();
    PG_RETURN_INT64(static_cast<int64>(simhash::simhash_text(bytes.data, bytes.len, options, &poll)));
}

// simhash(doc, unit, size [, weighting]): the weighting argument, or 'set' when it is omitted.
SIMHASH_FUNCTION(simhash_text_weighted) {
    text *doc = PG_GETARG_TEXT_PP(0);
    simhash::ShingleOptions options = shingle_options(PG_GETARG_TEXT_PP(1), PG_GETARG_INT32(2));
    const simhash::ShingleWeighting weighting = weighting_argument(fcinfo, 3, simhash::ShingleWeighting::kSet);
    Utf8Bytes bytes = utf8_text(doc);
    simhash::StopPoll poll = simhash_pg::interrupt_poll();
    const uint64_t fp = with_shingle_limit(
        "Fingerprint documents this large with 'count' votes, which stream (simhash(doc, 'word', 2, 'count') for "
        "the default shingles), or split them.",
        [&] { return simhash::simhash_text(bytes.data, bytes.len, options, weighting, &poll); });
    PG_RETURN_INT64(static_cast<int64>(fp));
}

namespace {

// Pure C++: how the distinct shingles of two documents overlap.
simhash::SetOverlap shingle_overlap(Utf8Bytes a, Utf8Bytes b, const simhash::ShingleOptions &options,
                                    simhash::StopPoll *poll) {
    constexpr const char *kHint =
        "Compare documents this large by their minhash() signatures (minhash_jaccard), or compare parts of them.";
    return with_shingle_limit(kHint, [&] {
        const std::vector<uint64_t> set_a = simhash::distinct_shingles(a.data, a.len, options, poll).sorted_hashes();
        const std::vector<uint64_t> set_b = simhash::distinct_shingles(b.data, b.len, options, poll).sorted_hashes();
        return simhash::set_overlap(set_a, set_b);
    });
}

simhash::SetOverlap shingle_overlap_arguments(FunctionCallInfo fcinfo) {
    simhash::ShingleOptions options = shingle_options(PG_GETARG_TEXT_PP(2), PG_GETARG_INT32(3));
    Utf8Bytes a = utf8_text(PG_GETARG_TEXT_PP(0));
    Utf8Bytes b = utf8_text(PG_GETARG_TEXT_PP(1));
    simhash::StopPoll poll = simhash_pg::interrupt_poll();
    return shingle_overlap(a, b, options, &poll);
}

}  // namespace

SIMHASH_FUNCTION(shingle_jaccard) { PG_RETURN_FLOAT8(shingle_overlap_arguments(fcinfo).jaccard()); }

SIMHASH_FUNCTION(shingle_containment) { PG_RETURN_FLOAT8(shingle_overlap_arguments(fcinfo).containment()); }

// simhash_shingles() builds its text[] in place: a measuring pass adds up the bytes of the
// array's elements, the array is allocated once, and a second pass writes the elements into it,
// so memory peaks at the size of the result (twice that in a database whose encoding is not
// UTF-8, which also holds the UTF-8 array), not at several copies of it as collecting the
// shingles and then calling construct_array did. A result larger than MaxAllocSize (1 GB) could
// not be returned at all; the measuring pass refuses it as soon as it gets there.
namespace {

const size_t kMaxArrayDataBytes = MaxAllocSize - ARR_OVERHEAD_NONULLS(1);

// Bytes of a text element of len bytes in an array, laid out as construct_array does: a 4-byte
// varlena header, the bytes, zero padding to int alignment.
size_t text_element_bytes(size_t len) { return INTALIGN(VARHDRSZ + len); }

// Writes a text element at out, padding included; returns the position of the next one.
char *write_text_element(char *out, const char *data, size_t len) {
    const size_t element_bytes = text_element_bytes(len);
    SET_VARSIZE(out, VARHDRSZ + len);
    std::memcpy(VARDATA(out), data, len);
    std::memset(VARDATA(out) + len, 0, element_bytes - VARHDRSZ - len);
    return out + element_bytes;
}

const char *const kShinglesTooLargeHint =
    "Use a smaller size, or split the document; simhash() and minhash() stream the shingles and "
    "have no such limit.";

[[noreturn]] void throw_shingles_too_large(size_t count, size_t bytes) {
    char message[256];
    snprintf(message, sizeof(message),
             "simhash_shingles result exceeds the maximum array size (1 GB): the first %zu shingles "
             "already take %zu bytes",
             count, bytes);
    throw simhash_pg::SqlError(ERRCODE_PROGRAM_LIMIT_EXCEEDED, message, kShinglesTooLargeHint);
}

struct ShingleArraySize {
    size_t count;
    size_t data_bytes;  // of the array's elements
};

// Pure C++: the number of shingles and the bytes of their array elements (UTF-8). Throws
// SqlError (program_limit_exceeded) once the array would exceed MaxAllocSize, and
// simhash::Stopped when the poll asks to stop.
ShingleArraySize measure_shingle_array(Utf8Bytes doc, const simhash::ShingleOptions &options,
                                       simhash::StopPoll *poll) {
    ShingleArraySize size = {0, 0};
    simhash::for_each_shingle(
        doc.data, doc.len, options,
        [&](const char *, size_t len) {
            ++size.count;
            size.data_bytes += text_element_bytes(len);
            if (size.data_bytes > kMaxArrayDataBytes) throw_shingles_too_large(size.count, size.data_bytes);
        },
        poll);
    return size;
}

// Pure C++: writes the shingles (UTF-8) as the elements of an array whose element data, of
// data_bytes measured by measure_shingle_array, starts at out. Writing costs per output byte
// (up to 64 times the input with long shingles, and the first touch of fresh memory), so the
// poll is ticked with every shingle's bytes as well.
void write_shingle_array(Utf8Bytes doc, const simhash::ShingleOptions &options, char *out,
                         size_t data_bytes, simhash::StopPoll *poll) {
    const char *const end = out + data_bytes;
    simhash::for_each_shingle(
        doc.data, doc.len, options,
        [&](const char *data, size_t len) {
            if (text_element_bytes(len) > static_cast<size_t>(end - out))
                throw std::logic_error("the shingles changed between the measuring and the writing pass");
            out = write_text_element(out, data, len);
            simhash::tick(poll, len);
        },
        poll);
}

// Case folding can make characters the database encoding cannot hold (in LATIN1, MICRO SIGN
// folds to GREEK SMALL LETTER MU): the conversion error says so, and why.
void shingle_conversion_context(void *) {
    errcontext("simhash_shingles returns the case-folded shingles that simhash() hashes, and case folding "
               "made characters that database encoding %s cannot hold; only a UTF8 database can list them "
               "(simhash() of the text is not affected)",
               GetDatabaseEncodingName());
}

// One sweep over a text[] of `count` UTF-8 shingles, converted to the database encoding: returns
// the bytes of the converted elements and, when out is not null, writes them there. Converting
// twice (measure, then write) keeps only the UTF-8 array and the result in memory.
size_t convert_shingle_array(ArrayType *utf8, int count, char *out) {
    const char *element = ARR_DATA_PTR(utf8);
    size_t data_bytes = 0;
    ErrorContextCallback context;
    context.callback = shingle_conversion_context;
    context.arg = nullptr;
    for (int i = 0; i < count; ++i) {
        if (i % kElementsBetweenInterruptChecks == 0) CHECK_FOR_INTERRUPTS();
        const size_t len = VARSIZE(element) - VARHDRSZ;
        const char *converted = VARDATA(element);
        if (!is_ascii(VARDATA(element), len)) {
            context.previous = error_context_stack;
            error_context_stack = &context;
            converted = pg_any_to_server(VARDATA(element), static_cast<int>(len), PG_UTF8);
            error_context_stack = context.previous;
        }
        const size_t converted_len = converted == VARDATA(element) ? len : std::strlen(converted);
        data_bytes += text_element_bytes(converted_len);
        if (data_bytes > kMaxArrayDataBytes)
            ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                            errmsg("simhash_shingles result exceeds the maximum array size (1 GB) in "
                                   "the database encoding"),
                            errhint("%s", kShinglesTooLargeHint)));
        if (out) out = write_text_element(out, converted, converted_len);
        if (converted != VARDATA(element)) pfree(const_cast<char *>(converted));
        element += text_element_bytes(len);
    }
    return data_bytes;
}

}  // namespace

SIMHASH_FUNCTION(simhash_shingles) {
    text *doc = PG_GETARG_TEXT_PP(0);
    simhash::ShingleOptions options = shingle_options(PG_GETARG_TEXT_PP(1), PG_GETARG_INT32(2));
    Utf8Bytes bytes = utf8_text(doc);
    simhash::StopPoll poll = simhash_pg::interrupt_poll();
    const ShingleArraySize size = measure_shingle_array(bytes, options, &poll);
    if (size.count == 0) PG_RETURN_ARRAYTYPE_P(construct_empty_array(TEXTOID));
    // The count fits an int: every element takes at least 8 of the array's at most 1 GB.
    const int count = static_cast<int>(size.count);
    ArrayType *utf8 = new_array(TEXTOID, count, size.data_bytes);
    write_shingle_array(bytes, options, ARR_DATA_PTR(utf8), size.data_bytes, &poll);
    if (GetDatabaseEncoding() == PG_UTF8 || GetDatabaseEncoding() == PG_SQL_ASCII)
        PG_RETURN_ARRAYTYPE_P(utf8);
    ArrayType *result = new_array(TEXTOID, count, convert_shingle_array(utf8, count, nullptr));
    convert_shingle_array(utf8, count, ARR_DATA_PTR(result));
    pfree(utf8);
    PG_RETURN_ARRAYTYPE_P(result);
}

namespace {
// Finite weights can still add up to more than double precision holds (two weights of 1e308 on
// one feature): the vote becomes an infinity or NaN and the fingerprint silently wrong.
void check_votes_finite(const simhash::WeightedSimhashVote &vote, const char *function_name) {
    if (!vote.finite())
        ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                        errmsg("%s: the sum of the weights overflows double precision", function_name),
                        errhint("Scale the weights down, e.g. divide them all by the largest one.")));
}
}  // namespace

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
    uint64_t *hashes = text_array_hashes(PG_GETARG_ARRAYTYPE_P(0), "simhash", &nulls, &n);
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
    uint64_t *hashes = text_array_hashes(features, "simhash", &nulls, &n);
    one_dimensional(weight_array, "simhash", "weights");
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
    check_votes_finite(vote, "simhash");
    PG_RETURN_INT64(static_cast<int64>(vote.fingerprint()));
}

// simhash_agg(feature text [, weight float8]): transition state is a WeightedSimhashVote in the
// aggregate's memory context; serialized as its 64 votes and summed |weights| for parallel
// aggregation. The state is
// created by the first feature that counts: until then it stays NULL (also through the combine,
// serial and deserial functions, which are strict or pass NULL on), so a group without one gives
// NULL, as aggregates over no input do.
namespace {
simhash::WeightedSimhashVote *agg_state(FunctionCallInfo fcinfo) {
    MemoryContext aggcontext = aggregate_context(fcinfo, "simhash_agg transition function");
    if (!PG_ARGISNULL(0)) return reinterpret_cast<simhash::WeightedSimhashVote *>(PG_GETARG_POINTER(0));
    void *memory = MemoryContextAllocZero(aggcontext, sizeof(simhash::WeightedSimhashVote));
    return new (memory) simhash::WeightedSimhashVote();
}

Datum agg_add(FunctionCallInfo fcinfo, bool weighted) {
    if (PG_ARGISNULL(1) || (weighted && PG_ARGISNULL(2))) {
        if (PG_ARGISNULL(0)) PG_RETURN_NULL();
        PG_RETURN_POINTER(PG_GETARG_POINTER(0));
    }
    simhash::WeightedSimhashVote *state = agg_state(fcinfo);
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
    state->merge(*reinterpret_cast<simhash::WeightedSimhashVote *>(PG_GETARG_POINTER(1)));
    PG_RETURN_POINTER(state);
}

SIMHASH_FUNCTION(simhash_agg_serialfn) {
    auto *state = reinterpret_cast<simhash::WeightedSimhashVote *>(PG_GETARG_POINTER(0));
    constexpr size_t kBytes = simhash::WeightedSimhashVote::kStateDoubles * sizeof(double);
    bytea *out = static_cast<bytea *>(palloc(VARHDRSZ + kBytes));
    SET_VARSIZE(out, VARHDRSZ + kBytes);
    double saved[simhash::WeightedSimhashVote::kStateDoubles];
    state->save(saved);
    std::memcpy(VARDATA(out), saved, kBytes);
    PG_RETURN_BYTEA_P(out);
}

SIMHASH_FUNCTION(simhash_agg_deserialfn) {
    bytea *in = PG_GETARG_BYTEA_PP(0);
    double saved[simhash::WeightedSimhashVote::kStateDoubles];
    if (VARSIZE_ANY_EXHDR(in) != sizeof(saved))
        ereport(ERROR, (errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
                        errmsg("invalid simhash_agg state")));
    MemoryContext aggcontext = aggregate_context(fcinfo, "simhash_agg deserialization");
    void *memory = MemoryContextAllocZero(aggcontext, sizeof(simhash::WeightedSimhashVote));
    auto *state = new (memory) simhash::WeightedSimhashVote();
    std::memcpy(saved, VARDATA_ANY(in), sizeof(saved));
    state->load(saved);
    PG_RETURN_POINTER(state);
}

SIMHASH_FUNCTION(simhash_agg_finalfn) {
    if (PG_ARGISNULL(0)) PG_RETURN_NULL();
    auto *state = reinterpret_cast<simhash::WeightedSimhashVote *>(PG_GETARG_POINTER(0));
    // Checked once, at the end: a vote that overflowed (in a transition or in the combine function
    // of a parallel plan) stays non-finite.
    check_votes_finite(*state, "simhash_agg");
    PG_RETURN_INT64(static_cast<int64>(state->fingerprint()));
}

SIMHASH_FUNCTION(minhash_text) {
    text *doc = PG_GETARG_TEXT_PP(0);
    const int32 slots = minhash_slots_argument(PG_GETARG_INT32(1));
    const uint64_t seed = static_cast<uint64_t>(PG_GETARG_INT64(2));
    simhash::ShingleOptions options = shingle_options(PG_GETARG_TEXT_PP(3), PG_GETARG_INT32(4));
    Utf8Bytes bytes = utf8_text(doc);
    ArrayType *result = new_int4_array(slots);
    simhash::StopPoll poll = simhash_pg::interrupt_poll();
    text_minhash_into(bytes, slots, seed, options, &poll, reinterpret_cast<uint32_t *>(ARR_DATA_PTR(result)));
    PG_RETURN_ARRAYTYPE_P(result);
}

SIMHASH_FUNCTION(minhash_features) {
    int kept;
    uint64_t *hashes = non_null_feature_hashes(PG_GETARG_ARRAYTYPE_P(0), "minhash", &kept);
    const int32 slots = minhash_slots_argument(PG_GETARG_INT32(1));
    const uint64_t seed = static_cast<uint64_t>(PG_GETARG_INT64(2));
    ArrayType *result = new_int4_array(slots);
    simhash::StopPoll poll = simhash_pg::interrupt_poll();
    hashes_minhash_into(hashes, kept, slots, seed, &poll, reinterpret_cast<uint32_t *>(ARR_DATA_PTR(result)));
    PG_RETURN_ARRAYTYPE_P(result);
}

SIMHASH_FUNCTION(minhash_tsvector) {
    TSVector vector = PG_GETARG_TSVECTOR(0);
    const int32 slots = minhash_slots_argument(PG_GETARG_INT32(1));
    const uint64_t seed = static_cast<uint64_t>(PG_GETARG_INT64(2));
    uint64_t *hashes = tsvector_hashes(vector, nullptr);
    ArrayType *result = new_int4_array(slots);
    simhash::StopPoll poll = simhash_pg::interrupt_poll();
    hashes_minhash_into(hashes, vector->size, slots, seed, &poll,
                        reinterpret_cast<uint32_t *>(ARR_DATA_PTR(result)));
    PG_RETURN_ARRAYTYPE_P(result);
}

// minhash64(doc, unit, size): one bit of each of 64 MinHash slots, a fingerprint for hamming().
SIMHASH_FUNCTION(minhash64_text) {
    text *doc = PG_GETARG_TEXT_PP(0);
    simhash::ShingleOptions options = shingle_options(PG_GETARG_TEXT_PP(1), PG_GETARG_INT32(2));
    Utf8Bytes bytes = utf8_text(doc);
    simhash::StopPoll poll = simhash_pg::interrupt_poll();
    PG_RETURN_INT64(static_cast<int64>(simhash::minhash64_text(bytes.data, bytes.len, options, &poll)));
}

SIMHASH_FUNCTION(minhash64_features) {
    int kept;
    uint64_t *hashes = non_null_feature_hashes(PG_GETARG_ARRAYTYPE_P(0), "minhash64", &kept);
    simhash::StopPoll poll = simhash_pg::interrupt_poll();
    PG_RETURN_INT64(static_cast<int64>(simhash::minhash64_hashes(hashes, kept, &poll)));
}

SIMHASH_FUNCTION(minhash64_tsvector) {
    TSVector vector = PG_GETARG_TSVECTOR(0);
    uint64_t *hashes = tsvector_hashes(vector, nullptr);
    simhash::StopPoll poll = simhash_pg::interrupt_poll();
    PG_RETURN_INT64(static_cast<int64>(simhash::minhash64_hashes(hashes, vector->size, &poll)));
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
