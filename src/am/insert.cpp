// aminsert: append to the unsorted pending list (Generic WAL records: metapage, tail page, new
// page), and write the list out as a new run once it exceeds pending_limit.
#include "am/simhash_am.h"

extern "C" {
#include "access/xloginsert.h"
#include "miscadmin.h"
}

namespace {

// Appends a generic WAL fragment (offset, length, bytes; the format GenericXLogFinish writes and
// PostgreSQL's generic_redo applies) for `length` bytes at `at` in `page`.
void add_fragment(char *fragments, Size *used, Page page, const void *at, uint16 length) {
    const OffsetNumber offset = static_cast<OffsetNumber>(static_cast<const char *>(at) - page);
    memcpy(fragments + *used, &offset, sizeof(offset));
    memcpy(fragments + *used + sizeof(offset), &length, sizeof(length));
    memcpy(fragments + *used + sizeof(offset) + sizeof(length), at, length);
    *used += sizeof(offset) + sizeof(length) + length;
}

// The common insert: one entry appended to a pending page with room. Logged as the generic WAL
// record GenericXLogFinish would write for it (replayed by generic_redo; no resource manager of
// our own), built from the bytes that changed: GenericXLogFinish finds them by comparing every
// used byte of both pages with a copy, about 7 kB an insert (most of an insert's CPU time).
// Caller holds both buffers exclusively locked.
void append_in_place(Relation index, Buffer meta_buffer, Buffer tail_buffer, int64 fp, const ItemPointerData *tid) {
    Page meta_page = BufferGetPage(meta_buffer);
    Page tail = BufferGetPage(tail_buffer);
    SimhashMetaData *meta = SimhashPageGetMeta(meta_page);
    SimhashPageOpaque *opaque = SimhashPageGetOpaque(tail);
    constexpr Size kFragment = sizeof(OffsetNumber) * 2;
    char meta_fragments[kFragment + sizeof(uint64)];
    char tail_fragments[4 * kFragment + 2 * sizeof(LocationIndex) + sizeof(int64) + sizeof(ItemPointerData) +
                        sizeof(uint16)];
    Size meta_used = 0, tail_used = 0;

    START_CRIT_SECTION();
    const int slot = opaque->nentries;
    simhash_page_append(tail, fp, tid);
    meta->npending++;
    MarkBufferDirty(meta_buffer);
    MarkBufferDirty(tail_buffer);
    if (RelationNeedsWAL(index)) {
        const PageHeader header = reinterpret_cast<PageHeader>(tail);
        add_fragment(meta_fragments, &meta_used, meta_page, &meta->npending, sizeof(meta->npending));
        // pd_lower and pd_upper are adjacent in the page header
        add_fragment(tail_fragments, &tail_used, tail, &header->pd_lower, 2 * sizeof(LocationIndex));
        add_fragment(tail_fragments, &tail_used, tail, &SimhashPageGetFps(tail)[slot], sizeof(int64));
        add_fragment(tail_fragments, &tail_used, tail, simhash_page_tid(tail, slot), sizeof(ItemPointerData));
        add_fragment(tail_fragments, &tail_used, tail, &opaque->nentries, sizeof(opaque->nentries));
        XLogBeginInsert();
        XLogRegisterBuffer(0, meta_buffer, REGBUF_STANDARD);
        XLogRegisterBufData(0, meta_fragments, static_cast<uint32>(meta_used));
        XLogRegisterBuffer(1, tail_buffer, REGBUF_STANDARD);
        XLogRegisterBufData(1, tail_fragments, static_cast<uint32>(tail_used));
        const XLogRecPtr lsn = XLogInsert(RM_GENERIC_ID, 0);
        PageSetLSN(meta_page, lsn);
        PageSetLSN(tail, lsn);
    }
    END_CRIT_SECTION();
}

}  // namespace

bool simhash_aminsert(Relation index, Datum *values, bool *isnull, ItemPointer heap_tid, Relation heap,
                      IndexUniqueCheck checkUnique, bool indexUnchanged, IndexInfo *indexInfo) {
    int64 fp;
    ItemPointerData tid;
    simhash_entry_for(values[0], isnull[0], heap_tid, &fp, &tid);

    Buffer meta_buffer = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
    LockBuffer(meta_buffer, BUFFER_LOCK_EXCLUSIVE);
    const SimhashMetaData *current = simhash_check_meta(index, BufferGetPage(meta_buffer));

    Buffer tail_buffer = InvalidBuffer, new_buffer = InvalidBuffer;
    if (current->pending_tail != InvalidBlockNumber) {
        tail_buffer = ReadBuffer(index, current->pending_tail);
        LockBuffer(tail_buffer, BUFFER_LOCK_EXCLUSIVE);
        simhash_check_page(index, BufferGetPage(tail_buffer), current->pending_tail, SIMHASH_PENDING);
    }
    if (BufferIsValid(tail_buffer) && SimhashPageGetOpaque(BufferGetPage(tail_buffer))->nentries < SIMHASH_ENTRIES_PER_PAGE) {
        append_in_place(index, meta_buffer, tail_buffer, fp, &tid);
    } else {
        // A new pending page: a rare insert, through Generic WAL.
        GenericXLogState *state = GenericXLogStart(index);
        SimhashMetaData *meta = SimhashPageGetMeta(GenericXLogRegisterBuffer(state, meta_buffer, 0));
        Page tail = BufferIsValid(tail_buffer) ? GenericXLogRegisterBuffer(state, tail_buffer, 0) : nullptr;
        new_buffer = simhash_new_buffer(index, true);
        const BlockNumber blkno = BufferGetBlockNumber(new_buffer);
        Page target = GenericXLogRegisterBuffer(state, new_buffer, GENERIC_XLOG_FULL_IMAGE);
        simhash_init_page(target, SIMHASH_PENDING);
        if (tail != nullptr)
            SimhashPageGetOpaque(tail)->next = blkno;
        else
            meta->pending_head = blkno;
        meta->pending_tail = blkno;
        meta->npending_pages++;
        simhash_page_append(target, fp, &tid);
        meta->npending++;
        GenericXLogFinish(state);  // applies the changes to the metapage `current` points into
    }
    const bool over_limit = static_cast<double>(current->npending_pages) * BLCKSZ > simhash_pending_limit(index) * 1024.0;

    if (BufferIsValid(new_buffer)) UnlockReleaseBuffer(new_buffer);
    if (BufferIsValid(tail_buffer)) UnlockReleaseBuffer(tail_buffer);
    UnlockReleaseBuffer(meta_buffer);

    if (over_limit) simhash_merge(index, false);  // skipped if a merge is running
    return false;
}
