// The access method handler, reloptions, and the page/metapage/geometry helpers.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <new>

#include "am/simhash_am.h"
#include "core/blocks.h"
#include "guard.h"
#include "module.h"

extern "C" {
#include "access/xlog.h"
#include "access/reloptions.h"
#include "common/pg_prng.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/indexfsm.h"
#include "optimizer/optimizer.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
#include "utils/selfuncs.h"
}

namespace {

relopt_kind simhash_relopt_kind;
relopt_parse_elt simhash_relopt_table[2];

bytea *simhash_amoptions(Datum reloptions, bool validate) {
    return static_cast<bytea *>(build_reloptions(reloptions, validate, simhash_relopt_kind, sizeof(SimhashOptions),
                                                 simhash_relopt_table, lengthof(simhash_relopt_table)));
}

// Fields that later releases add to relopt_parse_elt (isset_offset in PostgreSQL 18) stay zero.
relopt_parse_elt parse_option(const char *name, relopt_type type, int offset) {
    relopt_parse_elt option = {};
    option.optname = name;
    option.opttype = type;
    option.offset = offset;
    return option;
}

// A stored tables option: "auto", or a count of tables; 0 for "auto", -1 for anything else. White
// space around either and the case of "auto" are ignored: releases before 0.4.0 stored such values
// as given (validate_tables now refuses them, and the update to 0.4.0 rewrites them).
int parse_tables(const char *value) {
    if (value == nullptr) return SIMHASH_AUTO_TABLES;
    while (isspace(static_cast<unsigned char>(*value))) ++value;
    size_t len = strlen(value);
    while (len > 0 && isspace(static_cast<unsigned char>(value[len - 1]))) --len;
    if (len == 4 && pg_strncasecmp(value, "auto", 4) == 0) return SIMHASH_AUTO_TABLES;
    char *end = nullptr;
    errno = 0;
    const long count = strtol(value, &end, 10);
    if (errno != 0 || end == value || end != value + len || count < SIMHASH_MIN_TABLES || count > SIMHASH_MAX_TABLES)
        return -1;
    return static_cast<int>(count);
}

// Called by the reloptions code (PostgreSQL's, not ours) on every value given for "tables". The
// value is stored as given and shown as given (pg_class.reloptions, pg_dump), so only the forms
// that say exactly what is meant are taken: "auto", or a count written as a plain number.
void validate_tables(const char *value) {
    const int tables = parse_tables(value);
    char canonical[16] = "auto";
    if (tables > 0) snprintf(canonical, sizeof(canonical), "%d", tables);
    if (tables < 0 || strcmp(value, canonical) != 0)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("invalid value for simhash option \"tables\": \"%s\"", value),
                        errdetail("Valid values are \"auto\" (the default: chosen for each run from its size) and "
                                  "the integers from %d to %d.",
                                  SIMHASH_MIN_TABLES, SIMHASH_MAX_TABLES),
                        tables >= 0 ? errhint("Write it as %s: WITH (tables = %s).", canonical, canonical) : 0));
}

char *simhash_ambuildphasename(int64 phasenum) {
    switch (phasenum) {
        case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE: return const_cast<char *>("initializing");
        case SIMHASH_PHASE_LOAD: return const_cast<char *>("loading fingerprints");
        case SIMHASH_PHASE_WRITE: return const_cast<char *>("writing sorted tables");
        default: return nullptr;
    }
}

}  // namespace

int simhash_max_probes = -1;
int simhash_debug_merge_crash_step = 0;
int simhash_debug_pause_lock = 0;

void simhash_debug_pause() {
    if (simhash_debug_pause_lock == 0) return;
    // The tag pg_advisory_lock(bigint) takes for a key below 2^32; ShareLock waits for its
    // ExclusiveLock (lock_timeout and cancels apply) and is let go at once.
    LOCKTAG tag;
    SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, 0, static_cast<uint32>(simhash_debug_pause_lock), 1);
    (void)LockAcquire(&tag, ShareLock, false, false);
    LockRelease(&tag, ShareLock, false);
}

void simhash_am_init(void) {
    simhash_relopt_kind = add_reloption_kind();
    add_string_reloption(simhash_relopt_kind, "tables",
                         "Number of permuted block tables (the 64 bits are split into this many blocks), or auto: "
                         "chosen for each sorted run from its number of entries",
                         "auto", validate_tables, AccessExclusiveLock);
    add_int_reloption(simhash_relopt_kind, "pending_limit",
                      "Size in kB of the unsorted insert area above which an insert writes it out as a sorted run",
                      SIMHASH_DEFAULT_PENDING_LIMIT, 64, MAX_KILOBYTES, ShareUpdateExclusiveLock);
    simhash_relopt_table[0] = parse_option("tables", RELOPT_TYPE_STRING, offsetof(SimhashOptions, tables_offset));
    simhash_relopt_table[1] = parse_option("pending_limit", RELOPT_TYPE_INT, offsetof(SimhashOptions, pending_limit));
    DefineCustomIntVariable("simhash.max_probes",
                            "Probes per scan above which a simhash index scan reads one table in full; -1 = automatic",
                            "Automatic: whichever of probing and reading table 0 is expected to take less time. Meant for testing and tuning.",
                            &simhash_max_probes, -1, -1, INT_MAX, PGC_USERSET, 0, nullptr, nullptr, nullptr);
    DefineCustomIntVariable("simhash.debug_merge_crash_step",
                            "Stops the server (PANIC) after this step of a simhash index merge; 0 = never",
                            "For crash-recovery tests only: 1 detach, 2 collect, 3 write, 4 swap and retire, 5 half of a recycled set freed.",
                            &simhash_debug_merge_crash_step, 0, 0, 5, PGC_SUSET, GUC_NOT_IN_SAMPLE, nullptr,
                            nullptr, nullptr);
    DefineCustomIntVariable("simhash.debug_pause_lock",
                            "Makes simhash index scans and merges wait for the advisory lock of this key; 0 = never",
                            "For concurrency tests only: a scan waits after copying the index's lists, a merge after "
                            "detaching the pending list, while pg_advisory_lock(key) is held elsewhere.",
                            &simhash_debug_pause_lock, 0, 0, INT_MAX, PGC_SUSET, GUC_NOT_IN_SAMPLE, nullptr, nullptr,
                            nullptr);
}

SIMHASH_FUNCTION(simhash_handler) {
    IndexAmRoutine *am = makeNode(IndexAmRoutine);
    am->amstrategies = 2;
    am->amsupport = 0;
    am->amoptsprocnum = 0;
    am->amcanorder = false;
    am->amcanorderbyop = true;
    am->amcanbackward = false;
    am->amcanunique = false;
    am->amcanmulticol = false;
    am->amoptionalkey = true;
    am->amsearcharray = false;
    am->amsearchnulls = false;
    am->amstorage = false;
    am->amclusterable = false;
    am->ampredlocks = false;
    am->amcanparallel = false;
    am->amcaninclude = false;
    am->amusemaintenanceworkmem = true;
    am->amparallelvacuumoptions = VACUUM_OPTION_PARALLEL_BULKDEL;
    am->amkeytype = InvalidOid;

    am->ambuild = simhash_ambuild;
    am->ambuildempty = simhash_ambuildempty;
    am->aminsert = simhash_aminsert;
    am->ambulkdelete = simhash_ambulkdelete;
    am->amvacuumcleanup = simhash_amvacuumcleanup;
    am->amcanreturn = nullptr;
    am->amcostestimate = simhash_amcostestimate;
    am->amoptions = simhash_amoptions;
    am->amproperty = simhash_amproperty;
    am->ambuildphasename = simhash_ambuildphasename;
    am->amvalidate = simhash_amvalidate;
    am->amadjustmembers = simhash_amadjustmembers;
    am->ambeginscan = simhash_ambeginscan;
    am->amrescan = simhash_amrescan;
    am->amgettuple = simhash_amgettuple;
    am->amgetbitmap = simhash_amgetbitmap;
    am->amendscan = simhash_amendscan;
    am->ammarkpos = nullptr;
    am->amrestrpos = nullptr;
    am->amestimateparallelscan = nullptr;
    am->aminitparallelscan = nullptr;
    am->amparallelrescan = nullptr;
    PG_RETURN_POINTER(am);
}

int simhash_tables_option(Relation index) {
    const SimhashOptions *opts = reinterpret_cast<SimhashOptions *>(index->rd_options);
    if (opts == nullptr || opts->tables_offset == 0) return SIMHASH_AUTO_TABLES;
    return Max(parse_tables(reinterpret_cast<const char *>(opts) + opts->tables_offset), SIMHASH_AUTO_TABLES);
}

int simhash_run_tables(int tables_option, double entries) {
    if (tables_option != SIMHASH_AUTO_TABLES) return tables_option;
    return simhash::auto_block_count(static_cast<uint64>(Max(entries, 1.0)));
}

int simhash_ring_tables(const SimhashMetaData *meta) {
    return meta->nruns > 0 ? meta->runs[0].ntables : meta->ntables;
}

int simhash_pending_limit(Relation index) {
    const SimhashOptions *opts = reinterpret_cast<SimhashOptions *>(index->rd_options);
    return opts ? opts->pending_limit : SIMHASH_DEFAULT_PENDING_LIMIT;
}

void simhash_init_page(Page page, uint16 flags) {
    PageInit(page, BLCKSZ, sizeof(SimhashPageOpaque));
    SimhashPageOpaque *opaque = SimhashPageGetOpaque(page);
    opaque->next = InvalidBlockNumber;
    opaque->nentries = 0;
    opaque->flags = flags;
    memset(opaque->unused, 0, sizeof(opaque->unused));
    opaque->page_id = SIMHASH_PAGE_ID;
}

void simhash_fill_metapage(Page page, int tables_option) {
    simhash_init_page(page, SIMHASH_META);
    SimhashMetaData *meta = SimhashPageGetMeta(page);
    memset(meta, 0, sizeof(SimhashMetaData));
    meta->magic = SIMHASH_MAGIC;
    meta->version = SIMHASH_VERSION;
    meta->ntables = static_cast<uint16>(tables_option == SIMHASH_AUTO_TABLES ? SIMHASH_DEFAULT_TABLES : tables_option);
    // Relation file numbers can come back after a DROP; this cannot, in practice.
    meta->index_id = pg_prng_uint64(&pg_global_prng_state) ^ static_cast<uint64>(GetCurrentTimestamp());
    meta->pending_head = meta->pending_tail = InvalidBlockNumber;
    meta->merge_head = meta->merge_tail = InvalidBlockNumber;
    simhash_meta_set_lower(page);
}

void simhash_meta_set_lower(Page page) {
    SimhashMetaData *meta = SimhashPageGetMeta(page);
    reinterpret_cast<PageHeader>(page)->pd_lower = static_cast<LocationIndex>(
        reinterpret_cast<char *>(meta->retired + meta->nretired) - reinterpret_cast<char *>(page));
}

void simhash_page_set_bounds(Page page, int n) {
    PageHeader header = reinterpret_cast<PageHeader>(page);
    header->pd_lower = static_cast<LocationIndex>(reinterpret_cast<char *>(SimhashPageGetFps(page) + n) -
                                                  reinterpret_cast<char *>(page));
    header->pd_upper = static_cast<LocationIndex>(reinterpret_cast<char *>(simhash_page_tid(page, n - 1)) -
                                                  reinterpret_cast<char *>(page));
}

void simhash_entry_for(Datum value, bool isnull, ItemPointer heap_tid, int64 *fp, ItemPointerData *tid) {
    *tid = *heap_tid;
    if (!isnull) {
        *fp = DatumGetInt64(value);
        return;
    }
    // splitmix64's finalizer over the TID: deterministic, so simhash_index_check can expect it.
    uint64 x = (static_cast<uint64>(ItemPointerGetBlockNumberNoCheck(heap_tid)) << 16) |
               ItemPointerGetOffsetNumberNoCheck(heap_tid);
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    *fp = static_cast<int64>(x ^ (x >> 31));
    ItemPointerSetOffsetNumber(tid, ItemPointerGetOffsetNumberNoCheck(heap_tid) | SIMHASH_NULL_FLAG);
}

void simhash_page_append(Page page, int64 fp, const ItemPointerData *tid) {
    SimhashPageOpaque *opaque = SimhashPageGetOpaque(page);
    SimhashPageGetFps(page)[opaque->nentries] = fp;
    *simhash_page_tid(page, opaque->nentries) = *tid;
    opaque->nentries++;
    simhash_page_set_bounds(page, opaque->nentries);
}

void simhash_check_page(Relation index, Page page, BlockNumber blkno, uint16 expected_flags) {
    // Only the special space is read: scans check every page they fetch, and the page header is
    // another cache line to wait for. A new page (zeros) or another layout has no page ID at the
    // constant offset; the header itself PostgreSQL verifies when it reads the page, and
    // simhash_index_check checks its special size too.
    if (SimhashPageGetOpaque(page)->page_id != SIMHASH_PAGE_ID)
        ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
                        errmsg("index \"%s\" contains unexpected page %u", RelationGetRelationName(index), blkno),
                        errhint("Please REINDEX it.")));
    if (expected_flags && !(SimhashPageGetOpaque(page)->flags & expected_flags))
        ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
                        errmsg("index \"%s\" page %u has flags 0x%x, expected 0x%x", RelationGetRelationName(index),
                               blkno, SimhashPageGetOpaque(page)->flags, expected_flags),
                        errhint("Please REINDEX it.")));
}

void simhash_check_opened_index(Relation index) {
    if (index->rd_indam->ambuild != simhash_ambuild)
        ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
                        errmsg("\"%s\" is not a simhash index", RelationGetRelationName(index))));
    if (index->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED && RecoveryInProgress())
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("cannot access temporary or unlogged relations during recovery"),
                        errdetail("Index \"%s\" is unlogged: a standby has none of its contents.",
                                  RelationGetRelationName(index))));
}

void simhash_check_index_argument(Oid indexoid) {
    const char relkind = get_rel_relkind(indexoid);
    if (relkind == '\0')
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE), errmsg("relation with OID %u does not exist", indexoid)));
    if (relkind == RELKIND_PARTITIONED_INDEX)
        ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
                        errmsg("\"%s\" is a partitioned index, which holds no entries itself", get_rel_name(indexoid)),
                        errhint("Pass the indexes of its partitions: SELECT inhrelid::regclass FROM pg_inherits "
                                "WHERE inhparent = '%s'::regclass;",
                                quote_qualified_identifier(get_namespace_name(get_rel_namespace(indexoid)),
                                                           get_rel_name(indexoid)))));
    if (relkind != RELKIND_INDEX)
        ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE), errmsg("\"%s\" is not an index", get_rel_name(indexoid))));
}

SimhashMetaData *simhash_check_meta(Relation index, Page page) {
    simhash_check_page(index, page, SIMHASH_METAPAGE_BLKNO, SIMHASH_META);
    SimhashMetaData *meta = SimhashPageGetMeta(page);
    if (meta->magic != SIMHASH_MAGIC)
        ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
                        errmsg("index \"%s\" is not a simhash index", RelationGetRelationName(index))));
    if (meta->version != SIMHASH_VERSION)
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("simhash index \"%s\" has on-disk format version %u, this library reads version %d",
                               RelationGetRelationName(index), meta->version, SIMHASH_VERSION),
                        errhint("REINDEX INDEX %s; rebuilds it in the current format (REINDEX INDEX CONCURRENTLY "
                                "keeps writers going).",
                                quote_qualified_identifier(get_namespace_name(RelationGetNamespace(index)),
                                                           RelationGetRelationName(index)))));
    if (meta->ntables < SIMHASH_MIN_TABLES || meta->ntables > SIMHASH_MAX_TABLES || meta->nruns > SIMHASH_MAX_RUNS ||
        meta->nretired > SIMHASH_MAX_RETIRED)
        ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
                        errmsg("index \"%s\" has an invalid metapage", RelationGetRelationName(index))));
    return meta;
}

bool simhash_run_header_valid(const SimhashRunData *run, const SimhashRunSlot *slot) {
    if (run->ntables < SIMHASH_MIN_TABLES || run->ntables > SIMHASH_MAX_TABLES || run->dirbits < 1 ||
        run->dirbits > Min(simhash::block_width(run->ntables, 0), SIMHASH_MAX_DIRBITS) ||
        run->nmappages > SIMHASH_MAX_MAP_PAGES || run->nentries == 0)
        return false;
    if (!simhash::is_valid_permutation(run->key_order)) return false;
    for (int t = 0; t < run->ntables; ++t)
        if (run->tables[t].ndirpages != simhash_dir_pages(simhash_table_dirbits(run->ntables, run->dirbits, t)))
            return false;
    // Ref tails: the same width in every ref table, and room left in the word for every position.
    const uint32 tail_bits = static_cast<uint32>(simhash_run_ref_tail_bits(run));
    if (run->tables[0].ref_tail_bits != 0 || tail_bits > static_cast<uint32>(Max(0, 32 - run->dirbits)) ||
        (tail_bits > 0 && run->nentries - 1 > (~uint32{0} >> tail_bits)))
        return false;
    for (int t = 2; t < run->ntables; ++t)
        if (run->tables[t].ref_tail_bits != tail_bits) return false;
    if (run->nmappages != (simhash_page_list_length(run) + SIMHASH_MAP_PER_PAGE - 1) / SIMHASH_MAP_PER_PAGE) return false;
    return !slot || (run->serial == slot->serial && run->nentries == slot->nentries && run->ntables == slot->ntables &&
                     run->dirbits == slot->dirbits && run->tables[0].npages == slot->table0_pages);
}

void simhash_read_run(Relation index, BlockNumber header, const SimhashRunSlot *slot, SimhashRunData *run) {
    Buffer buffer;
    Page page = simhash_lock_page(index, header, BUFFER_LOCK_SHARE, SIMHASH_RUN, &buffer);
    const SimhashRunData *stored = SimhashPageGetRun(page);
    const uint32 nmappages = Min(stored->nmappages, static_cast<uint32>(SIMHASH_MAX_MAP_PAGES));
    memcpy(run, stored, offsetof(SimhashRunData, map) + nmappages * sizeof(BlockNumber));
    UnlockReleaseBuffer(buffer);
    if (!simhash_run_header_valid(run, slot))
        ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
                        slot ? errmsg("index \"%s\" has a run header at block %u that does not match its metapage",
                                      RelationGetRelationName(index), header)
                             : errmsg("index \"%s\" has an invalid run header at block %u",
                                      RelationGetRelationName(index), header),
                        errhint("REINDEX it.")));
}

BlockNumber *simhash_read_page_list(Relation index, const SimhashRunData *run) {
    const Size length = simhash_page_list_length(run);
    BlockNumber *list = static_cast<BlockNumber *>(MemoryContextAllocHuge(CurrentMemoryContext, Max(length, 1) * sizeof(BlockNumber)));
    for (uint32 m = 0; m < run->nmappages; ++m) {
        CHECK_FOR_INTERRUPTS();
        const Size first = static_cast<Size>(m) * SIMHASH_MAP_PER_PAGE;
        const Size n = Min(static_cast<Size>(SIMHASH_MAP_PER_PAGE), length - first);
        Buffer buffer;
        Page page = simhash_lock_page(index, run->map[m], BUFFER_LOCK_SHARE, SIMHASH_MAP, &buffer);
        if (SimhashPageGetOpaque(page)->nentries != n) {
            const int stored = SimhashPageGetOpaque(page)->nentries;
            UnlockReleaseBuffer(buffer);
            ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
                            errmsg("index \"%s\" has map page %u with %d entries, expected %zu",
                                   RelationGetRelationName(index), run->map[m], stored, n),
                            errhint("REINDEX it.")));
        }
        memcpy(list + first, SimhashPageGetMap(page), n * sizeof(BlockNumber));
        UnlockReleaseBuffer(buffer);
    }
    return list;
}

uint64 simhash_run_entries(const SimhashMetaData *meta) {
    uint64 n = 0;
    for (uint32 i = 0; i < meta->nruns; ++i) n += meta->runs[i].nentries - meta->runs[i].ndead;
    return n;
}

uint64 simhash_run_pages(const SimhashMetaData *meta) {
    uint64 n = 0;
    for (uint32 i = 0; i < meta->nruns; ++i) n += meta->runs[i].npages;
    return n;
}

uint64 simhash_pages_in_use(const SimhashMetaData *meta) {
    uint64 n = 1 + simhash_run_pages(meta) + meta->npending_pages + meta->nmerge_pages;
    for (uint32 i = 0; i < meta->nretired; ++i) n += meta->retired[i].npages;
    return n;
}

void simhash_geometry(int ntables, int dirbits, SimhashGeometry *g) {
    g->ntables = ntables;
    g->permuter = nullptr;
    const simhash::BlockLayout layout = simhash::block_layout(ntables);
    for (int t = 0; t < ntables; ++t) {
        g->len[t] = layout.width[t];
        g->shift[t] = layout.shift[t];
        g->dirbits[t] = simhash_table_dirbits(ntables, dirbits, t);
    }
    simhash_set_ref_tail(g, 0);
}

int simhash_table_dirbits(int ntables, int dirbits, int t) { return Min(dirbits, simhash::block_width(ntables, t)); }

void simhash_run_geometry(const SimhashRunData *run, SimhashGeometry *g) {
    simhash_geometry(run->ntables, run->dirbits, g);
    simhash_set_ref_tail(g, simhash_run_ref_tail_bits(run));
}

void simhash_set_ref_tail(SimhashGeometry *g, int tail_bits) {
    g->ref_tail_bits = tail_bits;
    g->ref_pos_mask = tail_bits > 0 ? ~uint32{0} >> tail_bits : ~uint32{0};
}

int simhash_choose_ref_tail_bits(int dirbits, uint64 nentries) {
    int position_bits = 1;
    while (position_bits < 32 && (uint64{1} << position_bits) < nentries) ++position_bits;
    // The rotation has 64 - dirbits - 32 bits after the key.
    return Max(0, Min(32 - position_bits, 32 - dirbits));
}

const simhash::BitPermuter *simhash_new_permuter(const simhash::BitPermutation &order) {
    if (simhash::is_identity(order)) return nullptr;
    return new (palloc(sizeof(simhash::BitPermuter))) simhash::BitPermuter(order);  // trivially destructible
}

// About log2(N / 4) prefix bits (Manku's log2(N), less two so that the directory costs at most 2
// bytes an entry a table), at most block 0 (the longest) and SIMHASH_MAX_DIRBITS; each other table
// takes as many as its block has (simhash_table_dirbits). At 300M entries in 3 tables, table 0's
// 22-bit block gets a 22-bit directory and a probe reads one block value's ~72 entries, where a
// directory as wide as the shortest block (21 bits) made it read two values' ~143.
int simhash_choose_dirbits(int ntables, uint64 nentries) {
    int bits = 1;
    while (bits < SIMHASH_MAX_DIRBITS && (uint64{1} << bits) < nentries / 4) ++bits;
    return Min(bits, simhash::block_width(ntables, 0));
}

// A new, exclusively locked page: a free page from the FSM when allowed, else a new block.
Buffer simhash_new_buffer(Relation index, bool use_fsm) {
    while (use_fsm) {
        const BlockNumber blkno = GetFreeIndexPage(index);
        if (blkno == InvalidBlockNumber) break;
        Buffer buffer = ReadBuffer(index, blkno);
        if (ConditionalLockBuffer(buffer)) {
            Page page = BufferGetPage(buffer);
            if (PageIsNew(page) ||
                (SimhashPageGetOpaque(page)->page_id == SIMHASH_PAGE_ID &&
                 (SimhashPageGetOpaque(page)->flags & SIMHASH_DELETED)))
                return buffer;
            LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
        }
        ReleaseBuffer(buffer);
    }
    const bool need_lock = !RELATION_IS_LOCAL(index);
    if (need_lock) LockRelationForExtension(index, ExclusiveLock);
    Buffer buffer = ReadBuffer(index, P_NEW);
    LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
    if (need_lock) UnlockRelationForExtension(index, ExclusiveLock);
    return buffer;
}

void simhash_read_meta(Relation index, SimhashMetaData *meta) {
    Buffer buffer = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
    LockBuffer(buffer, BUFFER_LOCK_SHARE);
    memcpy(meta, simhash_check_meta(index, BufferGetPage(buffer)), sizeof(SimhashMetaData));
    UnlockReleaseBuffer(buffer);
}

const SimhashMetaData *simhash_meta_lock(Relation index, SimhashMetaReader *reader) {
    reader->held = RecoveryInProgress();
    reader->buffer = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
    LockBuffer(reader->buffer, BUFFER_LOCK_SHARE);
    return simhash_check_meta(index, BufferGetPage(reader->buffer));
}

void simhash_meta_copied(SimhashMetaReader *reader) {
    if (!reader->held) LockBuffer(reader->buffer, BUFFER_LOCK_UNLOCK);
}

void simhash_meta_release(SimhashMetaReader *reader) {
    if (reader->held) LockBuffer(reader->buffer, BUFFER_LOCK_UNLOCK);
    ReleaseBuffer(reader->buffer);
}

uint16 simhash_page_flags(Relation index, BlockNumber blkno) {
    Buffer buffer = ReadBuffer(index, blkno);
    LockBuffer(buffer, BUFFER_LOCK_SHARE);
    Page page = BufferGetPage(buffer);
    const uint16 flags = PageIsNew(page) ? 0 : SimhashPageGetOpaque(page)->flags;
    UnlockReleaseBuffer(buffer);
    return flags;
}

Page simhash_lock_page(Relation index, BlockNumber blkno, int mode, uint16 flags, Buffer *buffer) {
    *buffer = ReadBuffer(index, blkno);
    LockBuffer(*buffer, mode);
    Page page = BufferGetPage(*buffer);
    simhash_check_page(index, page, blkno, flags);
    return page;
}

namespace {

// Costs measured on this project's 2-core machine with the index in shared buffers (1M, 10M and
// 100M uniform fingerprints, 4 tables, radii 7..16, both strategies forced through
// simhash.max_probes, medians fitted to the probe, candidate and fetch counts below): reading
// table 0 costs 0.7-0.9 us a page; a probe ~0.5 us plus ~5-7 ns per candidate (32-bit keys
// compared with SIMD over contiguous refs). A fetch of an entry from table 0 through the map,
// batched per ref page (lines and buffer headers requested 16 at a time), ~0.1 us while table 0
// fits in the CPU caches, 0.22-0.27 us at 140 MB (10M rows) and 0.6-0.74 us at 1.4 GB (100M): a
// line through those two points in log10 of the size, floored at the cached cost. With these the
// switch to reading table 0 falls on the measured crossover: at 10M rows radius 14 probes (7.2 ms
// against 12.3 ms reading) and 15 reads (13.0 against 12.5); at 100M radius 13 probes (50-55 ms
// against 151 ms) and 14 reads (146 against 153).
constexpr double kFullScanPageUs = 0.75;
constexpr double kProbeUs = 0.5;
constexpr double kCandidateUs = 0.006;
constexpr double kFetchUsCached = 0.1;
constexpr double kFetchSmallBytes = 16.0 * 1024 * 1024;
constexpr double kFetchUsAt10M = 0.24;                // table 0 of 10M entries: 140 MB, 0.92 tenfolds above kFetchSmallBytes
constexpr double kFetchTenfoldsAt10M = 0.92;
constexpr double kFetchUsPerTenfold = 0.43;
constexpr double kFetchUsLarge = 1.5;
// Microseconds to planner cost, in multiples of cpu_operator_cost: a sequential scan with
// hamming(fp, q) <= k spends ~150 ns a row for cpu_tuple_cost + cpu_operator_cost = 5
// cpu_operator_cost by default, so one microsecond is ~33 cpu_operator_cost.
constexpr double kCostPerUs = 33.0;

}  // namespace

void simhash_estimate_scan(const SimhashRunSlot *meta, int radius, double random_page_cost, double seq_page_cost,
                           SimhashScanEstimate *e) {
    const double full_pages = static_cast<double>(meta->table0_pages);
    const double full_us = full_pages * kFullScanPageUs;
    const double full_io = full_pages * seq_page_cost;
    double probes = 0, candidates = 0, fetches = 0, probe_pages = 0;
    if (radius >= 0) {  // a negative radius is an empty ball: nothing to probe
        const double n = static_cast<double>(meta->nentries);
        SimhashGeometry g;
        simhash_geometry(meta->ntables, meta->dirbits, &g);
        // The share of the 64 bits that vary: the 32 bits a ref stores beyond its block come from
        // the other blocks, so where bits are skewed they tell fewer entries apart and more refs
        // pass their filter (12 constant bits: ~26 effective bits instead of 32, 64x the fetches).
        // Bits of entropy in block t (recorded when the run was written; the block's length if not).
        auto value_bits_of = [&](int t) {
            return meta->block_bits[t] > 0 ? Min(static_cast<int>(meta->block_bits[t]), g.len[t]) : g.len[t];
        };
        double varying_bits = 0;
        for (int t = 0; t < meta->ntables; ++t) varying_bits += value_bits_of(t);
        const double varying_share = varying_bits / 64.0;
        // Bits a ref stores beyond its directory prefix: the key, and the tail its run's entry
        // count leaves room for (as runs are written now).
        const int stored = 32 + simhash_choose_ref_tail_bits(meta->dirbits, meta->nentries);
        for (int t = 0; t < meta->ntables; ++t) {
            const int rb = simhash::block_probe_radius(Min(radius, 64), meta->ntables, t);
            const double count = simhash::hamming_ball_size(g.len[t], rb);
            // Entries sharing one block value: fewer distinct values than 2^len where bits are skewed.
            // Of the probed values, only those that differ in bits that vary hold entries (a value
            // with a constant bit flipped is an empty range, which costs a directory lookup and no
            // read), so candidates, pages and fetches come from the ball over the block's value
            // bits; the probes themselves from the ball over its length.
            const int varying = value_bits_of(t);
            const double per_probe = n / ldexp(1.0, varying);
            // A probe reads its directory slot's range, every entry whose prefix is the value's:
            // more than the value's own entries where the directory is narrower than the block.
            const double per_slot = n / ldexp(1.0, Min(varying, g.dirbits[t]));
            const double per_page = t == 0 ? SIMHASH_ENTRIES_PER_PAGE : SIMHASH_REFS_PER_PAGE;
            const double filled = simhash::hamming_ball_size(varying, rb);
            probes += count;
            candidates += filled * per_slot;
            probe_pages += filled * (1.0 + per_slot / per_page);  // directories are cached per backend
            if (t > 0) {
                // Refs fetch their entry from table 0 when their stored bits beyond the block differ
                // from the query's in at most radius - d bits, d the probed value's distance.
                const int rest = static_cast<int>(Min(stored - (g.len[t] - g.dirbits[t]), 64 - g.len[t]) * varying_share + 0.5);
                for (int d = 0; d <= Min(rb, varying); ++d) {
                    const double values = simhash::hamming_ball_size(varying, d) - simhash::hamming_ball_size(varying, d - 1);
                    fetches += values * per_probe * simhash::hamming_ball_size(rest, radius - d) / ldexp(1.0, rest);
                }
            }
        }
        // Fetches land on random pages of table 0 (through the map pages): the distinct pages they touch.
        const double table0_pages = Max(1.0, full_pages);
        const double map_pages = ceil(table0_pages / SIMHASH_MAP_PER_PAGE);
        probe_pages += table0_pages * (1.0 - exp(-fetches / table0_pages)) + map_pages * (1.0 - exp(-fetches / map_pages));
    }
    const double tenfolds = log10(Max(full_pages, 1.0) * BLCKSZ / kFetchSmallBytes);
    const double fetch_us =
        Min(kFetchUsLarge, Max(kFetchUsCached, kFetchUsAt10M + kFetchUsPerTenfold * (tenfolds - kFetchTenfoldsAt10M)));
    const double probe_us = probes * kProbeUs + candidates * kCandidateUs + fetches * fetch_us;
    // Probes read some of the pages a full read would, at random; that never costs more I/O than
    // reading them all in order (small runs are read either way), so CPU decides there.
    const double probe_io = Min(probe_pages * random_page_cost, full_io);
    const double us_cost = kCostPerUs * cpu_operator_cost;
    if (radius >= 64)
        e->full_scan = true;  // every fingerprint matches: nothing to probe for
    else if (simhash_max_probes >= 0)
        e->full_scan = probes > simhash_max_probes;
    else
        e->full_scan = full_us * us_cost + full_io < probe_us * us_cost + probe_io;
    e->probes = probes;
    e->pages = e->full_scan ? full_pages : probe_pages;
    e->io_cost = e->full_scan ? full_io : probe_io;
    e->cpu_cost = (e->full_scan ? full_us : probe_us) * us_cost;
}
