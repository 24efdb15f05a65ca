// Bulk near-dedup load: simhash_insert_distinct(target, source, radius, action, fingerprint,
// mark_column, key_column, memory_limit) inserts the rows of a query into a table, in the query's
// order, except those within `radius` bits of a row of the table or of a row the same load
// inserted before them ('skip'), or inserts every row and points each near-duplicate at the row it
// duplicates ('mark'): what the simhash_dedup trigger does to an INSERT ... SELECT, a chunk of rows
// at a time instead of a row at a time.
//
//  1. Takes every neighbourhood lock of the table (load_locks.h: the trigger's keys, all of them,
//     without ever waiting while holding some), so no trigger load or other bulk load of the table
//     can insert a near-duplicate until this transaction ends.
//  2. Reads the source query through a cursor, a chunk at a time (memory_limit bounds a chunk).
//  3. Decides each row of the chunk in order: against the rows of the chunk kept before it (an
//     in-memory multi-index hash, core/block_buckets.h) and against the table through its simhash
//     index, under a snapshot taken after the previous chunk's INSERT (it sees the rows this load
//     inserted and every row committed before the locks were all held).
//  4. Inserts the chunk's kept rows with one INSERT ... SELECT FROM simhash_insert_distinct_rows()
//     prepared once: the target's defaults, triggers, constraints, generated columns, row security
//     and privileges apply as to any INSERT. The function hands that INSERT the chunk's kept rows.
//
// In REPEATABLE READ and SERIALIZABLE the check uses the transaction's snapshot and, where it finds
// nothing, looks again under the latest one: a near-duplicate committed since is a serialization
// failure (40001), as in the trigger.
//
// Every name in the INSERT's text is quoted and schema-qualified (the table, this extension's
// function, every column type), so the caller's search_path changes nothing in it; it runs as the
// caller, like the source query.
//
// Plain C-style code: no C++ object with a destructor is alive while PostgreSQL may raise.
#include "core/batch_pairs.h"
#include "core/block_buckets.h"
#include "core/counting_sort.h"
#include "am/simhash_am.h"
#include "batch_run.h"
#include "hamming_ball.h"
#include "load_locks.h"
#include "sql_arguments.h"  // includes guard.h

extern "C" {
#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/visibilitymap.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "parser/parse_coerce.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"
}

namespace {

constexpr const char *kFunctionName = "simhash_insert_distinct";
// Chunks: the first holds this many rows; later ones as many as half of memory_limit holds at the
// row size seen so far, within these bounds.
constexpr uint64 kFirstChunkRows = 64;
constexpr uint64 kMaxChunkRows = 1000000;
// Per row besides its tuple: its fingerprint, its match in the table, its pairs' sort entries and
// lists (or its links in the in-memory hash), its key ('mark') and slack.
constexpr double kRowOverheadBytes = 128;

enum class Action { kSkip, kMark };

// A row of the chunk kept (or, for 'mark', inserted) before the one being decided, as the
// in-memory check finds it: the kept rows are linked into a multi-index hash as they are kept
// (only they: a chunk of equal fingerprints keeps one row, and its searches find one), `kept_rows`
// maps a linked entry to its row in the chunk.
struct ChunkMatch {
    const uint64 *fingerprints;  // of the linked entries
    const uint32 *kept_rows;
    const bool *marked;          // by row
    uint64 center;
    bool found;
    uint32 best;      // 'mark': the first in original_order, ties to the earliest
    int best_distance;
    bool best_marked;
    bool want_best;
};

// One load. Plain data; lives in the function's memory context.
struct DistinctLoad {
    Oid relid;
    Relation target;
    Relation index;
    int radius;
    Action action;
    bool xact_snapshot;  // REPEATABLE READ or SERIALIZABLE
    AttrNumber fp_attnum, key_attnum, mark_attnum;  // in the target
    int fp_field, key_field, mark_field;           // in the stored rows (1-based; mark: 0 = none)
    TupleDesc source_desc;
    TupleDesc store_desc;  // the source's columns, and for 'mark' the mark column (of the key's type)
    int16 key_typlen;
    bool key_typbyval;
    // The chunk being decided and handed to the INSERT.
    MemoryContext chunk_context;
    Tuplestorestate *store;
    bool inserting;
    // Totals.
    uint64 read, inserted, skipped, marked;
};

// The load whose INSERT is running, for simhash_insert_distinct_rows(). Cleared when the memory it
// points to goes, whatever ends the call (an error included).
DistinctLoad *active_load = nullptr;

void forget_active_load(void *) { active_load = nullptr; }

[[noreturn]] void argument_error(int sqlstate, const char *message, const char *hint) {
    ereport(ERROR, (errcode(sqlstate), errmsg("%s: %s", kFunctionName, message), hint ? errhint("%s", hint) : 0));
    pg_unreachable();
}

const char *name_argument(FunctionCallInfo fcinfo, int arg) {
    return PG_ARGISNULL(arg) ? nullptr : NameStr(*PG_GETARG_NAME(arg));
}

AttrNumber target_column(Relation rel, const char *name, const char *role) {
    const AttrNumber attnum = get_attnum(RelationGetRelid(rel), name);
    if (attnum <= 0)
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_COLUMN),
                        errmsg("%s: %s column \"%s\" does not exist in table \"%s\"", kFunctionName, role, name,
                               RelationGetRelationName(rel))));
    return attnum;
}

// A usable simhash index on a plain column: valid, not partial, one key column. Its column, or 0.
AttrNumber simhash_index_column(Relation index) {
    const Form_pg_index form = index->rd_index;
    const bool usable = index->rd_indam->amgettuple == simhash_amgettuple && form->indnatts == 1 &&
                        form->indkey.values[0] != 0 && form->indisvalid && form->indisready && form->indislive &&
                        heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, nullptr);
    return usable ? form->indkey.values[0] : 0;
}

// The fingerprint column (named, or the one column with a simhash index) and the index the check
// scans. Opens the index (RowExclusiveLock: the INSERT writes into it).
void choose_fingerprint_and_index(DistinctLoad *load, const char *fingerprint) {
    Relation rel = load->target;
    load->fp_attnum = fingerprint ? target_column(rel, fingerprint, "fingerprint") : 0;
    List *indexes = RelationGetIndexList(rel);
    Oid chosen = InvalidOid;
    AttrNumber other_column = 0;
    ListCell *cell;
    foreach (cell, indexes) {
        Relation index = index_open(lfirst_oid(cell), AccessShareLock);
        const AttrNumber column = simhash_index_column(index);
        index_close(index, AccessShareLock);
        if (column == 0) continue;
        if (load->fp_attnum == 0 || load->fp_attnum == column) {
            if (!OidIsValid(chosen)) {
                chosen = lfirst_oid(cell);
                load->fp_attnum = column;
            }
        } else if (fingerprint == nullptr) {
            other_column = column;
        }
        if (fingerprint == nullptr && OidIsValid(chosen) && other_column != 0 && other_column != load->fp_attnum)
            ereport(ERROR, (errcode(ERRCODE_AMBIGUOUS_COLUMN),
                            errmsg("%s: table \"%s\" has simhash indexes on columns \"%s\" and \"%s\"", kFunctionName,
                                   RelationGetRelationName(rel), get_attname(load->relid, load->fp_attnum, false),
                                   get_attname(load->relid, other_column, false)),
                            errhint("Name the fingerprint column: fingerprint => 'column'.")));
    }
    list_free(indexes);
    if (!OidIsValid(chosen)) {
        if (fingerprint == nullptr)
            ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
                            errmsg("%s: table \"%s\" has no simhash index", kFunctionName, RelationGetRelationName(rel)),
                            errhint("The load checks rows through the index on the fingerprint column: CREATE INDEX "
                                    "ON %s USING simhash (fp), with fp the column.",
                                    RelationGetRelationName(rel))));
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
                        errmsg("%s: column \"%s\" of table \"%s\" has no simhash index", kFunctionName, fingerprint,
                               RelationGetRelationName(rel)),
                        errhint("The load checks rows through that index: CREATE INDEX ON %s USING simhash (%s).",
                                RelationGetRelationName(rel), quote_identifier(fingerprint))));
    }
    Form_pg_attribute fp = TupleDescAttr(RelationGetDescr(rel), load->fp_attnum - 1);
    if (fp->attgenerated)
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("%s: fingerprint column \"%s\" is a generated column", kFunctionName, NameStr(fp->attname)),
                        errdetail("Rows are checked before they are inserted, and PostgreSQL computes generated "
                                  "columns only as it inserts them."),
                        errhint("Compute the fingerprint in the source query into a plain column (SELECT ..., "
                                "minhash64(body) AS fp), or load with the simhash_dedup trigger, which computes it.")));
    load->index = index_open(chosen, RowExclusiveLock);
    // An index built in this transaction over broken HOT chains cannot be used by this snapshot yet.
    if (load->index->rd_index->indcheckxmin &&
        !TransactionIdPrecedes(HeapTupleHeaderGetXmin(load->index->rd_indextuple->t_data), TransactionXmin))
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("%s: simhash index \"%s\" cannot be used by this transaction yet", kFunctionName,
                               RelationGetRelationName(load->index)),
                        errhint("Commit the transaction that created it, then load.")));
}

// Citus keeps a distributed table's rows in shards on other nodes (or the coordinator's own
// shards): the table the function would read here holds none of them.
bool is_citus_table(Oid relid) {
    return simhash_citus_catalog_says(
        "SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_partition p WHERE p.logicalrelid OPERATOR(pg_catalog.=) $1)",
        relid, kFunctionName);
}

void check_target(DistinctLoad *load) {
    const char *name = get_rel_name(load->relid);
    if (name == nullptr)
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE), errmsg("relation with OID %u does not exist", load->relid)));
    const char relkind = get_rel_relkind(load->relid);
    if (relkind == RELKIND_PARTITIONED_TABLE)
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("%s: \"%s\" is a partitioned table", kFunctionName, name),
                        errdetail("Each partition has its own simhash index, and a row is checked against one table."),
                        errhint("Load each partition with its own call, or use the simhash_dedup trigger, which "
                                "deduplicates each partition on its own.")));
    if (relkind != RELKIND_RELATION)
        ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE), errmsg("%s: \"%s\" is not a table", kFunctionName, name)));
    // Taking every lock key of a table stalls every dedup load into it: only for those who may insert.
    if (pg_class_aclcheck(load->relid, GetUserId(), ACL_INSERT) != ACLCHECK_OK)
        ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE), errmsg("permission denied for table %s", name)));
    if (is_citus_table(load->relid))
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("%s: \"%s\" is a Citus table", kFunctionName, name),
                        errdetail("Its rows are in shards, which this function does not search."),
                        errhint("Load it through the coordinator with the simhash_dedup trigger on the shards and "
                                "the lock-then-check procedure (docs/scaling-out.md).")));
}

// Matches the source's columns to the target's by name and builds the stored rows' descriptor.
// Returns the target column of each stored field (palloc'd, natts entries).
AttrNumber *match_columns(DistinctLoad *load, const char *mark_column, const char *key_column) {
    TupleDesc source = load->source_desc;
    const Oid relid = load->relid;
    const int extra = load->action == Action::kMark ? 1 : 0;
    AttrNumber *columns = static_cast<AttrNumber *>(palloc0(sizeof(AttrNumber) * (source->natts + extra)));
    load->fp_field = load->key_field = load->mark_field = 0;
    for (int i = 0; i < source->natts; ++i) {
        Form_pg_attribute attr = TupleDescAttr(source, i);
        const char *name = NameStr(attr->attname);
        const AttrNumber attnum = get_attnum(relid, name);
        if (attnum <= 0)
            ereport(ERROR, (errcode(ERRCODE_UNDEFINED_COLUMN),
                            errmsg("%s: column \"%s\" of the source query does not exist in table \"%s\"", kFunctionName,
                                   name, get_rel_name(relid)),
                            errhint("Source columns are inserted into the target's columns of the same name: rename "
                                    "it (AS) or leave it out.")));
        for (int j = 0; j < i; ++j)
            if (columns[j] == attnum)
                ereport(ERROR, (errcode(ERRCODE_DUPLICATE_COLUMN),
                                errmsg("%s: the source query has two columns named \"%s\"", kFunctionName, name)));
        columns[i] = attnum;
        if (attnum == load->fp_attnum) load->fp_field = i + 1;
        if (attnum == load->key_attnum) load->key_field = i + 1;
        if (attnum == load->mark_attnum) load->mark_field = i + 1;
    }
    const char *fp_name = get_attname(relid, load->fp_attnum, false);
    if (load->fp_field == 0)
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_COLUMN),
                        errmsg("%s: the source query has no column \"%s\", the fingerprint", kFunctionName, fp_name),
                        errhint("Compute it in the query: SELECT ..., minhash64(body) AS %s.", quote_identifier(fp_name))));
    if (getBaseType(TupleDescAttr(source, load->fp_field - 1)->atttypid) != INT8OID)
        ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                        errmsg("%s: the source's fingerprint column \"%s\" is %s, not bigint", kFunctionName, fp_name,
                               format_type_be(TupleDescAttr(source, load->fp_field - 1)->atttypid)),
                        errhint("Cast it: %s::bigint.", quote_identifier(fp_name))));
    load->store_desc = CreateTupleDescCopy(source);
    if (load->action != Action::kMark) return columns;

    const Oid key_type = TupleDescAttr(RelationGetDescr(load->target), load->key_attnum - 1)->atttypid;
    if (load->key_field == 0)
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("%s: 'mark' needs the key column \"%s\" in the source query", kFunctionName, key_column),
                        errdetail("A row of the load is marked with the key of an earlier row of the same load, which "
                                  "must be known before that row is inserted."),
                        errhint("Give the key in the query, e.g. SELECT nextval('t_id_seq') AS id, ... for a serial key.")));
    if (TupleDescAttr(source, load->key_field - 1)->atttypid != key_type)
        ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                        errmsg("%s: the source's key column \"%s\" is %s, the table's is %s", kFunctionName, key_column,
                               format_type_be(TupleDescAttr(source, load->key_field - 1)->atttypid),
                               format_type_be(key_type)),
                        errhint("Cast it in the query to %s.", format_type_be(key_type))));
    const Oid mark_type = TupleDescAttr(RelationGetDescr(load->target), load->mark_attnum - 1)->atttypid;
    if (!can_coerce_type(1, &key_type, &mark_type, COERCION_ASSIGNMENT))
        ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                        errmsg("%s: mark column \"%s\" of type %s cannot hold key column \"%s\" of type %s", kFunctionName,
                               mark_column, format_type_be(mark_type), key_column, format_type_be(key_type))));
    // The mark goes into the stored rows as a value of the key's type (the INSERT assigns it to the
    // mark column); a mark column the source gives is replaced.
    TupleDesc desc = CreateTemplateTupleDesc(source->natts + (load->mark_field == 0 ? 1 : 0));
    for (int i = 0; i < source->natts; ++i) TupleDescCopyEntry(desc, i + 1, source, i + 1);
    if (load->mark_field == 0) {
        load->mark_field = desc->natts;
        columns[desc->natts - 1] = load->mark_attnum;
    }
    TupleDescInitEntry(desc, load->mark_field, mark_column, key_type, -1, 0);
    load->store_desc = desc;
    get_typlenbyval(key_type, &load->key_typlen, &load->key_typbyval);
    return columns;
}

// INSERT INTO target (columns) SELECT r.c1, ... FROM ext.simhash_insert_distinct_rows() AS r(c1 type, ...)
SPIPlanPtr prepare_insert(const DistinctLoad *load, const AttrNumber *columns, Oid function_oid) {
    StringInfoData sql;
    initStringInfo(&sql);
    appendStringInfo(&sql, "INSERT INTO %s (",
                     quote_qualified_identifier(get_namespace_name(RelationGetNamespace(load->target)),
                                                RelationGetRelationName(load->target)));
    TupleDesc desc = load->store_desc;
    for (int i = 0; i < desc->natts; ++i)
        appendStringInfo(&sql, "%s%s", i ? ", " : "", quote_identifier(get_attname(load->relid, columns[i], false)));
    appendStringInfoString(&sql, ") SELECT ");
    for (int i = 0; i < desc->natts; ++i) appendStringInfo(&sql, "%sr.c%d", i ? ", " : "", i + 1);
    appendStringInfo(&sql, " FROM %s.simhash_insert_distinct_rows() AS r(",
                     quote_identifier(get_namespace_name(get_func_namespace(function_oid))));
    for (int i = 0; i < desc->natts; ++i) {
        Form_pg_attribute attr = TupleDescAttr(desc, i);
        appendStringInfo(&sql, "%sc%d %s", i ? ", " : "", i + 1,
                         format_type_extended(attr->atttypid, attr->atttypmod,
                                              FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY));
    }
    appendStringInfoChar(&sql, ')');
    SPIPlanPtr plan = SPI_prepare(sql.data, 0, nullptr);
    if (plan == nullptr) elog(ERROR, "%s: could not prepare the insert: %s", kFunctionName, SPI_result_code_string(SPI_result));
    return plan;
}

// The order of the rows a 'mark' row may point at: one not marked itself first, then the nearest.
// Negative when (marked, distance) comes before (other_marked, other_distance), 0 when as good.
int original_order(bool marked, int distance, bool other_marked, int other_distance) {
    if (marked != other_marked) return marked ? 1 : -1;
    return distance - other_distance;
}

// Row `row` of the chunk, kept before the one being decided, is within the radius: found, and for
// 'mark' the best so far if it ranks before it (ties to the earlier row).
void chunk_row_found(ChunkMatch *m, uint32 row, uint64 fingerprint, bool marked) {
    m->found = true;
    if (!m->want_best) return;
    const int distance = simhash::hamming_distance(fingerprint, m->center);
    const int order = m->best == UINT32_MAX ? -1 : original_order(marked, distance, m->best_marked, m->best_distance);
    if (order < 0 || (order == 0 && row < m->best)) {
        m->best = row;
        m->best_distance = distance;
        m->best_marked = marked;
    }
}

void visit_chunk_row(uint32_t i, void *context) {
    ChunkMatch *m = static_cast<ChunkMatch *>(context);
    const uint32 row = m->kept_rows[i];
    chunk_row_found(m, row, m->fingerprints[i], m->marked[row]);
}

// The nearest row of the table within the radius as 'mark' wants it (not marked itself first, then
// by distance, then by TID), or for 'skip' any row: found, and its key copied into the chunk's
// context.
struct TableMatch {
    bool found;
    bool all_visible;  // found through the visibility map alone (see match_candidates)
    bool marked;
    int distance;
    ItemPointerData tid;
    Datum key;
    bool key_null;
};

// Index entries within the radius of a row of the chunk: (row, heap TID), in no order.
struct Candidate {
    ItemPointerData tid;
    uint32 row;
};
struct Candidates {
    Candidate *items;
    Size n, capacity;
    MemoryContext context;
    const uint32 *rows;  // the chunk's row of each searched center, or null: the center is the row
};

void collect_candidate(void *context, Size center, ItemPointer tid) {
    Candidates *c = static_cast<Candidates *>(context);
    if (c->n == c->capacity) {
        c->capacity = Max(c->capacity * 2, Size{1024});
        const Size bytes = c->capacity * sizeof(Candidate);
        c->items = static_cast<Candidate *>(c->items ? repalloc_huge(c->items, bytes)
                                                     : MemoryContextAllocHuge(c->context, bytes));
    }
    c->items[c->n].tid = *tid;
    c->items[c->n].row = c->rows ? c->rows[center] : static_cast<uint32>(center);
    c->n++;
}

int compare_candidates(const void *a, const void *b) {
    return ItemPointerCompare(const_cast<ItemPointer>(&static_cast<const Candidate *>(a)->tid),
                              const_cast<ItemPointer>(&static_cast<const Candidate *>(b)->tid));
}

// Fetches the candidates' heap rows (in TID order) and fills matches[row] with what `snapshot`
// sees of them: for 'skip' whether any row within the radius is visible, for 'mark' the best one.
// Rows whose `skip_rows` flag is set are left alone.
//
// With `all_visible_pages` ('skip' into a heap table) a candidate on a page the visibility map
// marks all-visible is taken as visible without reading the page, as an index-only scan does: the
// index gave its fingerprint, and every tuple of such a page is visible to any snapshot this
// backend holds (VACUUM sets the bit only for tuples older than every running snapshot's xmin, and
// any later change to the page clears it). What an index-only scan gets from holding its index
// page pinned, that VACUUM cannot mark the entry dead and let the heap reuse its TID meanwhile,
// the caller checks afterwards: the index's list epoch, which every VACUUM's marking advances
// before the heap may reuse a TID, must be unchanged since before the search; if not, the rows
// found this way are checked again on the heap.
void match_candidates(DistinctLoad *load, const Candidates *c, const int64 *fps, Snapshot snapshot,
                      const bool *skip_rows, bool all_visible_pages, TableMatch *matches) {
    IndexFetchTableData *fetch = table_index_fetch_begin(load->target);
    TupleTableSlot *slot = table_slot_create(load->target, nullptr);
    const bool want_best = load->action == Action::kMark;
    Buffer vm_buffer = InvalidBuffer;
    for (Size i = 0; i < c->n; ++i) {
        if ((i & 1023) == 1023) CHECK_FOR_INTERRUPTS();
        const uint32 row = c->items[i].row;
        TableMatch *out = &matches[row];
        if ((skip_rows && skip_rows[row]) || (out->found && !want_best)) continue;
        ItemPointerData tid = c->items[i].tid;
        if (all_visible_pages && VM_ALL_VISIBLE(load->target, ItemPointerGetBlockNumber(&tid), &vm_buffer)) {
            out->found = true;
            out->all_visible = true;
            out->tid = tid;
            continue;
        }
        bool call_again = false, all_dead = false;
        if (!table_index_fetch_tuple(fetch, &tid, snapshot, slot, &call_again, &all_dead)) continue;
        bool isnull;
        const int64 other = DatumGetInt64(slot_getattr(slot, load->fp_attnum, &isnull));
        if (isnull) continue;
        const int distance = simhash_distance(fps[row], other);
        if (distance > load->radius) continue;  // a HOT chain's visible member need not be the entry's
        bool marked = false;
        if (want_best) {
            (void)slot_getattr(slot, load->mark_attnum, &isnull);
            marked = !isnull;
        }
        const int order = out->found ? original_order(marked, distance, out->marked, out->distance) : -1;
        if (order > 0 || (order == 0 && ItemPointerCompare(&slot->tts_tid, &out->tid) >= 0)) continue;
        out->found = true;
        out->marked = marked;
        out->distance = distance;
        out->tid = slot->tts_tid;
        if (want_best) {
            const Datum key = slot_getattr(slot, load->key_attnum, &out->key_null);
            MemoryContext old = MemoryContextSwitchTo(load->chunk_context);
            out->key = out->key_null ? (Datum)0 : datumCopy(key, load->key_typbyval, load->key_typlen);
            MemoryContextSwitchTo(old);
        }
    }
    if (BufferIsValid(vm_buffer)) ReleaseBuffer(vm_buffer);
    ExecDropSingleTupleTableSlot(slot);
    table_index_fetch_end(fetch);
}

// The index's list epoch (see match_candidates).
uint32 list_epoch(Relation index) {
    SimhashMetaData *meta = static_cast<SimhashMetaData *>(palloc(sizeof(SimhashMetaData)));
    simhash_read_meta(index, meta);
    const uint32 epoch = meta->pending_epoch;
    pfree(meta);
    return epoch;
}

[[noreturn]] void serialization_failure(const DistinctLoad *load) {
    ereport(ERROR, (errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
                    errmsg("could not serialize access due to a concurrent insert of a near-duplicate"),
                    errdetail("%s: a row of table \"%s\" committed after this transaction's snapshot lies within %d "
                              "bits of a row of the load.",
                              kFunctionName, RelationGetRelationName(load->target), load->radius),
                    errhint("Retry the transaction.")));
    pg_unreachable();
}

// The pairs of a chunk within the radius, from batch_pairs: for each row, the earlier rows near it
// (earlier[first[j] .. first[j + 1]) for row j), built from the pairs as they come.
struct ChunkPairs {
    uint32 *pairs;  // (i, j) flattened
    Size n, capacity;
    MemoryContext context;
};

void collect_pair(uint32_t i, uint32_t j, void *context) {
    ChunkPairs *p = static_cast<ChunkPairs *>(context);
    if (p->n == p->capacity) {
        p->capacity = Max(p->capacity * 2, Size{1024});
        const Size bytes = p->capacity * 2 * sizeof(uint32);
        p->pairs = static_cast<uint32 *>(p->pairs ? repalloc_huge(p->pairs, bytes) : MemoryContextAllocHuge(p->context, bytes));
    }
    p->pairs[2 * p->n] = i;
    p->pairs[2 * p->n + 1] = j;
    p->n++;
}

// Comparisons a chunk's pairs may cost per row before the in-memory hash is used instead (a chunk
// of many equal fingerprints would make them quadratic).
constexpr double kMaxPairComparisonsPerRow = 64;
// Rows of a chunk whose bits choose the bit order of its in-memory search.
constexpr uint64 kBitSample = 65536;

// Decides the rows of one chunk and puts the ones to insert into load->store, in order: first
// every row against the table (one batch search of the index, then the heap rows of its
// candidates), then row by row against the rows of the chunk kept before it.
void decide_chunk(DistinctLoad *load, SPITupleTable *rows, uint64 n) {
    TupleDesc source = load->source_desc;
    MemoryContext old = MemoryContextSwitchTo(load->chunk_context);
    int64 *fps = static_cast<int64 *>(palloc_extended(sizeof(int64) * n, MCXT_ALLOC_HUGE));
    TableMatch *matches = static_cast<TableMatch *>(palloc_extended(sizeof(TableMatch) * n, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO));
    bool *marked = static_cast<bool *>(palloc_extended(sizeof(bool) * n, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO));
    Datum *keys = load->action == Action::kMark ? static_cast<Datum *>(palloc_extended(sizeof(Datum) * n, MCXT_ALLOC_HUGE)) : nullptr;
    MemoryContextSwitchTo(old);

    for (uint64 r = 0; r < n; ++r) {
        bool isnull;
        fps[r] = DatumGetInt64(heap_getattr(rows->vals[r], load->fp_field, source, &isnull));
        if (isnull)
            ereport(ERROR, (errcode(ERRCODE_NOT_NULL_VIOLATION),
                            errmsg("%s: the source query returned a NULL fingerprint in column \"%s\"", kFunctionName,
                                   NameStr(TupleDescAttr(source, load->fp_field - 1)->attname)),
                            errdetail("A row without a fingerprint cannot be checked."),
                            errhint("Filter such rows out (WHERE fp IS NOT NULL), or insert them apart.")));
    }

    // The check's snapshot: sees the rows the previous chunks inserted.
    CommandCounterIncrement();
    if (load->xact_snapshot)
        PushActiveSnapshot(GetTransactionSnapshot());
    else
        PushCopiedSnapshot(GetLatestSnapshot());
    UpdateActiveSnapshotCommandId();
    // For 'skip' one visible row within the radius decides a row: the search stops looking for a
    // row once it has a candidate, and looks again, in full, for the rows whose candidates all
    // turn out invisible (deleted rows, rows of aborted loads).
    const bool one_each = load->action == Action::kSkip;
    uint8 *have = one_each ? static_cast<uint8 *>(MemoryContextAllocZero(load->chunk_context, n)) : nullptr;
    // 'skip' into a heap table takes candidates on all-visible pages from the visibility map.
    const bool all_visible_pages = one_each && load->target->rd_tableam == GetHeapamTableAmRoutine();
    const uint32 epoch = all_visible_pages ? list_epoch(load->index) : 0;
    Candidates candidates = {nullptr, 0, 0, load->chunk_context, nullptr};
    simhash_search_batch(load->index, fps, n, load->radius, collect_candidate, &candidates, have);
    if (candidates.n > 1) qsort(candidates.items, candidates.n, sizeof(Candidate), compare_candidates);
    match_candidates(load, &candidates, fps, GetActiveSnapshot(), nullptr, all_visible_pages, matches);
    if (all_visible_pages && list_epoch(load->index) != epoch) {
        // A VACUUM (or a merge) came between: the rows found through the visibility map are
        // checked again on the heap.
        bool *others = static_cast<bool *>(MemoryContextAlloc(load->chunk_context, sizeof(bool) * n));
        for (uint64 r = 0; r < n; ++r) {
            others[r] = !matches[r].all_visible;
            if (matches[r].all_visible) matches[r] = TableMatch{};
        }
        match_candidates(load, &candidates, fps, GetActiveSnapshot(), others, false, matches);
    }
    Candidates again = {nullptr, 0, 0, load->chunk_context, nullptr};
    if (one_each) {
        uint32 *rows_again = static_cast<uint32 *>(MemoryContextAllocHuge(load->chunk_context, sizeof(uint32) * n));
        int64 *fps_again = static_cast<int64 *>(MemoryContextAllocHuge(load->chunk_context, sizeof(int64) * n));
        Size nagain = 0;
        for (uint64 r = 0; r < n; ++r)
            if (have[r] && !matches[r].found) {
                rows_again[nagain] = static_cast<uint32>(r);
                fps_again[nagain++] = fps[r];
            }
        again.rows = rows_again;
        simhash_search_batch(load->index, fps_again, nagain, load->radius, collect_candidate, &again, nullptr);
        if (again.n > 1) qsort(again.items, again.n, sizeof(Candidate), compare_candidates);
        match_candidates(load, &again, fps, GetActiveSnapshot(), nullptr, false, matches);
    }
    if (load->xact_snapshot) {
        // What the transaction's snapshot does not see may have been committed since: a row that
        // the latest snapshot finds a near-duplicate for could not be checked in this transaction.
        TableMatch *newer = static_cast<TableMatch *>(MemoryContextAllocZero(load->chunk_context, sizeof(TableMatch) * n));
        bool *seen = static_cast<bool *>(MemoryContextAlloc(load->chunk_context, sizeof(bool) * n));
        for (uint64 r = 0; r < n; ++r) seen[r] = matches[r].found;
        Snapshot latest = RegisterSnapshot(GetLatestSnapshot());
        match_candidates(load, &candidates, fps, latest, seen, false, newer);
        match_candidates(load, &again, fps, latest, seen, false, newer);
        UnregisterSnapshot(latest);
        for (uint64 r = 0; r < n; ++r)
            if (newer[r].found) serialization_failure(load);
    }
    PopActiveSnapshot();

    // Against the chunk's earlier rows: up to radius 3, the chunk's pairs found at once by sorting
    // it on each block (cache-friendly at any chunk size); otherwise, or when block values are too
    // concentrated for that, a multi-index hash of the kept rows, searched row by row. Either way
    // blocks are cut in a bit order chosen from the chunk (skewed bits spread over the blocks, as a
    // run of the index does).
    simhash::BitCounts counts;
    simhash::bit_counts_clear(&counts);
    // The bits' statistics from an even sample of the chunk (as a run's writer samples its entries).
    const uint64 step = Max(uint64{1}, n / kBitSample);
    for (uint64 r = 0; r < n; r += step) simhash::bit_counts_add(&counts, static_cast<uint64>(fps[r]));
    const int lengths[simhash::kBucketBlocks] = {16, 16, 16, 16};
    simhash::BitPermutation order;
    const simhash::BitPermuter *permuter =
        simhash::choose_bit_permutation(counts, lengths, simhash::kBucketBlocks, &order) ? simhash_new_permuter(order) : nullptr;
    const uint64 *fingerprints = reinterpret_cast<const uint64 *>(fps);
    uint32 *earlier_first = nullptr;
    uint32 *earlier = nullptr;
    if (load->radius <= simhash::kBatchPairsMaxRadius) {
        // With 'skip' a row found in the table is skipped, and a skipped row is no later row's
        // earlier kept row: the pairs are sought among the other rows only (pair_rows maps them
        // back).
        const uint64 *pair_fps = fingerprints;
        uint32 *pair_rows = nullptr;
        uint64 npair = n;
        if (load->action == Action::kSkip) {
            pair_rows = static_cast<uint32 *>(MemoryContextAllocHuge(load->chunk_context, sizeof(uint32) * Max(n, uint64{1})));
            uint64 *compact = static_cast<uint64 *>(MemoryContextAllocHuge(load->chunk_context, sizeof(uint64) * Max(n, uint64{1})));
            npair = 0;
            for (uint64 r = 0; r < n; ++r)
                if (!matches[r].found) {
                    pair_rows[npair] = static_cast<uint32>(r);
                    compact[npair++] = fingerprints[r];
                }
            pair_fps = compact;
        }
        void *scratch = MemoryContextAllocHuge(load->chunk_context, simhash::batch_pairs_bytes(npair));
        if (simhash::batch_pairs_comparisons(pair_fps, npair, permuter, scratch) <= kMaxPairComparisonsPerRow * npair) {
            ChunkPairs pairs = {nullptr, 0, 0, load->chunk_context};
            simhash::batch_pairs(pair_fps, npair, load->radius, permuter, scratch, collect_pair, &pairs);
            if (pair_rows != nullptr)
                for (Size p = 0; p < 2 * pairs.n; ++p) pairs.pairs[p] = pair_rows[pairs.pairs[p]];
            earlier_first = static_cast<uint32 *>(MemoryContextAllocHuge(load->chunk_context, sizeof(uint32) * (n + 1)));
            earlier = static_cast<uint32 *>(MemoryContextAllocHuge(load->chunk_context, sizeof(uint32) * Max(pairs.n, Size{1})));
            // The pairs (i, j) grouped by their later row j.
            simhash::counting_sort(
                pairs.n, n, earlier_first, [&](Size p) { return pairs.pairs[2 * p + 1]; },
                [&](Size p, uint32 at) { earlier[at] = pairs.pairs[2 * p]; });
        }
        pfree(scratch);
    }
    simhash::BlockBuckets buckets;
    uint64 *kept_fps = nullptr;
    uint32 *kept_rows = nullptr;
    if (earlier == nullptr) {
        const int bucket_bits = simhash::block_buckets_bits_for(n);
        void *bucket_memory = MemoryContextAllocHuge(load->chunk_context, simhash::block_buckets_bytes(bucket_bits, n));
        simhash::block_buckets_init(&buckets, bucket_memory, bucket_bits, n, permuter);
        kept_fps = static_cast<uint64 *>(MemoryContextAllocHuge(load->chunk_context, sizeof(uint64) * n));
        kept_rows = static_cast<uint32 *>(MemoryContextAllocHuge(load->chunk_context, sizeof(uint32) * n));
    }
    bool *kept = static_cast<bool *>(MemoryContextAllocZero(load->chunk_context, sizeof(bool) * n));
    // The earlier rows of the chunk near row r that were kept: through its pairs or the hash.
    auto search_chunk = [&](uint64 r, ChunkMatch *m) {
        if (earlier == nullptr) {
            simhash::block_buckets_search(&buckets, kept_fps, m->center, load->radius, visit_chunk_row, m);
            return;
        }
        for (uint32 e = earlier_first[r]; e < earlier_first[r + 1]; ++e) {
            const uint32 i = earlier[e];
            if (!kept[i]) continue;
            chunk_row_found(m, i, fingerprints[i], marked[i]);
            if (!m->want_best) return;
        }
    };

    Datum *values = nullptr;
    bool *nulls = nullptr;
    if (load->action == Action::kMark) {
        values = static_cast<Datum *>(palloc(sizeof(Datum) * load->store_desc->natts));
        nulls = static_cast<bool *>(palloc(sizeof(bool) * load->store_desc->natts));
    }
    // Rows searched in memory ask for their bucket lines kLookAhead rows ahead.
    constexpr uint64 kLookAhead = 8;
    for (uint64 r = 0; r < n; ++r) {
        if ((r & 1023) == 1023) CHECK_FOR_INTERRUPTS();
        if (earlier == nullptr && r + kLookAhead < n && !matches[r + kLookAhead].found)
            simhash::block_buckets_prefetch(&buckets, static_cast<uint64>(fps[r + kLookAhead]), load->radius);
        HeapTuple tuple = rows->vals[r];
        const TableMatch &in_table = matches[r];
        ChunkMatch in_chunk = {kept_fps, kept_rows, marked, static_cast<uint64>(fps[r]), false,
                               UINT32_MAX, 0, false, load->action == Action::kMark};
        if (load->action == Action::kSkip) {
            if (!in_table.found) search_chunk(r, &in_chunk);
            if (in_chunk.found || in_table.found) {
                ++load->skipped;
                continue;
            }
            tuplestore_puttuple(load->store, tuple);
        } else {
            search_chunk(r, &in_chunk);
            heap_deform_tuple(tuple, source, values, nulls);
            // Prefer the table's row where it is as good (not marked, as near): it was there first.
            const bool from_table =
                in_table.found && (!in_chunk.found || original_order(in_table.marked, in_table.distance,
                                                                     in_chunk.best_marked, in_chunk.best_distance) <= 0);
            const int mark = load->mark_field - 1;
            if (from_table) {
                values[mark] = in_table.key;
                nulls[mark] = in_table.key_null;
            } else if (in_chunk.found) {
                values[mark] = keys[in_chunk.best];
                nulls[mark] = false;
            } else {
                values[mark] = (Datum)0;
                nulls[mark] = true;
            }
            if (!nulls[mark]) ++load->marked;
            HeapTuple stored = heap_form_tuple(load->store_desc, values, nulls);
            tuplestore_puttuple(load->store, stored);
            heap_freetuple(stored);
            bool key_null;
            const Datum key = heap_getattr(tuple, load->key_field, source, &key_null);
            MemoryContext previous = MemoryContextSwitchTo(load->chunk_context);
            keys[r] = key_null ? (Datum)0 : datumCopy(key, load->key_typbyval, load->key_typlen);
            MemoryContextSwitchTo(previous);
            marked[r] = !nulls[mark];
        }
        kept[r] = true;
        if (earlier == nullptr) {
            kept_rows[buckets.n] = static_cast<uint32>(r);
            kept_fps[buckets.n] = static_cast<uint64>(fps[r]);
            simhash::block_buckets_link(&buckets, kept_fps, buckets.n + 1);
        }
    }
}

void report_progress(DistinctLoad *load, TimestampTz started, TimestampTz *last_notice) {
    const int seconds = batch::progress_notice_seconds();
    if (seconds <= 0) return;
    const TimestampTz now = GetCurrentTimestamp();
    if (!TimestampDifferenceExceeds(*last_notice, now, seconds * 1000)) return;
    *last_notice = now;
    long secs;
    int usecs;
    TimestampDifference(started, now, &secs, &usecs);
    ereport(NOTICE, (errmsg("%s: %llu rows read, %llu inserted, %llu %s after %ld s", kFunctionName,
                            static_cast<unsigned long long>(load->read), static_cast<unsigned long long>(load->inserted),
                            static_cast<unsigned long long>(load->action == Action::kMark ? load->marked : load->skipped),
                            load->action == Action::kMark ? "marked" : "skipped", secs)));
}

}  // namespace

// simhash_insert_distinct(target regclass, source text, radius integer, action text DEFAULT 'skip',
//                         fingerprint name DEFAULT NULL, mark_column name DEFAULT NULL,
//                         key_column name DEFAULT 'id', memory_limit text DEFAULT NULL)
//   (OUT inserted bigint, OUT skipped bigint, OUT marked bigint)
SIMHASH_FUNCTION(simhash_insert_distinct) {
    if (PG_ARGISNULL(0)) argument_error(ERRCODE_NULL_VALUE_NOT_ALLOWED, "target must not be NULL", nullptr);
    if (PG_ARGISNULL(1)) argument_error(ERRCODE_NULL_VALUE_NOT_ALLOWED, "source must not be NULL", nullptr);
    DistinctLoad *load = static_cast<DistinctLoad *>(palloc0(sizeof(DistinctLoad)));
    load->relid = PG_GETARG_OID(0);
    const char *source = text_to_cstring(PG_GETARG_TEXT_PP(1));
    load->radius = radius_argument(fcinfo, 2);
    const char *action = PG_ARGISNULL(3) ? "skip" : text_to_cstring(PG_GETARG_TEXT_PP(3));
    if (strcmp(action, "skip") == 0)
        load->action = Action::kSkip;
    else if (strcmp(action, "mark") == 0)
        load->action = Action::kMark;
    else
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s: action must be 'skip' or 'mark', not \"%s\"", kFunctionName, action)));
    const char *fingerprint = name_argument(fcinfo, 4);
    const char *mark_column = name_argument(fcinfo, 5);
    const char *key_column = PG_ARGISNULL(6) ? "id" : name_argument(fcinfo, 6);
    const size_t memory_limit = batch::memory_limit_argument(fcinfo, 7);
    if (load->action == Action::kMark && mark_column == nullptr)
        argument_error(ERRCODE_INVALID_PARAMETER_VALUE, "'mark' needs mark_column",
                       "Name the column that receives the key of the row each near-duplicate duplicates.");
    if (load->action == Action::kSkip && mark_column != nullptr)
        argument_error(ERRCODE_INVALID_PARAMETER_VALUE, "mark_column is for action 'mark'", nullptr);
    if (active_load != nullptr)
        argument_error(ERRCODE_FEATURE_NOT_SUPPORTED, "cannot be called while another load of this session runs",
                       nullptr);

    check_target(load);
    load->target = table_open(load->relid, RowExclusiveLock);
    choose_fingerprint_and_index(load, fingerprint);
    if (load->action == Action::kMark) {
        load->mark_attnum = target_column(load->target, mark_column, "mark");
        load->key_attnum = target_column(load->target, key_column, "key");
        if (load->mark_attnum == load->fp_attnum || load->mark_attnum == load->key_attnum)
            argument_error(ERRCODE_INVALID_PARAMETER_VALUE, "the mark column must be neither the fingerprint nor the key",
                           nullptr);
        Form_pg_attribute mark = TupleDescAttr(RelationGetDescr(load->target), load->mark_attnum - 1);
        if (mark->attgenerated)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                            errmsg("%s: mark column \"%s\" is a generated column", kFunctionName, mark_column)));
        // The marks hand the loader the keys of rows it may not otherwise read.
        if (pg_class_aclcheck(load->relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK &&
            pg_attribute_aclcheck(load->relid, load->key_attnum, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
            ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                            errmsg("permission denied for column \"%s\" of table %s", key_column,
                                   RelationGetRelationName(load->target)),
                            errdetail("'mark' writes the keys of stored rows into the loaded ones.")));
    }
    load->xact_snapshot = IsolationUsesXactSnapshot();

    // Every near-duplicate another loader inserts from here on waits for this transaction.
    simhash_lock_every_neighbourhood(load->relid);

    Portal portal = batch::open_query_cursor(kFunctionName, source, "whose columns are named as the target's");
    load->source_desc = CreateTupleDescCopy(portal->tupDesc);
    const AttrNumber *columns = match_columns(load, mark_column, key_column);
    SPIPlanPtr insert = prepare_insert(load, columns, fcinfo->flinfo->fn_oid);

    // active_load is cleared when this context goes: at the end, or when an error aborts the call.
    MemoryContext load_context = AllocSetContextCreate(CurrentMemoryContext, "simhash_insert_distinct", ALLOCSET_SMALL_SIZES);
    MemoryContextCallback *forget = static_cast<MemoryContextCallback *>(MemoryContextAlloc(load_context, sizeof(MemoryContextCallback)));
    forget->func = forget_active_load;
    forget->arg = nullptr;
    MemoryContextRegisterResetCallback(load_context, forget);
    load->chunk_context = AllocSetContextCreate(load_context, "simhash_insert_distinct chunk", ALLOCSET_DEFAULT_SIZES);
    active_load = load;

    const TimestampTz started = GetCurrentTimestamp();
    TimestampTz last_notice = started;
    uint64 chunk_rows = kFirstChunkRows;
    for (;;) {
        SPI_cursor_fetch(portal, true, static_cast<long>(chunk_rows));
        SPITupleTable *rows = SPI_tuptable;
        const uint64 n = SPI_processed;
        if (n == 0) break;
        load->read += n;
        double bytes = 0;
        for (uint64 r = 0; r < n; ++r) bytes += rows->vals[r]->t_len + kRowOverheadBytes;
        // The kept rows stay in memory like the chunk they come from (its half of memory_limit):
        // at work_mem a chunk of documents would go through a temporary file.
        load->store = tuplestore_begin_heap(false, false, static_cast<int>(Max(static_cast<size_t>(work_mem), memory_limit / 2048)));
        decide_chunk(load, rows, n);
        SPI_freetuptable(rows);
        load->inserting = true;
        const int rc = SPI_execute_plan(insert, nullptr, nullptr, false, 0);
        load->inserting = false;
        if (rc != SPI_OK_INSERT) elog(ERROR, "%s: the insert failed: %s", kFunctionName, SPI_result_code_string(rc));
        load->inserted += SPI_processed;
        if (load->store != nullptr) tuplestore_end(load->store);  // not handed over: nothing was kept
        load->store = nullptr;
        MemoryContextReset(load->chunk_context);
        report_progress(load, started, &last_notice);
        chunk_rows = static_cast<uint64>(Max(1.0, Min(static_cast<double>(kMaxChunkRows), memory_limit / 2.0 / (bytes / n))));
    }
    MemoryContextDelete(load_context);
    SPI_cursor_close(portal);
    SPI_finish();
    index_close(load->index, NoLock);
    table_close(load->target, NoLock);

    TupleDesc result_desc;
    if (get_call_result_type(fcinfo, nullptr, &result_desc) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "%s: return type must be a row type", kFunctionName);
    Datum values[3] = {Int64GetDatum(static_cast<int64>(load->inserted)), Int64GetDatum(static_cast<int64>(load->skipped)),
                       Int64GetDatum(static_cast<int64>(load->marked))};
    bool nulls[3] = {false, false, false};
    PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(result_desc), values, nulls)));
}

// simhash_insert_distinct_rows() RETURNS SETOF record: the rows a running simhash_insert_distinct
// hands its INSERT. Nothing to anyone else.
SIMHASH_FUNCTION(simhash_insert_distinct_rows) {
    DistinctLoad *load = active_load;
    if (load == nullptr || !load->inserting || load->store == nullptr)
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("simhash_insert_distinct_rows() is called only by simhash_insert_distinct")));
    ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
    if (rsinfo == nullptr || !IsA(rsinfo, ReturnSetInfo) || !(rsinfo->allowedModes & SFRM_Materialize) ||
        rsinfo->expectedDesc == nullptr)
        elog(ERROR, "simhash_insert_distinct_rows: called in a context that does not take a materialized set");
    rsinfo->returnMode = SFRM_Materialize;
    rsinfo->setResult = load->store;  // the executor ends it
    // The executor frees a descriptor it was handed: a copy, in the query's memory.
    MemoryContext old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
    rsinfo->setDesc = CreateTupleDescCopy(rsinfo->expectedDesc);
    MemoryContextSwitchTo(old);
    load->store = nullptr;
    return (Datum)0;
}
