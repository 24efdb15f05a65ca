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
// Memory: the limit is the memory_limit argument, or maintenance_work_mem. simhash_pairs keeps
// rows in memory when N * 48 bytes fit; otherwise it spills the 16-byte rows to a temporary file
// and runs each permuted table over key-range partitions that fit (see run_partitioned).
// simhash_groups 'connected' does the same with 12 bytes a row kept for a union-find
// (partitioned_groups); minhash_pairs partitions each band by band hash (partitioned_minhash);
// simhash_groups 'leader' is in memory only.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/near_pairs.h"
#include "guard.h"
#include "sql_arguments.h"
#include "module.h"

extern "C" {
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/buffile.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
}

namespace {

// Core values kept in this file's frames, which PostgreSQL errors may unwind: no destructors.
static_assert(std::is_trivially_destructible<simhash::RunControl>::value, "");
static_assert(std::is_trivially_destructible<simhash::NearPairsPlan>::value, "");
static_assert(std::is_trivially_destructible<simhash::LshParameters>::value, "");

constexpr int kFetchRows = 10000;

// simhash.progress_seconds: seconds between progress notices of long runs, 0 for none.
int progress_seconds = 10;

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
    // Partitioned connected groups: union-find over row numbers; the root is the smallest id.
    const int64 *ids;
    uint32 *parent;
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
    state->ids = nullptr;
    state->parent = nullptr;
}

// Called in PG_CATCH: keeps the error for later and clears the error state.
void keep_error(RunState *state) {
    MemoryContextSwitchTo(state->outer);
    state->error = CopyErrorData();
    FlushErrorState();
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
    volatile bool ok = true;
    PG_TRY();
    {
        ereport(NOTICE, (errmsg("%s: %s, %s, %llu rows out so far, %.1f s", state->function_name, phase, step,
                                static_cast<unsigned long long>(state->results),
                                (now - state->started) / 1000000.0)));
    }
    PG_CATCH();
    {
        keep_error(state);
        ok = false;
    }
    PG_END_TRY();
    return ok;
}

Datum third_column(const simhash::NearPair &pair) { return Int32GetDatum(pair.distance); }
Datum third_column(const simhash::JaccardPair &pair) { return Float8GetDatum(pair.jaccard); }

// Appends (a, b, distance or jaccard) rows to the result; an error is kept for finish_run.
template <typename Pair>
bool emit_pairs(void *context, const Pair *pairs, size_t n) {
    RunState *state = static_cast<RunState *>(context);
    volatile bool ok = true;
    PG_TRY();
    {
        Datum values[3];
        bool nulls[3] = {false, false, false};
        for (size_t i = 0; i < n; ++i) {
            values[0] = Int64GetDatum(pairs[i].a);
            values[1] = Int64GetDatum(pairs[i].b);
            values[2] = third_column(pairs[i]);
            tuplestore_putvalues(state->store, state->desc, values, nulls);
        }
        state->results += n;
    }
    PG_CATCH();
    {
        keep_error(state);
        ok = false;
    }
    PG_END_TRY();
    return ok;
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
};

// Opens the query as a read-only cursor and checks its two columns' types.
void open_input(CursorReader *reader, const char *query, Oid second_type) {
    if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "SPI_connect failed");
    SPIPlanPtr plan = SPI_prepare(query, 0, nullptr);
    if (!plan)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s: could not prepare the query: %s", reader->function_name,
                               SPI_result_code_string(SPI_result))));
    if (!SPI_is_cursor_plan(plan))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s: the query must return rows %s", reader->function_name, reader->expected)));
    reader->portal = SPI_cursor_open(nullptr, plan, nullptr, nullptr, true);
    TupleDesc desc = reader->portal->tupDesc;
    const Oid id_type = desc->natts >= 1 ? TupleDescAttr(desc, 0)->atttypid : InvalidOid;
    const Oid value_type = desc->natts >= 2 ? TupleDescAttr(desc, 1)->atttypid : InvalidOid;
    if (desc->natts != 2 || (id_type != INT8OID && id_type != INT4OID && id_type != INT2OID) ||
        value_type != second_type)
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
    switch (TupleDescAttr(desc, 0)->atttypid) {
        case INT2OID: return DatumGetInt16(id);
        case INT4OID: return DatumGetInt32(id);
        default: return DatumGetInt64(id);
    }
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
            if (isnull) continue;  // rows without a fingerprint or signature take no part
            on_row(context, row_id(reader, tuple, desc), value);
        }
        SPI_freetuptable(SPI_tuptable);
    }
    SPI_cursor_close(reader->portal);
    SPI_finish();
}

// Rows of (id, fingerprint) in memory, or spilled to a temporary file when more than `capacity`.
struct FingerprintInput {
    simhash::IdFingerprint *rows;  // in `outer`; capacity entries once spilling
    size_t n;                      // rows read (in memory or in the file)
    size_t capacity;               // rows that fit in the memory limit
    BufFile *spill;                // nullptr while everything is in memory
};

struct FingerprintReader {
    RunState *state;  // for progress notices while reading
    FingerprintInput *input;
    MemoryContext outer;
    size_t allocated;
    bool allow_spill;
    const char *function_name, *too_large_hint;
};

void add_fingerprint_row(void *context, int64 id, Datum value) {
    FingerprintReader *reader = static_cast<FingerprintReader *>(context);
    FingerprintInput *input = reader->input;
    simhash::IdFingerprint row{id, static_cast<uint64_t>(DatumGetInt64(value))};
    if ((input->n & 0xFFFF) == 0xFFFF) {
        report_progress(reader->state, "reading the query's rows", input->n + 1, 0);
        if (reader->state->error) ReThrowError(reader->state->error);
    }
    if (!input->spill && input->n == input->capacity) {
        if (!reader->allow_spill)
            ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                            errmsg("%s: more than %zu rows do not fit in the memory limit", reader->function_name,
                                   input->capacity),
                            errhint("%s", reader->too_large_hint)));
        MemoryContext old = MemoryContextSwitchTo(reader->outer);
        input->spill = BufFileCreateTemp(false);
        MemoryContextSwitchTo(old);
        BufFileWrite(input->spill, input->rows, sizeof(simhash::IdFingerprint) * input->n);
    }
    if (input->spill) {
        BufFileWrite(input->spill, &row, sizeof(row));
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

void read_fingerprints(RunState *state, const char *query, size_t capacity, bool allow_spill,
                       const char *too_large_hint, FingerprintInput *input) {
    const char *function_name = state->function_name;
    input->rows = nullptr;
    input->n = 0;
    input->capacity = capacity;
    input->spill = nullptr;
    FingerprintReader reader{state, input, CurrentMemoryContext, 0, allow_spill, function_name, too_large_hint};
    CursorReader cursor{function_name, "(id bigint, fingerprint bigint)", nullptr};
    read_input(&cursor, query, INT8OID, add_fingerprint_row, &reader);
    if (!input->rows)  // an empty input still gets a valid pointer
        input->rows = static_cast<simhash::IdFingerprint *>(MemoryContextAlloc(reader.outer, sizeof(simhash::IdFingerprint)));
}

uint32 find_root(uint32 *parent, uint32 x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

// Plain C, no PostgreSQL calls: may run inside the core.
bool unite_pairs(void *context, const simhash::NearPair *pairs, size_t n) {
    RunState *state = static_cast<RunState *>(context);
    for (size_t i = 0; i < n; ++i) {
        const uint32 a = find_root(state->parent, static_cast<uint32>(pairs[i].a));
        const uint32 b = find_root(state->parent, static_cast<uint32>(pairs[i].b));
        if (a == b) continue;
        if (state->ids[a] <= state->ids[b])
            state->parent[b] = a;
        else
            state->parent[a] = b;
    }
    return true;
}

// Partitioned run ----------------------------------------------------------------------------
//
// For each permuted table (combination) of a plan made with few tables, the spilled rows are
// distributed by the top p bits of their key into 2^p temporary files, p chosen so that a file
// holds about half of what fits; each file is then read back and its pairs found by
// near_pairs_pass. Every pair is reported once: by its first matching combination, in the one
// partition holding both rows (equal keys). Cost per table: one read and one write of the rows.

constexpr size_t kMaxPartitionBits = 12;   // at most 4096 files per table

// Key bits to partition n rows by so that a partition holds about half of what fits in memory
// (keys are not perfectly uniform), at most kMaxPartitionBits.
int partition_bits(size_t n, size_t capacity) {
    int bits = 0;
    while (bits < static_cast<int>(kMaxPartitionBits) && (n >> bits) > capacity / 2) ++bits;
    return bits;
}
constexpr size_t kMaxPartitionedTables = 16;

void load_partition(BufFile *file, FingerprintInput *input, size_t *n, const char *function_name) {
    if (BufFileSeek(file, 0, 0, SEEK_SET) != 0) elog(ERROR, "could not rewind a temporary file");
    *n = 0;
    simhash::IdFingerprint row;
    while (BufFileRead(file, &row, sizeof(row)) == sizeof(row)) {
        if (*n == input->capacity)
            ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                            errmsg("%s: a partition of equal keys holds more than %zu rows", function_name,
                                   input->capacity),
                            errdetail("The fingerprints are too skewed (many rows share the same bits) to be "
                                      "split into partitions that fit."),
                            errhint("Raise memory_limit or maintenance_work_mem.")));
        input->rows[(*n)++] = row;
    }
}

void run_partitioned(RunState *state, FingerprintInput *input, int radius,
                     bool (*emit)(void *context, const simhash::NearPair *pairs, size_t n)) {
    // The buffer for one partition: grow the in-memory array to the full capacity.
    input->rows = static_cast<simhash::IdFingerprint *>(
        repalloc_huge(input->rows, sizeof(simhash::IdFingerprint) * input->capacity));
    const simhash::NearPairsPlan plan = simhash::plan_near_pairs(input->n, radius, kMaxPartitionedTables);
    if (plan.brute_force)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("%s: %zu rows at radius %d do not fit in the memory limit", state->function_name,
                               input->n, radius),
                        errdetail("Inputs larger than memory are partitioned by permuted-table keys; at this radius "
                                  "no table layout with at most %zu tables is cheaper than comparing all pairs.",
                                  kMaxPartitionedTables),
                        errhint("Raise memory_limit or maintenance_work_mem to about %zu MB.",
                                input->n * simhash::kBytesPerRowInMemory / (1024 * 1024) + 1)));
    const int bits = partition_bits(input->n, input->capacity);
    const size_t parts = size_t{1} << bits;
    BufFile **files = static_cast<BufFile **>(palloc(sizeof(BufFile *) * parts));
    simhash::RunControl control = run_control(state);
    control.progress = nullptr;  // progress is reported here, per partition
    control.emit = emit;
    control.connectivity_only = emit == unite_pairs;
    for (size_t c = 0; c < plan.tables; ++c) {
        const int key_bits = simhash::combination_key_bits(plan, c);
        const int shift = key_bits > bits ? key_bits - bits : 0;
        for (size_t p = 0; p < parts; ++p) files[p] = BufFileCreateTemp(false);
        if (BufFileSeek(input->spill, 0, 0, SEEK_SET) != 0) elog(ERROR, "could not rewind a temporary file");
        simhash::IdFingerprint row;
        uint64 seen = 0;
        while (BufFileRead(input->spill, &row, sizeof(row)) == sizeof(row)) {
            const uint64_t part = simhash::combination_key(plan, c, row.fingerprint) >> shift;
            BufFileWrite(files[part & (parts - 1)], &row, sizeof(row));
            if ((++seen & 0xFFFF) == 0) CHECK_FOR_INTERRUPTS();
        }
        for (size_t p = 0; p < parts; ++p) {
            report_progress(state, "joining partitions of permuted tables", c * parts + p, plan.tables * parts);
            if (state->error) ReThrowError(state->error);
            size_t n;
            load_partition(files[p], input, &n, state->function_name);
            BufFileClose(files[p]);
            finish_run(state, simhash::near_pairs_pass(input->rows, n, plan, c, control));
        }
    }
    pfree(files);
}

// MinHash signatures in memory; all must have the same number of slots.
struct SignatureInput {
    MemoryContext outer;
    size_t limit;  // bytes
    int64 *ids;    // capacity entries
    uint32 *signatures;
    size_t n, capacity;
    int slots;
    BufFile *spill;  // records (id, slots values) once more than capacity rows arrived
};

void write_signature_record(BufFile *file, int64 id, const uint32 *signature, int slots) {
    BufFileWrite(file, &id, sizeof(id));
    BufFileWrite(file, const_cast<uint32 *>(signature), sizeof(uint32) * slots);
}

bool read_signature_record(BufFile *file, int64 *id, uint32 *signature, int slots) {
    if (BufFileRead(file, id, sizeof(*id)) != sizeof(*id)) return false;
    if (BufFileRead(file, signature, sizeof(uint32) * slots) != sizeof(uint32) * slots)
        elog(ERROR, "could not read a temporary file");
    return true;
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
    if (input->slots == 0) {
        input->slots = length;
        // Signature, id and bucket entry per row.
        const size_t per_row = sizeof(uint32) * length + sizeof(int64) + 16;
        input->capacity = std::max<size_t>(input->limit / per_row, 1);
        input->ids = static_cast<int64 *>(MemoryContextAllocHuge(input->outer, sizeof(int64) * input->capacity));
        input->signatures = static_cast<uint32 *>(
            MemoryContextAllocHuge(input->outer, sizeof(uint32) * length * input->capacity));
    }
    if (length != input->slots)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("minhash_pairs: signatures have different numbers of slots (%d and %d)", input->slots,
                               length),
                        errhint("Compare only signatures made by minhash() with the same slots and seed.")));
    if (input->n == input->capacity && !input->spill) {
        MemoryContext old = MemoryContextSwitchTo(input->outer);
        input->spill = BufFileCreateTemp(false);
        MemoryContextSwitchTo(old);
        for (size_t i = 0; i < input->n; ++i)
            write_signature_record(input->spill, input->ids[i], input->signatures + i * input->slots, input->slots);
    }
    if (input->spill)
        write_signature_record(input->spill, id, reinterpret_cast<const uint32 *>(ARR_DATA_PTR(signature)), length);
    else {
        input->ids[input->n] = id;
        memcpy(input->signatures + input->n * input->slots, ARR_DATA_PTR(signature), sizeof(uint32) * length);
    }
    ++input->n;
    if (reinterpret_cast<Pointer>(signature) != DatumGetPointer(value)) pfree(signature);
}

// Partitioned connected groups --------------------------------------------------------------
//
// Beyond the in-memory limit, 'connected' groups keep only 12 bytes a row: the ids (8) and a
// union-find parent (4) over row numbers. The rows are renumbered into a temporary file of
// (row number, fingerprint), the within-radius pairs of row numbers come from the partitioned
// join, and each pair unites two sets (the root being the row with the smaller id).

constexpr size_t kBytesPerRowPartitionedGroups = sizeof(int64) + sizeof(uint32);

void partitioned_groups(RunState *state, FingerprintInput *input, int radius, size_t limit) {
    const size_t n = input->n;
    if (n >= PG_UINT32_MAX || n * kBytesPerRowPartitionedGroups > limit / 4 * 3)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("simhash_groups: %zu rows do not fit in the memory limit", n),
                        errdetail("Partitioned grouping keeps 12 bytes a row in memory, plus room for one partition."),
                        errhint("Raise memory_limit or maintenance_work_mem to at least %zu MB.",
                                n * 16 / (1024 * 1024) + 1)));
    int64 *ids = static_cast<int64 *>(MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * n));
    uint32 *parent = static_cast<uint32 *>(MemoryContextAllocHuge(CurrentMemoryContext, sizeof(uint32) * n));
    BufFile *numbered = BufFileCreateTemp(false);
    if (BufFileSeek(input->spill, 0, 0, SEEK_SET) != 0) elog(ERROR, "could not rewind a temporary file");
    simhash::IdFingerprint row;
    for (size_t k = 0; k < n; ++k) {
        if (BufFileRead(input->spill, &row, sizeof(row)) != sizeof(row)) elog(ERROR, "could not read a temporary file");
        ids[k] = row.id;
        parent[k] = static_cast<uint32>(k);
        row.id = static_cast<int64>(k);
        BufFileWrite(numbered, &row, sizeof(row));
    }
    BufFileClose(input->spill);
    input->spill = numbered;
    input->capacity = std::max<size_t>((limit - n * kBytesPerRowPartitionedGroups) / simhash::kBytesPerRowInMemory, 1);
    state->ids = ids;
    state->parent = parent;
    run_partitioned(state, input, radius, unite_pairs);
    Datum values[2];
    bool nulls[2] = {false, false};
    for (size_t k = 0; k < n; ++k) {
        values[0] = Int64GetDatum(ids[k]);
        values[1] = Int64GetDatum(ids[find_root(parent, static_cast<uint32>(k))]);
        tuplestore_putvalues(state->store, state->desc, values, nulls);
    }
    pfree(ids);
    pfree(parent);
}

// Partitioned MinHash LSH: for each band, the spilled signatures are distributed by the top bits
// of their band hash into temporary files that fit; each file is read back and joined on that
// band only. A pair is reported by the first band it shares, in the file holding that band's
// bucket, so once overall. Cost per band: one read and one write of the signatures.
void partitioned_minhash(RunState *state, SignatureInput *input, double threshold, simhash::LshParameters parameters) {
    const int slots = input->slots;
    const int bits = partition_bits(input->n, input->capacity);
    const size_t parts = size_t{1} << bits;
    BufFile **files = static_cast<BufFile **>(palloc(sizeof(BufFile *) * parts));
    uint32 *signature = static_cast<uint32 *>(palloc(sizeof(uint32) * slots));
    simhash::RunControl control = run_control(state);
    control.progress = nullptr;  // progress is reported here, per partition
    for (int band = 0; band < parameters.bands; ++band) {
        for (size_t p = 0; p < parts; ++p) files[p] = BufFileCreateTemp(false);
        if (BufFileSeek(input->spill, 0, 0, SEEK_SET) != 0) elog(ERROR, "could not rewind a temporary file");
        int64 id;
        uint64 seen = 0;
        while (read_signature_record(input->spill, &id, signature, slots)) {
            const uint64_t hash = simhash::minhash_band_hash(signature, band, parameters.rows);
            write_signature_record(files[bits ? hash >> (64 - bits) : 0], id, signature, slots);
            if ((++seen & 0xFFFF) == 0) CHECK_FOR_INTERRUPTS();
        }
        for (size_t p = 0; p < parts; ++p) {
            report_progress(state, "joining partitions of MinHash bands", band * parts + p, parameters.bands * parts);
            if (state->error) ReThrowError(state->error);
            if (BufFileSeek(files[p], 0, 0, SEEK_SET) != 0) elog(ERROR, "could not rewind a temporary file");
            size_t n = 0;
            while (read_signature_record(files[p], &id, signature, slots)) {
                if (n == input->capacity)
                    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                                    errmsg("minhash_pairs: more than %zu signatures share a band", input->capacity),
                                    errdetail("Partitions are made of equal bands; this many near-identical "
                                              "signatures do not fit in the memory limit."),
                                    errhint("Raise memory_limit or maintenance_work_mem, or remove exact "
                                            "duplicates first.")));
                input->ids[n] = id;
                memcpy(input->signatures + n * slots, signature, sizeof(uint32) * slots);
                ++n;
            }
            BufFileClose(files[p]);
            finish_run(state, simhash::minhash_pairs(input->ids, input->signatures, n, slots, threshold, parameters,
                                                      emit_pairs<simhash::JaccardPair>, control, band, 1));
        }
    }
    pfree(signature);
    pfree(files);
}

}  // namespace

void simhash_etl_init(void) {
    DefineCustomIntVariable("simhash.progress_seconds",
                            "Seconds between progress notices of simhash_pairs, simhash_groups and minhash_pairs.",
                            "0 turns the notices off.", &progress_seconds, 10, 0, 86400, PGC_USERSET, GUC_UNIT_S,
                            nullptr, nullptr, nullptr);
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
    read_fingerprints(&state, query, std::max<size_t>(limit / simhash::kBytesPerRowInMemory, 1), true, "",
                      &input);
    if (input.spill) {
        run_partitioned(&state, &input, radius, emit_pairs<simhash::NearPair>);
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
    const size_t limit = memory_limit_argument(fcinfo, 3);
    RunState state;
    init_run_state(&state, fcinfo, "simhash_groups");
    FingerprintInput input;
    read_fingerprints(&state, query, std::max<size_t>(limit / simhash::kBytesPerRowGroups, 1),
                      method == simhash::GroupMethod::connected,
                      "The leader method keeps every row in memory (about 96 bytes a row): raise memory_limit or "
                      "maintenance_work_mem, or use 'connected', which partitions larger inputs.",
                      &input);
    if (input.spill) {
        partitioned_groups(&state, &input, radius, limit);
        BufFileClose(input.spill);
        pfree(input.rows);
        return (Datum)0;
    }
    int64 *groups = static_cast<int64 *>(MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * (input.n + 1)));
    simhash::RunControl control = run_control(&state);
    finish_run(&state, simhash::near_groups(input.rows, input.n, radius, method, groups, control));
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

// minhash_pairs(query text, threshold float8 DEFAULT 0.8, bands integer DEFAULT NULL,
//               rows integer DEFAULT NULL, memory_limit text DEFAULT NULL)
//   RETURNS TABLE (id_a bigint, id_b bigint, jaccard float8)
SIMHASH_FUNCTION(minhash_pairs) {
    const char *query = query_argument(fcinfo, "minhash_pairs");
    if (PG_ARGISNULL(1))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("threshold must not be NULL")));
    const double threshold = PG_GETARG_FLOAT8(1);
    if (!(threshold > 0.0 && threshold <= 1.0))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("threshold must be greater than 0 and at most 1, not %g", threshold)));
    const bool explicit_bands = !PG_ARGISNULL(2), explicit_rows = !PG_ARGISNULL(3);
    if (explicit_bands != explicit_rows)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("give both bands and rows, or neither")));
    const int32 bands = explicit_bands ? PG_GETARG_INT32(2) : 0, band_rows = explicit_rows ? PG_GETARG_INT32(3) : 0;
    const size_t limit = memory_limit_argument(fcinfo, 4);
    RunState state;
    init_run_state(&state, fcinfo, "minhash_pairs");

    SignatureInput input{CurrentMemoryContext, limit, nullptr, nullptr, 0, 0, 0, nullptr};
    CursorReader reader{"minhash_pairs", "(id bigint, signature integer[])", nullptr};
    read_input(&reader, query, INT4ARRAYOID, add_signature_row, &input);
    const size_t n = input.n;
    const int slots = input.slots;
    int64 *ids = input.ids;
    uint32 *signatures = input.signatures;
    if (n < 2) return (Datum)0;
    simhash::LshParameters parameters;
    if (explicit_bands) {
        if (bands < 1 || band_rows < 1 || static_cast<int64>(bands) * band_rows > slots)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("bands and rows must be positive with bands * rows at most %d (the slots), not %d * %d",
                                   slots, bands, band_rows)));
        parameters.bands = bands;
        parameters.rows = band_rows;
    } else {
        parameters = simhash::lsh_parameters(threshold, slots);
    }
    if (input.spill) {
        partitioned_minhash(&state, &input, threshold, parameters);
        BufFileClose(input.spill);
    } else {
        simhash::RunControl control = run_control(&state);
        finish_run(&state, simhash::minhash_pairs(ids, signatures, n, slots, threshold, parameters,
                                                  emit_pairs<simhash::JaccardPair>, control));
    }
    pfree(ids);
    pfree(signatures);
    return (Datum)0;
}
