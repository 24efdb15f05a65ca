// simhash_index_info(index regclass) and simhash_index_runs(index regclass): what a simhash index
// holds and where its pages go, in the spirit of GIN's gin_metapage_info and pgstatginindex. The
// metapage gives the format version, the runs, the pending list, a list being merged, the merge
// count and time of the last merge; one pass over the page headers (under AccessShareLock) counts
// free pages (deleted or new, reused by merges). Pages in no structure and not free are what a
// crashed merge left for VACUUM to reclaim. Table owner, or a member of pg_stat_scan_tables (as
// for pgstattuple).
#include "am/simhash_am.h"
#include "guard.h"

extern "C" {
#include "access/htup_details.h"
#include "catalog/index.h"
#include "catalog/pg_authid.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
}

namespace {

Relation open_checked(Oid indexoid, const char *function) {
    simhash_check_index_argument(indexoid);
    if (!simhash_relation_ownercheck(indexoid, GetUserId()) && !has_privs_of_role(GetUserId(), ROLE_PG_STAT_SCAN_TABLES))
        ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                        errmsg("permission denied to inspect index %s", get_rel_name(indexoid)),
                        errdetail("%s needs ownership of the table or membership in pg_stat_scan_tables.", function)));
    Relation index = index_open(indexoid, AccessShareLock);
    simhash_check_opened_index(index);
    // A CREATE INDEX CONCURRENTLY that failed before the build leaves an index without pages.
    if (RelationGetNumberOfBlocks(index) == 0)
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("simhash index \"%s\" has not been built", RelationGetRelationName(index)),
                        errdetail("It has no pages: a CREATE INDEX CONCURRENTLY that failed leaves an index so."),
                        errhint("DROP INDEX it, or REINDEX INDEX it.")));
    return index;
}

}  // namespace

SIMHASH_FUNCTION(simhash_index_info) {
    TupleDesc desc;
    if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "simhash_index_info: return type must be a row type");
    Relation index = open_checked(PG_GETARG_OID(0), "simhash_index_info");
    Datum values[15];
    bool nulls[15] = {false};
    // The metapage, copied once: an index in another on-disk format reports its version only
    // (everything else reads as NULL), so that users and the upgrade script find what to rebuild.
    PGAlignedBlock *copy = static_cast<PGAlignedBlock *>(palloc(sizeof(PGAlignedBlock)));
    Buffer buffer = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
    LockBuffer(buffer, BUFFER_LOCK_SHARE);
    memcpy(copy->data, BufferGetPage(buffer), BLCKSZ);
    UnlockReleaseBuffer(buffer);
    simhash_check_page(index, copy->data, SIMHASH_METAPAGE_BLKNO, SIMHASH_META);
    if (SimhashPageGetMeta(copy->data)->version != SIMHASH_VERSION) {
        index_close(index, AccessShareLock);
        for (int i = 1; i < 15; ++i) nulls[i] = true;
        values[0] = Int32GetDatum(static_cast<int32>(SimhashPageGetMeta(copy->data)->version));
        PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
    }
    const SimhashMetaData &meta = *simhash_check_meta(index, copy->data);
    int64 free_pages = 0;
    const BlockNumber nblocks = RelationGetNumberOfBlocks(index);
    for (BlockNumber blkno = 1; blkno < nblocks; ++blkno) {
        CHECK_FOR_INTERRUPTS();
        const uint16 flags = simhash_page_flags(index, blkno);
        if (flags == 0 || (flags & SIMHASH_DELETED)) ++free_pages;
    }
    index_close(index, AccessShareLock);

    uint64 dead = 0;
    for (uint32 i = 0; i < meta.nruns; ++i) dead += meta.runs[i].ndead;
    const int64 in_use = static_cast<int64>(simhash_pages_in_use(&meta));
    const int64 run_pages = static_cast<int64>(simhash_run_pages(&meta));
    const int64 pending_pages = static_cast<int64>(meta.npending_pages) + meta.nmerge_pages;
    const int64 retired_pages = in_use - 1 - run_pages - pending_pages;
    values[0] = Int32GetDatum(static_cast<int32>(meta.version));
    values[1] = Int32GetDatum(simhash_ring_tables(&meta));
    values[2] = Int32GetDatum(static_cast<int32>(meta.nruns));
    values[3] = Int64GetDatum(static_cast<int64>(simhash_run_entries(&meta)));
    values[4] = Int64GetDatum(static_cast<int64>(dead));
    values[5] = Int64GetDatum(static_cast<int64>(meta.npending));
    values[6] = Int64GetDatum(static_cast<int64>(meta.nmerge));
    values[7] = Int64GetDatum(static_cast<int64>(meta.merges));
    values[8] = TimestampTzGetDatum(meta.last_merge);
    nulls[8] = meta.last_merge == 0;
    values[9] = Int64GetDatum(static_cast<int64>(nblocks));
    values[10] = Int64GetDatum(run_pages);
    values[11] = Int64GetDatum(pending_pages);
    values[12] = Int64GetDatum(retired_pages);
    values[13] = Int64GetDatum(free_pages);
    // Pages in no structure and not free: left by a crashed merge (concurrent inserts can make
    // this briefly positive too).
    values[14] = Int64GetDatum(Max(int64{0}, static_cast<int64>(nblocks) - in_use - free_pages));
    PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

SIMHASH_FUNCTION(simhash_index_runs) {
    Relation index = open_checked(PG_GETARG_OID(0), "simhash_index_runs");
    InitMaterializedSRF(fcinfo, 0);
    // The run headers are read as scans read runs: on a hot standby under the metapage's lock.
    SimhashMetaReader meta_reader;
    SimhashMetaData meta;
    memcpy(&meta, simhash_meta_lock(index, &meta_reader), sizeof(SimhashMetaData));
    simhash_meta_copied(&meta_reader);
    simhash_debug_pause();  // tests: the runs change meanwhile
    ReturnSetInfo *rsinfo = reinterpret_cast<ReturnSetInfo *>(fcinfo->resultinfo);
    SimhashRunData *header = static_cast<SimhashRunData *>(palloc(sizeof(SimhashRunData)));
    for (uint32 i = 0; i < meta.nruns; ++i) {
        const SimhashRunSlot *run = &meta.runs[i];
        simhash_read_run(index, run->header, run, header);
        Datum values[9];
        bool nulls[9] = {false};
        values[0] = Int32GetDatum(static_cast<int32>(i + 1));
        values[1] = Int64GetDatum(static_cast<int64>(run->nentries - run->ndead));
        values[2] = Int64GetDatum(static_cast<int64>(run->ndead));
        values[3] = Int64GetDatum(static_cast<int64>(run->npages));
        values[4] = Float8GetDatum(run->nentries > 0 ? static_cast<double>(run->npages) * BLCKSZ / run->nentries : 0.0);
        values[5] = Int32GetDatum(run->ntables);
        values[6] = Int32GetDatum(run->dirbits);
        values[7] = Int64GetDatum(static_cast<int64>(run->header));
        values[8] = BoolGetDatum(!simhash::is_identity(header->key_order));
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
    pfree(header);
    simhash_meta_release(&meta_reader);
    index_close(index, AccessShareLock);
    return static_cast<Datum>(0);
}
