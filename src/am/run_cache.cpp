// The backend-local cache of run headers, directories and page lists. A scan otherwise reads a
// run's header page (and copies up to 8 kB of it) for every run, a map page and a directory page
// for every probe and a map page for every entry it fetches from table 0; with the cache a probe
// goes straight to its data page and a fetch to its table-0 page. Entries are keyed by the metapage's random
// index_id and the relation file (a REINDEX or TRUNCATE gives new ones), header block and serial
// (a recycled header block gets a new serial), so a stale entry is never found, only left to age
// out: past kCacheBytes the whole cache is dropped and refilled by later scans.
#include <cstdlib>

#include "am/simhash_am.h"

extern "C" {
#include "pgstat.h"
#include "storage/buf_internals.h"
#include "utils/memutils.h"
}

namespace {

// The page lists and directory pages copied: at 300M entries the largest run's three directories
// are 48 MB, of which queries copy what their probes touch.
constexpr Size kCacheBytes = 128 * 1024 * 1024;
constexpr int kCacheEntries = 128;

struct CacheEntry {
    uint64 index_id;
    Oid tablespace;
    Oid relfilenode;
    BlockNumber header;
    uint64 serial;
    SimhashCachedRun cached;
    Size bytes;
    MemoryContext context;
};

MemoryContext cache_context = nullptr;
CacheEntry entries[kCacheEntries];
int nentries = 0;
Size cached_bytes = 0;

void drop_all() {
    if (cache_context) MemoryContextReset(cache_context);
    nentries = 0;
    cached_bytes = 0;
}

void load(Relation index, const SimhashRunSlot *slot, CacheEntry *e) {
    MemoryContext old = MemoryContextSwitchTo(cache_context);
    SimhashRunData *run = static_cast<SimhashRunData *>(palloc(sizeof(SimhashRunData)));
    simhash_read_run(index, slot->header, slot, run);  // checks the directory and map page counts too
    // Directory pages are copied as probes need them (simhash_cached_dir_slot), each into its own
    // allocation: a run's directories reach 32 MB a table, of which a query touches a few pages.
    Size bytes = sizeof(SimhashRunData);
    for (int t = 0; t < run->ntables; ++t) {
        e->cached.dir[t] = static_cast<SimhashDirSlot **>(palloc0(run->tables[t].ndirpages * sizeof(SimhashDirSlot *)));
        bytes += run->tables[t].ndirpages * sizeof(SimhashDirSlot *);
    }
    const Size map_slots = static_cast<Size>(run->nmappages) * SIMHASH_MAP_PER_PAGE;
    e->cached.pages = static_cast<BlockNumber *>(MemoryContextAllocHuge(cache_context, Max(map_slots, 1) * sizeof(BlockNumber)));
    e->cached.map_loaded = static_cast<uint8 *>(palloc0(run->nmappages / 8 + 1));
    bytes += map_slots * sizeof(BlockNumber) + run->nmappages / 8 + 1;
    e->cached.permuter = simhash_new_permuter(run->key_order);
    if (e->cached.permuter) bytes += sizeof(simhash::BitPermuter);
    MemoryContextSwitchTo(old);
    e->cached.run = run;
    e->bytes = bytes;
}

}  // namespace

void simhash_cached_run(Relation index, uint64 index_id, const SimhashRunSlot *slot, SimhashCachedRun *out) {
    const Oid tablespace = index->rd_rel->reltablespace, relfilenode = index->rd_rel->relfilenode;
    for (int i = 0; i < nentries; ++i) {
        const CacheEntry *e = &entries[i];
        if (e->header == slot->header && e->serial == slot->serial && e->index_id == index_id &&
            e->relfilenode == relfilenode && e->tablespace == tablespace) {
            *out = e->cached;
            return;
        }
    }
    if (!cache_context)
        cache_context = AllocSetContextCreate(TopMemoryContext, "simhash run cache", ALLOCSET_DEFAULT_SIZES);
    if (nentries == kCacheEntries || cached_bytes > kCacheBytes) drop_all();
    // Filled in a scratch entry and published only once complete: an error while reading leaves
    // the cache as it was (the palloc'd parts are reclaimed by the next drop_all).
    CacheEntry e = {};
    e.index_id = index_id;
    e.tablespace = tablespace;
    e.relfilenode = relfilenode;
    e.header = slot->header;
    e.serial = slot->serial;
    load(index, slot, &e);
    entries[nentries++] = e;
    cached_bytes += e.bytes;
    *out = e.cached;
}

namespace {

// Map pages are copied into a run's cache entry page by page, as probes and fetches first need
// them; a bit per page says the page's elements are in place.
bool page_copied(const uint8 *copied, Size page) { return (copied[page / 8] >> (page % 8)) & 1; }

// Copies the `n` elements of page `blkno` (SIMHASH_DIR or SIMHASH_MAP) to `dest`, those the page
// does not store as `missing`.
template <typename T>
void copy_page(Relation index, BlockNumber blkno, uint16 flags, T *dest, Size n, const T &missing) {
    Buffer buffer;
    Page contents = simhash_lock_page(index, blkno, BUFFER_LOCK_SHARE, flags, &buffer);
    const Size stored = Min(static_cast<Size>(SimhashPageGetOpaque(contents)->nentries), n);
    memcpy(dest, PageGetContents(contents), stored * sizeof(T));
    for (Size i = stored; i < n; ++i) dest[i] = missing;
    UnlockReleaseBuffer(buffer);
}

// Entry `list_index` of a cached run's page list, its map page copied first if needed.
BlockNumber cached_list_page(Relation index, const SimhashCachedRun *cached, Size list_index) {
    const SimhashRunData *run = cached->run;
    const Size m = list_index / SIMHASH_MAP_PER_PAGE;
    if (m >= run->nmappages)
        ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
                        errmsg("index \"%s\" has no map page for entry %zu of a run's page list",
                               RelationGetRelationName(index), list_index)));
    if (!page_copied(cached->map_loaded, m)) {
        copy_page(index, run->map[m], SIMHASH_MAP, cached->pages + m * SIMHASH_MAP_PER_PAGE,
                  static_cast<Size>(SIMHASH_MAP_PER_PAGE), InvalidBlockNumber);
        cached->map_loaded[m / 8] |= static_cast<uint8>(1u << (m % 8));
    }
    const BlockNumber blkno = cached->pages[list_index];
    if (blkno == InvalidBlockNumber)
        ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
                        errmsg("index \"%s\" has no map slot for entry %zu of a run's page list",
                               RelationGetRelationName(index), list_index)));
    return blkno;
}

}  // namespace

const SimhashDirSlot *simhash_cached_dir_slot(Relation index, const SimhashCachedRun *cached, int t, Size prefix) {
    const SimhashDirSlot *slot = simhash_copied_dir_slot(cached, t, prefix);
    if (slot) return slot;
    const SimhashRunData *run = cached->run;
    const Size d = prefix / SIMHASH_DIRSLOTS_PER_PAGE;
    if (d >= run->tables[t].ndirpages)
        ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
                        errmsg("index \"%s\" has no directory page %zu in table %d", RelationGetRelationName(index), d, t)));
    const BlockNumber blkno = cached_list_page(index, cached, simhash_dir_list_index(run, t, d));
    const Size first = d * SIMHASH_DIRSLOTS_PER_PAGE;
    const Size n = Min(static_cast<Size>(SIMHASH_DIRSLOTS_PER_PAGE), (Size{1} << simhash_table_dirbits(run->ntables, run->dirbits, t)) - first);
    SimhashDirSlot *slots = static_cast<SimhashDirSlot *>(MemoryContextAlloc(cache_context, n * sizeof(SimhashDirSlot)));
    const SimhashDirSlot none = {InvalidBlockNumber, 0, 0};
    copy_page(index, blkno, SIMHASH_DIR, slots, n, none);
    cached->dir[t][d] = slots;  // published only once complete: an error above leaves it uncopied
    cached_bytes += n * sizeof(SimhashDirSlot);
    return slots + prefix % SIMHASH_DIRSLOTS_PER_PAGE;
}

BlockNumber simhash_cached_table0_block(Relation index, const SimhashCachedRun *cached, Size page_index) {
    if (page_index >= cached->run->tables[0].npages)  // a position read from a ref page
        ereport(ERROR, (errcode(ERRCODE_INDEX_CORRUPTED),
                        errmsg("index \"%s\" refers to table-0 page %zu beyond its map", RelationGetRelationName(index),
                               page_index)));
    return cached_list_page(index, cached, page_index);
}

namespace {

// Where this backend last found index pages in shared buffers, direct-mapped by block (and file).
struct BufferHint {
    Oid relfilenode;
    BlockNumber blkno;
    Buffer buffer;
};
// 1.5 MB: one slot per page of a 1 GB index; a bulk load's batch search, which reads every page of
// its index, asks for up to kMaxHintBits (24 MB, a 16 GB index).
constexpr int kHintBits = 17;
constexpr int kMaxHintBits = 21;
BufferHint *buffer_hints = nullptr;
int hint_bits = kHintBits;
// Hints missed since the hints were last filled from the buffer headers (fill_hints).
uint64 hint_misses = 0;

// The hints live outside memory contexts, from calloc: a large calloc maps fresh pages, zero
// already, which the kernel supplies as they are first touched. Zeroed by palloc, the 24 MB a
// query on a 300M-row index asks for cost the backend's first query about 10 ms of page faults
// and memset before its first probe.
BufferHint *zeroed_hints(int bits) { return static_cast<BufferHint *>(calloc(Size{1} << bits, sizeof(BufferHint))); }

BufferHint *hint_for(Relation index, BlockNumber blkno) {
    if (buffer_hints == nullptr) {
        buffer_hints = zeroed_hints(hint_bits);
        if (buffer_hints == nullptr) ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
    }
    const uint32 slot = (blkno ^ (index->rd_rel->relfilenode * 0x9E3779B1u)) & ((1u << hint_bits) - 1);
    return &buffer_hints[slot];
}

// Remembers that page `blkno` of `index` sits in `buffer`.
void set_hint(Relation index, BlockNumber blkno, Buffer buffer) {
    BufferHint *hint = hint_for(index, blkno);
    hint->relfilenode = index->rd_rel->relfilenode;
    hint->blkno = blkno;
    hint->buffer = buffer;
}

// A backend's first probes of a large index find no hints: each looks its page up in the shared
// buffer mapping table (a partition lock and a few dependent cache misses, about 0.7 µs at 12GB of
// shared buffers) until the hints cover the pages, which at 300M rows takes over a million
// probes. Once a backend has missed this many hints, it reads every buffer header once instead
// (in order, about 7 ns a buffer: 10 ms for 12GB) and hints each page of the index it finds
// there: the read costs about a sixth of the misses that led to it, and it is repeated only after
// as many misses again (pages read into shared buffers since, or an index larger than them).
uint64 hint_fill_threshold() { return Max(static_cast<uint64>(NBuffers) / 16, uint64{64}); }

// Hints for every page of `index` found in shared buffers. The tags are read without the headers'
// spinlocks: a tag changing under the read leaves a wrong hint, which ReadRecentBuffer refuses
// under the lock as it does any stale hint.
void fill_hints(Relation index) {
    int hinted = 0;
    for (int i = 0; i < NBuffers; ++i) {
        BufferDesc *desc = GetBufferDescriptor(i);
        if (!(pg_atomic_read_u32(&desc->state) & BM_VALID)) continue;
        const BufferTag tag = desc->tag;
        if (!simhash_tag_is_main_fork_of(tag, index)) continue;
        set_hint(index, tag.blockNum, i + 1);
        ++hinted;
    }
    elog(DEBUG2, "simhash: hinted %d pages of index \"%s\" found in %d shared buffers", hinted,
         RelationGetRelationName(index), NBuffers);
}

}  // namespace

Buffer simhash_read_buffer_hinted(Relation index, BlockNumber blkno) {
    BufferHint *hint = hint_for(index, blkno);
    // ReadRecentBuffer checks that the buffer still holds this page of this file: a stale or
    // colliding hint only costs the usual lookup.
    if (hint->buffer != InvalidBuffer && hint->blkno == blkno && hint->relfilenode == index->rd_rel->relfilenode &&
        simhash_read_recent_buffer(index, blkno, hint->buffer)) {
        pgstat_count_buffer_hit(index);  // as ReadBuffer counts it in pg_statio_*_indexes
        return hint->buffer;
    }
    if (++hint_misses >= hint_fill_threshold()) {
        hint_misses = 0;
        fill_hints(index);
    }
    const Buffer buffer = ReadBuffer(index, blkno);
    set_hint(index, blkno, buffer);
    return buffer;
}

void simhash_reserve_buffer_hints(uint64 pages) {
    int bits = hint_bits;
    while (bits < kMaxHintBits && (uint64{1} << bits) < pages) ++bits;
    if (bits == hint_bits) return;
    // The old hints are dropped (they are only hints): the next reads look their pages up once.
    // Without the memory for more, the backend keeps the hints it has.
    BufferHint *larger = zeroed_hints(bits);
    if (larger == nullptr) return;
    free(buffer_hints);
    buffer_hints = larger;
    hint_bits = bits;
}

void simhash_prefetch_buffer_hint(Relation index, BlockNumber blkno) { __builtin_prefetch(hint_for(index, blkno)); }

void simhash_prefetch_buffer_header(Relation index, BlockNumber blkno) {
    const BufferHint *hint = hint_for(index, blkno);
    if (hint->buffer > 0 && hint->blkno == blkno) __builtin_prefetch(GetBufferDescriptor(hint->buffer - 1));
}
