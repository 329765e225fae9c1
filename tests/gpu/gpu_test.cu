// GPU tests of dinput through its C API. Each case exits 77 (CTest: SKIP) when no usable GPU
// is present, 0 when it passes, 1 with a message when it fails.
#include <cuda_runtime.h>
#include <dlpack/dlpack.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "dinput.h"
#include "dinput_cuda.h"
#include "gpu_check.h"

namespace {

struct Pipeline {
  dinput_strategy_t* strategy = nullptr;
  dinput_dataset_t* dataset = nullptr;
  dinput_dist_dataset_t* dist = nullptr;
  ~Pipeline() {
    dinput_dist_dataset_free(dist);
    dinput_dataset_free(dataset);
    dinput_strategy_free(strategy);
  }
};

// range(n).batch(g) distributed over `devices`, fetched to the device or kept on the host.
void make_range_pipeline(Pipeline& p, const std::vector<const char*>& devices, int64_t n, int64_t g,
                         bool fetch, int64_t per_replica_buffer_size = -1) {
  dinput_dataset_t* range = nullptr;
  ok(dinput_strategy_new(&p.strategy, devices.data(), static_cast<int>(devices.size())));
  ok(dinput_dataset_range(&range, 0, n, 1));
  ok(dinput_dataset_batch(&p.dataset, range, g, nullptr));
  dinput_dataset_free(range);
  dinput_input_options_t* o = nullptr;
  ok(dinput_input_options_new(&o));
  ok(dinput_input_options_set_fetch_to_device(o, fetch ? 1 : 0));
  if (per_replica_buffer_size >= 0)
    ok(dinput_input_options_set_per_replica_buffer_size(o, per_replica_buffer_size));
  ok(dinput_strategy_distribute_dataset(&p.dist, p.strategy, p.dataset, o));
  dinput_input_options_free(o);
}

// from_tensors(tensor).repeat(repeats) distributed to GPU:0 (fetch_to_device).
void make_repeat_pipeline(Pipeline& p, const dinput_tensor_t* tensor, int repeats) {
  const dinput_tensor_t* parts[1] = {tensor};
  dinput_element_t* e = nullptr;
  ok(dinput_element_new(&e, parts, 1));
  const char* devices[1] = {"GPU:0"};
  ok(dinput_strategy_new(&p.strategy, devices, 1));
  dinput_dataset_t* one = nullptr;
  ok(dinput_dataset_from_tensors(&one, e));
  ok(dinput_dataset_repeat(&p.dataset, one, repeats));
  ok(dinput_strategy_distribute_dataset(&p.dist, p.strategy, p.dataset, nullptr));
  dinput_dataset_free(one);
  dinput_element_free(e);
}

// Appends every replica's values of one step, read back to the host, and frees the step.
void read_step(dinput_per_replica_t* step, std::vector<std::vector<int64_t>>& out) {
  for (int r = 0; r < dinput_per_replica_size(step); ++r) {
    const dinput_tensor_t* t = dinput_element_get(dinput_per_replica_get(step, r), 0);
    dinput_tensor_t* host = nullptr;
    ok(dinput_tensor_to_host(&host, t));
    const int64_t* v = static_cast<const int64_t*>(dinput_tensor_data(host));
    out.emplace_back(v, v + dinput_tensor_dim(host, 0));
    dinput_tensor_free(host);
  }
  dinput_per_replica_free(step);
}

// Every replica's values of the rest of the epoch of `it` (freed), read back to the host.
void drain_into(dinput_dist_iterator_t* it, std::vector<std::vector<int64_t>>& out) {
  dinput_per_replica_t* step = nullptr;
  while (dinput_dist_iterator_get_next(&step, it) == DINPUT_OK) read_step(step, out);
  dinput_dist_iterator_free(it);
}

// Every replica's values of one epoch, read back to the host.
std::vector<std::vector<int64_t>> drain(const Pipeline& p) {
  std::vector<std::vector<int64_t>> out;
  dinput_dist_iterator_t* it = nullptr;
  ok(dinput_dist_dataset_iterator(&it, p.dist));
  drain_into(it, out);
  return out;
}

// Values delivered to GPUs equal those of the host path, piece for piece.
int test_values() {
  std::vector<const char*> devices = {"GPU:0"};
  if (gpu_count() > 1) devices.push_back("GPU:1");
  devices.push_back("CPU:0");
  Pipeline on_gpu, on_host;
  make_range_pipeline(on_gpu, devices, 1000, 96, true);
  make_range_pipeline(on_host, devices, 1000, 96, false);
  auto a = drain(on_gpu);
  // Device types per replica: GPU replicas get CUDA tensors, the CPU replica host ones.
  dinput_dist_iterator_t* it = nullptr;
  ok(dinput_dist_dataset_iterator(&it, on_gpu.dist));
  dinput_per_replica_t* step = nullptr;
  ok(dinput_dist_iterator_get_next(&step, it));
  for (int r = 0; r < static_cast<int>(devices.size()); ++r) {
    const dinput_tensor_t* t = dinput_element_get(dinput_per_replica_get(step, r), 0);
    bool gpu = std::strncmp(devices[r], "GPU", 3) == 0;
    REQUIRE((dinput_tensor_device_type(t) == DINPUT_DEVICE_CUDA) == gpu,
            "replica %d has device type %d", r, dinput_tensor_device_type(t));
    if (gpu) REQUIRE(dinput_tensor_device_index(t) == devices[r][4] - '0', "wrong device index");
  }
  // dinput_dist_iterator_copy_steps copies only host pieces: the next step, whose GPU
  // replicas hold CUDA tensors, comes whole in `unfit`, none copied.
  const dinput_tensor_t* t0 = dinput_element_get(dinput_per_replica_get(step, 0), 0);
  std::vector<char> buffer(2 * devices.size() * dinput_tensor_byte_size(t0));
  size_t copied = 99;
  dinput_per_replica_t* unfit = nullptr;
  ok(dinput_dist_iterator_copy_steps(&copied, &unfit, buffer.data(), buffer.size(),
                                     dinput_tensor_dtype(t0), dinput_tensor_shape(t0),
                                     dinput_tensor_rank(t0), 2, it));
  REQUIRE(copied == 0 && unfit != nullptr, "copy_steps copied %zu steps of GPU pieces", copied);
  REQUIRE(dinput_tensor_device_type(dinput_element_get(dinput_per_replica_get(unfit, 0), 0)) ==
              DINPUT_DEVICE_CUDA,
          "the unfit step's GPU replica is not in device memory");
  dinput_per_replica_free(unfit);
  dinput_per_replica_free(step);
  dinput_dist_iterator_free(it);
  REQUIRE(a == drain(on_host), "GPU and host paths delivered different values");
  std::puts("values: identical to the host path");
  return 0;
}

__global__ void spin_kernel(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Average wall time of `fn` over `n` runs, in milliseconds.
template <typename Fn>
double mean_ms(int n, Fn fn) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) fn();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
         n;
}

// Copies overlap compute, measured the way a training loop runs: N steps queued with no
// per-step synchronization (get_next, the wait that orders the consumer's stream after the
// copy, a kernel, freeing the step), one synchronization at the end. The same N steps are
// timed with the input alone (no kernel) and with the kernels alone. Overlapped, the whole
// run takes about the longer of the two; serialized, their sum. The consumer's stream is a
// blocking one (cudaStreamCreate), so a synchronous copy in get_next, or a copy on the
// legacy stream, would serialize with its kernels and fail the limit: whole <= compute +
// input / 2 (at least half of the input hidden).
int test_overlap() {
  const int64_t rows = 16 << 20;  // 16 Mi float32 = 64 MiB per step
  dinput_tensor_t* big = nullptr;
  const int64_t shape[1] = {rows};
  ok(dinput_tensor_new(&big, DINPUT_FLOAT32, shape, 1, nullptr, 0));
  const int kSteps = 40;
  Pipeline p;
  make_repeat_pipeline(p, big, kSteps);
  cudaStream_t stream;
  cuda(cudaStreamCreate(&stream));
  int clock_khz = 0;
  cuda(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));

  // One epoch: every step queued without waiting; `cycles` 0 means no kernel. Returns the
  // wall time of the whole epoch, from the first get_next to the end of the GPU work.
  auto epoch_ms = [&](long long cycles) {
    dinput_dist_iterator_t* it = nullptr;
    ok(dinput_dist_dataset_iterator(&it, p.dist));
    // The first step fills the pools; the clock starts after it.
    dinput_per_replica_t* step = nullptr;
    ok(dinput_dist_iterator_get_next(&step, it));
    ok(dinput_element_cuda_wait(dinput_per_replica_get(step, 0), stream));
    dinput_per_replica_free(step);
    cuda(cudaStreamSynchronize(stream));
    auto t0 = std::chrono::steady_clock::now();
    int steps = 1;
    for (;;) {
      dinput_status_t st = dinput_dist_iterator_get_next(&step, it);
      if (st == DINPUT_OUT_OF_RANGE) break;
      ok(st);
      ok(dinput_element_cuda_wait(dinput_per_replica_get(step, 0), stream));
      if (cycles > 0) spin_kernel<<<1, 1, 0, stream>>>(cycles);
      dinput_per_replica_free(step);  // at once: the wait recorded the stream as a reader
      ++steps;
    }
    cuda(cudaStreamSynchronize(stream));
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    dinput_dist_iterator_free(it);
    REQUIRE(steps == kSteps, "expected %d steps, got %d", kSteps, steps);
    return ms;
  };

  const double input_ms = epoch_ms(0);
  const double per_step_ms = input_ms / (kSteps - 1);
  const long long cycles = static_cast<long long>(clock_khz * std::max(1.0, 2 * per_step_ms));
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 1; i < kSteps; ++i) spin_kernel<<<1, 1, 0, stream>>>(cycles);
  cuda(cudaStreamSynchronize(stream));
  const double compute_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const double whole_ms = epoch_ms(cycles);
  const double limit_ms = compute_ms + input_ms / 2;
  std::printf(
      "overlap: %d steps of 64 MiB: input alone %.1f ms, compute alone %.1f ms, both %.1f ms "
      "(limit %.1f ms, serialized %.1f ms): %.0f %% of the input hidden\n",
      kSteps - 1, input_ms, compute_ms, whole_ms, limit_ms, input_ms + compute_ms,
      100 * (input_ms + compute_ms - whole_ms) / input_ms);
  REQUIRE(whole_ms <= limit_ms,
          "the run took %.1f ms, more than compute + input/2 = %.1f ms: the copies are not "
          "overlapped",
          whole_ms, limit_ms);
  cuda(cudaStreamDestroy(stream));
  dinput_tensor_free(big);
  return 0;
}

__global__ void copy_kernel(const int64_t* in, int64_t* out, int64_t n) {
  for (int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    out[i] = in[i];
}

// dinput_tensor_cuda_wait and dinput_tensor_cuda_ready_event. A kernel on the consumer's
// stream, ordered after the copy by cuda_wait (or by the ready event through
// cudaStreamWaitEvent), reads the values of the host path, step after step with the copy
// stream busy ahead of it. Host tensors: the waits succeed, the event is NULL. A NULL tensor
// is INVALID_ARGUMENT for the waits and has no event.
int test_wait() {
  const int64_t n = 1 << 20, g = 1 << 17;  // 8 steps of 128 Ki int64 (1 MiB)
  Pipeline p;
  make_range_pipeline(p, {"GPU:0", "CPU:0"}, n, g, true);
  cudaStream_t stream;
  cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  int64_t* out = nullptr;
  cuda(cudaMalloc(&out, g / 2 * sizeof(int64_t)));
  std::vector<int64_t> host(g / 2);
  for (int by_event = 0; by_event < 2; ++by_event) {
    dinput_dist_iterator_t* it = nullptr;
    ok(dinput_dist_dataset_iterator(&it, p.dist));
    dinput_per_replica_t* step = nullptr;
    int64_t next = 0;
    int steps = 0, events = 0;
    while (dinput_dist_iterator_get_next(&step, it) == DINPUT_OK) {
      const dinput_tensor_t* t = dinput_element_get(dinput_per_replica_get(step, 0), 0);
      REQUIRE(dinput_tensor_device_type(t) == DINPUT_DEVICE_CUDA, "replica 0 is not on the GPU");
      const int64_t rows = dinput_tensor_dim(t, 0);
      if (by_event) {
        cudaEvent_t ready = dinput_tensor_cuda_ready_event(t);
        // NULL means the data was ready at once; otherwise the event orders the stream.
        if (ready != nullptr) {
          ++events;
          cuda(cudaStreamWaitEvent(stream, ready, 0));
        }
      } else {
        ok(dinput_tensor_cuda_wait(t, stream));
      }
      copy_kernel<<<64, 256, 0, stream>>>(static_cast<const int64_t*>(dinput_tensor_data(t)), out,
                                          rows);
      cuda(cudaMemcpyAsync(host.data(), out, rows * sizeof(int64_t), cudaMemcpyDeviceToHost,
                           stream));
      cuda(cudaStreamSynchronize(stream));
      for (int64_t i = 0; i < rows; ++i)
        REQUIRE(host[i] == next + i, "step %d (%s): value %lld is %lld", steps,
                by_event ? "ready event" : "cuda_wait", static_cast<long long>(i),
                static_cast<long long>(host[i]));
      // Replica 1 (CPU) holds the other half of the global batch; its rows come next.
      const dinput_tensor_t* on_host = dinput_element_get(dinput_per_replica_get(step, 1), 0);
      next += rows + dinput_tensor_dim(on_host, 0);
      ++steps;
      dinput_per_replica_free(step);
    }
    dinput_dist_iterator_free(it);
    REQUIRE(steps == n / g && next == n, "%d steps reaching %lld", steps,
            static_cast<long long>(next));
    std::printf("wait: %d steps read in order after %s%s\n", steps,
                by_event ? "the ready events" : "dinput_tensor_cuda_wait",
                by_event ? (" (" + std::to_string(events) + " not yet complete)").c_str() : "");
  }

  // Host tensors need no waiting: both calls succeed; the event is NULL.
  dinput_tensor_t* h = nullptr;
  const int64_t shape[1] = {4};
  ok(dinput_tensor_new(&h, DINPUT_INT64, shape, 1, nullptr, 0));
  ok(dinput_tensor_cuda_wait(h, stream));
  ok(dinput_tensor_cuda_record_stream(h, stream));
  REQUIRE(dinput_tensor_cuda_ready_event(h) == nullptr, "a host tensor has a ready event");
  const dinput_tensor_t* parts[1] = {h};
  dinput_element_t* e = nullptr;
  ok(dinput_element_new(&e, parts, 1));
  ok(dinput_element_cuda_wait(e, stream));
  dinput_element_free(e);
  REQUIRE(dinput_tensor_cuda_wait(nullptr, stream) == DINPUT_INVALID_ARGUMENT,
          "cuda_wait(NULL) accepted");
  REQUIRE(dinput_element_cuda_wait(nullptr, stream) == DINPUT_INVALID_ARGUMENT,
          "element_cuda_wait(NULL) accepted");
  REQUIRE(dinput_tensor_cuda_record_stream(nullptr, stream) == DINPUT_INVALID_ARGUMENT,
          "record_stream(NULL) accepted");
  REQUIRE(dinput_tensor_cuda_ready_event(nullptr) == nullptr, "a NULL tensor has a ready event");
  dinput_tensor_free(h);
  cuda(cudaFree(out));
  cuda(cudaStreamDestroy(stream));
  return 0;
}

// The value of key `component` ("nccl") in dinput_build_info: whether it is "available".
bool build_info_available(const char* component) {
  std::string info = dinput_build_info();
  std::string key = std::string("\"") + component + "\":{";
  size_t at = info.find(key);
  if (at == std::string::npos) return false;
  size_t end = info.find('}', at);
  return info.substr(at, end - at).find("\"available\":true") != std::string::npos;
}

// dinput_strategy_reduce of float32 values on two GPUs, the case it hands to NCCL (one
// worker, element-wise, floating): SUM and MEAN equal the host reduce of the same values.
// Needs two GPUs and libnccl.so.2; skipped otherwise.
int test_nccl_reduce() {
  if (gpu_count() < 2 || !build_info_available("nccl")) {
    std::printf("SKIP: the NCCL reduce needs 2 GPUs (found %d) and NCCL (%s)\n", gpu_count(),
                build_info_available("nccl") ? "available" : "not available");
    return 77;
  }
  const int64_t rows = 64, cols = 1000;
  std::vector<float> values(rows * cols);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 977) * 0.25f;
  dinput_tensor_t* t = nullptr;
  const int64_t shape[2] = {rows, cols};
  ok(dinput_tensor_new(&t, DINPUT_FLOAT32, shape, 2, values.data(), values.size() * sizeof(float)));
  const dinput_tensor_t* parts[1] = {t};
  dinput_element_t* e = nullptr;
  ok(dinput_element_new(&e, parts, 1));
  dinput_dataset_t* slices = nullptr;
  ok(dinput_dataset_from_tensor_slices(&slices, e));
  // A global batch of 2 rows: one row per GPU, so each replica holds a [1, cols] piece.
  Pipeline p;
  const char* devices[2] = {"GPU:0", "GPU:1"};
  ok(dinput_strategy_new(&p.strategy, devices, 2));
  dinput_batch_options_t* drop = nullptr;
  ok(dinput_batch_options_new(&drop));
  ok(dinput_batch_options_set_drop_remainder(drop, 1));
  ok(dinput_dataset_batch(&p.dataset, slices, 2, drop));
  dinput_batch_options_free(drop);
  ok(dinput_strategy_distribute_dataset(&p.dist, p.strategy, p.dataset, nullptr));
  dinput_dist_iterator_t* it = nullptr;
  ok(dinput_dist_dataset_iterator(&it, p.dist));
  dinput_per_replica_t* step = nullptr;
  int steps = 0;
  while (dinput_dist_iterator_get_next(&step, it) == DINPUT_OK) {
    for (int r = 0; r < 2; ++r)
      REQUIRE(dinput_tensor_device_type(dinput_element_get(dinput_per_replica_get(step, r), 0)) ==
                  DINPUT_DEVICE_CUDA,
              "replica %d is not on a GPU", r);
    for (dinput_reduce_op_t op : {DINPUT_REDUCE_SUM, DINPUT_REDUCE_MEAN}) {
      dinput_element_t* reduced = nullptr;
      ok(dinput_strategy_reduce(&reduced, p.strategy, op, step, DINPUT_AXIS_NONE));
      const dinput_tensor_t* r = dinput_element_get(reduced, 0);
      REQUIRE(dinput_tensor_device_type(r) == DINPUT_DEVICE_CPU,
              "the reduced value is not in host memory");
      REQUIRE(dinput_tensor_dtype(r) == DINPUT_FLOAT32 && dinput_tensor_num_elements(r) == cols,
              "reduced dtype %d with %lld values", dinput_tensor_dtype(r),
              static_cast<long long>(dinput_tensor_num_elements(r)));
      const float* got = static_cast<const float*>(dinput_tensor_data(r));
      for (int64_t c = 0; c < cols; ++c) {
        // Both addends are multiples of 0.25 below 250: their float32 sum is exact.
        float sum = values[(2 * steps) * cols + c] + values[(2 * steps + 1) * cols + c];
        float want = op == DINPUT_REDUCE_SUM ? sum : sum / 2;
        REQUIRE(got[c] == want, "step %d op %d column %lld: %g, expected %g", steps, op,
                static_cast<long long>(c), got[c], want);
      }
      dinput_element_free(reduced);
    }
    dinput_per_replica_free(step);
    ++steps;
  }
  dinput_dist_iterator_free(it);
  REQUIRE(steps == rows / 2, "%d steps", steps);
  std::printf("nccl_reduce: SUM and MEAN of %d steps over 2 GPUs are exact\n", steps);
  dinput_dataset_free(slices);
  dinput_element_free(e);
  dinput_tensor_free(t);
  return 0;
}

// Creating and destroying 1000 iterators leaves device memory at its baseline.
int test_iterators() {
  Pipeline p;
  make_range_pipeline(p, {"GPU:0"}, 1 << 16, 4096, true);
  auto one_epoch_step = [&] {
    dinput_dist_iterator_t* it = nullptr;
    ok(dinput_dist_dataset_iterator(&it, p.dist));
    dinput_per_replica_t* step = nullptr;
    ok(dinput_dist_iterator_get_next(&step, it));
    dinput_per_replica_free(step);
    dinput_dist_iterator_free(it);
  };
  one_epoch_step();
  cuda(cudaDeviceSynchronize());
  ok(dinput_cuda_empty_cache());
  size_t free0 = 0, total = 0;
  cuda(cudaMemGetInfo(&free0, &total));
  for (int i = 0; i < 1000; ++i) one_epoch_step();
  cuda(cudaDeviceSynchronize());
  ok(dinput_cuda_empty_cache());  // the frees of the last iterators may still be running
  size_t free1 = 0;
  cuda(cudaMemGetInfo(&free1, &total));
  std::printf("iterators: free device memory %zu -> %zu bytes after 1000 iterators\n", free0,
              free1);
  REQUIRE(free1 + (2u << 20) >= free0, "device memory grew by %zu bytes", free0 - free1);
  return 0;
}

// DLPack export of a device tensor says kDLCUDA and its device, and keeps the data alive.
int test_dlpack() {
  Pipeline p;
  make_range_pipeline(p, {"GPU:0"}, 64, 64, true);
  dinput_dist_iterator_t* it = nullptr;
  ok(dinput_dist_dataset_iterator(&it, p.dist));
  dinput_per_replica_t* step = nullptr;
  ok(dinput_dist_iterator_get_next(&step, it));
  DLManagedTensor* dl = nullptr;
  ok(dinput_tensor_to_dlpack(&dl, dinput_element_get(dinput_per_replica_get(step, 0), 0)));
  dinput_per_replica_free(step);
  dinput_dist_iterator_free(it);
  REQUIRE(dl->dl_tensor.device.device_type == kDLCUDA && dl->dl_tensor.device.device_id == 0,
          "wrong DLPack device");
  std::vector<int64_t> host(64);
  cuda(cudaDeviceSynchronize());
  cuda(cudaMemcpy(host.data(), dl->dl_tensor.data, 64 * sizeof(int64_t), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 64; ++i)
    REQUIRE(host[i] == i, "value %d is %lld", i, static_cast<long long>(host[i]));
  dl->deleter(dl);
  std::puts("dlpack: kDLCUDA export holds its data");
  return 0;
}

// Counts, on the GPU, the values of a step that differ from base, base + 1, ...: the check
// first spins for `cycles`, so that it reads the data well after the host has moved on.
__global__ void check_kernel(const int64_t* v, int64_t n, int64_t base, long long cycles,
                             unsigned long long* mismatches) {
  if (threadIdx.x == 0) {
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
  }
  __syncthreads();
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    if (v[i] != base + i) atomicAdd(mismatches, 1ULL);
}

// How a test consumer orders its stream after a step's copy and keeps the memory from reuse.
enum class Consumer {
  kWait,            // dinput_tensor_cuda_wait (records the stream)
  kEventAndRecord,  // the ready event by hand, plus dinput_tensor_cuda_record_stream
  kDlpack,          // cuda_wait, then a DLPack export whose deleter runs right away
  kEventOnly,       // the ready event by hand and nothing else: unprotected (a control)
};

// The reuse race: a consumer whose kernels run far behind the host frees each step as soon
// as its kernel is queued (as a DLPack consumer such as PyTorch does when its tensor dies).
// The freed blocks go back to the cache while the kernels that read them have not run; the
// next copies must not overwrite them before that. A kernel checks every value of every
// step on the GPU with no host synchronization in between; any overwritten block shows as
// mismatches. Returns the mismatch count.
unsigned long long reuse_race(Consumer how, int steps) {
  const int64_t g = 1 << 18;  // 2 MiB of int64 per step
  Pipeline p;
  make_range_pipeline(p, {"GPU:0"}, g * steps, g, true);
  cudaStream_t stream;
  cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  unsigned long long* mismatches = nullptr;
  cuda(cudaMalloc(&mismatches, sizeof(unsigned long long)));
  cuda(cudaMemset(mismatches, 0, sizeof(unsigned long long)));
  int clock_khz = 0;
  cuda(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  const long long cycles = clock_khz * 2LL;  // about 2 ms per step: the GPU falls behind
  dinput_dist_iterator_t* it = nullptr;
  ok(dinput_dist_dataset_iterator(&it, p.dist));
  dinput_per_replica_t* step = nullptr;
  int64_t base = 0;
  int done = 0;
  while (dinput_dist_iterator_get_next(&step, it) == DINPUT_OK) {
    const dinput_tensor_t* t = dinput_element_get(dinput_per_replica_get(step, 0), 0);
    const int64_t rows = dinput_tensor_dim(t, 0);
    const int64_t* data = static_cast<const int64_t*>(dinput_tensor_data(t));
    DLManagedTensor* dl = nullptr;
    if (how == Consumer::kWait || how == Consumer::kDlpack) ok(dinput_tensor_cuda_wait(t, stream));
    if (how == Consumer::kEventAndRecord || how == Consumer::kEventOnly) {
      if (cudaEvent_t ready = dinput_tensor_cuda_ready_event(t))
        cuda(cudaStreamWaitEvent(stream, ready, 0));
      if (how == Consumer::kEventAndRecord) ok(dinput_tensor_cuda_record_stream(t, stream));
    }
    if (how == Consumer::kDlpack) {
      // Only the export holds the data from here on, as when PyTorch took it.
      ok(dinput_tensor_to_dlpack(&dl, t));
      data = static_cast<const int64_t*>(dl->dl_tensor.data);
      dinput_per_replica_free(step);
      step = nullptr;
    }
    check_kernel<<<1, 256, 0, stream>>>(data, rows, base, cycles, mismatches);
    // Every reference goes as soon as the work that reads the data is queued.
    dinput_per_replica_free(step);
    if (dl) dl->deleter(dl);
    base += rows;
    ++done;
  }
  dinput_dist_iterator_free(it);
  cuda(cudaStreamSynchronize(stream));
  unsigned long long found = 0;
  cuda(cudaMemcpy(&found, mismatches, sizeof(found), cudaMemcpyDeviceToHost));
  REQUIRE(done == steps, "%d steps instead of %d", done, steps);
  cuda(cudaFree(mismatches));
  cuda(cudaStreamDestroy(stream));
  return found;
}

int test_reuse() {
  const int kSteps = 48;
  const struct {
    Consumer how;
    const char* name;
  } protected_consumers[] = {{Consumer::kWait, "cuda_wait"},
                             {Consumer::kEventAndRecord, "ready event + record_stream"},
                             {Consumer::kDlpack, "DLPack, deleter right after the launch"}};
  for (const auto& c : protected_consumers) {
    unsigned long long bad = reuse_race(c.how, kSteps);
    std::printf("reuse: %s: %d steps checked on the GPU, %llu wrong values\n", c.name, kSteps, bad);
    REQUIRE(bad == 0, "%s: %llu values were overwritten before the consumer's kernel read them",
            c.name, bad);
  }
  // The control shows that the check can see the race: a consumer that tells dinput nothing
  // about its stream leaves the memory unprotected (not a failure: this is misuse).
  std::printf("reuse: control (ready event only, stream not recorded): %llu wrong values\n",
              reuse_race(Consumer::kEventOnly, kSteps));
  return 0;
}

// The driver's view of contexts, through the runtime (linking libcuda would stop this
// program from starting on machines without a driver, where it must report SKIP).
struct Driver {
  int (*ctx_get_current)(void**) = nullptr;
  int (*primary_ctx_state)(int, unsigned*, int*) = nullptr;
  Driver() {
    cudaDriverEntryPointQueryResult r{};
    void* f = nullptr;
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &f, 12000, cudaEnableDefault, &r) ==
        cudaSuccess)
      ctx_get_current = reinterpret_cast<int (*)(void**)>(f);
    if (cudaGetDriverEntryPointByVersion("cuDevicePrimaryCtxGetState", &f, 12000, cudaEnableDefault,
                                         &r) == cudaSuccess)
      primary_ctx_state = reinterpret_cast<int (*)(int, unsigned*, int*)>(f);
    REQUIRE(ctx_get_current && primary_ctx_state, "driver entry points not found");
  }
  bool thread_has_context() const {
    void* c = nullptr;
    return ctx_get_current(&c) == 0 && c != nullptr;
  }
  bool primary_active(int device) const {
    unsigned flags = 0;
    int active = 0;
    return primary_ctx_state(device, &flags, &active) == 0 && active != 0;
  }
};

// Steps through `devices` on the calling thread, with no step buffer (so the pipeline runs
// on this thread), reading every value back.
void use_on_this_thread(const std::vector<const char*>& devices) {
  Pipeline p;
  dinput_dataset_t* range = nullptr;
  ok(dinput_strategy_new(&p.strategy, devices.data(), static_cast<int>(devices.size())));
  ok(dinput_dataset_range(&range, 0, 1 << 20, 1));
  ok(dinput_dataset_batch(&p.dataset, range, 1 << 17, nullptr));
  dinput_dataset_free(range);
  dinput_input_options_t* o = nullptr;
  ok(dinput_input_options_new(&o));
  ok(dinput_input_options_set_per_replica_buffer_size(o, 0));
  ok(dinput_strategy_distribute_dataset(&p.dist, p.strategy, p.dataset, o));
  dinput_input_options_free(o);
  auto values = drain(p);
  REQUIRE(!values.empty() && values[0][0] == 0, "no values read");
}

// A replica function that returns the device current on its thread (int32 scalar).
dinput_status_t current_device_fn(dinput_element_t** out, const dinput_replica_context_t*,
                                  const dinput_element_t*, void*) {
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) device = -1;
  dinput_tensor_t* t = nullptr;
  dinput_status_t st = dinput_tensor_new(&t, DINPUT_INT32, nullptr, 0, &device, sizeof device);
  if (st != DINPUT_OK) return st;
  const dinput_tensor_t* parts[1] = {t};
  st = dinput_element_new(out, parts, 1);
  dinput_tensor_free(t);
  return st;
}

// dinput_strategy_run calls each GPU replica's function with its GPU current: on every GPU
// of the machine (up to 4), each replica sees its own device.
void check_run_devices() {
  std::vector<std::string> names;
  for (int d = 0; d < std::min(gpu_count(), 4); ++d) names.push_back("GPU:" + std::to_string(d));
  std::vector<const char*> devices;
  for (const auto& n : names) devices.push_back(n.c_str());
  dinput_strategy_t* strategy = nullptr;
  ok(dinput_strategy_new(&strategy, devices.data(), static_cast<int>(devices.size())));
  dinput_per_replica_t* results = nullptr;
  ok(dinput_strategy_run(&results, strategy, current_device_fn, nullptr, nullptr));
  for (int r = 0; r < static_cast<int>(devices.size()); ++r) {
    int32_t seen = -2;
    ok(dinput_tensor_copy_to(&seen, sizeof seen,
                             dinput_element_get(dinput_per_replica_get(results, r), 0),
                             DINPUT_INT32));
    REQUIRE(seen == r, "replica %d ran with GPU:%d current", r, seen);
  }
  dinput_per_replica_free(results);
  dinput_strategy_free(strategy);
  std::printf("contexts: run calls each of %zu GPU replica(s) with its own GPU current\n",
              devices.size());
}

// Contexts: dinput leaves a thread's CUDA context as it found it, so no context appears on a
// GPU the program did not use. A thread without a context that runs a GPU:0 pipeline on
// itself still has none afterwards. With two GPUs: a program that uses only GPU:1 (a step
// buffer's thread, pinned allocations, copies, reads, freeing) has no context on GPU 0.
int test_contexts() {
  Driver driver;
  const bool gpu0_before = driver.primary_active(0);
  if (gpu_count() >= 2) {
    REQUIRE(!gpu0_before, "a context on GPU 0 exists before the test");
    {
      Pipeline p;
      make_range_pipeline(p, {"GPU:1"}, 1 << 20, 1 << 17, true);
      auto values = drain(p);
      REQUIRE(values.size() == 8, "%zu steps", values.size());
    }
    ok(dinput_cuda_empty_cache());
    REQUIRE(!driver.primary_active(0), "using only GPU:1 created a context on GPU 0");
    std::puts("contexts: a GPU:1 pipeline left GPU 0 without a context");
  } else {
    std::puts("contexts: one GPU: the GPU:1-only case needs two (not run)");
  }
  bool had = true, has = true;
  std::thread([&] {
    had = driver.thread_has_context();
    use_on_this_thread({"GPU:0"});
    has = driver.thread_has_context();
  }).join();
  REQUIRE(!had, "a new thread already had a context");
  REQUIRE(!has, "dinput left a context current on a thread that had none");
  std::puts("contexts: a thread without a context has none after running a GPU:0 pipeline");
  check_run_devices();
  return 0;
}

// Generator of uint8 vectors whose sizes vary from step to step (8 to 40 MiB).
struct VaryingSizes {
  int next = 0;
  int steps = 0;
};
dinput_status_t varying_next(dinput_element_t** out, void* state) {
  auto* s = static_cast<VaryingSizes*>(state);
  if (s->next == s->steps) return DINPUT_OUT_OF_RANGE;
  const int64_t mib = 8 + (s->next * 7919) % 33;
  ++s->next;
  const int64_t shape[1] = {mib << 20};
  dinput_tensor_t* t = nullptr;
  dinput_status_t st = dinput_tensor_new(&t, DINPUT_UINT8, shape, 1, nullptr, 0);
  if (st != DINPUT_OK) return st;
  const dinput_tensor_t* parts[1] = {t};
  st = dinput_element_new(out, parts, 1);
  dinput_tensor_free(t);
  return st;
}
dinput_status_t varying_init(void** state, void* user_data) {
  *state = new VaryingSizes{0, *static_cast<int*>(user_data)};
  return DINPUT_OK;
}
void varying_finalize(void* state) { delete static_cast<VaryingSizes*>(state); }

// The device cache, at a limit of 96 MiB and of 0: under batches of varying sizes its free
// bytes stay within the limit and the memory held stays near what the steps in flight need;
// after the last iterator is freed nothing is held; dinput_cuda_empty_cache empties it while
// an iterator lives.
int test_cache() {
  size_t limit_before = 0;
  ok(dinput_cuda_cache_limit(&limit_before));
  // A limit that keeps blocks, and 0, where every freed block goes back to CUDA at once.
  for (const size_t limit : {size_t{96} << 20, size_t{0}}) {
    ok(dinput_cuda_set_cache_limit(limit));
    size_t got = 0;
    ok(dinput_cuda_cache_limit(&got));
    REQUIRE(got == limit, "cache limit %zu, set %zu", got, limit);
    int steps = 200;
    dinput_spec_t* spec = nullptr;
    ok(dinput_spec_new(&spec));
    const int64_t any[1] = {-1};
    ok(dinput_spec_add(spec, DINPUT_UINT8, any, 1));
    Pipeline p;
    const char* devices[1] = {"GPU:0"};
    ok(dinput_strategy_new(&p.strategy, devices, 1));
    ok(dinput_dataset_from_generator(&p.dataset, spec, varying_init, varying_next, varying_finalize,
                                     &steps, nullptr));
    dinput_spec_free(spec);
    ok(dinput_strategy_distribute_dataset(&p.dist, p.strategy, p.dataset, nullptr));
    cudaStream_t stream;
    cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    dinput_dist_iterator_t* it = nullptr;
    ok(dinput_dist_dataset_iterator(&it, p.dist));
    dinput_per_replica_t* step = nullptr;
    size_t max_held = 0, max_cached = 0;
    int n = 0;
    while (dinput_dist_iterator_get_next(&step, it) == DINPUT_OK) {
      ok(dinput_element_cuda_wait(dinput_per_replica_get(step, 0), stream));
      dinput_per_replica_free(step);
      size_t held = 0, cached = 0;
      ok(dinput_cuda_pool_bytes(&held, &cached, 0));
      max_held = std::max(max_held, held);
      max_cached = std::max(max_cached, cached);
      ++n;
    }
    REQUIRE(n == steps, "%d steps", n);
    // In flight at most: the step buffer (2 steps), the one being split and the one just
    // freed, of at most 40 MiB (rounded up to 2 MiB, and a reused block at most twice the size).
    const size_t in_flight = size_t{4} * (80u << 20);
    std::printf("cache: %d steps of 8..40 MiB: at most %zu MiB held, %zu MiB cached (limit %zu)\n",
                n, max_held >> 20, max_cached >> 20, limit >> 20);
    REQUIRE(max_cached <= limit, "the cache held %zu free bytes, over its limit %zu", max_cached,
            limit);
    REQUIRE(max_held <= limit + in_flight, "%zu bytes held", max_held);
    size_t held = 0, cached = 0;
    ok(dinput_cuda_empty_cache());
    ok(dinput_cuda_pool_bytes(&held, &cached, 0));
    REQUIRE(cached == 0, "%zu bytes cached after dinput_cuda_empty_cache", cached);
    dinput_dist_iterator_free(it);
    ok(dinput_cuda_pool_bytes(&held, &cached, 0));
    REQUIRE(held == 0 && cached == 0, "%zu bytes held (%zu cached) after the last iterator", held,
            cached);
    std::puts("cache: nothing held once the last iterator is freed");

    // A tensor that outlives the last iterator gives its block back to CUDA when it goes,
    // rather than to a cache that nothing empties any more.
    ok(dinput_dist_dataset_iterator(&it, p.dist));
    ok(dinput_dist_iterator_get_next(&step, it));
    dinput_tensor_t* kept = nullptr;
    ok(dinput_tensor_ref(&kept, dinput_element_get(dinput_per_replica_get(step, 0), 0)));
    cuda(cudaDeviceSynchronize());
    dinput_per_replica_free(step);
    dinput_dist_iterator_free(it);
    ok(dinput_cuda_empty_cache());  // the background frees of the iterator's cache are done
    ok(dinput_cuda_pool_bytes(&held, &cached, 0));
    REQUIRE(held >= dinput_tensor_byte_size(kept) && cached == 0,
            "%zu bytes held (%zu cached) while a %zu-byte tensor lives", held, cached,
            dinput_tensor_byte_size(kept));
    dinput_tensor_free(kept);
    for (int i = 0; i < 200 && held != 0; ++i) {  // freed on a thread of dinput's
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      ok(dinput_cuda_pool_bytes(&held, &cached, 0));
    }
    REQUIRE(held == 0 && cached == 0,
            "%zu bytes held (%zu cached) after the tensor that outlived the last iterator", held,
            cached);
    std::puts("cache: a tensor that outlives the last iterator gives its memory back to CUDA");
    cuda(cudaStreamDestroy(stream));
  }
  ok(dinput_cuda_set_cache_limit(limit_before));
  REQUIRE(dinput_cuda_pool_bytes(nullptr, nullptr, -1) == DINPUT_INVALID_ARGUMENT,
          "a negative device was accepted");
  return 0;
}

// dinput_tensor_new_pinned: the tensor is page-locked (CUDA_HOST), holds the values given,
// and a distributed iterator copies it to the GPU intact.
int test_pinned() {
  std::vector<int64_t> values(1 << 16);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int64_t>(i * 3);
  const int64_t shape[1] = {static_cast<int64_t>(values.size())};
  dinput_tensor_t* t = nullptr;
  ok(dinput_tensor_new_pinned(&t, DINPUT_INT64, shape, 1, values.data(),
                              values.size() * sizeof(int64_t)));
  REQUIRE(dinput_tensor_device_type(t) == DINPUT_DEVICE_CUDA_HOST, "device type %d",
          dinput_tensor_device_type(t));
  cudaPointerAttributes attrs{};
  cuda(cudaPointerGetAttributes(&attrs, dinput_tensor_data(t)));
  REQUIRE(attrs.type == cudaMemoryTypeHost, "not page-locked (type %d)", attrs.type);
  Pipeline p;
  make_repeat_pipeline(p, t, 3);
  auto got = drain(p);
  REQUIRE(got.size() == 3, "%zu steps", got.size());
  for (const auto& v : got) REQUIRE(v == values, "a pinned source arrived changed");
  std::puts("pinned: a page-locked source reaches the GPU intact");
  dinput_tensor_free(t);
  return 0;
}

// One epoch of range(2^20).batch(2^17) on GPU:0 with a kernel of `ms_per_step` queued on
// `stream` after each step, and every step freed at once: the GPU is still busy with those
// kernels when this returns the exhausted iterator (not freed). *steps counts the steps.
dinput_dist_iterator_t* epoch_behind_kernels(const Pipeline& p, cudaStream_t stream,
                                             long long ms_per_step, int* steps) {
  int clock_khz = 0;
  cuda(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  dinput_dist_iterator_t* it = nullptr;
  ok(dinput_dist_dataset_iterator(&it, p.dist));
  dinput_per_replica_t* step = nullptr;
  *steps = 0;
  while (dinput_dist_iterator_get_next(&step, it) == DINPUT_OK) {
    ok(dinput_element_cuda_wait(dinput_per_replica_get(step, 0), stream));
    spin_kernel<<<1, 1, 0, stream>>>(clock_khz * ms_per_step);
    dinput_per_replica_free(step);
    ++*steps;
  }
  return it;
}

// Freeing an iterator does not wait for the consumer's GPU work: at the end of an epoch the
// cache of the GPU is emptied, and that must not stall the host until kernels queued behind
// the last steps have run (about 300 ms here). Requires the free to take under 100 ms.
// A distributed iterator feeding GPUs saves and restores exactly: the steps it copied to the
// devices ahead of the consumer (fetch_to_device with a step buffer of 0, 2 and 5 steps) are
// made again after a restore, never lost or repeated. Save points: before the first step,
// after 1 and 4 steps (with time for the producer to fill its buffer), and before the last.
int test_checkpoint() {
  std::vector<const char*> devices = {"GPU:0"};
  if (gpu_count() > 1) devices.push_back("GPU:1");
  devices.push_back("CPU:0");
  for (int64_t buffer : {0, 2, 5}) {
    Pipeline p;
    make_range_pipeline(p, devices, 1000, 96, true, buffer);
    const auto expected = drain(p);
    const int64_t steps = static_cast<int64_t>(expected.size() / devices.size());
    for (int64_t at : {int64_t{0}, int64_t{1}, int64_t{4}, steps - 1}) {
      std::vector<std::vector<int64_t>> got;
      dinput_dist_iterator_t* it = nullptr;
      ok(dinput_dist_dataset_iterator(&it, p.dist));
      dinput_per_replica_t* step = nullptr;
      for (int64_t i = 0; i < at; ++i) {
        ok(dinput_dist_iterator_get_next(&step, it));
        read_step(step, got);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the buffer fills up
      dinput_state_t* state = nullptr;
      ok(dinput_dist_iterator_save(&state, it));
      dinput_dist_iterator_free(it);
      it = nullptr;
      ok(dinput_dist_dataset_iterator_from_state(&it, p.dist, dinput_state_data(state),
                                                 dinput_state_size(state)));
      dinput_state_free(state);
      drain_into(it, got);
      REQUIRE(got == expected,
              "buffer %lld, saved after %lld of %lld steps: %zu pieces after the restore, "
              "%zu expected, or different values",
              static_cast<long long>(buffer), static_cast<long long>(at),
              static_cast<long long>(steps), got.size(), expected.size());
    }
  }
  std::printf("checkpoint: %zu replicas (GPU and CPU), step buffers 0, 2 and 5: exact resumes\n",
              devices.size());
  return 0;
}

int test_free_time() {
  Pipeline p;
  make_range_pipeline(p, {"GPU:0"}, 1 << 20, 1 << 17, true);
  cudaStream_t stream;
  cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  int steps = 0;
  dinput_dist_iterator_t* it = epoch_behind_kernels(p, stream, 40, &steps);
  auto t0 = std::chrono::steady_clock::now();
  dinput_dist_iterator_free(it);
  const double free_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const bool queue_left = cudaStreamQuery(stream) == cudaErrorNotReady;
  cuda(cudaStreamSynchronize(stream));
  std::printf("free_time: freeing the iterator after %d steps took %.1f ms (%s)\n", steps, free_ms,
              queue_left ? "the GPU was still busy after it" : "the GPU had drained");
  REQUIRE(free_ms < 100, "freeing the iterator waited %.1f ms for the GPU", free_ms);
  // The cache was handed back in the background; empty_cache waits for that.
  ok(dinput_cuda_empty_cache());
  size_t held = 1, cached = 1;
  ok(dinput_cuda_pool_bytes(&held, &cached, 0));
  REQUIRE(held == 0 && cached == 0, "%zu bytes held, %zu cached after the last iterator", held,
          cached);
  cuda(cudaStreamDestroy(stream));
  return 0;
}

// A program that frees its last iterator and returns at once, while the GPU still runs the
// kernels queued behind the last steps and the cache is being handed back on a thread of
// dinput's: the process ends normally (exit code 0), with no crash in CUDA's teardown.
int test_exit_after_free() {
  Pipeline p;
  make_range_pipeline(p, {"GPU:0"}, 1 << 20, 1 << 17, true);
  cudaStream_t stream;
  cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  int steps = 0;
  dinput_dist_iterator_free(epoch_behind_kernels(p, stream, 20, &steps));
  std::puts("exit_after_free: returning with the GPU busy");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (gpu_count() == 0) {
    std::puts("SKIP: no usable CUDA device");
    return 77;
  }
  std::string which = argc > 1 ? argv[1] : "values";
  if (which == "values") return test_values();
  if (which == "overlap") return test_overlap();
  if (which == "iterators") return test_iterators();
  if (which == "dlpack") return test_dlpack();
  if (which == "wait") return test_wait();
  if (which == "nccl_reduce") return test_nccl_reduce();
  if (which == "reuse") return test_reuse();
  if (which == "contexts") return test_contexts();
  if (which == "cache") return test_cache();
  if (which == "pinned") return test_pinned();
  if (which == "free_time") return test_free_time();
  if (which == "exit_after_free") return test_exit_after_free();
  if (which == "checkpoint") return test_checkpoint();
  std::fprintf(stderr, "unknown case %s\n", which.c_str());
  return 2;
}
