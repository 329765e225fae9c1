// Reference-counted storage behind tensors. A buffer knows where its bytes live so that
// later layers (pinned host staging, CUDA device memory) can add kinds without changing
// tensors. Buffers are shared through std::shared_ptr: slicing a tensor shares its buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace dinput {

enum class MemoryKind { kHost, kPinnedHost, kDevice };

// Where the bytes of a buffer were read from, when a file reader knows it: the byte at
// `anchor` is at `offset` of the file, or of its decompressed stream when `stream` names a
// compression. A record's data is preceded by `header_bytes` of framing. Error messages about
// a record name the file and the record's offset (core/origin.h); nothing else reads it.
struct ByteOrigin {
  std::shared_ptr<const std::string> path;
  const char* stream = nullptr;  // nullptr, "zstd" or "gzip"
  uint64_t header_bytes = 0;
  const char* anchor = nullptr;
  uint64_t offset = 0;
};

class Buffer {
 public:
  virtual ~Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  MemoryKind kind() const { return kind_; }
  int device() const { return device_; }  // CUDA ordinal for kDevice, else -1

  // Only the storage of bytes tensors holds strings; others return nullptr.
  virtual class BytesStorage* bytes() { return nullptr; }

  // True for a read-only mapping of a file: its pages are the page cache's, which the
  // kernel can drop and read again, so a view that keeps it alive costs no memory of the
  // process's own (core/compact.h leaves such views alone).
  virtual bool maps_file() const { return false; }

  // The buffer whose memory holding this one keeps alive: itself, or the larger buffer it is
  // a part of (a stored zstd block inside a read chunk, io/input_stream.cc). What copying
  // strings out of it could free is weighed by the holder's size (core/compact.h).
  virtual const Buffer& holder() const { return *this; }

  // Where its bytes came from (null: unknown). A reader sets it on a buffer before any record
  // viewing the buffer is handed out, or when no one else holds the buffer (it is then reused
  // for new bytes): it is never written while another thread may read it.
  const ByteOrigin* origin() const { return origin_.get(); }
  void set_origin(std::shared_ptr<const ByteOrigin> origin) const { origin_ = std::move(origin); }
  // Where byte `p` of this buffer was read from: the origin naming its file (whose anchor and
  // offset may be another byte's), with `*offset` set to p's own offset there; nullptr when
  // unknown. This one reads the buffer's origin; a buffer of bytes copied from many places
  // (core/compact.h) knows one per string.
  virtual const std::shared_ptr<const ByteOrigin>* origin_at(const char* p, uint64_t* offset) const;

 protected:
  Buffer(void* data, size_t size, MemoryKind kind, int device)
      : data_(data), size_(size), kind_(kind), device_(device) {}

  void* data_;
  size_t size_;
  MemoryKind kind_;
  int device_;

 private:
  mutable std::shared_ptr<const ByteOrigin> origin_;
};

// Part of another buffer, which it keeps alive: a stored zstd block inside a read chunk
// (io/input_stream.cc). A buffer of its own so that a reader can note where its bytes are
// (set_origin) where one note for the whole buffer could not say; its holder() is the whole's.
class BufferPart final : public Buffer {
 public:
  BufferPart(const char* data, size_t size, std::shared_ptr<const Buffer> whole)
      : Buffer(const_cast<char*>(data), size, whole ? whole->kind() : MemoryKind::kHost,
               whole ? whole->device() : -1),
        whole_(std::move(whole)) {}
  bool maps_file() const override { return whole_ && whole_->maps_file(); }
  const Buffer& holder() const override { return whole_ ? whole_->holder() : *this; }

 private:
  std::shared_ptr<const Buffer> whole_;
};

// Host memory, 64-byte aligned (so slices of rows stay usable by vector code and DLPack
// consumers), uninitialised unless `zero`.
std::shared_ptr<Buffer> allocate_host(size_t bytes, bool zero = false);
// Freed host blocks of 512 KiB or more are kept for reuse by a later request of the same size
// class (sizes are rounded up to an eighth of a power of two), up to 128 MiB in all (none in
// AddressSanitizer builds): the bytes kept now.
size_t kept_host_bytes();

// Where allocate_host takes memory on the calling thread while a scope is active. The GPU
// layer points the producer thread of a distributed iterator that feeds GPUs at its pinned
// pool, so batches bound for a device are born page-locked and need no staging copy. An
// allocator returns nullptr to decline a request (a size not worth pinning): ordinary host
// memory is used then.
using HostAllocator = std::shared_ptr<Buffer> (*)(size_t bytes, bool zero);
// Whether a ScopedHostAllocator is active on the calling thread.
bool scoped_host_allocator_active();
class ScopedHostAllocator {
 public:
  explicit ScopedHostAllocator(HostAllocator allocator);
  ~ScopedHostAllocator();
  ScopedHostAllocator(const ScopedHostAllocator&) = delete;
  ScopedHostAllocator& operator=(const ScopedHostAllocator&) = delete;

 private:
  HostAllocator saved_;
};

// One string of a bytes tensor: a view of bytes kept alive by the storage that holds it.
struct ByteString {
  const char* data = "";
  size_t size = 0;
  std::string_view view() const { return std::string_view(data, size); }
};

// The storage of a bytes tensor: one ByteString per scalar. A string either points into a
// buffer the storage keeps alive (a reader's buffer or a memory-mapped file: no copy), or
// into the storage's own arena (strings made by copying). Batching and slicing bytes
// tensors copy only these views, never the bytes.
class BytesStorage final : public Buffer {
 public:
  explicit BytesStorage(size_t count) : Buffer(nullptr, 0, MemoryKind::kHost, -1), items_(count) {}
  BytesStorage* bytes() override { return this; }

  const ByteString& at(size_t i) const { return items_[i]; }
  size_t count() const { return items_.size(); }
  // The buffers that keep its strings alive (its own arena aside).
  const std::vector<std::shared_ptr<const Buffer>>& owners() const { return owners_; }
  // Copies s into the arena.
  void set_copy(size_t i, std::string_view s);
  // Points at bytes that `owner` keeps alive (owner may be null for static data).
  void set_view(size_t i, const char* data, size_t size,
                const std::shared_ptr<const Buffer>& owner);
  // Points at string j of `other`, keeping what holds it alive.
  void set_from(size_t i, const BytesStorage& other, size_t j,
                const std::shared_ptr<Buffer>& other_buffer);
  // Asks the CPU for what set_from(_, *this, i, _) reads: string i and the list of owners.
  void prefetch(size_t i) const {
    __builtin_prefetch(items_.data() + i);
    __builtin_prefetch(owners_.data());
  }
  // Asks the CPU for the first kPrefetchBytes bytes of string i. A consumer reading a
  // shuffled batch finds every record somewhere else in memory; one record's bytes are too
  // few for the hardware to see a stream, so each one costs a full memory latency.
  static constexpr size_t kPrefetchBytes = 4096;
  void prefetch_bytes(size_t i) const {
    const ByteString& s = items_[i];
    const size_t n = s.size < kPrefetchBytes ? s.size : kPrefetchBytes;
    for (size_t k = 0; k < n; k += 64) __builtin_prefetch(s.data + k);
  }

 private:
  void keep(const std::shared_ptr<const Buffer>& owner);
  // Adds `owner` to owners_index_ unless it is there already; false if it was.
  bool index_owner(const Buffer* owner);
  void rebuild_owners_index();

  std::vector<ByteString> items_;
  std::vector<std::shared_ptr<const Buffer>> owners_;
  // Past a few owners, an open-addressing set of owners_ (null: a free slot), so that keep
  // costs one probe instead of a scan. A batch of shuffled records from zstd files keeps
  // about 80 owners (one per stored block the shuffle buffer spans), and scanning them for
  // each of its rows was the largest cost of building the batch.
  std::vector<const Buffer*> owners_index_;
  std::vector<std::unique_ptr<char[]>> arena_;
  char* arena_next_ = nullptr;
  size_t arena_left_ = 0;
};

// Storage for `count` empty strings of a bytes tensor.
std::shared_ptr<Buffer> allocate_strings(size_t count);

}  // namespace dinput
