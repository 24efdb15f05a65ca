// The machinery the batch functions share (batch_run.h).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "batch_run.h"
#include "module.h"

extern "C" {
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/tuplesort.h"
#include "utils/tuplestore.h"
}

namespace batch {
namespace {

// simhash.progress_seconds: seconds between progress notices of long runs, 0 for none.
int progress_seconds = 10;
// simhash.temp_file_limit, in kB: the temporary file space a batch run may take when PostgreSQL's
// temp_file_limit is -1 (no limit); -1 for none.
int max_temp_kilobytes = 10 * 1024 * 1024;

}  // namespace

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

TempBound temp_bound() {
    if (temp_file_limit >= 0) return TempBound{temp_file_limit * 1024.0, "temp_file_limit"};
    if (max_temp_kilobytes >= 0) return TempBound{max_temp_kilobytes * 1024.0, "simhash.temp_file_limit"};
    return TempBound{-1, nullptr};
}


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


int progress_notice_seconds() { return progress_seconds; }

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

namespace {

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

}  // namespace

bool emit_near_pairs(void *context, const simhash::NearPair *pairs, size_t n) { return emit_pairs(context, pairs, n); }

bool emit_jaccard_pairs(void *context, const simhash::JaccardPair *pairs, size_t n) {
    return emit_pairs(context, pairs, n);
}

simhash::RunControl run_control(RunState *state) {
    simhash::RunControl control;
    control.context = state;
    control.emit = emit_near_pairs;
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


bool is_id_type(Oid type) { return type == INT8OID || type == INT4OID || type == INT2OID; }

int64 id_value(Oid type, Datum value) {
    switch (type) {
        case INT2OID: return DatumGetInt16(value);
        case INT4OID: return DatumGetInt32(value);
        default: return DatumGetInt64(value);
    }
}

Portal open_query_cursor(const char *function_name, const char *query, const char *expected) {
    if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "SPI_connect failed");
    SPIPlanPtr plan = SPI_prepare(query, 0, nullptr);
    if (!plan)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s: could not prepare the query: %s", function_name, SPI_result_code_string(SPI_result))));
    if (!SPI_is_cursor_plan(plan))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s: the query must return rows %s", function_name, expected),
                        errhint("Give one SELECT or VALUES, or an INSERT, UPDATE or DELETE with RETURNING.")));
    // Not read-only: the functions are VOLATILE, and a data-modifying query (DELETE ... RETURNING)
    // runs as in a volatile PL/pgSQL function, after a command counter increment with a new snapshot.
    return SPI_cursor_open(nullptr, plan, nullptr, nullptr, false);
}

void null_id_error(const char *function_name) {
    ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("%s: the query returned a NULL id", function_name),
                    errhint("Filter NULL ids out, e.g. WHERE id IS NOT NULL.")));
    pg_unreachable();
}

namespace {

// Opens the query as a cursor and checks its two columns' types.
void open_input(CursorReader *reader, const char *query, Oid second_type) {
    reader->portal = open_query_cursor(reader->function_name, query, reader->expected);
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
    if (isnull) null_id_error(reader->function_name);
    return id_value(reader->id_type, id);
}

}  // namespace

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



void init_fingerprint_input(FingerprintInput *input, size_t capacity) {
    input->rows = nullptr;
    input->n = 0;
    input->capacity = capacity;
    input->spill = nullptr;
    input->ids.file = nullptr;
    input->counted_only = false;
}

void add_fingerprint(FingerprintReader *reader, int64 id, uint64 fingerprint) {
    FingerprintInput *input = reader->input;
    simhash::IdFingerprint row{id, fingerprint};
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

void finish_fingerprint_input(FingerprintReader *reader) {
    FingerprintInput *input = reader->input;
    if (!input->rows)
        input->rows = static_cast<simhash::IdFingerprint *>(MemoryContextAlloc(reader->outer, sizeof(simhash::IdFingerprint)));
}

namespace {

void add_fingerprint_row(void *context, int64 id, Datum value) {
    add_fingerprint(static_cast<FingerprintReader *>(context), id, static_cast<uint64>(DatumGetInt64(value)));
}

}  // namespace

void read_fingerprints(RunState *state, const char *query, size_t capacity, bool allow_spill,
                       FingerprintInput *input, bool pairs) {
    const char *function_name = state->function_name;
    init_fingerprint_input(input, capacity);
    FingerprintReader reader{state, input, CurrentMemoryContext, 0, allow_spill};
    CursorReader cursor{function_name, pairs ? "(id_a bigint, id_b bigint)" : "(id bigint, fingerprint bigint)",
                        nullptr, InvalidOid, pairs ? "the query returned a NULL id_b" : nullptr, pairs};
    read_input(&cursor, query, INT8OID, add_fingerprint_row, &reader);
    finish_fingerprint_input(&reader);
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

namespace {

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

}  // namespace

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


// The memory_limit at which partitions of `rows` rows fit with room to spare (the core aims at
// half of what fits).
namespace {

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

}  // namespace

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

void partitioned_pairs(RunState *state, FingerprintInput *input, int radius, size_t limit,
                       const simhash::RunControl &control, size_t kept) {
    const size_t n = input->n;
    const simhash::NearPairsPlan plan =
        partitioned_plan(state, n, radius, limit, kept + n * simhash::kBytesPerRowInMemory);
    const simhash::PartitionedRows rows = partition_buffer(input);
    simhash::PartitionOverflow overflow;
    const simhash::RunStatus status =
        simhash::near_pairs_partitioned(rows, plan, spill_store(state), control, &overflow);
    finish_partitioned_run(state, status, rows_split(state, limit, kept, input->capacity), overflow, n);
}

void define_settings(void) {
    DefineCustomIntVariable("simhash.progress_seconds",
                            "Seconds between progress notices of simhash_pairs, simhash_groups, minhash_pairs and "
                            "near_duplicates.",
                            "0 turns the notices off.", &progress_seconds, 10, 0, 86400, PGC_USERSET, GUC_UNIT_S,
                            nullptr, nullptr, nullptr);
    DefineCustomIntVariable("simhash.temp_file_limit",
                            "Temporary file space a simhash_pairs, simhash_groups, minhash_pairs or near_duplicates "
                            "run may take when temp_file_limit is -1.",
                            "simhash_pairs is refused before it starts when the pairs expected by chance and its "
                            "own files would take more, and both pair functions stop when their result grows "
                            "past it. -1 for no limit.",
                            &max_temp_kilobytes, 10 * 1024 * 1024, -1, INT_MAX, PGC_USERSET, GUC_UNIT_KB, nullptr,
                            nullptr, nullptr);
}

}  // namespace batch

void simhash_batch_init(void) { batch::define_settings(); }
