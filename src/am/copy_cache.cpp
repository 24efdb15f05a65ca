// Backend copies of the unsorted lists and of small runs' table 0 (see simhash_am.h).
//
// Without them a query reads every page of the pending list and compares every entry (up to 18,624
// per query at the default pending_limit), and probes each small run's four tables page by page: a
// dedup-on-load trigger, one query per inserted row, spent most of its time there. With them such
// a query touches no index page but the metapage and the large runs' probed pages.
//
// Why a copy stays right:
//  - a list changes only by appends to its tail page until a merge detaches it, a merge finishes
//    with it, or VACUUM sets tombstones in it; all three change the metapage's pending_epoch. A
//    detached list's pages may come back (recycled) in a new list only after such a change;
//  - a run's pages never change but for tombstones, whose count VACUUM stores in the run's slot
//    (ndead) before it returns; a run's header block comes back only with a new serial;
//  - a query reads the metapage after taking its snapshot. A heap TID that VACUUM frees, and a new
//    row may then reuse, was tombstoned and the epoch or count moved before the heap freed it: a
//    query that can see the new row reads the new key and so a copy without the old entry.
// Dead entries are left out of copies. The least recently used copies are dropped past kCacheBytes.
#include "am/simhash_am.h"

extern "C" {
#include "miscadmin.h"
#include "utils/memutils.h"
}

namespace {

constexpr uint64 kMaxEntries = 524288;             // per copy: about 16 MB
constexpr Size kCacheBytes = 48 * 1024 * 1024;     // all copies of a backend
constexpr int kSlots = 32;

// A run's copy is made once it has paid for itself (ski rental): a query that probes a run's pages
// instead costs about as much as copying kEntriesPerProbedQuery entries (a copy: about 0.3 us an
// entry with its buckets; probing a run's four tables: a few us), so a run is copied when the
// backend has probed it nentries / kEntriesPerProbedQuery times, and at once when it is at most
// kCopyAtOnce entries (a few ms). A backend that asks one question (a connection per query) no
// longer copies every small run first (200 ms for 690,000 entries), and one that asks many (a
// dedup-on-load trigger) spends at most about twice what the best choice would have.
constexpr uint64 kCopyAtOnce = 16384;
constexpr uint64 kEntriesPerProbedQuery = 32;

struct CopyKey {
    uint64 index_id;
    Oid tablespace;
    Oid relfilenode;
    BlockNumber head;  // a list's first page, or a run's header
    uint64 version;    // a list's epoch, or a run's serial
    uint64 ndead;      // a run's tombstone count
    bool same_as(const CopyKey &o) const {
        return index_id == o.index_id && tablespace == o.tablespace && relfilenode == o.relfilenode &&
               head == o.head && version == o.version && ndead == o.ndead;
    }
};

struct Copy {
    bool valid;
    CopyKey key;
    uint16 page_flags;
    BlockNumber last;  // the last page read, and how many of its entries
    uint16 last_count;
    uint64 nread;      // entries read, dead ones included
    uint64 *fps;       // live entries
    ItemPointerData *tids;
    Size n;
    Size capacity;
    Size planned;  // the capacity room was made for (make_room): growth stops there
    Size bytes;
    void *bucket_memory;
    const simhash::BitPermuter *order;  // a run's bit order (in the copy's context), null for lists
    bool sorted;                        // a run's copy: frozen tables once read, no chains
    simhash::BlockBuckets buckets;
    SimhashCachedChain view;
    uint64 last_use;
    MemoryContext context;
};

Copy copies[kSlots];
uint64 use_clock = 0;
uint64 scan_start = 0;  // use_clock when the current scan began: copies used since are in use
MemoryContext cache_context = nullptr;

// Runs probed from their pages and not yet worth a copy, with how many queries probed them.
struct ProbedRun {
    CopyKey key;
    uint64 queries;
};
ProbedRun probed_runs[kSlots];

// Counts one more query that would use a copy of this run; true once the copy has paid for itself.
bool run_copy_paid_for(const CopyKey &key, uint64 nentries) {
    if (nentries <= kCopyAtOnce) return true;
    ProbedRun *entry = nullptr;
    for (ProbedRun &r : probed_runs)
        if (r.queries > 0 && r.key.same_as(key)) entry = &r;
    if (entry == nullptr) {  // a free slot, or the run probed least
        for (ProbedRun &r : probed_runs)
            if (entry == nullptr || r.queries < entry->queries) entry = &r;
        entry->key = key;
        entry->queries = 0;
    }
    entry->queries++;
    if (entry->queries * kEntriesPerProbedQuery < nentries) return false;
    entry->queries = 0;  // the copy is made now; the slot is free again
    return true;
}

Size cached_bytes() {
    Size total = 0;
    for (const Copy &c : copies)
        if (c.valid) total += c.bytes;
    return total;
}

void reset(Copy *c, BlockNumber first, uint16 page_flags, bool sorted) {
    if (c->context == nullptr)
        c->context = AllocSetContextCreate(cache_context, "simhash index copy", ALLOCSET_DEFAULT_SIZES);
    else
        MemoryContextReset(c->context);
    c->page_flags = page_flags;
    c->fps = nullptr;
    c->tids = nullptr;
    c->n = c->capacity = c->planned = c->bytes = 0;
    c->bucket_memory = nullptr;
    c->order = nullptr;
    c->sorted = sorted;
    c->buckets = simhash::BlockBuckets{};
    c->last = first;
    c->last_count = 0;
    c->nread = 0;
}

// Bytes a copy of `capacity` entries takes: a list's with chains, a run's with frozen tables.
Size copy_bytes(Size capacity, bool sorted) {
    const int bits = simhash::block_buckets_bits_for(capacity);
    return capacity * (sizeof(uint64) + sizeof(ItemPointerData)) + sizeof(simhash::BitPermuter) +
           (sorted ? simhash::block_buckets_frozen_bytes(bits, capacity) : simhash::block_buckets_bytes(bits, capacity));
}

// Room for `needed` entries, and buckets sized for the room (rebuilt when it grows). Doubling (a
// list's copy grows by a few entries a query) up to the capacity the cache made room for.
void reserve(Copy *c, Size needed) {
    if (needed > c->capacity) {
        Size capacity = Min(Max(c->capacity * 2, static_cast<Size>(1024)), Max(c->planned, needed));
        capacity = Max(capacity, needed);
        // Huge: a batch's own copy of a list (simhash_batch_list_copy) has no entry limit.
        c->fps = static_cast<uint64 *>(c->fps ? repalloc_huge(c->fps, capacity * sizeof(uint64))
                                               : MemoryContextAllocHuge(c->context, capacity * sizeof(uint64)));
        c->tids = static_cast<ItemPointerData *>(
            c->tids ? repalloc_huge(c->tids, capacity * sizeof(ItemPointerData))
                    : MemoryContextAllocHuge(c->context, capacity * sizeof(ItemPointerData)));
        c->capacity = capacity;
    }
    if (!c->sorted && (c->bucket_memory == nullptr || c->buckets.capacity < c->capacity)) {
        const int bits = simhash::block_buckets_bits_for(c->capacity);
        if (c->bucket_memory) pfree(c->bucket_memory);
        c->bucket_memory = MemoryContextAllocHuge(c->context, simhash::block_buckets_bytes(bits, c->capacity));
        simhash::block_buckets_init(&c->buckets, c->bucket_memory, bits, c->capacity, c->order);
    }
    c->bytes = copy_bytes(c->capacity, c->sorted);
}

// Makes room for `bytes` more by dropping copies the current scan has not used, least recently
// used first; false if that is not enough. Copies a scan uses are never dropped for another of
// the same scan: when all of a scan's copies do not fit, the ones that do stay, and the others'
// entries are read from their pages, instead of each copy evicting the next one it needs.
bool make_room(Size bytes) {
    Size total = cached_bytes();
    while (total + bytes > kCacheBytes) {
        Copy *victim = nullptr;
        for (Copy &o : copies)
            if (o.valid && o.last_use < scan_start && (victim == nullptr || o.last_use < victim->last_use)) victim = &o;
        if (victim == nullptr) return false;
        total -= victim->bytes;
        victim->valid = false;
        MemoryContextReset(victim->context);
    }
    return true;
}

// Reads the entries appended since the copy was last brought up to date, up to `limit` entries in
// all (dead ones included): a list's count as the scan copied it from the metapage, since a merge
// that detaches the pending list links it behind the list being merged (see scan_chain in scan.cpp).
// Stops past `max_entries` (the cache's limit; a batch's own copy has none).
void catch_up(Relation index, Copy *c, uint64 limit, uint64 max_entries = kMaxEntries) {
    BlockNumber blkno = c->last;
    int start = c->last_count;
    while (blkno != InvalidBlockNumber && c->nread < limit) {
        CHECK_FOR_INTERRUPTS();
        Buffer buffer;
        Page page = simhash_lock_page(index, blkno, BUFFER_LOCK_SHARE, c->page_flags, &buffer);
        const SimhashPageOpaque *opaque = SimhashPageGetOpaque(page);
        const int n = simhash_page_entries(opaque, start + (limit - c->nread));
        if (n > start) {
            reserve(c, c->n + (n - start));
            const int64 *fps = SimhashPageGetFps(page);
            for (int i = start; i < n; ++i) {
                const ItemPointerData *tid = simhash_page_tid(page, i);
                if (simhash_tid_is_dead(tid)) continue;
                c->fps[c->n] = static_cast<uint64>(fps[i]);
                c->tids[c->n] = *tid;
                c->n++;
            }
            c->nread += n - start;
        }
        c->last = blkno;
        c->last_count = static_cast<uint16>(Max(n, start));
        const BlockNumber next = opaque->next;
        UnlockReleaseBuffer(buffer);
        if (next == InvalidBlockNumber || c->nread > max_entries || c->nread >= limit) break;
        blkno = next;
        start = 0;
    }
    if (!c->sorted) {
        simhash::block_buckets_link(&c->buckets, c->fps, c->n);
    } else if (c->nread <= kMaxEntries) {
        // A run's copy is read in one go, to the end of its table 0: sort it per table.
        const int bits = simhash::block_buckets_bits_for(c->n);
        c->bucket_memory = MemoryContextAllocHuge(c->context, simhash::block_buckets_frozen_bytes(bits, c->n));
        simhash::block_buckets_freeze(&c->buckets, c->bucket_memory, bits, c->fps, c->n, c->order);
    }
}

const SimhashCachedChain *view_of(Copy *c) {
    c->view.fps = c->fps;
    c->view.tids = c->tids;
    c->view.buckets = &c->buckets;
    return &c->view;
}

// The copy of `key`, brought up to date with at least `nentries` entries, or null if too large or
// if it does not fit beside the copies in use. A run's size is known: it is reserved exactly.
const SimhashCachedChain *cached_copy(Relation index, const CopyKey &key, BlockNumber first, uint16 page_flags,
                                      uint64 nentries, const SimhashRunData *run) {
    const bool fixed_size = run != nullptr;
    if (first == InvalidBlockNumber || nentries > kMaxEntries) return nullptr;
    if (cache_context == nullptr)
        cache_context = AllocSetContextCreate(TopMemoryContext, "simhash index copies", ALLOCSET_DEFAULT_SIZES);
    Copy *c = nullptr;
    for (int i = 0; i < kSlots && c == nullptr; ++i)
        if (copies[i].valid && copies[i].key.same_as(key)) c = &copies[i];
    if (c != nullptr) c->last_use = ++use_clock;  // in use: make_room keeps it
    if (c != nullptr && c->capacity < nentries) {
        const Size planned = Min(Max(c->capacity * 2, static_cast<Size>(nentries)), static_cast<Size>(kMaxEntries));
        if (!make_room(copy_bytes(planned, c->sorted) - c->bytes)) return nullptr;  // outgrew the room: read its pages
        c->planned = planned;
    }
    if (c == nullptr && fixed_size && !run_copy_paid_for(key, nentries)) return nullptr;  // read its pages
    if (c == nullptr) {
        const Size planned = fixed_size ? nentries : Max(nentries, static_cast<uint64>(1024));
        if (!make_room(copy_bytes(planned, fixed_size))) return nullptr;
        for (Copy &o : copies)
            if (!o.valid && c == nullptr) c = &o;
        if (c == nullptr) {  // every slot holds a copy: the least recently used one not in use goes
            for (Copy &o : copies)
                if (o.last_use < scan_start && (c == nullptr || o.last_use < c->last_use)) c = &o;
            if (c == nullptr) return nullptr;
        }
        c->valid = false;
        c->key = key;
        c->last_use = ++use_clock;
        reset(c, first, page_flags, fixed_size);
        c->planned = planned;
        if (run != nullptr) {  // the buckets cut the blocks as the run's tables do
            MemoryContext old = MemoryContextSwitchTo(c->context);
            c->order = simhash_new_permuter(run->key_order);
            MemoryContextSwitchTo(old);
        }
        if (fixed_size) reserve(c, nentries);
    }
    if (c->nread < nentries) {
        // Invalid until complete: an error while reading leaves no half-read copy behind.
        c->valid = false;
        catch_up(index, c, nentries);
        if (c->nread > kMaxEntries) return nullptr;  // grew past the limit: the scan reads the pages
    }
    c->valid = true;
    return view_of(c);
}

CopyKey key_of(Relation index, uint64 index_id, BlockNumber head, uint64 version, uint64 ndead) {
    CopyKey key;
    key.index_id = index_id;
    key.tablespace = index->rd_rel->reltablespace;
    key.relfilenode = index->rd_rel->relfilenode;
    key.head = head;
    key.version = version;
    key.ndead = ndead;
    return key;
}

}  // namespace

const SimhashCachedChain *simhash_cached_list(Relation index, uint64 index_id, uint32 epoch, BlockNumber head,
                                              uint64 nentries) {
    // Lists and runs never share a key: a list's has ndead UINT64_MAX.
    return cached_copy(index, key_of(index, index_id, head, epoch, UINT64_MAX), head, SIMHASH_PENDING, nentries,
                       nullptr);
}

const SimhashCachedChain *simhash_cached_run_entries(Relation index, uint64 index_id, const SimhashRunSlot *slot,
                                                     const SimhashRunData *run) {
    return cached_copy(index, key_of(index, index_id, slot->header, slot->serial, slot->ndead), run->tables[0].first,
                       SIMHASH_DATA, slot->nentries, run);
}

const SimhashCachedChain *simhash_batch_list_copy(Relation index, BlockNumber head, uint64 nentries) {
    // Not in the cache: its context is the caller's, and nothing else holds it.
    Copy *c = static_cast<Copy *>(palloc0(sizeof(Copy)));
    c->context = CurrentMemoryContext;
    c->page_flags = SIMHASH_PENDING;
    c->last = head;
    c->planned = nentries;
    reserve(c, nentries);
    catch_up(index, c, nentries, UINT64_MAX);
    return view_of(c);
}

void simhash_copy_cache_scan_begins() { scan_start = use_clock + 1; }
