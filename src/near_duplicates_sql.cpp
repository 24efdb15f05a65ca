// near_duplicates(): deduplicate the documents of a query in one call, every reported duplicate
// verified against the document it duplicates (its keeper), groups that never chain.
//
// A run has four phases, each in bounded memory (memory_limit, or maintenance_work_mem):
//  1. read the query's rows through an SPI cursor: each row's id is kept in memory, its text (UTF-8)
//     appended to a temporary file with its offset kept in memory, or its MinHash signature written
//     to a file of fixed-size records; its fingerprint is the query's, or minhash64 of the text,
//     computed here together with a sketch of 64 four-bit MinHash slots (kept in memory while the
//     limit leaves room: it screens candidates before their texts are read);
//  2. number the documents by rank: smallest id first, or the query's order;
//  3. join the fingerprints within the radius (near_pairs, partitioned through temporary files
//     when the rows do not fit, as simhash_pairs does); each candidate pair whose sketches are far
//     below the threshold is dropped, the others go into a tuplesort by (lower rank, higher rank);
//  4. the core (near_duplicates.h) reads the sorted pairs and decides every document, fetching
//     texts or signatures from the files through callbacks; each duplicate found becomes a row
//     (id, keeper_id, similarity) of the result.
// Every callback of the core runs its PostgreSQL calls inside PG_TRY (batch::keeping_errors) and
// the error is raised after the core has returned (guard.h); this file's frames hold plain data.
#include <algorithm>
#include <cstring>

#include "batch_run.h"
#include "core/minhash.h"
#include "core/near_duplicates.h"
#include "sql_arguments.h"  // includes guard.h

extern "C" {
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"  // MAX_KILOBYTES (PostgreSQL 15 had it through executor/spi.h -> access/tableam.h)
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/tuplesort.h"
#include "utils/tuplestore.h"
}

using namespace batch;

namespace {

static_assert(std::is_trivially_destructible<simhash::DuplicateRule>::value, "");
static_assert(std::is_trivially_destructible<simhash::DuplicateStats>::value, "");

constexpr const char *kFunctionName = "near_duplicates";
// The shingles of the fingerprints computed here: minhash64(doc)'s, word 1-shingles.
constexpr simhash::ShingleOptions kFingerprintShingles{simhash::ShingleUnit::kWord, 1};
constexpr const char *kExpectedColumns =
    "(id bigint, document text [, fingerprint bigint] [, signature integer[]])";

// Bytes a document keeps in memory for the whole run: its id and text offset (or nothing for
// the offset when signatures are compared), its keeper, and its rank both ways ('smallest').
constexpr size_t kResidentBytesPerRow = sizeof(int64) + sizeof(uint64) + sizeof(uint32) + 2 * sizeof(uint32);
// A share of the limit that the resident data may take: the rest sorts the candidate pairs and
// joins the fingerprints (partitioned when they do not fit).
inline size_t resident_budget(size_t limit) { return limit / 4 * 3; }

// Which columns of the query hold what (attribute numbers, 0 when absent).
struct InputColumns {
    Oid id_type;
    int document, fingerprint, signature;
};

// The run: arguments, the documents as read, and the files behind them. Plain data only.
struct DuplicateRun {
    RunState state;
    simhash::DuplicateRule rule;
    bool keep_first;  // keeper 'first': rank = the query's order
    size_t limit;
    InputColumns columns;
    bool by_signature;     // compare signatures, not texts
    bool compute_fingerprints;
    // Rows.
    size_t n, allocated;
    int64 *ids;
    uint64 *text_offsets;   // n + 1 entries: row r's text is [offsets[r], offsets[r + 1])
    uint8 *sketches;        // kDuplicateSketchBytes a row, or nullptr
    bool sketches_dropped;  // the limit had no room for them
    bool counted_only;      // the limit has no room for the documents: the rest are only counted
    BufFile *texts, *signatures;
    uint64 texts_bytes;
    int signature_slots;
    uint64 null_documents, null_fingerprints, null_signatures;
    FingerprintInput join_input;
    FingerprintReader join_reader;
    // Ranks and decisions.
    uint32 *row_of_rank, *rank_of_row;  // nullptr when keep_first (rank = row)
    uint32 *keeper;
    // Candidate pairs.
    Tuplesortstate *pairs;
    uint64 pair_count, pairs_screened;
    // Reading back.
    char *buffer;
    size_t buffer_size;
    MemoryContext row_context;  // a row's detoasted and converted values, reset after each row
};

// Arguments ------------------------------------------------------------------------------------

text *text_argument(FunctionCallInfo fcinfo, int arg, const char *name) {
    if (PG_ARGISNULL(arg))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("%s must not be NULL", name)));
    return PG_GETARG_TEXT_PP(arg);
}

bool keep_first_argument(FunctionCallInfo fcinfo, int arg) {
    const char *keeper = text_to_cstring(text_argument(fcinfo, arg, "keeper"));
    if (strcmp(keeper, "smallest") == 0) return false;
    if (strcmp(keeper, "first") == 0) return true;
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("keeper must be 'smallest' or 'first', not \"%s\"", keeper),
                    errhint("'smallest' keeps the smallest id of each group; 'first' keeps the row that comes first "
                            "in the query's order (give the query an ORDER BY).")));
    pg_unreachable();
}

// Input ----------------------------------------------------------------------------------------

// The query's columns: an id first, then a document (text or varchar), a fingerprint (bigint) and
// a signature (integer[]) in any order, each at most once.
InputColumns input_columns(TupleDesc desc) {
    InputColumns columns{InvalidOid, 0, 0, 0};
    auto refuse = [&](const char *detail_format, int column, Oid type) {
        ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                        errmsg("%s: the query must return %s", kFunctionName, kExpectedColumns),
                        errdetail(detail_format, column, format_type_be(type)),
                        errhint("Return the id first, then the document; a stored fingerprint (minhash64 of the "
                                "document) or MinHash signature is used instead of computing one.")));
    };
    if (desc->natts < 2)
        ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                        errmsg("%s: the query must return %s", kFunctionName, kExpectedColumns),
                        errdetail("It returns %d column%s.", desc->natts, desc->natts == 1 ? "" : "s")));
    const Oid id_type = TupleDescAttr(desc, 0)->atttypid;
    columns.id_type = getBaseType(id_type);
    if (!is_id_type(columns.id_type)) refuse("Column %d, the id, is of type %s, not bigint, integer or smallint.", 1, id_type);
    for (int i = 1; i < desc->natts; ++i) {
        const Oid declared = TupleDescAttr(desc, i)->atttypid;
        const Oid type = getBaseType(declared);
        int *slot = type == TEXTOID || type == VARCHAROID ? &columns.document
                    : type == INT8OID                     ? &columns.fingerprint
                    : type == INT4ARRAYOID                ? &columns.signature
                                                          : nullptr;
        if (!slot) refuse("Column %d is of type %s.", i + 1, declared);
        if (*slot) refuse("Column %d, of type %s, is the second of its kind.", i + 1, declared);
        *slot = i + 1;
    }
    if (!columns.document && !columns.signature)
        ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                        errmsg("%s: the query returns no document to compare", kFunctionName),
                        errhint("Return the document text, or a MinHash signature (integer[]) to compare instead.")));
    if (!columns.document && !columns.fingerprint)
        ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                        errmsg("%s: the query returns neither a document nor a fingerprint", kFunctionName),
                        errhint("Return the document text, from which minhash64 fingerprints are computed, or a "
                                "stored fingerprint (bigint) with the signatures.")));
    return columns;
}

// The bytes a document keeps in memory, with its sketch or without.
size_t resident_bytes_per_row(const DuplicateRun *run, bool with_sketch) {
    return kResidentBytesPerRow - (run->by_signature ? sizeof(uint64) : 0) - (run->keep_first ? 2 * sizeof(uint32) : 0) +
           (with_sketch ? simhash::kDuplicateSketchBytes : 0);
}

// Room for `rows` rows in the resident arrays.
void grow_rows(DuplicateRun *run, size_t rows) {
    MemoryContext outer = run->state.outer;
    auto grow = [&](void *p, size_t bytes) {
        return p ? repalloc_huge(p, bytes) : MemoryContextAllocHuge(outer, bytes);
    };
    run->ids = static_cast<int64 *>(grow(run->ids, sizeof(int64) * rows));
    if (!run->by_signature) {
        const bool first = run->text_offsets == nullptr;
        run->text_offsets = static_cast<uint64 *>(grow(run->text_offsets, sizeof(uint64) * (rows + 1)));
        if (first) run->text_offsets[0] = 0;
    }
    if (run->sketches) run->sketches = static_cast<uint8 *>(grow(run->sketches, simhash::kDuplicateSketchBytes * rows));
    run->allocated = rows;
}

// Makes room for one more row, within the resident budget. Once the documents and their sketches
// would pass it the sketches go: every candidate is then compared (slower, and the same result
// but for candidates the sketches would have dropped). False when even the documents alone do not
// fit.
bool make_room(DuplicateRun *run) {
    const size_t budget = resident_budget(run->limit);
    if (run->sketches && (run->n + 1) * resident_bytes_per_row(run, true) > budget) {
        pfree(run->sketches);
        run->sketches = nullptr;
        run->sketches_dropped = true;
    }
    const size_t fitting = budget / resident_bytes_per_row(run, run->sketches != nullptr);
    if (run->n + 1 > fitting) return false;
    grow_rows(run, std::min(std::max<size_t>(run->allocated * 2, kFetchRows), fitting));
    return true;
}

[[noreturn]] void refuse_rows(const DuplicateRun *run, size_t rows) {
    const double needed = static_cast<double>(rows) * resident_bytes_per_row(run, false) * 4 / 3;
    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                    errmsg("%s: %zu documents need a memory_limit of at least %s, not %s", kFunctionName, rows,
                           size_text(needed).text, size_text(run->limit).text),
                    errdetail("Each document keeps %zu bytes in memory (its id, where its text is, its rank and "
                              "keeper), in at most three quarters of memory_limit; texts and candidate pairs go to "
                              "temporary files.",
                              resident_bytes_per_row(run, false)),
                    errhint("Raise memory_limit to at least %s, or to %s to keep the candidate screen too (%zu "
                            "bytes a document).",
                            size_text(needed).text,
                            size_text(static_cast<double>(rows) * resident_bytes_per_row(run, true) * 4 / 3).text,
                            simhash::kDuplicateSketchBytes)));
    pg_unreachable();
}

void write_bytes(BufFile *file, const void *data, size_t len) { BufFileWrite(file, const_cast<void *>(data), len); }

void read_exactly(BufFile *file, uint64 offset, void *data, size_t len) {
    if (BufFileSeek(file, 0, static_cast<off_t>(offset), SEEK_SET) != 0 || BufFileRead(file, data, len) != len)
        ereport(ERROR, (errcode_for_file_access(), errmsg("%s: could not read a temporary file", kFunctionName)));
}

// One row of the query; its detoasted and converted values are in run->row_context.
void add_row(DuplicateRun *run, HeapTuple tuple, TupleDesc desc) {
    const InputColumns &c = run->columns;
    bool isnull;
    const Datum id = SPI_getbinval(tuple, desc, 1, &isnull);
    if (isnull) null_id_error(kFunctionName);
    text *document = nullptr;
    if (c.document) {
        const Datum value = SPI_getbinval(tuple, desc, c.document, &isnull);
        // Without a document a row can neither be fingerprinted nor compared by its text.
        if (isnull && (!run->by_signature || run->compute_fingerprints)) {
            ++run->null_documents;
            return;
        }
        if (!isnull) document = DatumGetTextPP(value);
    }
    uint64 fingerprint = 0;
    if (c.fingerprint) {
        const Datum value = SPI_getbinval(tuple, desc, c.fingerprint, &isnull);
        if (isnull) {
            ++run->null_fingerprints;
            return;
        }
        fingerprint = static_cast<uint64>(DatumGetInt64(value));
    }
    const uint32_t *slots = nullptr;
    if (c.signature) {
        const Datum value = SPI_getbinval(tuple, desc, c.signature, &isnull);
        if (isnull) {
            ++run->null_signatures;
            return;
        }
        int count;
        slots = signature_slots(DatumGetArrayTypeP(value), "a signature of the query", &count);
        if (run->signature_slots == 0) {
            run->signature_slots = count;
            run->rule.signature_slots = count;
            if (count < simhash::kDuplicateSketchSlots && run->sketches) {
                pfree(run->sketches);  // too short to sketch: every candidate is compared
                run->sketches = nullptr;
            }
        } else if (count != run->signature_slots) {
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("%s: signatures have different numbers of slots (%d and %d)", kFunctionName,
                                   run->signature_slots, count),
                            errhint("Compare only signatures made by minhash() with the same slots and seed.")));
        }
    }
    if (run->n == run->allocated && !make_room(run)) {
        run->counted_only = true;  // refused once the rows are counted
        ++run->n;
        return;
    }
    const size_t row = run->n;
    run->ids[row] = id_value(c.id_type, id);
    Utf8Bytes bytes{nullptr, 0};
    if (document) bytes = utf8_text(document);
    if (run->compute_fingerprints) {
        uint32_t signature64[simhash::kMinhash64Slots];
        simhash::StopPoll poll = simhash_pg::interrupt_poll();
        fingerprint = with_shingle_limit(
            "Compare documents this large in parts, or give the query stored fingerprints and signatures.", [&] {
                return simhash::minhash64_text(bytes.data, bytes.len, kFingerprintShingles, &poll, signature64);
            });
        if (run->sketches) simhash::duplicate_sketch(signature64, run->sketches + row * simhash::kDuplicateSketchBytes);
    } else if (run->sketches) {
        simhash::duplicate_sketch(slots, run->sketches + row * simhash::kDuplicateSketchBytes);
    }
    if (run->by_signature) {
        write_bytes(run->signatures, slots, sizeof(uint32_t) * run->signature_slots);
    } else {
        write_bytes(run->texts, bytes.data, bytes.len);
        run->texts_bytes += bytes.len;
        run->text_offsets[row + 1] = run->texts_bytes;
    }
    add_fingerprint(&run->join_reader, static_cast<int64>(row), fingerprint);
    ++run->n;
}

void read_documents(DuplicateRun *run, const char *query) {
    Portal portal = open_query_cursor(kFunctionName, query, kExpectedColumns);
    run->columns = input_columns(portal->tupDesc);
    run->by_signature = run->columns.signature != 0;
    run->compute_fingerprints = run->columns.fingerprint == 0;
    if (run->by_signature && run->rule.measure == simhash::DuplicateMeasure::containment)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s: signatures estimate the Jaccard similarity only, not containment", kFunctionName),
                        errhint("Use measure 'jaccard' with signatures, or return the documents without them.")));
    // The sketch screens Jaccard comparisons only (containment may be high where Jaccard is low),
    // of the shingles the sketch is made of: minhash64's (word 1), or the signatures'.
    const bool sketch = run->rule.measure == simhash::DuplicateMeasure::jaccard &&
                        (run->by_signature || (run->compute_fingerprints && run->rule.shingles.unit == kFingerprintShingles.unit &&
                                               run->rule.shingles.size == kFingerprintShingles.size));
    if (sketch) run->sketches = static_cast<uint8 *>(MemoryContextAlloc(run->state.outer, 1));
    if (run->by_signature)
        run->signatures = create_temp_file(run->state.outer);
    else
        run->texts = create_temp_file(run->state.outer);
    // The fingerprints wait in memory for the join while the run's whole share of the limit holds
    // them (48 bytes a row while joined); beyond that they go to a file and are joined in parts.
    init_fingerprint_input(&run->join_input,
                           std::max<size_t>(run->limit / (simhash::kBytesPerRowInMemory + resident_bytes_per_row(run, sketch)), 1));
    run->join_reader = FingerprintReader{&run->state, &run->join_input, run->state.outer, 0, true};
    run->row_context = AllocSetContextCreate(run->state.outer, "near_duplicates row", ALLOCSET_DEFAULT_SIZES);
    for (;;) {
        SPI_cursor_fetch(portal, true, kFetchRows);
        if (SPI_processed == 0) break;
        for (uint64 i = 0; i < SPI_processed; ++i) {
            MemoryContext caller = MemoryContextSwitchTo(run->row_context);
            if (!run->counted_only)
                add_row(run, SPI_tuptable->vals[i], SPI_tuptable->tupdesc);
            else
                ++run->n;
            MemoryContextSwitchTo(caller);
            MemoryContextReset(run->row_context);
        }
        SPI_freetuptable(SPI_tuptable);
    }
    SPI_cursor_close(portal);
    SPI_finish();
    finish_fingerprint_input(&run->join_reader);
    // Ids are checked here (rank_documents), not from the join input's log of them.
    if (run->join_input.ids.file) BufFileClose(run->join_input.ids.file);
    run->join_input.ids.file = nullptr;
    MemoryContextDelete(run->row_context);
    if (run->counted_only) refuse_rows(run, run->n);
    if (!run->ids) grow_rows(run, 1);
    if (run->sketches_dropped)
        ereport(NOTICE, (errmsg("%s: memory_limit %s has no room for the candidate screen of %zu documents; every "
                                "candidate is compared",
                                kFunctionName, size_text(run->limit).text, run->n),
                         errhint("A memory_limit of %s keeps it (%zu bytes a document).",
                                 size_text(static_cast<double>(run->n) * resident_bytes_per_row(run, true) * 4 / 3).text,
                                 resident_bytes_per_row(run, true))));
    const uint64 left_out = run->null_documents + run->null_fingerprints + run->null_signatures;
    const char *what = run->null_documents == left_out      ? "document"
                       : run->null_fingerprints == left_out ? "fingerprint"
                       : run->null_signatures == left_out   ? "signature"
                                                            : "document, fingerprint or signature";
    if (left_out > 0)
        ereport(NOTICE, (errmsg_plural("%s: %llu row with a NULL %s was left out",
                                       "%s: %llu rows with a NULL %s were left out", static_cast<unsigned long>(left_out),
                                       kFunctionName, static_cast<unsigned long long>(left_out), what)));
}

// Ranks -----------------------------------------------------------------------------------------

// Ranks by id ('smallest'), refusing a repeated id; by the query's order ('first') the rank is
// the row number and only repeated ids are looked for.
void rank_documents(DuplicateRun *run) {
    int64_t repeated;
    if (run->keep_first) {
        if (simhash::find_repeated_id(reinterpret_cast<const int64_t *>(run->ids), run->n, &repeated))
            repeated_id_error(kFunctionName, repeated);
        return;
    }
    run->row_of_rank = static_cast<uint32 *>(MemoryContextAllocHuge(run->state.outer, sizeof(uint32) * std::max<size_t>(run->n, 1)));
    run->rank_of_row = static_cast<uint32 *>(MemoryContextAllocHuge(run->state.outer, sizeof(uint32) * std::max<size_t>(run->n, 1)));
    if (simhash::rank_by_id(reinterpret_cast<const int64_t *>(run->ids), run->n, run->row_of_rank, &repeated))
        repeated_id_error(kFunctionName, repeated);
    for (size_t rank = 0; rank < run->n; ++rank) run->rank_of_row[run->row_of_rank[rank]] = static_cast<uint32>(rank);
}

inline uint32 rank_of(const DuplicateRun *run, uint32 row) { return run->rank_of_row ? run->rank_of_row[row] : row; }
inline uint32 row_of(const DuplicateRun *run, uint32 rank) { return run->row_of_rank ? run->row_of_rank[rank] : rank; }

// Candidate pairs ------------------------------------------------------------------------------

// The sort key of a pair of ranks: (lower << 32 | higher) with the sign bit flipped, so that
// int8 order is the unsigned order.
constexpr uint64 kSignBit = uint64{1} << 63;

// The join's pairs (ids are row numbers): screened by their sketches, put into the sort by rank.
bool sort_candidates(void *context, const simhash::NearPair *pairs, size_t n) {
    DuplicateRun *run = static_cast<DuplicateRun *>(context);
    return keeping_errors(&run->state, [&] {
        const double threshold = run->rule.threshold;
        for (size_t i = 0; i < n; ++i) {
            const uint32 a = static_cast<uint32>(pairs[i].a), b = static_cast<uint32>(pairs[i].b);
            if (run->sketches &&
                !simhash::sketch_may_reach(simhash::sketch_jaccard(run->sketches + size_t{a} * simhash::kDuplicateSketchBytes,
                                                                   run->sketches + size_t{b} * simhash::kDuplicateSketchBytes),
                                           threshold)) {
                ++run->pairs_screened;
                continue;
            }
            const uint32 ra = rank_of(run, a), rb = rank_of(run, b);
            const uint64 key = (uint64{std::min(ra, rb)} << 32 | std::max(ra, rb)) ^ kSignBit;
            tuplesort_putdatum(run->pairs, Int64GetDatum(static_cast<int64>(key)), false);
            ++run->pair_count;
        }
        // Sorted pairs spill as 8-byte datums plus a length word.
        if (run->state.result_bound >= 0 && run->pair_count * 16.0 > run->state.result_bound)
            ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                            errmsg("%s: the candidate pairs passed simhash.temp_file_limit (%s)", kFunctionName,
                                   size_text(run->state.result_bound).text),
                            errdetail("%llu pairs of fingerprints are within the radius.",
                                      static_cast<unsigned long long>(run->pair_count)),
                            errhint("Lower the radius, or raise simhash.temp_file_limit (-1 for no limit).")));
    });
}

void join_fingerprints(DuplicateRun *run, int radius) {
    const size_t resident = run->n * resident_bytes_per_row(run, run->sketches != nullptr);
    const size_t sort_kilobytes = std::min<size_t>(std::max<size_t>((run->limit - std::min(run->limit, resident)) / 2 / 1024, 64),
                                                   MAX_KILOBYTES);
    run->pairs = tuplesort_begin_datum(INT8OID, Int8LessOperator, InvalidOid, false, static_cast<int>(sort_kilobytes),
                                       nullptr, TUPLESORT_NONE);
    simhash::RunControl control = run_control(&run->state);
    control.context = run;
    control.emit = sort_candidates;
    // The core's other callbacks take the run state (its first member).
    static_assert(offsetof(DuplicateRun, state) == 0, "the run state comes first");
    FingerprintInput *input = &run->join_input;
    if (input->spill) {
        input->capacity = std::max<size_t>((run->limit - std::min(run->limit, resident)) / simhash::kBytesPerRowInMemory, 1);
        partitioned_pairs(&run->state, input, radius, run->limit, control, resident);
        BufFileClose(input->spill);
        input->spill = nullptr;
    } else {
        finish_run(&run->state, simhash::near_pairs(input->rows, input->n, radius, control));
    }
    pfree(input->rows);
    input->rows = nullptr;
    tuplesort_performsort(run->pairs);
}

// The decision ----------------------------------------------------------------------------------

bool next_pairs(void *context, uint64_t *pairs, size_t capacity, size_t *n) {
    DuplicateRun *run = static_cast<DuplicateRun *>(context);
    *n = 0;
    return keeping_errors(&run->state, [&] {
        Datum value;
        bool isnull;
        while (*n < capacity && tuplesort_getdatum_compat(run->pairs, true, &value, &isnull, nullptr))
            pairs[(*n)++] = static_cast<uint64>(DatumGetInt64(value)) ^ kSignBit;
    });
}

char *reading_buffer(DuplicateRun *run, size_t len) {
    if (len > run->buffer_size) {
        if (run->buffer) pfree(run->buffer);
        run->buffer = static_cast<char *>(MemoryContextAllocHuge(run->state.outer, std::max<size_t>(len, 8192)));
        run->buffer_size = std::max<size_t>(len, 8192);
    }
    return run->buffer;
}

bool document_text(void *context, uint32_t rank, const char **data, size_t *len) {
    DuplicateRun *run = static_cast<DuplicateRun *>(context);
    return keeping_errors(&run->state, [&] {
        const uint32 row = row_of(run, rank);
        const uint64 start = run->text_offsets[row];
        *len = run->text_offsets[row + 1] - start;
        char *buffer = reading_buffer(run, *len);
        if (*len > 0) read_exactly(run->texts, start, buffer, *len);
        *data = buffer;
    });
}

bool document_signature(void *context, uint32_t rank, const uint32_t **slots) {
    DuplicateRun *run = static_cast<DuplicateRun *>(context);
    return keeping_errors(&run->state, [&] {
        const size_t bytes = sizeof(uint32_t) * run->signature_slots;
        char *buffer = reading_buffer(run, bytes);
        read_exactly(run->signatures, static_cast<uint64>(row_of(run, rank)) * bytes, buffer, bytes);
        *slots = reinterpret_cast<const uint32_t *>(buffer);
    });
}

bool emit_duplicates(void *context, const simhash::KeptDuplicate *duplicates, size_t n) {
    DuplicateRun *run = static_cast<DuplicateRun *>(context);
    return keeping_errors(&run->state, [&] {
        Datum values[3];
        bool nulls[3] = {false, false, false};
        for (size_t i = 0; i < n; ++i) {
            values[0] = Int64GetDatum(run->ids[row_of(run, duplicates[i].member)]);
            values[1] = Int64GetDatum(run->ids[row_of(run, duplicates[i].keeper)]);
            values[2] = Float8GetDatum(duplicates[i].similarity);
            tuplestore_putvalues(run->state.store, run->state.desc, values, nulls);
        }
        run->state.results += n;
    });
}

void decide(DuplicateRun *run) {
    run->keeper = static_cast<uint32 *>(MemoryContextAllocHuge(run->state.outer, sizeof(uint32) * std::max<size_t>(run->n, 1)));
    memset(run->keeper, 0xFF, sizeof(uint32) * run->n);  // kUndecided
    simhash::CandidatePairs pairs;
    pairs.context = run;
    pairs.next = next_pairs;
    pairs.total = run->pair_count;
    simhash::DuplicateDocuments documents;
    documents.context = run;
    documents.text = document_text;
    documents.signature = document_signature;
    documents.sketches = nullptr;
    if (run->sketches) {
        // The core reads sketches by rank: put them in rank order (in place when ranks are rows).
        if (run->rank_of_row) {
            uint8 *by_rank = static_cast<uint8 *>(
                MemoryContextAllocHuge(run->state.outer, simhash::kDuplicateSketchBytes * std::max<size_t>(run->n, 1)));
            for (size_t rank = 0; rank < run->n; ++rank)
                memcpy(by_rank + rank * simhash::kDuplicateSketchBytes,
                       run->sketches + size_t{run->row_of_rank[rank]} * simhash::kDuplicateSketchBytes,
                       simhash::kDuplicateSketchBytes);
            pfree(run->sketches);
            run->sketches = by_rank;
        }
        documents.sketches = run->sketches;
    }
    simhash::RunControl control = run_control(&run->state);
    simhash::DuplicateStats stats;
    const simhash::RunStatus status = simhash::assign_keepers(pairs, documents, run->rule, run->keeper, run->n,
                                                              emit_duplicates, run, control, &stats);
    finish_run(&run->state, status);
    elog(DEBUG1,
         "%s: %zu documents, %llu candidate pairs (%llu screened out before the sort), %llu screened, %llu identical, "
         "%llu compared, %llu duplicates",
         kFunctionName, run->n, static_cast<unsigned long long>(stats.pairs),
         static_cast<unsigned long long>(run->pairs_screened), static_cast<unsigned long long>(stats.screened),
         static_cast<unsigned long long>(stats.identical), static_cast<unsigned long long>(stats.verified),
         static_cast<unsigned long long>(stats.duplicates));
}

}  // namespace

// near_duplicates(query text, threshold float8 DEFAULT 0.65, radius integer DEFAULT 10,
//                 measure text DEFAULT 'jaccard', unit text DEFAULT 'word', size integer DEFAULT 1,
//                 keeper text DEFAULT 'smallest', memory_limit text DEFAULT NULL)
//   RETURNS TABLE (id bigint, keeper_id bigint, similarity float8)
SIMHASH_FUNCTION(near_duplicates) {
    const char *query = query_argument(fcinfo, kFunctionName);
    DuplicateRun *run = static_cast<DuplicateRun *>(palloc0(sizeof(DuplicateRun)));
    run->rule.threshold = threshold_argument(fcinfo, 1);
    const int radius = radius_argument(fcinfo, 2);
    text *measure = text_argument(fcinfo, 3, "measure");
    run->rule.measure = simhash::parse_duplicate_measure(VARDATA_ANY(measure), VARSIZE_ANY_EXHDR(measure));
    text *unit = text_argument(fcinfo, 4, "unit");
    if (PG_ARGISNULL(5)) ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("size must not be NULL")));
    run->rule.shingles = shingle_options(unit, PG_GETARG_INT32(5));
    run->keep_first = keep_first_argument(fcinfo, 6);
    run->limit = memory_limit_argument(fcinfo, 7);
    init_run_state(&run->state, fcinfo, kFunctionName);
    read_documents(run, query);
    rank_documents(run);
    if (run->n >= 2) {
        join_fingerprints(run, radius);
        decide(run);
        tuplesort_end(run->pairs);
    } else if (run->join_input.spill) {
        BufFileClose(run->join_input.spill);
    }
    if (run->texts) BufFileClose(run->texts);
    if (run->signatures) BufFileClose(run->signatures);
    return (Datum)0;
}
