// simhash_index_info(index regclass): what a simhash index holds and where its pages go, in the
// spirit of GIN's gin_metapage_info and pgstatginindex: format version and geometry from the
// metapage, entries in the sorted tables, the pending list and a list being merged, and a count of
// the index's pages by kind (one pass over the page headers under AccessShareLock), and the table
// pages the metapage accounts for (more data, ref, directory and map pages than that are pages a
// crashed merge left for VACUUM to reclaim). Table owner, or
// a member of pg_stat_scan_tables (as for pgstattuple).
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
}

SIMHASH_FUNCTION(simhash_index_info) {
    const Oid indexoid = PG_GETARG_OID(0);
    if (!OidIsValid(IndexGetRelation(indexoid, true)))
        ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE), errmsg("\"%s\" is not an index", get_rel_name(indexoid))));
    if (!simhash_relation_ownercheck(indexoid, GetUserId()) && !has_privs_of_role(GetUserId(), ROLE_PG_STAT_SCAN_TABLES))
        ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                        errmsg("permission denied to inspect index %s", get_rel_name(indexoid)),
                        errdetail("simhash_index_info needs ownership of the table or membership in pg_stat_scan_tables.")));
    TupleDesc desc;
    if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "simhash_index_info: return type must be a row type");

    Relation index = index_open(indexoid, AccessShareLock);
    if (index->rd_indam->ambuild != simhash_ambuild)
        ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
                        errmsg("\"%s\" is not a simhash index", RelationGetRelationName(index))));
    SimhashMetaData meta;
    simhash_read_meta(index, &meta);

    // Pages by kind, from their special space.
    int64 data_pages = 0, ref_pages = 0, directory_pages = 0, map_pages = 0, pending_pages = 0, free_pages = 0;
    const BlockNumber nblocks = RelationGetNumberOfBlocks(index);
    for (BlockNumber blkno = 1; blkno < nblocks; ++blkno) {
        CHECK_FOR_INTERRUPTS();
        const uint16 flags = simhash_page_flags(index, blkno);
        if (flags == 0 || (flags & SIMHASH_DELETED)) ++free_pages;
        else if (flags & SIMHASH_DATA) ++data_pages;
        else if (flags & SIMHASH_REF) ++ref_pages;
        else if (flags & SIMHASH_DIR) ++directory_pages;
        else if (flags & SIMHASH_MAP) ++map_pages;
        else if (flags & SIMHASH_PENDING) ++pending_pages;
    }
    index_close(index, AccessShareLock);

    Datum values[14];
    bool nulls[14] = {false};
    values[0] = Int32GetDatum(static_cast<int32>(meta.version));
    values[1] = Int32GetDatum(meta.ntables);
    values[2] = Int32GetDatum(meta.dirbits);
    values[3] = Int64GetDatum(static_cast<int64>(meta.nentries));
    values[4] = Int64GetDatum(static_cast<int64>(meta.npending));
    values[5] = Int64GetDatum(static_cast<int64>(meta.nmerge));
    values[6] = Int64GetDatum(static_cast<int64>(nblocks));
    values[7] = Int64GetDatum(data_pages);
    values[8] = Int64GetDatum(ref_pages);
    values[9] = Int64GetDatum(directory_pages);
    values[10] = Int64GetDatum(map_pages);
    values[11] = Int64GetDatum(pending_pages);
    values[12] = Int64GetDatum(free_pages);
    values[13] = Int64GetDatum(static_cast<int64>(simhash_table_pages(&meta)));
    PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}
