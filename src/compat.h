// Differences between the PostgreSQL releases the extension builds against (15 to 18), in one
// place. Each block is guarded by PG_VERSION_NUM; the glue code calls the names defined here
// (name_compat for a PostgreSQL function whose arguments changed), so it reads the same on every
// release and the PostgreSQL 15 build calls exactly what it called before. Include this header
// instead of postgres.h (it includes postgres.h, fmgr.h and the varlena macros).
//
// scripts/check_versions.sh builds the extension against another installation and runs the
// regression suite there.
#pragma once

extern "C" {
#include "postgres.h"
#include "fmgr.h"
}

#if PG_VERSION_NUM < 150000
#error "simhash needs PostgreSQL 15 or later"
#endif

// --- Varlena macros ------------------------------------------------------------------------------
// PostgreSQL 16 moved VARDATA_ANY and friends out of postgres.h into varatt.h.
#if PG_VERSION_NUM >= 160000
extern "C" {
#include "varatt.h"
}
#endif

// --- Symbol visibility ---------------------------------------------------------------------------
// The module is compiled with -fvisibility=hidden: only what PostgreSQL looks up with dlsym (the
// magic block, _PG_init, the pg_finfo_* records and the SQL-callable functions) may be exported.
// PostgreSQL 16 defines PGDLLEXPORT as visibility("default"); 15 leaves it empty outside Windows,
// which would hide the entry points too. PG_MODULE_MAGIC and PG_FUNCTION_INFO_V1 expand
// PGDLLEXPORT where they are used, so redefining it here exports their symbols on 15 as on 16.
#if defined(__GNUC__) && !defined(WIN32)
#define SIMHASH_EXPORT __attribute__((visibility("default")))
#if PG_VERSION_NUM < 160000
#undef PGDLLEXPORT
#define PGDLLEXPORT SIMHASH_EXPORT
#endif
#else
#define SIMHASH_EXPORT PGDLLEXPORT
#endif

// --- Relation files ------------------------------------------------------------------------------
// PostgreSQL 16 renamed RelFileNode to RelFileLocator (SMgrRelation.smgr_rnode.node became
// smgr_rlocator.locator). The file of `rel`'s storage, as log_newpage() takes it:
#if PG_VERSION_NUM >= 160000
#define SIMHASH_RELATION_FILE(rel) (&RelationGetSmgr(rel)->smgr_rlocator.locator)
#else
#define SIMHASH_RELATION_FILE(rel) (&RelationGetSmgr(rel)->smgr_rnode.node)
#endif

// ReadRecentBuffer names the relation's file by its RelFileNode (15) or RelFileLocator (16+).
#if PG_VERSION_NUM >= 160000
#define simhash_read_recent_buffer(rel, blkno, buffer) ReadRecentBuffer((rel)->rd_locator, MAIN_FORKNUM, (blkno), (buffer))
#else
#define simhash_read_recent_buffer(rel, blkno, buffer) ReadRecentBuffer((rel)->rd_node, MAIN_FORKNUM, (blkno), (buffer))
#endif

// Whether a buffer tag names a page of `rel`'s main fork, asked through BufferTag's accessors
// from 16 (which split its RelFileNode into fields).
#if PG_VERSION_NUM >= 160000
#define simhash_tag_is_main_fork_of(tag, rel) \
    (BufTagMatchesRelFileLocator(&(tag), &(rel)->rd_locator) && BufTagGetForkNum(&(tag)) == MAIN_FORKNUM)
#else
#define simhash_tag_is_main_fork_of(tag, rel) (RelFileNodeEquals((tag).rnode, (rel)->rd_node) && (tag).forkNum == MAIN_FORKNUM)
#endif

// PostgreSQL 18's index_beginscan takes the scan's instrumentation (EXPLAIN's index searches);
// a scan the executor does not run has none.
#if PG_VERSION_NUM >= 180000
#define index_beginscan_compat(heap, index, snapshot, nkeys, norderbys) \
    index_beginscan(heap, index, snapshot, nullptr, nkeys, norderbys)
#else
#define index_beginscan_compat(heap, index, snapshot, nkeys, norderbys) \
    index_beginscan(heap, index, snapshot, nkeys, norderbys)
#endif

// --- Tuplesorts ----------------------------------------------------------------------------------
// PostgreSQL 16 added tuplesort_getdatum's `copy` argument; 15 always copies pass-by-reference
// values, which `copy = true` keeps.
#if PG_VERSION_NUM >= 160000
#define tuplesort_getdatum_compat(state, forward, val, isnull, abbrev) \
    tuplesort_getdatum(state, forward, true, val, isnull, abbrev)
#else
#define tuplesort_getdatum_compat(state, forward, val, isnull, abbrev) \
    tuplesort_getdatum(state, forward, val, isnull, abbrev)
#endif

// --- Module magic --------------------------------------------------------------------------------
// PostgreSQL 18's magic block also names the module and its version (pg_get_loaded_modules());
// its plain PG_MODULE_MAGIC leaves .version out of a designated initializer, which
// -Wmissing-field-initializers reports in C++. SIMHASH_EXTVERSION comes from the Makefile.
#if PG_VERSION_NUM >= 180000
#define SIMHASH_MODULE_MAGIC PG_MODULE_MAGIC_EXT(.name = "simhash", .version = SIMHASH_EXTVERSION)
#else
#define SIMHASH_MODULE_MAGIC PG_MODULE_MAGIC
#endif

// --- VACUUM --------------------------------------------------------------------------------------
// PostgreSQL 18 tells vacuum_delay_point whether it is called from ANALYZE (which has its own
// cost-based delay settings); an index vacuum is not.
#if PG_VERSION_NUM >= 180000
#define vacuum_delay_point_compat() vacuum_delay_point(false)
#else
#define vacuum_delay_point_compat() vacuum_delay_point()
#endif

// --- Ownership ------------------------------------------------------------------------------------
// PostgreSQL 16 replaced the per-catalog ownership checks (pg_class_ownercheck, ...) with
// object_ownercheck(class, oid, role). Whether `role` owns relation `relid` (or is a superuser):
#if PG_VERSION_NUM >= 160000
#define simhash_relation_ownercheck(relid, role) object_ownercheck(RelationRelationId, (relid), (role))
#else
#define simhash_relation_ownercheck(relid, role) pg_class_ownercheck((relid), (role))
#endif

// The backend's local transaction id: PGPROC.lxid became PGPROC.vxid.lxid in PostgreSQL 17.
#if PG_VERSION_NUM >= 170000
#define SIMHASH_MY_LXID (MyProc->vxid.lxid)
#else
#define SIMHASH_MY_LXID (MyProc->lxid)
#endif
