// Building blocks of a batch pairs join that runs where the rows are (Citus workers, postgres_fdw
// shards, any partitioning): the permuted-table join of core/near_pairs.h is an equi-join on
// each table's key, so a caller can co-locate rows by key, join each partition on its own and
// keep a pair only from the table that reports it. Every pair within the radius is then found
// exactly once, whatever the partitioning:
//   simhash_pairs_layout(rows, radius, max_tables)  the tables (blocks, key blocks, how many)
//   simhash_pairs_key(fp, radius, blocks, key_blocks, t)  a fingerprint's key in table t
//   simhash_pairs_reports(a, b, radius, blocks, key_blocks, t)  table t reports the pair (a, b)
// simhash_pairs_distributed (SQL, in the install script) runs them on a Citus cluster.
#include <cstring>
#include <type_traits>

#include "core/hamming.h"
#include "core/near_pairs.h"
#include "sql_arguments.h"  // includes guard.h

extern "C" {
#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "funcapi.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"
}

namespace {

struct CachedFilter {
    int32 radius, blocks, key_blocks, table;
    simhash::CombinationFilter filter;
};

struct Layout {
    int32 radius, blocks, key_blocks, table;
};

// Arguments radius, blocks, key_blocks and table, from `first` on.
Layout layout_arguments(FunctionCallInfo fcinfo, int first) {
    for (int i = first; i < first + 4; ++i)
        if (PG_ARGISNULL(i))
            ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("radius, blocks, key_blocks and table must not be NULL")));
    return Layout{PG_GETARG_INT32(first), PG_GETARG_INT32(first + 1), PG_GETARG_INT32(first + 2), PG_GETARG_INT32(first + 3)};
}

bool same_layout(const Layout &a, const Layout &b) {
    return a.radius == b.radius && a.blocks == b.blocks && a.key_blocks == b.key_blocks && a.table == b.table;
}

// The filter of a layout, checked, kept in fn_extra: the same table is asked about row after row.
const simhash::CombinationFilter &layout_filter(FunctionCallInfo fcinfo, const Layout &layout) {
    const int32 radius = layout.radius, blocks = layout.blocks, key_blocks = layout.key_blocks, table = layout.table;
    CachedFilter *cached = static_cast<CachedFilter *>(fcinfo->flinfo->fn_extra);
    if (cached != nullptr && cached->radius == radius && cached->blocks == blocks && cached->key_blocks == key_blocks &&
        cached->table == table)
        return cached->filter;
    if (radius < 0 || radius > 64 || key_blocks < 1 || blocks != radius + key_blocks || blocks > 64)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("invalid table layout: radius %d, blocks %d, key_blocks %d", radius, blocks, key_blocks),
                        errhint("Take blocks and key_blocks from simhash_pairs_layout(rows, radius).")));
    const simhash::NearPairsPlan plan = simhash::plan_with_blocks(radius, blocks, key_blocks);
    if (table < 0 || static_cast<size_t>(table) >= plan.tables)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("table must be between 0 and %zu for this layout, not %d", plan.tables - 1, table)));
    if (cached == nullptr)
        cached = static_cast<CachedFilter *>(MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(CachedFilter)));
    new (&cached->filter) simhash::CombinationFilter(plan, static_cast<size_t>(table));
    cached->radius = radius;
    cached->blocks = blocks;
    cached->key_blocks = key_blocks;
    cached->table = table;
    fcinfo->flinfo->fn_extra = cached;
    return cached->filter;
}

}  // namespace

// simhash_pairs_layout(rows bigint, radius integer, max_tables integer DEFAULT 16,
//                      OUT blocks integer, OUT key_blocks integer, OUT tables integer)
SIMHASH_FUNCTION(simhash_pairs_layout) {
    const int64 rows = PG_GETARG_INT64(0);
    const int radius = radius_argument(fcinfo, 1);
    const int32 max_tables = PG_GETARG_INT32(2);
    if (rows < 0) ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("rows must not be negative")));
    if (max_tables < 1)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("max_tables must be at least 1, not %d", max_tables)));
    const simhash::NearPairsPlan plan =
        simhash::plan_table_layout(static_cast<size_t>(rows), radius, static_cast<size_t>(max_tables));
    if (plan.brute_force)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("no layout of at most %d tables covers radius %d", max_tables, radius),
                        errhint("Allow more tables, or run simhash_pairs on one node.")));
    TupleDesc desc;
    if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "simhash_pairs_layout: return type must be a row type");
    Datum values[3] = {Int32GetDatum(plan.blocks), Int32GetDatum(plan.key_blocks),
                       Int32GetDatum(static_cast<int32>(plan.tables))};
    bool nulls[3] = {};
    PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

// simhash_pairs_key(fp, radius, blocks, key_blocks, table) → bigint
SIMHASH_FUNCTION(simhash_pairs_key) {
    if (PG_ARGISNULL(0)) PG_RETURN_NULL();
    const simhash::CombinationFilter &filter = layout_filter(fcinfo, layout_arguments(fcinfo, 1));
    PG_RETURN_INT64(static_cast<int64>(filter.key(static_cast<uint64_t>(PG_GETARG_INT64(0)))));
}

// simhash_pairs_reports(a, b, radius, blocks, key_blocks, table) → boolean
SIMHASH_FUNCTION(simhash_pairs_reports) {
    if (PG_ARGISNULL(0) || PG_ARGISNULL(1)) PG_RETURN_NULL();
    const simhash::CombinationFilter &filter = layout_filter(fcinfo, layout_arguments(fcinfo, 2));
    PG_RETURN_BOOL(filter.reports(static_cast<uint64_t>(PG_GETARG_INT64(0)), static_cast<uint64_t>(PG_GETARG_INT64(1))));
}

// simhash_pairs_agg(id, fp, radius, blocks, key_blocks, table): the pairs that `table` reports
// among the rows of one group (rows of equal key in that table), as a flat bigint[] of
// (id_a, id_b, distance) triples, id_a < id_b. A distributed join groups its repartitioned rows
// by key on each worker and lets this compare them in C, instead of a self-join that calls
// simhash_pairs_reports once per candidate. The state is a plain array in the aggregate's context.
namespace {
// The triples (id_a, id_b, value) a group's final function reports, ids ordered, growing in the
// current context; returned as a flat bigint[] (NULL when empty).
struct PairTriples {
    const char *function;  // for errors: the aggregate
    const char *split_hint;  // how to make its groups smaller
    int64 *values = nullptr;
    Size count = 0;
    Size capacity = 0;
    PairTriples(const char *function_name, const char *hint) : function(function_name), split_hint(hint) {}
    void add(int64 a, int64 b, int64 value) {
        // One bigint[] holds at most MaxAllocSize bytes of elements.
        if (count + 3 > (MaxAllocSize - ARR_OVERHEAD_NONULLS(1)) / sizeof(int64))
            ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                            errmsg("%s: a group reports more than %zu pairs, more than one array holds", function,
                                   count / 3),
                            errhint("%s", split_hint)));
        if (count + 3 > capacity) {
            capacity = capacity ? capacity * 2 : 48;
            values = static_cast<int64 *>(values ? repalloc_huge(values, capacity * sizeof(int64)) : palloc(capacity * sizeof(int64)));
        }
        values[count++] = a < b ? a : b;
        values[count++] = a < b ? b : a;
        values[count++] = value;
    }
    Datum array() const {
        Datum *elements = static_cast<Datum *>(palloc(count * sizeof(Datum)));
        for (Size k = 0; k < count; ++k) elements[k] = Int64GetDatum(values[k]);
        return PointerGetDatum(construct_array(elements, static_cast<int>(count), INT8OID, sizeof(int64), FLOAT8PASSBYVAL,
                                               TYPALIGN_DOUBLE));
    }
};
static_assert(std::is_trivially_destructible<PairTriples>::value, "triples live in palloc'd memory");

// Pairs are reported by id: a repeated id would pair a row with itself or report a pair twice.
// Refused as simhash_pairs and minhash_pairs refuse it, with the core's check (the distributed
// functions check their ids before grouping; this guards direct use of the aggregates).
void check_group_ids(const int64 *ids, Size n, const char *function) {
    int64_t repeated;
    if (simhash::find_repeated_id(reinterpret_cast<const int64_t *>(ids), n, &repeated))
        ereport(ERROR, (errcode(ERRCODE_UNIQUE_VIOLATION),
                        errmsg("%s: id %lld appears more than once in a group", function,
                               static_cast<long long>(repeated)),
                        errdetail("Pairs are reported by id, so every row needs an id of its own.")));
}

// A row with a value and a NULL id cannot be reported (as simhash_pairs and minhash_pairs refuse it);
// dropping it would lose its pairs without a word.
void refuse_null_id(FunctionCallInfo fcinfo, const char *function) {
    if (PG_ARGISNULL(1))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("%s: a row has a NULL id", function),
                        errhint("Filter NULL ids out, e.g. WHERE id IS NOT NULL.")));
}

// The rows of one group in the aggregate's context: ids, and `width` bytes a row of payload (a
// fingerprint, a signature).
struct GroupRows {
    int64 *ids;
    char *payload;
    Size width;
    Size n;
    Size capacity;
};

void init_group_rows(GroupRows *rows, MemoryContext context, Size width) {
    rows->width = width;
    rows->n = 0;
    rows->capacity = 8;
    rows->ids = static_cast<int64 *>(MemoryContextAlloc(context, rows->capacity * sizeof(int64)));
    rows->payload = static_cast<char *>(MemoryContextAllocHuge(context, rows->capacity * width));
}

void append_group_row(GroupRows *rows, int64 id, const void *payload) {
    if (rows->n == rows->capacity) {  // repalloc keeps the chunks in the aggregate's context
        rows->capacity *= 2;
        rows->ids = static_cast<int64 *>(repalloc_huge(rows->ids, rows->capacity * sizeof(int64)));
        rows->payload = static_cast<char *>(repalloc_huge(rows->payload, rows->capacity * rows->width));
    }
    rows->ids[rows->n] = id;
    std::memcpy(rows->payload + rows->n * rows->width, payload, rows->width);
    rows->n++;
}

struct FingerprintGroup {
    Layout layout;
    GroupRows rows;
};
}  // namespace

SIMHASH_FUNCTION(simhash_pairs_agg_transfn) {
    MemoryContext aggcontext = aggregate_context(fcinfo, "simhash_pairs_agg");
    FingerprintGroup *group = PG_ARGISNULL(0) ? nullptr : reinterpret_cast<FingerprintGroup *>(PG_GETARG_POINTER(0));
    if (PG_ARGISNULL(2)) {  // a NULL fingerprint pairs with nothing
        if (group == nullptr) PG_RETURN_NULL();
        PG_RETURN_POINTER(group);
    }
    refuse_null_id(fcinfo, "simhash_pairs_agg");
    if (group == nullptr) {
        group = static_cast<FingerprintGroup *>(MemoryContextAllocZero(aggcontext, sizeof(FingerprintGroup)));
        group->layout = layout_arguments(fcinfo, 3);
        init_group_rows(&group->rows, aggcontext, sizeof(uint64));
    } else if (!same_layout(group->layout, layout_arguments(fcinfo, 3))) {
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("simhash_pairs_agg needs the same radius, blocks, key_blocks and table for every row of a group"),
                        errhint("Group by the table number.")));
    }
    const uint64 fp = static_cast<uint64>(PG_GETARG_INT64(2));
    append_group_row(&group->rows, PG_GETARG_INT64(1), &fp);
    PG_RETURN_POINTER(group);
}

SIMHASH_FUNCTION(simhash_pairs_agg_finalfn) {
    if (PG_ARGISNULL(0)) PG_RETURN_NULL();
    const FingerprintGroup *group = reinterpret_cast<FingerprintGroup *>(PG_GETARG_POINTER(0));
    // The layout of the group's first row (a final function sees no argument values).
    const simhash::CombinationFilter &filter = layout_filter(fcinfo, group->layout);
    const int64 *ids = group->rows.ids;
    const uint64 *fps = reinterpret_cast<const uint64 *>(group->rows.payload);
    check_group_ids(ids, group->rows.n, "simhash_pairs_agg");
    PairTriples pairs("simhash_pairs_agg",
                      "Make the groups smaller with more key blocks (simhash_pairs_layout), or run simhash_pairs on "
                      "one node: rows with equal fingerprints share every key, so no layout splits them.");
    for (Size i = 0; i < group->rows.n; ++i) {
        if ((i & 255) == 0) CHECK_FOR_INTERRUPTS();
        for (Size j = i + 1; j < group->rows.n; ++j)
            if (filter.reports(fps[i], fps[j])) pairs.add(ids[i], ids[j], simhash::hamming_distance(fps[i], fps[j]));
    }
    if (pairs.count == 0) PG_RETURN_NULL();
    return pairs.array();
}

// MinHash LSH where the rows are: band b of every signature is a key; rows of equal key in one
// band meet in one group, and the group reports the pairs whose first shared band is b and whose
// estimated Jaccard passes the threshold (core minhash_band_reports), as minhash_pairs does.
namespace {

void check_band(int slots, int32 rows, int32 band) {
    if (rows < 1 || band < 0 || (static_cast<int64>(band) + 1) * rows > slots)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("band %d of %d slots lies outside a signature of %d slots", band, rows, slots),
                        errhint("Take bands and rows from minhash_lsh_parameters(threshold, slots).")));
}

struct SignatureGroup {
    double threshold;
    int32 rows, band, slots;
    GroupRows signatures;  // slots uint32 each
};

}  // namespace

// minhash_lsh_parameters(threshold, slots, OUT bands, OUT rows): the banding minhash_pairs chooses.
SIMHASH_FUNCTION(minhash_lsh_parameters) {
    const double threshold = threshold_argument(fcinfo, 0);
    // The search weighs every (bands, rows) with bands * rows <= slots: about slots * ln(slots)
    // pairs, 0.4 s at the longest signature minhash() makes; a cancel stops it.
    const int32 slots = minhash_slots_argument(PG_GETARG_INT32(1));
    simhash::StopPoll poll = simhash_pg::interrupt_poll();
    const simhash::LshParameters parameters = simhash::lsh_parameters(threshold, slots, 0.5, 0.5, &poll);
    TupleDesc desc;
    if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "minhash_lsh_parameters: return type must be a row type");
    Datum values[2] = {Int32GetDatum(parameters.bands), Int32GetDatum(parameters.rows)};
    bool nulls[2] = {};
    PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

// minhash_band_key(signature, rows, band) → bigint: the hash of one band, the key rows are
// co-located by.
SIMHASH_FUNCTION(minhash_band_key) {
    int slots;
    const uint32_t *signature = signature_slots(PG_GETARG_ARRAYTYPE_P(0), "the signature", &slots);
    const int32 rows = PG_GETARG_INT32(1), band = PG_GETARG_INT32(2);
    check_band(slots, rows, band);
    PG_RETURN_INT64(static_cast<int64>(simhash::minhash_band_hash(signature, band, rows)));
}

// minhash_pairs_agg(id, signature, threshold, rows, band) → bigint[]: the pairs band `band`
// reports among a group of rows of equal band key, as (id_a, id_b, equal slots) triples.
SIMHASH_FUNCTION(minhash_pairs_agg_transfn) {
    MemoryContext aggcontext = aggregate_context(fcinfo, "minhash_pairs_agg");
    SignatureGroup *group = PG_ARGISNULL(0) ? nullptr : reinterpret_cast<SignatureGroup *>(PG_GETARG_POINTER(0));
    if (PG_ARGISNULL(2)) {  // a NULL signature pairs with nothing
        if (group == nullptr) PG_RETURN_NULL();
        PG_RETURN_POINTER(group);
    }
    refuse_null_id(fcinfo, "minhash_pairs_agg");
    for (int i = 3; i < 6; ++i)
        if (PG_ARGISNULL(i))
            ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("threshold, rows and band must not be NULL")));
    int slots;
    const uint32_t *signature = signature_slots(PG_GETARG_ARRAYTYPE_P(2), "the signature", &slots);
    const double threshold = threshold_argument(fcinfo, 3);
    const int32 band_rows = PG_GETARG_INT32(4), band = PG_GETARG_INT32(5);
    if (group == nullptr) {
        check_band(slots, band_rows, band);
        group = static_cast<SignatureGroup *>(MemoryContextAllocZero(aggcontext, sizeof(SignatureGroup)));
        group->threshold = threshold;
        group->rows = band_rows;
        group->band = band;
        group->slots = slots;
        init_group_rows(&group->signatures, aggcontext, sizeof(uint32) * slots);
    } else if (group->threshold != threshold || group->rows != band_rows || group->band != band || group->slots != slots) {
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("minhash_pairs_agg needs signatures of one length and the same threshold, rows and band for every row of a group"),
                        errhint("Group by the band number.")));
    }
    append_group_row(&group->signatures, PG_GETARG_INT64(1), signature);
    PG_RETURN_POINTER(group);
}

SIMHASH_FUNCTION(minhash_pairs_agg_finalfn) {
    if (PG_ARGISNULL(0)) PG_RETURN_NULL();
    const SignatureGroup *group = reinterpret_cast<SignatureGroup *>(PG_GETARG_POINTER(0));
    const Size width = static_cast<Size>(group->slots);
    const int64 *ids = group->signatures.ids;
    const uint32 *signatures = reinterpret_cast<const uint32 *>(group->signatures.payload);
    check_group_ids(ids, group->signatures.n, "minhash_pairs_agg");
    PairTriples pairs("minhash_pairs_agg",
                      "Make the groups smaller with more rows per band (minhash_lsh_parameters), or run minhash_pairs "
                      "on one node: rows with equal signatures share every band, so no banding splits them.");
    for (Size i = 0; i < group->signatures.n; ++i) {
        if ((i & 63) == 0) CHECK_FOR_INTERRUPTS();
        for (Size j = i + 1; j < group->signatures.n; ++j) {
            double jaccard;
            if (simhash::minhash_band_reports(signatures + i * width, signatures + j * width, group->slots, group->rows,
                                              group->band, group->threshold, &jaccard))
                pairs.add(ids[i], ids[j], static_cast<int64>(jaccard * group->slots + 0.5));  // equal slots
        }
    }
    if (pairs.count == 0) PG_RETURN_NULL();
    return pairs.array();
}

// simhash_unpack_pairs(pairs bigint[]) → TABLE (id_a bigint, id_b bigint, value bigint): the
// (id_a, id_b, value) triples of a pairs aggregate's array as rows. The distributed functions run
// it on the workers: Citus sends their queries with pg_catalog's names unqualified, and a
// polymorphic call such as array_length(anyarray, int) there would lose to any function of an
// exact signature that a role created in a schema of the workers' search_path.
SIMHASH_FUNCTION(simhash_unpack_pairs) {
    InitMaterializedSRF(fcinfo, 0);
    ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
    if (PG_ARGISNULL(0)) return (Datum)0;
    ArrayType *pairs = PG_GETARG_ARRAYTYPE_P(0);
    const int n = ARR_NDIM(pairs) == 0 ? 0 : ARR_DIMS(pairs)[0];
    if (ARR_ELEMTYPE(pairs) != INT8OID || ARR_NDIM(pairs) > 1 || array_contains_nulls(pairs) || n % 3 != 0)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("simhash_unpack_pairs: pairs is not an array of (id_a, id_b, value) triples"),
                        errdetail("simhash_pairs_agg and minhash_pairs_agg make such arrays: one dimension, no NULLs, "
                                  "a multiple of three elements.")));
    const int64 *values = reinterpret_cast<const int64 *>(ARR_DATA_PTR(pairs));
    for (int i = 0; i < n; i += 3) {
        if ((i & 1023) == 0) CHECK_FOR_INTERRUPTS();
        Datum row[3] = {Int64GetDatum(values[i]), Int64GetDatum(values[i + 1]), Int64GetDatum(values[i + 2])};
        bool nulls[3] = {};
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, row, nulls);
    }
    return (Datum)0;
}

// minhash_slots(signature integer[]) → integer: how many slots a signature has (NULL for NULL),
// with the check minhash_pairs makes of a signature.
SIMHASH_FUNCTION(minhash_slots) {
    int slots;
    (void)signature_slots(PG_GETARG_ARRAYTYPE_P(0), "the signature", &slots);
    PG_RETURN_INT32(slots);
}
