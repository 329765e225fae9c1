// Device memory from a per-device caching allocator, and page-locked host memory from a
// bounded staging pool. Both keep released blocks by size class for reuse, because
// cudaMalloc/cudaHostAlloc synchronise the device and cost far more than a batch's copy.
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "core/status.h"
#include "device/gpu.h"
#include "device/gpu_buffers.h"

namespace dinput::gpu {

#ifdef DINPUT_HAVE_CUDA

namespace {

// Powers of two up to 4 MiB, then multiples of 4 MiB: little waste, few classes.
size_t size_class(size_t bytes) {
  constexpr size_t kSmallest = 512, kLarge = size_t{4} << 20;
  if (bytes <= kSmallest) return kSmallest;
  if (bytes <= kLarge) {
    size_t c = kSmallest;
    while (c < bytes) c <<= 1;
    return c;
  }
  return (bytes + kLarge - 1) / kLarge * kLarge;
}

struct Pool {
  std::mutex mu;
  std::map<size_t, std::vector<void*>> free_blocks;
  size_t held = 0;    // bytes allocated from CUDA and not yet given back
  size_t cached = 0;  // of which free, waiting for reuse
};

Pool& device_pool(int device) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<Pool>> pools;
  std::lock_guard<std::mutex> lock(mu);
  auto& p = pools[device];
  if (!p) p = std::make_unique<Pool>();
  return *p;
}

Pool& pinned_pool() {
  static Pool pool;
  return pool;
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

void* take(Pool& pool, size_t cls) {
  std::lock_guard<std::mutex> lock(pool.mu);
  auto it = pool.free_blocks.find(cls);
  if (it == pool.free_blocks.end() || it->second.empty()) return nullptr;
  void* p = it->second.back();
  it->second.pop_back();
  pool.cached -= cls;
  return p;
}

void release_cached_device_blocks(Pool& pool, int device) {
  std::lock_guard<std::mutex> lock(pool.mu);
  DeviceGuard guard(device);
  for (auto& [cls, blocks] : pool.free_blocks) {
    for (void* p : blocks) cudaFree(p);
    pool.held -= cls * blocks.size();
    pool.cached -= cls * blocks.size();
    blocks.clear();
  }
}

}  // namespace

DeviceBuffer::DeviceBuffer(void* data, size_t size, int device, size_t size_class)
    : Buffer(data, size, MemoryKind::kDevice, device), size_class_(size_class) {}

DeviceBuffer::~DeviceBuffer() {
  if (ready_) {
    // The copy into this block (and out of its staging buffer) must finish before either is
    // handed to someone else.
    cudaEventSynchronize(ready_);
    cudaEventDestroy(ready_);
  }
  staging_.reset();
  Pool& pool = device_pool(device_);
  std::lock_guard<std::mutex> lock(pool.mu);
  pool.free_blocks[size_class_].push_back(data_);
  pool.cached += size_class_;
}

void DeviceBuffer::set_ready(cudaEvent_t event, std::shared_ptr<const Buffer> staging) {
  ready_ = event;
  staging_ = std::move(staging);
}

PinnedBuffer::PinnedBuffer(void* data, size_t size, size_t size_class)
    : Buffer(data, size, MemoryKind::kPinnedHost, -1), size_class_(size_class) {}

PinnedBuffer::~PinnedBuffer() {
  Pool& pool = pinned_pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  if (pool.cached + size_class_ > pinned_cache_limit()) {
    cudaFreeHost(data_);
    pool.held -= size_class_;
    return;
  }
  pool.free_blocks[size_class_].push_back(data_);
  pool.cached += size_class_;
}

std::shared_ptr<Buffer> allocate_device(int device, size_t bytes) {
  require_device(device);
  const size_t cls = size_class(bytes);
  Pool& pool = device_pool(device);
  void* p = take(pool, cls);
  if (!p) {
    DeviceGuard guard(device);
    cudaError_t err = cudaMalloc(&p, cls);
    if (err == cudaErrorMemoryAllocation) {
      // Cached blocks of other sizes may be what stands in the way: give them back and retry.
      cudaGetLastError();
      release_cached_device_blocks(pool, device);
      err = cudaMalloc(&p, cls);
    }
    check_cuda(err, "cudaMalloc of device memory");
    std::lock_guard<std::mutex> lock(pool.mu);
    pool.held += cls;
  }
  return std::make_shared<DeviceBuffer>(p, bytes, device, cls);
}

std::shared_ptr<Buffer> allocate_pinned(size_t bytes) {
  const Availability& a = availability();
  if (!a.usable) raise(Code::kFailedPrecondition, "pinned host memory: ", a.reason);
  const size_t cls = size_class(bytes);
  Pool& pool = pinned_pool();
  void* p = take(pool, cls);
  if (!p) {
    check_cuda(cudaHostAlloc(&p, cls, cudaHostAllocPortable),
               "cudaHostAlloc of pinned staging memory");
    std::lock_guard<std::mutex> lock(pool.mu);
    pool.held += cls;
  }
  return std::make_shared<PinnedBuffer>(p, bytes, cls);
}

HostAllocator pinned_host_allocator() {
  return [](size_t bytes, bool zero) {
    std::shared_ptr<Buffer> b = allocate_pinned(bytes);
    if (zero && bytes) std::memset(b->data(), 0, bytes);
    return b;
  };
}

size_t pooled_device_bytes(int device) {
  Pool& pool = device_pool(device);
  std::lock_guard<std::mutex> lock(pool.mu);
  return pool.held;
}

#else  // CPU-only build: every request for GPU memory is the same clear error.

std::shared_ptr<Buffer> allocate_device(int device, size_t) {
  require_device(device);
  raise(Code::kInternal, "unreachable: require_device passed without CUDA");
}

std::shared_ptr<Buffer> allocate_pinned(size_t) {
  raise(Code::kFailedPrecondition, "pinned host memory: ", availability().reason);
}

HostAllocator pinned_host_allocator() { return nullptr; }

size_t pooled_device_bytes(int) { return 0; }

#endif

}  // namespace dinput::gpu
