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
// A crash between 3 and 4 leaves the new pages unreferenced and the merge list attached (the next
// merge appends the pending list to it and carries on); a crash between 4 and 5 leaves the old
// pages unreferenced. VACUUM's cleanup (simhash_reclaim_unreachable_pages) frees both.
#include "am/simhash_am.h"

extern "C" {
#include "access/genam.h"
#include "access/xlog.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/freespace.h"
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

void mark_chain(Relation index, BlockNumber blkno, uint16 flags, bool *reachable, BlockNumber nblocks) {
    while (blkno != InvalidBlockNumber && blkno < nblocks && !reachable[blkno]) {
        vacuum_delay_point_compat();
        Buffer buffer;
        Page page = simhash_lock_page(index, blkno, BUFFER_LOCK_SHARE, flags, &buffer);
        reachable[blkno] = true;
        blkno = SimhashPageGetOpaque(page)->next;
        UnlockReleaseBuffer(buffer);
    }
}

// Marks the pending list and the list being merged, under the metapage's share lock (inserts
// append to the pending list meanwhile).
void mark_pending_lists(Relation index, bool *reachable, BlockNumber nblocks) {
    Buffer meta_buffer = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
    LockBuffer(meta_buffer, BUFFER_LOCK_SHARE);
    const SimhashMetaData *meta = simhash_check_meta(index, BufferGetPage(meta_buffer));
    mark_chain(index, meta->pending_head, SIMHASH_PENDING, reachable, nblocks);
    mark_chain(index, meta->merge_head, SIMHASH_PENDING, reachable, nblocks);
    UnlockReleaseBuffer(meta_buffer);
}

// Whether some page is neither reached by the metapage nor free in the FSM, as after a merge that
// crashed (or an FSM that lost deleted pages): only then is the index walked page by page. Reads
// the FSM only. Pages inserts add to the pending list meanwhile only make the answer yes.
bool pages_unaccounted_for(Relation index, const SimhashMetaData *meta, BlockNumber nblocks) {
    if (meta->merge_head != InvalidBlockNumber) return true;  // a merge list left attached
    BlockNumber free_pages = 0;
    for (BlockNumber blkno = 1; blkno < nblocks; ++blkno)
        if (GetRecordedFreeSpace(index, blkno) > 0) ++free_pages;
    const uint64 in_use = 1 + simhash_table_pages(meta) + meta->npending_pages;  // with the metapage
    return static_cast<uint64>(nblocks) - free_pages > in_use;
}

// Debugging aid for the crash tests: simhash.debug_merge_crash_step = N stops the server (PANIC)
// right after step N of a merge (5: after freeing half of the old pages). The WAL written so far
// is flushed first, as a large merge's would have been by then: otherwise recovery would simply
// forget a small merge's pages.
void crash_point(int step) {
    if (simhash_debug_merge_crash_step != step) return;
    XLogFlush(GetXLogInsertRecPtr());
    elog(PANIC, "simhash: crashing after merge step %d (simhash.debug_merge_crash_step)", step);
}

}  // namespace

BlockNumber simhash_reclaim_unreachable_pages(Relation index) {
    // With the merge lock held no merge writes or frees tables, so every data, ref, directory or
    // map page the metapage does not reach was left by a merge that crashed (its new tables before
    // the swap, or the old ones after it), and so is every pending page in neither pending list
    // (a merge list detached by the swap). Deleted pages go back to the FSM, which is not
    // WAL-logged and may have lost them. New pages are left alone: a concurrent insert may have
    // just extended the relation with one.
    LockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
    SimhashMetaData *meta = static_cast<SimhashMetaData *>(palloc(sizeof(SimhashMetaData)));
    simhash_read_meta(index, meta);
    const BlockNumber nblocks = RelationGetNumberOfBlocks(index);
    if (!pages_unaccounted_for(index, meta, nblocks)) {
        UnlockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
        return 0;
    }
    bool *reachable = static_cast<bool *>(palloc0(Max(nblocks, 1)));
    reachable[SIMHASH_METAPAGE_BLKNO] = true;
    for (int t = 0; t < meta->ntables; ++t) {
        mark_chain(index, meta->tables[t].first, t == 0 ? SIMHASH_DATA : SIMHASH_REF, reachable, nblocks);
        for (uint32 i = 0; i < meta->tables[t].ndirpages; ++i)
            if (meta->tables[t].dir[i] < nblocks) reachable[meta->tables[t].dir[i]] = true;
    }
    for (uint32 i = 0; i < meta->nmappages; ++i)
        if (meta->map[i] < nblocks) reachable[meta->map[i]] = true;

    BlockList *garbage = static_cast<BlockList *>(palloc0(sizeof(BlockList)));
    bool pending_candidates = false;
    for (BlockNumber blkno = 1; blkno < nblocks; ++blkno) {
        if (reachable[blkno]) continue;
        vacuum_delay_point_compat();
        const uint16 flags = simhash_page_flags(index, blkno);
        if (flags & SIMHASH_DELETED)
            RecordFreeIndexPage(index, blkno);
        else if (flags & (SIMHASH_DATA | SIMHASH_REF | SIMHASH_DIR | SIMHASH_MAP))
            block_list_push(garbage, blkno);
        else if (flags & SIMHASH_PENDING)
            pending_candidates = true;
    }
    if (pending_candidates) {
        // Pending pages reached now are in use; the others were detached by a swap and not freed.
        mark_pending_lists(index, reachable, nblocks);
        for (BlockNumber blkno = 1; blkno < nblocks; ++blkno) {
            if (reachable[blkno]) continue;
            if (simhash_page_flags(index, blkno) & SIMHASH_PENDING) block_list_push(garbage, blkno);
        }
    }
    free_pages(index, garbage);
    if (garbage->n > 0) IndexFreeSpaceMapVacuum(index);
    const BlockNumber reclaimed = static_cast<BlockNumber>(garbage->n);
    UnlockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
    return reclaimed;
}

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
    crash_point(1);

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
    crash_point(2);

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
        crash_point(3);

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
        crash_point(4);

        // 5. Free the old pages.
        if (simhash_debug_merge_crash_step == 5) {
            BlockList half = *pages;
            half.n /= 2;
            free_pages(index, &half);
            crash_point(5);
        }
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
    stats->pages_deleted += result.freed + simhash_reclaim_unreachable_pages(info->index);
    stats->num_pages = RelationGetNumberOfBlocks(info->index);
    Buffer meta_buffer = ReadBuffer(info->index, SIMHASH_METAPAGE_BLKNO);
    LockBuffer(meta_buffer, BUFFER_LOCK_SHARE);
    const SimhashMetaData *meta = simhash_check_meta(info->index, BufferGetPage(meta_buffer));
    stats->num_index_tuples = static_cast<double>(meta->nentries + meta->npending + meta->nmerge);
    UnlockReleaseBuffer(meta_buffer);
    stats->estimated_count = false;
    return stats;
}
