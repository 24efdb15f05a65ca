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

#include "core/near_pairs.h"
#include "sql_arguments.h"  // includes guard.h

extern "C" {
#include "access/htup_details.h"
#include "funcapi.h"
#include "utils/memutils.h"
}

namespace {

struct CachedFilter {
    int32 radius, blocks, key_blocks, table;
    simhash::CombinationFilter filter;
};

// The filter of arguments radius, blocks, key_blocks, table at `first`, kept in fn_extra: the same
// table is asked about row after row.
const simhash::CombinationFilter &filter_argument(FunctionCallInfo fcinfo, int first) {
    for (int i = first; i < first + 4; ++i)
        if (PG_ARGISNULL(i))
            ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("radius, blocks, key_blocks and table must not be NULL")));
    const int32 radius = PG_GETARG_INT32(first), blocks = PG_GETARG_INT32(first + 1),
                key_blocks = PG_GETARG_INT32(first + 2), table = PG_GETARG_INT32(first + 3);
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
    const simhash::CombinationFilter &filter = filter_argument(fcinfo, 1);
    PG_RETURN_INT64(static_cast<int64>(filter.key(static_cast<uint64_t>(PG_GETARG_INT64(0)))));
}

// simhash_pairs_reports(a, b, radius, blocks, key_blocks, table) → boolean
SIMHASH_FUNCTION(simhash_pairs_reports) {
    if (PG_ARGISNULL(0) || PG_ARGISNULL(1)) PG_RETURN_NULL();
    const simhash::CombinationFilter &filter = filter_argument(fcinfo, 2);
    PG_RETURN_BOOL(filter.reports(static_cast<uint64_t>(PG_GETARG_INT64(0)), static_cast<uint64_t>(PG_GETARG_INT64(1))));
}
