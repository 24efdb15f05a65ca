// Merges, page recycling and VACUUM.
//
// A merge writes a set of inputs (the pending list detached as the "merge list", and/or runs the
// tier policy picks) out as one new run:
//   1. under the metapage's exclusive lock, detach the pending list as the merge list (inserts
//      start a new pending list; scans keep reading both);
//   2. read the inputs' live entries (nobody else changes them: merges and VACUUM hold the merge
//      lock);
//   3. write the new run into free (FSM) or new pages through Generic WAL;
//   4. in one metapage record: drop the inputs, add the new run, and retire the inputs' pages
//      with the next transaction ID (safexid);
//   5. later merges and VACUUM recycle a retired set once no snapshot as old as its safexid
//      remains: its pages are taken off the metapage, marked deleted and given to the FSM.
// A crash before 4 leaves the new run's pages unreferenced (and the merge list attached: the next
// merge appends the pending list to it and carries on); a crash during 5 leaves pages marked
// neither in use nor free. VACUUM's cleanup (simhash_reclaim_unreachable_pages) frees both.
//
// VACUUM marks dead entries in place (tombstones in table 0, whose positions the other tables
// refer to, and in the pending lists) and rewrites a run alone once a fifth of it is dead, so
// deleted rows give their space back without rewriting the index.
#include "am/simhash_am.h"
#include "core/run_tiers.h"

extern "C" {
#include "access/genam.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
}

namespace {

constexpr int kTierFanout = 4;
constexpr int kMaxLiveRuns = SIMHASH_MAX_RUNS - 8;  // room for the runs a merge adds before it drops its inputs
constexpr double kCompactDeadFraction = 0.2;

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

void push_visitor(BlockNumber blkno, void *arg) { block_list_push(static_cast<BlockList *>(arg), blkno); }

// Walks a chain, visiting its pages; with `entries`, also collects its live entries.
void read_chain(Relation index, BlockNumber blkno, uint16 flags, void (*visit)(BlockNumber, void *), void *arg,
                SimhashSorter *entries) {
    while (blkno != InvalidBlockNumber) {
        vacuum_delay_point_compat();
        Buffer buffer;
        Page page = simhash_lock_page(index, blkno, BUFFER_LOCK_SHARE, flags, &buffer);
        if (visit) visit(blkno, arg);
        if (entries) {
            const int64 *fps = SimhashPageGetFps(page);
            const int n = SimhashPageGetOpaque(page)->nentries;
            for (int i = 0; i < n; ++i) {
                ItemPointerData tid = *simhash_page_tid(page, i);
                if (!simhash_tid_is_dead(&tid)) simhash_sorter_add(entries, fps[i], &tid);
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

// Debugging aid for the crash tests: simhash.debug_merge_crash_step = N stops the server (PANIC)
// right after step N of a merge (5: after freeing half of a recycled set). The WAL written so far
// is flushed first, as a large merge's would have been by then: otherwise recovery would simply
// forget a small merge's pages.
void crash_point(int step) {
    if (simhash_debug_merge_crash_step != step) return;
    // The end of this backend's last record: the insert position can lie past a page header not
    // written yet, and flushing there fails (an ERROR instead of the crash).
    if (XactLastRecEnd != InvalidXLogRecPtr) XLogFlush(XactLastRecEnd);
    elog(PANIC, "simhash: crashing after merge step %d (simhash.debug_merge_crash_step)", step);
}

// Recycles the retired sets no snapshot can still be reading. Merge lock held.
BlockNumber recycle_retired(Relation index, Buffer meta_buffer) {
    SimhashMetaData *meta = static_cast<SimhashMetaData *>(palloc(sizeof(SimhashMetaData)));
    simhash_read_meta(index, meta);
    bool recyclable[SIMHASH_MAX_RETIRED] = {false};
    BlockList *pages = static_cast<BlockList *>(palloc0(sizeof(BlockList)));
    for (uint32 i = 0; i < meta->nretired; ++i) {
        recyclable[i] = GlobalVisCheckRemovableFullXid(nullptr, meta->retired[i].safexid);
        if (recyclable[i]) simhash_visit_retired(index, &meta->retired[i], push_visitor, pages);
    }
    if (pages->n == 0) return 0;
    // Off the metapage first: a crash after this leaves the pages for VACUUM's reclaim walk, never
    // a retired set naming pages that were reused.
    LockBuffer(meta_buffer, BUFFER_LOCK_EXCLUSIVE);
    GenericXLogState *state = GenericXLogStart(index);
    Page meta_page = GenericXLogRegisterBuffer(state, meta_buffer, 0);
    SimhashMetaData *m = SimhashPageGetMeta(meta_page);
    uint32 kept = 0;
    for (uint32 i = 0; i < m->nretired; ++i)
        if (!recyclable[i]) m->retired[kept++] = m->retired[i];
    m->nretired = kept;
    simhash_meta_set_lower(meta_page);
    GenericXLogFinish(state);
    LockBuffer(meta_buffer, BUFFER_LOCK_UNLOCK);
    if (simhash_debug_merge_crash_step == 5) {
        BlockList half = *pages;
        half.n /= 2;
        free_pages(index, &half);
        crash_point(5);
    }
    free_pages(index, pages);
    IndexFreeSpaceMapVacuum(index);
    return static_cast<BlockNumber>(pages->n);
}

// Step 1: detaches the pending list, appending it to a merge list left by a crashed merge.
void detach_pending(Relation index, Buffer meta_buffer) {
    LockBuffer(meta_buffer, BUFFER_LOCK_EXCLUSIVE);
    simhash_check_meta(index, BufferGetPage(meta_buffer));
    if (SimhashPageGetMeta(BufferGetPage(meta_buffer))->pending_head != InvalidBlockNumber) {
        GenericXLogState *state = GenericXLogStart(index);
        SimhashMetaData *meta = SimhashPageGetMeta(GenericXLogRegisterBuffer(state, meta_buffer, 0));
        Buffer tail_buffer = InvalidBuffer;
        if (meta->merge_head == InvalidBlockNumber) {
            meta->merge_head = meta->pending_head;
            meta->nmerge = 0;
            meta->nmerge_pages = 0;
        } else {
            tail_buffer = ReadBuffer(index, meta->merge_tail);
            LockBuffer(tail_buffer, BUFFER_LOCK_EXCLUSIVE);
            simhash_check_page(index, BufferGetPage(tail_buffer), meta->merge_tail, SIMHASH_PENDING);
            SimhashPageGetOpaque(GenericXLogRegisterBuffer(state, tail_buffer, 0))->next = meta->pending_head;
        }
        meta->merge_tail = meta->pending_tail;
        meta->nmerge += meta->npending;
        meta->nmerge_pages += meta->npending_pages;
        meta->pending_head = meta->pending_tail = InvalidBlockNumber;
        meta->npending = 0;
        meta->npending_pages = 0;
        meta->pending_epoch++;
        GenericXLogFinish(state);
        if (BufferIsValid(tail_buffer)) UnlockReleaseBuffer(tail_buffer);
    }
    LockBuffer(meta_buffer, BUFFER_LOCK_UNLOCK);
    crash_point(1);
}

// Adds a retired set to the metapage (room checked by the caller).
void retire(SimhashMetaData *meta, FullTransactionId safexid, BlockNumber head, uint32 npages, uint16 kind) {
    SimhashRetired *retired = &meta->retired[meta->nretired++];
    memset(retired, 0, sizeof(*retired));
    retired->safexid = safexid;
    retired->head = head;
    retired->npages = npages;
    retired->kind = kind;
}

// The slot of the run whose header is `header`, or null.
const SimhashRunSlot *find_run(const SimhashMetaData *meta, BlockNumber header) {
    for (uint32 i = 0; i < meta->nruns; ++i)
        if (meta->runs[i].header == header) return &meta->runs[i];
    return nullptr;
}

// Steps 2-4: the runs whose headers are `inputs` and, with `with_merge_list`, the merge list,
// become one run (none if nothing in them is alive). Merge lock held, so the runs named are on the
// metapage. Returns false when the metapage has no room to retire the inputs (recycling is held
// back by an old snapshot): nothing is done then.
bool merge_inputs(Relation index, Buffer meta_buffer, const BlockNumber *inputs, int ninputs, bool with_merge_list) {
    SimhashMetaData *old = static_cast<SimhashMetaData *>(palloc(sizeof(SimhashMetaData)));
    simhash_read_meta(index, old);
    with_merge_list = with_merge_list && old->merge_head != InvalidBlockNumber;
    if (ninputs == 0 && !with_merge_list) return true;
    if (old->nretired + ninputs + (with_merge_list ? 1 : 0) > SIMHASH_MAX_RETIRED) return false;

    // 2. Collect the live entries.
    const SimhashRunSlot *slots[SIMHASH_MAX_RUNS];
    double expected = with_merge_list ? static_cast<double>(old->nmerge) : 0;
    for (int i = 0; i < ninputs; ++i) {
        slots[i] = find_run(old, inputs[i]);
        if (!slots[i]) elog(ERROR, "simhash index \"%s\": run %u to merge is gone", RelationGetRelationName(index), inputs[i]);
        expected += static_cast<double>(slots[i]->nentries - slots[i]->ndead);
    }
    SimhashSorter *entries = simhash_sorter_begin(simhash_tables_option(index), maintenance_work_mem, expected);
    SimhashRunData *run = static_cast<SimhashRunData *>(palloc(sizeof(SimhashRunData)));
    for (int i = 0; i < ninputs; ++i) {
        simhash_read_run(index, inputs[i], slots[i], run);
        read_chain(index, run->tables[0].first, SIMHASH_DATA, nullptr, nullptr, entries);
    }
    if (with_merge_list) read_chain(index, old->merge_head, SIMHASH_PENDING, nullptr, nullptr, entries);
    crash_point(2);

    // 3. Write the new run.
    SimhashRunSlot fresh;
    const bool any = simhash_sorter_count(entries) > 0;
    if (any) simhash_write_run(index, entries, true, false, old->merges + 1, &fresh);
    simhash_sorter_end(entries);
    crash_point(3);

    // 4. Swap and retire.
    const FullTransactionId safexid = ReadNextFullTransactionId();
    LockBuffer(meta_buffer, BUFFER_LOCK_EXCLUSIVE);
    GenericXLogState *state = GenericXLogStart(index);
    Page meta_page = GenericXLogRegisterBuffer(state, meta_buffer, 0);
    SimhashMetaData *meta = SimhashPageGetMeta(meta_page);
    SimhashRunSlot runs[SIMHASH_MAX_RUNS + 1];
    uint32 nruns = 0;
    for (uint32 i = 0; i < meta->nruns; ++i) {
        bool input = false;
        for (int c = 0; c < ninputs; ++c) input = input || meta->runs[i].header == inputs[c];
        if (input)
            retire(meta, safexid, meta->runs[i].header, meta->runs[i].npages, SIMHASH_RUN);
        else
            runs[nruns++] = meta->runs[i];
    }
    if (any) {  // largest first
        uint32 at = nruns++;
        while (at > 0 && runs[at - 1].nentries - runs[at - 1].ndead < fresh.nentries) {
            runs[at] = runs[at - 1];
            --at;
        }
        runs[at] = fresh;
    }
    Assert(nruns <= SIMHASH_MAX_RUNS);
    memcpy(meta->runs, runs, nruns * sizeof(SimhashRunSlot));
    meta->nruns = nruns;
    if (with_merge_list) {
        retire(meta, safexid, meta->merge_head, meta->nmerge_pages, SIMHASH_PENDING);
        meta->merge_head = meta->merge_tail = InvalidBlockNumber;
        meta->nmerge = 0;
        meta->nmerge_pages = 0;
        meta->pending_epoch++;  // its pages may come back as a new list's
    }
    if (any) meta->merges++;
    meta->last_merge = GetCurrentTimestamp();
    simhash_meta_set_lower(meta_page);
    GenericXLogFinish(state);
    LockBuffer(meta_buffer, BUFFER_LOCK_UNLOCK);
    crash_point(4);
    pfree(run);
    pfree(old);
    return true;
}

// The headers of the runs the tier policy merges next (by their live sizes); returns how many.
int runs_to_merge(Relation index, Buffer meta_buffer, BlockNumber *headers) {
    LockBuffer(meta_buffer, BUFFER_LOCK_SHARE);
    const SimhashMetaData *meta = simhash_check_meta(index, BufferGetPage(meta_buffer));
    uint64 sizes[SIMHASH_MAX_RUNS];
    BlockNumber run_headers[SIMHASH_MAX_RUNS];
    const uint32 nruns = meta->nruns;
    for (uint32 i = 0; i < nruns; ++i) {
        sizes[i] = meta->runs[i].nentries - meta->runs[i].ndead;
        run_headers[i] = meta->runs[i].header;
    }
    LockBuffer(meta_buffer, BUFFER_LOCK_UNLOCK);
    simhash::RunTierPolicy policy;
    // Tier 0: one pending list written out (its pages hold SIMHASH_ENTRIES_PER_PAGE entries each).
    policy.base = Max(static_cast<uint64>(1), static_cast<uint64>(simhash_pending_limit(index)) * 1024 / BLCKSZ *
                                                  SIMHASH_ENTRIES_PER_PAGE);
    policy.fanout = kTierFanout;
    policy.max_runs = kMaxLiveRuns;
    int chosen[kTierFanout];
    const int n = simhash::choose_runs_to_merge(sizes, nruns, policy, chosen);
    for (int i = 0; i < n; ++i) headers[i] = run_headers[chosen[i]];
    return n;
}

void lock_merges(Relation index) { LockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock); }
void unlock_merges(Relation index) { UnlockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock); }

// Rewrites alone each run more than kCompactDeadFraction dead by the tombstones VACUUM last
// counted; merge lock held. A rewrite retires the run's pages, so the caller recycles first what
// no snapshot can read any more: a large load rolled back leaves its merges' sets on the metapage
// (its snapshot kept them from being recycled, up to the metapage's room), and without room the
// rewrite would wait for a later VACUUM that finds dead rows, every query reading the dead entries
// meanwhile.
void compact_dead_runs(Relation index, Buffer meta_buffer) {
    SimhashMetaData *meta = static_cast<SimhashMetaData *>(palloc(sizeof(SimhashMetaData)));
    simhash_read_meta(index, meta);
    BlockNumber compact[SIMHASH_MAX_RUNS];
    int ncompact = 0;
    for (uint32 i = 0; i < meta->nruns; ++i)
        if (meta->runs[i].ndead > kCompactDeadFraction * static_cast<double>(meta->runs[i].nentries))
            compact[ncompact++] = meta->runs[i].header;
    pfree(meta);
    for (int c = 0; c < ncompact; ++c) {
        CHECK_FOR_INTERRUPTS();
        if (!merge_inputs(index, meta_buffer, &compact[c], 1, false)) break;
    }
}

// The whole merge, merge lock held: recycle, write the pending list out, merge tiers, and for
// VACUUM's cleanup rewrite the runs a fifth dead that ambulkdelete could not (no room to retire
// them then) or that a VACUUM without dead rows, which skips ambulkdelete, finds. Returns the
// pages recycled.
BlockNumber merge_locked(Relation index, bool compact) {
    MemoryContext merge_context = AllocSetContextCreate(CurrentMemoryContext, "simhash merge", ALLOCSET_DEFAULT_SIZES);
    MemoryContext old_context = MemoryContextSwitchTo(merge_context);
    Buffer meta_buffer = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
    const BlockNumber freed = recycle_retired(index, meta_buffer);
    detach_pending(index, meta_buffer);
    simhash_debug_pause();
    if (merge_inputs(index, meta_buffer, nullptr, 0, true)) {
        for (int round = 0; round < SIMHASH_MAX_RUNS; ++round) {
            CHECK_FOR_INTERRUPTS();
            BlockNumber inputs[kTierFanout];
            const int ninputs = runs_to_merge(index, meta_buffer, inputs);
            if (ninputs == 0 || !merge_inputs(index, meta_buffer, inputs, ninputs, false)) break;
            MemoryContextReset(merge_context);
        }
    }
    if (compact) compact_dead_runs(index, meta_buffer);
    ReleaseBuffer(meta_buffer);
    MemoryContextSwitchTo(old_context);
    MemoryContextDelete(merge_context);
    return freed;
}

struct PageVisit {
    bool *reachable;
    BlockNumber nblocks;
};

void mark_visitor(BlockNumber blkno, void *arg) {
    PageVisit *v = static_cast<PageVisit *>(arg);
    if (blkno < v->nblocks) v->reachable[blkno] = true;
}

// Of `candidates` (pending pages no run reached), those in neither the pending list nor the list
// being merged go to `garbage`. All under the metapage's share lock: an insert links a page into
// the pending list (a new one, or a deleted one from the FSM) only under its exclusive lock, so a
// candidate outside both lists while the lock is held belongs to no list; once the lock is let go
// an insert may link pages in, and a candidate's flags read then could be such a page's. Merges,
// the only other writers of the lists, wait for the merge lock the caller holds.
void collect_orphaned_pending(Relation index, PageVisit *v, const BlockList *candidates, BlockList *garbage) {
    Buffer meta_buffer = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
    LockBuffer(meta_buffer, BUFFER_LOCK_SHARE);
    const SimhashMetaData *meta = simhash_check_meta(index, BufferGetPage(meta_buffer));
    read_chain(index, meta->pending_head, SIMHASH_PENDING, mark_visitor, v, nullptr);
    read_chain(index, meta->merge_head, SIMHASH_PENDING, mark_visitor, v, nullptr);
    for (Size i = 0; i < candidates->n; ++i) {
        const BlockNumber blkno = candidates->items[i];
        if (!v->reachable[blkno] && (simhash_page_flags(index, blkno) & SIMHASH_PENDING)) block_list_push(garbage, blkno);
    }
    UnlockReleaseBuffer(meta_buffer);
}

// Whether some page is neither reached by the metapage nor free in the FSM, as after a merge that
// crashed (or an FSM that lost deleted pages): only then is the index walked page by page. Reads
// the FSM only. Pages inserts add to the pending list meanwhile only make the answer yes.
bool pages_unaccounted_for(Relation index, const SimhashMetaData *meta, BlockNumber nblocks) {
    if (meta->merge_head != InvalidBlockNumber) return true;  // a merge list left attached
    // A page the FSM lists counts as free only if it is: the FSM is not WAL-logged, and after a
    // crash it can still list pages that a merge took, wrote a run into, and never swapped in.
    BlockNumber free_pages = 0;
    for (BlockNumber blkno = 1; blkno < nblocks; ++blkno) {
        if (GetRecordedFreeSpace(index, blkno) == 0) continue;
        const uint16 flags = simhash_page_flags(index, blkno);
        if (flags == 0 || (flags & SIMHASH_DELETED)) ++free_pages;
    }
    return static_cast<uint64>(nblocks) - free_pages > simhash_pages_in_use(meta);
}

// VACUUM's first pass over one chain: dead entries become tombstones. Returns how many it marked;
// *tombstones (if given) gets how many the chain holds now, old ones included, so that a count a
// crashed VACUUM left short is corrected by the next one.
double mark_dead(Relation index, BlockNumber blkno, uint16 flags, IndexBulkDeleteCallback callback,
                 void *callback_state, uint64 *tombstones) {
    double removed = 0;
    uint64 present = 0;
    while (blkno != InvalidBlockNumber) {
        vacuum_delay_point_compat();
        Buffer buffer;
        Page page = simhash_lock_page(index, blkno, BUFFER_LOCK_SHARE, flags, &buffer);
        const int n = SimhashPageGetOpaque(page)->nentries;
        bool dead[SIMHASH_ENTRIES_PER_PAGE];
        int ndead = 0;
        // The callback reads the dead TIDs' array only: safe under a buffer lock, as for nbtree.
        for (int i = 0; i < n; ++i) {
            ItemPointerData tid = simhash_heap_tid(simhash_page_tid(page, i));
            const bool tombstone = simhash_tid_is_dead(&tid);
            dead[i] = !tombstone && callback(&tid, callback_state);
            ndead += dead[i];
            present += tombstone;
        }
        if (ndead > 0) {
            // Pending pages may gain entries meanwhile; only the first n are ours to mark.
            LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
            LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
            GenericXLogState *state = GenericXLogStart(index);
            Page image = GenericXLogRegisterBuffer(state, buffer, 0);
            for (int i = 0; i < n; ++i)
                if (dead[i]) ItemPointerSetOffsetNumber(simhash_page_tid(image, i), 0);
            GenericXLogFinish(state);
            removed += ndead;
        }
        blkno = SimhashPageGetOpaque(page)->next;
        UnlockReleaseBuffer(buffer);
    }
    if (tombstones) *tombstones = present + static_cast<uint64>(removed);
    return removed;
}

}  // namespace

void simhash_collect_run_pages(Relation index, BlockNumber header, void (*visit)(BlockNumber, void *), void *arg) {
    SimhashRunData *run = static_cast<SimhashRunData *>(palloc(sizeof(SimhashRunData)));
    simhash_read_run(index, header, nullptr, run);
    visit(header, arg);
    for (int t = 0; t < run->ntables; ++t)
        read_chain(index, run->tables[t].first, t == 0 ? SIMHASH_DATA : SIMHASH_REF, visit, arg, nullptr);
    BlockNumber *list = simhash_read_page_list(index, run);
    for (Size i = run->tables[0].npages; i < simhash_page_list_length(run); ++i) visit(list[i], arg);  // directories
    for (uint32 i = 0; i < run->nmappages; ++i) visit(run->map[i], arg);
    pfree(list);
    pfree(run);
}

void simhash_visit_retired(Relation index, const SimhashRetired *retired, void (*visit)(BlockNumber, void *), void *arg) {
    if (retired->kind == SIMHASH_RUN)
        simhash_collect_run_pages(index, retired->head, visit, arg);
    else
        read_chain(index, retired->head, SIMHASH_PENDING, visit, arg, nullptr);
}

BlockNumber simhash_reclaim_unreachable_pages(Relation index) {
    // With the merge lock held no merge writes or frees runs, so every page of a run that neither
    // the metapage's runs nor its retired sets reach was left by a merge that crashed (a new run
    // before its swap, or a recycled set half freed), and so is every pending page in no list.
    // Deleted and new pages go back to the FSM, which is not WAL-logged and may have lost them.
    lock_merges(index);
    SimhashMetaData *meta = static_cast<SimhashMetaData *>(palloc(sizeof(SimhashMetaData)));
    simhash_read_meta(index, meta);
    const BlockNumber nblocks = RelationGetNumberOfBlocks(index);
    if (!pages_unaccounted_for(index, meta, nblocks)) {
        unlock_merges(index);
        return 0;
    }
    PageVisit visit;
    visit.reachable = static_cast<bool *>(palloc0(Max(nblocks, 1)));
    visit.nblocks = nblocks;
    visit.reachable[SIMHASH_METAPAGE_BLKNO] = true;
    for (uint32 i = 0; i < meta->nruns; ++i) simhash_collect_run_pages(index, meta->runs[i].header, mark_visitor, &visit);
    for (uint32 i = 0; i < meta->nretired; ++i) simhash_visit_retired(index, &meta->retired[i], mark_visitor, &visit);

    BlockList *garbage = static_cast<BlockList *>(palloc0(sizeof(BlockList)));
    BlockList *pending_candidates = static_cast<BlockList *>(palloc0(sizeof(BlockList)));
    for (BlockNumber blkno = 1; blkno < nblocks; ++blkno) {
        if (visit.reachable[blkno]) continue;
        vacuum_delay_point_compat();
        // A deleted page an insert takes from the FSM meanwhile may be recorded free again: the
        // FSM only suggests pages, and simhash_new_buffer takes none that is not deleted.
        // A new (all-zero) page: the relation was extended and the server stopped before the
        // page's first WAL record was flushed. An insert extending the relation right now may
        // have its page recorded too: inserts take pages under the metapage's exclusive lock and
        // set them up before letting go of it, merges wait for the merge lock held here, and
        // simhash_new_buffer takes no FSM page that is not new or deleted, so the record can only
        // be stale.
        const uint16 flags = simhash_page_flags(index, blkno);
        if (flags == 0 || (flags & SIMHASH_DELETED))
            RecordFreeIndexPage(index, blkno);
        else if (flags & (SIMHASH_DATA | SIMHASH_REF | SIMHASH_DIR | SIMHASH_MAP | SIMHASH_RUN))
            block_list_push(garbage, blkno);
        else if (flags & SIMHASH_PENDING)
            block_list_push(pending_candidates, blkno);
    }
    if (pending_candidates->n > 0) collect_orphaned_pending(index, &visit, pending_candidates, garbage);
    free_pages(index, garbage);
    IndexFreeSpaceMapVacuum(index);
    const BlockNumber reclaimed = static_cast<BlockNumber>(garbage->n);
    unlock_merges(index);
    return reclaimed;
}

BlockNumber simhash_merge(Relation index, bool vacuum) {
    if (vacuum)
        lock_merges(index);
    else if (!ConditionalLockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock))
        return 0;
    const BlockNumber freed = merge_locked(index, vacuum);
    unlock_merges(index);
    return freed;
}

IndexBulkDeleteResult *simhash_ambulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
                                            IndexBulkDeleteCallback callback, void *callback_state) {
    Relation index = info->index;
    if (!stats) stats = static_cast<IndexBulkDeleteResult *>(palloc0(sizeof(IndexBulkDeleteResult)));
    lock_merges(index);
    SimhashMetaData *meta = static_cast<SimhashMetaData *>(palloc(sizeof(SimhashMetaData)));
    simhash_read_meta(index, meta);
    SimhashRunData *run = static_cast<SimhashRunData *>(palloc(sizeof(SimhashRunData)));
    uint64 tombstones[SIMHASH_MAX_RUNS] = {0};
    double total = 0;
    for (uint32 i = 0; i < meta->nruns; ++i) {
        simhash_read_run(index, meta->runs[i].header, &meta->runs[i], run);
        total += mark_dead(index, run->tables[0].first, SIMHASH_DATA, callback, callback_state, &tombstones[i]);
    }
    total += mark_dead(index, meta->pending_head, SIMHASH_PENDING, callback, callback_state, nullptr);
    total += mark_dead(index, meta->merge_head, SIMHASH_PENDING, callback, callback_state, nullptr);

    // Record the tombstone counts on the metapage (runs are matched by header: only merges change
    // the list, and they wait for the merge lock we hold).
    Buffer meta_buffer = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
    LockBuffer(meta_buffer, BUFFER_LOCK_EXCLUSIVE);
    simhash_check_meta(index, BufferGetPage(meta_buffer));
    GenericXLogState *state = GenericXLogStart(index);
    SimhashMetaData *m = SimhashPageGetMeta(GenericXLogRegisterBuffer(state, meta_buffer, 0));
    // Tombstones in the lists: backend copies of them must be read again before a heap TID this
    // VACUUM frees can be reused.
    m->pending_epoch++;
    for (uint32 i = 0; i < m->nruns; ++i) {
        Assert(m->runs[i].header == meta->runs[i].header);
        m->runs[i].ndead = tombstones[i];
    }
    GenericXLogFinish(state);
    LockBuffer(meta_buffer, BUFFER_LOCK_UNLOCK);

    // Runs a fifth dead are rewritten alone, once the retired sets that can be are recycled.
    stats->pages_deleted += recycle_retired(index, meta_buffer);
    compact_dead_runs(index, meta_buffer);
    ReleaseBuffer(meta_buffer);
    unlock_merges(index);
    stats->tuples_removed += total;
    return stats;
}

IndexBulkDeleteResult *simhash_amvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats) {
    if (info->analyze_only) return stats;
    if (!stats) stats = static_cast<IndexBulkDeleteResult *>(palloc0(sizeof(IndexBulkDeleteResult)));
    // Write the pending list out, merge tiers, rewrite runs a fifth dead, recycle.
    stats->pages_deleted += simhash_merge(info->index, true) + simhash_reclaim_unreachable_pages(info->index);
    stats->num_pages = RelationGetNumberOfBlocks(info->index);
    SimhashMetaData *meta = static_cast<SimhashMetaData *>(palloc(sizeof(SimhashMetaData)));
    simhash_read_meta(info->index, meta);
    stats->num_index_tuples = static_cast<double>(simhash_run_entries(meta) + meta->npending + meta->nmerge);
    stats->estimated_count = false;
    return stats;
}
