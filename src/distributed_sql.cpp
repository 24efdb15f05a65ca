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
struct GroupRows {
    Layout layout;
    int64 *ids;
    uint64 *fps;
    Size n;
    Size capacity;
};
}  // namespace

SIMHASH_FUNCTION(simhash_pairs_agg_transfn) {
    MemoryContext aggcontext;
    if (!AggCheckCallContext(fcinfo, &aggcontext))
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("simhash_pairs_agg called outside an aggregate")));
    GroupRows *rows = PG_ARGISNULL(0) ? nullptr : reinterpret_cast<GroupRows *>(PG_GETARG_POINTER(0));
    if (PG_ARGISNULL(1) || PG_ARGISNULL(2)) {
        if (rows == nullptr) PG_RETURN_NULL();
        PG_RETURN_POINTER(rows);
    }
    if (rows == nullptr) {
        rows = static_cast<GroupRows *>(MemoryContextAllocZero(aggcontext, sizeof(GroupRows)));
        rows->layout = layout_arguments(fcinfo, 3);
        rows->capacity = 8;
        rows->ids = static_cast<int64 *>(MemoryContextAlloc(aggcontext, rows->capacity * sizeof(int64)));
        rows->fps = static_cast<uint64 *>(MemoryContextAlloc(aggcontext, rows->capacity * sizeof(uint64)));
    } else if (!same_layout(rows->layout, layout_arguments(fcinfo, 3))) {
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("simhash_pairs_agg needs the same radius, blocks, key_blocks and table for every row of a group"),
                        errhint("Group by the table number.")));
    }
    if (rows->n == rows->capacity) {
        rows->capacity *= 2;
        rows->ids = static_cast<int64 *>(repalloc_huge(rows->ids, rows->capacity * sizeof(int64)));
        rows->fps = static_cast<uint64 *>(repalloc_huge(rows->fps, rows->capacity * sizeof(uint64)));
    }
    rows->ids[rows->n] = PG_GETARG_INT64(1);
    rows->fps[rows->n] = static_cast<uint64>(PG_GETARG_INT64(2));
    rows->n++;
    PG_RETURN_POINTER(rows);
}

SIMHASH_FUNCTION(simhash_pairs_agg_finalfn) {
    if (PG_ARGISNULL(0)) PG_RETURN_NULL();
    const GroupRows *rows = reinterpret_cast<GroupRows *>(PG_GETARG_POINTER(0));
    // The layout of the group's first row (a final function sees no argument values).
    const simhash::CombinationFilter &filter = layout_filter(fcinfo, rows->layout);
    Size count = 0, capacity = 0;
    int64 *out = nullptr;
    for (Size i = 0; i < rows->n; ++i) {
        if ((i & 255) == 0) CHECK_FOR_INTERRUPTS();
        for (Size j = i + 1; j < rows->n; ++j) {
            if (!filter.reports(rows->fps[i], rows->fps[j])) continue;
            if (count + 3 > capacity) {
                capacity = capacity ? capacity * 2 : 48;
                out = static_cast<int64 *>(out ? repalloc_huge(out, capacity * sizeof(int64)) : palloc(capacity * sizeof(int64)));
            }
            const bool ordered = rows->ids[i] < rows->ids[j];
            out[count++] = ordered ? rows->ids[i] : rows->ids[j];
            out[count++] = ordered ? rows->ids[j] : rows->ids[i];
            out[count++] = simhash::hamming_distance(rows->fps[i], rows->fps[j]);
        }
    }
    if (count == 0) PG_RETURN_NULL();
    Datum *elements = static_cast<Datum *>(palloc(count * sizeof(Datum)));
    for (Size k = 0; k < count; ++k) elements[k] = Int64GetDatum(out[k]);
    PG_RETURN_POINTER(construct_array(elements, static_cast<int>(count), INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}
