// Batch deduplication in SQL: simhash_pairs(), simhash_groups(), minhash_pairs().
//
// Each function reads its input query through an SPI cursor into palloc'd arrays (C style), hands
// plain pointers to the core (src/core/near_pairs.h) and writes the result into a tuplestore
// (materialized SRF). The core calls back into this file:
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
#include "sql_arguments.h"  // includes guard.h
#include "module.h"

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

namespace {

// Core values kept in this file's frames, which PostgreSQL errors may unwind: no destructors.
static_assert(std::is_trivially_destructible<simhash::RunControl>::value, "");
static_assert(std::is_trivially_destructible<simhash::NearPairsPlan>::value, "");
static_assert(std::is_trivially_destructible<simhash::LshParameters>::value, "");

constexpr int kFetchRows = 10000;

// Bytes a result pair takes in the tuplestore's temporary file: a minimal tuple of (bigint,
// bigint, integer) is 36 bytes, of (bigint, bigint, float8) 40, written without its first 10
// header bytes and after a 4-byte length word (measured: 30 and 34 bytes a pair; 4 more when
// the caller asks for random access).
constexpr double kResultBytesPerNearPair = 30, kResultBytesPerJaccardPair = 34;
constexpr double result_bytes(const simhash::NearPair *) { return kResultBytesPerNearPair; }
constexpr double result_bytes(const simhash::JaccardPair *) { return kResultBytesPerJaccardPair; }

// simhash.progress_seconds: seconds between progress notices of long runs, 0 for none.
int progress_seconds = 10;
// simhash.temp_file_limit, in kB: the temporary file space a batch run may take when PostgreSQL's
// temp_file_limit is -1 (no limit); -1 for none.
int max_temp_kilobytes = 10 * 1024 * 1024;

// A size as memory_limit and the size settings take it ("64kB", "235MB", "3GB"), rounded up.
struct SizeText {
    char text[32];
};
SizeText size_text(double bytes) {
    constexpr double kB = 1024, MB = 1024 * kB, GB = 1024 * MB;
    SizeText size;
    if (bytes >= 10 * GB || (bytes >= GB && std::fmod(bytes, GB) == 0))
        snprintf(size.text, sizeof(size.text), "%.0fGB", std::ceil(bytes / GB));
    else if (bytes >= 10 * MB || (bytes >= MB && std::fmod(bytes, MB) == 0))
        snprintf(size.text, sizeof(size.text), "%.0fMB", std::ceil(bytes / MB));
    else
        snprintf(size.text, sizeof(size.text), "%.0fkB", std::ceil(bytes / kB));
    return size;
}

// The bound on a run's temporary files: PostgreSQL's temp_file_limit when set, else
// simhash.temp_file_limit; bytes < 0 when neither is set.
struct TempBound {
    double bytes;
    const char *setting;
};
TempBound temp_bound() {
    if (temp_file_limit >= 0) return TempBound{temp_file_limit * 1024.0, "temp_file_limit"};
    if (max_temp_kilobytes >= 0) return TempBound{max_temp_kilobytes * 1024.0, "simhash.temp_file_limit"};
    return TempBound{-1, nullptr};
}

// State shared by the callbacks of one run. Plain data only (it lives in a C-style frame).
struct RunState {
    const char *function_name;
    Tuplestorestate *store;
    TupleDesc desc;
    MemoryContext outer;      // where a caught error is copied to
    ErrorData *error;         // caught in a callback, re-thrown when the core has returned
    int progress_seconds;     // 0: no progress notices
    TimestampTz started, last_notice;
    uint64 results;
    // Checked as results arrive under simhash.temp_file_limit (PostgreSQL enforces its own
    // temp_file_limit itself): the bound in bytes (< 0: none) and the run's other files.
    double result_bound, file_bytes;
};

void init_run_state(RunState *state, FunctionCallInfo fcinfo, const char *function_name) {
    InitMaterializedSRF(fcinfo, 0);
    ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
    state->function_name = function_name;
    state->store = rsinfo->setResult;
    state->desc = rsinfo->setDesc;
    state->outer = CurrentMemoryContext;
    state->error = nullptr;
    state->progress_seconds = progress_seconds;
    state->started = state->last_notice = GetCurrentTimestamp();
    state->results = 0;
    state->result_bound = temp_file_limit >= 0 ? -1 : temp_bound().bytes;
    state->file_bytes = 0;
}

// Called in PG_CATCH: keeps the first error for later (a later one, e.g. from closing files after
// it, is dropped) and clears the error state.
void keep_error(RunState *state) {
    MemoryContextSwitchTo(state->outer);
    if (!state->error) state->error = CopyErrorData();
    FlushErrorState();
}

// Runs `calls` (PostgreSQL calls, no objects with destructors) inside PG_TRY for a callback of the
// core: an error is kept for finish_run and false returned, so that it never unwinds a core frame.
template <typename Calls>
bool keeping_errors(void *context, const Calls &calls) {
    RunState *state = static_cast<RunState *>(context);
    volatile bool ok = true;
    PG_TRY();
    {
        calls();
    }
    PG_CATCH();
    {
        keep_error(state);
        ok = false;
    }
    PG_END_TRY();
    return ok;
}

bool report_progress(void *context, const char *phase, uint64_t done, uint64_t total) {
    RunState *state = static_cast<RunState *>(context);
    if (state->progress_seconds <= 0) return true;
    const TimestampTz now = GetCurrentTimestamp();
    if (!TimestampDifferenceExceeds(state->last_notice, now, state->progress_seconds * 1000)) return true;
    state->last_notice = now;
    char step[64];  // "3 of 10", or a count when the total is unknown (0)
    if (total > 0)
        snprintf(step, sizeof(step), "%llu of %llu", static_cast<unsigned long long>(done),
                 static_cast<unsigned long long>(total));
    else
        snprintf(step, sizeof(step), "%llu", static_cast<unsigned long long>(done));
    return keeping_errors(state, [&] {
        ereport(NOTICE, (errmsg("%s: %s, %s, %llu rows out so far, %.1f s", state->function_name, phase, step,
                                static_cast<unsigned long long>(state->results),
                                (now - state->started) / 1000000.0)));
    });
}

Datum third_column(const simhash::NearPair &pair) { return Int32GetDatum(pair.distance); }
Datum third_column(const simhash::JaccardPair &pair) { return Float8GetDatum(pair.jaccard); }

// Appends (a, b, distance or jaccard) rows to the result; an error is kept for finish_run.
template <typename Pair>
bool emit_pairs(void *context, const Pair *pairs, size_t n) {
    RunState *state = static_cast<RunState *>(context);
    return keeping_errors(state, [&] {
        Datum values[3];
        bool nulls[3] = {false, false, false};
        for (size_t i = 0; i < n; ++i) {
            values[0] = Int64GetDatum(pairs[i].a);
            values[1] = Int64GetDatum(pairs[i].b);
            values[2] = third_column(pairs[i]);
            tuplestore_putvalues(state->store, state->desc, values, nulls);
        }
        state->results += n;
        if (state->result_bound >= 0 &&
            state->file_bytes + state->results * result_bytes(pairs) > state->result_bound)
            ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                            errmsg("%s: the result passed simhash.temp_file_limit (%s)", state->function_name,
                                   size_text(state->result_bound).text),
                            errdetail("The result is kept in a temporary file, about %.0f bytes a pair; these rows "
                                      "have more pairs than the estimate made before the run (uniform "
                                      "fingerprints), as many duplicates or near-duplicates do.",
                                      result_bytes(pairs)),
                            errhint("Lower the radius or raise the threshold, remove exact duplicates first, or "
                                    "raise simhash.temp_file_limit (-1 for no limit).")));
    });
}

simhash::RunControl run_control(RunState *state) {
    simhash::RunControl control;
    control.context = state;
    control.emit = emit_pairs<simhash::NearPair>;
    control.should_stop = simhash_pg::interrupt_requested;
    control.progress = report_progress;
    return control;
}

// After the core returned (its objects destroyed): raise what a callback caught, or the cancel.
void finish_run(RunState *state, simhash::RunStatus status) {
    if (state->error) ReThrowError(state->error);
    if (status == simhash::RunStatus::stopped) simhash_pg::raise_interrupt(state->function_name);
}

// Arguments ------------------------------------------------------------------------------------

const char *query_argument(FunctionCallInfo fcinfo, const char *function_name) {
    if (PG_ARGISNULL(0))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("%s: query must not be NULL", function_name)));
    return text_to_cstring(PG_GETARG_TEXT_PP(0));
}

// Memory limit in bytes: the argument (text with units, like work_mem) or maintenance_work_mem.
size_t memory_limit_argument(FunctionCallInfo fcinfo, int arg) {
    int kilobytes = maintenance_work_mem;
    if (!PG_ARGISNULL(arg)) {
        const char *value = text_to_cstring(PG_GETARG_TEXT_PP(arg));
        const char *hint = nullptr;
        if (!parse_int(value, &kilobytes, GUC_UNIT_KB, &hint) || kilobytes < 64)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("invalid memory_limit \"%s\"", value),
                            errhint("%s", hint ? hint : "Give a size of at least 64kB, such as '256MB' or '2GB'.")));
    }
    return static_cast<size_t>(kilobytes) * 1024;
}

// Input ----------------------------------------------------------------------------------------

struct CursorReader {
    const char *function_name;
    const char *expected;  // "(id bigint, fingerprint bigint)"
    Portal portal;
    Oid id_type;  // int2, int4 or int8: the id column's type, or its domain's base type
    // A NULL in the second column: null, the row takes no part (a row without a fingerprint or
    // signature); else the error to raise (a pair without its second id).
    const char *null_value_error;
    // The second column is an id too (the pairs of simhash_pair_groups): int2, int4 or int8 like
    // the first, handed on as an int8.
    bool second_is_id = false;
    Oid second_id_type = InvalidOid;
};

bool is_id_type(Oid type) { return type == INT8OID || type == INT4OID || type == INT2OID; }

int64 id_value(Oid type, Datum value) {
    switch (type) {
        case INT2OID: return DatumGetInt16(value);
        case INT4OID: return DatumGetInt32(value);
        default: return DatumGetInt64(value);
    }
}

// Opens the query as a cursor and checks its two columns' types. Not read-only: the functions are
// VOLATILE, and a data-modifying query (DELETE ... RETURNING) runs as in a volatile PL/pgSQL
// function, after a command counter increment with a new snapshot.
void open_input(CursorReader *reader, const char *query, Oid second_type) {
    if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "SPI_connect failed");
    SPIPlanPtr plan = SPI_prepare(query, 0, nullptr);
    if (!plan)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s: could not prepare the query: %s", reader->function_name,
                               SPI_result_code_string(SPI_result))));
    if (!SPI_is_cursor_plan(plan))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s: the query must return rows %s", reader->function_name, reader->expected),
                        errhint("Give one SELECT or VALUES, or an INSERT, UPDATE or DELETE with RETURNING.")));
    reader->portal = SPI_cursor_open(nullptr, plan, nullptr, nullptr, false);
    TupleDesc desc = reader->portal->tupDesc;
    // A domain's values are its base type's: a domain over bigint is a bigint here.
    const Oid id_type = desc->natts >= 1 ? TupleDescAttr(desc, 0)->atttypid : InvalidOid;
    const Oid value_type = desc->natts >= 2 ? TupleDescAttr(desc, 1)->atttypid : InvalidOid;
    reader->id_type = OidIsValid(id_type) ? getBaseType(id_type) : InvalidOid;
    reader->second_id_type = OidIsValid(value_type) ? getBaseType(value_type) : InvalidOid;
    const bool second_ok = reader->second_is_id ? is_id_type(reader->second_id_type) : reader->second_id_type == second_type;
    if (desc->natts != 2 || !is_id_type(reader->id_type) || !second_ok)
        ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                        errmsg("%s: the query must return two columns %s", reader->function_name, reader->expected),
                        desc->natts != 2
                            ? errdetail("It returns %d column%s.", desc->natts, desc->natts == 1 ? "" : "s")
                            : errdetail("It returns (%s, %s).", format_type_be(id_type), format_type_be(value_type))));
}

int64 row_id(CursorReader *reader, HeapTuple tuple, TupleDesc desc) {
    bool isnull;
    const Datum id = SPI_getbinval(tuple, desc, 1, &isnull);
    if (isnull)
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                        errmsg("%s: the query returned a NULL id", reader->function_name),
                        errhint("Filter NULL ids out, e.g. WHERE id IS NOT NULL.")));
    return id_value(reader->id_type, id);
}

// Runs the query and calls on_row(context, id, value) for each row whose second column is not NULL.
void read_input(CursorReader *reader, const char *query, Oid second_type,
                void (*on_row)(void *context, int64 id, Datum value), void *context) {
    open_input(reader, query, second_type);
    for (;;) {
        SPI_cursor_fetch(reader->portal, true, kFetchRows);
        if (SPI_processed == 0) break;
        TupleDesc desc = SPI_tuptable->tupdesc;
        for (uint64 i = 0; i < SPI_processed; ++i) {
            HeapTuple tuple = SPI_tuptable->vals[i];
            bool isnull;
            const Datum value = SPI_getbinval(tuple, desc, 2, &isnull);
            if (isnull && reader->null_value_error != nullptr)
                ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                                errmsg("%s: %s", reader->function_name, reader->null_value_error)));
            if (isnull) continue;  // rows without a fingerprint or signature take no part
            on_row(context, row_id(reader, tuple, desc),
                   reader->second_is_id ? Int64GetDatum(id_value(reader->second_id_type, value)) : value);
        }
        SPI_freetuptable(SPI_tuptable);
    }
    SPI_cursor_close(reader->portal);
    SPI_finish();
}

// Temporary files, created in the run's memory context so they outlive SPI's.
BufFile *create_temp_file(MemoryContext context) {
    MemoryContext old = MemoryContextSwitchTo(context);
    BufFile *file = BufFileCreateTemp(false);
    MemoryContextSwitchTo(old);
    return file;
}

void rewind_temp_file(BufFile *file) {
    if (BufFileSeek(file, 0, 0, SEEK_SET) != 0) elog(ERROR, "could not rewind a temporary file");
}

// Unique ids -----------------------------------------------------------------------------------

void repeated_id_error(const char *function_name, int64 id) {
    ereport(ERROR, (errcode(ERRCODE_UNIQUE_VIOLATION),
                    errmsg("%s: id %lld appears more than once in the query's rows", function_name,
                           static_cast<long long>(id)),
                    errdetail("Pairs and groups are reported by id, so every row needs an id of its own."),
                    errhint("Return a unique key as the id, or number the rows with row_number() OVER () and "
                            "join the numbers back afterwards.")));
}

// Ids of rows in memory: the core's check.
template <typename Rows>
void check_ids_in_memory(const char *function_name, const Rows *rows, size_t n) {
    int64_t repeated;
    if (simhash::find_repeated_id(rows, n, &repeated)) repeated_id_error(function_name, repeated);
}

// The ids of an input larger than memory, logged to a temporary file (8 bytes a row) with their
// range as the rows are read, so that a repeated id can be looked for in bounded memory.
struct SpilledIds {
    BufFile *file;  // nullptr while the input fits in memory
    int64 low, high;
};

void log_spilled_id(SpilledIds *ids, MemoryContext context, int64 id) {
    if (!ids->file) {
        ids->file = create_temp_file(context);
        ids->low = ids->high = id;
    }
    BufFileWrite(ids->file, &id, sizeof(id));
    ids->low = std::min(ids->low, id);
    ids->high = std::max(ids->high, id);
}

// Reads the logged ids back with `memory` bytes: a bitmap over their range when it fits (serial
// keys), else an external sort of the ids. Closes the log.
void check_spilled_ids(const char *function_name, SpilledIds *ids, size_t memory) {
    if (!ids->file) return;
    rewind_temp_file(ids->file);
    const uint64 range = static_cast<uint64>(ids->high) - static_cast<uint64>(ids->low);
    int64 id;
    uint64 seen_rows = 0;
    if (range / 8 < memory) {
        uint64 *seen = static_cast<uint64 *>(MemoryContextAllocExtended(
            CurrentMemoryContext, (range / 64 + 1) * sizeof(uint64), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO));
        while (BufFileRead(ids->file, &id, sizeof(id)) == sizeof(id)) {
            const uint64 offset = static_cast<uint64>(id) - static_cast<uint64>(ids->low);
            const uint64 bit = uint64{1} << (offset & 63);
            if (seen[offset >> 6] & bit) repeated_id_error(function_name, id);
            seen[offset >> 6] |= bit;
            if ((++seen_rows & 0xFFFF) == 0) CHECK_FOR_INTERRUPTS();
        }
        pfree(seen);
    } else {
        const int kilobytes = static_cast<int>(std::min<size_t>(std::max<size_t>(memory / 1024, 64), MAX_KILOBYTES));
        Tuplesortstate *sort =
            tuplesort_begin_datum(INT8OID, Int8LessOperator, InvalidOid, false, kilobytes, nullptr, TUPLESORT_NONE);
        while (BufFileRead(ids->file, &id, sizeof(id)) == sizeof(id)) tuplesort_putdatum(sort, Int64GetDatum(id), false);
        tuplesort_performsort(sort);
        Datum value;
        bool isnull, first = true;
        int64 previous = 0;
        while (tuplesort_getdatum_compat(sort, true, &value, &isnull, nullptr)) {
            id = DatumGetInt64(value);
            if (!first && id == previous) repeated_id_error(function_name, id);
            previous = id;
            first = false;
        }
        tuplesort_end(sort);
    }
    BufFileClose(ids->file);
    ids->file = nullptr;
}

// Rows of (id, fingerprint) ----------------------------------------------------------------------

// Rows of (id, fingerprint) in memory, or spilled to a temporary file when more than `capacity`.
struct FingerprintInput {
    simhash::IdFingerprint *rows;  // in `outer`; capacity entries once spilling
    size_t n;                      // rows read (in memory, in the file, or only counted)
    size_t capacity;               // rows that fit in the memory limit
    BufFile *spill;                // nullptr while everything is in memory
    SpilledIds ids;                // logged once spilling
    bool counted_only;             // rows beyond capacity were counted, not kept (no spilling)
};

struct FingerprintReader {
    RunState *state;  // for progress notices while reading
    FingerprintInput *input;
    MemoryContext outer;
    size_t allocated;
    bool allow_spill;
};

void add_fingerprint_row(void *context, int64 id, Datum value) {
    FingerprintReader *reader = static_cast<FingerprintReader *>(context);
    FingerprintInput *input = reader->input;
    simhash::IdFingerprint row{id, static_cast<uint64_t>(DatumGetInt64(value))};
    if ((input->n & 0xFFFF) == 0xFFFF) {
        report_progress(reader->state, "reading the query's rows", input->n + 1, 0);
        if (reader->state->error) ReThrowError(reader->state->error);
    }
    if (!input->spill && !input->counted_only && input->n == input->capacity) {
        if (!reader->allow_spill) {
            input->counted_only = true;  // the caller refuses with the total count
        } else {
            input->spill = create_temp_file(reader->outer);
            BufFileWrite(input->spill, input->rows, sizeof(simhash::IdFingerprint) * input->n);
            for (size_t i = 0; i < input->n; ++i) log_spilled_id(&input->ids, reader->outer, input->rows[i].id);
        }
    }
    if (input->counted_only) {
        ++input->n;
        return;
    }
    if (input->spill) {
        BufFileWrite(input->spill, &row, sizeof(row));
        log_spilled_id(&input->ids, reader->outer, id);
        ++input->n;
        return;
    }
    if (input->n == reader->allocated) {
        reader->allocated = std::min<size_t>(reader->allocated ? reader->allocated * 2 : kFetchRows, input->capacity);
        const size_t bytes = sizeof(simhash::IdFingerprint) * reader->allocated;
        input->rows = static_cast<simhash::IdFingerprint *>(
            input->rows ? repalloc_huge(input->rows, bytes) : MemoryContextAllocHuge(reader->outer, bytes));
    }
    input->rows[input->n++] = row;
}

// `pairs`: the query returns pairs of ids (id_a, id_b), read as (id, fingerprint) rows.
void read_fingerprints(RunState *state, const char *query, size_t capacity, bool allow_spill,
                       FingerprintInput *input, bool pairs = false) {
    const char *function_name = state->function_name;
    input->rows = nullptr;
    input->n = 0;
    input->capacity = capacity;
    input->spill = nullptr;
    input->ids.file = nullptr;
    input->counted_only = false;
    FingerprintReader reader{state, input, CurrentMemoryContext, 0, allow_spill};
    CursorReader cursor{function_name, pairs ? "(id_a bigint, id_b bigint)" : "(id bigint, fingerprint bigint)",
                        nullptr, InvalidOid, pairs ? "the query returned a NULL id_b" : nullptr, pairs};
    read_input(&cursor, query, INT8OID, add_fingerprint_row, &reader);
    if (!input->rows)  // an empty input still gets a valid pointer
        input->rows = static_cast<simhash::IdFingerprint *>(MemoryContextAlloc(reader.outer, sizeof(simhash::IdFingerprint)));
}

// Refuses a repeated id. In memory the rows take 16 of the 48 or more bytes a row the run may
// use; spilled, the partition buffer (a third of the limit at most) is all that is held.
void check_fingerprint_ids(RunState *state, FingerprintInput *input, size_t limit) {
    if (input->spill)
        check_spilled_ids(state->function_name, &input->ids, limit / 2);
    else
        check_ids_in_memory(state->function_name, input->rows, input->n);
}

// Pairs expected by chance -----------------------------------------------------------------------

double chance_pairs(size_t n, int radius) {
    return simhash::chance_pair_fraction(radius) * static_cast<double>(n) * (static_cast<double>(n) - 1) / 2;
}

// A NOTICE when uniform (unrelated) fingerprints alone would make more pairs than there are rows
// at this radius: it reaches past near-duplicates, and groups chain unrelated documents.
void notice_chance_pairs(RunState *state, size_t n, int radius) {
    const double pairs = chance_pairs(n, radius);
    if (pairs <= static_cast<double>(n)) return;
    ereport(NOTICE, (errmsg("%s: at radius %d about %.0f pairs among %zu rows are expected by chance alone",
                            state->function_name, radius, pairs, n),
                     errdetail("Two unrelated (uniform) 64-bit fingerprints are within %d bits with probability "
                               "%.2g; near-duplicates usually differ in far fewer bits.",
                               radius, simhash::chance_pair_fraction(radius))));
}

// simhash_pairs: refuses, before the run, when the result expected by chance plus the run's own
// temporary files (file_bytes: the spilled rows and one table's partitions) would pass the bound.
// in_memory_bytes: what joining in memory would take instead (0 when the run is in memory).
void check_expected_temp_files(RunState *state, size_t n, int radius, double file_bytes, double in_memory_bytes) {
    const TempBound bound = temp_bound();
    state->file_bytes = file_bytes;
    auto expected = [&](int r) { return file_bytes + chance_pairs(n, r) * kResultBytesPerNearPair; };
    if (bound.bytes < 0 || expected(radius) <= bound.bytes) return;
    int within = radius - 1;
    while (within >= 0 && expected(within) > bound.bytes) --within;
    char lower[64] = "";
    if (within >= 0) snprintf(lower, sizeof(lower), "lower the radius to %d or less, ", within);
    char in_memory[96] = "";
    if (file_bytes > 0 && expected(radius) - file_bytes <= bound.bytes)
        snprintf(in_memory, sizeof(in_memory), "raise memory_limit to %s to join in memory, ",
                 size_text(in_memory_bytes).text);
    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                    errmsg("%s: radius %d would write about %s of temporary files, more than %s (%s)",
                           state->function_name, radius, size_text(expected(radius)).text, bound.setting,
                           size_text(bound.bytes).text),
                    file_bytes > 0
                        ? errdetail("Partitioning %zu rows through temporary files takes %s, and the result about "
                                    "%s more (%.0f pairs within %d bits expected by chance alone, for uniform "
                                    "fingerprints).",
                                    n, size_text(file_bytes).text, size_text(std::floor(expected(radius) - file_bytes)).text,
                                    chance_pairs(n, radius), radius)
                        : errdetail("%zu rows make about %.0f pairs within %d bits by chance alone (uniform "
                                    "fingerprints), about %.0f bytes each in the result's temporary file.",
                                    n, chance_pairs(n, radius), radius, kResultBytesPerNearPair),
                    errhint("To go ahead, %s%sor raise %s.", lower, in_memory, bound.setting)));
}

// Temporary files for the core's partitioned runs -------------------------------------------------
//
// The core (near_partitioned.h) cuts inputs larger than memory into partition files through a
// SpillStore; here it is BufFile, so files follow temp_tablespaces and temp_file_limit and go at
// transaction end. Each callback runs its PostgreSQL calls inside PG_TRY: an error is kept in the
// run state and the callback fails, the core closes its files and returns by plain C++ returns,
// and finish_run raises the error.

BufFile *buf_file(simhash::SpillFile *file) { return reinterpret_cast<BufFile *>(file); }

simhash::SpillFile *spill_create(void *context) {
    BufFile *file = nullptr;
    if (!keeping_errors(context, [&] { file = create_temp_file(static_cast<RunState *>(context)->outer); }))
        return nullptr;
    return reinterpret_cast<simhash::SpillFile *>(file);
}

bool spill_write(void *context, simhash::SpillFile *file, const void *data, size_t bytes) {
    return keeping_errors(context, [&] { BufFileWrite(buf_file(file), const_cast<void *>(data), bytes); });
}

bool spill_read(void *context, simhash::SpillFile *file, void *data, size_t bytes, size_t *done) {
    return keeping_errors(context, [&] { *done = BufFileRead(buf_file(file), data, bytes); });
}

bool spill_rewind(void *context, simhash::SpillFile *file) {
    return keeping_errors(context, [&] { rewind_temp_file(buf_file(file)); });
}

void spill_close(void *context, simhash::SpillFile *file) {
    keeping_errors(context, [&] { BufFileClose(buf_file(file)); });
}

simhash::SpillStore spill_store(RunState *state) {
    simhash::SpillStore store;
    store.context = state;
    store.create = spill_create;
    store.write = spill_write;
    store.read = spill_read;
    store.rewind = spill_rewind;
    store.close = spill_close;
    return store;
}

// Refusals of partitioned runs -----------------------------------------------------------------

// How a run partitions its input, for its refusals.
struct PartitionSplit {
    const char *function_name;
    const char *rows_name;  // "rows", "signatures"
    bool band_hash;         // cut by a MinHash band's hash, else by a permuted table's key
    const char *skew;       // why many rows share one partition
    const char *skew_hint;  // what helps besides memory then ("" or ", or ...")
    size_t limit;           // the memory limit
    size_t kept;            // bytes kept in memory besides the partition buffer
    size_t bytes_per_row;   // partition buffer bytes a row
    size_t capacity;        // rows a partition may hold
};

// The memory_limit at which partitions of `rows` rows fit with room to spare (the core aims at
// half of what fits).
size_t limit_for_partitions(const PartitionSplit *split, size_t rows) {
    return split->kept + 2 * rows * split->bytes_per_row;
}

// After a partitioned run returned RunStatus::partition_too_large: says which partition would not
// fit, why, and the memory_limit that would do.
void refuse_partitions(const PartitionSplit *split, const simhash::PartitionOverflow &overflow, size_t n) {
    char cut_by[96];
    if (split->band_hash)
        snprintf(cut_by, sizeof(cut_by), "the top %d bits of a band's hash", overflow.cut_bits);
    else if (overflow.whatever_the_data)
        snprintf(cut_by, sizeof(cut_by), "the top %d bits of a permuted table's key", overflow.cut_bits);
    else
        snprintf(cut_by, sizeof(cut_by), "the top %d bits of the table's %d-bit key", overflow.cut_bits,
                 overflow.key_bits);
    const SizeText limit_text = size_text(split->limit);
    const SizeText needed_text = size_text(limit_for_partitions(split, overflow.largest));
    const char *limit = limit_text.text, *needed = needed_text.text;
    if (overflow.whatever_the_data)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("%s: %zu %s do not split into partitions that fit in memory_limit %s",
                               split->function_name, n, split->rows_name, limit),
                        errdetail("Inputs larger than memory are cut by %s into %zu partitions at most; one would "
                                  "hold %zu %s or more, and %zu fit.",
                                  cut_by, overflow.partitions, overflow.largest, split->rows_name, split->capacity),
                        errhint("Raise memory_limit to at least %s.", needed)));
    char which[64];
    snprintf(which, sizeof(which), "%s %zu of %zu", split->band_hash ? "band" : "permuted table", overflow.table,
             overflow.tables);
    const bool skewed = overflow.largest > 2 * (((n - 1) / overflow.partitions) + 1);
    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                    errmsg("%s: %zu %s fall into one partition of %s, and memory_limit %s holds %zu",
                           split->function_name, overflow.largest, split->rows_name, which, limit, split->capacity),
                    skewed ? errdetail("Partitions are cut by %s; %s.", cut_by, split->skew)
                           : errdetail("Partitions are cut by %s; %zu %s need more than %zu partitions at this "
                                       "memory_limit.",
                                       cut_by, n, split->rows_name, overflow.partitions),
                    errhint("Raise memory_limit to at least %s%s.", needed, skewed ? split->skew_hint : "")));
}

// After a partitioned run has returned: what a callback caught, then the refusal of partitions
// that do not fit, then the cancel.
void finish_partitioned_run(RunState *state, simhash::RunStatus status, const PartitionSplit &split,
                            const simhash::PartitionOverflow &overflow, size_t n) {
    if (state->error) ReThrowError(state->error);
    if (status == simhash::RunStatus::partition_too_large) refuse_partitions(&split, overflow, n);
    finish_run(state, status);
}

// Partitioned simhash runs ---------------------------------------------------------------------

// The plan of a partitioned run over n rows; refuses a radius that needs more permuted tables than
// a partitioned run reads its input for. in_memory: bytes the whole input would take in memory.
simhash::NearPairsPlan partitioned_plan(RunState *state, size_t n, int radius, size_t limit, size_t in_memory) {
    const simhash::NearPairsPlan plan = simhash::partitioned_plan(n, radius);
    if (!plan.brute_force) return plan;
    const int within = simhash::largest_partitioned_radius(n, radius);
    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                    errmsg("%s: %zu rows at radius %d do not fit in memory_limit %s", state->function_name, n, radius,
                           size_text(limit).text),
                    errdetail("Inputs larger than memory are partitioned by permuted-table keys, at most %zu tables, "
                              "which covers radii up to %d; at radius %d every pair is compared, in memory.",
                              simhash::kMaxPartitionedTables, within, radius),
                    errhint("Raise memory_limit to at least %s, or lower the radius to %d or less.",
                            size_text(in_memory).text, within)));
    return plan;
}

PartitionSplit rows_split(RunState *state, size_t limit, size_t kept, size_t capacity) {
    return PartitionSplit{state->function_name, "rows", false,
                          "many rows agree on those bits, as identical fingerprints or fingerprints with constant bits do",
                          ", or remove exact duplicates first", limit, kept, simhash::kBytesPerRowInMemory, capacity};
}

// The spilled rows for the core: input->rows grows to the partition buffer (input->capacity rows).
simhash::PartitionedRows partition_buffer(FingerprintInput *input) {
    input->rows = static_cast<simhash::IdFingerprint *>(
        repalloc_huge(input->rows, sizeof(simhash::IdFingerprint) * input->capacity));
    simhash::PartitionedRows rows;
    rows.file = reinterpret_cast<simhash::SpillFile *>(input->spill);
    rows.n = input->n;
    rows.buffer = input->rows;
    rows.capacity = input->capacity;
    return rows;
}

// Pairs of spilled rows, each table's partitions joined in the partition buffer.
void partitioned_pairs(RunState *state, FingerprintInput *input, int radius, size_t limit) {
    const size_t n = input->n;
    const simhash::NearPairsPlan plan =
        partitioned_plan(state, n, radius, limit, n * simhash::kBytesPerRowInMemory);
    const simhash::PartitionedRows rows = partition_buffer(input);
    simhash::RunControl control = run_control(state);
    simhash::PartitionOverflow overflow;
    const simhash::RunStatus status =
        simhash::near_pairs_partitioned(rows, plan, spill_store(state), control, &overflow);
    finish_partitioned_run(state, status, rows_split(state, limit, 0, input->capacity), overflow, n);
}

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
        signatures, threshold, parameters, emit_pairs<simhash::JaccardPair>, spill_store(state), control, &overflow);
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

void simhash_etl_init(void) {
    DefineCustomIntVariable("simhash.progress_seconds",
                            "Seconds between progress notices of simhash_pairs, simhash_groups and minhash_pairs.",
                            "0 turns the notices off.", &progress_seconds, 10, 0, 86400, PGC_USERSET, GUC_UNIT_S,
                            nullptr, nullptr, nullptr);
    DefineCustomIntVariable("simhash.temp_file_limit",
                            "Temporary file space a simhash_pairs, simhash_groups or minhash_pairs run may take "
                            "when temp_file_limit is -1.",
                            "simhash_pairs is refused before it starts when the pairs expected by chance and its "
                            "own files would take more, and both pair functions stop when their result grows "
                            "past it. -1 for no limit.",
                            &max_temp_kilobytes, 10 * 1024 * 1024, -1, INT_MAX, PGC_USERSET, GUC_UNIT_KB, nullptr,
                            nullptr, nullptr);
}

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
        partitioned_pairs(&state, &input, radius, limit);
        BufFileClose(input.spill);
    } else {
        simhash::RunControl control = run_control(&state);
        finish_run(&state, simhash::near_pairs(input.rows, input.n, radius, control));
    }
    pfree(input.rows);
    return (Datum)0;
}

// simhash_groups(query text, radius integer DEFAULT 3, method text DEFAULT 'connected',
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
                        errhint("Use 'connected' (connected components) or 'leader' (every member within the "
                                "radius of its group's smallest id).")));
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
                                "'connected', which partitions inputs larger than memory.",
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
                        errhint("Raise memory_limit %s%s, lower the radius, or use 'connected', which keeps no pairs.",
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
                                                  parameters, emit_pairs<simhash::JaccardPair>, control));
    }
    pfree(input.ids);
    pfree(input.signatures);
    return (Datum)0;
}
