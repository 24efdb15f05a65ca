// aminsert: append to the unsorted pending list (Generic WAL: metapage, tail page, new page), and
// write the list out as a new run once it exceeds pending_limit.
#include "am/simhash_am.h"

extern "C" {
#include "miscadmin.h"
}

bool simhash_aminsert(Relation index, Datum *values, bool *isnull, ItemPointer heap_tid, Relation heap,
                      IndexUniqueCheck checkUnique, bool indexUnchanged, IndexInfo *indexInfo) {
    int64 fp;
    ItemPointerData tid;
    simhash_entry_for(values[0], isnull[0], heap_tid, &fp, &tid);

    Buffer meta_buffer = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
    LockBuffer(meta_buffer, BUFFER_LOCK_EXCLUSIVE);
    simhash_check_meta(index, BufferGetPage(meta_buffer));

    GenericXLogState *state = GenericXLogStart(index);
    SimhashMetaData *meta = SimhashPageGetMeta(GenericXLogRegisterBuffer(state, meta_buffer, 0));
    Buffer tail_buffer = InvalidBuffer, new_buffer = InvalidBuffer;
    Page target = nullptr, tail = nullptr;
    if (meta->pending_tail != InvalidBlockNumber) {
        tail_buffer = ReadBuffer(index, meta->pending_tail);
        LockBuffer(tail_buffer, BUFFER_LOCK_EXCLUSIVE);
        simhash_check_page(index, BufferGetPage(tail_buffer), meta->pending_tail, SIMHASH_PENDING);
        tail = GenericXLogRegisterBuffer(state, tail_buffer, 0);
        if (SimhashPageGetOpaque(tail)->nentries < SIMHASH_ENTRIES_PER_PAGE) target = tail;
    }
    if (!target) {
        new_buffer = simhash_new_buffer(index, true);
        const BlockNumber blkno = BufferGetBlockNumber(new_buffer);
        target = GenericXLogRegisterBuffer(state, new_buffer, GENERIC_XLOG_FULL_IMAGE);
        simhash_init_page(target, SIMHASH_PENDING);
        if (BufferIsValid(tail_buffer))
            SimhashPageGetOpaque(tail)->next = blkno;
        else
            meta->pending_head = blkno;
        meta->pending_tail = blkno;
        meta->npending_pages++;
    }
    simhash_page_append(target, fp, &tid);
    meta->npending++;
    const bool over_limit = static_cast<double>(meta->npending_pages) * BLCKSZ > simhash_pending_limit(index) * 1024.0;
    GenericXLogFinish(state);

    if (BufferIsValid(new_buffer)) UnlockReleaseBuffer(new_buffer);
    if (BufferIsValid(tail_buffer)) UnlockReleaseBuffer(tail_buffer);
    UnlockReleaseBuffer(meta_buffer);

    if (over_limit) simhash_merge(index, false);  // skipped if a merge is running
    return false;
}
