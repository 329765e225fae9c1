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
#include <vector>

#include "dinput.h"
#include "dinput_cuda.h"

namespace {

#define REQUIRE(cond, ...)                                        \
  do {                                                            \
    if (!(cond)) {                                                \
      std::fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                          \
      std::fprintf(stderr, "\n");                                 \
      std::exit(1);                                               \
    }                                                             \
  } while (0)

void ok(dinput_status_t st) {
  REQUIRE(st == DINPUT_OK, "%s: %s", dinput_status_name(st), dinput_last_error_message());
}

void cuda(cudaError_t err) { REQUIRE(err == cudaSuccess, "CUDA: %s", cudaGetErrorString(err)); }

int gpu_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

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
                         bool fetch) {
  dinput_dataset_t* range = nullptr;
  ok(dinput_strategy_new(&p.strategy, devices.data(), static_cast<int>(devices.size())));
  ok(dinput_dataset_range(&range, 0, n, 1));
  ok(dinput_dataset_batch(&p.dataset, range, g, nullptr));
  dinput_dataset_free(range);
  dinput_input_options_t* o = nullptr;
  ok(dinput_input_options_new(&o));
  ok(dinput_input_options_set_fetch_to_device(o, fetch ? 1 : 0));
  ok(dinput_strategy_distribute_dataset(&p.dist, p.strategy, p.dataset, o));
  dinput_input_options_free(o);
}

// Every replica's values of one epoch, read back to the host.
std::vector<std::vector<int64_t>> drain(const Pipeline& p) {
  std::vector<std::vector<int64_t>> out;
  dinput_dist_iterator_t* it = nullptr;
  ok(dinput_dist_dataset_iterator(&it, p.dist));
  dinput_per_replica_t* step = nullptr;
  while (dinput_dist_iterator_get_next(&step, it) == DINPUT_OK) {
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
  dinput_dist_iterator_free(it);
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

// Copies overlap compute. The whole step is timed on the host — get_next, the wait that
// orders the compute stream after the copy, and a kernel — so a copy done synchronously
// inside get_next counts as much as one left to the wait. First the input alone is timed
// (steps with no compute: the pipeline's own rate, copy included), then a kernel of about
// twice that time. Overlapped, a step takes about the kernel's time; serialized, the
// kernel's plus the input's. The test requires a step to hide at least half of the input
// time: step <= compute + input / 2 (measured the other way, >= 50 % of the copy hidden).
// The margin leaves room for the launch and synchronization costs of each step (tens of
// microseconds, against an input time of milliseconds with 64 MiB batches).
int test_overlap() {
  const int64_t rows = 16 << 20;  // 16 Mi float32 = 64 MiB per step
  dinput_tensor_t* big = nullptr;
  const int64_t shape[1] = {rows};
  ok(dinput_tensor_new(&big, DINPUT_FLOAT32, shape, 1, nullptr, 0));
  const dinput_tensor_t* parts[1] = {big};
  dinput_element_t* e = nullptr;
  ok(dinput_element_new(&e, parts, 1));
  Pipeline p;
  const char* devices[1] = {"GPU:0"};
  ok(dinput_strategy_new(&p.strategy, devices, 1));
  dinput_dataset_t* one = nullptr;
  ok(dinput_dataset_from_tensors(&one, e));
  const int kSteps = 60, kWarmup = 5;
  ok(dinput_dataset_repeat(&p.dataset, one, kSteps));
  ok(dinput_strategy_distribute_dataset(&p.dist, p.strategy, p.dataset, nullptr));
  cudaStream_t stream;
  cuda(cudaStreamCreate(&stream));
  int clock_khz = 0;
  cuda(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));

  // Runs one epoch, each step: get_next, wait, kernel of `cycles` (none for 0), synchronize.
  // Returns the mean wall time of the steps after the warm-up ones.
  auto epoch_ms = [&](long long cycles) {
    dinput_dist_iterator_t* it = nullptr;
    ok(dinput_dist_dataset_iterator(&it, p.dist));
    int steps = 0;
    double timed_ms = 0;
    for (;;) {
      auto t0 = std::chrono::steady_clock::now();
      dinput_per_replica_t* step = nullptr;
      dinput_status_t st = dinput_dist_iterator_get_next(&step, it);
      if (st == DINPUT_OUT_OF_RANGE) break;
      ok(st);
      ok(dinput_element_cuda_wait(dinput_per_replica_get(step, 0), stream));
      if (cycles > 0) spin_kernel<<<1, 1, 0, stream>>>(cycles);
      cuda(cudaStreamSynchronize(stream));
      dinput_per_replica_free(step);
      double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (steps++ >= kWarmup) timed_ms += ms;
    }
    dinput_dist_iterator_free(it);
    REQUIRE(steps == kSteps, "expected %d steps, got %d", kSteps, steps);
    return timed_ms / (kSteps - kWarmup);
  };

  const double input_ms = epoch_ms(0);
  const double target_ms = std::max(2.0, 2 * input_ms);
  const long long cycles = static_cast<long long>(clock_khz * target_ms);
  const double compute_ms = mean_ms(20, [&] {
    spin_kernel<<<1, 1, 0, stream>>>(cycles);
    cuda(cudaStreamSynchronize(stream));
  });
  const double step_ms = epoch_ms(cycles);
  const double limit_ms = compute_ms + input_ms / 2;
  std::printf(
      "overlap: input %.3f ms/step alone, compute %.3f ms, whole step %.3f ms (limit %.3f ms; "
      "serialized "
      "would be %.3f ms): %.0f %% of the input hidden\n",
      input_ms, compute_ms, step_ms, limit_ms, input_ms + compute_ms,
      100 * (input_ms + compute_ms - step_ms) / input_ms);
  REQUIRE(step_ms <= limit_ms,
          "a step took %.3f ms, more than compute + input/2 = %.3f ms: the copy is not overlapped",
          step_ms, limit_ms);
  cuda(cudaStreamDestroy(stream));
  dinput_dataset_free(one);
  dinput_element_free(e);
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
  size_t free0 = 0, total = 0;
  cuda(cudaMemGetInfo(&free0, &total));
  for (int i = 0; i < 1000; ++i) one_epoch_step();
  cuda(cudaDeviceSynchronize());
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
  std::fprintf(stderr, "unknown case %s\n", which.c_str());
  return 2;
}
