// Device memory from a per-device caching allocator, and page-locked host memory from a
// bounded staging pool. Both keep released blocks for reuse, because cudaMalloc and
// cudaHostAlloc synchronise the device and cost far more than a batch's copy. How a device
// block is kept safe from the streams that still read it is in docs/gpu.md ("Memory reuse").
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <system_error>
#include <vector>

#include "core/immortal.h"
#include "core/status.h"
#include "core/thread.h"
#include "device/gpu.h"
#include "device/gpu_buffers.h"

namespace dinput::gpu {

namespace {

// The per-device bound on cached free bytes (DINPUT_CUDA_CACHE_MB, default 1 GiB).
std::atomic<size_t>& cache_limit_bytes() {
  static std::atomic<size_t> limit{[] {
    const char* env = std::getenv("DINPUT_CUDA_CACHE_MB");
    long mb = env ? std::atol(env) : 1024;
    return static_cast<size_t>(mb < 0 ? 0 : mb) << 20;
  }()};
  return limit;
}

}  // namespace

size_t cache_limit() { return cache_limit_bytes().load(); }

#ifdef DINPUT_HAVE_CUDA

namespace {

// Sizes are rounded so that near sizes share blocks: to 512 bytes below 1 MiB, to 2 MiB
// above. A request may take any free block up to twice its rounded size (the smallest that
// fits), so batches of varying sizes reuse each other's blocks instead of each size keeping
// blocks of its own.
size_t block_size(size_t bytes) {
  constexpr size_t kSmall = 512, kLarge = size_t{2} << 20;
  const size_t unit = bytes < (size_t{1} << 20) ? kSmall : kLarge;
  return std::max(unit, (bytes + unit - 1) / unit * unit);
}

// A free device block and the events after which no queued GPU work reads it any more.
struct FreeBlock {
  void* ptr = nullptr;
  size_t size = 0;
  std::vector<Event> readers;
};

struct DevicePool {
  std::mutex mu;
  std::multimap<size_t, FreeBlock> free;  // by size, for best fit
  std::deque<FreeBlock> evicted;          // over the cache limit: to return to CUDA
  size_t held = 0;                        // bytes allocated from CUDA and not returned
  size_t cached = 0;                      // of which free in `free`
  int users = 0;                          // live DeviceUse tokens
};

struct DevicePools {
  std::mutex mu;
  std::map<int, std::unique_ptr<DevicePool>> by_device;
};

// Immortal: tensors may outlive static destruction at exit, and their deleters use these.
DevicePool& device_pool(int device) {
  static Immortal<DevicePools> pools;
  std::lock_guard<std::mutex> lock(pools->mu);
  auto& p = pools->by_device[device];
  if (!p) p = std::make_unique<DevicePool>();
  return *p;
}

std::vector<int> pooled_devices() {
  std::vector<int> devices;
  for (int d = 0; d < availability().devices; ++d) devices.push_back(d);
  return devices;
}

// Returns blocks to CUDA. cudaFree waits for the device; the readers' events are waited for
// first all the same, so that the order does not rest on that.
void free_blocks(int device, std::vector<FreeBlock> blocks) {
  if (blocks.empty()) return;
  DeviceGuard guard(device);
  for (FreeBlock& b : blocks) {
    for (const Event& e : b.readers) cudaEventSynchronize(e.get());
    cudaFree(b.ptr);
  }
  cudaGetLastError();
}

// Frees that run on a thread of their own, so that freeing an iterator never waits for the
// GPU (cudaFree does, for every queued kernel: 300 ms in gpu.free_time before this). At exit
// the process waits for them before the CUDA runtime tears down, which it registered to do
// before this handler was (handlers run in reverse order).
struct BackgroundFrees {
  std::mutex mu;
  std::condition_variable idle;
  int running = 0;
};

BackgroundFrees& background_frees() {
  static Immortal<BackgroundFrees> frees;
  return *frees;
}

void wait_for_background_frees() {
  BackgroundFrees& f = background_frees();
  std::unique_lock<std::mutex> lock(f.mu);
  f.idle.wait(lock, [&] { return f.running == 0; });
}

void free_in_background(int device, std::vector<FreeBlock> blocks) {
  if (blocks.empty()) return;
  static const bool waits_at_exit = std::atexit(wait_for_background_frees) == 0;
  BackgroundFrees& f = background_frees();
  if (!waits_at_exit) return free_blocks(device, std::move(blocks));
  {
    std::lock_guard<std::mutex> lock(f.mu);
    ++f.running;
  }
  auto done = [&f] {
    {
      std::lock_guard<std::mutex> lock(f.mu);
      --f.running;
    }
    f.idle.notify_all();
  };
  auto owned = std::make_shared<std::vector<FreeBlock>>(std::move(blocks));
  try {
    Thread([device, owned, done] {
      free_blocks(device, std::move(*owned));
      done();
    }).detach();
  } catch (const std::system_error&) {
    done();
    free_blocks(device, std::move(*owned));  // no thread to be had: free here, waiting
  }
}

std::vector<FreeBlock> take_evicted(DevicePool& pool) {
  std::lock_guard<std::mutex> lock(pool.mu);
  std::vector<FreeBlock> out(std::make_move_iterator(pool.evicted.begin()),
                             std::make_move_iterator(pool.evicted.end()));
  pool.evicted.clear();
  for (const FreeBlock& b : out) pool.held -= b.size;
  return out;
}

std::vector<FreeBlock> take_all_free(DevicePool& pool) {
  std::lock_guard<std::mutex> lock(pool.mu);
  std::vector<FreeBlock> out;
  for (auto& [size, b] : pool.free) out.push_back(std::move(b));
  pool.free.clear();
  pool.cached = 0;
  for (FreeBlock& b : pool.evicted) out.push_back(std::move(b));
  pool.evicted.clear();
  for (const FreeBlock& b : out) pool.held -= b.size;
  return out;
}

// Moves the largest free blocks to `evicted` until the cache is within its limit.
void enforce_limit(DevicePool& pool) {
  const size_t limit = cache_limit_bytes().load();
  while (pool.cached > limit && !pool.free.empty()) {
    auto largest = std::prev(pool.free.end());
    pool.cached -= largest->second.size;
    pool.evicted.push_back(std::move(largest->second));
    pool.free.erase(largest);
  }
}

// Takes the smallest free block of at least `size` and at most twice it; 0 when none fits,
// else the block's size.
template <typename Block>
size_t take_best_fit(std::multimap<size_t, Block>& free, size_t size, Block& out) {
  auto it = free.lower_bound(size);
  if (it == free.end() || it->first > 2 * size) return 0;
  const size_t got = it->first;
  out = std::move(it->second);
  free.erase(it);
  return got;
}

bool take_free(DevicePool& pool, size_t size, FreeBlock& out) {
  std::lock_guard<std::mutex> lock(pool.mu);
  const size_t got = take_best_fit(pool.free, size, out);
  pool.cached -= got;
  return got > 0;
}

struct PinnedPool {
  std::mutex mu;
  std::multimap<size_t, void*> free;
  size_t held = 0;
  size_t cached = 0;
};

PinnedPool& pinned_pool() {
  static Immortal<PinnedPool> pool;
  return *pool;
}

// The pinned pool keeps at most this many free bytes (DINPUT_PINNED_POOL_MB, default 512).
size_t pinned_cache_limit() {
  static const size_t limit = [] {
    const char* env = std::getenv("DINPUT_PINNED_POOL_MB");
    long mb = env ? std::atol(env) : 512;
    return static_cast<size_t>(mb < 0 ? 0 : mb) << 20;
  }();
  return limit;
}

// Owners kept alive until their copies complete (release_after).
struct DeferredReleases {
  std::mutex mu;
  std::deque<std::pair<Event, std::shared_ptr<const void>>> pending;
};

DeferredReleases& deferred() {
  static Immortal<DeferredReleases> d;
  return *d;
}

}  // namespace

void release_after(Event event, std::shared_ptr<const void> owner) {
  DeferredReleases& d = deferred();
  std::lock_guard<std::mutex> lock(d.mu);
  d.pending.emplace_back(std::move(event), std::move(owner));
}

void poll_deferred_releases() {
  std::vector<std::shared_ptr<const void>> done;  // released outside the lock
  {
    DeferredReleases& d = deferred();
    std::lock_guard<std::mutex> lock(d.mu);
    // Copies complete in order on a stream, so the oldest entries are the ones to look at.
    while (!d.pending.empty()) {
      cudaError_t state = cudaEventQuery(d.pending.front().first.get());
      if (state == cudaErrorNotReady) break;
      if (state != cudaSuccess) cudaGetLastError();  // a broken event: nothing will read it
      done.push_back(std::move(d.pending.front().second));
      d.pending.pop_front();
    }
  }
}

DeviceBuffer::DeviceBuffer(void* data, size_t size, int device, size_t block_size)
    : Buffer(data, size, MemoryKind::kDevice, device), block_size_(block_size) {}

void DeviceBuffer::add_reader(cudaStream_t stream) const {
  int stream_device = device_;
  if (!is_special_stream(stream))
    check_cuda(cudaStreamGetDevice(stream, &stream_device), "cudaStreamGetDevice");
  std::lock_guard<std::mutex> lock(mu_);
  for (const Reader& r : readers_)
    if (r.stream == stream) return;
  readers_.push_back(Reader{stream, stream_device});
}

DeviceBuffer::~DeviceBuffer() {
  FreeBlock block;
  block.ptr = data_;
  block.size = block_size_;
  // The copy that filled the block, and what each reader stream has queued by now: the next
  // writer waits for all of them on the GPU. The host never waits here.
  if (ready_) block.readers.push_back(ready_);
  bool unknown_readers = false;
  for (const Reader& r : readers_) {
    try {
      DeviceGuard guard(r.device);  // an event is recorded on a stream of its own device
      Event e = new_event();
      check_cuda(cudaEventRecord(e.get(), r.stream), "cudaEventRecord on a reader stream");
      block.readers.push_back(std::move(e));
    } catch (...) {
      cudaGetLastError();
      unknown_readers = true;  // see below
    }
  }
  DevicePool& pool = device_pool(device_);
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    if (pool.users > 0 && !unknown_readers) {
      pool.cached += block.size;
      pool.free.emplace(block.size, std::move(block));
      enforce_limit(pool);
      return;
    }
    // Some reader's work cannot be waited for on the GPU: the block is only given back to
    // CUDA (whose cudaFree waits for the whole device), never reused. Or no distributed
    // iterator feeds this GPU any more (a tensor outlived the last one, through a reference
    // or a DLPack export): its cache was emptied already, and nothing would take the block
    // out of it again before the process exits.
    pool.evicted.push_back(std::move(block));
    if (pool.users > 0) return;  // the next allocation frees it
  }
  free_in_background(device_, take_evicted(pool));
}

PinnedBuffer::PinnedBuffer(void* data, size_t size, size_t block_size)
    : Buffer(data, size, MemoryKind::kPinnedHost, -1), block_size_(block_size) {}

PinnedBuffer::~PinnedBuffer() {
  PinnedPool& pool = pinned_pool();
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    if (pool.cached + block_size_ <= pinned_cache_limit()) {
      pool.free.emplace(block_size_, data_);
      pool.cached += block_size_;
      return;
    }
    pool.held -= block_size_;
  }
  cudaFreeHost(data_);  // outside the lock: it can take a while
}

std::shared_ptr<Buffer> allocate_device(int device, size_t bytes, void* writer) {
  require_device(device);
  poll_deferred_releases();
  const size_t size = block_size(bytes);
  DevicePool& pool = device_pool(device);
  free_in_background(device, take_evicted(pool));  // the producer must not wait for the GPU
  FreeBlock block;
  if (take_free(pool, size, block)) {
    // The block's last readers may still be queued: the writer's stream waits for them.
    DeviceGuard guard(device);
    for (const Event& e : block.readers)
      check_cuda(cudaStreamWaitEvent(static_cast<cudaStream_t>(writer), e.get(), 0),
                 "cudaStreamWaitEvent before reusing a device block");
    return std::make_shared<DeviceBuffer>(block.ptr, bytes, device, block.size);
  }
  void* p = nullptr;
  {
    DeviceGuard guard(device);
    cudaError_t err = cudaMalloc(&p, size);
    if (err == cudaErrorMemoryAllocation) {
      // Cached blocks of other sizes may be what stands in the way: give them back and retry.
      cudaGetLastError();
      free_blocks(device, take_all_free(pool));
      err = cudaMalloc(&p, size);
    }
    check_cuda(err, "cudaMalloc of device memory");
  }
  std::lock_guard<std::mutex> lock(pool.mu);
  pool.held += size;
  return std::make_shared<DeviceBuffer>(p, bytes, device, size);
}

std::shared_ptr<Buffer> allocate_pinned(size_t bytes) {
  const Availability& a = availability();
  if (!a.usable) raise(Code::kFailedPrecondition, "pinned host memory: ", a.reason);
  poll_deferred_releases();
  const size_t size = block_size(bytes);
  PinnedPool& pool = pinned_pool();
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    void* p = nullptr;
    if (const size_t got = take_best_fit(pool.free, size, p)) {
      pool.cached -= got;
      return std::make_shared<PinnedBuffer>(p, bytes, got);
    }
  }
  void* p = nullptr;
  check_cuda(cudaHostAlloc(&p, size, cudaHostAllocPortable),
             "cudaHostAlloc of pinned staging memory");
  std::lock_guard<std::mutex> lock(pool.mu);
  pool.held += size;
  return std::make_shared<PinnedBuffer>(p, bytes, size);
}

HostAllocator pinned_host_allocator() {
  return [](size_t bytes, bool zero) -> std::shared_ptr<Buffer> {
    // Small tensors are cheap to stage and not worth page-locking: declined, they get
    // ordinary host memory.
    if (bytes < kPinThreshold) return nullptr;
    std::shared_ptr<Buffer> b = allocate_pinned(bytes);
    if (zero) std::memset(b->data(), 0, bytes);
    return b;
  };
}

size_t pooled_device_bytes(int device) {
  DevicePool& pool = device_pool(device);
  std::lock_guard<std::mutex> lock(pool.mu);
  return pool.held;
}

size_t cached_device_bytes(int device) {
  DevicePool& pool = device_pool(device);
  std::lock_guard<std::mutex> lock(pool.mu);
  return pool.cached;
}

void set_cache_limit(size_t bytes) {
  cache_limit_bytes().store(bytes);
  if (!availability().usable) return;
  for (int d : pooled_devices()) {
    DevicePool& pool = device_pool(d);
    {
      std::lock_guard<std::mutex> lock(pool.mu);
      enforce_limit(pool);
    }
    free_in_background(d, take_evicted(pool));
  }
}

void empty_cache(int device) {
  if (!availability().usable) return;
  wait_for_background_frees();  // blocks given back already are given back when this returns
  for (int d : pooled_devices())
    if (device < 0 || d == device) free_blocks(d, take_all_free(device_pool(d)));
  if (device >= 0) return;
  // The pinned blocks still read by queued copies are held by the deferred releases; the
  // free ones are not read by anything.
  poll_deferred_releases();
  std::vector<void*> pinned;
  {
    PinnedPool& pool = pinned_pool();
    std::lock_guard<std::mutex> lock(pool.mu);
    for (auto& [size, p] : pool.free) {
      pinned.push_back(p);
      pool.held -= size;
    }
    pool.free.clear();
    pool.cached = 0;
  }
  for (void* p : pinned) cudaFreeHost(p);
}

DeviceUse::DeviceUse(std::vector<int> devices) : devices_(std::move(devices)) {
  for (int d : devices_) {
    DevicePool& pool = device_pool(d);
    std::lock_guard<std::mutex> lock(pool.mu);
    ++pool.users;
  }
}

DeviceUse::~DeviceUse() {
  for (int d : devices_) {
    DevicePool& pool = device_pool(d);
    bool last = false;
    {
      std::lock_guard<std::mutex> lock(pool.mu);
      last = --pool.users == 0;
    }
    if (last) free_in_background(d, take_all_free(pool));
  }
}

#else  // CPU-only build: every request for GPU memory is the same clear error.

std::shared_ptr<Buffer> allocate_device(int device, size_t, void*) {
  require_device(device);
  raise(Code::kInternal, "unreachable: require_device passed without CUDA");
}

std::shared_ptr<Buffer> allocate_pinned(size_t) {
  raise(Code::kFailedPrecondition, "pinned host memory: ", availability().reason);
}

HostAllocator pinned_host_allocator() { return nullptr; }

size_t pooled_device_bytes(int) { return 0; }
size_t cached_device_bytes(int) { return 0; }

void set_cache_limit(size_t bytes) { cache_limit_bytes().store(bytes); }
void empty_cache(int) {}

DeviceUse::DeviceUse(std::vector<int> devices) : devices_(std::move(devices)) {}
DeviceUse::~DeviceUse() = default;

#endif

}  // namespace dinput::gpu
