// The machinery the batch functions share (simhash_pairs, simhash_groups, minhash_pairs,
// near_duplicates): a run's state and its callbacks for the core, argument parsing, reading the
// input query through an SPI cursor, the refusal of repeated ids, the bounds on temporary files,
// BufFile-backed spill files for the core's partitioned runs and their refusals.
//
// The boundary rules (guard.h) hold throughout: frames here hold plain C-style data only; every
// callback the core calls runs its PostgreSQL calls inside PG_TRY (keeping_errors), keeps the
// error and returns "stop", and the caller raises it (finish_run) once the core has returned, so
// no PostgreSQL error longjmps through a core frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/near_pairs.h"
#include "core/near_partitioned.h"
#include "guard.h"

extern "C" {
#include "funcapi.h"
#include "storage/buffile.h"
#include "utils/portal.h"
#include "utils/timestamp.h"
}

namespace batch {

// Core values kept in frames that PostgreSQL errors may unwind: no destructors.
static_assert(std::is_trivially_destructible<simhash::RunControl>::value, "");
static_assert(std::is_trivially_destructible<simhash::NearPairsPlan>::value, "");

// Rows fetched from the input query's cursor at a time.
constexpr int kFetchRows = 10000;

// Bytes a result pair takes in the tuplestore's temporary file (measured for minimal tuples of
// (bigint, bigint, integer) and (bigint, bigint, float8)).
constexpr double kResultBytesPerNearPair = 30, kResultBytesPerJaccardPair = 34;
constexpr double result_bytes(const simhash::NearPair *) { return kResultBytesPerNearPair; }
constexpr double result_bytes(const simhash::JaccardPair *) { return kResultBytesPerJaccardPair; }

// Defines simhash.progress_seconds and simhash.temp_file_limit (from _PG_init).
void define_settings(void);

// A size as memory_limit and the size settings take it ("64kB", "235MB", "3GB"), rounded up.
struct SizeText {
    char text[32];
};
SizeText size_text(double bytes);

// The bound on a run's temporary files: PostgreSQL's temp_file_limit when set, else
// simhash.temp_file_limit; bytes < 0 when neither is set.
struct TempBound {
    double bytes;
    const char *setting;
};
TempBound temp_bound();

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

// Sets up the materialized result and the run's state.
void init_run_state(RunState *state, FunctionCallInfo fcinfo, const char *function_name);

// Called in PG_CATCH: keeps the first error for later (a later one, e.g. from closing files after
// it, is dropped) and clears the error state.
void keep_error(RunState *state);

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

// simhash.progress_seconds, for progress notices outside a RunState.
int progress_notice_seconds();

// The core's progress callback: a NOTICE every simhash.progress_seconds.
bool report_progress(void *context, const char *phase, uint64_t done, uint64_t total);

// Appends (a, b, distance) rows to the result; an error is kept for finish_run.
bool emit_near_pairs(void *context, const simhash::NearPair *pairs, size_t n);
// Appends (a, b, jaccard) rows to the result.
bool emit_jaccard_pairs(void *context, const simhash::JaccardPair *pairs, size_t n);

// A run control whose pairs go to the result (emit_near_pairs), stopped by a query cancel.
simhash::RunControl run_control(RunState *state);

// After the core returned (its objects destroyed): raise what a callback caught, or the cancel.
void finish_run(RunState *state, simhash::RunStatus status);

// Arguments ------------------------------------------------------------------------------------

const char *query_argument(FunctionCallInfo fcinfo, const char *function_name);
// Memory limit in bytes: the argument (text with units, like work_mem) or maintenance_work_mem.
size_t memory_limit_argument(FunctionCallInfo fcinfo, int arg);

// Input ----------------------------------------------------------------------------------------

bool is_id_type(Oid type);
int64 id_value(Oid type, Datum value);

// Opens `query` through SPI as a cursor (after SPI_connect), as a volatile function's queries
// run: a new snapshot, writes allowed. `expected` describes the columns for the errors.
Portal open_query_cursor(const char *function_name, const char *query, const char *expected);
// The error for a NULL id (null_value_not_allowed, with a hint to filter them).
[[noreturn]] void null_id_error(const char *function_name);

// The query of simhash_pairs, simhash_groups, minhash_pairs: two columns, an id and a value of
// second_type, read with read_input().
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

// Runs the query and calls on_row(context, id, value) for each row whose second column is not NULL.
void read_input(CursorReader *reader, const char *query, Oid second_type,
                void (*on_row)(void *context, int64 id, Datum value), void *context);

// Temporary files, created in the run's memory context so they outlive SPI's.
BufFile *create_temp_file(MemoryContext context);
void rewind_temp_file(BufFile *file);

// Unique ids -----------------------------------------------------------------------------------

[[noreturn]] void repeated_id_error(const char *function_name, int64 id);

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
void log_spilled_id(SpilledIds *ids, MemoryContext context, int64 id);
// Reads the logged ids back with `memory` bytes: a bitmap over their range when it fits (serial
// keys), else an external sort of the ids. Closes the log.
void check_spilled_ids(const char *function_name, SpilledIds *ids, size_t memory);

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

// Adds rows to a FingerprintInput as they arrive.
struct FingerprintReader {
    RunState *state;  // for progress notices while reading
    FingerprintInput *input;
    MemoryContext outer;
    size_t allocated;
    bool allow_spill;
};
void init_fingerprint_input(FingerprintInput *input, size_t capacity);
void add_fingerprint(FingerprintReader *reader, int64 id, uint64 fingerprint);
// After the last row: an empty input still gets a valid pointer.
void finish_fingerprint_input(FingerprintReader *reader);

// Reads the query's (id, fingerprint) rows; `pairs`: the query returns pairs of ids (id_a, id_b),
// read as (id, fingerprint) rows.
void read_fingerprints(RunState *state, const char *query, size_t capacity, bool allow_spill,
                       FingerprintInput *input, bool pairs = false);

// Refuses a repeated id. In memory the rows take 16 of the 48 or more bytes a row the run may
// use; spilled, the partition buffer (a third of the limit at most) is all that is held.
void check_fingerprint_ids(RunState *state, FingerprintInput *input, size_t limit);

// Pairs expected by chance -----------------------------------------------------------------------

double chance_pairs(size_t n, int radius);
// A NOTICE when uniform (unrelated) fingerprints alone would make more pairs than there are rows.
void notice_chance_pairs(RunState *state, size_t n, int radius);
// Refuses, before the run, when the result expected by chance plus the run's own temporary files
// (file_bytes) would pass the bound. in_memory_bytes: what joining in memory would take instead.
void check_expected_temp_files(RunState *state, size_t n, int radius, double file_bytes, double in_memory_bytes);

// Temporary files for the core's partitioned runs -------------------------------------------------

// BufFile spill files for the core (near_partitioned.h), their errors kept in the run's state.
simhash::SpillStore spill_store(RunState *state);

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

// After a partitioned run has returned: what a callback caught, then the refusal of partitions
// that do not fit, then the cancel.
void finish_partitioned_run(RunState *state, simhash::RunStatus status, const PartitionSplit &split,
                            const simhash::PartitionOverflow &overflow, size_t n);

// The plan of a partitioned run over n rows; refuses a radius that needs more permuted tables than
// a partitioned run reads its input for. in_memory: bytes the whole input would take in memory.
simhash::NearPairsPlan partitioned_plan(RunState *state, size_t n, int radius, size_t limit, size_t in_memory);
PartitionSplit rows_split(RunState *state, size_t limit, size_t kept, size_t capacity);
// The spilled rows for the core: input->rows grows to the partition buffer (input->capacity rows).
simhash::PartitionedRows partition_buffer(FingerprintInput *input);
// Pairs of spilled rows, each table's partitions joined in the partition buffer, handed to
// control.emit; `kept`: bytes the caller keeps in memory besides the partition buffer.
void partitioned_pairs(RunState *state, FingerprintInput *input, int radius, size_t limit,
                       const simhash::RunControl &control, size_t kept = 0);

}  // namespace batch
