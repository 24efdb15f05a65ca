// SQL wrappers for IDF weights learned from a table: the shingle_idf type (a compact dictionary of
// document frequencies, core/idf.h), the simhash_idf aggregate that builds it, simhash(doc, idf)
// that fingerprints with it, and two inspection functions. The kernels live in src/core.
//
// The aggregate's state is a core DocumentFrequencies owned through a plain pointer: a reset
// callback on the aggregate's memory context deletes it, so an error or a cancel frees it with the
// context, and no C++ object is alive in a frame while PostgreSQL code runs.
#include <cstring>
#include <type_traits>

#include "core/idf.h"
#include "sql_arguments.h"  // includes guard.h

extern "C" {
#include "access/detoast.h"
#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
}

static_assert(std::is_trivially_destructible<simhash::IdfDictionary>::value,
              "an IdfDictionary may be alive while PostgreSQL raises");

namespace {

// Shingles counted in a single document are left out of the dictionary: their weight, ln(N / 1),
// is the one a shingle the dictionary does not hold gets anyway.
constexpr uint32 kDictionaryMinDf = 2;

// The unit and size of simhash_idf(doc) without options: single words (and single CJK
// characters) gave the best IDF-weighted fingerprints on the quality evaluation.
simhash::ShingleOptions default_idf_options() {
    simhash::ShingleOptions options;
    options.unit = simhash::ShingleUnit::kWord;
    options.size = 1;
    return options;
}

struct IdfState {
    MemoryContextCallback callback;
    simhash::DocumentFrequencies *frequencies;
};

void free_idf_state(void *arg) {
    IdfState *state = static_cast<IdfState *>(arg);
    delete state->frequencies;
    state->frequencies = nullptr;
}

// A new state in the aggregate's context, owning the counter make() allocates with new. If make()
// throws, the state is left behind in the context owning nothing.
template <typename Make>
IdfState *new_state(MemoryContext aggcontext, Make &&make) {
    IdfState *state = static_cast<IdfState *>(MemoryContextAllocZero(aggcontext, sizeof(IdfState)));
    state->frequencies = make();
    state->callback.func = free_idf_state;
    state->callback.arg = state;
    MemoryContextRegisterResetCallback(aggcontext, &state->callback);
    return state;
}

// The dictionary of `frequencies` with shingles of at least min_df documents, as a varlena.
bytea *dictionary_value(const simhash::DocumentFrequencies &frequencies, uint32 min_df) {
    const size_t size = frequencies.dictionary_size(min_df);
    if (size > MaxAllocSize - VARHDRSZ)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("the IDF dictionary would take %zu bytes, more than a value can hold", size)));
    bytea *out = static_cast<bytea *>(palloc(VARHDRSZ + size));
    SET_VARSIZE(out, VARHDRSZ + size);
    frequencies.write_dictionary(min_df, reinterpret_cast<unsigned char *>(VARDATA(out)));
    return out;
}

// A dictionary from outside (the bytea that text or binary input made of it), checked in full: a
// malformed one is refused with `sqlstate` before it can be stored.
Datum checked_dictionary(Datum bytes, int sqlstate) {
    const bytea *value = DatumGetByteaPP(bytes);
    try {
        simhash::IdfDictionary(reinterpret_cast<const unsigned char *>(VARDATA_ANY(value)), VARSIZE_ANY_EXHDR(value),
                               true);
    } catch (const simhash::InvalidArgument &e) {
        throw simhash_pg::SqlError(sqlstate, e.what(), "Build dictionaries with the simhash_idf() aggregate.");
    }
    return PointerGetDatum(value);
}

// A dictionary argument, detoasted. A dictionary stored in a table reaches every row of a query
// as the same TOAST pointer: it is fetched once per query and kept in fn_extra, keyed by the
// pointer's (toast relation, value) pair, which names one immutable value.
struct DictionaryCache {
    Oid toastrelid;
    Oid valueid;
    struct varlena *value;
};

const struct varlena *dictionary_argument(FunctionCallInfo fcinfo, int arg) {
    struct varlena *raw = reinterpret_cast<struct varlena *>(PG_GETARG_POINTER(arg));
    if (!VARATT_IS_EXTERNAL_ONDISK(raw)) return PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(arg));
    struct varatt_external pointer;
    VARATT_EXTERNAL_GET_POINTER(pointer, raw);
    FmgrInfo *flinfo = fcinfo->flinfo;
    DictionaryCache *cache = static_cast<DictionaryCache *>(flinfo->fn_extra);
    if (cache != nullptr && cache->value != nullptr && cache->toastrelid == pointer.va_toastrelid &&
        cache->valueid == pointer.va_valueid)
        return cache->value;
    if (cache == nullptr) {
        cache = static_cast<DictionaryCache *>(MemoryContextAllocZero(flinfo->fn_mcxt, sizeof(DictionaryCache)));
        flinfo->fn_extra = cache;
    }
    if (cache->value != nullptr) {
        pfree(cache->value);
        cache->value = nullptr;
    }
    MemoryContext old = MemoryContextSwitchTo(flinfo->fn_mcxt);
    struct varlena *value = detoast_attr(raw);
    MemoryContextSwitchTo(old);
    cache->toastrelid = pointer.va_toastrelid;
    cache->valueid = pointer.va_valueid;
    cache->value = value;
    return value;
}

const unsigned char *dictionary_bytes(const struct varlena *value) {
    return reinterpret_cast<const unsigned char *>(VARDATA_ANY(value));
}

}  // namespace

SIMHASH_FUNCTION(shingle_idf_in) {
    return checked_dictionary(DirectFunctionCall1(byteain, PG_GETARG_DATUM(0)), ERRCODE_INVALID_TEXT_REPRESENTATION);
}

SIMHASH_FUNCTION(shingle_idf_out) { return DirectFunctionCall1(byteaout, PG_GETARG_DATUM(0)); }

SIMHASH_FUNCTION(shingle_idf_recv) {
    return checked_dictionary(DirectFunctionCall1(bytearecv, PG_GETARG_DATUM(0)), ERRCODE_INVALID_BINARY_REPRESENTATION);
}

SIMHASH_FUNCTION(shingle_idf_send) { return DirectFunctionCall1(byteasend, PG_GETARG_DATUM(0)); }

// simhash_idf(doc [, unit, size]) transition: counts the document's distinct shingles. NULL
// documents are not counted (N counts documents, as count(doc) would).
SIMHASH_FUNCTION(simhash_idf_transfn) {
    MemoryContext aggcontext = aggregate_context(fcinfo, "simhash_idf transition function");
    IdfState *state = PG_ARGISNULL(0) ? nullptr : reinterpret_cast<IdfState *>(PG_GETARG_POINTER(0));
    if (PG_ARGISNULL(1)) {
        if (state == nullptr) PG_RETURN_NULL();
        PG_RETURN_POINTER(state);
    }
    simhash::ShingleOptions options = default_idf_options();
    if (PG_NARGS() > 2) {
        if (PG_ARGISNULL(2) || PG_ARGISNULL(3))
            ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("simhash_idf unit and size must not be NULL")));
        options = shingle_options(PG_GETARG_TEXT_PP(2), PG_GETARG_INT32(3));
    }
    if (state == nullptr) {
        state = new_state(aggcontext, [&] { return new simhash::DocumentFrequencies(options); });
    } else if (state->frequencies->options().unit != options.unit || state->frequencies->options().size != options.size) {
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("simhash_idf needs the same unit and size for every document of a group"),
                        errhint("Pass constants, or group by the unit and size.")));
    }
    Utf8Bytes doc = utf8_text(PG_GETARG_TEXT_PP(1));
    simhash::StopPoll poll = simhash_pg::interrupt_poll();
    with_shingle_limit("Leave documents this large out of the dictionary's sample, or split them.",
                       [&] { state->frequencies->add_document(doc.data, doc.len, &poll); });
    PG_RETURN_POINTER(state);
}

SIMHASH_FUNCTION(simhash_idf_finalfn) {
    if (PG_ARGISNULL(0)) PG_RETURN_NULL();
    const IdfState *state = reinterpret_cast<IdfState *>(PG_GETARG_POINTER(0));
    PG_RETURN_BYTEA_P(dictionary_value(*state->frequencies, kDictionaryMinDf));
}

// Parallel aggregation: a state travels as a dictionary that keeps every count (min_df = 1).
SIMHASH_FUNCTION(simhash_idf_serialfn) {
    const IdfState *state = reinterpret_cast<IdfState *>(PG_GETARG_POINTER(0));
    PG_RETURN_BYTEA_P(dictionary_value(*state->frequencies, 1));
}

SIMHASH_FUNCTION(simhash_idf_deserialfn) {
    MemoryContext aggcontext = aggregate_context(fcinfo, "simhash_idf deserialization");
    bytea *serialized = PG_GETARG_BYTEA_PP(0);
    PG_RETURN_POINTER(new_state(aggcontext, [&] {
        const simhash::IdfDictionary dictionary(dictionary_bytes(serialized), VARSIZE_ANY_EXHDR(serialized));
        return new simhash::DocumentFrequencies(simhash::DocumentFrequencies::from_dictionary(dictionary));
    }));
}

SIMHASH_FUNCTION(simhash_idf_combinefn) {
    MemoryContext aggcontext = aggregate_context(fcinfo, "simhash_idf combine function");
    IdfState *state = PG_ARGISNULL(0) ? nullptr : reinterpret_cast<IdfState *>(PG_GETARG_POINTER(0));
    if (PG_ARGISNULL(1)) {
        if (state == nullptr) PG_RETURN_NULL();
        PG_RETURN_POINTER(state);
    }
    const IdfState *other = reinterpret_cast<IdfState *>(PG_GETARG_POINTER(1));
    if (state == nullptr)
        state = new_state(aggcontext, [&] { return new simhash::DocumentFrequencies(other->frequencies->options()); });
    state->frequencies->merge(*other->frequencies);
    PG_RETURN_POINTER(state);
}

// simhash(doc, idf [, weighting]): SimHash of the dictionary's shingles with IDF weights.
SIMHASH_FUNCTION(simhash_text_idf) {
    text *doc = PG_GETARG_TEXT_PP(0);
    const struct varlena *dictionary = dictionary_argument(fcinfo, 1);
    const simhash::ShingleWeighting weighting = weighting_argument(fcinfo, 2, simhash::ShingleWeighting::kLog);
    Utf8Bytes bytes = utf8_text(doc);
    simhash::StopPoll poll = simhash_pg::interrupt_poll();
    constexpr const char *kHint =
        "Fingerprint documents this large without the dictionary (simhash(doc, unit, size, 'count') streams), or "
        "split them.";
    const simhash::IdfDictionary idf(dictionary_bytes(dictionary), VARSIZE_ANY_EXHDR(dictionary));
    // Over one document every shingle is in all N of them: every weight ln(N / df) is 0, and so
    // would every fingerprint be. (A document whose shingles are all in every document of a larger
    // dictionary gets 0 too, as a document without shingles does: it has nothing to tell it apart.)
    if (idf.documents() < 2)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("simhash: the IDF dictionary was built from %llu document%s, so every shingle's weight "
                               "ln(N / df) is 0 and every fingerprint would be 0",
                               static_cast<unsigned long long>(idf.documents()), idf.documents() == 1 ? "" : "s"),
                        errhint("Build the dictionary over the table's documents (SELECT simhash_idf(body) FROM "
                                "docs), or over a sample of many of them.")));
    const uint64_t fp = with_shingle_limit(
        kHint, [&] { return simhash::simhash_text_idf(bytes.data, bytes.len, idf, weighting, &poll); });
    PG_RETURN_INT64(static_cast<int64>(fp));
}

// shingle_idf_weight(idf, shingle): ln(N / df) of one shingle, as simhash_shingles() spells it.
SIMHASH_FUNCTION(shingle_idf_weight) {
    const struct varlena *dictionary = dictionary_argument(fcinfo, 0);
    Utf8Bytes shingle = utf8_text(PG_GETARG_TEXT_PP(1));
    const simhash::IdfDictionary idf(dictionary_bytes(dictionary), VARSIZE_ANY_EXHDR(dictionary));
    PG_RETURN_FLOAT8(idf.idf(simhash::feature_hash(shingle.data, shingle.len)));
}

// shingle_idf_info(idf): what the dictionary was built from.
SIMHASH_FUNCTION(shingle_idf_info) {
    bytea *value = PG_GETARG_BYTEA_PP(0);
    TupleDesc desc;
    if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "shingle_idf_info: return type must be a row type");
    desc = BlessTupleDesc(desc);
    const simhash::IdfDictionary idf(dictionary_bytes(value), VARSIZE_ANY_EXHDR(value));
    const simhash::ShingleOptions options = idf.options();
    Datum values[6] = {
        Int64GetDatum(static_cast<int64>(idf.documents())),
        Int64GetDatum(static_cast<int64>(idf.shingles())),
        CStringGetTextDatum(options.unit == simhash::ShingleUnit::kChar ? "char" : "word"),
        Int32GetDatum(options.size),
        Int32GetDatum(static_cast<int32>(idf.min_df())),
        Int64GetDatum(static_cast<int64>(idf.error_bound())),
    };
    bool nulls[6] = {};
    PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
