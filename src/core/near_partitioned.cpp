// Partitioned batch joins (near_partitioned.h): the input is read once per permuted table or band,
// cut into partition files through the caller's SpillStore, and each partition is joined in memory.
#include "near_partitioned.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "near_engine.h"

namespace simhash {
namespace {

using engine::Poller;
using engine::StopRun;

// The files a run creates, closed on every way out of it (a stop, an overflow, an exception).
class RunFiles {
public:
    explicit RunFiles(const SpillStore &store) : store_(store) {}
    ~RunFiles() {
        for (SpillFile *file : files_) store_.close(store_.context, file);
    }
    RunFiles(const RunFiles &) = delete;
    RunFiles &operator=(const RunFiles &) = delete;

    SpillFile *create() {
        files_.reserve(files_.size() + 1);  // so that a created file is always recorded
        SpillFile *file = store_.create(store_.context);
        if (!file) throw StopRun();
        files_.push_back(file);
        return file;
    }
    void close(SpillFile *file) {
        auto it = std::find(files_.begin(), files_.end(), file);
        if (it == files_.end()) return;
        files_.erase(it);
        store_.close(store_.context, file);
    }

private:
    const SpillStore &store_;
    std::vector<SpillFile *> files_;
};

void store_write(const SpillStore &store, SpillFile *file, const void *data, size_t bytes) {
    if (bytes > 0 && !store.write(store.context, file, data, bytes)) throw StopRun();
}

void store_rewind(const SpillStore &store, SpillFile *file) {
    if (!store.rewind(store.context, file)) throw StopRun();
}

// Reads up to `bytes`, fewer only at the end of the file.
size_t store_read(const SpillStore &store, SpillFile *file, void *data, size_t bytes) {
    size_t done = 0;
    if (!store.read(store.context, file, data, bytes, &done)) throw StopRun();
    if (done > bytes) throw std::logic_error("a temporary file read returned more than was asked");
    return done;
}

// Reads exactly `bytes` (a partition whose size is known).
void store_read_exactly(const SpillStore &store, SpillFile *file, void *data, size_t bytes) {
    if (store_read(store, file, data, bytes) != bytes)
        throw std::runtime_error("a temporary file holds fewer records than were written to it");
}

void report_partition(const RunControl &control, const char *phase, uint64_t done, uint64_t total) {
    if (control.progress && !control.progress(control.context, phase, done, total)) throw StopRun();
}

// Records of one size written to `parts` new files, buffered so that the store sees large writes.
class PartitionWriter {
public:
    PartitionWriter(const SpillStore &store, RunFiles &files, size_t parts, size_t record_bytes)
        : store_(store),
          record_bytes_(record_bytes),
          per_part_(std::max<size_t>(kPartitionWriteBufferBytes / (parts * record_bytes), 1)),
          files_(parts),
          counts_(parts, 0),
          buffered_(parts, 0),
          buffer_(parts * per_part_ * record_bytes) {
        for (size_t p = 0; p < parts; ++p) files_[p] = files.create();
    }
    void add(size_t part, const void *record) {
        std::memcpy(&buffer_[(part * per_part_ + buffered_[part]) * record_bytes_], record, record_bytes_);
        ++counts_[part];
        if (++buffered_[part] == per_part_) flush(part);
    }
    void flush_all() {
        for (size_t p = 0; p < files_.size(); ++p) flush(p);
    }
    SpillFile *file(size_t part) const { return files_[part]; }
    size_t count(size_t part) const { return counts_[part]; }
    size_t largest() const { return *std::max_element(counts_.begin(), counts_.end()); }

private:
    void flush(size_t part) {
        store_write(store_, files_[part], &buffer_[part * per_part_ * record_bytes_], buffered_[part] * record_bytes_);
        buffered_[part] = 0;
    }
    const SpillStore &store_;
    const size_t record_bytes_, per_part_;
    std::vector<SpillFile *> files_;
    std::vector<size_t> counts_, buffered_;
    std::vector<unsigned char> buffer_;
};

void check_record_count(uint64_t seen, size_t n) {
    if (seen != n) throw std::runtime_error("a temporary file does not hold the rows that were counted");
}

// Reads a file of `record_bytes` records from its start into `chunk`, up to `chunk_records` at a
// time, and calls on_chunk(records) for each chunk read; returns how many records there were.
template <typename OnChunk>
uint64_t read_records(const SpillStore &store, SpillFile *file, void *chunk, size_t chunk_records, size_t record_bytes,
                      OnChunk on_chunk) {
    store_rewind(store, file);
    uint64_t seen = 0;
    for (;;) {
        const size_t got = store_read(store, file, chunk, chunk_records * record_bytes);
        if (got % record_bytes != 0) throw std::runtime_error("a temporary file ends inside a record");
        const size_t records = got / record_bytes;
        if (records == 0) return seen;
        on_chunk(records);
        seen += records;
    }
}

int fewest_key_bits(const NearPairsPlan &plan) {
    int fewest = 64;
    for (size_t c = 0; c < plan.tables; ++c) fewest = std::min(fewest, combination_key_bits(plan, c));
    return fewest;
}

// Fills *overflow and returns true when n rows cannot spread over 2^bits partitions of
// `capacity` rows whatever the data: one would hold at least ceil(n / 2^bits) (pigeonhole).
bool overflows_whatever_the_data(size_t n, size_t capacity, int bits, int key_bits, PartitionOverflow *overflow) {
    const size_t at_least = n == 0 ? 0 : ((n - 1) >> bits) + 1;
    if (at_least <= capacity) return false;
    *overflow = PartitionOverflow{};
    overflow->whatever_the_data = true;
    overflow->largest = at_least;
    overflow->partitions = size_t{1} << bits;
    overflow->cut_bits = bits;
    overflow->key_bits = key_bits;
    return true;
}

bool overflows(const PartitionWriter &writer, size_t capacity, size_t partitions, int cut_bits, int key_bits,
               size_t table, size_t tables, PartitionOverflow *overflow) {
    const size_t largest = writer.largest();
    if (largest <= capacity) return false;
    *overflow = PartitionOverflow{};
    overflow->largest = largest;
    overflow->partitions = partitions;
    overflow->cut_bits = cut_bits;
    overflow->key_bits = key_bits;
    overflow->table = table;
    overflow->tables = tables;
    return true;
}

// Union-find over row numbers, fed by the partitioned join; the caller's stop and progress
// callbacks are forwarded.
struct UniteRows {
    const RunControl *outer;
    uint32_t *parent;
    const int64_t *ids;
};

bool unite_rows(void *context, const NearPair *pairs, size_t n) {
    const UniteRows *unite = static_cast<const UniteRows *>(context);
    unite_rows_by_pairs(unite->parent, unite->ids, pairs, n);
    return true;
}

bool forward_should_stop(void *context) {
    const RunControl *outer = static_cast<const UniteRows *>(context)->outer;
    return outer->should_stop && outer->should_stop(outer->context);
}

bool forward_progress(void *context, const char *phase, uint64_t done, uint64_t total) {
    const RunControl *outer = static_cast<const UniteRows *>(context)->outer;
    return !outer->progress || outer->progress(outer->context, phase, done, total);
}

}  // namespace

RunStatus near_pairs_partitioned(const PartitionedRows &input, const NearPairsPlan &plan, const SpillStore &store,
                                 const RunControl &control, PartitionOverflow *overflow) {
    if (plan.brute_force || plan.tables == 0)
        throw std::invalid_argument("a partitioned run needs a plan made of permuted tables");
    if (input.capacity == 0 || !input.buffer) throw std::invalid_argument("a partitioned run needs a buffer");
    const size_t n = input.n;
    const int bits = partition_bits(n, input.capacity);
    const int fewest_bits = fewest_key_bits(plan);
    if (overflows_whatever_the_data(n, input.capacity, std::min(bits, fewest_bits), fewest_bits, overflow))
        return RunStatus::partition_too_large;
    const size_t parts = size_t{1} << bits;
    RunControl pass = control;
    pass.progress = nullptr;  // progress is told per partition
    try {
        Poller poller(control);
        RunFiles files(store);
        poller.begin("cutting rows into partitions of permuted tables", plan.tables);
        for (size_t c = 0; c < plan.tables; ++c) {
            poller.step(c);
            const KeyPieces pieces = engine::key_pieces(plan, c);  // once per table, not per row
            const int shift = pieces.bits > bits ? pieces.bits - bits : 0;
            PartitionWriter writer(store, files, parts, sizeof(IdFingerprint));
            const uint64_t seen = read_records(store, input.file, input.buffer, input.capacity, sizeof(IdFingerprint),
                                               [&](size_t rows) {
                                                   for (size_t i = 0; i < rows; ++i) {
                                                       const uint64_t key =
                                                           engine::extract_key(pieces, input.buffer[i].fingerprint);
                                                       writer.add((key >> shift) & (parts - 1), &input.buffer[i]);
                                                   }
                                                   poller.tick(rows);
                                               });
            check_record_count(seen, n);
            writer.flush_all();
            const int cut_bits = std::min(bits, pieces.bits);
            if (overflows(writer, input.capacity, size_t{1} << cut_bits, cut_bits, pieces.bits, c + 1, plan.tables,
                          overflow))
                return RunStatus::partition_too_large;
            for (size_t p = 0; p < parts; ++p) {
                report_partition(control, "joining partitions of permuted tables", c * parts + p, plan.tables * parts);
                const size_t rows = writer.count(p);
                store_rewind(store, writer.file(p));
                store_read_exactly(store, writer.file(p), input.buffer, rows * sizeof(IdFingerprint));
                files.close(writer.file(p));
                const RunStatus status = near_pairs_pass(input.buffer, rows, plan, c, pass);
                if (status != RunStatus::done) return status;
            }
        }
        return RunStatus::done;
    } catch (const StopRun &) {
        return RunStatus::stopped;
    }
}

int partition_bits(size_t n, size_t capacity) {
    int bits = 0;
    while (bits < kMaxPartitionBits && (n >> bits) > capacity / 2) ++bits;
    return bits;
}

NearPairsPlan partitioned_plan(size_t n, int radius) { return plan_table_layout(n, radius, kMaxPartitionedTables); }

int largest_partitioned_radius(size_t n, int radius) {
    int within = std::min(radius, 64);
    while (within > 0 && partitioned_plan(n, within).brute_force) --within;
    return within;
}

RunStatus near_groups_partitioned(const PartitionedRows &input, const NearPairsPlan &plan, const SpillStore &store,
                                  const RunControl &control, int64_t *ids, uint32_t *parent,
                                  PartitionOverflow *overflow) {
    const size_t n = input.n;
    if (n >= std::numeric_limits<uint32_t>::max())
        throw std::length_error("too many rows for one batch (at most 4294967294)");
    if (input.capacity == 0 || !input.buffer) throw std::invalid_argument("a partitioned run needs a buffer");
    try {
        Poller poller(control);
        RunFiles files(store);
        // Renumber: the k-th row becomes (k, fingerprint), its id kept in ids[k].
        poller.begin("numbering rows", n);
        SpillFile *numbered = files.create();
        size_t k = 0;
        read_records(store, input.file, input.buffer, input.capacity, sizeof(IdFingerprint), [&](size_t rows) {
            if (rows > n - k) check_record_count(k + rows, n);  // before writing past ids[n - 1]
            for (size_t i = 0; i < rows; ++i, ++k) {
                ids[k] = input.buffer[i].id;
                parent[k] = static_cast<uint32_t>(k);
                input.buffer[i].id = static_cast<int64_t>(k);
            }
            store_write(store, numbered, input.buffer, rows * sizeof(IdFingerprint));
            poller.advance(k, rows);
        });
        check_record_count(k, n);
        UniteRows unite{&control, parent, ids};
        RunControl inner;
        inner.context = &unite;
        inner.emit = unite_rows;
        inner.should_stop = forward_should_stop;
        inner.progress = forward_progress;
        inner.connectivity_only = true;  // a fingerprint's rows as a chain, one pair per pair of fingerprints
        PartitionedRows renumbered = input;
        renumbered.file = numbered;
        return near_pairs_partitioned(renumbered, plan, store, inner, overflow);
    } catch (const StopRun &) {
        return RunStatus::stopped;
    }
}

RunStatus minhash_pairs_partitioned(const PartitionedSignatures &input, double threshold, LshParameters parameters,
                                    bool (*emit)(void *context, const JaccardPair *pairs, size_t n),
                                    const SpillStore &store, const RunControl &control,
                                    PartitionOverflow *overflow) {
    const int slots = input.slots;
    if (slots < 1) throw std::invalid_argument("signatures need at least one slot");
    if (parameters.bands < 1 || parameters.rows < 1 || static_cast<long>(parameters.bands) * parameters.rows > slots)
        throw std::invalid_argument("bands and rows must be positive with bands * rows <= slots");
    if (input.capacity == 0 || !input.ids || !input.signatures)
        throw std::invalid_argument("a partitioned run needs buffers");
    const size_t n = input.n;
    const int bits = partition_bits(n, input.capacity);
    if (overflows_whatever_the_data(n, input.capacity, bits, 64, overflow)) return RunStatus::partition_too_large;
    const size_t parts = size_t{1} << bits;
    const size_t width = static_cast<size_t>(slots);
    const size_t record_bytes = sizeof(int64_t) + sizeof(uint32_t) * width;
    RunControl pass = control;
    pass.progress = nullptr;  // progress is told per partition
    try {
        Poller poller(control);
        RunFiles files(store);
        // Records are read a chunk at a time; uint64_t elements keep every record's signature
        // 4-byte aligned (records are a multiple of 4 bytes long).
        const size_t chunk_records = std::max<size_t>(kPartitionWriteBufferBytes / record_bytes, 1);
        std::vector<uint64_t> chunk((chunk_records * record_bytes + 7) / 8);
        unsigned char *bytes = reinterpret_cast<unsigned char *>(chunk.data());
        poller.begin("cutting signatures into partitions of MinHash bands", parameters.bands);
        for (int band = 0; band < parameters.bands; ++band) {
            poller.step(band);
            PartitionWriter writer(store, files, parts, record_bytes);
            const uint64_t seen = read_records(store, input.file, bytes, chunk_records, record_bytes, [&](size_t records) {
                for (size_t r = 0; r < records; ++r) {
                    const unsigned char *record = bytes + r * record_bytes;
                    const uint32_t *signature = reinterpret_cast<const uint32_t *>(record + sizeof(int64_t));
                    const uint64_t hash = minhash_band_hash(signature, band, parameters.rows);
                    writer.add(bits ? hash >> (64 - bits) : 0, record);
                }
                poller.tick(records);
            });
            check_record_count(seen, n);
            writer.flush_all();
            if (overflows(writer, input.capacity, parts, bits, 64, static_cast<size_t>(band) + 1,
                          static_cast<size_t>(parameters.bands), overflow))
                return RunStatus::partition_too_large;
            for (size_t p = 0; p < parts; ++p) {
                report_partition(control, "joining partitions of MinHash bands", band * parts + p,
                                 parameters.bands * parts);
                const size_t rows = writer.count(p);
                store_rewind(store, writer.file(p));
                for (size_t done = 0; done < rows;) {
                    const size_t want = std::min(rows - done, chunk_records);
                    store_read_exactly(store, writer.file(p), bytes, want * record_bytes);
                    for (size_t r = 0; r < want; ++r) {
                        const unsigned char *record = bytes + r * record_bytes;
                        std::memcpy(&input.ids[done + r], record, sizeof(int64_t));
                        std::memcpy(input.signatures + (done + r) * width, record + sizeof(int64_t),
                                    sizeof(uint32_t) * width);
                    }
                    done += want;
                }
                files.close(writer.file(p));
                const RunStatus status = minhash_pairs(input.ids, input.signatures, rows, slots, threshold, parameters,
                                                       emit, pass, band, 1);
                if (status != RunStatus::done) return status;
            }
        }
        return RunStatus::done;
    } catch (const StopRun &) {
        return RunStatus::stopped;
    }
}

}  // namespace simhash
