// VACUUM and merges. A merge rebuilds the sorted tables from table 0 plus the pending list, minus
// the TIDs VACUUM reports dead:
//   1. under the metapage's exclusive lock, detach the pending list as the "merge list" (inserts
//      start a new pending list; scans keep reading both);
//   2. read table 0 (it holds the full entries) and the merge list (nobody else changes them now),
//      drop dead TIDs;
//   3. write new tables into free (FSM) or new pages through Generic WAL;
//   4. under the metapage's exclusive lock, point the metapage at the new tables and drop the
//      merge list: scans hold the metapage shared while reading, so none is still on old pages;
//   5. mark the old pages deleted and give them to the FSM for reuse.
// A crash between 3 and 4 leaves the new pages unreferenced (leaked until REINDEX) and the merge
// list attached; the next merge appends the pending list to it and carries on.
#include "am/simhash_am.h"

extern "C" {
#include "access/genam.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
}

namespace {

struct BlockList {
    BlockNumber *items;
    Size n, capacity;
};

void block_list_push(BlockList *list, BlockNumber blkno) {
    if (list->n == list->capacity) {
        list->capacity = list->capacity ? list->capacity * 2 : 256;
        list->items = static_cast<BlockNumber *>(
            list->items ? repalloc_huge(list->items, list->capacity * sizeof(BlockNumber))
                        : MemoryContextAllocHuge(CurrentMemoryContext, list->capacity * sizeof(BlockNumber)));
    }
    list->items[list->n++] = blkno;
}

// Walks a chain, recording its pages; with `entries`, also collects its live entries.
void read_chain(Relation index, BlockNumber blkno, uint16 flags, BlockList *pages, SimhashSorter *entries,
                IndexBulkDeleteCallback callback, void *callback_state, double *removed) {
    while (blkno != InvalidBlockNumber) {
        vacuum_delay_point_compat();
        Buffer buffer;
        Page page = simhash_lock_page(index, blkno, BUFFER_LOCK_SHARE, flags, &buffer);
        block_list_push(pages, blkno);
        if (entries) {
            const SimhashEntry *items = SimhashPageGetEntries(page);
            const int n = SimhashPageGetOpaque(page)->nentries;
            for (int i = 0; i < n; ++i) {
                ItemPointerData tid = items[i].tid;
                if (callback && callback(&tid, callback_state))
                    *removed += 1;
                else
                    simhash_sorter_add(entries, items[i].fp, &tid);
            }
        }
        blkno = SimhashPageGetOpaque(page)->next;
        UnlockReleaseBuffer(buffer);
    }
}

void free_pages(Relation index, const BlockList *pages) {
    for (Size i = 0; i < pages->n; ++i) {
        vacuum_delay_point_compat();
        Buffer buffer = ReadBuffer(index, pages->items[i]);
        LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
        GenericXLogState *state = GenericXLogStart(index);
        Page page = GenericXLogRegisterBuffer(state, buffer, 0);
        SimhashPageOpaque *opaque = SimhashPageGetOpaque(page);
        opaque->flags = SIMHASH_DELETED;
        opaque->next = InvalidBlockNumber;
        opaque->nentries = 0;
        GenericXLogFinish(state);
        UnlockReleaseBuffer(buffer);
        RecordFreeIndexPage(index, pages->items[i]);
    }
}

}  // namespace

void simhash_merge(Relation index, IndexBulkDeleteCallback callback, void *callback_state, bool wait,
                   SimhashMergeResult *result) {
    result->removed = result->remaining = 0;
    result->freed = 0;
    if (wait)
        LockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
    else if (!ConditionalLockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock))
        return;

    // 1. Detach the pending list.
    SimhashMetaData *old = static_cast<SimhashMetaData *>(palloc(sizeof(SimhashMetaData)));
    Buffer meta_buffer = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
    LockBuffer(meta_buffer, BUFFER_LOCK_EXCLUSIVE);
    simhash_check_meta(index, BufferGetPage(meta_buffer));
    if (SimhashPageGetMeta(BufferGetPage(meta_buffer))->pending_head != InvalidBlockNumber) {
        GenericXLogState *state = GenericXLogStart(index);
        SimhashMetaData *meta = SimhashPageGetMeta(GenericXLogRegisterBuffer(state, meta_buffer, 0));
        Buffer tail_buffer = InvalidBuffer;
        if (meta->merge_head == InvalidBlockNumber) {
            meta->merge_head = meta->pending_head;
            meta->nmerge = 0;
        } else {
            tail_buffer = ReadBuffer(index, meta->merge_tail);
            LockBuffer(tail_buffer, BUFFER_LOCK_EXCLUSIVE);
            simhash_check_page(index, BufferGetPage(tail_buffer), meta->merge_tail, SIMHASH_PENDING);
            SimhashPageGetOpaque(GenericXLogRegisterBuffer(state, tail_buffer, 0))->next = meta->pending_head;
        }
        meta->merge_tail = meta->pending_tail;
        meta->nmerge += meta->npending;
        meta->pending_head = meta->pending_tail = InvalidBlockNumber;
        meta->npending = 0;
        meta->npending_pages = 0;
        GenericXLogFinish(state);
        if (BufferIsValid(tail_buffer)) UnlockReleaseBuffer(tail_buffer);
    }
    memcpy(old, SimhashPageGetMeta(BufferGetPage(meta_buffer)), sizeof(SimhashMetaData));
    LockBuffer(meta_buffer, BUFFER_LOCK_UNLOCK);

    if (!callback && old->merge_head == InvalidBlockNumber) {  // nothing to merge, nothing to delete
        result->remaining = static_cast<double>(old->nentries);
        ReleaseBuffer(meta_buffer);
        UnlockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
        return;
    }

    MemoryContext merge_context = AllocSetContextCreate(CurrentMemoryContext, "simhash merge", ALLOCSET_DEFAULT_SIZES);
    MemoryContext old_context = MemoryContextSwitchTo(merge_context);

    // 2. Collect the live entries and the pages to free.
    SimhashSorter *entries = simhash_sorter_begin(old->ntables, maintenance_work_mem, static_cast<double>(old->nentries + old->nmerge));
    BlockList *pages = static_cast<BlockList *>(palloc0(sizeof(BlockList)));
    double removed = 0;
    read_chain(index, old->tables[0].first, SIMHASH_DATA, pages, entries, callback, callback_state, &removed);
    read_chain(index, old->merge_head, SIMHASH_PENDING, pages, entries, callback, callback_state, &removed);
    result->removed = removed;
    result->remaining = static_cast<double>(simhash_sorter_count(entries));

    if (removed > 0 || old->merge_head != InvalidBlockNumber) {
        for (int t = 1; t < old->ntables; ++t)
            read_chain(index, old->tables[t].first, SIMHASH_REF, pages, nullptr, nullptr, nullptr, nullptr);
        for (int t = 0; t < old->ntables; ++t)
            for (uint32 i = 0; i < old->tables[t].ndirpages; ++i) block_list_push(pages, old->tables[t].dir[i]);
        for (uint32 i = 0; i < old->nmappages; ++i) block_list_push(pages, old->map[i]);

        // 3. Write the new tables.
        SimhashMetaData *fresh = static_cast<SimhashMetaData *>(palloc(sizeof(SimhashMetaData)));
        memcpy(fresh, old, sizeof(SimhashMetaData));
        simhash_write_tables(index, entries, fresh, true, false);

        // 4. Swap.
        LockBuffer(meta_buffer, BUFFER_LOCK_EXCLUSIVE);
        GenericXLogState *state = GenericXLogStart(index);
        SimhashMetaData *meta = SimhashPageGetMeta(GenericXLogRegisterBuffer(state, meta_buffer, 0));
        meta->dirbits = fresh->dirbits;
        meta->nentries = fresh->nentries;
        memcpy(meta->tables, fresh->tables, sizeof(meta->tables));
        meta->nmappages = fresh->nmappages;
        memcpy(meta->map, fresh->map, sizeof(meta->map));
        meta->merge_head = meta->merge_tail = InvalidBlockNumber;
        meta->nmerge = 0;
        GenericXLogFinish(state);
        LockBuffer(meta_buffer, BUFFER_LOCK_UNLOCK);

        // 5. Free the old pages.
        free_pages(index, pages);
        result->freed = static_cast<BlockNumber>(pages->n);
        IndexFreeSpaceMapVacuum(index);
    }
    simhash_sorter_end(entries);
    ReleaseBuffer(meta_buffer);
    MemoryContextSwitchTo(old_context);
    MemoryContextDelete(merge_context);
    UnlockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
}

IndexBulkDeleteResult *simhash_ambulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
                                            IndexBulkDeleteCallback callback, void *callback_state) {
    if (!stats) stats = static_cast<IndexBulkDeleteResult *>(palloc0(sizeof(IndexBulkDeleteResult)));
    SimhashMergeResult result;
    simhash_merge(info->index, callback, callback_state, true, &result);
    stats->tuples_removed += result.removed;
    stats->num_index_tuples = result.remaining;
    stats->pages_deleted += result.freed;
    return stats;
}

IndexBulkDeleteResult *simhash_amvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats) {
    if (info->analyze_only) return stats;
    if (!stats) stats = static_cast<IndexBulkDeleteResult *>(palloc0(sizeof(IndexBulkDeleteResult)));
    SimhashMergeResult result;
    simhash_merge(info->index, nullptr, nullptr, true, &result);  // fold in the pending list
    stats->pages_deleted += result.freed;
    stats->num_pages = RelationGetNumberOfBlocks(info->index);
    Buffer meta_buffer = ReadBuffer(info->index, SIMHASH_METAPAGE_BLKNO);
    LockBuffer(meta_buffer, BUFFER_LOCK_SHARE);
    const SimhashMetaData *meta = simhash_check_meta(info->index, BufferGetPage(meta_buffer));
    stats->num_index_tuples = static_cast<double>(meta->nentries + meta->npending + meta->nmerge);
    UnlockReleaseBuffer(meta_buffer);
    stats->estimated_count = false;
    return stats;
}
