// Batch deduplication in SQL: simhash_pairs(), simhash_groups(), minhash_pairs().
//
// Each function reads its input query through an SPI cursor into palloc'd arrays (C style), hands
// plain pointers to the core (src/core/near_pairs.h) and writes the result into a tuplestore
// (materialized SRF). The run machinery they share is in batch_run.h. The core calls back into it:
//  - emit / progress: the PostgreSQL calls (tuplestore_putvalues, ereport(NOTICE)) run inside
//    PG_TRY in the callback's own frame; an error is copied, flushed and the callback returns
//    "stop", the core unwinds by plain C++ returns, and the error is re-thrown here afterwards;
//  - should_stop: simhash_pg::interrupt_requested reads the interrupt flags only (no
//    ProcessInterrupts); after the core has returned, raise_interrupt() raises the cancel.
// So no PostgreSQL error longjmps through a core frame, and no C++ container is alive when one is
// raised: a cancelled run leaks nothing.
//
// Input: the functions are VOLATILE and run their query as a volatile function's queries run (a
// new snapshot after a command counter increment, not read-only), so the query may be
// `DELETE ... RETURNING id, fp` or a WITH holding one: rows leave a staging table and are
// deduplicated in one statement. Results are reported by id, so ids must be unique: a repeated id
// is refused before any work (check_ids: the core's check for rows in memory, a bitmap or an
// external sort over logged ids for inputs larger than memory).
//
// Memory: the limit is the memory_limit argument, or maintenance_work_mem. simhash_pairs keeps
// rows in memory when N * 48 bytes fit; otherwise it spills the 16-byte rows to a temporary file
// and the core (near_partitioned.h) runs each permuted table over key-range partitions that fit,
// through BufFile temporary files (spill_store). simhash_groups 'connected' does the same with 12
// bytes a row kept for a union-find (partitioned_groups); minhash_pairs partitions each band by
// band hash (partitioned_minhash); simhash_groups 'leader' is in memory only, its pairs counted
// against the limit by the core.
// Every refusal says which limit is short, how much would do, and what else helps.
//
// Temporary files: before a simhash_pairs run the pairs that uniform fingerprints make by chance
// at the radius are estimated; when they and the run's own files would pass the bound
// (temp_file_limit when set, else simhash.temp_file_limit) the run is refused before it starts,
// and under simhash.temp_file_limit the result of both pair functions is also checked as it grows.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/minhash.h"
#include "core/near_pairs.h"
#include "core/near_partitioned.h"
#include "batch_run.h"
#include "sql_arguments.h"  // includes guard.h

extern "C" {
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/buffile.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/tuplesort.h"
#include "utils/tuplestore.h"
}

using namespace batch;

namespace {

static_assert(std::is_trivially_destructible<simhash::LshParameters>::value, "");

// Connected groups of spilled rows, 12 bytes a row kept in memory (an id and a union-find parent),
// the rest of the limit for one partition.
void partitioned_groups(RunState *state, FingerprintInput *input, int radius, size_t limit) {
    const size_t n = input->n;
    if (n >= PG_UINT32_MAX)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("simhash_groups: %zu rows are more than one run can number (at most %u)", n,
                               PG_UINT32_MAX - 1),
                        errhint("Group the rows in parts, e.g. by a prefix of the fingerprint.")));
    constexpr size_t kept_per_row = simhash::kBytesPerRowPartitionedGroups;
    // Three quarters of the limit at most, so that a quarter is left for the partitions.
    if (n * kept_per_row > limit / 4 * 3)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("simhash_groups: %zu rows need a memory_limit of at least %s, not %s", n,
                               size_text(n * kept_per_row * 4 / 3.0).text, size_text(limit).text),
                        errdetail("Inputs larger than memory keep %zu bytes a row in memory (an id and a union-find "
                                  "parent), in at most three quarters of memory_limit, the rest for one partition.",
                                  kept_per_row),
                        errhint("Raise memory_limit to at least %s.", size_text(n * kept_per_row * 4 / 3.0).text)));
    const simhash::NearPairsPlan plan = partitioned_plan(state, n, radius, limit, n * simhash::kBytesPerRowGroups);
    int64 *ids = static_cast<int64 *>(MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * n));
    uint32 *parent = static_cast<uint32 *>(MemoryContextAllocHuge(CurrentMemoryContext, sizeof(uint32) * n));
    const size_t kept = n * kept_per_row;
    input->capacity = std::max<size_t>((limit - kept) / simhash::kBytesPerRowInMemory, 1);
    const simhash::PartitionedRows rows = partition_buffer(input);
    simhash::RunControl control = run_control(state);
    simhash::PartitionOverflow overflow;
    const simhash::RunStatus status = simhash::near_groups_partitioned(
        rows, plan, spill_store(state), control, reinterpret_cast<int64_t *>(ids), parent, &overflow);
    finish_partitioned_run(state, status, rows_split(state, limit, kept, input->capacity), overflow, n);
    Datum values[2];
    bool nulls[2] = {false, false};
    for (size_t k = 0; k < n; ++k) {
        values[0] = Int64GetDatum(ids[k]);
        values[1] = Int64GetDatum(ids[simhash::row_group_root(parent, static_cast<uint32>(k))]);
        tuplestore_putvalues(state->store, state->desc, values, nulls);
    }
    pfree(ids);
    pfree(parent);
}

// MinHash signatures ---------------------------------------------------------------------------

// MinHash signatures in memory; all must have the same number of slots.
struct SignatureInput {
    MemoryContext outer;
    size_t limit;  // bytes
    int64 *ids;    // capacity entries
    uint32 *signatures;
    size_t n, capacity;
    size_t allocated;  // rows the buffers have room for: they grow to `capacity` as rows arrive
    int slots;
    BufFile *spill;  // records (id, slots values) once more than capacity rows arrived
    SpilledIds spilled_ids;
};

constexpr size_t kFirstSignatureBytes = 1 << 20;

// Room for `rows` rows in the buffers, their contents kept.
void grow_signature_buffers(SignatureInput *input, size_t rows) {
    const size_t id_bytes = sizeof(int64) * rows, signature_bytes = sizeof(uint32) * input->slots * rows;
    input->ids = static_cast<int64 *>(input->ids ? repalloc_huge(input->ids, id_bytes)
                                                 : MemoryContextAllocHuge(input->outer, id_bytes));
    input->signatures = static_cast<uint32 *>(input->signatures ? repalloc_huge(input->signatures, signature_bytes)
                                                                : MemoryContextAllocHuge(input->outer, signature_bytes));
    input->allocated = rows;
}

void write_signature_record(BufFile *file, int64 id, const uint32 *signature, int slots) {
    BufFileWrite(file, &id, sizeof(id));
    BufFileWrite(file, const_cast<uint32 *>(signature), sizeof(uint32) * slots);
}


void add_signature_row(void *context, int64 id, Datum value) {
    SignatureInput *input = static_cast<SignatureInput *>(context);
    ArrayType *signature = DatumGetArrayTypeP(value);
    const int length = ARR_NDIM(signature) == 1 ? ARR_DIMS(signature)[0] : 0;
    if (length < 1 || array_contains_nulls(signature))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("minhash_pairs: the signature of id %lld is not a MinHash signature",
                               static_cast<long long>(id)),
                        errdetail("A signature is a one-dimensional integer[] without NULLs, as made by minhash().")));
    if (input->slots == 0) {  // the buffers grow with the input, up to what the memory limit allows
        input->slots = length;
        input->capacity = std::max<size_t>(input->limit / simhash::minhash_bytes_per_row(length), 1);
    }
    if (length != input->slots)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("minhash_pairs: signatures have different numbers of slots (%d and %d)", input->slots,
                               length),
                        errhint("Compare only signatures made by minhash() with the same slots and seed.")));
    if (input->n == input->capacity && !input->spill) {
        input->spill = create_temp_file(input->outer);
        for (size_t i = 0; i < input->n; ++i) {
            write_signature_record(input->spill, input->ids[i], input->signatures + i * input->slots, input->slots);
            log_spilled_id(&input->spilled_ids, input->outer, input->ids[i]);
        }
    }
    if (input->spill) {
        write_signature_record(input->spill, id, reinterpret_cast<const uint32 *>(ARR_DATA_PTR(signature)), length);
        log_spilled_id(&input->spilled_ids, input->outer, id);
    } else {
        if (input->n == input->allocated) {
            // The first step is about a megabyte whatever the signatures' width, then doubling.
            const size_t row_bytes = sizeof(int64) + sizeof(uint32) * static_cast<size_t>(input->slots);
            const size_t first = std::max<size_t>(kFirstSignatureBytes / row_bytes, 1);
            grow_signature_buffers(input, std::min<size_t>(input->allocated ? input->allocated * 2 : first,
                                                           input->capacity));
        }
        input->ids[input->n] = id;
        memcpy(input->signatures + input->n * input->slots, ARR_DATA_PTR(signature), sizeof(uint32) * length);
    }
    ++input->n;
    if (reinterpret_cast<Pointer>(signature) != DatumGetPointer(value)) pfree(signature);
}

// MinHash signatures larger than memory: the core cuts each band's signatures by the band hash.
void partitioned_minhash(RunState *state, SignatureInput *input, double threshold, simhash::LshParameters parameters) {
    simhash::PartitionedSignatures signatures;
    signatures.file = reinterpret_cast<simhash::SpillFile *>(input->spill);
    signatures.n = input->n;
    signatures.slots = input->slots;
    signatures.ids = reinterpret_cast<int64_t *>(input->ids);
    signatures.signatures = input->signatures;
    signatures.capacity = input->capacity;
    simhash::RunControl control = run_control(state);
    simhash::PartitionOverflow overflow;
    const simhash::RunStatus status = simhash::minhash_pairs_partitioned(
        signatures, threshold, parameters, emit_jaccard_pairs, spill_store(state), control, &overflow);
    const PartitionSplit split{"minhash_pairs",
                               "signatures",
                               true,
                               "many signatures share the band, as near-identical documents do",
                               ", or remove exact duplicates first",
                               input->limit,
                               0,
                               simhash::minhash_bytes_per_row(input->slots),
                               input->capacity};
    finish_partitioned_run(state, status, split, overflow, input->n);
}

}  // namespace


// simhash_pairs(query text, radius integer DEFAULT 3, memory_limit text DEFAULT NULL)
//   RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
SIMHASH_FUNCTION(simhash_pairs) {
    const char *query = query_argument(fcinfo, "simhash_pairs");
    const int radius = radius_argument(fcinfo, 1);
    const size_t limit = memory_limit_argument(fcinfo, 2);
    RunState state;
    init_run_state(&state, fcinfo, "simhash_pairs");
    FingerprintInput input;
    read_fingerprints(&state, query, std::max<size_t>(limit / simhash::kBytesPerRowInMemory, 1), true, &input);
    check_fingerprint_ids(&state, &input, limit);
    notice_chance_pairs(&state, input.n, radius);
    // Partitioned: the spilled rows and one table's partitions, 16 bytes a row each.
    const double spilled_bytes = input.spill ? 2.0 * sizeof(simhash::IdFingerprint) * input.n : 0;
    check_expected_temp_files(&state, input.n, radius, spilled_bytes,
                              static_cast<double>(input.n) * simhash::kBytesPerRowInMemory);
    if (input.spill) {
        partitioned_pairs(&state, &input, radius, limit, run_control(&state));
        BufFileClose(input.spill);
    } else {
        simhash::RunControl control = run_control(&state);
        finish_run(&state, simhash::near_pairs(input.rows, input.n, radius, control));
    }
    pfree(input.rows);
    return (Datum)0;
}

// simhash_groups(query text, radius integer DEFAULT 10, method text DEFAULT 'leader',
//                memory_limit text DEFAULT NULL) RETURNS TABLE (id bigint, group_id bigint)
SIMHASH_FUNCTION(simhash_groups) {
    const char *query = query_argument(fcinfo, "simhash_groups");
    const int radius = radius_argument(fcinfo, 1);
    if (PG_ARGISNULL(2))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("method must not be NULL")));
    const char *method_name = text_to_cstring(PG_GETARG_TEXT_PP(2));
    simhash::GroupMethod method;
    if (strcmp(method_name, "connected") == 0)
        method = simhash::GroupMethod::connected;
    else if (strcmp(method_name, "leader") == 0)
        method = simhash::GroupMethod::leader;
    else
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("unknown grouping method \"%s\"", method_name),
                        errhint("Use 'leader' (every member within the radius of its group's smallest id) or "
                                "'connected' (connected components, which chain).")));
    const bool leader = method == simhash::GroupMethod::leader;
    const size_t limit = memory_limit_argument(fcinfo, 3);
    RunState state;
    init_run_state(&state, fcinfo, "simhash_groups");
    FingerprintInput input;
    const size_t bytes_per_row = leader ? simhash::kBytesPerRowLeaderGroups : simhash::kBytesPerRowGroups;
    read_fingerprints(&state, query, std::max<size_t>(limit / bytes_per_row, 1), !leader, &input);
    if (input.counted_only)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("simhash_groups: 'leader' groups of %zu rows need at least %s, memory_limit is %s",
                               input.n, size_text(simhash::leader_groups_memory(input.n, 0)).text,
                               size_text(limit).text),
                        errdetail("'leader' works in memory: %zu bytes a row, and %zu for each pair of distinct "
                                  "fingerprints within the radius.",
                                  simhash::kBytesPerRowLeaderGroups, simhash::kBytesPerLeaderPair),
                        errhint("Raise memory_limit above %s (by 4 bytes for each pair within the radius), or use "
                                "'connected', which partitions inputs larger than memory but chains near-duplicates of "
                                "near-duplicates into one group.",
                                size_text(simhash::leader_groups_memory(input.n, 0)).text)));
    check_fingerprint_ids(&state, &input, limit);
    notice_chance_pairs(&state, input.n, radius);
    if (input.spill) {
        partitioned_groups(&state, &input, radius, limit);
        BufFileClose(input.spill);
        pfree(input.rows);
        return (Datum)0;
    }
    int64 *groups = static_cast<int64 *>(MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * (input.n + 1)));
    simhash::RunControl control = run_control(&state);
    size_t needed = 0;
    bool exact = false;
    const simhash::RunStatus status =
        simhash::near_groups(input.rows, input.n, radius, method, groups, control, limit, &needed, &exact);
    // Inexact: the pairs were counted only until they needed more than the limit (counting the
    // rest could take minutes), so the amount is a lower bound.
    if (status == simhash::RunStatus::over_memory_limit) {
        char need[128];
        if (exact)
            snprintf(need, sizeof(need), "%s, memory_limit is %s", size_text(needed).text, size_text(limit).text);
        else
            snprintf(need, sizeof(need), "more than memory_limit %s", size_text(limit).text);
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("simhash_groups: 'leader' groups of %zu rows at radius %d need %s", input.n, radius, need),
                        errdetail("%s%zu pairs of distinct fingerprints are within the radius; 'leader' keeps %zu bytes "
                                  "for each, and %zu bytes a row.",
                                  exact ? "" : "At least ",
                                  (needed - simhash::leader_groups_memory(input.n, 0)) / simhash::kBytesPerLeaderPair,
                                  simhash::kBytesPerLeaderPair, simhash::kBytesPerRowLeaderGroups),
                        errhint("Raise memory_limit %s%s, lower the radius, or use 'connected', which keeps no pairs "
                                "but chains near-duplicates of near-duplicates into one group.",
                                exact ? "to at least " : "(by 4 bytes for each pair within the radius: they were not "
                                                         "all counted)",
                                exact ? size_text(needed).text : "")));
    }
    finish_run(&state, status);
    Datum values[2];
    bool nulls[2] = {false, false};
    for (size_t i = 0; i < input.n; ++i) {
        values[0] = Int64GetDatum(input.rows[i].id);
        values[1] = Int64GetDatum(groups[i]);
        tuplestore_putvalues(state.store, state.desc, values, nulls);
    }
    pfree(groups);
    pfree(input.rows);
    return (Datum)0;
}

// simhash_pair_groups(pairs_query text, memory_limit text DEFAULT NULL)
//   RETURNS TABLE (id bigint, group_id bigint)
// Connected components of pairs computed elsewhere (simhash_pairs_distributed on a cluster): every
// id of some pair, with the smallest id of its group. Works in memory: 48 bytes a pair.
SIMHASH_FUNCTION(simhash_pair_groups) {
    const char *query = query_argument(fcinfo, "simhash_pair_groups");
    const size_t limit = memory_limit_argument(fcinfo, 1);
    constexpr size_t kBytesPerPair = sizeof(simhash::IdFingerprint) + 4 * sizeof(int64);
    RunState state;
    init_run_state(&state, fcinfo, "simhash_pair_groups");
    FingerprintInput input;
    read_fingerprints(&state, query, std::max<size_t>(limit / kBytesPerPair, 1), false, &input, true);
    if (input.counted_only)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("simhash_pair_groups: %zu pairs need %s, memory_limit is %s", input.n,
                               size_text(input.n * kBytesPerPair).text, size_text(limit).text),
                        errhint("Raise memory_limit, or lower the radius of the pairs.")));
    int64 *ids = static_cast<int64 *>(MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * (2 * input.n + 1)));
    int64 *groups = static_cast<int64 *>(MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * (2 * input.n + 1)));
    const size_t m = simhash::edge_components(input.rows, input.n, ids, groups);
    Datum values[2];
    bool nulls[2] = {false, false};
    for (size_t i = 0; i < m; ++i) {
        values[0] = Int64GetDatum(ids[i]);
        values[1] = Int64GetDatum(groups[i]);
        tuplestore_putvalues(state.store, state.desc, values, nulls);
    }
    pfree(ids);
    pfree(groups);
    pfree(input.rows);
    return (Datum)0;
}

// minhash_pairs(query text, threshold float8 DEFAULT 0.8, bands integer DEFAULT NULL,
//               rows integer DEFAULT NULL, memory_limit text DEFAULT NULL)
//   RETURNS TABLE (id_a bigint, id_b bigint, jaccard float8)
SIMHASH_FUNCTION(minhash_pairs) {
    const char *query = query_argument(fcinfo, "minhash_pairs");
    const double threshold = threshold_argument(fcinfo, 1);
    const bool explicit_bands = !PG_ARGISNULL(2), explicit_rows = !PG_ARGISNULL(3);
    if (explicit_bands != explicit_rows)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("give both bands and rows, or neither")));
    const int32 bands = explicit_bands ? PG_GETARG_INT32(2) : 0, band_rows = explicit_rows ? PG_GETARG_INT32(3) : 0;
    const size_t limit = memory_limit_argument(fcinfo, 4);
    RunState state;
    init_run_state(&state, fcinfo, "minhash_pairs");

    SignatureInput input{CurrentMemoryContext, limit, nullptr, nullptr, 0, 0, 0, 0, nullptr, SpilledIds{nullptr, 0, 0}};
    CursorReader reader{"minhash_pairs", "(id bigint, signature integer[])", nullptr, InvalidOid, nullptr};
    read_input(&reader, query, INT4ARRAYOID, add_signature_row, &input);
    if (input.spill) {
        // The signature buffers are refilled partition by partition: free them while checking.
        pfree(input.ids);
        pfree(input.signatures);
        input.ids = nullptr;
        input.signatures = nullptr;
        check_spilled_ids("minhash_pairs", &input.spilled_ids, limit / 2);
        grow_signature_buffers(&input, input.capacity);
    } else {
        check_ids_in_memory("minhash_pairs", input.ids, input.n);
    }
    if (input.n < 2) return (Datum)0;
    simhash::LshParameters parameters;
    if (explicit_bands) {
        if (bands < 1 || band_rows < 1 || static_cast<int64>(bands) * band_rows > input.slots)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("bands and rows must be positive with bands * rows at most %d (the slots), not %d * %d",
                                   input.slots, bands, band_rows)));
        parameters.bands = bands;
        parameters.rows = band_rows;
    } else {
        if (input.slots > simhash::kMaxMinhashSlots)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("minhash_pairs: signatures of %d slots are longer than minhash() makes (at most %d)",
                                   input.slots, simhash::kMaxMinhashSlots),
                            errhint("Pass bands and rows (bands * rows at most the slots) to choose the banding.")));
        simhash::StopPoll poll = simhash_pg::interrupt_poll();
        parameters = simhash::lsh_parameters(threshold, input.slots, 0.5, 0.5, &poll);
    }
    if (input.spill) {
        // The spilled signatures take one file, one band's partitions another of the same size.
        state.file_bytes = 2.0 * input.n * (sizeof(int64) + sizeof(uint32) * input.slots);
        partitioned_minhash(&state, &input, threshold, parameters);
        BufFileClose(input.spill);
    } else {
        simhash::RunControl control = run_control(&state);
        finish_run(&state, simhash::minhash_pairs(input.ids, input.signatures, input.n, input.slots, threshold,
                                                  parameters, emit_jaccard_pairs, control));
    }
    pfree(input.ids);
    pfree(input.signatures);
    return (Datum)0;
}
